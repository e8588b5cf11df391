/* Internal: the Matrix Market reader of dense matrices, which streams
 * (MPI-free).
 *
 * Stands on the shared text stream (mtx_stream.h: the window, bounded
 * lines, the banner and size line with their checks against the bytes
 * present, coordinate entries with their index checks) and accepts both
 * formats, rows and columns below 2^31.  Symmetric files hold the lower
 * triangle and are expanded: entry (i, j) also sets (j, i) (negated when
 * skew).  A reader holds what its caller asks for and not the file: a
 * coordinate file gives its entries a chunk at a time (duplicates are the
 * consumer's to sum: legal in practice though not in the standard), an
 * array file its columns a few at a time, complete (the upper triangle of
 * a symmetric file included).  Errors as the stream's: DESO_EIO for
 * malformed input (deso_last_error says which line and why), DESO_ENOTSUP
 * for complex or hermitian fields, DESO_ESIZE for sizes out of bounds,
 * DESO_ENOMEM.                                                           */
#ifndef DESO_MTX_IMPL_H
#define DESO_MTX_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "deso/io/mtx_stream.h"
#include "placement/deso_errors.h"

/* Refuse anything larger than this many stored entries: a corrupt size line
 * must not make us allocate terabytes (deso__mtx_parse's entry list).    */
#define DESO_MTX_MAX_ENTRIES ((int64_t)1 << 31)

typedef struct deso__mtx_stream deso__mtx_stream;

/* Opens a file held in memory (len bytes, need not be terminated) or on
 * disk and reads its banner and size line; a file with no entries is read
 * to its end here.  On error *out is NULL.                               */
deso_err deso__mtx_open_mem(const char *text, size_t len,
                            deso__mtx_stream **out);
deso_err deso__mtx_open_file(const char *path, deso__mtx_stream **out);
const deso__mtx_info *deso__mtx_info_of(const deso__mtx_stream *s);
void deso__mtx_close(deso__mtx_stream *s);          /* NULL-safe           */

/* A coordinate file's next entries, 0-based, in the file's order, each
 * followed by its mirror image in a symmetric file: at most max of them
 * (max >= 2), *got of them, 0 once every entry was read.  The last entry
 * read, the rest of the file is checked to hold nothing more.  DESO_ESTATE
 * on an array file.                                                      */
deso_err deso__mtx_entries(deso__mtx_stream *s, int64_t max, int64_t *row,
                           int64_t *col, double *val, int64_t *got);

/* An array file's global columns [j0, j1), complete, into g (column-major,
 * m rows each).  Calls go in order: j0 is where the previous call ended
 * (0 first).  A symmetric file's upper triangle comes from the lower
 * triangle's rows j0..j1 - 1 of the columns before, which the reader finds
 * again from where each of those columns was left (one position per
 * column, recorded as it passes), so the file is read twice in all
 * whatever the width.  The last column read, the rest of the file is
 * checked to hold nothing more.  DESO_ESTATE on a coordinate file or out
 * of order.                                                              */
deso_err deso__mtx_columns(deso__mtx_stream *s, int64_t j0, int64_t j1,
                           double *g);

/* ---- the whole file as a list of entries (tests and fuzzers) ---------- */

typedef struct deso__mtx {
    int64_t m, n;          /* rows, columns                                  */
    int64_t nnz;           /* entries stored (after symmetric expansion)    */
    int64_t *row, *col;    /* 0-based                                        */
    double *val;
    int symmetric;
} deso__mtx;

/* Parses a whole file held in memory: every entry of a coordinate file
 * (with mirror images), every element of an array file.  Errors as
 * above.  On error *out is left empty.                                    */
deso_err deso__mtx_parse(const char *text, size_t len, deso__mtx *out);

/* Reads a file and parses it.  Errors as above, DESO_EIO when the file
 * cannot be opened or read.                                                */
deso_err deso__mtx_read(const char *path, deso__mtx *out);

void deso__mtx_free(deso__mtx *x);   /* NULL-safe                           */

#endif
