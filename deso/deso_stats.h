/* deso statistics: time, bytes and messages per category, counted where the
 * library communicates.  Part of the public API (included by deso.h).
 *
 * Counting is fixed so that figures compare across modes and machines
 * (doc/DESIGN.md, "Counting bytes and messages"):
 *   p2p         every message this rank sends and its payload bytes;
 *   collective  msgs: one per communicator that runs the operation (counted
 *               by that communicator's rank 0); bytes: payload m times
 *               (ranks in the communicator - 1) for reduce, bcast, gather,
 *               scatter, twice that for allreduce and allgather.
 * Set-up and measurement (the options agreement at deso_init, the
 * alpha-beta probe, wisdom files, deso_log_view) are not counted.  Sum the
 * counters over ranks for the totals (deso-cg does, with one MPI_Reduce).
 * time_* are this rank's seconds in each category.                         */
#ifndef DESO_STATS_H
#define DESO_STATS_H

#include <stdint.h>

#include "deso_errors.h"

/* The library is built with hidden visibility: what is declared here is
 * its interface, and the only names it exports.                          */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct deso_stats {
    double time_total;        /* from deso_init (or the last reset)          */
    double time_compute;      /* local kernels                               */
    double time_overhead;     /* recording, exchange plans, packing          */
    double time_p2p;          /* point-to-point communication                */
    double time_collective;   /* collectives                                 */
    double time_optimise;     /* choosing plans (cache, wisdom, search)      */
    int64_t bytes_p2p, msgs_p2p;
    int64_t bytes_collective, msgs_collective;
    int64_t plans_optimised, plans_replayed;
    /* of the p2p counts: remap messages on the shared-memory transport,
     * which no MPI call carries (DESO_REMAP_SHM)                           */
    int64_t bytes_shm, msgs_shm;
    /* out-of-core matrices: the time the kernels waited for their local
     * array files (reads overlap the computation, so this is the part they
     * did not hide) and writes took, and the bytes read and written       */
    double time_io;
    int64_t bytes_io_read, bytes_io_written;
    /* nodes the executor ran while a reduction it had posted was still in
     * flight (its latency hidden behind their work; doc/DESIGN.md, "The
     * executor"): counted from the schedule, the same on every rank       */
    int64_t nodes_overlapped;
    /* forces whose calls were replayed, not recorded (of plans_replayed;
     * doc/DESIGN.md, "Replaying an iteration"), and the replays broken by
     * a call, a handle or a force the replay did not expect               */
    int64_t forces_replayed, replays_broken;
    /* matrices copied whole onto every rank (mode full's replication of a
     * small matrix, so that its products run without communicating; made
     * once per matrix value, then kept with it)                          */
    int64_t matrices_replicated;
} deso_stats;

/* This rank's counters since start-up or the last reset.  Local.           */
deso_err deso_stats_get(deso_stats *out);

/* Zeroes this rank's counters and restarts time_total.  Local.            */
void deso_stats_reset(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
