/* Force points: check that every rank recorded the same calls, find the
 * plan for the pending DAG, then run the DAG in the plan's placements, in
 * the order its preparation scheduled (schedule.c: a topological order
 * that posts reductions early and waits for them late; run.c runs it).
 * Executed nodes are freed once their results are ready; values nobody
 * references any more go with them.
 *
 * The plan (doc/DESIGN.md, "Choosing a plan"):
 *   0. a compiled force (compiled.c) whose graph the pending DAG is, found
 *      by walking the DAG against it: no graph is built;
 *   1. the optimiser's graph of the pending nodes: live-in values with the
 *      layouts their views have now, live-out values = those a handle
 *      still references;
 *   2. its structural key (optimizer/opt_cache.h) finds a plan in the
 *      context's cache: a hit replays it (plans_replayed), and while the
 *      entry is not settled spends a bounded greedy effort improving it;
 *   3. else a plan of an imported wisdom file with that key, rebuilt and
 *      checked against the mode's candidates (also a replay);
 *   4. else (modes affine, full) a cached plan for the same DAG shape with
 *      its live-in values placed otherwise: still correct (the executor
 *      exchanges or remaps what differs), adapted by the same bounded greedy
 *      improvement; counted as a replay (the optimiser did not run from
 *      scratch).  This is what lets a solver's first iteration (inputs in
 *      default placements) and its steady state (inputs where the previous
 *      iteration left them) share one optimisation;
 *   5. else the search in the context's mode (plans_optimised).
 * Every rank does the same pure computation on the same inputs, so every
 * rank runs the same plan.  All of it is timed as DESO_T_OPTIMISE.       */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"
#include "deso/runtime/log.h"
#include "deso/runtime/replay.h"
#include "placement/alloc.h"

/* Loop-carried values (opt_graph_carry): each live-out value made for a
 * handle whose value at the force's start is a live-in.  Quadratic in the
 * live-ins, so only for DAGs with few of them (a solver's iteration has a
 * dozen); larger DAGs are planned without the hint.                      */
#define CARRY_MAX_IN 64

static deso_err mark_carries(const deso_ctx *ctx, opt_graph *g)
{
    const deso__value *in[CARRY_MAX_IN];
    int nin = 0;
    for (const deso__node *nd = ctx->head; nd != NULL; nd = nd->next)
        for (int k = 0; k < nd->d.nops; k++) {
            const deso__value *v = nd->ops[k];
            if (v->hid == 0 || g->vals[v->gid].producer >= 0) continue;
            bool seen = false;
            for (int j = 0; j < nin && !seen; j++) seen = in[j] == v;
            if (seen) continue;
            if (nin == CARRY_MAX_IN) return DESO_OK;
            in[nin++] = v;
        }
    for (const deso__node *nd = ctx->head; nd != NULL; nd = nd->next) {
        const deso__value *r = nd->res;
        if (r->hid == 0 || !g->vals[r->gid].live_out) continue;
        for (int j = 0; j < nin; j++)
            if (in[j]->hid == r->hid)
                DESO_TRY(opt_graph_carry(g, r->gid, in[j]->gid));
    }
    return DESO_OK;
}

static deso_err build_graph(deso_ctx *ctx, opt_graph *g)
{
    opt_graph_reset(g, &ctx->df);
    uint64_t stamp = ++ctx->stamp;
    for (deso__node *nd = ctx->head; nd != NULL; nd = nd->next) {
        int ops[BLAS_MAXOPS];
        for (int k = 0; k < nd->d.nops; k++) {
            deso__value *v = nd->ops[k];
            if (v->mark != stamp) {          /* not produced here: live-in */
                DESO_CHECK(v->ready && v->views != NULL, DESO_EINTERNAL,
                           "force: operand %d of a %s not computed", k,
                           blas_op_get(nd->d.op)->name);
                DESO_TRY(opt_graph_livein(g, &v->views->lay, &v->gid));
                for (deso__view *w = v->views->next; w != NULL; w = w->next)
                    DESO_TRY(opt_graph_livein_view(g, v->gid, &w->lay));
                if (v->ooc) DESO_TRY(opt_graph_ooc(g, v->gid));
                v->mark = stamp;
                v->nread = 0;
            }
            ops[k] = v->gid;
            v->nread++;
        }
        deso__value *r = nd->res;
        DESO_TRY(opt_graph_node_desc(g, &nd->d, ops, r->m, r->n, &r->gid));
        if (r->ooc) DESO_TRY(opt_graph_ooc(g, r->gid));
        r->mark = stamp;
        r->nread = 0;
    }
    /* refs = the handle (if any) + pending readers + the producing node   */
    for (deso__node *nd = ctx->head; nd != NULL; nd = nd->next)
        if (nd->res->refs > nd->res->nread + 1)
            DESO_TRY(opt_graph_live_out(g, nd->res->gid, NULL));
    return mark_carries(ctx, g);
}

static opt_search_opts search_opts(const deso_ctx *ctx)
{
    opt_search_opts o = opt_search_default(ctx->df.mode);
    o.cost = ctx->params;
    if (ctx->replan_runs > 1) o.cost.amortise = (double)ctx->replan_runs;
    return o;
}

/* A plan imported from a wisdom file, rebuilt on this graph.              */
static bool from_wisdom(deso_ctx *ctx, const opt_graph *g, uint64_t key,
                        opt_plan *out)
{
    const opt_wisdom_plan *wp = opt_wisdom_find(&ctx->wis, key);
    if (wp == NULL || wp->nnodes != g->nnodes) return false;
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1;
    blas_layout *res = deso__malloc(n * sizeof *res);
    int *var = deso__malloc(n * sizeof *var);
    bool ok = res != NULL && var != NULL;
    for (int i = 0; ok && i < g->nnodes; i++) {
        res[i] = wp->nodes[i].lay;
        var[i] = wp->nodes[i].variant;
    }
    opt_search_opts o = search_opts(ctx);
    ok = ok && opt_plan_rebuild(g, ctx->df.mode, g->nnodes, res, var,
                                &o.cost, out) == DESO_OK;
    free(res);
    free(var);
    return ok;
}

/* Keeps the graph and cp (a copy of the plan made before the force's
 * agreement, so that nothing here can fail) for deso_plan_explain, and
 * writes the trace and the explanation (rank 0).                        */
static void keep_last(deso_ctx *ctx, opt_graph *g, opt_plan *cp)
{
    opt_graph_free(&ctx->last_g);
    opt_plan_free(&ctx->last_p);
    ctx->last_g = *g;                 /* takes the graph over               */
    memset(g, 0, sizeof *g);
    ctx->last_p = *cp;                /* and the copy                       */
    memset(cp, 0, sizeof *cp);
    if (ctx->rank != 0) return;
    if (ctx->trace != NULL) {
        FILE *f = fopen(ctx->trace, "w");
        if (f != NULL) {
            opt_plan_dot(f, &ctx->last_g, &ctx->last_p, &ctx->params);
            fclose(f);
        }
    }
    if (ctx->verbose)
        opt_plan_explain(stderr, &ctx->last_g, &ctx->last_p, &ctx->params);
}

/* A hit in the plan cache: replayed, and while the entry is not settled
 * a bounded effort improves it (*fresh: it did).  *settled: it will not
 * change any more.                                                       */
static deso_err replay_cached(const opt_graph *g, const opt_search_opts *o,
                              opt_mode mode, opt_cache_entry *e,
                              opt_plan *out, bool *fresh, bool *settled)
{
    e->hits++;
    if (!e->settled && mode != OPT_NONE) {
        bool better = false;
        DESO_TRY(opt_search_improve(g, o, DESO__IMPROVE_ITERS, &e->plan,
                                    &better));
        if (better && e->variant != NULL)
            DESO_TRY(opt_plan_variants(g, &e->plan, mode, e->variant));
        for (int i = 0; better && e->variant != NULL && i < g->nnodes; i++)
            if (e->variant[i] < 0) {      /* not storable: no wisdom for it */
                free(e->variant);
                e->variant = NULL;
            }
        e->settled = !better;
        *fresh = better;
    }
    *settled = e->settled || mode == OPT_NONE;
    return opt_plan_copy(&e->plan, out);
}

/* The variants of plan p's nodes for the wisdom file, or NULL (*var) when
 * some node has none that can be stored.                                 */
static deso_err storable_variants(const opt_graph *g, const opt_plan *p,
                                  opt_mode mode, int **var)
{
    *var = deso__malloc((size_t)(g->nnodes > 0 ? g->nnodes : 1) *
                        sizeof **var);
    DESO_CHECK(*var != NULL, DESO_ENOMEM, "plan cache: out of memory");
    deso_err err = opt_plan_variants(g, p, mode, *var);
    for (int i = 0; err == DESO_OK && i < g->nnodes; i++)
        if ((*var)[i] < 0) {
            free(*var);
            *var = NULL;
            break;
        }
    if (err != DESO_OK) {
        free(*var);
        *var = NULL;
    }
    return err;
}

/* A plan for a graph the cache does not know (steps 3 to 5 at the top of
 * the file), then cached under its keys.                                 */
static deso_err plan_new(deso_ctx *ctx, const opt_graph *g,
                         const opt_search_opts *o, const uint64_t keys[3],
                         opt_plan *out, bool *optimised, bool *fresh)
{
    opt_mode mode = ctx->df.mode;
    opt_cache_entry *near = NULL;
    deso_err err = DESO_OK;
    /* planned again after runs (replan_runs): searched afresh          */
    bool again = ctx->replan_runs > 0;
    if (!again && from_wisdom(ctx, g, keys[0], out)) {
        /* replayed from the wisdom file                                    */
    } else if (mode != OPT_NONE && !again &&
               (near = opt_cache_find_shape(ctx->cache, keys[2])) != NULL &&
               near->plan.nnodes == g->nnodes) {
        /* the same DAG with its inputs placed otherwise: the plan is still
         * correct; a bounded improvement adapts it                          */
        bool better = false;
        err = opt_plan_copy(&near->plan, out);
        if (err == DESO_OK)
            err = opt_search_improve(g, o, DESO__IMPROVE_ITERS, out, &better);
        if (err == DESO_OK && !better)       /* its model: on this graph   */
            err = opt_plan_cost(g, out, &o->cost, NULL, NULL, &out->model);
        out->settled = !better;       /* as a cached entry settles        */
        *fresh = better;
    } else {
        err = opt_search(g, o, out);
        *optimised = *fresh = true;
    }
    int *var = NULL;
    if (err == DESO_OK) err = storable_variants(g, out, mode, &var);
    opt_cache_entry *e;
    if (err == DESO_OK)
        err = opt_cache_put(ctx->cache, keys[0], keys[1], keys[2], out, var,
                            &e);
    /* a search that stopped at a local optimum, or an adapted plan that
     * its bounded improvement left as it was, needs no improving: its
     * entry is settled at once (and the plan compiled)                    */
    if (err == DESO_OK && out->settled) e->settled = true;
    free(var);
    return err;
}

/* What one force holds between its preparation and its end.            */
typedef struct force_run {
    const opt_plan *plan;    /* &own, or a compiled force's                 */
    opt_plan own;
    opt_plan kept;           /* a copy of a fresh plan, for keep_last        */
    int nvals;               /* values of the plan's graph                   */
    deso__compiled *compiled;   /* the compiled force run, or NULL          */
    bool optimised, fresh;
    deso__run run;           /* the executor's state (run.c)                */
} force_run;

/* The plan for graph g when no compiled force has it: steps 2 to 5 at the
 * top of the file, the fused groups, and the compiled force once the plan
 * is settled.  *optimised: made from scratch; *fresh: new or changed (the
 * trace shows it).                                                        */
static deso_err plan_graph(deso_ctx *ctx, const opt_graph *g, opt_plan *out,
                           bool *optimised, bool *fresh)
{
    opt_mode mode = ctx->df.mode;
    uint64_t keys[3] = {0, 0, 0};            /* key, check, shape key     */
    keys[0] = opt_graph_key(g, mode, &keys[1]);
    opt_search_opts o = search_opts(ctx);
    opt_cache_entry *e = ctx->replan_runs > 0
                             ? NULL
                             : opt_cache_find(ctx->cache, keys[0], keys[1]);
    bool settled = false;
    deso_err err;
    if (e != NULL && e->plan.nnodes == g->nnodes) {
        err = replay_cached(g, &o, mode, e, out, fresh, &settled);
    } else {
        keys[2] = opt_graph_shape_key(g, mode);
        err = plan_new(ctx, g, &o, keys, out, optimised, fresh);
        settled = err == DESO_OK && out->settled;
    }
    /* the fusion of independent reductions: from the graph and the
     * plan's placements only, the same on every rank                      */
    if (err == DESO_OK) err = opt_fuse_groups(g, out, out->fuse);
    if (err == DESO_OK && settled)
        err = deso__compiled_add(ctx, g, out, keys[0], keys[1]);
    return err;
}

/* The plan for the pending DAG, built in ctx->build (see the top of the
 * file; a compiled force first).  Local: its statistics and trace wait
 * for the force's agreement.                                             */
static deso_err choose_plan(deso_ctx *ctx, force_run *fr)
{
    double t0 = deso__now();
    memset(&fr->own, 0, sizeof fr->own);
    fr->plan = &fr->own;
    deso_err err = DESO_OK;
    deso__compiled *c = deso__compiled_match(ctx);
    fr->compiled = c;
    if (c != NULL) {
        fr->plan = &c->plan;
        fr->nvals = c->g.nvals;
    } else {
        err = build_graph(ctx, &ctx->build);
        if (err == DESO_OK)
            err = plan_graph(ctx, &ctx->build, &fr->own, &fr->optimised,
                             &fr->fresh);
        fr->nvals = ctx->build.nvals;
        ctx->replan_runs = 0;
    }
    deso__stats_time(DESO_T_OPTIMISE, deso__now() - t0);
    if (err != DESO_OK) opt_plan_free(&fr->own);
    return err;
}

/* Every local step of a force, before its agreement: the plan, the fused
 * groups' bookkeeping, and (deso__force_prepare) everything the execution
 * will allocate.                                                         */
static deso_err plan_and_prepare(deso_ctx *ctx, force_run *fr)
{
    if (ctx->head == NULL) return DESO_OK;
    ctx->flushes++;
    DESO_TRY(choose_plan(ctx, fr));
    const opt_plan *plan = fr->plan;
    if (fr->fresh) DESO_TRY(opt_plan_copy(plan, &fr->kept));
    DESO_TRY(deso__run_begin(ctx, plan, &fr->run));
    return deso__force_prepare(ctx, fr->compiled, fr->nvals, plan, &fr->run);
}

/* Frees what a force holds; after an error, poisons the results of the
 * fused members still waiting for their group's collective.             */
static deso_err force_end(deso_ctx *ctx, force_run *fr, deso_err err)
{
    err = deso__run_end(&fr->run, err);
    opt_plan_free(&fr->own);
    opt_plan_free(&fr->kept);
    if (err != DESO_OK) deso__dag_drop(ctx, err);
    ctx->forcing = false;
    return err;
}

deso_err deso__force(deso_ctx *ctx) { return deso__force_with(ctx, DESO_OK); }

static deso_err force_timed(deso_ctx *ctx, deso_err before);

/* The force's wall time less what its parts timed (kernels, messages,
 * planning) is its overhead: two clock readings per force instead of two
 * per step.                                                              */
deso_err deso__force_with(deso_ctx *ctx, deso_err before)
{
    if (ctx->forcing) return before;    /* a force inside a force: no-op   */
    double t0 = deso__now(), timed0 = deso__stats_timed();
    bool replayed = false;
    deso_err err = before;
    if (ctx->rp != NULL) {              /* replay.h: the replayed force     */
        err = deso__replay_force(ctx, before, &replayed);
        if (before != DESO_OK) err = before;
    }
    if (!replayed) err = force_timed(ctx, err);
    double rest = (deso__now() - t0) - (deso__stats_timed() - timed0);
    if (rest > 0.0) deso__stats_time(DESO_T_OVERHEAD, rest);
    return err;
}

/* A failed agreement: the plan caches may have changed on some ranks
 * only, so they are emptied everywhere, and every rank keeps choosing the
 * same plans.                                                            */
static deso_err disagreed(deso_ctx *ctx, force_run *fr, deso_err err)
{
    err = force_end(ctx, fr, err);    /* (its plan may be compiled)     */
    deso__replay_after_force(ctx, NULL, err);
    opt_cache_clear(ctx->cache);
    deso__compiled_clear(ctx);
    deso__consts_clear(ctx);
    ctx->hash = 0;        /* every rank restarts from the same state       */
    return err;
}

/* The plan ran (the agreement said so): statistics and explanation.     */
static void plan_ran(deso_ctx *ctx, force_run *fr)
{
    if (fr->plan == NULL || fr->plan->nnodes == 0) return;
    ctx->ran_model = fr->plan->model;
    deso__stats_plan(fr->optimised ? 1 : 0);
    if (fr->fresh) keep_last(ctx, &ctx->build, &fr->kept);
}

static deso_err force_timed(deso_ctx *ctx, deso_err before)
{
    ctx->forcing = true;
    force_run fr;
    memset(&fr, 0, sizeof fr);
    /* A sparse matrix's placement is chosen by collectives (spmat_ntg.c):
     * the ranks first agree that they recorded the same calls, by the
     * force's own agreement (a rank that recorded other calls meets it
     * there and both fail), once per matrix.                             */
    if (before == DESO_OK && deso__spmat_choice_pending(ctx)) {
        deso_err err = deso__force_agree(ctx, ctx->hash, DESO_OK);
        if (err == DESO_OK) err = deso__spmat_choose(ctx);
        if (err != DESO_OK) return disagreed(ctx, &fr, err);
    }
    deso_err local = before != DESO_OK ? before : plan_and_prepare(ctx, &fr);
    /* One agreement, even with an empty DAG (a rank with nothing pending
     * must not return while another starts communicating): the same
     * calls were recorded everywhere and nothing failed anywhere.  When
     * all went well here and the first nodes talk to no other rank, they
     * run while it is in flight (deso__run_schedule ends it before the
     * first step that communicates): its latency hides behind them.      */
    deso_err err;
    if (local == DESO_OK && fr.run.quiet > 0 && ctx->size > 1) {
        err = deso__check_start(ctx, ctx->hash, DESO_OK, &fr.run.check);
        fr.run.checking = err == DESO_OK;
    } else {
        err = deso__force_agree(ctx, ctx->hash, local);
    }
    if (err != DESO_OK) return disagreed(ctx, &fr, err);
    bool overlapped = fr.run.checking;
    if (!overlapped) plan_ran(ctx, &fr);
    err = deso__run_schedule(ctx, &fr.run);
    if (overlapped) {
        if (fr.run.verdict != DESO_OK)
            return disagreed(ctx, &fr, fr.run.verdict);
        plan_ran(ctx, &fr);
    }
    bool nodes = fr.plan != NULL && fr.plan->nnodes > 0;
    err = force_end(ctx, &fr, err);
    /* a force with nothing pending (a second read) leaves the logs alone */
    if (nodes || ctx->rlog[ctx->rlog_cur].n > 0)
        deso__replay_after_force(ctx, nodes ? fr.compiled : NULL, err);
    if (nodes) {             /* the same on every rank: the same forces   */
        deso__replay_touch_plans(ctx);
        deso__exchange_plans_trim(ctx);
    }
    return err;
}

deso_err deso__plan_explain(const deso_ctx *ctx, FILE *f)
{
    DESO_CHECK(ctx != NULL && f != NULL, DESO_ENULL,
               "deso_plan_explain: NULL argument");
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "deso_plan_explain: not a live context");
    if (ctx->last_g.nodes == NULL && ctx->last_g.nnodes == 0) {
        fprintf(f, "deso: no plan optimised yet\n");
        return DESO_OK;
    }
    return opt_plan_explain(f, &ctx->last_g, &ctx->last_p, &ctx->params);
}
