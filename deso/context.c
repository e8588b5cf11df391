/* deso_init and deso_finalize: the runtime's context, with what the I/O
 * layer does at the two ends of a run (the wisdom file imported before the
 * machine is measured, the performance log and the wisdom file written
 * after the last force).  They sit above both layers, so that neither has
 * to call up into the other.                                               */
#include <stdio.h>

#include "deso/io/io.h"
#include "deso/runtime/runtime.h"

deso_err deso_init(MPI_Comm comm, const deso_options *opt, deso_ctx **out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso_init: ctx is NULL (arg 3)");
    *out = NULL;
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__ctx_create(comm, opt, &ctx));
    /* wisdom may hold the calibration; else the alpha-beta probe         */
    deso_err err = DESO_OK;
    if (ctx->wisdom != NULL) err = deso__wisdom_load(ctx, ctx->wisdom, true);
    if (err == DESO_OK) err = deso__ctx_calibrate(ctx);
    if (err != DESO_OK) {
        deso__ctx_destroy(ctx);
        return err;
    }
    *out = ctx;
    return DESO_OK;
}

deso_err deso_finalize(deso_ctx **pctx)
{
    if (pctx == NULL || *pctx == NULL) return DESO_OK;
    deso_ctx *ctx = *pctx;
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "deso_finalize: not a live context");
    deso_err err = deso__force(ctx);
    deso__log_finalize(ctx);
    if (ctx->wisdom != NULL) {
        deso_err werr = deso__wisdom_save(ctx, ctx->wisdom);
        if (werr != DESO_OK && ctx->rank == 0)
            fprintf(stderr, "deso: warning: wisdom file '%s' not written: "
                            "%s\n", ctx->wisdom, deso_last_error());
        if (err == DESO_OK) err = werr;
    }
    /* while the context lives: an aborting handler needs its communicator */
    deso__raise(ctx, "deso_finalize", err);
    deso__ctx_destroy(ctx);
    *pctx = NULL;
    return err;
}
