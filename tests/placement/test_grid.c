/* Process-grid geometry: shapes, row-major rank <-> coordinates, errors. */
#include "pl_test.h"

static void test_grid_2d_auto_is_most_square(void **state)
{
    (void)state;
    for (int P = 1; P <= 200; P++) {
        pl_grid g;
        EXPECT_OK(pl_grid_2d(P, 0, 0, &g));
        assert_int_equal(g.d, 2);
        assert_int_equal(g.dims[0] * g.dims[1], P);
        assert_true(g.dims[0] <= g.dims[1]);
        /* No divisor of P lies strictly between pr and sqrt(P).          */
        for (int r = g.dims[0] + 1; r * r <= P; r++)
            assert_true(P % r != 0);
        assert_int_equal(pl_grid_size(&g), P);
    }
    int want[][3] = {{1, 1, 1}, {2, 1, 2}, {4, 2, 2}, {6, 2, 3}, {7, 1, 7},
                     {12, 3, 4}, {16, 4, 4}, {18, 3, 6}, {30, 5, 6}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        pl_grid g;
        EXPECT_OK(pl_grid_2d(want[k][0], 0, 0, &g));
        assert_int_equal(g.dims[0], want[k][1]);
        assert_int_equal(g.dims[1], want[k][2]);
    }
}

static void test_grid_2d_explicit(void **state)
{
    (void)state;
    pl_grid g;
    EXPECT_OK(pl_grid_2d(6, 3, 2, &g));
    assert_int_equal(g.dims[0], 3);
    assert_int_equal(g.dims[1], 2);
    EXPECT_OK(pl_grid_2d(6, 1, 6, &g));
    assert_int_equal(g.dims[0], 1);
    assert_int_equal(g.dims[1], 6);
    EXPECT_OK(pl_grid_2d(6, 1, 0, &g));    /* "pr = 1 gives a 1-D row" */
    assert_int_equal(g.dims[0], 1);
    assert_int_equal(g.dims[1], 6);
    EXPECT_OK(pl_grid_2d(6, 0, 3, &g));
    assert_int_equal(g.dims[0], 2);
    assert_int_equal(g.dims[1], 3);
}

static void test_grid_errors(void **state)
{
    (void)state;
    pl_grid g;
    EXPECT_FAIL(pl_grid_2d(0, 0, 0, &g), DESO_EINVAL, "pl_grid_2d");
    EXPECT_FAIL(pl_grid_2d(-3, 1, 1, &g), DESO_EINVAL, "pl_grid_2d");
    EXPECT_FAIL(pl_grid_2d(6, 2, 2, &g), DESO_EGRID, "pl_grid_2d");
    EXPECT_FAIL(pl_grid_2d(6, 4, 0, &g), DESO_EGRID, "pl_grid_2d");
    EXPECT_FAIL(pl_grid_2d(6, 0, 4, &g), DESO_EGRID, "pl_grid_2d");
    EXPECT_FAIL(pl_grid_2d(6, -2, -3, &g), DESO_EINVAL, "pl_grid_2d");
    EXPECT_FAIL(pl_grid_2d(4, 2, 2, NULL), DESO_ENULL, "pl_grid_2d");

    int dims[3] = {2, 0, 3};
    EXPECT_FAIL(pl_grid_make(3, dims, &g), DESO_EINVAL, "pl_grid_make");
    dims[1] = -1;
    EXPECT_FAIL(pl_grid_make(3, dims, &g), DESO_EINVAL, "pl_grid_make");
    dims[1] = 2;
    EXPECT_FAIL(pl_grid_make(0, dims, &g), DESO_EINVAL, "pl_grid_make");
    EXPECT_FAIL(pl_grid_make(PL_MAXD + 1, dims, &g), DESO_EINVAL,
                "pl_grid_make");
    EXPECT_FAIL(pl_grid_make(3, NULL, &g), DESO_ENULL, "pl_grid_make");
    int huge[3] = {1 << 16, 1 << 16, 1};
    EXPECT_FAIL(pl_grid_make(2, huge, &g), DESO_EOVERFLOW, "pl_grid_make");

    EXPECT_OK(pl_grid_make(3, dims, &g));
    int c[3] = {0, 0, 0}, r;
    EXPECT_FAIL(pl_grid_coords(&g, -1, c), DESO_EINVAL, "pl_grid_coords");
    EXPECT_FAIL(pl_grid_coords(&g, 12, c), DESO_EINVAL, "pl_grid_coords");
    c[2] = 3;
    EXPECT_FAIL(pl_grid_rank(&g, c, &r), DESO_EINVAL, "pl_grid_rank");
    c[2] = -1;
    EXPECT_FAIL(pl_grid_rank(&g, c, &r), DESO_EINVAL, "pl_grid_rank");
    pl_grid bad = g;
    bad.dims[0] = 0;
    assert_int_equal(pl_grid_size(&bad), 0);
    EXPECT_FAIL(pl_grid_coords(&bad, 0, c), DESO_EGRID, "pl_grid_coords");
}

/* Every grid up to 5 per dimension: rank and coordinates are inverse and
 * row-major (rank = sum coords[k] * stride[k], last dimension fastest).  */
static void test_grid_row_major_roundtrip(void **state)
{
    (void)state;
    for (int d = 1; d <= PL_MAXD; d++) {
        int ncases = 1;
        for (int k = 0; k < d; k++) ncases *= 5;
        for (int cs = 0; cs < ncases; cs++) {
            int dims[PL_MAXD], x = cs;
            for (int k = 0; k < d; k++) {
                dims[k] = 1 + x % 5;
                x /= 5;
            }
            pl_grid g;
            EXPECT_OK(pl_grid_make(d, dims, &g));
            int size = 1;
            for (int k = 0; k < d; k++) size *= dims[k];
            assert_int_equal(pl_grid_size(&g), size);
            int seen[125] = {0};
            for (int rank = 0; rank < size; rank++) {
                int c[PL_MAXD], back, stride = 1, expect = 0;
                EXPECT_OK(pl_grid_coords(&g, rank, c));
                for (int k = d - 1; k >= 0; k--) {
                    assert_in_range(c[k], 0, dims[k] - 1);
                    expect += c[k] * stride;
                    stride *= dims[k];
                }
                assert_int_equal(expect, rank);
                EXPECT_OK(pl_grid_rank(&g, c, &back));
                assert_int_equal(back, rank);
                seen[rank]++;
            }
            for (int rank = 0; rank < size; rank++)
                assert_int_equal(seen[rank], 1);
        }
    }
    /* Explicitly: on 2 x 3 rank 1 is (0, 1) and rank 3 is (1, 0).        */
    pl_grid g;
    int c[2];
    EXPECT_OK(pl_grid_2d(6, 2, 3, &g));
    EXPECT_OK(pl_grid_coords(&g, 1, c));
    assert_int_equal(c[0], 0);
    assert_int_equal(c[1], 1);
    EXPECT_OK(pl_grid_coords(&g, 3, c));
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 0);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_grid_2d_auto_is_most_square),
        cmocka_unit_test(test_grid_2d_explicit),
        cmocka_unit_test(test_grid_errors),
        cmocka_unit_test(test_grid_row_major_roundtrip),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
