/* mpi_latency: what the MPI library itself costs for the small messages a
 * small CG iteration sends, so that a benchmark can tell the MPI's share of
 * an iteration from the share of the code on top of it:
 *   - ping-pong between ranks 0 and 1, one-way time of 8 and of 400 bytes;
 *   - an 8-byte MPI_Allreduce (one double, MPI_SUM) over all ranks, the
 *     size of a CG dot product's reduction.
 * One source for both MPIs: make builds it with MPICH into
 * BUILD/bench/mpi_latency; scripts/bench-sweep.sh builds the same file with
 * mpicc.openmpi for Open MPI (never part of make all).
 *
 *   mpiexec.mpich -n P mpi_latency [--reps R] [--rounds K] [--json]
 *   mpiexec.openmpi -n P mpi_latency_openmpi ...          (P >= 2 for both)
 *
 * Each figure: a warm-up round, then K rounds (default 15) of R operations
 * back to back (default 5000), timed on rank 0 from a barrier; a round's
 * figure is its time per operation (halved for the ping-pong's round trip).
 * Printed: the median and the minimum over the rounds, in seconds.  --json
 * prints on rank 0 one line:
 *   {"impl":"mpi_latency","mpi":"...","p":..,"reps":..,"rounds":..,
 *    "pingpong_8":..,"pingpong_8_min":..,"pingpong_400":..,
 *    "pingpong_400_min":..,"allreduce_8":..,"allreduce_8_min":..}
 * "mpi" is the first line of MPI_Get_library_version, shortened.
 * Bad options: one line on stderr, exit 2.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"

#define MAX_ROUNDS 1000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median and minimum of t[0..k-1] (sorts t) */
static void summarise(double *t, long k, double *med, double *min)
{
    qsort(t, (size_t)k, sizeof *t, cmp_double);
    *min = t[0];
    *med = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
}

/* One round of `reps` round trips of `bytes` between ranks 0 and 1: the
 * one-way time per message on rank 0 (ranks beyond 1 return 0). */
static double pingpong_round(int rank, char *buf, int bytes, long reps)
{
    if (rank > 1)
        return 0.0;
    int peer = 1 - rank;
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / (2.0 * (double)reps);
}

/* One round of `reps` 8-byte all-reduces: the time per call. */
static double allreduce_round(long reps)
{
    double in = 1.0, out = 0.0;
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        in = out * 0.5; /* a data dependence, as a solver's reductions have */
    }
    return (MPI_Wtime() - t0) / (double)reps;
}

/* kind 0: ping-pong of `bytes`; kind 1: all-reduce.  Median and minimum on
 * rank 0 over `rounds` rounds after a warm-up round. */
static void measure(int rank, int kind, char *buf, int bytes, long reps, long rounds,
                    double *med, double *min)
{
    static double t[MAX_ROUNDS];
    for (long k = -1; k < rounds; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double v = kind == 0 ? pingpong_round(rank, buf, bytes, reps) : allreduce_round(reps);
        if (k >= 0)
            t[k] = v;
    }
    summarise(t, rounds, med, min);
}

/* The library's name and version: the first line of its version string,
 * "Version:" and tabs dropped, cut at the first comma, no JSON specials. */
static void library_name(char *out, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int vl = 0;
    MPI_Get_library_version(v, &vl);
    v[vl < MPI_MAX_LIBRARY_VERSION_STRING ? vl : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    v[strcspn(v, "\n,")] = '\0';
    char *ver = strstr(v, "Version:");
    if (ver != NULL)
        memmove(ver, ver + 8, strlen(ver + 8) + 1);
    size_t o = 0;
    for (const char *c = v; *c != '\0' && o + 1 < len; c++) {
        char ch = (*c == '\t') ? ' ' : *c;
        if (ch == '"' || ch == '\\' || (unsigned char)ch < 32)
            continue;
        if (ch == ' ' && (o == 0 || out[o - 1] == ' '))
            continue;
        out[o++] = ch;
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    long reps = 5000, rounds = 15;
    int json = 0;
    const bench_opt opts[] = {
        {"--reps", &reps, 1, 100000000},
        {"--rounds", &rounds, 1, MAX_ROUNDS},
    };
    int rc = bench_start(argc, argv, "mpi_latency",
                         "[--reps R] [--rounds K] [--json]",
                         opts, (int)(sizeof opts / sizeof opts[0]), 2,
                         &json);
    if (rc >= 0) return rc;

    char buf[400];
    memset(buf, 1, sizeof buf);
    double pp8, pp8_min, pp400, pp400_min, ar8, ar8_min;
    measure(rank, 0, buf, 8, reps, rounds, &pp8, &pp8_min);
    measure(rank, 0, buf, 400, reps, rounds, &pp400, &pp400_min);
    measure(rank, 1, buf, 8, reps, rounds, &ar8, &ar8_min);

    if (rank == 0) {
        char name[96];
        library_name(name, sizeof name);
        if (json)
            printf("{\"impl\":\"mpi_latency\",\"mpi\":\"%s\",\"p\":%d,\"reps\":%ld,"
                   "\"rounds\":%ld,\"pingpong_8\":%.6e,\"pingpong_8_min\":%.6e,"
                   "\"pingpong_400\":%.6e,\"pingpong_400_min\":%.6e,"
                   "\"allreduce_8\":%.6e,\"allreduce_8_min\":%.6e}\n",
                   name, nprocs, reps, rounds, pp8, pp8_min, pp400, pp400_min, ar8,
                   ar8_min);
        else
            printf("mpi_latency (%s, P = %d): ping-pong one way 8 B %.3f us, 400 B %.3f us;"
                   " all-reduce 8 B %.3f us (medians of %ld rounds of %ld)\n",
                   name, nprocs, 1e6 * pp8, 1e6 * pp400, 1e6 * ar8, rounds, reps);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
