/* Sparse matrix handles: every constructor (global CSR on a root, each
 * rank's own rows, a generator, a Matrix Market file) gives, read back by
 * gather (on a root and on every rank), the matrix a sequential reading
 * gives: rows sorted, duplicates summed, explicit zeros kept; each rank
 * holds the block of rows it should; new values on the pattern land where
 * they belong; the data moved is counted in the statistics; and a bad
 * argument or file on any rank gives every rank the same error.  Sizes:
 * empty rows, m < P, a single entry, an empty matrix.
 * deso-np: 1 2 3 4
 * deso-np-long: 6                                                         */
#include <stdlib.h>
#include <unistd.h>

#include "placement/halo.h"
#include "placement/sparse_gen.h"
#include "test_util.h"

static int me, np;
static deso_ctx *ctx;    /* one context for every test: set-up is costly */

/* A global CSR matrix on every rank of the test (the reference).         */
typedef struct ref_csr {
    int64_t m, n, nnz;
    int64_t *rowptr, *col;
    double *val;
} ref_csr;

static void ref_free(ref_csr *r)
{
    free(r->rowptr);
    free(r->col);
    free(r->val);
}

/* The canonical form of raw CSR arrays: per row, columns ascending and
 * duplicates summed (by brute force: a dense row).                        */
static ref_csr canonical(int64_t m, int64_t n, const int64_t *rowptr,
                         const int64_t *col, const double *val)
{
    ref_csr r = {m, n, 0, calloc((size_t)m + 1, sizeof(int64_t)),
                 calloc((size_t)rowptr[m] + 1, sizeof(int64_t)),
                 calloc((size_t)rowptr[m] + 1, sizeof(double))};
    double *d = calloc((size_t)n + 1, sizeof *d);
    char *has = calloc((size_t)n + 1, 1);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++) {
            d[col[e]] += val[e];
            has[col[e]] = 1;
        }
        for (int64_t j = 0; j < n; j++)
            if (has[j]) {
                r.col[r.nnz] = j;
                r.val[r.nnz++] = d[j];
                d[j] = 0.0;
                has[j] = 0;
            }
        r.rowptr[i + 1] = r.nnz;
    }
    free(d);
    free(has);
    return r;
}

/* Gathers a on `root` (or every rank) and compares with the reference
 * exactly; checks the shape and this rank's block too.                   */
static void expect_matrix(const deso_spmat *a, const ref_csr *r, int root,
                          int rows_balanced)
{
    int64_t m, n, nnz;
    TU_OK(deso_spmat_shape(a, &m, &n, &nnz));
    assert_true(tu_all(m == r->m && n == r->n && nnz == r->nnz));
    int64_t *rowptr = calloc((size_t)m + 1, sizeof *rowptr);
    int64_t *col = calloc((size_t)nnz + 1, sizeof *col);
    double *val = calloc((size_t)nnz + 1, sizeof *val);
    TU_OK(deso_spmat_gather(a, rowptr, col, val, root));
    int ok = 1;
    if (root == DESO_ALL_RANKS || root == me) {
        for (int64_t i = 0; i <= m; i++) ok &= rowptr[i] == r->rowptr[i];
        for (int64_t k = 0; k < nnz; k++)
            ok &= col[k] == r->col[k] && val[k] == r->val[k];
    }
    int64_t row0, nrows, lnnz;
    TU_OK(deso_spmat_local(a, &row0, &nrows, &lnnz));
    if (rows_balanced) {
        pl_blocks b = {m, np};
        int64_t lo, hi;
        pl_blocks_range(&b, me, &lo, &hi);
        ok &= row0 == lo && nrows == hi - lo;
    }
    ok &= lnnz == r->rowptr[row0 + nrows] - r->rowptr[row0];
    assert_true(tu_all(ok));
    free(rowptr);
    free(col);
    free(val);
}

/* A pseudo-random m x n pattern with empty rows, repeated and unsorted
 * columns and explicit zeros (seeded: the same on every rank).           */
static void raw_matrix(int64_t m, int64_t n, unsigned seed, int64_t **rowptr,
                       int64_t **col, double **val)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    *rowptr = calloc((size_t)m + 1, sizeof(int64_t));
    int64_t cap = 4 * m + 1, k = 0;
    *col = calloc((size_t)cap, sizeof(int64_t));
    *val = calloc((size_t)cap, sizeof(double));
    for (int64_t i = 0; i < m; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int len = (int)((s >> 33) % 5);      /* 0 .. 4: some rows empty   */
        for (int e = 0; e < len && n > 0; e++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            (*col)[k] = (int64_t)((s >> 20) % (uint64_t)n);
            (*val)[k++] = (e == 3) ? 0.0 : (double)((s >> 40) % 17) - 8.0;
        }
        (*rowptr)[i + 1] = k;
    }
}

static const int64_t shapes[][2] = {{0, 0}, {1, 1}, {3, 5}, {7, 4},
                                    {13, 13}, {40, 29}};

/* The x entries all ranks' rows need from other ranks (rows in balanced
 * blocks of m, x in those blocks when m == n, else in balanced blocks of
 * n), counted once per (receiver, entry): the lists every constructor's
 * halo plan sends to the entries' owners, as doubles.                   */
static int64_t halo_entries(int64_t m, int64_t n, const int64_t *rp,
                            const int64_t *cl)
{
    pl_blocks rb = {m, np}, xb = {n, np};
    char *seen = malloc((size_t)n + 1);
    int64_t total = 0;
    for (int q = 0; q < np; q++) {
        int64_t lo, hi, x0, x1;
        pl_blocks_range(&rb, q, &lo, &hi);
        pl_blocks_range(m == n ? &rb : &xb, q, &x0, &x1);
        memset(seen, 0, (size_t)n + 1);
        for (int64_t e = rp[lo]; e < rp[hi]; e++) {
            int64_t j = cl[e];
            if ((j < x0 || j >= x1) && !seen[j]) {
                seen[j] = 1;
                total++;
            }
        }
    }
    free(seen);
    return total;
}

static void test_from_csr(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int64_t m = shapes[t][0], n = shapes[t][1], *rp, *cl;
        double *vl;
        raw_matrix(m, n, (unsigned)t + 1, &rp, &cl, &vl);
        ref_csr r = canonical(m, n, rp, cl, vl);
        int root = (int)t % np;
        deso_spmat *a = NULL;
        deso_stats_reset();
        /* the arrays exist on the root only                               */
        TU_OK(deso_spmat_from_csr(ctx, m, n, me == root ? rp : NULL,
                                  me == root ? cl : NULL,
                                  me == root ? vl : NULL, root, &a));
        /* the scatter sent each other rank its rows: lengths, columns,
         * values, as doubles; then the halo plan's lists went to their
         * owners                                                          */
        deso_stats st;
        deso_stats_get(&st);
        int64_t sent = st.bytes_p2p, want = 0;
        MPI_Allreduce(MPI_IN_PLACE, &sent, 1, MPI_INT64_T, MPI_SUM,
                      MPI_COMM_WORLD);
        pl_blocks b = {m, np};
        for (int q = 0; q < np; q++) {
            int64_t lo, hi;
            pl_blocks_range(&b, q, &lo, &hi);
            if (q != root)
                want += 8 * (hi - lo + 2 * (rp[hi] - rp[lo]));
        }
        want += 8 * halo_entries(m, n, rp, cl);
        assert_true(tu_all(sent == want));
        expect_matrix(a, &r, t % 2 ? DESO_ALL_RANKS : (int)(t + 1) % np, 1);
        TU_OK(deso_spmat_destroy(&a));
        assert_null(a);
        ref_free(&r);
        free(rp);
        free(cl);
        free(vl);
    }
}

/* Where rank r's rows start in an uneven tiling of [0, m): rank 0 has
 * none when P > 1, the others ceil-sized blocks, the last the rest.     */
static int64_t uneven_bound(int64_t m, int r)
{
    if (r == 0) return 0;
    if (r == np) return m;
    int64_t b = (m * (r - 1) + np - 1) / np;
    return b < m ? b : m;
}

/* Each rank gives its rows of the uneven tiling; the matrix keeps it.   */
static void test_from_rows(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int64_t m = shapes[t][0], n = shapes[t][1], *rp, *cl;
        double *vl;
        raw_matrix(m, n, (unsigned)t + 7, &rp, &cl, &vl);
        ref_csr r = canonical(m, n, rp, cl, vl);
        int64_t lo = uneven_bound(m, me), hi = uneven_bound(m, me + 1);
        int64_t *lrp = calloc((size_t)(hi - lo) + 1, sizeof *lrp);
        for (int64_t i = lo; i <= hi; i++) lrp[i - lo] = rp[i] - rp[lo];
        deso_spmat *a = NULL;
        TU_OK(deso_spmat_from_rows(ctx, m, n, lo, hi - lo, lrp, cl + rp[lo],
                                   vl + rp[lo], &a));
        expect_matrix(a, &r, 0, 0);
        int64_t row0, nrows, lnnz;
        TU_OK(deso_spmat_local(a, &row0, &nrows, &lnnz));
        assert_true(tu_all(row0 == lo && nrows == hi - lo));
        TU_OK(deso_spmat_destroy(&a));
        /* ranges that leave a gap or overlap: every rank refuses      */
        if (np > 1 && m > 1) {
            int64_t blo = me == np - 1 ? lo + 1 : lo;
            int64_t bhi = blo > hi ? blo : hi;
            int64_t *brp = calloc((size_t)(bhi - blo) + 1, sizeof *brp);
            TU_ERR(deso_spmat_from_rows(ctx, m, n, blo, bhi - blo, brp, NULL,
                                        NULL, &a),
                   DESO_EINVAL);
            assert_null(a);
            deso_spmat_destroy(&a);
            free(brp);
        }
        free(lrp);
        ref_free(&r);
        free(rp);
        free(cl);
        free(vl);
    }
}

static void test_from_gen(void **state)
{
    (void)state;
    const char *specs[] = {"lap2d:1", "lap2d:5", "lap3d:3", "lap2d-perm:6"};
    for (size_t t = 0; t < sizeof specs / sizeof specs[0]; t++) {
        pl_gen g;
        assert_int_equal(pl_gen_parse(specs[t], &g), DESO_OK);
        int64_t *rp = calloc((size_t)g.n + 1, sizeof *rp);
        int64_t *cl = calloc((size_t)g.n * PL_GEN_MAX_ROW, sizeof *cl);
        double *vl = calloc((size_t)g.n * PL_GEN_MAX_ROW, sizeof *vl);
        for (int64_t i = 0; i < g.n; i++)
            rp[i + 1] = rp[i] + pl_gen_row(&g, i, cl + rp[i], vl + rp[i]);
        ref_csr r = canonical(g.n, g.n, rp, cl, vl);
        deso_spmat *a = NULL;
        TU_OK(deso_spmat_from_gen(ctx, specs[t], &a));
        expect_matrix(a, &r, np - 1, 1);
        TU_OK(deso_spmat_destroy(&a));
        ref_free(&r);
        free(rp);
        free(cl);
        free(vl);
    }
    deso_spmat *a = NULL;
    TU_ERR(deso_spmat_from_gen(ctx, "lap9d:4", &a), DESO_EINVAL);
    TU_ERR(deso_spmat_from_gen(ctx, "lap2d:0", &a), DESO_ESIZE);
    assert_null(a);
    /* a bad spec on one rank only fails every rank                        */
    TU_ERR(deso_spmat_from_gen(ctx, me == np - 1 ? "lap2d:x" : "lap2d:4", &a),
           DESO_EINVAL);
    if (np > 1) {
        TU_ERR(deso_spmat_from_gen(ctx, me == 0 ? "lap2d:3" : "lap2d:4", &a),
               DESO_EMISMATCH);
        /* one shape (n = 64), two matrices                                 */
        TU_ERR(deso_spmat_from_gen(ctx, me == 0 ? "lap2d:8" : "lap3d:4", &a),
               DESO_EMISMATCH);
        TU_ERR(deso_spmat_from_gen(ctx, me == 0 ? "lap2d:8" : "lap2d-perm:8",
                                   &a),
               DESO_EMISMATCH);
    }
    assert_null(a);
}

static void test_set_values(void **state)
{
    (void)state;
    int64_t m = 23, n = 17, *rp, *cl;
    double *vl;
    raw_matrix(m, n, 3, &rp, &cl, &vl);
    ref_csr r = canonical(m, n, rp, cl, vl);
    deso_spmat *a = NULL;
    TU_OK(deso_spmat_from_csr(ctx, m, n, rp, cl, vl, 0, &a));
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t k = 0; k < r.nnz; k++) r.val[k] = 100.0 * pass + k;
        int root = pass == 0 ? np - 1 : DESO_ALL_RANKS;
        TU_OK(deso_spmat_set_values(a, root == DESO_ALL_RANKS || root == me
                                           ? r.val
                                           : NULL,
                                    root));
        expect_matrix(a, &r, 0, 1);
    }
    /* a NULL val on the root fails every rank                              */
    TU_ERR(deso_spmat_set_values(a, NULL, 0), DESO_ENULL);
    TU_ERR(deso_spmat_set_values(a, r.val, np), DESO_EINVAL);
    expect_matrix(a, &r, 0, 1);
    TU_OK(deso_spmat_destroy(&a));
    ref_free(&r);
    free(rp);
    free(cl);
    free(vl);
}

/* Rank 0 writes text to a fresh file whose name every rank receives.    */
static void shared_file(const char *text, char path[256])
{
    memset(path, 0, 256);
    if (me == 0)
        assert_int_equal(tu_temp_file("spmat", text, strlen(text), path, 256),
                         0);
    MPI_Bcast(path, 256, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static void test_from_mtx(void **state)
{
    (void)state;
    /* symmetric, a duplicate, an explicit zero, empty rows               */
    const char *text = "%%MatrixMarket matrix coordinate real symmetric\n"
                       "6 6 6\n1 1 2.0\n3 1 -1.5\n3 1 0.5\n4 4 0.0\n"
                       "6 3 7.0\n6 6 1.0\n";
    int64_t rp[7] = {0, 2, 2, 4, 5, 5, 7};
    int64_t cl[7] = {0, 2, 0, 5, 3, 2, 5};
    double vl[7] = {2.0, -1.0, -1.0, 7.0, 0.0, 7.0, 1.0};
    ref_csr r = canonical(6, 6, rp, cl, vl);
    char path[256];
    shared_file(text, path);
    deso_spmat *a = NULL;
    TU_OK(deso_spmat_from_mtx(ctx, path, &a));
    expect_matrix(a, &r, 0, 1);
    TU_OK(deso_spmat_destroy(&a));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(path);
    TU_ERR(deso_spmat_from_mtx(ctx, "/nonexistent/deso.mtx", &a), DESO_EIO);
    assert_null(a);
    ref_free(&r);
}

/* Bad arguments on one rank only: every rank returns the same error.    */
static void test_agreed_errors(void **state)
{
    (void)state;
    int64_t rp[3] = {0, 1, 2}, cl[2] = {0, 1}, bad[2] = {0, 2};
    double vl[2] = {1.0, 2.0};
    deso_spmat *a = NULL;
    int last = np - 1;
    TU_ERR(deso_spmat_from_csr(ctx, 2, 2, rp, me == last ? bad : cl, vl, last,
                               &a),
           DESO_EINVAL);
    TU_ERR(deso_spmat_from_csr(ctx, 2, me == last ? -1 : 2, rp, cl, vl, 0, &a),
           DESO_ESIZE);
    TU_ERR(deso_spmat_from_csr(ctx, 2, 2, rp, cl, vl, me == last ? 0 : last,
                               &a),
           np > 1 ? DESO_EINVAL : DESO_OK);
    deso_spmat_destroy(&a);
    TU_ERR(deso_spmat_from_csr(ctx, 2, 2, rp, cl, vl, 0,
                               me == last ? NULL : &a),
           DESO_ENULL);
    assert_null(a);
    int64_t dec[3] = {0, 2, 1};
    TU_ERR(deso_spmat_from_csr(ctx, 2, 2, dec, cl, vl, 0, &a),
           DESO_EINVAL);
    /* a shape that differs between ranks                                  */
    if (np > 1)
        TU_ERR(deso_spmat_from_rows(ctx, 2, me == last ? 3 : 2,
                                    me == 0 ? 0 : 2, me == 0 ? 2 : 0, rp, cl,
                                    vl, &a),
               DESO_EMISMATCH);
    /* the lowest failing rank's error: rank 0 cannot open "x"         */
    TU_ERR(deso_spmat_from_mtx(ctx, me == last ? NULL : "/nonexistent/x",
                               &a),
           np == 1 ? DESO_ENULL : DESO_EIO);
    assert_null(a);
    /* the context still works                                             */
    TU_OK(deso_spmat_from_csr(ctx, 2, 2, rp, cl, vl, 0, &a));
    ref_csr r = canonical(2, 2, rp, cl, vl);
    expect_matrix(a, &r, DESO_ALL_RANKS, 1);
    ref_free(&r);
    TU_OK(deso_spmat_destroy(&a));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_csr),
        cmocka_unit_test(test_from_rows),
        cmocka_unit_test(test_from_gen),
        cmocka_unit_test(test_set_values),
        cmocka_unit_test(test_from_mtx),
        cmocka_unit_test(test_agreed_errors),
    };
    ctx = tu_ctx(0, 0, 0);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    TU_OK(deso_finalize(&ctx));
    MPI_Finalize();
    return rc;
}
