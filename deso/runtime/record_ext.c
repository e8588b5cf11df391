/* Extensions beyond the BLAS: element-wise operations (recorded like level
 * 1: validate, canonicalise, record; nothing executes here).              */
#include "deso/runtime/record.h"

deso_err deso__dvmul(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    const char *fn = "deso_dvmul";
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 2));
    DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 4));
    deso__arg a[2];
    deso_err err = deso__args_open2(ctx, n, &x->h, incx, DESO__IN, &y->h,
                                    incy, DESO__INOUT, a);
    if (err != DESO_OK) return err;
    deso__value *ops[2] = {a[0].h->val, a[1].h->val};
    uint64_t ids[2] = {x->h.id, y->h.id};
    int64_t shape[2] = {1, n};
    err = deso__record(ctx, BLAS_OP_VMUL, 0, ops, ids, a[1].h, shape);
    return deso__args_finish(ctx, a, 2, err);
}
