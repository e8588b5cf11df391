/* Internal: a streaming Matrix Market coordinate reader that keeps only the
 * rows its caller holds, as compressed sparse rows (MPI-free).
 *
 * Stands on the shared text stream (mtx_stream.h: the window, bounded
 * lines, the banner and size line with their checks, each entry's index
 * checks) and accepts its coordinate files, rows and columns below
 * DESO_COO_MAX_DIM.  Symmetric files hold the lower triangle and are
 * expanded ((i, j) also sets (j, i)); duplicates are summed; pattern
 * entries are 1.0.  The file is read through the stream's bounded
 * window, line by line, twice: the first reading counts the entries of
 * each kept row, so that the second fills arrays of exactly that size in
 * place and a rank's memory at its peak is its CSR arrays plus the fixed
 * buffer (no list of triples beside them).  Nothing is sized from the
 * header's entry count, which is only compared with the bytes present and,
 * at the end, with the entries found.  Every rank may scan the whole file
 * and keep its rows, so no rank ever holds more than its own rows.
 * Errors: DESO_EIO for malformed input (deso_last_error names the line and
 * the reason), DESO_ENOTSUP for the array format and complex or hermitian
 * fields, DESO_ESIZE for sizes out of bounds, DESO_ENOMEM.               */
#ifndef DESO_IO_MTX_COO_H
#define DESO_IO_MTX_COO_H

#include <stddef.h>
#include <stdint.h>

#include "deso/io/mtx_stream.h"
#include "placement/csr.h"
#include "placement/deso_errors.h"

/* Rows and columns: 64-bit global indices, bounded well below overflow of
 * the products made from them.                                            */
#define DESO_COO_MAX_DIM ((int64_t)1 << 40)

/* Rows one reader keeps, at most: local row numbers fit 32 bits, and the
 * row pointers of more (16 GB) would be a header's wish, not a matrix.   */
#define DESO_COO_MAX_LOCAL_ROWS ((int64_t)INT32_MAX)

typedef struct deso__coo deso__coo;     /* an open stream                 */

/* The header: a coordinate file's (coordinate is 1).                    */
typedef deso__mtx_info deso__coo_info;

/* Opens a file held in memory (need not be NUL-terminated) or on disk and
 * reads its banner and size line.  On error *out is NULL.                 */
deso_err deso__coo_open_mem(const char *text, size_t len, deso__coo **out);
deso_err deso__coo_open_file(const char *path, deso__coo **out);
const deso__coo_info *deso__coo_info_of(const deso__coo *s);
void deso__coo_close(deso__coo *s);                 /* NULL-safe          */

/* Where row i is kept: its local index, or -1 when another rank holds it. */
typedef int64_t (*deso__coo_rowmap)(int64_t i, const void *arg);

/* The first reading: checks every entry, counts those in the rows `map`
 * places, and allocates out's row pointers (nlocal + 1 of them, the size
 * the caller asked for, checked below) and its columns and values, exactly
 * as many as counted.  out's entries are not yet filled.  DESO_ESIZE when
 * nlocal exceeds the matrix or DESO_COO_MAX_LOCAL_ROWS; DESO_ESTATE when
 * the stream was read already.  On error *out is left empty.            */
deso_err deso__coo_count_rows(deso__coo *s, deso__coo_rowmap map,
                              const void *arg, int64_t nlocal, pl_csr *out);

/* A digest of the entries the first reading saw (all of them, kept or
 * not): equal on two streams when they hold the same entries, barring a
 * 64-bit hash collision.                                                  */
uint64_t deso__coo_digest(const deso__coo *s);

/* The second reading, into the arrays deso__coo_count_rows made for out:
 * the stream starts again from its first byte, the entries go to their
 * rows' slots, then each row is sorted by column and duplicates summed
 * (a CSR of global columns; row0 and grow are for the caller to set).
 * A file that changed since the first reading (another header, a row with
 * more or fewer entries, other entries or values) is DESO_EIO, as is a
 * stream that cannot start again (not a regular file); nothing is written
 * outside the arrays either way; on such an error *out is freed and left
 * empty.  DESO_ESTATE for an out the count did not make on this stream
 * (*out is left as it is: it may not be this stream's to free).          */
deso_err deso__coo_fill_rows(deso__coo *s, pl_csr *out);

/* Both readings: count, then fill.                                        */
deso_err deso__coo_read_rows(deso__coo *s, deso__coo_rowmap map,
                             const void *arg, int64_t nlocal, pl_csr *out);

/* The map for contiguous rows [lo, hi): arg points at int64_t[2] {lo, hi}. */
int64_t deso__coo_rows_block(int64_t i, const void *arg);

#endif
