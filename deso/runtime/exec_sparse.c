/* Running a sparse product's node (usmv): x's halo comes in (or, for the
 * transpose, the partial sums go out) through the matrix's halo plan,
 * around the local CSR kernel.  The plan's buffers were made with the
 * matrix, so nothing is allocated here.                                  */
#include <string.h>

#include "blas/sparse_kernels.h"
#include "deso/runtime/runtime.h"

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
    double *ext = hp->ext;
    if (!t) {
        /* the kernel reads x through local columns [own | halo]; a rank
         * with no halo (one rank, or rows that only need their own
         * entries) reads x where it lies, without the copy             */
        const double *xin = v[1]->data;
        if (hp->nhalo > 0) {
            if (hp->nown > 0)
                memcpy(ext, xin, (size_t)hp->nown * sizeof(double));
            xin = ext;
        }
        DESO_TRY(deso__halo_exchange(ctx, hp, v[1]->data, ext + hp->nown));
        double t0 = deso__kernel_start(ctx);
        blas_csr_mv(A->nrows, A->rowptr, hp->lcol, A->val, alpha, xin, beta,
                    rv->data);
        deso__kernel_time(ctx, BLAS_OP_USMV, t0);
        return DESO_OK;
    }
    double t0 = deso__kernel_start(ctx);
    memset(ext, 0, (size_t)(hp->nown + hp->nhalo) * sizeof(double));
    blas_csr_mtv(A->nrows, A->rowptr, hp->lcol, A->val, alpha, v[1]->data,
                 ext);
    deso__kernel_time(ctx, BLAS_OP_USMV, t0);
    DESO_TRY(deso__halo_reverse(ctx, hp, ext));
    /* beta = 0 overwrites y: NaN and Inf in it do not propagate          */
    for (int64_t i = 0; i < hp->nown; i++)
        rv->data[i] = beta == 0.0 ? ext[i] : ext[i] + beta * rv->data[i];
    return DESO_OK;
}
