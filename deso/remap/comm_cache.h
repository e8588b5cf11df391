/* deso/remap/comm_cache.h: what the public remaps keep per user
 * communicator (internal): the duplicate their messages use, a pool of
 * shared-memory rings and the MPI transport's last message buffers, so
 * that only the first remap on a communicator pays for MPI_Comm_dup,
 * MPI_Win_allocate_shared and mapping the buffers' pages.  Kept in an
 * attribute of the user's communicator and freed with it (or with the
 * last remap that still uses it, if that comes later).                   */
#ifndef DESO_REMAP_COMM_CACHE_H
#define DESO_REMAP_COMM_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "placement/deso_errors.h"

typedef struct deso__comm_cache deso__comm_cache;

/* A ring of the pool: slot `slot` of window `win`, this rank's part.     */
typedef struct deso__ring {
    int win;
    int64_t slot;
    char *at;                /* its address here                          */
} deso__ring;

/* The MPI transport's two message buffers.                             */
typedef enum deso__buf_kind { DESO__BUF_SEND, DESO__BUF_RECV } deso__buf_kind;

/* comm's cache, with a reference for the caller.  Collective the first
 * time on comm (MPI_Comm_dup, errors returned on the duplicate); then
 * local: every rank asks in the same order, so every rank hits or misses
 * together.  Errors: DESO_EMPI, DESO_ENOMEM (*out NULL).                 */
deso_err deso__comm_cache_get(MPI_Comm comm, deso__comm_cache **out);

/* The duplicate (borrowed: valid while the reference is held).           */
MPI_Comm deso__comm_cache_comm(const deso__comm_cache *c);

/* Drops a reference; the last one frees the rings' windows and the
 * duplicate (collective then: every rank drops its last reference in the
 * same call, as remaps are destroyed and communicators freed
 * collectively).  NULL-safe.                                             */
void deso__comm_cache_release(deso__comm_cache *c);

/* Rings of `bytes` bytes (one size per cache) missing here for n more:
 * local.                                                                  */
int64_t deso__ring_short(const deso__comm_cache *c, int64_t n,
                         int64_t bytes);

/* Adds a window with `need` rings of `bytes` here (each rank its own
 * need, 0 allowed).  Collective; every rank must call it when any rank's
 * deso__ring_short was positive.  Errors: DESO_EMPI, DESO_ENOMEM.        */
deso_err deso__ring_grow(deso__comm_cache *c, int64_t need, int64_t bytes);

/* Takes n free rings (local); false when there are not enough (call
 * deso__ring_grow first).                                                */
bool deso__ring_take(deso__comm_cache *c, int64_t n, deso__ring *out);

/* Gives rings back to the pool (local).                                  */
void deso__ring_give(deso__comm_cache *c, const deso__ring *r, int64_t n);

/* Where rank `rank`'s slot `slot` of window `win` is mapped here, or NULL
 * (MPI failed; *e says why).                                             */
char *deso__ring_peer(const deso__comm_cache *c, int win, int rank,
                      int64_t slot, deso_err *e);

/* The kept buffer of `kind` (local; it leaves the cache) when it holds
 * at least `need` > 0 doubles (*len: how many), else NULL (a kept buffer
 * too small is freed).  NULL-safe (NULL).                                */
double *deso__buf_take(deso__comm_cache *c, deso__buf_kind kind,
                       int64_t need, int64_t *len);

/* Keeps buf (len doubles, from deso__malloc) for the next remap that
 * takes one of `kind`, or frees it: of it and the one kept, the larger
 * stays, so a communicator holds at most one buffer of each kind, no
 * larger than its largest remap's.  Local; c NULL frees it; buf NULL
 * does nothing.  The cache frees what it holds when it goes.             */
void deso__buf_keep(deso__comm_cache *c, deso__buf_kind kind, double *buf,
                    int64_t len);

/* How many caches exist in this process, for tests: one per communicator
 * that ran a remap, gone once it and its remaps are freed.               */
int deso__comm_cache_count(void);

#endif
