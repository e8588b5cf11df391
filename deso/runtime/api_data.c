/* The public functions of data.c and force.c: each calls its
 * implementation and hands an error to the context's handler (api.h).    */
#include "deso/runtime/runtime.h"

deso_err deso_plan_explain(const deso_ctx *ctx, FILE *f)
{
    deso_err e = deso__plan_explain(ctx, f);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_plan_explain", e);
    return e;
}

deso_err deso_vec_create(deso_ctx *ctx, int64_t n, deso_vec **x)
{
    deso_err e = deso__vec_create(ctx, n, x);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_vec_create", e);
    return e;
}

deso_err deso_vec_from_array(deso_ctx *ctx, int64_t n, const double *data,
                             int root, deso_vec **x)
{
    deso_err e = deso__vec_from_array(ctx, n, data, root, x);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_vec_from_array", e);
    return e;
}

deso_err deso_vec_from_fn(deso_ctx *ctx, int64_t n, deso_vec_fn f, void *arg,
                          deso_vec **x)
{
    deso_err e = deso__vec_from_fn(ctx, n, f, arg, x);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_vec_from_fn", e);
    return e;
}

deso_err deso_vec_gather(const deso_vec *x, double *buf, int root)
{
    deso_err e = deso__vec_gather(x, buf, root);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(x), "deso_vec_gather", e);
    return e;
}

deso_err deso_vec_get(const deso_vec *x, int64_t i, double *value)
{
    deso_err e = deso__vec_get(x, i, value);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(x), "deso_vec_get", e);
    return e;
}

deso_err deso_mat_create(deso_ctx *ctx, int64_t m, int64_t n, deso_mat **a)
{
    deso_err e = deso__mat_create(ctx, m, n, a);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_mat_create", e);
    return e;
}

deso_err deso_mat_from_array(deso_ctx *ctx, int64_t m, int64_t n,
                             const double *a, int64_t lda, int root,
                             deso_mat **out)
{
    deso_err e = deso__mat_from_array(ctx, m, n, a, lda, root, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_mat_from_array", e);
    return e;
}

deso_err deso_mat_from_fn(deso_ctx *ctx, int64_t m, int64_t n, deso_mat_fn f,
                          void *arg, deso_mat **out)
{
    deso_err e = deso__mat_from_fn(ctx, m, n, f, arg, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_mat_from_fn", e);
    return e;
}

deso_err deso_mat_gather(const deso_mat *a, double *buf, int64_t ld, int root)
{
    deso_err e = deso__mat_gather(a, buf, ld, root);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_mat_gather", e);
    return e;
}

deso_err deso_scalar_create(deso_ctx *ctx, double value, deso_scalar **s)
{
    deso_err e = deso__scalar_create(ctx, value, s);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_scalar_create", e);
    return e;
}

deso_err deso_scalar_get(const deso_scalar *s, double *value)
{
    deso_err e = deso__scalar_get(s, value);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(s), "deso_scalar_get", e);
    return e;
}
