/* The sparse product's local kernels (sparse_kernels.h).                  */
#include "blas/sparse_kernels.h"

static inline double row_dot(const int64_t *restrict rowptr,
                             const int32_t *restrict lcol,
                             const double *restrict val,
                             const double *restrict x, int64_t i)
{
    double s = 0.0;
    for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)
        s += val[e] * x[lcol[e]];
    return s;
}

/* Rows i and i + 1 at once: two independent sums, so that one row's adds
 * need not wait for the other's (a row's adds form a chain of latencies
 * that one row alone cannot hide), and one loop's overhead for two
 * entries.  Each row's sum still runs in column order, so the result is
 * bitwise the one-row loop's.                                            */
static inline void row_pair(const int64_t *restrict rowptr,
                            const int32_t *restrict lcol,
                            const double *restrict val,
                            const double *restrict x, int64_t i, double *s)
{
    int64_t a = rowptr[i], b = rowptr[i + 1], l0 = b - a, l1 = rowptr[i + 2] - b;
    const double *v0 = val + a, *v1 = val + b;
    const int32_t *c0 = lcol + a, *c1 = lcol + b;
    int64_t both = l0 < l1 ? l0 : l1, k = 0;
    double s0 = 0.0, s1 = 0.0;
    for (; k < both; k++) {
        s0 += v0[k] * x[c0[k]];
        s1 += v1[k] * x[c1[k]];
    }
    for (int64_t j = k; j < l0; j++)
        s0 += v0[j] * x[c0[j]];
    for (int64_t j = k; j < l1; j++)
        s1 += v1[j] * x[c1[j]];
    s[0] = s0;
    s[1] = s1;
}

/* y = A x: the solver's product, with nothing to scale.                  */
static void csr_mv_plain(int64_t nrows, const int64_t *restrict rowptr,
                         const int32_t *restrict lcol,
                         const double *restrict val,
                         const double *restrict x, double *restrict y)
{
    int64_t i = 0;
    for (; i + 1 < nrows; i += 2)
        row_pair(rowptr, lcol, val, x, i, y + i);
    if (i < nrows) y[i] = row_dot(rowptr, lcol, val, x, i);
}

static inline double scaled(double s, double alpha, double beta, double y)
{
    return beta == 0.0 ? alpha * s : alpha * s + beta * y;
}

/* y = alpha A x + beta y: alpha and beta tested once, not per row (1 * s
 * is s exactly, so y = A x goes the plain way with the same result).    */
void blas_csr_mv(int64_t nrows, const int64_t *restrict rowptr,
                 const int32_t *restrict lcol, const double *restrict val,
                 double alpha, const double *restrict x, double beta,
                 double *restrict y)
{
    if (beta == 0.0 && alpha == 1.0) {
        csr_mv_plain(nrows, rowptr, lcol, val, x, y);
        return;
    }
    int64_t i = 0;
    for (; i + 1 < nrows; i += 2) {
        double s[2];
        row_pair(rowptr, lcol, val, x, i, s);
        y[i] = scaled(s[0], alpha, beta, y[i]);
        y[i + 1] = scaled(s[1], alpha, beta, y[i + 1]);
    }
    if (i < nrows)
        y[i] = scaled(row_dot(rowptr, lcol, val, x, i), alpha, beta, y[i]);
}

void blas_csr_mv_skip(int64_t nrows, const int64_t *rowptr,
                      const int32_t *lcol, const double *val, double alpha,
                      const double *x, double beta, double *y, int64_t nskip,
                      const int64_t *skip)
{
    int64_t r0 = 0;
    for (int64_t k = 0; k <= nskip; k++) {
        int64_t r1 = k < nskip ? skip[k] : nrows;
        /* rowptr indexes val and lcol from the matrix's first row, so a
         * run of rows is the same kernel on a shifted rowptr and y      */
        if (r1 > r0)
            blas_csr_mv(r1 - r0, rowptr + r0, lcol, val, alpha, x, beta,
                        y + r0);
        r0 = r1 + 1;
    }
}

/* Row i's sum with x split in two: local column c < nown is own[c], else
 * halo[c - nown]; the same products added in the same order as
 * row_dot's, so bitwise its sum on the concatenated x.                  */
static double row_dot_split(const int64_t *restrict rowptr,
                            const int32_t *restrict lcol,
                            const double *restrict val,
                            const double *restrict own, int64_t nown,
                            const double *restrict halo, int64_t i)
{
    double s = 0.0;
    for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++) {
        int64_t c = lcol[e];
        s += val[e] * (c < nown ? own[c] : halo[c - nown]);
    }
    return s;
}

void blas_csr_mv_rows(int64_t nlist, const int64_t *rows,
                      const int64_t *rowptr, const int32_t *lcol,
                      const double *val, double alpha, const double *own,
                      int64_t nown, const double *halo, double beta,
                      double *y)
{
    for (int64_t k = 0; k < nlist; k++) {
        int64_t i = rows[k];
        double s = row_dot_split(rowptr, lcol, val, own, nown, halo, i);
        y[i] = scaled(s, alpha, beta, y[i]);
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
