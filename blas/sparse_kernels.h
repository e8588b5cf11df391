/* Local kernels of the sparse product on one rank's rows in CSR with local
 * 32-bit columns (placement/halo.h's pl_halo_localise): x holds the rank's
 * own entries of the input, then the halo it received.                   */
#ifndef DESO_BLAS_SPARSE_KERNELS_H
#define DESO_BLAS_SPARSE_KERNELS_H

#include <stdint.h>

/* y[i] = alpha (A x)[i] + beta y[i] for the nrows local rows; beta = 0
 * overwrites y (NaN and Inf in y do not propagate, as in the BLAS).      */
void blas_csr_mv(int64_t nrows, const int64_t *rowptr, const int32_t *lcol,
                 const double *val, double alpha, const double *x,
                 double beta, double *y);

/* blas_csr_mv on every row but the nskip rows skip[] (ascending): the
 * rows that need no halo, run from x where it lies while the halo is in
 * flight.  Each row bitwise as blas_csr_mv computes it.                 */
void blas_csr_mv_skip(int64_t nrows, const int64_t *rowptr,
                      const int32_t *lcol, const double *val, double alpha,
                      const double *x, double beta, double *y, int64_t nskip,
                      const int64_t *skip);

/* blas_csr_mv on the nlist rows rows[] only, with x in two pieces: local
 * column c < nown reads own[c], a larger one halo[c - nown] (x where it
 * lies and the received halo, never copied together).  Each row bitwise
 * as blas_csr_mv computes it on the concatenation.                      */
void blas_csr_mv_rows(int64_t nlist, const int64_t *rows,
                      const int64_t *rowptr, const int32_t *lcol,
                      const double *val, double alpha, const double *own,
                      int64_t nown, const double *halo, double beta,
                      double *y);

/* z[lcol[e]] += alpha A[i, e] x[i] over the local rows: this rank's share
 * of alpha A^T x, indexed like the x of blas_csr_mv (own entries, then
 * halo); the halo part belongs to other ranks and is sent back to them.  */
void blas_csr_mtv(int64_t nrows, const int64_t *rowptr, const int32_t *lcol,
                  const double *val, double alpha, const double *x,
                  double *z);

#endif
