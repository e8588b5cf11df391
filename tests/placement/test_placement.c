/* Brute force over placements on small grids: 1-D exhaustively, 2-D and
 * 3-D subsampled (deterministic), identity / transpose / permutation
 * alignments, and skews and offsets with explicit or computed templates. */
#include "pl_brute.h"

static pl_fold fold_pick(uint64_t *s)
{
    int64_t x = rng_range(s, 0, 8);        /* block, cyclic(1..7), collapsed */
    pl_fold f = {PL_FOLD_BLOCK, 0};
    if (x == 8) f.kind = PL_FOLD_COLLAPSED;
    else if (x > 0) f = (pl_fold){PL_FOLD_CYCLIC, x};
    return f;
}

static void make_check(int d, const int64_t *extent, const int64_t *tmpl,
                       unsigned repl, const pl_affine *a, const pl_fold *fold,
                       const pl_grid *g, bool tight)
{
    pl_placement pl;
    EXPECT_OK(pl_placement_make(d, extent, tmpl, repl, a, fold, g, &pl));
    pl_copyfn c = pl_placement_copyfn(&pl);
    assert_true(pl_copyfn_equal(c, pl_copyfn_replicated(d, repl)));
    pl_brute_check(&pl, tight);
}

/* d = 1: every grid 1..6, size 0..40, folding and replication.          */
static void test_brute_1d(void **state)
{
    (void)state;
    pl_affine id = pl_affine_identity(1);
    for (int p = 1; p <= 6; p++) {
        pl_grid g;
        EXPECT_OK(pl_grid_make(1, &p, &g));
        for (int64_t n = 0; n <= 40; n++)
            for (int x = 0; x <= 8; x++)
                for (unsigned repl = 0; repl < 2; repl++) {
                    pl_fold f = {PL_FOLD_BLOCK, 0};
                    if (x == 8) f.kind = PL_FOLD_COLLAPSED;
                    else if (x > 0) f = (pl_fold){PL_FOLD_CYCLIC, x};
                    make_check(1, &n, NULL, repl, &id, &f, &g, true);
                }
    }
}

/* d = 2: every grid 1..6 x 1..6, every replication, identity and
 * transpose, with random foldings and sizes 0..40.                       */
static void test_brute_2d(void **state)
{
    (void)state;
    uint64_t s = 2024;
    pl_affine al[2] = {pl_affine_identity(2), pl_affine_transpose(2)};
    for (int pr = 1; pr <= 6; pr++)
        for (int pc = 1; pc <= 6; pc++) {
            pl_grid g;
            EXPECT_OK(pl_grid_2d(pr * pc, pr, pc, &g));
            for (unsigned repl = 0; repl < 4; repl++)
                for (int a = 0; a < 2; a++)
                    for (int rep = 0; rep < 10; rep++) {
                        int64_t ext[2];
                        /* Small first dimension half the time: vectors. */
                        ext[0] = rng_range(&s, 0, 1) ? rng_range(&s, 0, 2)
                                                     : rng_range(&s, 0, 40);
                        ext[1] = rng_range(&s, 0, 40);
                        pl_fold f[2] = {fold_pick(&s), fold_pick(&s)};
                        make_check(2, ext, NULL, repl, &al[a], f, &g, true);
                    }
        }
}

/* d = 3: grids 1..4 per dimension, permutations, sizes 0..7.             */
static void test_brute_3d(void **state)
{
    (void)state;
    uint64_t s = 7;
    int64_t rot[9] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
    pl_affine al[3] = {pl_affine_identity(3), pl_affine_transpose(3)};
    EXPECT_OK(pl_affine_make(3, rot, NULL, &al[2]));
    for (int gx = 0; gx < 64; gx++) {
        int dims[3] = {1 + gx / 16, 1 + (gx / 4) % 4, 1 + gx % 4};
        pl_grid g;
        EXPECT_OK(pl_grid_make(3, dims, &g));
        for (int rep = 0; rep < 30; rep++) {
            int64_t ext[3] = {rng_range(&s, 0, 7), rng_range(&s, 0, 7),
                              rng_range(&s, 0, 7)};
            pl_fold f[3] = {fold_pick(&s), fold_pick(&s), fold_pick(&s)};
            unsigned repl = (unsigned)rng_range(&s, 0, 7);
            make_check(3, ext, NULL, repl, &al[rep % 3], f, &g, true);
        }
    }
}

/* Computed templates of permutations are the permuted extents.           */
static void test_template_permuted(void **state)
{
    (void)state;
    pl_grid g2, g3;
    int dims[3] = {2, 2, 2};
    EXPECT_OK(pl_grid_2d(4, 2, 2, &g2));
    EXPECT_OK(pl_grid_make(3, dims, &g3));
    pl_fold f[3] = {{PL_FOLD_BLOCK, 0}, {PL_FOLD_BLOCK, 0}, {PL_FOLD_BLOCK, 0}};
    pl_placement pl;
    int64_t e2[2] = {3, 5};
    pl_affine tr = pl_affine_transpose(2);
    EXPECT_OK(pl_placement_make(2, e2, NULL, 0, &tr, f, &g2, &pl));
    assert_int_equal(pl.tmpl[0], 5);
    assert_int_equal(pl.tmpl[1], 3);
    int64_t e3[3] = {2, 3, 4}, rot[9] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
    pl_affine ra;
    EXPECT_OK(pl_affine_make(3, rot, NULL, &ra));
    EXPECT_OK(pl_placement_make(3, e3, NULL, 0, &ra, f, &g3, &pl));
    assert_int_equal(pl.tmpl[0], 3);
    assert_int_equal(pl.tmpl[1], 4);
    assert_int_equal(pl.tmpl[2], 2);
    /* An offset widens the box; NULL alignment is the identity.          */
    int64_t t[2] = {2, 1};
    pl_affine off;
    int64_t idm[4] = {1, 0, 0, 1};
    EXPECT_OK(pl_affine_make(2, idm, t, &off));
    EXPECT_OK(pl_placement_make(2, e2, NULL, 0, &off, f, &g2, &pl));
    assert_int_equal(pl.tmpl[0], 5);
    assert_int_equal(pl.tmpl[1], 6);
    EXPECT_OK(pl_placement_make(2, e2, NULL, 0, NULL, f, &g2, &pl));
    assert_true(pl_affine_is_identity(&pl.align));
    assert_int_equal(pl.tmpl[0], 3);
    /* Empty arrays: the template dimension reading the empty one is 0.   */
    int64_t e0[2] = {4, 0};
    EXPECT_OK(pl_placement_make(2, e0, NULL, 0, &tr, f, &g2, &pl));
    assert_int_equal(pl.tmpl[0], 0);
    assert_int_equal(pl.tmpl[1], 4);
    int64_t cnt;
    EXPECT_OK(pl_placement_local_shape(&pl, 0, NULL, &cnt));
    assert_int_equal(cnt, 0);
}

/* Skews and offsets: templates with holes, explicit or computed.         */
static void test_brute_skew(void **state)
{
    (void)state;
    uint64_t s = 99;
    int64_t lower[4] = {1, 0, 1, 1}, upper[4] = {1, 1, 0, 1};
    int64_t neg[4] = {1, 0, -1, 1}, sk3[9] = {1, 0, 0, 1, 1, 0, 0, 1, 1};
    for (int n = 0; n < 800; n++) {
        int pr = (int)rng_range(&s, 1, 4), pc = (int)rng_range(&s, 1, 4);
        pl_grid g;
        EXPECT_OK(pl_grid_2d(pr * pc, pr, pc, &g));
        int64_t m = rng_range(&s, 1, 12), k = rng_range(&s, 1, 12);
        int64_t ext[2] = {m, k}, tm[2], t[2];
        pl_affine a;
        pl_fold f[2] = {fold_pick(&s), fold_pick(&s)};
        unsigned repl = (unsigned)rng_range(&s, 0, 3);
        switch (n % 4) {
        case 0:   /* v = (i0 + 1, i0 + i1 + 2), explicit template with slack */
            t[0] = 1;
            t[1] = 2;
            EXPECT_OK(pl_affine_make(2, lower, t, &a));
            tm[0] = m + 1 + rng_range(&s, 0, 3);
            tm[1] = m + k + 1 + rng_range(&s, 0, 3);
            make_check(2, ext, tm, repl, &a, f, &g, false);
            break;
        case 1:   /* v = (i0 + i1, i1), computed template                */
            EXPECT_OK(pl_affine_make(2, upper, NULL, &a));
            make_check(2, ext, NULL, repl, &a, f, &g, false);
            break;
        case 2:   /* v = (i0, i1 - i0 + m - 1): a negative coefficient     */
            t[0] = 0;
            t[1] = m - 1;
            EXPECT_OK(pl_affine_make(2, neg, t, &a));
            make_check(2, ext, NULL, repl, &a, f, &g, false);
            break;
        default: {  /* 3-D skew on a 2 x 1 x 2 grid, offsets            */
            int dims[3] = {2, 1, 2};
            pl_grid g3;
            EXPECT_OK(pl_grid_make(3, dims, &g3));
            int64_t e3[3] = {rng_range(&s, 1, 4), rng_range(&s, 1, 4),
                             rng_range(&s, 1, 4)};
            int64_t t3[3] = {rng_range(&s, 0, 2), 0, rng_range(&s, 0, 2)};
            pl_fold f3[3] = {fold_pick(&s), fold_pick(&s), fold_pick(&s)};
            EXPECT_OK(pl_affine_make(3, sk3, t3, &a));
            make_check(3, e3, NULL, repl, &a, f3, &g3, false);
        }
        }
    }
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_brute_1d),
        cmocka_unit_test(test_brute_2d),
        cmocka_unit_test(test_brute_3d),
        cmocka_unit_test(test_template_permuted),
        cmocka_unit_test(test_brute_skew),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
