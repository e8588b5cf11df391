/* Internal to the recording front ends (record_*.c, and their public
 * wrappers in api_record.c for the quick path): argument checks in CBLAS
 * argument order, reporting the first bad argument's position.          */
#ifndef DESO_RECORD_H
#define DESO_RECORD_H

#include <stddef.h>

#include "deso/runtime/runtime.h"

/* x must be a live vector of this context holding n elements at stride
 * inc: 1 + (n - 1) |inc| of them at least (reference BLAS's rule for the
 * array), inc != 0.                                                      */
static inline deso_err deso__vec_arg(const deso_vec *x, int64_t n,
                                     int64_t inc, deso_ctx **ctx,
                                     const char *fn, const char *name,
                                     int pos)
{
    DESO_TRY(deso__handle_check(x ? &x->h : NULL, BLAS_VEC, ctx, fn, name));
    DESO_TRY(deso__value_usable(x->h.val, fn));
    DESO_CHECK(inc != 0, DESO_EINVAL, "%s: increment 0 for %s (arg %d)", fn,
               name, pos + 1);
    int64_t len = x->h.val->n;
    uint64_t step = inc < 0 ? -(uint64_t)inc : (uint64_t)inc;
    bool fits = n <= 0 || (n <= len && (uint64_t)(n - 1) <=
                                          (uint64_t)(len - 1) / step);
    DESO_CHECK(fits, DESO_ESIZE,
               "%s: n = %lld at increment %lld does not fit %s (arg %d) of "
               "length %lld",
               fn, (long long)n, (long long)inc, name, pos, (long long)len);
    return DESO_OK;
}

static inline deso_err deso__sca_out(const deso_scalar *s, deso_ctx **ctx,
                                     const char *fn, int pos)
{
    (void)pos;
    DESO_TRY(deso__handle_check(s ? &s->h : NULL, BLAS_SCA, ctx, fn,
                                "result"));
    return DESO_OK;
}

/* A lazy scalar argument must be live, of this context and usable.        */
static inline deso_err deso__sarg_check(deso_sarg a, deso_ctx **ctx,
                                        const char *fn, const char *name)
{
    if (!a.lazy) return DESO_OK;
    DESO_CHECK(a.s != NULL, DESO_ENULL, "%s: %s is NULL", fn, name);
    DESO_TRY(deso__handle_check(&a.s->h, BLAS_SCA, ctx, fn, name));
    return deso__value_usable(a.s->h.val, fn);
}

/* Frees v if nothing references it: a constant made for an argument of a
 * call that then failed (deso__record does this for its operands).      */
void deso__value_sink(deso__value *v);

/* Undoes the last deso__record, whose result is out's value: out points at
 * old again and the running hash is restored.  False (nothing done) when
 * that node is gone already (the DAG's size bound forced it).          */
bool deso__record_undo(deso_ctx *ctx, deso__handle *out, deso__value *old,
                       uint64_t hash);

/* A call that writes x and y from both their old versions as two nodes
 * (dswap's two copies, a rotation's two rot nodes): node k (0: into x,
 * 1: into y) is recorded by fn with the arguments' handles, their old
 * values (kept referenced while both nodes are recorded) and the user
 * handles' ids.  All or nothing: a failed second node undoes the first. */
typedef struct deso__pair {
    deso__handle *out[2];
    deso__value *old[2];
    uint64_t id[2];
} deso__pair;
typedef deso_err (*deso__pair_fn)(deso_ctx *ctx, const deso__pair *p, int k,
                                  const void *arg);
deso_err deso__record_pair(deso_ctx *ctx, int64_t n, deso_vec *x,
                           int64_t incx, deso_vec *y, int64_t incy,
                           deso__pair_fn fn, const void *arg);

static inline deso_err deso__n_arg(int64_t n, const char *fn, int pos)
{
    DESO_CHECK(n >= 0, DESO_ESIZE, "%s: n = %lld < 0 (arg %d)", fn,
               (long long)n, pos);
    return DESO_OK;
}

/* ---- the quick path while a replay is armed --------------------------- *
 * A replayed call costs a compare and a store (replay.h); validating it
 * through the checks below, opening its arguments and building the
 * node's description cost several times that.  So when the handle of
 * its result reaches a context with a replay armed (DESO__QUICK), a
 * common public function (api_record.c) first checks its arguments in
 * their common form (a whole handle of the right kind of that context,
 * readable, not a view; a constant the context keeps already) and hands
 * the operands to deso__replay_quick (its deso__*_quick, api.h).  Any
 * argument out of that form, or any call that is not the next expected
 * one, takes the ordinary way, which validates, names the first bad
 * argument and breaks the replay as before.  Unarmed, the quick path
 * costs a few loads at the top of the public function.                 */

/* h's context, when h looks like a live handle of a live context with a
 * replay armed; else NULL (then nothing more is looked at).             */
static inline deso_ctx *deso__quick_ctx(const deso__handle *h)
{
    if (h == NULL || h->magic != DESO__MAGIC_LIVE || h->ctx == NULL ||
        h->ctx->magic != DESO__MAGIC_CTX || h->ctx->rp == NULL)
        return NULL;
    return h->ctx;
}

/* The same from a result argument (a vector or scalar pointer).         */
#define DESO__QUICK(x) deso__quick_ctx((x) != NULL ? &(x)->h : NULL)

/* h is a live handle of kind `kind` in ctx, not a view (what
 * deso__handle_check accepts without its full check).                   */
static inline bool deso__quick_handle(const deso__handle *h, blas_kind kind,
                                      const deso_ctx *ctx)
{
    return h != NULL && h->magic == DESO__MAGIC_LIVE && h->kind == kind &&
           h->parent == NULL && h->ctx == ctx;
}

/* x is read or written whole (n elements at stride 1) and is readable:
 * what deso__vec_arg accepts and deso__arg_open takes as it is.         */
static inline bool deso__quick_vec(const deso_vec *x, int64_t n, int64_t inc,
                                   const deso_ctx *ctx, deso__value **v,
                                   uint64_t *id)
{
    if (x == NULL || !deso__quick_handle(&x->h, BLAS_VEC, ctx) || inc != 1 ||
        x->h.val->n != n || x->h.val->poison != DESO_OK)
        return false;
    *v = x->h.val;
    *id = x->h.id;
    return true;
}

/* The kept constant with x's bits (-0.0 is not 0.0), or NULL (dag.c).    */
deso__value *deso__const_find(const deso_ctx *ctx, double x);

/* A scalar argument as deso__sarg_value gives it, when that can neither
 * fail nor make a constant.                                             */
static inline bool deso__quick_sarg(deso_sarg a, const deso_ctx *ctx,
                                    deso__value **v, uint64_t *id)
{
    if (!a.lazy) {
        *id = 0;
        *v = deso__const_find(ctx, a.v);
        return *v != NULL && (*v)->poison == DESO_OK;
    }
    if (!deso__quick_handle(a.s ? &a.s->h : NULL, BLAS_SCA, ctx) ||
        a.s->h.val->poison != DESO_OK)
        return false;
    *v = a.s->h.val;
    *id = a.s->h.id;
    return true;
}

#endif
