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
    deso__value *ops[2] = {x->h.val, y->h.val};
    uint64_t ids[2] = {x->h.id, y->h.id};
    int64_t shape[2] = {1, n};
    return deso__record(ctx, BLAS_OP_VMUL, 0, ops, ids, &y->h, shape);
}
