/* The communication counter: a PMPI interposer (libpmpi_count.so, loaded
 * with LD_PRELOAD) that records what the process hands to MPI, counted
 * independently of deso's own statistics.
 *
 * Point-to-point: every send (blocking or not) adds one call and its
 * payload, count x type size.  Receives are counted apart.  Collectives:
 * one record per call with its kind, the communicator's size, this
 * process's rank in it and the payload this process passes (count x type
 * size of the send side; the receive side for a root-only buffer).
 * Communicator and window set-up calls are collective too and are recorded
 * with kind PC_SETUP, so nothing that synchronises ranks goes unseen.
 *
 * A test program reaches the counter with pc_lookup(), which finds the
 * interposer's functions by dlsym and fails if it was not preloaded.  With
 * PMPI_COUNT_OUT=path in the environment, every process also appends one
 * JSON line of totals to that file at MPI_Finalize.                      */
#ifndef PMPI_COUNT_H
#define PMPI_COUNT_H

#include <stddef.h>

enum pc_kind {
    PC_BCAST, PC_REDUCE, PC_ALLREDUCE, PC_GATHER, PC_ALLGATHER, PC_SCATTER,
    PC_ALLTOALL, PC_BARRIER, PC_OTHER, PC_SETUP, PC_NKINDS
};

typedef struct pc_coll {
    int kind;          /* enum pc_kind                                   */
    int size;          /* ranks in the communicator                      */
    int rank;          /* this process's rank in it                      */
    long long bytes;   /* payload this process passes                    */
} pc_coll;

typedef struct pc_p2p {
    long long sends, send_bytes;     /* MPI_Send, Isend, Ssend, Rsend, ...   */
    long long recvs, recv_bytes;     /* posted receive buffers               */
    long long persistent;            /* MPI_Start(all) of persistent requests */
} pc_p2p;

typedef struct pc_api {
    void (*reset)(void);
    void (*p2p)(pc_p2p *out);
    /* the collectives recorded since the last reset, in call order        */
    size_t (*colls)(const pc_coll **log);
} pc_api;

#define PC_NAMES { "bcast", "reduce", "allreduce", "gather", "allgather", \
                   "scatter", "alltoall", "barrier", "other", "setup" }

#ifndef PMPI_COUNT_SELF
#include <dlfcn.h>
/* 0 when the interposer is loaded, -1 when it is not.                    */
static inline int pc_lookup(pc_api *api)
{
    api->reset = (void (*)(void))dlsym(RTLD_DEFAULT, "pc_reset");
    api->p2p = (void (*)(pc_p2p *))dlsym(RTLD_DEFAULT, "pc_get_p2p");
    api->colls = (size_t (*)(const pc_coll **))dlsym(RTLD_DEFAULT, "pc_get_colls");
    return api->reset && api->p2p && api->colls ? 0 : -1;
}
#endif

#endif
