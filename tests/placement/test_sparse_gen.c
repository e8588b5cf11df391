/* The generated Laplacians against stencils written out by brute force,
 * and lap2d-perm against Q A Q^T with its permutation checked bijective. */
#include "pl_test.h"

#include <stdio.h>
#include <stdlib.h>

#include "placement/sparse_gen.h"

/* The dense matrix of a d-dimensional Laplacian on a G^d grid, from grid
 * coordinates (independent of the generator's index arithmetic).         */
static double *dense_laplacian(int d, int64_t G)
{
    int64_t n = d == 2 ? G * G : G * G * G;
    double *a = calloc((size_t)(n * n), sizeof *a);
    for (int64_t z = 0; z < (d == 3 ? G : 1); z++)
        for (int64_t y = 0; y < G; y++)
            for (int64_t x = 0; x < G; x++) {
                int64_t i = (z * G + y) * G + x;
                a[i * n + i] = 2.0 * d;
                int64_t nb[6][3] = {{x - 1, y, z}, {x + 1, y, z}, {x, y - 1, z},
                                    {x, y + 1, z}, {x, y, z - 1}, {x, y, z + 1}};
                for (int k = 0; k < 2 * d; k++) {
                    int64_t *p = nb[k];
                    if (p[0] < 0 || p[0] >= G || p[1] < 0 || p[1] >= G ||
                        p[2] < 0 || p[2] >= G)
                        continue;
                    a[i * n + (p[2] * G + p[1]) * G + p[0]] = -1.0;
                }
            }
    return a;
}

/* Rows [0, n) of g equal the dense matrix a (with rows and columns both
 * taken through the permutation q: b_ij = a_q(i)q(j)).                   */
static void expect_generated(const pl_gen *g, const double *a)
{
    int64_t n = g->n;
    pl_csr b;
    EXPECT_OK(pl_gen_rows(g, 0, n, &b));
    for (int64_t i = 0; i < n; i++) {
        int64_t count = 0, want = 0, qi = pl_gen_perm(g, i);
        for (int64_t e = b.rowptr[i]; e < b.rowptr[i + 1]; e++) {
            if (e > b.rowptr[i]) assert_true(b.col[e - 1] < b.col[e]);
            assert_true(b.val[e] == a[qi * n + pl_gen_perm(g, b.col[e])]);
            count++;
        }
        for (int64_t j = 0; j < n; j++) want += a[qi * n + j] != 0.0;
        assert_int_equal(count, want);
    }
    pl_csr_free(&b);
}

static void test_lap2d_lap3d_match_stencils(void **state)
{
    (void)state;
    for (int64_t G = 1; G <= 7; G++) {
        char spec[32];
        pl_gen g;
        snprintf(spec, sizeof spec, "lap2d:%lld", (long long)G);
        EXPECT_OK(pl_gen_parse(spec, &g));
        assert_int_equal(g.n, G * G);
        double *a = dense_laplacian(2, G);
        expect_generated(&g, a);
        snprintf(spec, sizeof spec, "lap2d-perm:%lld", (long long)G);
        EXPECT_OK(pl_gen_parse(spec, &g));
        expect_generated(&g, a);
        free(a);
        snprintf(spec, sizeof spec, "lap3d:%lld", (long long)G);
        EXPECT_OK(pl_gen_parse(spec, &g));
        assert_int_equal(g.n, G * G * G);
        a = dense_laplacian(3, G);
        expect_generated(&g, a);
        free(a);
    }
}

static void test_permutation_is_a_fixed_bijection(void **state)
{
    (void)state;
    for (int64_t G = 1; G <= 70; G += 3) {
        char spec[32];
        pl_gen g;
        snprintf(spec, sizeof spec, "lap2d-perm:%lld", (long long)G);
        EXPECT_OK(pl_gen_parse(spec, &g));
        char *hit = calloc((size_t)g.n, 1);
        int64_t fixed = 0;
        for (int64_t i = 0; i < g.n; i++) {
            int64_t q = pl_gen_perm(&g, i);
            assert_true(q >= 0 && q < g.n && !hit[q]);
            hit[q] = 1;
            assert_int_equal(pl_gen_perm_inv(&g, q), i);
            fixed += q == i;
        }
        /* a random permutation fixes about one point; identity fixes all */
        if (g.n >= 100) assert_true(fixed < 10);
        free(hit);
    }
    pl_gen g;
    EXPECT_OK(pl_gen_parse("lap2d-perm:64", &g));
    /* the same matrix in every run: a pinned value of the permutation    */
    int64_t q0 = pl_gen_perm(&g, 0), q1 = pl_gen_perm(&g, 1);
    EXPECT_OK(pl_gen_parse("lap2d-perm:64", &g));
    assert_int_equal(pl_gen_perm(&g, 0), q0);
    assert_int_equal(pl_gen_perm(&g, 1), q1);
}

static void test_row_ranges_and_bad_specs(void **state)
{
    (void)state;
    pl_gen g;
    EXPECT_OK(pl_gen_parse("lap3d:5", &g));
    pl_csr all, part;
    EXPECT_OK(pl_gen_rows(&g, 0, g.n, &all));
    EXPECT_OK(pl_gen_rows(&g, 40, 77, &part));
    assert_int_equal(part.row0, 40);
    for (int64_t r = 0; r < 37; r++)
        for (int64_t e = 0; e < part.rowptr[r + 1] - part.rowptr[r]; e++)
            assert_int_equal(part.col[part.rowptr[r] + e], all.col[all.rowptr[40 + r] + e]);
    pl_csr_free(&part);
    EXPECT_OK(pl_gen_rows(&g, 7, 7, &part));
    assert_int_equal(part.nrows, 0);
    pl_csr_free(&part);
    pl_csr_free(&all);
    EXPECT_FAIL(pl_gen_rows(&g, 5, 4, &part), DESO_ESIZE, "generator");
    EXPECT_FAIL(pl_gen_rows(&g, 0, g.n + 1, &part), DESO_ESIZE, "generator");
    EXPECT_FAIL(pl_gen_parse("lap4d:3", &g), DESO_EINVAL, "unknown");
    EXPECT_FAIL(pl_gen_parse("lap2d", &g), DESO_EINVAL, "lap2d");
    EXPECT_FAIL(pl_gen_parse("lap2d:", &g), DESO_EINVAL, "grid size");
    EXPECT_FAIL(pl_gen_parse("lap2d:12x", &g), DESO_EINVAL, "grid size");
    EXPECT_FAIL(pl_gen_parse("lap2d:0", &g), DESO_ESIZE, "grid size");
    EXPECT_FAIL(pl_gen_parse("lap3d:1048576", &g), DESO_ESIZE, "too large");
    EXPECT_FAIL(pl_gen_parse("lap2d:1048576", &g), DESO_ESIZE, "too large");
    EXPECT_OK(pl_gen_parse("lap2d:1048575", &g));
    assert_int_equal(g.n, (int64_t)1048575 * 1048575);
    int64_t c[PL_GEN_MAX_ROW];
    double v[PL_GEN_MAX_ROW];
    assert_int_equal(pl_gen_row(&g, g.n - 1, c, v), 3);   /* a corner    */
    assert_int_equal(c[2], g.n - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lap2d_lap3d_match_stencils),
        cmocka_unit_test(test_permutation_is_a_fixed_bijection),
        cmocka_unit_test(test_row_ranges_and_bad_specs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
