#include "deso/core/stats.h"

#include <mpi.h>
#include <string.h>
#include <time.h>

#include "placement/errors.h"

static deso_stats counters;
static double start_time = -1.0;

/* The monotonic clock itself, not MPI_Wtime: the runtime reads it several
 * times per recorded call, and asking MPI whether it is up first cost more
 * than the reading.  Only differences of these readings are used.        */
double deso__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void ensure_started(void)
{
    if (start_time < 0.0) start_time = deso__now();
}

void deso__stats_time(deso__timer t, double seconds)
{
    ensure_started();
    switch (t) {
    case DESO_T_COMPUTE:    counters.time_compute += seconds; break;
    case DESO_T_OVERHEAD:   counters.time_overhead += seconds; break;
    case DESO_T_P2P:        counters.time_p2p += seconds; break;
    case DESO_T_COLLECTIVE: counters.time_collective += seconds; break;
    case DESO_T_OPTIMISE:   counters.time_optimise += seconds; break;
    case DESO_T_IO:         counters.time_io += seconds; break;
    case DESO_T_COUNT:      break;
    }
}

double deso__stats_timed(void)
{
    return counters.time_compute + counters.time_overhead +
           counters.time_p2p + counters.time_collective +
           counters.time_optimise + counters.time_io;
}

double deso__stats_io_time(void) { return counters.time_io; }

void deso__stats_io(int64_t read, int64_t written)
{
    counters.bytes_io_read += read;
    counters.bytes_io_written += written;
}

void deso__stats_traffic(int64_t *bytes, int64_t *msgs)
{
    *bytes = counters.bytes_p2p + counters.bytes_collective;
    *msgs = counters.msgs_p2p + counters.msgs_collective;
}

void deso__stats_p2p(int64_t bytes)
{
    counters.bytes_p2p += bytes;
    counters.msgs_p2p += 1;
}

void deso__stats_shm(int64_t bytes)
{
    deso__stats_p2p(bytes);
    counters.bytes_shm += bytes;
    counters.msgs_shm += 1;
}

void deso__stats_collective(int64_t bytes, int size, int rank_in_comm,
                            int factor)
{
    if (rank_in_comm != 0) return;
    counters.msgs_collective += 1;
    counters.bytes_collective += bytes * (int64_t)(size - 1) * factor;
}

void deso__stats_overlap(void) { counters.nodes_overlapped += 1; }

void deso__stats_replicated(void) { counters.matrices_replicated += 1; }

void deso__stats_replay(bool broken)
{
    if (broken) counters.replays_broken += 1;
    else counters.forces_replayed += 1;
}

void deso__stats_plan(int optimised)
{
    if (optimised) counters.plans_optimised += 1;
    else counters.plans_replayed += 1;
}

deso_err deso_stats_get(deso_stats *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso_stats_get: out is NULL");
    ensure_started();
    *out = counters;
    out->time_total = deso__now() - start_time;
    return DESO_OK;
}

void deso_stats_reset(void)
{
    memset(&counters, 0, sizeof counters);
    start_time = deso__now();
}
