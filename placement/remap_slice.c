/* The message-length matrix of one slice of CYCLIC(r) on P -> CYCLIC(s) on
 * Q (doc/DESIGN.md, "One dimension: period and message matrix"):
 * g = gcd(P r, Q s), k = (p r - q s) mod g,
 * length = sum over z in [1-r, s-1], z = k (mod g), of min(r, s, r+z, s-z). */
#include <stddef.h>

#include "placement/errors.h"
#include "placement/pl_arith.h"
#include "placement/remap.h"
#include "placement/remap_impl.h"

int64_t pl__gcd64(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b != 0) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Non-negative a mod m for m > 0.                                          */
static int64_t mod64(int64_t a, int64_t m)
{
    int64_t x = a % m;
    return x < 0 ? x + m : x;
}

/* n (n - 1) / 2 without overflowing before the division; callers only use
 * it where the true value fits (it is bounded by a message length).      */
static int64_t tri(int64_t n)
{
    return (n % 2 == 0) ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
}

/* The z = k (mod g) in [lo, hi]: first one *zf, how many *cnt.            */
static void progression(int64_t lo, int64_t hi, int64_t k, int64_t g,
                        int64_t *zf, int64_t *cnt)
{
    *cnt = 0;
    *zf = 0;
    if (lo > hi) return;
    int64_t d = mod64(k - mod64(lo, g), g);
    if (d > hi - lo) return;
    *zf = lo + d;
    *cnt = (hi - *zf) / g + 1;
}

/* (n x) mod g for 0 <= x < g, by doubling so that nothing overflows even
 * when g is near 2^62.                                                     */
static int64_t mulmod(int64_t n, int64_t x, int64_t g)
{
    int64_t acc = 0;
    for (; n > 0; n >>= 1) {
        if (n & 1) acc = (acc >= g - x) ? acc - (g - x) : acc + x;
        x = (x >= g - x) ? x - (g - x) : x + x;
    }
    return acc;
}

int64_t pl__slice_len(int64_t r, int64_t s, int64_t g, int p, int q)
{
    /* k = (p r - q s) mod g without forming p r, which may overflow.    */
    int64_t a = mulmod(p, mod64(r, g), g), b = mulmod(q, mod64(s, g), g);
    int64_t k = (a >= b) ? a - b : a + (g - b);
    int64_t amin = r < s ? r : s;
    int64_t total = 0, zf, n;
    /* rising: z in [1-r, amin-r], vol = r + z                              */
    progression(1 - r, amin - r, k, g, &zf, &n);
    if (n > 0) total += n * (r + zf) + g * tri(n);
    /* plateau: z in [amin-r+1, s-amin-1], vol = amin                       */
    progression(amin - r + 1, s - amin - 1, k, g, &zf, &n);
    total += n * amin;
    /* falling: z in [max(s-amin, amin-r+1), s-1], vol = s - z             */
    int64_t flo = s - amin;
    if (flo < amin - r + 1) flo = amin - r + 1;
    progression(flo, s - 1, k, g, &zf, &n);
    if (n > 0) {
        int64_t zl = zf + (n - 1) * g;
        total += n * (s - zl) + g * tri(n);
    }
    return total;
}

deso_err pl_remap_slice(int P, int64_t r, int Q, int64_t s, int64_t *len,
                        int64_t *slice)
{
    DESO_CHECK(P >= 1 && Q >= 1, DESO_EINVAL,
               "pl_remap_slice: P = %d and Q = %d must be >= 1", P, Q);
    DESO_CHECK(r >= 1 && s >= 1, DESO_EINVAL,
               "pl_remap_slice: block sizes r = %lld and s = %lld must be "
               ">= 1", (long long)r, (long long)s);
    DESO_CHECK(len != NULL || slice != NULL, DESO_ENULL,
               "pl_remap_slice: len and slice are both NULL");
    int64_t Pr, Qs, L;
    DESO_CHECK(pl__mul(P, r, &Pr) && pl__mul(Q, s, &Qs), DESO_EOVERFLOW,
               "pl_remap_slice: P r or Q s overflows int64");
    int64_t g = pl__gcd64(Pr, Qs);
    /* L <= INT64_MAX / 2 keeps r + s (both <= L) representable, which
     * the piecewise sums in pl__slice_len rely on.                        */
    DESO_CHECK(pl__mul(Pr / g, Qs, &L) && L <= INT64_MAX / 2, DESO_EOVERFLOW,
               "pl_remap_slice: lcm(%d*%lld, %d*%lld) does not fit in int64",
               P, (long long)r, Q, (long long)s);
    if (slice) *slice = L;
    if (len) {
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                len[(int64_t)p * Q + q] = pl__slice_len(r, s, g, p, q);
    }
    return DESO_OK;
}
