/* deso/remap/pair_rings.c: a ring per ordered pair of ranks in one MPI-3
 * shared window (pair_rings.h).
 *
 * Rank p's part of the window holds its size - 1 rings, the one for
 * receiver q at slot q (q < p) or q - 1 (q > p): where a ring lies follows
 * from the pair alone, so a remap finds its rings without asking anyone.
 * Each rank clears its own rings' counters before the agreement that ends
 * the set-up, so no peer reads them before they are cleared.            */
#include "deso/remap/pair_rings.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "deso/core/agree.h"
#include "deso/core/mpi.h"
#include "deso/core/node.h"
#include "placement/alloc.h"
#include "placement/errors.h"

struct deso__pair_rings {
    MPI_Win win;
    int size;
    int64_t bytes;           /* one ring                                  */
    char **part;             /* per rank: its part, mapped here           */
};

#define WHERE "force (the matrix remaps' shared-memory rings)"

void deso__pair_rings_free(deso__pair_rings *pr)
{
    if (pr == NULL) return;
    if (pr->win != MPI_WIN_NULL) MPI_Win_free(&pr->win);
    free(pr->part);
    free(pr);
}

static int64_t slot_of(int from, int to) { return to < from ? to : to - 1; }

char *deso__pair_ring(const deso__pair_rings *pr, int from, int to)
{
    return pr->part[from] + slot_of(from, to) * pr->bytes;
}

/* The window (each rank's part of n bytes, placed near it), or an error
 * for the agreement; collective even when n is 0.                       */
static deso_err allocate(MPI_Comm comm, int64_t n, deso__pair_rings *pr,
                         char **mine)
{
    MPI_Info info = MPI_INFO_NULL;
    if (MPI_Info_create(&info) == MPI_SUCCESS)
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    else
        info = MPI_INFO_NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)n, 1, info, comm, mine,
                                     &pr->win);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        pr->win = MPI_WIN_NULL;
        return deso__mpi_at(rc, WHERE, "MPI_Win_allocate_shared");
    }
    return DESO_OK;
}

/* Every rank's part mapped here, each checked to hold its rings.        */
static deso_err map_parts(deso__pair_rings *pr, int64_t need)
{
    for (int q = 0; q < pr->size; q++) {
        MPI_Aint sz = 0;
        int du = 0;
        int rc = MPI_Win_shared_query(pr->win, q, &sz, &du, &pr->part[q]);
        if (rc != MPI_SUCCESS)
            return deso__mpi_at(rc, WHERE, "MPI_Win_shared_query");
        if ((int64_t)sz < need)
            return deso__fail(DESO_ENOMEM, WHERE ": rank %d has no room "
                              "for its rings", q);
    }
    return DESO_OK;
}

/* Counters of this rank's own rings cleared.                            */
static void clear_mine(deso__pair_rings *pr, int me, char *mine)
{
    for (int q = 0; q < pr->size; q++)
        if (q != me)
            deso__remap_shm_ring_clear(mine + slot_of(me, q) * pr->bytes);
    atomic_thread_fence(memory_order_seq_cst);
}

deso_err deso__pair_rings_create(MPI_Comm comm, deso__pair_rings **out)
{
    *out = NULL;
    int size = 1, me = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &me);
    if (size < 2 || !deso__one_node(comm)) return DESO_OK;
    deso__pair_rings tmp = {
        .win = MPI_WIN_NULL, .size = size,
        .bytes = deso__remap_shm_ring_bytes(),
        .part = deso__calloc((size_t)size, sizeof *tmp.part) };
    deso__pair_rings *pr = deso__malloc(sizeof *pr);
    int64_t need = (int64_t)(size - 1) * tmp.bytes;
    deso_err e = DESO_OK;
    if (tmp.part == NULL || pr == NULL)
        e = deso__fail(DESO_ENOMEM, WHERE ": out of memory");
    /* A rank short of memory still takes part in every collective.       */
    char *mine = NULL;
    deso_err w = allocate(comm, e == DESO_OK ? need : 0, &tmp, &mine);
    if (w == DESO_OK && e == DESO_OK) w = map_parts(&tmp, need);
    if (w == DESO_OK && e == DESO_OK) clear_mine(&tmp, me, mine);
    /* Out of memory (DESO_ENOMEM), or a window MPI cannot give (a small
     * /dev/shm): no rings on any rank (the caller keeps its remaps on
     * MPI).                                                               */
    int64_t no_window = w != DESO_OK;
    e = deso__agree(comm, WHERE, e, &no_window, 1);
    if (e != DESO_OK || no_window) {
        if (tmp.win != MPI_WIN_NULL) MPI_Win_free(&tmp.win);
        free(tmp.part);
        free(pr);
        return e;
    }
    *pr = tmp;
    *out = pr;
    return DESO_OK;
}
