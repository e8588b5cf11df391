/* Vectors placed by an explicit partition (blas.h's BLAS_DIST_PART: rank q
 * holds the range [start[q], start[q + 1])), serially: every index has
 * exactly one holder, its local index and global index round-trip, the
 * local lengths are the ranges, a partition on one rank is the plain
 * undistributed vector, layouts compare by ranges and not by address; and
 * the cost model's count of an exchange between a partition and any
 * vector layout (or another partition) is exactly the count of an element
 * by element emulation of deso/runtime/exchange.c's rule (each receiver
 * takes each element from the nearest holder), in bytes, messages and
 * modelled time.  Owners are found here by a linear scan of the ranges,
 * not by blas/layout.c's search, so that a bug shared with it cannot
 * hide.  Grids 1x1, 1x3, 2x2, 2x3 and 3x2; ranges balanced, uneven, with
 * ranks holding nothing, all on one rank, n < P, n = 1 and n = 0.  The
 * same for renumbered partitions (any ownership, each rank's indices in
 * increasing order): round robin, reversed blocks, seeded random, all on
 * one rank, against owner arrays and a renumbering written out here.     */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "blas/blas.h"
#include "optimizer/opt_impl.h"
#include "placement/errors.h"

#define EXPECT_OK(expr) assert_int_equal((expr), DESO_OK)
#define MAXP 6

static const int grids[][2] = {{1, 1}, {1, 3}, {2, 2}, {2, 3}, {3, 2}};

/* Partition number k of n over P ranks into start[0 .. P]; false when
 * there are no more.                                                     */
static bool make_part(int k, int64_t n, int P, int64_t *start)
{
    start[0] = 0;
    for (int q = 0; q < P; q++) {
        int64_t len;
        switch (k) {
        case 0: len = n / P + (q < n % P); break;          /* balanced      */
        case 1: len = q == P - 1 ? n : 0; break;           /* all on last   */
        case 2: len = q % 2 == 1 ? 0 : (q + 1) * 2; break; /* empty ranks   */
        case 3: len = q == 0 ? n : 0; break;               /* all on first  */
        default: return false;
        }
        start[q + 1] = start[q] + len;
        if (start[q + 1] > n) start[q + 1] = n;
    }
    start[P] = n;
    return true;
}

static int scan_owner(const int64_t *start, int P, int64_t g)
{
    for (int q = 0; q < P; q++)
        if (g >= start[q] && g < start[q + 1]) return q;
    return -1;
}

static void test_one_holder_per_index(void **state)
{
    (void)state;
    const int64_t ns[] = {0, 1, 2, 7, 23};
    for (size_t gk = 0; gk < sizeof grids / sizeof grids[0]; gk++) {
        int pr = grids[gk][0], pc = grids[gk][1], P = pr * pc;
        for (size_t nk = 0; nk < sizeof ns / sizeof ns[0]; nk++) {
            int64_t n = ns[nk], start[MAXP + 1];
            for (int k = 0; make_part(k, n, P, start); k++) {
                blas_part part = {.n = n, .nparts = P, .start = start};
                blas_layout L = blas_layout_part(&part, pr, pc);
                if (P == 1) {
                    /* one rank: the undistributed vector                  */
                    blas_layout plain = blas_layout_vec(n, -1, 0, 3u, 1, 1);
                    assert_true(blas_layout_equal(&L, &plain));
                    continue;
                }
                assert_int_equal(L.dist, BLAS_DIST_PART);
                int64_t total = 0;
                for (int q = 0; q < P; q++) {
                    int64_t rows, cols;
                    assert_true(blas_layout_holds(&L, q / pc, q % pc));
                    blas_layout_local(&L, q / pc, q % pc, &rows, &cols);
                    assert_int_equal(rows, start[q + 1] - start[q]);
                    assert_int_equal(cols, 1);
                    total += rows;
                }
                assert_int_equal(total, n);
                for (int64_t g = 0; g < n; g++) {
                    int o = scan_owner(start, P, g);
                    assert_int_equal(blas_part_owner(&part, g), o);
                    assert_int_equal(blas_layout_owner(&L, g), o);
                    int held = 0;
                    for (int q = 0; q < P; q++)
                        held += blas_elem_held(&L, q / pc, q % pc, g);
                    assert_int_equal(held, 1);
                    assert_true(blas_elem_held(&L, o / pc, o % pc, g));
                    int64_t li = blas_elem_lidx(&L, g);
                    assert_int_equal(li, g - start[o]);
                    assert_int_equal(blas_elem_global(&L, o / pc, o % pc, li),
                                     g);
                    int sr, sc;
                    for (int q = 0; q < P; q++) {
                        blas_elem_src(&L, q / pc, q % pc, g, &sr, &sc);
                        assert_int_equal(sr * pc + sc, o);
                    }
                }
                /* a scalar for it lives everywhere; no pl_placement      */
                blas_layout s = blas_scalar_for(&L);
                assert_int_equal(s.rep, 3u);
                pl_placement pl;
                assert_int_equal(blas_placement_of(&L, &pl), DESO_ENOTSUP);
            }
        }
    }
}

static void test_layouts_compare_by_ranges(void **state)
{
    (void)state;
    int64_t a[5] = {0, 3, 3, 7, 9}, b[5] = {0, 3, 3, 7, 9},
            c[5] = {0, 3, 4, 7, 9};
    blas_part pa = {.n = 9, .nparts = 4, .start = a},
              pb = {.n = 9, .nparts = 4, .start = b},
              pcp = {.n = 9, .nparts = 4, .start = c};
    blas_layout La = blas_layout_part(&pa, 2, 2);
    blas_layout Lb = blas_layout_part(&pb, 2, 2);
    blas_layout Lc = blas_layout_part(&pcp, 2, 2);
    assert_true(blas_layout_equal(&La, &Lb));
    assert_false(blas_layout_equal(&La, &Lc));
    blas_layout row = blas_layout_vec(9, 1, 0, 1u, 2, 2);
    assert_false(blas_layout_equal(&La, &row));
    /* a different partition is no replication of this one               */
    assert_false(opt__replication_only(&La, &Lc));
    assert_true(opt__replication_only(&La, &Lb));
}

/* The rank the rank at (a, b) takes element g of S from (exchange.c's
 * rule: blas_elem_src; for a partition, the owner by a linear scan).     */
static int src_of(const blas_layout *S, const int64_t *sstart, int a, int b,
                  int64_t g)
{
    if (S->dist == BLAS_DIST_PART) return scan_owner(sstart, S->pr * S->pc, g);
    int sr, sc;
    blas_elem_src(S, a, b, g, &sr, &sc);
    return sr * S->pc + sc;
}

static void brute_counts(const blas_layout *S, const int64_t *sstart,
                         const blas_layout *D, const int64_t *dstart,
                         const opt_params *pp, opt_counts *out)
{
    int pr = D->pr, pc = D->pc, P = pr * pc;
    int64_t cnt[MAXP * MAXP], ns[4 * MAXP];
    memset(cnt, 0, sizeof cnt);
    memset(ns, 0, sizeof ns);
    for (int64_t g = 0; g < D->n; g++)
        for (int d = 0; d < P; d++) {
            int a = d / pc, b = d % pc;
            bool holds = D->dist == BLAS_DIST_PART
                             ? scan_owner(dstart, P, g) == d
                             : blas_elem_held(D, a, b, g);
            if (!holds) continue;
            int q = src_of(S, sstart, a, b, g);
            if (q != d) cnt[q * P + d]++;
        }
    opt__p2p_counts(cnt, P, ns, pp, out);
}

static void expect_model(const blas_layout *S, const int64_t *sstart,
                         const blas_layout *D, const int64_t *dstart)
{
    opt_params pp = opt_params_default();
    opt_counts m, b;
    EXPECT_OK(opt_exchange_cost(S, D, &pp, NULL, &m));
    brute_counts(S, sstart, D, dstart, &pp, &b);
    assert_int_equal(m.bytes_p2p, b.bytes_p2p);
    assert_int_equal(m.msgs_p2p, b.msgs_p2p);
    assert_true(m.time == b.time);
}

static void test_exchange_counts_exact(void **state)
{
    (void)state;
    const int64_t ns[] = {0, 1, 5, 23};
    const int64_t bs[] = {0, 1, 3};
    for (size_t gk = 1; gk < sizeof grids / sizeof grids[0]; gk++) {
        int pr = grids[gk][0], pc = grids[gk][1], P = pr * pc;
        for (size_t nk = 0; nk < sizeof ns / sizeof ns[0]; nk++) {
            int64_t n = ns[nk], s1[MAXP + 1], s2[MAXP + 1];
            for (int k = 0; make_part(k, n, P, s1); k++) {
                blas_part p1 = {.n = n, .nparts = P, .start = s1};
                blas_layout L1 = blas_layout_part(&p1, pr, pc);
                /* every other vector layout, both ways                    */
                for (int dist = -1; dist <= 1; dist++)
                    for (size_t bk = 0; bk < 3; bk++)
                        for (unsigned rep = 0; rep < 4; rep++) {
                            blas_layout V =
                                blas_layout_vec(n, dist, bs[bk], rep, pr, pc);
                            expect_model(&V, NULL, &L1, s1);
                            expect_model(&L1, s1, &V, NULL);
                        }
                /* and every other partition                               */
                for (int j = 0; make_part(j, n, P, s2); j++) {
                    blas_part p2 = {.n = n, .nparts = P, .start = s2};
                    blas_layout L2 = blas_layout_part(&p2, pr, pc);
                    expect_model(&L1, s1, &L2, s2);
                }
            }
        }
    }
}

/* ---- renumbered partitions: any ownership ------------------------------- */

#define MAXN 40

/* Ownership number k of n indices over P ranks into own[]; false when
 * there are no more: round robin, reversed blocks, seeded random, all on
 * the last rank.                                                         */
static bool make_owners(int k, int64_t n, int P, int32_t *own)
{
    uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(n + 1);
    for (int64_t i = 0; i < n; i++) {
        switch (k) {
        case 0: own[i] = (int32_t)(i % P); break;
        case 1: own[i] = (int32_t)(P - 1 - i * P / (n > 0 ? n : 1)); break;
        case 2:
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            own[i] = (int32_t)((s >> 33) % (uint64_t)P);
            break;
        case 3: own[i] = (int32_t)(P - 1); break;
        default: return false;
        }
    }
    return k <= 3;
}

/* Each rank's indices in increasing order, rank after rank: the
 * renumbering deso/runtime/part.c makes, written out independently.     */
static void renumber(const int32_t *own, int64_t n, int P, int64_t *start,
                     int32_t *perm, int32_t *iperm)
{
    int64_t pos = 0;
    for (int q = 0; q < P; q++) {
        start[q] = pos;
        for (int64_t i = 0; i < n; i++)
            if (own[i] == q) {
                perm[i] = (int32_t)pos;
                iperm[pos++] = (int32_t)i;
            }
    }
    start[P] = pos;
}

/* As brute_counts, with every partition given by its owner array.       */
static void brute_owner_counts(const blas_layout *S, const int32_t *sown,
                               const blas_layout *D, const int32_t *down,
                               const opt_params *pp, opt_counts *out)
{
    int pc = D->pc, P = D->pr * pc;
    int64_t cnt[MAXP * MAXP], ns[4 * MAXP];
    memset(cnt, 0, sizeof cnt);
    memset(ns, 0, sizeof ns);
    for (int64_t g = 0; g < D->n; g++)
        for (int d = 0; d < P; d++) {
            int a = d / pc, b = d % pc, sr, sc;
            bool holds = down != NULL ? down[g] == d : blas_elem_held(D, a, b, g);
            if (!holds) continue;
            int q;
            if (sown != NULL) {
                q = sown[g];
            } else {
                blas_elem_src(S, a, b, g, &sr, &sc);
                q = sr * pc + sc;
            }
            if (q != d) cnt[q * P + d]++;
        }
    opt__p2p_counts(cnt, P, ns, pp, out);
}

static void expect_owner_model(const blas_layout *S, const int32_t *sown,
                               const blas_layout *D, const int32_t *down)
{
    opt_params pp = opt_params_default();
    opt_counts m, b;
    EXPECT_OK(opt_exchange_cost(S, D, &pp, NULL, &m));
    brute_owner_counts(S, sown, D, down, &pp, &b);
    assert_int_equal(m.bytes_p2p, b.bytes_p2p);
    assert_int_equal(m.msgs_p2p, b.msgs_p2p);
    assert_true(m.time == b.time);
}

/* One renumbered partition: every index held once, by its owner, at its
 * rank among the owner's indices; local and global indices round-trip.  */
static void check_renumbered(const blas_layout *L, const int32_t *own,
                             int64_t n)
{
    int pc = L->pc, P = L->pr * pc;
    for (int64_t g = 0; g < n; g++) {
        int o = own[g];
        assert_int_equal(blas_part_owner(L->part, g), o);
        assert_int_equal(blas_layout_owner(L, g), o);
        int held = 0;
        for (int q = 0; q < P; q++) held += blas_elem_held(L, q / pc, q % pc, g);
        assert_int_equal(held, 1);
        int64_t before = 0;
        for (int64_t i = 0; i < g; i++) before += own[i] == o;
        int64_t li = blas_elem_lidx(L, g);
        assert_int_equal(li, before);
        assert_int_equal(blas_elem_global(L, o / pc, o % pc, li), g);
    }
    for (int q = 0; q < P; q++) {
        int64_t rows, cols, mine = 0;
        for (int64_t i = 0; i < n; i++) mine += own[i] == q;
        blas_layout_local(L, q / pc, q % pc, &rows, &cols);
        assert_int_equal(rows, mine);
    }
}

static void test_renumbered(void **state)
{
    (void)state;
    const int64_t ns[] = {1, 2, 5, 23, MAXN};
    for (size_t gk = 1; gk < sizeof grids / sizeof grids[0]; gk++) {
        int pr = grids[gk][0], pc = grids[gk][1], P = pr * pc;
        for (size_t nk = 0; nk < sizeof ns / sizeof ns[0]; nk++) {
            int64_t n = ns[nk], s1[MAXP + 1];
            int32_t p1[MAXN], i1[MAXN];
            int32_t o1[MAXN];
            for (int k = 0; make_owners(k, n, P, o1); k++) {
                renumber(o1, n, P, s1, p1, i1);
                blas_part part = {.n = n, .nparts = P, .start = s1,
                                  .perm = p1, .iperm = i1, .hash = 1};
                blas_layout L = blas_layout_part(&part, pr, pc);
                assert_int_equal(L.dist, BLAS_DIST_PART);
                check_renumbered(&L, o1, n);
                /* the same ranges without the renumbering are another
                 * layout (deso/runtime/part.c never keeps an identity
                 * renumbering: that ownership is the plain ranges)        */
                blas_part plain = {.n = n, .nparts = P, .start = s1};
                blas_layout Lp = blas_layout_part(&plain, pr, pc);
                assert_false(blas_layout_equal(&L, &Lp));
                /* the cost model's count of every exchange with it        */
                for (int dist = -1; dist <= 1; dist++)
                    for (unsigned rep = 0; rep < 4; rep++) {
                        blas_layout V = blas_layout_vec(n, dist, 2, rep, pr, pc);
                        expect_owner_model(&V, NULL, &L, o1);
                        expect_owner_model(&L, o1, &V, NULL);
                    }
                int64_t s2[MAXP + 1];
                int32_t p2[MAXN], i2[MAXN];
                int32_t o2[MAXN];
                for (int j = 0; make_owners(j, n, P, o2); j++) {
                    renumber(o2, n, P, s2, p2, i2);
                    blas_part q2 = {.n = n, .nparts = P, .start = s2,
                                    .perm = p2, .iperm = i2, .hash = 1};
                    blas_layout L2 = blas_layout_part(&q2, pr, pc);
                    expect_owner_model(&L, o1, &L2, o2);
                    bool same = memcmp(o1, o2, (size_t)n * sizeof *o1) == 0;
                    assert_true(blas_layout_equal(&L, &L2) == same);
                }
                /* and with contiguous ranges                              */
                int64_t r[MAXP + 1];
                int32_t ro[MAXN];
                for (int j = 0; make_part(j, n, P, r); j++) {
                    for (int64_t i = 0; i < n; i++)
                        ro[i] = (int32_t)scan_owner(r, P, i);
                    blas_part q3 = {.n = n, .nparts = P, .start = r};
                    blas_layout L3 = blas_layout_part(&q3, pr, pc);
                    expect_owner_model(&L, o1, &L3, ro);
                    expect_owner_model(&L3, ro, &L, o1);
                }
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_holder_per_index),
        cmocka_unit_test(test_layouts_compare_by_ranges),
        cmocka_unit_test(test_exchange_counts_exact),
        cmocka_unit_test(test_renumbered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
