/* The public functions of spmat.c, spmat_data.c and record_sparse.c:
 * each calls its implementation and hands an error to the context's
 * handler (api.h).                                                       */
#include "deso/runtime/runtime.h"

deso_err deso_spmat_from_csr(deso_ctx *ctx, int64_t m, int64_t n,
                             const int64_t *rowptr, const int64_t *col,
                             const double *val, int root, deso_spmat **out)
{
    deso_err e = deso__spmat_from_csr(ctx, m, n, rowptr, col, val, root, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_spmat_from_csr", e);
    return e;
}

deso_err deso_spmat_from_rows(deso_ctx *ctx, int64_t m, int64_t n,
                              int64_t row0, int64_t nrows,
                              const int64_t *rowptr, const int64_t *col,
                              const double *val, deso_spmat **out)
{
    deso_err e = deso__spmat_from_rows(ctx, m, n, row0, nrows, rowptr, col,
                                       val, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_spmat_from_rows", e);
    return e;
}

deso_err deso_spmat_from_gen(deso_ctx *ctx, const char *spec,
                             deso_spmat **out)
{
    deso_err e = deso__spmat_from_gen(ctx, spec, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_spmat_from_gen", e);
    return e;
}

deso_err deso_spmat_set_values(deso_spmat *a, const double *val, int root)
{
    deso_err e = deso__spmat_set_values(a, val, root);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_spmat_set_values", e);
    return e;
}

deso_err deso_spmat_shape(const deso_spmat *a, int64_t *m, int64_t *n,
                          int64_t *nnz)
{
    deso_err e = deso__spmat_shape(a, m, n, nnz);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_spmat_shape", e);
    return e;
}

deso_err deso_spmat_local(const deso_spmat *a, int64_t *row0,
                          int64_t *nrows, int64_t *nnz)
{
    deso_err e = deso__spmat_local(a, row0, nrows, nnz);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_spmat_local", e);
    return e;
}

deso_err deso_spmat_placement(const deso_spmat *a, deso_partition *placed)
{
    deso_err e = deso__spmat_placement(a, placed);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_spmat_placement", e);
    return e;
}

deso_err deso_spmat_local_rows(const deso_spmat *a, int64_t *rowptr,
                               int64_t *col, double *val)
{
    deso_err e = deso__spmat_local_rows(a, rowptr, col, val);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_spmat_local_rows", e);
    return e;
}

deso_err deso_spmat_gather(const deso_spmat *a, int64_t *rowptr,
                           int64_t *col, double *val, int root)
{
    deso_err e = deso__spmat_gather(a, rowptr, col, val, root);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_spmat_gather", e);
    return e;
}

deso_err deso_dusmv_arg(deso_ctx *ctx, deso_trans trans, deso_sarg alpha,
                        const deso_spmat *a, const deso_vec *x,
                        deso_sarg beta, deso_vec *y)
{
    deso_err e = deso__dusmv_arg(ctx, trans, alpha, a, x, beta, y);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(6, DESO__CTX(ctx), DESO__CTX(alpha),
                                    DESO__CTX(a), DESO__CTX(x),
                                    DESO__CTX(beta), DESO__CTX(y)),
                        "deso_dusmv", e);
    return e;
}
