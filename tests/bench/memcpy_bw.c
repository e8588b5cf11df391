/* memcpy_bw: the bandwidth of memcpy on this machine, the yardstick of
 * scripts/bench-remap.sh (a remap cannot beat one copy of the array).
 *
 *   memcpy_bw [--mb MB] [--reps R] [--json]
 *
 * Copies MB megabytes (default 128: a vector of 2^24 doubles) from one
 * array to another R times (default 10) after a warm-up copy that also
 * faults the pages in, and reports the best: bytes copied / time (each
 * byte counted once, as the remap benchmark counts array bytes).  One
 * process, no MPI.  Prints {"memcpy_gbs":..,"mb":..,"reps":..} with --json. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

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
            fprintf(stderr, "memcpy_bw: bad option '%s' (usage: memcpy_bw "
                    "[--mb MB] [--reps R] [--json])\n", argv[i]);
            return 2;
        }
    }
    size_t bytes = (size_t)mb << 20;
    char *a = malloc(bytes), *b = malloc(bytes);
    if (a == NULL || b == NULL) {
        fprintf(stderr, "memcpy_bw: cannot allocate 2 x %ld MB\n", mb);
        return 1;
    }
    memset(a, 1, bytes);
    memcpy(b, a, bytes);
    double best = 1e30;
    for (long k = 0; k < reps; k++) {
        double t0 = now();
        memcpy(b, a, bytes);
        double t = now() - t0;
        if (t < best) best = t;
        a[k % (long)bytes] = b[(k * 4099) % (long)bytes]; /* keep it live */
    }
    double gbs = (double)bytes / best / 1e9;
    if (json)
        printf("{\"memcpy_gbs\":%.4f,\"mb\":%ld,\"reps\":%ld}\n", gbs, mb,
               reps);
    else
        printf("memcpy: %.3f GB/s (%ld MB, best of %ld)\n", gbs, mb, reps);
    free(a);
    free(b);
    return 0;
}
