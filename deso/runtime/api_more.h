/* Internal: the implementations behind the public rotation, triangular,
 * symmetric rank-1/2, element-wise and scalar min/max functions (in
 * record_rot.c, record_l2.c, record_elem.c, record_scalar.c), which
 * api_more.c wraps with the context's error handler as api.h describes.  */
#ifndef DESO_RUNTIME_API_MORE_H
#define DESO_RUNTIME_API_MORE_H

#include "deso/deso.h"

deso_err deso__drot_arg(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                        int64_t incy, deso_sarg c, deso_sarg s);
deso_err deso__drotm(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                     int64_t incy, const double param[5]);
deso_err deso__dvdiv(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                     int64_t incy);
deso_err deso__dvrecip(int64_t n, const deso_vec *x, int64_t incx,
                       deso_vec *y, int64_t incy);
deso_err deso__dvabs(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                     int64_t incy);
deso_err deso__smax_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso__smin_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso__dtrmv(deso_order order, deso_uplo uplo, deso_trans trans,
                     deso_diag diag, int64_t n, const deso_mat *a,
                     int64_t lda, deso_vec *x, int64_t incx);
deso_err deso__dsyr_arg(deso_order order, deso_uplo uplo, int64_t n,
                        deso_sarg alpha, const deso_vec *x, int64_t incx,
                        deso_mat *a, int64_t lda);
deso_err deso__dsyr2_arg(deso_order order, deso_uplo uplo, int64_t n,
                         deso_sarg alpha, const deso_vec *x, int64_t incx,
                         const deso_vec *y, int64_t incy, deso_mat *a,
                         int64_t lda);
deso_err deso__vec_view(deso_vec *x, int64_t offset, int64_t n,
                        int64_t stride, deso_vec **view);
deso_err deso__mat_col(deso_mat *a, int64_t j, deso_vec **view);
deso_err deso__mat_cols(deso_mat *a, int64_t j0, int64_t ncols,
                        deso_mat **view);
deso_err deso__mat_block(deso_mat *a, int64_t i0, int64_t j0, int64_t m,
                         int64_t n, deso_mat **view);

#endif
