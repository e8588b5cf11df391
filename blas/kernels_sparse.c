/* The sparse product's local kernels (sparse_kernels.h).                  */
#include "blas/sparse_kernels.h"

static inline double row_dot(const int64_t *rowptr, const int32_t *lcol,
                             const double *val, const double *x, int64_t i)
{
    double s = 0.0;
    for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)
        s += val[e] * x[lcol[e]];
    return s;
}

/* The common y = A x (a solver's product) tests alpha and beta once, not
 * per row: 1 * s is s exactly, so the result is the same.                */
void blas_csr_mv(int64_t nrows, const int64_t *rowptr, const int32_t *lcol,
                 const double *val, double alpha, const double *x,
                 double beta, double *y)
{
    if (beta == 0.0 && alpha == 1.0) {
        for (int64_t i = 0; i < nrows; i++)
            y[i] = row_dot(rowptr, lcol, val, x, i);
        return;
    }
    for (int64_t i = 0; i < nrows; i++) {
        double s = row_dot(rowptr, lcol, val, x, i);
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
