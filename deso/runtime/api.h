/* Internal: the public boundary.  Each public function of the runtime that
 * reaches a context is defined in api_*.c as a thin wrapper: it calls its
 * implementation, deso__<name> (the function as written in record_*.c,
 * data.c, force.c), and on an error invokes the context's error handler
 * through deso__raise, so that the handler runs once per failing call,
 * after the call's agreement, without an exit hook at every return.
 * Implementations call each other by these names, never the public ones,
 * or a nested failure would reach the handler twice.                      */
#ifndef DESO_RUNTIME_API_H
#define DESO_RUNTIME_API_H

/* Invokes ctx's error handler for err (unless ctx is NULL, has none, or a
 * handler is running already) and returns err.  Local.                   */
deso_err deso__raise(deso_ctx *ctx, const char *fn, deso_err err);

/* The first non-NULL of n deso_ctx * arguments, or NULL.                  */
deso_ctx *deso__reach(int n, ...);

/* The live context an argument reaches, or NULL: a context, a handle (live
 * or destroyed) or a lazy scalar argument.                                */
deso_ctx *deso__ctx_live(const deso_ctx *ctx);
deso_ctx *deso__vec_ctx(const deso_vec *x);
deso_ctx *deso__mat_ctx(const deso_mat *a);
deso_ctx *deso__scalar_ctx(const deso_scalar *s);
deso_ctx *deso__spmat_ctx(const deso_spmat *a);
deso_ctx *deso__sarg_ctx(deso_sarg a);
deso_ctx *deso__op_ctx(const deso_op *op);

#define DESO__CTX(x)                                                         \
    _Generic((x), deso_ctx *: deso__ctx_live,                                \
             const deso_ctx *: deso__ctx_live, deso_vec *: deso__vec_ctx,    \
             const deso_vec *: deso__vec_ctx, deso_mat *: deso__mat_ctx,     \
             const deso_mat *: deso__mat_ctx,                                \
             deso_scalar *: deso__scalar_ctx,                                \
             const deso_scalar *: deso__scalar_ctx,                          \
             deso_spmat *: deso__spmat_ctx,                                  \
             const deso_spmat *: deso__spmat_ctx,                            \
             deso_op *: deso__op_ctx, const deso_op *: deso__op_ctx,         \
             deso_sarg: deso__sarg_ctx)(x)

/* ---- implementations of the public functions (api_runtime.c wraps them) */

/* The quick paths of the recording functions while ctx, the context of
 * their result's handle, has a replay armed (record.h): true when the
 * call was the next expected one and is replayed, with nothing else to
 * do; false changes nothing, and the public function then calls its
 * implementation.  A whole-vector call of operation op on alpha (NULL:
 * none), x (NULL: none) and y, into y (y is an operand when op reads it:
 * not a copy); a reduction of x (and y when `two`) into result; out <- a
 * op b (b when nargs > 1); a dgemv.                                     */
bool deso__l1_quick(deso_ctx *ctx, blas_op op, int64_t n,
                    const deso_sarg *alpha, const deso_vec *x, int64_t incx,
                    deso_vec *y, int64_t incy);
bool deso__reduce_quick(deso_ctx *ctx, blas_op op, bool two, int64_t n,
                        const deso_vec *x, int64_t incx, const deso_vec *y,
                        int64_t incy, deso_scalar *result);
bool deso__binop_quick(deso_ctx *ctx, blas_op op, deso_scalar *out,
                       deso_sarg a, deso_sarg b, int nargs);
bool deso__gemv_quick(deso_ctx *ctx, deso_order order, deso_trans trans,
                      int64_t m, int64_t n, deso_sarg alpha,
                      const deso_mat *a, int64_t lda, const deso_vec *x,
                      int64_t incx, deso_sarg beta, deso_vec *y,
                      int64_t incy);

deso_err deso__plan_explain(const deso_ctx *ctx, FILE *f);
deso_err deso__vec_create(deso_ctx *ctx, int64_t n, deso_vec **x);
deso_err deso__vec_from_array(deso_ctx *ctx, int64_t n, const double *data,
                              int root, deso_vec **x);
deso_err deso__vec_from_fn(deso_ctx *ctx, int64_t n, deso_vec_fn f, void *arg,
                           deso_vec **x);
deso_err deso__vec_gather(const deso_vec *x, double *buf, int root);
deso_err deso__vec_get(const deso_vec *x, int64_t i, double *value);
deso_err deso__mat_create(deso_ctx *ctx, int64_t m, int64_t n, deso_mat **a);
deso_err deso__mat_from_array(deso_ctx *ctx, int64_t m, int64_t n,
                              const double *a, int64_t lda, int root,
                              deso_mat **out);
deso_err deso__mat_from_fn(deso_ctx *ctx, int64_t m, int64_t n, deso_mat_fn f,
                           void *arg, deso_mat **out);
deso_err deso__mat_gather(const deso_mat *a, double *buf, int64_t ld,
                          int root);
deso_err deso__scalar_create(deso_ctx *ctx, double value, deso_scalar **s);
deso_err deso__scalar_get(const deso_scalar *s, double *value);
deso_err deso__sadd_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso__ssub_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso__smul_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso__sdiv_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso__ssqrt_arg(deso_scalar *out, deso_sarg a);
deso_err deso__sneg_arg(deso_scalar *out, deso_sarg a);
deso_err deso__sset_arg(deso_scalar *out, deso_sarg a);
deso_err deso__dcopy(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                     int64_t incy);
deso_err deso__dswap(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                     int64_t incy);
deso_err deso__dscal_arg(int64_t n, deso_sarg alpha, deso_vec *x,
                         int64_t incx);
deso_err deso__daxpy_arg(int64_t n, deso_sarg alpha, const deso_vec *x,
                         int64_t incx, deso_vec *y, int64_t incy);
deso_err deso__daxpby_arg(int64_t n, deso_sarg alpha, const deso_vec *x,
                          int64_t incx, deso_sarg beta, deso_vec *y,
                          int64_t incy);
deso_err deso__ddot(int64_t n, const deso_vec *x, int64_t incx,
                    const deso_vec *y, int64_t incy, deso_scalar *result);
deso_err deso__dnrm2(int64_t n, const deso_vec *x, int64_t incx,
                     deso_scalar *result);
deso_err deso__dasum(int64_t n, const deso_vec *x, int64_t incx,
                     deso_scalar *result);
deso_err deso__idamax(int64_t n, const deso_vec *x, int64_t incx,
                      deso_scalar *result);
deso_err deso__dvmul(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                     int64_t incy);
deso_err deso__dgemv_arg(deso_order order, deso_trans trans, int64_t m,
                         int64_t n, deso_sarg alpha, const deso_mat *a,
                         int64_t lda, const deso_vec *x, int64_t incx,
                         deso_sarg beta, deso_vec *y, int64_t incy);
deso_err deso__dusmv_arg(deso_ctx *ctx, deso_trans trans, deso_sarg alpha,
                         const deso_spmat *a, const deso_vec *x,
                         deso_sarg beta, deso_vec *y);
deso_err deso__dger_arg(deso_order order, int64_t m, int64_t n,
                        deso_sarg alpha, const deso_vec *x, int64_t incx,
                        const deso_vec *y, int64_t incy, deso_mat *a,
                        int64_t lda);
deso_err deso__dsymv_arg(deso_order order, deso_uplo uplo, int64_t n,
                         deso_sarg alpha, const deso_mat *a, int64_t lda,
                         const deso_vec *x, int64_t incx, deso_sarg beta,
                         deso_vec *y, int64_t incy);
deso_err deso__spmat_from_csr(deso_ctx *ctx, int64_t m, int64_t n,
                              const int64_t *rowptr, const int64_t *col,
                              const double *val, int root, deso_spmat **out);
deso_err deso__spmat_from_rows(deso_ctx *ctx, int64_t m, int64_t n,
                               int64_t row0, int64_t nrows,
                               const int64_t *rowptr, const int64_t *col,
                               const double *val, deso_spmat **out);
deso_err deso__spmat_from_gen(deso_ctx *ctx, const char *spec,
                              deso_spmat **out);
deso_err deso__spmat_set_values(deso_spmat *a, const double *val, int root);
deso_err deso__spmat_shape(const deso_spmat *a, int64_t *m, int64_t *n,
                           int64_t *nnz);
deso_err deso__spmat_local(const deso_spmat *a, int64_t *row0,
                           int64_t *nrows, int64_t *nnz);
deso_err deso__spmat_placement(const deso_spmat *a, deso_partition *placed);
deso_err deso__spmat_local_rows(const deso_spmat *a, int64_t *rowptr,
                                int64_t *col, double *val);
deso_err deso__spmat_gather(const deso_spmat *a, int64_t *rowptr,
                            int64_t *col, double *val, int root);
deso_err deso__op_create(deso_ctx *ctx, int64_t m, int64_t n, deso_op_fn fn,
                         void *user, deso_op_layout x_layout,
                         deso_op_layout y_layout, const deso_mat *rows_of,
                         deso_op **op);
deso_err deso__op_create_spmat(deso_ctx *ctx, deso_op_fn fn, void *user,
                               const deso_spmat *rows_of, deso_op **op);
deso_err deso__op_apply(deso_op *op, const deso_vec *x, deso_vec *y);
deso_err deso__dtrsv(deso_order order, deso_uplo uplo, deso_trans trans,
                     deso_diag diag, int64_t n, const deso_mat *a, int64_t lda,
                     deso_vec *x, int64_t incx);

#endif
