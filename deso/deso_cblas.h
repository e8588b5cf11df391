/* deso with CBLAS's own enums: deso_cblas_<routine> for every deso call
 * that has a layout, transpose, triangle or diagonal argument, taking
 * enum CBLAS_ORDER (CBLAS_LAYOUT), enum CBLAS_TRANSPOSE, enum CBLAS_UPLO
 * and enum CBLAS_DIAG where deso_<routine> takes deso_order, deso_trans,
 * deso_uplo and deso_diag; every other argument, the results, the errors
 * and the lazy alpha and beta (a double or a deso_scalar) are deso_'s.
 *
 *   cblas_dgemv(CblasColMajor, trans, n, n, 1.0, A, n, p, 1, 0.0, q, 1);
 *   deso_cblas_dgemv(CblasColMajor, trans, n, n, 1.0, A, n, p, 1, 0.0, q, 1);
 *
 * deso's enums carry CBLAS's values (checked below at compile time), so
 * CBLAS's constants already work with deso_<routine>; what these add is
 * that code keeping CBLAS's enum types in variables (enum CBLAS_TRANSPOSE
 * t = ...) passes them without -Wenum-conversion, and that a deso enum
 * passed where CBLAS's is expected is the warning instead.  CblasConjTrans
 * is a transpose for real data, as deso_<routine> takes it too;
 * CblasConjNoTrans is refused with DESO_EINVAL.
 *
 * Level 1 calls have no such arguments: use deso_<routine> as it is.
 * This header includes deso.h and the CBLAS header <cblas.h> (OpenBLAS's
 * or netlib's: anything that defines the enums with CBLAS's values), so
 * <cblas.h> may be included before or after it.  Everything here is a
 * macro or static inline: nothing is added to the library.                */
#ifndef DESO_CBLAS_H
#define DESO_CBLAS_H

#include <cblas.h>

#include "deso.h"

#define DESO__SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)
DESO__SAME(CblasRowMajor, DESO_ROW_MAJOR);
DESO__SAME(CblasColMajor, DESO_COL_MAJOR);
DESO__SAME(CblasNoTrans, DESO_NO_TRANS);
DESO__SAME(CblasTrans, DESO_TRANS);
DESO__SAME(CblasUpper, DESO_UPPER);
DESO__SAME(CblasLower, DESO_LOWER);
DESO__SAME(CblasNonUnit, DESO_NON_UNIT);
DESO__SAME(CblasUnit, DESO_UNIT);
#undef DESO__SAME

/* The conversions: typed, so that each argument is checked as CBLAS's. */
static inline deso_order deso_cblas_order(enum CBLAS_ORDER o)
{
    return (deso_order)o;
}

static inline deso_trans deso_cblas_trans(enum CBLAS_TRANSPOSE t)
{
    return (deso_trans)t;
}

static inline deso_uplo deso_cblas_uplo(enum CBLAS_UPLO u)
{
    return (deso_uplo)u;
}

static inline deso_diag deso_cblas_diag(enum CBLAS_DIAG d)
{
    return (deso_diag)d;
}

/* ---- level 2 ---------------------------------------------------------- */

#define deso_cblas_dgemv(order, trans, m, n, alpha, a, lda, x, incx, beta,   \
                         y, incy)                                            \
    deso_dgemv(deso_cblas_order(order), deso_cblas_trans(trans), (m), (n),   \
               (alpha), (a), (lda), (x), (incx), (beta), (y), (incy))

#define deso_cblas_dger(order, m, n, alpha, x, incx, y, incy, a, lda)        \
    deso_dger(deso_cblas_order(order), (m), (n), (alpha), (x), (incx), (y),  \
              (incy), (a), (lda))

#define deso_cblas_dsymv(order, uplo, n, alpha, a, lda, x, incx, beta, y,    \
                         incy)                                               \
    deso_dsymv(deso_cblas_order(order), deso_cblas_uplo(uplo), (n), (alpha), \
               (a), (lda), (x), (incx), (beta), (y), (incy))

#define deso_cblas_dtrsv(order, uplo, trans, diag, n, a, lda, x, incx)       \
    deso_dtrsv(deso_cblas_order(order), deso_cblas_uplo(uplo),               \
               deso_cblas_trans(trans), deso_cblas_diag(diag), (n), (a),     \
               (lda), (x), (incx))

#define deso_cblas_dtrmv(order, uplo, trans, diag, n, a, lda, x, incx)       \
    deso_dtrmv(deso_cblas_order(order), deso_cblas_uplo(uplo),               \
               deso_cblas_trans(trans), deso_cblas_diag(diag), (n), (a),     \
               (lda), (x), (incx))

#define deso_cblas_dsyr(order, uplo, n, alpha, x, incx, a, lda)              \
    deso_dsyr(deso_cblas_order(order), deso_cblas_uplo(uplo), (n), (alpha),  \
              (x), (incx), (a), (lda))

#define deso_cblas_dsyr2(order, uplo, n, alpha, x, incx, y, incy, a, lda)    \
    deso_dsyr2(deso_cblas_order(order), deso_cblas_uplo(uplo), (n), (alpha), \
               (x), (incx), (y), (incy), (a), (lda))

#endif
