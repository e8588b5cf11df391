/* bench_args.h: the command line the MPI micro-benchmarks share (pingpong,
 * read_bw, mpi_latency): integer options "--name V" each with its range,
 * --json, and --help.  Header-only, so that a benchmark built on its own
 * (mpi_latency for Open MPI, by scripts/openmpi-latency.sh) needs nothing
 * else.                                                                   */
#ifndef DESO_BENCH_ARGS_H
#define DESO_BENCH_ARGS_H

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_opt {
    const char *name;          /* "--reps"                                  */
    long *dst;
    long lo, hi;               /* accepted range                            */
} bench_opt;

static inline int bench_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Parses argv against opts[0 .. n).  Returns 0 when every option was good,
 * 1 for --help or -h, -1 for a bad one (its reason, one line, in err). */
static inline int bench_args(int argc, char **argv, const bench_opt *opts,
                             int n, int *json, char *err, size_t errlen)
{
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if (strcmp(a, "--json") == 0) {
            *json = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 1;
        const bench_opt *o = NULL;
        for (int j = 0; j < n && o == NULL; j++)
            if (strcmp(a, opts[j].name) == 0) o = &opts[j];
        if (o == NULL) {
            snprintf(err, errlen, "unknown option '%s'", a);
            return -1;
        }
        if (k + 1 >= argc) {
            snprintf(err, errlen, "option %s needs a value", a);
            return -1;
        }
        if (bench_parse_long(argv[k + 1], o->lo, o->hi, o->dst) != 0) {
            snprintf(err, errlen, "%s must be an integer in [%ld, %ld], got '%s'",
                     a, o->lo, o->hi, argv[k + 1]);
            return -1;
        }
        k++;
    }
    return 0;
}

/* A benchmark's start, after MPI_Init: parses argv (bench_args), prints
 * the usage for --help, or "prog: reason" on stderr for a bad option or
 * fewer than min_ranks ranks (rank 0 prints).  Returns -1 to go on, else
 * the code main returns, MPI already finalized.                          */
static inline int bench_start(int argc, char **argv, const char *prog,
                              const char *usage, const bench_opt *opts, int n,
                              int min_ranks, int *json)
{
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char err[200] = "";
    int parsed = bench_args(argc, argv, opts, n, json, err, sizeof err);
    if (parsed == 1) {
        if (rank == 0) printf("usage: %s %s\n", argv[0], usage);
        MPI_Finalize();
        return 0;
    }
    if (parsed == 0 && nprocs < min_ranks)
        snprintf(err, sizeof err, "needs at least %d ranks, running on %d",
                 min_ranks, nprocs);
    if (err[0] == '\0') return -1;
    if (rank == 0) fprintf(stderr, "%s: %s\n", prog, err);
    MPI_Finalize();
    return 2;
}

#endif
