/* deso_mat_read_rate: the disk's read rate measured on an out-of-core
 * matrix's own local array files, in the same run, the reference against
 * which a streamed product's rate means something (make bench-ooc).  The
 * files have no name, so only the process holding them can read them.   */
#include "deso/runtime/ooc.h"

/* A's local array file, once its pending updates are written: a force
 * point, agreed.  DESO_EINVAL on every rank when A is in core (where a
 * matrix lives is agreed when it is made).                               */
static deso_err matrix_file(deso_ctx *ctx, const deso__handle *h,
                            const char *fn, deso__ooc **f)
{
    deso_err err = deso__view_sync(ctx, (deso__handle *)h);
    if (err == DESO_OK) err = deso__force(ctx);
    if (err == DESO_OK) err = deso__value_usable(h->val, fn);
    DESO_TRY(deso__agree_counted(ctx, fn, err, NULL, 0));
    DESO_CHECK(h->val->ooc && h->val->views != NULL, DESO_EINVAL,
               "%s: the matrix is in core: it has no local array file "
               "(arg 1)", fn);
    *f = h->val->views->ooc;
    return DESO_OK;
}

/* Reads f whole after a barrier, in requests as large as the first slab
 * buffer holds (the streamed product's requests are its slabs, at most
 * that), and ends with the outcome agreed; *t, this rank's seconds.      */
static deso_err timed_read(deso_ctx *ctx, deso__ooc *f, const char *fn,
                           double *t)
{
    char *buf = (char *)deso__ooc_slab_buf(ctx, 0);  /* ahead dropped   */
    int64_t chunk = (f->rows * f->slab * (int64_t)sizeof(double) +
                     DESO__OOC_ALIGN - 1) / DESO__OOC_ALIGN * DESO__OOC_ALIGN;
    DESO_TRY(deso__agree_counted(ctx, fn, DESO_OK, NULL, 0));  /* barrier */
    double t0 = deso__now();
    deso_err err = deso__ooc_read_whole(f, buf, chunk);
    *t = deso__now() - t0;
    return deso__agree_counted(ctx, fn, err, NULL, 0);
}

deso_err deso__mat_read_rate(const deso_mat *a, double *bytes_per_sec)
{
    static const char *fn = "deso_mat_read_rate";
    deso_ctx *ctx = NULL;
    const deso__handle *h = a ? &a->h : NULL;
    DESO_TRY(deso__handle_check(h, BLAS_MAT, &ctx, fn, "a"));
    deso_err mine = bytes_per_sec == NULL
                        ? deso__fail(DESO_ENULL, "%s: bytes_per_sec is NULL "
                                     "(arg 2)", fn)
                        : DESO_OK;
    DESO_TRY(deso__agree_counted(ctx, fn, mine, NULL, 0));
    *bytes_per_sec = 0.0;
    deso__ooc *f = NULL;
    DESO_TRY(matrix_file(ctx, h, fn, &f));
    double t = 0.0;
    DESO_TRY(timed_read(ctx, f, fn, &t));
    double bytes = (double)(f->rows * f->cols) * (double)sizeof(double);
    double slowest[2] = {t, (double)ctx->rank};
    DESO_TRY(deso__allreduce(ctx, ctx->comm, &bytes, 1, DESO__SUM));
    DESO_TRY(deso__allreduce(ctx, ctx->comm, slowest, 2, DESO__MAXLOC));
    *bytes_per_sec = slowest[0] > 0.0 ? bytes / slowest[0] : 0.0;
    return DESO_OK;
}
