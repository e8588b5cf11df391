/* Scalar arithmetic on lazy scalars: recorded like any operation, so CG's
 * alpha = rho / (p . q) and beta never force.                             */
#include "deso/runtime/record.h"
#include "deso/runtime/replay.h"
#include "deso/runtime/api_more.h"

/* The quick path of binop (api.h, record.h).                           */
bool deso__binop_quick(deso_ctx *ctx, blas_op op, deso_scalar *out,
                       deso_sarg a, deso_sarg b, int nargs)
{
    deso__value *ops[2] = {NULL, NULL};
    uint64_t ids[2] = {0, 0};
    return deso__quick_handle(&out->h, BLAS_SCA, ctx) &&
           deso__quick_sarg(a, ctx, &ops[0], &ids[0]) &&
           (nargs == 1 || deso__quick_sarg(b, ctx, &ops[1], &ids[1])) &&
           deso__replay_quick(ctx, op, 0, ops, ids, &out->h, 1, 1);
}

static deso_err binop(blas_op op, const char *fn, deso_scalar *out,
                      deso_sarg a, deso_sarg b, int nargs)
{
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__sca_out(out, &ctx, fn, 1));
    DESO_TRY(deso__sarg_check(a, &ctx, fn, "a"));
    if (nargs > 1) DESO_TRY(deso__sarg_check(b, &ctx, fn, "b"));
    deso__value *ops[2] = {NULL, NULL};
    uint64_t ids[2] = {0, 0};
    DESO_TRY(deso__sarg_value(&ctx, a, &ops[0], &ids[0], fn, "a"));
    if (nargs > 1) {
        deso_err err = deso__sarg_value(&ctx, b, &ops[1], &ids[1], fn, "b");
        if (err != DESO_OK) {
            deso__value_sink(ops[0]);
            return err;
        }
    }
    static const int64_t shape[2] = {1, 1};
    return deso__record(ctx, op, 0, ops, ids, &out->h, shape);
}

deso_err deso__sadd_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    return binop(BLAS_OP_SADD, "deso_sadd", out, a, b, 2);
}

deso_err deso__ssub_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    return binop(BLAS_OP_SSUB, "deso_ssub", out, a, b, 2);
}

deso_err deso__smul_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    return binop(BLAS_OP_SMUL, "deso_smul", out, a, b, 2);
}

deso_err deso__sdiv_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    return binop(BLAS_OP_SDIV, "deso_sdiv", out, a, b, 2);
}

deso_err deso__ssqrt_arg(deso_scalar *out, deso_sarg a)
{
    return binop(BLAS_OP_SSQRT, "deso_ssqrt", out, a, a, 1);
}

deso_err deso__sneg_arg(deso_scalar *out, deso_sarg a)
{
    return binop(BLAS_OP_SNEG, "deso_sneg", out, a, a, 1);
}

deso_err deso__smax_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    return binop(BLAS_OP_SMAX, "deso_smax", out, a, b, 2);
}

deso_err deso__smin_arg(deso_scalar *out, deso_sarg a, deso_sarg b)
{
    return binop(BLAS_OP_SMIN, "deso_smin", out, a, b, 2);
}

/* out <- a needs no node: values are immutable, so out's handle simply
 * points at a's value (or at a new constant).                             */
deso_err deso__sset_arg(deso_scalar *out, deso_sarg a)
{
    const char *fn = "deso_sset";
    deso__value *v;
    uint64_t id;
    /* the quick path (record.h): the checks below, in their common case */
    deso_ctx *ctx = deso__quick_ctx(out != NULL ? &out->h : NULL);
    if (ctx == NULL || !deso__quick_handle(&out->h, BLAS_SCA, ctx) ||
        !deso__quick_sarg(a, ctx, &v, &id)) {
        ctx = NULL;
        DESO_TRY(deso__sca_out(out, &ctx, fn, 1));
        DESO_TRY(deso__sarg_check(a, &ctx, fn, "a"));
        DESO_TRY(deso__sarg_value(&ctx, a, &v, &id, fn, "a"));
    }
    if (ctx->rp != NULL && deso__replay_alias(ctx, v, id, &out->h))
        return DESO_OK;
    deso__value_ref(v);
    deso__value_unref(out->h.val);
    out->h.val = v;
    deso__hash_alias(ctx, id, out->h.id);
    deso__replay_log_alias(ctx, v, id, &out->h);
    return DESO_OK;
}
