/* The public user-operator functions (user_op.c's implementations): each
 * calls its implementation and hands an error to the context's handler
 * (api.h).  deso_op_destroy is handles.c's, with the other destroys.     */
#include "deso/runtime/runtime.h"

deso_err deso_op_create(deso_ctx *ctx, int64_t m, int64_t n, deso_op_fn fn,
                        void *user, deso_op_layout x_layout,
                        deso_op_layout y_layout, const deso_mat *rows_of,
                        deso_op **op)
{
    deso_err e = deso__op_create(ctx, m, n, fn, user, x_layout, y_layout,
                                 rows_of, op);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(ctx), DESO__CTX(rows_of)),
                        "deso_op_create", e);
    return e;
}

deso_err deso_op_create_spmat(deso_ctx *ctx, deso_op_fn fn, void *user,
                              const deso_spmat *rows_of, deso_op **op)
{
    deso_err e = deso__op_create_spmat(ctx, fn, user, rows_of, op);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(2, DESO__CTX(ctx), DESO__CTX(rows_of)),
                        "deso_op_create_spmat", e);
    return e;
}

deso_err deso_op_apply(deso_op *op, const deso_vec *x, deso_vec *y)
{
    deso_err e = deso__op_apply(op, x, y);
    if (e != DESO_OK)
        e = deso__raise(deso__reach(3, DESO__CTX(op), DESO__CTX(x),
                                    DESO__CTX(y)), "deso_op_apply", e);
    return e;
}
