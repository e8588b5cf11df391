/* Level 1 and scalar arithmetic through deso against sequential OpenBLAS,
 * on random data, in each optimiser mode (none, affine, full), each mode
 * against OpenBLAS: sizes 1, primes, n < P, n not divisible by the block
 * size; block sizes 2, 3 and 64; default, 1-D and 2-D grids (2x2 at P = 4;
 * 2x3 and 3x2 at P = 6, the long group), modes and block sizes paired as
 * tu_cases says.  Dot products of vectors in different orientations: gemv
 * results against a vector of the default orientation.
 * Identity: every result equals OpenBLAS's within 1e-12 relative.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>
#include <math.h>

#include "test_util.h"

#define TOL 1e-12

static void one_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double *z = malloc((size_t)n * sizeof *z), *g = malloc((size_t)n * sizeof *g);
    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(z);
    assert_non_null(g);
    tu_fill(&rng, x, n);
    tu_fill(&rng, y, n);
    double a = tu_rand(&rng), b = tu_rand(&rng), c = tu_rand(&rng);

    deso_vec *dx, *dy, *dz;
    TU_CALL(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx));
    TU_CALL(deso_vec_from_array(ctx, n, y, 0, &dy));
    TU_CALL(deso_vec_create(ctx, n, &dz));
    deso_scalar *s1, *s2, *s3, *s4, *s5, *s6, *sa;
    TU_CALL(deso_scalar_create(ctx, 0.0, &s1));
    TU_CALL(deso_scalar_create(ctx, 0.0, &s2));
    TU_CALL(deso_scalar_create(ctx, 0.0, &s3));
    TU_CALL(deso_scalar_create(ctx, 0.0, &s4));
    TU_CALL(deso_scalar_create(ctx, 0.0, &s5));
    TU_CALL(deso_scalar_create(ctx, 0.0, &s6));
    TU_CALL(deso_scalar_create(ctx, a, &sa));

    /* deso: one DAG                                                         */
    TU_CALL(deso_ddot(n, dx, 1, dy, 1, s1));
    TU_CALL(deso_dnrm2(n, dx, 1, s2));
    TU_CALL(deso_dasum(n, dy, 1, s3));
    TU_CALL(deso_idamax(n, dx, 1, s4));
    TU_CALL(deso_dscal(n, sa, dx, 1));               /* lazy alpha           */
    TU_CALL(deso_daxpy(n, b, dx, 1, dy, 1));
    TU_CALL(deso_daxpby(n, c, dy, 1, s1, dx, 1));    /* lazy beta            */
    TU_CALL(deso_dswap(n, dx, 1, dy, 1));
    TU_CALL(deso_dcopy(n, dx, 1, dz, 1));
    TU_CALL(deso_daxpy(n, -1.0, dy, 1, dz, 1));
    /* s5 = sqrt(|s1| + s3) * s2 / (s4 + 1) - (-a); s6 = s5 - s2 * a       */
    TU_CALL(deso_smul(s5, s1, s1));
    TU_CALL(deso_sadd(s5, s5, s3));
    TU_CALL(deso_ssqrt(s5, s5));
    TU_CALL(deso_smul(s5, s5, s2));
    TU_CALL(deso_sadd(s6, s4, 1.0));
    TU_CALL(deso_sdiv(s5, s5, s6));
    TU_CALL(deso_sneg(s6, sa));
    TU_CALL(deso_ssub(s5, s5, s6));
    TU_CALL(deso_smul(s6, s2, sa));
    TU_CALL(deso_ssub(s6, s5, s6));
    deso_info info;
    TU_CALL(deso_get_info(ctx, &info));
    TU_CHECK(info.pending > 0);

    /* sequential OpenBLAS                                                   */
    int in = (int)n;
    double r1 = cblas_ddot(in, x, 1, y, 1), r2 = cblas_dnrm2(in, x, 1);
    double r3 = cblas_dasum(in, y, 1), r4 = (double)cblas_idamax(in, x, 1);
    cblas_dscal(in, a, x, 1);
    cblas_daxpy(in, b, x, 1, y, 1);
    for (int i = 0; i < in; i++) x[i] = c * y[i] + r1 * x[i];
    cblas_dswap(in, x, 1, y, 1);
    cblas_dcopy(in, x, 1, z, 1);
    cblas_daxpy(in, -1.0, y, 1, z, 1);
    double r5 = sqrt(r1 * r1 + r3) * r2 / (r4 + 1.0) + a;
    double r6 = r5 - r2 * a;

    TU_CHECK(tu_srel(tu_value(s1), r1) < TOL);
    TU_CHECK(tu_srel(tu_value(s2), r2) < TOL);
    TU_CHECK(tu_srel(tu_value(s3), r3) < TOL);
    TU_CHECK(tu_value(s4) == r4);
    TU_CHECK(tu_srel(tu_value(s5), r5) < TOL);
    TU_CHECK(tu_srel(tu_value(s6), r6) < TOL);
    tu_fetch(dx, g);
    TU_CHECK(tu_relerr(g, x, n) < TOL);
    tu_fetch(dy, g);
    TU_CHECK(tu_relerr(g, y, n) < TOL);
    tu_fetch(dz, g);
    TU_CHECK(tu_relerr(g, z, n) < 1e-11);
    /* one element, and a gather to one root                                */
    double e;
    TU_CALL(deso_vec_get(dy, n - 1, &e));
    TU_CHECK(tu_srel(e, y[n - 1]) < TOL);
    int root = tu_size() - 1, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    memset(g, 0, (size_t)n * sizeof *g);
    TU_CALL(deso_vec_gather(dx, me == root ? g : NULL, root));
    TU_CHECK(me != root || tu_relerr(g, x, n) < TOL);

    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    deso_vec_destroy(&dz);
    deso_scalar_destroy(&s1);
    deso_scalar_destroy(&s2);
    deso_scalar_destroy(&s3);
    deso_scalar_destroy(&s4);
    deso_scalar_destroy(&s5);
    deso_scalar_destroy(&s6);
    deso_scalar_destroy(&sa);
    free(x);
    free(y);
    free(z);
    free(g);
}

static void test_level1_ops(void **state)
{
    (void)state;
    const int64_t sizes[] = {1, 2, 5, 13, 37, 101};
    const int64_t nbs[] = {2, 3, 64};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 3, cases);
    for (int ci = 0; ci < nc; ci++) {
        deso_ctx *ctx = tu_case_ctx(&cases[ci]);
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            tu_label("%s, n %lld", tu_case_name(&cases[ci]),
                     (long long)sizes[si]);
            one_case(ctx, sizes[si], 1000u * (uint64_t)si + (uint64_t)ci);
        }
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
}

/* ---- orientations ----------------------------------------------------------
 * A gemv result y = A x lives along the grid's other dimension (folded
 * over grid rows with A's row blocks, mode none's placement); z = A^T y
 * lives along the same dimension as a vector made by deso_vec_from_fn.
 * Dot products of x (from a generator, default orientation) with y, of y
 * with x (the first operand's placement leads), and of y with z need one
 * of the two moved to the other's orientation; x <- x + y then mixes them
 * in an update.  Each against CBLAS.                                      */
static double gen(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 / (double)(i + 1);
}

/* Nonsymmetric, so that A and A^T differ.                                */
static double gen_mat(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return (double)((i * 7 + j * 3) % 11) / 11.0 - 0.5 + (i == j ? 1.0 : 0.0);
}

static void orientation_case(deso_ctx *ctx, int64_t n)
{
    double *A = malloc((size_t)(n * n) * sizeof *A);
    double *x = malloc((size_t)(4 * n) * sizeof *x);
    double *y = x + n, *z = x + 2 * n, *g = x + 3 * n;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) A[j * n + i] = gen_mat(i, j, NULL);
    deso_mat *dA;
    deso_vec *dx, *dy, *dz;
    deso_scalar *s[5];
    TU_CALL(deso_mat_from_fn(ctx, n, n, gen_mat, NULL, &dA));
    TU_CALL(deso_vec_from_fn(ctx, n, gen, NULL, &dx));
    TU_CALL(deso_vec_create(ctx, n, &dy));
    TU_CALL(deso_vec_create(ctx, n, &dz));
    for (int k = 0; k < 5; k++) TU_CALL(deso_scalar_create(ctx, 0.0, &s[k]));
    /* the generator's values, exactly                                      */
    tu_fetch(dx, g);
    for (int64_t i = 0; i < n; i++) {
        x[i] = gen(i, NULL);
        TU_CHECK(g[i] == x[i]);
    }
    const deso_order C = DESO_COL_MAJOR;
    TU_CALL(deso_dgemv(C, DESO_NO_TRANS, n, n, 1.0, dA, n, dx, 1, 0.0, dy, 1));
    TU_CALL(deso_dgemv(C, DESO_TRANS, n, n, 1.0, dA, n, dy, 1, 0.0, dz, 1));
    TU_CALL(deso_ddot(n, dx, 1, dx, 1, s[0]));
    TU_CALL(deso_ddot(n, dx, 1, dy, 1, s[1]));
    TU_CALL(deso_ddot(n, dy, 1, dx, 1, s[2]));
    TU_CALL(deso_ddot(n, dy, 1, dz, 1, s[3]));
    TU_CALL(deso_daxpy(n, 1.0, dy, 1, dx, 1));
    TU_CALL(deso_ddot(n, dx, 1, dy, 1, s[4]));

    int in = (int)n;
    double r[5];
    cblas_dgemv(CblasColMajor, CblasNoTrans, in, in, 1.0, A, in, x, 1, 0.0, y,
                1);
    cblas_dgemv(CblasColMajor, CblasTrans, in, in, 1.0, A, in, y, 1, 0.0, z,
                1);
    r[0] = cblas_ddot(in, x, 1, x, 1);
    r[1] = cblas_ddot(in, x, 1, y, 1);
    r[2] = r[1];
    r[3] = cblas_ddot(in, y, 1, z, 1);
    cblas_daxpy(in, 1.0, y, 1, x, 1);
    r[4] = cblas_ddot(in, x, 1, y, 1);
    for (int k = 0; k < 5; k++) {
        double v = tu_value(s[k]);
        if (tu_srel(v, r[k]) >= TOL)
            print_error("dot %d: %.17g, CBLAS %.17g\n", k, v, r[k]);
        TU_CHECK(tu_srel(v, r[k]) < TOL);
    }
    tu_fetch(dx, g);
    TU_CHECK(tu_relerr(g, x, n) < TOL);
    tu_fetch(dz, g);
    TU_CHECK(tu_relerr(g, z, n) < TOL);
    deso_mat_destroy(&dA);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    deso_vec_destroy(&dz);
    for (int k = 0; k < 5; k++) deso_scalar_destroy(&s[k]);
    free(A);
    free(x);
}

static void test_orientation(void **state)
{
    (void)state;
    const int64_t P = tu_size();
    /* n = 1, n < P, n a prime above the blocks                             */
    const int64_t sizes[] = {1, P > 1 ? P - 1 : 2, 29};
    const int64_t nbs[] = {3, DESO_NB_BLOCK};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 2, cases);
    for (int ci = 0; ci < nc; ci++) {
        deso_ctx *ctx = tu_case_ctx(&cases[ci]);
        for (int si = 0; si < 3; si++) {
            tu_label("%s, n %lld", tu_case_name(&cases[ci]),
                     (long long)sizes[si]);
            orientation_case(ctx, sizes[si]);
        }
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
}

/* Constant scalars: a context keeps the ones calls were given, and a DAG
 * here holds more distinct ones than it keeps, so some are replaced while
 * nodes that read them are still pending; the same constants come back in
 * a second pass (kept ones reused): y <- a_k x + y and y <- b_k y for 40
 * distinct a_k, b_k, twice, against the same loop in plain C.  And -0.0
 * must stay apart from 0.0.                                              */
static void test_constants(void **state)
{
    (void)state;
    const int64_t n = 7;
    tu_case cases[TU_MAX_CASES];
    const int64_t nbs[] = {2};
    int nc = tu_cases(nbs, 1, cases);
    for (int ci = 0; ci < nc; ci++) {
        deso_ctx *ctx = tu_case_ctx(&cases[ci]);
        tu_label("%s", tu_case_name(&cases[ci]));
        double x[7], y[7], got[7];
        for (int64_t i = 0; i < n; i++) {
            x[i] = 1.0 + (double)i;
            y[i] = 0.5 * (double)i - 1.0;
        }
        deso_vec *dx, *dy;
        TU_CALL(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx));
        TU_CALL(deso_vec_from_array(ctx, n, y, DESO_ALL_RANKS, &dy));
        for (int pass = 0; pass < 2; pass++)
            for (int k = 0; k < 40; k++) {
                double a = 0.25 + 0.01 * (double)k, b = 1.0 - 0.005 * (double)k;
                TU_CALL(deso_daxpy(n, a, dx, 1, dy, 1));
                TU_CALL(deso_dscal(n, b, dy, 1));
                cblas_daxpy((int)n, a, x, 1, y, 1);
                cblas_dscal((int)n, b, y, 1);
            }
        TU_CALL(deso_vec_gather(dy, got, DESO_ALL_RANKS));
        for (int64_t i = 0; i < n; i++)
            assert_true(got[i] == y[i]);
        /* 1 / 0.0 and then 1 / -0.0: infinities of opposite signs, unless
         * the second call got the first one's constant                    */
        deso_scalar *pos, *neg;
        TU_CALL(deso_scalar_create(ctx, 0.0, &pos));
        TU_CALL(deso_scalar_create(ctx, 0.0, &neg));
        TU_CALL(deso_sdiv(pos, 1.0, 0.0));
        TU_CALL(deso_sdiv(neg, 1.0, -0.0));
        double vp, vn;
        TU_CALL(deso_scalar_get(pos, &vp));
        TU_CALL(deso_scalar_get(neg, &vn));
        assert_true(isinf(vp) && vp > 0.0);
        assert_true(isinf(vn) && vn < 0.0);
        TU_CALL(deso_scalar_destroy(&pos));
        TU_CALL(deso_scalar_destroy(&neg));
        TU_CALL(deso_vec_destroy(&dx));
        TU_CALL(deso_vec_destroy(&dy));
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_level1_ops), cmocka_unit_test(test_orientation),
        cmocka_unit_test(test_constants))
