/* Partitioning the navigational trace graph with METIS (see ntg.h).      */
#include "optimizer/ntg.h"

#include <string.h>

#include <metis.h>

#include "placement/errors.h"

/* METIS's random choices follow this seed: a fixed one makes the partition
 * a pure function of the graph, the same on every rank and in every run. */
#define METIS_SEED 20070910
/* 1.03: METIS's own default for k-way, i.e. every part holds at most 3%
 * more of each vector than an even share.                                 */
#define UFACTOR 30

_Static_assert(sizeof(idx_t) == sizeof(int32_t), "deso assumes METIS built "
               "with 32-bit idx_t (Debian's libmetis)");

static deso_err metis_error(int rc)
{
    if (rc == METIS_ERROR_MEMORY)
        return deso__fail(DESO_ENOMEM, "METIS_PartGraphKway: out of memory");
    return deso__fail(rc == METIS_ERROR_INPUT ? DESO_EINVAL : DESO_EINTERNAL,
                      "METIS_PartGraphKway failed (code %d)", rc);
}

deso_err opt_ntg_partition(const opt_ntg *g, int nparts, int32_t *vpart)
{
    DESO_CHECK(g != NULL && vpart != NULL, DESO_ENULL, "opt_ntg_partition: NULL");
    DESO_CHECK(nparts >= 1, DESO_EINVAL, "NTG: %d parts", nparts);
    /* METIS wants at least two parts, and one is no choice at all.        */
    if (nparts == 1 || g->nvtx == 0) {
        memset(vpart, 0, (size_t)g->nvtx * sizeof *vpart);
        return DESO_OK;
    }
    idx_t opts[METIS_NOPTIONS];
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_NUMBERING] = 0;
    opts[METIS_OPTION_SEED] = METIS_SEED;
    opts[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;   /* the paper's cut     */
    opts[METIS_OPTION_UFACTOR] = UFACTOR;
    idx_t nvtx = (idx_t)g->nvtx, ncon = g->nvec, np = nparts, cut = 0;
    int rc = METIS_PartGraphKway(&nvtx, &ncon, g->xadj, g->adjncy, g->vwgt,
                                 NULL, g->adjwgt, &np, NULL, NULL, opts, &cut,
                                 vpart);
    return rc == METIS_OK ? DESO_OK : metis_error(rc);
}

void opt_ntg_owners(const opt_ntg *g, const int32_t *vpart, int vec,
                    int32_t *owner)
{
    for (int64_t i = 0; i < g->n; i++)
        owner[i] = vpart[vec * g->nblocks + i / g->block];
}
