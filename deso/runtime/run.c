/* The executor's loop: a prepared force's nodes run in its schedule's
 * order (schedule.c), allocating nothing.  A run step runs a node; a post
 * step runs it and starts its reduction (or its fused group's one
 * collective) without waiting, into one of DESO__INFLIGHT slots, each
 * with its own region of the context's scratch; a wait step waits for the
 * oldest and finishes its node(s).  A node leaves the DAG's list when it
 * has run (a posted node, or a fused member, is then held in its slot
 * until its results are ready) and is freed once they are; what is left
 * in the list after a failure is dropped with the DAG.  The force's
 * agreement, when it runs under the first steps, ends before the first
 * that communicates.                                                    */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"
#include "deso/runtime/log.h"
#include "placement/alloc.h"

/* The context's per-node arrays of a force, for n nodes: grown (all of
 * them, so that the allocations made do not depend on the plan), never
 * shrunk, freed with the context.                                        */
static deso_err grow(deso__run_arrays *a, int n)
{
    if (n <= a->cap) return DESO_OK;
    size_t m = (size_t)n;
    deso__view **rv = deso__realloc(a->rv, m * sizeof *rv);
    if (rv != NULL) a->rv = rv;
    deso__fz *fz = deso__realloc(a->fz, m * sizeof *fz);
    if (fz != NULL) a->fz = fz;
    deso__fz **grp = deso__realloc(a->grp, m * sizeof *grp);
    if (grp != NULL) a->grp = grp;
    int *glast = deso__realloc(a->glast, m * sizeof *glast);
    if (glast != NULL) a->glast = glast;
    deso__value **early = deso__realloc(a->early, m * sizeof *early);
    if (early != NULL) a->early = early;
    deso__node **nodes = deso__realloc(a->nodes, m * sizeof *nodes);
    if (nodes != NULL) a->nodes = nodes;
    int *prev = deso__realloc(a->prev, 2 * m * sizeof *prev);
    if (prev != NULL) a->prev = prev;
    deso__step *order = deso__realloc(a->order, (2 * m + 1) * sizeof *order);
    if (order != NULL) a->order = order;
    DESO_CHECK(rv && fz && grp && glast && early && nodes && prev && order,
               DESO_ENOMEM, "force: out of memory");
    a->cap = n;
    return DESO_OK;
}

deso_err deso__run_begin(deso_ctx *ctx, const opt_plan *plan, deso__run *run)
{
    int n = plan->nnodes > 0 ? plan->nnodes : 1;
    deso__run_arrays *a = &ctx->run;
    DESO_TRY(grow(a, n));
    run->plan = plan;
    run->nodes = a->nodes;
    run->prev = a->prev;
    run->next = a->prev + n;
    run->rv = a->rv;
    run->early = a->early;
    run->glast = a->glast;
    run->grp = a->grp;
    memset(run->rv, 0, (size_t)n * sizeof *run->rv);
    bool any = false;
    for (int j = 0; j < plan->nnodes; j++) any = any || plan->fuse[j] >= 0;
    if (any) {
        run->fz = a->fz;
        memset(run->fz, 0, (size_t)n * sizeof *run->fz);
    }
    return DESO_OK;
}

/* Node i leaves the DAG's list.                                         */
static void unlink_node(deso_ctx *ctx, deso__run *run, int i)
{
    int p = run->prev[i], x = run->next[i];
    deso__node *pn = p >= 0 ? run->nodes[p] : NULL;
    deso__node *xn = x >= 0 ? run->nodes[x] : NULL;
    if (pn != NULL) pn->next = xn;
    else ctx->head = xn;
    if (xn != NULL) run->prev[x] = p;
    else ctx->tail = pn;
    if (p >= 0) run->next[p] = x;
    ctx->nnodes--;
}

/* The end of an agreement that ran under the first steps: their results
 * were made from calls that some rank may not have recorded, so on a
 * failure they are lost like the rest of the DAG (deso__dag_drop).      */
static deso_err check_close(deso_ctx *ctx, deso__run *run)
{
    deso_err err = deso__check_finish(ctx, &run->check);
    run->checking = false;
    run->verdict = err;
    for (int k = 0; k < run->nearly; k++) {
        if (err != DESO_OK) run->early[k]->poison = err;
        deso__value_unref(run->early[k]);
    }
    run->nearly = 0;
    return err;
}

/* Fused group f, whose last member is i, in run->grp; its size.        */
static int group(deso__run *run, int f, int i)
{
    int k = 0;
    for (int j = f; j <= i; j++)
        if (run->plan->fuse[j] == f) run->grp[k++] = &run->fz[j];
    return k;
}

static void free_group(deso__run *run, int k)
{
    for (int j = 0; j < k; j++) {
        deso__node_free(run->grp[j]->nd);
        run->grp[j]->nd = NULL;
    }
}

/* A run or post step: node i, and its fused group's collective when it
 * is the group's last member.                                          */
static deso_err run_step(deso_ctx *ctx, deso__run *run, const deso__step *st)
{
    int i = st->node, f = run->fz != NULL ? run->plan->fuse[i] : -1;
    deso__node *nd = run->nodes[i];
    if (run->checking) {
        deso__value_ref(nd->res);
        run->early[run->nearly++] = nd->res;
    }
    if (run->npend > 0) deso__stats_overlap();
    deso__pend *pd = NULL;
    if (st->kind == DESO__POST) {
        int slot = (run->pfirst + run->npend) % DESO__INFLIGHT;
        pd = &run->pend[slot];
        memset(pd, 0, sizeof *pd);
        pd->node = i;
        pd->red = ctx->scratch + (1 + slot) * ctx->scratch_len;
    }
    ctx->defer = f >= 0 ? &run->fz[i] : NULL;
    ctx->post = f < 0 ? pd : NULL;
    deso__view *rv = run->rv[i];
    run->rv[i] = NULL;                      /* the node owns it now       */
    deso_err err = deso__log_exec_node(ctx, nd, &run->plan->node[i], rv);
    ctx->defer = NULL;
    ctx->post = NULL;
    if (err != DESO_OK) return err;
    unlink_node(ctx, run, i);
    if (f < 0) {
        if (pd != NULL) run->npend++;       /* held in its slot           */
        else deso__node_free(nd);
        return DESO_OK;
    }
    if (run->glast[f] != i) return DESO_OK;  /* kept in fz[i] until then  */
    int k = group(run, f, i);
    if (pd == NULL) {
        err = deso__exec_fused(ctx, run->grp, k);
        if (err == DESO_OK) free_group(run, k);
        return err;
    }
    run->npend++;                  /* (its request, if any, is waited for) */
    return deso__exec_fused_post(ctx, run->grp, k, pd);
}

/* A wait step: the oldest reduction in flight, node i's.                */
static deso_err wait_step(deso_ctx *ctx, deso__run *run, int i)
{
    deso__pend *pd = &run->pend[run->pfirst];
    DESO_CHECK(run->npend > 0 && pd->node == i, DESO_EINTERNAL,
               "force: node %d's reduction waited for out of order", i);
    run->pfirst = (run->pfirst + 1) % DESO__INFLIGHT;
    run->npend--;
    int f = run->fz != NULL ? run->plan->fuse[i] : -1;
    int k = f >= 0 ? group(run, f, i) : 0;
    deso_err err = deso__exec_wait(ctx, pd, run->grp, k);
    if (f >= 0) {          /* on failure deso__run_end poisons the group */
        if (err == DESO_OK) free_group(run, k);
        return err;
    }
    if (err != DESO_OK) {
        pd->nd->res->poison = err;          /* as deso__dag_drop does     */
        deso__view_free(pd->rv);
    }
    deso__node_free(pd->nd);
    return err;
}

/* After a failure: what is in flight is waited for (its buffers are the
 * scratch's) and its nodes' results poisoned.                           */
static void drain(deso__run *run, deso_err err)
{
    for (; run->npend > 0; run->npend--) {
        deso__pend *pd = &run->pend[run->pfirst];
        run->pfirst = (run->pfirst + 1) % DESO__INFLIGHT;
        (void)deso__coll_wait(&pd->coll);
        if (pd->nd == NULL) continue;       /* a group: deso__run_end's   */
        pd->nd->res->poison = err;
        deso__view_free(pd->rv);
        deso__node_free(pd->nd);
    }
}

deso_err deso__run_schedule(deso_ctx *ctx, deso__run *run)
{
    deso_err err = DESO_OK;
    for (int s = 0; err == DESO_OK && s < run->norder; s++) {
        const deso__step *st = &run->order[s];
        if (run->checking && s == run->quiet) {
            err = check_close(ctx, run);
            if (err != DESO_OK) break;
        }
        err = st->kind == DESO__WAIT ? wait_step(ctx, run, st->node)
                                     : run_step(ctx, run, st);
    }
    if (run->checking) {                /* every step was quiet, or failed */
        deso_err cerr = check_close(ctx, run);
        if (err == DESO_OK) err = cerr;
    }
    if (err != DESO_OK) drain(run, err);
    return err;
}

deso_err deso__run_end(deso__run *run, deso_err err)
{
    int nnodes = run->plan != NULL ? run->plan->nnodes : 0;
    for (int j = 0; run->fz != NULL && j < nnodes; j++) {
        deso__node *m = run->fz[j].nd;
        if (run->fz[j].rv != NULL) deso__view_free(run->fz[j].rv);
        if (m == NULL) continue;
        if (err == DESO_OK)
            err = deso__fail(DESO_EINTERNAL, "force: a fused group did not "
                                             "complete");
        m->res->poison = err;          /* as deso__dag_drop does           */
        deso__node_free(m);
    }
    for (int j = 0; run->rv != NULL && j < nnodes; j++)
        if (run->rv[j] != NULL) deso__view_free(run->rv[j]);
    return err;
}
