/* Local kernels: pure functions on local pieces (OpenBLAS underneath).
 * Each kernel sees only what its rank holds; the executor has already put
 * every operand in the placement the constraint function asked for, so the
 * local pieces line up element for element.                               */
#include "blas/kernels.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

static int ilen(int64_t n) { return (int)n; }   /* local lengths fit in int */

static double sval(const blas_local *s) { return s->data[0]; }

void blas__k_copy(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)red;
    if (res->rows > 0)
        memcpy(res->data, ops[0].data, (size_t)res->rows * sizeof(double));
}

void blas__k_scal(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)red;
    if (res->rows > 0) cblas_dscal(ilen(res->rows), sval(&ops[0]), res->data, 1);
}

void blas__k_axpy(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)red;
    if (res->rows > 0)
        cblas_daxpy(ilen(res->rows), sval(&ops[0]), ops[1].data, 1, res->data,
                    1);
}

void blas__k_axpby(const blas_desc *d, const blas_local *ops, blas_local *res,
                   double *red)
{
    (void)d;
    (void)red;
    double a = sval(&ops[0]), b = sval(&ops[2]);
    const double *x = ops[1].data;
    double *y = res->data;
    /* BLAS convention: beta == 0 means y is not read (NaN-safe).          */
    if (b == 0.0)
        for (int64_t i = 0; i < res->rows; i++) y[i] = a * x[i];
    else
        for (int64_t i = 0; i < res->rows; i++) y[i] = a * x[i] + b * y[i];
}

/* y <- x .* y, element by element (deso_dvmul).                          */
void blas__k_vmul(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)red;
    const double *x = ops[0].data;
    double *y = res->data;
    for (int64_t i = 0; i < res->rows; i++) y[i] *= x[i];
}

void blas__k_dot(const blas_desc *d, const blas_local *ops, blas_local *res,
                 double *red)
{
    (void)d;
    (void)res;
    red[0] = ops[0].rows > 0 ? cblas_ddot(ilen(ops[0].rows), ops[0].data, 1,
                                          ops[1].data, 1)
                             : 0.0;
}

void blas__k_asum(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)res;
    red[0] = ops[0].rows > 0 ? cblas_dasum(ilen(ops[0].rows), ops[0].data, 1)
                             : 0.0;
}

void blas__k_iamax(const blas_desc *d, const blas_local *ops, blas_local *res,
                   double *red)
{
    (void)d;
    (void)res;
    const blas_local *x = &ops[0];
    red[0] = -1.0;
    red[1] = 0.0;
    for (int64_t l = 0; l < x->rows; l++) {
        double v = fabs(x->data[l]);
        if (v > red[0]) {
            int64_t g = blas_elem_global(x->lay, x->r, x->c, l);
            red[0] = v;
            red[1] = (double)g;
        }
    }
}

void blas__f_copy(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)ops;
    res->data[0] = red[0];
}

void blas__f_index(const blas_desc *d, const blas_local *ops, blas_local *res,
                   double *red)
{
    (void)d;
    (void)ops;
    res->data[0] = red[0] < 0.0 ? 0.0 : red[1];
}

void blas__k_scalar(const blas_desc *d, const blas_local *ops, blas_local *res,
                    double *red)
{
    (void)red;
    double a = sval(&ops[0]), b = d->nops > 1 ? sval(&ops[1]) : 0.0, v = 0.0;
    switch (d->op) {
    case BLAS_OP_SADD: v = a + b; break;
    case BLAS_OP_SSUB: v = a - b; break;
    case BLAS_OP_SMUL: v = a * b; break;
    case BLAS_OP_SDIV: v = a / b; break;
    case BLAS_OP_SSQRT: v = sqrt(a); break;
    case BLAS_OP_SNEG: v = -a; break;
    case BLAS_OP_SMAX: v = fmax(a, b); break;   /* a NaN loses, as in C     */
    case BLAS_OP_SMIN: v = fmin(a, b); break;
    default: break;
    }
    if (res->rows > 0) res->data[0] = v;
}

/* Whether global element (i, j) is in the masked triangle.                 */
static bool in_mask(unsigned f, int64_t i, int64_t j)
{
    if (f & BLAS_F_LOWER) return (f & BLAS_F_STRICT) ? i > j : i >= j;
    return (f & BLAS_F_STRICT) ? i < j : i <= j;
}

/* red <- op(A_loc) x_loc over the local piece, optionally restricted to a
 * triangle of the global matrix (dsymv's halves).                          */
void blas__k_gemv(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)res;
    const blas_local *A = &ops[1];
    int64_t outn = (d->flags & BLAS_F_TRANS) ? A->cols : A->rows;
    for (int64_t i = 0; i < outn; i++) red[i] = 0.0;
    blas_gemv_part(d, A, &ops[2], red);
}

/* One block of a triangle-masked gemv: all of it, none, or element by
 * element where the triangle's edge crosses it.                         */
static void gemv_block_masked(unsigned flags, const double *blk, int64_t ld,
                              int64_t h, int64_t w, int64_t gi0, int64_t gj0,
                              const double *x, double *red)
{
    bool trans = (flags & BLAS_F_TRANS) != 0;
    int in = 0;
    for (int64_t a = 0; a < 2; a++)
        for (int64_t b = 0; b < 2; b++)
            in += in_mask(flags, gi0 + a * (h - 1), gj0 + b * (w - 1));
    /* a half-plane and its complement are convex: the corners decide
     * whether the block is wholly in or wholly out.                      */
    if (in == 4) {
        blas_gemv_acc(trans, h, w, blk, ld, x, red);
        return;
    }
    if (in == 0) return;
    for (int64_t b = 0; b < w; b++)
        for (int64_t a = 0; a < h; a++) {
            if (!in_mask(flags, gi0 + a, gj0 + b)) continue;
            double v = blk[b * ld + a];
            if (trans) red[b] += v * x[a];
            else red[a] += v * x[b];
        }
}

/* Local columns [j, j + w) of a masked gemv (A's columns from col),
 * split where they cross a column block (global columns are consecutive
 * within one).                                                          */
static void gemv_cols_masked(const blas_desc *d, const blas_local *A,
                             const double *col, int64_t j, int64_t w,
                             const double *x, double *red)
{
    bool trans = (d->flags & BLAS_F_TRANS) != 0;
    int64_t rows = A->rows, ld = rows > 1 ? rows : 1;
    int64_t mb = A->lay->b, nb = A->lay->nb;
    for (int64_t k = 0; k < w;) {
        int64_t part = nb - (j + k) % nb;
        if (part > w - k) part = w - k;
        int64_t gj0 = blas_cyc_global(nb, A->lay->pc, A->c, j + k);
        for (int64_t li0 = 0; li0 < rows; li0 += mb) {
            int64_t h = rows - li0 < mb ? rows - li0 : mb;
            int64_t gi0 = blas_cyc_global(mb, A->lay->pr, A->r, li0);
            gemv_block_masked(d->flags, col + k * ld + li0, ld, h, part, gi0,
                              gj0, trans ? x + li0 : x + j + k,
                              trans ? red + j + k : red + li0);
        }
        k += part;
    }
}

int64_t blas_gemv_chunk(const blas_layout *A)
{
    return A->nb < BLAS_GEMV_COLS ? A->nb : BLAS_GEMV_COLS;
}

void blas_gemv_part(const blas_desc *d, const blas_local *A,
                    const blas_local *x, double *red)
{
    bool trans = (d->flags & BLAS_F_TRANS) != 0;
    int64_t rows = A->rows, cols = A->cols, ld = rows > 1 ? rows : 1;
    if (rows == 0 || cols == 0) return;
    int64_t u = blas_gemv_chunk(A->lay);
    /* the in-core and the streamed product both accumulate one chunk of
     * columns at a time, from the same local column, so they add in the
     * same order                                                         */
    for (int64_t lj0 = 0; lj0 < cols; lj0 += u) {
        int64_t w = cols - lj0 < u ? cols - lj0 : u, j = A->c0 + lj0;
        const double *col = A->data + lj0 * ld;
        if (d->flags & BLAS_F_MASK)
            gemv_cols_masked(d, A, col, j, w, x->data, red);
        else
            blas_gemv_acc(trans, rows, w, col, ld, trans ? x->data
                          : x->data + j, trans ? red + j : red);
    }
}

void blas__f_gemv(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    double a = sval(&ops[0]);
    double *y = res->data;
    if ((d->flags & BLAS_F_BETA) && sval(&ops[3]) != 0.0) {
        double b = sval(&ops[3]);
        for (int64_t i = 0; i < res->rows; i++) y[i] = a * red[i] + b * y[i];
    } else {
        for (int64_t i = 0; i < res->rows; i++) y[i] = a * red[i];
    }
}

void blas__k_ger(const blas_desc *d, const blas_local *ops, blas_local *res,
                 double *red)
{
    if (d->flags & BLAS_F_MASK) {       /* dsyr, dsyr2: one triangle only  */
        blas__k_ger_tri(d, ops, res, red);
        return;
    }
    if (res->rows == 0 || res->cols == 0) return;
    cblas_dger(CblasColMajor, ilen(res->rows), ilen(res->cols), sval(&ops[0]),
               ops[1].data, 1, ops[2].data + res->c0, 1, res->data,
               ilen(res->rows > 1 ? res->rows : 1));
}

void blas_trsv_block(unsigned flags, int64_t bk, const double *t, int64_t ld,
                     double *x)
{
    if (bk <= 0) return;
    cblas_dtrsv(CblasColMajor, (flags & BLAS_F_LOWER) ? CblasLower : CblasUpper,
                (flags & BLAS_F_TRANS) ? CblasTrans : CblasNoTrans,
                (flags & BLAS_F_UNIT) ? CblasUnit : CblasNonUnit, ilen(bk), t,
                ilen(ld > 1 ? ld : 1), x, 1);
}

void blas_gemv_acc(bool trans, int64_t rows, int64_t cols, const double *a,
                   int64_t ld, const double *x, double *s)
{
    if (rows <= 0 || cols <= 0) return;
    cblas_dgemv(CblasColMajor, trans ? CblasTrans : CblasNoTrans, ilen(rows),
                ilen(cols), 1.0, a, ilen(ld > 1 ? ld : 1), x, 1, 1.0, s, 1);
}
