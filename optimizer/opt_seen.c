/* The plans a search has already costed, with their modelled times.  The
 * greedy search asks for the same plan many times over (a fit tries the
 * node's current placement among its candidates; a trial the fit has just
 * costed is costed again to be accepted; the node sweep and the edge
 * attempts of the second start meet the plans of the first): in CG's
 * iteration about half of its evaluations.  A plan's modelled time is a
 * function of the plan alone (opt__eval_time gives the same double for
 * the same plan, whatever it evaluated before), so a time found here is
 * the one an evaluation would give, bit for bit, and the search takes
 * every decision it took without it.
 *
 * Open addressing on the caller's key of the plan (any 64-bit function
 * of it: the search keeps one as it changes plans node by node); a hit
 * compares the whole plan, so two plans never share a time.  Plans are
 * kept in one array, nnodes placements each; it and the slots (twice as
 * many) grow fourfold when full: a search keeps tens to hundreds of
 * plans.                                                                 */
#include "optimizer/opt_impl.h"

#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/alloc.h"

struct opt__seen {
    int nnodes;
    int n, cap;               /* plans kept, room for                      */
    opt__place *plans;        /* plan k: plans[k * nnodes ..]              */
    double *time;
    uint64_t *hash;
    int *slot, nslot;         /* plan index, -1 empty; nslot = 2 cap       */
};

/* The slot holding plan p (hash h), or the empty slot where it would go. */
static int seen_slot(const opt__seen *s, const opt__place *p, uint64_t h)
{
    unsigned mask = (unsigned)s->nslot - 1;
    unsigned k = (unsigned)(h >> 32) & mask;
    size_t bytes = (size_t)s->nnodes * sizeof *p;
    for (;; k = (k + 1) & mask) {
        int x = s->slot[k];
        if (x < 0) return (int)k;
        if (s->hash[x] == h &&
            memcmp(&s->plans[(size_t)x * (size_t)s->nnodes], p, bytes) == 0)
            return (int)k;
    }
}

deso_err opt__seen_new(int nnodes, opt__seen **out)
{
    opt__seen *s = deso__calloc(1, sizeof *s);
    DESO_CHECK(s != NULL, DESO_ENOMEM, "optimizer: out of memory");
    s->nnodes = nnodes > 0 ? nnodes : 1;
    *out = s;
    return DESO_OK;
}

void opt__seen_free(opt__seen *s)
{
    if (s == NULL) return;
    free(s->plans);
    free(s->time);
    free(s->hash);
    free(s->slot);
    free(s);
}

bool opt__seen_find(const opt__seen *s, const opt__place *p, uint64_t h,
                    double *time)
{
    if (s->n == 0) return false;
    int x = s->slot[seen_slot(s, p, h)];
    if (x < 0) return false;
    *time = s->time[x];
    return true;
}

/* Room for one more plan: the arrays and the slots grow fourfold (the
 * slots are refilled from the kept keys).                                */
static deso_err seen_grow(opt__seen *s)
{
    if (s->n < s->cap) return DESO_OK;
    int cap = s->cap ? 4 * s->cap : 64;
    size_t nn = (size_t)s->nnodes;
    opt__place *pl = deso__realloc(s->plans, (size_t)cap * nn * sizeof *pl);
    if (pl != NULL) s->plans = pl;
    double *t = pl ? deso__realloc(s->time, (size_t)cap * sizeof *t) : NULL;
    if (t != NULL) s->time = t;
    uint64_t *h = t ? deso__realloc(s->hash, (size_t)cap * sizeof *h) : NULL;
    if (h != NULL) s->hash = h;
    int *sl = h ? deso__malloc((size_t)cap * 2 * sizeof *sl) : NULL;
    DESO_CHECK(sl != NULL, DESO_ENOMEM, "optimizer: out of memory");
    free(s->slot);
    s->slot = sl;
    s->nslot = 2 * cap;
    s->cap = cap;
    for (int k = 0; k < s->nslot; k++) sl[k] = -1;
    for (int x = 0; x < s->n; x++)
        sl[seen_slot(s, &s->plans[(size_t)x * nn], s->hash[x])] = x;
    return DESO_OK;
}

deso_err opt__seen_add(opt__seen *s, const opt__place *p, uint64_t h,
                       double time)
{
    DESO_TRY(seen_grow(s));
    size_t nn = (size_t)s->nnodes;
    int k = seen_slot(s, p, h);
    if (s->slot[k] >= 0) return DESO_OK;          /* already kept          */
    memcpy(&s->plans[(size_t)s->n * nn], p, nn * sizeof *p);
    s->time[s->n] = time;
    s->hash[s->n] = h;
    s->slot[k] = s->n++;
    return DESO_OK;
}
