/* The halo plan of a sparse product, checked by brute force against the
 * whole matrix (which every rank of the test holds): each rank receives
 * exactly the foreign x entries its rows touch and sends exactly the own
 * entries other ranks' rows touch; every x index is owned once; one halo
 * exchange then the local kernel give y = A x as a sequential CSR product
 * does (bit for bit: the same order of sums), the reverse exchange gives
 * A^T x; each exchange moves 8 bytes per halo entry, counted; new values
 * keep the plan.  The executor's product (deso__usmv_rows), both ways
 * where it splits (the rows that need no halo from x where it lies while
 * the halo is in flight, then the rows that read it, which the plan lists
 * as brute force finds them) and where it copies x ahead of the halo,
 * bit for bit the sequential row sums, beta = 0 and not.  Matrices:
 * unsymmetric with empty rows, rectangular both ways, fewer rows than
 * ranks, one entry, lap2d (row blocks: split), lap2d-perm, and rows in
 * an uneven distribution.
 * deso-np: 1 2 3 4
 * deso-np-long: 6                                                         */
#include <math.h>
#include <stdlib.h>

#include "blas/sparse_kernels.h"
#include "deso/runtime/runtime.h"
#include "placement/sparse_gen.h"
#include "test_util.h"

static int me, np;

typedef struct glob {
    int64_t m, n, *rowptr, *col;
    double *val;
} glob;

/* A seeded m x n matrix, columns sorted and unique (empty rows too).    */
static glob random_matrix(int64_t m, int64_t n, unsigned seed)
{
    glob g = {m, n, calloc((size_t)m + 1, sizeof(int64_t)),
              calloc((size_t)(m * 4 + 1), sizeof(int64_t)),
              calloc((size_t)(m * 4 + 1), sizeof(double))};
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t j = 0;
        for (int e = 0; e < 4 && n > 0; e++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            j += (int64_t)((s >> 33) % (uint64_t)(n / 2 + 2));
            if (j >= n) break;
            g.col[k] = j++;
            g.val[k++] = (double)((s >> 20) % 9) - 4.0;
        }
        g.rowptr[i + 1] = k;
    }
    return g;
}

static glob gen_matrix(const char *spec)
{
    pl_gen pg;
    assert_int_equal(pl_gen_parse(spec, &pg), DESO_OK);
    glob g = {pg.n, pg.n, calloc((size_t)pg.n + 1, sizeof(int64_t)),
              calloc((size_t)pg.n * PL_GEN_MAX_ROW, sizeof(int64_t)),
              calloc((size_t)pg.n * PL_GEN_MAX_ROW, sizeof(double))};
    for (int64_t i = 0; i < pg.n; i++)
        g.rowptr[i + 1] = g.rowptr[i] +
                          pl_gen_row(&pg, i, g.col + g.rowptr[i],
                                     g.val + g.rowptr[i]);
    return g;
}

static void glob_free(glob *g)
{
    free(g->rowptr);
    free(g->col);
    free(g->val);
}

static double xval(int64_t j) { return 1.0 + (double)(j % 7) - 0.25 * (double)(j % 3); }

static int owner(const int64_t *xstart, int64_t j)
{
    int r = 0;
    while (xstart[r + 1] <= j) r++;
    return r;
}

/* Whether rows [lo, hi) of g touch column j.                              */
static int touches(const glob *g, int64_t lo, int64_t hi, int64_t j)
{
    for (int64_t e = g->rowptr[lo]; e < g->rowptr[hi]; e++)
        if (g->col[e] == j) return 1;
    return 0;
}

/* The lists against brute force; every index owned once.                 */
static int lists_exact(const glob *g, const deso__spmat_data *sp,
                       const deso__halo_plan *hp)
{
    int ok = hp->xstart[0] == 0 && hp->xstart[np] == g->n;
    for (int r = 0; r < np; r++) ok &= hp->xstart[r] <= hp->xstart[r + 1];
    int64_t lo = sp->start[me], hi = sp->start[me + 1], k = 0;
    for (int64_t j = 0; j < g->n && ok; j++)
        if (owner(hp->xstart, j) != me && touches(g, lo, hi, j))
            ok &= k < hp->nhalo && hp->h.recv_idx[k++] == j;
    ok &= k == hp->nhalo;
    for (int r = 0; r < np && ok; r++) {
        int64_t s = hp->h.send_ptr[r];
        for (int64_t j = hp->xstart[me]; j < hp->xstart[me + 1] && r != me; j++)
            if (touches(g, sp->start[r], sp->start[r + 1], j))
                ok &= s < hp->h.send_ptr[r + 1] &&
                      hp->h.send_idx[s++] == j - hp->xstart[me];
        ok &= s == hp->h.send_ptr[r + 1];
    }
    return ok;
}

/* y = A x and A^T x through the plan against sequential products.       */
static int products_right(deso_ctx *ctx, const glob *g, deso__spmat_data *sp,
                          deso__halo_plan *hp)
{
    int64_t nown = hp->nown, x0 = hp->xstart[me];
    double *xext = calloc((size_t)(nown + hp->nhalo + 1), sizeof *xext);
    for (int64_t k = 0; k < nown; k++) xext[k] = xval(x0 + k);
    deso_stats_reset();
    TU_OK(deso__halo_exchange(ctx, hp, xext, xext + nown));
    deso_stats st;
    deso_stats_get(&st);
    int64_t moved[2] = {st.bytes_p2p, 8 * hp->nhalo};
    MPI_Allreduce(MPI_IN_PLACE, moved, 2, MPI_INT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    int ok = moved[0] == moved[1];
    for (int64_t k = 0; k < hp->nhalo; k++)
        ok &= xext[nown + k] == xval(hp->h.recv_idx[k]);
    const pl_csr *a = &sp->rows;
    double *y = calloc((size_t)a->nrows + 1, sizeof *y);
    for (int64_t i = 0; i < a->nrows; i++) y[i] = NAN;  /* beta = 0 */
    blas_csr_mv(a->nrows, a->rowptr, hp->lcol, a->val, 2.0, xext, 0.0, y);
    for (int64_t i = 0; i < a->nrows; i++) {
        int64_t gi = a->row0 + i;
        double s = 0.0;
        for (int64_t e = g->rowptr[gi]; e < g->rowptr[gi + 1]; e++)
            s += g->val[e] * xval(g->col[e]);
        ok &= y[i] == 2.0 * s;
    }
    /* z = A^T v with v in the row blocks                                */
    double *z = calloc((size_t)(nown + hp->nhalo + 1), sizeof *z);
    double *v = calloc((size_t)a->nrows + 1, sizeof *v);
    for (int64_t i = 0; i < a->nrows; i++) v[i] = xval(a->row0 + i + 3);
    blas_csr_mtv(a->nrows, a->rowptr, hp->lcol, a->val, -1.5, v, z);
    TU_OK(deso__halo_reverse(ctx, hp, z));
    for (int64_t k = 0; k < nown; k++) {
        double s = 0.0, mag = 0.0;
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t e = g->rowptr[i]; e < g->rowptr[i + 1]; e++)
                if (g->col[e] == x0 + k) {
                    s += g->val[e] * xval(i + 3);
                    mag += fabs(g->val[e] * xval(i + 3));
                }
        ok &= fabs(z[k] - (-1.5 * s)) <= 1e-14 * (1.5 * mag + 1.0);
    }
    free(xext);
    free(y);
    free(z);
    free(v);
    return ok;
}

/* The rows that read the halo against brute force, and the rule that
 * picks the product's way: split while they hold no more entries than
 * the rank owns.                                                        */
static int halo_rows_exact(const deso__spmat_data *sp,
                           const deso__halo_plan *hp)
{
    const pl_csr *a = &sp->rows;
    int64_t rows = 0, entries = 0;
    int ok = 1;
    for (int64_t i = 0; i < a->nrows; i++) {
        int reads = 0;
        for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
            reads |= hp->lcol[e] >= hp->nown;
        if (!reads) continue;
        entries += a->rowptr[i + 1] - a->rowptr[i];
        ok &= !hp->split || (rows < hp->nhrow && hp->hrow[rows] == i);
        rows++;
    }
    ok &= hp->split == (entries <= hp->nown);
    ok &= !hp->split || rows == hp->nhrow;
    return ok;
}

static double xodd(int64_t j) { return 1.0 / ((double)j + 1.5) - 0.3; }

/* deso__usmv_rows, the executor's product, against the sequential row
 * sums bit for bit: y = A x (y NaN first: beta = 0 must overwrite) and
 * y = -0.75 A x + 2 y, with the halo's bytes counted.                  */
static int planned_right(deso_ctx *ctx, const glob *g, deso__spmat_data *sp,
                         deso__halo_plan *hp)
{
    const pl_csr *a = &sp->rows;
    int64_t x0 = hp->xstart[me];
    double *x = calloc((size_t)hp->nown + 1, sizeof *x);
    double *y = calloc((size_t)a->nrows + 1, sizeof *y);
    for (int64_t k = 0; k < hp->nown; k++) x[k] = xodd(x0 + k);
    int ok = 1;
    for (int v = 0; v < 2; v++) {
        double alpha = v == 0 ? 1.0 : -0.75, beta = v == 0 ? 0.0 : 2.0;
        for (int64_t i = 0; i < a->nrows; i++)
            y[i] = v == 0 ? NAN : xodd(a->row0 + i + 5);
        deso_stats_reset();
        TU_OK(deso__usmv_rows(ctx, hp, a, alpha, x, beta, y));
        deso_stats st;
        deso_stats_get(&st);
        int64_t moved[2] = {st.bytes_p2p, 8 * hp->nhalo};
        MPI_Allreduce(MPI_IN_PLACE, moved, 2, MPI_INT64_T, MPI_SUM,
                      MPI_COMM_WORLD);
        ok &= moved[0] == moved[1];
        for (int64_t i = 0; i < a->nrows; i++) {
            int64_t gi = a->row0 + i;
            double s = 0.0;
            for (int64_t e = g->rowptr[gi]; e < g->rowptr[gi + 1]; e++)
                s += g->val[e] * xodd(g->col[e]);
            double want = v == 0 ? s : alpha * s + beta * xodd(gi + 5);
            ok &= y[i] == want;
        }
    }
    free(x);
    free(y);
    return ok;
}

/* The product both ways where the plan splits (the copy needs no row
 * list), else its one way.                                              */
static int both_ways_right(deso_ctx *ctx, const glob *g, deso__spmat_data *sp,
                           deso__halo_plan *hp)
{
    int ok = planned_right(ctx, g, sp, hp);
    bool split = hp->split;
    hp->split = false;
    ok &= planned_right(ctx, g, sp, hp);
    hp->split = split;
    return ok;
}

static void check(deso_ctx *ctx, const glob *g, deso_spmat *a)
{
    deso__spmat_data *sp = a->h.sp;
    deso__halo_plan *hp = NULL, *again = NULL;
    TU_OK(deso__spmat_halo(ctx, sp, &hp));
    assert_true(tu_all(lists_exact(g, sp, hp)));
    assert_true(tu_all(products_right(ctx, g, sp, hp)));
    assert_true(tu_all(halo_rows_exact(sp, hp)));
    assert_true(tu_all(both_ways_right(ctx, g, sp, hp)));
    /* new values on the pattern: the same plan, the new product          */
    for (int64_t k = 0; k < g->rowptr[g->m]; k++) g->val[k] *= -2.0;
    TU_OK(deso_spmat_set_values(a, g->val, DESO_ALL_RANKS));
    TU_OK(deso__spmat_halo(ctx, sp, &again));
    assert_true(tu_all(again == hp));
    assert_true(tu_all(products_right(ctx, g, sp, hp)));
    assert_true(tu_all(both_ways_right(ctx, g, sp, hp)));
}

static void test_halo(void **state)
{
    (void)state;
    deso_ctx *ctx = tu_ctx(0, 0, 0);
    const int64_t shapes[][2] = {{1, 1}, {3, 3}, {5, 9}, {11, 4}, {37, 37}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        glob g = random_matrix(shapes[t][0], shapes[t][1], (unsigned)t);
        deso_spmat *a;
        TU_OK(deso_spmat_from_csr(ctx, g.m, g.n, g.rowptr, g.col, g.val, 0,
                                  &a));
        check(ctx, &g, a);
        TU_OK(deso_spmat_destroy(&a));
        glob_free(&g);
    }
    /* row blocks of a mesh: most rows need no halo (the split product,
     * up to P = 6)                                                       */
    glob m = gen_matrix("lap2d:64");
    deso_spmat *b;
    TU_OK(deso_spmat_from_gen(ctx, "lap2d:64", &b));
    check(ctx, &m, b);
    assert_true(tu_all(b->h.sp->halo->split));
    TU_OK(deso_spmat_destroy(&b));
    glob_free(&m);
    glob g = gen_matrix("lap2d-perm:6");
    deso_spmat *a;
    TU_OK(deso_spmat_from_gen(ctx, "lap2d-perm:6", &a));
    check(ctx, &g, a);
    TU_OK(deso_spmat_destroy(&a));
    /* uneven rows: rank r holds r + 1 blocks of 2 rows, the last the rest */
    int64_t lo = 0;
    for (int r = 0; r < me; r++) lo += 2 * (r + 1);
    if (lo > g.m) lo = g.m;
    int64_t hi = me == np - 1 ? g.m : lo + 2 * (me + 1);
    if (hi > g.m) hi = g.m;
    int64_t *rp = calloc((size_t)(hi - lo) + 1, sizeof *rp);
    for (int64_t i = lo; i <= hi; i++) rp[i - lo] = g.rowptr[i] - g.rowptr[lo];
    TU_OK(deso_spmat_from_rows(ctx, g.m, g.n, lo, hi - lo, rp,
                               g.col + g.rowptr[lo], g.val + g.rowptr[lo], &a));
    check(ctx, &g, a);
    TU_OK(deso_spmat_destroy(&a));
    free(rp);
    glob_free(&g);
    TU_OK(deso_finalize(&ctx));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_halo),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
