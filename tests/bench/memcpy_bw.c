/* memcpy_bw: the bandwidth of memcpy on this machine, the yardstick of
 * scripts/bench-remap.sh (a remap cannot beat one copy of the array).
 *
 *   [mpiexec.mpich -n P] memcpy_bw [--mb MB] [--reps R] [--json]
 *
 * Measured the way deso-remap measures a remap: an array of MB megabytes
 * (default 128: a vector of 2^24 doubles) is split evenly over the P ranks
 * (P = 1 without mpiexec.mpich); every rank copies its share to another array at
 * the same time (after a barrier), R times (default 10) after a warm-up copy
 * that also faults the pages in.  A copy's time is the slowest rank's, and
 * bandwidth = array bytes / time (each byte counted once, as deso-remap
 * counts array bytes once per remap).  Reports memcpy_gbs from the mean
 * time over the R copies (deso-remap reports the mean of its repetitions)
 * and best_gbs from the fastest.  Prints, on rank 0,
 * {"memcpy_gbs":..,"best_gbs":..,"mb":..,"ranks":..,"reps":..} with --json. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (s == NULL || errno || end == s || *end || v < 1 || v > 1L << 20)
        return 0;
    *out = v;
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long mb = 128, reps = 10;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--mb") && parse_long(argv[i + 1], &mb)) {
            i++;
        } else if (!strcmp(argv[i], "--reps") &&
                   parse_long(argv[i + 1], &reps)) {
            i++;
        } else {
            if (me == 0)
                fprintf(stderr, "memcpy_bw: bad option '%s' (usage: "
                        "memcpy_bw [--mb MB] [--reps R] [--json])\n",
                        argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    size_t total = (size_t)mb << 20;
    size_t bytes = total / (size_t)np + 1;  /* this rank's share (>= 1)   */
    char *a = malloc(bytes), *b = malloc(bytes);
    int ok = a != NULL && b != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (me == 0)
            fprintf(stderr, "memcpy_bw: cannot allocate 2 x %ld MB / %d\n",
                    mb, np);
        free(a);
        free(b);
        MPI_Finalize();
        return 1;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    memcpy(b, a, bytes);
    double best = 1e30, sum = 0.0;
    for (long k = 0; k < reps; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        memcpy(b, a, bytes);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD);
        if (t < best) best = t;
        sum += t;
        a[(size_t)k % bytes] = b[((size_t)k * 4099) % bytes]; /* keep live */
    }
    double gbs = (double)total / (sum / (double)reps) / 1e9;
    double bgbs = (double)total / best / 1e9;
    if (me == 0) {
        if (json)
            printf("{\"memcpy_gbs\":%.4f,\"best_gbs\":%.4f,\"mb\":%ld,"
                   "\"ranks\":%d,\"reps\":%ld}\n", gbs, bgbs, mb, np, reps);
        else
            printf("memcpy: %.3f GB/s mean, %.3f best (%ld MB over %d "
                   "ranks at once, %ld reps)\n", gbs, bgbs, mb, np, reps);
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
