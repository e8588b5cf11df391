/* dnrm2 without overflow or underflow: Blue's three accumulators, as
 * reference BLAS's dnrm2 (LAPACK 3.10 and later).  Entries above TBIG are
 * squared after scaling by SBIG, entries below TSML after scaling by SSML,
 * the rest as they are.  The three scales are fixed constants, not taken
 * from the data, so the sums from different ranks add as plain numbers:
 * the reduction stays one MPI sum of three doubles (a (scale, ssq) pair
 * would need a user-defined MPI operation, and a global maximum first a
 * second collective).  The kernel writes the three partial sums, the
 * finish combines the reduced ones into the norm.                        */
#include "blas/kernels.h"

#include <math.h>

/* The constants of the Fortran code for IEEE double (radix 2, 53 digits,
 * exponents -1021 .. 1024).                                              */
#define TSML 0x1p-511    /* 2^ceil((minexponent - 1) / 2)                   */
#define TBIG 0x1p+486    /* 2^floor((maxexponent - digits + 1) / 2)         */
#define SSML 0x1p+537    /* 2^-floor((minexponent - digits) / 2)            */
#define SBIG 0x1p-538    /* 2^-ceil((maxexponent + digits - 1) / 2)         */

void blas__k_nrm2(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)res;
    double asml = 0.0, amed = 0.0, abig = 0.0;
    for (int64_t i = 0; i < ops[0].rows; i++) {
        double ax = fabs(ops[0].data[i]);
        if (ax > TBIG) {
            ax *= SBIG;
            abig += ax * ax;
        } else if (ax < TSML) {
            ax *= SSML;
            asml += ax * ax;
        } else {
            amed += ax * ax;   /* a NaN lands here and stays            */
        }
    }
    red[0] = asml;
    red[1] = amed;
    red[2] = abig;
}

/* Combines the summed accumulators (red) into the norm, as the Fortran
 * does: the big sum absorbs the medium one (the small one is then below
 * rounding), else the small and medium ones are added at the scale of
 * the larger.                                                            */
static double combine(double asml, double amed, double abig)
{
    if (abig > 0.0) {
        if (amed > 0.0 || isnan(amed)) abig += (amed * SBIG) * SBIG;
        return sqrt(abig) / SBIG;
    }
    if (asml > 0.0) {
        if (!(amed > 0.0 || isnan(amed))) return sqrt(asml) / SSML;
        double ym = sqrt(amed), ys = sqrt(asml) / SSML;
        double ymin = ys > ym ? ym : ys, ymax = ys > ym ? ys : ym;
        double q = ymin / ymax;
        return ymax * sqrt(1.0 + q * q);
    }
    return sqrt(amed);
}

void blas__f_nrm2(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)d;
    (void)ops;
    res->data[0] = combine(red[0], red[1], red[2]);
}
