/* Preparing a force: everything its execution will allocate, allocated
 * before the force's first collective, so that running out of memory (or
 * any local failure) on one rank is agreed there and no rank is left
 * waiting in a collective the others skipped.
 *
 * The pending nodes are walked in execution order without data, tracking
 * per value of the force's graph the layouts its views will have (in the
 * order the executor keeps them) and the references left on it:
 *   - an operand that will lack a view in the layout its node asks for
 *     gets one now, unfilled, on its value's spare list, and the exchange
 *     or remap plan that will fill it is made (and cached);
 *   - a result gets its view now, unless the node will take over its
 *     updated operand's buffer (the last reader of it);
 *   - the context's scratch grows to the largest reduction, fused group
 *     or triangular-solve workspace.
 * The executor then uses what is here and allocates nothing.             */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/ooc.h"
#include "placement/alloc.h"

/* A value of the graph, as the executor will find it.  Its layouts are
 * pointers (to its views' layouts and the plan's placements, which outlive
 * the preparation) and live in `own` until there are more than it holds. */
#define SIM_OWN 4
typedef struct deso__sim_value {
    const blas_layout **lay;   /* lay[0]: its first view                    */
    int n, cap;
    int refs;                  /* references left                           */
    deso__value *v;
    const blas_layout *own[SIM_OWN];
} sim_value;

static bool sim_has(const sim_value *s, const blas_layout *l)
{
    for (int k = 0; k < s->n; k++)
        if (s->lay[k] == l || blas_layout_equal(s->lay[k], l)) return true;
    return false;
}

/* Inserts at `at` (the executor keeps new exchange views right after the
 * first one).                                                            */
static deso_err sim_add(sim_value *s, int at, const blas_layout *l)
{
    if (s->n == s->cap) {
        int cap = 2 * s->cap;
        const blas_layout **nl =
            s->lay == s->own ? deso__malloc((size_t)cap * sizeof *nl)
                             : deso__realloc(s->lay, (size_t)cap * sizeof *nl);
        DESO_CHECK(nl != NULL, DESO_ENOMEM, "force: out of memory");
        if (s->lay == s->own) memcpy(nl, s->own, sizeof s->own);
        s->lay = nl;
        s->cap = cap;
    }
    if (at > s->n) at = s->n;
    memmove(&s->lay[at + 1], &s->lay[at],
            (size_t)(s->n - at) * sizeof *s->lay);
    s->lay[at] = l;
    s->n++;
    return DESO_OK;
}

/* Frees what the layouts outgrew; the array is the context's, kept.     */
static void sim_free(sim_value *sv, int n)
{
    for (int k = 0; sv != NULL && k < n; k++)
        if (sv[k].lay != sv[k].own) free((void *)sv[k].lay);
}

/* The values of the graph with the views they hold now, in the context's
 * array (grown when a graph has more values than any before).           */
static deso_err sim_init(deso_ctx *ctx, int nvals, sim_value **out)
{
    *out = NULL;
    if (nvals > ctx->sim_cap) {
        sim_value *nv = deso__realloc(ctx->sim, (size_t)nvals * sizeof *nv);
        DESO_CHECK(nv != NULL, DESO_ENOMEM, "force: out of memory");
        ctx->sim = nv;
        ctx->sim_cap = nvals;
    }
    sim_value *sv = ctx->sim;
    for (int k = 0; k < nvals; k++) {
        sv[k].lay = sv[k].own;
        sv[k].n = 0;
        sv[k].cap = SIM_OWN;
        sv[k].refs = 0;
        sv[k].v = NULL;
    }
    *out = sv;
    for (deso__node *nd = ctx->head; nd != NULL; nd = nd->next) {
        for (int k = 0; k <= nd->d.nops; k++) {
            deso__value *v = k < nd->d.nops ? nd->ops[k] : nd->res;
            sim_value *s = &sv[v->gid];
            if (s->v != NULL) continue;
            s->v = v;
            s->refs = v->refs;
            for (const deso__view *w = v->views; w != NULL; w = w->next)
                DESO_TRY(sim_add(s, s->n, &w->lay));
        }
    }
    return DESO_OK;
}

/* The allocations of a preparation, written down for a compiled force's
 * script (steps NULL: not recording).                                   */
typedef struct script_rec {
    deso__prep_step *steps;
    int n;
} script_rec;

static void rec_step(script_rec *rec, int node, int op,
                     const blas_layout *src)
{
    if (rec->steps == NULL) return;
    deso__prep_step *st = &rec->steps[rec->n++];
    st->node = node;
    st->op = op;
    if (src != NULL) st->src = *src;
    else memset(&st->src, 0, sizeof st->src);
}

/* Operand k of node i will need a view of s in layout l: make it (spare)
 * and ready the plan that fills it from the source the executor picks
 * (*made: it did, so the node will exchange or remap).                   */
static deso_err need_view(deso_ctx *ctx, sim_value *s, const blas_layout *l,
                          script_rec *rec, int i, int k, bool *made)
{
    if (sim_has(s, l)) return DESO_OK;
    *made = true;
    DESO_CHECK(s->n > 0, DESO_EINTERNAL, "force: operand without data");
    /* no candidate moves a matrix that dgemv or dger reads, and the other
     * operations refuse an out-of-core one, so this is a bug if reached  */
    DESO_CHECK(!s->v->ooc, DESO_EINTERNAL, "force: an out-of-core matrix "
               "would be remapped (its layout is pinned)");
    deso__view *w;
    DESO_TRY(deso__view_alloc(ctx, l, &w));
    w->next = s->v->spare;
    s->v->spare = w;
    const blas_layout *src = deso__exchange_source(s->v->kind, s->lay, s->n, l);
    DESO_TRY(deso__exchange_ready(ctx, s->v->kind, src, l));
    rec_step(rec, i, k, src);
    return sim_add(s, 1, l);
}

/* True when the executor writes node nd's whole result before anything
 * reads it: a sparse product and a dgemv (deso__op_sets_result) and any
 * node whose result starts as a copy of its updated operand in the same
 * layout (exec.c).  Such a result needs no zeroed memory.                */
static bool writes_whole(const deso__node *nd, const blas_layout *req,
                         const blas_layout *rl)
{
    if (deso__op_sets_result(nd->d.op)) return true;
    int io = blas_op_get(nd->d.op)->inout;
    return io >= 0 && io < nd->d.nops && blas_layout_equal(&req[io], rl);
}

/* Node nd's result view in layout rl: a new local array file when the
 * result is an out-of-core matrix.                                       */
static deso_err result_view(deso_ctx *ctx, const deso__node *nd,
                            const blas_layout *req, const blas_layout *rl,
                            deso__view **rv)
{
    if (nd->res->ooc) return deso__ooc_view_new(ctx, rl, rv);
    if (writes_whole(nd, req, rl))
        return deso__view_alloc_unzeroed(ctx, rl, rv);
    return deso__view_alloc(ctx, rl, rv);
}

/* Scratch doubles node nd needs in placement req: what blas_red_len
 * gives on this rank's local shapes (only a gemv's depends on them: its
 * matrix's local rows or columns).                                       */
static int64_t scratch_of(const deso_ctx *ctx, const deso__node *nd,
                          const blas_layout *req)
{
    const blas_op_info *info = blas_op_get(nd->d.op);
    if (nd->d.op == BLAS_OP_VGET || nd->d.op == BLAS_OP_VPUT ||
        nd->d.op == BLAS_OP_USER || nd->d.op == BLAS_OP_USMV)
        return 0;
    if (info->distributed) return deso__trsv_scratch(ctx, &req[0]);
    if (info->red == BLAS_RED_NONE) return 0;
    blas_local L[BLAS_MAXOPS];
    memset(L, 0, sizeof L);
    if (nd->d.op == BLAS_OP_GEMV)
        blas_layout_local(&req[1], ctx->coord[0], ctx->coord[1], &L[1].rows,
                          &L[1].cols);
    return blas_red_len(&nd->d, L);
}

/* Whether node nd, placed by pl, communicates when it runs (made: an
 * operand gets a view by an exchange or remap): see deso__force_prepare.
 * Only a node the executor runs as a local kernel (exec.c's general path)
 * can be quiet; every other kind (views, the triangular solve, streamed
 * matrices, whose slabs end in an agreement) is taken to talk.          */
static bool node_talks(const deso__node *nd, const opt_place *pl, bool made)
{
    const blas_op_info *info = blas_op_get(nd->d.op);
    bool kernel = info->kernel != NULL && !info->distributed &&
                  nd->d.op != BLAS_OP_VGET && nd->d.op != BLAS_OP_VPUT;
    if (made || !kernel || nd->res->ooc) return true;
    for (int k = 0; k < nd->d.nops; k++)
        if (nd->ops[k]->ooc) return true;
    return info->red != BLAS_RED_NONE && blas_red_dim(&nd->d, pl->req) >= 0;
}

/* References the executor drops once node nd is done.                    */
static void drop_refs(sim_value *sv, const deso__node *nd)
{
    for (int k = 0; k < nd->d.nops; k++) sv[nd->ops[k]->gid].refs--;
    sv[nd->res->gid].refs--;
}

/* Node i: placements, operand views, result view, scratch; *talks: it
 * communicates (node_talks).                                             */
static deso_err prepare_node(deso_ctx *ctx, sim_value *sv, deso__node *nd,
                             const opt_place *pl, int i, script_rec *rec,
                             deso__view **rv, int64_t *scratch, bool *talks)
{
    const blas_op_info *info = blas_op_get(nd->d.op);
    int nops = nd->d.nops;
    for (int k = 0; k < nops; k++)
        DESO_CHECK(sv[nd->ops[k]->gid].n > 0, DESO_EINTERNAL,
                   "%s: operand %d not computed", info->name, k);
    const blas_layout *req = pl->req, *rl = &pl->res;
    bool made = false;
    for (int k = 0; k < nops; k++)
        DESO_TRY(need_view(ctx, &sv[nd->ops[k]->gid], &req[k], rec, i, k,
                           &made));
    *talks = node_talks(nd, pl, made);
    int io = info->inout < nops ? info->inout : -1;
    bool takeover = io >= 0 && sv[nd->ops[io]->gid].refs == 1 &&
                    blas_layout_equal(&req[io], rl);
    *rv = NULL;
    if (!takeover) {
        DESO_TRY(result_view(ctx, nd, req, rl, rv));
        rec_step(rec, i, -1, NULL);
    }
    DESO_TRY(sim_add(&sv[nd->res->gid], 0, rl));
    if (nd->d.op == BLAS_OP_VGET || nd->d.op == BLAS_OP_VPUT)
        DESO_TRY(deso__view_ready(ctx, nd, req, rl));
    int64_t need = scratch_of(ctx, nd, req);
    if (need > *scratch) *scratch = need;
    return DESO_OK;
}

/* The scratch: scratch_len doubles for the reductions run at once, then
 * one region as long for each reduction in flight.                     */
static deso_err grow_scratch(deso_ctx *ctx, int64_t n)
{
    if (n <= ctx->scratch_len) return DESO_OK;
    size_t total = (size_t)n * (1 + DESO__INFLIGHT);
    double *s = deso__realloc(ctx->scratch, total * sizeof *s);
    DESO_CHECK(s != NULL, DESO_ENOMEM, "force: out of memory (%lld "
               "scratch elements)", (long long)total);
    ctx->scratch = s;
    ctx->scratch_len = n;
    return DESO_OK;
}

/* The references the executor drops once step st is done: a node's when
 * it is freed (after its run, or its wait when posted), a fused group's
 * members' when its collective is done.                                 */
static void step_done(sim_value *sv, const deso__run *run,
                      const deso__step *st)
{
    int i = st->node, f = run->plan->fuse[i];
    if (st->kind == DESO__POST) return;          /* at its wait         */
    if (f < 0) {
        drop_refs(sv, run->nodes[i]);
        return;
    }
    if (st->kind == DESO__RUN && run->glast[f] != i) return;
    for (int j = f; j <= i; j++)
        if (run->plan->fuse[j] == f) drop_refs(sv, run->nodes[j]);
}

/* The simulated walk (top of the file), in the schedule's order; rec: its
 * allocations written down, refs: the references each value had when it
 * began; run->quiet: as deso__force_prepare gives it.                   */
static deso_err simulate(deso_ctx *ctx, int nvals, deso__run *run,
                         script_rec *rec, int *refs, int64_t *scratch)
{
    const opt_plan *plan = run->plan;
    sim_value *sv = NULL;
    deso_err err = sim_init(ctx, nvals > 0 ? nvals : 1, &sv);
    for (int k = 0; err == DESO_OK && refs != NULL && k < nvals; k++)
        refs[k] = sv[k].refs;
    /* a fused group's partials                                           */
    *scratch = (int64_t)plan->nnodes * BLAS_RED_WIDTH_MAX;
    run->quiet = -1;
    for (int s = 0; err == DESO_OK && s < run->norder; s++) {
        const deso__step *st = &run->order[s];
        int i = st->node;
        if (st->kind != DESO__WAIT) {
            bool talks = false;
            err = prepare_node(ctx, sv, run->nodes[i], &plan->node[i], i,
                               rec, &run->rv[i], scratch, &talks);
            if (talks && run->quiet < 0) run->quiet = s;
        }
        step_done(sv, run, st);
    }
    sim_free(sv, nvals);
    if (run->quiet < 0) run->quiet = run->norder;
    return err;
}

/* A compiled force's script: the allocations its first preparation made,
 * in the same order, without simulating anything.                       */
static deso_err run_script(deso_ctx *ctx, const deso__compiled *c,
                           deso__run *run)
{
    const opt_plan *plan = &c->plan;
    int s = 0;
    for (int o = 0; o < c->norder; o++) {
        int i = c->order[o].node;
        if (c->order[o].kind == DESO__WAIT) continue;
        deso__node *nd = run->nodes[i];
        run->rv[i] = NULL;
        for (; s < c->nsteps && c->steps[s].node == i; s++) {
            const deso__prep_step *st = &c->steps[s];
            if (st->op < 0) {
                DESO_TRY(result_view(ctx, nd, plan->node[i].req,
                                     &plan->node[i].res, &run->rv[i]));
                continue;
            }
            deso__value *v = nd->ops[st->op];
            const blas_layout *to = &plan->node[i].req[st->op];
            deso__view *w;
            DESO_TRY(deso__view_alloc(ctx, to, &w));
            w->next = v->spare;
            v->spare = w;
            DESO_TRY(deso__exchange_ready(ctx, v->kind, &st->src, to));
        }
    }
    return grow_scratch(ctx, c->scratch);
}

/* The DAG's nodes by plan index, linked both ways by index (run.c frees
 * them in the schedule's order), and each fused group's last member.   */
static deso_err list_nodes(deso_ctx *ctx, deso__run *run)
{
    const opt_plan *plan = run->plan;
    int i = 0;
    for (deso__node *nd = ctx->head; nd != NULL; nd = nd->next, i++) {
        /* the plan covers the whole DAG: its graph was built from it     */
        DESO_CHECK(i < plan->nnodes, DESO_EINTERNAL, "force: node %d is not "
                   "in the plan", i);
        run->nodes[i] = nd;
        run->prev[i] = i - 1;
        run->next[i] = nd->next != NULL ? i + 1 : -1;
        run->rv[i] = NULL;
        if (plan->fuse[i] >= 0) run->glast[plan->fuse[i]] = i;
    }
    DESO_CHECK(i == plan->nnodes, DESO_EINTERNAL, "force: the plan has %d "
               "nodes, the DAG %d", plan->nnodes, i);
    return DESO_OK;
}

/* The first preparation of compiled force c (NULL: not compiled):
 * schedule, simulation, and c's script written down.                    */
static deso_err prepare_first(deso_ctx *ctx, deso__compiled *c, int nvals,
                              deso__run *run)
{
    const opt_plan *plan = run->plan;
    script_rec rec = {NULL, 0};
    int *refs = NULL;
    deso__step *order = ctx->run.order;
    if (c != NULL) {            /* the compiled force's first run: record  */
        size_t steps = (size_t)plan->nnodes * (BLAS_MAXOPS + 1) + 1;
        rec.steps = deso__malloc(steps * sizeof *rec.steps);
        refs = deso__malloc((size_t)(nvals > 0 ? nvals : 1) * sizeof *refs);
        order = deso__malloc((2 * (size_t)plan->nnodes + 1) * sizeof *order);
        if (rec.steps == NULL || refs == NULL || order == NULL) {
            free(rec.steps);
            free(refs);
            free(order);
            return deso__fail(DESO_ENOMEM, "force: out of memory");
        }
    }
    int64_t scratch = 0;
    deso_err err = deso__schedule(plan, run->nodes, plan->nnodes, order,
                                  &run->norder);
    run->order = order;
    if (err == DESO_OK) err = simulate(ctx, nvals, run, &rec, refs, &scratch);
    if (err == DESO_OK) err = grow_scratch(ctx, scratch);
    if (err != DESO_OK || c == NULL) {
        free(rec.steps);
        free(refs);
        if (c != NULL) free(order);
        return err;
    }
    c->steps = rec.steps;
    c->nsteps = rec.n;
    c->refs = refs;
    c->scratch = scratch;
    c->order = order;
    c->norder = run->norder;
    c->quiet = run->quiet;
    c->scripted = true;
    return DESO_OK;
}

deso_err deso__force_prepare(deso_ctx *ctx, deso__compiled *c, int nvals,
                             const opt_plan *plan, deso__run *run)
{
    run->plan = plan;
    DESO_TRY(list_nodes(ctx, run));
    if (c == NULL || !c->scripted) return prepare_first(ctx, c, nvals, run);
    run->order = c->order;
    run->norder = c->norder;
    run->quiet = c->quiet;
    return run_script(ctx, c, run);
}
