/* One agreement: an all-reduce of "the lowest failing rank" and the
 * callers' flags, then that rank's code and message by broadcast.        */
#include "deso/core/agree.h"
#include "deso/core/mpi.h"

#include <stdio.h>
#include <string.h>

#include "placement/errors.h"

deso_err deso__agree(MPI_Comm comm, const char *fn, deso_err local,
                     int64_t *flags, int nflags)
{
    if (nflags < 0 || nflags > DESO__AGREE_MAX_FLAGS)
        return deso__fail(DESO_EINTERNAL, "%s: %d flags to agree (at most "
                          "%d)", fn, nflags, DESO__AGREE_MAX_FLAGS);
    int size = 1, me = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &me);
    /* v[0] = size - rank on a failing rank: the maximum names the lowest */
    int64_t v[1 + DESO__AGREE_MAX_FLAGS];
    v[0] = local != DESO_OK ? size - me : 0;
    for (int k = 0; k < nflags; k++) v[1 + k] = flags[k];
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, 1 + nflags, MPI_INT64_T, MPI_MAX,
                           comm);
    if (rc != MPI_SUCCESS)
        return deso__mpi_at(rc, fn, "MPI_Allreduce");
    for (int k = 0; k < nflags; k++) flags[k] = v[1 + k];
    if (v[0] == 0) return DESO_OK;
    int root = size - (int)v[0];
    deso__verdict vd;
    memset(&vd, 0, sizeof vd);
    if (me == root) {
        vd.code = (int)local;
        snprintf(vd.msg, sizeof vd.msg, "%s", deso_last_error());
    }
    rc = MPI_Bcast(&vd, (int)sizeof vd, MPI_BYTE, root, comm);
    if (rc != MPI_SUCCESS)
        return deso__mpi_at(rc, fn, "MPI_Bcast");
    vd.msg[sizeof vd.msg - 1] = '\0';
    /* the message usually names fn already: say it once                  */
    const char *m = vd.msg;
    size_t n = strlen(fn);
    if (strncmp(m, fn, n) == 0 && m[n] == ':' && m[n + 1] == ' ') m += n + 2;
    return deso__fail((deso_err)vd.code, "%s: rank %d: %s", fn, root, m);
}
