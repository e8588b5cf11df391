/* Shared helpers of the placement tests (header only: each test is one
 * translation unit).                                                      */
#ifndef DESO_TESTS_PL_TEST_H
#define DESO_TESTS_PL_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "errors.h"
#include "placement.h"

/* expr must return `code` and leave a fresh message naming `fname`.       */
#define EXPECT_FAIL(expr, code, fname)                                       \
    do {                                                                     \
        (void)deso__fail(DESO_OK, "%s", "");                                 \
        deso_err e_ = (expr);                                                \
        assert_int_equal(e_, (code));                                        \
        assert_non_null(strstr(deso_last_error(), (fname)));                 \
    } while (0)

#define EXPECT_OK(expr) assert_int_equal((expr), DESO_OK)

/* splitmix64: deterministic, so failures reproduce.                       */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in lo..hi inclusive.                                            */
static inline int64_t rng_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

#endif
