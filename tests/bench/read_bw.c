/* read_bw: the machine's memory read bandwidth, and what one dgemv gets of it.
 *
 *   [mpiexec.mpich -n P] read_bw [--n N] [--mb MB] [--reps R] [--json]
 *
 * 1. Streaming sum over an array of MB megabytes per rank (default 1024, well
 *    beyond the 300 MB last-level cache), R repetitions (default 5), best time.
 *    Four streams, eight independent accumulators: limited by memory, not by
 *    the floating-point add latency.
 * 2. cblas_dgemv (y = A x, column-major, no transpose) on an n x n matrix
 *    (default n = 8000), R repetitions, best time; bandwidth = 8 n^2 bytes /
 *    time (the matrix read; the vectors are negligible).
 * With P > 1 ranks every rank does the same work at the same moment (barrier
 * before each repetition) and the figures are aggregates: P x bytes / slowest
 * rank's time, i.e. what P ranks on this node get together.
 * Prints on rank 0 (--json: one line):
 *   {"read_gbs":..,"dgemv_gbs":..,"dgemv_time":..,"n":..,"p":..,"mb":..}
 * Run with OPENBLAS_NUM_THREADS=1.
 */
#include <cblas.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "stream_read.h"

/* Slowest rank's time of the same timed section. */
static double max_time(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    long n = 8000, mb = 1024, reps = 5;
    int json = 0;
    const bench_opt opts[] = {
        {"--n", &n, 1, 100000},
        {"--mb", &mb, 1, 1 << 20},
        {"--reps", &reps, 1, 1000},
    };
    int rc = bench_start(argc, argv, "read_bw",
                         "[--n N] [--mb MB] [--reps R] [--json]",
                         opts, (int)(sizeof opts / sizeof opts[0]), 1,
                         &json);
    if (rc >= 0) return rc;

    /* 1. streaming read */
    size_t len = (size_t)mb * (1u << 20) / sizeof(double);
    double *x = malloc(len * sizeof *x);
    int ok = x != NULL, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rank == 0)
            fprintf(stderr, "read_bw: out of memory for %ld MB per rank\n", mb);
        free(x);
        MPI_Finalize();
        return 1;
    }
    for (size_t i = 0; i < len; i++) /* touch every page */
        x[i] = 1.0 / (double)(1 + (i & 1023));
    double best_read = 1e300, sink = 0.0;
    for (long r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        sink += stream_sum(x, len);
        double t = max_time(MPI_Wtime() - t0);
        if (t < best_read)
            best_read = t;
    }
    free(x);
    double read_gbs = (double)nprocs * (double)len * sizeof(double) / best_read * 1e-9;

    /* 2. one dgemv on an n x n matrix */
    size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a);
    double *v = malloc(2 * (size_t)n * sizeof *v);
    ok = a != NULL && v != NULL;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rank == 0)
            fprintf(stderr, "read_bw: out of memory for n = %ld\n", n);
        free(a);
        free(v);
        MPI_Finalize();
        return 1;
    }
    for (size_t i = 0; i < nn; i++)
        a[i] = 1.0 / (double)(1 + (i & 1023));
    for (long i = 0; i < n; i++)
        v[i] = 1.0;
    double best_gemv = 1e300;
    for (long r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        cblas_dgemv(CblasColMajor, CblasNoTrans, (int)n, (int)n, 1.0, a, (int)n, v, 1, 0.0,
                    v + n, 1);
        double t = max_time(MPI_Wtime() - t0);
        sink += v[n];
        if (t < best_gemv)
            best_gemv = t;
    }
    free(a);
    free(v);
    double dgemv_gbs = (double)nprocs * 8.0 * (double)nn / best_gemv * 1e-9;

    if (rank == 0) {
        if (json)
            printf("{\"read_gbs\":%.3f,\"dgemv_gbs\":%.3f,\"dgemv_time\":%.6e,\"n\":%ld,"
                   "\"p\":%d,\"mb\":%ld}\n",
                   read_gbs, dgemv_gbs, best_gemv, n, nprocs, mb);
        else
            printf("read_bw: p=%d read %.2f GB/s (%ld MB/rank, best of %ld); dgemv n=%ld "
                   "%.3f ms, %.2f GB/s%s\n",
                   nprocs, read_gbs, mb, reps, n, 1e3 * best_gemv, dgemv_gbs,
                   sink == 0.0 ? " " : "");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
