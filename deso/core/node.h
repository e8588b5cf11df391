/* Internal: whether the ranks of a communicator share one node, and
 * whether remaps on it may use shared memory; the same answer on every
 * rank, so that all of them enter the shared-memory set-up or none.      */
#ifndef DESO_NODE_H
#define DESO_NODE_H

#include <mpi.h>

/* Whether every rank of comm is on one node.  Collective the first time
 * for a communicator (an MPI_Comm_split_type, slow when ranks outnumber
 * cores), then read from an attribute cached on comm: every rank asks in
 * the same order, so every rank hits or misses together.                */
int deso__one_node(MPI_Comm comm);

/* Whether a remap on comm may use the shared-memory transport: every rank
 * is on one node and rank 0's DESO_REMAP_SHM, read now, allows it (unset,
 * or any value but 0).  Where the variable differs between ranks, rank
 * 0's value holds everywhere and rank 0 warns once on stderr.  Collective:
 * deso__one_node, then (on one node) one all-reduce of three ints, not
 * counted in the statistics.                                             */
int deso__shm_allowed(MPI_Comm comm);

#endif
