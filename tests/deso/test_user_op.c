/* User operators (deso_op_create, deso_op_apply) against the same
 * operator computed sequentially on the host:
 *   - a matrix-free m x n operator (a dense formula per row, m = n + 2),
 *     x replicated, y placed by the optimiser, as a matrix's rows or
 *     replicated: each callback sees all of x and writes exactly its
 *     share of y (the parts it is told of must tile y);
 *   - a Jacobi-type diagonal operator, x where y is, applied in place
 *     (x and y one vector) and chained with level 1 calls, with nothing
 *     forced in between: the callbacks run only at the force, once per
 *     apply and rank;
 *   - a callback failing on one rank: the force fails with DESO_EUSER on
 *     every rank (no hang), and the context goes on working;
 *   - the cost model: a flush with an operator moves exactly what the
 *     model of its plan counts (x's move into the declared placement),
 *     plus the force's SPMD check and the operator's agreement.
 * Sizes n = 1, 2, 3 (n < P), 7, 13; every case in each optimiser mode on
 * default, 1-D and 2-D grids (tu_cases).
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include "model_check.h"

static const int64_t SIZES[] = {1, 2, 3, 7, 13};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

/* The operator's row g applied to x (n elements): a dense formula, so
 * that every element of x counts.                                        */
static double row_times(int64_t g, const double *x, int64_t n)
{
    double s = 0.0;
    for (int64_t j = 0; j < n; j++)
        s += x[j] / (1.0 + (double)((g * 7 + j * 3) % 11));
    return s;
}

/* What a callback saw (checked by the test after the force).            */
typedef struct seen {
    int calls;
    int bad;          /* a part that does not describe its vector          */
    int rc;           /* what the callback returns                         */
    int64_t owned;    /* y elements this rank computed, over its calls     */
    int64_t rows_parts;   /* DESO_OP_ROWS: y's parts (the grid's rows)     */
    const double *diag;   /* the diagonal operator's d (global, host)      */
} seen;

static int bad_part(const deso_op_part *p, int64_t n)
{
    return p->n != n || p->nlocal < 0 || p->nlocal > n || p->block < 1 ||
           p->nparts < 1 || p->part < 0 || p->part >= p->nparts ||
           (p->nlocal > 0 && deso_op_global(p, p->nlocal - 1) >= n);
}

static int dense_fn(void *user, const double *x, const deso_op_part *xp,
                    double *y, const deso_op_part *yp)
{
    seen *s = user;
    s->calls++;
    /* x replicated: all of it, in order                                  */
    if (xp->nlocal != xp->n || xp->nparts != 1 || bad_part(yp, yp->n))
        s->bad++;
    if (s->rows_parts > 0 && yp->nparts != s->rows_parts) s->bad++;
    for (int64_t i = 0; i < yp->nlocal; i++) {
        if (y[i] != 0.0) s->bad++;           /* y arrives zero-filled     */
        y[i] = row_times(deso_op_global(yp, i), x, xp->n);
    }
    s->owned += yp->nlocal;
    return s->rc;
}

static int diag_fn(void *user, const double *x, const deso_op_part *xp,
                   double *y, const deso_op_part *yp)
{
    seen *s = user;
    s->calls++;
    if (xp->nlocal != yp->nlocal || xp->block != yp->block ||
        xp->nparts != yp->nparts || xp->part != yp->part ||
        bad_part(yp, yp->n))
        s->bad++;
    for (int64_t i = 0; i < yp->nlocal; i++)
        y[i] = x[i] / s->diag[deso_op_global(yp, i)];
    s->owned += yp->nlocal;
    return s->rc;
}

/* y's elements computed over the ranks that own them: a replicated y
 * counts once per rank, else the parts held at one grid row or column
 * tile y and their copies repeat it; at least n, a multiple of it.      */
static int64_t owned_total(const seen *s)
{
    int64_t t = s->owned;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return t;
}

/* ---- matrix-free operators ---------------------------------------------- */

static void dense_case(deso_ctx *ctx, int64_t n, deso_op_layout yl,
                       tu_rng *rng)
{
    int64_t m = n + 2;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)m * sizeof *y);
    tu_fill(rng, x, n);
    for (int64_t g = 0; g < m; g++) y[g] = row_times(g, x, n);
    deso_info info;
    TU_CALL(deso_get_info(ctx, &info));
    seen s = {0};
    deso_mat *A = NULL;
    if (yl == DESO_OP_ROWS) {
        TU_CALL(deso_mat_create(ctx, m, n, &A));
        s.rows_parts = info.grid_rows;
    }
    deso_op *op = NULL;
    TU_CALL(deso_op_create(ctx, m, n, dense_fn, &s, DESO_OP_REPLICATED, yl, A,
                           &op));
    deso_vec *dx = tu_vec_of(ctx, n, x), *dy = NULL;
    TU_CALL(deso_vec_create(ctx, m, &dy));
    TU_CALL(deso_op_apply(op, dx, dy));
    TU_CHECK(s.calls == 0);                  /* recorded, not run          */
    tu_expect_vec(dy, y, m, 1e-14);
    TU_CHECK(s.calls == 1 && s.bad == 0);
    int64_t t = owned_total(&s);
    TU_CHECK(t >= m && t % m == 0);
    if (yl == DESO_OP_REPLICATED) TU_CHECK(t == m * tu_size());
    deso_op_destroy(&op);
    TU_CHECK(op == NULL);
    deso_mat_destroy(&A);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    free(x);
    free(y);
}

/* ---- a diagonal operator in a chain --------------------------------------- */

/* z <- D^-1 x in place, w <- 2 z + x, z <- D^-1 w into a view's parent
 * (through the whole-vector view), s <- z . w: one force at the end.    */
static void diag_case(deso_ctx *ctx, int64_t n, tu_rng *rng)
{
    double *x = malloc((size_t)n * sizeof *x), *d = malloc((size_t)n * sizeof *d);
    double *z = malloc((size_t)n * sizeof *z), *w = malloc((size_t)n * sizeof *w);
    tu_fill(rng, x, n);
    for (int64_t i = 0; i < n; i++) d[i] = 2.0 + (double)(i % 5);
    seen s = {.diag = d};
    deso_op *op = NULL;
    TU_CALL(deso_op_create(ctx, n, n, diag_fn, &s, DESO_OP_LIKE_Y,
                           DESO_OP_ANY, NULL, &op));
    deso_vec *dz = tu_vec_of(ctx, n, x), *dx = tu_vec_of(ctx, n, x);
    deso_vec *dw = NULL, *vz = NULL;
    deso_scalar *dot = NULL;
    TU_CALL(deso_vec_create(ctx, n, &dw));
    TU_CALL(deso_scalar_create(ctx, 0.0, &dot));
    TU_CALL(deso_vec_view(dz, 0, n, 1, &vz));
    TU_CALL(deso_op_apply(op, dz, dz));
    TU_CALL(deso_dcopy(n, dx, 1, dw, 1));
    TU_CALL(deso_daxpy(n, 2.0, dz, 1, dw, 1));
    TU_CALL(deso_op_apply(op, dw, vz));
    TU_CALL(deso_ddot(n, dz, 1, dw, 1, dot));
    double ref = 0.0;
    for (int64_t i = 0; i < n; i++) {
        z[i] = x[i] / d[i];
        w[i] = 2.0 * z[i] + x[i];
        z[i] = w[i] / d[i];
        ref += z[i] * w[i];
    }
    TU_CHECK(s.calls == 0);
    TU_CHECK(tu_srel(tu_value(dot), ref) < 1e-13);
    TU_CHECK(s.calls == 2 && s.bad == 0);
    tu_expect_vec(dz, z, n, 1e-14);
    tu_expect_vec(dw, w, n, 1e-14);
    deso_op_destroy(&op);
    deso_vec_destroy(&vz);
    deso_vec_destroy(&dz);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dw);
    deso_scalar_destroy(&dot);
    free(x);
    free(d);
    free(z);
    free(w);
}

/* ---- a failing callback ----------------------------------------------------- */

/* The last rank's callback returns 7: every rank's force fails with
 * DESO_EUSER; the operator, recorded again with a good callback, works. */
static void fail_case(deso_ctx *ctx, int64_t n, tu_rng *rng)
{
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int64_t m = n + 2;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)m * sizeof *y);
    tu_fill(rng, x, n);
    for (int64_t g = 0; g < m; g++) y[g] = row_times(g, x, n);
    seen s = {.rc = me == tu_size() - 1 ? 7 : 0};
    deso_op *op = NULL;
    TU_CALL(deso_op_create(ctx, m, n, dense_fn, &s, DESO_OP_REPLICATED,
                           DESO_OP_ANY, NULL, &op));
    deso_vec *dx = tu_vec_of(ctx, n, x), *dy = NULL;
    TU_CALL(deso_vec_create(ctx, m, &dy));
    TU_CALL(deso_op_apply(op, dx, dy));
    TU_CALL(deso_dscal(m, 2.0, dy, 1));
    TU_CALL_ERR(deso_flush(ctx), DESO_EUSER);
    TU_CHECK(strstr(deso_last_error(), "returned 7") != NULL);
    double *g = calloc((size_t)m, sizeof *g);
    TU_CALL_ERR(deso_vec_gather(dy, g, DESO_ALL_RANKS), DESO_EUSER);
    s.rc = 0;
    TU_CALL(deso_vec_destroy(&dy));
    TU_CALL(deso_vec_create(ctx, m, &dy));
    TU_CALL(deso_op_apply(op, dx, dy));
    tu_expect_vec(dy, y, m, 1e-14);
    deso_op_destroy(&op);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    free(g);
    free(x);
    free(y);
}

/* ---- the model ----------------------------------------------------------- */

/* Each flush of y = op(x), z = D^-1 y, r = r - z, r.r moves what the model
 * of its plan counts, plus the SPMD check and one agreement (8 bytes,
 * all-reduce) per operator node, which no plan's model holds.           */
static void test_model(void **state)
{
    (void)state;
    const int64_t n = 13;
    int P = tu_size();
    double d[13];
    for (int i = 0; i < 13; i++) d[i] = 1.0 + i;
    for (int md = 0; md < TU_NMODES; md++) {
        tu_label("model, mode %s", deso_mode_name(tu_mode(md)));
        deso_ctx *ctx = tu_ctx_mode(tu_mode(md), 0, 0, 2);
        seen s1 = {0}, s2 = {.diag = d};
        deso_op *A = NULL, *D = NULL;
        TU_CALL(deso_op_create(ctx, n, n, dense_fn, &s1, DESO_OP_REPLICATED,
                               DESO_OP_ANY, NULL, &A));
        TU_CALL(deso_op_create(ctx, n, n, diag_fn, &s2, DESO_OP_LIKE_Y,
                               DESO_OP_ANY, NULL, &D));
        deso_vec *x, *y, *z, *r;
        deso_scalar *rr;
        TU_CALL(deso_vec_create(ctx, n, &x));
        TU_CALL(deso_vec_create(ctx, n, &y));
        TU_CALL(deso_vec_create(ctx, n, &z));
        TU_CALL(deso_vec_create(ctx, n, &r));
        TU_CALL(deso_scalar_create(ctx, 0.0, &rr));
        TU_CALL(deso_flush(ctx));
        for (int it = 0; it < 3; it++) {
            int64_t t0[4], t1[4];
            TU_CALL(deso_op_apply(A, x, y));
            TU_CALL(deso_op_apply(D, y, z));
            TU_CALL(deso_daxpy(n, -1.0, z, 1, r, 1));
            TU_CALL(deso_ddot(n, r, 1, r, 1, rr));
            TU_CALL(deso_dcopy(n, r, 1, x, 1));
            tu_totals(t0);
            TU_CALL(deso_flush(ctx));
            tu_totals(t1);
            if (P > 1) {          /* the two operators' agreements        */
                t1[2] -= 2 * 8 * (P - 1) * 2;
                t1[3] -= 2;
            }
            char what[64];
            snprintf(what, sizeof what, "mode %s, flush %d",
                     deso_mode_name(tu_mode(md)), it);
            bool ok = tu_flush_matches_model(ctx, t0, t1, what);
            TU_CHECK(ok);
        }
        TU_CHECK(s1.calls == 3 && s2.calls == 3 && s1.bad == 0 &&
                 s2.bad == 0);
        deso_op_destroy(&A);
        deso_op_destroy(&D);
        deso_vec_destroy(&x);
        deso_vec_destroy(&y);
        deso_vec_destroy(&z);
        deso_vec_destroy(&r);
        deso_scalar_destroy(&rr);
        TU_CALL(deso_finalize(&ctx));
    }
    TU_SYNC();
}

/* ---- the walks ----------------------------------------------------------- */

/* Variant k: y placed by the optimiser, as a matrix's rows, replicated. */
static void dense_walk(deso_ctx *ctx, int64_t n, int k, uint64_t seed)
{
    static const deso_op_layout yl[3] = {DESO_OP_ANY, DESO_OP_ROWS,
                                         DESO_OP_REPLICATED};
    tu_rng rng = {seed};
    dense_case(ctx, n, yl[k], &rng);
}

static void diag_walk(deso_ctx *ctx, int64_t n, int k, uint64_t seed)
{
    tu_rng rng = {seed};
    if (k == 0 || tu_long()) diag_case(ctx, n, &rng);
}

static void fail_walk(deso_ctx *ctx, int64_t n, int k, uint64_t seed)
{
    tu_rng rng = {seed};
    if (k == 0 && (n == 7 || n == 1)) fail_case(ctx, n, &rng);
}

static void test_matrix_free(void **state)
{
    (void)state;
    tu_walk(SIZES, NSIZES, 3, 301u, dense_walk, "matrix-free");
}

static void test_diagonal(void **state)
{
    (void)state;
    tu_walk(SIZES, NSIZES, 3, 301u, diag_walk, "diagonal");
}

static void test_failing_callback(void **state)
{
    (void)state;
    tu_walk(SIZES, NSIZES, 3, 301u, fail_walk, "failing callback");
}

TU_MAIN(cmocka_unit_test(test_matrix_free), cmocka_unit_test(test_diagonal),
        cmocka_unit_test(test_failing_callback), cmocka_unit_test(test_model))
