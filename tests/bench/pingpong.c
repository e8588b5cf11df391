/* pingpong: calibrates the alpha-beta cost model (doc/DESIGN.md, "Cost
 * model").
 * Ranks 0 and 1 bounce a message back and forth for a few sizes; the one-way
 * time of a message of m bytes is modelled as t(m) = alpha + beta * m and
 * (alpha, beta) are fitted by least squares over the sizes (each size's time
 * is the best of several rounds of `reps` round trips, halved).
 *
 *   mpiexec.mpich -n 2 pingpong [--reps R] [--rounds K] [--max-bytes B] [--json]
 *
 * Sizes: 8 bytes, then powers of 4 times 64 bytes up to --max-bytes (default
 * 4 MiB). Ranks beyond 1 only wait. --json prints on rank 0 one line:
 *   {"impl":"pingpong","p":..,"alpha":..,"beta":..,"sizes":[..],"times":[..]}
 * alpha in seconds, beta in seconds per byte, times are one-way seconds.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"

#define MAX_SIZES 32

/* One-way time of a message of `bytes`: best over `rounds` rounds of `reps`
 * round trips between ranks 0 and 1. Only ranks 0 and 1 call this. */
static double one_way(int rank, char *buf, long bytes, long reps, long rounds)
{
    double best = 1e300;
    int peer = 1 - rank;
    int count = (int)bytes;
    /* warm-up round trip */
    if (rank == 0) {
        MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
    for (long k = 0; k < rounds; k++) {
        double t0 = MPI_Wtime();
        for (long r = 0; r < reps; r++) {
            if (rank == 0) {
                MPI_Send(buf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) / (2.0 * (double)reps);
        if (t < best)
            best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    long reps = 200, rounds = 5, max_bytes = 4L << 20;
    int json = 0;
    const bench_opt opts[] = {
        {"--reps", &reps, 1, 1000000},
        {"--rounds", &rounds, 1, 1000},
        {"--max-bytes", &max_bytes, 64, 1L << 30},
    };
    int rc = bench_start(argc, argv, "pingpong",
                         "[--reps R] [--rounds K] [--max-bytes B] [--json]",
                         opts, (int)(sizeof opts / sizeof opts[0]), 2,
                         &json);
    if (rc >= 0) return rc;

    long sizes[MAX_SIZES];
    int ns = 0;
    sizes[ns++] = 8;
    for (long m = 64; m <= max_bytes && ns < MAX_SIZES; m *= 4)
        sizes[ns++] = m;
    double times[MAX_SIZES];

    char *buf = malloc((size_t)max_bytes);
    int ok = buf != NULL, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rank == 0)
            fprintf(stderr, "pingpong: out of memory for %ld bytes\n", max_bytes);
        free(buf);
        MPI_Finalize();
        return 1;
    }
    memset(buf, 1, (size_t)max_bytes);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < 2) {
        for (int s = 0; s < ns; s++) {
            /* fewer round trips for big messages: keep each size ~ equally long */
            long r = reps;
            if (sizes[s] >= (1L << 16))
                r = reps / (sizes[s] >> 14) > 4 ? reps / (sizes[s] >> 14) : 4;
            times[s] = one_way(rank, buf, sizes[s], r, rounds);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);

    if (rank == 0) {
        /* least squares t = alpha + beta m, weighted by 1/t^2 (relative error),
         * so the small sizes that decide alpha are not swamped by the big ones */
        double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int s = 0; s < ns; s++) {
            double w = 1.0 / (times[s] * times[s]);
            double x = (double)sizes[s], y = times[s];
            sw += w;
            sx += w * x;
            sy += w * y;
            sxx += w * x * x;
            sxy += w * x * y;
        }
        double det = sw * sxx - sx * sx;
        double beta = det != 0.0 ? (sw * sxy - sx * sy) / det : 0.0;
        double alpha = (sy - beta * sx) / sw;
        if (alpha < 0.0)
            alpha = times[0];
        if (json) {
            printf("{\"impl\":\"pingpong\",\"p\":%d,\"alpha\":%.6e,\"beta\":%.6e,\"sizes\":[",
                   nprocs, alpha, beta);
            for (int s = 0; s < ns; s++)
                printf("%s%ld", s ? "," : "", sizes[s]);
            printf("],\"times\":[");
            for (int s = 0; s < ns; s++)
                printf("%s%.6e", s ? "," : "", times[s]);
            printf("]}\n");
        } else {
            printf("pingpong: alpha = %.3f us, beta = %.4f ns/byte (%.2f GB/s)\n",
                   1e6 * alpha, 1e9 * beta, beta > 0 ? 1e-9 / beta : 0.0);
            for (int s = 0; s < ns; s++)
                printf("  %10ld bytes  %10.3f us\n", sizes[s], 1e6 * times[s]);
        }
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
