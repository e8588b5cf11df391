/* The public recording functions (record_*.c): each calls its
 * implementation and hands an error to the context's handler (api.h).
 * While a replay is armed, the common ones try their quick path first
 * (record.h), which replays the call when it is the next expected one. */
#include "deso/runtime/record.h"

deso_err deso_sadd_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    deso_ctx *q = DESO__QUICK(out);
    if (q != NULL && deso__binop_quick(q, BLAS_OP_SADD, out, a, b, 2))
        return DESO_OK;
    deso_err e = deso__sadd_arg(out, a, b);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(out), DESO__CTX(a),
                                    DESO__CTX(b)), "deso_sadd", e);
    return e;
}

deso_err deso_ssub_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    deso_ctx *q = DESO__QUICK(out);
    if (q != NULL && deso__binop_quick(q, BLAS_OP_SSUB, out, a, b, 2))
        return DESO_OK;
    deso_err e = deso__ssub_arg(out, a, b);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(out), DESO__CTX(a),
                                    DESO__CTX(b)), "deso_ssub", e);
    return e;
}

deso_err deso_smul_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    deso_ctx *q = DESO__QUICK(out);
    if (q != NULL && deso__binop_quick(q, BLAS_OP_SMUL, out, a, b, 2))
        return DESO_OK;
    deso_err e = deso__smul_arg(out, a, b);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(out), DESO__CTX(a),
                                    DESO__CTX(b)), "deso_smul", e);
    return e;
}

deso_err deso_sdiv_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    deso_ctx *q = DESO__QUICK(out);
    if (q != NULL && deso__binop_quick(q, BLAS_OP_SDIV, out, a, b, 2))
        return DESO_OK;
    deso_err e = deso__sdiv_arg(out, a, b);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(out), DESO__CTX(a),
                                    DESO__CTX(b)), "deso_sdiv", e);
    return e;
}

deso_err deso_ssqrt_arg(deso_scalar *out, deso_sarg a)
{
    deso_ctx *q = DESO__QUICK(out);
    if (q != NULL && deso__binop_quick(q, BLAS_OP_SSQRT, out, a, a, 1))
        return DESO_OK;
    deso_err e = deso__ssqrt_arg(out, a);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(out), DESO__CTX(a)),
                                    "deso_ssqrt", e);
    return e;
}

deso_err deso_sneg_arg(deso_scalar *out, deso_sarg a)
{
    deso_ctx *q = DESO__QUICK(out);
    if (q != NULL && deso__binop_quick(q, BLAS_OP_SNEG, out, a, a, 1))
        return DESO_OK;
    deso_err e = deso__sneg_arg(out, a);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(out), DESO__CTX(a)),
                                    "deso_sneg", e);
    return e;
}

deso_err deso_sset_arg(deso_scalar *out, deso_sarg a)
{
    deso_err e = deso__sset_arg(out, a);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(out), DESO__CTX(a)),
                                    "deso_sset", e);
    return e;
}

deso_err deso_dcopy(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    deso_ctx *q = DESO__QUICK(y);
    if (q != NULL &&
        deso__l1_quick(q, BLAS_OP_COPY, n, NULL, x, incx, y, incy))
        return DESO_OK;
    deso_err e = deso__dcopy(n, x, incx, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(y)),
                                    "deso_dcopy", e);
    return e;
}

deso_err deso_dswap(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    deso_err e = deso__dswap(n, x, incx, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(y)),
                                    "deso_dswap", e);
    return e;
}

deso_err deso_dscal_arg(int64_t n, deso_sarg alpha, deso_vec *x, int64_t incx)
{
    deso_ctx *q = DESO__QUICK(x);
    if (q != NULL &&
        deso__l1_quick(q, BLAS_OP_SCAL, n, &alpha, NULL, 1, x, incx))
        return DESO_OK;
    deso_err e = deso__dscal_arg(n, alpha, x, incx);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(alpha), DESO__CTX(x)),
                                    "deso_dscal", e);
    return e;
}

deso_err deso_daxpy_arg(int64_t n, deso_sarg alpha, const deso_vec *x,
                        int64_t incx, deso_vec *y, int64_t incy)
{
    deso_ctx *q = DESO__QUICK(y);
    if (q != NULL &&
        deso__l1_quick(q, BLAS_OP_AXPY, n, &alpha, x, incx, y, incy))
        return DESO_OK;
    deso_err e = deso__daxpy_arg(n, alpha, x, incx, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(alpha), DESO__CTX(x),
                                    DESO__CTX(y)), "deso_daxpy", e);
    return e;
}

deso_err deso_daxpby_arg(int64_t n, deso_sarg alpha, const deso_vec *x,
                         int64_t incx, deso_sarg beta, deso_vec *y,
                         int64_t incy)
{
    deso_err e = deso__daxpby_arg(n, alpha, x, incx, beta, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(4, DESO__CTX(alpha), DESO__CTX(x),
                                    DESO__CTX(beta), DESO__CTX(y)),
                                    "deso_daxpby", e);
    return e;
}

deso_err deso_ddot(int64_t n, const deso_vec *x, int64_t incx,
                   const deso_vec *y, int64_t incy, deso_scalar *result)
{
    deso_ctx *q = DESO__QUICK(result);
    if (q != NULL &&
        deso__reduce_quick(q, BLAS_OP_DOT, true, n, x, incx, y, incy, result))
        return DESO_OK;
    deso_err e = deso__ddot(n, x, incx, y, incy, result);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(x), DESO__CTX(y),
                                    DESO__CTX(result)), "deso_ddot", e);
    return e;
}

deso_err deso_dnrm2(int64_t n, const deso_vec *x, int64_t incx,
                    deso_scalar *result)
{
    deso_ctx *q = DESO__QUICK(result);
    if (q != NULL && deso__reduce_quick(q, BLAS_OP_NRM2, false, n, x, incx,
                                        NULL, 1, result))
        return DESO_OK;
    deso_err e = deso__dnrm2(n, x, incx, result);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(result)),
                                    "deso_dnrm2", e);
    return e;
}

deso_err deso_dasum(int64_t n, const deso_vec *x, int64_t incx,
                    deso_scalar *result)
{
    deso_err e = deso__dasum(n, x, incx, result);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(result)),
                                    "deso_dasum", e);
    return e;
}

deso_err deso_idamax(int64_t n, const deso_vec *x, int64_t incx,
                     deso_scalar *result)
{
    deso_err e = deso__idamax(n, x, incx, result);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(result)),
                                    "deso_idamax", e);
    return e;
}

deso_err deso_dvmul(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    deso_err e = deso__dvmul(n, x, incx, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(x), DESO__CTX(y)),
                                    "deso_dvmul", e);
    return e;
}

deso_err deso_dgemv_arg(deso_order order, deso_trans trans, int64_t m,
                        int64_t n, deso_sarg alpha, const deso_mat *a,
                        int64_t lda, const deso_vec *x, int64_t incx,
                        deso_sarg beta, deso_vec *y, int64_t incy)
{
    deso_ctx *q = DESO__QUICK(y);
    if (q != NULL && deso__gemv_quick(q, order, trans, m, n, alpha, a, lda, x,
                                      incx, beta, y, incy))
        return DESO_OK;
    deso_err e = deso__dgemv_arg(order, trans, m, n, alpha, a, lda, x, incx,
                                 beta, y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(5, DESO__CTX(alpha), DESO__CTX(a),
                                    DESO__CTX(x), DESO__CTX(beta),
                                    DESO__CTX(y)), "deso_dgemv", e);
    return e;
}

deso_err deso_dger_arg(deso_order order, int64_t m, int64_t n, deso_sarg alpha,
                       const deso_vec *x, int64_t incx, const deso_vec *y,
                       int64_t incy, deso_mat *a, int64_t lda)
{
    deso_err e = deso__dger_arg(order, m, n, alpha, x, incx, y, incy, a, lda);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(4, DESO__CTX(alpha), DESO__CTX(x),
                                    DESO__CTX(y), DESO__CTX(a)), "deso_dger",
                                    e);
    return e;
}

deso_err deso_dsymv_arg(deso_order order, deso_uplo uplo, int64_t n,
                        deso_sarg alpha, const deso_mat *a, int64_t lda,
                        const deso_vec *x, int64_t incx, deso_sarg beta,
                        deso_vec *y, int64_t incy)
{
    deso_err e = deso__dsymv_arg(order, uplo, n, alpha, a, lda, x, incx, beta,
                                 y, incy);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(5, DESO__CTX(alpha), DESO__CTX(a),
                                    DESO__CTX(x), DESO__CTX(beta),
                                    DESO__CTX(y)), "deso_dsymv", e);
    return e;
}

deso_err deso_dtrsv(deso_order order, deso_uplo uplo, deso_trans trans,
                    deso_diag diag, int64_t n, const deso_mat *a, int64_t lda,
                    deso_vec *x, int64_t incx)
{
    deso_err e = deso__dtrsv(order, uplo, trans, diag, n, a, lda, x, incx);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(a), DESO__CTX(x)),
                                    "deso_dtrsv", e);
    return e;
}
