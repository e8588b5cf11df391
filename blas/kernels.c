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
