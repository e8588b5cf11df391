/* The public functions of api_more.h's implementations: each calls its
 * implementation and hands an error to the context's handler (api.h).    */
#include "deso/runtime/runtime.h"
#include "deso/runtime/api_more.h"

deso_err deso_drot_arg(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                       int64_t incy, deso_sarg c, deso_sarg s)
{
    deso_err e = deso__drot_arg(n, x, incx, y, incy, c, s);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(4, DESO__CTX(x), DESO__CTX(y),
                                    DESO__CTX(c), DESO__CTX(s)),
                        "deso_drot", e);
    return e;
}

deso_err deso_drotm(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy, const double param[5])
{
    deso_err e = deso__drotm(n, x, incx, y, incy, param);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(y)),
                        "deso_drotm", e);
    return e;
}

deso_err deso_dvdiv(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    deso_err e = deso__dvdiv(n, x, incx, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(y)),
                        "deso_dvdiv", e);
    return e;
}

deso_err deso_dvrecip(int64_t n, const deso_vec *x, int64_t incx,
                      deso_vec *y, int64_t incy)
{
    deso_err e = deso__dvrecip(n, x, incx, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(y)),
                        "deso_dvrecip", e);
    return e;
}

deso_err deso_dvabs(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    deso_err e = deso__dvabs(n, x, incx, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(y)),
                        "deso_dvabs", e);
    return e;
}

deso_err deso_smax_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    deso_err e = deso__smax_arg(out, a, b);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(out), DESO__CTX(a),
                                    DESO__CTX(b)), "deso_smax", e);
    return e;
}

deso_err deso_smin_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    deso_err e = deso__smin_arg(out, a, b);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(out), DESO__CTX(a),
                                    DESO__CTX(b)), "deso_smin", e);
    return e;
}

deso_err deso_dtrmv(deso_order order, deso_uplo uplo, deso_trans trans,
                    deso_diag diag, int64_t n, const deso_mat *a, int64_t lda,
                    deso_vec *x, int64_t incx)
{
    deso_err e = deso__dtrmv(order, uplo, trans, diag, n, a, lda, x, incx);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(a), DESO__CTX(x)),
                        "deso_dtrmv", e);
    return e;
}

deso_err deso_dsyr_arg(deso_order order, deso_uplo uplo, int64_t n,
                       deso_sarg alpha, const deso_vec *x, int64_t incx,
                       deso_mat *a, int64_t lda)
{
    deso_err e = deso__dsyr_arg(order, uplo, n, alpha, x, incx, a, lda);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(alpha), DESO__CTX(x),
                                    DESO__CTX(a)), "deso_dsyr", e);
    return e;
}

deso_err deso_dsyr2_arg(deso_order order, deso_uplo uplo, int64_t n,
                        deso_sarg alpha, const deso_vec *x, int64_t incx,
                        const deso_vec *y, int64_t incy, deso_mat *a,
                        int64_t lda)
{
    deso_err e = deso__dsyr2_arg(order, uplo, n, alpha, x, incx, y, incy, a,
                                 lda);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(4, DESO__CTX(alpha), DESO__CTX(x),
                                    DESO__CTX(y), DESO__CTX(a)),
                        "deso_dsyr2", e);
    return e;
}

deso_err deso_vec_view(deso_vec *x, int64_t offset, int64_t n,
                       int64_t stride, deso_vec **view)
{
    deso_err e = deso__vec_view(x, offset, n, stride, view);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(1, DESO__CTX(x)), "deso_vec_view", e);
    return e;
}

deso_err deso_mat_col(deso_mat *a, int64_t j, deso_vec **view)
{
    deso_err e = deso__mat_col(a, j, view);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(1, DESO__CTX(a)), "deso_mat_col", e);
    return e;
}

deso_err deso_mat_cols(deso_mat *a, int64_t j0, int64_t ncols,
                       deso_mat **view)
{
    deso_err e = deso__mat_cols(a, j0, ncols, view);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(1, DESO__CTX(a)), "deso_mat_cols", e);
    return e;
}

deso_err deso_mat_block(deso_mat *a, int64_t i0, int64_t j0, int64_t m,
                        int64_t n, deso_mat **view)
{
    deso_err e = deso__mat_block(a, i0, j0, m, n, view);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(1, DESO__CTX(a)), "deso_mat_block", e);
    return e;
}
