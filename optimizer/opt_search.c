/* The search: mode none's plan, and paper 003's greedy edge elimination
 * (section 3.4) for modes affine and full, with the errata of
 * doc/DESIGN.md, "The greedy search and its errata".
 *
 * Start: every node at the first candidate its mode allows (mode none's
 * choice where it is valid), then, in mode full, every reduction reduced
 * to one place: its replication becomes a broadcast on the out-edges that
 * need it (all-reduce = reduce + broadcast: the same modelled cost).
 * Mode full also starts from the lean plan, and a graph with sparse
 * products from the partition plan (part_plan); the cheapest result wins.
 * Loop, at most max_iters edges, in up to `passes` passes (a new pass only
 * after a pass that lowered the weight):
 *   1. take the heaviest edge a -> b not attempted in this pass (ties: the
 *      lowest edge index; every edge is attempted once per pass);
 *   2. sink: c_ab <- c_a (node b's operand takes a's layout), b's other
 *      placements from its candidates (the cheapest plan among those with
 *      that operand layout), forward-propagate into b's consumers whose
 *      edge from b was free; accept if the total weight did not go up;
 *   3./4. else source: c_a <- c_ab (a's result takes the layout b needs),
 *      backward-propagate into a's producers whose edge into a was free;
 *      accept if not up; else leave the edge attempted.
 * Then a node sweep (ours, not the paper's): each node in turn moves to
 * its cheapest candidate if that lowers the weight (this catches costs
 * that sit on no edge: a reduction's all-reduce), while it improves, at
 * most `passes` sweeps.  The result is never worse than mode none's plan:
 * the weight never goes up from a start that costs what mode none costs
 * (or less: a reduced gemv result transposes less), and mode none's plan
 * is kept when it is valid for the mode and cheaper.  Deterministic: no
 * clocks, fixed orders, ties broken by index.
 *
 * The search holds its plans by layout ids (opt_impl.h, opt_eval.c): ids
 * are only ever compared for equality, which is layout equality, and
 * costs come from the evaluator, which adds the same terms in the same
 * order as opt_plan_cost, or for a plan met before from the table of the
 * times it gave (opt_seen.c); so every decision is the one the same
 * search on layouts would take.  A node's candidates are computed once per tuple
 * of operand layouts and kept for the search.                            */
#include "optimizer/opt_impl.h"
#include "optimizer/opt_cache.h"

#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/alloc.h"

opt_search_opts opt_search_default(opt_mode mode)
{
    opt_search_opts o = {.mode = mode, .cost = opt_params_default(),
                         .max_iters = 64, .passes = 3};
    return o;
}

void opt__cur_ops(const opt_graph *g, const opt_plan *p, int i,
                  blas_layout *cur)
{
    const opt_node *nd = &g->nodes[i];
    for (int k = 0; k < nd->d.nops; k++) {
        const opt_value *v = &g->vals[nd->ops[k]];
        cur[k] = v->producer >= 0 ? p->node[v->producer].res : v->views[0];
    }
}

deso_err opt_plan_none(const opt_graph *g, opt_plan *out)
{
    DESO_TRY(opt__plan_alloc(out, g->nnodes));
    out->mode = OPT_NONE;
    for (int i = 0; i < g->nnodes; i++) {
        blas_layout cur[BLAS_MAXOPS];
        opt__cur_ops(g, out, i, cur);
        deso_err err = opt_place_node(&g->df, &g->nodes[i].d, cur,
                                      &out->node[i].res, out->node[i].req);
        if (err != DESO_OK) {
            opt_plan_free(out);
            return err;
        }
    }
    return DESO_OK;
}

/* ---- the search state --------------------------------------------------- */

/* Node i's candidates for one tuple of its operands' layouts: computed by
 * opt_node_cands the first time, kept for the rest of the search (a fit
 * asks for the same ones over and over).                                 */
typedef struct cand_set {
    int next;                 /* the node's next set, -1: none            */
    int cur[BLAS_MAXOPS];     /* its key: the operands' layouts (ids), -1
                               * where the candidates do not read them    */
    int first, n;             /* pool[first .. first + n)                 */
} cand_set;

/* Plans are arrays of opt__place (layout ids, opt_impl.h): comparing two
 * placements compares a few ints, and the evaluator costs them without
 * looking at a layout.                                                    */
typedef struct srch {
    bool converged;          /* greedy's last pass and sweep found nothing  */
    const opt_graph *g;
    const opt_search_opts *o;
    opt__eval *ev;
    opt__seen *seen;          /* the plans costed so far                  */
    opt__place *cur;          /* the current plan                         */
    opt__place *trial;        /* the plan an attempt changes              */
    opt__place *alt;          /* sink_change's best other layout's plan   */
    uint64_t cur_h, trial_h;  /* their plan_keys, kept as they change ... */
    uint64_t *ckey, *tkey;    /* ... with their nodes' place_keys ...     */
    uint64_t *akey;           /* ... and alt's                            */
    bool edges_cur;           /* etime, eto are the current plan's ...    */
    double *etime;            /* ... edges' times                         */
    int *eto;                 /* ... and the layouts they ask for         */
    double cost;
    int iters;                /* greedy edge attempts                     */
    int *cls;                 /* per node: the first node of its class:
                               * the same candidates for the same operand
                               * layouts (same_cands)                     */
    int *chead;               /* per class: its first candidate set ...   */
    unsigned *reads;          /* ... and opt__cands_reads                 */
    cand_set *sets;
    int nsets, cap_sets;
    opt__place *pool;
    int npool, cap_pool;
    opt_place *scratch;       /* opt_node_cands' output                   */
    opt__place *hold;         /* a plan kept aside (starts' best, mode
                               * none's plan)                             */
    bool *tried;              /* per edge: attempted in this pass          */
    char *block;              /* the arrays above                         */
    int (*vlays)[OPT__MAXLAYS]; /* per value: opt__layouts as ids ...     */
    int *nvlays;              /* ... how many; -1: not asked yet          */
    opt__modesets ms;         /* the mode's layouts for opt__node_cands    */
} srch;

/* Placement pl of node i as a 64-bit key; a plan's key is the XOR of its
 * nodes' (plan_key), so changing one node updates it in a few
 * instructions.  Only a hint for opt_seen.c, which compares whole plans. */
static uint64_t place_key(int i, const opt__place *pl)
{
    uint64_t h = (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
    h = (h ^ (uint32_t)pl->res ^ (uint64_t)(uint32_t)pl->req[0] << 32) *
        0xbf58476d1ce4e5b9ull;
    h = (h ^ (uint32_t)pl->req[1] ^ (uint64_t)(uint32_t)pl->req[2] << 32) *
        0x94d049bb133111ebull;
    for (int k = 3; k < BLAS_MAXOPS; k++)
        h = (h ^ (uint32_t)pl->req[k]) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 31);
}

static uint64_t plan_key(const srch *s, const opt__place *p)
{
    uint64_t h = 0;
    for (int i = 0; i < s->g->nnodes; i++) h ^= place_key(i, &p[i]);
    return h;
}

/* Plan p (key h)'s modelled time: kept from an earlier evaluation of the
 * same plan (opt_seen.c: the same double), else evaluated and kept.      */
static deso_err cost_of(srch *s, const opt__place *p, uint64_t h, double *t)
{
    if (opt__seen_find(s->seen, p, h, t)) return DESO_OK;
    DESO_TRY(opt__eval_time(s->ev, p, t));
    return opt__seen_add(s->seen, p, h, *t);
}

/* Node i of the trial plan becomes c.                                     */
static void put(srch *s, int i, const opt__place *c)
{
    uint64_t k = place_key(i, c);
    s->trial_h ^= s->tkey[i] ^ k;
    s->tkey[i] = k;
    s->trial[i] = *c;
}

/* The trial plan starts again from the current one.                       */
static void trial_reset(srch *s)
{
    memcpy(s->trial, s->cur, (size_t)s->g->nnodes * sizeof *s->trial);
    s->trial_h = s->cur_h;
    memcpy(s->tkey, s->ckey, (size_t)s->g->nnodes * sizeof *s->tkey);
}

/* The current plan's key, after it was set node by node.                  */
static void cur_rekey(srch *s)
{
    s->cur_h = 0;
    for (int i = 0; i < s->g->nnodes; i++) {
        s->ckey[i] = place_key(i, &s->cur[i]);
        s->cur_h ^= s->ckey[i];
    }
    s->edges_cur = false;
}

static bool place_same(const opt__place *a, const opt__place *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static int place_diff(const opt__place *a, const opt__place *b)
{
    int d = a->res != b->res;
    for (int k = 0; k < BLAS_MAXOPS; k++) d += a->req[k] != b->req[k];
    return d;
}

/* The layouts of node i's operands under plan p (opt__cur_ops, by id).   */
static void cur_ids(const srch *s, const opt__place *p, int i, int *cur)
{
    const opt_node *nd = &s->g->nodes[i];
    for (int k = 0; k < nd->d.nops; k++) {
        int a = s->g->vals[nd->ops[k]].producer;
        cur[k] = a >= 0 ? p[a].res : opt__livein_id(s->ev, nd->ops[k]);
    }
}

/* Room for one more candidate set of n candidates.                        */
static deso_err cands_room(srch *s, int n)
{
    if (s->nsets == s->cap_sets) {
        int cap = s->cap_sets ? 2 * s->cap_sets : 32;
        cand_set *c = deso__realloc(s->sets, (size_t)cap * sizeof *c);
        DESO_CHECK(c != NULL, DESO_ENOMEM, "optimizer: out of memory");
        s->sets = c;
        s->cap_sets = cap;
    }
    if (s->npool + n > s->cap_pool) {
        int cap = s->cap_pool ? 2 * s->cap_pool : 256;
        while (cap < s->npool + n) cap *= 2;
        opt__place *p = deso__realloc(s->pool, (size_t)cap * sizeof *p);
        DESO_CHECK(p != NULL, DESO_ENOMEM, "optimizer: out of memory");
        s->pool = p;
        s->cap_pool = cap;
    }
    return DESO_OK;
}

/* The key of node i's candidate set for operand layouts cur: cur with
 * the slots its candidates do not depend on (opt__cands_reads) at -1, so
 * an update or a scalar operation has one set for the whole search.     */
static void cands_key(const srch *s, int i, const int *cur, int *key)
{
    unsigned reads = s->reads[i];
    for (int k = 0; k < s->g->nodes[i].d.nops; k++)
        key[k] = reads & (1u << k) ? cur[k] : -1;
}

/* The kept candidate set of node i for operand layouts cur, or NULL.     */
static const cand_set *cands_kept(const srch *s, int i, const int *cur)
{
    if (s->reads[i] == 0u)        /* one set for the whole search          */
        return s->chead[s->cls[i]] >= 0 ? &s->sets[s->chead[s->cls[i]]] : NULL;
    int nops = s->g->nodes[i].d.nops, key[BLAS_MAXOPS];
    cands_key(s, i, cur, key);
    for (int k = s->chead[s->cls[i]]; k >= 0; k = s->sets[k].next) {
        int j = 0;
        while (j < nops && s->sets[k].cur[j] == key[j]) j++;
        if (j == nops) return &s->sets[k];
    }
    return NULL;
}

/* opt_node_cands into s->scratch, for operand layouts cur.                */
static deso_err cands_fresh(srch *s, int i, const int *cur, int *n)
{
    blas_layout lc[BLAS_MAXOPS];
    const opt_node *nd = &s->g->nodes[i];
    for (int k = 0; k < nd->d.nops; k++)
        lc[k] = *opt__lay(s->ev, cur[k]);
    return opt__node_cands(s->g, i, s->o->mode, lc, &s->ms, s->scratch, n);
}

/* Node i's candidates (opt_node_cands) when its operands have layouts
 * cur; *out is valid until the next call.                                 */
static deso_err cands_of(srch *s, int i, const int *cur,
                         const opt__place **out, int *n)
{
    const cand_set *kept = cands_kept(s, i, cur);
    if (kept != NULL) {
        *out = s->pool + kept->first;
        *n = kept->n;
        return DESO_OK;
    }
    int m;
    DESO_TRY(cands_fresh(s, i, cur, &m));
    DESO_TRY(cands_room(s, m));
    for (int c = 0; c < m; c++)
        DESO_TRY(opt__intern_place(s->ev, i, &s->scratch[c],
                                   &s->pool[s->npool + c]));
    cand_set *cs = &s->sets[s->nsets];
    memset(cs, 0, sizeof *cs);
    cands_key(s, i, cur, cs->cur);
    cs->first = s->npool;
    cs->n = m;
    cs->next = s->chead[s->cls[i]];
    s->chead[s->cls[i]] = s->nsets++;
    s->npool += m;
    *out = s->pool + cs->first;
    *n = m;
    return DESO_OK;
}

/* Node i's candidates under plan p (cands_of); *out is valid until the
 * next call.  A node whose candidates read no operand has one set, found
 * without looking at its operands.                                       */
static deso_err cands_in(srch *s, const opt__place *p, int i,
                         const opt__place **out, int *n)
{
    int head = s->chead[s->cls[i]];
    if (s->reads[i] == 0u && head >= 0) {
        const cand_set *cs = &s->sets[head];
        *out = s->pool + cs->first;
        *n = cs->n;
        return DESO_OK;
    }
    int cur[BLAS_MAXOPS];
    cur_ids(s, p, i, cur);
    return cands_of(s, i, cur, out, n);
}

/* The layouts the mode lets value v take (opt__layouts), by id.           */
static deso_err value_layouts(srch *s, int v, const int **T, int *nt)
{
    if (s->nvlays[v] < 0) {
        blas_layout buf[OPT__MAXLAYS];
        const blas_layout *L = buf;
        const opt_value *val = &s->g->vals[v];
        int n;
        if (val->kind == BLAS_VEC && val->n == s->ms.vn) {
            L = s->ms.vec;              /* opt__layouts' answer, made once   */
            n = s->ms.nvec;
        } else if (val->kind == BLAS_SCA) {
            L = s->ms.sca;
            n = s->ms.nsca;
        } else {
            n = opt__layouts(s->g, s->o->mode, val->kind, val->n, buf);
        }
        for (int t = 0; t < n; t++)
            DESO_TRY(opt__intern(s->ev, &L[t], &s->vlays[v][t]));
        s->nvlays[v] = n;
    }
    *T = s->vlays[v];
    *nt = s->nvlays[v];
    return DESO_OK;
}

/* ---- moves -------------------------------------------------------------- */

/* Whether candidate c has layout L in slot (-1: the result; L < 0: any). */
static bool matches(const opt__place *c, int slot, int L)
{
    return L < 0 || (slot < 0 ? c->res : c->req[slot]) == L;
}

/* Node i of the trial plan p (s->trial) moves to its cheapest candidate
 * whose slot (-1: the result) has layout L (L < 0: any candidate).
 * *moved: whether it changed.  Ties: fewer changed slots, then candidate
 * order.  A sole such candidate is taken without costing it: it is the
 * cheapest whatever it costs (an update asked for one vector layout has
 * one: the others follow the result).                                    */
static deso_err fit(srch *s, opt__place *p, int i, int slot, int L,
                    bool *moved)
{
    const opt__place *cands;
    int n, nmatch = 0, only = -1;
    DESO_TRY(cands_in(s, p, i, &cands, &n));
    for (int k = 0; k < n && nmatch < 2; k++)
        if (matches(&cands[k], slot, L)) {
            nmatch++;
            only = k;
        }
    opt__place keep = p[i], best = keep;
    *moved = false;
    if (nmatch == 1) {
        put(s, i, &cands[only]);
        *moved = !place_same(&cands[only], &keep);
        return DESO_OK;
    }
    double bt = 0.0;
    int bd = 0;
    bool found = false;
    for (int k = 0; k < n; k++) {
        const opt__place *c = &cands[k];
        if (!matches(c, slot, L)) continue;
        put(s, i, c);
        double t;
        deso_err err = cost_of(s, p, s->trial_h, &t);
        if (err != DESO_OK) {
            put(s, i, &keep);
            return err;
        }
        /* the changed slots only matter on a tie: counted then          */
        if (!found || t < bt || (t == bt && place_diff(c, &keep) < bd)) {
            found = true;
            bt = t;
            bd = place_diff(c, &keep);
            best = *c;
        }
    }
    put(s, i, found ? &best : &keep);
    *moved = found && !place_same(&best, &keep);
    return DESO_OK;
}

/* Node i's result changed from old: consumers whose edge was free follow. */
static deso_err prop_fwd(srch *s, opt__place *p, int i, int old)
{
    int nw = p[i].res;
    if (nw == old) return DESO_OK;
    int n;
    const int *readers = opt__eval_readers(s->ev, s->g->nodes[i].res, &n);
    for (int x = 0; x < n; x++) {
        int j = readers[x] / BLAS_MAXOPS, k = readers[x] % BLAS_MAXOPS;
        if (p[j].req[k] != old) continue;
        int oj = p[j].res;
        bool moved;
        DESO_TRY(fit(s, p, j, k, nw, &moved));
        if (moved) DESO_TRY(prop_fwd(s, p, j, oj));
    }
    return DESO_OK;
}

/* Node i's operand layouts changed from old: producers whose edge into i
 * was free follow.                                                        */
static deso_err prop_bwd(srch *s, opt__place *p, int i, const opt__place *old)
{
    const opt_node *nd = &s->g->nodes[i];
    for (int k = 0; k < nd->d.nops; k++) {
        int nw = p[i].req[k];
        if (nw == old->req[k]) continue;
        int a = s->g->vals[nd->ops[k]].producer;
        if (a < 0 || p[a].res != old->req[k]) continue;
        opt__place oa = p[a];
        bool moved;
        DESO_TRY(fit(s, p, a, -1, nw, &moved));
        if (moved) DESO_TRY(prop_bwd(s, p, a, &oa));
    }
    return DESO_OK;
}

/* Tries trial as the new current plan: accepted when not more costly.    */
static deso_err try_accept(srch *s, const opt__place *trial, bool *ok,
                           bool *better)
{
    double t;
    DESO_TRY(cost_of(s, trial, s->trial_h, &t));
    *ok = t <= s->cost;
    *better = t < s->cost;
    if (*ok) {
        memcpy(s->cur, trial, (size_t)s->g->nnodes * sizeof *s->cur);
        s->cur_h = s->trial_h;
        memcpy(s->ckey, s->tkey, (size_t)s->g->nnodes * sizeof *s->ckey);
        s->edges_cur = false;
        s->cost = t;
    }
    return DESO_OK;
}

/* Moves every consumer of value v that reads layout `from` to layout `to`
 * (with forward propagation) in trial, starting from the current plan.   */
static deso_err move_sinks(srch *s, opt__place *trial, int v, int from,
                           int to, bool *any)
{
    trial_reset(s);
    *any = false;
    int n;
    const int *readers = opt__eval_readers(s->ev, v, &n);
    for (int x = 0; x < n; x++) {
        int j = readers[x] / BLAS_MAXOPS, k = readers[x] % BLAS_MAXOPS;
        if (trial[j].req[k] != from) continue;
        int oj = trial[j].res;
        bool moved;
        DESO_TRY(fit(s, trial, j, k, to, &moved));
        if (moved) {
            *any = true;
            DESO_TRY(prop_fwd(s, trial, j, oj));
        }
    }
    return DESO_OK;
}

static deso_err sink_change(srch *s, opt__place *trial, int v, int cab,
                            int ca, bool *ok, bool *better)
{
    *ok = *better = false;
    bool any;
    DESO_TRY(move_sinks(s, trial, v, cab, ca, &any));
    if (any) DESO_TRY(try_accept(s, trial, ok, better));
    if (*better) return DESO_OK;
    const int *T;
    int nt;
    DESO_TRY(value_layouts(s, v, &T, &nt));
    double bt = 0.0;
    int bk = -1;
    uint64_t bh = 0;
    size_t bytes = (size_t)s->g->nnodes * sizeof *trial;
    for (int t = 0; t < nt; t++) {
        if (T[t] == cab || T[t] == ca) continue;
        DESO_TRY(move_sinks(s, trial, v, cab, T[t], &any));
        if (!any) continue;
        double c;
        DESO_TRY(cost_of(s, trial, s->trial_h, &c));
        if (c < s->cost && (bk < 0 || c < bt)) {
            bk = t;
            bt = c;
            memcpy(s->alt, trial, bytes);      /* move_sinks' plan for T[t]:
                                                * deterministic, so kept
                                                * rather than made again   */
            bh = s->trial_h;
            memcpy(s->akey, s->tkey, (size_t)s->g->nnodes * sizeof *s->akey);
        }
    }
    if (bk < 0) return DESO_OK;
    memcpy(trial, s->alt, bytes);
    s->trial_h = bh;
    memcpy(s->tkey, s->akey, (size_t)s->g->nnodes * sizeof *s->tkey);
    return try_accept(s, trial, ok, better);
}

/* ---- the greedy edge elimination ----------------------------------------- */

/* The current plan's edges' times and wanted layouts, read from the
 * evaluator when the current plan has changed since they were last read
 * (after a rejected attempt the evaluator last costed a trial: walking it
 * back to the current plan would give the same edges again).            */
static deso_err cur_edges(srch *s)
{
    if (s->edges_cur) return DESO_OK;
    double t;
    DESO_TRY(opt__eval_time(s->ev, s->cur, &t));
    const opt__edge *ed = opt__eval_edges(s->ev);
    int n;
    const int *real = opt__eval_real_edges(s->ev, &n);
    for (int r = 0; r < n; r++) {
        int x = real[r];
        s->etime[x] = ed[x].cost.time;
        s->eto[x] = ed[x].to;
    }
    s->edges_cur = true;
    return DESO_OK;
}

/* The heaviest edge of the current plan not attempted in this pass (ties:
 * the lowest index; -1: none left) and the layout it asks for.            */
static deso_err heaviest(srch *s, const bool *tried, int *e, int *cab)
{
    DESO_TRY(cur_edges(s));
    const double *w = s->etime;
    int n;
    const int *real = opt__eval_real_edges(s->ev, &n);
    *e = -1;
    /* the other slots are no edge: weight 0, never taken                 */
    for (int r = 0; r < n; r++) {
        int x = real[r];
        if (!tried[x] && w[x] > 0.0 && (*e < 0 || w[x] > w[*e])) *e = x;
    }
    if (*e >= 0) *cab = s->eto[*e];
    return DESO_OK;
}

/* One attempt at edge e (a -> b asking for layout cab): step 2, change
 * the sink (c_ab <- c_a: every consumer sharing the view c_ab moves with
 * it; when that does not pay, the cheapest other layout the mode allows,
 * since an edge that cannot be removed may be cheapened); else step 4,
 * change the source (c_a <- c_ab).                                        */
static deso_err attempt(srch *s, opt__place *trial, int e, int cab,
                        bool *better)
{
    const opt_graph *g = s->g;
    bool ok = false, moved;
    int a;
    *better = false;
    if (e < g->nnodes * BLAS_MAXOPS) {
        int v = g->nodes[e / BLAS_MAXOPS].ops[e % BLAS_MAXOPS];
        a = g->vals[v].producer;
        int ca = a >= 0 ? s->cur[a].res : opt__livein_id(s->ev, v);
        DESO_TRY(sink_change(s, trial, v, cab, ca, &ok, better));
    } else {                         /* a live-out value's wanted read   */
        a = g->vals[e - g->nnodes * BLAS_MAXOPS].producer;
    }
    if (ok || a < 0) return DESO_OK;
    trial_reset(s);
    opt__place oa = trial[a];
    DESO_TRY(fit(s, trial, a, -1, cab, &moved));
    if (!moved) return DESO_OK;
    DESO_TRY(prop_bwd(s, trial, a, &oa));
    return try_accept(s, trial, &ok, better);
}

/* The passes over the edges; *done: the last pass lowered nothing and was
 * not cut short by the attempt bound.                                     */
static deso_err edge_passes(srch *s, opt__place *trial, bool *tried,
                            bool *done)
{
    int n = opt__eval_nedges(s->ev), iters = 0;
    int passes = s->o->passes > 0 ? s->o->passes : 3;
    int maxit = s->o->max_iters > 0 ? s->o->max_iters : 64;
    *done = false;
    for (int pass = 0; pass < passes; pass++) {
        bool improved = false, cut = false;
        memset(tried, 0, (size_t)n * sizeof *tried);
        for (;;) {
            if (iters >= maxit) {
                cut = true;
                break;
            }
            int e, cab = -1;
            DESO_TRY(heaviest(s, tried, &e, &cab));
            if (e < 0) break;
            tried[e] = true;
            s->iters = ++iters;
            bool better;
            DESO_TRY(attempt(s, trial, e, cab, &better));
            improved |= better;
        }
        *done = !improved && !cut;
        if (!improved || cut) break;
    }
    return DESO_OK;
}

/* The node sweep; *done: its first sweep changed nothing.                 */
static deso_err node_sweeps(srch *s, opt__place *trial, bool *done)
{
    int passes = s->o->passes > 0 ? s->o->passes : 3;
    *done = false;
    for (int pass = 0; pass < passes; pass++) {
        bool improved = false;
        for (int i = 0; i < s->g->nnodes; i++) {
            trial_reset(s);
            bool moved, ok = false, better = false;
            DESO_TRY(fit(s, trial, i, -1, -1, &moved));
            if (moved) DESO_TRY(try_accept(s, trial, &ok, &better));
            improved |= better;
        }
        *done = !improved && pass == 0;
        if (!improved) break;
    }
    return DESO_OK;
}

static deso_err greedy(srch *s)
{
    bool edges_done = false, sweep_done = false;
    DESO_TRY(edge_passes(s, s->trial, s->tried, &edges_done));
    DESO_TRY(node_sweeps(s, s->trial, &sweep_done));
    /* the state the last edge pass left, unchanged by the sweep: another
     * bounded pass from it would try the same edges and find nothing      */
    s->converged = edges_done && sweep_done;
    return DESO_OK;
}

/* ---- set-up -------------------------------------------------------------- */

static void srch_free(srch *s)
{
    opt__eval_free(s->ev);
    opt__seen_free(s->seen);
    free(s->block);
    free(s->sets);
    free(s->pool);
    memset(s, 0, sizeof *s);
}

/* Whether nodes i and j have the same candidates for the same operand
 * layouts: opt_node_cands reads of a node only its description, its
 * result's value and the operands' layouts; the operands' kinds and
 * lengths are compared too, so that the layouts a candidate set is kept
 * for mean the same thing for both.                                      */
static bool same_cands(const opt_graph *g, int i, int j)
{
    const opt_node *a = &g->nodes[i], *b = &g->nodes[j];
    const blas_desc *x = &a->d, *y = &b->d;
    if (x->op != y->op || x->flags != y->flags || x->nops != y->nops ||
        x->off != y->off || x->inc != y->inc || x->len != y->len ||
        x->rows != y->rows || x->ld != y->ld || x->sp != y->sp)
        return false;
    const opt_value *ra = &g->vals[a->res], *rb = &g->vals[b->res];
    if (ra->kind != rb->kind || ra->n != rb->n || ra->m != rb->m) return false;
    for (int k = 0; k < x->nops; k++) {
        const opt_value *u = &g->vals[a->ops[k]], *v = &g->vals[b->ops[k]];
        if (u->kind != v->kind || u->n != v->n || u->m != v->m) return false;
    }
    return true;
}

/* The search's per-graph arrays, carved out of block (NULL: just its
 * size); the plans and keys zeroed, the rest set before it is read.     */
static size_t srch_arrays(srch *s, char *block)
{
    const opt_graph *g = s->g;
    size_t nn = g->nnodes > 0 ? (size_t)g->nnodes : 1;
    size_t nv = g->nvals > 0 ? (size_t)g->nvals : 1;
    size_t ne = (size_t)opt__eval_nedges(s->ev) + 1, off = 0;
    s->cur = opt__carve(block, &off, nn, sizeof *s->cur);
    s->trial = opt__carve(block, &off, nn, sizeof *s->trial);
    s->alt = opt__carve(block, &off, nn, sizeof *s->alt);
    s->hold = opt__carve(block, &off, nn, sizeof *s->hold);
    s->ckey = opt__carve(block, &off, nn, sizeof *s->ckey);
    s->tkey = opt__carve(block, &off, nn, sizeof *s->tkey);
    s->akey = opt__carve(block, &off, nn, sizeof *s->akey);
    size_t zeroed = off;
    s->chead = opt__carve(block, &off, nn, sizeof *s->chead);
    s->cls = opt__carve(block, &off, nn, sizeof *s->cls);
    s->reads = opt__carve(block, &off, nn, sizeof *s->reads);
    s->etime = opt__carve(block, &off, ne, sizeof *s->etime);
    s->eto = opt__carve(block, &off, ne, sizeof *s->eto);
    s->tried = opt__carve(block, &off, ne, sizeof *s->tried);
    s->scratch = opt__carve(block, &off, OPT_MAXCANDS, sizeof *s->scratch);
    s->vlays = opt__carve(block, &off, nv, sizeof *s->vlays);
    s->nvlays = opt__carve(block, &off, nv, sizeof *s->nvlays);
    if (block != NULL) memset(block, 0, zeroed);
    return off;
}

/* s for a search of g under o (on failure the caller frees it).          */
static deso_err srch_init(srch *s, const opt_graph *g,
                          const opt_search_opts *o)
{
    memset(s, 0, sizeof *s);
    s->g = g;
    s->o = o;
    DESO_TRY(opt__eval_new(g, &o->cost, NULL, &s->ev));
    DESO_TRY(opt__seen_new(g->nnodes, &s->seen));
    s->block = deso__malloc(srch_arrays(s, NULL));
    DESO_CHECK(s->block != NULL, DESO_ENOMEM, "optimizer: out of memory");
    srch_arrays(s, s->block);
    for (int i = 0; i < g->nnodes; i++) {
        s->chead[i] = -1;
        s->cls[i] = i;
        for (int j = 0; j < i && s->cls[i] == i; j++)
            if (s->cls[j] == j && same_cands(g, i, j)) s->cls[i] = j;
        s->reads[i] = opt__cands_reads(g, i);
    }
    /* the vectors' length: the first vector's (a solver's are all one)    */
    int64_t vn = -1;
    for (int v = 0; v < g->nvals; v++) {
        s->nvlays[v] = -1;
        if (vn < 0 && g->vals[v].kind == BLAS_VEC) vn = g->vals[v].n;
    }
    opt__modesets_make(g, o->mode, vn, &s->ms);
    return DESO_OK;
}

/* ---- the starts ------------------------------------------------------------ */

static bool is_red(blas_op op)
{
    return op == BLAS_OP_DOT || op == BLAS_OP_NRM2 || op == BLAS_OP_ASUM ||
           op == BLAS_OP_IAMAX || op == BLAS_OP_GEMV;
}

static int rep_bits(const blas_layout *l)
{
    if (l->kind == BLAS_MAT) return 0;
    int b = 0;
    for (int k = 0; k < 2; k++) {
        int ext = k == 0 ? l->pr : l->pc;
        if (ext > 1 && (l->rep & (1u << k))) b++;
    }
    return b;
}

/* Copies held by a placement: the result's and the operands' replication. */
static int weight_of(const srch *s, const opt__place *c, int nops)
{
    int w = rep_bits(opt__lay(s->ev, c->res));
    for (int k = 0; k < nops; k++) w += rep_bits(opt__lay(s->ev, c->req[k]));
    return w;
}

/* Whether candidate c has the orientations (result, operand 0) of c0.     */
static bool same_dists(const srch *s, const opt__place *c,
                       const opt__place *c0)
{
    return opt__lay(s->ev, c->res)->dist == opt__lay(s->ev, c0->res)->dist &&
           opt__lay(s->ev, c->req[0])->dist ==
               opt__lay(s->ev, c0->req[0])->dist;
}

/* Node i's candidates under the current plan; none at all is an error.   */
static deso_err node_cands(srch *s, int i, const opt__place **c, int *n)
{
    int cur[BLAS_MAXOPS];
    cur_ids(s, s->cur, i, cur);
    DESO_TRY(cands_of(s, i, cur, c, n));
    DESO_CHECK(*n > 0, DESO_EINTERNAL, "optimizer: node %d has no "
               "placement in mode %s", i, opt_mode_name(s->o->mode));
    return DESO_OK;
}

/* The lean start: every node at its least replicated candidate (ties:
 * the orientation of the first candidate, then candidate order).         */
static deso_err lean_plan(srch *s)
{
    for (int i = 0; i < s->g->nnodes; i++) {
        const opt__place *c;
        int n, nops = s->g->nodes[i].d.nops, best = 0;
        DESO_TRY(node_cands(s, i, &c, &n));
        int wb = weight_of(s, &c[0], nops);
        for (int k = 1; k < n; k++) {
            int wc = weight_of(s, &c[k], nops);
            if (wc < wb || (wc == wb && same_dists(s, &c[k], &c[0]) &&
                            !same_dists(s, &c[best], &c[0]))) {
                best = k;
                wb = wc;
            }
        }
        s->cur[i] = c[best];
    }
    return DESO_OK;
}

/* Mode full: candidate pick of reduction node i with its result reduced
 * (not replicated along the reduced dimension), the vector unchanged.    */
static deso_err reduced(srch *s, int i, const opt__place *c, int n,
                        opt__place *pick)
{
    const blas_desc *d = &s->g->nodes[i].d;
    opt_place pl;
    opt__place_out(s->ev, i, pick, &pl);
    int rd = blas_red_dim(d, pl.req);
    if (rd < 0) return DESO_OK;
    blas_layout r = pl.res;
    r.rep &= ~blas_red_bits(rd, r.pr, r.pc);
    blas_layout_normalise(&r);
    int rid, xk = d->op == BLAS_OP_GEMV ? 2 : 0;     /* the vector       */
    DESO_TRY(opt__intern(s->ev, &r, &rid));
    for (int k = 0; k < n; k++)
        if (c[k].res == rid && c[k].req[xk] == pick->req[xk]) {
            *pick = c[k];
            break;
        }
    return DESO_OK;
}

/* Whether layout id l places a vector by a partition.                    */
static bool by_part(const srch *s, int l)
{
    return opt__lay(s->ev, l)->dist == BLAS_DIST_PART;
}

/* The partition start (graphs with sparse products): every update and
 * reduction whose vector has a product's length at its first candidate
 * that keeps that vector by a partition (mode full: reductions reduced),
 * every other node at its first candidate.  A solver's vectors join the
 * partition together or not at all: from the other starts, moving one of
 * them there only adds an exchange, so the greedy, which takes one edge
 * at a time and never accepts a dearer plan, cannot reach this plan.     */
static deso_err part_plan(srch *s)
{
    for (int i = 0; i < s->g->nnodes; i++) {
        const opt__place *c;
        int n;
        DESO_TRY(node_cands(s, i, &c, &n));
        blas_op op = s->g->nodes[i].d.op;
        opt__place pick = c[0];
        for (int k = 0; k < n && op != BLAS_OP_GEMV; k++)
            if (by_part(s, is_red(op) ? c[k].req[0] : c[k].res)) {
                pick = c[k];
                break;
            }
        if (s->o->mode == OPT_FULL && is_red(op))
            DESO_TRY(reduced(s, i, c, n, &pick));
        s->cur[i] = pick;
    }
    return DESO_OK;
}

/* The start: first candidate per node; mode full: reductions reduced.     */
static deso_err start_plan(srch *s, bool lean)
{
    if (lean) return lean_plan(s);
    for (int i = 0; i < s->g->nnodes; i++) {
        const opt__place *c;
        int n;
        DESO_TRY(node_cands(s, i, &c, &n));
        opt__place pick = c[0];
        if (s->o->mode == OPT_FULL && is_red(s->g->nodes[i].d.op))
            DESO_TRY(reduced(s, i, c, n, &pick));
        s->cur[i] = pick;
    }
    return DESO_OK;
}

/* Whether placement pl of a node with nops operands is among cands[0 ..
 * n), compared by layouts.                                                */
static bool listed(const opt_place *cands, int n, const opt_place *pl,
                   int nops)
{
    for (int k = 0; k < n; k++) {
        bool eq = blas_layout_equal(&cands[k].res, &pl->res);
        for (int j = 0; j < nops && eq; j++)
            eq = blas_layout_equal(&cands[k].req[j], &pl->req[j]);
        if (eq) return true;
    }
    return false;
}

/* Whether placement p of node i is among its candidates for operand
 * layouts cur: by ids among the kept ones, else by layouts among fresh
 * ones (a plan checked once need not fill the table).                    */
static deso_err place_valid(srch *s, int i, const int *cur,
                            const opt__place *p, bool *in)
{
    *in = false;
    const cand_set *kept = cands_kept(s, i, cur);
    if (kept != NULL) {
        for (int k = 0; k < kept->n && !*in; k++)
            *in = place_same(&s->pool[kept->first + k], p);
        return DESO_OK;
    }
    int n;
    DESO_TRY(cands_fresh(s, i, cur, &n));
    opt_place pl;
    opt__place_out(s->ev, i, p, &pl);
    *in = listed(s->scratch, n, &pl, s->g->nodes[i].d.nops);
    return DESO_OK;
}

/* Whether every node of p is among its mode's candidates.                 */
static deso_err plan_valid(srch *s, const opt__place *p, bool *ok)
{
    *ok = true;
    for (int i = 0; i < s->g->nnodes && *ok; i++) {
        int cur[BLAS_MAXOPS];
        cur_ids(s, p, i, cur);
        DESO_TRY(place_valid(s, i, cur, &p[i], ok));
    }
    return DESO_OK;
}

/* ---- the search ------------------------------------------------------------ */

/* Mode none's plan by ids: opt_plan_none's placements (and errors),
 * node by node from the layouts its own earlier nodes give.              */
static deso_err none_ids(srch *s, opt__place *none)
{
    for (int i = 0; i < s->g->nnodes; i++) {
        int cur[BLAS_MAXOPS];
        blas_layout lc[BLAS_MAXOPS];
        cur_ids(s, none, i, cur);
        for (int k = 0; k < s->g->nodes[i].d.nops; k++)
            lc[k] = *opt__lay(s->ev, cur[k]);
        opt_place pl;
        memset(&pl, 0, sizeof pl);
        DESO_TRY(opt_place_node(&s->g->df, &s->g->nodes[i].d, lc, &pl.res,
                                pl.req));
        DESO_TRY(opt__intern_place(s->ev, i, &pl, &none[i]));
    }
    return DESO_OK;
}

/* One rank: nothing moves whatever the placements, so mode none's plan,
 * where the mode allows it, is as good as any and needs no search (nor
 * the search's set-up): *done when it is allowed, and out is that plan. */
static deso_err alone_plan(const opt_graph *g, const opt_search_opts *o,
                           opt_plan *out, bool *done)
{
    *done = false;
    DESO_TRY(opt_plan_none(g, out));
    opt_place *c = deso__malloc(OPT_MAXCANDS * sizeof *c);
    deso_err err = c ? DESO_OK
                     : deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    bool ok = true;
    for (int i = 0; i < g->nnodes && ok && err == DESO_OK; i++) {
        blas_layout cur[BLAS_MAXOPS];
        int n;
        opt__cur_ops(g, out, i, cur);
        err = opt_node_cands(g, i, o->mode, cur, c, &n);
        if (err == DESO_OK)
            ok = listed(c, n, &out->node[i], g->nodes[i].d.nops);
    }
    free(c);
    if (err == DESO_OK && ok) {
        out->mode = o->mode;
        out->settled = true;
        err = opt_plan_cost(g, out, &o->cost, NULL, NULL, &out->model);
        *done = err == DESO_OK;
    }
    if (!*done) opt_plan_free(out);
    return err;
}

/* Two starts (mode full): mode none's placements with reductions reduced,
 * and the lean one; else one.  A graph with sparse products adds the
 * partition start.  The cheapest result wins (ties: the first).          */
static deso_err starts(srch *s, bool *settled)
{
    size_t nn = s->g->nnodes > 0 ? (size_t)s->g->nnodes : 1;
    opt__place *best = s->hold;
    double bcost = 0.0;
    int nstarts = s->o->mode == OPT_FULL ? 2 : 1, iters = 0;
    int part_st = s->g->nparts > 0 ? nstarts++ : -1;
    deso_err err = DESO_OK;
    for (int st = 0; st < nstarts && err == DESO_OK; st++) {
        err = st == part_st ? part_plan(s) : start_plan(s, st == 1);
        s->iters = 0;
        cur_rekey(s);
        if (err == DESO_OK) err = cost_of(s, s->cur, s->cur_h, &s->cost);
        if (err == DESO_OK) err = greedy(s);
        iters += s->iters;
        if (err == DESO_OK && (st == 0 || s->cost < bcost)) {
            memcpy(best, s->cur, nn * sizeof *best);
            bcost = s->cost;
            *settled = s->converged;
        }
    }
    if (err == DESO_OK) {
        memcpy(s->cur, best, nn * sizeof *best);
        cur_rekey(s);
        s->cost = bcost;
        s->iters = iters;
    }
    return err;
}

/* Never worse than mode none, where it has a plan (running out of memory
 * is an error: every rank must end with the same plan).                  */
static deso_err never_worse(srch *s, bool *settled)
{
    size_t nn = s->g->nnodes > 0 ? (size_t)s->g->nnodes : 1;
    opt__place *none = s->hold;
    deso_err err = none_ids(s, none);
    if (err != DESO_OK) return err == DESO_ENOMEM ? err : DESO_OK;
    double tn;
    bool ok = false;
    err = cost_of(s, none, plan_key(s, none), &tn);
    if (err == DESO_OK) err = plan_valid(s, none, &ok);
    if (err == DESO_OK && ok && tn < s->cost) {
        memcpy(s->cur, none, nn * sizeof *none);
        cur_rekey(s);
        s->cost = tn;
        *settled = false;
    }
    return err;
}

/* The current plan as out (placements by layouts, model, iterations);
 * out's fuse groups are left as they are.                                */
static deso_err plan_out(srch *s, opt_mode mode, opt_plan *out)
{
    for (int i = 0; i < s->g->nnodes; i++)
        opt__place_out(s->ev, i, &s->cur[i], &out->node[i]);
    out->mode = mode;
    out->iters = s->iters;
    return opt__eval_plan(s->ev, s->cur, &out->model);
}

deso_err opt_search(const opt_graph *g, const opt_search_opts *o,
                    opt_plan *out)
{
    DESO_CHECK(g != NULL && o != NULL && out != NULL, DESO_ENULL,
               "opt_search: NULL argument");
    if (o->mode == OPT_NONE) {               /* nothing to improve        */
        DESO_TRY(opt_plan_none(g, out));
        out->settled = true;
        deso_err err = opt_plan_cost(g, out, &o->cost, NULL, NULL, &out->model);
        if (err != DESO_OK) opt_plan_free(out);
        return err;
    }
    if (g->df.pr * g->df.pc == 1) {
        bool done;
        DESO_TRY(alone_plan(g, o, out, &done));
        if (done) return DESO_OK;
    }
    srch s;
    bool settled = false;
    deso_err err = srch_init(&s, g, o);
    if (err == DESO_OK) err = starts(&s, &settled);
    if (err == DESO_OK) err = never_worse(&s, &settled);
    if (err == DESO_OK) err = opt__plan_alloc_unset(out, g->nnodes);
    if (err == DESO_OK) {
        out->settled = settled;
        err = plan_out(&s, o->mode, out);
        if (err != DESO_OK) opt_plan_free(out);
    }
    srch_free(&s);
    return err;
}

deso_err opt_search_improve(const opt_graph *g, const opt_search_opts *o,
                            int max_iters, opt_plan *p, bool *better)
{
    DESO_CHECK(g != NULL && o != NULL && p != NULL && better != NULL,
               DESO_ENULL, "opt_search_improve: NULL argument");
    DESO_CHECK(p->nnodes == g->nnodes, DESO_EINVAL,
               "opt_search_improve: plan and graph differ in size");
    *better = false;
    if (o->mode == OPT_NONE) return DESO_OK;
    opt_search_opts bo = *o;
    bo.max_iters = max_iters > 0 ? max_iters : 1;
    bo.passes = 1;
    srch s;
    deso_err err = srch_init(&s, g, &bo);
    for (int i = 0; i < g->nnodes && err == DESO_OK; i++)
        err = opt__intern_place(s.ev, i, &p->node[i], &s.cur[i]);
    double t0 = 0.0;
    s.iters = p->iters;
    if (err == DESO_OK) cur_rekey(&s);      /* s.cur is NULL if init failed */
    if (err == DESO_OK) err = cost_of(&s, s.cur, s.cur_h, &t0);
    s.cost = t0;
    if (err == DESO_OK) err = greedy(&s);
    opt_plan np;
    if (err == DESO_OK && s.cost < t0) {
        /* p with the better placements (its other fields as they were)   */
        s.iters += p->iters;
        err = opt_plan_copy(p, &np);
        if (err == DESO_OK) err = plan_out(&s, o->mode, &np);
        if (err == DESO_OK) {
            opt_plan_free(p);
            *p = np;
            *better = true;
        } else {
            opt_plan_free(&np);
        }
    }
    srch_free(&s);
    return err;
}
