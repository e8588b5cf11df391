/* Internal: the Matrix Market text stream that both readers stand on, the
 * array reader (mtx.h) and the coordinate reader (mtx_coo.h) (MPI-free).
 *
 * A stream reads a file held in memory or on disk through a window of
 * fixed size (DESO_MTXS_WINDOW bytes), a bounded line at a time, and knows
 * the format's common parts: the banner, the size line, the comment and
 * blank lines between data, a coordinate entry with its index checks and
 * mirror image, an array value, and the end of the file.  It is written
 * for hostile input: every line is bounded (a longer one, or one holding a
 * NUL byte, is an error), every number checked, and a size line is
 * compared with the bytes present before anything may be sized from it.
 * Accepts "%%MatrixMarket matrix coordinate|array real|double|integer|
 * pattern general|symmetric|skew-symmetric" (pattern only with coordinate
 * and not skew-symmetric).  Errors: DESO_EIO for malformed input
 * (deso_last_error names the line and the reason), DESO_ENOTSUP for
 * complex or hermitian fields and formats the rules exclude, DESO_ESIZE
 * for sizes out of bounds, DESO_ENOMEM.
 *
 * A reader's own struct begins with a deso__mtxs, which the open functions
 * allocate at the reader's size (zeroed), so that a reader is one
 * allocation plus the window of a file on disk.  Outside mtx_stream.c the
 * fields are read, never written.                                        */
#ifndef DESO_IO_MTX_STREAM_H
#define DESO_IO_MTX_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "placement/deso_errors.h"

#define DESO_MTXS_MAX_LINE 1024                /* bytes of one line      */
#define DESO_MTXS_WINDOW ((size_t)1 << 16)     /* bytes read at a time   */

/* What the banner and size line say.                                     */
typedef struct deso__mtx_info {
    int64_t m, n;           /* rows, columns                               */
    int64_t entries;        /* values the file stores                      */
    int coordinate;         /* 1 coordinate, 0 array                       */
    int pattern;
    int symmetric;          /* 1 symmetric, -1 skew-symmetric, 0 general   */
} deso__mtx_info;

/* What a reader accepts beyond the format itself.                       */
typedef struct deso__mtxs_rules {
    int64_t max_dim;        /* rows and columns below this, else ESIZE     */
    int coordinate_only;    /* an array file is DESO_ENOTSUP               */
} deso__mtxs_rules;

/* A place in the file: the offset of a line's start, and that line's
 * number less one (the number of the line read before it).               */
typedef struct deso__mtxs_pos {
    int64_t at, lineno;
} deso__mtxs_pos;

/* One coordinate entry, 0-based.                                         */
typedef struct deso__mtx_entry {
    int64_t i, j;
    double v;
} deso__mtx_entry;

typedef struct deso__mtxs {
    FILE *f;                /* NULL for a file held in memory              */
    const char *text;       /* a file held in memory                       */
    char *buf;              /* the window of a file on disk                */
    const char *p, *end;    /* unread bytes of the window                  */
    int64_t base;           /* offset in the file of the window's start   */
    int eof;                /* nothing left beyond end                     */
    size_t want;            /* bytes one refill asks for                   */
    int64_t size;           /* file bytes in all, -1 when unknown          */
    int64_t lineno;         /* of the line last read                       */
    int ended;              /* the end was checked                         */
    deso__mtxs_rules rules;
    deso__mtx_info info;
    char line[DESO_MTXS_MAX_LINE + 1];
} deso__mtxs;

/* Opens a file held in memory (len bytes, need not be terminated) or on
 * disk as a reader of `size` bytes (at least sizeof (deso__mtxs), zeroed
 * beyond the stream) and reads its banner and size line under `rules`; a
 * file with no entries is read to its end here.  `out` is the address of
 * the caller's pointer to its reader struct (pointers to structs share
 * one representation), set to the reader, or to NULL on error.          */
deso_err deso__mtxs_open_mem(const char *text, size_t len,
                             const deso__mtxs_rules *rules, size_t size,
                             void *out);
deso_err deso__mtxs_open_file(const char *path, const deso__mtxs_rules *rules,
                              size_t size, void *out);

/* Closes the file and frees the window and the reader around s.  NULL-safe. */
void deso__mtxs_close(deso__mtxs *s);

/* Where the next unread line starts, and going back (or on) to such a
 * place.  Going back fails with DESO_EIO on a file that cannot seek.    */
deso__mtxs_pos deso__mtxs_tell(const deso__mtxs *s);
deso_err deso__mtxs_seek(deso__mtxs *s, deso__mtxs_pos to);

/* From the first byte again: the banner and size line read anew (the
 * caller compares s->info with what it had).                             */
deso_err deso__mtxs_restart(deso__mtxs *s);

/* Bytes one refill of the window asks for (at least a line; 0: the whole
 * window), for a reader that is about to read a few lines only.         */
void deso__mtxs_want(deso__mtxs *s, size_t bytes);

/* The next coordinate entry, checked against the header: numbers, a value
 * unless pattern (1.0 then), nothing after it, the indices inside the
 * matrix, and a symmetric file's entries on or below the diagonal (below,
 * skew).  `done` is the number of entries read before, for the message
 * when the file ends early.                                              */
deso_err deso__mtxs_entry(deso__mtxs *s, int64_t done, deso__mtx_entry *x);

/* The mirror image of x in a symmetric file into *y (negated when skew):
 * 1, or 0 when there is none (a general file, or x on the diagonal).    */
int deso__mtxs_mirror(const deso__mtx_info *h, const deso__mtx_entry *x,
                      deso__mtx_entry *y);

/* The next value of an array file: *found 1 and *v, or 0 at the end.   */
deso_err deso__mtxs_value(deso__mtxs *s, double *v, int *found);

/* Whatever follows the last entry: comments and blank lines only, else
 * DESO_EIO.  Once only, until the stream goes back.                      */
deso_err deso__mtxs_end(deso__mtxs *s);

#endif
