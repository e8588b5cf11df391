/* Matrix refolding (e.g. block -> cyclic(b) for trsv): a block-cyclic
 * remap planned by placement/remap.h and run by deso__remap_* (remap.c),
 * cached per layout pair.  When the context has shared-memory rings
 * (deso/remap/pair_rings.h: every rank on one node) the plan takes them
 * as it is made, in the force's preparation: nothing is agreed for it
 * but the preparation's own outcome (the force's agreement), and its
 * executions call no MPI function.                                       */
#include <stdlib.h>

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
                      .replicated = false};
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

deso_err deso__mat_remap(deso_ctx *ctx, const deso__view *src,
                         deso__view *dst)
{
    deso__remap *r;
    DESO_TRY(deso__mat_remap_plan(ctx, &src->lay, &dst->lay, &r));
    int64_t sld = src->rows > 1 ? src->rows : 1;
    int64_t dld = dst->rows > 1 ? dst->rows : 1;
    return deso__remap_exec(r, src->data, sld, dst->data, dld);
}
