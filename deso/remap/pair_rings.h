/* deso/remap/pair_rings.h: one shared-memory ring per ordered pair of
 * ranks, made once for a communicator (internal).
 *
 * The runtime's matrix remaps take the shared-memory transport without
 * any agreement of their own: every remap of a context uses the ring of
 * sender p and receiver q at a place fixed by (p, q) alone, so nothing
 * is exchanged when a remap is planned.  Remaps run in the same order on
 * every rank and each moves, per pair, the chunks both sides planned, so
 * the ring's counters, never reset, stay in step from one remap to the
 * next (each side starts where its own counter stands).                 */
#ifndef DESO_REMAP_PAIR_RINGS_H
#define DESO_REMAP_PAIR_RINGS_H

#include <stdint.h>

#include <mpi.h>

#include "placement/deso_errors.h"

typedef struct deso__pair_rings deso__pair_rings;

/* Rings for every ordered pair of comm's ranks, when every rank is on one
 * node (deso/core/node.h) and comm has more than one rank; else *out is
 * NULL.  Whether they are wanted at all is the caller's (an agreed
 * option).  Collective over comm: the node facts, one
 * MPI_Win_allocate_shared of size - 1 rings per rank and one agreement
 * (not counted in the statistics: set-up).  Errors, the same on
 * every rank: DESO_ENOMEM (some rank's own allocation failed).  When MPI
 * cannot make or map the window on some rank, *out is NULL on every rank
 * (the remaps stay on MPI messages) and DESO_OK is returned.            */
deso_err deso__pair_rings_create(MPI_Comm comm, deso__pair_rings **out);

/* Frees the window.  Collective over the communicator it was made on;
 * NULL-safe (then local).                                                */
void deso__pair_rings_free(deso__pair_rings *pr);

/* The ring of sender `from` and receiver `to` (from != to), mapped here.
 * Local.                                                                 */
char *deso__pair_ring(const deso__pair_rings *pr, int from, int to);

/* Implemented by the transport (remap_shm.c), which owns the ring's
 * format: one ring's bytes; clearing its counters (before any peer uses
 * it); and putting remap r on the rings of pr (local: no communication,
 * no agreement; r is planned on the communicator pr was made on).  pr
 * NULL, or r with nothing to do here, leaves r on MPI messages.  A rank
 * that fails (DESO_ENOMEM, or DESO_EINTERNAL when r sends two messages to
 * one peer) leaves r unusable: the caller must agree the failure before
 * any rank executes r, since the others took the rings.                */
struct deso__remap;
int64_t deso__remap_shm_ring_bytes(void);
void deso__remap_shm_ring_clear(char *ring);
deso_err deso__remap_shm_attach(struct deso__remap *r,
                                const deso__pair_rings *pr);

#endif
