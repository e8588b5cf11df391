/* Running a sparse product's node (usmv): x's halo comes in (or, for the
 * transpose, the partial sums go out) through the matrix's halo plan,
 * around the local CSR kernel, which runs the rows that need no halo
 * while it is in flight.  The plan's buffers were made with the
 * matrix, so nothing is allocated here.                                  */
#include <string.h>

#include "blas/sparse_kernels.h"
#include "deso/runtime/runtime.h"

/* y = alpha A x + beta y with x's halo: its messages posted, the rows
 * that need no halo run from x where it lies while they are in flight
 * (as PETSc's MatMult_MPIAIJ runs its diagonal block), then, once they
 * are in, the rows that read it, from x and the receive buffer.  Each
 * row is computed whole, in column order, as by blas_csr_mv on [own |
 * halo], so y is bitwise the same whichever way it runs.               */
static deso_err product_split(deso_ctx *ctx, deso__halo_plan *hp,
                              const pl_csr *A, double alpha, const double *x,
                              double beta, double *y)
{
    deso__xfer xf;
    DESO_TRY(deso__halo_start(ctx, hp, x, &xf));
    double t0 = deso__kernel_start(ctx);
    blas_csr_mv_skip(A->nrows, A->rowptr, hp->lcol, A->val, alpha, x, beta,
                     y, hp->nhrow, hp->hrow);
    double t1 = deso__kernel_start(ctx);
    deso_err err = deso__exchange_finish(&xf);
    if (err != DESO_OK) return err;
    double t2 = deso__kernel_start(ctx);
    blas_csr_mv_rows(hp->nhrow, hp->hrow, A->rowptr, hp->lcol, A->val, alpha,
                     x, hp->nown, hp->rbuf, beta, y);
    /* one kernel time: both parts, not the wait between them            */
    deso__kernel_time(ctx, BLAS_OP_USMV, t0 + (t2 - t1));
    return DESO_OK;
}

/* The same when the rows that read the halo are most of them (hp->split
 * false): x's own entries copied into hp->ext while the halo is in
 * flight, the halo after them, every row on the copy.                   */
static deso_err product_copy(deso_ctx *ctx, deso__halo_plan *hp,
                             const pl_csr *A, double alpha, const double *x,
                             double beta, double *y)
{
    deso__xfer xf;
    DESO_TRY(deso__halo_start(ctx, hp, x, &xf));
    if (hp->nown > 0) memcpy(hp->ext, x, (size_t)hp->nown * sizeof(double));
    DESO_TRY(deso__exchange_finish(&xf));
    memcpy(hp->ext + hp->nown, hp->rbuf, (size_t)hp->nhalo * sizeof(double));
    double t0 = deso__kernel_start(ctx);
    blas_csr_mv(A->nrows, A->rowptr, hp->lcol, A->val, alpha, hp->ext, beta,
                y);
    deso__kernel_time(ctx, BLAS_OP_USMV, t0);
    return DESO_OK;
}

deso_err deso__usmv_rows(deso_ctx *ctx, deso__halo_plan *hp, const pl_csr *A,
                         double alpha, const double *x, double beta,
                         double *y)
{
    if (hp->split) return product_split(ctx, hp, A, alpha, x, beta, y);
    return product_copy(ctx, hp, A, alpha, x, beta, y);
}

deso_err deso__exec_usmv(deso_ctx *ctx, const deso__node *nd,
                         deso__view *const *v, deso__view *rv)
{
    const deso__spmat_data *sp = nd->sp;
    deso__halo_plan *hp = sp->halo;
    const pl_csr *A = &sp->rows;
    bool t = (nd->d.flags & BLAS_F_TRANS) != 0;
    double alpha = v[0]->data[0];
    double beta = (nd->d.flags & BLAS_F_BETA) ? v[2]->data[0] : 0.0;
    /* x (for the transpose, y) has this rank's range of the x blocks,
     * A's rows the other partition's range                              */
    int64_t own = t ? A->nrows : hp->nown, yown = t ? hp->nown : A->nrows;
    DESO_CHECK(v[1]->rows == own && rv->rows == yown, DESO_EINTERNAL,
               "dusmv: local lengths %lld and %lld, the matrix has %lld and "
               "%lld", (long long)v[1]->rows, (long long)rv->rows,
               (long long)own, (long long)yown);
    if (!t) return deso__usmv_rows(ctx, hp, A, alpha, v[1]->data, beta,
                                   rv->data);
    double *ext = hp->ext;
    double t0 = deso__kernel_start(ctx);
    memset(ext, 0, (size_t)(hp->nown + hp->nhalo) * sizeof(double));
    blas_csr_mtv(A->nrows, A->rowptr, hp->lcol, A->val, alpha, v[1]->data,
                 ext);
    deso__kernel_time(ctx, BLAS_OP_USMV, t0);
    DESO_TRY(deso__halo_reverse(ctx, hp, ext));
    /* beta = 0 overwrites y: NaN and Inf in y do not propagate           */
    for (int64_t i = 0; i < hp->nown; i++)
        rv->data[i] = beta == 0.0 ? ext[i] : ext[i] + beta * rv->data[i];
    return DESO_OK;
}
