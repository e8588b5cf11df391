/* The sparse product's local kernels (sparse_kernels.h).                  */
#include "blas/sparse_kernels.h"

void blas_csr_mv(int64_t nrows, const int64_t *rowptr, const int32_t *lcol,
                 const double *val, double alpha, const double *x,
                 double beta, double *y)
{
    for (int64_t i = 0; i < nrows; i++) {
        double s = 0.0;
        for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)
            s += val[e] * x[lcol[e]];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
}

void blas_csr_mtv(int64_t nrows, const int64_t *rowptr, const int32_t *lcol,
                  const double *val, double alpha, const double *x,
                  double *z)
{
    for (int64_t i = 0; i < nrows; i++) {
        double ax = alpha * x[i];
        for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)
            z[lcol[e]] += val[e] * ax;
    }
}
