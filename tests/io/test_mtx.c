/* The Matrix Market reader against hand-made files: every format it takes,
 * and malformed input it must refuse with DESO_EIO and a message.  The
 * parser is pure computation, so this runs serially, without MPI.         */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "deso/io/mtx.h"

static deso_err parse(const char *text, deso__mtx *x)
{
    return deso__mtx_parse(text, strlen(text), x);
}

/* Dense column-major copy of the entries, summing duplicates.             */
static void densify(const deso__mtx *x, double *a)
{
    memset(a, 0, (size_t)(x->m * x->n) * sizeof *a);
    for (int64_t k = 0; k < x->nnz; k++) a[x->col[k] * x->m + x->row[k]] += x->val[k];
}

static void test_coordinate_general(void **state)
{
    (void)state;
    deso__mtx x;
    assert_int_equal(parse("%%MatrixMarket matrix coordinate real general\n"
                           "% comment\n\n2 3 3\n1 1 1.5\n2 3 -2\n1 2 4e0\n", &x), DESO_OK);
    assert_int_equal(x.m, 2);
    assert_int_equal(x.n, 3);
    assert_int_equal(x.nnz, 3);
    double a[6], want[6] = {1.5, 0, 4, 0, 0, -2};
    densify(&x, a);
    for (int k = 0; k < 6; k++) assert_true(a[k] == want[k]);
    deso__mtx_free(&x);
    assert_null(x.row);
}

static void test_coordinate_symmetric_expands(void **state)
{
    (void)state;
    deso__mtx x;
    assert_int_equal(parse("%%MatrixMarket matrix coordinate real symmetric\r\n"
                           "3 3 3\r\n1 1 2\r\n3 1 5\r\n3 3 7\r\n", &x), DESO_OK);
    assert_int_equal(x.nnz, 4);
    double a[9];
    densify(&x, a);
    assert_true(a[0 * 3 + 2] == 5 && a[2 * 3 + 0] == 5);
    assert_true(a[0] == 2 && a[8] == 7 && a[4] == 0);
    deso__mtx_free(&x);
}

static void test_array_and_pattern(void **state)
{
    (void)state;
    deso__mtx x;
    assert_int_equal(parse("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", &x), DESO_OK);
    double a[4];
    densify(&x, a);
    for (int k = 0; k < 4; k++) assert_true(a[k] == k + 1);
    deso__mtx_free(&x);
    assert_int_equal(parse("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n", &x), DESO_OK);
    densify(&x, a);
    assert_true(a[0] == 1 && a[1] == 2 && a[2] == 2 && a[3] == 3);
    deso__mtx_free(&x);
    assert_int_equal(parse("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n", &x), DESO_OK);
    assert_true(x.nnz == 1 && x.row[0] == 1 && x.col[0] == 0 && x.val[0] == 1.0);
    deso__mtx_free(&x);
    assert_int_equal(parse("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n", &x), DESO_OK);
    densify(&x, a);
    assert_true(a[1] == 3 && a[2] == -3);
    deso__mtx_free(&x);
}

static void expect_error(const char *text, deso_err want)
{
    deso__mtx x;
    deso_err e = parse(text, &x);
    if (e != want) fail_msg("wanted %s for <<%s>>, got %s (%s)", deso_errname(want),
                            text, deso_errname(e), deso_last_error());
    assert_true(strlen(deso_last_error()) > 0);
    assert_null(x.row);
    assert_int_equal(x.nnz, 0);
}

static void test_malformed_input_is_refused(void **state)
{
    (void)state;
    expect_error("", DESO_EIO);
    expect_error("hello\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", DESO_ENOTSUP);
    expect_error("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", DESO_ENOTSUP);
    expect_error("%%MatrixMarket matrix coordinate real general\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real general\n-2 2 1\n1 1 1\n", DESO_ESIZE);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1\n", DESO_ESIZE);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e999\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 junk\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", DESO_ESIZE);
    expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix array pattern general\n1 1\n1\n", DESO_EIO);
    /* a pattern file has no values to negate                          */
    expect_error("%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n",
                 DESO_ENOTSUP);
    expect_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", DESO_EIO);
    /* a size line that claims far more entries than the bytes present */
    expect_error("%%MatrixMarket matrix coordinate real general\n"
                 "2000000000 2000000000 1000000000000\n1 1 1\n", DESO_EIO);
    expect_error("%%MatrixMarket matrix array real general\n100000 100000\n1\n", DESO_EIO);
}

static void test_embedded_nul_and_long_lines(void **state)
{
    (void)state;
    static const char text[] = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1\0 1\n";
    deso__mtx x;
    assert_int_equal(deso__mtx_parse(text, sizeof text - 1, &x), DESO_EIO);
    char longline[4096];
    memset(longline, '1', sizeof longline);
    memcpy(longline, "%%MatrixMarket matrix coordinate real general\n1 1 1\n", 52);
    assert_int_equal(deso__mtx_parse(longline, sizeof longline, &x), DESO_EIO);
}

/* Found by the fuzzer: a 0 x 565556545 array took minutes walking empty
 * columns.  It must parse at once as an empty matrix.                     */
static void test_empty_array_with_huge_extent(void **state)
{
    (void)state;
    deso__mtx x;
    assert_int_equal(parse("%%MatrixMarket matrix array real general\n"
                           "0 565556545\n", &x), DESO_OK);
    assert_int_equal(x.nnz, 0);
    assert_int_equal(x.n, 565556545);
    deso__mtx_free(&x);
    expect_error("%%MatrixMarket matrix array real general\n0 565556545\n1\n", DESO_EIO);
}

static void test_read_missing_file(void **state)
{
    (void)state;
    deso__mtx x;
    assert_int_equal(deso__mtx_read("/nonexistent/deso.mtx", &x), DESO_EIO);
    assert_non_null(strstr(deso_last_error(), "/nonexistent/deso.mtx"));
    assert_int_equal(deso__mtx_read(NULL, &x), DESO_ENULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coordinate_general),
        cmocka_unit_test(test_coordinate_symmetric_expands),
        cmocka_unit_test(test_array_and_pattern),
        cmocka_unit_test(test_malformed_input_is_refused),
        cmocka_unit_test(test_embedded_nul_and_long_lines),
        cmocka_unit_test(test_empty_array_with_huge_extent),
        cmocka_unit_test(test_read_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
