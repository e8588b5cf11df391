/* CG through deso against a sequential CBLAS CG, iterate by iterate: the
 * recurrence residual rr of every iteration and the final x agree within
 * 1e-9 relative (only the summation order of reductions differs).  Also:
 * an iteration whose only read is the convergence test executes the DAG
 * exactly once (one flush per iteration, none from anything else).  In
 * each optimiser mode (none, affine, full), each against the sequential
 * CG, on default, 1-D and 2-D grids (2x2 at P = 4; 2x3 and 3x2 at P = 6,
 * the long group), modes and block sizes paired as tu_cases says.
 * deso-np: 1 2 3 4
 * deso-np-long: 6                                                         */
#include <cblas.h>

#include "test_util.h"

#define N 97
#define ITERS 12

static double a_fn(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
}

static double b_fn(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 + 0.01 * (double)(i % 7);
}

static void run_cg(const tu_case *c)
{
    /* sequential reference                                                  */
    static double A[N * N], b[N], x[N], r[N], p[N], q[N];
    double rr_seq[ITERS + 1];
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) A[j * N + i] = a_fn(i, j, NULL);
    for (int i = 0; i < N; i++) {
        b[i] = b_fn(i, NULL);
        x[i] = 0.0;
    }
    cblas_dcopy(N, b, 1, r, 1);
    cblas_dcopy(N, r, 1, p, 1);
    double rr = cblas_ddot(N, r, 1, r, 1);
    for (int k = 0; k < ITERS; k++) {
        rr_seq[k] = rr;
        cblas_dgemv(CblasColMajor, CblasNoTrans, N, N, 1.0, A, N, p, 1, 0.0, q, 1);
        double alpha = rr / cblas_ddot(N, p, 1, q, 1);
        cblas_daxpy(N, alpha, p, 1, x, 1);
        cblas_daxpy(N, -alpha, q, 1, r, 1);
        double rrnew = cblas_ddot(N, r, 1, r, 1);
        cblas_dscal(N, rrnew / rr, p, 1);
        cblas_daxpy(N, 1.0, r, 1, p, 1);
        rr = rrnew;
    }
    rr_seq[ITERS] = rr;

    deso_ctx *ctx = tu_case_ctx(c);
    deso_mat *dA;
    deso_vec *db, *dx, *dr, *dp, *dq;
    TU_CALL(deso_mat_from_fn(ctx, N, N, a_fn, NULL, &dA));
    TU_CALL(deso_vec_from_fn(ctx, N, b_fn, NULL, &db));
    TU_CALL(deso_vec_create(ctx, N, &dx));
    TU_CALL(deso_vec_create(ctx, N, &dr));
    TU_CALL(deso_vec_create(ctx, N, &dp));
    TU_CALL(deso_vec_create(ctx, N, &dq));
    deso_scalar *srr, *srrnew, *spq, *salpha, *sbeta;
    TU_CALL(deso_scalar_create(ctx, 0.0, &srr));
    TU_CALL(deso_scalar_create(ctx, 0.0, &srrnew));
    TU_CALL(deso_scalar_create(ctx, 0.0, &spq));
    TU_CALL(deso_scalar_create(ctx, 0.0, &salpha));
    TU_CALL(deso_scalar_create(ctx, 0.0, &sbeta));
    TU_CALL(deso_dcopy(N, db, 1, dr, 1));
    TU_CALL(deso_dcopy(N, dr, 1, dp, 1));
    TU_CALL(deso_ddot(N, dr, 1, dr, 1, srr));
    deso_info info;
    for (int k = 0; k < ITERS; k++) {
        double v = tu_value(srr);
        if (tu_srel(v, rr_seq[k]) >= 1e-9)
            print_error("iteration %d: rr %.17g, CBLAS %.17g\n", k, v,
                        rr_seq[k]);
        TU_CHECK(tu_srel(v, rr_seq[k]) < 1e-9);
        TU_CALL(deso_get_info(ctx, &info));
        int64_t before = info.flushes;
        TU_CALL(tu_cg_record(N, dA, dx, dr, dp, dq, srr, srrnew, spq, salpha,
                             sbeta));
        /* nothing above forced                                              */
        TU_CALL(deso_get_info(ctx, &info));
        TU_CHECK(info.flushes == before && info.pending >= 10);
        (void)tu_value(srr);
        TU_CALL(deso_get_info(ctx, &info));
        TU_CHECK(info.flushes == before + 1 && info.pending == 0);
    }
    TU_CHECK(tu_srel(tu_value(srr), rr_seq[ITERS]) < 1e-9);
    double g[N];
    tu_fetch(dx, g);
    TU_CHECK(tu_relerr(g, x, N) < 1e-9);
    TU_CALL(deso_finalize(&ctx));   /* frees the handles too                 */
}

/* Blocks of 8 (n = 97 is not a multiple) and block folding.              */
static void test_cg_matches_cblas(void **state)
{
    (void)state;
    const int64_t nbs[] = {8, DESO_NB_BLOCK};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 2, cases);
    for (int ci = 0; ci < nc; ci++) {
        tu_label("%s", tu_case_name(&cases[ci]));
        run_cg(&cases[ci]);
        tu_case_end();
    }
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_cg_matches_cblas))
