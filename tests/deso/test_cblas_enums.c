/* deso_cblas.h: every deso_cblas_<routine> against the deso_<routine> it
 * stands for (the same result, bit for bit: it is the same recorded call)
 * and against OpenBLAS's cblas_<routine> on the same arrays (1e-12
 * relative) for dgemv, dger, dsymv, dtrsv, dtrmv, dsyr and dsyr2, for
 * both layouts, every transpose, triangle and diagonal,
 * with CBLAS's enums held in variables of CBLAS's types and with a lazy
 * alpha; CblasConjTrans is a transpose, CblasConjNoTrans is DESO_EINVAL.
 * <cblas.h> is included before deso_cblas.h here; scripts/test-install.sh
 * compiles the installed header with <cblas.h> before and after it.  In
 * each optimiser mode.  The enum mapping does not depend on the ranks:
 * P = 3 and 4 (a 2x2 grid) run in the long group.
 * deso-np: 1 2
 * deso-np-long: 3 4                                                      */
#include <cblas.h>

#include "deso/deso_cblas.h"
#include "test_util.h"

#define M 5
#define N 7
#define TOL 1e-12

static double A[M * N], T[N * N], X[N], Y[N];

static void fill(void)
{
    tu_rng rng = {21};
    tu_fill(&rng, A, M * N);
    tu_fill(&rng, T, N * N);
    for (int i = 0; i < N; i++) T[i * N + i] += N;   /* well conditioned */
    tu_fill(&rng, X, N);
    tu_fill(&rng, Y, N);
}

/* A vector holding v[0 .. n), gathered back after the calls.             */
static deso_vec *vec(deso_ctx *ctx, const double *v, int n)
{
    deso_vec *x = NULL;
    TU_CALL(deso_vec_from_array(ctx, n, v, DESO_ALL_RANKS, &x));
    return x;
}

/* The same memory CBLAS reads with `order`: rows x cols as it reads it,
 * leading dimension ld; row-major is the column-major transpose.         */
static deso_mat *mat(deso_ctx *ctx, const double *a, enum CBLAS_ORDER order,
                     int rows, int cols, int ld)
{
    deso_mat *h = NULL;
    if (order == CblasColMajor)
        TU_CALL(deso_mat_from_array(ctx, rows, cols, a, ld, DESO_ALL_RANKS, &h));
    else
        TU_CALL(deso_mat_from_array(ctx, cols, rows, a, ld, DESO_ALL_RANKS, &h));
    return h;
}

static void check_vec(const deso_vec *x, const double *want, int n)
{
    double got[N];
    tu_fetch(x, got);
    TU_CHECK(tu_relerr(got, want, n) < TOL);
}

/* The macro's result (v1) is bitwise the direct call's (v2), and near
 * OpenBLAS's (want); both handles are destroyed.                         */
static void same_and_right(deso_vec *v1, deso_vec *v2, const double *want,
                           int len)
{
    double g1[N], g2[N];
    tu_fetch(v1, g1);
    tu_fetch(v2, g2);
    TU_CHECK(memcmp(g1, g2, (size_t)len * sizeof *g1) == 0);
    check_vec(v1, want, len);
    deso_vec_destroy(&v1);
    deso_vec_destroy(&v2);
}

static void gemv_case(deso_ctx *ctx, enum CBLAS_ORDER order,
                      enum CBLAS_TRANSPOSE trans)
{
    int ld = order == CblasColMajor ? M : N;
    int leny = trans == CblasNoTrans ? M : N, lenx = M + N - leny;
    double want[N];
    memcpy(want, Y, sizeof want);
    cblas_dgemv(order, trans, M, N, 0.5, A, ld, X, 1, -1.5, want, 1);
    deso_mat *a = mat(ctx, A, order, M, N, ld);
    deso_vec *x = vec(ctx, X, lenx), *y1 = vec(ctx, Y, leny),
             *y2 = vec(ctx, Y, leny);
    deso_scalar *half;
    TU_CALL(deso_scalar_create(ctx, 0.5, &half));
    TU_CALL(deso_cblas_dgemv(order, trans, M, N, half, a, ld, x, 1, -1.5, y1,
                             1));
    deso_trans t = trans == CblasNoTrans ? DESO_NO_TRANS : DESO_TRANS;
    deso_order o = order == CblasColMajor ? DESO_COL_MAJOR : DESO_ROW_MAJOR;
    TU_CALL(deso_dgemv(o, t, M, N, half, a, ld, x, 1, -1.5, y2, 1));
    same_and_right(y1, y2, want, leny);
    deso_mat_destroy(&a);
    deso_vec_destroy(&x);
    deso_scalar_destroy(&half);
}

static void ger_case(deso_ctx *ctx, enum CBLAS_ORDER order)
{
    int ld = order == CblasColMajor ? M : N;
    double want[M * N], got1[M * N], got2[M * N];
    memcpy(want, A, sizeof want);
    cblas_dger(order, M, N, 2.0, X, 1, Y, 1, want, ld);
    deso_mat *a1 = mat(ctx, A, order, M, N, ld), *a2 = mat(ctx, A, order, M, N, ld);
    deso_vec *x = vec(ctx, X, M), *y = vec(ctx, Y, N);
    TU_CALL(deso_cblas_dger(order, M, N, 2.0, x, 1, y, 1, a1, ld));
    TU_CALL(deso_dger((deso_order)order, M, N, 2.0, x, 1, y, 1, a2, ld));
    TU_CALL(deso_mat_gather(a1, got1, ld, DESO_ALL_RANKS));
    TU_CALL(deso_mat_gather(a2, got2, ld, DESO_ALL_RANKS));
    TU_CHECK(memcmp(got1, got2, sizeof got1) == 0);
    TU_CHECK(tu_relerr(got1, want, M * N) < TOL);
    deso_mat_destroy(&a1);
    deso_mat_destroy(&a2);
    deso_vec_destroy(&x);
    deso_vec_destroy(&y);
}

static void symv_case(deso_ctx *ctx, enum CBLAS_ORDER order,
                      enum CBLAS_UPLO uplo)
{
    double want[N];
    memcpy(want, Y, sizeof want);
    cblas_dsymv(order, uplo, N, 1.5, T, N, X, 1, 0.5, want, 1);
    deso_mat *a = mat(ctx, T, order, N, N, N);
    deso_vec *x = vec(ctx, X, N), *y1 = vec(ctx, Y, N), *y2 = vec(ctx, Y, N);
    TU_CALL(deso_cblas_dsymv(order, uplo, N, 1.5, a, N, x, 1, 0.5, y1, 1));
    TU_CALL(deso_dsymv((deso_order)order, (deso_uplo)uplo, N, 1.5, a, N, x, 1,
                       0.5, y2, 1));
    same_and_right(y1, y2, want, N);
    deso_mat_destroy(&a);
    deso_vec_destroy(&x);
}

/* dtrsv (solve) or dtrmv on T's `uplo` triangle.                        */
static void tri_case(deso_ctx *ctx, enum CBLAS_ORDER order,
                     enum CBLAS_UPLO uplo, enum CBLAS_TRANSPOSE trans,
                     enum CBLAS_DIAG diag, int solve)
{
    double want[N];
    memcpy(want, X, sizeof want);
    if (solve) cblas_dtrsv(order, uplo, trans, diag, N, T, N, want, 1);
    else cblas_dtrmv(order, uplo, trans, diag, N, T, N, want, 1);
    deso_mat *a = mat(ctx, T, order, N, N, N);
    deso_vec *x1 = vec(ctx, X, N), *x2 = vec(ctx, X, N);
    deso_trans t = trans == CblasNoTrans ? DESO_NO_TRANS : DESO_TRANS;
    deso_order o = (deso_order)order;
    deso_uplo u = (deso_uplo)uplo;
    deso_diag d = (deso_diag)diag;
    if (solve) {
        TU_CALL(deso_cblas_dtrsv(order, uplo, trans, diag, N, a, N, x1, 1));
        TU_CALL(deso_dtrsv(o, u, t, d, N, a, N, x2, 1));
    } else {
        TU_CALL(deso_cblas_dtrmv(order, uplo, trans, diag, N, a, N, x1, 1));
        TU_CALL(deso_dtrmv(o, u, t, d, N, a, N, x2, 1));
    }
    same_and_right(x1, x2, want, N);
    deso_mat_destroy(&a);
}

/* dsyr (y NULL) or dsyr2 on T's `uplo` triangle.                         */
static void syr_case(deso_ctx *ctx, enum CBLAS_ORDER order,
                     enum CBLAS_UPLO uplo, int two)
{
    double want[N * N], g1[N * N], g2[N * N];
    memcpy(want, T, sizeof want);
    if (two)
        cblas_dsyr2(order, uplo, N, 0.5, X, 1, Y, 1, want, N);
    else
        cblas_dsyr(order, uplo, N, 0.5, X, 1, want, N);
    deso_mat *a1 = mat(ctx, T, order, N, N, N), *a2 = mat(ctx, T, order, N, N, N);
    deso_vec *x = vec(ctx, X, N), *y = vec(ctx, Y, N);
    deso_order o = (deso_order)order;
    deso_uplo u = (deso_uplo)uplo;
    if (two) {
        TU_CALL(deso_cblas_dsyr2(order, uplo, N, 0.5, x, 1, y, 1, a1, N));
        TU_CALL(deso_dsyr2(o, u, N, 0.5, x, 1, y, 1, a2, N));
    } else {
        TU_CALL(deso_cblas_dsyr(order, uplo, N, 0.5, x, 1, a1, N));
        TU_CALL(deso_dsyr(o, u, N, 0.5, x, 1, a2, N));
    }
    TU_CALL(deso_mat_gather(a1, g1, N, DESO_ALL_RANKS));
    TU_CALL(deso_mat_gather(a2, g2, N, DESO_ALL_RANKS));
    TU_CHECK(memcmp(g1, g2, sizeof g1) == 0);
    TU_CHECK(tu_relerr(g1, want, N * N) < TOL);
    deso_mat_destroy(&a1);
    deso_mat_destroy(&a2);
    deso_vec_destroy(&x);
    deso_vec_destroy(&y);
}

static const enum CBLAS_ORDER orders[2] = {CblasColMajor, CblasRowMajor};
static const enum CBLAS_TRANSPOSE transes[3] = {CblasNoTrans, CblasTrans,
                                                CblasConjTrans};
static const enum CBLAS_UPLO uplos[2] = {CblasUpper, CblasLower};
static const enum CBLAS_DIAG diags[2] = {CblasNonUnit, CblasUnit};

static void test_level2(void **state)
{
    (void)state;
    fill();
    for (int k = 0; k < TU_NMODES; k++) {
        deso_ctx *ctx = tu_ctx_mode(tu_mode(k), 0, 0, 2);
        tu_label("mode %s", deso_mode_name(tu_mode(k)));
        for (int o = 0; o < 2; o++) {
            for (int t = 0; t < 3; t++) gemv_case(ctx, orders[o], transes[t]);
            ger_case(ctx, orders[o]);
            for (int u = 0; u < 2; u++) {
                symv_case(ctx, orders[o], uplos[u]);
                syr_case(ctx, orders[o], uplos[u], 0);
                syr_case(ctx, orders[o], uplos[u], 1);
                for (int t = 0; t < 3; t++)
                    for (int d = 0; d < 2; d++) {
                        for (int solve = 0; solve < 2; solve++)
                            tri_case(ctx, orders[o], uplos[u], transes[t],
                                     diags[d], solve);
                    }
            }
        }
        TU_OK(deso_finalize(&ctx));
        TU_SYNC();
    }
}

/* A transpose CBLAS has and real deso has not.                           */
static void test_refused(void **state)
{
    (void)state;
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    deso_mat *a;
    deso_vec *x, *y;
    TU_OK(deso_mat_create(ctx, N, N, &a));
    TU_OK(deso_vec_create(ctx, N, &x));
    TU_OK(deso_vec_create(ctx, N, &y));
    enum CBLAS_TRANSPOSE t = CblasConjNoTrans;
    TU_ERR(deso_cblas_dgemv(CblasColMajor, t, N, N, 1.0, a, N, x, 1, 0.0, y,
                            1),
           DESO_EINVAL);
    TU_ERR(deso_cblas_dtrsv(CblasColMajor, CblasUpper, t, CblasUnit, N, a, N,
                            x, 1),
           DESO_EINVAL);
    TU_OK(deso_finalize(&ctx));
}

TU_MAIN(cmocka_unit_test(test_level2), cmocka_unit_test(test_refused))
