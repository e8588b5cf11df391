/* spmv_bw: the effective memory bandwidth of deso's sparse product, set
 * against the machine's read bandwidth measured in the same process.
 *
 *   [mpiexec.mpich -n P] spmv_bw [--gen SPEC] [--passes K] [--reps R]
 *                                [--mb MB] [--plain 0|1] [--json]
 *
 * SPEC is a deso_spmat_from_gen generator (default lap3d:250: n = 15.6
 * million, 109 million entries, about 1.4 GB of CSR with 32-bit columns,
 * several times the last-level cache).  K passes (default 5), each:
 *   1. the streaming read of read_bw (stream_read.h) over MB megabytes per
 *      rank (default 1024), best of 3;
 *   2. R products y = A x through deso (deso_dusmv, then deso_flush: what
 *      a program pays for a product, recording and executing included),
 *      best of R (default 10);
 *   3. with --plain 1 (default, P = 1 only) R products by a plain C loop
 *      over the same CSR arrays with 32-bit columns: what the kernel could
 *      reach without deso around it.
 * 2 and 3 swap places every other pass.  The bytes a product moves are
 * counted as a product must move them at least: values (8 B) and column
 * indices (4 B) per entry, row pointers (8 B per row, plus one per rank),
 * x read once and y written once (8 B per entry each); halo entries and
 * write-allocate traffic are not counted.  GB/s = bytes / best time; each
 * pass's ratio is the product's GB/s over that pass's read GB/s, so load
 * from other processes falls on both sides of a ratio alike.  Two clocks:
 * the process's CPU time (the figures without suffix: on a machine whose
 * cores other processes share, what the code gets while it runs, not how
 * often the scheduler lets it) and wall time (suffix _wall).
 * With P > 1 ranks the figures are aggregates (bytes of all ranks over the
 * slowest rank's time), as in read_bw.
 * Prints on rank 0 (--json: one line) the per-pass arrays:
 *   {"impl":"spmv","problem":..,"n":..,"nnz":..,"p":..,"bytes":..,
 *    "passes":..,"reps":..,"read_gbs":[..],"deso_gbs":[..],
 *    "plain_gbs":[..],"deso_ratio":[..],"plain_ratio":[..]}
 * Run with OPENBLAS_NUM_THREADS=1.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deso/deso.h"
#include "bench_args.h"
#include "stream_read.h"

#define MAX_PASSES 100

typedef struct plain_csr {
    int64_t nrows;
    int64_t *rowptr;
    int32_t *col;
    double *val;
} plain_csr;

/* Seconds by the two clocks, or GB/s by them.                            */
typedef struct two_clocks {
    double cpu, wall;
} two_clocks;

typedef struct pass_result {
    two_clocks read, deso, plain; /* GB/s; plain 0 when not measured       */
} pass_result;

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static two_clocks clocks_now(void)
{
    return (two_clocks){cpu_now(), MPI_Wtime()};
}

/* The slowest rank's time since t0 by each clock, kept in best when
 * shorter.                                                               */
static void keep_best(two_clocks t0, two_clocks *best)
{
    two_clocks t = clocks_now(), m;
    t.cpu -= t0.cpu;
    t.wall -= t0.wall;
    MPI_Allreduce(&t, &m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (m.cpu < best->cpu) best->cpu = m.cpu;
    if (m.wall < best->wall) best->wall = m.wall;
}

static two_clocks rate(double bytes, two_clocks t)
{
    return (two_clocks){bytes * 1e-9 / t.cpu, bytes * 1e-9 / t.wall};
}

static int all_ok(int ok)
{
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static double x_entry(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 + 0.125 * (double)(i & 7);
}

/* The plain C product the deso kernel is measured against: the sequential
 * twin's loop (examples/sparse_problem.h) on 32-bit columns.             */
static void plain_mv(const plain_csr *a, const double *restrict x,
                     double *restrict y)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = 0.0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            s += a->val[k] * x[a->col[k]];
        y[i] = s;
    }
}

/* The matrix's rows (one rank: the whole matrix) with 32-bit columns, and
 * x and y for the plain loop; 0 when out of memory.                      */
static int plain_make(deso_spmat *A, plain_csr *a, double **x, double **y)
{
    int64_t row0, nrows, nnz;
    deso_spmat_local(A, &row0, &nrows, &nnz);
    a->nrows = nrows;
    a->rowptr = malloc((size_t)(nrows + 1) * sizeof *a->rowptr);
    int64_t *col = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *col);
    a->val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *a->val);
    a->col = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *a->col);
    *x = malloc((size_t)(nrows > 0 ? nrows : 1) * sizeof **x);
    *y = malloc((size_t)(nrows > 0 ? nrows : 1) * sizeof **y);
    int ok = a->rowptr && col && a->val && a->col && *x && *y &&
             deso_spmat_local_rows(A, a->rowptr, col, a->val) == DESO_OK;
    for (int64_t k = 0; ok && k < nnz; k++)
        a->col[k] = (int32_t)col[k];
    for (int64_t i = 0; ok && i < nrows; i++) {
        (*x)[i] = x_entry(i, NULL);
        (*y)[i] = 0.0;
    }
    free(col);
    return ok;
}

static void plain_free(plain_csr *a, double *x, double *y)
{
    free(a->rowptr);
    free(a->col);
    free(a->val);
    free(x);
    free(y);
}

/* Best times of reps streaming reads of x[0 .. len).                     */
static two_clocks time_read(const double *x, size_t len, long reps,
                            double *sink)
{
    two_clocks best = {1e300, 1e300};
    for (long r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        two_clocks t0 = clocks_now();
        *sink += stream_sum(x, len);
        keep_best(t0, &best);
    }
    return best;
}

/* Best times of reps products y = A x through deso, each forced; a
 * negative cpu time when deso failed (its message on stderr).            */
static two_clocks time_deso(deso_ctx *ctx, deso_spmat *A, deso_vec *x,
                            deso_vec *y, long reps)
{
    two_clocks best = {1e300, 1e300};
    for (long r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        two_clocks t0 = clocks_now();
        deso_err e = deso_dusmv(ctx, DESO_NO_TRANS, 1.0, A, x, 0.0, y);
        if (e == DESO_OK) e = deso_flush(ctx);
        keep_best(t0, &best);
        if (e != DESO_OK) {
            fprintf(stderr, "spmv_bw: %s\n", deso_last_error());
            return (two_clocks){-1.0, -1.0};
        }
    }
    return best;
}

static two_clocks time_plain(const plain_csr *a, const double *x, double *y,
                             long reps)
{
    two_clocks best = {1e300, 1e300};
    for (long r = 0; r < reps; r++) {
        two_clocks t0 = clocks_now();
        plain_mv(a, x, y);
        keep_best(t0, &best);
    }
    return best;
}

/* Takes "--gen SPEC" out of argv (bench_args knows integer options only);
 * 0 when it has no value.                                                */
static int take_gen(int *argc, char **argv, const char **spec)
{
    for (int k = 1; k < *argc; k++) {
        if (strcmp(argv[k], "--gen") != 0) continue;
        if (k + 1 >= *argc) return 0;
        *spec = argv[k + 1];
        memmove(&argv[k], &argv[k + 2], (size_t)(*argc - k - 2) * sizeof *argv);
        *argc -= 2;
        k--;
    }
    return 1;
}

static void print_list(const char *name, const double *v, long n)
{
    printf(",\"%s\":[", name);
    for (long k = 0; k < n; k++)
        printf("%s%.4f", k ? "," : "", v[k]);
    printf("]");
}

/* The per-pass figures of one clock (wall: 1) as JSON lists.             */
static void print_clock(const pass_result *r, long passes, int wall,
                        int plain)
{
    static const char *names[2][5] = {
        {"read_gbs", "deso_gbs", "deso_ratio", "plain_gbs", "plain_ratio"},
        {"read_gbs_wall", "deso_gbs_wall", "deso_ratio_wall",
         "plain_gbs_wall", "plain_ratio_wall"}};
    double v[5][MAX_PASSES];
    for (long k = 0; k < passes; k++) {
        double rd = wall ? r[k].read.wall : r[k].read.cpu;
        double d = wall ? r[k].deso.wall : r[k].deso.cpu;
        double p = wall ? r[k].plain.wall : r[k].plain.cpu;
        v[0][k] = rd;
        v[1][k] = d;
        v[2][k] = d / rd;
        v[3][k] = p;
        v[4][k] = p / rd;
    }
    for (int j = 0; j < (plain ? 5 : 3); j++)
        print_list(names[wall][j], v[j], passes);
}

/* One JSON line, or a line per pass.                                      */
static void report(const char *spec, const int64_t shape[3], int P,
                   double bytes, const pass_result *r, long passes, long reps,
                   int plain, int json)
{
    if (!json) {
        for (long k = 0; k < passes; k++)
            printf("spmv_bw: %s p=%d pass %ld (by CPU time; wall): read %.2f; "
                   "%.2f GB/s, deso %.1f%%; %.1f%%, plain %.1f%%; %.1f%%\n",
                   spec, P, k + 1, r[k].read.cpu, r[k].read.wall,
                   100 * r[k].deso.cpu / r[k].read.cpu,
                   100 * r[k].deso.wall / r[k].read.wall,
                   100 * r[k].plain.cpu / r[k].read.cpu,
                   100 * r[k].plain.wall / r[k].read.wall);
        fflush(stdout);
        return;
    }
    printf("{\"impl\":\"spmv\",\"problem\":\"%s\",\"m\":%lld,\"n\":%lld,"
           "\"nnz\":%lld,\"p\":%d,\"bytes\":%.0f,\"passes\":%ld,\"reps\":%ld",
           spec, (long long)shape[0], (long long)shape[1], (long long)shape[2],
           P, bytes, passes, reps);
    print_clock(r, passes, 0, plain);
    print_clock(r, passes, 1, plain);
    printf("}\n");
    fflush(stdout);
}

/* The passes: read, then deso and plain in an order that swaps every other
 * pass.  0 when deso failed.                                              */
static int run_passes(deso_ctx *ctx, deso_spmat *A, deso_vec *x, deso_vec *y,
                      const plain_csr *pa, const double *px, double *py,
                      const double *arr, size_t len, long passes, long reps,
                      double bytes, pass_result *r)
{
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    double sink = 0.0, rbytes = (double)P * (double)len * sizeof(double);
    for (long k = 0; k < passes; k++) {
        two_clocks tr = time_read(arr, len, 3, &sink), tp = {0, 0};
        if (pa != NULL && k % 2 == 1) tp = time_plain(pa, px, py, reps);
        two_clocks td = time_deso(ctx, A, x, y, reps);
        if (pa != NULL && k % 2 == 0) tp = time_plain(pa, px, py, reps);
        if (td.cpu < 0) return 0;
        r[k].read = rate(rbytes, tr);
        r[k].deso = rate(bytes, td);
        r[k].plain = pa != NULL ? rate(bytes, tp) : (two_clocks){0, 0};
    }
    return sink != -1.0;
}

/* The matrix and its vectors; 0 when deso failed (its message printed).  */
static int setup(deso_ctx **ctx, const char *spec, deso_spmat **A,
                 deso_vec **x, deso_vec **y, int64_t shape[3])
{
    deso_err e = deso_init(MPI_COMM_WORLD, NULL, ctx);
    if (e == DESO_OK) e = deso_spmat_from_gen(*ctx, spec, A);
    if (e == DESO_OK) e = deso_spmat_shape(*A, &shape[0], &shape[1], &shape[2]);
    int64_t m = shape[0], *n = &shape[1];
    if (e == DESO_OK) e = deso_vec_from_fn(*ctx, *n, x_entry, NULL, x);
    if (e == DESO_OK) e = deso_vec_create(*ctx, m, y);
    /* the first product makes the plan and maps y's pages               */
    if (e == DESO_OK) e = deso_dusmv(*ctx, DESO_NO_TRANS, 1.0, *A, *x, 0.0, *y);
    if (e == DESO_OK) e = deso_flush(*ctx);
    if (e != DESO_OK)
        fprintf(stderr, "spmv_bw: %s\n", deso_last_error());
    return e == DESO_OK;
}

/* The read array, every page touched; NULL on every rank when some rank
 * is out of memory.                                                       */
static double *read_array(size_t len)
{
    double *arr = malloc(len * sizeof *arr);
    if (!all_ok(arr != NULL)) {
        free(arr);
        return NULL;
    }
    for (size_t i = 0; i < len; i++)
        arr[i] = 1.0 / (double)(1 + (i & 1023));
    return arr;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, json = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *spec = "lap3d:250";
    long passes = 5, reps = 10, mb = 1024, plain = 1;
    const bench_opt opts[] = {
        {"--passes", &passes, 1, MAX_PASSES}, {"--reps", &reps, 1, 10000},
        {"--mb", &mb, 1, 1 << 20}, {"--plain", &plain, 0, 1},
    };
    int gen_ok = take_gen(&argc, argv, &spec);
    int rc = bench_start(argc, argv, "spmv_bw",
                         "[--gen SPEC] [--passes K] [--reps R] [--mb MB] "
                         "[--plain 0|1] [--json]",
                         opts, (int)(sizeof opts / sizeof opts[0]), 1, &json);
    if (rc >= 0) return rc;
    if (!gen_ok) {
        if (rank == 0) fprintf(stderr, "spmv_bw: option --gen needs a value\n");
        MPI_Finalize();
        return 2;
    }
    if (P > 1) plain = 0; /* the plain loop needs the whole x on one rank */
    deso_ctx *ctx = NULL;
    deso_spmat *A = NULL;
    deso_vec *x = NULL, *y = NULL;
    int64_t shape[3] = {0, 0, 0}; /* m, n, nnz */
    int ok = setup(&ctx, spec, &A, &x, &y, shape);
    plain_csr pa = {0};
    double *px = NULL, *py = NULL;
    if (ok && plain) ok = all_ok(plain_make(A, &pa, &px, &py));
    size_t len = (size_t)mb * (1u << 20) / sizeof(double);
    double *arr = ok ? read_array(len) : NULL;
    pass_result r[MAX_PASSES];
    double bytes = 12.0 * (double)shape[2] + 8.0 * (double)(shape[0] + P) +
                   8.0 * (double)(shape[1] + shape[0]);
    ok = ok && arr != NULL &&
         run_passes(ctx, A, x, y, plain ? &pa : NULL, px, py, arr, len,
                    passes, reps, bytes, r);
    if (ok && rank == 0)
        report(spec, shape, P, bytes, r, passes, reps, (int)plain, json);
    if (!ok && rank == 0) fprintf(stderr, "spmv_bw: failed\n");
    free(arr);
    plain_free(&pa, px, py);
    deso_vec_destroy(&x);
    deso_vec_destroy(&y);
    deso_spmat_destroy(&A);
    deso_finalize(&ctx);
    MPI_Finalize();
    return ok ? 0 : 1;
}
