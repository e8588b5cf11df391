/* The I/O layer's public functions: each calls its implementation and
 * hands an error to the context's handler (deso/runtime/api.h).          */
#include "deso/io/api_io.h"
#include "deso/runtime/ooc.h"

deso_err deso_log_view(deso_ctx *ctx, FILE *f)
{
    deso_err e = deso__log_view(ctx, f);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_log_view", e);
    return e;
}

deso_err deso_wisdom_export(deso_ctx *ctx, const char *path)
{
    deso_err e = deso__wisdom_export(ctx, path);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_wisdom_export", e);
    return e;
}

deso_err deso_wisdom_import(deso_ctx *ctx, const char *path)
{
    deso_err e = deso__wisdom_import(ctx, path);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_wisdom_import", e);
    return e;
}

deso_err deso_mat_from_mtx(deso_ctx *ctx, const char *path, deso_mat **out)
{
    deso_err e = deso__mat_from_mtx(ctx, path, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_mat_from_mtx", e);
    return e;
}

deso_err deso_spmat_from_mtx(deso_ctx *ctx, const char *path,
                             deso_spmat **out)
{
    deso_err e = deso__spmat_from_mtx(ctx, path, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_spmat_from_mtx", e);
    return e;
}

deso_err deso_mat_diag(const deso_mat *a, deso_vec *d)
{
    deso_err e = deso__mat_diag(a, d);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(a), DESO__CTX(d)),
                                    "deso_mat_diag", e);
    return e;
}

deso_err deso_blacs_context(deso_ctx *ctx, int *ctxt)
{
    deso_err e = deso__blacs_context(ctx, ctxt);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_blacs_context", e);
    return e;
}

deso_err deso_mat_from_scalapack(deso_ctx *ctx, double *local,
                                 const int desc[9], deso_copy_mode mode,
                                 deso_mat **out)
{
    deso_err e = deso__mat_from_scalapack(ctx, local, desc, mode, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_mat_from_scalapack", e);
    return e;
}

deso_err deso_vec_from_scalapack(deso_ctx *ctx, double *local,
                                 const int desc[9], deso_copy_mode mode,
                                 deso_vec **out)
{
    deso_err e = deso__vec_from_scalapack(ctx, local, desc, mode, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_vec_from_scalapack", e);
    return e;
}

deso_err deso_mat_to_scalapack(const deso_mat *a, int ctxt, int64_t mb,
                               int64_t nb, deso_copy_mode mode, int desc[9],
                               double **local)
{
    deso_err e = deso__mat_to_scalapack(a, ctxt, mb, nb, mode, desc, local);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_mat_to_scalapack", e);
    return e;
}

deso_err deso_vec_to_scalapack(const deso_vec *x, int ctxt, int64_t mb,
                               deso_copy_mode mode, int desc[9],
                               double **local)
{
    deso_err e = deso__vec_to_scalapack(x, ctxt, mb, mode, desc, local);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(x), "deso_vec_to_scalapack", e);
    return e;
}

deso_err deso_mat_read_rate(const deso_mat *a, double *bytes_per_sec)
{
    deso_err e = deso__mat_read_rate(a, bytes_per_sec);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_mat_read_rate", e);
    return e;
}

deso_err deso_mat_to_file(const deso_mat *a, const char *path)
{
    deso_err e = deso__mat_to_file(a, path);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(a), "deso_mat_to_file", e);
    return e;
}

deso_err deso_mat_from_file(deso_ctx *ctx, const char *path, deso_mat **out)
{
    deso_err e = deso__mat_from_file(ctx, path, out);
    if (e != DESO_OK)
        e = deso__raise(DESO__CTX(ctx), "deso_mat_from_file", e);
    return e;
}
