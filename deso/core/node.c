/* Node facts of a communicator (node.h).                                  */
#include "deso/core/node.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int deso__one_node(MPI_Comm comm)
{
    static int key = MPI_KEYVAL_INVALID;
    if (key == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                               MPI_COMM_NULL_DELETE_FN, &key,
                               NULL) != MPI_SUCCESS)
        key = MPI_KEYVAL_INVALID;
    void *val = NULL;
    int found = 0;
    if (key != MPI_KEYVAL_INVALID &&
        MPI_Comm_get_attr(comm, key, &val, &found) == MPI_SUCCESS && found)
        return (int)((intptr_t)val - 1);
    MPI_Comm node = MPI_COMM_NULL;
    int size = 0, nsize = -1;
    MPI_Comm_size(comm, &size);
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                            &node) != MPI_SUCCESS)
        return 0;                               /* MPI's path, then       */
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    int one = nsize == size;
    if (key != MPI_KEYVAL_INVALID)
        MPI_Comm_set_attr(comm, key, (void *)(intptr_t)(one + 1));
    return one;
}

/* This rank's DESO_REMAP_SHM: 0 keeps remaps on MPI messages.            */
static int env_allows(void)
{
    const char *v = getenv("DESO_REMAP_SHM");
    return v == NULL || strcmp(v, "0") != 0;
}

int deso__shm_allowed(MPI_Comm comm)
{
    if (!deso__one_node(comm)) return 0;
    int me = 0;
    MPI_Comm_rank(comm, &me);
    int allow = env_allows();
    /* maxima of: rank 0's value (the others give 0), allowed somewhere,
     * refused somewhere                                                   */
    int v[3] = { me == 0 && allow, allow, !allow };
    if (MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MAX, comm) !=
        MPI_SUCCESS)
        return 0;
    if (v[1] && v[2] && me == 0)
        fprintf(stderr, "deso: warning: DESO_REMAP_SHM differs between "
                        "ranks; every rank uses rank 0's value (%s)\n",
                v[0] ? "shared memory" : "0: MPI");
    return v[0];
}
