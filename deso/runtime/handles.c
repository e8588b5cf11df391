/* Handles, values and views.
 *
 * A destroyed handle keeps its shell (magic DEAD) in the context's list
 * until deso_finalize, so a stale pointer reads a valid struct and gets
 * DESO_ESTALE.  Shells are never reused: a recycled shell would make a
 * stale pointer look live again (ABA).  Cost: one small struct per handle
 * ever created in the context.                                            */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "deso/runtime/ooc.h"
#include "deso/runtime/replay.h"

void deso__view_free(deso__view *w)
{
    if (w == NULL || deso__view_put(w)) return;
    if (!w->borrowed) free(w->data);
    deso__ooc_close(w->ooc);
    free(w);
}

void deso__value_release(deso__value *v)
{
    deso__view *lists[2] = {v->views, v->spare};
    for (int k = 0; k < 2; k++) {
        deso__view *w = lists[k];
        while (w != NULL) {
            deso__view *next = w->next;
            deso__view_free(w);
            w = next;
        }
    }
    deso__value_put(v);
}

void deso__value_computed(deso__value *v, deso__view *w)
{
    w->next = v->views;
    v->views = w;
    v->ready = true;
}

void deso__value_keep(deso__value *v, deso__view *w)
{
    w->next = v->views->next;
    v->views->next = w;
}

/* The serial of the last view allocated (per process, like the pools). */
static uint64_t last_serial;

/* How a new view's data starts.                                         */
typedef enum { VIEW_UNZEROED, VIEW_ZEROED, VIEW_UNTOUCHED } view_fill;

/* Its data, len doubles (len checked against the allocator's limit).    */
static double *view_data(int64_t len, view_fill fill)
{
    if (fill == VIEW_UNTOUCHED)
        return deso__calloc_untouched((size_t)len, sizeof(double));
    if (fill == VIEW_ZEROED) return deso__calloc((size_t)len, sizeof(double));
    return deso__malloc((size_t)len <= DESO__ALLOC_MAX / sizeof(double)
                            ? (size_t)len * sizeof(double)
                            : SIZE_MAX);
}

static deso_err view_alloc(deso_ctx *ctx, const blas_layout *lay,
                           view_fill fill, deso__view **out)
{
    int64_t rows, cols;
    blas_layout_local(lay, ctx->coord[0], ctx->coord[1], &rows, &cols);
    deso__view *w = deso__view_take(lay, rows, cols, fill != VIEW_UNZEROED);
    if (w != NULL) {
        *out = w;
        return DESO_OK;
    }
    w = deso__calloc(1, sizeof *w);
    DESO_CHECK(w != NULL, DESO_ENOMEM, "out of memory (view)");
    w->lay = *lay;
    /* a layout by partition has no pl_placement; pl stays zero          */
    deso_err err = DESO_OK;
    if (lay->dist != BLAS_DIST_PART) err = blas_placement_of(lay, &w->pl);
    if (err != DESO_OK) {
        free(w);
        return err;
    }
    w->rows = rows;
    w->cols = cols;
    w->serial = ++last_serial;
    int64_t len = w->rows * w->cols;
    /* allocated even when empty: the calls made (and so an injected
     * failure) must not depend on this rank's share                        */
    w->data = view_data(len, fill);
    if (w->data == NULL) {
        free(w);
        return deso__fail(DESO_ENOMEM, "out of memory (%lld local elements)",
                          (long long)len);
    }
    *out = w;
    return DESO_OK;
}

deso_err deso__view_alloc(deso_ctx *ctx, const blas_layout *lay,
                          deso__view **out)
{
    return view_alloc(ctx, lay, VIEW_ZEROED, out);
}

deso_err deso__view_alloc_unzeroed(deso_ctx *ctx, const blas_layout *lay,
                                   deso__view **out)
{
    return view_alloc(ctx, lay, VIEW_UNZEROED, out);
}

deso_err deso__view_alloc_untouched(deso_ctx *ctx, const blas_layout *lay,
                                    deso__view **out)
{
    return view_alloc(ctx, lay, VIEW_UNTOUCHED, out);
}

deso__view *deso__value_find(deso__value *v, const blas_layout *lay)
{
    for (deso__view *w = v->views; w != NULL; w = w->next)
        if (blas_layout_equal(&w->lay, lay)) return w;
    return NULL;
}

deso_err deso__value_const(deso_ctx *ctx, double x, deso__value **out)
{
    deso__value *v = deso__value_new(BLAS_SCA, 1, 1);
    DESO_CHECK(v != NULL, DESO_ENOMEM, "out of memory (scalar)");
    blas_layout lay = opt_default_sca(&ctx->df);
    deso_err err = deso__view_alloc(ctx, &lay, &v->views);
    if (err != DESO_OK) {
        deso__value_put(v);
        return err;
    }
    if (v->views->rows > 0) v->views->data[0] = x;
    v->ready = true;
    *out = v;
    return DESO_OK;
}

/* Room for a handle: the largest of the public structs, which all wrap
 * one handle.  NULL when out of memory.                                  */
deso__handle *deso__handle_shell(void)
{
    return deso__calloc(1, sizeof(struct deso_vec));
}

/* Makes shell h a live handle of an m x n object, in the context's list
 * and mixed into the SPMD hash.  Cannot fail.                            */
static void handle_attach(deso_ctx *ctx, deso__handle *h, blas_kind kind,
                          int64_t m, int64_t n)
{
    h->magic = DESO__MAGIC_LIVE;
    h->kind = kind;
    h->ctx = ctx;
    h->id = ctx->next_id++;
    h->next = ctx->handles;
    ctx->handles = h;
    deso__hash_mix(ctx, 0x6e6577u ^ ((uint64_t)kind << 32));
    deso__hash_mix(ctx, (uint64_t)m);
    deso__hash_mix(ctx, (uint64_t)n);
}

/* A new live handle (handle_attach); NULL when out of memory.            */
static deso__handle *handle_link(deso_ctx *ctx, blas_kind kind, int64_t m,
                                 int64_t n)
{
    deso__handle *h = deso__handle_shell();
    if (h != NULL) handle_attach(ctx, h, kind, m, n);
    return h;
}

deso_err deso__handle_new(deso_ctx *ctx, blas_kind kind, deso__value *v,
                          deso__handle **out)
{
    deso__handle *h = handle_link(ctx, kind, v->m, v->n);
    DESO_CHECK(h != NULL, DESO_ENOMEM, "out of memory (handle)");
    h->val = v;
    deso__value_ref(v);
    v->hid = h->id;
    *out = h;
    return DESO_OK;
}

deso_err deso__handle_new_spmat(deso_ctx *ctx, deso__spmat_data *sp,
                                deso__handle **out)
{
    deso__handle *h = handle_link(ctx, DESO__SPMAT, sp->m, sp->n);
    DESO_CHECK(h != NULL, DESO_ENOMEM, "out of memory (handle)");
    h->sp = sp;
    *out = h;
    return DESO_OK;
}

void deso__handle_attach_op(deso_ctx *ctx, deso__uop *u, deso__handle *shell)
{
    handle_attach(ctx, shell, DESO__OP, u->m, u->n);
    shell->uop = u;
}

static const char *kind_name(blas_kind k)
{
    return k == BLAS_VEC     ? "vector"
           : k == BLAS_MAT   ? "matrix"
           : k == BLAS_SCA   ? "scalar"
           : k == DESO__SPMAT ? "sparse matrix"
                             : "operator";
}

deso_err deso__ctx_check(const deso_ctx *ctx, const char *fn)
{
    DESO_CHECK(ctx != NULL, DESO_ENULL, "%s: ctx is NULL", fn);
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "%s: not a live context", fn);
    return DESO_OK;
}

deso_err deso__handle_check_full(const deso__handle *h, blas_kind kind,
                                 deso_ctx **ctx, const char *fn,
                                 const char *arg)
{
    DESO_CHECK(h != NULL, DESO_ENULL, "%s: %s is NULL", fn, arg);
    DESO_CHECK(h->magic != DESO__MAGIC_DEAD, DESO_ESTALE,
               "%s: %s was destroyed", fn, arg);
    DESO_CHECK(h->magic == DESO__MAGIC_LIVE, DESO_ESTALE,
               "%s: %s is not a deso handle", fn, arg);
    DESO_CHECK(h->kind == kind, DESO_EINVAL, "%s: %s is a %s, not a %s", fn,
               arg, kind_name(h->kind), kind_name(kind));
    DESO_CHECK(h->ctx != NULL && h->ctx->magic == DESO__MAGIC_CTX,
               DESO_ESTALE, "%s: %s belongs to a finalized context", fn, arg);
    /* a view outlives nothing it views: the parent's shell says DEAD    */
    DESO_CHECK(h->parent == NULL || h->parent->magic == DESO__MAGIC_LIVE,
               DESO_ESTALE, "%s: %s views a %s that was destroyed", fn, arg,
               kind_name(h->parent != NULL ? h->parent->kind : h->kind));
    if (*ctx != NULL)
        DESO_CHECK(h->ctx == *ctx, DESO_ECONTEXT,
                   "%s: %s belongs to another context", fn, arg);
    *ctx = h->ctx;
    return DESO_OK;
}

deso_err deso__handle_destroy(deso__handle *h, const char *fn)
{
    DESO_CHECK(h->magic != DESO__MAGIC_DEAD, DESO_ESTALE,
               "%s: handle already destroyed", fn);
    DESO_CHECK(h->magic == DESO__MAGIC_LIVE, DESO_ESTALE,
               "%s: not a deso handle", fn);
    deso__replay_handle_gone(h->ctx, h);   /* before its value goes     */
    h->magic = DESO__MAGIC_DEAD;
    deso__value_unref(h->val);
    deso__value_unref(h->src);
    h->val = NULL;
    deso__spmat_data_free(h->sp);
    h->sp = NULL;
    h->src = NULL;
    return DESO_OK;
}

deso_err deso__value_lost(const deso__value *v, const char *fn)
{
    return deso__fail(v->poison,
                      "%s: the value was lost when an earlier flush failed "
                      "(%s)",
                      fn, deso_errname(v->poison));
}

/* ---- public destroy / shape ----------------------------------------------- */

/* The context is taken before the handle goes: *p is NULL afterwards. */
#define DESTROY(fn, type, ctx_of)                                            \
    deso_err fn(type **p)                                                    \
    {                                                                        \
        if (p == NULL || *p == NULL) return DESO_OK;                         \
        deso_ctx *ctx = ctx_of(*p);                                          \
        deso_err err = deso__handle_destroy(&(*p)->h, #fn);                  \
        *p = NULL;                                                           \
        return deso__raise(ctx, #fn, err);                                   \
    }
DESTROY(deso_vec_destroy, deso_vec, deso__vec_ctx)
DESTROY(deso_mat_destroy, deso_mat, deso__mat_ctx)
DESTROY(deso_scalar_destroy, deso_scalar, deso__scalar_ctx)
DESTROY(deso_spmat_destroy, deso_spmat, deso__spmat_ctx)
DESTROY(deso_op_destroy, deso_op, deso__op_ctx)

static deso_err vec_length(const deso_vec *x, int64_t *n)
{
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__handle_check(x ? &x->h : NULL, BLAS_VEC, &ctx,
                                "deso_vec_length", "x"));
    DESO_CHECK(n != NULL, DESO_ENULL, "deso_vec_length: n is NULL");
    *n = x->h.val->n;
    return DESO_OK;
}

deso_err deso_vec_length(const deso_vec *x, int64_t *n)
{
    deso_err err = vec_length(x, n);
    return err == DESO_OK ? err
                          : deso__raise(deso__vec_ctx(x), "deso_vec_length",
                                        err);
}

static deso_err mat_shape(const deso_mat *a, int64_t *m, int64_t *n)
{
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__handle_check(a ? &a->h : NULL, BLAS_MAT, &ctx,
                                "deso_mat_shape", "a"));
    DESO_CHECK(m != NULL && n != NULL, DESO_ENULL,
               "deso_mat_shape: NULL out-parameter");
    *m = a->h.val->m;
    *n = a->h.val->n;
    return DESO_OK;
}

deso_err deso_mat_shape(const deso_mat *a, int64_t *m, int64_t *n)
{
    deso_err err = mat_shape(a, m, n);
    return err == DESO_OK ? err
                          : deso__raise(deso__mat_ctx(a), "deso_mat_shape",
                                        err);
}
