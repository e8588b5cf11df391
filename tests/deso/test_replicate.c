/* A small matrix copied whole onto every rank by mode full's optimiser
 * (doc/DESIGN.md, "Replicated matrices"), so that its products run with
 * no communication: every force of a loop against sequential CBLAS.
 *
 *   products  y = alpha op(A) x + beta y forced 40 times (mode full; 4
 *             in the others), both transposes, square and rectangular,
 *             n = 1, n < P, n not divisible by P;
 *             a compiled force that leaves A folded is planned again after
 *             16 and 32 runs, and A replicated then, so the forces after
 *             the switch (replayed) are checked too;
 *   CG        40 iterations against CBLAS's, residual by residual;
 *   update    A given new values by dger after it was replicated: the
 *             products read the new values;
 *   cap       replicate_max below the matrix's bytes, or a memory limit of
 *             less than four times them: never replicated, still right.
 * Where A went is read from deso_stats' matrices_replicated
 * (check_placement): on a grid of one column in mode full A is replicated
 * where its folded products communicate (the model's default alpha and
 * beta, so that the decision does not depend on the probe); never in
 * modes none and affine, at P = 1, or above the cap.
 * deso-np: 1 2
 * deso-np-long: 3 4 6                                                    */
#include <cblas.h>

#include "test_util.h"

#include "deso/runtime/runtime.h"

#define FORCES 40

static double a_fn(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return 1.0 / (1.0 + (double)(i > j ? i - j : j - i)) + (i == j ? 2.0 : 0);
}

/* A context whose model has the optimiser's default alpha and beta (2 us
 * a message, 1 ns a byte) on every rank: its decisions then do not depend
 * on what the probe measured on this machine.                            */
static deso_ctx *ctx_of(deso_mode mode, int64_t cap, int64_t mem_limit)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = mode;
    o.replicate_max = cap;
    o.mem_limit = mem_limit;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    ctx->params = opt_params_default();
    ctx->params.reduce_holders_only = true;
    return ctx;
}

static int64_t replicated(void)
{
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    return st.matrices_replicated;
}

/* Whether mode and cap let A (m x n) be replicated here.                 */
static bool may(deso_mode mode, int64_t cap, int64_t m, int64_t n)
{
    return mode == DESO_MODE_FULL && tu_size() > 1 &&
           (cap == 0 || cap >= 8 * m * n);
}

/* Where A went (deso_stats' matrices_replicated since the reset): never
 * where mode or cap forbid it; on a grid of one column (the default at
 * P = 2, 3) replicated exactly when its folded loop communicates (`talks`:
 * without it x is whole and y stays where the next product reads it, so
 * replicating would only add work); on 2-D grids the model's call at
 * these sizes, not asserted.                                             */
static void check_placement(deso_ctx *ctx, bool allowed, bool talks)
{
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    int64_t reps = replicated();
    if (!allowed) TU_CHECK(reps == 0);
    else if (info.grid_cols == 1) TU_CHECK(talks ? reps >= 1 : reps == 0);
}

/* FORCES products y = 0.5 op(A) x + 0.25 y, with a dger (A += x0 y0^T)
 * after force `upd` (< 0: none); y checked at every force.               */
static void products(deso_mode mode, bool trans, int64_t m, int64_t n,
                     int64_t cap, int upd)
{
    tu_label("products: mode %s, %s, %lld x %lld, cap %lld, update %d",
             deso_mode_name(mode), trans ? "T" : "N", (long long)m,
             (long long)n, (long long)cap, upd);
    int64_t lx = trans ? m : n, ly = trans ? n : m;
    double *A = malloc((size_t)(m * n) * sizeof *A);
    double *x = malloc((size_t)lx * sizeof *x);
    double *y = malloc((size_t)ly * sizeof *y);
    double *g = malloc((size_t)ly * sizeof *g);
    double *u = malloc((size_t)m * sizeof *u);
    double *v = malloc((size_t)n * sizeof *v);
    assert_true(A != NULL && x != NULL && y != NULL && g != NULL &&
                u != NULL && v != NULL);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) A[j * m + i] = a_fn(i, j, NULL);
    for (int64_t i = 0; i < lx; i++) x[i] = 1.0 + 0.1 * (double)(i % 5);
    for (int64_t i = 0; i < ly; i++) y[i] = 0.5 - 0.01 * (double)i;
    for (int64_t i = 0; i < m; i++) u[i] = 0.01 * (double)(i % 3);
    for (int64_t j = 0; j < n; j++) v[j] = 1.0 - 0.02 * (double)j;
    deso_ctx *ctx = ctx_of(mode, cap, 0);
    deso_stats_reset();
    deso_mat *dA;
    TU_CALL(deso_mat_from_fn(ctx, m, n, a_fn, NULL, &dA));
    deso_vec *dx = tu_vec_of(ctx, lx, x), *dy = tu_vec_of(ctx, ly, y);
    deso_vec *du = tu_vec_of(ctx, m, u), *dv = tu_vec_of(ctx, n, v);
    deso_trans t = trans ? DESO_TRANS : DESO_NO_TRANS;
    /* modes none and affine never replan: a few forces show them right  */
    int forces = mode == DESO_MODE_FULL ? FORCES : 4;
    for (int f = 0; f < forces; f++) {
        cblas_dgemv(CblasColMajor, trans ? CblasTrans : CblasNoTrans,
                    (int)m, (int)n, 0.5, A, (int)m, x, 1, 0.25, y, 1);
        TU_CALL(deso_dgemv(DESO_COL_MAJOR, t, m, n, 0.5, dA, m, dx, 1, 0.25,
                           dy, 1));
        tu_fetch(dy, g);
        TU_CHECK(tu_relerr(g, y, ly) < 1e-12);
        if (f == upd) {
            cblas_dger(CblasColMajor, (int)m, (int)n, 1.0, u, 1, v, 1, A,
                       (int)m);
            TU_CALL(deso_dger(DESO_COL_MAJOR, m, n, 1.0, du, 1, dv, 1, dA,
                              m));
        }
    }
    check_placement(ctx, may(mode, cap, m, n), trans);
    TU_CALL(deso_finalize(&ctx));
    free(A), free(x), free(y), free(g), free(u), free(v);
    tu_case_end();
}

static void test_products(void **state)
{
    (void)state;
    int P = tu_size();
    const int64_t shapes[][2] = {{37, 37}, {1, 1}, {P > 1 ? P - 1 : 1, 5},
                                 {3 * P + 1, 2 * P + 1}};
    for (int mo = 0; mo < 3; mo++)
        for (int s = 0; s < 4; s++)
            for (int tr = 0; tr < 2; tr++)
                products((deso_mode)(DESO_MODE_NONE + mo), tr == 1,
                         shapes[s][0], shapes[s][1], 0, -1);
    TU_SYNC();
}

/* dger after the switch (force 36 > 32), and before it (force 5).       */
static void test_updated(void **state)
{
    (void)state;
    products(DESO_MODE_FULL, true, 23, 23, 0, 36);
    products(DESO_MODE_FULL, true, 23, 17, 0, 5);
    TU_SYNC();
}

/* A cap one byte short of the matrix, and one at its size.              */
static void test_cap(void **state)
{
    (void)state;
    products(DESO_MODE_FULL, true, 20, 30, 8 * 20 * 30 - 1, -1);
    products(DESO_MODE_FULL, true, 20, 30, 8 * 20 * 30, -1);
    TU_SYNC();
}

/* CG against CBLAS's (n = 61), and the memory limit's quarter as the
 * cap: a limit under four times A's bytes forbids replicating it.       */
static void cg_run(deso_mode mode, int64_t mem_limit)
{
    enum { N = 61 };
    tu_label("CG: mode %s, mem_limit %lld", deso_mode_name(mode),
             (long long)mem_limit);
    static double A[N * N], x[N], r[N], p[N], q[N], g[N];
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) A[j * N + i] = a_fn(i, j, NULL);
    for (int i = 0; i < N; i++) {
        x[i] = 0.0;
        r[i] = p[i] = 1.0 + 0.01 * (double)(i % 7);
    }
    double rr = cblas_ddot(N, r, 1, r, 1);
    deso_ctx *ctx = ctx_of(mode, 0, mem_limit);
    deso_stats_reset();
    deso_mat *dA;
    TU_CALL(deso_mat_from_fn(ctx, N, N, a_fn, NULL, &dA));
    deso_vec *dx = tu_vec_of(ctx, N, x), *dr = tu_vec_of(ctx, N, r);
    deso_vec *dp = tu_vec_of(ctx, N, p), *dq = tu_vec_of(ctx, N, q);
    deso_scalar *s[5];
    for (int k = 0; k < 5; k++) TU_CALL(deso_scalar_create(ctx, 0.0, &s[k]));
    TU_CALL(deso_ddot(N, dr, 1, dr, 1, s[0]));
    for (int k = 0; k < FORCES; k++) {
        TU_CHECK(tu_srel(tu_value(s[0]), rr) < 1e-10);
        cblas_dgemv(CblasColMajor, CblasNoTrans, N, N, 1.0, A, N, p, 1, 0.0,
                    q, 1);
        double al = rr / cblas_ddot(N, p, 1, q, 1);
        cblas_daxpy(N, al, p, 1, x, 1);
        cblas_daxpy(N, -al, q, 1, r, 1);
        double rn = cblas_ddot(N, r, 1, r, 1);
        cblas_dscal(N, rn / rr, p, 1);
        cblas_daxpy(N, 1.0, r, 1, p, 1);
        rr = rn;
        TU_CALL(tu_cg_record(N, dA, dx, dr, dp, dq, s[0], s[1], s[2], s[3],
                             s[4]));
    }
    TU_CHECK(tu_srel(tu_value(s[0]), rr) < 1e-10);
    tu_fetch(dx, g);
    TU_CHECK(tu_relerr(g, x, N) < 1e-10);
    bool room = mem_limit == 0 || mem_limit >= 4 * 8 * N * N;
    check_placement(ctx, may(mode, 0, N, N) && room, true);
    TU_CALL(deso_finalize(&ctx));
    tu_case_end();
}

static void test_cg(void **state)
{
    (void)state;
    for (int mo = 0; mo < 3; mo++) cg_run((deso_mode)(DESO_MODE_NONE + mo), 0);
    cg_run(DESO_MODE_FULL, 4 * 8 * 61 * 61 - 1);
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_products), cmocka_unit_test(test_updated),
        cmocka_unit_test(test_cap), cmocka_unit_test(test_cg))
