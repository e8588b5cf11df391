/* pl_dim_make (one dimension of a remap described by one period) against
 * an independent brute-force index map: every element x of [0, M) whose
 * source block (x / r) mod P is a and target block (x / s) mod Q is c must
 * come out of pl_dim_next, in increasing order, exactly once, at its
 * local offsets on both sides; and for long extents, where brute force is
 * too slow, the counts must match the message lengths of pl__dim_lengths
 * and the cost must not grow with the extent.                             */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "deso_errors.h"
#include "remap.h"
#include "remap_impl.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int64_t rnd(int64_t n)   /* uniform-ish in [0, n)                   */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

/* Local offset of global x in CYCLIC(b) on np positions.                  */
static int64_t local(int64_t x, int64_t b, int np)
{
    return x / (b * np) * b + x % b;
}

/* Walks d's pieces element by element beside the brute-force walk.       */
static void check_one(int64_t M, int P, int64_t r, int a, int Q, int64_t s,
                      int c)
{
    pl_dim d;
    assert_int_equal(pl_dim_make(M, P, r, a, Q, s, c, &d), DESO_OK);
    pl_dim_it it = PL_DIM_IT(&d);
    int64_t g = 0, mine = 0, theirs = 0, len = 0, k = 0, seen = 0, x = -1;
    for (;;) {
        /* The next element the index map gives to (a, c).                 */
        do x++;
        while (x < M && ((x / r) % P != a || (x / s) % Q != c));
        if (k == len) {
            if (!pl_dim_next(&it, &g, &mine, &theirs, &len)) break;
            assert_true(len >= 1);
            k = 0;
        }
        if (x >= M || g + k != x || mine + k != local(x, r, P) ||
            theirs + k != local(x, s, Q))
            fail_msg("M=%lld P=%d r=%lld a=%d Q=%d s=%lld c=%d: element %lld "
                     "of the pieces is global %lld (mine %lld, theirs %lld), "
                     "brute force says %lld (%lld, %lld)", (long long)M, P,
                     (long long)r, a, Q, (long long)s, c, (long long)seen,
                     (long long)(g + k), (long long)(mine + k),
                     (long long)(theirs + k), (long long)x,
                     (long long)(x < M ? local(x, r, P) : -1),
                     (long long)(x < M ? local(x, s, Q) : -1));
        k++;
        seen++;
    }
    if (x < M)
        fail_msg("M=%lld P=%d r=%lld a=%d Q=%d s=%lld c=%d: global %lld is "
                 "missing from the pieces", (long long)M, P, (long long)r, a,
                 Q, (long long)s, c, (long long)x);
    assert_int_equal(d.count, seen);
    for (int64_t i = 0; i < d.nseq; i++)
        assert_true(d.seq[i].g >= 0 &&
                    d.seq[i].g + (d.seq[i].cnt - 1) * d.seq[i].dg +
                    d.seq[i].len <= d.span);
    pl_dim_free(&d);
}

static void test_random_against_brute(void **state)
{
    (void)state;
    for (int t = 0; t < 3000; t++) {
        int P = 1 + (int)rnd(5), Q = 1 + (int)rnd(5);
        int64_t r = 1 + rnd(t % 3 == 0 ? 40 : 9);
        int64_t s = 1 + rnd(t % 5 == 0 ? 40 : 9);
        int64_t M = rnd(t % 7 == 0 ? 2000 : 300);
        if (t % 11 == 0) r = M > 0 ? (M + P - 1) / P : 1;   /* block      */
        if (t % 13 == 0) s = M > 0 ? (M + Q - 1) / Q : 1;
        check_one(M, P, r, (int)rnd(P), Q, s, (int)rnd(Q));
    }
}

/* Every pair of a few shapes, exhaustively, including one position per
 * side and blocks longer than the extent.                                */
static void test_all_pairs(void **state)
{
    (void)state;
    static const int64_t blk[] = { 1, 2, 3, 5, 64, 1000 };
    for (int P = 1; P <= 3; P++)
        for (int Q = 1; Q <= 3; Q++)
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++)
                    for (int a = 0; a < P; a++)
                        for (int c = 0; c < Q; c++)
                            check_one(777, P, blk[i], a, Q, blk[j], c);
}

/* Long extents: counts against the message lengths, with a number of
 * progressions bounded by the blocks walked, not by the extent (a
 * 2^33-element vector plans like a short one).                          */
static void test_long_extents(void **state)
{
    (void)state;
    static const struct { int P, Q; int64_t r, s, M; } cs[] = {
        { 2, 2, 3, 5, (int64_t)1 << 33 },
        { 2, 2, 64, 1, (int64_t)1 << 24 },
        { 2, 2, (int64_t)1 << 23, 1, (int64_t)1 << 24 },
        { 2, 2, 1, (int64_t)1 << 23, (int64_t)1 << 24 },
        { 32, 24, 3, 5, 1000000 },
        { 3, 7, 1000, 1001, 123456789 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        int P = cs[i].P, Q = cs[i].Q;
        int64_t *len = malloc((size_t)P * Q * sizeof *len);
        assert_non_null(len);
        assert_int_equal(pl__dim_lengths(cs[i].M, P, cs[i].r, Q, cs[i].s,
                                         len), DESO_OK);
        for (int a = 0; a < P; a++)
            for (int c = 0; c < Q; c++) {
                pl_dim d;
                assert_int_equal(pl_dim_make(cs[i].M, P, cs[i].r, a, Q,
                                             cs[i].s, c, &d), DESO_OK);
                assert_int_equal(d.count, len[a * Q + c]);
                /* At most three progressions per walked block.          */
                int64_t wa = d.span / P / cs[i].r, wc = d.span / Q / cs[i].s;
                assert_true(d.nseq <= 3 * ((wa < wc ? wa : wc) + 1));
                pl_dim_free(&d);
            }
        free(len);
    }
}

static void test_errors(void **state)
{
    (void)state;
    pl_dim d;
    assert_int_equal(pl_dim_make(10, 0, 1, 0, 1, 1, 0, &d), DESO_EINVAL);
    assert_int_equal(pl_dim_make(10, 2, 1, 2, 1, 1, 0, &d), DESO_EINVAL);
    assert_int_equal(pl_dim_make(10, 2, 0, 0, 1, 1, 0, &d), DESO_EINVAL);
    assert_int_equal(pl_dim_make(-1, 2, 1, 0, 1, 1, 0, &d), DESO_EINVAL);
    assert_int_equal(pl_dim_make(10, 2, 1, 0, 1, 1, 0, NULL), DESO_ENULL);
    assert_non_null(strstr(deso_last_error(), "pl_dim_make"));
    pl_dim_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_brute),
        cmocka_unit_test(test_all_pairs),
        cmocka_unit_test(test_long_extents),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
