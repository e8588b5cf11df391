/* A user operator on a sparse matrix's rows (deso_op_create_spmat) and
 * the copy of a rank's rows (deso_spmat_local_rows), against the same
 * computed on the host from the matrix's global CSR arrays:
 *   - each rank's rows are the global arrays' block of rows the rank
 *     holds (deso_spmat_local's), bit for bit, and new values
 *     (deso_spmat_set_values) show in a second copy;
 *   - a block-diagonal operator y = B x (B: A's entries whose row and
 *     column lie in one rank's block; the callback computes it from its
 *     copy of the rows), chained with the product deso_dusmv and a dot
 *     product and forced once: every callback is told its part is its
 *     own rows (first row and length, x's as y's), runs once per apply
 *     and rank, and y, A y and y . A y are the host's;
 *   - ranks naming different matrices: DESO_EMISMATCH on every rank, and
 *     one rank's missing callback DESO_ENULL on every rank.
 * Unsymmetric random matrices with empty rows, n = 1, 3 (n < P) and 13;
 * every case in each optimiser mode on default, 1-D and 2-D grids
 * (tu_walk).
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <stdlib.h>
#include <string.h>

#include "sparse_test.h"
#include "test_util.h"

static const int64_t SIZES[] = {1, 3, 13};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

/* One rank's rows, as deso_spmat_local_rows gives them.                  */
typedef struct rows {
    int64_t first, nrows, *rowptr, *col;
    double *val;
    int calls, bad;       /* the callback's: runs, wrong parts             */
} rows;

static rows local_rows(const deso_spmat *a)
{
    rows r = {0};
    int64_t nz = 0;
    TU_CALL(deso_spmat_local(a, &r.first, &r.nrows, &nz));
    r.rowptr = calloc((size_t)r.nrows + 1, sizeof *r.rowptr);
    r.col = calloc((size_t)nz + 1, sizeof *r.col);
    r.val = calloc((size_t)nz + 1, sizeof *r.val);
    TU_CALL(deso_spmat_local_rows(a, r.rowptr, r.col, r.val));
    return r;
}

static void rows_free(rows *r)
{
    free(r->rowptr);
    free(r->col);
    free(r->val);
}

/* The rows are the global arrays' rows [first, first + nrows), exactly.  */
static int rows_equal(const rows *r, const glob *g)
{
    int64_t base = g->rowptr[r->first];
    for (int64_t i = 0; i <= r->nrows; i++)
        if (r->rowptr[i] != g->rowptr[r->first + i] - base) return 0;
    int64_t nz = r->rowptr[r->nrows];
    return nz == 0 || (memcmp(r->col, g->col + base, (size_t)nz * sizeof *r->col) == 0 &&
                       memcmp(r->val, g->val + base, (size_t)nz * sizeof *r->val) == 0);
}

static int part_is_rows(const rows *r, const deso_op_part *p, int64_t n)
{
    return p->n == n && p->nlocal == r->nrows &&
           (p->nlocal == 0 || (deso_op_global(p, 0) == r->first &&
                               deso_op_global(p, p->nlocal - 1) ==
                                   r->first + r->nrows - 1));
}

/* y <- B x on the rank's rows: the entries whose column is a row here.  */
static int block_fn(void *user, const double *x, const deso_op_part *xp,
                    double *y, const deso_op_part *yp)
{
    rows *r = user;
    r->calls++;
    if (!part_is_rows(r, yp, yp->n) || !part_is_rows(r, xp, yp->n)) {
        r->bad++;
        return 0;
    }
    for (int64_t i = 0; i < r->nrows; i++)
        for (int64_t k = r->rowptr[i]; k < r->rowptr[i + 1]; k++) {
            int64_t j = r->col[k] - r->first;
            if (j >= 0 && j < r->nrows) y[i] += r->val[k] * x[j];
        }
    return 0;
}

/* y = B x on the host, from every rank's first row.                      */
static void host_block(const glob *g, const int64_t *first, int P,
                       const double *x, double *y)
{
    for (int q = 0; q < P; q++)
        for (int64_t i = first[q]; i < first[q + 1]; i++) {
            y[i] = 0.0;
            for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1]; k++)
                if (g->col[k] >= first[q] && g->col[k] < first[q + 1])
                    y[i] += g->val[k] * x[g->col[k]];
        }
}

static void op_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    int P = tu_size();
    glob g = random_matrix(n, n, 4, (unsigned)seed);
    deso_spmat *a = NULL;
    TU_CALL(deso_spmat_from_csr(ctx, n, n, g.rowptr, g.col, g.val, 0, &a));
    rows r = local_rows(a);
    TU_CHECK(rows_equal(&r, &g));
    /* every rank's first row: the blocks B is made of                    */
    int64_t *first = calloc((size_t)P + 1, sizeof *first);
    MPI_Allgather(&r.first, 1, MPI_INT64_T, first, 1, MPI_INT64_T,
                  MPI_COMM_WORLD);
    first[P] = n;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double *ay = malloc((size_t)n * sizeof *ay);
    for (int64_t i = 0; i < n; i++) x[i] = 1.0 + (double)((i * 5) % 7) / 8.0;
    host_block(&g, first, P, x, y);
    double dot = 0.0;
    for (int64_t i = 0; i < n; i++) {
        ay[i] = 0.0;
        for (int64_t k = g.rowptr[i]; k < g.rowptr[i + 1]; k++)
            ay[i] += g.val[k] * y[g.col[k]];
        dot += y[i] * ay[i];
    }
    deso_op *op = NULL;
    TU_CALL(deso_op_create_spmat(ctx, block_fn, &r, a, &op));
    deso_vec *dx = tu_vec_of(ctx, n, x), *dy = NULL, *day = NULL;
    deso_scalar *ddot = NULL;
    TU_CALL(deso_vec_create(ctx, n, &dy));
    TU_CALL(deso_vec_create(ctx, n, &day));
    TU_CALL(deso_scalar_create(ctx, 0.0, &ddot));
    TU_CALL(deso_op_apply(op, dx, dy));
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, dy, 0.0, day));
    TU_CALL(deso_ddot(n, dy, 1, day, 1, ddot));
    TU_CHECK(r.calls == 0);                   /* recorded, not run        */
    double got = tu_value(ddot);
    TU_CHECK(tu_srel(got, dot) < 1e-13 || (dot == 0.0 && got == 0.0));
    TU_CHECK(r.calls == 1 && r.bad == 0);
    tu_expect_vec(dy, y, n, 1e-14);
    tu_expect_vec(day, ay, n, 1e-14);
    /* new values show in a new copy of the rows                          */
    for (int64_t k = 0; k < g.rowptr[n]; k++) g.val[k] = 3.0 - g.val[k];
    TU_CALL(deso_spmat_set_values(a, g.val, 0));
    rows r2 = local_rows(a);
    TU_CHECK(rows_equal(&r2, &g));
    rows_free(&r2);
    deso_op_destroy(&op);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    deso_vec_destroy(&day);
    deso_scalar_destroy(&ddot);
    deso_spmat_destroy(&a);
    rows_free(&r);
    glob_free(&g);
    free(first);
    free(x);
    free(y);
    free(ay);
}

/* Rank 0 names a matrix of n rows, the others one of n + 1: every rank
 * fails with DESO_EMISMATCH, and no operator is made; the last rank alone
 * passes no callback: DESO_ENULL on every rank.                          */
static void mismatch_case(deso_ctx *ctx, int64_t n)
{
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char small[32], big[32];
    snprintf(small, sizeof small, "lap2d:%lld", (long long)n);
    snprintf(big, sizeof big, "lap2d:%lld", (long long)n + 1);
    deso_spmat *a = NULL, *b = NULL;
    TU_CALL(deso_spmat_from_gen(ctx, small, &a));
    TU_CALL(deso_spmat_from_gen(ctx, big, &b));
    rows r = {0};
    deso_op *op = (deso_op *)&r;
    TU_CALL_ERR(deso_op_create_spmat(ctx, block_fn, &r, me == 0 ? a : b, &op),
                tu_size() > 1 ? DESO_EMISMATCH : DESO_OK);
    if (tu_size() > 1) TU_CHECK(op == NULL);
    deso_op_destroy(&op);
    int last = me == tu_size() - 1;
    TU_CALL_ERR(deso_op_create_spmat(ctx, last ? NULL : block_fn, &r, a, &op),
                DESO_ENULL);
    TU_CHECK(op == NULL);
    deso_spmat_destroy(&a);
    deso_spmat_destroy(&b);
}

static void walk(deso_ctx *ctx, int64_t n, int k, uint64_t seed)
{
    (void)k;
    op_case(ctx, n, seed);
    if (n == 3) mismatch_case(ctx, n);
}

static void test_op_on_rows(void **state)
{
    (void)state;
    tu_walk(SIZES, NSIZES, 1, 907u, walk, "operator on a sparse matrix's rows");
}

TU_MAIN(cmocka_unit_test(test_op_on_rows))
