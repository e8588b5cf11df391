/* Out-of-core matrices: a memory budget (DESO_MEM_LIMIT,
 * deso_options.mem_limit) small enough puts the matrices in local array
 * files, which dgemv (N and T), dsymv, dtrmv, dger and dsyr stream.
 *
 * Oracles: the same calls run in core and out of core on the same grid
 * must give the same bits (the streamed products accumulate per chunk of
 * columns, as the in-core kernel does: chunks of the column block here,
 * by the setup, and chunks by bytes in test_chunk_bytes), and the
 * in-core dgemv is checked
 * against a product computed here; the out-of-core run must have read its
 * files (deso_stats) and the in-core one not.  Every optimiser mode (the
 * long group: every grid and block size of tu_cases); budgets of one byte (slabs of one column
 * block) and of a few blocks (slabs that do not divide the local
 * columns); sizes not multiples of the block size, n < P and 1 x 1.  A
 * CG of a few iterations streams its matrix each time.  Every source (a
 * generator, an array on every rank or sent from rank 0, a Matrix Market
 * file, a matrix file) writes each element to the files once and gives
 * the generator's in-core product bit for bit.  The cost model's read
 * rate of the files is measured when any rank has a budget (the same on
 * every rank) and travels in a wisdom file.  Also: only one
 * rank over its budget still puts the matrix out of core everywhere, each
 * rank keeps its own budget; the directory stays empty (the files have no
 * name); bad budget strings fail deso_init on every rank; an unusable
 * directory (on one rank or all) fails the creation on every rank with
 * DESO_EIO and the context still works; what cannot stream (dtrsv, the
 * diagonal) is refused with DESO_ENOTSUP.  The fallback for file systems
 * without O_TMPFILE (a named file unlinked at once), forced through its
 * test switch: the descriptor's link names a deleted deso-ooc- file, the
 * directory stays empty, the product is the same bits as with O_TMPFILE's
 * file, and without the switch no descriptor names one.  Slabs read
 * around the page cache (O_DIRECT) or, by a test switch, through it: the
 * same bits, and direct reads counted (over the ranks) only when they
 * are on and the file system allows them.  A loop of products takes each first slab
 * after the first from the read ahead, with the in-core loop's bits.
 * Each size runs on three contexts (one per budget): slow at P > 2 on a
 * loaded 2-core machine, so P = 3, 4 and 6 are in the long group.
 * deso-np: 1 2
 * deso-np-long: 3 4 6                                                       */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "ooc_test.h"
#include "test_util.h"
#include "deso/deso_stats.h"
#include "deso/runtime/ooc.h"


static double vgen(int64_t i, void *arg)
{
    return 0.5 + cos(0.71 * (double)i + (double)*(int *)arg);
}

static deso_vec *vec(deso_ctx *ctx, int64_t n, int seed)
{
    deso_vec *x = NULL;
    TU_CALL(deso_vec_from_fn(ctx, n, vgen, &seed, &x));
    return x;
}

/* The level 2 calls on an m x n matrix A and n x n symmetric S; the
 * results one after another in out (2 m + 5 n doubles).                  */
static void level2(deso_ctx *ctx, int64_t m, int64_t n, double *out)
{
    deso_mat *A = NULL, *S = NULL;
    TU_CALL(deso_mat_from_fn(ctx, m, n, tu_ooc_gen, NULL, &A));
    TU_CALL(deso_mat_from_fn(ctx, n, n, tu_ooc_sym, NULL, &S));
    deso_vec *x = vec(ctx, n, 1), *y = vec(ctx, m, 2), *z = vec(ctx, n, 3);
    deso_vec *s1 = vec(ctx, n, 4), *t = vec(ctx, n, 5), *s3 = vec(ctx, n, 6);
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, m, n, 1.0, A, m, y, 1,
                       0.0, z, 1));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.5, A, m, x, 1,
                       0.5, y, 1));
    TU_CALL(deso_dsymv(DESO_COL_MAJOR, DESO_LOWER, n, 1.0, S, n, x, 1, 0.0,
                       s1, 1));
    TU_CALL(deso_dsymv(DESO_COL_MAJOR, DESO_UPPER, n, 2.0, S, n, x, 1, 1.0,
                       s1, 1));
    TU_CALL(deso_dcopy(n, x, 1, t, 1));
    TU_CALL(deso_dtrmv(DESO_COL_MAJOR, DESO_UPPER, DESO_NO_TRANS,
                       DESO_NON_UNIT, n, S, n, t, 1));
    TU_CALL(deso_dger(DESO_COL_MAJOR, m, n, 0.25, y, 1, x, 1, A, m));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, A, m, x, 1,
                       1.0, y, 1));
    TU_CALL(deso_dsyr(DESO_COL_MAJOR, DESO_LOWER, n, 0.5, x, 1, S, n));
    TU_CALL(deso_dsymv(DESO_COL_MAJOR, DESO_LOWER, n, 1.0, S, n, x, 1, 0.0,
                       s3, 1));
    tu_fetch(y, out);
    tu_fetch(z, out + m);
    tu_fetch(s1, out + m + n);
    tu_fetch(t, out + m + 2 * n);
    tu_fetch(s3, out + m + 3 * n);
    tu_fetch(x, out + m + 4 * n);
    deso_vec *all[] = {x, y, z, s1, t, s3};
    for (int k = 0; k < 6; k++) TU_CALL(deso_vec_destroy(&all[k]));
    TU_CALL(deso_mat_destroy(&A));
    TU_CALL(deso_mat_destroy(&S));
}

/* Three CG iterations on S from b = 1; x into out (n doubles).           */
static void cg(deso_ctx *ctx, int64_t n, double *out)
{
    deso_mat *S = NULL;
    TU_CALL(deso_mat_from_fn(ctx, n, n, tu_ooc_sym, NULL, &S));
    deso_vec *x = NULL, *r = vec(ctx, n, 0), *p = vec(ctx, n, 0);
    deso_vec *q = NULL;
    TU_CALL(deso_vec_create(ctx, n, &x));
    TU_CALL(deso_vec_create(ctx, n, &q));
    deso_scalar *s[5] = {NULL};
    for (int k = 0; k < 5; k++) TU_CALL(deso_scalar_create(ctx, 0.0, &s[k]));
    TU_CALL(deso_ddot(n, r, 1, r, 1, s[0]));
    for (int it = 0; it < 3; it++)
        TU_CALL(tu_cg_record(n, S, x, r, p, q, s[0], s[1], s[2], s[3], s[4]));
    tu_fetch(x, out);
    for (int k = 0; k < 5; k++) TU_CALL(deso_scalar_destroy(&s[k]));
    deso_vec *all[] = {x, r, p, q};
    for (int k = 0; k < 4; k++) TU_CALL(deso_vec_destroy(&all[k]));
    TU_CALL(deso_mat_destroy(&S));
}

/* A context for case c with budget `limit` (0: none) in dir (NULL: the
 * default).  No matrix replicated (DESO_REPLICATE_MAX=0): an out-of-core
 * matrix never is, so the in-core context would otherwise run other
 * plans, whose products add in another order.                            */
static deso_ctx *case_ctx(const tu_case *c, int64_t limit, const char *dir)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = c->mode;
    o.grid_rows = c->pr;
    o.grid_cols = c->pc;
    o.nb = c->nb;
    o.mem_limit = limit;
    o.ooc_dir = dir;
    o.replicate_max = -1;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    return ctx;
}

/* This rank's bytes read from local array files so far, the largest over
 * the ranks.                                                             */
static int64_t io_read_max(void)
{
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    int64_t v = st.bytes_io_read;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

/* z = A^T y (n) against the product computed here: the in-core result
 * is right, so the same bits out of core are right too.                 */
static int gemv_ok(int64_t m, int64_t n, const double *z)
{
    double worst = 0.0;
    int two = 2;
    for (int64_t j = 0; j < n; j++) {
        double s = 0.0, mag = 0.0;
        for (int64_t i = 0; i < m; i++) {
            double a = tu_ooc_gen(i, j, NULL) * vgen(i, &two);
            s += a;
            mag += fabs(a);
        }
        double e = fabs(s - z[j]) / (mag > 1.0 ? mag : 1.0);
        if (e > worst) worst = e;
    }
    return worst < 1e-13;
}

/* One size on the three contexts of a case: in core, a budget of one
 * byte (slabs of one column block) and `half` (half the average local part
 * of the largest matrix: slabs of about a quarter of its columns, in
 * whole blocks, not dividing them).                                     */
static void run_size(deso_ctx *const *ctx, int64_t m, int64_t n,
                     int big)
{
    int64_t len = 2 * m + 5 * n;
    double *r[3];
    for (int k = 0; k < 3; k++) {
        r[k] = calloc((size_t)(len + n), sizeof *r[k]);
        deso_stats_reset();
        level2(ctx[k], m, n, r[k]);
        cg(ctx[k], n, r[k] + len);
        int64_t read = io_read_max();
        /* in core reads nothing; the one-byte budget always streams, the
         * other one at least the largest matrix                          */
        TU_CHECK(k == 0 ? read == 0 : (k == 2 && !big) || read > 0);
        if (k > 0)
            TU_CHECK(memcmp(r[0], r[k], (size_t)(len + n) * sizeof *r[0]) ==
                     0);
    }
    TU_CHECK(gemv_ok(m, n, r[0] + m));
    for (int k = 0; k < 3; k++) free(r[k]);
}

/* The same plans need the same cost model: each context would measure
 * its own alpha and beta (timings), and in modes affine and full a plan
 * that places a vector otherwise adds a dot product in another order.
 * So the out-of-core contexts take the in-core one's calibration, through
 * a wisdom file written right after it was made (no plans in it yet).   */
static void same_calibration(deso_ctx *const *ctx, int n)
{
    char path[256];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/deso-test-ooc-%ld.wisdom",
             dir != NULL ? dir : "/tmp", (long)getpid());
    TU_OK(deso_wisdom_export(ctx[0], path));
    deso_info want, got;
    TU_OK(deso_get_info(ctx[0], &want));
    for (int k = 1; k < n; k++) {
        TU_OK(deso_wisdom_import(ctx[k], path));
        TU_OK(deso_get_info(ctx[k], &got));
        assert_true(tu_all(got.alpha == want.alpha && got.beta == want.beta &&
                           got.allreduce_call == want.allreduce_call));
    }
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) remove(path);            /* only rank 0 names the file */
}

static void run_case(const tu_case *c)
{
    static const int64_t sizes[][2] = {{37, 29}, {3, 2}, {1, 1}, {9, 14}};
    size_t ns = tu_long() ? 4 : 3;
    int64_t half = 37 * 29 * 8 / (2 * tu_size());
    deso_ctx *ctx[3] = {case_ctx(c, 0, NULL), case_ctx(c, 1, NULL),
                        case_ctx(c, half, NULL)};
    same_calibration(ctx, 3);
    for (size_t k = 0; k < ns; k++) {
        tu_label("%s, %lld x %lld", tu_case_name(c), (long long)sizes[k][0],
                 (long long)sizes[k][1]);
        run_size(ctx, sizes[k][0], sizes[k][1], k == 0);
        tu_case_end();
    }
    for (int k = 0; k < 3; k++) TU_OK(deso_finalize(&ctx[k]));
}

static void test_bitwise(void **state)
{
    (void)state;
    static const int64_t nbs[] = {4, 5};
    tu_case cases[TU_MAX_CASES];
    /* the fast group: every mode on a 1 x P grid, whose local pieces
     * have several column blocks when P > 1 (the long group walks every
     * grid and block size)                                              */
    int nc = TU_NMODES, P = tu_size();
    for (int k = 0; k < nc; k++) cases[k] = (tu_case){tu_mode(k), 1, P, 5};
    if (tu_long()) nc = tu_cases(nbs, 2, cases);
    for (int k = 0; k < nc; k++) run_case(&cases[k]);
    TU_SYNC();
}

/* Only the last rank has a budget its part exceeds: every rank streams,
 * and every rank keeps its own budget (not rank 0's).                   */
/* Chunks by bytes (blas_gemv_chunk): a chunk bytes setting that makes
 * chunks of 70 columns of the 37 x 400 matrix (more than the least, 64
 * columns or the block, so the bytes decide; no multiple of the block)
 * and of 64 columns of the 400 x 400 one; budgets of one byte (slabs of
 * one chunk) and of four chunks (slabs of two).  In core and streamed
 * the same bits, in every mode on a 1 x P grid.                         */
static void test_chunk_bytes(void **state)
{
    (void)state;
    const int64_t m = 37, n = 400, chunk = 8 * m * 70;
    blas_gemv_chunk_bytes(chunk);
    int P = tu_size();
    for (int k = 0; k < TU_NMODES; k++) {
        tu_case c = {tu_mode(k), 1, P, 5};
        deso_ctx *ctx[3] = {case_ctx(&c, 0, NULL), case_ctx(&c, 1, NULL),
                            case_ctx(&c, 4 * chunk, NULL)};
        same_calibration(ctx, 3);
        tu_label("%s, %lld x %lld, chunks by bytes", tu_case_name(&c),
                 (long long)m, (long long)n);
        run_size(ctx, m, n, 1);
        tu_case_end();
        for (int j = 0; j < 3; j++) TU_OK(deso_finalize(&ctx[j]));
    }
    blas_gemv_chunk_bytes(0);
    TU_SYNC();
}

static void test_one_rank_over(void **state)
{
    (void)state;
    int me = 0, P = tu_size();
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    deso_options o;
    deso_options_default(&o);
    o.mem_limit = me == P - 1 ? 1024 : 0;
    o.nb = 4;                           /* every rank holds some blocks   */
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.mem_limit == (me == P - 1 ? 1024 : -1)));
    deso_stats_reset();
    deso_mat *A = NULL;
    int64_t n = 16 * P;                 /* every rank's part exceeds 1 KiB */
    TU_OK(deso_mat_from_fn(ctx, n, n, tu_ooc_gen, NULL, &A));
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    assert_true(tu_all(st.bytes_io_written > 0));
    /* the matrix is out of core, and gathers as the generator made it    */
    double *buf = malloc((size_t)(n * n) * sizeof *buf);
    TU_OK(deso_mat_gather(A, buf, n, DESO_ALL_RANKS));
    int same = 1;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
            same &= buf[j * n + i] == tu_ooc_gen(i, j, NULL);
    assert_true(tu_all(same));
    free(buf);
    /* a small matrix fits what is left of the budget: in core           */
    deso_mat *B = NULL;
    deso_stats_reset();
    TU_OK(deso_mat_from_fn(ctx, 4, 4, tu_ooc_gen, NULL, &B));
    TU_OK(deso_stats_get(&st));
    assert_true(tu_all(st.bytes_io_written == 0));
    TU_OK(deso_mat_destroy(&B));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_finalize(&ctx));
}


/* Files in the directory have no name while they are used, nor after.  */
static void test_nothing_left(void **state)
{
    (void)state;
    char dir[512];
    assert_true(tu_all(tu_scratch_dir("ooc", dir, sizeof dir) == 0));
    deso_options o;
    deso_options_default(&o);
    o.mem_limit = 1;
    o.ooc_dir = dir;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    deso_mat *A = NULL;
    TU_OK(deso_mat_from_fn(ctx, 30, 30, tu_ooc_gen, NULL, &A));
    deso_vec *x = NULL, *y = NULL;
    TU_OK(deso_vec_create(ctx, 30, &x));
    TU_OK(deso_vec_create(ctx, 30, &y));
    TU_OK(deso_dger(DESO_COL_MAJOR, 30, 30, 1.0, x, 1, x, 1, A, 30));
    TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, 30, 30, 1.0, A, 30, x, 1,
                     0.0, y, 1));
    TU_OK(deso_flush(ctx));
    assert_true(tu_all(tu_dir_empty(dir)));
    TU_OK(deso_finalize(&ctx));
    assert_true(tu_all(tu_dir_empty(dir)));
    tu_scratch_done(dir);
}

/* Bad budget strings fail deso_init on every rank, naming the variable;
 * good ones give the bytes they say.                                    */
static void test_budget_strings(void **state)
{
    (void)state;
    static const char *bad[] = {"2GB", "1.5G", "-1", " 2G", "2 G", "G",
                                "99999999999999999999", "8E", "16Q", "0x10"};
    deso_ctx *ctx = NULL;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        setenv("DESO_MEM_LIMIT", bad[k], 1);
        TU_ERR(deso_init(MPI_COMM_WORLD, NULL, &ctx), DESO_EINVAL);
        assert_true(tu_all(ctx == NULL &&
                           strstr(deso_last_error(), "DESO_MEM_LIMIT")));
    }
    /* one rank's bad value fails every rank                              */
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    setenv("DESO_MEM_LIMIT", me == tu_size() - 1 ? "2x" : "2G", 1);
    TU_ERR(deso_init(MPI_COMM_WORLD, NULL, &ctx), DESO_EINVAL);
    static const struct { const char *s; int64_t v; } good[] = {
        {"512", 512}, {"512M", (int64_t)512 << 20}, {"2g", (int64_t)2 << 30},
        {"1T", (int64_t)1 << 40}, {"0", -1}, {"7k", 7 << 10}};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        setenv("DESO_MEM_LIMIT", good[k].s, 1);
        TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
        deso_info info;
        TU_OK(deso_get_info(ctx, &info));
        assert_true(tu_all(info.mem_limit == good[k].v));
        TU_OK(deso_finalize(&ctx));
    }
    unsetenv("DESO_MEM_LIMIT");
}

/* A directory that cannot hold the files (on every rank, then on one):
 * DESO_EIO on every rank, and the context still works.                  */
static void test_bad_dir(void **state)
{
    (void)state;
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int one = 0; one < 2; one++) {
        deso_options o;
        deso_options_default(&o);
        o.mem_limit = 4096;
        o.ooc_dir = !one || me == tu_size() - 1 ? "/nonexistent/deso-ooc"
                                                : NULL;
        deso_ctx *ctx = NULL;
        TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
        deso_mat *A = NULL;
        TU_ERR(deso_mat_from_fn(ctx, 200, 200, tu_ooc_gen, NULL, &A), DESO_EIO);
        assert_true(tu_all(A == NULL));
        TU_ERR(deso_mat_create(ctx, 200, 200, &A), DESO_EIO);
        double *a = calloc(200 * 200, sizeof *a);
        TU_ERR(deso_mat_from_array(ctx, 200, 200, a, 200, 0, &A), DESO_EIO);
        TU_ERR(deso_mat_from_array(ctx, 200, 200, a, 200, DESO_ALL_RANKS,
                                   &A),
               DESO_EIO);
        free(a);
        /* what fits the budget is made in core and works                */
        deso_vec *x = NULL;
        TU_OK(deso_mat_from_fn(ctx, 8, 8, tu_ooc_gen, NULL, &A));
        TU_OK(deso_vec_create(ctx, 8, &x));
        TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, 8, 8, 1.0, A, 8, x, 1,
                         0.0, x, 1));
        double v = 1.0;
        TU_OK(deso_vec_get(x, 0, &v));
        assert_true(tu_all(v == 0.0));
        TU_OK(deso_vec_destroy(&x));
        TU_OK(deso_mat_destroy(&A));
        TU_OK(deso_finalize(&ctx));
    }
}

/* y = A x for A made out of core from each source, against A from the
 * generator in core: the same bits.                                     */
static void product(deso_ctx *ctx, deso_mat *A, int64_t m, int64_t n,
                    double *out)
{
    deso_vec *x = vec(ctx, n, 1), *y = NULL;
    TU_CALL(deso_vec_create(ctx, m, &y));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, A, m, x, 1,
                       0.0, y, 1));
    tu_fetch(y, out);
    TU_CALL(deso_vec_destroy(&x));
    TU_CALL(deso_vec_destroy(&y));
    TU_CALL(deso_mat_destroy(&A));
}

/* Rank 0 writes gen's m x n matrix as a Matrix Market array file.       */
static void write_mtx(const char *path, int64_t m, int64_t n)
{
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%%%%MatrixMarket matrix array real general\n%lld %lld\n",
                (long long)m, (long long)n);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                fprintf(f, "%.17g\n", tu_ooc_gen(i, j, NULL));
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every source of a matrix writes its local array file: a generator, an
 * array (on every rank, or sent from rank 0), a Matrix Market file and a
 * matrix file.                                                           */
static void test_sources(void **state)
{
    (void)state;
    int64_t m = 23, n = 17, P = tu_size();
    char dir[512], bin[600], mtx[600];
    assert_true(tu_all(tu_scratch_dir("ooc-src", dir, sizeof dir) == 0));
    snprintf(bin, sizeof bin, "%s/a.bin", dir);
    snprintf(mtx, sizeof mtx, "%s/a.mtx", dir);
    write_mtx(mtx, m, n);
    double *a = malloc((size_t)(m * n) * sizeof *a), want[23], got[23];
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) a[j * m + i] = tu_ooc_gen(i, j, NULL);
    tu_case c = {DESO_MODE_NONE, 1, (int)P, 4};
    deso_ctx *ctx = case_ctx(&c, 0, NULL);
    deso_mat *A = NULL;
    TU_OK(deso_mat_from_fn(ctx, m, n, tu_ooc_gen, NULL, &A));
    TU_OK(deso_mat_to_file(A, bin));
    product(ctx, A, m, n, want);
    TU_OK(deso_finalize(&ctx));
    ctx = case_ctx(&c, 1, NULL);
    for (int k = 0; k < 5; k++) {
        tu_label("source %d", k);
        deso_stats_reset();
        A = NULL;
        if (k == 0) TU_CALL(deso_mat_from_fn(ctx, m, n, tu_ooc_gen, NULL, &A));
        if (k == 1)
            TU_CALL(deso_mat_from_array(ctx, m, n, a, m, DESO_ALL_RANKS, &A));
        if (k == 2) TU_CALL(deso_mat_from_array(ctx, m, n, a, m, 0, &A));
        if (k == 3) TU_CALL(deso_mat_from_mtx(ctx, mtx, &A));
        if (k == 4) TU_CALL(deso_mat_from_file(ctx, bin, &A));
        deso_stats st;
        TU_CALL(deso_stats_get(&st));
        int64_t w = st.bytes_io_written;
        MPI_Allreduce(MPI_IN_PLACE, &w, 1, MPI_INT64_T, MPI_SUM,
                      MPI_COMM_WORLD);
        TU_CHECK(w == m * n * 8);        /* every element, once          */
        if (A != NULL) product(ctx, A, m, n, got);
        TU_CHECK(memcmp(want, got, sizeof want) == 0);
        tu_case_end();
    }
    TU_SYNC();
    TU_OK(deso_finalize(&ctx));
    free(a);
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        remove(bin);
        remove(mtx);
    }
    tu_scratch_done(dir);
}

/* Whether one of this process's descriptors is an unlinked file of dir
 * named by the fallback (deso-ooc-...).                                  */
static int named_fd_in(const char *dir)
{
    char want[600];
    snprintf(want, sizeof want, "%s/deso-ooc-", dir);
    return tu_fd_named(want, "(deleted)");
}

/* The named-file fallback: used (the descriptor says so), leaves nothing
 * in the directory, gives the same bits as O_TMPFILE's file; without the
 * switch, not used.                                                     */
static void test_named_fallback(void **state)
{
    (void)state;
    char dir[512];
    assert_true(tu_all(tu_scratch_dir("ooc-named", dir, sizeof dir) == 0));
    double want[23], got[23];
    for (int named = 0; named < 2; named++) {
        tu_label("named %d", named);
        deso__ooc_named_files(named);
        tu_case c = {DESO_MODE_FULL, 1, tu_size(), 4};
        deso_ctx *ctx = case_ctx(&c, 1, dir);
        deso_mat *A = NULL;
        TU_CALL(deso_mat_from_fn(ctx, 23, 17, tu_ooc_gen, NULL, &A));
        TU_CHECK(named_fd_in(dir) == named);
        TU_CHECK(tu_dir_empty(dir));
        if (A != NULL) product(ctx, A, 23, 17, named ? got : want);
        TU_CHECK(!named_fd_in(dir));
        TU_OK(deso_finalize(&ctx));
        TU_CHECK(tu_dir_empty(dir));
        tu_case_end();
    }
    deso__ooc_named_files(false);
    TU_CHECK(memcmp(want, got, sizeof want) == 0);
    TU_SYNC();
    tu_scratch_done(dir);
}

/* Whether a file in dir can be read around the page cache (O_DIRECT
 * through the descriptor's /proc link, as ooc_file.c opens it).         */
static int direct_allowed(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR, 0600);
    if (fd < 0) return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int d = open(path, O_RDONLY | O_DIRECT);
    close(fd);
    if (d < 0) return 0;
    close(d);
    return 1;
}

/* Slabs read around the page cache where the file system allows it, and
 * through it when the test switch says so: the same bits either way (a
 * 23-row piece puts most slabs at offsets that are no multiple of the
 * alignment, so the columns start inside the buffer), and the count of
 * direct reads moves only when they are on and allowed.                 */
static void test_direct_reads(void **state)
{
    (void)state;
    char dir[512];
    assert_true(tu_all(tu_scratch_dir("ooc-direct", dir, sizeof dir) == 0));
    int allowed = direct_allowed(dir);
    double want[23], got[23];
    for (int direct = 1; direct >= 0; direct--) {
        tu_label("direct reads %d (allowed %d)", direct, allowed);
        deso__ooc_direct_reads(direct);
        tu_case c = {DESO_MODE_FULL, 1, tu_size(), 4};
        deso_ctx *ctx = case_ctx(&c, 1, dir);
        deso_mat *A = NULL;
        TU_CALL(deso_mat_from_fn(ctx, 23, 17, tu_ooc_gen, NULL, &A));
        long before = deso__ooc_direct_count();
        if (A != NULL) product(ctx, A, 23, 17, direct ? want : got);
        /* summed: at P = 6 a rank holds no column of the 17              */
        long reads = deso__ooc_direct_count() - before;
        MPI_Allreduce(MPI_IN_PLACE, &reads, 1, MPI_LONG, MPI_SUM,
                      MPI_COMM_WORLD);
        TU_CHECK(direct && allowed ? reads > 0 : reads == 0);
        TU_OK(deso_finalize(&ctx));
        tu_case_end();
    }
    deso__ooc_direct_reads(true);
    TU_CHECK(memcmp(want, got, sizeof want) == 0);
    TU_SYNC();
    tu_scratch_done(dir);
}

/* The y = A x of one step of the loop below, then x = x + y / 4 (only
 * A's first m rows of y: A is square).                                  */
static void step(deso_mat *A, int64_t n, deso_vec *x, deso_vec *y)
{
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, x, 1,
                       0.0, y, 1));
    TU_CALL(deso_daxpy(n, 0.25, y, 1, x, 1));
}

/* A loop of products on one matrix, with vector work between them and a
 * rank-one update in the middle: each product after the first takes its
 * first slab from the read ahead (so K products take K - 1, less the one
 * after the update, which the update took), and the results are the bits
 * of the in-core loop (a read ahead into the wrong buffer, or kept past
 * the update, would give other bits).  The reads also run inline and
 * through the page cache, where a read into a buffer still in use
 * spoils it every time instead of when the thread wins the race.        */
static void test_read_ahead(void **state)
{
    (void)state;
    enum { K = 5 };
    double want[K][25], got[K][25];
    long took = 0;
    /* slabs of one 4-column block: 21 and 25 columns give an odd number
     * of slabs on some rank at P = 1, 2 and 3, so that the read ahead
     * lands in the second buffer there                                  */
    for (int run = 0; run < 6; run++) {
        int ooc = run % 3 > 0, N = run < 3 ? 21 : 25;
        tu_label("%d x %d, out of core %d, reads inline %d", N, N, ooc,
                 run % 3 == 2);
        deso__ooc_inline_reads(run % 3 == 2);
        /* through the cache, the slab starts at its buffer's start (a
         * direct read of a small file rereads the first slab's bytes
         * into any buffer, which would hide a read into the wrong one)  */
        deso__ooc_direct_reads(run % 3 != 2);
        tu_case c = {DESO_MODE_FULL, 1, tu_size(), 4};
        deso_ctx *ctx = case_ctx(&c, ooc ? 1 : 0, NULL);
        deso_mat *A = NULL;
        TU_CALL(deso_mat_from_fn(ctx, N, N, tu_ooc_gen, NULL, &A));
        deso_vec *x = vec(ctx, N, 2), *y = NULL;
        TU_CALL(deso_vec_create(ctx, N, &y));
        long before = deso__ooc_ahead_taken();
        for (int k = 0; k < K; k++) {
            step(A, N, x, y);
            if (k == 2)
                TU_CALL(deso_dger(DESO_COL_MAJOR, N, N, 1e-3, x, 1, y, 1, A,
                                  N));
            tu_fetch(x, ooc ? got[k] : want[k]);
        }
        took = deso__ooc_ahead_taken() - before;
        TU_CALL(deso_vec_destroy(&x));
        TU_CALL(deso_vec_destroy(&y));
        TU_CALL(deso_mat_destroy(&A));
        TU_OK(deso_finalize(&ctx));
        /* products 2, 3 and 5 and the update take one each; product 4
         * reads the updated file afresh                                  */
        TU_CHECK(took == (ooc ? K - 1 : 0));
        for (int k = 0; ooc && k < K; k++)
            TU_CHECK(memcmp(want[k], got[k], (size_t)N * sizeof(double)) ==
                     0);
        tu_case_end();
    }
    deso__ooc_inline_reads(false);
    deso__ooc_direct_reads(true);
    TU_SYNC();
}

/* deso_mat_read_rate on an out-of-core matrix with a pending update:
 * the update is forced and written first, then every rank reads its
 * whole file (the statistics' bytes read grow by the matrix, summed over
 * the ranks, and nothing else) and gets the same positive rate; on an
 * in-core matrix, DESO_EINVAL on every rank; a NULL result, DESO_ENULL. */
static void test_matrix_read_rate(void **state)
{
    (void)state;
    tu_case c = {DESO_MODE_FULL, 1, tu_size(), 4};
    deso_ctx *ctx = case_ctx(&c, 1, NULL), *incore = case_ctx(&c, 0, NULL);
    deso_mat *A = NULL, *B = NULL;
    TU_CALL(deso_mat_from_fn(ctx, 37, 29, tu_ooc_gen, NULL, &A));
    TU_CALL(deso_mat_create(incore, 3, 3, &B));
    deso_vec *x = vec(ctx, 37, 1), *y = vec(ctx, 29, 2);
    TU_CALL(deso_dger(DESO_COL_MAJOR, 37, 29, 0.5, x, 1, y, 1, A, 37));
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    int64_t read0 = st.bytes_io_read, written0 = st.bytes_io_written;
    double rate = -1.0;
    TU_OK(deso_mat_read_rate(A, &rate));
    TU_OK(deso_stats_get(&st));
    int64_t d[2] = {st.bytes_io_read - read0, st.bytes_io_written - written0};
    MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* the dger streamed A once (read and written), then the rate's read */
    TU_CHECK(d[0] == 2 * 37 * 29 * 8 && d[1] == 37 * 29 * 8);
    assert_true(tu_all(rate > 0.0));
    double lo = rate, hi = rate;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    TU_CHECK(lo == hi);
    TU_ERR(deso_mat_read_rate(B, &rate), DESO_EINVAL);
    TU_ERR(deso_mat_read_rate(A, NULL), DESO_ENULL);
    TU_CALL(deso_vec_destroy(&x));
    TU_CALL(deso_vec_destroy(&y));
    TU_CALL(deso_mat_destroy(&A));
    TU_CALL(deso_mat_destroy(&B));
    TU_OK(deso_finalize(&ctx));
    TU_OK(deso_finalize(&incore));
    TU_SYNC();
}

/* The cost model's read rate of the local array files: 0 when no rank has
 * a budget; measured when one rank has one, the same on every rank;
 * carried by a wisdom file to another context bit for bit.             */
static void test_read_rate(void **state)
{
    (void)state;
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    deso_ctx *none = case_ctx(&(tu_case){DESO_MODE_NONE, 0, 0, 4}, 0, NULL);
    deso_ctx *some = case_ctx(&(tu_case){DESO_MODE_NONE, 0, 0, 4},
                              me == tu_size() - 1 ? 4096 : 0, NULL);
    deso_info a, b;
    TU_OK(deso_get_info(none, &a));
    TU_OK(deso_get_info(some, &b));
    assert_true(tu_all(a.io_beta == 0.0));
    assert_true(tu_all(b.io_beta > 0.0 && b.io_beta < 1e-4));
    double lo = b.io_beta, hi = b.io_beta;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    assert_true(lo == hi);
    char path[256];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/deso-test-ooc-rate-%ld.wisdom",
             dir != NULL ? dir : "/tmp", (long)getpid());
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    TU_OK(deso_wisdom_export(some, path));
    TU_OK(deso_wisdom_import(none, path));
    TU_OK(deso_get_info(none, &a));
    assert_true(tu_all(memcmp(&a.io_beta, &b.io_beta, sizeof a.io_beta) == 0));
    if (me == 0) remove(path);
    TU_OK(deso_finalize(&none));
    TU_OK(deso_finalize(&some));
}

/* What cannot stream is refused, the same way on every rank.            */
static void test_refused(void **state)
{
    (void)state;
    deso_options o;
    deso_options_default(&o);
    o.mem_limit = 1;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    deso_mat *A = NULL;
    deso_vec *x = NULL;
    TU_OK(deso_mat_from_fn(ctx, 10, 10, tu_ooc_sym, NULL, &A));
    TU_OK(deso_vec_create(ctx, 10, &x));
    TU_ERR(deso_dtrsv(DESO_COL_MAJOR, DESO_LOWER, DESO_NO_TRANS,
                      DESO_NON_UNIT, 10, A, 10, x, 1),
           DESO_ENOTSUP);
    TU_ERR(deso_mat_diag(A, x), DESO_ENOTSUP);
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_finalize(&ctx));
}

TU_MAIN_SETUP(tu_ooc_setup,
        cmocka_unit_test(test_bitwise),
        cmocka_unit_test(test_chunk_bytes),
        cmocka_unit_test(test_one_rank_over),
        cmocka_unit_test(test_nothing_left),
        cmocka_unit_test(test_budget_strings), cmocka_unit_test(test_bad_dir),
        cmocka_unit_test(test_sources), cmocka_unit_test(test_named_fallback),
        cmocka_unit_test(test_direct_reads), cmocka_unit_test(test_read_ahead),
        cmocka_unit_test(test_matrix_read_rate),
        cmocka_unit_test(test_read_rate), cmocka_unit_test(test_refused))
