/* MPI return codes and counts (mpi.h).                                    */
#include "deso/core/mpi.h"

#include <limits.h>
#include <stdio.h>

#include <mpi.h>

#include "placement/errors.h"

deso_err deso__mpi(int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return DESO_OK;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
    return deso__fail(DESO_EMPI, "%s: %s (MPI error %d)", what,
                      len > 0 ? msg : "failed", rc);
}

deso_err deso__mpi_at(int rc, const char *fn, const char *call)
{
    char what[160];
    snprintf(what, sizeof what, "%s: %s", fn, call);
    return deso__mpi(rc, what);
}

deso_err deso__to_int(int64_t v, const char *what, int *out)
{
    if (v < INT_MIN || v > INT_MAX)
        return deso__fail(DESO_EOVERFLOW,
                          "%s = %lld does not fit in an MPI int", what,
                          (long long)v);
    *out = (int)v;
    return DESO_OK;
}
