/* Internal to the recording front ends (record_*.c): argument checks in
 * CBLAS argument order, reporting the first bad argument's position.      */
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

#endif
