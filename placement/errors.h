/* Internal: raising an error with a detailed message.                      */
#ifndef DESO_PLACEMENT_ERRORS_H
#define DESO_PLACEMENT_ERRORS_H

#include "placement/deso_errors.h"

#if defined(__GNUC__)
#define DESO__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DESO__PRINTF(a, b)
#endif

/* Records a printf-style detail message for deso_last_error() and returns
 * err, so that callers write `return deso__fail(DESO_EINVAL, "...", ...)`. */
deso_err deso__fail(deso_err err, const char *fmt, ...) DESO__PRINTF(2, 3);

/* Usage check, always on: returns the error from the enclosing function.   */
#define DESO_CHECK(cond, err, ...)                                           \
    do {                                                                     \
        if (!(cond)) return deso__fail((err), __VA_ARGS__);                  \
    } while (0)

/* Propagate a non-OK code.                                                 */
#define DESO_TRY(expr)                                                       \
    do {                                                                     \
        deso_err deso__e = (expr);                                           \
        if (deso__e != DESO_OK) return deso__e;                              \
    } while (0)

#endif
