/* Level 1 and scalar arithmetic through deso against sequential OpenBLAS,
 * on random data: sizes 1, primes, n < P, n not divisible by the block
 * size; block sizes 2, 3 and 64; default, 1-D and (at P = 6) 2x3 and 3x2
 * grids.  Identity: every result equals OpenBLAS's within 1e-12 relative.
 * deso-np: 1 2 3 4 6                                                      */
#include <cblas.h>

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
    TU_OK(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx));
    TU_OK(deso_vec_from_array(ctx, n, y, 0, &dy));
    TU_OK(deso_vec_create(ctx, n, &dz));
    deso_scalar *s1, *s2, *s3, *s4, *s5, *s6, *sa;
    TU_OK(deso_scalar_create(ctx, 0.0, &s1));
    TU_OK(deso_scalar_create(ctx, 0.0, &s2));
    TU_OK(deso_scalar_create(ctx, 0.0, &s3));
    TU_OK(deso_scalar_create(ctx, 0.0, &s4));
    TU_OK(deso_scalar_create(ctx, 0.0, &s5));
    TU_OK(deso_scalar_create(ctx, 0.0, &s6));
    TU_OK(deso_scalar_create(ctx, a, &sa));

    /* deso: one DAG                                                         */
    TU_OK(deso_ddot(n, dx, 1, dy, 1, s1));
    TU_OK(deso_dnrm2(n, dx, 1, s2));
    TU_OK(deso_dasum(n, dy, 1, s3));
    TU_OK(deso_idamax(n, dx, 1, s4));
    TU_OK(deso_dscal(n, sa, dx, 1));               /* lazy alpha            */
    TU_OK(deso_daxpy(n, b, dx, 1, dy, 1));
    TU_OK(deso_daxpby(n, c, dy, 1, s1, dx, 1));    /* lazy beta             */
    TU_OK(deso_dswap(n, dx, 1, dy, 1));
    TU_OK(deso_dcopy(n, dx, 1, dz, 1));
    TU_OK(deso_daxpy(n, -1.0, dy, 1, dz, 1));
    /* s5 = sqrt(|s1| + s3) * s2 / (s4 + 1) - (-a); s6 = s5 - s2 * a       */
    TU_OK(deso_smul(s5, s1, s1));
    TU_OK(deso_sadd(s5, s5, s3));
    TU_OK(deso_ssqrt(s5, s5));
    TU_OK(deso_smul(s5, s5, s2));
    TU_OK(deso_sadd(s6, s4, 1.0));
    TU_OK(deso_sdiv(s5, s5, s6));
    TU_OK(deso_sneg(s6, sa));
    TU_OK(deso_ssub(s5, s5, s6));
    TU_OK(deso_smul(s6, s2, sa));
    TU_OK(deso_ssub(s6, s5, s6));
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.pending > 0));

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

    assert_true(tu_all(tu_srel(tu_get(s1), r1) < TOL));
    assert_true(tu_all(tu_srel(tu_get(s2), r2) < TOL));
    assert_true(tu_all(tu_srel(tu_get(s3), r3) < TOL));
    assert_true(tu_all(tu_get(s4) == r4));
    assert_true(tu_all(tu_srel(tu_get(s5), r5) < TOL));
    assert_true(tu_all(tu_srel(tu_get(s6), r6) < TOL));
    tu_gather(dx, g);
    assert_true(tu_all(tu_relerr(g, x, n) < TOL));
    tu_gather(dy, g);
    assert_true(tu_all(tu_relerr(g, y, n) < TOL));
    tu_gather(dz, g);
    assert_true(tu_all(tu_relerr(g, z, n) < 1e-11));
    /* one element, and a gather to one root                                */
    double e;
    TU_OK(deso_vec_get(dy, n - 1, &e));
    assert_true(tu_all(tu_srel(e, y[n - 1]) < TOL));
    int root = tu_size() - 1, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    memset(g, 0, (size_t)n * sizeof *g);
    TU_OK(deso_vec_gather(dx, me == root ? g : NULL, root));
    assert_true(tu_all(me != root || tu_relerr(g, x, n) < TOL));

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
    int grids[4][2];
    int ng = tu_grids(grids);
    const int64_t sizes[] = {1, 2, 5, 13, 37, 101};
    const int64_t nbs[] = {2, 3, 64};
    for (int gi = 0; gi < ng; gi++)
        for (int bi = 0; bi < 3; bi++) {
            deso_ctx *ctx = tu_ctx(grids[gi][0], grids[gi][1], nbs[bi]);
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                one_case(ctx, sizes[si], 1000u * (uint64_t)si + (uint64_t)bi);
            TU_OK(deso_finalize(&ctx));
        }
}

/* Values made from generators, and dot products of vectors in different
 * orientations (a gemv result against a default vector).                  */
static double gen(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 / (double)(i + 1);
}

static void test_generator_and_orientation(void **state)
{
    (void)state;
    deso_ctx *ctx = tu_ctx(0, 0, 3);
    int64_t n = 29;
    deso_vec *x;
    TU_OK(deso_vec_from_fn(ctx, n, gen, NULL, &x));
    double g[29], want = 0.0;
    tu_gather(x, g);
    for (int i = 0; i < n; i++) {
        assert_true(tu_all(g[i] == 1.0 / (i + 1)));
        want += g[i] * g[i];
    }
    deso_scalar *s;
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    TU_OK(deso_ddot(n, x, 1, x, 1, s));
    assert_true(tu_all(tu_srel(tu_get(s), want) < TOL));
    deso_vec_destroy(&x);
    deso_scalar_destroy(&s);
    TU_OK(deso_finalize(&ctx));
}

TU_MAIN(cmocka_unit_test(test_level1_ops),
        cmocka_unit_test(test_generator_and_orientation))
