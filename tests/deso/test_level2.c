/* Level 2 through deso against sequential OpenBLAS on random data: dgemv
 * (N, T; double and lazy alpha/beta; beta = 0), dger, dsymv (U, L), dtrsv
 * (U/L x N/T x unit/non-unit).  Block sizes 2, 3 and block folding; the
 * latter makes dtrsv (cyclic(b) only) remap the matrix through
 * deso__remap_*.  Matrices from a global array on every rank, on one root,
 * and from a generator.  Identity: results equal OpenBLAS's within 1e-12
 * relative (1e-10 for dtrsv, which amplifies rounding).  Layout: every
 * call in DESO_COL_MAJOR and DESO_ROW_MAJOR on nonsymmetric data against
 * CBLAS with the same layout flag, and DESO_ESIZE for a handle whose shape
 * the row-major reading does not fit.  Every case in each optimiser mode
 * (none, affine, full), each mode against OpenBLAS; on default, 1-D and
 * 2-D grids (2x2 at P = 4, 2x3 and 3x2 at P = 6: the long group), modes
 * and block sizes paired as tu_cases says.
 * deso-np: 1 2
 * deso-np-long: 3 4 6                                                     */
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
    TU_CALL(deso_mat_from_array(ctx, m, n, A, m > 0 ? m : 1, 0, &dA));
    TU_CALL(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dxn));
    TU_CALL(deso_vec_from_array(ctx, m, y, DESO_ALL_RANKS, &dym));
    TU_CALL(deso_vec_from_array(ctx, m, x + n, DESO_ALL_RANKS, &dxm));
    TU_CALL(deso_vec_from_array(ctx, n, y + m, DESO_ALL_RANKS, &dyn));
    TU_CALL(deso_vec_from_array(ctx, m, u, DESO_ALL_RANKS, &du));
    deso_scalar *sal, *sbe;
    TU_CALL(deso_scalar_create(ctx, al, &sal));
    TU_CALL(deso_scalar_create(ctx, be, &sbe));
    int im = (int)m, in = (int)n, lda = im > 0 ? im : 1;

    /* y_m <- al A x_n + be y_m;  y_n <- al A^T x_m + be y_n (lazy; as the
     * row-major n x m A^T, whose storage is A's);
     * u <- A x_n (beta 0); A <- al y_m y_n^T + A; u <- A x_n + u           */
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, al, dA, lda, dxn,
                       1, be, dym, 1));
    TU_CALL(deso_dgemv(DESO_ROW_MAJOR, DESO_NO_TRANS, n, m, sal, dA, lda, dxm,
                       1, sbe, dyn, 1));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, dA, lda, dxn,
                       1, 0.0, du, 1));
    TU_CALL(deso_dger(DESO_COL_MAJOR, m, n, sal, dym, 1, dyn, 1, dA, lda));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, dA, lda, dxn,
                       1, 1.0, du, 1));

    if (m > 0 && n > 0) {
        cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, al, A, lda, x, 1, be, y, 1);
        cblas_dgemv(CblasColMajor, CblasTrans, im, in, al, A, lda, x + n, 1, be, y + m, 1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, 1.0, A, lda, x, 1, 0.0, u, 1);
        cblas_dger(CblasColMajor, im, in, al, y, 1, y + m, 1, A, lda);
        cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, 1.0, A, lda, x, 1, 1.0, u, 1);
    }
    tu_fetch(dym, g);
    TU_CHECK(tu_relerr(g, y, m) < 1e-12);
    tu_fetch(dyn, g);
    TU_CHECK(tu_relerr(g, y + m, n) < 1e-12);
    tu_fetch(du, g);
    TU_CHECK(tu_relerr(g, u, m) < 1e-12);
    TU_CALL(deso_mat_gather(dA, g, lda, DESO_ALL_RANKS));
    TU_CHECK(tu_relerr(g, A, m * n) < 1e-12);
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
    TU_CALL(deso_mat_from_fn(ctx, n, n, tri_fn, NULL, &dA));
    int in = (int)n;
    for (int uplo = 0; uplo < 2; uplo++) {
        tu_fill(&rng, x, n);
        tu_fill(&rng, y, n);
        double al = tu_rand(&rng), be = tu_rand(&rng);
        deso_vec *dx, *dy;
        TU_CALL(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx));
        TU_CALL(deso_vec_from_array(ctx, n, y, DESO_ALL_RANKS, &dy));
        deso_uplo du = uplo ? DESO_LOWER : DESO_UPPER;
        TU_CALL(deso_dsymv(DESO_COL_MAJOR, du, n, al, dA, n, dx, 1, be, dy,
                           1));
        cblas_dsymv(CblasColMajor, uplo ? CblasLower : CblasUpper, in, al, A,
                    in, x, 1, be, y, 1);
        tu_fetch(dy, g);
        TU_CHECK(tu_relerr(g, y, n) < 1e-12);
        for (int tr = 0; tr < 2; tr++)
            for (int unit = 0; unit < 2; unit++) {
                TU_CALL(deso_dtrsv(DESO_COL_MAJOR, du,
                                   tr ? DESO_TRANS : DESO_NO_TRANS,
                                   unit ? DESO_UNIT : DESO_NON_UNIT, n, dA, n,
                                   dx, 1));
                /* mixed with a gemv in the same DAG                        */
                TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1e-3,
                                   dA, n, dx, 1, 1.0, dx, 1));
                cblas_dtrsv(CblasColMajor, uplo ? CblasLower : CblasUpper,
                            tr ? CblasTrans : CblasNoTrans,
                            unit ? CblasUnit : CblasNonUnit, in, A, in, x, 1);
                double *t = malloc((size_t)n * sizeof *t);
                memcpy(t, x, (size_t)n * sizeof *t);
                cblas_dgemv(CblasColMajor, CblasNoTrans, in, in, 1e-3, A, in,
                            t, 1, 1.0, x, 1);
                free(t);
            }
        tu_fetch(dx, g);
        TU_CHECK(tu_relerr(g, x, n) < 1e-10);
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
    const int64_t nbs[] = {2, 3, DESO_NB_BLOCK};
    const int64_t shapes[][2] = {{1, 1}, {7, 3}, {3, 11}, {31, 29}};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 3, cases);
    for (int ci = 0; ci < nc; ci++) {
        deso_ctx *ctx = tu_case_ctx(&cases[ci]);
        for (int si = 0; si < 4; si++) {
            tu_label("%s, %lld x %lld", tu_case_name(&cases[ci]),
                     (long long)shapes[si][0], (long long)shapes[si][1]);
            gemv_ger_case(ctx, shapes[si][0], shapes[si][1],
                          77u + (uint64_t)(si * 3 + ci));
        }
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
}

static void test_symv_trsv(void **state)
{
    (void)state;
    const int64_t nbs[] = {3, DESO_NB_BLOCK};
    const int64_t sizes[] = {1, 5, 23, 150};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 2, cases);
    for (int ci = 0; ci < nc; ci++) {
        const tu_case *c = &cases[ci];
        deso_ctx *ctx = tu_case_ctx(c);
        for (int si = 0; si < 4; si++) {
            /* the largest size only with coarse blocks: it is there to
             * force the block -> cyclic remap (blocks > 64); the smallest
             * only on the default grid                                     */
            if (si == 3 && c->nb != DESO_NB_BLOCK) continue;
            if (si == 0 && c->pr != 0) continue;
            tu_label("%s, n %lld", tu_case_name(c), (long long)sizes[si]);
            symv_trsv_case(ctx, sizes[si], 5u + (uint64_t)(si * 3 + ci));
        }
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
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
    TU_CALL(deso_mat_from_fn(ctx, hr, hc, ns_fn, &shift, &a));
    *data = malloc((size_t)(hr * hc) * sizeof **data);
    TU_CALL(deso_mat_gather(a, *data, hr, DESO_ALL_RANKS));
    return a;
}

static CBLAS_ORDER cb_order(deso_order o)
{
    return o == DESO_ROW_MAJOR ? CblasRowMajor : CblasColMajor;
}

/* k = 0, 1: y_k <- al op(A) x_k + be y_k, op = N, T;  k = 2: A <- al x_2
 * y_2^T + A; all three in one DAG.  A is m x n as layout o reads it.     */
static void layout_gemv_ger(deso_ctx *ctx, deso_order o, int64_t m, int64_t n,
                            uint64_t seed)
{
    tu_rng rng = {seed};
    double *A, *v = malloc((size_t)(3 * (m + n)) * sizeof *v);
    double *g = malloc((size_t)(m * n) * sizeof *g);
    deso_mat *dA = layout_mat(ctx, o, m, n, 0.0, &A);
    int im = (int)m, in = (int)n;
    int64_t lda = o == DESO_ROW_MAJOR ? n : m;
    deso_vec *dx[3], *dy[3];
    tu_fill(&rng, v, 3 * (m + n));
    for (int k = 0; k < 3; k++) {
        int64_t lx = k ? m : n, ly = k ? n : m;
        double *x = v + k * (m + n), *y = x + lx;
        double al = tu_rand(&rng), be = tu_rand(&rng);
        TU_CALL(deso_vec_from_array(ctx, lx, x, DESO_ALL_RANKS, &dx[k]));
        TU_CALL(deso_vec_from_array(ctx, ly, y, DESO_ALL_RANKS, &dy[k]));
        if (k < 2) {
            TU_CALL(deso_dgemv(o, k ? DESO_TRANS : DESO_NO_TRANS, m, n, al,
                               dA, lda, dx[k], 1, be, dy[k], 1));
            cblas_dgemv(cb_order(o), k ? CblasTrans : CblasNoTrans, im, in,
                        al, A, (int)lda, x, 1, be, y, 1);
        } else {
            TU_CALL(deso_dger(o, m, n, al, dx[k], 1, dy[k], 1, dA, lda));
            cblas_dger(cb_order(o), im, in, al, x, 1, y, 1, A, (int)lda);
        }
    }
    for (int k = 0; k < 2; k++) {
        tu_fetch(dy[k], g);
        TU_CHECK(tu_relerr(g, v + k * (m + n) + (k ? m : n), k ? n : m) <
                 1e-12);
    }
    TU_CALL(deso_mat_gather(dA, g, lda, DESO_ALL_RANKS));
    TU_CHECK(tu_relerr(g, A, m * n) < 1e-12);
    for (int k = 0; k < 3; k++) {
        deso_vec_destroy(&dx[k]);
        deso_vec_destroy(&dy[k]);
    }
    deso_mat_destroy(&dA);
    free(A);
    free(v);
    free(g);
}

/* dsymv (U, L) and dtrsv (U/L x N/T x unit/non-unit) read as layout o,
 * each on its own vectors, all ten in one DAG; the dominant diagonal keeps
 * the solves well conditioned.                                            */
static void layout_symv_trsv(deso_ctx *ctx, deso_order o, int64_t n,
                             uint64_t seed)
{
    tu_rng rng = {seed};
    double *A, *v = malloc((size_t)(20 * n) * sizeof *v);
    double *g = malloc((size_t)n * sizeof *g);
    deso_mat *dA = layout_mat(ctx, o, n, n, (double)n + 2.0, &A);
    int in = (int)n;
    deso_vec *dx[10], *dy[10];
    tu_fill(&rng, v, 20 * n);
    for (int k = 0; k < 10; k++) {
        /* k = 0, 1: dsymv; k = 2 .. 9: dtrsv, bits uplo, trans, unit      */
        int j = k < 2 ? k : k - 2, u = j & 1, t = (j >> 1) & 1;
        int unit = (j >> 2) & 1;
        deso_uplo du = u ? DESO_LOWER : DESO_UPPER;
        double al = tu_rand(&rng), be = tu_rand(&rng);
        double *x = v + 2 * k * n, *y = x + n;
        TU_CALL(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx[k]));
        TU_CALL(deso_vec_from_array(ctx, n, y, DESO_ALL_RANKS, &dy[k]));
        if (k < 2) {
            TU_CALL(deso_dsymv(o, du, n, al, dA, n, dx[k], 1, be, dy[k], 1));
            cblas_dsymv(cb_order(o), u ? CblasLower : CblasUpper, in, al, A,
                        in, x, 1, be, y, 1);
        } else {
            TU_CALL(deso_dtrsv(o, du, t ? DESO_TRANS : DESO_NO_TRANS,
                               unit ? DESO_UNIT : DESO_NON_UNIT, n, dA, n,
                               dx[k], 1));
            cblas_dtrsv(cb_order(o), u ? CblasLower : CblasUpper,
                        t ? CblasTrans : CblasNoTrans,
                        unit ? CblasUnit : CblasNonUnit, in, A, in, x, 1);
        }
    }
    for (int k = 0; k < 10; k++) {
        tu_fetch(k < 2 ? dy[k] : dx[k], g);
        if (k < 2)
            TU_CHECK(tu_relerr(g, v + (2 * k + 1) * n, n) < 1e-12);
        else
            TU_CHECK(tu_relerr(g, v + 2 * k * n, n) < 1e-10);
        deso_vec_destroy(&dx[k]);
        deso_vec_destroy(&dy[k]);
    }
    deso_mat_destroy(&dA);
    free(A);
    free(v);
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
    TU_CALL(deso_mat_from_fn(ctx, m, n, ns_fn, &zero, &dW));
    TU_CALL(deso_mat_from_fn(ctx, m, m + 1, ns_fn, &zero, &dR));
    TU_CALL(deso_vec_create(ctx, m, &dm));
    TU_CALL(deso_vec_create(ctx, n, &dn));
    TU_CALL_ERR(deso_dgemv(DESO_ROW_MAJOR, DESO_NO_TRANS, m, n, 1.0, dW, n,
                           dn, 1, 0.0, dm, 1),
                DESO_ESIZE);
    TU_CHECK(says_row_major("arg 6"));
    TU_CALL_ERR(deso_dgemv(DESO_ROW_MAJOR, DESO_TRANS, m, n, 1.0, dW, n, dm, 1,
                           0.0, dn, 1),
                DESO_ESIZE);
    TU_CALL_ERR(deso_dger(DESO_ROW_MAJOR, m, n, 1.0, dm, 1, dn, 1, dW, n),
                DESO_ESIZE);
    TU_CHECK(says_row_major("arg 9"));
    /* ... and the other way round for a column-major call                 */
    TU_CALL_ERR(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, m, 1.0, dW, n,
                           dm, 1, 0.0, dn, 1),
                DESO_ESIZE);
    TU_CALL_ERR(deso_dsymv(DESO_ROW_MAJOR, DESO_UPPER, m, 1.0, dR, m, dm, 1,
                           0.0, dm, 1),
                DESO_ESIZE);
    TU_CHECK(says_row_major("arg 5"));
    TU_CALL_ERR(deso_dtrsv(DESO_ROW_MAJOR, DESO_LOWER, DESO_NO_TRANS,
                           DESO_NON_UNIT, m, dR, m, dm, 1),
                DESO_ESIZE);
    TU_CHECK(says_row_major("arg 6"));
    deso_mat_destroy(&dW);
    deso_mat_destroy(&dR);
    deso_vec_destroy(&dm);
    deso_vec_destroy(&dn);
}

static void test_layout(void **state)
{
    (void)state;
    const int64_t P = tu_size(), lo = P > 1 ? P - 1 : 1;
    const int64_t nbs[] = {2, DESO_NB_BLOCK};
    /* m != n, n = 1, n < P, n not a multiple of P; above P = 3 (more ranks
     * than this machine's cores make every collective slow) the awkward
     * ones only, and in the fast group one layout per case, in turn      */
    const int64_t shapes[][2] = {{7, 3},  {3, 11}, {2 * P + 1, lo},
                                 {1, 1},  {5, 1},  {1, 4}};
    const int64_t sizes[] = {lo, 2 * P + 1, 1, 5};
    const int nshapes = P > 3 ? 3 : 6, nsizes = P > 3 ? 2 : 4;
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 2, cases);
    for (int ci = 0; ci < nc; ci++) {
        deso_ctx *ctx = tu_case_ctx(&cases[ci]);
        for (int oi = 0; oi < 2; oi++) {
            /* (ci + ci / 2) % 2: each mode, and each block size, meets
             * both layouts on the 2x2 grid                                 */
            if (P > 3 && !tu_long() && oi != (ci + ci / 2) % 2) continue;
            deso_order o = oi ? DESO_ROW_MAJOR : DESO_COL_MAJOR;
            for (int si = 0; si < nshapes; si++) {
                tu_label("%s, %s %lld x %lld", tu_case_name(&cases[ci]),
                         oi ? "row-major" : "column-major",
                         (long long)shapes[si][0], (long long)shapes[si][1]);
                layout_gemv_ger(ctx, o, shapes[si][0], shapes[si][1],
                                31u + (uint64_t)(si * 4 + ci * 2 + oi));
            }
            for (int si = 0; si < nsizes; si++) {
                tu_label("%s, %s n %lld", tu_case_name(&cases[ci]),
                         oi ? "row-major" : "column-major",
                         (long long)sizes[si]);
                layout_symv_trsv(ctx, o, sizes[si],
                                 41u + (uint64_t)(si * 4 + ci * 2 + oi));
            }
        }
        tu_label("%s, sizes that do not fit", tu_case_name(&cases[ci]));
        layout_esize(ctx, 7, 3);
        layout_esize(ctx, 1, lo + 1);
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_gemv_ger), cmocka_unit_test(test_symv_trsv),
        cmocka_unit_test(test_layout))
