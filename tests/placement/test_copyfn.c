/* Copy functions: algebraic laws over every bit pattern for d = 1..3, the
 * worked examples and eq. 8 of paper 003, and the truth table
 * (doc/DESIGN.md, "Worked examples (paper 003)" and "Copy-function algebra
 * and its errata").  The oracle multiplies explicit 0/1 diagonal
 * matrices.                                                               */
#include "pl_test.h"

static pl_copyfn cf(int d, unsigned d1, unsigned d2)
{
    pl_copyfn c = {d, d1, d2};
    return c;
}

/* diag(e0, e1, ...) as a bit mask, written as in the paper.               */
static unsigned diag2(int e0, int e1) { return (unsigned)(e0 | e1 << 1); }

/* Oracle: explicit diagonal matrices, (D1 E1, E2 D2), then Prop. 3.      */
static pl_copyfn oracle_compose(pl_copyfn a, pl_copyfn b)
{
    int64_t D1[PL_MAXD], D2[PL_MAXD];
    unsigned r1 = 0, r2 = 0;
    for (int k = 0; k < a.d; k++) {
        int64_t a1 = (a.d1 >> k) & 1, a2 = (a.d2 >> k) & 1;
        int64_t b1 = (b.d1 >> k) & 1, b2 = (b.d2 >> k) & 1;
        if (a1 == a2) a1 = a2 = 1;         /* operands are cancelled too */
        if (b1 == b2) b1 = b2 = 1;
        D1[k] = a1 * b1;
        D2[k] = b2 * a2;
        if (D1[k] == D2[k]) D1[k] = D2[k] = 1;
        r1 |= (unsigned)D1[k] << k;
        r2 |= (unsigned)D2[k] << k;
    }
    return cf(a.d, r1, r2);
}

static bool same(pl_copyfn a, pl_copyfn b)
{
    return a.d == b.d && a.d1 == b.d1 && a.d2 == b.d2;
}

static pl_copyfn comp(pl_copyfn a, pl_copyfn b)
{
    pl_copyfn r;
    EXPECT_OK(pl_copyfn_compose(a, b, &r));
    return r;
}

static void test_identity_and_replicated(void **state)
{
    (void)state;
    for (int d = 1; d <= PL_MAXD; d++) {
        unsigned full = (1u << d) - 1;
        pl_copyfn id = pl_copyfn_identity(d);
        assert_true(same(id, cf(d, full, full)));
        for (unsigned s = 0; s <= full; s++) {
            pl_copyfn c = pl_copyfn_replicated(d, s);
            assert_true(same(c, cf(d, full, full & ~s)));
            assert_true(same(pl_copyfn_cancel(c), c));  /* canonical    */
            assert_true(same(comp(id, c), c));
            assert_true(same(comp(c, id), c));
        }
    }
}

static void test_compose_matches_matrix_oracle(void **state)
{
    (void)state;
    for (int d = 1; d <= PL_MAXD; d++) {
        unsigned n = 1u << d;
        for (unsigned a1 = 0; a1 < n; a1++)
            for (unsigned a2 = 0; a2 < n; a2++)
                for (unsigned b1 = 0; b1 < n; b1++)
                    for (unsigned b2 = 0; b2 < n; b2++) {
                        pl_copyfn a = cf(d, a1, a2), b = cf(d, b1, b2);
                        assert_true(same(comp(a, b), oracle_compose(a, b)));
                    }
    }
}

static void test_cancel_inverse_equal(void **state)
{
    (void)state;
    for (int d = 1; d <= PL_MAXD; d++) {
        unsigned n = 1u << d, full = n - 1;
        for (unsigned a1 = 0; a1 < n; a1++)
            for (unsigned a2 = 0; a2 < n; a2++) {
                pl_copyfn a = cf(d, a1, a2), c = pl_copyfn_cancel(a);
                /* Cancel: equal entries (even zeros) become 1, others stay. */
                for (int k = 0; k < d; k++) {
                    unsigned x = (a1 >> k) & 1, y = (a2 >> k) & 1;
                    assert_int_equal((c.d1 >> k) & 1, x == y ? 1u : x);
                    assert_int_equal((c.d2 >> k) & 1, x == y ? 1u : y);
                }
                assert_true(same(pl_copyfn_cancel(c), c));
                /* Inverse swaps, is an involution, and c o c^-1 = I.      */
                pl_copyfn inv = pl_copyfn_inverse(a);
                assert_true(same(inv, cf(d, a2, a1)));
                assert_true(same(pl_copyfn_inverse(inv), a));
                assert_true(same(comp(a, inv), pl_copyfn_identity(d)));
                assert_true(same(comp(inv, a), pl_copyfn_identity(d)));
                assert_true(pl_copyfn_equal(a, c));
                assert_true(pl_copyfn_equal(c, a));
                assert_false(pl_copyfn_equal(a, cf(d == 1 ? 2 : 1, a1, a2)));
                for (unsigned b1 = 0; b1 < n; b1++)
                    for (unsigned b2 = 0; b2 < n; b2++) {
                        pl_copyfn b = cf(d, b1, b2);
                        unsigned e1 = ~(a1 ^ a2) & full, e2 = ~(b1 ^ b2) & full;
                        bool want = ((a1 | e1) == (b1 | e2)) &&
                                    ((a2 | e1) == (b2 | e2));
                        assert_int_equal(pl_copyfn_equal(a, b), want);
                        /* (a o b)^-1 = b^-1 o a^-1                         */
                        assert_true(same(pl_copyfn_inverse(comp(a, b)),
                                         comp(pl_copyfn_inverse(b), inv)));
                        /* compose depends only on the cancelled operands  */
                        assert_true(same(comp(a, b), comp(c, b)));
                    }
            }
    }
}

/* Associativity holds in the state algebra: on placement copy functions
 * (I, diag(s)) and along chains of exchanges, for every pattern.   */
static void test_associativity_state_algebra(void **state)
{
    (void)state;
    for (int d = 1; d <= PL_MAXD; d++) {
        unsigned n = 1u << d;
        for (unsigned sa = 0; sa < n; sa++)
            for (unsigned sb = 0; sb < n; sb++)
                for (unsigned sc = 0; sc < n; sc++) {
                    pl_copyfn a = pl_copyfn_replicated(d, sa);
                    pl_copyfn b = pl_copyfn_replicated(d, sb);
                    pl_copyfn c = pl_copyfn_replicated(d, sc);
                    assert_true(same(comp(comp(a, b), c), comp(a, comp(b, c))));
                    /* composing placements unions their replication      */
                    assert_true(same(comp(a, b),
                                     pl_copyfn_replicated(d, sa | sb)));
                    pl_copyfn rab, rbc, rac;
                    EXPECT_OK(pl_copyfn_exchange(a, b, &rab));
                    EXPECT_OK(pl_copyfn_exchange(b, c, &rbc));
                    EXPECT_OK(pl_copyfn_exchange(a, c, &rac));
                    /* r moves the source state to the sink state         */
                    assert_true(same(comp(rab, a), b));
                    assert_true(same(comp(comp(rbc, rab), a),
                                     comp(rbc, comp(rab, a))));
                    assert_true(same(comp(rbc, rab), rac));
                }
    }
    /* Outside it, the cancelling algebra is not associative (doc/DESIGN.md,
     * "Copy-function algebra and its errata"):
     * R = (1,0), C = (0,1); (R o R) o C = I but R o (R o C) = R.          */
    pl_copyfn R = cf(1, 1, 0), C = cf(1, 0, 1);
    assert_true(same(comp(comp(R, R), C), pl_copyfn_identity(1)));
    assert_true(same(comp(R, comp(R, C)), R));
}

static void test_truth_table(void **state)
{
    (void)state;
    for (int d = 1; d <= PL_MAXD; d++) {
        unsigned n = 1u << d;
        for (unsigned src = 0; src < n; src++)
            for (unsigned sink = 0; sink < n; sink++) {
                pl_copyfn r;
                pl_repl_step st[PL_MAXD];
                EXPECT_OK(pl_copyfn_exchange(
                    pl_copyfn_replicated(d, src),
                    pl_copyfn_replicated(d, sink), &r));
                pl_copyfn_classify(r, st);
                for (int k = 0; k < d; k++) {
                    bool a = (src >> k) & 1, b = (sink >> k) & 1;
                    pl_repl_step want = (!a && b)   ? PL_STEP_BROADCAST
                                        : (a && !b) ? PL_STEP_COLLAPSE
                                                    : PL_STEP_NONE;
                    assert_int_equal(st[k], want);
                }
            }
    }
    /* Classification cancels first: (0,0) is no step.                    */
    pl_repl_step st[2];
    pl_copyfn_classify(cf(2, diag2(0, 1), diag2(0, 0)), st);
    assert_int_equal(st[0], PL_STEP_NONE);
    assert_int_equal(st[1], PL_STEP_BROADCAST);
}

/* Paper 003's examples 1-3 (doc/DESIGN.md, "Worked examples (paper
 * 003)").                                                                 */
static void test_paper_examples(void **state)
{
    (void)state;
    pl_copyfn col0 = pl_copyfn_replicated(2, 1u);  /* copies along dim 0 */
    pl_copyfn row0 = pl_copyfn_replicated(2, 2u);  /* copies along dim 1 */
    assert_true(same(col0, cf(2, diag2(1, 1), diag2(0, 1))));
    assert_true(same(row0, cf(2, diag2(1, 1), diag2(1, 0))));
    pl_copyfn r;
    EXPECT_OK(pl_copyfn_exchange(col0, row0, &r));
    assert_true(same(r, cf(2, diag2(0, 1), diag2(1, 0))));
    assert_true(same(comp(r, col0), row0));
    pl_repl_step st[2];
    pl_copyfn_classify(r, st);
    assert_int_equal(st[0], PL_STEP_COLLAPSE);
    assert_int_equal(st[1], PL_STEP_BROADCAST);
    /* Sec. 3.2's convention c_src o c_sink^-1 is the inverse (the
     * direction erratum of doc/DESIGN.md).                                */
    pl_copyfn r32;
    EXPECT_OK(pl_copyfn_compose(col0, pl_copyfn_inverse(row0), &r32));
    assert_true(same(r32, cf(2, diag2(1, 0), diag2(0, 1))));
    assert_true(same(r32, pl_copyfn_inverse(r)));
}

/* daxpy, eq. 8: c_yx = (I, I) o c_y, c_yalpha = (I, diag(1,0)) o c_y.     */
static void test_daxpy_eq8(void **state)
{
    (void)state;
    pl_copyfn I = pl_copyfn_identity(2);
    pl_copyfn add1 = cf(2, diag2(1, 1), diag2(1, 0));
    /* y not replicated: x not replicated, alpha on row 0 (I, diag(1,0)). */
    pl_copyfn cy = I;
    assert_true(same(comp(I, cy), I));
    assert_true(same(comp(add1, cy), cf(2, diag2(1, 1), diag2(1, 0))));
    /* y on every row (I, diag(0,1)): x likewise, alpha everywhere (I, 0). */
    cy = cf(2, diag2(1, 1), diag2(0, 1));
    assert_true(same(comp(I, cy), cf(2, diag2(1, 1), diag2(0, 1))));
    assert_true(same(comp(add1, cy), cf(2, diag2(1, 1), diag2(0, 0))));
    assert_true(same(comp(add1, cy), pl_copyfn_replicated(2, 3u)));
}

static void test_errors(void **state)
{
    (void)state;
    pl_copyfn r;
    EXPECT_FAIL(pl_copyfn_compose(pl_copyfn_identity(2), pl_copyfn_identity(3),
                                  &r),
                DESO_EINVAL, "pl_copyfn_compose");
    EXPECT_FAIL(pl_copyfn_compose(pl_copyfn_identity(0), pl_copyfn_identity(0),
                                  &r),
                DESO_EINVAL, "pl_copyfn_compose");
    EXPECT_FAIL(pl_copyfn_compose(pl_copyfn_identity(2), pl_copyfn_identity(2),
                                  NULL),
                DESO_ENULL, "pl_copyfn_compose");
    EXPECT_FAIL(pl_copyfn_exchange(pl_copyfn_identity(1),
                                         pl_copyfn_identity(2), &r),
                DESO_EINVAL, "pl_copyfn_exchange");
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_identity_and_replicated),
        cmocka_unit_test(test_compose_matches_matrix_oracle),
        cmocka_unit_test(test_cancel_inverse_equal),
        cmocka_unit_test(test_associativity_state_algebra),
        cmocka_unit_test(test_truth_table),
        cmocka_unit_test(test_paper_examples),
        cmocka_unit_test(test_daxpy_eq8),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
