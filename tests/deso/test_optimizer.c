/* The optimiser wired into the runtime: random DAGs give sequential
 * CBLAS's values in each of modes none, affine and full; the executor
 * moves exactly the bytes the cost model predicts for CG's iteration; the
 * plan cache replays; wisdom files round-trip, and a corrupted, truncated
 * or foreign file is ignored without changing any result.  P = 4 runs
 * in the long group (test_counts and test_views hold 2x2 traffic to the
 * model in the fast one).
 * deso-np: 1 2 3
 * deso-np-long: 4                                                           */
#include "test_util.h"

#include <cblas.h>
#include <unistd.h>

#include "deso/runtime/runtime.h"
#include "model_check.h"

#define NV 4
#define NS 3

static deso_ctx *mk(deso_mode mode, const char *wisdom)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = mode;
    o.nb = 4;
    o.wisdom = wisdom;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    return ctx;
}

/* A random program on NV vectors of length n, NS scalars and an n x n
 * matrix, run through deso in `mode` and mirrored with sequential CBLAS;
 * every value gathered at the end into out (NV * n + NS), the mirror's
 * into ref.                                                               */
static void random_program(deso_mode mode, uint64_t seed, int64_t n,
                           double *out, double *ref)
{
    deso_ctx *ctx = mk(mode, NULL);
    tu_rng r = {seed};
    int in = (int)n;
    double *A = malloc((size_t)(n * n) * sizeof(double));
    double *w[NV], *c = ref + NV * n;   /* the mirror's vectors, scalars  */
    deso_vec *v[NV];
    deso_scalar *s[NS];
    deso_mat *dA;
    tu_fill(&r, A, n * n);
    TU_CALL(deso_mat_from_array(ctx, n, n, A, n, DESO_ALL_RANKS, &dA));
    for (int k = 0; k < NV; k++) {
        w[k] = ref + k * n;
        tu_fill(&r, w[k], n);
        TU_CALL(deso_vec_from_array(ctx, n, w[k], DESO_ALL_RANKS, &v[k]));
    }
    for (int k = 0; k < NS; k++) {
        c[k] = tu_rand(&r);
        TU_CALL(deso_scalar_create(ctx, c[k], &s[k]));
    }
    deso_scalar *t;
    TU_CALL(deso_scalar_create(ctx, 0.0, &t));
    int steps = 12 + (int)(r.s % 12);
    for (int st = 0; st < steps; st++) {
        double u = tu_rand(&r);
        int a = (int)((u + 1.0) * 1000.0) % NV, b = (a + 1) % NV;
        int sa = (int)((u + 1.0) * 777.0) % NS;
        int op = (int)((tu_rand(&r) + 1.0) * 5.0);
        /* a bounded scalar from s[sa]: 1 / (1 + s^2)                       */
        TU_CALL(deso_smul(t, s[sa], s[sa]));
        TU_CALL(deso_sadd(t, t, 1.0));
        TU_CALL(deso_sdiv(t, 1.0, t));
        double ct = 1.0 / (c[sa] * c[sa] + 1.0);
        switch (op) {
        case 0:
            TU_CALL(deso_daxpy(n, t, v[a], 1, v[b], 1));
            cblas_daxpy(in, ct, w[a], 1, w[b], 1);
            break;
        case 1:
            TU_CALL(deso_dscal(n, t, v[a], 1));
            cblas_dscal(in, ct, w[a], 1);
            break;
        case 2:
            TU_CALL(deso_ddot(n, v[a], 1, v[b], 1, s[sa]));
            c[sa] = cblas_ddot(in, w[a], 1, w[b], 1);
            break;
        case 3:
            TU_CALL(deso_dnrm2(n, v[a], 1, s[sa]));
            c[sa] = cblas_dnrm2(in, w[a], 1);
            break;
        case 4:
            TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, t, dA, n,
                               v[a], 1, 0.0, v[b], 1));
            TU_CALL(deso_dnrm2(n, v[b], 1, s[sa]));
            TU_CALL(deso_sadd(s[sa], s[sa], 1.0));
            TU_CALL(deso_sdiv(s[sa], 1.0, s[sa]));
            TU_CALL(deso_dscal(n, s[sa], v[b], 1));
            cblas_dgemv(CblasColMajor, CblasNoTrans, in, in, ct, A, in, w[a],
                        1, 0.0, w[b], 1);
            c[sa] = 1.0 / (cblas_dnrm2(in, w[b], 1) + 1.0);
            cblas_dscal(in, c[sa], w[b], 1);
            break;
        case 5:
            TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, n, n, 0.5, dA, n,
                               v[a], 1, t, v[b], 1));
            cblas_dgemv(CblasColMajor, CblasTrans, in, in, 0.5, A, in, w[a],
                        1, ct, w[b], 1);
            break;
        case 6:
            TU_CALL(deso_daxpby(n, t, v[a], 1, 0.5, v[b], 1));
            for (int i = 0; i < in; i++)
                w[b][i] = ct * w[a][i] + 0.5 * w[b][i];
            break;
        case 7:
            TU_CALL(deso_dasum(n, v[a], 1, s[sa]));
            c[sa] = cblas_dasum(in, w[a], 1);
            break;
        case 8:
            TU_CALL(deso_dcopy(n, v[a], 1, v[b], 1));
            cblas_dcopy(in, w[a], 1, w[b], 1);
            break;
        default: {
            double x;
            TU_CALL(deso_scalar_get(s[sa], &x));    /* a force point         */
            break;
        }
        }
        if (st % 5 == 4) TU_CALL(deso_flush(ctx));
    }
    for (int k = 0; k < NV; k++)
        TU_CALL(deso_vec_gather(v[k], out + k * n, DESO_ALL_RANKS));
    for (int k = 0; k < NS; k++)
        TU_CALL(deso_scalar_get(s[k], &out[NV * n + k]));
    free(A);
    TU_CALL(deso_finalize(&ctx));
}

/* Every mode against sequential CBLAS (not against each other: a fault
 * shared by the modes would pass): each vector within 1e-12 relative to
 * its largest element, each scalar within 1e-12 relative to max(|s|, 1)
 * (a dot product may cancel to near zero).                                */
static void test_random_modes(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        int64_t n = 5 + (int64_t)(seed * 7 % 23);
        int64_t len = NV * n + NS;
        double *res = malloc((size_t)(2 * len) * sizeof(double));
        double *ref = res + len;
        for (int m = 0; m < TU_NMODES; m++) {
            tu_label("seed %llu mode %s", (unsigned long long)seed,
                     deso_mode_name(tu_mode(m)));
            random_program(tu_mode(m), seed, n, res, ref);
            double e = 0.0;
            for (int k = 0; k < NV; k++)
                e = fmax(e, tu_relerr(res + k * n, ref + k * n, n));
            for (int k = 0; k < NS; k++) {
                double d = fabs(res[NV * n + k] - ref[NV * n + k]);
                e = fmax(e, d / fmax(fabs(ref[NV * n + k]), 1.0));
            }
            if (!(e <= 1e-12))
                print_error("%s: rel err %g against CBLAS\n", tu_where(), e);
            TU_CHECK(e <= 1e-12);
            tu_case_end();
        }
        free(res);
    }
    TU_SYNC();
}

/* ---- CG ---------------------------------------------------------------- */

typedef struct cg {
    deso_ctx *ctx;
    int64_t n;
    deso_mat *A;
    deso_vec *x, *r, *p, *q;
    deso_scalar *rr, *rrn, *pq, *al, *nal, *be;
} cg;

static double a_fn(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return i == j ? 4.0 : 1.0 / (1.0 + (double)((i - j) * (i - j)));
}

static double b_fn(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 + (double)(i % 7);
}

static void cg_setup_on(cg *c, deso_ctx *ctx, int64_t n)
{
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    tu_label("CG, n %lld, mode %s", (long long)n, deso_mode_name(info.mode));
    c->ctx = ctx;
    c->n = n;
    TU_OK(deso_mat_from_fn(c->ctx, n, n, a_fn, NULL, &c->A));
    TU_OK(deso_vec_from_fn(c->ctx, n, b_fn, NULL, &c->r));
    TU_OK(deso_vec_create(c->ctx, n, &c->x));
    TU_OK(deso_vec_create(c->ctx, n, &c->p));
    TU_OK(deso_vec_create(c->ctx, n, &c->q));
    deso_scalar **s[6] = {&c->rr, &c->rrn, &c->pq, &c->al, &c->nal, &c->be};
    for (int k = 0; k < 6; k++) TU_OK(deso_scalar_create(c->ctx, 0.0, s[k]));
    TU_OK(deso_dcopy(n, c->r, 1, c->p, 1));
    TU_OK(deso_ddot(n, c->r, 1, c->r, 1, c->rr));
    TU_OK(deso_flush(c->ctx));
}

static void cg_setup(cg *c, deso_mode mode, int64_t n, const char *wisdom)
{
    cg_setup_on(c, mk(mode, wisdom), n);
}

static void cg_iter(cg *c)
{
    int64_t n = c->n;
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, c->A, n, c->p,
                       1, 0.0, c->q, 1));
    TU_CALL(deso_ddot(n, c->p, 1, c->q, 1, c->pq));
    TU_CALL(deso_sdiv(c->al, c->rr, c->pq));
    TU_CALL(deso_daxpy(n, c->al, c->p, 1, c->x, 1));
    TU_CALL(deso_sneg(c->nal, c->al));
    TU_CALL(deso_daxpy(n, c->nal, c->q, 1, c->r, 1));
    TU_CALL(deso_ddot(n, c->r, 1, c->r, 1, c->rrn));
    TU_CALL(deso_sdiv(c->be, c->rrn, c->rr));
    TU_CALL(deso_dscal(n, c->be, c->p, 1));
    TU_CALL(deso_daxpy(n, 1.0, c->r, 1, c->p, 1));
    TU_CALL(deso_sset(c->rr, c->rrn));
}

static void cg_done(cg *c, double *x)
{
    if (x != NULL) TU_OK(deso_vec_gather(c->x, x, DESO_ALL_RANKS));
    TU_OK(deso_finalize(&c->ctx));
    TU_SYNC();   /* cg_iter's calls                                       */
}

static void totals(int64_t *t)
{
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    int64_t mine[6] = {st.bytes_p2p, st.msgs_p2p, st.bytes_collective,
                       st.msgs_collective, st.plans_optimised,
                       st.plans_replayed};
    MPI_Allreduce(mine, t, 6, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* plans are counted on every rank: per rank                            */
    t[4] /= tu_size();
    t[5] /= tu_size();
}

/* Every flush of CG moves exactly what the model of its plan says (plus
 * the force point's SPMD check: one 16-byte all-reduce).                 */
static void test_bytes_match_model(void **state)
{
    (void)state;
    for (int m = 0; m < 3; m++) {
        cg c;
        cg_setup(&c, (deso_mode)(DESO_MODE_NONE + m), 60, NULL);
        for (int it = 0; it < 4; it++) {
            int64_t t0[6], t1[6];
            cg_iter(&c);
            totals(t0);
            TU_OK(deso_flush(c.ctx));
            totals(t1);
            char what[32];
            snprintf(what, sizeof what, "mode %d it %d", m, it);
            bool ok = tu_flush_matches_model(c.ctx, t0, t1, what);
            assert_true(tu_all(ok));
        }
        cg_done(&c, NULL);
    }
}

/* 40 iterations in mode full (deso-cg shows 100): at most two
 * optimisations (the first flush and the first iteration), every later
 * flush replayed.  With no matrix replicable: a compiled force that could
 * replicate its matrix is planned again after 16 and 32 runs
 * (test_replicate.c checks those).                                      */
static void test_plan_cache(void **state)
{
    (void)state;
    int64_t t0[6], t1[6];
    totals(t0);
    cg c;
    setenv("DESO_REPLICATE_MAX", "0", 1);
    cg_setup(&c, DESO_MODE_FULL, 48, NULL);
    unsetenv("DESO_REPLICATE_MAX");
    for (int it = 0; it < 40; it++) {
        cg_iter(&c);
        double rr;
        TU_OK(deso_scalar_get(c.rr, &rr));
    }
    totals(t1);
    /* the plan explains itself                                             */
    FILE *dev = fopen("/dev/null", "w");
    if (dev != NULL) {
        TU_OK(deso_plan_explain(c.ctx, dev));
        fclose(dev);
    }
    cg_done(&c, NULL);
    int64_t opt = t1[4] - t0[4], rep = t1[5] - t0[5];
    if (opt > 2 || rep < 39)
        print_error("optimised %lld, replayed %lld\n", (long long)opt,
                    (long long)rep);
    assert_true(tu_all(opt <= 2 && rep >= 39));
}

/* ---- wisdom ------------------------------------------------------------ */

static const char *wfile(void)
{
    static char path[256];
    if (path[0] == '\0') {
        /* one name for all ranks: rank 0's pid                             */
        long pid = (long)getpid();
        MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "/tmp/deso-test-wisdom-%ld.txt", pid);
    }
    return path;
}

static void cg_run(deso_mode mode, const char *wisdom, bool import,
                   int iters, double *x, int64_t *optimised)
{
    int64_t t0[6], t1[6];
    totals(t0);
    cg c;
    if (import) {
        deso_ctx *ctx = mk(mode, NULL);
        deso_err e = deso_wisdom_import(ctx, wisdom);
        (void)e;   /* corrupt files: DESO_EWISDOM, checked by the caller   */
        cg_setup_on(&c, ctx, 40);
    } else {
        cg_setup(&c, mode, 40, wisdom);
    }
    for (int it = 0; it < iters; it++) {
        cg_iter(&c);
        double rr;
        TU_OK(deso_scalar_get(c.rr, &rr));
    }
    totals(t1);
    *optimised = t1[4] - t0[4];
    cg_done(&c, x);
}

static void test_wisdom_roundtrip(void **state)
{
    (void)state;
    const char *f = wfile();
    if (tu_size() > 0 && f[0]) {
        int me;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (me == 0) remove(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double x0[40], x1[40], x2[40];
    int64_t o0, o1, o2;
    /* DESO_WISDOM-style: first run exports at finalize                     */
    cg_run(DESO_MODE_FULL, f, false, 3, x0, &o0);
    assert_true(tu_all(o0 >= 1));
    /* second run with the same file: nothing optimised, same bits        */
    cg_run(DESO_MODE_FULL, f, false, 3, x1, &o1);
    assert_true(tu_all(o1 == 0));
    assert_true(tu_all(memcmp(x0, x1, sizeof x0) == 0));
    /* explicit import                                                      */
    cg_run(DESO_MODE_FULL, f, true, 3, x2, &o2);
    assert_true(tu_all(o2 == 0));
    assert_true(tu_all(memcmp(x0, x2, sizeof x0) == 0));
}

/* Corrupted (one byte changed), truncated, garbage, and another grid's
 * files: ignored, identical results, the optimiser runs as without.      */
static void test_wisdom_corrupt(void **state)
{
    (void)state;
    const char *f = wfile();
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    double ref[40], x[40];
    int64_t oref, o;
    if (me == 0) remove(f);
    MPI_Barrier(MPI_COMM_WORLD);
    cg_run(DESO_MODE_FULL, NULL, false, 3, ref, &oref);
    /* a valid file to damage                                               */
    cg_run(DESO_MODE_FULL, f, false, 3, x, &o);
    for (int kind = 0; kind < 4; kind++) {
        char bad[300];
        snprintf(bad, sizeof bad, "%s.bad", f);
        if (me == 0) {
            FILE *in = fopen(f, "rb");
            char buf[65536];
            size_t len = in ? fread(buf, 1, sizeof buf, in) : 0;
            if (in) fclose(in);
            FILE *out = fopen(bad, "wb");
            if (kind == 0 && len > 40) buf[len / 2] ^= 0x01;   /* bit flip */
            if (kind == 1) len /= 2;                          /* truncated */
            if (kind == 2) {                                  /* hostile   */
                len = (size_t)snprintf(buf, sizeof buf,
                                       "deso-wisdom 3\nconfig 0.1.0 %d 1x%d 1 "
                                       "0x1p+900 -0x1p+3 0x0p+0\nplan 000 99999999 1\n",
                                       tu_size(), tu_size());
            }
            if (kind == 3) {                                  /* empty     */
                len = 0;
            }
            if (out) {
                fwrite(buf, 1, len, out);
                fclose(out);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        deso_ctx *ctx = mk(DESO_MODE_FULL, NULL);
        deso_err e = deso_wisdom_import(ctx, bad);
        assert_true(tu_all(e == DESO_EWISDOM));
        TU_OK(deso_finalize(&ctx));
        cg_run(DESO_MODE_FULL, bad, true, 3, x, &o);
        assert_true(tu_all(memcmp(ref, x, sizeof x) == 0));
        assert_true(tu_all(o == oref));
        if (me == 0) remove(bad);
    }
    if (me == 0) remove(f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_modes),
        cmocka_unit_test(test_bytes_match_model),
        cmocka_unit_test(test_plan_cache),
        cmocka_unit_test(test_wisdom_roundtrip),
        cmocka_unit_test(test_wisdom_corrupt),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
