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

/* An open file without a name in dir.                                    */
static deso_err open_unnamed(const char *dir, int *fd)
{
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
    f->fd = -1;
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
    while (left > 0) {
        ssize_t k = write ? pwrite(f->fd, p, left, at) : pread(f->fd, p, left,
                                                               at);
        if (k < 0 && errno == EINTR) continue;
        DESO_CHECK(k > 0, DESO_EIO, "local array file: %s at byte %lld: %s",
                   write ? "write" : "read", (long long)at,
                   k < 0 ? strerror(errno) : "unexpected end of file");
        p += k;
        at += k;
        left -= (size_t)k;
    }
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

void deso__ooc_close(deso__ooc *f)
{
    if (f == NULL) return;
    close(f->fd);
    free(f);
}
