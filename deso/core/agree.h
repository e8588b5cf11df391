/* Internal: agreeing one outcome across the ranks of a communicator, so
 * that an error seen by one rank is every rank's error before any data
 * moves and nobody waits in a collective the others skipped.            */
#ifndef DESO_AGREE_H
#define DESO_AGREE_H

#include <stdint.h>

#include <mpi.h>

#include "placement/deso_errors.h"

/* Most yes/no questions one agreement carries beside the outcome.         */
#define DESO__AGREE_MAX_FLAGS 16

/* What the lowest failing rank broadcasts: its code and its message.     */
typedef struct deso__verdict {
    int code;
    char msg[448];
} deso__verdict;

/* Returns DESO_OK on every rank when every rank passed local == DESO_OK;
 * else, on every rank, the code of the lowest failing rank with its
 * message (deso_last_error() there), as "fn: rank R: message".  flags[k]
 * (k < nflags <= DESO__AGREE_MAX_FLAGS) come back as their maximum over
 * the ranks, in the same call: yes/no questions as 0 or 1, or a value v
 * beside ~v, which are the same everywhere iff max(v) == ~max(~v).
 * One MPI_Allreduce, plus one MPI_Bcast only when some rank failed.  Not
 * counted in the statistics: callers that do the user's work count it
 * themselves.  Collective.                                                */
deso_err deso__agree(MPI_Comm comm, const char *fn, deso_err local,
                     int64_t *flags, int nflags);

#endif
