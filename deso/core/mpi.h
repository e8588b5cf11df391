/* Internal: MPI's return codes and counts, converted in one place.       */
#ifndef DESO_CORE_MPI_H
#define DESO_CORE_MPI_H

#include <stdint.h>

#include "placement/deso_errors.h"

/* DESO_OK for MPI_SUCCESS; else DESO_EMPI with the message "what: MPI's
 * own text for rc" (deso_last_error).                                    */
deso_err deso__mpi(int rc, const char *what);

/* The same, with the message "fn: call: MPI's text", for the public
 * function fn whose MPI call `call` failed.                              */
deso_err deso__mpi_at(int rc, const char *fn, const char *call);

/* v as an MPI count (int), or DESO_EOVERFLOW naming `what`.              */
deso_err deso__to_int(int64_t v, const char *what, int *out);

/* Returns from the enclosing function when an MPI call fails.            */
#define DESO_MPI_TRY(call, what)                                             \
    do {                                                                     \
        int deso__rc = (call);                                               \
        if (deso__rc != 0) return deso__mpi(deso__rc, (what));               \
    } while (0)

#endif
