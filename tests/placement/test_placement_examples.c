/* The default placements, paper 003's worked examples as placements, and
 * bad input to the placement functions.                                  */
#include "pl_brute.h"

static int owners_of(const pl_placement *pl, int64_t i0, int64_t i1,
                     int *ranks)
{
    int64_t i[2] = {i0, i1};
    int count = -1;
    EXPECT_OK(pl_placement_owners(pl, i, ranks, 64, &count));
    return count;
}

static void expect_ranks(const int *got, int n, const int *want, int nwant)
{
    assert_int_equal(n, nwant);
    for (int k = 0; k < n; k++) assert_int_equal(got[k], want[k]);
}

static void test_defaults_structure(void **state)
{
    (void)state;
    pl_grid g;
    pl_placement pl;
    int r[64];
    EXPECT_OK(pl_grid_2d(6, 2, 3, &g));

    /* (1, n), identity, folded over columns, replicated over rows.       */
    EXPECT_OK(pl_placement_vector_rows(10, 0, &g, &pl));
    assert_int_equal(pl.extent[0], 1);
    assert_int_equal(pl.extent[1], 10);
    assert_int_equal(pl.tmpl[0], 1);
    assert_int_equal(pl.tmpl[1], 10);
    assert_int_equal(pl.replicated, 1u);
    assert_true(pl_affine_is_identity(&pl.align));
    assert_int_equal(pl.fold[0].kind, PL_FOLD_BLOCK);
    assert_int_equal(pl.fold[1].kind, PL_FOLD_BLOCK);
    expect_ranks(r, owners_of(&pl, 0, 5, r), (int[]){1, 4}, 2); /* b = 4 */
    EXPECT_OK(pl_placement_vector_rows(10, 3, &g, &pl));
    assert_int_equal(pl.fold[1].kind, PL_FOLD_CYCLIC);
    assert_int_equal(pl.fold[1].b, 3);
    expect_ranks(r, owners_of(&pl, 0, 9, r), (int[]){0, 3}, 2); /* blk 3 */

    /* Transposed: element j at (j, 0), over rows, replicated on columns. */
    EXPECT_OK(pl_placement_vector_cols(10, 0, &g, &pl));
    assert_int_equal(pl.extent[0], 1);
    assert_int_equal(pl.extent[1], 10);
    assert_int_equal(pl.tmpl[0], 10);
    assert_int_equal(pl.tmpl[1], 1);
    assert_int_equal(pl.replicated, 2u);
    pl_affine tr = pl_affine_transpose(2);
    assert_true(pl_affine_equal(&pl.align, &tr));
    expect_ranks(r, owners_of(&pl, 0, 5, r), (int[]){3, 4, 5}, 3); /* b = 5 */
    expect_ranks(r, owners_of(&pl, 0, 4, r), (int[]){0, 1, 2}, 3);
    EXPECT_OK(pl_placement_vector_cols(10, 2, &g, &pl));
    assert_int_equal(pl.fold[0].kind, PL_FOLD_CYCLIC);
    assert_int_equal(pl.fold[0].b, 2);
    assert_int_equal(pl.fold[1].kind, PL_FOLD_BLOCK);
    expect_ranks(r, owners_of(&pl, 0, 2, r), (int[]){3, 4, 5}, 3);

    /* 5 x 7 cyclic(2) x cyclic(2): (3, 4) on row 1, column 2, local (1, 0). */
    EXPECT_OK(pl_placement_matrix(5, 7, 2, 2, &g, &pl));
    assert_int_equal(pl.replicated, 0u);
    assert_int_equal(pl_placement_copies(&pl), 1);
    expect_ranks(r, owners_of(&pl, 3, 4, r), (int[]){5}, 1);
    int64_t i[2] = {3, 4}, loc[2];
    bool owns;
    EXPECT_OK(pl_placement_locate(&pl, i, 5, &owns, loc));
    assert_true(owns);
    assert_int_equal(loc[0], 1);
    assert_int_equal(loc[1], 0);
    EXPECT_OK(pl_placement_matrix(5, 7, 0, 0, &g, &pl));
    assert_int_equal(pl.fold[0].kind, PL_FOLD_BLOCK);
    assert_int_equal(pl.fold[1].kind, PL_FOLD_BLOCK);

    EXPECT_OK(pl_placement_scalar(&g, &pl));
    assert_int_equal(pl.extent[0], 1);
    assert_int_equal(pl.extent[1], 1);
    assert_int_equal(pl.replicated, 3u);
    expect_ranks(r, owners_of(&pl, 0, 0, r), (int[]){0, 1, 2, 3, 4, 5}, 6);
    assert_true(pl_copyfn_equal(pl_placement_copyfn(&pl),
                                pl_copyfn_replicated(2, 3u)));
}

/* The defaults on every grid up to 6 x 6, checked by brute force.       */
static void test_defaults_brute(void **state)
{
    (void)state;
    uint64_t s = 5;
    for (int pr = 1; pr <= 6; pr++)
        for (int pc = 1; pc <= 6; pc++) {
            pl_grid g;
            pl_placement pl;
            EXPECT_OK(pl_grid_2d(pr * pc, pr, pc, &g));
            EXPECT_OK(pl_placement_scalar(&g, &pl));
            pl_brute_check(&pl, true);
            for (int64_t n = 0; n <= 40; n++) {
                int64_t nb = rng_range(&s, 0, 7);
                EXPECT_OK(pl_placement_vector_rows(n, nb, &g, &pl));
                assert_int_equal(pl_placement_copies(&pl), pr);
                pl_brute_check(&pl, true);
                EXPECT_OK(pl_placement_vector_cols(n, nb, &g, &pl));
                assert_int_equal(pl_placement_copies(&pl), pc);
                pl_brute_check(&pl, true);
            }
            for (int rep = 0; rep < 6; rep++) {
                EXPECT_OK(pl_placement_matrix(
                    rng_range(&s, 0, 40), rng_range(&s, 0, 40),
                    rng_range(&s, 0, 7), rng_range(&s, 0, 7), &g, &pl));
                assert_int_equal(pl_placement_copies(&pl), 1);
                pl_brute_check(&pl, true);
            }
        }
}

/* Paper 003's examples 1 and 2 on a 3 x 4 mesh (doc/DESIGN.md, "Worked
 * examples (paper 003)").                                                */
static void test_paper_scalar_examples(void **state)
{
    (void)state;
    pl_grid g;
    pl_placement pl;
    int r[64];
    EXPECT_OK(pl_grid_2d(12, 3, 4, &g));
    int64_t one[2] = {1, 1};
    pl_fold f[2] = {{PL_FOLD_BLOCK, 0}, {PL_FOLD_BLOCK, 0}};
    /* Column 0: (I, diag(0, 1)), copies down dimension 0.                */
    EXPECT_OK(pl_placement_make(2, one, NULL, 1u, NULL, f, &g, &pl));
    pl_copyfn c = pl_placement_copyfn(&pl);
    assert_int_equal(c.d1, 3u);
    assert_int_equal(c.d2, 2u);
    expect_ranks(r, owners_of(&pl, 0, 0, r), (int[]){0, 4, 8}, 3);
    /* Row 0: (I, diag(1, 0)).                                            */
    EXPECT_OK(pl_placement_make(2, one, NULL, 2u, NULL, f, &g, &pl));
    c = pl_placement_copyfn(&pl);
    assert_int_equal(c.d1, 3u);
    assert_int_equal(c.d2, 1u);
    expect_ranks(r, owners_of(&pl, 0, 0, r), (int[]){0, 1, 2, 3}, 4);
}

/* Example 4: an n x n matrix as 1 x n x n, (*, block, block) on 1 x p x p,
 * and an m-vector replicated on every processor: affine
 * [[0,1,0],[0,0,1],[1,0,0]], replication on the template dimensions the
 * paper's diag(1,0,0) zeros map to, folding (*, *, *).                   */
static void test_paper_vector_on_every_block(void **state)
{
    (void)state;
    for (int p = 1; p <= 4; p++) {
        int dims[3] = {1, p, p};
        pl_grid g;
        EXPECT_OK(pl_grid_make(3, dims, &g));
        int64_t n = 3 * p + 1, m = 5;
        int64_t me[3] = {1, n, n};
        pl_fold mf[3] = {{PL_FOLD_COLLAPSED, 0}, {PL_FOLD_BLOCK, 0},
                         {PL_FOLD_BLOCK, 0}};
        pl_placement mat, vec;
        EXPECT_OK(pl_placement_make(3, me, NULL, 0u, NULL, mf, &g, &mat));
        assert_int_equal(pl_placement_copies(&mat), 1);
        pl_brute_check(&mat, true);

        int64_t A[9] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
        pl_affine a;
        EXPECT_OK(pl_affine_make(3, A, NULL, &a));
        int64_t ve[3] = {m, 1, 1};      /* v = (i1, i2, i0) = (0, 0, j)   */
        pl_fold vf[3] = {{PL_FOLD_COLLAPSED, 0}, {PL_FOLD_COLLAPSED, 0},
                         {PL_FOLD_COLLAPSED, 0}};
        EXPECT_OK(pl_placement_make(3, ve, NULL, 3u, &a, vf, &g, &vec));
        assert_int_equal(vec.tmpl[0], 1);
        assert_int_equal(vec.tmpl[1], 1);
        assert_int_equal(vec.tmpl[2], m);
        assert_int_equal(pl_placement_copies(&vec), p * p);
        for (int64_t j = 0; j < m; j++) {
            int64_t i[3] = {j, 0, 0};
            int ranks[16], count;
            EXPECT_OK(pl_placement_owners(&vec, i, ranks, 16, &count));
            assert_int_equal(count, p * p);
            for (int r = 0; r < p * p; r++) {
                assert_int_equal(ranks[r], r);
                bool owns = false;
                int64_t loc[3];
                EXPECT_OK(pl_placement_locate(&vec, i, r, &owns, loc));
                assert_true(owns);
                assert_int_equal(loc[2], j);
            }
        }
        pl_brute_check(&vec, true);
        /* The same with the paper's replication alone: block folding on
         * the extent-1 dimensions still puts a copy everywhere.          */
        pl_fold bf[3] = {{PL_FOLD_BLOCK, 0}, {PL_FOLD_BLOCK, 0},
                         {PL_FOLD_COLLAPSED, 0}};
        EXPECT_OK(pl_placement_make(3, ve, NULL, 3u, &a, bf, &g, &vec));
        assert_int_equal(pl_placement_copies(&vec), p * p);
        pl_brute_check(&vec, true);
    }
}

static void test_errors(void **state)
{
    (void)state;
    pl_grid g, g3;
    pl_placement pl;
    int dims[3] = {1, 2, 2};
    EXPECT_OK(pl_grid_2d(4, 2, 2, &g));
    EXPECT_OK(pl_grid_make(3, dims, &g3));
    int64_t ext[2] = {4, 5}, neg[2] = {4, -1};
    pl_fold f[2] = {{PL_FOLD_BLOCK, 0}, {PL_FOLD_CYCLIC, 2}};
    pl_fold f0[2] = {{PL_FOLD_BLOCK, 0}, {PL_FOLD_CYCLIC, 0}};
    const char *mk = "pl_placement_make";
    EXPECT_FAIL(pl_placement_make(2, neg, NULL, 0, NULL, f, &g, &pl),
                DESO_ESIZE, mk);
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 0, NULL, f0, &g, &pl),
                DESO_EINVAL, mk);
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 0, NULL, f, &g3, &pl),
                DESO_EGRID, mk);
    EXPECT_FAIL(pl_placement_make(0, ext, NULL, 0, NULL, f, &g, &pl),
                DESO_EINVAL, mk);
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 4u, NULL, f, &g, &pl),
                DESO_EINVAL, mk);
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 0, NULL, NULL, &g, &pl),
                DESO_ENULL, mk);
    pl_affine sing = pl_affine_identity(2), two = pl_affine_identity(2);
    sing.A[1][1] = 0;                                 /* det 0            */
    two.A[0][0] = 2;                                  /* det 2            */
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 0, &sing, f, &g, &pl),
                DESO_ESINGULAR, mk);
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 0, &two, f, &g, &pl),
                DESO_ESINGULAR, mk);
    pl_affine a3 = pl_affine_identity(3);
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 0, &a3, f, &g, &pl),
                DESO_EINVAL, mk);
    int64_t small[2] = {4, 4}, negt[2] = {-1, 5};
    EXPECT_FAIL(pl_placement_make(2, ext, small, 0, NULL, f, &g, &pl),
                DESO_ESIZE, mk);
    EXPECT_FAIL(pl_placement_make(2, ext, negt, 0, NULL, f, &g, &pl),
                DESO_ESIZE, mk);
    int64_t t[2] = {-1, 0}, idm[4] = {1, 0, 0, 1};
    pl_affine off;
    EXPECT_OK(pl_affine_make(2, idm, t, &off));
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 0, &off, f, &g, &pl),
                DESO_ESIZE, mk);
    pl_grid bad = g;
    bad.dims[1] = 0;
    EXPECT_FAIL(pl_placement_make(2, ext, NULL, 0, NULL, f, &bad, &pl),
                DESO_EGRID, mk);

    EXPECT_OK(pl_placement_make(2, ext, NULL, 0, NULL, f, &g, &pl));
    int64_t in[2] = {3, 4}, out1[2] = {4, 0}, out2[2] = {0, -1}, loc[2];
    int64_t i[2];
    int ranks[4], count;
    bool owns;
    EXPECT_FAIL(pl_placement_owners(&pl, out1, ranks, 4, &count), DESO_EINVAL,
                "pl_placement_owners");
    EXPECT_FAIL(pl_placement_owners(&pl, out2, ranks, 4, &count), DESO_EINVAL,
                "pl_placement_owners");
    EXPECT_FAIL(pl_placement_locate(&pl, out1, 0, &owns, loc), DESO_EINVAL,
                "pl_placement_locate");
    EXPECT_FAIL(pl_placement_locate(&pl, in, 4, &owns, loc), DESO_EINVAL,
                "pl_placement_locate");
    EXPECT_FAIL(pl_placement_locate(&pl, in, -1, &owns, loc), DESO_EINVAL,
                "pl_placement_locate");
    int64_t zero[2] = {0, 0}, far[2] = {0, 3};
    EXPECT_FAIL(pl_placement_global(&pl, 4, zero, i), DESO_EINVAL,
                "pl_placement_global");
    EXPECT_FAIL(pl_placement_global(&pl, 0, far, i), DESO_EINVAL,
                "pl_placement_global");        /* rank 0 holds 3 columns */
    int64_t le[2], cnt;
    EXPECT_FAIL(pl_placement_local_shape(&pl, 4, le, &cnt), DESO_EINVAL,
                "pl_placement_local_shape");
    EXPECT_FAIL(pl_placement_owners(&pl, in, NULL, 4, &count), DESO_ENULL,
                "pl_placement_owners");

    EXPECT_FAIL(pl_placement_vector_rows(-1, 0, &g, &pl), DESO_ESIZE,
                "pl_placement_vector_rows");
    EXPECT_FAIL(pl_placement_vector_rows(5, -1, &g, &pl), DESO_EINVAL,
                "pl_placement_vector_rows");
    EXPECT_FAIL(pl_placement_vector_cols(5, 0, &g3, &pl), DESO_EGRID,
                "pl_placement_vector_cols");
    EXPECT_FAIL(pl_placement_matrix(3, -2, 0, 0, &g, &pl), DESO_ESIZE,
                "pl_placement_matrix");
    EXPECT_FAIL(pl_placement_matrix(3, 2, -1, 0, &g, &pl), DESO_EINVAL,
                "pl_placement_matrix");
    EXPECT_FAIL(pl_placement_scalar(&g3, &pl), DESO_EGRID,
                "pl_placement_scalar");
    EXPECT_FAIL(pl_placement_scalar(NULL, &pl), DESO_ENULL,
                "pl_placement_scalar");
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_defaults_structure),
        cmocka_unit_test(test_defaults_brute),
        cmocka_unit_test(test_paper_scalar_examples),
        cmocka_unit_test(test_paper_vector_on_every_block),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
