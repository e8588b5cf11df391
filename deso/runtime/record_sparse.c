/* The sparse product's front end: deso_dusmv records y <- alpha op(A) x
 * + beta y as one usmv node that references the matrix's data (its
 * values are read when the node runs) and carries the matrix's facts for
 * the optimiser (blas_sparse: where y and x must be, the halo's size).
 * As dgemv: a beta that is the double 0.0 means y is not read, and an
 * empty A records nothing.                                              */
#include "deso/runtime/record.h"

static bool zero_beta(deso_sarg b) { return !b.lazy && b.v == 0.0; }

static deso_err usmv_node(deso_ctx *ctx, unsigned flags, deso_sarg alpha,
                          deso__spmat_data *sp, deso__handle *x,
                          deso_sarg beta, deso__handle *y, int64_t ylen,
                          const char *fn)
{
    deso__value *ops[4];
    uint64_t ids[4] = {0};
    if (!zero_beta(beta)) flags |= BLAS_F_BETA;
    DESO_TRY(deso__sarg_value(&ctx, alpha, &ops[0], &ids[0], fn, "alpha"));
    ops[1] = x->val;
    ids[1] = x->id;
    if (flags & BLAS_F_BETA) {
        deso_err err =
            deso__sarg_value(&ctx, beta, &ops[2], &ids[2], fn, "beta");
        if (err != DESO_OK) {
            deso__value_sink(ops[0]);
            return err;
        }
        ops[3] = y->val;
        ids[3] = y->id;
    }
    /* once a force has placed the matrix elsewhere, its products run on
     * the placed copy (spmat_ntg.c)                                       */
    if (sp->placed != NULL) sp = sp->placed;
    if (!sp->placement_chosen) ctx->spmat_choose = true;
    blas_desc d = {.op = BLAS_OP_USMV, .flags = flags, .sp = sp->facts};
    int64_t shape[2] = {1, ylen};
    return deso__record_sparse(ctx, &d, ops, ids, y, shape, sp);
}

/* A vector argument of exactly len elements (the product has no
 * increments: a strided operand is a view).                             */
static deso_err vec_exact(const deso_vec *v, int64_t len, deso_ctx **ctx,
                          const char *fn, const char *name, int pos)
{
    DESO_TRY(deso__vec_arg(v, len, 1, ctx, fn, name, pos));
    DESO_CHECK(v->h.val->n == len, DESO_ESIZE,
               "%s: %s (arg %d) has %lld elements, op(A) needs %lld", fn,
               name, pos, (long long)v->h.val->n, (long long)len);
    return DESO_OK;
}

deso_err deso__dusmv_arg(deso_ctx *ctx, deso_trans trans, deso_sarg alpha,
                         const deso_spmat *a, const deso_vec *x,
                         deso_sarg beta, deso_vec *y)
{
    const char *fn = "deso_dusmv";
    DESO_TRY(deso__ctx_check(ctx, fn));
    /* 113 is CblasConjTrans: the same as a transpose for real data         */
    DESO_CHECK(trans == DESO_NO_TRANS || trans == DESO_TRANS ||
                   (int)trans == 113,
               DESO_EINVAL, "%s: bad trans %d (arg 2)", fn, (int)trans);
    deso_ctx *c = ctx;
    DESO_TRY(deso__handle_check(a ? &a->h : NULL, DESO__SPMAT, &c, fn, "A"));
    deso__spmat_data *sp = a->h.sp;
    bool t = trans != DESO_NO_TRANS;
    int64_t xlen = t ? sp->m : sp->n, ylen = t ? sp->n : sp->m;
    DESO_TRY(vec_exact(x, xlen, &c, fn, "x", 5));
    DESO_TRY(vec_exact(y, ylen, &c, fn, "y", 7));
    DESO_TRY(deso__sarg_check(alpha, &c, fn, "alpha"));
    DESO_TRY(deso__sarg_check(beta, &c, fn, "beta"));
    if (sp->m == 0 || sp->n == 0) return DESO_OK;
    deso__arg g[2];
    DESO_TRY(deso__arg_open(ctx, &x->h, xlen, 1, DESO__IN, &g[0]));
    deso_err err = deso__arg_open(ctx, &y->h, ylen, 1,
                                  zero_beta(beta) ? DESO__OUT : DESO__INOUT,
                                  &g[1]);
    if (err != DESO_OK) return deso__args_finish(ctx, g, 1, err);
    err = usmv_node(ctx, t ? BLAS_F_TRANS : 0, alpha, sp, g[0].h, beta,
                    g[1].h, ylen, fn);
    return deso__args_finish(ctx, g, 2, err);
}
