/* Level 1 front ends: validate (first bad argument named), canonicalise,
 * record.  Nothing executes here.  A strided argument, or one that is a
 * view, goes through a deso__arg (views.c): the call's nodes read and
 * write its elements through vget and vput nodes.                        */
#include "deso/runtime/record.h"
#include "deso/runtime/replay.h"

static const int64_t VSHAPE_SCALAR[2] = {1, 1};

/* The quick path of dcopy, dscal and daxpy (api.h, record.h).          */
bool deso__l1_quick(deso_ctx *ctx, blas_op op, int64_t n,
                    const deso_sarg *alpha, const deso_vec *x, int64_t incx,
                    deso_vec *y, int64_t incy)
{
    deso__value *ops[3];
    uint64_t ids[3];
    int k = alpha != NULL, j = k + (x != NULL);
    if ((alpha != NULL && !deso__quick_sarg(*alpha, ctx, &ops[0], &ids[0])) ||
        (x != NULL && !deso__quick_vec(x, n, incx, ctx, &ops[k], &ids[k])))
        return false;
    return deso__quick_vec(y, n, incy, ctx, &ops[j], &ids[j]) &&
           deso__replay_quick(ctx, op, 0, ops, ids, &y->h, 1, n);
}

deso_err deso__dcopy(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    const char *fn = "deso_dcopy";
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 2));
    DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 4));
    deso__arg a[2];
    deso_err err = deso__args_open2(ctx, n, &x->h, incx, DESO__IN, &y->h,
                                    incy, DESO__OUT, a);
    if (err != DESO_OK) return err;
    deso__value *ops[1] = {a[0].h->val};
    uint64_t ids[1] = {x->h.id};
    int64_t shape[2] = {1, n};
    err = deso__record(ctx, BLAS_OP_COPY, 0, ops, ids, a[1].h, shape);
    return deso__args_finish(ctx, a, 2, err);
}

deso_err deso__record_pair(deso_ctx *ctx, int64_t n, deso_vec *x,
                           int64_t incx, deso_vec *y, int64_t incy,
                           deso__pair_fn fn, const void *arg)
{
    deso__arg a[2];
    deso_err err = deso__args_open2(ctx, n, &x->h, incx, DESO__INOUT, &y->h,
                                    incy, DESO__INOUT, a);
    if (err != DESO_OK) return err;
    deso__pair p = {{a[0].h, a[1].h}, {a[0].h->val, a[1].h->val},
                    {x->h.id, y->h.id}};
    uint64_t hash0 = ctx->hash;
    deso__value_ref(p.old[0]);
    deso__value_ref(p.old[1]);
    err = fn(ctx, &p, 0, arg);
    if (err == DESO_OK) {
        err = fn(ctx, &p, 1, arg);
        if (err != DESO_OK) deso__record_undo(ctx, p.out[0], p.old[0], hash0);
    }
    deso__value_unref(p.old[0]);
    deso__value_unref(p.old[1]);
    return deso__args_finish(ctx, a, 2, err);
}

/* A swap is two copies of the old versions: in SSA nothing is swapped.   */
static deso_err swap_node(deso_ctx *ctx, const deso__pair *p, int k,
                          const void *arg)
{
    const int64_t *n = arg;
    deso__value *ops[1] = {p->old[1 - k]};
    uint64_t ids[1] = {p->id[1 - k]};
    int64_t shape[2] = {1, *n};
    return deso__record(ctx, BLAS_OP_COPY, 0, ops, ids, p->out[k], shape);
}

deso_err deso__dswap(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy)
{
    const char *fn = "deso_dswap";
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 2));
    DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 4));
    return deso__record_pair(ctx, n, x, incx, y, incy, swap_node, &n);
}

deso_err deso__dscal_arg(int64_t n, deso_sarg alpha, deso_vec *x, int64_t incx)
{
    const char *fn = "deso_dscal";
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 3));
    DESO_TRY(deso__sarg_check(alpha, &ctx, fn, "alpha"));
    /* reference BLAS returns at once for incx < 0: x is left as it is    */
    if (incx < 0) return DESO_OK;
    deso__arg a[1];
    DESO_TRY(deso__arg_open(ctx, &x->h, n, incx, DESO__INOUT, &a[0]));
    deso__value *ops[2];
    uint64_t ids[2];
    deso_err err = deso__sarg_value(&ctx, alpha, &ops[0], &ids[0], fn,
                                    "alpha");
    if (err == DESO_OK) {
        ops[1] = a[0].h->val;
        ids[1] = x->h.id;
        int64_t shape[2] = {1, n};
        err = deso__record(ctx, BLAS_OP_SCAL, 0, ops, ids, a[0].h, shape);
    }
    return deso__args_finish(ctx, a, 1, err);
}

deso_err deso__daxpy_arg(int64_t n, deso_sarg alpha, const deso_vec *x,
                        int64_t incx, deso_vec *y, int64_t incy)
{
    const char *fn = "deso_daxpy";
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 3));
    DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 5));
    DESO_TRY(deso__sarg_check(alpha, &ctx, fn, "alpha"));
    deso__arg a[2];
    deso_err err = deso__args_open2(ctx, n, &x->h, incx, DESO__IN, &y->h,
                                    incy, DESO__INOUT, a);
    if (err != DESO_OK) return err;
    deso__value *ops[3];
    uint64_t ids[3];
    err = deso__sarg_value(&ctx, alpha, &ops[0], &ids[0], fn, "alpha");
    if (err == DESO_OK) {
        ops[1] = a[0].h->val;
        ids[1] = x->h.id;
        ops[2] = a[1].h->val;
        ids[2] = y->h.id;
        int64_t shape[2] = {1, n};
        err = deso__record(ctx, BLAS_OP_AXPY, 0, ops, ids, a[1].h, shape);
    }
    return deso__args_finish(ctx, a, 2, err);
}

deso_err deso__daxpby_arg(int64_t n, deso_sarg alpha, const deso_vec *x,
                         int64_t incx, deso_sarg beta, deso_vec *y,
                         int64_t incy)
{
    const char *fn = "deso_daxpby";
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 3));
    DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 6));
    DESO_TRY(deso__sarg_check(alpha, &ctx, fn, "alpha"));
    DESO_TRY(deso__sarg_check(beta, &ctx, fn, "beta"));
    deso__arg a[2];
    deso_err err = deso__args_open2(ctx, n, &x->h, incx, DESO__IN, &y->h,
                                    incy, DESO__INOUT, a);
    if (err != DESO_OK) return err;
    deso__value *ops[4];
    uint64_t ids[4];
    err = deso__sarg_value(&ctx, alpha, &ops[0], &ids[0], fn, "alpha");
    if (err == DESO_OK) {
        err = deso__sarg_value(&ctx, beta, &ops[2], &ids[2], fn, "beta");
        if (err != DESO_OK) deso__value_sink(ops[0]);
    }
    if (err == DESO_OK) {
        ops[1] = a[0].h->val;
        ids[1] = x->h.id;
        ops[3] = a[1].h->val;
        ids[3] = y->h.id;
        int64_t shape[2] = {1, n};
        err = deso__record(ctx, BLAS_OP_AXPBY, 0, ops, ids, a[1].h, shape);
    }
    return deso__args_finish(ctx, a, 2, err);
}

/* The quick path of reduce1 (api.h, record.h).                         */
bool deso__reduce_quick(deso_ctx *ctx, blas_op op, bool two, int64_t n,
                        const deso_vec *x, int64_t incx, const deso_vec *y,
                        int64_t incy, deso_scalar *result)
{
    deso__value *ops[2] = {NULL, NULL};
    uint64_t ids[2] = {0, 0};
    return deso__quick_handle(&result->h, BLAS_SCA, ctx) &&
           deso__quick_vec(x, n, incx, ctx, &ops[0], &ids[0]) &&
           (!two || deso__quick_vec(y, n, incy, ctx, &ops[1], &ids[1])) &&
           deso__replay_quick(ctx, op, 0, ops, ids, &result->h, 1, 1);
}

static deso_err reduce1(blas_op op, const char *fn, int64_t n,
                        const deso_vec *x, int64_t incx, const deso_vec *y,
                        int64_t incy, deso_scalar *result)
{
    deso_ctx *ctx = NULL;
    bool two = op == BLAS_OP_DOT;
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 2));
    if (two) DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 4));
    DESO_TRY(deso__sca_out(result, &ctx, fn, two ? 6 : 4));
    /* reference BLAS's dnrm2, dasum and idamax return 0 for incx < 0
     * (ddot walks x from its end instead)                                 */
    if (!two && incx < 0)
        return deso__sset_arg(result, deso_sarg_double(0.0));
    deso__arg a[2];
    DESO_TRY(deso__arg_open(ctx, &x->h, n, incx, DESO__IN, &a[0]));
    deso_err err = DESO_OK;
    if (two) err = deso__arg_open(ctx, &y->h, n, incy, DESO__IN, &a[1]);
    if (err != DESO_OK) return deso__args_finish(ctx, a, 1, err);
    deso__value *ops[2] = {a[0].h->val, two ? a[1].h->val : NULL};
    uint64_t ids[2] = {x->h.id, two ? y->h.id : 0};
    err = deso__record(ctx, op, 0, ops, ids, &result->h, VSHAPE_SCALAR);
    return deso__args_finish(ctx, a, two ? 2 : 1, err);
}

deso_err deso__ddot(int64_t n, const deso_vec *x, int64_t incx,
                   const deso_vec *y, int64_t incy, deso_scalar *result)
{
    return reduce1(BLAS_OP_DOT, "deso_ddot", n, x, incx, y, incy, result);
}

deso_err deso__dnrm2(int64_t n, const deso_vec *x, int64_t incx,
                    deso_scalar *result)
{
    return reduce1(BLAS_OP_NRM2, "deso_dnrm2", n, x, incx, NULL, 1, result);
}

deso_err deso__dasum(int64_t n, const deso_vec *x, int64_t incx,
                    deso_scalar *result)
{
    return reduce1(BLAS_OP_ASUM, "deso_dasum", n, x, incx, NULL, 1, result);
}

deso_err deso__idamax(int64_t n, const deso_vec *x, int64_t incx,
                     deso_scalar *result)
{
    return reduce1(BLAS_OP_IAMAX, "deso_idamax", n, x, incx, NULL, 1, result);
}
