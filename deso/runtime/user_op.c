/* User operators (deso.h, "user operators"): the handle with its callback
 * and declared placements, and the recording of y <- op(x) as one node
 * whose placement constraints are the declaration's (blas/table.c's
 * user row; doc/DESIGN.md, "User operators").                           */
#include <stdlib.h>

#include "deso/runtime/runtime.h"
#include "placement/alloc.h"

/* The row block of matrix a's layout as it is now (a view's parent's, a
 * pending matrix's default).                                            */
static int64_t rows_block(const deso_ctx *ctx, const deso_mat *a)
{
    const deso__handle *h = a->h.parent != NULL ? a->h.parent : &a->h;
    const deso__value *v = h->val;
    if (v->views != NULL) return v->views->lay.b;
    return opt_default_mat(&ctx->df, v->m, v->n).b;
}

/* The declaration as the node's flags (and the row block for rows).    */
static deso_err declare(deso_ctx *ctx, int64_t m, int64_t n,
                        deso_op_layout xl, deso_op_layout yl,
                        const deso_mat *rows_of, deso__uop *u)
{
    const char *fn = "deso_op_create";
    DESO_CHECK(xl == DESO_OP_REPLICATED || xl == DESO_OP_LIKE_Y, DESO_EINVAL,
               "%s: x_layout %d (arg 6): expected DESO_OP_REPLICATED or "
               "DESO_OP_LIKE_Y", fn, (int)xl);
    DESO_CHECK(yl == DESO_OP_ANY || yl == DESO_OP_ROWS ||
                   yl == DESO_OP_REPLICATED, DESO_EINVAL,
               "%s: y_layout %d (arg 7): expected DESO_OP_ANY, DESO_OP_ROWS "
               "or DESO_OP_REPLICATED", fn, (int)yl);
    DESO_CHECK(xl != DESO_OP_LIKE_Y || m == n, DESO_ESIZE,
               "%s: x laid out like y needs m == n, not %lld and %lld", fn,
               (long long)m, (long long)n);
    u->flags = xl == DESO_OP_LIKE_Y ? BLAS_F_XLIKE : 0;
    if (yl == DESO_OP_REPLICATED) u->flags |= BLAS_F_YREP;
    if (yl != DESO_OP_ROWS) {
        DESO_CHECK(rows_of == NULL, DESO_EINVAL,
                   "%s: rows_of (arg 8) given, but y_layout is not "
                   "DESO_OP_ROWS", fn);
        return DESO_OK;
    }
    DESO_TRY(deso__handle_check(rows_of ? &rows_of->h : NULL, BLAS_MAT, &ctx,
                                fn, "rows_of (arg 8)"));
    DESO_TRY(deso__value_usable(rows_of->h.val, fn));
    DESO_CHECK(rows_of->h.val->m == m, DESO_ESIZE,
               "%s: rows_of (arg 8) has %lld rows, y has m = %lld", fn,
               (long long)rows_of->h.val->m, (long long)m);
    u->flags |= BLAS_F_YROWS;
    u->rows_b = rows_block(ctx, rows_of);
    return DESO_OK;
}

/* Room for one more operator in ctx->uops.                               */
static deso_err uops_grow(deso_ctx *ctx)
{
    if (ctx->nuops < ctx->uops_cap) return DESO_OK;
    int64_t cap = ctx->uops_cap > 0 ? 2 * ctx->uops_cap : 8;
    deso__uop **a = deso__realloc(ctx->uops, (size_t)cap * sizeof *a);
    DESO_CHECK(a != NULL, DESO_ENOMEM, "deso_op_create: out of memory");
    ctx->uops = a;
    ctx->uops_cap = cap;
    return DESO_OK;
}

/* This rank's checks of deso_op_create's arguments after ctx, and every
 * allocation the operator needs (*u, *shell), so that nothing can fail
 * after the creation's agreement.                                        */
static deso_err op_prepare(deso_ctx *ctx, int64_t m, int64_t n, deso_op_fn fn,
                           void *user, deso_op_layout x_layout,
                           deso_op_layout y_layout, const deso_mat *rows_of,
                           deso_op **op, deso__uop **u, deso__handle **shell)
{
    const char *name = "deso_op_create";
    DESO_CHECK(m >= 0, DESO_ESIZE, "%s: m = %lld < 0 (arg 2)", name,
               (long long)m);
    DESO_CHECK(n >= 0, DESO_ESIZE, "%s: n = %lld < 0 (arg 3)", name,
               (long long)n);
    DESO_CHECK(fn != NULL, DESO_ENULL, "%s: fn is NULL (arg 4)", name);
    deso__uop decl = {.fn = fn, .user = user, .m = m, .n = n};
    DESO_TRY(declare(ctx, m, n, x_layout, y_layout, rows_of, &decl));
    DESO_CHECK(op != NULL, DESO_ENULL, "%s: op is NULL (arg 9)", name);
    DESO_TRY(uops_grow(ctx));
    *u = deso__malloc(sizeof **u);
    *shell = deso__handle_shell();
    DESO_CHECK(*u != NULL && *shell != NULL, DESO_ENOMEM,
               "%s: out of memory", name);
    **u = decl;
    return DESO_OK;
}

/* The creation's one agreement, then the operator made live: every
 * rank's outcome err (u and shell allocated when it is DESO_OK), and
 * whether all declared the same operator (its hash beside its complement:
 * equal everywhere iff max(h) is ~max(~h)); fn and user may differ
 * between ranks.                                                         */
static deso_err op_publish(deso_ctx *ctx, deso_err err, deso__uop *u,
                           deso__handle *shell, deso_op **op,
                           const char *name)
{
    uint64_t h = 0;
    if (err == DESO_OK) {
        const uint64_t v[5] = {(uint64_t)u->m, (uint64_t)u->n, u->flags,
                               (uint64_t)u->rows_b,
                               u->facts != NULL ? u->facts->hash : 0};
        for (int k = 0; k < 5; k++) {
            h = (h ^ v[k]) * 0x9e3779b97f4a7c15ull;
            h ^= h >> 29;
        }
    }
    int64_t flags[2] = {(int64_t)h, (int64_t)~h};
    err = deso__agree_counted(ctx, name, err, flags, 2);
    if (err == DESO_OK && flags[0] != ~flags[1])
        err = deso__fail(DESO_EMISMATCH,
                         "%s: the ranks declared different operators (m, "
                         "n, layouts or rows_of)", name);
    if (err != DESO_OK) {
        free(u);
        free(shell);
        return err;
    }
    u->num = ctx->nuops;
    deso__handle_attach_op(ctx, u, shell);
    /* a rank that declared otherwise records other nodes: the force's
     * SPMD check sees it                                                 */
    deso__hash_mix(ctx, ((uint64_t)u->flags << 32) ^ (uint64_t)u->rows_b);
    ctx->uops[ctx->nuops++] = u;
    *op = (deso_op *)shell;
    return DESO_OK;
}

deso_err deso__op_create(deso_ctx *ctx, int64_t m, int64_t n, deso_op_fn fn,
                         void *user, deso_op_layout x_layout,
                         deso_op_layout y_layout, const deso_mat *rows_of,
                         deso_op **op)
{
    const char *name = "deso_op_create";
    if (op != NULL) *op = NULL;
    DESO_TRY(deso__ctx_check(ctx, name));
    deso__uop *u = NULL;
    deso__handle *shell = NULL;
    deso_err err = op_prepare(ctx, m, n, fn, user, x_layout, y_layout,
                              rows_of, op, &u, &shell);
    return op_publish(ctx, err, u, shell, op, name);
}

/* deso_op_create_spmat's checks and allocations (op_prepare's).         */
static deso_err op_prepare_spmat(deso_ctx *ctx, deso_op_fn fn, void *user,
                                 const deso_spmat *rows_of, deso_op **op,
                                 deso__uop **u, deso__handle **shell)
{
    const char *name = "deso_op_create_spmat";
    DESO_CHECK(fn != NULL, DESO_ENULL, "%s: fn is NULL (arg 2)", name);
    DESO_TRY(deso__handle_check(rows_of ? &rows_of->h : NULL, DESO__SPMAT,
                                &ctx, name, "rows_of (arg 4)"));
    DESO_CHECK(op != NULL, DESO_ENULL, "%s: op is NULL (arg 5)", name);
    const deso__spmat_data *sp = rows_of->h.sp;
    DESO_TRY(uops_grow(ctx));
    *u = deso__malloc(sizeof **u);
    *shell = deso__handle_shell();
    DESO_CHECK(*u != NULL && *shell != NULL, DESO_ENOMEM,
               "%s: out of memory", name);
    **u = (deso__uop){.fn = fn, .user = user, .m = sp->m, .n = sp->m,
                      .flags = BLAS_F_XLIKE | BLAS_F_YPART,
                      .facts = sp->facts};
    return DESO_OK;
}

deso_err deso__op_create_spmat(deso_ctx *ctx, deso_op_fn fn, void *user,
                               const deso_spmat *rows_of, deso_op **op)
{
    const char *name = "deso_op_create_spmat";
    if (op != NULL) *op = NULL;
    DESO_TRY(deso__ctx_check(ctx, name));
    deso__uop *u = NULL;
    deso__handle *shell = NULL;
    deso_err err = op_prepare_spmat(ctx, fn, user, rows_of, op, &u, &shell);
    return op_publish(ctx, err, u, shell, op, name);
}

/* x or y of an apply: a live, usable vector of exactly len elements.    */
static deso_err vec_of_len(const deso_vec *x, int64_t len, deso_ctx **ctx,
                           const char *name, int pos)
{
    const char *fn = "deso_op_apply";
    DESO_TRY(deso__handle_check(x ? &x->h : NULL, BLAS_VEC, ctx, fn, name));
    DESO_TRY(deso__value_usable(x->h.val, fn));
    DESO_CHECK(x->h.val->n == len, DESO_ESIZE,
               "%s: %s (arg %d) has length %lld, the operator's is %lld", fn,
               name, pos, (long long)x->h.val->n, (long long)len);
    return DESO_OK;
}

deso_err deso__op_apply(deso_op *op, const deso_vec *x, deso_vec *y)
{
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__handle_check(op ? &op->h : NULL, DESO__OP, &ctx,
                                "deso_op_apply", "op (arg 1)"));
    const deso__uop *u = op->h.uop;
    DESO_TRY(vec_of_len(x, u->n, &ctx, "x", 2));
    DESO_TRY(vec_of_len(y, u->m, &ctx, "y", 3));
    deso__arg a[2];
    DESO_TRY(deso__arg_open(ctx, &x->h, u->n, 1, DESO__IN, &a[0]));
    deso_err err = deso__arg_open(ctx, &y->h, u->m, 1, DESO__OUT, &a[1]);
    if (err != DESO_OK) return deso__args_finish(ctx, a, 1, err);
    blas_desc d = {.op = BLAS_OP_USER, .flags = u->flags, .nops = 1,
                   .off = u->num, .inc = u->rows_b, .len = u->m,
                   .sp = u->facts};
    deso__value *ops[1] = {a[0].h->val};
    uint64_t ids[1] = {x->h.id};
    int64_t shape[2] = {1, u->m};
    err = deso__record_desc(ctx, &d, ops, ids, a[1].h, shape);
    return deso__args_finish(ctx, a, 2, err);
}
