/* Where a new matrix lives: in core, or, when its local part exceeds what
 * is left of some rank's memory budget, out of core on every rank (one
 * agreement: a matrix half in files and half in memory would need two
 * code paths per operation for nothing).  "What is left" is the budget
 * less this rank's live in-core matrices.  The slab width is chosen here
 * too: two slabs (double buffering) of whole chunks of dgemv's
 * accumulation (blas_gemv_chunk) within what is left, at least one
 * chunk; a rank without a budget of its own
 * uses DEFAULT_SLAB_BYTES per slab.                                      */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/ooc.h"
#include "placement/alloc.h"

#define DEFAULT_SLAB_BYTES ((int64_t)32 << 20)

/* Bytes of this rank's live in-core matrices.                             */
static int64_t in_core_bytes(const deso_ctx *ctx)
{
    int64_t sum = 0;
    for (const deso__handle *h = ctx->handles; h != NULL; h = h->next) {
        if (h->magic != DESO__MAGIC_LIVE || h->kind != BLAS_MAT) continue;
        for (const deso__view *w = h->val->views; w != NULL; w = w->next)
            if (w->ooc == NULL)
                sum += w->rows * w->cols * (int64_t)sizeof(double);
    }
    return sum;
}

/* What is left of this rank's budget (-1: no budget).                     */
static int64_t budget_left(const deso_ctx *ctx)
{
    if (ctx->mem_limit <= 0) return -1;
    int64_t left = ctx->mem_limit - in_core_bytes(ctx);
    return left > 0 ? left : 0;
}

/* Columns per slab of a rows x cols piece: a multiple of nb, the column
 * chunk dgemv accumulates by (blas_gemv_chunk).                          */
static int64_t slab_columns(const deso_ctx *ctx, int64_t rows, int64_t cols,
                            int64_t nb)
{
    int64_t left = budget_left(ctx);
    int64_t per = left >= 0 ? left / 2 : DEFAULT_SLAB_BYTES;
    int64_t colbytes = (rows > 0 ? rows : 1) * (int64_t)sizeof(double);
    int64_t w = per / colbytes / nb * nb;
    if (w < nb) w = nb;
    return w < cols ? w : (cols > 0 ? cols : 1);
}

/* The context's two slab buffers, grown to len doubles each, aligned and
 * with room around the columns for a direct read's whole blocks
 * (deso__ooc_read_slab).  What they held is not kept.                    */
static deso_err slab_buffers(deso_ctx *ctx, int64_t len)
{
    if (len <= ctx->ooc_buf_len) return DESO_OK;
    if (ctx->ooc_ahead == NULL) DESO_TRY(deso__ooc_ahead_new(&ctx->ooc_ahead));
    int64_t a = DESO__OOC_ALIGN;
    int64_t stride = (len * (int64_t)sizeof(double) + DESO__OOC_SLACK + a -
                      1) / a * a;
    char *raw = deso__malloc((size_t)(2 * stride + a));
    DESO_CHECK(raw != NULL, DESO_ENOMEM, "out of memory (two slabs of %lld "
               "doubles)", (long long)len);
    deso__ooc_ahead_drop(ctx->ooc_ahead);  /* it reads into the old ones */
    free(ctx->ooc_raw);
    ctx->ooc_raw = raw;
    char *b = raw + (a - (int64_t)((uintptr_t)raw % (uintptr_t)a)) % a;
    ctx->ooc_buf[0] = (double *)b;
    ctx->ooc_buf[1] = (double *)(b + stride);
    ctx->ooc_buf_len = len;
    return DESO_OK;
}

deso_err deso__ooc_view_new(deso_ctx *ctx, const blas_layout *lay,
                            deso__view **out)
{
    *out = NULL;
    int64_t rows, cols;
    blas_layout_local(lay, ctx->coord[0], ctx->coord[1], &rows, &cols);
    int64_t slab = slab_columns(ctx, rows, cols, blas_gemv_chunk(lay, rows));
    DESO_TRY(slab_buffers(ctx, rows * slab));
    deso__view *w = deso__calloc(1, sizeof *w);
    DESO_CHECK(w != NULL, DESO_ENOMEM, "out of memory (view)");
    w->lay = *lay;
    w->rows = rows;
    w->cols = cols;
    deso_err err = blas_placement_of(lay, &w->pl);
    if (err == DESO_OK) err = deso__ooc_open(ctx, rows, cols, slab, &w->ooc);
    if (err != DESO_OK) {
        free(w);
        return err;
    }
    *out = w;
    return DESO_OK;
}

deso_err deso__mat_home(deso_ctx *ctx, const blas_layout *lay,
                        deso_err local, const char *fn, deso__view **w)
{
    *w = NULL;
    if (!ctx->ooc_any) return local;
    int64_t rows, cols;
    blas_layout_local(lay, ctx->coord[0], ctx->coord[1], &rows, &cols);
    int64_t left = budget_left(ctx);
    int64_t flags[1] = {local == DESO_OK && left >= 0 &&
                        rows * cols > left / (int64_t)sizeof(double)};
    DESO_TRY(deso__agree_counted(ctx, fn, local, flags, 1));
    if (!flags[0]) return DESO_OK;
    deso_err err = deso__ooc_view_new(ctx, lay, w);
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    if (err != DESO_OK) {
        deso__view_free(*w);
        *w = NULL;
    }
    return err;
}

deso_err deso__ooc_stream_width(deso_ctx *ctx, const deso__view *w,
                                int64_t least, deso_err local,
                                const char *fn, int64_t *k)
{
    *k = 0;
    /* the smallest slab is the largest of the negated ones              */
    int64_t flags[1] = {local == DESO_OK ? -w->ooc->slab : INT64_MIN};
    DESO_TRY(deso__agree_counted(ctx, fn, local, flags, 1));
    *k = -flags[0] > least ? -flags[0] : least;
    int64_t rows = blas_numroc(w->lay.m, w->lay.b, 0, w->lay.pr);
    return deso__agree_counted(ctx, fn, slab_buffers(ctx, rows * *k), NULL,
                               0);
}

deso_err deso__mat_in_core(const deso__value *v, const char *fn)
{
    DESO_CHECK(!v->ooc, DESO_ENOTSUP, "%s: the matrix is out of core "
               "(DESO_MEM_LIMIT), and only the streamed operations (dgemv, "
               "dsymv, dtrmv, dger, dsyr, dsyr2, gathering it, writing it to "
               "a matrix file) read one", fn);
    return DESO_OK;
}
