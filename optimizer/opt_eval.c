/* The search's evaluator: a plan's modelled cost exactly as
 * opt_plan_cost (opt_cost.c) computes it, for thousands of plans of one
 * graph that differ in a node or two.  The walk is the same: node by
 * node, each operand asks its value for a view in the layout required
 * (an existing one is free; else broadcasts from the first view with the
 * same folding and fewer copies; else an exchange from the primary, or a
 * remap for a matrix; the new view is kept right after the primary);
 * then the node's own collective (a fused group's is its first member's);
 * then the live-out values read in a wanted layout; last, the time of
 * moving loop-carried values back (opt_graph_carry).  What it keeps:
 *   - every layout gets an id (equal layouts, one id: comparing ids
 *     compares layouts);
 *   - the cost of serving one layout from another is computed once per
 *     pair of ids and looked up after that;
 *   - a value's views evolve independently of every other value's, so
 *     each value's edges (its readers in node order, then its wanted
 *     read) are kept with the layouts they were computed for, and walked
 *     again only when its producer's result or a reader's layout changed;
 *   - a reduction's fusion key and collective, per placement met; the
 *     fused groups are remade only when a key or an all-reduce changes.
 * Nothing is allocated while evaluating, except when a layout, a pair or
 * a reduction's placement is met for the first time.  The total adds the
 * terms in opt_plan_cost's order (node by node: its edges, then its
 * collective; then the wanted reads; then the carried values' returns),
 * keeping the partial sums before the
 * first term that changed, so it is the same double, bit for bit.        */
#include "optimizer/opt_impl.h"

#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/alloc.h"

#define EVAL_MAXVIEWS 16
#define RED_DM_BITS 5
#define RED_DM (1 << RED_DM_BITS)

/* A value's views while the plan runs: layout ids, [0] the primary, then
 * the views it was born with, then those edges of this DAG made, oldest
 * first.  The executor keeps a new view right after the primary, so its
 * order is [0], the made ones newest first, then the others: appending
 * here and reading in that order (view_at) moves nothing.                */
typedef struct vstate {
    int nv, nb;                    /* views, of which born with         */
    int v[EVAL_MAXVIEWS];
} vstate;

/* The k-th view in the executor's order.                                  */
static inline int view_at(const vstate *vs, int k)
{
    if (k == 0) return vs->v[0];
    int made = vs->nv - vs->nb;
    return k <= made ? vs->v[vs->nv - k] : vs->v[k - made];
}

/* The cost of serving layout `to` from view `from`; key 0: empty slot.    */
typedef struct pair_ent {
    uint64_t key;
    opt_move move;
    opt_counts c;
} pair_ent;

/* A reduction under one placement: what the fused groups and its
 * collective need from it, computed once per (node, placement).          */
typedef struct red_ent {
    int node;
    opt__place pl;
    int key, rd;              /* opt__fuse_key, blas_red_dim               */
    bool rep_rd;              /* the result is replicated along rd         */
    bool have_cost;
    int mult;                 /* the cost below is for (mult, allred)      */
    bool allred;
    opt_counts cost;
    double work;              /* opt__node_work, whatever the group        */
} red_ent;

/* An operand edge as a value's walk meets it: its index (node *
 * BLAS_MAXOPS + slot), node, slot and term.                              */
typedef struct reader {
    int edge, node, slot, term;
} reader;

/* What a node's collective term was last made from (node_term).         */
typedef struct node_made {
    int red, fuse, mult;      /* red -1: not made yet                      */
    bool allred;
} node_made;

struct opt__eval {
    const opt_graph *g;
    opt_params pp;
    opt_memo *memo;
    /* interned layouts: lay[id]; slot[] open addressing, -1 empty         */
    blas_layout *lay;
    int nlay, cap_lay, nslot;
    int *slot;
    /* move costs by (from, to)                                            */
    pair_ent *pair;
    int npair, cap_pair;
    char *block;              /* the arrays below                          */
    /* per value                                                           */
    int (*view0)[OPT_MAXVIEWS];  /* live-in views (ids) ...               */
    vstate *birth;            /* ... as a walk starts from them            */
    int *want;                /* the wanted layout's id, -1: none          */
    int *carry;               /* the layout a carried value returns to, -1 */
    int *cfirst;              /* ... unless this edge's layout is it: -1   */
    int *cwatch;              /* per edge: the carried value whose return
                               * it sets (cfirst), -1                      */
    int *cpos;                /* its return's term, -1: none               */
    int *cstart, *cons;       /* readers: edges cons[cstart[v] .. cstart[v
                               * + 1]) = node * BLAS_MAXOPS + slot ...    */
    reader *rdr;              /* ... and the same as readers               */
    bool *stale;              /* its edges below must be walked again ... */
    int *walk, nwalk;         /* ... the stale values                     */
    /* reductions under the placements met: red[id]; rslot[] open
     * addressing, -1 empty                                                */
    red_ent *red;
    int nred, cap_red, nrslot;
    int *rslot;
    /* per node                                                             */
    int *reds, nreds;         /* the nodes with a reduction, in order     */
    bool *is_red;             /* whether node i is one of them            */
    int *rcur;                /* red id of its placement now, -1: none    */
    int *rdm;                 /* RED_DM red ids of its placements met, by
                               * red_dm_slot; -1: none                    */
    node_made *made;          /* what ncost[i] was made from               */
    int *recost, nrecost;     /* reductions whose placement changed ...   */
    bool *rmark;              /* ... node i is among them                  */
    opt__place *last;         /* the placements the edges were walked for */
    bool grouped;             /* key, fuse, gsize, gall are up to date    */
    bool can_fuse;            /* some placements fuse two reductions      */
    bool keyed;               /* key and fuse are a grouping's            */
    int *key, *fuse, *gsize, *taint;
    bool *gall;
    /* the edges (indexed as opt_eval's) and the nodes' collectives of the
     * last plan evaluated, and their times in the executor's order:
     * term[tpos[edge]], term[npos[node]]; acc[t] = the sum of term[0 .. t]
     * added in that order, up to date below index lo                     */
    int nedges, nterms, lo;
    int *real, nreal;         /* the slots that are edges, in index order  */
    opt__edge *edge;
    opt_counts *ncost;
    double *term, *acc;
    int *tpos, *npos;
};

/* ---- layout ids --------------------------------------------------------- */

/* Independent products of the fields (the small ones packed into one
 * word), folded: cheap, and spread well enough for a half-empty table.   */
static uint64_t lay_hash(const blas_layout *l)
{
    uint64_t small = (uint64_t)l->kind | (uint64_t)(l->dist + 1) << 4 |
                     (uint64_t)l->rep << 8 | (uint64_t)(uint32_t)l->pr << 16 |
                     (uint64_t)(uint32_t)l->pc << 40;
    uint64_t h = small * 0x9e3779b97f4a7c15ull ^
                 (uint64_t)l->m * 0xc2b2ae3d27d4eb4full ^
                 (uint64_t)l->n * 0x165667b19e3779f9ull ^
                 (uint64_t)l->b * 0xd6e8feb86659fd93ull ^
                 (uint64_t)l->nb * 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

/* The slot holding l's id, or the empty slot where it would go.           */
static int lay_slot(const opt__eval *e, const blas_layout *l)
{
    unsigned mask = (unsigned)e->nslot - 1;
    unsigned k = (unsigned)(lay_hash(l) >> 32) & mask;
    while (e->slot[k] >= 0 && !blas_layout_equal(&e->lay[e->slot[k]], l))
        k = (k + 1) & mask;
    return (int)k;
}

/* Room for one more entry in an open-addressing table: the entries
 * (*ent, of `size` bytes, *cap of them) double, starting at `first`, and
 * the slots become twice the entries (short probes), all empty: the
 * caller puts its entries back.  *ent is the entries' new address even
 * when the slots could not be allocated.                                 */
static deso_err table_grow(void **ent, size_t size, int *cap, int **slot,
                           int *nslot, int first)
{
    int c = *cap ? 2 * *cap : first;
    void *p = deso__realloc(*ent, (size_t)c * size);
    DESO_CHECK(p != NULL, DESO_ENOMEM, "optimizer: out of memory");
    *ent = p;
    int *s = deso__malloc((size_t)c * 2 * sizeof *s);
    DESO_CHECK(s != NULL, DESO_ENOMEM, "optimizer: out of memory");
    free(*slot);
    *slot = s;
    *nslot = 2 * c;
    *cap = c;
    for (int k = 0; k < *nslot; k++) s[k] = -1;
    return DESO_OK;
}

/* Room for one more layout.                                               */
static deso_err lay_grow(opt__eval *e)
{
    if (e->nlay < e->cap_lay) return DESO_OK;
    void *ent = e->lay;
    deso_err err = table_grow(&ent, sizeof *e->lay, &e->cap_lay, &e->slot,
                              &e->nslot, 32);
    e->lay = ent;
    DESO_TRY(err);
    for (int id = 0; id < e->nlay; id++)
        e->slot[lay_slot(e, &e->lay[id])] = id;
    return DESO_OK;
}

deso_err opt__intern(opt__eval *e, const blas_layout *l, int *id)
{
    int k = lay_slot(e, l);
    if (e->slot[k] >= 0) {
        *id = e->slot[k];
        return DESO_OK;
    }
    if (e->nlay == e->cap_lay) {
        DESO_TRY(lay_grow(e));
        k = lay_slot(e, l);
    }
    e->lay[e->nlay] = *l;
    e->slot[k] = e->nlay;
    *id = e->nlay++;
    return DESO_OK;
}

const blas_layout *opt__lay(const opt__eval *e, int id)
{
    return &e->lay[id];
}

deso_err opt__intern_place(opt__eval *e, int i, const opt_place *pl,
                           opt__place *out)
{
    int nops = e->g->nodes[i].d.nops;
    DESO_TRY(opt__intern(e, &pl->res, &out->res));
    for (int k = 0; k < BLAS_MAXOPS; k++) {
        out->req[k] = -1;
        if (k >= nops) continue;
        /* most operands share the result's layout or an earlier one's:
         * comparing is cheaper than hashing                               */
        if (blas_layout_equal(&pl->req[k], &pl->res)) out->req[k] = out->res;
        for (int j = 0; j < k && out->req[k] < 0; j++)
            if (blas_layout_equal(&pl->req[k], &pl->req[j]))
                out->req[k] = out->req[j];
        if (out->req[k] < 0)
            DESO_TRY(opt__intern(e, &pl->req[k], &out->req[k]));
    }
    return DESO_OK;
}

void opt__place_out(const opt__eval *e, int i, const opt__place *in,
                    opt_place *out)
{
    int nops = e->g->nodes[i].d.nops;
    out->res = e->lay[in->res];
    for (int k = 0; k < nops; k++) out->req[k] = e->lay[in->req[k]];
    for (int k = nops; k < BLAS_MAXOPS; k++)
        memset(&out->req[k], 0, sizeof out->req[k]);
}

int opt__livein_id(const opt__eval *e, int v)
{
    return e->view0[v][0];
}

/* ---- the cost of one move ------------------------------------------------ */

static uint64_t pair_key(int from, int to)
{
    return ((uint64_t)(uint32_t)(from + 1) << 32) | (uint32_t)(to + 1);
}

static int pair_slot(const opt__eval *e, uint64_t key)
{
    unsigned mask = (unsigned)e->cap_pair - 1;
    unsigned k = (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 40) & mask;
    while (e->pair[k].key != 0 && e->pair[k].key != key) k = (k + 1) & mask;
    return (int)k;
}

/* Keeps the table at most half full.                                      */
static deso_err pair_grow(opt__eval *e)
{
    if (2 * (e->npair + 1) <= e->cap_pair) return DESO_OK;
    int cap = e->cap_pair ? 2 * e->cap_pair : 32;
    pair_ent *old = e->pair;
    int ocap = e->cap_pair;
    e->pair = deso__malloc((size_t)cap * sizeof *e->pair);
    if (e->pair == NULL) {
        e->pair = old;
        return deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    }
    e->cap_pair = cap;
    for (int k = 0; k < cap; k++) e->pair[k].key = 0;    /* all empty      */
    for (int k = 0; k < ocap; k++)
        if (old[k].key != 0) e->pair[pair_slot(e, old[k].key)] = old[k];
    free(old);
    return DESO_OK;
}

/* How view `from` serves layout `to` (the move need() chose) and its
 * cost; computed once per pair.                                          */
static deso_err move_cost(opt__eval *e, int from, int to, opt_move *move,
                          opt_counts *c)
{
    uint64_t key = pair_key(from, to);
    if (e->cap_pair > 0) {
        const pair_ent *p = &e->pair[pair_slot(e, key)];
        if (p->key == key) {
            *move = p->move;
            *c = p->c;
            return DESO_OK;
        }
    }
    const blas_layout *S = &e->lay[from], *D = &e->lay[to];
    memset(c, 0, sizeof *c);
    if (D->kind == BLAS_MAT) {
        *move = OPT_MV_REMAP;
        opt__remap_cost(S, D, &e->pp, c);
    } else if (opt__replication_only(S, D)) {
        *move = OPT_MV_BCAST;
        opt__bcast_cost(S, D, &e->pp, c);
    } else {
        DESO_TRY(opt_exchange_cost(S, D, &e->pp, e->memo, c));
        *move = c->msgs_p2p > 0 ? OPT_MV_EXCHANGE : OPT_MV_COLLAPSE;
    }
    DESO_TRY(pair_grow(e));
    pair_ent *p = &e->pair[pair_slot(e, key)];
    p->key = key;
    p->move = *move;
    p->c = *c;
    e->npair++;
    return DESO_OK;
}

/* opt__replication_only, here where every evaluation asks it for each
 * view of a value a reader needs in a new layout.                         */
static inline bool rep_only(const blas_layout *S, const blas_layout *D)
{
    return S->kind == D->kind && S->n == D->n && S->dist == D->dist &&
           S->b == D->b && (S->rep & ~D->rep) == 0 &&
           (S->part == D->part || blas_part_equal(S->part, D->part));
}

/* The executor's deso__value_view on the model.                            */
static deso_err need(opt__eval *e, vstate *vs, int L, bool ooc,
                     opt__edge *ed)
{
    ed->to = L;
    for (int k = 0; k < vs->nv; k++)
        if (vs->v[k] == L) {
            static const opt_counts zero;
            ed->move = k >= vs->nb ? OPT_MV_CACHED : OPT_MV_NONE;
            ed->from = L;
            ed->cost = zero;
            return DESO_OK;
        }
    int src = vs->v[0];
    const blas_layout *l = &e->lay[L];
    if (l->kind != BLAS_MAT)
        for (int k = 0; k < vs->nv; k++)
            if (rep_only(&e->lay[view_at(vs, k)], l)) {
                src = view_at(vs, k);
                break;
            }
    ed->from = src;
    DESO_TRY(move_cost(e, ed->from, L, &ed->move, &ed->cost));
    /* out of core: every piece read to be sent, every new one written
     * (as opt_cost.c's need, in the same order)                          */
    if (ooc && ed->move == OPT_MV_REMAP)
        ed->cost.time += opt__io_time(&e->lay[ed->from], &e->pp) +
                         opt__io_time(&e->lay[L], &e->pp);
    if (vs->nv < EVAL_MAXVIEWS) vs->v[vs->nv++] = L;
    return DESO_OK;
}

/* ---- a value's edges ------------------------------------------------------ */

/* Term t's time; a term that changes (bit for bit) makes the sums from
 * it on out of date.                                                      */
static void set_term(opt__eval *e, int t, double time)
{
    if (memcmp(&e->term[t], &time, sizeof time) == 0) return;
    e->term[t] = time;
    if (t < e->lo) e->lo = t;
}

static void mark_stale(opt__eval *e, int v)
{
    if (!e->stale[v]) e->walk[e->nwalk++] = v;
    e->stale[v] = true;
}

/* Marks stale the values whose edges depend on a placement of node i
 * that differs from the last plan's: its result's (the value's first
 * view) and its operands' (the layouts their views must serve); and the
 * node itself when it is a reduction.                                    */
static void node_diff(opt__eval *e, const opt__place *p, int i)
{
    opt__place *l = &e->last[i];
    if (memcmp(l, &p[i], sizeof *l) == 0) return;   /* the common case   */
    const opt_node *nd = &e->g->nodes[i];
    if (e->is_red[i] && !e->rmark[i]) {
        e->rmark[i] = true;
        e->recost[e->nrecost++] = i;
    }
    if (l->res != p[i].res) {
        mark_stale(e, nd->res);
        l->res = p[i].res;
    }
    for (int k = 0; k < nd->d.nops; k++)
        if (l->req[k] != p[i].req[k]) {
            mark_stale(e, nd->ops[k]);
            int w = e->cwatch[i * BLAS_MAXOPS + k];
            if (w >= 0) mark_stale(e, w);
            l->req[k] = p[i].req[k];
        }
}

/* Value v's views from its birth (the live-in views, or its producer's
 * result) through its readers in node order, then its wanted read.        */
static deso_err value_walk(opt__eval *e, const opt__place *p, int v)
{
    const opt_value *val = &e->g->vals[v];
    vstate vs;
    if (val->producer >= 0) {
        vs.nv = vs.nb = 1;
        vs.v[0] = p[val->producer].res;
    } else {
        vs = e->birth[v];           /* whole: a fixed copy, no loop      */
    }
    const reader *rd = e->rdr + e->cstart[v], *end = e->rdr + e->cstart[v + 1];
    for (; rd < end; rd++) {
        int L = p[rd->node].req[rd->slot];
        opt__edge *ed = &e->edge[rd->edge];
        if (vs.v[0] == L) {       /* the primary: need's answer, sooner    */
            static const opt_counts zero;
            ed->move = OPT_MV_NONE;
            ed->from = ed->to = L;
            ed->cost = zero;
        } else {
            DESO_TRY(need(e, &vs, L, val->ooc, ed));
        }
        set_term(e, rd->term, ed->cost.time);
    }
    if (e->want[v] >= 0) {
        int y = e->g->nnodes * BLAS_MAXOPS + v;
        DESO_TRY(need(e, &vs, e->want[v], val->ooc, &e->edge[y]));
        set_term(e, e->tpos[y], e->edge[y].cost.time);
    }
    if (e->carry[v] >= 0) {             /* time only, as opt_plan_cost     */
        opt__edge back;
        int x = e->cfirst[v];
        int to = x < 0 ? e->carry[v] : p[x / BLAS_MAXOPS].req[x % BLAS_MAXOPS];
        DESO_TRY(need(e, &vs, to, val->ooc, &back));
        set_term(e, e->cpos[v], back.cost.time);
    }
    e->stale[v] = false;
    return DESO_OK;
}

/* ---- the nodes' collectives ---------------------------------------------- */

static uint64_t red_hash(int i, const opt__place *pl, int nops)
{
    uint64_t h = (uint64_t)(uint32_t)i * 0x9e3779b97f4a7c15ull;
    h = (h ^ (uint32_t)pl->res) * 0xff51afd7ed558ccdull;
    for (int k = 0; k < nops; k++)
        h = (h ^ (uint32_t)pl->req[k]) * 0xc2b2ae3d27d4eb4full;
    return h ^ (h >> 31);
}

/* A placement's slot in a node's direct-mapped table (RED_DM slots).      */
static int red_dm_slot(const opt__place *pl)
{
    unsigned h = (unsigned)pl->res * 0x9e3779b9u ^
                 (unsigned)pl->req[0] * 0x85ebca6bu ^
                 (unsigned)pl->req[1] * 0xc2b2ae35u;
    return (int)(h >> (32 - RED_DM_BITS));
}

static bool red_same(const red_ent *r, int i, const opt__place *pl, int nops)
{
    if (r->node != i || r->pl.res != pl->res) return false;
    for (int k = 0; k < nops; k++)
        if (r->pl.req[k] != pl->req[k]) return false;
    return true;
}

/* The slot holding (i, pl)'s red id, or the empty slot where it would go. */
static int red_slot(const opt__eval *e, int i, const opt__place *pl)
{
    int nops = e->g->nodes[i].d.nops;
    unsigned mask = (unsigned)e->nrslot - 1;
    unsigned k = (unsigned)(red_hash(i, pl, nops) >> 32) & mask;
    while (e->rslot[k] >= 0 && !red_same(&e->red[e->rslot[k]], i, pl, nops))
        k = (k + 1) & mask;
    return (int)k;
}

/* Room for one more reduction entry.                                      */
static deso_err red_grow(opt__eval *e)
{
    if (e->nred < e->cap_red) return DESO_OK;
    void *ent = e->red;
    deso_err err = table_grow(&ent, sizeof *e->red, &e->cap_red, &e->rslot,
                              &e->nrslot, 16);
    e->red = ent;
    DESO_TRY(err);
    for (int id = 0; id < e->nred; id++)
        e->rslot[red_slot(e, e->red[id].node, &e->red[id].pl)] = id;
    return DESO_OK;
}

/* The red id of reduction node i under placement pl.                      */
static deso_err red_find(opt__eval *e, int i, const opt__place *pl, int *id)
{
    int k = e->nrslot > 0 ? red_slot(e, i, pl) : -1;
    if (k >= 0 && e->rslot[k] >= 0) {
        *id = e->rslot[k];
        return DESO_OK;
    }
    bool grows = e->nred == e->cap_red;   /* the slots are remade then     */
    DESO_TRY(red_grow(e));
    if (grows) k = red_slot(e, i, pl);
    red_ent *r = &e->red[e->nred];
    memset(r, 0, sizeof *r);
    r->node = i;
    r->pl = *pl;
    opt_place lay;
    opt__place_out(e, i, pl, &lay);
    const opt_node *nd = &e->g->nodes[i];
    r->key = opt__fuse_key(e->g, nd, &lay);
    r->rd = blas_red_dim(&nd->d, lay.req);
    r->rep_rd = (lay.res.rep & blas_red_bits(r->rd, lay.res.pr,
                                             lay.res.pc)) != 0;
    r->work = opt__node_work(nd, &lay, &e->pp);
    if (r->key < 0) {     /* never grouped: node_term's cost, made here    */
        opt__node_cost(e->g, nd, &lay, &e->pp, 0, false, &r->cost);
        r->have_cost = true;
    }
    e->rslot[k] = e->nred;
    *id = e->nred++;
    return DESO_OK;
}

/* Reduction node i's entry brought to its placement pl; *changed: what
 * the fused groups depend on (its key, its result's replication along
 * rd) changed.                                                            */
static deso_err node_refresh(opt__eval *e, int i, const opt__place *pl,
                             bool *changed)
{
    int old = e->rcur[i], id, nops = e->g->nodes[i].d.nops;
    *changed = false;
    if (old >= 0 && red_same(&e->red[old], i, pl, nops)) return DESO_OK;
    /* a small direct-mapped table of the node's placements first: a fit
     * tries a handful of candidates over and over                        */
    int *dm = &e->rdm[i * RED_DM + red_dm_slot(pl)];
    if (*dm >= 0 && red_same(&e->red[*dm], i, pl, nops)) {
        id = *dm;
    } else {
        DESO_TRY(red_find(e, i, pl, &id));
        *dm = id;
    }
    e->rcur[i] = id;
    *changed = old < 0 || e->red[old].key != e->red[id].key ||
               e->red[old].rep_rd != e->red[id].rep_rd;
    return DESO_OK;
}

/* The fused groups (opt_fuse_groups) from the reductions' memos, their
 * sizes and whether each is an all-reduce (any member's result replicated
 * along the reduced dimension).  Only reductions have keys, so only they
 * are ever grouped; the groups are a function of the keys, so when the
 * keys are those of the last grouping (a result's replication changed,
 * not a key) only the all-reduce bits are made again.                   */
static void regroup(opt__eval *e)
{
    const opt_graph *g = e->g;
    bool same = e->keyed;
    for (int r = 0; r < e->nreds; r++) {
        int i = e->reds[r];
        int k = e->rcur[i] >= 0 ? e->red[e->rcur[i]].key : -1;
        same = same && e->key[i] == k;
        e->key[i] = k;
        e->gsize[i] = 0;
        e->gall[i] = false;
    }
    if (!same) opt__fuse_keys(g, e->key, e->taint, e->fuse);
    e->keyed = true;
    for (int r = 0; r < e->nreds; r++) {
        int i = e->reds[r];
        if (e->fuse[i] >= 0) {
            e->gsize[e->fuse[i]] += blas_red_width(g->nodes[i].d.op);
            if (e->red[e->rcur[i]].rep_rd) e->gall[e->fuse[i]] = true;
        }
    }
    e->grouped = true;
}

/* m's collective (node i's entry) for a group of mult partials, allred
 * an all-reduce (0, false: none), made unless it is the one kept.         */
static void own_cost(opt__eval *e, int i, red_ent *m, int mult, bool allred)
{
    if (m->have_cost && m->mult == mult && m->allred == allred) return;
    opt_place lay;
    opt__place_out(e, i, &m->pl, &lay);
    opt__node_cost(e->g, &e->g->nodes[i], &lay, &e->pp, mult, allred,
                   &m->cost);
    m->have_cost = true;
    m->mult = mult;
    m->allred = allred;
}

/* Node i's own collective (a reduction; a fused group's is its first
 * member's), then its work, added as opt_plan_cost adds them.  It is a
 * function of the node's red id, its group and the group's size and
 * all-reduce bit: when those are the ones *c was made for, *c stands.   */
static void node_term(opt__eval *e, int i, opt_counts *c)
{
    int f = e->fuse[i];
    int mult = f < 0 ? 0 : e->gsize[i];
    bool allred = f < 0 ? false : e->gall[i];
    node_made *mk = &e->made[i];
    mk->red = e->rcur[i];
    mk->fuse = f;
    mk->mult = mult;
    mk->allred = allred;
    red_ent *m = &e->red[e->rcur[i]];
    if (f >= 0 && f != i) {
        memset(c, 0, sizeof *c);
        c->time += m->work;
        return;
    }
    own_cost(e, i, m, mult, allred);
    *c = m->cost;
    c->time += m->work;
}

/* refresh_reds where no two reductions can be fused (!can_fuse): every
 * node's term is its own collective and work (node_term's with no group:
 * the same double), set from its entry; ncost is left to opt__eval_plan. */
static deso_err refresh_own(opt__eval *e, const opt__place *p)
{
    for (; e->nrecost > 0; e->nrecost--) {
        int i = e->recost[e->nrecost - 1];
        bool changed;
        DESO_TRY(node_refresh(e, i, &p[i], &changed));
        red_ent *m = &e->red[e->rcur[i]];
        own_cost(e, i, m, 0, false);
        set_term(e, e->npos[i], m->cost.time + m->work);
        e->rmark[i] = false;
    }
    return DESO_OK;
}

/* ---- the evaluator -------------------------------------------------------- */

/* The per-graph arrays, carved out of block (NULL: just its size).       */
static size_t eval_arrays(opt__eval *e, char *block)
{
    const opt_graph *g = e->g;
    size_t nv = g->nvals > 0 ? (size_t)g->nvals : 1;
    size_t nn = g->nnodes > 0 ? (size_t)g->nnodes : 1;
    size_t ne = (size_t)g->nnodes * BLAS_MAXOPS + nv, off = 0;
    e->view0 = opt__carve(block, &off, nv, sizeof *e->view0);
    e->birth = opt__carve(block, &off, nv, sizeof *e->birth);
    e->want = opt__carve(block, &off, nv, sizeof *e->want);
    e->carry = opt__carve(block, &off, nv, sizeof *e->carry);
    e->cfirst = opt__carve(block, &off, nv, sizeof *e->cfirst);
    e->cwatch = opt__carve(block, &off, nn * BLAS_MAXOPS, sizeof *e->cwatch);
    e->cpos = opt__carve(block, &off, nv, sizeof *e->cpos);
    e->cstart = opt__carve(block, &off, nv + 1, sizeof *e->cstart);
    e->cons = opt__carve(block, &off, nn * BLAS_MAXOPS, sizeof *e->cons);
    e->rdr = opt__carve(block, &off, nn * BLAS_MAXOPS, sizeof *e->rdr);
    e->stale = opt__carve(block, &off, nv, sizeof *e->stale);
    e->walk = opt__carve(block, &off, nv, sizeof *e->walk);
    e->taint = opt__carve(block, &off, nv, sizeof *e->taint);
    e->last = opt__carve(block, &off, nn, sizeof *e->last);
    e->reds = opt__carve(block, &off, nn, sizeof *e->reds);
    e->is_red = opt__carve(block, &off, nn, sizeof *e->is_red);
    e->recost = opt__carve(block, &off, nn, sizeof *e->recost);
    e->rmark = opt__carve(block, &off, nn, sizeof *e->rmark);
    e->rcur = opt__carve(block, &off, nn, sizeof *e->rcur);
    e->rdm = opt__carve(block, &off, nn * RED_DM, sizeof *e->rdm);
    e->made = opt__carve(block, &off, nn, sizeof *e->made);
    e->key = opt__carve(block, &off, nn, sizeof *e->key);
    e->fuse = opt__carve(block, &off, nn, sizeof *e->fuse);
    e->gsize = opt__carve(block, &off, nn, sizeof *e->gsize);
    e->gall = opt__carve(block, &off, nn, sizeof *e->gall);
    e->npos = opt__carve(block, &off, nn, sizeof *e->npos);
    e->ncost = opt__carve(block, &off, nn, sizeof *e->ncost);
    e->edge = opt__carve(block, &off, ne, sizeof *e->edge);
    e->tpos = opt__carve(block, &off, ne, sizeof *e->tpos);
    e->real = opt__carve(block, &off, ne, sizeof *e->real);
    e->term = opt__carve(block, &off, ne + nn + nv, sizeof *e->term);
    e->acc = opt__carve(block, &off, ne + nn + nv, sizeof *e->acc);
    return off;
}

static deso_err eval_alloc(opt__eval *e)
{
    e->nedges = e->g->nnodes * BLAS_MAXOPS + e->g->nvals;
    e->block = deso__malloc(eval_arrays(e, NULL));
    DESO_CHECK(e->block != NULL, DESO_ENOMEM, "optimizer: out of memory");
    eval_arrays(e, e->block);
    /* eval_setup sets the rest                                            */
    size_t nn = e->g->nnodes > 0 ? (size_t)e->g->nnodes : 1;
    memset(e->cstart, 0, ((size_t)e->g->nvals + 1) * sizeof *e->cstart);
    memset(e->ncost, 0, nn * sizeof *e->ncost);
    return DESO_OK;
}

/* The readers of every value: a counting sort of the operand edges by
 * value, in node and slot order within each (the executor's order).  A
 * node can only read what exists before it (opt_graph_node), so this
 * check only guards the model's assumption.                              */
static deso_err index_readers(opt__eval *e)
{
    const opt_graph *g = e->g;
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i].d.nops; k++) {
            int v = g->nodes[i].ops[k];
            const opt_value *val = &g->vals[v];
            DESO_CHECK(val->producer < i && (val->producer >= 0 ||
                                             val->nviews > 0),
                       DESO_EINTERNAL, "opt_plan_cost: node %d reads value "
                       "%d before it is produced", i, v);
            e->cstart[v + 1]++;
        }
    for (int v = 0; v < g->nvals; v++) e->cstart[v + 1] += e->cstart[v];
    /* filling from each value's start moves it to the next one's         */
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i].d.nops; k++)
            e->cons[e->cstart[g->nodes[i].ops[k]]++] = i * BLAS_MAXOPS + k;
    for (int v = g->nvals; v > 0; v--) e->cstart[v] = e->cstart[v - 1];
    e->cstart[0] = 0;
    for (int x = 0; x < e->cstart[g->nvals]; x++) {
        int y = e->cons[x];
        e->rdr[x] = (reader){.edge = y, .node = y / BLAS_MAXOPS,
                             .slot = y % BLAS_MAXOPS, .term = e->tpos[y]};
    }
    return DESO_OK;
}

/* The terms in the executor's order: node by node its edges, then its
 * collective; then the wanted reads; then the carried values' returns.   */
static void index_terms(opt__eval *e)
{
    const opt_graph *g = e->g;
    for (int x = 0; x < e->nedges; x++) e->tpos[x] = -1;
    e->nterms = 0;
    for (int i = 0; i < g->nnodes; i++) {
        for (int k = 0; k < g->nodes[i].d.nops; k++)
            e->tpos[i * BLAS_MAXOPS + k] = e->nterms++;
        e->npos[i] = e->nterms++;
    }
    for (int v = 0; v < g->nvals; v++)
        if (e->want[v] >= 0) e->tpos[g->nnodes * BLAS_MAXOPS + v] = e->nterms++;
    for (int v = 0; v < g->nvals; v++)
        e->cpos[v] = e->carry[v] >= 0 ? e->nterms++ : -1;
    e->nreal = 0;
    for (int x = 0; x < e->nedges; x++)
        if (e->tpos[x] >= 0) e->real[e->nreal++] = x;
    /* zero until costed (a node without a reduction stays so); no sum
     * made yet                                                            */
    for (int t = 0; t < e->nterms; t++) e->term[t] = 0.0;
    e->lo = 0;
}

/* Whether two reductions can ever share a fused group, whatever their
 * placements (opt__fuse_keys): a group ends before the first node that
 * reads a member's result, so at the latest before the first reader of
 * its first member's; a fusable node with no fusable node between it and
 * that reader has no partner, and when no node has one every node stays
 * unfused (CG: each dot's result is read before the next dot).  The
 * groups are then never made, nor remade when a key changes.            */
static bool fusion_possible(const opt_graph *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        if (!opt__fuse_op(g->nodes[i].d.op)) continue;
        for (int j = i + 1; j < g->nnodes; j++) {
            const opt_node *nd = &g->nodes[j];
            bool reads = false;
            for (int k = 0; k < nd->d.nops; k++)
                reads |= nd->ops[k] == g->nodes[i].res;
            if (reads) break;
            if (opt__fuse_op(nd->d.op)) return true;
        }
    }
    return false;
}

/* Ids of the live-in views and of the wanted layouts; which nodes reduce;
 * every value stale.                                                      */
static deso_err eval_setup(opt__eval *e)
{
    const opt_graph *g = e->g;
    static const opt__edge none = {.from = -1, .to = -1};
    for (int x = 0; x < e->nedges; x++) e->edge[x] = none;
    for (int i = 0; i < g->nnodes; i++) {
        e->rcur[i] = -1;
        for (int k = 0; k < RED_DM; k++) e->rdm[i * RED_DM + k] = -1;
        e->made[i].red = -1;
        e->rmark[i] = false;
        e->key[i] = -1;           /* never set for a node that reduces nothing */
        e->fuse[i] = -1;
        e->last[i].res = -1;
        for (int k = 0; k < BLAS_MAXOPS; k++) {
            e->last[i].req[k] = -1;
            e->cwatch[i * BLAS_MAXOPS + k] = -1;
        }
    }
    for (int v = 0; v < g->nvals; v++) {
        const opt_value *val = &g->vals[v];
        e->stale[v] = true;
        e->walk[e->nwalk++] = v;
        int nviews = val->producer >= 0 ? 0 : val->nviews;
        for (int k = 0; k < OPT_MAXVIEWS; k++) e->view0[v][k] = -1;
        memset(&e->birth[v], 0, sizeof e->birth[v]);
        for (int k = 0; k < nviews; k++)
            DESO_TRY(opt__intern(e, &val->views[k], &e->view0[v][k]));
        for (int k = 0; k < nviews; k++) e->birth[v].v[k] = e->view0[v][k];
        e->birth[v].nv = e->birth[v].nb = nviews;
        e->want[v] = -1;
        if (val->has_want && (val->producer >= 0 || val->nviews > 0))
            DESO_TRY(opt__intern(e, &val->want, &e->want[v]));
        e->carry[v] = e->cfirst[v] = -1;
        if (val->carry >= 0 && (val->producer >= 0 || val->nviews > 0)) {
            blas_layout back = opt__carry_to(g, v);
            DESO_TRY(opt__intern(e, &back, &e->carry[v]));
            int x = opt__carry_first(g, v);
            e->cfirst[v] = x;
            if (x >= 0) e->cwatch[x] = v;
        }
    }
    for (int i = 0; i < g->nnodes; i++) {
        const blas_op_info *info = blas_op_get(g->nodes[i].d.op);
        /* reductions, the views and sparse products whose node moves
         * elements itself, the nodes streaming an out-of-core matrix and
         * those working on vectors: the nodes with a cost of their own
         * (opt__node_cost, opt__node_work)                               */
        blas_op op = g->nodes[i].d.op;
        e->is_red[i] = (info != NULL && (info->red != BLAS_RED_NONE ||
                                         op == BLAS_OP_VGET ||
                                         op == BLAS_OP_VPUT ||
                                         op == BLAS_OP_USMV)) ||
                       opt__node_streams(g, &g->nodes[i]) ||
                       (e->pp.work_beta > 0.0 && opt__node_works(g, &g->nodes[i]));
        if (e->is_red[i]) e->reds[e->nreds++] = i;
    }
    index_terms(e);
    return index_readers(e);
}

deso_err opt__eval_new(const opt_graph *g, const opt_params *pp,
                       opt_memo *memo, opt__eval **out)
{
    opt__eval *e = deso__calloc(1, sizeof *e);
    DESO_CHECK(e != NULL, DESO_ENOMEM, "optimizer: out of memory");
    e->g = g;
    e->pp = *pp;
    e->memo = memo;
    e->can_fuse = fusion_possible(g);
    e->grouped = !e->can_fuse;        /* no fused group, ever: fuse all -1 */
    deso_err err = eval_alloc(e);
    if (err == DESO_OK) err = lay_grow(e);
    if (err == DESO_OK) err = eval_setup(e);
    if (err != DESO_OK) {
        opt__eval_free(e);
        return err;
    }
    *out = e;
    return DESO_OK;
}

void opt__eval_free(opt__eval *e)
{
    if (e == NULL) return;
    free(e->lay);
    free(e->slot);
    free(e->pair);
    free(e->red);
    free(e->rslot);
    free(e->block);
    free(e);
}

/* The reductions whose placement changed: their entries, then the fused
 * groups if a key or an all-reduce bit changed (every reduction's
 * collective then, as a group's size may have), else their collectives.
 * A change seen marks the groups out of date at once, so a failure half
 * way leaves them to be remade next time.                                */
static deso_err refresh_reds(opt__eval *e, const opt__place *p)
{
    if (!e->can_fuse) return refresh_own(e, p);
    for (int r = 0; r < e->nrecost; r++) {
        int i = e->recost[r];
        bool changed;
        DESO_TRY(node_refresh(e, i, &p[i], &changed));
        if (changed) e->grouped = false;
    }
    bool all = !e->grouped;
    if (all) regroup(e);
    int n = all ? e->nreds : e->nrecost;
    for (int r = 0; r < n; r++) {
        int i = all ? e->reds[r] : e->recost[r], f = e->fuse[i];
        const node_made *mk = &e->made[i];
        if (mk->red == e->rcur[i] && mk->fuse == f &&
            mk->mult == (f < 0 ? 0 : e->gsize[i]) &&
            mk->allred == (f < 0 ? false : e->gall[i]))
            continue;                 /* node_term would give it again     */
        node_term(e, i, &e->ncost[i]);
        set_term(e, e->npos[i], e->ncost[i].time);
    }
    for (; e->nrecost > 0; e->nrecost--)
        e->rmark[e->recost[e->nrecost - 1]] = false;
    return DESO_OK;
}

/* Brings the edges and the nodes' collectives up to plan p.               */
static deso_err refresh(opt__eval *e, const opt__place *p)
{
    const opt_graph *g = e->g;
    for (int i = 0; i < g->nnodes; i++) node_diff(e, p, i);
    /* walked last first; a failed walk leaves its value on the list      */
    for (; e->nwalk > 0; e->nwalk--)
        DESO_TRY(value_walk(e, p, e->walk[e->nwalk - 1]));
    return refresh_reds(e, p);
}

deso_err opt__eval_plan(opt__eval *e, const opt__place *p, opt_counts *total)
{
    const opt_graph *g = e->g;
    DESO_TRY(refresh(e, p));
    for (int r = 0; r < e->nreds && !e->can_fuse; r++)
        node_term(e, e->reds[r], &e->ncost[e->reds[r]]);
    opt_counts tot;
    memset(&tot, 0, sizeof tot);
    for (int i = 0; i < g->nnodes; i++) {
        const opt__edge *ed = &e->edge[i * BLAS_MAXOPS];
        for (int k = 0; k < g->nodes[i].d.nops; k++) opt__add(&tot, &ed[k].cost);
        opt__add(&tot, &e->ncost[i]);
    }
    const opt__edge *wanted = &e->edge[g->nnodes * BLAS_MAXOPS];
    for (int v = 0; v < g->nvals; v++)
        if (e->want[v] >= 0) opt__add(&tot, &wanted[v].cost);
    for (int v = 0; v < g->nvals; v++)
        if (e->cpos[v] >= 0) tot.time += e->term[e->cpos[v]];
    *total = tot;
    return DESO_OK;
}

/* opt__eval_plan's time alone: the same additions in the same order,
 * those before the first changed term kept from the previous sum.        */
deso_err opt__eval_time(opt__eval *e, const opt__place *p, double *time)
{
    DESO_TRY(refresh(e, p));
    double a = e->lo > 0 ? e->acc[e->lo - 1] : 0.0;
    for (int t = e->lo; t < e->nterms; t++) {
        a += e->term[t];
        e->acc[t] = a;
    }
    e->lo = e->nterms;
    *time = a;
    return DESO_OK;
}

const opt__edge *opt__eval_edges(const opt__eval *e) { return e->edge; }

const int *opt__eval_real_edges(const opt__eval *e, int *n)
{
    *n = e->nreal;
    return e->real;
}
int opt__eval_nedges(const opt__eval *e) { return e->nedges; }

const int *opt__eval_readers(const opt__eval *e, int v, int *n)
{
    *n = e->cstart[v + 1] - e->cstart[v];
    return e->cons + e->cstart[v];
}
