/* Values made for the caller: a vector like another (PETSc's
 * VecDuplicate), and reductions into a scalar they create.  Recorded like
 * the calls they build on; nothing here forces.                          */
#include <stdio.h>
#include <string.h>

#include "deso/runtime/record.h"

static deso_err vec_duplicate(const deso_vec *x, deso_vec **y)
{
    const char *fn = "deso_vec_duplicate";
    DESO_CHECK(y != NULL, DESO_ENULL, "%s: y is NULL (arg 2)", fn);
    *y = NULL;
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__handle_check(x ? &x->h : NULL, BLAS_VEC, &ctx, fn, "x"));
    return deso__vec_create(ctx, x->h.val->n, y);
}

deso_err deso_vec_duplicate(const deso_vec *x, deso_vec **y)
{
    deso_err e = vec_duplicate(x, y);
    return e == DESO_OK ? e
                        : deso__raise(deso__vec_ctx(x), "deso_vec_duplicate",
                                      e);
}

/* The reduction `op` of deso__ddot's argument list into a new scalar.     */
typedef deso_err (*reduce_fn)(int64_t n, const deso_vec *x, int64_t incx,
                              const deso_vec *y, int64_t incy,
                              deso_scalar *result);

static deso_err ddot_into(int64_t n, const deso_vec *x, int64_t incx,
                      const deso_vec *y, int64_t incy, deso_scalar *r)
{
    return deso__ddot(n, x, incx, y, incy, r);
}

static deso_err dnrm2_into(int64_t n, const deso_vec *x, int64_t incx,
                       const deso_vec *y, int64_t incy, deso_scalar *r)
{
    (void)y;
    (void)incy;
    return deso__dnrm2(n, x, incx, r);
}

static deso_err dasum_into(int64_t n, const deso_vec *x, int64_t incx,
                       const deso_vec *y, int64_t incy, deso_scalar *r)
{
    (void)y;
    (void)incy;
    return deso__dasum(n, x, incx, r);
}

static deso_err idamax_into(int64_t n, const deso_vec *x, int64_t incx,
                        const deso_vec *y, int64_t incy, deso_scalar *r)
{
    (void)y;
    (void)incy;
    return deso__idamax(n, x, incx, r);
}

/* The message of a refused reduction names the call the user made.       */
static deso_err renamed(deso_err err, const char *inner, const char *fn)
{
    const char *msg = deso_last_error();
    size_t len = strlen(inner);
    if (strncmp(msg, inner, len) != 0 || msg[len] != ':') return err;
    char rest[512];
    snprintf(rest, sizeof rest, "%s", msg + len);
    return deso__fail(err, "%s%s", fn, rest);
}

/* The scalar is made only once x names a context, and destroyed again if
 * the reduction is refused, so that a failed call leaves nothing behind
 * and *result NULL.                                                       */
static deso_err reduce_new(reduce_fn f, const char *fn, int pos, int64_t n,
                           const deso_vec *x, int64_t incx, const deso_vec *y,
                           int64_t incy, deso_scalar **result)
{
    DESO_CHECK(result != NULL, DESO_ENULL, "%s: result is NULL (arg %d)", fn,
               pos);
    *result = NULL;
    DESO_TRY(deso__n_arg(n, fn, 1));
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__handle_check(x ? &x->h : NULL, BLAS_VEC, &ctx, fn, "x"));
    deso_scalar *s = NULL;
    DESO_TRY(deso__scalar_create(ctx, 0.0, &s));
    deso_err err = f(n, x, incx, y, incy, s);
    if (err != DESO_OK) {
        deso__handle_destroy(&s->h, fn);
        /* "deso_ddot_new" less "_new"                                   */
        char inner[32];
        snprintf(inner, sizeof inner, "%.*s", (int)(strlen(fn) - 4), fn);
        return renamed(err, inner, fn);
    }
    *result = s;
    return DESO_OK;
}

#define REACH(x, y) deso__reach(2, deso__vec_ctx(x), deso__vec_ctx(y))

deso_err deso_ddot_new(int64_t n, const deso_vec *x, int64_t incx,
                       const deso_vec *y, int64_t incy, deso_scalar **result)
{
    const char *fn = "deso_ddot_new";
    deso_err e = reduce_new(ddot_into, fn, 6, n, x, incx, y, incy, result);
    return e == DESO_OK ? e : deso__raise(REACH(x, y), fn, e);
}

deso_err deso_dnrm2_new(int64_t n, const deso_vec *x, int64_t incx,
                        deso_scalar **result)
{
    const char *fn = "deso_dnrm2_new";
    deso_err e = reduce_new(dnrm2_into, fn, 4, n, x, incx, NULL, 1, result);
    return e == DESO_OK ? e : deso__raise(deso__vec_ctx(x), fn, e);
}

deso_err deso_dasum_new(int64_t n, const deso_vec *x, int64_t incx,
                        deso_scalar **result)
{
    const char *fn = "deso_dasum_new";
    deso_err e = reduce_new(dasum_into, fn, 4, n, x, incx, NULL, 1, result);
    return e == DESO_OK ? e : deso__raise(deso__vec_ctx(x), fn, e);
}

deso_err deso_idamax_new(int64_t n, const deso_vec *x, int64_t incx,
                         deso_scalar **result)
{
    const char *fn = "deso_idamax_new";
    deso_err e = reduce_new(idamax_into, fn, 4, n, x, incx, NULL, 1, result);
    return e == DESO_OK ? e : deso__raise(deso__vec_ctx(x), fn, e);
}
