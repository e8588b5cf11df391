/* Reductions posted without waiting: the executor starts each reduction
 * (and each fused group's collective) as soon as its inputs are ready,
 * runs the nodes that do not need it while it is in flight, and waits
 * only where its result is read.
 *   - CG iterations (a force each, as a solver reading r.r) give the
 *     values of the same iterations in sequential CBLAS, in every mode
 *     and grid; on a 1 x P grid in mode none (vectors over grid columns:
 *     every dot is an all-reduce) x += alpha p runs under the r.r
 *     reduction in every iteration (deso_stats' nodes_overlapped), which
 *     an executor that waited at once would not count;
 *   - results read by the very next node (a dot's by an axpy, a gemv's by
 *     a dot, idamax's by an axpy), more reductions in flight than the
 *     executor keeps (it waits for the oldest), all against CBLAS.
 * n = 37 (not a multiple of P or of the block size 4), 5 and 1 (< P).
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define ITERS 6
#define NV 6         /* more independent reductions than are in flight */

static double a_fn(int64_t i, int64_t j, void *arg)
{
    int64_t n = *(const int64_t *)arg;
    if (i == j) return (double)n + 2.0;
    return 1.0 / (double)(1 + (i > j ? i - j : j - i));
}

static double b_fn(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 + 0.25 * (double)(i % 7);
}

/* nodes_overlapped summed over ranks since the last reset.              */
static long long overlapped(void)
{
    deso_stats s;
    TU_CALL(deso_stats_get(&s));
    long long v = (long long)s.nodes_overlapped;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return v;
}

/* The sequential CG iteration tu_cg_record records.                     */
static void cg_step(int64_t n, const double *A, double *x, double *r,
                    double *p, double *q, double *rr)
{
    int in = (int)n;
    cblas_dgemv(CblasColMajor, CblasNoTrans, in, in, 1.0, A, in, p, 1, 0.0,
                q, 1);
    double alpha = *rr / cblas_ddot(in, p, 1, q, 1);
    cblas_daxpy(in, alpha, p, 1, x, 1);
    cblas_daxpy(in, -alpha, q, 1, r, 1);
    double rrnew = cblas_ddot(in, r, 1, r, 1);
    cblas_dscal(in, rrnew / *rr, p, 1);
    cblas_daxpy(in, 1.0, r, 1, p, 1);
    *rr = rrnew;
}

static void cg_case(deso_mode mode, int pr, int pc, int64_t n)
{
    tu_label("cg %s %dx%d n=%lld", deso_mode_name(mode), pr, pc,
             (long long)n);
    deso_ctx *ctx = tu_ctx_mode(mode, pr, pc, 4);
    size_t sz = (size_t)n;
    double *A = malloc(sz * sz * sizeof *A), *w = malloc(5 * sz * sizeof *w);
    double *x = w, *r = w + sz, *p = w + 2 * sz, *q = w + 3 * sz;
    double *got = w + 4 * sz;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) A[i + j * n] = a_fn(i, j, &n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = 0.0;
        r[i] = p[i] = b_fn(i, NULL);
    }
    double rrv = cblas_ddot((int)n, r, 1, r, 1);
    deso_mat *dA;
    deso_vec *dx, *dr, *dp, *dq;
    deso_scalar *rr, *rrnew, *pq, *alpha, *beta;
    TU_CALL(deso_mat_from_fn(ctx, n, n, a_fn, &n, &dA));
    TU_CALL(deso_vec_create(ctx, n, &dx));
    TU_CALL(deso_vec_from_fn(ctx, n, b_fn, NULL, &dr));
    TU_CALL(deso_vec_from_fn(ctx, n, b_fn, NULL, &dp));
    TU_CALL(deso_vec_create(ctx, n, &dq));
    TU_CALL(deso_scalar_create(ctx, 0.0, &rr));
    TU_CALL(deso_scalar_create(ctx, 0.0, &rrnew));
    TU_CALL(deso_scalar_create(ctx, 0.0, &pq));
    TU_CALL(deso_scalar_create(ctx, 0.0, &alpha));
    TU_CALL(deso_scalar_create(ctx, 0.0, &beta));
    TU_CALL(deso_ddot(n, dr, 1, dr, 1, rr));
    TU_CALL(deso_flush(ctx));
    deso_stats_reset();
    /* CG ends in n steps: r.r is then rounding noise, compared to r0.r0  */
    int iters = n > ITERS ? ITERS : (n > 1 ? (int)n - 1 : 1);
    double rr0 = rrv;
    for (int it = 0; it < iters; it++) {
        TU_CALL(tu_cg_record(n, dA, dx, dr, dp, dq, rr, rrnew, pq, alpha,
                             beta));
        double v = tu_value(rr);            /* a force, as a solver's test */
        cg_step(n, A, x, r, p, q, &rrv);
        TU_CHECK(fabs(v - rrv) <= 1e-10 * rr0);
    }
    long long ov = overlapped();
    /* a 1 x P grid in mode none: every dot an all-reduce along the row   */
    if (mode == DESO_MODE_NONE && pr == 1 && pc > 1)
        TU_CHECK(ov >= (long long)iters * tu_size());
    tu_fetch(dx, got);
    TU_CHECK(tu_relerr(got, x, n) < 1e-10);
    free(A);
    free(w);
    TU_OK(deso_finalize(&ctx));
    tu_case_end();
}

/* Every mode on the 1 x P grid; the other grids in mode none, and in
 * every mode in the long group (P = 6).                                 */
static void cg_overlaps(void **state)
{
    (void)state;
    int grids[4][2], ng = tu_grids(grids), P = tu_size();
    for (int m = 0; m < TU_NMODES; m++) {
        cg_case(tu_mode(m), 1, P, 37);
        for (int g = 0; g < ng && (m == 0 || tu_long()); g++)
            if (grids[g][0] != 1)
                cg_case(tu_mode(m), grids[g][0], grids[g][1], 37);
    }
    cg_case(DESO_MODE_NONE, 1, P, 5);
    cg_case(DESO_MODE_FULL, 0, 0, 1);
    TU_SYNC();
}

/* Each reduction's result read by the next node, and NV idamax whose
 * results are read only after all of them have been posted.            */
static void reader_case(deso_mode mode, int pr, int pc, int64_t n)
{
    tu_label("reader %s %dx%d n=%lld", deso_mode_name(mode), pr, pc,
             (long long)n);
    deso_ctx *ctx = tu_ctx_mode(mode, pr, pc, 4);
    int in = (int)n;
    size_t sz = (size_t)n;
    double *A = malloc(sz * sz * sizeof *A);
    double *v = malloc((NV + 3) * sz * sizeof *v);
    double *y = v + NV * sz, *q = y + sz, *got = q + sz;
    tu_rng rng = {4242};
    tu_fill(&rng, A, (int64_t)(sz * sz));
    tu_fill(&rng, v, (int64_t)(NV * sz));
    deso_mat *dA;
    deso_vec *dv[NV], *dy, *dq;
    deso_scalar *s[NV + 2];
    TU_CALL(deso_mat_from_array(ctx, n, n, A, n, DESO_ALL_RANKS, &dA));
    for (int k = 0; k < NV; k++) dv[k] = tu_vec_of(ctx, n, v + k * sz);
    for (int k = 0; k < NV + 2; k++)
        TU_CALL(deso_scalar_create(ctx, 0.0, &s[k]));
    dy = tu_vec_of(ctx, n, v);
    TU_CALL(deso_vec_create(ctx, n, &dq));
    TU_CALL(deso_flush(ctx));
    /* y = v0 + (v0.v1) v1; q = A y; s1 = q.q; y += s1 v2 (read at once)  */
    TU_CALL(deso_ddot(n, dv[0], 1, dv[1], 1, s[NV]));
    TU_CALL(deso_daxpy(n, s[NV], dv[1], 1, dy, 1));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, dA, n, dy,
                       1, 0.0, dq, 1));
    TU_CALL(deso_ddot(n, dq, 1, dq, 1, s[NV + 1]));
    TU_CALL(deso_daxpy(n, s[NV + 1], dv[2], 1, dy, 1));
    for (int k = 0; k < NV; k++) TU_CALL(deso_idamax(n, dv[k], 1, s[k]));
    for (int k = 0; k < NV; k++) TU_CALL(deso_daxpy(n, s[k], dv[k], 1, dy, 1));
    tu_fetch(dy, got);
    memcpy(y, v, sz * sizeof *y);
    cblas_daxpy(in, cblas_ddot(in, v, 1, v + sz, 1), v + sz, 1, y, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, in, in, 1.0, A, in, y, 1, 0.0, q,
                1);
    cblas_daxpy(in, cblas_ddot(in, q, 1, q, 1), v + 2 * sz, 1, y, 1);
    for (int k = 0; k < NV; k++)
        cblas_daxpy(in, (double)cblas_idamax(in, v + k * sz, 1), v + k * sz,
                    1, y, 1);
    TU_CHECK(tu_relerr(got, y, n) < 1e-12);
    free(A);
    free(v);
    TU_OK(deso_finalize(&ctx));
    tu_case_end();
}

static void readers_wait(void **state)
{
    (void)state;
    int grids[4][2], ng = tu_grids(grids), P = tu_size();
    for (int m = 0; m < TU_NMODES; m++) {
        reader_case(tu_mode(m), 1, P, 23);
        for (int g = 0; g < ng && tu_long(); g++)
            if (grids[g][0] != 1)
                reader_case(tu_mode(m), grids[g][0], grids[g][1], 23);
    }
    reader_case(DESO_MODE_NONE, 0, 0, 1);
    reader_case(DESO_MODE_FULL, 0, 0, 3);
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(cg_overlaps), cmocka_unit_test(readers_wait))
