/* deso/remap/shared_array.h: the arrays of deso_redist_array_alloc (internal).
 *
 * Each is one MPI-3 shared window over the allocating communicator: every
 * rank holds its own part and has every other rank's part mapped.  The
 * registry answers the two questions of a single-copy remap: may a peer
 * read this rank's source where it lies, and where, in this process, is a
 * peer's source it published by address.  Ranks are named by their rank in
 * MPI_COMM_WORLD, the one numbering every communicator translates to.    */
#ifndef DESO_SHARED_ARRAY_H
#define DESO_SHARED_ARRAY_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

/* Whether the n doubles at p lie in this rank's own part of one shared
 * array that world rank `peer` has mapped.  Local.                       */
bool deso__shared_readable(const double *p, int64_t n, int peer);

/* Where the n doubles that world rank `owner` sees at address `addr` are
 * mapped in this process, if they lie in its part of a shared array this
 * rank shares with it; NULL otherwise.  Local.                           */
const double *deso__shared_map(int owner, uint64_t addr, int64_t n);

/* Makes the next n calls of deso__shared_map on this rank fail, as if
 * the arrays of two ranks disagreed (tests).                            */
void deso__shared_map_fail(int64_t n);

#endif
