/* Matrix refolding (e.g. block -> cyclic(b) for trsv): a block-cyclic
 * remap planned by placement/remap.h and run by deso__remap_* (remap.c),
 * cached per layout pair.
 *
 * Shared-memory rings (deso/remap/pair_rings.h: every rank on one node)
 * are made at the second matrix remap a context executes, not at
 * deso_init: the node split and the shared window cost about five times
 * what the rings save on one refolding (deso-cg --precond ssor at P = 2:
 * 4.3 M instructions against 0.8 M), most contexts never remap a matrix,
 * and one that remaps twice is likely to go on (a dtrsv whose matrix a
 * dger keeps updating remaps at every force).  That point is safe for
 * collectives: once the force's agreement has passed, every rank
 * executes the same remaps in the same order.  The plans prepared
 * before then take the rings there, under one agreement of their own;
 * a plan made later takes them as it is made, in the force's
 * preparation, where the force's agreement covers it.  Either way its
 * executions call no MPI function.                                       */
#include <stdlib.h>

#include "deso/core/agree.h"
#include "deso/runtime/runtime.h"
#include "deso/remap/pair_rings.h"
#include "placement/alloc.h"

struct deso__matrix_remap {
    blas_layout src, dst;
    deso__remap r;
    struct deso__matrix_remap *next;
};

void deso__matrix_remaps_free(deso_ctx *ctx)
{
    while (ctx->matrix_remaps != NULL) {
        deso__matrix_remap *next = ctx->matrix_remaps->next;
        deso__remap_free(&ctx->matrix_remaps->r);
        free(ctx->matrix_remaps);
        ctx->matrix_remaps = next;
    }
}

static pl_bc_layout bc_of(const blas_layout *l)
{
    pl_bc_layout b = {.m = l->m, .n = l->n, .mb = l->b, .nb = l->nb,
                      .pr = l->pr, .pc = l->pc, .ranks = NULL,
                      .replicated = l->rep != 0};
    return b;
}

deso_err deso__mat_remap_plan(deso_ctx *ctx, const blas_layout *src,
                              const blas_layout *dst, deso__remap **out)
{
    deso__matrix_remap *p = ctx->matrix_remaps;
    while (p != NULL && !(blas_layout_equal(&p->src, src) &&
                          blas_layout_equal(&p->dst, dst)))
        p = p->next;
    if (p == NULL) {
        double t0 = deso__now();
        p = deso__calloc(1, sizeof *p);
        DESO_CHECK(p != NULL, DESO_ENOMEM, "matrix remap: out of memory");
        p->src = *src;
        p->dst = *dst;
        pl_bc_layout a = bc_of(src), b = bc_of(dst);
        deso_err err = deso__remap_init(ctx->comm, &a, &b, PL_SCHED_STEPWISE,
                                        &p->r);
        if (err == DESO_OK) err = deso__remap_shm_attach(&p->r, ctx->rings);
        deso__stats_time(DESO_T_OVERHEAD, deso__now() - t0);
        if (err != DESO_OK) {
            deso__remap_free(&p->r);
            free(p);
            return err;
        }
        p->next = ctx->matrix_remaps;
        ctx->matrix_remaps = p;
    }
    *out = &p->r;
    return DESO_OK;
}

/* Every cached plan put on the rings, with the outcome agreed: a rank
 * that failed leaves the plans half on the rings, so every rank drops
 * them all, with the rings, before any of their data moves.              */
static deso_err plans_on_rings(deso_ctx *ctx)
{
    deso_err local = DESO_OK;
    for (deso__matrix_remap *p = ctx->matrix_remaps; p != NULL; p = p->next) {
        deso_err e = deso__remap_shm_attach(&p->r, ctx->rings);
        if (local == DESO_OK) local = e;
    }
    deso_err err = deso__agree(ctx->comm, "force (matrix remaps on shared "
                               "memory)", local, NULL, 0);
    if (err != DESO_OK) {
        deso__matrix_remaps_free(ctx);
        deso__pair_rings_free(ctx->rings);
        ctx->rings = NULL;
    }
    return err;
}

/* The rings, on every rank or on none, once per context.  A rank that
 * cannot make its part leaves the remaps on MPI messages; only putting
 * the plans on them can fail the force (DESO_ENOMEM, agreed).           */
static deso_err rings_ready(deso_ctx *ctx)
{
    if (ctx->rings_tried || !ctx->rings_wanted ||
        ctx->matrix_remaps_run++ == 0)
        return DESO_OK;
    ctx->rings_tried = true;
    double t0 = deso__now();
    deso_err err = DESO_OK;
    if (deso__pair_rings_create(ctx->comm, &ctx->rings) == DESO_OK &&
        ctx->rings != NULL)
        err = plans_on_rings(ctx);
    deso__stats_time(DESO_T_OVERHEAD, deso__now() - t0);
    return err;
}

deso_err deso__mat_remap(deso_ctx *ctx, const deso__view *src,
                         deso__view *dst)
{
    DESO_TRY(rings_ready(ctx));
    deso__remap *r;
    DESO_TRY(deso__mat_remap_plan(ctx, &src->lay, &dst->lay, &r));
    int64_t sld = src->rows > 1 ? src->rows : 1;
    int64_t dld = dst->rows > 1 ? dst->rows : 1;
    if (dst->lay.rep != 0) deso__stats_replicated();
    return deso__remap_exec(r, src->data, sld, dst->data, dld);
}
