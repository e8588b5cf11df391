/* Strides and views, through deso against sequential OpenBLAS (whose
 * increments follow the reference BLAS: a negative one walks the array
 * from its end) on the same host arrays:
 *   - level 1 with increments 1, 2, -1 and -3 on x and y: dcopy, dswap,
 *     dscal, daxpy (alpha 0.75 and 0), daxpby, ddot, dnrm2, dasum,
 *     idamax, drot, drotm, and dvmul, dvdiv, dvabs against the same IEEE
 *     operation in C; every element of the arrays is compared, so the
 *     ones between the strided elements must be left as they were;
 *   - level 2 with increments 1, -2 and 3: dgemv (N and T, both orders,
 *     alpha 0, beta 0 with NaNs in y, beta 1 and 0.5), dger, dsymv,
 *     dtrmv, dtrsv, dsyr, dsyr2;
 *   - views: a vector view (offset, length, positive and negative stride)
 *     written by daxpy and read by ddot; a view seeing its parent's later
 *     version; a matrix basis V (n x (k+1)) whose columns are written by
 *     dcopy, dscal and daxpy through column views and read by dgemv T and
 *     N on the column range V(:, 0:j), as classical Gram-Schmidt does;
 *     dger through a column range;
 *   - the cost model prices what the views move: a flush of strided
 *     calls, column writes and a dgemv T on a column range moves exactly
 *     the bytes and messages the model of its plan counts, in each mode.
 * Sizes n = 0, 1, 2, 3 (n < P), 7 (not divisible by P); every case in
 * each optimiser mode on default, 1-D and 2-D grids (tu_cases); the fast
 * group takes one of the four increment variants per case and size, in
 * turn, the long group (P = 6) every one.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>

#include "model_check.h"

static const int64_t SIZES[] = {0, 1, 2, 3, 7};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
static const int INCS[] = {1, 2, -1, -3};

/* The array length n elements need at increment inc, plus one spare at
 * the end that no call may touch.                                        */
static int64_t span(int64_t n, int inc)
{
    return (n > 0 ? 1 + (n - 1) * (int64_t)abs(inc) : 0) + 1;
}

static double *dalloc(int64_t n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(double));
}

/* Element i of a strided call on array a: reference BLAS's index.       */
static double *at(double *a, int64_t n, int inc, int64_t i)
{
    return inc > 0 ? &a[i * inc] : &a[(n - 1 - i) * (int64_t)-inc];
}

/* ---- level 1 ------------------------------------------------------------- */

static void l1_case(deso_ctx *ctx, int64_t n, int incx, int incy,
                    uint64_t seed)
{
    tu_rng rng = {seed};
    int64_t lx = span(n, incx), ly = span(n, incy);
    double *x = dalloc(lx), *y = dalloc(ly);
    tu_fill(&rng, x, lx);
    tu_fill(&rng, y, ly);
    for (int64_t i = 0; i < ly; i++) y[i] += y[i] >= 0 ? 0.5 : -0.5;
    deso_vec *dx = tu_vec_of(ctx, lx, x), *dy = tu_vec_of(ctx, ly, y);
    int in = (int)n;
    deso_scalar *s[5];
    for (int k = 0; k < 5; k++) TU_CALL(deso_scalar_create(ctx, -9.0, &s[k]));
    /* the reductions first, on the data as created                       */
    TU_CALL(deso_ddot(n, dx, incx, dy, incy, s[0]));
    TU_CALL(deso_dnrm2(n, dx, incx, s[1]));
    TU_CALL(deso_dasum(n, dy, incy, s[2]));
    TU_CALL(deso_idamax(n, dx, incx, s[3]));
    double r0 = cblas_ddot(in, x, incx, y, incy), r1 = cblas_dnrm2(in, x, incx);
    double r2 = cblas_dasum(in, y, incy), r3 = (double)cblas_idamax(in, x, incx);
    /* reference BLAS's idamax counts in the call's order, from the end of
     * the array for a negative increment, as deso's does                 */
    TU_CALL(deso_daxpy(n, 0.75, dx, incx, dy, incy));
    cblas_daxpy(in, 0.75, x, incx, y, incy);
    TU_CALL(deso_daxpy(n, 0.0, dx, incx, dy, incy));
    cblas_daxpy(in, 0.0, x, incx, y, incy);
    TU_CALL(deso_daxpby(n, -1.5, dy, incy, 0.25, dx, incx));
    cblas_daxpby(in, -1.5, y, incy, 0.25, x, incx);
    TU_CALL(deso_dscal(n, 3.0, dx, incx));
    cblas_dscal(in, 3.0, x, incx);
    TU_CALL(deso_drot(n, dx, incx, dy, incy, 0.6, 0.8));
    cblas_drot(in, x, incx, y, incy, 0.6, 0.8);
    double P[5] = {-1.0, 0.5, -0.25, 2.0, 1.5};
    TU_CALL(deso_drotm(n, dx, incx, dy, incy, P));
    cblas_drotm(in, x, incx, y, incy, P);
    TU_CALL(deso_dswap(n, dx, incx, dy, incy));
    cblas_dswap(in, x, incx, y, incy);
    /* element-wise: y <- y .* x, then y <- y ./ x, then x <- |y|         */
    TU_CALL(deso_dvmul(n, dx, incx, dy, incy));
    TU_CALL(deso_dvdiv(n, dx, incx, dy, incy));
    TU_CALL(deso_dvabs(n, dy, incy, dx, incx));
    for (int64_t i = 0; i < n; i++) {
        double xi = *at(x, n, incx, i), *yi = at(y, n, incy, i);
        *yi = *yi * xi;
        *yi = *yi / xi;
        *at(x, n, incx, i) = fabs(*yi);
    }
    TU_CALL(deso_dcopy(n, dx, incx, dy, incy));
    cblas_dcopy(in, x, incx, y, incy);
    TU_CHECK(tu_srel(tu_value(s[0]), r0) < 1e-12);
    TU_CHECK(tu_srel(tu_value(s[1]), r1) < 1e-12);
    TU_CHECK(tu_srel(tu_value(s[2]), r2) < 1e-12);
    TU_CHECK(tu_value(s[3]) == r3);
    tu_expect_vec(dx, x, lx, 1e-12);
    tu_expect_vec(dy, y, ly, 1e-12);
    for (int k = 0; k < 5; k++) deso_scalar_destroy(&s[k]);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    free(x);
    free(y);
}

/* ---- level 2 ------------------------------------------------------------- */

static const int INCS2[] = {1, -2, 3};

static void gemv_cases(deso_ctx *ctx, int64_t n, int inc, tu_rng *rng)
{
    int64_t m = n + 2, lm = span(m, inc), ln = span(n, -inc);
    double *A = dalloc(m * n), *x = dalloc(lm), *y = dalloc(lm);
    double *z = dalloc(ln);
    tu_fill(rng, A, m * n);
    tu_fill(rng, x, lm);
    tu_fill(rng, y, lm);
    tu_fill(rng, z, ln);
    deso_mat *dA = NULL;
    TU_CALL(deso_mat_from_array(ctx, m, n, A, m, DESO_ALL_RANKS, &dA));
    deso_vec *dx = tu_vec_of(ctx, lm, x), *dy = tu_vec_of(ctx, lm, y);
    deso_vec *dz = tu_vec_of(ctx, ln, z);
    int im = (int)m, in = (int)n;
    /* z <- A^T x (beta 1), y <- A z (beta 0.5), then beta 0 with NaNs in
     * y (never read) and alpha 0 (y <- beta y); row-major: A^T's rows   */
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, m, n, 1.5, dA, m, dx, inc,
                       1.0, dz, -inc));
    cblas_dgemv(CblasColMajor, CblasTrans, im, in, 1.5, A, im, x, inc, 1.0, z,
                -inc);
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, -1.0, dA, m, dz,
                       -inc, 0.5, dy, inc));
    cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, -1.0, A, im, z, -inc,
                0.5, y, inc);
    TU_CALL(deso_dscal(n, NAN, dz, -inc));
    TU_CALL(deso_dgemv(DESO_ROW_MAJOR, DESO_NO_TRANS, n, m, 2.0, dA, m, dx,
                       inc, 0.0, dz, -inc));
    cblas_dgemv(CblasRowMajor, CblasNoTrans, in, im, 2.0, A, im, x, inc, 0.0,
                z, -inc);
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 0.0, dA, m, dz,
                       -inc, 0.5, dy, inc));
    cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, 0.0, A, im, z, -inc, 0.5,
                y, inc);
    /* dger: A += x z^T with strides                                        */
    TU_CALL(deso_dger(DESO_COL_MAJOR, m, n, 0.5, dx, inc, dz, -inc, dA, m));
    cblas_dger(CblasColMajor, im, in, 0.5, x, inc, z, -inc, A, im);
    tu_expect_vec(dy, y, lm, 1e-12);
    tu_expect_vec(dz, z, ln, 1e-12);
    double *g = dalloc(m * n);
    TU_CALL(deso_mat_gather(dA, g, m, DESO_ALL_RANKS));
    TU_CHECK(tu_relerr(g, A, m * n) < 1e-12);
    free(g);
    deso_mat_destroy(&dA);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    deso_vec_destroy(&dz);
    free(A);
    free(x);
    free(y);
    free(z);
}

/* Square: dsymv, dtrmv, dtrsv (a well-conditioned triangle), dsyr, dsyr2. */
static void square_cases(deso_ctx *ctx, int64_t n, int inc, tu_rng *rng)
{
    int64_t lx = span(n, inc), ly = span(n, -inc);
    double *A = dalloc(n * n), *x = dalloc(lx), *y = dalloc(ly);
    tu_fill(rng, A, n * n);
    for (int64_t i = 0; i < n; i++) A[i * n + i] += 4.0;
    tu_fill(rng, x, lx);
    tu_fill(rng, y, ly);
    deso_mat *dA = NULL;
    int in = (int)n, ld = n > 0 ? in : 1;
    TU_CALL(deso_mat_from_array(ctx, n, n, A, ld, DESO_ALL_RANKS, &dA));
    deso_vec *dx = tu_vec_of(ctx, lx, x), *dy = tu_vec_of(ctx, ly, y);
    TU_CALL(deso_dsymv(DESO_COL_MAJOR, DESO_LOWER, n, 1.25, dA, ld, dx, inc,
                       0.5, dy, -inc));
    cblas_dsymv(CblasColMajor, CblasLower, in, 1.25, A, ld, x, inc, 0.5, y,
                -inc);
    TU_CALL(deso_dtrmv(DESO_ROW_MAJOR, DESO_UPPER, DESO_TRANS, DESO_NON_UNIT,
                       n, dA, ld, dy, -inc));
    cblas_dtrmv(CblasRowMajor, CblasUpper, CblasTrans, CblasNonUnit, in, A,
                ld, y, -inc);
    TU_CALL(deso_dtrsv(DESO_COL_MAJOR, DESO_LOWER, DESO_NO_TRANS,
                       DESO_NON_UNIT, n, dA, ld, dx, inc));
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, in, A,
                ld, x, inc);
    tu_expect_vec(dx, x, lx, 1e-11);
    tu_expect_vec(dy, y, ly, 1e-11);
    TU_CALL(deso_dsyr(DESO_COL_MAJOR, DESO_UPPER, n, -0.5, dx, inc, dA, ld));
    cblas_dsyr(CblasColMajor, CblasUpper, in, -0.5, x, inc, A, ld);
    TU_CALL(deso_dsyr2(DESO_ROW_MAJOR, DESO_LOWER, n, 0.25, dx, inc, dy, -inc,
                       dA, ld));
    cblas_dsyr2(CblasRowMajor, CblasLower, in, 0.25, x, inc, y, -inc, A, ld);
    double *g = dalloc(n * n);
    TU_CALL(deso_mat_gather(dA, g, ld, DESO_ALL_RANKS));
    TU_CHECK(tu_relerr(g, A, n * n) < 1e-11);
    free(g);
    deso_mat_destroy(&dA);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    free(A);
    free(x);
    free(y);
}

/* ---- views --------------------------------------------------------------- */

/* A vector view at offset off, n elements, stride st (negative: walked
 * from off downwards), written and read; then the parent changed and the
 * view read again.                                                       */
static void vec_view_case(deso_ctx *ctx, int64_t n, int st, tu_rng *rng)
{
    int64_t off = st > 0 ? 1 : 1 + (n > 0 ? (n - 1) * -st : 0);
    int64_t len = span(n, st) + 1;
    double *x = dalloc(len), *w = dalloc(n);
    tu_fill(rng, x, len);
    tu_fill(rng, w, n);
    deso_vec *dx = tu_vec_of(ctx, len, x), *dw = tu_vec_of(ctx, n, w), *v = NULL;
    TU_CALL(deso_vec_view(dx, off, n, st, &v));
    deso_scalar *s = NULL;
    TU_CALL(deso_scalar_create(ctx, 0.0, &s));
    /* v <- 2 w + v, then s = v . w                                          */
    TU_CALL(deso_daxpy(n, 2.0, dw, 1, v, 1));
    for (int64_t i = 0; i < n; i++) x[off + i * st] += 2.0 * w[i];
    TU_CALL(deso_ddot(n, v, 1, dw, 1, s));
    double want = 0.0;
    for (int64_t i = 0; i < n; i++) want += x[off + i * st] * w[i];
    TU_CHECK(tu_srel(tu_value(s), want) < 1e-12);
    tu_expect_vec(dx, x, len, 1e-12);
    /* the parent scaled as a whole: the view sees the new version        */
    TU_CALL(deso_dscal(len, -0.5, dx, 1));
    for (int64_t i = 0; i < len; i++) x[i] *= -0.5;
    double *vw = dalloc(n);
    for (int64_t i = 0; i < n; i++) vw[i] = x[off + i * st];
    tu_expect_vec(v, vw, n, 1e-12);
    /* strided calls on a view: every other element of it, updated from
     * w read backwards; dscal with a negative increment changes nothing
     * (reference BLAS)                                                    */
    int64_t h = (n + 1) / 2;
    TU_CALL(deso_daxpy(h, 4.0, dw, -2, v, 2));
    for (int64_t i = 0; i < h; i++)
        x[off + 2 * i * st] += 4.0 * w[(h - 1 - i) * 2];
    TU_CALL(deso_dscal(h, 4.0, v, -2));
    tu_expect_vec(dx, x, len, 1e-12);
    deso_vec_destroy(&v);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dw);
    deso_scalar_destroy(&s);
    free(x);
    free(w);
    free(vw);
}

/* Classical Gram-Schmidt on a matrix basis V (n x (k + 1), column-major
 * on the host): column 0 is b / ||b||; for j = 1 .. k, w = A v_{j-1},
 * h = V(:, 0:j-1)^T w (one dgemv T), w -= V(:, 0:j-1) h (one dgemv N),
 * v_j = w / ||w||.  The basis and the last h against the same on the host
 * with CBLAS.                                                             */
static void basis_case(deso_ctx *ctx, int64_t n, tu_rng *rng)
{
    if (n < 2) return;
    int64_t k = n < 4 ? n - 1 : 3;
    double *A = dalloc(n * n), *b = dalloc(n), *V = dalloc(n * (k + 1));
    double *w = dalloc(n), *h = calloc((size_t)(k + 1), sizeof(double));
    tu_fill(rng, A, n * n);
    for (int64_t i = 0; i < n; i++) A[i * n + i] += 3.0;
    tu_fill(rng, b, n);
    deso_mat *dA = NULL, *dV = NULL;
    TU_CALL(deso_mat_from_array(ctx, n, n, A, n, DESO_ALL_RANKS, &dA));
    TU_CALL(deso_mat_create(ctx, n, k + 1, &dV));
    deso_vec *db = tu_vec_of(ctx, n, b), *dw = NULL, *dh = NULL, *col = NULL;
    TU_CALL(deso_vec_create(ctx, n, &dw));
    TU_CALL(deso_vec_create(ctx, k + 1, &dh));
    deso_scalar *nrm = NULL, *inv = NULL;
    TU_CALL(deso_scalar_create(ctx, 0.0, &nrm));
    TU_CALL(deso_scalar_create(ctx, 0.0, &inv));
    int in = (int)n;
    TU_CALL(deso_mat_col(dV, 0, &col));
    TU_CALL(deso_dcopy(n, db, 1, col, 1));
    TU_CALL(deso_dnrm2(n, col, 1, nrm));
    TU_CALL(deso_sdiv(inv, 1.0, nrm));
    TU_CALL(deso_dscal(n, inv, col, 1));
    TU_CALL(deso_vec_destroy(&col));
    double beta = cblas_dnrm2(in, b, 1);
    for (int64_t i = 0; i < n; i++) V[i] = b[i] / beta;
    for (int64_t j = 1; j <= k; j++) {
        deso_mat *Vj = NULL;
        TU_CALL(deso_mat_cols(dV, 0, j, &Vj));
        TU_CALL(deso_mat_col(dV, j - 1, &col));
        TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, dA, n,
                           col, 1, 0.0, dw, 1));
        TU_CALL(deso_vec_destroy(&col));
        deso_vec *hj = NULL;
        TU_CALL(deso_vec_view(dh, 0, j, 1, &hj));
        TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, n, j, 1.0, Vj, n, dw,
                           1, 0.0, hj, 1));
        TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, j, -1.0, Vj, n,
                           hj, 1, 1.0, dw, 1));
        TU_CALL(deso_mat_col(dV, j, &col));
        TU_CALL(deso_dnrm2(n, dw, 1, nrm));
        TU_CALL(deso_sdiv(inv, 1.0, nrm));
        TU_CALL(deso_dcopy(n, dw, 1, col, 1));
        TU_CALL(deso_dscal(n, inv, col, 1));
        TU_CALL(deso_vec_destroy(&col));
        TU_CALL(deso_vec_destroy(&hj));
        TU_CALL(deso_mat_destroy(&Vj));
        int ij = (int)j;
        cblas_dgemv(CblasColMajor, CblasNoTrans, in, in, 1.0, A, in,
                    &V[(j - 1) * n], 1, 0.0, w, 1);
        cblas_dgemv(CblasColMajor, CblasTrans, in, ij, 1.0, V, in, w, 1, 0.0,
                    h, 1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, in, ij, -1.0, V, in, h, 1,
                    1.0, w, 1);
        double wn = cblas_dnrm2(in, w, 1);
        for (int64_t i = 0; i < n; i++) V[j * n + i] = w[i] / wn;
    }
    /* a rank-1 update through a column range: V(:, 1:k) += b h^T         */
    deso_mat *Vr = NULL;
    deso_vec *hk = NULL;
    TU_CALL(deso_mat_cols(dV, 1, k, &Vr));
    TU_CALL(deso_vec_view(dh, 0, k, 1, &hk));
    TU_CALL(deso_dger(DESO_COL_MAJOR, n, k, 0.5, db, 1, hk, 1, Vr, n));
    cblas_dger(CblasColMajor, in, (int)k, 0.5, b, 1, h, 1, &V[n], in);
    double *g = dalloc(n * (k + 1));
    TU_CALL(deso_mat_gather(dV, g, n, DESO_ALL_RANKS));
    TU_CHECK(tu_relerr(g, V, n * (k + 1)) < 1e-10);
    free(g);
    TU_CALL(deso_mat_destroy(&Vr));
    TU_CALL(deso_vec_destroy(&hk));
    deso_mat_destroy(&dA);
    deso_mat_destroy(&dV);
    deso_vec_destroy(&db);
    deso_vec_destroy(&dw);
    deso_vec_destroy(&dh);
    deso_scalar_destroy(&nrm);
    deso_scalar_destroy(&inv);
    free(A);
    free(b);
    free(V);
    free(w);
    free(h);
}

/* ---- the model ----------------------------------------------------------- */

/* Every flush moves exactly what the model of its plan says, plus the
 * force's SPMD check (one 16-byte all-reduce): vget and vput nodes are
 * priced by the exchange they make.                                      */
static void test_model(void **state)
{
    (void)state;
    const int64_t n = 13, k = 3;
    for (int md = 0; md < TU_NMODES; md++) {
        tu_label("model, mode %s", deso_mode_name(tu_mode(md)));
        deso_ctx *ctx = tu_ctx_mode(tu_mode(md), 0, 0, 2);
        deso_vec *x, *y, *w, *h, *col;
        deso_mat *V, *Vk;
        TU_CALL(deso_vec_create(ctx, n, &x));
        TU_CALL(deso_vec_create(ctx, n, &y));
        TU_CALL(deso_vec_create(ctx, n, &w));
        TU_CALL(deso_vec_create(ctx, k, &h));
        TU_CALL(deso_mat_create(ctx, n, k, &V));
        TU_CALL(deso_flush(ctx));
        for (int it = 0; it < 3; it++) {
            TU_CALL(deso_daxpy(7, 1.5, x, -2, y, 2));
            TU_CALL(deso_dscal(4, 0.5, y, 3));
            for (int64_t j = 0; j < k; j++) {
                TU_CALL(deso_mat_col(V, j, &col));
                TU_CALL(deso_daxpy(n, 1.0 + (double)j, y, 1, col, 1));
                TU_CALL(deso_vec_destroy(&col));
            }
            TU_CALL(deso_mat_cols(V, 0, k, &Vk));
            TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, n, k, 1.0, Vk, n,
                               w, 1, 0.0, h, 1));
            TU_CALL(deso_mat_destroy(&Vk));
            tu_flush_as_modelled(ctx, tu_mode(md), it);
        }
        deso_vec_destroy(&x);
        deso_vec_destroy(&y);
        deso_vec_destroy(&w);
        deso_vec_destroy(&h);
        deso_mat_destroy(&V);
        TU_CALL(deso_finalize(&ctx));
    }
    TU_SYNC();
}

/* ---- the walks ----------------------------------------------------------- */

static void l1_walk(deso_ctx *ctx, int64_t n, int k, uint64_t seed)
{
    l1_case(ctx, n, INCS[k], INCS[(k + 1) % 4], seed);
}

static void l2_walk(deso_ctx *ctx, int64_t n, int k, uint64_t seed)
{
    if (k == 3) return;
    tu_rng rng = {seed};
    gemv_cases(ctx, n, INCS2[k], &rng);
    square_cases(ctx, n, INCS2[k], &rng);
}

static void view_walk(deso_ctx *ctx, int64_t n, int k, uint64_t seed)
{
    tu_rng rng = {seed};
    vec_view_case(ctx, n, INCS[k], &rng);
    if (k == 0) basis_case(ctx, n, &rng);
}

static void test_level1(void **state)
{
    (void)state;
    tu_walk(SIZES, NSIZES, 4, 101u, l1_walk, "strided level 1");
}

static void test_level2(void **state)
{
    (void)state;
    tu_walk(SIZES, NSIZES, 4, 101u, l2_walk, "strided level 2");
}

static void test_views(void **state)
{
    (void)state;
    tu_walk(SIZES, NSIZES, 4, 101u, view_walk, "views");
}

TU_MAIN(cmocka_unit_test(test_level1), cmocka_unit_test(test_level2),
        cmocka_unit_test(test_views), cmocka_unit_test(test_model))
