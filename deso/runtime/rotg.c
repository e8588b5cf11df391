/* deso_drotg and deso_drotmg: the rotation generators work on the host's
 * doubles, not on lazy scalars (deso.h says why).  Local: no context, no
 * communication, nothing recorded.                                       */
#include "deso/deso.h"
#include "blas/blas.h"
#include "placement/errors.h"

deso_err deso_drotg(double *a, double *b, double *c, double *s)
{
    const char *fn = "deso_drotg";
    DESO_CHECK(a != NULL, DESO_ENULL, "%s: a (arg 1) is NULL", fn);
    DESO_CHECK(b != NULL, DESO_ENULL, "%s: b (arg 2) is NULL", fn);
    DESO_CHECK(c != NULL, DESO_ENULL, "%s: c (arg 3) is NULL", fn);
    DESO_CHECK(s != NULL, DESO_ENULL, "%s: s (arg 4) is NULL", fn);
    blas_rotg(a, b, c, s);
    return DESO_OK;
}

deso_err deso_drotmg(double *d1, double *d2, double *b1, double b2,
                     double param[5])
{
    const char *fn = "deso_drotmg";
    DESO_CHECK(d1 != NULL, DESO_ENULL, "%s: d1 (arg 1) is NULL", fn);
    DESO_CHECK(d2 != NULL, DESO_ENULL, "%s: d2 (arg 2) is NULL", fn);
    DESO_CHECK(b1 != NULL, DESO_ENULL, "%s: b1 (arg 3) is NULL", fn);
    DESO_CHECK(param != NULL, DESO_ENULL, "%s: param (arg 5) is NULL", fn);
    blas_rotmg(d1, d2, b1, b2, param);
    return DESO_OK;
}
