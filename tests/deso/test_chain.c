/* Chains of 50 random operations recorded into one DAG (no force point in
 * between), mirrored with sequential OpenBLAS; at the end every vector and
 * scalar equals the sequential result within 1e-12 relative (max norm).
 * In each optimiser mode (none, affine, full), each against OpenBLAS, on
 * default, 1-D and 2-D grids (2x2 at P = 4; 2x3 and 3x2 at P = 6, the
 * long group), modes and chains paired as tu_cases pairs block sizes.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>

#include "test_util.h"

#define NV 4
#define NS 3
#define NOPS 50

static void chain(deso_ctx *ctx, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    int in = (int)n;
    double *v[NV], *A = malloc((size_t)(n * n) * sizeof *A), s[NS] = {0};
    tu_fill(&rng, A, n * n);
    for (int64_t k = 0; k < n * n; k++) A[k] /= (double)n;
    deso_vec *dv[NV];
    deso_scalar *ds[NS], *t0, *t1, *t2;
    deso_mat *dA;
    TU_CALL(deso_mat_from_array(ctx, n, n, A, n, DESO_ALL_RANKS, &dA));
    for (int k = 0; k < NV; k++) {
        v[k] = malloc((size_t)n * sizeof(double));
        tu_fill(&rng, v[k], n);
        TU_CALL(deso_vec_from_array(ctx, n, v[k], DESO_ALL_RANKS, &dv[k]));
    }
    for (int k = 0; k < NS; k++) TU_CALL(deso_scalar_create(ctx, 0.0, &ds[k]));
    TU_CALL(deso_scalar_create(ctx, 0.0, &t0));
    TU_CALL(deso_scalar_create(ctx, 0.0, &t1));
    TU_CALL(deso_scalar_create(ctx, 0.0, &t2));
    TU_CALL(deso_flush(ctx));
    deso_info info;
    TU_CALL(deso_get_info(ctx, &info));
    int64_t flushes = info.flushes;
    double *tmp = malloc((size_t)n * sizeof *tmp);
    for (int op = 0; op < NOPS; op++) {
        int kind = (int)((tu_rand(&rng) + 1.0) * 4.5);   /* 0..8           */
        int a = (int)((tu_rand(&rng) + 1.0) * 2.0) % NV;
        int b = (a + 1 + (int)((tu_rand(&rng) + 1.0) * 1.5)) % NV;
        int k = (int)((tu_rand(&rng) + 1.0) * 1.5) % NS;
        double c = 0.5 + 0.5 * (tu_rand(&rng) + 1.0) * 0.5;
        double d = 0.5 * tu_rand(&rng);
        switch (kind) {
        case 0:
            TU_CALL(deso_dcopy(n, dv[a], 1, dv[b], 1));
            cblas_dcopy(in, v[a], 1, v[b], 1);
            break;
        case 1:
            TU_CALL(deso_dswap(n, dv[a], 1, dv[b], 1));
            cblas_dswap(in, v[a], 1, v[b], 1);
            break;
        case 2:
            TU_CALL(deso_dscal(n, c, dv[a], 1));
            cblas_dscal(in, c, v[a], 1);
            break;
        case 3:
            TU_CALL(deso_daxpby(n, d, dv[a], 1, c, dv[b], 1));
            for (int i = 0; i < in; i++) v[b][i] = d * v[a][i] + c * v[b][i];
            break;
        case 4: {   /* a lazy, bounded coefficient: cos of the angle         */
            TU_CALL(deso_ddot(n, dv[a], 1, dv[b], 1, t0));
            TU_CALL(deso_dnrm2(n, dv[a], 1, t1));
            TU_CALL(deso_dnrm2(n, dv[b], 1, t2));
            TU_CALL(deso_smul(t1, t1, t2));
            TU_CALL(deso_sdiv(ds[k], t0, t1));
            TU_CALL(deso_daxpy(n, ds[k], dv[a], 1, dv[b], 1));
            double r0 = cblas_ddot(in, v[a], 1, v[b], 1);
            double r1 = cblas_dnrm2(in, v[a], 1) * cblas_dnrm2(in, v[b], 1);
            s[k] = r0 / r1;
            cblas_daxpy(in, s[k], v[a], 1, v[b], 1);
            break;
        }
        case 5:
            TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, c, dA, n,
                               dv[a], 1, d, dv[b], 1));
            cblas_dgemv(CblasColMajor, CblasNoTrans, in, in, c, A, in, v[a], 1,
                        d, v[b], 1);
            break;
        case 6:
            TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, n, n, c, dA, n,
                               dv[a], 1, d, dv[b], 1));
            cblas_dgemv(CblasColMajor, CblasTrans, in, in, c, A, in, v[a], 1,
                        d, v[b], 1);
            break;
        case 7:
            TU_CALL(deso_dasum(n, dv[a], 1, ds[k]));
            TU_CALL(deso_sdiv(ds[k], ds[k], (double)n));
            TU_CALL(deso_daxpy(n, ds[k], dv[a], 1, dv[b], 1));
            s[k] = cblas_dasum(in, v[a], 1) / (double)n;
            cblas_daxpy(in, s[k], v[a], 1, v[b], 1);
            break;
        default:
            TU_CALL(deso_idamax(n, dv[a], 1, ds[k]));
            s[k] = (double)cblas_idamax(in, v[a], 1);
            TU_CALL(deso_dsymv(DESO_COL_MAJOR, DESO_LOWER, n, 0.5, dA, n,
                               dv[a], 1, 0.5, dv[b], 1));
            cblas_dsymv(CblasColMajor, CblasLower, in, 0.5, A, in, v[a], 1,
                        0.5, v[b], 1);
            break;
        }
    }
    TU_CALL(deso_get_info(ctx, &info));
    TU_CHECK(info.flushes == flushes && info.pending >= NOPS);
    for (int k = 0; k < NV; k++) {
        tu_fetch(dv[k], tmp);
        TU_CHECK(tu_relerr(tmp, v[k], n) < 1e-12);
    }
    for (int k = 0; k < NS; k++)
        TU_CHECK(tu_srel(tu_value(ds[k]), s[k]) < 1e-12);
    TU_CALL(deso_get_info(ctx, &info));
    TU_CHECK(info.flushes == flushes + 1);
    for (int k = 0; k < NV; k++) free(v[k]);
    free(A);
    free(tmp);
    TU_CALL(deso_finalize(&ctx));
}

/* Block size 3 with n = 37 (n not a multiple of the blocks), block size
 * 2 with n = 5 (fewer blocks than ranks at P = 4 and 6).                  */
static void test_random_chains(void **state)
{
    (void)state;
    const int64_t nbs[] = {3, 2};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 2, cases);
    for (int ci = 0; ci < nc; ci++) {
        int64_t n = cases[ci].nb == 3 ? 37 : 5;
        tu_label("%s, n %lld", tu_case_name(&cases[ci]), (long long)n);
        chain(tu_case_ctx(&cases[ci]), n, 11u + (uint64_t)ci);
        tu_case_end();
    }
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_random_chains))
