/* ooc_iread: how to overlap the next slab's read with the current slab's
 * dgemv when streaming a local array file, measured on the same file:
 *
 *   [mpiexec.mpich -n P] ooc_iread [--mb MB] [--slab-mb S] [--pairs K]
 *                                  [--json]
 *
 * Each rank writes a file of MB megabytes (default 512) in $DESO_OOC_DIR,
 * else $TMPDIR, else /tmp (unlinked at once, as deso's files are), then
 * streams it K times (default 5) per method in slabs of S megabytes
 * (default 16), each slab a 4096-row column-major matrix multiplied by a
 * vector (cblas_dgemv), as the streamed dgemv does:
 *   thread: a helper thread preads the next slab (what deso does);
 *   iread:  MPI_File_iread_at on the file opened on MPI_COMM_SELF, waited
 *           for after the dgemv;
 *   sync:   pread, then the dgemv (no overlap: the reference).
 * The three methods run in turn within each round, the order rotated from
 * round to round (the machine may be shared: paired, alternating runs, so a
 * slow spell hits every method).  Before each run the file's pages are
 * dropped from the page cache (posix_fadvise DONTNEED after fsync), so each
 * run reads the disk.  Every rank streams at the same moment (barrier);
 * a run's time is the slowest rank's.
 * Prints on rank 0 each round's times, then the medians (--json: one line
 *   {"thread_s":..,"iread_s":..,"sync_s":..,"thread_over_iread":..,
 *    "mb":..,"slab_mb":..,"pairs":..,"p":..}
 * with the median over rounds of thread time / iread time).
 * Run with OPENBLAS_NUM_THREADS=1.                                         */
#define _GNU_SOURCE
#include <cblas.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_args.h"

#define ROWS 4096
#define METHODS 3

static const char *const names[METHODS] = {"thread", "iread", "sync"};

typedef struct reader {
    int fd;
    double *buf;
    size_t bytes;
    off_t at;
    pthread_t th;
} reader;

static void read_all(int fd, double *buf, size_t bytes, off_t at)
{
    char *p = (char *)buf;
    while (bytes > 0) {
        ssize_t k = pread(fd, p, bytes, at);
        if (k <= 0) {
            perror("ooc_iread: pread");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        p += k;
        at += k;
        bytes -= (size_t)k;
    }
}

static void *reader_main(void *arg)
{
    reader *r = arg;
    read_all(r->fd, r->buf, r->bytes, r->at);
    return NULL;
}

/* y += slab x: the slab as a ROWS x (len / ROWS) column-major matrix.   */
static void compute(const double *slab, size_t len, const double *x,
                    double *y)
{
    int cols = (int)(len / ROWS);
    cblas_dgemv(CblasColMajor, CblasNoTrans, ROWS, cols, 1.0, slab, ROWS, x,
                1, 1.0, y, 1);
}

/* One pass over the file by method m; its time in seconds.               */
static double run(int m, int fd, MPI_File fh, size_t file_bytes,
                  size_t slab_bytes, double *buf[2], const double *x,
                  double *y)
{
    fsync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    size_t nslab = file_bytes / slab_bytes, len = slab_bytes / 8;
    if (m == 2) {
        for (size_t s = 0; s < nslab; s++) {
            read_all(fd, buf[0], slab_bytes, (off_t)(s * slab_bytes));
            compute(buf[0], len, x, y);
        }
    } else {
        reader r = {fd, buf[0], slab_bytes, 0, 0};
        MPI_Request req = MPI_REQUEST_NULL;
        if (m == 0) pthread_create(&r.th, NULL, reader_main, &r);
        else MPI_File_iread_at(fh, 0, buf[0], (int)len, MPI_DOUBLE, &req);
        for (size_t s = 0; s < nslab; s++) {
            if (m == 0) pthread_join(r.th, NULL);
            else MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (s + 1 < nslab) {
                double *next = buf[(s + 1) & 1];
                off_t at = (off_t)((s + 1) * slab_bytes);
                if (m == 0) {
                    r.buf = next;
                    r.at = at;
                    pthread_create(&r.th, NULL, reader_main, &r);
                } else {
                    MPI_File_iread_at(fh, at, next, (int)len, MPI_DOUBLE,
                                      &req);
                }
            }
            compute(buf[s & 1], len, x, y);
        }
    }
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P, json = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long mb = 512, slab_mb = 16, pairs = 5;
    bench_opt opts[] = {{"--mb", &mb, 1, 1 << 20},
                        {"--slab-mb", &slab_mb, 1, 1024},
                        {"--pairs", &pairs, 1, 1000}};
    char err[256];
    int rc = bench_args(argc, argv, opts, 3, &json, err, sizeof err);
    if (rc != 0 || slab_mb > mb) {
        if (me == 0)
            fprintf(stderr, "%s\nusage: ooc_iread [--mb MB] [--slab-mb S] "
                            "[--pairs K] [--json]\n",
                    rc < 0 ? err : rc == 0 ? "slab larger than the file" : "");
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }
    const char *dir = getenv("DESO_OOC_DIR");
    if (dir == NULL) dir = getenv("TMPDIR");
    if (dir == NULL) dir = "/tmp";
    char path[4096];
    /* the six trailing X are mkstemp's template: it replaces them        */
    snprintf(path, sizeof path, "%s/ooc-iread-%d-XXXXXX", dir, me);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("ooc_iread: mkstemp");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t slab_bytes = (size_t)slab_mb << 20;
    size_t file_bytes = ((size_t)mb << 20) / slab_bytes * slab_bytes;
    double *buf[2] = {malloc(slab_bytes), malloc(slab_bytes)};
    double *x = malloc(slab_bytes / ROWS), y[ROWS] = {0};
    for (size_t i = 0; i < slab_bytes / 8; i++) buf[0][i] = (double)(i % 97);
    for (size_t j = 0; j < slab_bytes / ROWS / 8; j++) x[j] = 1.0;
    for (size_t at = 0; at < file_bytes; at += slab_bytes)
        if (pwrite(fd, buf[0], slab_bytes, (off_t)at) != (ssize_t)slab_bytes) {
            perror("ooc_iread: pwrite");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    unlink(path);
    double *t = calloc((size_t)(METHODS * pairs), sizeof *t);
    double *ratio = calloc((size_t)pairs, sizeof *ratio);
    for (long k = 0; k < pairs; k++) {
        for (int i = 0; i < METHODS; i++) {
            int m = (int)((i + k) % METHODS);
            t[m * pairs + k] = run(m, fd, fh, file_bytes, slab_bytes, buf, x,
                                   y);
        }
        ratio[k] = t[k] / t[pairs + k];
        if (me == 0 && !json)
            printf("round %ld: thread %.3f s, iread %.3f s, sync %.3f s\n",
                   k, t[k], t[pairs + k], t[2 * pairs + k]);
    }
    double med[METHODS];
    for (int m = 0; m < METHODS; m++) med[m] = median(t + m * pairs, (int)pairs);
    double r = median(ratio, (int)pairs);
    if (me == 0) {
        if (json)
            printf("{\"thread_s\":%.4f,\"iread_s\":%.4f,\"sync_s\":%.4f,"
                   "\"thread_over_iread\":%.4f,\"mb\":%zu,\"slab_mb\":%ld,"
                   "\"pairs\":%ld,\"p\":%d,\"check\":%g}\n",
                   med[0], med[1], med[2], r, file_bytes >> 20, slab_mb,
                   pairs, P, y[0]);
        else
            for (int m = 0; m < METHODS; m++)
                printf("%s: median %.3f s (%.0f MB/s per rank)\n", names[m],
                       med[m], (double)(file_bytes >> 20) / med[m]);
    }
    MPI_File_close(&fh);
    close(fd);
    free(t);
    free(ratio);
    free(buf[0]);
    free(buf[1]);
    free(x);
    MPI_Finalize();
    return 0;
}
