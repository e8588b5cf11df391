/* Level 2 through deso against sequential OpenBLAS on random data: dgemv
 * (N, T; double and lazy alpha/beta; beta = 0), dger, dsymv (U, L), dtrsv
 * (U/L x N/T x unit/non-unit).  Block sizes 2, 3 and block folding; the
 * latter makes dtrsv (cyclic(b) only) remap the matrix through
 * deso__remap_*.  Matrices from a global array on every rank, on one root,
 * and from a generator.  Identity: results equal OpenBLAS's within 1e-12
 * relative (1e-10 for dtrsv, which amplifies rounding).  Layout: every
 * call in DESO_COL_MAJOR and DESO_ROW_MAJOR on nonsymmetric data against
 * CBLAS with the same layout flag, and DESO_ESIZE for a handle whose shape
 * the row-major reading does not fit.
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

    /* y_m <- al A x_n + be y_m;  y_n <- al A^T x_m + be y_n (lazy; as the
     * row-major n x m A^T, whose storage is A's);
     * u <- A x_n (beta 0); A <- al y_m y_n^T + A; u <- A x_n + u           */
    TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, al, dA, lda, dxn, 1,
                     be, dym, 1));
    TU_OK(deso_dgemv(DESO_ROW_MAJOR, DESO_NO_TRANS, n, m, sal, dA, lda, dxm, 1,
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

/* ---- the layout flag ------------------------------------------------------
 * A handle stores its data column-major; DESO_ROW_MAJOR reads that storage
 * row-major, as CBLAS reads the same memory.  Each case builds the handle
 * a caller of that layout would (row-major m x n: an n x m handle), gathers
 * it and runs CBLAS with the same layout flag on the gathered copy.  The
 * data is neither symmetric nor triangular, so reading it the wrong way
 * round gives a different answer.                                          */

/* A(i, j): a hash of (i, j) in [-1, 1), plus *shift on the diagonal.      */
static double ns_fn(int64_t i, int64_t j, void *arg)
{
    uint64_t h = (uint64_t)(i * 7919 + j * 104729 + 1) * 0x9E3779B97F4A7C15ull;
    double v = (double)(h >> 11) / 4503599627370496.0 - 1.0;
    return i == j ? v + *(const double *)arg : v;
}

/* The handle a caller of layout o makes for an m x n operand, and its
 * gathered column-major copy in *data, whose leading dimension (the
 * handle's row count) is the lda that caller passes.                      */
static deso_mat *layout_mat(deso_ctx *ctx, deso_order o, int64_t m, int64_t n,
                            double shift, double **data)
{
    int64_t hr = o == DESO_ROW_MAJOR ? n : m, hc = o == DESO_ROW_MAJOR ? m : n;
    deso_mat *a;
    TU_OK(deso_mat_from_fn(ctx, hr, hc, ns_fn, &shift, &a));
    *data = malloc((size_t)(hr * hc) * sizeof **data);
    TU_OK(deso_mat_gather(a, *data, hr, DESO_ALL_RANKS));
    return a;
}

static CBLAS_ORDER cb_order(deso_order o)
{
    return o == DESO_ROW_MAJOR ? CblasRowMajor : CblasColMajor;
}

/* k = 0, 1: y <- al op(A) x + be y, op = N, T;  k = 2: A <- al x y^T + A.
 * A is m x n as layout o reads it.                                         */
static void layout_gemv_ger(deso_ctx *ctx, deso_order o, int64_t m, int64_t n,
                            uint64_t seed)
{
    tu_rng rng = {seed};
    double *A, *v = malloc((size_t)(m + n) * sizeof *v);
    double *g = malloc((size_t)(m * n) * sizeof *g);
    deso_mat *dA = layout_mat(ctx, o, m, n, 0.0, &A);
    int im = (int)m, in = (int)n;
    int64_t lda = o == DESO_ROW_MAJOR ? n : m;
    for (int k = 0; k < 3; k++) {
        int64_t lx = k ? m : n, ly = k ? n : m;
        double *x = v, *y = v + lx, al = tu_rand(&rng), be = tu_rand(&rng);
        tu_fill(&rng, v, m + n);
        deso_vec *dx, *dy;
        TU_OK(deso_vec_from_array(ctx, lx, x, DESO_ALL_RANKS, &dx));
        TU_OK(deso_vec_from_array(ctx, ly, y, DESO_ALL_RANKS, &dy));
        if (k < 2) {
            TU_OK(deso_dgemv(o, k ? DESO_TRANS : DESO_NO_TRANS, m, n, al, dA,
                             lda, dx, 1, be, dy, 1));
            cblas_dgemv(cb_order(o), k ? CblasTrans : CblasNoTrans, im, in,
                        al, A, (int)lda, x, 1, be, y, 1);
            tu_gather(dy, g);
            assert_true(tu_all(tu_relerr(g, y, ly) < 1e-12));
        } else {
            TU_OK(deso_dger(o, m, n, al, dx, 1, dy, 1, dA, lda));
            cblas_dger(cb_order(o), im, in, al, x, 1, y, 1, A, (int)lda);
            TU_OK(deso_mat_gather(dA, g, lda, DESO_ALL_RANKS));
            assert_true(tu_all(tu_relerr(g, A, m * n) < 1e-12));
        }
        deso_vec_destroy(&dx);
        deso_vec_destroy(&dy);
    }
    deso_mat_destroy(&dA);
    free(A);
    free(v);
    free(g);
}

/* dsymv (U, L) and dtrsv (U/L x N/T x unit/non-unit) read as layout o; the
 * dominant diagonal keeps the solves well conditioned.                    */
static void layout_symv_trsv(deso_ctx *ctx, deso_order o, int64_t n,
                             uint64_t seed)
{
    tu_rng rng = {seed};
    double *A, *x = malloc((size_t)(2 * n) * sizeof *x), *y = x + n;
    double *g = malloc((size_t)n * sizeof *g);
    deso_mat *dA = layout_mat(ctx, o, n, n, (double)n + 2.0, &A);
    int in = (int)n;
    for (int k = 0; k < 10; k++) {
        /* k = 0, 1: dsymv; k = 2 .. 9: dtrsv, bits uplo, trans, unit      */
        int j = k < 2 ? k : k - 2, u = j & 1, t = (j >> 1) & 1;
        int unit = (j >> 2) & 1;
        deso_uplo du = u ? DESO_LOWER : DESO_UPPER;
        double al = tu_rand(&rng), be = tu_rand(&rng);
        tu_fill(&rng, x, 2 * n);
        deso_vec *dx, *dy;
        TU_OK(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx));
        TU_OK(deso_vec_from_array(ctx, n, y, DESO_ALL_RANKS, &dy));
        if (k < 2) {
            TU_OK(deso_dsymv(o, du, n, al, dA, n, dx, 1, be, dy, 1));
            cblas_dsymv(cb_order(o), u ? CblasLower : CblasUpper, in, al, A,
                        in, x, 1, be, y, 1);
            tu_gather(dy, g);
            assert_true(tu_all(tu_relerr(g, y, n) < 1e-12));
        } else {
            TU_OK(deso_dtrsv(o, du, t ? DESO_TRANS : DESO_NO_TRANS,
                             unit ? DESO_UNIT : DESO_NON_UNIT, n, dA, n, dx,
                             1));
            cblas_dtrsv(cb_order(o), u ? CblasLower : CblasUpper,
                        t ? CblasTrans : CblasNoTrans,
                        unit ? CblasUnit : CblasNonUnit, in, A, in, x, 1);
            tu_gather(dx, g);
            assert_true(tu_all(tu_relerr(g, x, n) < 1e-10));
        }
        deso_vec_destroy(&dx);
        deso_vec_destroy(&dy);
    }
    deso_mat_destroy(&dA);
    free(A);
    free(x);
    free(g);
}

/* The error names A and the row-major reading.                            */
static int says_row_major(const char *arg)
{
    const char *e = deso_last_error();
    return strstr(e, "row-major") != NULL && strstr(e, arg) != NULL;
}

/* An m x n handle (m != n) is what a column-major m x n call wants, not a
 * row-major one; a non-square one fits neither dsymv nor dtrsv.          */
static void layout_esize(deso_ctx *ctx, int64_t m, int64_t n)
{
    double zero = 0.0;
    deso_mat *dW, *dR;
    deso_vec *dm, *dn;
    TU_OK(deso_mat_from_fn(ctx, m, n, ns_fn, &zero, &dW));
    TU_OK(deso_mat_from_fn(ctx, m, m + 1, ns_fn, &zero, &dR));
    TU_OK(deso_vec_create(ctx, m, &dm));
    TU_OK(deso_vec_create(ctx, n, &dn));
    TU_ERR(deso_dgemv(DESO_ROW_MAJOR, DESO_NO_TRANS, m, n, 1.0, dW, n, dn, 1,
                      0.0, dm, 1),
           DESO_ESIZE);
    assert_true(tu_all(says_row_major("arg 6")));
    TU_ERR(deso_dgemv(DESO_ROW_MAJOR, DESO_TRANS, m, n, 1.0, dW, n, dm, 1,
                      0.0, dn, 1),
           DESO_ESIZE);
    TU_ERR(deso_dger(DESO_ROW_MAJOR, m, n, 1.0, dm, 1, dn, 1, dW, n),
           DESO_ESIZE);
    assert_true(tu_all(says_row_major("arg 9")));
    /* ... and the other way round for a column-major call                 */
    TU_ERR(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, m, 1.0, dW, n, dm, 1,
                      0.0, dn, 1),
           DESO_ESIZE);
    TU_ERR(deso_dsymv(DESO_ROW_MAJOR, DESO_UPPER, m, 1.0, dR, m, dm, 1, 0.0,
                      dm, 1),
           DESO_ESIZE);
    assert_true(tu_all(says_row_major("arg 5")));
    TU_ERR(deso_dtrsv(DESO_ROW_MAJOR, DESO_LOWER, DESO_NO_TRANS, DESO_NON_UNIT,
                      m, dR, m, dm, 1),
           DESO_ESIZE);
    assert_true(tu_all(says_row_major("arg 6")));
    deso_mat_destroy(&dW);
    deso_mat_destroy(&dR);
    deso_vec_destroy(&dm);
    deso_vec_destroy(&dn);
}

static void test_layout(void **state)
{
    (void)state;
    int grids[4][2];
    int ng = tu_grids(grids);
    const int64_t P = tu_size(), lo = P > 1 ? P - 1 : 1;
    const int64_t nbs[] = {2, DESO_NB_BLOCK};
    /* m != n, n = 1, n < P, n not a multiple of P; above P = 3 (more ranks
     * than this machine's cores make every collective slow) the awkward
     * ones only, with one block size                                       */
    const int64_t shapes[][2] = {{7, 3},  {3, 11}, {2 * P + 1, lo},
                                 {1, 1},  {5, 1},  {1, 4}};
    const int64_t sizes[] = {lo, 2 * P + 1, 1, 5};
    const int nshapes = P > 3 ? 3 : 6, nsizes = P > 3 ? 2 : 4;
    for (int gi = 0; gi < ng; gi++)
        for (int bi = 0; bi < (P > 3 ? 1 : 2); bi++) {
            deso_ctx *ctx = tu_ctx(grids[gi][0], grids[gi][1], nbs[bi]);
            for (int oi = 0; oi < 2; oi++) {
                deso_order o = oi ? DESO_ROW_MAJOR : DESO_COL_MAJOR;
                for (int si = 0; si < nshapes; si++)
                    layout_gemv_ger(ctx, o, shapes[si][0], shapes[si][1],
                                    31u + (uint64_t)(si * 4 + bi * 2 + oi));
                for (int si = 0; si < nsizes; si++)
                    layout_symv_trsv(ctx, o, sizes[si],
                                     41u + (uint64_t)(si * 4 + bi * 2 + oi));
            }
            layout_esize(ctx, 7, 3);
            layout_esize(ctx, 1, lo + 1);
            TU_OK(deso_finalize(&ctx));
        }
}

TU_MAIN(cmocka_unit_test(test_gemv_ger), cmocka_unit_test(test_symv_trsv),
        cmocka_unit_test(test_layout))
