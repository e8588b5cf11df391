/* Helpers shared by the serial tests and the MPI tests (header-only, no
 * MPI): tests of pure code include this alone, so they run as one plain
 * process; tests/deso/test_util.h includes it for the MPI tests.          */
#ifndef DESO_TESTS_SERIAL_UTIL_H
#define DESO_TESTS_SERIAL_UTIL_H

#include <stdint.h>

/* A reproducible generator: the same seed draws the same numbers on every
 * rank and every run, so a failure reproduces.                            */
typedef struct { uint64_t s; } tu_rng;
static inline double tu_rand(tu_rng *r)   /* uniform in [-1, 1)           */
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(r->s >> 11) / 4503599627370496.0 - 1.0;
}
static inline int64_t tu_below(tu_rng *r, int64_t n)   /* in [0, n)     */
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (int64_t)((r->s >> 33) % (uint64_t)n);
}
static inline void tu_fill(tu_rng *r, double *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++) a[i] = tu_rand(r);
}

#endif
