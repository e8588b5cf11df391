/* Global matrix files: deso_mat_to_file and deso_mat_from_file.
 *
 * Oracles: rank 0 reads every written file back with stdio and checks the
 * header field by field, every element bitwise against the generator in
 * column-major order, and the checksum recomputed here from deso.h's
 * definition; every matrix read back is gathered and compared bitwise
 * with the generator.  Files are written on one grid and read on another,
 * with slabs of a few block columns, of parts of one block column and of
 * the default size, after a pending
 * update (the write is a force point).  Hostile files (bad magic, version,
 * byte order, size, shape, a flipped data bit) fail on every rank with
 * DESO_EIO and leave *out NULL; NULL arguments (also on one rank only)
 * and a destroyed handle are refused.  Awkward sizes: 1 x 1, m < P, n < P,
 * m and n not multiples of the block sizes, 0 columns.  P = 4 and 6 run
 * in the long group (make check's time).
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                         */
#include <stdint.h>

#include "test_util.h"
#include "deso/io/io.h"

static double gen(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return 1000.0 * (double)i - (double)j / 7.0 + 0.125;
}

static double unit(int64_t i, void *arg)
{
    (void)arg;
    return i == 0 ? 1.0 : 0.0;
}

/* The checksum term of deso.h's file format, written from its text.      */
static uint64_t term(uint64_t k, double x)
{
    uint64_t z;
    memcpy(&z, &x, sizeof z);
    z = (z ^ (k * 0x9E3779B97F4A7C15ull)) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* Rank 0: the file holds gen's m x n matrix (with the extra term `bump`
 * added to A(0, 0)) in the documented format.  Agreed on every rank.    */
static int file_ok(const char *path, int64_t m, int64_t n, double bump)
{
    int ok = 1;
    if (rank() == 0) {
        FILE *f = fopen(path, "rb");
        unsigned char h[64];
        ok = f != NULL && fread(h, 1, 64, f) == 64;
        uint32_t ver = 0, hb = 0;
        int64_t fm = -1, fn = -1;
        uint64_t sum = 0, want = 0;
        if (ok) {
            memcpy(&ver, h + 8, 4);
            memcpy(&hb, h + 12, 4);
            memcpy(&fm, h + 16, 8);
            memcpy(&fn, h + 24, 8);
            memcpy(&sum, h + 32, 8);
            ok = memcmp(h, "DESOMAT", 8) == 0 && ver == 1 && hb == 64 &&
                 fm == m && fn == n;
            for (int k = 40; k < 64; k++) ok = ok && h[k] == 0;
        }
        for (int64_t j = 0; ok && j < n; j++)
            for (int64_t i = 0; ok && i < m; i++) {
                double x, w = gen(i, j, NULL) + (i == 0 && j == 0 ? bump : 0);
                ok = fread(&x, 8, 1, f) == 1 &&
                     memcmp(&x, &w, sizeof x) == 0;
                want += term((uint64_t)(i + j * m), w);
            }
        ok = ok && fgetc(f) == EOF && sum == want;
        if (f) fclose(f);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

/* A matrix equals gen (plus bump at (0, 0)) bitwise on every rank.       */
static int mat_ok(const deso_mat *a, int64_t m, int64_t n, double bump)
{
    double *buf = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof(double));
    TU_OK(deso_mat_gather(a, buf, m > 1 ? m : 1, DESO_ALL_RANKS));
    int ok = 1;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double w = gen(i, j, NULL) + (i == 0 && j == 0 ? bump : 0);
            ok = ok && memcmp(&buf[j * (m > 1 ? m : 1) + i], &w, 8) == 0;
        }
    free(buf);
    return tu_all(ok);
}

/* Writes gen's m x n matrix in context w (with a pending rank-one update
 * adding bump to A(0, 0)), checks the file, reads it back in context r.  */
static void round_trip(const char *path, int64_t m, int64_t n, deso_ctx *w,
                       deso_ctx *r)
{
    deso_mat *a = NULL, *b = NULL;
    TU_OK(deso_mat_from_fn(w, m, n, gen, NULL, &a));
    double bump = 0.0;
    if (m > 0 && n > 0) {
        /* e0 e0^T scaled: a pending update the write must force          */
        deso_vec *x, *y;
        TU_OK(deso_vec_from_fn(w, m, unit, NULL, &x));
        TU_OK(deso_vec_from_fn(w, n, unit, NULL, &y));
        bump = 0.5;
        TU_OK(deso_dger(DESO_COL_MAJOR, m, n, bump, x, 1, y, 1, a, m));
        TU_OK(deso_vec_destroy(&x));
        TU_OK(deso_vec_destroy(&y));
    }
    TU_OK(deso_mat_to_file(a, path));
    assert_true(file_ok(path, m, n, bump));
    TU_OK(deso_mat_destroy(&a));
    TU_OK(deso_mat_from_file(r, path, &b));
    assert_true(mat_ok(b, m, n, bump));
    TU_OK(deso_mat_destroy(&b));
}

static void test_round_trip(void **state)
{
    (void)state;
    char dir[256], path[300];
    assert_true(tu_all(tu_scratch_dir("matfile", dir, sizeof dir) == 0));
    snprintf(path, sizeof path, "%s/a.bin", dir);
    int grids[4][2], ng = tu_grids(grids), P = tu_size();
    const int64_t shapes[][2] = {{1, 1}, {P > 1 ? P - 1 : 1, 5}, {37, 53},
                                 {3, P > 1 ? P - 1 : 1}, {4, 0}, {64, 17}};
    const int64_t nbs[] = {1, 3, DESO_NB_BLOCK};
    /* one context per grid and block size, made once (each deso_init
     * measures the machine)                                               */
    deso_ctx *ctx[4][3];
    for (int gi = 0; gi < ng; gi++)
        for (int b = 0; b < 3; b++)
            ctx[gi][b] = tu_ctx(grids[gi][0], grids[gi][1], nbs[b]);
    /* every shape on every grid pair, written on one grid and read on the
     * next; the block sizes and slab limits in turn, so that each shape
     * meets each block size over the grids and the default slab limit,
     * and a small one in turn: 200 elements (slabs of a few block
     * columns) or 13 (parts of block columns: one block column of local
     * rows over the limit)                                               */
    int k = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int gi = 0; gi < ng; gi++)
            for (int lim = 0; lim < 2; lim++, k++) {
                deso__matfile_slab_limit(!lim ? 0 : k / 2 % 2 ? 13 : 200);
                round_trip(path, shapes[s][0], shapes[s][1], ctx[gi][k % 3],
                           ctx[(gi + 1) % ng][k % 3]);
            }
    deso__matfile_slab_limit(0);
    for (int gi = 0; gi < ng; gi++)
        for (int b = 0; b < 3; b++) TU_OK(deso_finalize(&ctx[gi][b]));
    if (rank() == 0) remove(path);
    tu_scratch_done(dir);
}

/* Rank 0 copies the file at src to dst, overwriting `len` bytes at `at`
 * with `bytes` (len 0: unchanged) and cutting it to `size` bytes (-1:
 * the whole file).                                                        */
static void spoil(const char *src, const char *dst, long at, const void *bytes,
                  size_t len, long size)
{
    if (rank() == 0) {
        FILE *f = fopen(src, "rb"), *g = fopen(dst, "wb");
        assert_non_null(f);
        assert_non_null(g);
        unsigned char buf[1 << 16];
        size_t got = fread(buf, 1, sizeof buf, f);
        if (len > 0) memcpy(buf + at, bytes, len);
        if (size >= 0 && (size_t)size < got) got = (size_t)size;
        assert_true(fwrite(buf, 1, got, g) == got);
        fclose(f);
        fclose(g);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void expect_eio(deso_ctx *ctx, const char *path, const char *why)
{
    deso_mat *b = (deso_mat *)ctx;   /* any non-NULL: must become NULL    */
    deso_err e = deso_mat_from_file(ctx, path, &b);
    if (e != DESO_EIO) print_error("%s: %s\n", why, deso_last_error());
    TU_ERR(e, DESO_EIO);
    assert_true(tu_all(b == NULL));
    assert_true(tu_all(strstr(deso_last_error(), why) != NULL));
}

static void test_hostile(void **state)
{
    (void)state;
    char dir[256], good[300], bad[300];
    assert_true(tu_all(tu_scratch_dir("matfile-bad", dir, sizeof dir) == 0));
    snprintf(good, sizeof good, "%s/good.bin", dir);
    snprintf(bad, sizeof bad, "%s/bad.bin", dir);
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    deso_mat *a;
    TU_OK(deso_mat_from_fn(ctx, 9, 7, gen, NULL, &a));
    TU_OK(deso_mat_to_file(a, good));
    const int64_t huge[2] = {INT64_C(1) << 20, INT64_C(1) << 44};
    const int64_t neg = -3, big = (int64_t)INT32_MAX + 1;
    const uint32_t swapped = 0x01000000u, v2 = 2;
    const unsigned char flip = 0x5a;
    spoil(good, bad, 0, "DESOMAX", 8, -1);
    expect_eio(ctx, bad, "bad magic");
    spoil(good, bad, 8, &swapped, 4, -1);
    expect_eio(ctx, bad, "byte order");
    spoil(good, bad, 8, &v2, 4, -1);
    expect_eio(ctx, bad, "version 2");
    spoil(good, bad, 16, huge, 16, -1);
    expect_eio(ctx, bad, "overflows");
    spoil(good, bad, 16, &neg, 8, -1);
    expect_eio(ctx, bad, "shape -3 x 7");
    spoil(good, bad, 16, &big, 8, -1);
    expect_eio(ctx, bad, "shape 2147483648 x 7");
    spoil(good, bad, 0, NULL, 0, 64 + 9 * 7 * 8 - 1);
    expect_eio(ctx, bad, "expected 568");
    spoil(good, bad, 0, NULL, 0, 40);
    expect_eio(ctx, bad, "shorter than");
    spoil(good, bad, 64 + 8 * 30 + 3, &flip, 1, -1);
    expect_eio(ctx, bad, "checksum mismatch");
    expect_eio(ctx, dir, "cannot");   /* a directory: open or read fails  */
    snprintf(bad, sizeof bad, "%s/none.bin", dir);
    expect_eio(ctx, bad, "cannot open");
    snprintf(bad, sizeof bad, "%s/no/such/dir.bin", dir);
    TU_ERR(deso_mat_to_file(a, bad), DESO_EIO);
    TU_ERR(deso_mat_to_file(a, NULL), DESO_ENULL);
    TU_ERR(deso_mat_to_file(NULL, good), DESO_ENULL);
    /* one rank's bad path fails every rank, before anyone opens the file */
    int last = rank() == tu_size() - 1;
    TU_ERR(deso_mat_to_file(a, last ? NULL : bad), DESO_ENULL);
    deso_mat *b1 = NULL;
    TU_ERR(deso_mat_from_file(ctx, last ? NULL : good, &b1), DESO_ENULL);
    assert_true(tu_all(b1 == NULL));
    deso_mat *dead = a;                /* a destroyed handle's shell        */
    TU_OK(deso_mat_destroy(&a));
    TU_ERR(deso_mat_to_file(dead, good), DESO_ESTALE);
    TU_ERR(deso_mat_from_file(ctx, NULL, &a), DESO_ENULL);
    assert_true(tu_all(a == NULL));
    TU_ERR(deso_mat_from_file(ctx, good, NULL), DESO_ENULL);
    TU_ERR(deso_mat_from_file(NULL, good, &a), DESO_ENULL);
    /* the context still works after every refusal                        */
    TU_OK(deso_mat_from_file(ctx, good, &a));
    assert_true(mat_ok(a, 9, 7, 0.0));
    TU_OK(deso_mat_destroy(&a));
    TU_OK(deso_finalize(&ctx));
    if (rank() == 0) {
        remove(good);
        snprintf(bad, sizeof bad, "%s/bad.bin", dir);
        remove(bad);
    }
    tu_scratch_done(dir);
}

TU_MAIN(cmocka_unit_test(test_round_trip), cmocka_unit_test(test_hostile))
