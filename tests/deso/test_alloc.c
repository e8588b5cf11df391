/* Allocation failure: deso__alloc_fail_after(n) makes the n-th allocation
 * of the runtime fail, for n = 0, 1, 2, ... until a sequence of create,
 * record and force calls runs through without hitting it.  At every n the
 * failing call returns DESO_ENOMEM with a message, on every rank, nothing
 * crashes, nothing leaks (this test also runs under ASan), and a handle
 * made before the sequence still computes; once the sequence succeeds its
 * results are checked against a plain C computation.
 *
 * At P > 1 failures are injected on every rank at once, in the create
 * and record paths only, where allocation counts are the same on every
 * rank (deso__view_alloc allocates even an empty share; recycled views,
 * values and nodes are drained before each step, so that every point
 * where the runtime may allocate is reached).  Failures on one
 * rank only, forces included, are test_alloc_rank's.  At P = 1 the forces
 * are injected here too.  The walk runs in each optimiser mode (none,
 * affine, full); P = 4 runs on the 2x2 grid, P = 6 (the long group) on
 * 2x3.
 * deso-np: 1 2 3 4
 * deso-np-long: 6                                                         */
#include <stdlib.h>

#include "deso/runtime/runtime.h"
#include "placement/alloc.h"
#include "test_util.h"

#define N 8

static double fy(int64_t i, void *arg)
{
    (void)arg;
    return (double)(i + 1);
}

static double fa(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    int64_t d = i > j ? i - j : j - i;
    return 1.0 / (double)(1 + d) + (i == j ? 8.0 : 0.0);
}

/* The sequence in plain C: the y and ||y|| it must produce.              */
static void reference(double *yref, double *nrm)
{
    double x[N], y[N], z[N];
    for (int i = 0; i < N; i++) {
        y[i] = fy(i, NULL);
        x[i] = 2.0 * y[i];                        /* daxpy                 */
    }
    for (int i = 0; i < N; i++) {
        z[i] = 0.0;
        for (int j = 0; j < N; j++) z[i] += fa(i, j, NULL) * x[j];   /* gemv */
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) z[i] += 0.5 * fa(i, j, NULL) * y[j];
    for (int i = 0; i < N; i++) {                 /* dswap                 */
        double t = x[i];
        x[i] = y[i];
        y[i] = t;
    }
    double t = 0.0;
    for (int i = 0; i < N; i++) t += x[i] * z[i];  /* ddot                  */
    t += 0.5;                                       /* sadd                  */
    for (int i = 0; i < N; i++) y[i] = t * y[i];    /* dscal (lazy)          */
    for (int i = 0; i < N; i++) y[i] = 0.5 * x[i] + 2.0 * y[i];   /* daxpby */
    double s = 0.0;
    for (int i = 0; i < N; i++) s += y[i] * y[i];
    for (int i = 0; i < N; i++) yref[i] = y[i];
    *nrm = sqrt(s);
}

typedef struct {
    deso_vec *x, *y, *z;
    deso_mat *A;
    deso_scalar *s, *t, *u;
} seq;

#define STEP(call)                                                           \
    do {                                                                     \
        if (err == DESO_OK) err = (call);                                    \
    } while (0)

/* Creates and records; forces too when `force` (then reads the results). */
static deso_err run_sequence(deso_ctx *ctx, seq *q, int force, double *ybuf,
                             double *nrm)
{
    deso_err err = DESO_OK;
    const deso_order C = DESO_COL_MAJOR;
    STEP(deso_vec_create(ctx, N, &q->x));
    STEP(deso_vec_from_fn(ctx, N, fy, NULL, &q->y));
    STEP(deso_vec_create(ctx, N, &q->z));
    STEP(deso_mat_from_fn(ctx, N, N, fa, NULL, &q->A));
    STEP(deso_scalar_create(ctx, 0.5, &q->s));
    STEP(deso_scalar_create(ctx, 0.0, &q->t));
    STEP(deso_scalar_create(ctx, 0.0, &q->u));
    STEP(deso_daxpy(N, 2.0, q->y, 1, q->x, 1));
    STEP(deso_dgemv(C, DESO_NO_TRANS, N, N, 1.0, q->A, N, q->x, 1, 0.0, q->z,
                    1));
    STEP(deso_dsymv(C, DESO_UPPER, N, 0.5, q->A, N, q->y, 1, 1.0, q->z, 1));
    STEP(deso_dswap(N, q->x, 1, q->y, 1));
    STEP(deso_ddot(N, q->x, 1, q->z, 1, q->t));
    STEP(deso_sadd(q->t, q->t, q->s));
    STEP(deso_dscal(N, q->t, q->y, 1));
    STEP(deso_daxpby(N, q->s, q->x, 1, 2.0, q->y, 1));
    STEP(deso_dnrm2(N, q->y, 1, q->u));
    if (force) {
        STEP(deso_scalar_get(q->u, nrm));
        STEP(deso_vec_gather(q->y, ybuf, DESO_ALL_RANKS));
    }
    return err;
}

/* Local (destroy is local): true when every destroy succeeded.         */
static int seq_free(seq *q)
{
    return (deso_vec_destroy(&q->x) | deso_vec_destroy(&q->y) |
            deso_vec_destroy(&q->z) | deso_mat_destroy(&q->A) |
            deso_scalar_destroy(&q->s) | deso_scalar_destroy(&q->t) |
            deso_scalar_destroy(&q->u)) == DESO_OK;
}

/* Walks n = first, first + stride, ... in mode tu_mode(m).              */
static void failures_in(int m, int first, int stride)
{
    deso_mode mode = tu_mode(m);
    int P = tu_size();
    double yref[N], nref;
    reference(yref, &nref);
    deso_ctx *ctx = tu_ctx_mode(mode, 0, 0, 2);
    deso_vec *early;
    deso_scalar *edot;
    TU_OK(deso_vec_from_fn(ctx, 5, fy, NULL, &early));
    TU_OK(deso_scalar_create(ctx, 0.0, &edot));
    int failures = 0, done = 0;
    for (int n = first; n < 10000 && !done; n += stride) {
        seq q = {0};
        double ybuf[N] = {0}, nrm = 0.0;
        long before = deso__alloc_injected();
        /* every allocation point reached: nothing recycled (the same on
         * every rank, as the recycling is)                                */
        deso__recycle_drain();
        deso__alloc_fail_after(n);
        deso_err err = run_sequence(ctx, &q, P == 1, ybuf, &nrm);
        deso__alloc_fail_after(-1);
        int injected = deso__alloc_injected() != before;
        if (P > 1 && err == DESO_OK && !injected)
            err = run_sequence(ctx, &q, 1, ybuf, &nrm) == DESO_OK
                      ? DESO_OK : DESO_EINTERNAL;
        /* an injected failure surfaces as DESO_ENOMEM (with a message);
         * with none, the sequence succeeds and gives the right answer      */
        int ok = injected ? err == DESO_ENOMEM &&
                                deso_last_error()[0] != '\0'
                          : err == DESO_OK;
        if (!ok)
            print_error("mode %s, n = %d: injected %d, %s: %s\n",
                        deso_mode_name(mode), n, injected, deso_errname(err),
                        deso_last_error());
        if (!injected) {
            ok &= tu_relerr(ybuf, yref, N) < 1e-12 &&
                  tu_srel(nrm, nref) < 1e-12;
            done = 1;
        } else {
            failures++;
        }
        ok &= seq_free(&q);
        /* the earlier handle still computes (this forces what the failed
         * sequence had recorded, too)                                      */
        double v = 0.0;
        ok &= deso_ddot(5, early, 1, early, 1, edot) == DESO_OK;
        ok &= deso_scalar_get(edot, &v) == DESO_OK && v == 55.0;
        assert_true(tu_all(ok));   /* one all-reduce per n               */
    }
    print_message("mode %s: allocation failures injected: %d\n",
                  deso_mode_name(mode), failures);
    assert_true(tu_all(done && failures > 10));
    TU_OK(deso_vec_destroy(&early));
    TU_OK(deso_scalar_destroy(&edot));
    TU_OK(deso_finalize(&ctx));
}

/* In every optimiser mode.  At P = 1 the forces, where the modes
 * allocate differently (the search of affine and full), are injected too
 * and every mode walks every n.  At P > 1 the injected paths are the same
 * in every mode (only the forces between the steps differ), so in the
 * fast group the modes share the walk: mode k takes n = k, k + 3, ....   */
static void test_alloc_failures(void **state)
{
    (void)state;
    int share = tu_size() > 1 && !tu_long();
    for (int m = 0; m < TU_NMODES; m++)
        failures_in(m, share ? m : 0, share ? TU_NMODES : 1);
}

/* A rooted create under injection: every rank gets DESO_ENOMEM together
 * (the buffers are allocated before the data moves), never a hang.       */
static void test_alloc_rooted(void **state)
{
    (void)state;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    double a[N * N];
    for (int k = 0; k < N * N; k++) a[k] = k;
    int done = 0;
    for (int n = 0; n < 100 && !done; n++) {
        deso_mat *A = NULL;
        deso_vec *v = NULL;
        long before = deso__alloc_injected();
        deso__alloc_fail_after(n);
        deso_err err = deso_mat_from_array(ctx, N, N, me == 0 ? a : NULL, N,
                                           0, &A);
        if (err == DESO_OK)
            err = deso_vec_from_array(ctx, N, me == 0 ? a : NULL, 0, &v);
        deso__alloc_fail_after(-1);
        int injected = deso__alloc_injected() != before;
        /* injected somewhere: on every rank the same outcome               */
        int any = !tu_all(!injected);
        assert_true(tu_all(any ? err == DESO_ENOMEM : err == DESO_OK));
        if (!any) {
            double back[N * N];
            TU_OK(deso_mat_gather(A, back, N, DESO_ALL_RANKS));
            assert_true(tu_all(memcmp(back, a, sizeof back) == 0));
            done = 1;
        }
        TU_OK(deso_mat_destroy(&A));
        TU_OK(deso_vec_destroy(&v));
    }
    assert_true(tu_all(done));
    TU_OK(deso_finalize(&ctx));
}

TU_MAIN(cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_alloc_rooted))
