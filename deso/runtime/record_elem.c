/* Element-wise extensions beyond dvmul (validate, canonicalise, record;
 * nothing executes here): the divisions and absolute values a Jacobi or
 * scaling preconditioner needs without a round trip through the host.    */
#include "deso/runtime/record.h"
#include "deso/runtime/api_more.h"

/* y <- f(x[, y]) element by element: op reads y too when `reads_y`.      */
static deso_err elem(blas_op op, const char *fn, int64_t n, const deso_vec *x,
                     int64_t incx, deso_vec *y, int64_t incy, bool reads_y)
{
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 2));
    DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 4));
    deso__arg a[2];
    deso_err err = deso__args_open2(ctx, n, &x->h, incx, DESO__IN, &y->h,
                                    incy, reads_y ? DESO__INOUT : DESO__OUT, a);
    if (err != DESO_OK) return err;
    deso__value *ops[2] = {a[0].h->val, reads_y ? a[1].h->val : NULL};
    uint64_t ids[2] = {x->h.id, reads_y ? y->h.id : 0};
    int64_t shape[2] = {1, n};
    err = deso__record(ctx, op, 0, ops, ids, a[1].h, shape);
    return deso__args_finish(ctx, a, 2, err);
}

deso_err deso__dvdiv(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    return elem(BLAS_OP_VDIV, "deso_dvdiv", n, x, incx, y, incy, true);
}

deso_err deso__dvrecip(int64_t n, const deso_vec *x, int64_t incx,
                      deso_vec *y, int64_t incy)
{
    return elem(BLAS_OP_VRECIP, "deso_dvrecip", n, x, incx, y, incy, false);
}

deso_err deso__dvabs(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    return elem(BLAS_OP_VABS, "deso_dvabs", n, x, incx, y, incy, false);
}
