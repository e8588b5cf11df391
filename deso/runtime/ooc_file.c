/* Local array files: the local piece of an out-of-core matrix, one file
 * per rank (paper 002's local placement model), column-major like an
 * in-core piece, so that whole local columns are contiguous and a slab is
 * one read.
 *
 * The file has no name once opened (O_TMPFILE, else a unique name unlinked
 * right after it is opened), so nothing is left behind when the process
 * ends, however it ends (kill -9 included): the space is the kernel's to
 * free when the descriptor closes.                                        */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "deso/runtime/ooc.h"
#include "placement/alloc.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif

/* Free bytes in dir for an unprivileged writer.                         */
static deso_err space_check(const char *dir, int64_t bytes)
{
    struct statvfs s;
    DESO_CHECK(statvfs(dir, &s) == 0, DESO_EIO,
               "out-of-core directory '%s': %s", dir, strerror(errno));
    double avail = (double)s.f_bavail * (double)s.f_frsize;
    DESO_CHECK(avail >= (double)bytes, DESO_EIO,
               "out-of-core directory '%s': %lld bytes needed, %.0f free", dir,
               (long long)bytes, avail);
    return DESO_OK;
}

/* A file in RAM saves no memory; said once per context.                  */
static void ram_warning(deso_ctx *ctx, const char *dir)
{
    struct statfs s;
    if (ctx->ooc_warned || statfs(dir, &s) != 0) return;
    if (s.f_type != TMPFS_MAGIC && s.f_type != RAMFS_MAGIC) return;
    ctx->ooc_warned = true;
    fprintf(stderr, "deso: warning: rank %d: out-of-core directory '%s' is "
                    "a RAM file system (tmpfs): its files take memory; set "
                    "DESO_OOC_DIR to a disk\n", ctx->rank, dir);
}

static bool named_files;        /* deso__ooc_named_files                   */

void deso__ooc_named_files(bool on) { named_files = on; }

static bool buffered_slabs;     /* deso__ooc_direct_reads(false)           */
static long direct_slabs;       /* deso__ooc_direct_count                  */

void deso__ooc_direct_reads(bool on) { buffered_slabs = !on; }

long deso__ooc_direct_count(void) { return direct_slabs; }

/* deso__ooc_inject's state: the fault armed, the write calls left before
 * it strikes, its errno.  Only this process's main thread writes or opens
 * (the reader thread only reads), so plain statics do.                   */
static deso__ooc_fault fault;
static int64_t fault_after;
static int fault_errno;
static bool fault_struck;

void deso__ooc_inject(deso__ooc_fault f, int64_t after, int err)
{
    fault = f;
    fault_after = after;
    fault_errno = err;
    fault_struck = false;
}

bool deso__ooc_injected(void) { return fault_struck; }

/* open(2)'s outcome under an armed DESO__OOC_FAULT_OPEN: -1 and errno.   */
static bool open_fails(void)
{
    if (fault != DESO__OOC_FAULT_OPEN) return false;
    fault = DESO__OOC_FAULT_NONE;
    fault_struck = true;
    errno = fault_errno;
    return true;
}

/* pwrite(2), through the armed fault: the write call `after` calls from
 * arming fails with the fault's errno, or (a short write) writes half its
 * bytes, after which every call fails with the errno (a disk filling up)
 * or, errno 0, none does (a short write the caller must resume).         */
static ssize_t file_pwrite(int fd, const char *p, size_t len, off_t at)
{
    if (fault != DESO__OOC_FAULT_WRITE && fault != DESO__OOC_FAULT_SHORT)
        return pwrite(fd, p, len, at);
    if (fault_after > 0) {
        fault_after--;
        return pwrite(fd, p, len, at);
    }
    if (fault == DESO__OOC_FAULT_SHORT && !fault_struck) {
        fault_struck = true;
        if (fault_errno == 0) fault = DESO__OOC_FAULT_NONE;
        return pwrite(fd, p, len > 1 ? len / 2 : len, at);
    }
    fault_struck = true;
    errno = fault_errno;
    return -1;
}

/* An open file without a name in dir.                                    */
static deso_err open_unnamed(const char *dir, int *fd)
{
    *fd = -1;
    DESO_CHECK(!open_fails(), DESO_EIO, "out-of-core directory '%s': %s", dir,
               strerror(errno));
#ifdef O_TMPFILE
    *fd = named_files ? -1
                      : open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC,
                             0600);
    if (*fd >= 0) return DESO_OK;
    /* file systems without O_TMPFILE: a named file, unlinked at once (the
     * six X are mkostemp's template, which it replaces with a unique name) */
#endif
    char path[DESO__PATH_MAX + 32];
    int len = snprintf(path, sizeof path, "%s/deso-ooc-XXXXXX", dir);
    DESO_CHECK(len > 0 && (size_t)len < sizeof path, DESO_EINVAL,
               "out-of-core directory '%s': name too long", dir);
    *fd = mkostemp(path, O_CLOEXEC);
    DESO_CHECK(*fd >= 0, DESO_EIO, "out-of-core directory '%s': %s", dir,
               strerror(errno));
    unlink(path);
    return DESO_OK;
}

/* The file again, O_DIRECT, through its descriptor's link in /proc (an
 * unnamed file has no other name): -1 where the file system or /proc
 * does not allow it, and its slabs are then read through the page
 * cache.  Streaming a matrix larger than memory through the cache would
 * only evict the rest of the program's pages for data read once per
 * pass, and measure the cache instead of the disk.                       */
static int open_direct(int fd)
{
    if (buffered_slabs) return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
}

deso_err deso__ooc_open(deso_ctx *ctx, int64_t rows, int64_t cols,
                        int64_t slab, deso__ooc **out)
{
    *out = NULL;
    const char *dir = ctx->ooc_dir;
    int64_t bytes = rows * cols * (int64_t)sizeof(double);
    DESO_TRY(space_check(dir, bytes));
    ram_warning(ctx, dir);
    deso__ooc *f = deso__calloc(1, sizeof *f);
    DESO_CHECK(f != NULL, DESO_ENOMEM, "out of memory");
    f->fd = f->direct = -1;
    deso_err err = open_unnamed(dir, &f->fd);
    /* zero-filled, as a new matrix is, without writing it               */
    if (err == DESO_OK && ftruncate(f->fd, (off_t)bytes) != 0)
        err = deso__fail(DESO_EIO, "out-of-core directory '%s': %s", dir,
                         strerror(errno));
    if (err != DESO_OK) {
        if (f->fd >= 0) close(f->fd);
        free(f);
        return err;
    }
    f->direct = open_direct(f->fd);
    f->ahead = ctx->ooc_ahead;
    f->rows = rows;
    f->cols = cols;
    f->slab = slab;
    *out = f;
    return DESO_OK;
}

deso_err deso__ooc_io(deso__ooc *f, bool write, int64_t c0, int64_t w,
                      double *buf)
{
    size_t left = (size_t)(f->rows * w) * sizeof(double);
    off_t at = (off_t)(f->rows * c0) * (off_t)sizeof(double);
    char *p = (char *)buf;
    if (write) f->writes++;
    while (left > 0) {
        ssize_t k = write ? file_pwrite(f->fd, p, left, at)
                          : pread(f->fd, p, left, at);
        if (k < 0 && errno == EINTR) continue;
        DESO_CHECK(k > 0, DESO_EIO, "local array file: %s at byte %lld: %s",
                   write ? "write" : "read", (long long)at,
                   k < 0   ? strerror(errno)
                   : write ? "nothing written"
                           : "unexpected end of file");
        p += k;
        at += k;
        left -= (size_t)k;
    }
    return DESO_OK;
}

/* Reads bytes [start, start + need) of the file into p through the
 * direct descriptor, in whole aligned blocks (the last may run past the
 * end of the file, where the read comes back short).  *refused, with
 * nothing reported, when the file system refuses the request's
 * alignment (the caller reads through the cache from then on).           */
static deso_err read_direct(deso__ooc *f, char *p, int64_t start,
                            int64_t need, bool *refused)
{
    int64_t len = (need + DESO__OOC_ALIGN - 1) / DESO__OOC_ALIGN *
                  DESO__OOC_ALIGN;
    int64_t got = 0;
    *refused = false;
    while (got < need) {
        int fd = got % DESO__OOC_ALIGN == 0 ? f->direct : f->fd;
        ssize_t k = pread(fd, p + got, (size_t)(fd == f->direct ? len - got
                                                                : need - got),
                          (off_t)(start + got));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && errno == EINVAL && got == 0) {
            *refused = true;
            return DESO_OK;
        }
        DESO_CHECK(k > 0, DESO_EIO, "local array file: read at byte %lld: %s",
                   (long long)(start + got),
                   k < 0 ? strerror(errno) : "unexpected end of file");
        got += k;
    }
    return DESO_OK;
}

deso_err deso__ooc_read_slab(deso__ooc *f, int64_t c0, int64_t w,
                             double *buf, double **data)
{
    *data = buf;
    if (f->direct < 0) return deso__ooc_io(f, false, c0, w, buf);
    int64_t at = f->rows * c0 * (int64_t)sizeof(double);
    int64_t start = at / DESO__OOC_ALIGN * DESO__OOC_ALIGN;
    bool refused;
    DESO_TRY(read_direct(f, (char *)buf, start,
                         at - start + f->rows * w * (int64_t)sizeof(double),
                         &refused));
    if (refused) {
        close(f->direct);
        f->direct = -1;
        return deso__ooc_io(f, false, c0, w, buf);
    }
    direct_slabs++;
    *data = buf + (at - start) / (int64_t)sizeof(double);
    return DESO_OK;
}

deso_err deso__ooc_read_whole(deso__ooc *f, char *buf, int64_t chunk)
{
    int64_t size = f->rows * f->cols * (int64_t)sizeof(double);
    int fd = f->direct >= 0 ? f->direct : f->fd;
    if (fd == f->fd) (void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
    double t0 = deso__now();
    for (int64_t at = 0; at < size;) {
        ssize_t k = pread(fd, buf, (size_t)chunk, (off_t)at);
        if (k < 0 && errno == EINTR) continue;
        DESO_CHECK(k > 0, DESO_EIO, "local array file: read at byte %lld: %s",
                   (long long)at,
                   k < 0 ? strerror(errno) : "unexpected end of file");
        at += k;
        if (k % DESO__OOC_ALIGN != 0) fd = f->fd;  /* unaligned from here */
    }
    deso__stats_time(DESO_T_IO, deso__now() - t0);
    deso__stats_io(size, 0);
    return DESO_OK;
}

deso_err deso__ooc_io_counted(deso__ooc *f, bool write, int64_t c0, int64_t w,
                              double *buf)
{
    double t0 = deso__now();
    deso_err err = deso__ooc_io(f, write, c0, w, buf);
    deso__stats_time(DESO_T_IO, deso__now() - t0);
    int64_t bytes = f->rows * w * (int64_t)sizeof(double);
    if (err == DESO_OK) deso__stats_io(write ? 0 : bytes, write ? bytes : 0);
    return err;
}

deso_err deso__ooc_read_rate(deso_ctx *ctx, double *sec_per_byte)
{
    *sec_per_byte = 0.0;
    int64_t n = DESO__OOC_PROBE_BYTES / (int64_t)sizeof(double);
    double *buf = deso__calloc((size_t)n, sizeof *buf);
    DESO_CHECK(buf != NULL, DESO_ENOMEM, "out of memory (read probe)");
    deso__ooc *f = NULL;
    deso_err err = deso__ooc_open(ctx, n, 1, 1, &f);
    if (err == DESO_OK) err = deso__ooc_io(f, true, 0, 1, buf);
    /* on the disk and out of the page cache, so that the read below
     * comes from the disk as a slab's does (a RAM file system has no
     * disk: there the read is a copy, and that is its rate)              */
    if (err == DESO_OK && fdatasync(f->fd) != 0)
        err = deso__fail(DESO_EIO, "out-of-core directory '%s': %s",
                         ctx->ooc_dir, strerror(errno));
    if (err == DESO_OK) {
        (void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
        double t0 = deso__now();
        err = deso__ooc_io(f, false, 0, 1, buf);
        *sec_per_byte = (deso__now() - t0) / (double)DESO__OOC_PROBE_BYTES;
    }
    deso__ooc_close(f);
    free(buf);
    return err;
}

void deso__ooc_close(deso__ooc *f)
{
    if (f == NULL) return;
    deso__ooc_ahead_drop(f->ahead);      /* it may be reading this file   */
    if (f->direct >= 0) close(f->direct);
    close(f->fd);
    free(f);
}
