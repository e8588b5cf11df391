/* Sparse Matrix Market files into each rank's rows (see sparse_load.h).
 *
 * Every rank streams the whole file twice through deso__coo_count_rows and
 * deso__coo_fill_rows and keeps the entries of its own rows: the parse is
 * repeated 2P times, but nothing is sent, no rank holds more than its rows
 * plus a fixed read buffer, and a malformed file fails at the same line on
 * every rank.  Rank-local failures (a file missing on one node, memory)
 * are agreed three times: after the header, after the count (which also
 * compares the entries' digests, so that two different files with one
 * shape are caught before anybody fills), and after the fill.           */
#include "deso/io/sparse_load.h"

#include <string.h>

#include "deso/core/agree.h"
#include "deso/io/mtx_coo.h"
#include "placement/errors.h"
#include "placement/halo.h"

#define FN "deso__sparse_load"

/* The header on every rank; the shape checked to be the same everywhere
 * (v beside ~v: equal on every rank iff max(v) == ~max(~v)).             */
static deso_err open_agreed(MPI_Comm comm, const char *path, deso__coo **s)
{
    deso_err local = path == NULL
                         ? deso__fail(DESO_ENULL, FN ": path is NULL")
                         : deso__coo_open_file(path, s);
    int64_t flags[4] = {0, 0, 0, 0};
    if (local == DESO_OK) {
        const deso__coo_info *h = deso__coo_info_of(*s);
        flags[0] = h->m; flags[1] = ~h->m;
        flags[2] = h->n; flags[3] = ~h->n;
    }
    deso_err e = deso__agree(comm, FN, local, flags, 4);
    if (e == DESO_OK && (flags[0] != ~flags[1] || flags[2] != ~flags[3]))
        e = deso__fail(DESO_EMISMATCH, FN ": the file has different sizes on "
                       "different ranks (not the same file everywhere?)");
    if (e != DESO_OK) {
        deso__coo_close(*s);
        *s = NULL;
    }
    return e;
}

/* The count on every rank, agreed; the entries' digest checked to be the
 * same everywhere.  On failure *rows is empty.                           */
static deso_err count_agreed(MPI_Comm comm, deso__coo *s, const int64_t lohi[2],
                             pl_csr *rows)
{
    deso_err local = deso__coo_count_rows(s, deso__coo_rows_block, lohi,
                                          lohi[1] - lohi[0], rows);
    int64_t flags[2] = {0, 0};
    if (local == DESO_OK) {
        uint64_t d = deso__coo_digest(s);
        memcpy(&flags[0], &d, sizeof d);
        flags[1] = ~flags[0];
    }
    deso_err e = deso__agree(comm, FN, local, flags, 2);
    if (e == DESO_OK && flags[0] != ~flags[1])
        e = deso__fail(DESO_EMISMATCH, FN ": the file has different entries "
                       "on different ranks (not the same file everywhere?)");
    if (e != DESO_OK) pl_csr_free(rows);
    return e;
}

deso_err deso__sparse_load(MPI_Comm comm, const char *path, int64_t *m,
                           int64_t *n, pl_csr *rows)
{
    DESO_CHECK(m != NULL && n != NULL && rows != NULL, DESO_ENULL,
               FN ": NULL output");
    memset(rows, 0, sizeof *rows);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    deso__coo *s = NULL;
    DESO_TRY(open_agreed(comm, path, &s));
    const deso__coo_info *h = deso__coo_info_of(s);
    int64_t lohi[2];
    pl_blocks blocks = {h->m, size};
    pl_blocks_range(&blocks, rank, &lohi[0], &lohi[1]);
    *m = h->m;
    *n = h->n;
    deso_err e = count_agreed(comm, s, lohi, rows);
    if (e == DESO_OK) {
        deso_err local = deso__coo_fill_rows(s, rows);
        e = deso__agree(comm, FN, local, NULL, 0);
    }
    deso__coo_close(s);
    rows->row0 = lohi[0];
    if (e != DESO_OK) pl_csr_free(rows);
    return e;
}
