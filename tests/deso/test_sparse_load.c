/* The distributed sparse reader: every rank's rows equal a brute-force
 * dense reading of the same file by the whole-file parser, the blocks
 * cover the matrix once (also with fewer rows than ranks), and a bad file,
 * a failure on one rank, or another file (other shape, other entries) on
 * one rank gives every rank the same error and message.                   */
#include "tests/deso/test_util.h"

#include "deso/io/mtx.h"
#include "deso/io/sparse_load.h"
#include "placement/halo.h"

static int rank_of_world(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* Rank 0 writes text to a fresh file whose name every rank receives.    */
static void shared_file(const char *text, char path[256])
{
    memset(path, 0, 256);
    if (rank_of_world() == 0) {
        assert_int_equal(tu_temp_file("sparse", text, strlen(text), path, 256),
                         0);
    }
    MPI_Bcast(path, 256, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static void remove_file(const char *path)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_of_world() == 0) unlink(path);
}

/* This rank's rows against the dense reading, and the entry count summed
 * over ranks against the dense reading's nonzeros.                       */
static void expect_load_matches(const char *text)
{
    char path[256];
    shared_file(text, path);
    int64_t m = -1, n = -1;
    pl_csr a;
    TU_OK(deso__sparse_load(MPI_COMM_WORLD, path, &m, &n, &a));
    deso__mtx x;
    assert_int_equal(deso__mtx_parse(text, strlen(text), &x), DESO_OK);
    assert_true(tu_all(m == x.m && n == x.n));
    double *d = calloc((size_t)(x.m * x.n + 1), sizeof *d);
    for (int64_t k = 0; k < x.nnz; k++) d[x.row[k] * x.n + x.col[k]] += x.val[k];
    pl_blocks b = {m, tu_size()};
    int64_t lo, hi, ok = 1, mine = a.rowptr[a.nrows], nonzeros = 0;
    pl_blocks_range(&b, rank_of_world(), &lo, &hi);
    ok &= a.row0 == lo && a.nrows == hi - lo;
    for (int64_t r = 0; ok && r < a.nrows; r++)
        for (int64_t e = a.rowptr[r]; e < a.rowptr[r + 1]; e++)
            ok &= a.val[e] == d[(lo + r) * n + a.col[e]];
    for (int64_t k = 0; k < m * n; k++) nonzeros += d[k] != 0.0;
    MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    assert_true(tu_all(ok && mine == nonzeros));
    free(d);
    deso__mtx_free(&x);
    pl_csr_free(&a);
    remove_file(path);
}

static void test_rows_match_dense(void **state)
{
    (void)state;
    expect_load_matches("%%MatrixMarket matrix coordinate real symmetric\n"
                        "% duplicates, an empty row, the mirror images\n"
                        "7 7 9\n1 1 4\n3 1 -1\n3 1 -0.5\n7 2 2\n4 4 1\n"
                        "5 4 3\n7 7 8\n6 5 1\n6 6 2\n");
    expect_load_matches("%%MatrixMarket matrix coordinate pattern general\n"
                        "9 4 5\n1 4\n9 1\n9 1\n5 2\n2 3\n");
    /* fewer rows than ranks, and a single entry                           */
    expect_load_matches("%%MatrixMarket matrix coordinate integer general\n"
                        "2 3 1\n2 3 -7\n");
}

/* The same code and message on every rank.                               */
static void expect_same_error(deso_err got, deso_err want, const char *says)
{
    char msg[256], first[256];
    snprintf(msg, sizeof msg, "%s", deso_last_error());
    memcpy(first, msg, sizeof msg);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (got != want || strstr(msg, says) == NULL)
        print_error("got %s '%s', want %s '%s'\n", deso_errname(got), msg,
                    deso_errname(want), says);
    assert_true(tu_all(got == want && strcmp(msg, first) == 0 &&
                       strstr(msg, says) != NULL));
}

static void test_bad_file_same_error_everywhere(void **state)
{
    (void)state;
    char path[256];
    shared_file("%%MatrixMarket matrix coordinate real general\n"
                "3 3 3\n1 1 1\n2 2 1\n3 4 1\n", path);
    int64_t m, n;
    pl_csr a;
    deso_err e = deso__sparse_load(MPI_COMM_WORLD, path, &m, &n, &a);
    expect_same_error(e, DESO_EIO, "line 5: index (3, 4) outside 3 x 3");
    assert_true(tu_all(a.rowptr == NULL));
    remove_file(path);
    shared_file("%%MatrixMarket matrix coordinate real general\n"
                "2000000000 2000000000 99999999999\n1 1 1\n", path);
    e = deso__sparse_load(MPI_COMM_WORLD, path, &m, &n, &a);
    expect_same_error(e, DESO_EIO, "more than the file can hold");
    remove_file(path);
}

static void test_one_rank_failing_is_every_ranks_error(void **state)
{
    (void)state;
    char path[256];
    shared_file("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n", path);
    int last = tu_size() - 1;
    const char *mine = rank_of_world() == last ? "/nonexistent/deso.mtx" : path;
    int64_t m, n;
    pl_csr a;
    deso_err e = deso__sparse_load(MPI_COMM_WORLD, mine, &m, &n, &a);
    char says[64];
    snprintf(says, sizeof says, "rank %d: cannot open", last);
    expect_same_error(e, DESO_EIO, says);
    e = deso__sparse_load(MPI_COMM_WORLD, rank_of_world() == last ? NULL : path,
                          &m, &n, &a);
    expect_same_error(e, DESO_ENULL, "path is NULL");
    remove_file(path);
}

/* The file at path loaded on every rank: its order must be m; the sum of
 * its values over every rank's rows.                                     */
static double load_sum(const char *path, int64_t m_want)
{
    int64_t m, n;
    pl_csr a;
    assert_int_equal(deso__sparse_load(MPI_COMM_WORLD, path, &m, &n, &a), DESO_OK);
    assert_true(m == m_want && n == m_want);
    double sum = 0.0;
    for (int64_t e = 0; e < a.rowptr[a.nrows]; e++) sum += a.val[e];
    pl_csr_free(&a);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

/* Not the same file everywhere (a node-local path): refused everywhere.
 * Each file alone loads (so the refusal is about the difference).       */
static void test_different_files_refused(void **state)
{
    (void)state;
    char small[256], large[256];
    shared_file("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n", small);
    shared_file("%%MatrixMarket matrix coordinate real general\n4 4 1\n1 1 1\n", large);
    assert_true(load_sum(small, 3) == 1.0 && load_sum(large, 4) == 1.0);
    if (tu_size() > 1) {     /* one rank alone cannot disagree with itself */
        int64_t m, n;
        pl_csr a;
        deso_err e = deso__sparse_load(MPI_COMM_WORLD,
                                       rank_of_world() == 1 ? large : small,
                                       &m, &n, &a);
        expect_same_error(e, DESO_EMISMATCH, "different sizes");
    }
    remove_file(small);
    remove_file(large);
}

/* The same shape but other entries on one rank: refused everywhere,
 * before any rank fills its rows.  Each file alone loads, with its own
 * values.                                                                 */
static void test_different_entries_refused(void **state)
{
    (void)state;
    char one[256], other[256];
    shared_file("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n3 2 1\n", one);
    shared_file("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n3 2 2\n", other);
    assert_true(load_sum(one, 3) == 2.0 && load_sum(other, 3) == 3.0);
    if (tu_size() > 1) {     /* one rank alone cannot disagree with itself */
        int64_t m, n;
        pl_csr a;
        deso_err e = deso__sparse_load(MPI_COMM_WORLD,
                                       rank_of_world() == 1 ? other : one,
                                       &m, &n, &a);
        expect_same_error(e, DESO_EMISMATCH, "different entries");
        assert_true(tu_all(a.rowptr == NULL));
    }
    remove_file(one);
    remove_file(other);
}

TU_MAIN(cmocka_unit_test(test_rows_match_dense),
        cmocka_unit_test(test_bad_file_same_error_everywhere),
        cmocka_unit_test(test_one_rank_failing_is_every_ranks_error),
        cmocka_unit_test(test_different_files_refused),
        cmocka_unit_test(test_different_entries_refused))
