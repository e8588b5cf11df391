/* The rank-1 update restricted to one triangle of the global matrix
 * (dsyr, and dsyr2 as two of them): reference BLAS leaves the other
 * triangle untouched, and so must deso, since a user may keep other data
 * there.  Within a local block the rows are consecutive global rows, so
 * the rows of column j inside the triangle are one contiguous range.     */
#include "blas/kernels.h"

#include <cblas.h>

/* Rows [*lo, *hi) of a block of h rows starting at global row gi0 that
 * lie in column gj's triangle (upper: i <= j; lower: i >= j).            */
static void tri_rows(bool lower, int64_t gi0, int64_t h, int64_t gj,
                     int64_t *lo, int64_t *hi)
{
    int64_t k = gj - gi0;      /* the diagonal's row within the block       */
    if (lower) {
        *lo = k < 0 ? 0 : k > h ? h : k;
        *hi = h;
    } else {
        *lo = 0;
        *hi = k + 1 < 0 ? 0 : k + 1 > h ? h : k + 1;
    }
}

void blas__k_ger_tri(const blas_desc *d, const blas_local *ops,
                     blas_local *res, double *red)
{
    (void)red;
    int64_t rows = res->rows, cols = res->cols, ld = rows > 1 ? rows : 1;
    if (rows == 0 || cols == 0) return;
    double alpha = ops[0].data[0];
    if (alpha == 0.0) return;   /* reference BLAS returns before reading x */
    const double *x = ops[1].data, *y = ops[2].data;
    bool lower = (d->flags & BLAS_F_LOWER) != 0;
    int64_t mb = res->lay->b;
    for (int64_t lj = 0; lj < cols; lj++) {
        int64_t gj = blas_mat_global(res->lay, 1, res->c, res->c0 + lj);
        double ay = alpha * y[res->c0 + lj];
        for (int64_t li0 = 0; li0 < rows; li0 += mb) {
            int64_t h = rows - li0 < mb ? rows - li0 : mb, lo, hi;
            int64_t gi0 = blas_mat_global(res->lay, 0, res->r, li0);
            tri_rows(lower, gi0, h, gj, &lo, &hi);
            if (hi > lo)
                cblas_daxpy((int)(hi - lo), ay, x + li0 + lo, 1,
                            res->data + lj * ld + li0 + lo, 1);
        }
    }
}
