/* Element-wise kernels beyond vmul (deso_dvdiv, deso_dvrecip, deso_dvabs)
 * and the two-term update behind drot and drotm.  The executor has put
 * every vector operand in the result's placement, so the local pieces line
 * up element for element; IEEE arithmetic throughout (x / 0 is inf).     */
#include "blas/kernels.h"

#include <math.h>

/* y <- y ./ x                                                             */
void blas__k_vdiv(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)red;
    const double *x = ops[0].data;
    double *y = res->data;
    for (int64_t i = 0; i < res->rows; i++) y[i] /= x[i];
}

/* y <- 1 ./ x (y is not read)                                             */
void blas__k_vrecip(const blas_desc *d, const blas_local *ops,
                    blas_local *res, double *red)
{
    (void)d;
    (void)red;
    const double *x = ops[0].data;
    double *y = res->data;
    for (int64_t i = 0; i < res->rows; i++) y[i] = 1.0 / x[i];
}

/* y <- |x| (y is not read)                                                */
void blas__k_vabs(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)red;
    const double *x = ops[0].data;
    double *y = res->data;
    for (int64_t i = 0; i < res->rows; i++) y[i] = fabs(x[i]);
}

/* u <- a u + b v, or a u - b v with BLAS_F_NEG.  Unlike axpby, a zero a
 * still reads u, as reference drot does (0 * NaN is NaN).                */
void blas__k_rot(const blas_desc *d, const blas_local *ops, blas_local *res,
                 double *red)
{
    (void)red;
    double a = ops[0].data[0], b = ops[2].data[0];
    if (d->flags & BLAS_F_NEG) b = -b;
    const double *v = ops[3].data;
    double *u = res->data;
    for (int64_t i = 0; i < res->rows; i++) u[i] = a * u[i] + b * v[i];
}
