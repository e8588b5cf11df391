/* Out-of-core matrices' sources and sinks: an array (on one rank or on
 * every rank), a matrix file and a Matrix Market file stream into the
 * local array files, and deso_mat_to_file and deso_mat_gather (to one
 * rank, to every rank with ld > m and ld = m) stream out of them, each a
 * slab at a time.
 *
 * Oracles: the largest allocation the library makes while a matrix is
 * created from an array or a matrix file, written to a file or gathered
 * (placement/alloc.h's counter) stays within two slabs of the budget (or
 * of the least slab, one chunk of dgemv's accumulation, when the budget
 * is smaller) and below the rank's local piece, which the in-core
 * creation does allocate (so the counter sees such a buffer); each
 * out-of-core matrix gives the in-core matrix's product bit for bit in
 * every optimiser mode; every element is written to the files exactly
 * once (at least once from a Matrix Market file, read in chunks of
 * entries, whose chunk buffer is not bounded by the budget); a matrix
 * file written from an out-of-core matrix has the same bytes as the one
 * written in core; a gathered one is the array it was made from, the
 * padding rows untouched.  A Matrix Market coordinate file in shuffled
 * order with duplicate entries adds them up in the file's order, as in
 * core.
 * Sizes not multiples of the block size; grids 1 x P and the default.
 * deso-np: 1 2
 * deso-np-long: 3 4 6                                                     */
#include <stdint.h>

#include "ooc_test.h"
#include "test_util.h"
#include "deso/deso_stats.h"
#include "deso/runtime/ooc.h"
#include "placement/alloc.h"

#define M 203
#define N 700
#define NB 4
#define BUDGET ((int64_t)16 << 10)
#define CHUNK 64          /* at least blas_gemv_chunk (NB under the setup) */

static int rank(void)
{
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me;
}

static deso_ctx *make_ctx(deso_mode mode, int pc, int64_t limit,
                          const char *dir)
{
    return tu_ctx_budget(mode, pc > 0 ? tu_size() / pc : 0, pc, NB, limit,
                         dir);
}

/* Bytes written to local array files since the reset, summed over ranks.*/
static int64_t written_sum(void)
{
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    int64_t w = st.bytes_io_written;
    MPI_Allreduce(MPI_IN_PLACE, &w, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return w;
}

/* This rank's local piece of an M x N matrix, in bytes, and the bound on
 * what streaming it may hold: two slabs of the budget, or of one chunk of
 * dgemv's accumulation (CHUNK columns: the slab's least width) when the
 * budget is smaller, plus a block of rows more than this rank's (the
 * buffers are sized for the most local rows of any rank), plus the room
 * a direct read needs around each buffer's columns and the alignment
 * (ooc.h: each buffer rounded up to DESO__OOC_ALIGN, DESO__OOC_SLACK
 * beyond its columns, one more block to align the pair).               */
static void piece_bounds(deso_ctx *ctx, int64_t *piece, int64_t *bound)
{
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    int pr = info.grid_rows, pc = info.grid_cols;
    int r = rank() / pc, c = rank() % pc;
    int64_t rows = 0, cols = 0;
    for (int64_t i = 0; i < M; i++) rows += (i / NB) % pr == r;
    for (int64_t j = 0; j < N; j++) cols += (j / NB) % pc == c;
    int64_t rows_max = M / pr + NB, least = 2 * 8 * CHUNK * rows_max;
    *piece = rows * cols * 8;
    *bound = (least > BUDGET ? least : BUDGET) + 2 * DESO__OOC_SLACK +
             3 * DESO__OOC_ALIGN;
}

/* Rank 0: whether the two files have the same bytes.                      */
static int same_files(const char *a, const char *b)
{
    if (rank() != 0) return 1;
    FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
    int same = f != NULL && g != NULL;
    while (same) {
        int x = fgetc(f), y = fgetc(g);
        same = x == y;
        if (x == EOF) break;
    }
    if (f != NULL) fclose(f);
    if (g != NULL) fclose(g);
    return same;
}

/* Rank 0 writes gen's matrix as a Matrix Market array file.              */
static void write_mtx(const char *path)
{
    if (rank() == 0) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%%%%MatrixMarket matrix array real general\n%d %d\n", M,
                N);
        for (int64_t j = 0; j < N; j++)
            for (int64_t i = 0; i < M; i++)
                fprintf(f, "%.17g\n", tu_ooc_gen(i, j, NULL));
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Gathering out-of-core A (made from a) to rank 1 (rank 0 when P = 1),
 * then to every rank with a leading dimension over m, then with m: a's
 * elements, the padding untouched, and no allocation beyond the bound.  */
static void gather_ok(deso_mat *A, const double *a, int64_t piece,
                      int64_t bound)
{
    double *g = malloc((size_t)((M + 3) * N) * sizeof *g);
    for (int how = 0; how < 3; how++) {
        int root = how ? DESO_ALL_RANKS : tu_size() > 1 ? 1 : 0;
        int64_t ld = how == 2 ? M : M + 3;
        for (int64_t e = 0; e < (M + 3) * N; e++) g[e] = -1.0;
        deso__alloc_largest_reset();
        TU_CALL(deso_mat_gather(A, g, ld, root));
        int64_t held = (int64_t)deso__alloc_largest();
        TU_CHECK(held <= bound && held < piece);
        if (how || rank() == root) {
            int same = 1;
            for (int64_t j = 0; j < N; j++)
                for (int64_t i = 0; i < ld; i++)
                    same &= g[j * ld + i] == (i < M ? a[j * M + i] : -1.0);
            TU_CHECK(same);
        }
    }
    free(g);
}

/* One source made out of core (k: array from rank 0, array on every rank,
 * matrix file, Matrix Market file).                                      */
static deso_mat *source(deso_ctx *ctx, int k, const double *a,
                        const char *bin, const char *mtx)
{
    deso_mat *A = NULL;
    if (k == 0) TU_CALL(deso_mat_from_array(ctx, M, N, a, M, 0, &A));
    if (k == 1)
        TU_CALL(deso_mat_from_array(ctx, M, N, a, M, DESO_ALL_RANKS, &A));
    if (k == 2) TU_CALL(deso_mat_from_file(ctx, bin, &A));
    if (k == 3) TU_CALL(deso_mat_from_mtx(ctx, mtx, &A));
    return A;
}

/* One grid and mode: each source out of core within the bound, the same
 * product bits as in core, every element written once; the matrix file
 * written back from out of core has the in-core file's bytes.            */
static void sources_case(deso_mode mode, int pc, const double *a,
                         const char *dir)
{
    char bin[600], back[600], mtx[600];
    snprintf(bin, sizeof bin, "%s/a.bin", dir);
    snprintf(back, sizeof back, "%s/back.bin", dir);
    snprintf(mtx, sizeof mtx, "%s/a.mtx", dir);
    double want[M], got[M];
    deso_ctx *ctx = make_ctx(mode, pc, 0, NULL);
    int64_t piece, bound;
    piece_bounds(ctx, &piece, &bound);
    deso_mat *A = NULL;
    /* in core, the piece is allocated whole: the counter sees it        */
    deso__alloc_largest_reset();
    TU_CALL(deso_mat_from_array(ctx, M, N, a, M, 0, &A));
    TU_CHECK((int64_t)deso__alloc_largest() >= piece);
    TU_CALL(deso_mat_to_file(A, bin));
    tu_ooc_product(ctx, A, M, N, want);
    TU_OK(deso_finalize(&ctx));
    ctx = make_ctx(mode, pc, BUDGET, dir);
    for (int k = 0; k < 4; k++) {
        tu_label("%s, grid 1 x %d, source %d", deso_mode_name(mode), pc, k);
        deso_stats_reset();
        deso__alloc_largest_reset();
        A = source(ctx, k, a, bin, mtx);
        int64_t held = (int64_t)deso__alloc_largest();
        int64_t w = written_sum();
        /* the Matrix Market reader's chunk of entries is its own buffer,
         * and a slab that two chunks touch is written twice              */
        if (k < 3) TU_CHECK(held <= bound && held < piece);
        TU_CHECK(k < 3 ? w == (int64_t)M * N * 8 : w >= (int64_t)M * N * 8);
        if (k == 1 && A != NULL) gather_ok(A, a, piece, bound);
        if (k == 2 && A != NULL) {
            deso__alloc_largest_reset();
            TU_CALL(deso_mat_to_file(A, back));
            held = (int64_t)deso__alloc_largest();
            TU_CHECK(held <= bound && held < piece);
            TU_CHECK(tu_all(same_files(bin, back)));
        }
        if (A != NULL) tu_ooc_product(ctx, A, M, N, got);
        TU_CHECK(memcmp(want, got, sizeof want) == 0);
        tu_case_end();
    }
    TU_OK(deso_finalize(&ctx));
    if (rank() == 0) {
        remove(bin);
        remove(back);
    }
}

static void test_sources_bounded(void **state)
{
    (void)state;
    char dir[512], mtx[600];
    assert_true(tu_all(tu_scratch_dir("ooc-io", dir, sizeof dir) == 0));
    snprintf(mtx, sizeof mtx, "%s/a.mtx", dir);
    write_mtx(mtx);
    double *a = malloc((size_t)M * N * sizeof *a);
    assert_non_null(a);
    for (int64_t j = 0; j < N; j++)
        for (int64_t i = 0; i < M; i++) a[j * M + i] = tu_ooc_gen(i, j, NULL);
    for (int k = 0; k < TU_NMODES; k++) {
        sources_case(tu_mode(k), tu_size(), a, dir);
        /* the default grid (2-D at P = 4 and 6)                          */
        if (tu_size() >= 4) sources_case(tu_mode(k), 0, a, dir);
    }
    TU_SYNC();
    free(a);
    if (rank() == 0) remove(mtx);
    tu_scratch_done(dir);
}

/* A coordinate file in shuffled order with duplicates (entry e of the
 * list is cell (e * 7) % third, the first third of the cells each three
 * times with different values, which add up differently in another
 * order; the reader takes at most m n entries): the
 * out-of-core matrix (slabs of one block column) adds the duplicates in
 * the file's order, as in core.                                          */
static void test_mtx_coordinate(void **state)
{
    (void)state;
    const int64_t m = 17, n = 23, third = m * n / 3;
    char dir[512], mtx[600];
    assert_true(tu_all(tu_scratch_dir("ooc-coo", dir, sizeof dir) == 0));
    snprintf(mtx, sizeof mtx, "%s/c.mtx", dir);
    if (rank() == 0) {
        FILE *f = fopen(mtx, "w");
        assert_non_null(f);
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n"
                   "%lld %lld %lld\n", (long long)m, (long long)n,
                (long long)(3 * third));
        for (int64_t e = 0; e < 3 * third; e++) {
            int64_t c = (e * 7) % third;       /* 7 is prime to 130       */
            fprintf(f, "%lld %lld %.17g\n", (long long)(c % m + 1),
                    (long long)(c / m + 1), tu_ooc_gen(c % m, e, NULL));
        }
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double want[17], got[17];
    for (int k = 0; k < TU_NMODES; k++) {
        tu_label("%s", deso_mode_name(tu_mode(k)));
        for (int ooc = 0; ooc < 2; ooc++) {
            deso_ctx *ctx = make_ctx(tu_mode(k), tu_size(), ooc, NULL);
            deso_mat *A = NULL;
            deso_stats_reset();
            TU_CALL(deso_mat_from_mtx(ctx, mtx, &A));
            TU_CHECK((written_sum() > 0) == ooc);
            if (A != NULL) tu_ooc_product(ctx, A, m, n, ooc ? got : want);
            TU_OK(deso_finalize(&ctx));
        }
        TU_CHECK(memcmp(want, got, sizeof want) == 0);
        tu_case_end();
    }
    TU_SYNC();
    if (rank() == 0) remove(mtx);
    tu_scratch_done(dir);
}

TU_MAIN_SETUP(tu_ooc_setup, cmocka_unit_test(test_sources_bounded),
        cmocka_unit_test(test_mtx_coordinate))
