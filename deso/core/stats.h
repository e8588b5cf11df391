/* Internal: the counters behind deso_stats, one set per process.           */
#ifndef DESO_STATS_IMPL_H
#define DESO_STATS_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "deso/deso_stats.h"

typedef enum deso__timer {
    DESO_T_COMPUTE = 0,
    DESO_T_OVERHEAD,
    DESO_T_P2P,
    DESO_T_COLLECTIVE,
    DESO_T_OPTIMISE,
    DESO_T_IO,
    DESO_T_COUNT
} deso__timer;

/* Wall-clock seconds on the monotonic clock (only differences mean much).  */
double deso__now(void);

/* Adds seconds to a category.                                              */
void deso__stats_time(deso__timer t, double seconds);

/* Seconds in all categories so far: a caller that times a whole step
 * charges what its parts did not time to one category.                   */
double deso__stats_timed(void);

/* Bytes and messages counted so far (point-to-point and collective).      */
void deso__stats_traffic(int64_t *bytes, int64_t *msgs);

/* One point-to-point message of `bytes` payload sent by this rank.        */
void deso__stats_p2p(int64_t bytes);

/* The same, for a remap message on the shared-memory transport: counted as
 * point-to-point, and apart, since no MPI call carries it.                */
void deso__stats_shm(int64_t bytes);

/* One collective on a communicator of `size` ranks, where this rank has
 * rank `rank_in_comm`; `factor` is 1 for reduce/bcast/gather/scatter and 2
 * for allreduce/allgather; `bytes` is the payload m.  Only rank 0 of the
 * communicator counts, so the sum over ranks counts each call once.       */
void deso__stats_collective(int64_t bytes, int size, int rank_in_comm,
                            int factor);

void deso__stats_plan(int optimised);

/* One node run while a reduction posted before it was in flight.         */
void deso__stats_overlap(void);
/* A matrix remapped to a copy whole on every rank.                       */
void deso__stats_replicated(void);
/* A force replayed (broken false), or a replay broken.                   */
void deso__stats_replay(bool broken);

/* Bytes read from and written to out-of-core matrices' local files.      */
void deso__stats_io(int64_t read, int64_t written);
/* The I/O seconds counted so far.                                         */
double deso__stats_io_time(void);   /* 1: optimised, 0: replayed       */

#endif
