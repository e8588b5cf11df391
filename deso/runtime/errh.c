/* The context's error handler: set and read here, invoked at the public
 * boundary by deso__raise (api.h), and the predefined abort handler.     */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "deso/runtime/runtime.h"

/* A handler is running on this rank: the calls it makes return their
 * codes without re-entering it (a handler that cleans up with deso calls
 * must not recurse, nor free the context twice).  deso is single-threaded
 * (MPI_THREAD_FUNNELED), so one flag per process is enough.               */
static bool handling;

deso_err deso_set_error_handler(deso_ctx *ctx, deso_error_handler h,
                                void *arg)
{
    DESO_TRY(deso__ctx_check(ctx, "deso_set_error_handler"));
    ctx->errh = h;
    ctx->errh_arg = arg;
    return DESO_OK;
}

deso_err deso_get_error_handler(const deso_ctx *ctx, deso_error_handler *h,
                                void **arg)
{
    DESO_CHECK(ctx != NULL && h != NULL && arg != NULL, DESO_ENULL,
               "deso_get_error_handler: NULL argument");
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "deso_get_error_handler: not a live context");
    *h = ctx->errh;
    *arg = ctx->errh_arg;
    return DESO_OK;
}

void deso_errors_abort(deso_ctx *ctx, deso_err err, const char *fn,
                       const char *msg, void *arg)
{
    (void)arg;
    if (fn == NULL) fn = "deso";
    if (msg == NULL) msg = "";
    /* messages usually start with the function's name already          */
    size_t len = strlen(fn);
    if (strncmp(msg, fn, len) == 0 && strncmp(msg + len, ": ", 2) == 0)
        msg += len + 2;
    if (msg[0] == '\0') msg = deso_strerror(err);
    fprintf(stderr, "deso: %s: %s (%s)\n", fn, msg, deso_errname(err));
    fflush(stderr);
    MPI_Comm comm = deso__ctx_live(ctx) != NULL ? ctx->comm : MPI_COMM_WORLD;
    MPI_Abort(comm, err < 0 ? -(int)err : 1);
}

deso_err deso__raise(deso_ctx *ctx, const char *fn, deso_err err)
{
    if (err == DESO_OK || ctx == NULL || ctx->errh == NULL || handling)
        return err;
    /* the handler's own calls may overwrite deso_last_error()           */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", deso_last_error());
    handling = true;
    ctx->errh(ctx, err, fn, msg, ctx->errh_arg);
    handling = false;
    return err;
}

deso_ctx *deso__reach(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    deso_ctx *found = NULL;
    for (int k = 0; k < n && found == NULL; k++)
        found = va_arg(ap, deso_ctx *);
    va_end(ap);
    return found;
}

deso_ctx *deso__ctx_live(const deso_ctx *ctx)
{
    return ctx != NULL && ctx->magic == DESO__MAGIC_CTX ? (deso_ctx *)ctx
                                                        : NULL;
}

/* A destroyed handle's shell still names its context (handles.c).       */
static deso_ctx *handle_ctx(const deso__handle *h)
{
    if (h->magic != DESO__MAGIC_LIVE && h->magic != DESO__MAGIC_DEAD)
        return NULL;
    return deso__ctx_live(h->ctx);
}

deso_ctx *deso__vec_ctx(const deso_vec *x)
{
    return x != NULL ? handle_ctx(&x->h) : NULL;
}

deso_ctx *deso__mat_ctx(const deso_mat *a)
{
    return a != NULL ? handle_ctx(&a->h) : NULL;
}

deso_ctx *deso__spmat_ctx(const deso_spmat *a)
{
    return a != NULL ? handle_ctx(&a->h) : NULL;
}

deso_ctx *deso__op_ctx(const deso_op *op)
{
    return op != NULL ? handle_ctx(&op->h) : NULL;
}

deso_ctx *deso__scalar_ctx(const deso_scalar *s)
{
    return s != NULL ? handle_ctx(&s->h) : NULL;
}

deso_ctx *deso__sarg_ctx(deso_sarg a)
{
    return a.lazy ? deso__scalar_ctx(a.s) : NULL;
}
