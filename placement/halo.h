/* Internal: the halo of a sparse product y = A x on an explicit placement.
 * Given where every entry of x lives (an owner map), a rank's rows of A
 * name the entries of x it must receive, and from whom; the ranks that
 * own them must send them.  Pure: the MPI layer exchanges the receive
 * lists to learn the send lists, tests transpose them in one process.   */
#ifndef DESO_PLACEMENT_HALO_H
#define DESO_PLACEMENT_HALO_H

#include <stdint.h>

#include "placement/csr.h"

/* Where index j lives: the rank, and its position among that rank's own
 * entries.                                                                 */
typedef struct pl_owner {
    int (*rank)(int64_t j, const void *arg);
    int64_t (*local)(int64_t j, const void *arg);
    const void *arg;
} pl_owner;

/* Contiguous blocks of n indices over nparts ranks, the first n % nparts
 * one longer (deso/io/sparse_load.h's row blocks).                       */
typedef struct pl_blocks {
    int64_t n;
    int nparts;
} pl_blocks;
pl_owner pl_owner_blocks(const pl_blocks *b);
void pl_blocks_range(const pl_blocks *b, int r, int64_t *lo, int64_t *hi);

/* An explicit partition part[0 .. n) (ranks in [0, nparts)); an index's
 * local position is its rank among its part's indices in increasing
 * order.  Holds O(n) words: for the rank that ran the partitioner, and
 * for tests.                                                               */
typedef struct pl_owner_table {
    int64_t n;
    int nparts;
    const int32_t *part;    /* borrowed                                     */
    int64_t *local;         /* n                                            */
    int64_t *count;         /* nparts: indices owned                       */
} pl_owner_table;
deso_err pl_owner_table_init(pl_owner_table *t, const int32_t *part,
                             int64_t n, int nparts);
pl_owner pl_owner_table_map(const pl_owner_table *t);
void pl_owner_table_free(pl_owner_table *t);          /* NULL-safe        */

/* recv: the x entries rank `me` needs from rank s are recv_idx[recv_ptr[s]
 * .. recv_ptr[s + 1]), ascending global indices (none from itself).
 * send: likewise, the entries it sends to each rank, ascending.           */
typedef struct pl_halo {
    int nparts;
    int64_t *recv_ptr, *recv_idx;
    int64_t *send_ptr, *send_idx;   /* NULL until pl_halo_sends            */
} pl_halo;

/* The receive lists of the rank holding a's rows.  Errors: DESO_EINVAL
 * for an owner outside [0, nparts), DESO_ENOMEM.                          */
deso_err pl_halo_recv(const pl_csr *a, const pl_owner *own, int me,
                      int nparts, pl_halo *h);

/* Every rank's send lists from every rank's receive lists (h[0 .. nparts),
 * all in one process).                                                     */
deso_err pl_halo_sends(pl_halo *h, int nparts);

/* Local column indices of a's entries: an owned entry j at own->local(j),
 * a received one at nowned + its position in recv_idx (the x buffer holds
 * the rank's own entries, then the halo in receive order).  *lcol is
 * malloc'ed.  DESO_EOVERFLOW when nowned plus the halo exceed 2^31 - 1:
 * the caller then keeps 64-bit columns.                                    */
deso_err pl_halo_localise(const pl_csr *a, const pl_owner *own, int me,
                          int64_t nowned, const pl_halo *h, int32_t **lcol);

void pl_halo_free(pl_halo *h);                     /* NULL-safe           */

#endif
