/* deso-cg: conjugate gradient through deso, the same algorithm as
 * examples/cg_cblas.c with deso handles in place of arrays (diff them: only
 * declarations and call names differ, as far as C allows).
 *
 *   mpiexec -n P deso-cg [--n N] [--iters K] [--tol T] [--mode none|affine|full]
 *                        [--grid RxC] [--nb NB] [--json] [--verbose]
 *
 * Problem (cg_problem.h): a(i,j) = 1/(1+|i-j|) generated where
 * it lives (no rank ever holds the whole matrix), b = A * ones, x0 = 0.
 * Stops when ||r||/||b|| < T (T = 0 runs all K iterations); the residual
 * reported is the true ||b - A x|| / ||b|| computed after the last
 * iteration.  Prints paper 003's Table 1 categories; --json prints one line
 * on rank 0 (bytes and messages summed over ranks, times of rank 0).      */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso.h"

#include "cg_problem.h"

static int rank0;
static deso_ctx *ctx;

static void fail(deso_err e, const char *what)
{
    if (rank0)
        fprintf(stderr, "deso-cg: %s: %s (%s)\n", what, deso_strerror(e),
                deso_last_error());
    deso_finalize(&ctx);
    MPI_Finalize();
    exit(1);
}

#define D(call)                                                              \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != DESO_OK) fail(e_, #call);                                  \
    } while (0)

static double a_fn(int64_t i, int64_t j, void *arg)
{
    return cg_problem_a(*(const long *)arg, (long)i, (long)j);
}

static double b_fn(int64_t i, void *arg)
{
    return cg_problem_b(*(const long *)arg, (long)i);
}

/* Splits off the options cg_problem.h's parser does not know.            */
static int own_opts(int *argc, char **argv, deso_mode *mode, int *verbose,
                    char *err, size_t errlen)
{
    int k = 1, out = 1;
    while (k < *argc) {
        const char *a = argv[k];
        if (strcmp(a, "--verbose") == 0) {
            *verbose = 1;
            k++;
            continue;
        }
        if (strncmp(a, "--mode", 6) == 0 && (a[6] == '\0' || a[6] == '=')) {
            const char *v = a[6] == '=' ? a + 7 : (k + 1 < *argc ? argv[k + 1] : NULL);
            if (v == NULL) {
                snprintf(err, errlen, "option --mode needs a value");
                return -1;
            }
            if (strcmp(v, "none") == 0) *mode = DESO_MODE_NONE;
            else if (strcmp(v, "affine") == 0) *mode = DESO_MODE_AFFINE;
            else if (strcmp(v, "full") == 0) *mode = DESO_MODE_FULL;
            else {
                snprintf(err, errlen, "--mode must be none, affine or full, got '%s'", v);
                return -1;
            }
            k += a[6] == '=' ? 1 : 2;
            continue;
        }
        argv[out++] = argv[k++];
    }
    *argc = out;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    rank0 = me == 0;

    struct cg_opts o;
    char msg[256];
    deso_mode mode = DESO_MODE_DEFAULT;
    int verbose = 0;
    int rc = own_opts(&argc, argv, &mode, &verbose, msg, sizeof msg);
    if (rc == 0) rc = cg_parse_opts(argc, argv, 1, &o, msg, sizeof msg);
    if (rc == 1 && rank0) printf("%s [--mode none|affine|full] [--verbose]\n", msg);
    if (rc < 0 && rank0) fprintf(stderr, "deso-cg: %s\n", msg);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    deso_options opt;
    deso_options_default(&opt);
    opt.mode = mode;
    opt.grid_rows = (int)o.grid_r;
    opt.grid_cols = (int)o.grid_c;
    opt.nb = o.nb;
    deso_err e = deso_init(MPI_COMM_WORLD, &opt, &ctx);
    if (e != DESO_OK) {
        if (rank0) fprintf(stderr, "deso-cg: %s\n", deso_last_error());
        MPI_Finalize();
        return 2;
    }
    deso_info info;
    D(deso_get_info(ctx, &info));
    const int64_t n = o.n;
    deso_mat *A;
    deso_vec *b, *x, *r, *p, *q, *t;
    D(deso_mat_from_fn(ctx, n, n, a_fn, &o.n, &A));
    D(deso_vec_from_fn(ctx, n, b_fn, &o.n, &b));
    D(deso_vec_create(ctx, n, &x));
    D(deso_vec_create(ctx, n, &r));
    D(deso_vec_create(ctx, n, &p));
    D(deso_vec_create(ctx, n, &q));
    D(deso_vec_create(ctx, n, &t));
    deso_scalar *rr, *rrnew, *pq, *alpha, *nalpha, *beta, *bnorm, *tnorm;
    D(deso_scalar_create(ctx, 0.0, &rr));
    D(deso_scalar_create(ctx, 0.0, &rrnew));
    D(deso_scalar_create(ctx, 0.0, &pq));
    D(deso_scalar_create(ctx, 0.0, &alpha));
    D(deso_scalar_create(ctx, 0.0, &nalpha));
    D(deso_scalar_create(ctx, 0.0, &beta));
    D(deso_scalar_create(ctx, 0.0, &bnorm));
    D(deso_scalar_create(ctx, 0.0, &tnorm));
    D(deso_flush(ctx));
    deso_stats_reset();

    D(deso_dcopy(n, b, 1, r, 1));
    D(deso_dcopy(n, r, 1, p, 1));
    D(deso_ddot(n, r, 1, r, 1, rr));
    D(deso_dnrm2(n, b, 1, bnorm));
    double bnormv;
    D(deso_scalar_get(bnorm, &bnormv));
    long done = 0;
    while (done < o.iters) {
        double rrv;
        D(deso_scalar_get(rr, &rrv));
        if (rrv == 0.0 || (o.tol > 0.0 && sqrt(rrv) / bnormv < o.tol))
            break;
        D(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, p, 1, 0.0, q, 1));
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
        done++;
        if (verbose && rank0) printf("deso-cg: iteration %ld\n", done);
    }
    D(deso_flush(ctx));
    deso_stats st;
    D(deso_stats_get(&st));

    /* the true residual ||b - A x|| / ||b|| (not in the statistics)        */
    D(deso_dcopy(n, b, 1, t, 1));
    D(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, -1.0, A, n, x, 1, 1.0, t, 1));
    D(deso_dnrm2(n, t, 1, tnorm));
    double tnormv;
    D(deso_scalar_get(tnorm, &tnormv));
    double residual = tnormv / bnormv;

    /* totals over ranks, outside the counted statistics                    */
    long long mine[4] = {(long long)st.bytes_p2p, (long long)st.msgs_p2p,
                         (long long)st.bytes_collective,
                         (long long)st.msgs_collective};
    long long sum[4];
    MPI_Reduce(mine, sum, 4, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank0) {
        char grid[32];
        snprintf(grid, sizeof grid, "%dx%d", info.grid_rows, info.grid_cols);
        if (o.json) {
            printf("{\"impl\":\"deso\",\"n\":%lld,\"p\":%d,\"grid\":\"%s\","
                   "\"mode\":\"%s\",\"iters\":%ld,\"residual\":%.10e,"
                   "\"time_total\":%.6e,\"time_compute\":%.6e,"
                   "\"time_overhead\":%.6e,\"time_p2p\":%.6e,"
                   "\"time_collective\":%.6e,\"time_optimise\":%.6e,"
                   "\"bytes_p2p\":%lld,\"msgs_p2p\":%lld,"
                   "\"bytes_collective\":%lld,\"msgs_collective\":%lld,"
                   "\"plans_optimised\":%lld,\"plans_replayed\":%lld}\n",
                   (long long)n, P, grid, deso_mode_name(info.mode), done,
                   residual, st.time_total, st.time_compute, st.time_overhead,
                   st.time_p2p, st.time_collective, st.time_optimise, sum[0],
                   sum[1], sum[2], sum[3], (long long)st.plans_optimised,
                   (long long)st.plans_replayed);
        } else {
            printf("deso-cg: n=%lld P=%d grid=%s mode=%s iters=%ld "
                   "residual=%.3e\n",
                   (long long)n, P, grid, deso_mode_name(info.mode), done,
                   residual);
            printf("%-22s %12s %14s %10s\n", "category", "time (ms)", "bytes",
                   "messages");
            printf("%-22s %12.3f %14s %10s\n", "computation",
                   1e3 * st.time_compute, "-", "-");
            printf("%-22s %12.3f %14s %10s\n", "runtime overhead",
                   1e3 * st.time_overhead, "-", "-");
            printf("%-22s %12.3f %14lld %10lld\n", "point-to-point",
                   1e3 * st.time_p2p, sum[0], sum[1]);
            printf("%-22s %12.3f %14lld %10lld\n", "collective",
                   1e3 * st.time_collective, sum[2], sum[3]);
            printf("%-22s %12.3f %14s %10s\n", "optimisation",
                   1e3 * st.time_optimise, "-", "-");
            printf("%-22s %12.3f %14lld %10lld\n", "total",
                   1e3 * st.time_total, sum[0] + sum[2], sum[1] + sum[3]);
            printf("plans optimised %lld, replayed %lld (times: rank 0; "
                   "bytes, messages: all ranks)\n",
                   (long long)st.plans_optimised,
                   (long long)st.plans_replayed);
        }
    }
    D(deso_vec_destroy(&t));
    D(deso_finalize(&ctx));
    MPI_Finalize();
    return 0;
}
