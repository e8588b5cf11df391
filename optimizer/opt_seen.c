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
 * kept in blocks of SEEN_BLOCK plans, nnodes placements each, so that
 * growing never copies them (a search keeps tens to hundreds of plans);
 * the times, keys and slots (twice as many) grow fourfold when full.    */
#include "optimizer/opt_impl.h"

#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/alloc.h"

#define SEEN_BLOCK 64
#define SEEN_FIRST 256        /* plans the first table holds: most searches
                               * of a solver's iteration never grow it     */

struct opt__seen {
    int nnodes;
    int n, cap;               /* plans kept, room for                      */
    opt__place **block;       /* plan k: block[k / SEEN_BLOCK][(k %
                               * SEEN_BLOCK) * nnodes ..]                 */
    int nblock, cap_block;
    double *time;
    uint64_t *hash;
    int *slot, nslot;         /* plan index, -1 empty; nslot = 2 cap       */
    /* the last find: its plan, key and slot, and how many plans were kept
     * then (a search adds the plan a find has just missed: no probe again) */
    const opt__place *probe_p;
    uint64_t probe_h;
    int probe, probe_n;
};

static opt__place *plan_at(const opt__seen *s, int x)
{
    return s->block[x / SEEN_BLOCK] +
           (size_t)(x % SEEN_BLOCK) * (size_t)s->nnodes;
}

/* The slot holding plan p (hash h), or the empty slot where it would go. */
static int seen_slot(const opt__seen *s, const opt__place *p, uint64_t h)
{
    unsigned mask = (unsigned)s->nslot - 1;
    unsigned k = (unsigned)(h >> 32) & mask;
    size_t bytes = (size_t)s->nnodes * sizeof *p;
    for (;; k = (k + 1) & mask) {
        int x = s->slot[k];
        if (x < 0) return (int)k;
        if (s->hash[x] == h && memcmp(plan_at(s, x), p, bytes) == 0)
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
    for (int b = 0; b < s->nblock; b++) free(s->block[b]);
    free(s->block);
    free(s->time);
    free(s->hash);
    free(s->slot);
    free(s);
}

bool opt__seen_find(opt__seen *s, const opt__place *p, uint64_t h,
                    double *time)
{
    s->probe_p = NULL;
    if (s->n == 0) return false;
    int k = seen_slot(s, p, h), x = s->slot[k];
    s->probe_p = p;
    s->probe_h = h;
    s->probe = k;
    s->probe_n = s->n;
    if (x < 0) return false;
    *time = s->time[x];
    return true;
}

/* Room for one more block of plans.                                      */
static deso_err block_room(opt__seen *s)
{
    if (s->nblock * SEEN_BLOCK > s->n) return DESO_OK;
    if (s->nblock == s->cap_block) {
        int cap = s->cap_block ? 2 * s->cap_block : 4;
        opt__place **b = deso__realloc(s->block, (size_t)cap * sizeof *b);
        DESO_CHECK(b != NULL, DESO_ENOMEM, "optimizer: out of memory");
        s->block = b;
        s->cap_block = cap;
    }
    size_t bytes = (size_t)SEEN_BLOCK * (size_t)s->nnodes * sizeof(opt__place);
    s->block[s->nblock] = deso__malloc(bytes);
    DESO_CHECK(s->block[s->nblock] != NULL, DESO_ENOMEM,
               "optimizer: out of memory");
    s->nblock++;
    return DESO_OK;
}

/* Room for one more plan: a block when the last is full; the times, keys
 * and slots grow fourfold (the slots refilled from the kept keys).       */
static deso_err seen_grow(opt__seen *s)
{
    DESO_TRY(block_room(s));
    if (s->n < s->cap) return DESO_OK;
    int cap = s->cap ? 4 * s->cap : SEEN_FIRST;
    double *t = deso__realloc(s->time, (size_t)cap * sizeof *t);
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
        sl[seen_slot(s, plan_at(s, x), s->hash[x])] = x;
    return DESO_OK;
}

deso_err opt__seen_add(opt__seen *s, const opt__place *p, uint64_t h,
                       double time)
{
    int cap = s->cap;
    DESO_TRY(seen_grow(s));
    size_t nn = (size_t)s->nnodes;
    /* the slot a find just probed for this plan, unless slots were remade */
    bool probed = s->probe_p == p && s->probe_h == h &&
                  s->probe_n == s->n && s->cap == cap;
    int k = probed ? s->probe : seen_slot(s, p, h);
    if (s->slot[k] >= 0) return DESO_OK;          /* already kept          */
    memcpy(plan_at(s, s->n), p, nn * sizeof *p);
    s->time[s->n] = time;
    s->hash[s->n] = h;
    s->slot[k] = s->n++;
    return DESO_OK;
}
