/* The search: mode none's plan, and paper 003's greedy edge elimination
 * (section 3.4) for modes affine and full, with the errata of
 * doc/DESIGN.md, "The greedy search and its errata".
 *
 * Start: every node at the first candidate its mode allows (mode none's
 * choice where it is valid), then, in mode full, every reduction reduced
 * to one place: its replication becomes a broadcast on the out-edges that
 * need it (all-reduce = reduce + broadcast: the same modelled cost).
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
 * clocks, fixed orders, ties broken by index.                            */
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

typedef struct srch {
    bool converged;          /* greedy's last pass and sweep found nothing  */
    const opt_graph *g;
    const opt_search_opts *o;
    opt_memo *memo;
    opt_plan cur;
    double cost;
    int *cstart, *cons;       /* consumers of value v: edges cons[cstart[v]
                               * .. cstart[v + 1]) = node * MAXOPS + slot */
    opt_place *cands;         /* scratch                                  */
} srch;

static deso_err cost_of(srch *s, const opt_plan *p, double *t)
{
    opt_counts c;
    DESO_TRY(opt_plan_cost(s->g, p, &s->o->cost, s->memo, NULL, &c));
    *t = c.time;
    return DESO_OK;
}

static int place_diff(const opt_place *a, const opt_place *b)
{
    int d = !blas_layout_equal(&a->res, &b->res);
    for (int k = 0; k < BLAS_MAXOPS; k++)
        d += !blas_layout_equal(&a->req[k], &b->req[k]);
    return d;
}

/* Node i of plan p moves to its cheapest candidate whose slot (-1: the
 * result) has layout L (L NULL: any candidate).  *moved: whether it
 * changed.  Ties: fewer changed slots, then candidate order.             */
static deso_err fit(srch *s, opt_plan *p, int i, int slot,
                    const blas_layout *L, bool *moved)
{
    const opt_graph *g = s->g;
    blas_layout cur[BLAS_MAXOPS];
    opt__cur_ops(g, p, i, cur);
    int n;
    DESO_TRY(opt_node_cands(g, i, s->o->mode, cur, s->cands, &n));
    opt_place keep = p->node[i], best = keep;
    double bt = 0.0;
    int bd = 0;
    bool found = false;
    *moved = false;
    /* local copy: evaluating may not touch s->cands (no recursion here)   */
    for (int k = 0; k < n; k++) {
        opt_place c = s->cands[k];
        if (L != NULL) {
            const blas_layout *have = slot < 0 ? &c.res : &c.req[slot];
            if (!blas_layout_equal(have, L)) continue;
        }
        p->node[i] = c;
        double t;
        deso_err err = cost_of(s, p, &t);
        if (err != DESO_OK) {
            p->node[i] = keep;
            return err;
        }
        int dd = place_diff(&c, &keep);
        if (!found || t < bt || (t == bt && dd < bd)) {
            found = true;
            bt = t;
            bd = dd;
            best = c;
        }
    }
    p->node[i] = found ? best : keep;
    *moved = found && place_diff(&best, &keep) > 0;
    return DESO_OK;
}

/* Node i's result changed from old: consumers whose edge was free follow. */
static deso_err prop_fwd(srch *s, opt_plan *p, int i, const blas_layout *old)
{
    const blas_layout nw = p->node[i].res;
    if (blas_layout_equal(&nw, old)) return DESO_OK;
    int v = s->g->nodes[i].res;
    for (int e = s->cstart[v]; e < s->cstart[v + 1]; e++) {
        int j = s->cons[e] / BLAS_MAXOPS, k = s->cons[e] % BLAS_MAXOPS;
        if (!blas_layout_equal(&p->node[j].req[k], old)) continue;
        blas_layout oj = p->node[j].res;
        bool moved;
        DESO_TRY(fit(s, p, j, k, &nw, &moved));
        if (moved) DESO_TRY(prop_fwd(s, p, j, &oj));
    }
    return DESO_OK;
}

/* Node i's operand layouts changed from old: producers whose edge into i
 * was free follow.                                                        */
static deso_err prop_bwd(srch *s, opt_plan *p, int i, const opt_place *old)
{
    const opt_node *nd = &s->g->nodes[i];
    for (int k = 0; k < nd->d.nops; k++) {
        const blas_layout nw = p->node[i].req[k];
        if (blas_layout_equal(&nw, &old->req[k])) continue;
        int a = s->g->vals[nd->ops[k]].producer;
        if (a < 0 || !blas_layout_equal(&p->node[a].res, &old->req[k]))
            continue;
        opt_place oa = p->node[a];
        bool moved;
        DESO_TRY(fit(s, p, a, -1, &nw, &moved));
        if (moved) DESO_TRY(prop_bwd(s, p, a, &oa));
    }
    return DESO_OK;
}

/* Tries trial as the new current plan: accepted when not more costly.    */
static deso_err try_accept(srch *s, opt_plan *trial, bool *ok, bool *better)
{
    double t;
    DESO_TRY(cost_of(s, trial, &t));
    *ok = t <= s->cost;
    *better = t < s->cost;
    if (*ok) {
        memcpy(s->cur.node, trial->node,
               (size_t)s->g->nnodes * sizeof *s->cur.node);
        s->cost = t;
    }
    return DESO_OK;
}

/* Moves every consumer of value v that reads layout `from` to layout `to`
 * (with forward propagation) in trial, starting from the current plan.   */
static deso_err move_sinks(srch *s, opt_plan *trial, int v,
                           const blas_layout *from, const blas_layout *to,
                           bool *any)
{
    const opt_graph *g = s->g;
    memcpy(trial->node, s->cur.node, (size_t)g->nnodes * sizeof *trial->node);
    *any = false;
    for (int e = s->cstart[v]; e < s->cstart[v + 1]; e++) {
        int j = s->cons[e] / BLAS_MAXOPS, k = s->cons[e] % BLAS_MAXOPS;
        if (!blas_layout_equal(&trial->node[j].req[k], from)) continue;
        blas_layout oj = trial->node[j].res;
        bool moved;
        DESO_TRY(fit(s, trial, j, k, to, &moved));
        if (moved) {
            *any = true;
            DESO_TRY(prop_fwd(s, trial, j, &oj));
        }
    }
    return DESO_OK;
}

static deso_err sink_change(srch *s, opt_plan *trial, int v,
                            const blas_layout *cab, const blas_layout *ca,
                            bool *ok, bool *better)
{
    const opt_graph *g = s->g;
    *ok = *better = false;
    bool any;
    DESO_TRY(move_sinks(s, trial, v, cab, ca, &any));
    if (any) DESO_TRY(try_accept(s, trial, ok, better));
    if (*better) return DESO_OK;
    blas_layout T[4];
    int nt = opt__layouts(g, s->o->mode, g->vals[v].kind, g->vals[v].n, T);
    double bt = 0.0;
    int bk = -1;
    for (int t = 0; t < nt; t++) {
        if (blas_layout_equal(&T[t], cab) || blas_layout_equal(&T[t], ca))
            continue;
        DESO_TRY(move_sinks(s, trial, v, cab, &T[t], &any));
        if (!any) continue;
        double c;
        DESO_TRY(cost_of(s, trial, &c));
        if (c < s->cost && (bk < 0 || c < bt)) {
            bk = t;
            bt = c;
        }
    }
    if (bk < 0) return DESO_OK;
    DESO_TRY(move_sinks(s, trial, v, cab, &T[bk], &any));
    return try_accept(s, trial, ok, better);
}

static deso_err greedy(srch *s)
{
    const opt_graph *g = s->g;
    opt_eval ev;
    DESO_TRY(opt_eval_init(&ev, g));
    opt_plan trial;
    deso_err err = opt_plan_copy(&s->cur, &trial);
    bool *tried = deso__calloc((size_t)ev.nedges + 1, sizeof *tried);
    if (err == DESO_OK && tried == NULL)
        err = deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    int iters = 0, passes = s->o->passes > 0 ? s->o->passes : 3;
    int maxit = s->o->max_iters > 0 ? s->o->max_iters : 64;
    bool edges_done = false, sweep_done = false;
    for (int pass = 0; pass < passes && err == DESO_OK; pass++) {
        bool improved = false, cut = false;
        memset(tried, 0, (size_t)ev.nedges * sizeof *tried);
        while (err == DESO_OK) {
            if (iters >= maxit) {
                cut = true;
                break;
            }
            opt_counts tot;
            err = opt_plan_cost(g, &s->cur, &s->o->cost, s->memo, &ev, &tot);
            if (err != DESO_OK) break;
            int e = -1;
            for (int x = 0; x < ev.nedges; x++)
                if (!tried[x] && ev.edge[x].cost.time > 0.0 &&
                    (e < 0 || ev.edge[x].cost.time > ev.edge[e].cost.time))
                    e = x;
            if (e < 0) break;
            tried[e] = true;
            iters++;
            s->cur.iters = iters;
            int a, j = -1, k = -1;
            blas_layout ca, cab = ev.edge[e].to;
            if (e < g->nnodes * BLAS_MAXOPS) {
                j = e / BLAS_MAXOPS;
                k = e % BLAS_MAXOPS;
                int v = g->nodes[j].ops[k];
                a = g->vals[v].producer;
                ca = a >= 0 ? s->cur.node[a].res : g->vals[v].views[0];
            } else {
                a = g->vals[e - g->nnodes * BLAS_MAXOPS].producer;
                ca = cab;
            }
            bool ok = false, better = false, moved;
            /* step 2: change the sink, c_ab <- c_a: every consumer sharing
             * the view c_ab moves with it; when that does not pay, the
             * cheapest other layout the mode allows (an edge that cannot
             * be removed may be cheapened)                                 */
            if (j >= 0)
                err = sink_change(s, &trial, g->nodes[j].ops[k], &cab, &ca,
                                  &ok, &better);
            /* step 4: change the source (c_a <- c_ab)                      */
            if (err == DESO_OK && !ok && a >= 0) {
                memcpy(trial.node, s->cur.node,
                       (size_t)g->nnodes * sizeof *trial.node);
                opt_place oa = trial.node[a];
                err = fit(s, &trial, a, -1, &cab, &moved);
                if (err == DESO_OK && moved) {
                    err = prop_bwd(s, &trial, a, &oa);
                    if (err == DESO_OK) err = try_accept(s, &trial, &ok, &better);
                }
            }
            improved |= better;
        }
        edges_done = !improved && !cut;
        if (!improved || cut) break;
    }
    /* the node sweep                                                      */
    for (int pass = 0; pass < passes && err == DESO_OK; pass++) {
        bool improved = false;
        for (int i = 0; i < g->nnodes && err == DESO_OK; i++) {
            memcpy(trial.node, s->cur.node,
                   (size_t)g->nnodes * sizeof *trial.node);
            bool moved, ok = false, better = false;
            err = fit(s, &trial, i, -1, NULL, &moved);
            if (err == DESO_OK && moved) err = try_accept(s, &trial, &ok, &better);
            improved |= better;
        }
        sweep_done = !improved && pass == 0;   /* it changed nothing    */
        if (!improved) break;
    }
    /* the state the last edge pass left, unchanged by the sweep: another
     * bounded pass from it would try the same edges and find nothing      */
    s->converged = edges_done && sweep_done;
    free(tried);
    opt_plan_free(&trial);
    opt_eval_free(&ev);
    return err;
}

static deso_err index_consumers(srch *s)
{
    const opt_graph *g = s->g;
    s->cstart = deso__calloc((size_t)g->nvals + 1, sizeof *s->cstart);
    s->cons = deso__malloc(((size_t)g->nnodes * BLAS_MAXOPS + 1) * sizeof *s->cons);
    s->cands = deso__malloc(OPT_MAXCANDS * sizeof *s->cands);
    DESO_CHECK(s->cstart && s->cons && s->cands, DESO_ENOMEM,
               "optimizer: out of memory");
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i].d.nops; k++)
            s->cstart[g->nodes[i].ops[k] + 1]++;
    for (int v = 0; v < g->nvals; v++) s->cstart[v + 1] += s->cstart[v];
    int *fill = deso__calloc((size_t)g->nvals + 1, sizeof *fill);
    DESO_CHECK(fill != NULL, DESO_ENOMEM, "optimizer: out of memory");
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i].d.nops; k++) {
            int v = g->nodes[i].ops[k];
            s->cons[s->cstart[v] + fill[v]++] = i * BLAS_MAXOPS + k;
        }
    free(fill);
    return DESO_OK;
}

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
static int weight_of(const opt_place *c, int nops)
{
    int w = rep_bits(&c->res);
    for (int k = 0; k < nops; k++) w += rep_bits(&c->req[k]);
    return w;
}

/* The lean start: every node at its least replicated candidate (ties: the
 * orientation of the first candidate, then candidate order).             */
static deso_err lean_plan(srch *s)
{
    const opt_graph *g = s->g;
    for (int i = 0; i < g->nnodes; i++) {
        blas_layout cur[BLAS_MAXOPS];
        opt__cur_ops(g, &s->cur, i, cur);
        int n, nops = g->nodes[i].d.nops;
        DESO_TRY(opt_node_cands(g, i, s->o->mode, cur, s->cands, &n));
        DESO_CHECK(n > 0, DESO_EINTERNAL, "optimizer: node %d has no "
                   "placement in mode %s", i, opt_mode_name(s->o->mode));
        int best = 0;
        for (int c = 1; c < n; c++) {
            int wc = weight_of(&s->cands[c], nops);
            int wb = weight_of(&s->cands[best], nops);
            bool same_c = s->cands[c].res.dist == s->cands[0].res.dist &&
                          s->cands[c].req[0].dist == s->cands[0].req[0].dist;
            bool same_b = s->cands[best].res.dist == s->cands[0].res.dist &&
                          s->cands[best].req[0].dist == s->cands[0].req[0].dist;
            if (wc < wb || (wc == wb && same_c && !same_b)) best = c;
        }
        s->cur.node[i] = s->cands[best];
    }
    return DESO_OK;
}

/* The start: first candidate per node; mode full: reductions reduced.     */
static deso_err start_plan(srch *s, bool lean)
{
    const opt_graph *g = s->g;
    if (lean) return lean_plan(s);
    for (int i = 0; i < g->nnodes; i++) {
        blas_layout cur[BLAS_MAXOPS];
        opt__cur_ops(g, &s->cur, i, cur);
        int n;
        DESO_TRY(opt_node_cands(g, i, s->o->mode, cur, s->cands, &n));
        DESO_CHECK(n > 0, DESO_EINTERNAL, "optimizer: node %d has no "
                   "placement in mode %s", i, opt_mode_name(s->o->mode));
        opt_place pick = s->cands[0];
        const blas_desc *d = &g->nodes[i].d;
        if (s->o->mode == OPT_FULL && is_red(d->op)) {
            int rd = blas_red_dim(d, pick.req);
            if (rd >= 0) {
                blas_layout r = pick.res;
                r.rep &= ~(1u << rd);
                blas_layout_normalise(&r);
                int xk = d->op == BLAS_OP_GEMV ? 2 : 0;   /* the vector */
                for (int c = 0; c < n; c++)
                    if (blas_layout_equal(&s->cands[c].res, &r) &&
                        blas_layout_equal(&s->cands[c].req[xk], &pick.req[xk])) {
                        pick = s->cands[c];
                        break;
                    }
            }
        }
        s->cur.node[i] = pick;
    }
    return DESO_OK;
}

/* Whether every node of p is among its mode's candidates.                 */
static deso_err plan_valid(srch *s, const opt_plan *p, bool *ok)
{
    *ok = true;
    for (int i = 0; i < s->g->nnodes && *ok; i++) {
        blas_layout cur[BLAS_MAXOPS];
        opt__cur_ops(s->g, p, i, cur);
        int n;
        DESO_TRY(opt_node_cands(s->g, i, s->o->mode, cur, s->cands, &n));
        bool in = false;
        for (int c = 0; c < n && !in; c++)
            in = place_diff(&s->cands[c], &p->node[i]) == 0;
        *ok = in;
    }
    return DESO_OK;
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
    srch s;
    memset(&s, 0, sizeof s);
    s.g = g;
    s.o = o;
    opt_plan none;
    memset(&none, 0, sizeof none);
    s.memo = opt_memo_new();
    deso_err err = s.memo ? DESO_OK
                          : deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    if (err == DESO_OK) err = index_consumers(&s);
    if (err == DESO_OK) err = opt__plan_alloc(&s.cur, g->nnodes);
    /* one rank: nothing moves whatever the placements, so mode none's
     * plan, where the mode allows it, is as good as any and needs no
     * search                                                              */
    bool alone = false;
    if (err == DESO_OK && g->df.pr * g->df.pc == 1) {
        err = opt_plan_none(g, &none);
        if (err == DESO_OK) err = plan_valid(&s, &none, &alone);
        if (err == DESO_OK && alone)
            memcpy(s.cur.node, none.node, (size_t)g->nnodes * sizeof *none.node);
        opt_plan_free(&none);
    }
    /* two starts (mode full): mode none's placements with reductions
     * reduced, and the lean one; the cheaper result wins (ties: the first) */
    opt_plan best;
    memset(&best, 0, sizeof best);
    double bcost = 0.0;
    int nstarts = o->mode == OPT_FULL ? 2 : 1, iters = 0;
    bool settled = alone;
    for (int st = 0; st < nstarts && err == DESO_OK && !alone; st++) {
        err = start_plan(&s, st == 1);
        s.cur.iters = 0;
        if (err == DESO_OK) err = cost_of(&s, &s.cur, &s.cost);
        if (err == DESO_OK) err = greedy(&s);
        iters += s.cur.iters;
        if (err == DESO_OK && (st == 0 || s.cost < bcost)) {
            opt_plan_free(&best);
            err = opt_plan_copy(&s.cur, &best);
            bcost = s.cost;
            settled = s.converged;
        }
    }
    if (err == DESO_OK && !alone) {
        memcpy(s.cur.node, best.node, (size_t)g->nnodes * sizeof *best.node);
        s.cost = bcost;
        s.cur.iters = iters;
    }
    opt_plan_free(&best);
    /* never worse than mode none (where it has a plan; running out of
     * memory is an error: every rank must end with the same plan)       */
    deso_err en = err == DESO_OK && !alone ? opt_plan_none(g, &none)
                                           : DESO_EINTERNAL;
    if (en == DESO_ENOMEM) err = en;
    if (err == DESO_OK && en == DESO_OK) {
        double tn;
        bool ok;
        err = cost_of(&s, &none, &tn);
        if (err == DESO_OK) err = plan_valid(&s, &none, &ok);
        if (err == DESO_OK && ok && tn < s.cost) {
            memcpy(s.cur.node, none.node, (size_t)g->nnodes * sizeof *none.node);
            s.cost = tn;
            settled = false;
        }
    }
    if (err == DESO_OK) {
        s.cur.mode = o->mode;
        s.cur.settled = settled;
        err = opt_plan_cost(g, &s.cur, &o->cost, s.memo, NULL, &s.cur.model);
    }
    opt_plan_free(&none);
    opt_memo_free(s.memo);
    free(s.cstart);
    free(s.cons);
    free(s.cands);
    if (err != DESO_OK) {
        opt_plan_free(&s.cur);
        return err;
    }
    *out = s.cur;
    return DESO_OK;
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
    memset(&s, 0, sizeof s);
    s.g = g;
    s.o = &bo;
    s.memo = opt_memo_new();
    deso_err err = s.memo ? DESO_OK
                          : deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    if (err == DESO_OK) err = index_consumers(&s);
    if (err == DESO_OK) err = opt_plan_copy(p, &s.cur);
    double t0 = 0.0;
    if (err == DESO_OK) err = cost_of(&s, &s.cur, &t0);
    s.cost = t0;
    if (err == DESO_OK) err = greedy(&s);
    if (err == DESO_OK && s.cost < t0) {
        s.cur.mode = o->mode;
        s.cur.iters = p->iters + s.cur.iters;
        err = opt_plan_cost(g, &s.cur, &o->cost, s.memo, NULL, &s.cur.model);
        if (err == DESO_OK) {
            opt_plan_free(p);
            *p = s.cur;
            memset(&s.cur, 0, sizeof s.cur);
            *better = true;
        }
    }
    opt_plan_free(&s.cur);
    opt_memo_free(s.memo);
    free(s.cstart);
    free(s.cons);
    free(s.cands);
    return err;
}
