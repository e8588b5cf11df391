/* soak_cg: a long CG run through deso.h, for leak and memory-growth checks
 * (scripts/soak.sh runs it under valgrind and with RSS sampling).
 *
 *   mpiexec.mpich -n P soak_cg [--n N] [--iters K] [--every E] [--mode M]
 *
 * CG on a(i,j) = 1/(1+|i-j|) + n [i == j] with b = A * ones.  The residual
 * is read every iteration (a force point, as in examples/cg.c), so the
 * plan cache replays one plan per iteration; CG restarts from x = 0 when
 * it has converged (||r|| / ||b|| < 1e-12), so the DAG of every iteration
 * stays well defined for any K.  Every E iterations rank 0 prints
 *   iter K rss_kb R max_rss_kb M restarts S
 * (R: rank 0's VmRSS, M: the largest over ranks), and finally
 *   soak: n N P P iters K restarts S plans_optimised A plans_replayed B
 * Exit code 0 on success, 1 on a deso error.                              */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso/deso.h"

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

static double a_fn(int64_t i, int64_t j, void *arg)
{
    int64_t n = *(const int64_t *)arg;
    int64_t d = i > j ? i - j : j - i;
    return 1.0 / (double)(1 + d) + (i == j ? (double)n : 0.0);
}

static double b_fn(int64_t i, void *arg)
{
    int64_t n = *(const int64_t *)arg;
    double s = 0.0;
    for (int64_t j = 0; j < n; j++) s += a_fn(i, j, arg);
    return s;
}

static int me;

#define D(call)                                                              \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != DESO_OK) {                                                 \
            fprintf(stderr, "soak_cg (rank %d): %s: %s (%s)\n", me, #call,   \
                    deso_errname(e_), deso_last_error());                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                    \
        }                                                                    \
    } while (0)

static long arg_long(int argc, char **argv, const char *name, long dflt)
{
    for (int k = 1; k + 1 < argc; k++)
        if (strcmp(argv[k], name) == 0) return strtol(argv[k + 1], NULL, 10);
    return dflt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int64_t n = arg_long(argc, argv, "--n", 50);
    long iters = arg_long(argc, argv, "--iters", 10000);
    long every = arg_long(argc, argv, "--every", 1000);
    if (n < 1 || iters < 0 || every < 1) {
        if (me == 0) fprintf(stderr, "soak_cg: bad arguments\n");
        MPI_Finalize();
        return 2;
    }
    deso_options opt;
    deso_options_default(&opt);
    for (int k = 1; k + 1 < argc; k++)
        if (strcmp(argv[k], "--mode") == 0)
            opt.mode = strcmp(argv[k + 1], "none") == 0     ? DESO_MODE_NONE
                       : strcmp(argv[k + 1], "affine") == 0 ? DESO_MODE_AFFINE
                                                            : DESO_MODE_FULL;
    deso_ctx *ctx;
    D(deso_init(MPI_COMM_WORLD, &opt, &ctx));

    deso_mat *A;
    deso_vec *b, *x, *r, *p, *q;
    deso_scalar *rr, *rrnew, *pq, *alpha, *nalpha, *beta, *bn;
    D(deso_mat_from_fn(ctx, n, n, a_fn, &n, &A));
    D(deso_vec_from_fn(ctx, n, b_fn, &n, &b));
    D(deso_vec_create(ctx, n, &x));
    D(deso_vec_create(ctx, n, &r));
    D(deso_vec_create(ctx, n, &p));
    D(deso_vec_create(ctx, n, &q));
    D(deso_scalar_create(ctx, 0.0, &rr));
    D(deso_scalar_create(ctx, 0.0, &rrnew));
    D(deso_scalar_create(ctx, 0.0, &pq));
    D(deso_scalar_create(ctx, 0.0, &alpha));
    D(deso_scalar_create(ctx, 0.0, &nalpha));
    D(deso_scalar_create(ctx, 0.0, &beta));
    D(deso_scalar_create(ctx, 0.0, &bn));
    D(deso_dnrm2(n, b, 1, bn));
    double bnv;
    D(deso_scalar_get(bn, &bnv));

    long restarts = 0;
    int fresh = 1;
    for (long it = 1; it <= iters; it++) {
        if (fresh) {   /* (re)start: x = 0, r = p = b                      */
            D(deso_dscal(n, 0.0, x, 1));
            D(deso_dcopy(n, b, 1, r, 1));
            D(deso_dcopy(n, r, 1, p, 1));
            D(deso_ddot(n, r, 1, r, 1, rr));
            fresh = 0;
        }
        D(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, p, 1,
                     0.0, q, 1));
        D(deso_ddot(n, p, 1, q, 1, pq));
        D(deso_sdiv(alpha, rr, pq));
        D(deso_daxpy(n, alpha, p, 1, x, 1));
        D(deso_sneg(nalpha, alpha));
        D(deso_daxpy(n, nalpha, q, 1, r, 1));
        D(deso_ddot(n, r, 1, r, 1, rrnew));
        D(deso_sdiv(beta, rrnew, rr));
        D(deso_dscal(n, beta, p, 1));
        D(deso_daxpy(n, 1.0, r, 1, p, 1));
        D(deso_sset(rr, rrnew));
        double rrv;
        D(deso_scalar_get(rr, &rrv));
        if (!(sqrt(rrv) / bnv >= 1e-12)) {   /* converged (or NaN)          */
            fresh = 1;
            restarts++;
        }
        if (it % every == 0) {
            long mine = rss_kb(), most = 0;
            MPI_Reduce(&mine, &most, 1, MPI_LONG, MPI_MAX, 0,
                       MPI_COMM_WORLD);
            if (me == 0) {
                printf("iter %ld rss_kb %ld max_rss_kb %ld restarts %ld\n",
                       it, mine, most, restarts);
                fflush(stdout);
            }
        }
    }
    deso_stats st;
    D(deso_stats_get(&st));
    if (me == 0)
        printf("soak: n %lld P %d iters %ld restarts %ld plans_optimised "
               "%lld plans_replayed %lld\n",
               (long long)n, P, iters, restarts,
               (long long)st.plans_optimised, (long long)st.plans_replayed);
    D(deso_mat_destroy(&A));
    D(deso_vec_destroy(&b));
    D(deso_finalize(&ctx));
    MPI_Finalize();
    return 0;
}
