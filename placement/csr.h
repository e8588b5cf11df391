/* Internal: compressed sparse rows of one rank's share of a sparse matrix,
 * and the triples they are assembled from.
 *
 * Global row and column indices are 64-bit (a matrix may have more than
 * 2^31 rows); row pointers are 64-bit too, since one rank may hold more
 * than 2^31 entries.  Columns stay global here: which of them are local
 * depends on where the vector entries live, and placement/halo.h renumbers
 * them to 32-bit local indices once that is known.                        */
#ifndef DESO_PLACEMENT_CSR_H
#define DESO_PLACEMENT_CSR_H

#include <stdint.h>

#include "placement/deso_errors.h"

/* Local row r is global row row0 + r, or grow[r] when grow is not NULL (an
 * irregular set of rows).  Columns are sorted and unique within a row.   */
typedef struct pl_csr {
    int64_t nrows;          /* local rows                                   */
    int64_t ncols;          /* global columns                               */
    int64_t row0;
    const int32_t *grow;    /* NULL: contiguous rows from row0; borrowed,  */
                            /*   never freed with the rows                 */
    int64_t *rowptr;        /* nrows + 1                                    */
    int64_t *col;           /* global, rowptr[nrows] of them                */
    double *val;
} pl_csr;

/* Entries in arrival order: local row, global column, value.  Grows by
 * doubling, so its size follows the entries actually seen, never a count
 * somebody claimed.  For entries that can be seen only once: the list and
 * the CSR built from it coexist, so a reader that can look twice counts
 * first and fills a CSR in place instead (deso/io/mtx_coo.h).           */
typedef struct pl_coo {
    int64_t n, cap;
    int64_t *row, *col;
    double *val;
} pl_coo;

deso_err pl_coo_push(pl_coo *t, int64_t row, int64_t col, double v);
void pl_coo_free(pl_coo *t);                       /* NULL-safe           */

/* CSR of nrows local rows from triples (rows in [0, nrows), columns in
 * [0, ncols)); entries with the same (row, column) are summed, explicit
 * zeros kept (they are part of the pattern).  row0 = 0, grow = NULL.
 * Errors: DESO_EINVAL for an index out of range, DESO_ENOMEM.  On error
 * *out is left empty.                                                      */
deso_err pl_csr_from_coo(const pl_coo *t, int64_t nrows, int64_t ncols,
                         pl_csr *out);

/* Sorts every row of a by column and sums the entries of equal columns,
 * compacting the rows in place (rowptr follows); the arrays shrink to the
 * entries left when duplicates were summed.  Explicit zeros are kept.   */
void pl_csr_sort_rows(pl_csr *a);

static inline int64_t pl_csr_global_row(const pl_csr *a, int64_t r)
{
    return a->grow ? a->grow[r] : a->row0 + r;
}

void pl_csr_free(pl_csr *a);                       /* NULL-safe           */

#endif
