/* Plane rotations: drot and drotm, recorded.  In SSA a rotation is two
 * nodes reading the old versions of x and y,
 *     x' <- h11 x + h12 y,      y' <- h22 y + h21 x,
 * each the update u <- a u + b v (blas/'s rot row), so nothing is
 * overwritten while the second node still reads it (as dswap is two
 * copies).  All or nothing: a failed second node undoes the first.      */
#include "deso/runtime/record.h"
#include "deso/runtime/api_more.h"

/* One node out <- a u + b v (flags: BLAS_F_NEG for a u - b v).           */
static deso_err rot_node(deso_ctx *ctx, const char *fn, unsigned flags,
                         deso_sarg a, deso__value *u, uint64_t uid,
                         deso_sarg b, deso__value *v, uint64_t vid,
                         deso__handle *out)
{
    deso__value *ops[4];
    uint64_t ids[4];
    DESO_TRY(deso__sarg_value(&ctx, a, &ops[0], &ids[0], fn, "c"));
    deso_err err = deso__sarg_value(&ctx, b, &ops[2], &ids[2], fn, "s");
    if (err != DESO_OK) {
        deso__value_sink(ops[0]);
        return err;
    }
    ops[1] = u;
    ids[1] = uid;
    ops[3] = v;
    ids[3] = vid;
    int64_t shape[2] = {1, u->n};
    return deso__record(ctx, BLAS_OP_ROT, flags, ops, ids, out, shape);
}

/* A rotation's coefficients for deso__record_pair: x' <- h[0] x + h[1]
 * y;  y' <- h[2] y + h[3] x (- h[3] x with neg).                         */
typedef struct rot_coef {
    const char *fn;
    deso_sarg h[4];
    bool neg;
} rot_coef;

static deso_err rot_pair_node(deso_ctx *ctx, const deso__pair *p, int k,
                              const void *arg)
{
    const rot_coef *r = arg;
    unsigned flags = k == 1 && r->neg ? BLAS_F_NEG : 0;
    return rot_node(ctx, r->fn, flags, r->h[2 * k], p->old[k], p->id[k],
                    r->h[2 * k + 1], p->old[1 - k], p->id[1 - k], p->out[k]);
}

static deso_err rot_pair(deso_ctx *ctx, const char *fn, int64_t n,
                         deso_vec *x, int64_t incx, deso_vec *y, int64_t incy,
                         const deso_sarg h[4], bool neg)
{
    rot_coef r = {fn, {h[0], h[1], h[2], h[3]}, neg};
    return deso__record_pair(ctx, n, x, incx, y, incy, rot_pair_node, &r);
}

/* The vectors of a rotation: both of length n, distinct handles (a
 * rotation of a vector with itself has no meaning in SSA).               */
static deso_err rot_vecs(int64_t n, const deso_vec *x, int64_t incx,
                         const deso_vec *y, int64_t incy, deso_ctx **ctx,
                         const char *fn)
{
    DESO_TRY(deso__n_arg(n, fn, 1));
    DESO_TRY(deso__vec_arg(x, n, incx, ctx, fn, "x", 2));
    DESO_TRY(deso__vec_arg(y, n, incy, ctx, fn, "y", 4));
    DESO_CHECK(x != y, DESO_EINVAL, "%s: x and y (args 2 and 4) are the "
               "same vector", fn);
    return DESO_OK;
}

deso_err deso__drot_arg(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                       int64_t incy, deso_sarg c, deso_sarg s)
{
    const char *fn = "deso_drot";
    deso_ctx *ctx = NULL;
    DESO_TRY(rot_vecs(n, x, incx, y, incy, &ctx, fn));
    DESO_TRY(deso__sarg_check(c, &ctx, fn, "c"));
    DESO_TRY(deso__sarg_check(s, &ctx, fn, "s"));
    const deso_sarg h[4] = {c, s, c, s};     /* y' <- c y - s x            */
    return rot_pair(ctx, fn, n, x, incx, y, incy, h, true);
}

/* The modified rotation H of param (reference BLAS's layout: flag, h11,
 * h21, h12, h22; flag -2 is the identity) as h for rot_pair.  Only the
 * four flags drotmg produces are accepted.                               */
static deso_err rotm_h(const double *param, deso_sarg h[4], const char *fn)
{
    double f = param[0];
    DESO_CHECK(f == -2.0 || f == -1.0 || f == 0.0 || f == 1.0, DESO_EINVAL,
               "%s: param[0] = %g is not a flag of -2, -1, 0 or 1 (arg 6)",
               fn, f);
    double h11 = param[1], h21 = param[2], h12 = param[3], h22 = param[4];
    if (f == 0.0) h11 = h22 = 1.0;
    if (f == 1.0) {
        h12 = 1.0;
        h21 = -1.0;
    }
    h[0] = deso_sarg_double(h11);
    h[1] = deso_sarg_double(h12);
    h[2] = deso_sarg_double(h22);
    h[3] = deso_sarg_double(h21);
    return DESO_OK;
}

deso_err deso__drotm(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy, const double param[5])
{
    const char *fn = "deso_drotm";
    deso_ctx *ctx = NULL;
    DESO_TRY(rot_vecs(n, x, incx, y, incy, &ctx, fn));
    DESO_CHECK(param != NULL, DESO_ENULL, "%s: param (arg 6) is NULL", fn);
    deso_sarg h[4];
    DESO_TRY(rotm_h(param, h, fn));
    if (param[0] == -2.0) return DESO_OK;    /* H = I: nothing to record  */
    return rot_pair(ctx, fn, n, x, incx, y, incy, h, false);
}
