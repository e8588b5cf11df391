/* Level 2 front ends.  A matrix handle stores its data column-major; the
 * order argument says how the call reads that storage, as CBLAS does for
 * the same memory.  A row-major call is mapped onto the column-major call
 * on the same handle here, before recording, so that the optimiser and
 * the executor only ever see column-major calls.  lda is only checked
 * >= 1: a sub-matrix is a view (deso_mat_cols), not a leading dimension.
 * Vector arguments with a stride, and views, go through deso__args
 * (views.c), as in level 1.                                              */
#include "deso/runtime/record.h"
#include "deso/runtime/api_more.h"
#include "deso/runtime/replay.h"

static deso_err enum_args(const char *fn, deso_order order, int pos)
{
    DESO_CHECK(order == DESO_ROW_MAJOR || order == DESO_COL_MAJOR,
               DESO_EINVAL, "%s: bad order %d (arg %d)", fn, (int)order, pos);
    return DESO_OK;
}

/* Row-major storage read column-major is the transpose, so a row-major
 * call is the column-major one with the transpose flipped (and, for a
 * triangle, the other triangle).                                          */
static deso_trans flip_trans(deso_trans t)
{
    return t == DESO_NO_TRANS ? DESO_TRANS : DESO_NO_TRANS;
}

static deso_uplo flip_uplo(deso_uplo u)
{
    return u == DESO_UPPER ? DESO_LOWER : DESO_UPPER;
}

/* A must be an m x n handle (m, n already mapped to the column-major
 * call); a row-major caller thinks of it as n x m, so say so.            */
static deso_err mat_arg(const deso_mat *a, deso_order order, int64_t m,
                        int64_t n, int64_t lda, deso_ctx **ctx,
                        const char *fn, int pos)
{
    DESO_TRY(deso__handle_check(a ? &a->h : NULL, BLAS_MAT, ctx, fn, "A"));
    DESO_TRY(deso__value_usable(a->h.val, fn));
    long long hm = (long long)a->h.val->m, hn = (long long)a->h.val->n;
    DESO_CHECK(order == DESO_COL_MAJOR || (hm == m && hn == n), DESO_ESIZE,
               "%s: row-major A (arg %d) is %lld x %lld, so it must be a "
               "%lld x %lld handle (handles store column-major), not "
               "%lld x %lld",
               fn, pos, (long long)n, (long long)m, (long long)m,
               (long long)n, hm, hn);
    DESO_CHECK(hm == m && hn == n, DESO_ESIZE,
               "%s: A (arg %d) is %lld x %lld, expected %lld x %lld", fn, pos,
               hm, hn, (long long)m, (long long)n);
    DESO_CHECK(lda >= 1, DESO_EINVAL, "%s: lda = %lld < 1 (arg %d)", fn,
               (long long)lda, pos + 1);
    return DESO_OK;
}

static bool is_zero_const(deso_sarg b) { return !b.lazy && b.v == 0.0; }

/* One gemv node (masked for dsymv's halves) into y, of length ylen.     */
static deso_err gemv_node(deso_ctx *ctx, unsigned flags, int64_t ylen,
                          deso_sarg alpha, deso__handle *a, deso__handle *x,
                          deso_sarg beta, deso__handle *y, const char *fn)
{
    deso__value *ops[5];
    uint64_t ids[5] = {0};
    /* canonical form: a known beta of 0 means y is not read, so the node
     * has no y operand (a lazy beta is never inspected)                    */
    if (!is_zero_const(beta)) flags |= BLAS_F_BETA;
    DESO_TRY(deso__sarg_value(&ctx, alpha, &ops[0], &ids[0], fn, "alpha"));
    ops[1] = a->val;
    ids[1] = a->id;
    ops[2] = x->val;
    ids[2] = x->id;
    if (flags & BLAS_F_BETA) {
        deso_err err =
            deso__sarg_value(&ctx, beta, &ops[3], &ids[3], fn, "beta");
        if (err != DESO_OK) {
            deso__value_sink(ops[0]);
            return err;
        }
        ops[4] = y->val;
        ids[4] = y->id;
    }
    int64_t shape[2] = {1, ylen};
    return deso__record(ctx, BLAS_OP_GEMV, flags, ops, ids, y, shape);
}

/* The arguments of a gemv-shaped call: A, x (xlen at incx) read, y (ylen
 * at incy) written, and read too unless beta is a known 0.              */
static deso_err gemv_open(deso_ctx *ctx, const deso_mat *a, const deso_vec *x,
                          int64_t xlen, int64_t incx, deso_sarg beta,
                          deso_vec *y, int64_t ylen, int64_t incy,
                          deso__arg *arg)
{
    DESO_TRY(deso__arg_open(ctx, &a->h, 0, 1, DESO__IN, &arg[0]));
    deso_err err = deso__arg_open(ctx, &x->h, xlen, incx, DESO__IN, &arg[1]);
    if (err != DESO_OK) return deso__args_finish(ctx, arg, 1, err);
    err = deso__arg_open(ctx, &y->h, ylen, incy,
                         is_zero_const(beta) ? DESO__OUT : DESO__INOUT,
                         &arg[2]);
    if (err != DESO_OK) return deso__args_finish(ctx, arg, 2, err);
    return DESO_OK;
}

/* The quick path of a column-major dgemv on a non-empty A (api.h,
 * record.h).                                                            */
bool deso__gemv_quick(deso_ctx *ctx, deso_order order,
                      deso_trans trans, int64_t m, int64_t n, deso_sarg alpha,
                      const deso_mat *a, int64_t lda, const deso_vec *x,
                      int64_t incx, deso_sarg beta, deso_vec *y, int64_t incy)
{
    /* 113 is CblasConjTrans: the same as a transpose for real data         */
    bool t = trans == DESO_TRANS || (int)trans == 113;
    if (!t && trans != DESO_NO_TRANS) return false;
    deso__value *ops[5];
    uint64_t ids[5];
    unsigned flags = (t ? BLAS_F_TRANS : 0) |
                     (is_zero_const(beta) ? 0 : BLAS_F_BETA);
    if (order != DESO_COL_MAJOR || m <= 0 || n <= 0 ||
        lda < 1 || a == NULL || !deso__quick_handle(&a->h, BLAS_MAT, ctx) ||
        a->h.val->m != m || a->h.val->n != n || a->h.val->poison != DESO_OK)
        return false;
    ops[1] = a->h.val;
    ids[1] = a->h.id;
    return deso__quick_vec(x, t ? m : n, incx, ctx, &ops[2], &ids[2]) &&
           deso__quick_vec(y, t ? n : m, incy, ctx, &ops[4], &ids[4]) &&
           deso__quick_sarg(alpha, ctx, &ops[0], &ids[0]) &&
           (!(flags & BLAS_F_BETA) ||
            deso__quick_sarg(beta, ctx, &ops[3], &ids[3])) &&
           deso__replay_quick(ctx, BLAS_OP_GEMV, flags, ops, ids, &y->h, 1,
                              t ? n : m);
}

deso_err deso__dgemv_arg(deso_order order, deso_trans trans, int64_t m,
                        int64_t n, deso_sarg alpha, const deso_mat *a,
                        int64_t lda, const deso_vec *x, int64_t incx,
                        deso_sarg beta, deso_vec *y, int64_t incy)
{
    const char *fn = "deso_dgemv";
    deso_ctx *ctx = NULL;
    DESO_TRY(enum_args(fn, order, 1));
    /* 113 is CblasConjTrans: the same as a transpose for real data         */
    DESO_CHECK(trans == DESO_NO_TRANS || trans == DESO_TRANS ||
                   (int)trans == 113,
               DESO_EINVAL, "%s: bad trans %d (arg 2)", fn, (int)trans);
    DESO_CHECK(m >= 0, DESO_ESIZE, "%s: m = %lld < 0 (arg 3)", fn,
               (long long)m);
    DESO_CHECK(n >= 0, DESO_ESIZE, "%s: n = %lld < 0 (arg 4)", fn,
               (long long)n);
    if (order == DESO_ROW_MAJOR) {
        /* the row-major m x n A is H^T for the n x m handle H, so op(A)
         * is H with the other transpose                                    */
        trans = flip_trans(trans);
        int64_t k = m;
        m = n;
        n = k;
    }
    bool t = trans != DESO_NO_TRANS;
    DESO_TRY(mat_arg(a, order, m, n, lda, &ctx, fn, 6));
    DESO_TRY(deso__vec_arg(x, t ? m : n, incx, &ctx, fn, "x", 8));
    DESO_TRY(deso__vec_arg(y, t ? n : m, incy, &ctx, fn, "y", 11));
    DESO_TRY(deso__sarg_check(alpha, &ctx, fn, "alpha"));
    DESO_TRY(deso__sarg_check(beta, &ctx, fn, "beta"));
    /* reference BLAS returns at once when A is empty: y is not scaled   */
    if (m == 0 || n == 0) return DESO_OK;
    int64_t xlen = t ? m : n, ylen = t ? n : m;
    deso__arg g[3];
    DESO_TRY(gemv_open(ctx, a, x, xlen, incx, beta, y, ylen, incy, g));
    deso_err err = gemv_node(ctx, t ? BLAS_F_TRANS : 0, ylen, alpha, g[0].h,
                             g[1].h, beta, g[2].h, fn);
    return deso__args_finish(ctx, g, 3, err);
}

/* One ger node A <- alpha x y^T + A (flags: BLAS_F_MASK with or without
 * BLAS_F_LOWER for one triangle only, as dsyr and dsyr2 need).           */
static deso_err ger_node(deso_ctx *ctx, unsigned flags, deso_sarg alpha,
                         deso__handle *x, deso__handle *y, deso__handle *a,
                         const char *fn)
{
    deso__value *ops[4];
    uint64_t ids[4];
    DESO_TRY(deso__sarg_value(&ctx, alpha, &ops[0], &ids[0], fn, "alpha"));
    ops[1] = x->val;
    ids[1] = x->id;
    ops[2] = y->val;
    ids[2] = y->id;
    ops[3] = a->val;
    ids[3] = a->id;
    int64_t shape[2] = {a->val->m, a->val->n};
    return deso__record(ctx, BLAS_OP_GER, flags, ops, ids, a, shape);
}

/* The arguments of a ger-shaped call: x (m at incx) and, when y != NULL,
 * y (n at incy) read; A read and written.  arg[0] is x, arg[1] y (when
 * given), then A: *k arguments in all.                                   */
static deso_err ger_open(deso_ctx *ctx, const deso_vec *x, int64_t m,
                         int64_t incx, const deso_vec *y, int64_t n,
                         int64_t incy, deso_mat *a, deso__arg *arg, int *k)
{
    *k = 0;
    DESO_TRY(deso__arg_open(ctx, &x->h, m, incx, DESO__IN, &arg[0]));
    deso_err err = DESO_OK;
    int j = 1;
    if (y != NULL)
        err = deso__arg_open(ctx, &y->h, n, incy, DESO__IN, &arg[j++]);
    if (err != DESO_OK) return deso__args_finish(ctx, arg, 1, err);
    err = deso__arg_open(ctx, &a->h, 0, 1, DESO__INOUT, &arg[j]);
    if (err != DESO_OK) return deso__args_finish(ctx, arg, j, err);
    *k = j + 1;
    return DESO_OK;
}

/* The flags of a ger on one triangle only.                               */
static unsigned tri_flags(bool lower)
{
    return BLAS_F_MASK | (lower ? BLAS_F_LOWER : 0);
}

deso_err deso__dger_arg(deso_order order, int64_t m, int64_t n, deso_sarg alpha,
                       const deso_vec *x, int64_t incx, const deso_vec *y,
                       int64_t incy, deso_mat *a, int64_t lda)
{
    const char *fn = "deso_dger";
    deso_ctx *ctx = NULL;
    DESO_TRY(enum_args(fn, order, 1));
    DESO_CHECK(m >= 0 && n >= 0, DESO_ESIZE, "%s: negative m or n (arg 2)",
               fn);
    DESO_TRY(deso__vec_arg(x, m, incx, &ctx, fn, "x", 5));
    DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 7));
    if (order == DESO_ROW_MAJOR) {
        /* A += alpha x y^T on a row-major m x n A is A^T += alpha y x^T
         * on the n x m handle                                             */
        const deso_vec *v = x;
        x = y;
        y = v;
        int64_t k = m;
        m = n;
        n = k;
        k = incx;
        incx = incy;
        incy = k;
    }
    DESO_TRY(mat_arg(a, order, m, n, lda, &ctx, fn, 9));
    DESO_TRY(deso__sarg_check(alpha, &ctx, fn, "alpha"));
    deso__arg g[3];
    int k;
    DESO_TRY(ger_open(ctx, x, m, incx, y, n, incy, a, g, &k));
    deso_err err = ger_node(ctx, 0, alpha, g[0].h, g[1].h, g[2].h, fn);
    return deso__args_finish(ctx, g, k, err);
}

/* dsymv as two masked gemvs on the stored triangle:
 *   y <- alpha tri(A) x + beta y;   y <- alpha stri(A)^T x + y,
 * tri including the diagonal, stri excluding it (A_sym = tri + stri^T).  */
deso_err deso__dsymv_arg(deso_order order, deso_uplo uplo, int64_t n,
                        deso_sarg alpha, const deso_mat *a, int64_t lda,
                        const deso_vec *x, int64_t incx, deso_sarg beta,
                        deso_vec *y, int64_t incy)
{
    const char *fn = "deso_dsymv";
    deso_ctx *ctx = NULL;
    DESO_TRY(enum_args(fn, order, 1));
    DESO_CHECK(uplo == DESO_UPPER || uplo == DESO_LOWER, DESO_EINVAL,
               "%s: bad uplo %d (arg 2)", fn, (int)uplo);
    DESO_TRY(deso__n_arg(n, fn, 3));
    /* the row-major reading is A^T = A; only its `uplo` triangle lies on
     * the other side of the stored diagonal                               */
    if (order == DESO_ROW_MAJOR) uplo = flip_uplo(uplo);
    DESO_TRY(mat_arg(a, order, n, n, lda, &ctx, fn, 5));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 7));
    DESO_TRY(deso__vec_arg(y, n, incy, &ctx, fn, "y", 10));
    DESO_TRY(deso__sarg_check(alpha, &ctx, fn, "alpha"));
    DESO_TRY(deso__sarg_check(beta, &ctx, fn, "beta"));
    unsigned tri = BLAS_F_MASK | (uplo == DESO_LOWER ? BLAS_F_LOWER : 0);
    deso__arg g[3];
    DESO_TRY(gemv_open(ctx, a, x, n, incx, beta, y, n, incy, g));
    deso__handle *hy = g[2].h;
    deso__value *old = hy->val;
    uint64_t hash0 = ctx->hash;
    if (old != NULL) deso__value_ref(old);
    deso_err err = gemv_node(ctx, tri, n, alpha, g[0].h, g[1].h, beta, hy,
                             fn);
    if (err == DESO_OK) {
        err = gemv_node(ctx, tri | BLAS_F_STRICT | BLAS_F_TRANS, n, alpha,
                        g[0].h, g[1].h, deso_sarg_double(1.0), hy, fn);
        /* all or nothing: y must not keep half a product                  */
        if (err != DESO_OK && old != NULL)
            deso__record_undo(ctx, hy, old, hash0);
    }
    deso__value_unref(old);
    return deso__args_finish(ctx, g, 3, err);
}

/* The enums of a triangular call (dtrsv's and dtrmv's).                   */
static deso_err tri_enums(const char *fn, deso_uplo uplo, deso_trans trans,
                          deso_diag diag)
{
    DESO_CHECK(uplo == DESO_UPPER || uplo == DESO_LOWER, DESO_EINVAL,
               "%s: bad uplo %d (arg 2)", fn, (int)uplo);
    DESO_CHECK(trans == DESO_NO_TRANS || trans == DESO_TRANS ||
                   (int)trans == 113,
               DESO_EINVAL, "%s: bad trans %d (arg 3)", fn, (int)trans);
    DESO_CHECK(diag == DESO_UNIT || diag == DESO_NON_UNIT, DESO_EINVAL,
               "%s: bad diag %d (arg 4)", fn, (int)diag);
    return DESO_OK;
}

deso_err deso__dtrsv(deso_order order, deso_uplo uplo, deso_trans trans,
                    deso_diag diag, int64_t n, const deso_mat *a, int64_t lda,
                    deso_vec *x, int64_t incx)
{
    const char *fn = "deso_dtrsv";
    deso_ctx *ctx = NULL;
    DESO_TRY(enum_args(fn, order, 1));
    DESO_TRY(tri_enums(fn, uplo, trans, diag));
    DESO_TRY(deso__n_arg(n, fn, 5));
    if (order == DESO_ROW_MAJOR) {
        /* the row-major T is H^T for the handle H: op(T) is H with the
         * other transpose, and T's `uplo` triangle is H's other one       */
        uplo = flip_uplo(uplo);
        trans = flip_trans(trans);
    }
    DESO_TRY(mat_arg(a, order, n, n, lda, &ctx, fn, 6));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 8));
    unsigned flags = (uplo == DESO_LOWER ? BLAS_F_LOWER : 0) |
                     (trans != DESO_NO_TRANS ? BLAS_F_TRANS : 0) |
                     (diag == DESO_UNIT ? BLAS_F_UNIT : 0);
    deso__arg g[2];
    DESO_TRY(deso__arg_open(ctx, &a->h, 0, 1, DESO__IN, &g[0]));
    deso_err err = deso__arg_open(ctx, &x->h, n, incx, DESO__INOUT, &g[1]);
    if (err != DESO_OK) return deso__args_finish(ctx, g, 1, err);
    deso__value *ops[2] = {g[0].h->val, g[1].h->val};
    uint64_t ids[2] = {a->h.id, x->h.id};
    int64_t shape[2] = {1, n};
    err = deso__record(ctx, BLAS_OP_TRSV, flags, ops, ids, g[1].h, shape);
    return deso__args_finish(ctx, g, 2, err);
}

/* dtrmv as one masked gemv reading the old x twice:
 *   non-unit: x <- op(tri(T)) x;   unit: x <- op(stri(T)) x + x,
 * tri with the diagonal, stri without (the unit diagonal is the + x).    */
deso_err deso__dtrmv(deso_order order, deso_uplo uplo, deso_trans trans,
                    deso_diag diag, int64_t n, const deso_mat *a, int64_t lda,
                    deso_vec *x, int64_t incx)
{
    const char *fn = "deso_dtrmv";
    deso_ctx *ctx = NULL;
    DESO_TRY(enum_args(fn, order, 1));
    DESO_TRY(tri_enums(fn, uplo, trans, diag));
    DESO_TRY(deso__n_arg(n, fn, 5));
    if (order == DESO_ROW_MAJOR) {      /* as dtrsv                         */
        uplo = flip_uplo(uplo);
        trans = flip_trans(trans);
    }
    DESO_TRY(mat_arg(a, order, n, n, lda, &ctx, fn, 6));
    DESO_TRY(deso__vec_arg(x, n, incx, &ctx, fn, "x", 8));
    unsigned flags = BLAS_F_MASK | (uplo == DESO_LOWER ? BLAS_F_LOWER : 0) |
                     (trans != DESO_NO_TRANS ? BLAS_F_TRANS : 0) |
                     (diag == DESO_UNIT ? BLAS_F_STRICT : 0);
    deso__arg g[2];
    DESO_TRY(deso__arg_open(ctx, &a->h, 0, 1, DESO__IN, &g[0]));
    deso_err err = deso__arg_open(ctx, &x->h, n, incx, DESO__INOUT, &g[1]);
    if (err != DESO_OK) return deso__args_finish(ctx, g, 1, err);
    err = gemv_node(ctx, flags, n, deso_sarg_double(1.0), g[0].h, g[1].h,
                    deso_sarg_double(diag == DESO_UNIT ? 1.0 : 0.0), g[1].h,
                    fn);
    return deso__args_finish(ctx, g, 2, err);
}

/* The arguments dsyr and dsyr2 share (y only when `two`): uplo mapped to
 * the stored triangle (x x^T and x y^T + y x^T are symmetric, so a
 * row-major call only changes which triangle is meant).                  */
static deso_err syr_args(const char *fn, deso_order order, deso_uplo *uplo,
                         int64_t n, const deso_vec *x, int64_t incx,
                         bool two, const deso_vec *y, int64_t incy,
                         const deso_mat *a, int64_t lda, deso_sarg alpha,
                         deso_ctx **ctx)
{
    DESO_TRY(enum_args(fn, order, 1));
    DESO_CHECK(*uplo == DESO_UPPER || *uplo == DESO_LOWER, DESO_EINVAL,
               "%s: bad uplo %d (arg 2)", fn, (int)*uplo);
    DESO_TRY(deso__n_arg(n, fn, 3));
    DESO_TRY(deso__vec_arg(x, n, incx, ctx, fn, "x", 5));
    if (two) DESO_TRY(deso__vec_arg(y, n, incy, ctx, fn, "y", 7));
    DESO_TRY(mat_arg(a, order, n, n, lda, ctx, fn, two ? 9 : 7));
    DESO_TRY(deso__sarg_check(alpha, ctx, fn, "alpha"));
    if (order == DESO_ROW_MAJOR) *uplo = flip_uplo(*uplo);
    return DESO_OK;
}

deso_err deso__dsyr_arg(deso_order order, deso_uplo uplo, int64_t n,
                       deso_sarg alpha, const deso_vec *x, int64_t incx,
                       deso_mat *a, int64_t lda)
{
    const char *fn = "deso_dsyr";
    deso_ctx *ctx = NULL;
    DESO_TRY(syr_args(fn, order, &uplo, n, x, incx, false, NULL, 1, a, lda,
                      alpha, &ctx));
    deso__arg g[2];
    int k;
    DESO_TRY(ger_open(ctx, x, n, incx, NULL, n, 1, a, g, &k));
    deso_err err = ger_node(ctx, tri_flags(uplo == DESO_LOWER), alpha,
                            g[0].h, g[0].h, g[1].h, fn);
    return deso__args_finish(ctx, g, k, err);
}

/* dsyr2 as two masked gers: A <- alpha x y^T + A, then alpha y x^T.     */
deso_err deso__dsyr2_arg(deso_order order, deso_uplo uplo, int64_t n,
                        deso_sarg alpha, const deso_vec *x, int64_t incx,
                        const deso_vec *y, int64_t incy, deso_mat *a,
                        int64_t lda)
{
    const char *fn = "deso_dsyr2";
    deso_ctx *ctx = NULL;
    DESO_TRY(syr_args(fn, order, &uplo, n, x, incx, true, y, incy, a, lda,
                      alpha, &ctx));
    bool lower = uplo == DESO_LOWER;
    deso__arg g[3];
    int k;
    DESO_TRY(ger_open(ctx, x, n, incx, y, n, incy, a, g, &k));
    deso__handle *hx = g[0].h, *hy = g[1].h, *ha = g[2].h;
    deso__value *old = ha->val;
    uint64_t hash0 = ctx->hash;
    deso__value_ref(old);
    deso_err err = ger_node(ctx, tri_flags(lower), alpha, hx, hy, ha, fn);
    if (err == DESO_OK) {
        err = ger_node(ctx, tri_flags(lower), alpha, hy, hx, ha, fn);
        /* all or nothing: A must not keep half the update                */
        if (err != DESO_OK) deso__record_undo(ctx, ha, old, hash0);
    }
    deso__value_unref(old);
    return deso__args_finish(ctx, g, k, err);
}
