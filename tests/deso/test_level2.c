/* Level 2 through deso against sequential OpenBLAS on random data: dgemv
 * (N, T; double and lazy alpha/beta; beta = 0), dger, dsymv (U, L), dtrsv
 * (U/L x N/T x unit/non-unit).  Block sizes 2, 3 and block folding; the
 * latter makes dtrsv (cyclic(b) only) remap the matrix through
 * deso__remap_*.  Matrices from a global array on every rank, on one root,
 * and from a generator.  Identity: results equal OpenBLAS's within 1e-12
 * relative (1e-10 for dtrsv, which amplifies rounding).
 * deso-np: 1 2 3 4 6                                                      */
#include <cblas.h>

#include "test_util.h"

static void gemv_ger_case(deso_ctx *ctx, int64_t m, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double *A = malloc((size_t)(m * n + 1) * sizeof *A);
    double *x = malloc((size_t)(m + n) * sizeof *x);
    double *y = malloc((size_t)(m + n) * sizeof *y);
    double *u = malloc((size_t)(m + n) * sizeof *u);
    double *g = malloc((size_t)(m * n + m + n) * sizeof *g);
    tu_fill(&rng, A, m * n);
    tu_fill(&rng, x, m + n);
    tu_fill(&rng, y, m + n);
    tu_fill(&rng, u, m + n);
    double al = tu_rand(&rng), be = tu_rand(&rng);
    deso_mat *dA;
    deso_vec *dxn, *dym, *dxm, *dyn, *du;
    TU_OK(deso_mat_from_array(ctx, m, n, A, m > 0 ? m : 1, 0, &dA));
    TU_OK(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dxn));
    TU_OK(deso_vec_from_array(ctx, m, y, DESO_ALL_RANKS, &dym));
    TU_OK(deso_vec_from_array(ctx, m, x + n, DESO_ALL_RANKS, &dxm));
    TU_OK(deso_vec_from_array(ctx, n, y + m, DESO_ALL_RANKS, &dyn));
    TU_OK(deso_vec_from_array(ctx, m, u, DESO_ALL_RANKS, &du));
    deso_scalar *sal, *sbe;
    TU_OK(deso_scalar_create(ctx, al, &sal));
    TU_OK(deso_scalar_create(ctx, be, &sbe));
    int im = (int)m, in = (int)n, lda = im > 0 ? im : 1;

    /* y_m <- al A x_n + be y_m;  y_n <- al A^T x_m + be y_n (lazy);
     * u <- A x_n (beta 0); A <- al y_m y_n^T + A; u <- A x_n + u           */
    TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, al, dA, lda, dxn, 1,
                     be, dym, 1));
    TU_OK(deso_dgemv(DESO_ROW_MAJOR, DESO_TRANS, m, n, sal, dA, lda, dxm, 1,
                     sbe, dyn, 1));
    TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, dA, lda, dxn, 1,
                     0.0, du, 1));
    TU_OK(deso_dger(DESO_COL_MAJOR, m, n, sal, dym, 1, dyn, 1, dA, lda));
    TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, dA, lda, dxn, 1,
                     1.0, du, 1));

    if (m > 0 && n > 0) {
        cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, al, A, lda, x, 1, be, y, 1);
        cblas_dgemv(CblasColMajor, CblasTrans, im, in, al, A, lda, x + n, 1, be, y + m, 1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, 1.0, A, lda, x, 1, 0.0, u, 1);
        cblas_dger(CblasColMajor, im, in, al, y, 1, y + m, 1, A, lda);
        cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, 1.0, A, lda, x, 1, 1.0, u, 1);
    }
    tu_gather(dym, g);
    assert_true(tu_all(tu_relerr(g, y, m) < 1e-12));
    tu_gather(dyn, g);
    assert_true(tu_all(tu_relerr(g, y + m, n) < 1e-12));
    tu_gather(du, g);
    assert_true(tu_all(tu_relerr(g, u, m) < 1e-12));
    TU_OK(deso_mat_gather(dA, g, lda, DESO_ALL_RANKS));
    assert_true(tu_all(tu_relerr(g, A, m * n) < 1e-12));
    deso_mat_destroy(&dA);
    deso_vec_destroy(&dxn);
    deso_vec_destroy(&dym);
    deso_vec_destroy(&dxm);
    deso_vec_destroy(&dyn);
    deso_vec_destroy(&du);
    deso_scalar_destroy(&sal);
    deso_scalar_destroy(&sbe);
    free(A);
    free(x);
    free(y);
    free(u);
    free(g);
}

static double *g_tri;     /* the generator's source for the trsv matrix     */
static int64_t g_ld;
static double tri_fn(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return g_tri[j * g_ld + i];
}

static void symv_trsv_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double *A = malloc((size_t)(n * n) * sizeof *A);
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double *g = malloc((size_t)n * sizeof *g);
    tu_fill(&rng, A, n * n);
    for (int64_t i = 0; i < n; i++) A[i * n + i] += (double)n + 2.0;
    g_tri = A;
    g_ld = n;
    deso_mat *dA;
    TU_OK(deso_mat_from_fn(ctx, n, n, tri_fn, NULL, &dA));
    int in = (int)n;
    for (int uplo = 0; uplo < 2; uplo++) {
        tu_fill(&rng, x, n);
        tu_fill(&rng, y, n);
        double al = tu_rand(&rng), be = tu_rand(&rng);
        deso_vec *dx, *dy;
        TU_OK(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx));
        TU_OK(deso_vec_from_array(ctx, n, y, DESO_ALL_RANKS, &dy));
        deso_uplo du = uplo ? DESO_LOWER : DESO_UPPER;
        TU_OK(deso_dsymv(DESO_COL_MAJOR, du, n, al, dA, n, dx, 1, be, dy, 1));
        cblas_dsymv(CblasColMajor, uplo ? CblasLower : CblasUpper, in, al, A,
                    in, x, 1, be, y, 1);
        tu_gather(dy, g);
        assert_true(tu_all(tu_relerr(g, y, n) < 1e-12));
        for (int tr = 0; tr < 2; tr++)
            for (int unit = 0; unit < 2; unit++) {
                TU_OK(deso_dtrsv(DESO_COL_MAJOR, du,
                                 tr ? DESO_TRANS : DESO_NO_TRANS,
                                 unit ? DESO_UNIT : DESO_NON_UNIT, n, dA, n,
                                 dx, 1));
                /* mixed with a gemv in the same DAG                          */
                TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1e-3, dA,
                                 n, dx, 1, 1.0, dx, 1));
                cblas_dtrsv(CblasColMajor, uplo ? CblasLower : CblasUpper,
                            tr ? CblasTrans : CblasNoTrans,
                            unit ? CblasUnit : CblasNonUnit, in, A, in, x, 1);
                double *t = malloc((size_t)n * sizeof *t);
                memcpy(t, x, (size_t)n * sizeof *t);
                cblas_dgemv(CblasColMajor, CblasNoTrans, in, in, 1e-3, A, in,
                            t, 1, 1.0, x, 1);
                free(t);
            }
        tu_gather(dx, g);
        assert_true(tu_all(tu_relerr(g, x, n) < 1e-10));
        deso_vec_destroy(&dx);
        deso_vec_destroy(&dy);
    }
    deso_mat_destroy(&dA);
    free(A);
    free(x);
    free(y);
    free(g);
}

static void test_gemv_ger(void **state)
{
    (void)state;
    int grids[4][2];
    int ng = tu_grids(grids);
    const int64_t nbs[] = {2, 3, DESO_NB_BLOCK};
    const int64_t shapes[][2] = {{1, 1}, {7, 3}, {3, 11}, {31, 29}};
    for (int gi = 0; gi < ng; gi++)
        for (int bi = 0; bi < 3; bi++) {
            deso_ctx *ctx = tu_ctx(grids[gi][0], grids[gi][1], nbs[bi]);
            for (int si = 0; si < 4; si++)
                gemv_ger_case(ctx, shapes[si][0], shapes[si][1],
                              77u + (uint64_t)(si * 3 + bi));
            TU_OK(deso_finalize(&ctx));
        }
}

static void test_symv_trsv(void **state)
{
    (void)state;
    int grids[4][2];
    int ng = tu_grids(grids);
    const int64_t nbs[] = {3, DESO_NB_BLOCK};
    const int64_t sizes[] = {1, 5, 23, 150};
    for (int gi = 0; gi < ng; gi++)
        for (int bi = 0; bi < 2; bi++) {
            deso_ctx *ctx = tu_ctx(grids[gi][0], grids[gi][1], nbs[bi]);
            for (int si = 0; si < 4; si++) {
                /* the largest size only with coarse blocks: it is there to
                 * force the block -> cyclic remap (blocks > 64); the
                 * smallest only on the default grid                        */
                if (si == 3 && bi != 1) continue;
                if (si == 0 && gi > 0) continue;
                symv_trsv_case(ctx, sizes[si], 5u + (uint64_t)(si * 3 + bi));
            }
            TU_OK(deso_finalize(&ctx));
        }
}

TU_MAIN(cmocka_unit_test(test_gemv_ger), cmocka_unit_test(test_symv_trsv))
