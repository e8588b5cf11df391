/* Internal: a bounded, hostile-input-safe Matrix Market reader.
 *
 * Accepts "%%MatrixMarket matrix coordinate|array real|integer|pattern
 * general|symmetric" (pattern only with coordinate).  Symmetric files are
 * expanded: entry (i, j) also sets (j, i).  The result is a list of entries
 * with 0-based indices; duplicates in a coordinate file are summed by the
 * consumer (they are legal in practice though not in the standard).      */
#ifndef DESO_MTX_IMPL_H
#define DESO_MTX_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "placement/deso_errors.h"

/* Refuse anything larger than this many stored entries: a corrupt size line
 * must not make us allocate terabytes.                                      */
#define DESO_MTX_MAX_ENTRIES ((int64_t)1 << 31)

typedef struct deso__mtx {
    int64_t m, n;          /* rows, columns                                  */
    int64_t nnz;           /* entries stored (after symmetric expansion)    */
    int64_t *row, *col;    /* 0-based                                        */
    double *val;
    int symmetric;
} deso__mtx;

/* Parses a whole file held in memory (len bytes, need not be terminated).
 * Errors: DESO_EIO for malformed input (deso_last_error says which line and
 * why), DESO_ENOTSUP for complex or hermitian/skew fields, DESO_ESIZE for
 * sizes out of bounds, DESO_ENOMEM.  On error *out is left empty.          */
deso_err deso__mtx_parse(const char *text, size_t len, deso__mtx *out);

/* Reads a file and parses it.  Errors as above, DESO_EIO when the file
 * cannot be opened or read.                                                */
deso_err deso__mtx_read(const char *path, deso__mtx *out);

void deso__mtx_free(deso__mtx *x);   /* NULL-safe                           */

#endif
