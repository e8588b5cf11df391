/* Internal: overflow-checked int64 arithmetic for the placement algebra.
 * Each returns false (and leaves *r unspecified) when the result does not
 * fit, so callers can report DESO_EOVERFLOW instead of invoking UB.       */
#ifndef DESO_PL_ARITH_H
#define DESO_PL_ARITH_H

#include <stdbool.h>
#include <stdint.h>

static inline bool pl__add(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

static inline bool pl__sub(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_sub_overflow(a, b, r);
}

static inline bool pl__mul(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

/* r = a + b * c                                                            */
static inline bool pl__fma(int64_t a, int64_t b, int64_t c, int64_t *r)
{
    int64_t p;
    return pl__mul(b, c, &p) && pl__add(a, p, r);
}

#endif
