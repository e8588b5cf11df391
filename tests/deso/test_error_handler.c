/* The context's error handler (deso_set_error_handler).
 *
 * A counting handler records each invocation (context, code, function
 * name, message, argument).  Every public function that reaches a context
 * is called once with a bad argument, the context reached through each
 * kind of argument (the context itself, a vector, a matrix, a scalar, a
 * sparse matrix, a user operator, a lazy scalar argument, a later argument when the first is NULL, a
 * destroyed handle's shell), the routines of every section of deso.h
 * included: the handler runs exactly once, with the code
 * the call returned, the function's public name, deso_last_error() as its
 * message and the user's argument.  Successful calls never invoke it, nor
 * does a call whose arguments reach no context.  Collective errors: a bad
 * argument on the root only, and ranks recording different calls (P > 1:
 * at deso_flush and at deso_finalize, whose handler still sees a live
 * context), reach the handler on every rank, once, after the agreement
 * (with the agreed code and the failing rank's message).  A handler's own
 * failing calls return their codes without re-entering it.  The default,
 * and DESO_ERRORS_RETURN set explicitly, return codes as before.
 *
 * DESO_ERRORS_ABORT ends the job: run as `test_error_handler --abort`
 * (under mpiexec.mpich, by scripts/test-abort.sh) the program makes one failing
 * collective call with it set and must never reach the line after it.
 * deso-np: 1 2 3 4                                                        */
#include "deso/runtime/runtime.h"
#include "placement/errors.h"
#include "test_util.h"

static int me, np;

/* What the handler saw.                                                   */
static struct {
    int calls;
    deso_ctx *ctx;
    deso_err err;
    char fn[64];
    char msg[512];
    void *arg;
} seen;

static int cookie;

static void counting(deso_ctx *ctx, deso_err err, const char *fn,
                     const char *msg, void *arg)
{
    seen.calls++;
    seen.ctx = ctx;
    seen.err = err;
    snprintf(seen.fn, sizeof seen.fn, "%s", fn);
    snprintf(seen.msg, sizeof seen.msg, "%s", msg);
    seen.arg = arg;
}

static int bad;

/* The call returns `code` and the handler ran once for it on `ctx`.  */
#define EH_ERR(ctx_, call, code, name)                                       \
    do {                                                                     \
        memset(&seen, 0, sizeof seen);                                       \
        deso_err e_ = (call);                                                \
        int ok_ = e_ == (code) && seen.calls == 1 && seen.err == e_ &&       \
                  seen.ctx == (ctx_) && strcmp(seen.fn, name) == 0 &&        \
                  seen.arg == &cookie && seen.msg[0] != '\0' &&              \
                  strcmp(seen.msg, deso_last_error()) == 0;                  \
        if (!ok_)                                                            \
            print_error("rank %d: line %d: %s -> %s; handler: %d calls, "    \
                        "%s, \"%s\", \"%s\"\n", me, __LINE__, #call,         \
                        deso_errname(e_), seen.calls,                        \
                        deso_errname(seen.err), seen.fn, seen.msg);          \
        bad += !ok_;                                                         \
    } while (0)

/* The call succeeds and the handler does not run.                         */
#define EH_OK(call)                                                          \
    do {                                                                     \
        memset(&seen, 0, sizeof seen);                                       \
        deso_err e_ = (call);                                                \
        int ok_ = e_ == DESO_OK && seen.calls == 0;                          \
        if (!ok_)                                                            \
            print_error("rank %d: line %d: %s -> %s; handler: %d calls\n",  \
                        me, __LINE__, #call, deso_errname(e_), seen.calls);  \
        bad += !ok_;                                                         \
    } while (0)

#define EH_SYNC()                                                            \
    do {                                                                     \
        assert_true(tu_all(bad == 0));                                       \
        bad = 0;                                                             \
    } while (0)

static double one(int64_t i, void *arg)
{
    (void)arg;
    return (double)(i + 1);
}

static double eye(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return i == j ? 2.0 : 0.0;
}

static deso_ctx *counted_ctx(void)
{
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    assert_non_null(ctx);
    TU_OK(deso_set_error_handler(ctx, counting, &cookie));
    return ctx;
}

/* ---- the default and the return mode ------------------------------------ */

static void test_return_mode(void **state)
{
    (void)state;
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    deso_error_handler h = counting;
    void *arg = &cookie;
    TU_OK(deso_get_error_handler(ctx, &h, &arg));
    assert_true(tu_all(h == DESO_ERRORS_RETURN && arg == NULL));
    deso_vec *x;
    TU_ERR(deso_vec_create(ctx, -1, &x), DESO_ESIZE);
    TU_OK(deso_set_error_handler(ctx, counting, &cookie));
    TU_OK(deso_get_error_handler(ctx, &h, &arg));
    assert_true(tu_all(h == counting && arg == &cookie));
    TU_OK(deso_set_error_handler(ctx, DESO_ERRORS_RETURN, NULL));
    memset(&seen, 0, sizeof seen);
    TU_ERR(deso_vec_create(ctx, -1, &x), DESO_ESIZE);
    TU_ERR(deso_dcopy(3, NULL, 1, NULL, 1), DESO_ENULL);
    assert_true(tu_all(seen.calls == 0));
    /* no context to reach: the setters fail without a handler             */
    TU_ERR(deso_set_error_handler(NULL, counting, NULL), DESO_ENULL);
    TU_ERR(deso_get_error_handler(ctx, NULL, &arg), DESO_ENULL);
    TU_OK(deso_finalize(&ctx));
}

/* ---- every function, once each ------------------------------------------- */

/* Context, options, plans, wisdom, data: reached through ctx.            */
static void ctx_calls(deso_ctx *ctx)
{
    deso_vec *x = NULL;
    deso_mat *a = NULL;
    deso_scalar *s = NULL;
    double buf[4] = {1, 2, 3, 4};
    int d9[9] = {0};
    EH_ERR(ctx, deso_get_info(ctx, NULL), DESO_ENULL, "deso_get_info");
    EH_ERR(ctx, deso_plan_explain(ctx, NULL), DESO_ENULL, "deso_plan_explain");
    EH_ERR(ctx, deso_wisdom_export(ctx, NULL), DESO_ENULL,
           "deso_wisdom_export");
    EH_ERR(ctx, deso_wisdom_import(ctx, "/nonexistent/deso/wisdom"),
           DESO_EIO, "deso_wisdom_import");
    EH_ERR(ctx, deso_vec_create(ctx, -1, &x), DESO_ESIZE, "deso_vec_create");
    EH_ERR(ctx, deso_vec_from_array(ctx, 4, buf, np + 3, &x), DESO_EINVAL,
           "deso_vec_from_array");
    EH_ERR(ctx, deso_vec_from_fn(ctx, 4, NULL, NULL, &x), DESO_ENULL,
           "deso_vec_from_fn");
    EH_ERR(ctx, deso_mat_create(ctx, 2, -1, &a), DESO_ESIZE,
           "deso_mat_create");
    EH_ERR(ctx, deso_mat_from_array(ctx, 2, 2, buf, 1, DESO_ALL_RANKS, &a),
           DESO_EINVAL, "deso_mat_from_array");
    EH_ERR(ctx, deso_mat_from_fn(ctx, 2, 2, NULL, NULL, &a), DESO_ENULL,
           "deso_mat_from_fn");
    EH_ERR(ctx, deso_mat_from_mtx(ctx, "/nonexistent/a.mtx", &a), DESO_EIO,
           "deso_mat_from_mtx");
    EH_ERR(ctx, deso_scalar_create(ctx, 1.0, NULL), DESO_ENULL,
           "deso_scalar_create");
    EH_ERR(ctx, deso_blacs_context(ctx, NULL), DESO_ENULL,
           "deso_blacs_context");
    EH_ERR(ctx, deso_mat_from_scalapack(ctx, NULL, d9, DESO_COPY, &a),
           DESO_EINVAL, "deso_mat_from_scalapack");
    EH_ERR(ctx, deso_vec_from_scalapack(ctx, NULL, d9, DESO_COPY, &x),
           DESO_EINVAL, "deso_vec_from_scalapack");
    (void)s;
}

/* The sparse matrix's constructors (through the context) and its other
 * calls (through the handle, a destroyed one's shell included).          */
static void spmat_calls(deso_ctx *ctx)
{
    deso_spmat *a = NULL;
    int64_t rp[2] = {0, 1}, cl[1] = {0}, m, n, nnz;
    double v[1] = {1.0};
    EH_ERR(ctx, deso_spmat_from_mtx(ctx, "/nonexistent/a.mtx", &a), DESO_EIO,
           "deso_spmat_from_mtx");
    EH_ERR(ctx, deso_spmat_from_csr(ctx, 1, 1, rp, cl, v, np, &a),
           DESO_EINVAL, "deso_spmat_from_csr");
    EH_ERR(ctx, deso_spmat_from_rows(ctx, -1, 1, 0, 0, rp, cl, v, &a),
           DESO_ESIZE, "deso_spmat_from_rows");
    EH_ERR(ctx, deso_spmat_from_gen(ctx, "lap7d:3", &a), DESO_EINVAL,
           "deso_spmat_from_gen");
    TU_OK(deso_spmat_from_gen(ctx, "lap2d:3", &a));
    EH_ERR(ctx, deso_spmat_shape(a, NULL, &n, &nnz), DESO_ENULL,
           "deso_spmat_shape");
    EH_ERR(ctx, deso_spmat_local(a, &m, NULL, &nnz), DESO_ENULL,
           "deso_spmat_local");
    EH_ERR(ctx, deso_spmat_placement(a, NULL), DESO_ENULL,
           "deso_spmat_placement");
    EH_ERR(ctx, deso_spmat_local_rows(a, NULL, cl, v), DESO_ENULL,
           "deso_spmat_local_rows");
    EH_ERR(ctx, deso_spmat_set_values(a, v, np + 1), DESO_EINVAL,
           "deso_spmat_set_values");
    EH_ERR(ctx, deso_spmat_gather(a, NULL, NULL, NULL, DESO_ALL_RANKS),
           DESO_ENULL, "deso_spmat_gather");
    /* the product reaches the handler through ctx, or through A when ctx
     * is NULL                                                            */
    EH_ERR(ctx, deso_dusmv(ctx, (deso_trans)5, 1.0, a, NULL, 0.0, NULL),
           DESO_EINVAL, "deso_dusmv");
    EH_ERR(ctx, deso_dusmv(NULL, DESO_NO_TRANS, 1.0, a, NULL, 0.0, NULL),
           DESO_ENULL, "deso_dusmv");
    deso_spmat *a2 = a, *a3 = a;
    EH_OK(deso_spmat_destroy(&a));
    EH_ERR(ctx, deso_spmat_destroy(&a2), DESO_ESTALE, "deso_spmat_destroy");
    EH_ERR(ctx, deso_spmat_shape(a3, &m, &n, &nnz), DESO_ESTALE,
           "deso_spmat_shape");
}

/* Reads, shapes, destruction: reached through the handle.                 */
static void handle_calls(deso_ctx *ctx)
{
    deso_vec *x, *d, *x2;
    deso_mat *a;
    deso_scalar *s, *s2;
    TU_OK(deso_vec_from_fn(ctx, 4, one, NULL, &x));
    TU_OK(deso_vec_create(ctx, 3, &d));
    TU_OK(deso_mat_from_fn(ctx, 4, 4, eye, NULL, &a));
    TU_OK(deso_scalar_create(ctx, 1.0, &s));
    double buf[16], v;
    int64_t len;
    int d9[9];
    double *loc;
    EH_ERR(ctx, deso_vec_length(x, NULL), DESO_ENULL, "deso_vec_length");
    EH_ERR(ctx, deso_mat_shape(a, NULL, NULL), DESO_ENULL, "deso_mat_shape");
    EH_ERR(ctx, deso_vec_gather(x, buf, np + 3), DESO_EINVAL,
           "deso_vec_gather");
    EH_ERR(ctx, deso_vec_get(x, 99, &v), DESO_EINVAL, "deso_vec_get");
    EH_ERR(ctx, deso_mat_gather(a, buf, 1, DESO_ALL_RANKS), DESO_EINVAL,
           "deso_mat_gather");
    EH_ERR(ctx, deso_scalar_get(s, NULL), DESO_ENULL, "deso_scalar_get");
    EH_ERR(ctx, deso_mat_diag(a, d), DESO_ESIZE, "deso_mat_diag");
    EH_ERR(ctx, deso_mat_to_scalapack(a, -1, -1, 2, DESO_COPY, d9, &loc),
           DESO_EINVAL, "deso_mat_to_scalapack");
    EH_ERR(ctx, deso_vec_to_scalapack(x, -1, 0, (deso_copy_mode)7, d9, &loc),
           DESO_EINVAL, "deso_vec_to_scalapack");
    EH_ERR(ctx, deso_vec_duplicate(x, NULL), DESO_ENULL,
           "deso_vec_duplicate");
    /* a destroyed handle's shell still reaches its context               */
    x2 = x;
    s2 = s;
    EH_OK(deso_vec_destroy(&x));
    EH_OK(deso_scalar_destroy(&s));
    EH_ERR(ctx, deso_vec_destroy(&x2), DESO_ESTALE, "deso_vec_destroy");
    EH_ERR(ctx, deso_scalar_destroy(&s2), DESO_ESTALE, "deso_scalar_destroy");
    deso_mat *a2 = a;
    EH_OK(deso_mat_destroy(&a));
    EH_ERR(ctx, deso_mat_destroy(&a2), DESO_ESTALE, "deso_mat_destroy");
    x2 = d;
    EH_OK(deso_vec_destroy(&d));
    EH_ERR(ctx, deso_vec_length(x2, &len), DESO_ESTALE, "deso_vec_length");
}

/* Recorded calls: reached through any handle or lazy scalar argument.     */
static void record_calls(deso_ctx *ctx)
{
    deso_vec *x, *y;
    deso_mat *a;
    deso_scalar *s, *r = NULL;
    TU_OK(deso_vec_from_fn(ctx, 4, one, NULL, &x));
    TU_OK(deso_vec_create(ctx, 4, &y));
    TU_OK(deso_mat_from_fn(ctx, 4, 4, eye, NULL, &a));
    TU_OK(deso_scalar_create(ctx, 2.0, &s));
    EH_ERR(ctx, deso_dcopy(4, NULL, 1, y, 1), DESO_ENULL, "deso_dcopy");
    EH_ERR(ctx, deso_dswap(5, x, 1, y, 1), DESO_ESIZE, "deso_dswap");
    EH_ERR(ctx, deso_dscal(4, s, x, 2), DESO_ESIZE, "deso_dscal");
    EH_ERR(ctx, deso_daxpy(4, s, NULL, 1, NULL, 1), DESO_ENULL,
           "deso_daxpy");
    EH_ERR(ctx, deso_daxpby(4, 1.0, x, 1, 2.0, y, 0), DESO_EINVAL,
           "deso_daxpby");
    EH_ERR(ctx, deso_ddot(4, x, 1, y, 1, NULL), DESO_ENULL, "deso_ddot");
    EH_ERR(ctx, deso_dnrm2(-1, x, 1, s), DESO_ESIZE, "deso_dnrm2");
    EH_ERR(ctx, deso_dasum(3, x, 2, s), DESO_ESIZE, "deso_dasum");
    EH_ERR(ctx, deso_idamax(4, x, 1, NULL), DESO_ENULL, "deso_idamax");
    EH_ERR(ctx, deso_dvmul(4, x, 1, NULL, 1), DESO_ENULL, "deso_dvmul");
    EH_ERR(ctx, deso_dgemv(DESO_COL_MAJOR, (deso_trans)7, 4, 4, 1.0, a, 4, x,
                           1, 0.0, y, 1),
           DESO_EINVAL, "deso_dgemv");
    EH_ERR(ctx, deso_dger(DESO_COL_MAJOR, 4, 4, 1.0, x, 1, y, 1, a, 0),
           DESO_EINVAL, "deso_dger");
    EH_ERR(ctx, deso_dsymv(DESO_COL_MAJOR, (deso_uplo)7, 4, 1.0, a, 4, x, 1,
                           0.0, y, 1),
           DESO_EINVAL, "deso_dsymv");
    EH_ERR(ctx, deso_dtrsv(DESO_COL_MAJOR, DESO_UPPER, DESO_NO_TRANS,
                           (deso_diag)7, 4, a, 4, x, 1),
           DESO_EINVAL, "deso_dtrsv");
    /* the scalar operations, reached through the output or a lazy input  */
    EH_ERR(ctx, deso_sadd(NULL, s, 1.0), DESO_ENULL, "deso_sadd");
    EH_ERR(ctx, deso_ssub(s, 1.0, (deso_scalar *)NULL), DESO_ENULL,
           "deso_ssub");
    EH_ERR(ctx, deso_smul(NULL, 2.0, s), DESO_ENULL, "deso_smul");
    EH_ERR(ctx, deso_sdiv(s, (deso_scalar *)x, 2.0), DESO_EINVAL,
           "deso_sdiv");
    EH_ERR(ctx, deso_ssqrt(NULL, s), DESO_ENULL, "deso_ssqrt");
    EH_ERR(ctx, deso_sneg(s, (deso_scalar *)a), DESO_EINVAL, "deso_sneg");
    EH_ERR(ctx, deso_sset(NULL, s), DESO_ENULL, "deso_sset");
    EH_ERR(ctx, deso_ddot_new(4, x, 1, NULL, 1, &r), DESO_ENULL,
           "deso_ddot_new");
    EH_ERR(ctx, deso_dnrm2_new(5, x, 1, &r), DESO_ESIZE, "deso_dnrm2_new");
    EH_ERR(ctx, deso_dasum_new(4, x, 1, NULL), DESO_ENULL, "deso_dasum_new");
    EH_ERR(ctx, deso_idamax_new(4, x, 7, &r), DESO_ESIZE,
           "deso_idamax_new");
    assert_true(tu_all(r == NULL));
    /* nothing failed recorded anything: the context computes             */
    EH_OK(deso_ddot_new(4, x, 1, x, 1, &r));
    double v = 0.0;
    EH_OK(deso_scalar_get(r, &v));
    EH_OK(deso_flush(ctx));
    if (v != 30.0) bad++;
}

/* The rotations, element-wise operations, level 2 updates, scalar
 * maximum and minimum, and global matrix files.                          */
static void more_calls(deso_ctx *ctx)
{
    deso_vec *x, *y;
    deso_mat *a;
    deso_scalar *s;
    TU_OK(deso_vec_from_fn(ctx, 4, one, NULL, &x));
    TU_OK(deso_vec_create(ctx, 4, &y));
    TU_OK(deso_mat_from_fn(ctx, 4, 4, eye, NULL, &a));
    TU_OK(deso_scalar_create(ctx, 2.0, &s));
    EH_ERR(ctx, deso_drot(4, NULL, 1, y, 1, s, 0.5), DESO_ENULL, "deso_drot");
    EH_ERR(ctx, deso_drotm(4, x, 1, y, 1, NULL), DESO_ENULL, "deso_drotm");
    EH_ERR(ctx, deso_dvdiv(5, x, 1, y, 1), DESO_ESIZE, "deso_dvdiv");
    EH_ERR(ctx, deso_dvrecip(4, x, 1, NULL, 1), DESO_ENULL, "deso_dvrecip");
    EH_ERR(ctx, deso_dvabs(4, x, 2, y, 1), DESO_ESIZE, "deso_dvabs");
    deso_vec *vw = NULL;
    deso_mat *mw = NULL;
    EH_ERR(ctx, deso_vec_view(x, 0, 4, 0, &vw), DESO_EINVAL, "deso_vec_view");
    EH_ERR(ctx, deso_mat_col(a, 4, &vw), DESO_ESIZE, "deso_mat_col");
    EH_ERR(ctx, deso_mat_cols(a, 0, 5, &mw), DESO_ESIZE, "deso_mat_cols");
    EH_ERR(ctx, deso_mat_block(a, 0, 0, 0, 1, &mw), DESO_ESIZE,
           "deso_mat_block");
    EH_ERR(ctx, deso_smax(NULL, s, 1.0), DESO_ENULL, "deso_smax");
    EH_ERR(ctx, deso_smin(s, 1.0, (deso_scalar *)NULL), DESO_ENULL,
           "deso_smin");
    EH_ERR(ctx, deso_dtrmv(DESO_COL_MAJOR, (deso_uplo)7, DESO_NO_TRANS,
                           DESO_UNIT, 4, a, 4, x, 1),
           DESO_EINVAL, "deso_dtrmv");
    EH_ERR(ctx, deso_dsyr(DESO_COL_MAJOR, DESO_UPPER, 4, 1.0, x, 1, a, 0),
           DESO_EINVAL, "deso_dsyr");
    EH_ERR(ctx, deso_dsyr2(DESO_COL_MAJOR, DESO_LOWER, 4, 1.0, x, 1, NULL, 1,
                           a, 4),
           DESO_ENULL, "deso_dsyr2");
    EH_ERR(ctx, deso_mat_to_file(a, NULL), DESO_ENULL, "deso_mat_to_file");
    double rate;
    EH_ERR(ctx, deso_mat_read_rate(a, &rate), DESO_EINVAL,
           "deso_mat_read_rate");
    EH_ERR(ctx, deso_mat_from_file(ctx, "/nonexistent/a.bin", &a), DESO_EIO,
           "deso_mat_from_file");
    /* the host-side generators reach no context                         */
    memset(&seen, 0, sizeof seen);
    if (deso_drotg(NULL, NULL, NULL, NULL) != DESO_ENULL || seen.calls != 0)
        bad++;
}

/* A user operator's callback (y <- x where y is) that fails on the last
 * rank only.                                                             */
static int copy_or_fail(void *user, const double *x, const deso_op_part *xp,
                        double *y, const deso_op_part *yp)
{
    (void)user;
    (void)xp;
    for (int64_t i = 0; i < yp->nlocal; i++) y[i] = x[i];
    return me == np - 1 ? 5 : 0;
}

/* The user operators' functions, the context reached through the context,
 * the operator, a vector and a destroyed operator's shell; a callback
 * failing on one rank reaches the handler of every rank at the force.   */
static void op_calls(deso_ctx *ctx)
{
    deso_vec *x, *y;
    deso_mat *a;
    deso_op *op = NULL;
    TU_OK(deso_vec_from_fn(ctx, 4, one, NULL, &x));
    TU_OK(deso_vec_create(ctx, 4, &y));
    TU_OK(deso_mat_from_fn(ctx, 4, 4, eye, NULL, &a));
    EH_ERR(ctx, deso_op_create(ctx, 4, 4, NULL, NULL, DESO_OP_LIKE_Y,
                               DESO_OP_ANY, NULL, &op),
           DESO_ENULL, "deso_op_create");
    EH_ERR(ctx, deso_op_create(NULL, 4, 4, copy_or_fail, NULL,
                               DESO_OP_REPLICATED, DESO_OP_ROWS, a, &op),
           DESO_ENULL, "deso_op_create");
    EH_ERR(ctx, deso_op_create_spmat(ctx, copy_or_fail, NULL, NULL, &op),
           DESO_ENULL, "deso_op_create_spmat");
    EH_ERR(ctx, deso_op_create_spmat(ctx, copy_or_fail, NULL,
                                     (const deso_spmat *)a, &op),
           DESO_EINVAL, "deso_op_create_spmat");
    EH_OK(deso_op_create(ctx, 4, 4, copy_or_fail, NULL, DESO_OP_LIKE_Y,
                         DESO_OP_ANY, NULL, &op));
    EH_ERR(ctx, deso_op_apply(op, x, NULL), DESO_ENULL, "deso_op_apply");
    EH_ERR(ctx, deso_op_apply(NULL, x, y), DESO_ENULL, "deso_op_apply");
    EH_OK(deso_op_apply(op, x, y));
    EH_ERR(ctx, deso_flush(ctx), DESO_EUSER, "deso_flush");
    deso_op *op2 = op;
    EH_OK(deso_op_destroy(&op));
    EH_ERR(ctx, deso_op_destroy(&op2), DESO_ESTALE, "deso_op_destroy");
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_mat_destroy(&a));
}

static void test_each_function(void **state)
{
    (void)state;
    deso_ctx *ctx = counted_ctx();
    ctx_calls(ctx);
    EH_SYNC();
    spmat_calls(ctx);
    EH_SYNC();
    handle_calls(ctx);
    EH_SYNC();
    record_calls(ctx);
    EH_SYNC();
    more_calls(ctx);
    EH_SYNC();
    op_calls(ctx);
    EH_SYNC();
    /* no context reachable: nothing to invoke                             */
    memset(&seen, 0, sizeof seen);
    TU_ERR(deso_dcopy(3, NULL, 1, NULL, 1), DESO_ENULL);
    TU_ERR(deso_flush(NULL), DESO_ENULL);
    assert_true(tu_all(seen.calls == 0));
    TU_OK(deso_finalize(&ctx));
}

/* ---- collective errors ----------------------------------------------------- */

/* Bad data on the root only: every rank returns it and handles it.       */
static void test_agreed(void **state)
{
    (void)state;
    deso_ctx *ctx = counted_ctx();
    deso_vec *x = NULL;
    double buf[4] = {1, 2, 3, 4};
    EH_ERR(ctx, deso_vec_from_array(ctx, 4, me == 0 ? NULL : buf, 0, &x),
           DESO_ENULL, "deso_vec_from_array");
    EH_SYNC();
    assert_true(tu_all(strstr(seen.msg, "rank 0") != NULL || np == 1));
    if (np > 1) {
        /* ranks that recorded different calls: the force's agreement    */
        deso_vec *y;
        TU_OK(deso_vec_create(ctx, 4, &y));
        if (me == np - 1 && deso_dscal(4, 2.0, y, 1) != DESO_OK) bad++;
        EH_ERR(ctx, deso_flush(ctx), DESO_EMISMATCH, "deso_flush");
        EH_SYNC();
    }
    TU_OK(deso_finalize(&ctx));
}

/* deso_finalize's handler runs while the context is alive.              */
static int finalize_ok;

static void at_finalize(deso_ctx *ctx, deso_err err, const char *fn,
                        const char *msg, void *arg)
{
    deso_info info;
    finalize_ok = err == DESO_EMISMATCH && strcmp(fn, "deso_finalize") == 0 &&
                  msg[0] != '\0' && arg == &cookie &&
                  deso_get_info(ctx, &info) == DESO_OK;
}

/* Ranks that recorded different calls fail deso_finalize's force: the
 * handler runs on every rank.  One rank cannot differ from itself: there
 * the same pending call finalizes cleanly and the handler stays quiet.   */
static void test_finalize(void **state)
{
    (void)state;
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    TU_OK(deso_set_error_handler(ctx, at_finalize, &cookie));
    deso_vec *y;
    TU_OK(deso_vec_create(ctx, 4, &y));
    if (me == 0) assert_int_equal(deso_dscal(4, 2.0, y, 1), DESO_OK);
    finalize_ok = -1;
    TU_ERR(deso_finalize(&ctx), np > 1 ? DESO_EMISMATCH : DESO_OK);
    assert_null(ctx);
    assert_true(tu_all(np > 1 ? finalize_ok == 1 : finalize_ok == -1));
}

/* A handler whose own calls fail is not re-entered.                      */
static int nested_calls;

static void nested(deso_ctx *ctx, deso_err err, const char *fn,
                   const char *msg, void *arg)
{
    (void)err;
    (void)fn;
    (void)msg;
    (void)arg;
    nested_calls++;
    deso_vec *x;
    if (deso_vec_create(ctx, -2, &x) != DESO_ESIZE) nested_calls += 100;
}

static void test_not_reentered(void **state)
{
    (void)state;
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    TU_OK(deso_set_error_handler(ctx, nested, NULL));
    deso_vec *x;
    nested_calls = 0;
    TU_ERR(deso_vec_create(ctx, -1, &x), DESO_ESIZE);
    assert_true(tu_all(nested_calls == 1));
    TU_OK(deso_finalize(&ctx));
}

/* ---- the abort mode, run by scripts/test-abort.sh ------------------------- */

static int abort_run(void)
{
    deso_ctx *ctx = NULL;
    if (deso_init(MPI_COMM_WORLD, NULL, &ctx) != DESO_OK) return 3;
    if (deso_set_error_handler(ctx, DESO_ERRORS_ABORT, NULL) != DESO_OK)
        return 3;
    double buf[4] = {1, 2, 3, 4};
    deso_vec *x = NULL;
    /* bad on rank 0 only: every rank aborts after the agreement          */
    deso_vec_from_array(ctx, 4, me == 0 ? NULL : buf, 0, &x);
    printf("test_error_handler: rank %d: not aborted\n", me);
    deso_finalize(&ctx);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc > 1 && strcmp(argv[1], "--abort") == 0) {
        int rc = abort_run();
        MPI_Finalize();
        return rc;
    }
    unsetenv("DESO_WISDOM");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_return_mode),
        cmocka_unit_test(test_each_function),
        cmocka_unit_test(test_agreed),
        cmocka_unit_test(test_finalize),
        cmocka_unit_test(test_not_reentered),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
