/* Affine alignments: construction (det +-1), transpose, and the compose /
 * inverse / realign laws on random unimodular matrices.  The oracle is the
 * test's own integer matrix arithmetic.                                   */
#include "pl_test.h"

typedef int64_t mat[PL_MAXD][PL_MAXD];

static int64_t det_oracle(int d, const int64_t *a)   /* row-major d x d  */
{
    if (d == 1) return a[0];
    if (d == 2) return a[0] * a[3] - a[1] * a[2];
    return a[0] * (a[4] * a[8] - a[5] * a[7]) -
           a[1] * (a[3] * a[8] - a[5] * a[6]) +
           a[2] * (a[3] * a[7] - a[4] * a[6]);
}

/* A random unimodular matrix: a product of elementary row operations.    */
static void random_unimodular(uint64_t *s, int d, int64_t *a)
{
    for (int r = 0; r < d; r++)
        for (int c = 0; c < d; c++) a[r * d + c] = r == c;
    int ops = (int)rng_range(s, 0, 6);
    for (int o = 0; o < ops; o++) {
        int r1 = (int)rng_range(s, 0, d - 1), r2 = (int)rng_range(s, 0, d - 1);
        int kind = (int)rng_range(s, 0, 2);
        int64_t m = rng_range(s, -2, 2);
        for (int c = 0; c < d; c++) {
            if (kind == 0 && r1 != r2)        /* row r1 += m * row r2     */
                a[r1 * d + c] += m * a[r2 * d + c];
            else if (kind == 1) {             /* swap rows                */
                int64_t x = a[r1 * d + c];
                a[r1 * d + c] = a[r2 * d + c];
                a[r2 * d + c] = x;
            }
        }
        if (kind == 2)                        /* negate a row             */
            for (int c = 0; c < d; c++) a[r1 * d + c] = -a[r1 * d + c];
    }
}

static pl_affine random_affine(uint64_t *s, int d)
{
    int64_t a[9], t[3];
    random_unimodular(s, d, a);
    assert_true(det_oracle(d, a) == 1 || det_oracle(d, a) == -1);
    for (int k = 0; k < d; k++) t[k] = rng_range(s, -5, 5);
    pl_affine f;
    EXPECT_OK(pl_affine_make(d, a, t, &f));
    for (int r = 0; r < d; r++) {
        assert_int_equal(f.t[r], t[r]);
        for (int c = 0; c < d; c++) assert_int_equal(f.A[r][c], a[r * d + c]);
    }
    return f;
}

static void apply_oracle(const pl_affine *f, const int64_t *i, int64_t *v)
{
    for (int r = 0; r < f->d; r++) {
        v[r] = f->t[r];
        for (int c = 0; c < f->d; c++) v[r] += f->A[r][c] * i[c];
    }
}

static void test_identity_transpose(void **state)
{
    (void)state;
    for (int d = 1; d <= PL_MAXD; d++) {
        pl_affine id = pl_affine_identity(d), tr = pl_affine_transpose(d), tt;
        assert_true(pl_affine_is_identity(&id));
        assert_int_equal(pl_affine_is_identity(&tr), d == 1);
        EXPECT_OK(pl_affine_compose(&tr, &tr, &tt));
        assert_true(pl_affine_is_identity(&tt));
        int64_t i[3] = {7, 11, 13}, v[3];
        pl_affine_apply(&tr, i, v);
        for (int k = 0; k < d; k++) assert_int_equal(v[k], i[d - 1 - k]);
    }
    /* Element j of a row vector at (0, j) goes to (j, 0).                 */
    pl_affine tr = pl_affine_transpose(2);
    int64_t i[2] = {0, 5}, v[2];
    pl_affine_apply(&tr, i, v);
    assert_int_equal(v[0], 5);
    assert_int_equal(v[1], 0);
}

static void test_make_det(void **state)
{
    (void)state;
    pl_affine f;
    int64_t sing[4] = {1, 2, 2, 4}, two[4] = {2, 0, 0, 1}, zero[4] = {0};
    int64_t neg[4] = {0, 1, 1, 0}, skew[4] = {1, 0, 1, 1}, t[2] = {3, -4};
    EXPECT_FAIL(pl_affine_make(2, sing, NULL, &f), DESO_ESINGULAR,
                "pl_affine_make");
    EXPECT_FAIL(pl_affine_make(2, zero, NULL, &f), DESO_ESINGULAR,
                "pl_affine_make");
    EXPECT_FAIL(pl_affine_make(2, two, NULL, &f), DESO_ESINGULAR,
                "pl_affine_make");
    int64_t m2[1] = {-2};
    EXPECT_FAIL(pl_affine_make(1, m2, NULL, &f), DESO_ESINGULAR,
                "pl_affine_make");
    EXPECT_FAIL(pl_affine_make(0, two, NULL, &f), DESO_EINVAL,
                "pl_affine_make");
    EXPECT_FAIL(pl_affine_make(4, two, NULL, &f), DESO_EINVAL,
                "pl_affine_make");
    EXPECT_FAIL(pl_affine_make(2, NULL, NULL, &f), DESO_ENULL,
                "pl_affine_make");
    EXPECT_OK(pl_affine_make(2, neg, NULL, &f));       /* det -1          */
    EXPECT_OK(pl_affine_make(2, skew, t, &f));
    assert_int_equal(f.t[0], 3);
    assert_int_equal(f.t[1], -4);
    int64_t big[4] = {INT64_MAX, 0, 0, 2};
    EXPECT_FAIL(pl_affine_make(2, big, NULL, &f), DESO_EOVERFLOW,
                "pl_affine_make");

    /* Every 3 x 3 matrix with entries in -1..1 sampled: accepted exactly
     * when the determinant is +-1, and then its inverse is integral.     */
    uint64_t s = 1;
    int accepted = 0;
    for (int n = 0; n < 4000; n++) {
        int64_t a[9];
        for (int k = 0; k < 9; k++) a[k] = rng_range(&s, -1, 1);
        int64_t det = det_oracle(3, a);
        deso_err e = pl_affine_make(3, a, NULL, &f);
        if (det == 1 || det == -1) {
            EXPECT_OK(e);
            accepted++;
            pl_affine inv, p;
            EXPECT_OK(pl_affine_inverse(&f, &inv));
            EXPECT_OK(pl_affine_compose(&f, &inv, &p));
            assert_true(pl_affine_is_identity(&p));
        } else {
            assert_int_equal(e, DESO_ESINGULAR);
        }
    }
    assert_true(accepted > 100);

    /* A hand-built singular struct is rejected by inverse and realign.   */
    pl_affine bad = pl_affine_identity(3), out;
    bad.A[2][2] = 0;
    EXPECT_FAIL(pl_affine_inverse(&bad, &out), DESO_ESINGULAR,
                "pl_affine_inverse");
    bad.A[2][2] = 2;
    EXPECT_FAIL(pl_affine_realign(&bad, &f, &out), DESO_ESINGULAR,
                "pl_affine_inverse");
}

static void test_laws_random(void **state)
{
    (void)state;
    uint64_t s = 42;
    for (int n = 0; n < 3000; n++) {
        int d = 1 + n % PL_MAXD;
        pl_affine f = random_affine(&s, d), g = random_affine(&s, d);
        pl_affine h = random_affine(&s, d);
        pl_affine fi, gi, fg, fg_h, g_h, f_gh, fgi, gifi, p, ra;
        EXPECT_OK(pl_affine_inverse(&f, &fi));
        EXPECT_OK(pl_affine_inverse(&g, &gi));
        EXPECT_OK(pl_affine_compose(&f, &fi, &p));
        assert_true(pl_affine_is_identity(&p));
        EXPECT_OK(pl_affine_compose(&fi, &f, &p));
        assert_true(pl_affine_is_identity(&p));
        EXPECT_OK(pl_affine_inverse(&fi, &p));
        assert_true(pl_affine_equal(&p, &f));
        EXPECT_OK(pl_affine_compose(&f, &g, &fg));
        EXPECT_OK(pl_affine_compose(&fg, &h, &fg_h));
        EXPECT_OK(pl_affine_compose(&g, &h, &g_h));
        EXPECT_OK(pl_affine_compose(&f, &g_h, &f_gh));
        assert_true(pl_affine_equal(&fg_h, &f_gh));
        EXPECT_OK(pl_affine_inverse(&fg, &fgi));
        EXPECT_OK(pl_affine_compose(&gi, &fi, &gifi));
        assert_true(pl_affine_equal(&fgi, &gifi));
        EXPECT_OK(pl_affine_realign(&f, &g, &ra));
        EXPECT_OK(pl_affine_compose(&fi, &g, &p));
        assert_true(pl_affine_equal(&ra, &p));
        EXPECT_OK(pl_affine_realign(&f, &f, &p));
        assert_true(pl_affine_is_identity(&p));
        /* Pointwise: (f o g)(i) = f(g(i)), f^-1(f(i)) = i, f(r(i)) = g(i). */
        int64_t i[3], a[3], b[3], c[3];
        for (int k = 0; k < d; k++) i[k] = rng_range(&s, -20, 20);
        pl_affine_apply(&g, i, a);
        apply_oracle(&g, i, c);
        for (int k = 0; k < d; k++) assert_int_equal(a[k], c[k]);
        pl_affine_apply(&f, a, b);
        pl_affine_apply(&fg, i, c);
        for (int k = 0; k < d; k++) assert_int_equal(b[k], c[k]);
        pl_affine_apply(&fi, b, c);
        for (int k = 0; k < d; k++) assert_int_equal(c[k], a[k]);
        pl_affine_apply(&ra, i, c);
        pl_affine_apply(&f, c, b);
        for (int k = 0; k < d; k++) assert_int_equal(b[k], a[k]);
        /* equal is not fooled by a one-entry change                       */
        p = f;
        p.t[d - 1] += 1;
        assert_false(pl_affine_equal(&p, &f));
        p = f;
        p.A[0][d - 1] += 1;
        assert_false(pl_affine_equal(&p, &f));
    }
}

static void test_errors(void **state)
{
    (void)state;
    pl_affine f2 = pl_affine_identity(2), f3 = pl_affine_identity(3), out;
    EXPECT_FAIL(pl_affine_compose(&f2, &f3, &out), DESO_EINVAL,
                "pl_affine_compose");
    EXPECT_FAIL(pl_affine_realign(&f2, &f3, &out), DESO_EINVAL,
                "pl_affine_compose");
    EXPECT_FAIL(pl_affine_compose(&f2, NULL, &out), DESO_ENULL,
                "pl_affine_compose");
    pl_affine bad = pl_affine_identity(0);
    EXPECT_FAIL(pl_affine_inverse(&bad, &out), DESO_EINVAL,
                "pl_affine_inverse");
    /* [[1, 2^62], [0, 1]] squared overflows.                              */
    int64_t a[4] = {1, INT64_C(1) << 62, 0, 1};
    pl_affine f;
    EXPECT_OK(pl_affine_make(2, a, NULL, &f));
    EXPECT_FAIL(pl_affine_compose(&f, &f, &out), DESO_EOVERFLOW,
                "pl_affine_compose");
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_identity_transpose),
        cmocka_unit_test(test_make_det),
        cmocka_unit_test(test_laws_random),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
