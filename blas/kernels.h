/* Internal to blas/: the local kernels the operation table points at.     */
#ifndef DESO_BLAS_KERNELS_H
#define DESO_BLAS_KERNELS_H

#include "blas/blas.h"

#define BLAS__KERNEL(name)                                                   \
    void name(const blas_desc *d, const blas_local *ops, blas_local *res,    \
              double *red)

BLAS__KERNEL(blas__k_copy);
BLAS__KERNEL(blas__k_scal);
BLAS__KERNEL(blas__k_axpy);
BLAS__KERNEL(blas__k_axpby);
BLAS__KERNEL(blas__k_dot);
BLAS__KERNEL(blas__k_nrm2);
BLAS__KERNEL(blas__k_asum);
BLAS__KERNEL(blas__k_iamax);
BLAS__KERNEL(blas__k_scalar);
BLAS__KERNEL(blas__k_gemv);
BLAS__KERNEL(blas__k_ger);
BLAS__KERNEL(blas__k_vmul);
BLAS__KERNEL(blas__k_vdiv);
BLAS__KERNEL(blas__k_vrecip);
BLAS__KERNEL(blas__k_vabs);
BLAS__KERNEL(blas__k_rot);
BLAS__KERNEL(blas__k_ger_tri);
BLAS__KERNEL(blas__f_copy);
BLAS__KERNEL(blas__f_nrm2);
BLAS__KERNEL(blas__f_index);
BLAS__KERNEL(blas__f_gemv);
BLAS__KERNEL(blas__d_gemv);

#endif
