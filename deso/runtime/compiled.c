/* Compiled forces: the graphs a program forces again and again (a solver's
 * iteration) with the settled plans they run, so that a repeated force
 * finds its plan by comparing graphs, without hashing, a cache lookup or a
 * copy of the plan.  Only settled plans are compiled (their cache entries
 * no longer improve), so a compiled plan is the one the cache would give.
 *
 * The table changes only inside a force's local steps, the same way on
 * every rank (an allocation failing on one rank fails that force there and
 * the agreement then empties the table everywhere).                      */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"
#include "deso/runtime/replay.h"

static void compiled_free(deso__compiled *c)
{
    opt_graph_free(&c->g);
    opt_plan_free(&c->plan);
    free(c->steps);
    free(c->refs);
    free(c->order);
    memset(c, 0, sizeof *c);
}

void deso__compiled_clear(deso_ctx *ctx)
{
    deso__replay_disarm(ctx);         /* a replay runs a compiled force   */
    ctx->replay_prev = NULL;
    for (int k = 0; k < ctx->ncompiled; k++) compiled_free(&ctx->compiled[k]);
    memset(ctx->compiled, 0, sizeof ctx->compiled);
    ctx->ncompiled = 0;
}

/* Whether live-in value v's views are the layouts g's value x holds, in
 * the order opt_graph_livein and opt_graph_livein_view would record them
 * (duplicates skipped, at most OPT_MAXVIEWS).                            */
static bool livein_matches(const opt_value *x, const deso__value *v)
{
    if (x->producer >= 0 || v->views == NULL || x->ooc != v->ooc ||
        !blas_layout_equal(&x->views[0], &v->views->lay))
        return false;
    int j = 1;
    for (const deso__view *w = v->views->next; w != NULL; w = w->next) {
        bool dup = false;
        for (int k = 0; k < j && !dup; k++)
            dup = blas_layout_equal(&x->views[k], &w->lay);
        if (dup || j == OPT_MAXVIEWS) continue;
        if (!blas_layout_equal(&x->views[j], &w->lay)) return false;
        j++;
    }
    return j == x->nviews;
}

/* One operand of a pending node against operand id `want` of compiled
 * force c: a value not seen yet in this walk is the graph's next value,
 * live-in (with the references the script was made with, if any).       */
static bool operand_matches(const deso__compiled *c, deso__value *v,
                            int want, uint64_t stamp, int *next)
{
    const opt_graph *g = &c->g;
    if (v->mark != stamp) {
        if (want != *next || *next >= g->nvals || !v->ready ||
            !livein_matches(&g->vals[want], v) ||
            (c->scripted && c->refs[want] != v->refs))
            return false;
        v->mark = stamp;
        v->gid = (*next)++;
        v->nread = 0;
    }
    v->nread++;
    return v->gid == want;
}

/* Whether the pending DAG is graph g, walking it as build_graph would
 * build it (the same value ids, marks and reader counts): the compare
 * costs less than building the graph and comparing it.  On a mismatch
 * the walk's marks are left behind; the caller builds the graph under a
 * new stamp.                                                            */
static bool dag_matches(deso_ctx *ctx, const deso__compiled *c,
                        uint64_t stamp)
{
    const opt_graph *g = &c->g;
    if (g->df.pr != ctx->df.pr || g->df.pc != ctx->df.pc ||
        g->df.nb != ctx->df.nb || g->df.mode != ctx->df.mode ||
        g->nnodes != ctx->nnodes)
        return false;
    int i = 0, next = 0;
    for (deso__node *nd = ctx->head; nd != NULL; nd = nd->next, i++) {
        const opt_node *x = &g->nodes[i];
        if (x->d.op != nd->d.op || x->d.flags != nd->d.flags ||
            x->d.nops != nd->d.nops || x->d.off != nd->d.off ||
            x->d.inc != nd->d.inc || x->d.len != nd->d.len ||
            x->d.rows != nd->d.rows || x->d.ld != nd->d.ld ||
            x->d.sp != nd->d.sp)
            return false;
        for (int k = 0; k < nd->d.nops; k++)
            if (!operand_matches(c, nd->ops[k], x->ops[k], stamp, &next))
                return false;
        deso__value *r = nd->res;
        const opt_value *xr = &g->vals[x->res];
        if (x->res != next || xr->m != r->m || xr->n != r->n ||
            xr->ooc != r->ooc)
            return false;
        r->mark = stamp;
        r->gid = next++;
        r->nread = 0;
    }
    if (next != g->nvals) return false;
    /* refs = the handle (if any) + pending readers + the producing node   */
    for (deso__node *nd = ctx->head; nd != NULL; nd = nd->next) {
        const opt_value *xr = &g->vals[nd->res->gid];
        if (xr->live_out != (nd->res->refs > nd->res->nread + 1) ||
            xr->has_want ||
            (c->scripted && c->refs[nd->res->gid] != nd->res->refs))
            return false;
    }
    return true;
}

bool deso__compiled_due(const deso__compiled *c)
{
    /* 16, 32, .., 1024: a move worth it after R runs is made by 2 R, so
     * the runs spent waiting cost at most what the move saves by then,
     * and at most seven searches are spent on a matrix that stays       */
    uint32_t r = c->runs;
    return c->replicable && r >= 16 && r <= 1024 && (r & (r - 1)) == 0;
}

/* Drops compiled force k, keeping the table compact.                    */
static void compiled_drop(deso_ctx *ctx, int k)
{
    deso__replay_disarm(ctx);
    ctx->replay_prev = NULL;
    compiled_free(&ctx->compiled[k]);
    ctx->compiled[k] = ctx->compiled[--ctx->ncompiled];
    memset(&ctx->compiled[ctx->ncompiled], 0, sizeof ctx->compiled[k]);
}

deso__compiled *deso__compiled_match(deso_ctx *ctx)
{
    for (int k = 0; k < ctx->ncompiled; k++) {
        deso__compiled *c = &ctx->compiled[k];
        if (!dag_matches(ctx, c, ++ctx->stamp)) continue;
        if (deso__compiled_due(c)) {
            /* planned again (force.c): the new plan is compiled with
             * this one's count                                            */
            ctx->replan_runs = c->runs;
            compiled_drop(ctx, k);
            return NULL;
        }
        c->runs++;
        c->used = ++ctx->compile_clock;
        /* the cache entry counts its replays (the wisdom file keeps them) */
        opt_cache_entry *e = opt_cache_find(ctx->cache, c->key, c->check);
        if (e != NULL) e->hits++;
        return c;
    }
    return NULL;
}

deso_err deso__compiled_add(deso_ctx *ctx, const opt_graph *g,
                            const opt_plan *plan, uint64_t key,
                            uint64_t check)
{
    int at = ctx->ncompiled;
    ctx->replay_prev = NULL;          /* its slot may be the new one's    */
    if (at == DESO__COMPILED) {             /* the least recently used     */
        at = 0;
        for (int k = 1; k < DESO__COMPILED; k++)
            if (ctx->compiled[k].used < ctx->compiled[at].used) at = k;
        deso__replay_forget(ctx, &ctx->compiled[at]);
        compiled_free(&ctx->compiled[at]);
    } else {
        ctx->ncompiled++;
    }
    deso__compiled *c = &ctx->compiled[at];
    memset(c, 0, sizeof *c);
    deso_err err = opt_graph_copy(g, &c->g);
    if (err == DESO_OK) err = opt_plan_copy(plan, &c->plan);
    if (err != DESO_OK) {                 /* the slot goes: keep it compact */
        compiled_free(c);
        deso__replay_forget(ctx, &ctx->compiled[ctx->ncompiled - 1]);
        ctx->compiled[at] = ctx->compiled[--ctx->ncompiled];
        memset(&ctx->compiled[ctx->ncompiled], 0, sizeof *c);
        return err;
    }
    c->key = key;
    c->check = check;
    c->used = ++ctx->compile_clock;
    /* the force planning it runs it: one more run of its graph        */
    c->runs = ctx->replan_runs > 0 ? ctx->replan_runs + 1 : 0;
    c->replicable = opt_plan_may_replicate(g, plan);
    return DESO_OK;
}
