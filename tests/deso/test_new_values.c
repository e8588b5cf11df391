/* Values made for the caller: deso_vec_duplicate (x's length and context,
 * zero-filled whatever x holds, x itself unchanged, usable like any
 * vector), and deso_ddot_new, deso_dnrm2_new, deso_dasum_new and
 * deso_idamax_new against OpenBLAS (1e-12 relative; idamax exact), on
 * lengths 0, 1, a prime and one not divisible by the block size, with x
 * pending (an update recorded and not yet run) and in each optimiser
 * mode; each result is a new scalar, distinct from every other, usable as
 * a lazy argument and destroyed with deso_scalar_destroy.
 * deso-np: 1 2 3 4                                                        */
#include <cblas.h>

#include "test_util.h"

#define TOL 1e-12

static void one_case(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    double x[40], y[40], g[40];
    tu_fill(&rng, x, n);
    tu_fill(&rng, y, n);
    deso_vec *dx, *dy, *dz;
    TU_CALL(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx));
    TU_CALL(deso_vec_from_array(ctx, n, y, DESO_ALL_RANKS, &dy));
    /* x pending: x <- 2 x, recorded only                                  */
    TU_CALL(deso_dscal(n, 2.0, dx, 1));
    cblas_dscal((int)n, 2.0, x, 1);
    TU_CALL(deso_vec_duplicate(dx, &dz));
    int64_t len = -1;
    TU_CALL(deso_vec_length(dz, &len));
    TU_CHECK(len == n);
    deso_scalar *dot, *nrm, *asum, *imax, *z2;
    TU_CALL(deso_ddot_new(n, dx, 1, dy, 1, &dot));
    TU_CALL(deso_dnrm2_new(n, dx, 1, &nrm));
    TU_CALL(deso_dasum_new(n, dx, 1, &asum));
    TU_CALL(deso_idamax_new(n, dx, 1, &imax));
    TU_CALL(deso_dnrm2_new(n, dz, 1, &z2));
    TU_CHECK(dot != nrm && nrm != asum && asum != imax && imax != z2);
    TU_CHECK(tu_srel(tu_value(dot), cblas_ddot((int)n, x, 1, y, 1)) < TOL);
    TU_CHECK(tu_srel(tu_value(nrm), cblas_dnrm2((int)n, x, 1)) < TOL);
    TU_CHECK(tu_srel(tu_value(asum), cblas_dasum((int)n, x, 1)) < TOL);
    double want_i = n > 0 ? (double)cblas_idamax((int)n, x, 1) : 0.0;
    TU_CHECK(tu_value(imax) == want_i);
    TU_CHECK(tu_value(z2) == 0.0);
    /* the duplicate is a vector like any: y <- dot x + z, lazily          */
    TU_CALL(deso_daxpy(n, dot, dx, 1, dz, 1));
    double want[40], d = cblas_ddot((int)n, x, 1, y, 1);
    for (int64_t i = 0; i < n; i++) want[i] = d * x[i];
    if (n > 0) {
        tu_fetch(dz, g);
        TU_CHECK(tu_relerr(g, want, n) < TOL);
        tu_fetch(dx, g);
        TU_CHECK(tu_relerr(g, x, n) == 0.0);
    }
    TU_CALL(deso_scalar_destroy(&dot));
    TU_CALL(deso_scalar_destroy(&nrm));
    TU_CALL(deso_scalar_destroy(&asum));
    TU_CALL(deso_scalar_destroy(&imax));
    TU_CALL(deso_scalar_destroy(&z2));
    TU_CALL(deso_vec_destroy(&dx));
    TU_CALL(deso_vec_destroy(&dy));
    TU_CALL(deso_vec_destroy(&dz));
}

static void test_new_values(void **state)
{
    (void)state;
    static const int64_t sizes[] = {0, 1, 13, 37};
    for (int k = 0; k < TU_NMODES; k++) {
        deso_ctx *ctx = tu_ctx_mode(tu_mode(k), 0, 0, 3);
        for (int s = 0; s < 4; s++) {
            tu_label("mode %s n %lld", deso_mode_name(tu_mode(k)),
                     (long long)sizes[s]);
            one_case(ctx, sizes[s], 7 + (uint64_t)s);
            tu_case_end();
        }
        TU_OK(deso_finalize(&ctx));
    }
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_new_values))
