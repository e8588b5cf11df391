/* Compiled forces: the graphs a program forces again and again (a solver's
 * iteration) with the settled plans they run, so that a repeated force
 * finds its plan by comparing graphs, without hashing, a cache lookup or a
 * copy of the plan.  Only settled plans are compiled (their cache entries
 * no longer improve), so a compiled plan is the one the cache would give.
 *
 * The table changes only inside a force's local steps, the same way on
 * every rank (an allocation failing on one rank fails that force there and
 * the agreement then empties the table everywhere).                      */
#include <string.h>

#include "deso/runtime/runtime.h"

void deso__compiled_clear(deso_ctx *ctx)
{
    for (int k = 0; k < ctx->ncompiled; k++) {
        opt_graph_free(&ctx->compiled[k].g);
        opt_plan_free(&ctx->compiled[k].plan);
    }
    memset(ctx->compiled, 0, sizeof ctx->compiled);
    ctx->ncompiled = 0;
}

const deso__compiled *deso__compiled_find(deso_ctx *ctx, const opt_graph *g)
{
    for (int k = 0; k < ctx->ncompiled; k++) {
        deso__compiled *c = &ctx->compiled[k];
        if (!opt_graph_equal(&c->g, g)) continue;
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
    if (at == DESO__COMPILED) {             /* the least recently used     */
        at = 0;
        for (int k = 1; k < DESO__COMPILED; k++)
            if (ctx->compiled[k].used < ctx->compiled[at].used) at = k;
        opt_graph_free(&ctx->compiled[at].g);
        opt_plan_free(&ctx->compiled[at].plan);
    } else {
        ctx->ncompiled++;
    }
    deso__compiled *c = &ctx->compiled[at];
    memset(c, 0, sizeof *c);
    deso_err err = opt_graph_copy(g, &c->g);
    if (err == DESO_OK) err = opt_plan_copy(plan, &c->plan);
    if (err != DESO_OK) {                 /* the slot goes: keep it compact */
        opt_graph_free(&c->g);
        opt_plan_free(&c->plan);
        ctx->compiled[at] = ctx->compiled[--ctx->ncompiled];
        memset(&ctx->compiled[ctx->ncompiled], 0, sizeof *c);
        return err;
    }
    c->key = key;
    c->check = check;
    c->used = ++ctx->compile_clock;
    return DESO_OK;
}
