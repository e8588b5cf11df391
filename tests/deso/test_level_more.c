/* The rest of Level 1/2 and the element-wise and scalar helpers, through
 * deso against sequential OpenBLAS on random data: drot (double and lazy c,
 * s; c, s = (1, 0) and (0, 1)), drotm (each flag, and drotmg's param),
 * drotg and drotmg (host doubles), dtrmv (upper/lower x N/T x unit/non-
 * unit, column- and row-major), dsyr and dsyr2 (both triangles, both
 * orders, double and lazy alpha, alpha = 0 with an inf in x: A unchanged,
 * the other triangle never touched), dnrm2 on entries near the overflow
 * and underflow thresholds (1e200, 1e-200, 1e300, 1e-300, 1e-320, and
 * mixed: 1e200 with 1e-200, 1 with 1e-300, 1e147 with 1e146), fused with
 * ddot and dasum in one DAG; dvdiv, dvrecip, dvabs (against the same
 * IEEE operations in C, exactly, zeros and infs included) and deso_smax /
 * deso_smin (against fmax / fmin, NaN included); each function's failure
 * reaches the context's error handler.  Sizes n = 0, 1, 2, 3
 * (n < P), 7 and 26 (not divisible by P).  Every case in each optimiser
 * mode on default, 1-D and 2-D grids (2x2 at P = 4, 2x3 and 3x2 at
 * P = 6: the long group), modes and block sizes paired as tu_cases says;
 * each mode against OpenBLAS, never one mode against another.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>

#include "test_util.h"

static const int64_t SIZES[] = {0, 1, 2, 3, 7, 26};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

static double *dalloc(int64_t n)
{
    return malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
}

/* a and b agree exactly (NaNs agree with NaNs): element-wise IEEE
 * operations are correctly rounded, so the same operation gives the same
 * double on every rank and in C.                                         */
static int same(const double *a, const double *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) return 0;
    return 1;
}

/* ---- drot, drotm, drotg, drotmg ----------------------------------------- */

/* drotmg's param from random positive d1, d2 and random b1, b2, both the
 * deso and the CBLAS way; they must agree bit for bit.                   */
static void rotmg_param(tu_rng *rng, double param[5])
{
    double d1 = 1.0 + tu_rand(rng), d2 = 1.5 + tu_rand(rng);
    double b1 = tu_rand(rng), b2 = tu_rand(rng);
    double e1 = d1, e2 = d2, c1 = b1, q[5] = {0}, p[5] = {0};
    TU_CALL(deso_drotmg(&d1, &d2, &b1, b2, p));
    cblas_drotmg(&e1, &e2, &c1, b2, q);
    TU_CHECK(d1 == e1 && d2 == e2 && b1 == c1 && same(p, q, 5));
    memcpy(param, p, sizeof p);
}

static void rot_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double *x = dalloc(n), *y = dalloc(n);
    tu_fill(&rng, x, n);
    tu_fill(&rng, y, n);
    deso_vec *dx = tu_vec_of(ctx, n, x), *dy = tu_vec_of(ctx, n, y);
    int in = (int)n;
    double c = tu_rand(&rng), s = tu_rand(&rng);
    /* doubles, then the identity and the quarter turn                      */
    TU_CALL(deso_drot(n, dx, 1, dy, 1, c, s));
    TU_CALL(deso_drot(n, dx, 1, dy, 1, 1.0, 0.0));
    TU_CALL(deso_drot(n, dx, 1, dy, 1, 0.0, 1.0));
    cblas_drot(in, x, 1, y, 1, c, s);
    cblas_drot(in, x, 1, y, 1, 1.0, 0.0);
    cblas_drot(in, x, 1, y, 1, 0.0, 1.0);
    /* lazy c and s, computed from the rotated vectors without a force:
     * c = x.y / (x.x + 1), s = -0.5                                        */
    deso_scalar *sc, *sd, *ss;
    TU_CALL(deso_scalar_create(ctx, 0.0, &sc));
    TU_CALL(deso_scalar_create(ctx, 0.0, &sd));
    TU_CALL(deso_scalar_create(ctx, -0.5, &ss));
    TU_CALL(deso_ddot(n, dx, 1, dy, 1, sc));
    TU_CALL(deso_ddot(n, dx, 1, dx, 1, sd));
    TU_CALL(deso_sadd(sd, sd, 1.0));
    TU_CALL(deso_sdiv(sc, sc, sd));
    TU_CALL(deso_drot(n, dx, 1, dy, 1, sc, ss));
    double c2 = cblas_ddot(in, x, 1, y, 1) / (cblas_ddot(in, x, 1, x, 1) + 1.0);
    cblas_drot(in, x, 1, y, 1, c2, -0.5);
    /* drotm: every flag, explicit, then drotmg's                          */
    double P[5][5] = {{-1.0, 0, 0, 0, 0}, {0.0, 0, 0, 0, 0},
                      {1.0, 0, 0, 0, 0}, {-2.0, 0, 0, 0, 0}};
    for (int k = 0; k < 4; k++) tu_fill(&rng, &P[k][1], 4);
    rotmg_param(&rng, P[4]);
    for (int k = 0; k < 5; k++) {
        TU_CALL(deso_drotm(n, dx, 1, dy, 1, P[k]));
        cblas_drotm(in, x, 1, y, 1, P[k]);
    }
    /* a reduction reading both in the same DAG                             */
    TU_CALL(deso_ddot(n, dx, 1, dy, 1, sd));
    double xy = n > 0 ? cblas_ddot(in, x, 1, y, 1) : 0.0;
    TU_CHECK(tu_srel(tu_value(sd), xy) < 1e-12);
    tu_expect_vec(dx, x, n, 1e-12);
    tu_expect_vec(dy, y, n, 1e-12);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    deso_scalar_destroy(&sc);
    deso_scalar_destroy(&sd);
    deso_scalar_destroy(&ss);
    free(x);
    free(y);
}

/* drotg on the host: the same four numbers as cblas_drotg, including the
 * zero and sign cases.                                                    */
static void test_rotg(void **state)
{
    (void)state;
    const double ab[][2] = {{3.0, 4.0}, {-3.0, 4.0}, {4.0, -3.0}, {0.0, 0.0},
                            {0.0, 2.0}, {2.0, 0.0}, {1e200, 1e200},
                            {-1e-200, 3e-200}};
    tu_label("drotg");
    for (size_t k = 0; k < sizeof ab / sizeof ab[0]; k++) {
        double a = ab[k][0], b = ab[k][1], c = NAN, s = NAN;
        double a2 = a, b2 = b, c2 = NAN, s2 = NAN;
        TU_CALL(deso_drotg(&a, &b, &c, &s));
        cblas_drotg(&a2, &b2, &c2, &s2);
        TU_CHECK(a == a2 && b == b2 && c == c2 && s == s2);
    }
    tu_label("drotmg");
    tu_rng rng = {4242};
    for (int k = 0; k < 64; k++) {
        double p[5];
        rotmg_param(&rng, p);
    }
    TU_SYNC();
}

/* ---- dtrmv ------------------------------------------------------------- */

static void trmv_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double *A = dalloc(n * n), *x = dalloc(n);
    tu_fill(&rng, A, n * n);
    int in = (int)n, lda = in > 0 ? in : 1;
    deso_mat *dA;
    TU_CALL(deso_mat_from_array(ctx, n, n, A, lda, DESO_ALL_RANKS, &dA));
    for (int order = 0; order < 2; order++)
        for (int uplo = 0; uplo < 2; uplo++) {
            /* four calls chained on one vector: every trans x diag        */
            tu_fill(&rng, x, n);
            deso_vec *dx = tu_vec_of(ctx, n, x);
            for (int tr = 0; tr < 2; tr++)
                for (int unit = 0; unit < 2; unit++) {
                    TU_CALL(deso_dtrmv(order ? DESO_ROW_MAJOR : DESO_COL_MAJOR,
                                       uplo ? DESO_LOWER : DESO_UPPER,
                                       tr ? DESO_TRANS : DESO_NO_TRANS,
                                       unit ? DESO_UNIT : DESO_NON_UNIT, n,
                                       dA, lda, dx, 1));
                    if (n > 0)
                        cblas_dtrmv(order ? CblasRowMajor : CblasColMajor,
                                    uplo ? CblasLower : CblasUpper,
                                    tr ? CblasTrans : CblasNoTrans,
                                    unit ? CblasUnit : CblasNonUnit, in, A,
                                    lda, x, 1);
                }
            tu_expect_vec(dx, x, n, 1e-12);
            deso_vec_destroy(&dx);
        }
    deso_mat_destroy(&dA);
    free(A);
    free(x);
}

/* ---- dsyr, dsyr2 -------------------------------------------------------- */

static void syr_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double *A = dalloc(n * n), *x = dalloc(n), *y = dalloc(n);
    double *g = dalloc(n * n), *bad = dalloc(n);
    tu_fill(&rng, A, n * n);     /* not symmetric: the other triangle shows */
    int in = (int)n, lda = in > 0 ? in : 1;
    deso_mat *dA;
    TU_CALL(deso_mat_from_array(ctx, n, n, A, lda, DESO_ALL_RANKS, &dA));
    deso_scalar *sal;
    TU_CALL(deso_scalar_create(ctx, 0.0, &sal));
    for (int64_t i = 0; i < n; i++) bad[i] = i == n / 2 ? INFINITY : 1.0;
    deso_vec *dbad = tu_vec_of(ctx, n, bad);
    for (int order = 0; order < 2; order++)
        for (int uplo = 0; uplo < 2; uplo++) {
            deso_order o = order ? DESO_ROW_MAJOR : DESO_COL_MAJOR;
            deso_uplo u = uplo ? DESO_LOWER : DESO_UPPER;
            CBLAS_ORDER co = order ? CblasRowMajor : CblasColMajor;
            CBLAS_UPLO cu = uplo ? CblasLower : CblasUpper;
            tu_fill(&rng, x, n);
            tu_fill(&rng, y, n);
            double al = tu_rand(&rng), al2 = tu_rand(&rng);
            deso_vec *dx = tu_vec_of(ctx, n, x), *dy = tu_vec_of(ctx, n, y);
            TU_CALL(deso_sset(sal, al2));
            TU_CALL(deso_dsyr(o, u, n, al, dx, 1, dA, lda));
            TU_CALL(deso_dsyr2(o, u, n, sal, dx, 1, dy, 1, dA, lda));
            /* alpha = 0: A as it was, though x holds an inf              */
            TU_CALL(deso_dsyr(o, u, n, 0.0, dbad, 1, dA, lda));
            TU_CALL(deso_dsyr2(o, u, n, 0.0, dbad, 1, dx, 1, dA, lda));
            if (n > 0) {
                cblas_dsyr(co, cu, in, al, x, 1, A, lda);
                cblas_dsyr2(co, cu, in, al2, x, 1, y, 1, A, lda);
            }
            deso_vec_destroy(&dx);
            deso_vec_destroy(&dy);
        }
    TU_CALL(deso_mat_gather(dA, g, lda, DESO_ALL_RANKS));
    TU_CHECK(tu_relerr(g, A, n * n) < 1e-12);
    deso_vec_destroy(&dbad);
    deso_mat_destroy(&dA);
    deso_scalar_destroy(&sal);
    free(A);
    free(x);
    free(y);
    free(g);
    free(bad);
}

/* ---- dnrm2 near the thresholds ------------------------------------------ */

/* v[i] = scale(i) * u[i] for the pattern k: one scale, or two scales
 * alternating (mixed magnitudes on every rank).                           */
static void scaled(const double *u, int64_t n, int k, double *v)
{
    static const double one[] = {1.0, 1e200, 1e-200, 1e300, 1e-300, 1e-320};
    static const double two[][2] = {{1e200, 1e-200}, {1.0, 1e-300},
                                    {1e147, 1e146}};
    for (int64_t i = 0; i < n; i++)
        v[i] = (k < 6 ? one[k] : two[k - 6][i % 2]) * u[i];
}

/* The last pattern has entries on both sides of the big threshold (2^486,
 * about 2e146) that both count in the norm.                               */
#define NPATTERNS 9

static void nrm2_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double *u = dalloc(n), *v = dalloc(n);
    tu_fill(&rng, u, n);
    int in = (int)n;
    deso_vec *dv[NPATTERNS];
    deso_scalar *sn[NPATTERNS], *sdot, *sasum;
    double want[NPATTERNS];
    for (int k = 0; k < NPATTERNS; k++) {
        scaled(u, n, k, v);
        want[k] = n > 0 ? cblas_dnrm2(in, v, 1) : 0.0;
        dv[k] = tu_vec_of(ctx, n, v);
        TU_CALL(deso_scalar_create(ctx, 0.0, &sn[k]));
    }
    TU_CALL(deso_scalar_create(ctx, 0.0, &sdot));
    TU_CALL(deso_scalar_create(ctx, 0.0, &sasum));
    /* independent reductions in one DAG: the optimiser may fuse them     */
    TU_CALL(deso_ddot(n, dv[0], 1, dv[0], 1, sdot));
    for (int k = 0; k < NPATTERNS; k++) TU_CALL(deso_dnrm2(n, dv[k], 1, sn[k]));
    TU_CALL(deso_dasum(n, dv[0], 1, sasum));
    double dot = n > 0 ? cblas_ddot(in, u, 1, u, 1) : 0.0;
    double as = n > 0 ? cblas_dasum(in, u, 1) : 0.0;
    TU_CHECK(tu_srel(tu_value(sdot), dot) < 1e-12);
    TU_CHECK(tu_srel(tu_value(sasum), as) < 1e-12);
    for (int k = 0; k < NPATTERNS; k++) {
        double got = tu_value(sn[k]);
        /* where reference BLAS neither overflows nor underflows, neither
         * does deso (the last but two pattern's squares are subnormal)    */
        TU_CHECK(isfinite(got) && (n == 0 || got > 0.0));
        TU_CHECK(fabs(got - want[k]) <= 1e-13 * want[k]);
        deso_vec_destroy(&dv[k]);
        deso_scalar_destroy(&sn[k]);
    }
    deso_scalar_destroy(&sdot);
    deso_scalar_destroy(&sasum);
    free(u);
    free(v);
}

/* ---- element-wise and scalar helpers ------------------------------------ */

static void elem_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double *x = dalloc(n), *y = dalloc(n), *r = dalloc(n), *a = dalloc(n);
    tu_fill(&rng, x, n);
    tu_fill(&rng, y, n);
    if (n > 1) x[1] = 0.0;       /* y / 0 and 1 / 0: infinities            */
    if (n > 2) x[2] = -0.0;
    deso_vec *dx = tu_vec_of(ctx, n, x), *dy = tu_vec_of(ctx, n, y);
    deso_vec *dr = tu_vec_of(ctx, n, y), *da = tu_vec_of(ctx, n, x);
    TU_CALL(deso_dvdiv(n, dx, 1, dy, 1));      /* y <- y ./ x            */
    TU_CALL(deso_dvrecip(n, dx, 1, dr, 1));    /* r <- 1 ./ x            */
    TU_CALL(deso_dvabs(n, dy, 1, da, 1));      /* a <- |y ./ x|          */
    TU_CALL(deso_dvrecip(n, dr, 1, dr, 1));    /* in place: r <- x again */
    TU_CALL(deso_dvabs(n, dr, 1, dr, 1));      /* in place: r <- |x|     */
    for (int64_t i = 0; i < n; i++) {
        y[i] = y[i] / x[i];
        a[i] = fabs(y[i]);
        r[i] = fabs(1.0 / (1.0 / x[i]));
    }
    double *g = dalloc(n);
    tu_fetch(dy, g);
    TU_CHECK(same(g, y, n));
    tu_fetch(da, g);
    TU_CHECK(same(g, a, n));
    tu_fetch(dr, g);
    TU_CHECK(same(g, r, n));
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    deso_vec_destroy(&dr);
    deso_vec_destroy(&da);
    free(x);
    free(y);
    free(r);
    free(a);
    free(g);
}

/* smax / smin of lazy and double operands, NaN included, against C.     */
static void minmax_case(deso_ctx *ctx, uint64_t seed)
{
    tu_rng rng = {seed};
    double a = tu_rand(&rng), b = tu_rand(&rng);
    deso_scalar *sa, *sb, *o[6];
    TU_CALL(deso_scalar_create(ctx, a, &sa));
    TU_CALL(deso_scalar_create(ctx, b, &sb));
    for (int k = 0; k < 6; k++) TU_CALL(deso_scalar_create(ctx, 0.0, &o[k]));
    TU_CALL(deso_smax(o[0], sa, sb));
    TU_CALL(deso_smin(o[1], sa, sb));
    TU_CALL(deso_smax(o[2], sa, NAN));
    TU_CALL(deso_smin(o[3], sb, NAN));
    TU_CALL(deso_smax(o[4], o[0], -b));      /* chained on a lazy result  */
    TU_CALL(deso_smin(o[5], o[1], o[4]));
    double w0 = fmax(a, b), w1 = fmin(a, b), w4 = fmax(w0, -b);
    double want[6] = {w0, w1, a, b, w4, fmin(w1, w4)};
    for (int k = 0; k < 6; k++) {
        TU_CHECK(tu_value(o[k]) == want[k]);
        deso_scalar_destroy(&o[k]);
    }
    deso_scalar_destroy(&sa);
    deso_scalar_destroy(&sb);
}

/* ---- the walks ---------------------------------------------------------- */

typedef void (*case_fn)(deso_ctx *ctx, int64_t n, uint64_t seed);

/* Every case of tu_cases with block sizes 2, 3 and block folding, every
 * size of SIZES up to maxn.                                               */
static void walk(case_fn f, const char *what, int64_t maxn)
{
    const int64_t nbs[] = {2, 3, DESO_NB_BLOCK};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 3, cases);
    for (int ci = 0; ci < nc; ci++) {
        deso_ctx *ctx = tu_case_ctx(&cases[ci]);
        for (int si = 0; si < NSIZES; si++) {
            if (SIZES[si] > maxn) continue;
            tu_label("%s, %s, n %lld", what, tu_case_name(&cases[ci]),
                     (long long)SIZES[si]);
            f(ctx, SIZES[si], 101u + (uint64_t)(si * 31 + ci));
        }
        if (f == elem_case) minmax_case(ctx, 7u + (uint64_t)ci);
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
}

static void test_rot(void **state)
{
    (void)state;
    walk(rot_case, "drot/drotm", 26);
}

static void test_trmv(void **state)
{
    (void)state;
    walk(trmv_case, "dtrmv", 26);
}

static void test_syr(void **state)
{
    (void)state;
    walk(syr_case, "dsyr/dsyr2", 26);
}

static void test_nrm2(void **state)
{
    (void)state;
    walk(nrm2_case, "dnrm2", 26);
}

static void test_elem(void **state)
{
    (void)state;
    walk(elem_case, "dvdiv/dvrecip/dvabs/smax/smin", 26);
}

/* ---- the error handler -------------------------------------------------- */

static int handled;
static void count_errors(deso_ctx *ctx, deso_err err, const char *fn,
                         const char *msg, void *arg)
{
    (void)ctx;
    (void)msg;
    handled += err != DESO_OK && fn != NULL && strncmp(fn, "deso_", 5) == 0 &&
               arg == (void *)&handled;
}

/* Each function above reaches its context's handler once per failing
 * call (the generators reach no context: none).                          */
static void test_handler(void **state)
{
    (void)state;
    tu_label("error handler");
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    TU_OK(deso_set_error_handler(ctx, count_errors, &handled));
    deso_vec *x, *y;
    deso_mat *A;
    deso_scalar *s;
    TU_OK(deso_vec_create(ctx, 4, &x));
    TU_OK(deso_vec_create(ctx, 5, &y));
    TU_OK(deso_mat_create(ctx, 4, 4, &A));
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    double P[5] = {3.0, 0, 0, 0, 0}, a = 1.0, b = 1.0;
    handled = 0;
    TU_CALL_ERR(deso_drot(4, x, 1, y, 2, 0.6, 0.8), DESO_ESIZE);
    TU_CALL_ERR(deso_drotm(4, x, 1, x, 1, P), DESO_EINVAL);
    TU_CALL_ERR(deso_dvdiv(4, x, 1, y, 2), DESO_ESIZE);
    TU_CALL_ERR(deso_dvrecip(4, x, 2, x, 1), DESO_ESIZE);
    TU_CALL_ERR(deso_dvabs(5, x, 1, y, 1), DESO_ESIZE);
    TU_CALL_ERR(deso_smax(s, 1.0, (deso_scalar *)NULL), DESO_ENULL);
    TU_CALL_ERR(deso_smin(NULL, s, 1.0), DESO_ENULL);
    TU_CALL_ERR(deso_dtrmv(DESO_COL_MAJOR, DESO_UPPER, DESO_NO_TRANS,
                           (deso_diag)0, 4, A, 4, x, 1), DESO_EINVAL);
    TU_CALL_ERR(deso_dsyr(DESO_COL_MAJOR, DESO_LOWER, 4, 1.0, y, 2, A, 4),
                DESO_ESIZE);
    TU_CALL_ERR(deso_dsyr2(DESO_COL_MAJOR, DESO_LOWER, 4, 1.0, x, 1, y, 2, A,
                           4), DESO_ESIZE);
    TU_CHECK(handled == 10);
    TU_CALL_ERR(deso_drotg(&a, &b, NULL, NULL), DESO_ENULL);
    TU_CALL_ERR(deso_drotmg(&a, &b, NULL, 1.0, P), DESO_ENULL);
    TU_CHECK(handled == 10);
    deso_vec_destroy(&x);
    deso_vec_destroy(&y);
    deso_mat_destroy(&A);
    deso_scalar_destroy(&s);
    TU_CALL(deso_finalize(&ctx));
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_rotg), cmocka_unit_test(test_handler),
        cmocka_unit_test(test_rot),
        cmocka_unit_test(test_trmv), cmocka_unit_test(test_syr),
        cmocka_unit_test(test_nrm2), cmocka_unit_test(test_elem))
