/* Folding: numroc against ScaLAPACK's numroc_, block sizes, and locate /
 * global as a bijection following the cyclic(b) formulas.                */
#include "pl_test.h"

extern int numroc_(const int *n, const int *nb, const int *iproc,
                   const int *isrcproc, const int *nprocs);

static pl_fold fold_make(pl_fold_kind kind, int64_t b)
{
    pl_fold f = {kind, b};
    return f;
}

static void test_numroc_matches_scalapack(void **state)
{
    (void)state;
    for (int n = 0; n <= 60; n++)
        for (int nb = 1; nb <= 8; nb++)
            for (int np = 1; np <= 7; np++)
                for (int src = 0; src < np; src++) {
                    int64_t sum = 0;
                    for (int ip = 0; ip < np; ip++) {
                        int want = numroc_(&n, &nb, &ip, &src, &np);
                        assert_int_equal(pl_numroc(n, nb, ip, src, np), want);
                        sum += want;
                    }
                    assert_int_equal(sum, n);
                }
    assert_int_equal(pl_numroc(-1, 2, 0, 0, 2), 0);
    assert_int_equal(pl_numroc(10, 0, 0, 0, 2), 0);
    assert_int_equal(pl_numroc(10, 2, 0, 0, 0), 0);
}

static void test_block_size(void **state)
{
    (void)state;
    for (int64_t n = 0; n <= 50; n++)
        for (int p = 1; p <= 9; p++) {
            int64_t want = 1;                   /* smallest b with bp >= n */
            while (want * p < n) want++;
            assert_int_equal(pl_fold_block(fold_make(PL_FOLD_BLOCK, 0), n, p),
                             want);
            assert_int_equal(
                pl_fold_block(fold_make(PL_FOLD_CYCLIC, 3), n, p), 3);
            assert_int_equal(
                pl_fold_block(fold_make(PL_FOLD_COLLAPSED, 0), n, p), n);
        }
    assert_int_equal(pl_fold_block(fold_make(PL_FOLD_CYCLIC, 0), 5, 2), 0);
}

/* Every kind, n 0..40, p 1..6, b 1..7: locate follows the cyclic(b)
 * formulas, local lengths are numroc_, and global inverts locate.        */
static void test_locate_global_bijection(void **state)
{
    (void)state;
    for (int kind = 0; kind < 3; kind++)
        for (int bb = 1; bb <= (kind == PL_FOLD_CYCLIC ? 7 : 1); bb++)
            for (int64_t n = 0; n <= 40; n++)
                for (int p = 1; p <= 6; p++) {
                    pl_fold f = fold_make((pl_fold_kind)kind,
                                          kind == PL_FOLD_CYCLIC ? bb : 0);
                    bool coll = kind == PL_FOLD_COLLAPSED;
                    int64_t b = kind == PL_FOLD_CYCLIC ? bb : (n + p - 1) / p;
                    if (b < 1) b = 1;
                    int hits[6][41] = {{0}};
                    for (int c = 0; c < p; c++) {
                        int nn = (int)n, nb = (int)b, src = 0;
                        int64_t want =
                            coll ? n : numroc_(&nn, &nb, &c, &src, &p);
                        assert_int_equal(pl_fold_local_len(f, n, p, c), want);
                    }
                    for (int64_t i = 0; i < n; i++) {
                        int c;
                        int64_t l, back;
                        EXPECT_OK(pl_fold_locate(f, n, p, i, &c, &l));
                        if (coll) {
                            assert_int_equal(c, 0);
                            assert_int_equal(l, i);
                        } else {
                            assert_int_equal(c, (i / b) % p);
                            assert_int_equal(l, (i / (b * p)) * b + i % b);
                        }
                        assert_true(l < pl_fold_local_len(f, n, p, c));
                        EXPECT_OK(pl_fold_global(f, n, p, c, l, &back));
                        assert_int_equal(back, i);
                    }
                    /* Every (coordinate, local < len) names one element,
                     * each element once per coordinate that holds it.    */
                    for (int c = 0; c < p; c++) {
                        int64_t len = pl_fold_local_len(f, n, p, c), i;
                        for (int64_t l = 0; l < len; l++) {
                            EXPECT_OK(pl_fold_global(f, n, p, c, l, &i));
                            assert_in_range(i, 0, n - 1);
                            hits[c][i]++;
                        }
                        assert_int_equal(pl_fold_global(f, n, p, c, len, &i),
                                         DESO_EINVAL);
                    }
                    for (int64_t i = 0; i < n; i++) {
                        int total = 0;
                        for (int c = 0; c < p; c++) total += hits[c][i];
                        assert_int_equal(total, coll ? p : 1);
                    }
                }
}

static void test_errors(void **state)
{
    (void)state;
    pl_fold blk = fold_make(PL_FOLD_BLOCK, 0);
    int c;
    int64_t l, i;
    EXPECT_FAIL(pl_fold_check(blk, -1, 2), DESO_ESIZE, "pl_fold_check");
    EXPECT_FAIL(pl_fold_check(blk, 5, 0), DESO_EINVAL, "pl_fold_check");
    EXPECT_FAIL(pl_fold_check(fold_make(PL_FOLD_CYCLIC, 0), 5, 2),
                DESO_EINVAL, "pl_fold_check");
    EXPECT_FAIL(pl_fold_check(fold_make(PL_FOLD_CYCLIC, -3), 5, 2),
                DESO_EINVAL, "pl_fold_check");
    EXPECT_FAIL(pl_fold_check(fold_make((pl_fold_kind)7, 1), 5, 2),
                DESO_EINVAL, "pl_fold_check");
    EXPECT_FAIL(pl_fold_locate(blk, 5, 2, 5, &c, &l), DESO_EINVAL,
                "pl_fold_locate");
    EXPECT_FAIL(pl_fold_locate(blk, 5, 2, -1, &c, &l), DESO_EINVAL,
                "pl_fold_locate");
    EXPECT_FAIL(pl_fold_locate(blk, -5, 2, 0, &c, &l), DESO_ESIZE,
                "pl_fold_check");
    EXPECT_FAIL(pl_fold_global(blk, 5, 2, 2, 0, &i), DESO_EINVAL,
                "pl_fold_global");
    EXPECT_FAIL(pl_fold_global(blk, 5, 2, -1, 0, &i), DESO_EINVAL,
                "pl_fold_global");
    EXPECT_FAIL(pl_fold_global(blk, 5, 2, 1, 2, &i), DESO_EINVAL,
                "pl_fold_global");               /* coordinate 1 holds 2 */
    EXPECT_FAIL(pl_fold_global(blk, 5, 2, 0, -1, &i), DESO_EINVAL,
                "pl_fold_global");
    EXPECT_FAIL(pl_fold_global(fold_make(PL_FOLD_COLLAPSED, 0), 5, 2, 0, 5,
                               &i),
                DESO_EINVAL, "pl_fold_global");
    assert_int_equal(pl_fold_local_len(blk, 5, 2, 2), 0);
    assert_int_equal(pl_fold_local_len(blk, 5, 0, 0), 0);
    assert_int_equal(pl_fold_local_len(fold_make(PL_FOLD_CYCLIC, 0), 5, 2, 0),
                     0);
}

/* Large extents: no overflow in b * p (cyclic(2^61) on 6 coordinates).   */
static void test_large(void **state)
{
    (void)state;
    pl_fold f = fold_make(PL_FOLD_CYCLIC, INT64_C(1) << 61);
    int64_t n = INT64_MAX, i = INT64_MAX - 1, l, back;
    int c;
    EXPECT_OK(pl_fold_locate(f, n, 6, i, &c, &l));
    assert_int_equal(c, 3);
    assert_int_equal(l, i - 3 * (INT64_C(1) << 61));
    EXPECT_OK(pl_fold_global(f, n, 6, c, l, &back));
    assert_int_equal(back, i);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_numroc_matches_scalapack),
        cmocka_unit_test(test_block_size),
        cmocka_unit_test(test_locate_global_bijection),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
