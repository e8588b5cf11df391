/* pl_remap_slice against brute force (walk the L elements of a slice) and
 * the worked examples of paper 001 (doc/DESIGN.md, "Worked examples (paper
 * 001)").                                                                  */
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

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int64_t rnd(int64_t n)   /* uniform-ish in [0, n)                   */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Counts (p, q) over the first M elements, one element at a time.         */
static void brute(int64_t M, int P, int64_t r, int Q, int64_t s, int64_t *g)
{
    memset(g, 0, (size_t)P * Q * sizeof *g);
    for (int64_t i = 0; i < M; i++)
        g[((i / r) % P) * Q + (i / s) % Q]++;
}

static void check_case(int P, int64_t r, int Q, int64_t s, int64_t *len,
                       int64_t *ref)
{
    int64_t L;
    assert_int_equal(pl_remap_slice(P, r, Q, s, len, &L), DESO_OK);
    int64_t Pr = P * r, Qs = Q * s;
    assert_int_equal(L, Pr / gcd(Pr, Qs) * Qs);
    brute(L, P, r, Q, s, ref);
    for (int i = 0; i < P * Q; i++) {
        if (len[i] != ref[i])
            fail_msg("P=%d r=%lld Q=%d s=%lld entry (%d,%d): %lld vs brute %lld",
                     P, (long long)r, Q, (long long)s, i / Q, i % Q,
                     (long long)len[i], (long long)ref[i]);
    }
    for (int p = 0; p < P; p++) {   /* rows: what p owns per slice         */
        int64_t sum = 0;
        for (int q = 0; q < Q; q++) sum += len[p * Q + q];
        assert_int_equal(sum, L / P);
    }
    for (int q = 0; q < Q; q++) {
        int64_t sum = 0;
        for (int p = 0; p < P; p++) sum += len[p * Q + q];
        assert_int_equal(sum, L / Q);
    }
}

static void test_exhaustive_small(void **state)
{
    (void)state;
    int64_t len[144], ref[144];
    for (int P = 1; P <= 12; P++)
        for (int Q = 1; Q <= 12; Q++)
            for (int r = 1; r <= 8; r++)
                for (int s = 1; s <= 8; s++)
                    check_case(P, r, Q, s, len, ref);
}

static void test_random_to_64(void **state)
{
    (void)state;
    int64_t *len = malloc(64 * 64 * sizeof *len), *ref = malloc(64 * 64 * sizeof *ref);
    int done = 0;
    while (done < 300) {
        int P = 1 + (int)rnd(64), Q = 1 + (int)rnd(64);
        int64_t r = 1 + rnd(64), s = 1 + rnd(64);
        int64_t Pr = P * r, Qs = Q * s;
        if (Pr / gcd(Pr, Qs) * Qs > 300000) continue;   /* keep brute cheap */
        check_case(P, r, Q, s, len, ref);
        done++;
    }
    free(len);
    free(ref);
}

/* A grid as paper 001 prints it, '-' = 0, one string per row.            */
static void check_table(int P, int64_t r, int Q, int64_t s, int64_t Lexp,
                        const char *const *rows, int64_t scale)
{
    int64_t len[16 * 16], L;
    assert_int_equal(pl_remap_slice(P, r, Q, s, len, &L), DESO_OK);
    assert_int_equal(L, Lexp);
    for (int p = 0; p < P; p++) {
        const char *c = rows[p];
        for (int q = 0; q < Q; q++) {
            while (*c == ' ') c++;
            int64_t v = (*c == '-') ? 0 : strtol(c, NULL, 10);
            while (*c && *c != ' ') c++;
            if (len[p * Q + q] != v * scale)
                fail_msg("table P=%d r=%lld Q=%d s=%lld (%d,%d): %lld, paper %lld",
                         P, (long long)r, Q, (long long)s, p, q,
                         (long long)len[p * Q + q], (long long)(v * scale));
        }
    }
}

static void test_worked_examples(void **state)
{
    (void)state;
    static const char *const ex1[] = {   /* Table 1: P=Q=16, r=3, s=5     */
        "3 - - 3 - - 3 - - 2 1 - 1 2 - -", "2 1 - 1 2 - - 3 - - 3 - - 3 - -",
        "- 3 - - 3 - - 2 1 - 1 2 - - 3 -", "- 1 2 - - 3 - - 3 - - 3 - - 2 1",
        "- - 3 - - 2 1 - 1 2 - - 3 - - 3", "2 - - 3 - - 3 - - 3 - - 2 1 - 1",
        "3 - - 2 1 - 1 2 - - 3 - - 3 - -", "- 3 - - 3 - - 3 - - 2 1 - 1 2 -",
        "- 2 1 - 1 2 - - 3 - - 3 - - 3 -", "- - 3 - - 3 - - 2 1 - 1 2 - - 3",
        "1 - 1 2 - - 3 - - 3 - - 3 - - 2", "3 - - 3 - - 2 1 - 1 2 - - 3 - -",
        "1 2 - - 3 - - 3 - - 3 - - 2 1 -", "- 3 - - 2 1 - 1 2 - - 3 - - 3 -",
        "- - 3 - - 3 - - 3 - - 2 1 - 1 2", "- - 2 1 - 1 2 - - 3 - - 3 - - 3"};
    check_table(16, 3, 16, 5, 240, ex1, 1);
    static const char *const ex2[] = {   /* Table 4 (first rows)          */
        "7 6 2 6 7 2 5 7 3 4 7 4 3 7 5 2", "4 3 7 5 2 7 6 2 6 7 2 5 7 3 4 7",
        "5 7 3 4 7 4 3 7 5 2 7 6 2 6 7 2"};
    int64_t big[256], L;
    assert_int_equal(pl_remap_slice(16, 7, 16, 11, big, &L), DESO_OK);
    assert_int_equal(L, 1232);
    for (int p = 0; p < 3; p++)
        for (int q = 0; q < 16; q++)
            assert_int_equal(big[p * 16 + q], strtol(ex2[p] + 2 * q, NULL, 10));
    static const char *const ex3[] = {   /* Table 7: P=Q=15, r=3, s=5     */
        "3 - - 3 - - 3 - - 3 - - 3 - -", "2 1 - 2 1 - 2 1 - 2 1 - 2 1 -",
        "- 3 - - 3 - - 3 - - 3 - - 3 -", "- 1 2 - 1 2 - 1 2 - 1 2 - 1 2",
        "- - 3 - - 3 - - 3 - - 3 - - 3", "3 - - 3 - - 3 - - 3 - - 3 - -",
        "2 1 - 2 1 - 2 1 - 2 1 - 2 1 -", "- 3 - - 3 - - 3 - - 3 - - 3 -",
        "- 1 2 - 1 2 - 1 2 - 1 2 - 1 2", "- - 3 - - 3 - - 3 - - 3 - - 3",
        "3 - - 3 - - 3 - - 3 - - 3 - -", "2 1 - 2 1 - 2 1 - 2 1 - 2 1 -",
        "- 3 - - 3 - - 3 - - 3 - - 3 -", "- 1 2 - 1 2 - 1 2 - 1 2 - 1 2",
        "- - 3 - - 3 - - 3 - - 3 - - 3"};
    check_table(15, 3, 15, 5, 225, ex3, 1);
    check_table(15, 12, 15, 20, 900, ex3, 4);   /* Table 13 = 4 x Table 7 */
    static const char *const ex4[] = {   /* Table 10: P=12, Q=8, r=4, s=3 */
        "3 1 - - - - - -", "- 2 2 - - - - -", "- - 1 3 - - - -",
        "- - - - 3 1 - -", "- - - - - 2 2 -", "- - - - - - 1 3",
        "3 1 - - - - - -", "- 2 2 - - - - -", "- - 1 3 - - - -",
        "- - - - 3 1 - -", "- - - - - 2 2 -", "- - - - - - 1 3"};
    check_table(12, 4, 8, 3, 48, ex4, 1);
    static const char *const ex5[] = {   /* Table 14: P=15, Q=6, r=2, s=3 */
        "2 - 2 - 2 -", "1 1 1 1 1 1", "- 2 - 2 - 2", "2 - 2 - 2 -",
        "1 1 1 1 1 1", "- 2 - 2 - 2", "2 - 2 - 2 -", "1 1 1 1 1 1",
        "- 2 - 2 - 2", "2 - 2 - 2 -", "1 1 1 1 1 1", "- 2 - 2 - 2",
        "2 - 2 - 2 -", "1 1 1 1 1 1", "- 2 - 2 - 2"};
    check_table(15, 2, 6, 3, 90, ex5, 1);
}

/* Lemma 1 with a huge factor: lengths scale, L scales, nothing overflows;
 * and the closed form for r, s ~ 2^33 keeps the row and column sums.      */
static void test_big_blocks(void **state)
{
    (void)state;
    int64_t a[64 * 64], b[64 * 64], L1, L2;
    const int64_t D = (int64_t)1 << 30;
    for (int t = 0; t < 40; t++) {
        int P = 1 + (int)rnd(40), Q = 1 + (int)rnd(40);
        int64_t r = 1 + rnd(9), s = 1 + rnd(9);
        assert_int_equal(pl_remap_slice(P, r, Q, s, a, &L1), DESO_OK);
        assert_int_equal(pl_remap_slice(P, r * D, Q, s * D, b, &L2), DESO_OK);
        assert_int_equal(L2, L1 * D);
        for (int i = 0; i < P * Q; i++) assert_int_equal(b[i], a[i] * D);
    }
    /* Coprime blocks near 2^20 (a coprime pair near 2^33 would make L
     * overflow): the closed form against the defining sum over z, done
     * term by term, and the row and column sums.                          */
    const int64_t r = ((int64_t)1 << 20) + 1, s = ((int64_t)1 << 20) - 1;
    int Ps[] = {1, 2, 3, 4}, Qs[] = {1, 2, 5, 6};
    for (int i = 0; i < 4; i++) {
        int P = Ps[i], Q = Qs[i];
        assert_int_equal(pl_remap_slice(P, r, Q, s, a, &L1), DESO_OK);
        int64_t g = gcd(P * r, Q * s);
        for (int p = 0; p < P; p++) {
            int64_t sum = 0;
            for (int q = 0; q < Q; q++) {
                int64_t k = ((p * r - q * s) % g + g) % g, direct = 0;
                for (int64_t z = 1 - r; z <= s - 1; z++) {
                    if (((z % g) + g) % g != k) continue;
                    int64_t v = r < s ? r : s;
                    if (r + z < v) v = r + z;
                    if (s - z < v) v = s - z;
                    direct += v;
                }
                assert_int_equal(a[p * Q + q], direct);
                sum += a[p * Q + q];
            }
            assert_int_equal(sum, L1 / P);
        }
        for (int q = 0; q < Q; q++) {
            int64_t sum = 0;
            for (int p = 0; p < P; p++) sum += a[p * Q + q];
            assert_int_equal(sum, L1 / Q);
        }
    }
    /* Huge coprime blocks: L = r s does not fit, which is reported.       */
    assert_int_equal(pl_remap_slice(1, ((int64_t)1 << 33) + 1, 1,
                                    ((int64_t)1 << 33) - 1, a, &L1),
                     DESO_EOVERFLOW);
}

/* Lengths for any extent M (not a multiple of the slice) against brute.   */
static void test_dim_lengths_any_extent(void **state)
{
    (void)state;
    int64_t len[32 * 32], ref[32 * 32];
    for (int t = 0; t < 400; t++) {
        int P = 1 + (int)rnd(12), Q = 1 + (int)rnd(12);
        int64_t r = 1 + rnd(10), s = 1 + rnd(10), M = rnd(5000);
        assert_int_equal(pl__dim_lengths(M, P, r, Q, s, len), DESO_OK);
        brute(M, P, r, Q, s, ref);
        assert_memory_equal(len, ref, (size_t)P * Q * sizeof *len);
    }
}

static void test_errors(void **state)
{
    (void)state;
    int64_t len[4], L;
    assert_int_equal(pl_remap_slice(2, 0, 2, 1, len, &L), DESO_EINVAL);
    assert_non_null(strstr(deso_last_error(), "pl_remap_slice"));
    assert_int_equal(pl_remap_slice(2, 1, 2, -3, len, &L), DESO_EINVAL);
    assert_non_null(strstr(deso_last_error(), "pl_remap_slice"));
    assert_int_equal(pl_remap_slice(0, 1, 2, 1, len, &L), DESO_EINVAL);
    assert_int_equal(pl_remap_slice(2, 1, -1, 1, len, &L), DESO_EINVAL);
    assert_int_equal(pl_remap_slice(1, INT64_MAX / 2, 1, INT64_MAX / 2 - 1,
                                    len, &L), DESO_EOVERFLOW);
    assert_non_null(strstr(deso_last_error(), "pl_remap_slice"));
    assert_int_equal(pl_remap_slice(3, INT64_MAX / 2, 1, 1, len, &L),
                     DESO_EOVERFLOW);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_exhaustive_small),
        cmocka_unit_test(test_random_to_64),
        cmocka_unit_test(test_worked_examples),
        cmocka_unit_test(test_big_blocks),
        cmocka_unit_test(test_dim_lengths_any_extent),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
