/* Context: communicators, grid, options; created and destroyed here, and
 * wrapped by deso_init / deso_finalize (deso/context.c), which add what the
 * I/O layer does at the ends of a run.                                     */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"
#include "deso/runtime/replay.h"
#include "deso/runtime/ooc.h"
#include "deso/remap/pair_rings.h"
#include "placement/alloc.h"

/* (|value|, index) pairs: the larger value wins, the smaller index on a tie
 * (cblas_idamax's first maximum).                                          */
static void maxloc_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const double *a = in;
    double *b = inout;
    for (int k = 0; k < *len; k++) {
        double av = a[2 * k], ai = a[2 * k + 1];
        double bv = b[2 * k], bi = b[2 * k + 1];
        if (av > bv || (av == bv && ai < bi)) {
            b[2 * k] = av;
            b[2 * k + 1] = ai;
        }
    }
}

static void ctx_free(deso_ctx *ctx)
{
    deso__replay_disarm(ctx);
    deso__dag_drop(ctx, DESO_ESTATE);
    deso__handle *h = ctx->handles;
    while (h != NULL) {
        deso__handle *next = h->next;
        if (h->magic == DESO__MAGIC_LIVE) {
            deso__value_unref(h->val);
            deso__spmat_data_free(h->sp);
            deso__value_unref(h->src);
        }
        h->magic = 0;
        free(h->uop);             /* kept by destroyed operators' shells   */
        free(h);
        h = next;
    }
    deso__consts_clear(ctx);
    free(ctx->uops);
    deso__exchange_plans_free(ctx);
    deso__matrix_remaps_free(ctx);
    deso__pair_rings_free(ctx->rings);      /* after every remap on them */
    opt_cache_free(ctx->cache);
    opt_wisdom_free(&ctx->wis);
    opt_graph_free(&ctx->last_g);
    opt_plan_free(&ctx->last_p);
    opt_graph_free(&ctx->build);
    deso__compiled_clear(ctx);
    deso__recycle_drain();
    deso__parts_free(ctx);      /* after every layout that may name one */
    free(ctx->sim);
    free(ctx->run.rv);
    free(ctx->run.fz);
    free(ctx->run.grp);
    free(ctx->run.glast);
    free(ctx->run.early);
    free(ctx->run.nodes);
    free(ctx->run.prev);
    free(ctx->run.order);
    for (int k = 0; k < 2; k++)
        if (ctx->dimcomm[k] != MPI_COMM_NULL) MPI_Comm_free(&ctx->dimcomm[k]);
    if (ctx->comm != MPI_COMM_NULL) MPI_Comm_free(&ctx->comm);
    if (ctx->maxloc != MPI_OP_NULL) MPI_Op_free(&ctx->maxloc);
    if (ctx->pairtype != MPI_DATATYPE_NULL) MPI_Type_free(&ctx->pairtype);
    free(ctx->scratch);
    deso__ooc_ahead_free(ctx->ooc_ahead);   /* reads into ooc_raw      */
    free(ctx->ooc_raw);
    ctx->magic = 0;
    free(ctx);
}

/* The options in force, the same on every rank (options_agree.c); the
 * plan cache is allocated first so that its failure is agreed with them. */
static deso_err ctx_configure(deso_ctx *ctx, const deso_options *o)
{
    deso_options res;
    pl_grid g;
    deso_err local = deso__options_resolve(o, ctx->size, &res, &g);
    /* the two per-rank options, kept from this rank's own resolution     */
    if (local == DESO_OK) {
        ctx->mem_limit = res.mem_limit;
        snprintf(ctx->ooc_dir, sizeof ctx->ooc_dir, "%s", res.ooc_dir);
    }
    if (local == DESO_OK) {
        ctx->cache = opt_cache_new(DESO__CACHE_PLANS);
        if (ctx->cache == NULL)
            local = deso__fail(DESO_ENOMEM, "out of memory");
    }
    DESO_TRY(deso__options_agree(ctx->comm, local, &res, ctx->names));
    DESO_TRY(pl_grid_2d(ctx->size, res.grid_rows, res.grid_cols, &g));
    ctx->mode = res.mode;
    ctx->nb_opt = res.nb;
    ctx->max_nodes = res.max_nodes;
    ctx->df.mode = res.mode == DESO_MODE_AFFINE ? OPT_AFFINE
                   : res.mode == DESO_MODE_FULL ? OPT_FULL : OPT_NONE;
    ctx->df.pr = g.dims[0];
    ctx->df.pc = g.dims[1];
    ctx->df.nb = res.nb == DESO_NB_BLOCK ? 0 : res.nb;
    ctx->wisdom = res.wisdom;
    ctx->trace = res.trace;
    ctx->log = res.log;
    ctx->verbose = res.verbose > 0;
    ctx->partition = res.partition;
    ctx->l_scaling = res.l_scaling;
    ctx->measure_collectives = res.measure_collectives > 0;
    ctx->replay = res.replay > 0;
    ctx->rings_wanted = res.remap_shm > 0;
    ctx->df.replicate_max = res.replicate_max > 0 ? res.replicate_max : 0;
    return DESO_OK;
}

static deso_err ctx_setup(deso_ctx *ctx, const deso_options *o)
{
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    DESO_TRY(ctx_configure(ctx, o));
    ctx->coord[0] = ctx->rank / ctx->df.pc;
    ctx->coord[1] = ctx->rank % ctx->df.pc;
    /* dimcomm[k] joins the ranks that differ only in coordinate k; their
     * rank in it is that coordinate.                                       */
    DESO_TRY(deso__mpi(MPI_Comm_split(ctx->comm, ctx->coord[1], ctx->coord[0],
                                      &ctx->dimcomm[0]),
                       "MPI_Comm_split"));
    DESO_TRY(deso__mpi(MPI_Comm_split(ctx->comm, ctx->coord[0], ctx->coord[1],
                                      &ctx->dimcomm[1]),
                       "MPI_Comm_split"));
    for (int k = 0; k < 2; k++)
        DESO_TRY(deso__mpi(
            MPI_Comm_set_errhandler(ctx->dimcomm[k], MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler"));
    DESO_TRY(deso__mpi(MPI_Type_contiguous(2, MPI_DOUBLE, &ctx->pairtype),
                       "MPI_Type_contiguous"));
    DESO_TRY(deso__mpi(MPI_Type_commit(&ctx->pairtype), "MPI_Type_commit"));
    DESO_TRY(deso__mpi(MPI_Op_create(maxloc_fn, 1, &ctx->maxloc),
                       "MPI_Op_create"));
    ctx->params = opt_params_default();
    ctx->params.reduce_holders_only = true;
    /* the smallest budget: whether any rank has one (if none has,
     * creating a matrix needs no agreement on where it lives), and a
     * replicated matrix takes at most a quarter of it, on every rank    */
    int64_t least = ctx->mem_limit > 0 ? ctx->mem_limit : INT64_MAX;
    DESO_TRY(deso__mpi(MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_INT64_T,
                                     MPI_MIN, ctx->comm), "MPI_Allreduce"));
    ctx->ooc_any = least != INT64_MAX;
    if (ctx->ooc_any && ctx->df.replicate_max > least / 4)
        ctx->df.replicate_max = least / 4;
    return DESO_OK;
}

deso_err deso__ctx_create(MPI_Comm comm, const deso_options *opt,
                          deso_ctx **out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso_init: ctx is NULL (arg 3)");
    *out = NULL;
    DESO_CHECK(comm != MPI_COMM_NULL, DESO_EINVAL,
               "deso_init: comm is MPI_COMM_NULL (arg 1)");
    /* The duplicate first: errors before the options are agreed are
     * MPI's own; from there on every rank fails together, so a rank
     * without memory for its context still takes part in the agreement. */
    MPI_Comm dup = MPI_COMM_NULL;
    DESO_TRY(deso__mpi(MPI_Comm_dup(comm, &dup), "deso_init: MPI_Comm_dup"));
    int rc = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    deso_ctx *ctx = deso__calloc(1, sizeof *ctx);
    if (ctx == NULL || rc != MPI_SUCCESS) {
        static char names[3 * DESO__PATH_MAX];   /* the context's, else  */
        deso_options res;
        deso_err e = ctx == NULL
            ? deso__fail(DESO_ENOMEM, "out of memory")
            : deso__mpi(rc, "MPI_Comm_set_errhandler");
        e = deso__options_agree(dup, e, &res, names);
        free(ctx);
        MPI_Comm_free(&dup);
        return e;
    }
    ctx->magic = DESO__MAGIC_CTX;
    ctx->comm = dup;
    ctx->dimcomm[0] = ctx->dimcomm[1] = MPI_COMM_NULL;
    ctx->maxloc = MPI_OP_NULL;
    ctx->pairtype = MPI_DATATYPE_NULL;
    ctx->next_id = 1;
    deso_err err = ctx_setup(ctx, opt);
    if (err != DESO_OK) {
        ctx_free(ctx);
        return err;
    }
    *out = ctx;
    return DESO_OK;
}

deso_err deso__ctx_calibrate(deso_ctx *ctx)
{
    if (ctx->calibrated) return DESO_OK;
    double t0 = deso__now();
    DESO_TRY(deso__probe(ctx, &ctx->params));
    ctx->time_calibrate = deso__now() - t0;
    ctx->calibrated = true;
    return DESO_OK;
}

void deso__ctx_destroy(deso_ctx *ctx) { ctx_free(ctx); }

deso_err deso_flush(deso_ctx *ctx)
{
    DESO_TRY(deso__ctx_check(ctx, "deso_flush"));
    return deso__raise(ctx, "deso_flush", deso__force(ctx));
}

static deso_err get_info(const deso_ctx *ctx, deso_info *out)
{
    DESO_CHECK(ctx != NULL && out != NULL, DESO_ENULL,
               "deso_get_info: NULL argument");
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "deso_get_info: not a live context");
    out->size = ctx->size;
    out->rank = ctx->rank;
    out->grid_rows = ctx->df.pr;
    out->grid_cols = ctx->df.pc;
    out->mode = ctx->mode;
    out->nb = ctx->nb_opt;
    out->max_nodes = ctx->max_nodes;
    out->wisdom = ctx->wisdom;
    out->trace = ctx->trace;
    out->log = ctx->log;
    out->verbose = ctx->verbose ? 1 : 0;
    out->partition = ctx->partition;
    out->l_scaling = ctx->l_scaling;
    out->remap_shm = ctx->rings != NULL;
    out->flushes = ctx->flushes;
    out->pending = ctx->nnodes + deso__replay_pending(ctx);
    out->alpha = ctx->params.alpha;
    out->beta = ctx->params.beta;
    out->io_beta = ctx->params.io_beta;
    const opt_coll_cost(*coll)[OPT_COMMS] = ctx->params.coll;
    out->allreduce_call = coll[OPT_COLL_ALLREDUCE][OPT_COMM_ALL].call;
    out->reduce_call = coll[OPT_COLL_REDUCE][OPT_COMM_ALL].call;
    out->bcast_call = coll[OPT_COLL_BCAST][OPT_COMM_ALL].call;
    out->measure_collectives = ctx->measure_collectives ? 1 : 0;
    out->replay = ctx->replay ? 1 : 0;
    out->time_calibrate = ctx->time_calibrate;
    out->mem_limit = ctx->mem_limit;
    out->ooc_dir = ctx->ooc_dir;
    return DESO_OK;
}

deso_err deso_get_info(const deso_ctx *ctx, deso_info *out)
{
    deso_err err = get_info(ctx, out);
    return err == DESO_OK ? err
                          : deso__raise(deso__ctx_live(ctx), "deso_get_info",
                                        err);
}
