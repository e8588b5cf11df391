/* The rotation generators on the host's doubles (deso_drotg, deso_drotmg):
 * OpenBLAS's, so that their results are bit for bit the sequential
 * library's.                                                              */
#include "blas/blas.h"

#include <cblas.h>

void blas_rotg(double *a, double *b, double *c, double *s)
{
    cblas_drotg(a, b, c, s);
}

void blas_rotmg(double *d1, double *d2, double *b1, double b2, double *param)
{
    cblas_drotmg(d1, d2, b1, b2, param);
}
