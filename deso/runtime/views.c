/* Views and strided arguments (doc/DESIGN.md, "Views and strides").
 *
 * A view is a handle whose value is elements of another handle's (its
 * parent's): a vector's elements at an offset and stride, a matrix's
 * column, a range of its columns, a block of it (runs of rows, the
 * parent's rows apart: the sub-matrix CBLAS addresses with lda).  Reading it records a vget of the
 * parent's current version (only when the parent changed since the last
 * read: `src` remembers the version read), so the view is an SSA value
 * like any other; writing it (a BLAS call with the view as its output)
 * records the call into the view's own value, then a vput that makes the
 * parent's next version: its old data with the view's elements replaced.
 * A strided or partial argument of a BLAS call is the same thing for the
 * length of the call: a transient view on the stack (deso__arg).  So
 * incx = 2 reads elements 0, 2, 4, ... and incx = -1 the vector from its
 * end, as reference BLAS does (element i of the call at x[(n-1-i)|inc|]
 * for a negative increment).  Nothing here moves data: vget and vput are
 * nodes the optimiser places and prices, and the executor runs.        */
#include <string.h>

#include "deso/runtime/runtime.h"
#include "deso/runtime/api_more.h"
#include "placement/alloc.h"

/* Records the vget that reads view h's elements of its parent's current
 * version into h's value.                                                */
static deso_err view_read(deso_ctx *ctx, deso__handle *h, int64_t m,
                          int64_t n)
{
    deso__handle *p = h->parent;
    blas_desc d = {.op = BLAS_OP_VGET, .off = h->voff, .inc = h->vinc,
                   .len = m * n, .rows = h->vrows, .ld = h->vld};
    if (p->kind == BLAS_MAT) d.flags |= BLAS_F_PMAT;
    if (h->kind == BLAS_MAT) d.flags |= BLAS_F_SMAT;
    deso__value *ops[1] = {p->val};
    uint64_t ids[1] = {p->id};
    int64_t shape[2] = {m, n};
    deso__value *src = p->val;
    deso__value_ref(src);
    deso_err err = deso__record_desc(ctx, &d, ops, ids, h, shape);
    if (err != DESO_OK) {
        deso__value_unref(src);
        return err;
    }
    deso__value_unref(h->src);
    h->src = src;
    return DESO_OK;
}

/* Records the vput that makes view h's parent's next version from its
 * current one and h's value.                                             */
static deso_err view_write(deso_ctx *ctx, deso__handle *h)
{
    deso__handle *p = h->parent;
    blas_desc d = {.op = BLAS_OP_VPUT, .off = h->voff, .inc = h->vinc,
                   .len = h->val->m * h->val->n, .rows = h->vrows,
                   .ld = h->vld};
    if (p->kind == BLAS_MAT) d.flags |= BLAS_F_PMAT;
    if (h->kind == BLAS_MAT) d.flags |= BLAS_F_SMAT;
    deso__value *ops[2] = {p->val, h->val};
    uint64_t ids[2] = {p->id, h->id};
    int64_t shape[2] = {p->val->m, p->val->n};
    DESO_TRY(deso__record_desc(ctx, &d, ops, ids, p, shape));
    /* h's value is what the parent now holds there: no read needed      */
    deso__value_ref(p->val);
    deso__value_unref(h->src);
    h->src = p->val;
    return DESO_OK;
}

deso_err deso__view_sync(deso_ctx *ctx, deso__handle *h)
{
    if (h->parent == NULL || h->src == h->parent->val) return DESO_OK;
    return view_read(ctx, h, h->val->m, h->val->n);
}

deso_err deso__arg_open(deso_ctx *ctx, const deso__handle *x, int64_t n,
                        int64_t inc, deso__use use, deso__arg *a)
{
    deso__handle *h = (deso__handle *)x;
    a->use = use;
    bool whole = h->kind == BLAS_MAT || (inc == 1 && n == h->val->n);
    if (whole) {
        /* the common case touches only h and use: tmp, a whole handle,
         * is cleared only when it is used                                */
        a->h = h;
        if ((use & DESO__IN) && h->parent != NULL)
            return deso__view_sync(ctx, h);
        return DESO_OK;
    }
    memset(&a->tmp, 0, sizeof a->tmp);
    /* a transient view of the root: element i of the call is element
     * off + inc i of x (from its end when inc < 0), and x's element k is
     * the root's voff + vinc k                                          */
    deso__handle *root = h->parent != NULL ? h->parent : h;
    int64_t off = inc < 0 ? (n > 0 ? (n - 1) * -inc : 0) : 0;
    int64_t rinc = h->parent != NULL ? h->vinc : 1;
    int64_t roff = h->parent != NULL ? h->voff : 0;
    deso__handle *t = &a->tmp;
    t->magic = DESO__MAGIC_LIVE;
    t->kind = BLAS_VEC;
    t->ctx = ctx;
    t->parent = root;
    t->voff = roff + rinc * off;
    t->vinc = rinc * inc;
    a->h = t;
    if (use & DESO__IN) return view_read(ctx, t, 1, n);
    return DESO_OK;
}

deso_err deso__args_open2(deso_ctx *ctx, int64_t n, const deso__handle *x,
                          int64_t incx, deso__use ux, const deso__handle *y,
                          int64_t incy, deso__use uy, deso__arg *a)
{
    DESO_TRY(deso__arg_open(ctx, x, n, incx, ux, &a[0]));
    deso_err err = deso__arg_open(ctx, y, n, incy, uy, &a[1]);
    if (err != DESO_OK) return deso__args_finish(ctx, a, 1, err);
    return DESO_OK;
}

void deso__arg_close(deso__arg *a)
{
    if (a->h == &a->tmp) {
        deso__value_unref(a->tmp.val);
        deso__value_unref(a->tmp.src);
    }
    a->h = NULL;
}

deso_err deso__args_finish(deso_ctx *ctx, deso__arg *a, int k, deso_err err)
{
    bool plain = true;                  /* whole handles, none a view      */
    for (int j = 0; j < k; j++)
        plain = plain && a[j].h != &a[j].tmp && a[j].h->parent == NULL;
    if (plain) return err;
    for (int j = 0; j < k; j++) {
        if (err == DESO_OK && (a[j].use & DESO__OUT) &&
            a[j].h->parent != NULL)
            err = view_write(ctx, a[j].h);
    }
    for (int j = 0; j < k; j++)
        if (a[j].h == &a[j].tmp) deso__arg_close(&a[j]);
    return err;
}

/* ---- making views ------------------------------------------------------- */

/* A new view handle of kind `kind` and shape m x n on parent p (a live
 * handle that is not a view), its value read at once (lazily: a vget);
 * a block's runs of m elements are p's m rows apart (`block`), else the
 * view is one run.                                                       */
static deso_err view_new(deso__handle *p, blas_kind kind, int64_t off,
                         int64_t inc, int64_t m, int64_t n, bool block,
                         deso__handle **out)
{
    deso_ctx *ctx = p->ctx;
    deso__handle *h = deso__calloc(1, sizeof(struct deso_vec));
    DESO_CHECK(h != NULL, DESO_ENOMEM, "out of memory (view)");
    h->magic = DESO__MAGIC_LIVE;
    h->kind = kind;
    h->ctx = ctx;
    h->id = ctx->next_id++;
    h->parent = p;
    h->voff = off;
    h->vinc = inc;
    h->vrows = block ? m : 0;
    h->vld = block ? p->val->m : 0;
    h->next = ctx->handles;
    ctx->handles = h;
    deso__hash_mix(ctx, 0x76696577u ^ ((uint64_t)kind << 32));
    deso__hash_mix(ctx, (uint64_t)p->id);
    deso__hash_mix(ctx, (uint64_t)off);
    deso__hash_mix(ctx, (uint64_t)inc);
    deso__hash_mix(ctx, (uint64_t)h->vrows);
    deso__hash_mix(ctx, (uint64_t)h->vld);
    deso_err err = view_read(ctx, h, m, n);
    if (err != DESO_OK) {
        /* the shell stays in the list, dead, as a destroyed handle's     */
        h->magic = DESO__MAGIC_DEAD;
        return err;
    }
    *out = h;
    return DESO_OK;
}

/* The parent argument of a view: live, of the kind, not itself a view.  */
static deso_err parent_arg(const deso__handle *p, blas_kind kind,
                           const char *fn, const char *name, void *out)
{
    deso_ctx *ctx = NULL;
    DESO_CHECK(out != NULL, DESO_ENULL, "%s: view is NULL", fn);
    DESO_TRY(deso__handle_check(p, kind, &ctx, fn, name));
    DESO_TRY(deso__value_usable(p->val, fn));
    DESO_CHECK(p->parent == NULL, DESO_EINVAL,
               "%s: %s (arg 1) is a view: views of views are not supported "
               "(make the view of its parent)", fn, name);
    return DESO_OK;
}

deso_err deso__vec_view(deso_vec *x, int64_t offset, int64_t n,
                        int64_t stride, deso_vec **view)
{
    const char *fn = "deso_vec_view";
    if (view != NULL) *view = NULL;
    DESO_TRY(parent_arg(x ? &x->h : NULL, BLAS_VEC, fn, "x", view));
    int64_t len = x->h.val->n;
    DESO_CHECK(n >= 0, DESO_ESIZE, "%s: n = %lld < 0 (arg 3)", fn,
               (long long)n);
    DESO_CHECK(stride != 0, DESO_EINVAL, "%s: stride 0 (arg 4)", fn);
    /* the first and the last element inside x; the span (n - 1) |stride|
     * is checked by division, so a huge n or stride cannot overflow      */
    uint64_t step = stride < 0 ? -(uint64_t)stride : (uint64_t)stride;
    uint64_t room = stride < 0 ? (uint64_t)offset
                               : (uint64_t)(len - 1 - offset);
    bool inside = n == 0 ? offset >= 0 && offset <= len
                         : offset >= 0 && offset < len &&
                               (uint64_t)(n - 1) <= room / step;
    DESO_CHECK(inside, DESO_ESIZE,
               "%s: %lld elements from %lld at stride %lld do not lie inside "
               "x of length %lld (args 2-4)",
               fn, (long long)n, (long long)offset, (long long)stride,
               (long long)len);
    deso__handle *h;
    DESO_TRY(view_new(&x->h, BLAS_VEC, offset, stride, 1, n, false, &h));
    *view = (deso_vec *)h;
    return DESO_OK;
}

deso_err deso__mat_col(deso_mat *a, int64_t j, deso_vec **view)
{
    const char *fn = "deso_mat_col";
    if (view != NULL) *view = NULL;
    DESO_TRY(parent_arg(a ? &a->h : NULL, BLAS_MAT, fn, "A", view));
    int64_t m = a->h.val->m, n = a->h.val->n;
    DESO_CHECK(j >= 0 && j < n, DESO_ESIZE,
               "%s: column %lld (arg 2) of a %lld x %lld matrix", fn,
               (long long)j, (long long)m, (long long)n);
    deso__handle *h;
    DESO_TRY(view_new(&a->h, BLAS_VEC, j * m, 1, 1, m, false, &h));
    *view = (deso_vec *)h;
    return DESO_OK;
}

deso_err deso__mat_cols(deso_mat *a, int64_t j0, int64_t ncols,
                        deso_mat **view)
{
    const char *fn = "deso_mat_cols";
    if (view != NULL) *view = NULL;
    DESO_TRY(parent_arg(a ? &a->h : NULL, BLAS_MAT, fn, "A", view));
    int64_t m = a->h.val->m, n = a->h.val->n;
    DESO_CHECK(j0 >= 0 && j0 <= n, DESO_ESIZE,
               "%s: first column %lld (arg 2) of a %lld x %lld matrix", fn,
               (long long)j0, (long long)m, (long long)n);
    DESO_CHECK(ncols >= 1 && ncols <= n - j0, DESO_ESIZE,
               "%s: %lld columns (arg 3) from column %lld of a %lld x %lld "
               "matrix", fn, (long long)ncols, (long long)j0, (long long)m,
               (long long)n);
    deso__handle *h;
    DESO_TRY(view_new(&a->h, BLAS_MAT, j0 * m, 1, m, ncols, false, &h));
    *view = (deso_mat *)h;
    return DESO_OK;
}

deso_err deso__mat_block(deso_mat *a, int64_t i0, int64_t j0, int64_t m,
                         int64_t n, deso_mat **view)
{
    const char *fn = "deso_mat_block";
    if (view != NULL) *view = NULL;
    DESO_TRY(parent_arg(a ? &a->h : NULL, BLAS_MAT, fn, "A", view));
    int64_t pm = a->h.val->m, pn = a->h.val->n;
    DESO_CHECK(i0 >= 0 && i0 < pm, DESO_ESIZE,
               "%s: first row %lld (arg 2) of a %lld x %lld matrix", fn,
               (long long)i0, (long long)pm, (long long)pn);
    DESO_CHECK(j0 >= 0 && j0 < pn, DESO_ESIZE,
               "%s: first column %lld (arg 3) of a %lld x %lld matrix", fn,
               (long long)j0, (long long)pm, (long long)pn);
    DESO_CHECK(m >= 1 && n >= 1, DESO_ESIZE,
               "%s: an empty block (%lld x %lld, args 4-5): a block view "
               "has at least one row and one column", fn, (long long)m,
               (long long)n);
    DESO_CHECK(m <= pm - i0, DESO_ESIZE,
               "%s: %lld rows (arg 4) from row %lld of a %lld x %lld "
               "matrix", fn, (long long)m, (long long)i0, (long long)pm,
               (long long)pn);
    DESO_CHECK(n <= pn - j0, DESO_ESIZE,
               "%s: %lld columns (arg 5) from column %lld of a %lld x %lld "
               "matrix", fn, (long long)n, (long long)j0, (long long)pm,
               (long long)pn);
    /* whole columns are one run: the column range deso_mat_cols makes   */
    deso__handle *h;
    DESO_TRY(view_new(&a->h, BLAS_MAT, i0 + j0 * pm, 1, m, n, m < pm, &h));
    *view = (deso_mat *)h;
    return DESO_OK;
}
