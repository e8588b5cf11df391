/* Matrix Market array files streamed into matrices (deso_mat_from_mtx):
 * rank 0 reads the file a unit of columns at a time and sends each rank
 * its part, so that a matrix larger than memory converts (deso-mtx2bin:
 * deso_mat_from_mtx, then deso_mat_to_file) and loads out of core.
 *
 * Oracles: converting a general and a symmetric file of 20 MB of doubles
 * (rank 0's text 8 to 15 MB) out of core under a 256 KiB budget raises no
 * rank's peak resident memory (VmHWM, reset before each conversion, or
 * getrusage's ru_maxrss where it cannot be reset) by more than a fifth of
 * the matrix, where reading the whole file (the text and a list of
 * entries, 60 MB and more) would, and no allocation of the load reaches a
 * tenth of a rank's share (the only check under AddressSanitizer, whose
 * shadow memory is resident too); the file written has the bytes the
 * in-core matrix writes.  General, symmetric and skew-symmetric files at
 * awkward sizes (1 x 1, n not a multiple of the block, m < P) give the
 * generator's matrix, its product the in-core product's bits, in every
 * optimiser mode: out of core with budgets whose units are parts of a
 * block column, whole block columns, or all, each element written to the
 * files exactly once; in core with units of one column, a part of a block
 * column, and whole blocks (deso__mtx_unit_limit); the reading does not
 * depend on the mode, so modes other than none take one budget only.  A file that ends
 * early, holds a bad value or data after its last entry, found after
 * units already moved, fails on every rank with DESO_EIO and rank 0's
 * message naming the fault, leaves nothing in the directory and no
 * descriptor into it, and the context makes the next matrix right.
 * deso-np: 1 2
 * deso-np-long: 3 4 6                                                     */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "ooc_test.h"
#include "test_util.h"
#include "deso/deso_stats.h"
#include "deso/io/io.h"
#include "placement/alloc.h"

#define NB 4
#define BIG 1600                 /* the converted matrices: 20 MB each     */
#define BIG_BUDGET ((int64_t)256 << 10)

enum { GENERAL, SYMMETRIC, SKEW, NKINDS };
static const char *kind_name[NKINDS] = {"general", "symmetric",
                                        "skew-symmetric"};

static int rank(void)
{
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me;
}

/* The lower triangle's values: halves, exact in the file's text.        */
static double lower(int64_t i, int64_t j)
{
    return (double)((i * 7 + j * 13) % 97) - 48.5;
}

/* Element (i, j) of a matrix of kind *arg.                               */
static double elem(int64_t i, int64_t j, void *arg)
{
    int kind = *(const int *)arg;
    if (kind == GENERAL) return lower(i, j) + (double)(j % 3);
    if (i >= j) return i == j && kind == SKEW ? 0.0 : lower(i, j);
    return kind == SYMMETRIC ? lower(j, i) : -lower(j, i);
}

/* Faults written into a file: none, the text stopping at 60% of its
 * values, a bad value there, a value after the last.                    */
enum { FINE, TRUNCATED, BAD_VALUE, TRAILING };

/* Rank 0 writes an m x n file of the kind, with the fault.               */
static void write_mtx(const char *path, int64_t m, int64_t n, int kind,
                      int fault)
{
    if (rank() == 0) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%%%%MatrixMarket matrix array real %s\n%% a comment\n"
                   "%lld %lld\n", kind_name[kind], (long long)m, (long long)n);
        int64_t total = kind == GENERAL ? m * n
                      : kind == SYMMETRIC ? n * (n + 1) / 2 : n * (n - 1) / 2;
        int64_t cut = total * 6 / 10, k = 0;
        for (int64_t j = 0; j < n; j++) {
            int64_t i0 = kind == GENERAL ? 0 : j + (kind == SKEW);
            for (int64_t i = i0; i < m; i++, k++) {
                if (k == cut && fault == TRUNCATED) goto done;
                if (k == cut && fault == BAD_VALUE) fprintf(f, "1.5x\n");
                else fprintf(f, "%.1f\n", elem(i, j, &kind));
            }
        }
        if (fault == TRAILING) fprintf(f, "2.5\n");
    done:
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* y = A x for the generator's matrix of the kind, in core.              */
static void product_of_fn(deso_ctx *ctx, int64_t m, int64_t n, int kind,
                          double *y)
{
    deso_mat *A = NULL;
    TU_CALL(deso_mat_from_fn(ctx, m, n, elem, &kind, &A));
    if (A != NULL) tu_ooc_product(ctx, A, m, n, y);
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

/* ---- peak memory of a conversion ---------------------------------------- */

/* This process's peak resident memory in KiB: VmHWM, which *reset (when
 * the kernel lets /proc/self/clear_refs reset it) starts again from the
 * resident memory of now; else getrusage's ru_maxrss, the peak of the
 * whole run.                                                             */
static int64_t peak_kib(int reset)
{
    if (reset) {
        FILE *c = fopen("/proc/self/clear_refs", "w");
        if (c != NULL) {
            fputs("5", c);
            fclose(c);
        }
    }
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %lld", &kib) == 1) break;
    if (f != NULL) fclose(f);
    if (kib >= 0) return kib;
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
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

/* The conversion of a BIG x BIG file of the kind, out of core: the peak
 * grows by less than a fifth of the matrix on every rank, and the file
 * written is the in-core matrix's.                                       */
static void convert_case(int kind, const char *dir)
{
    char mtx[600], bin[600], want[600];
    snprintf(mtx, sizeof mtx, "%s/big.mtx", dir);
    snprintf(bin, sizeof bin, "%s/big.bin", dir);
    snprintf(want, sizeof want, "%s/want.bin", dir);
    write_mtx(mtx, BIG, BIG, kind, FINE);
    tu_label("%s, %d x %d", kind_name[kind], BIG, BIG);
    deso_ctx *ctx = tu_ctx_budget(DESO_MODE_NONE, 0, 0, NB, BIG_BUDGET, dir);
    int64_t before = peak_kib(1);
    deso_mat *A = NULL;
    deso_stats_reset();
    deso__alloc_largest_reset();
    TU_CALL(deso_mat_from_mtx(ctx, mtx, &A));
    /* no allocation near a rank's share of the matrix, in any build     */
    int64_t held = (int64_t)deso__alloc_largest();
    TU_CHECK(tu_all(held < (int64_t)BIG * BIG * 8 / 10 / tu_size()));
    TU_CHECK(written_sum() == (int64_t)BIG * BIG * 8);
    int64_t loaded = (peak_kib(0) - before) * 1024;
    if (A != NULL) TU_CALL(deso_mat_to_file(A, bin));
    int64_t converted = (peak_kib(0) - before) * 1024;
#ifndef __SANITIZE_ADDRESS__
    /* (AddressSanitizer's shadow and quarantine are resident memory of
     * their own: there only the allocations say what the library holds) */
    TU_CHECK(tu_all(loaded < (int64_t)BIG * BIG * 8 / 10 &&
                    converted < (int64_t)BIG * BIG * 8 / 3));
#else
    (void)loaded;
    (void)converted;
#endif
    TU_CALL(deso_mat_destroy(&A));
    TU_OK(deso_finalize(&ctx));
    /* the same file from the generator's in-core matrix                  */
    ctx = tu_ctx_mode(DESO_MODE_NONE, 0, 0, NB);
    TU_CALL(deso_mat_from_fn(ctx, BIG, BIG, elem, &kind, &A));
    if (A != NULL) TU_CALL(deso_mat_to_file(A, want));
    TU_CHECK(tu_all(same_files(bin, want)));
    TU_CALL(deso_mat_destroy(&A));
    TU_OK(deso_finalize(&ctx));
    if (rank() == 0) {
        remove(mtx);
        remove(bin);
        remove(want);
    }
    tu_case_end();
}

/* First in this program, so that the peak before it is its own start's
 * even where it cannot be reset.                                        */
static void test_conversion_memory_bounded(void **state)
{
    (void)state;
    char dir[512];
    assert_true(tu_all(tu_scratch_dir("ooc-mtx", dir, sizeof dir) == 0));
    convert_case(GENERAL, dir);
    convert_case(SYMMETRIC, dir);
    TU_SYNC();
    tu_scratch_done(dir);
}

/* ---- awkward sizes, every mode ------------------------------------------ */

/* The files of this test: each kind at each shape (symmetric ones square). */
#define NCASES 7
static const struct {
    int kind;
    int64_t m, n;
} cases[NCASES] = {{GENERAL, 37, 29}, {GENERAL, 1, 1},    {GENERAL, 2, 9},
                   {SYMMETRIC, 31, 31}, {SYMMETRIC, 1, 1}, {SKEW, 31, 31},
                   {SKEW, 5, 5}};

static void case_path(const char *dir, int c, char *path, size_t len)
{
    snprintf(path, len, "%s/s%d.mtx", dir, c);
}

/* Every case's file loaded on ctx: the product is want's bits; out of
 * core (budget), each element was written to the files once.            */
static void load_cases(deso_ctx *ctx, const char *dir, double (*want)[37],
                       const char *how, int64_t budget)
{
    for (int c = 0; c < NCASES; c++) {
        int64_t m = cases[c].m, n = cases[c].n;
        tu_label("%s, %s, %lld x %lld", how, kind_name[cases[c].kind],
                 (long long)m, (long long)n);
        char path[600];
        case_path(dir, c, path, sizeof path);
        double got[37];
        deso_mat *A = NULL;
        deso_stats_reset();
        TU_CALL(deso_mat_from_mtx(ctx, path, &A));
        int64_t w = written_sum();
        /* out of core when some rank's piece exceeds its budget; the
         * smallest budget is below every piece of the larger cases      */
        TU_CHECK(w == 0 || w == m * n * 8);
        TU_CHECK(budget != 64 || m * n < 64 || w == m * n * 8);
        TU_CHECK(budget != 0 || w == 0);
        memset(got, 0, sizeof got);
        if (A != NULL) tu_ooc_product(ctx, A, m, n, got);
        TU_CHECK(memcmp(want[c], got, (size_t)m * sizeof *got) == 0);
        tu_case_end();
    }
}

/* In one mode: in core with each unit limit (one column, a part of a
 * block column, whole block columns, all), out of core with each budget
 * (a few hundred bytes to whole pieces).  The reading is the same in
 * every mode, the product of what was read is not: the other modes take
 * one budget.                                                            */
static void sizes_mode(deso_mode mode, const char *dir)
{
    double want[NCASES][37];
    char how[96];
    deso_ctx *ctx = tu_ctx_mode(mode, 0, 0, NB);
    for (int c = 0; c < NCASES; c++) {
        int kind = cases[c].kind;
        product_of_fn(ctx, cases[c].m, cases[c].n, kind, want[c]);
    }
    static const int64_t units[3] = {1, 2 * NB + 3, 1 << 22};
    for (int u = 0; u < 3 && mode == DESO_MODE_NONE; u++) {
        /* in doubles: units[u] columns of the tallest case               */
        deso__mtx_unit_limit(units[u] * 37);
        snprintf(how, sizeof how, "%s, in core, unit %lld",
                 deso_mode_name(mode), (long long)units[u]);
        load_cases(ctx, dir, want, how, 0);
    }
    deso__mtx_unit_limit(0);
    TU_OK(deso_finalize(&ctx));
    static const int64_t budgets[3] = {2048, 64, 64 << 10};
    for (int b = 0; b < (mode == DESO_MODE_NONE ? 3 : 1); b++) {
        ctx = tu_ctx_budget(mode, 0, 0, NB, budgets[b], dir);
        snprintf(how, sizeof how, "%s, budget %lld", deso_mode_name(mode),
                 (long long)budgets[b]);
        load_cases(ctx, dir, want, how, budgets[b]);
        TU_OK(deso_finalize(&ctx));
    }
}

static void test_array_files_every_size(void **state)
{
    (void)state;
    char dir[512], path[600];
    assert_true(tu_all(tu_scratch_dir("ooc-mtx", dir, sizeof dir) == 0));
    for (int c = 0; c < NCASES; c++) {
        case_path(dir, c, path, sizeof path);
        write_mtx(path, cases[c].m, cases[c].n, cases[c].kind, FINE);
    }
    for (int k = 0; k < TU_NMODES; k++) sizes_mode(tu_mode(k), dir);
    TU_SYNC();
    for (int c = 0; c < NCASES && rank() == 0; c++) {
        case_path(dir, c, path, sizeof path);
        remove(path);
    }
    tu_scratch_done(dir);
}

/* ---- hostile files ------------------------------------------------------- */

/* Whether one of this process's descriptors names a file in dir.        */
static int fd_in(const char *dir)
{
    char want[600];
    snprintf(want, sizeof want, "%s/", dir);
    return tu_fd_named(want, NULL);
}

/* Each faulty file on ctx, out of core (budget) or in core, in units of
 * three columns: one error everywhere, the same message naming the
 * fault; nothing left in files; the next matrix right.                   */
static void hostile_files(deso_ctx *ctx, const char *dir, const char *files,
                          int64_t budget)
{
    const int64_t n = 45;
    static const char *what[] = {"", "ends early", "expected one finite "
                                 "value", "data after the last entry"};
    char bad[600], good[600];
    snprintf(bad, sizeof bad, "%s/bad.mtx", dir);
    snprintf(good, sizeof good, "%s/good.mtx", dir);
    for (int kind = 0; kind < NKINDS; kind++)
        for (int fault = TRUNCATED; fault <= TRAILING; fault++) {
            tu_label("%s, fault %d, budget %lld", kind_name[kind], fault,
                     (long long)budget);
            write_mtx(bad, n, n, kind, fault);
            deso__mtx_unit_limit(3 * n);
            deso_mat *A = NULL;
            TU_ERR(deso_mat_from_mtx(ctx, bad, &A), DESO_EIO);
            /* the same message on every rank: rank 0's                   */
            char msg[512], msg0[512];
            snprintf(msg, sizeof msg, "%s", deso_last_error());
            memcpy(msg0, msg, sizeof msg);
            MPI_Bcast(msg0, (int)sizeof msg0, MPI_CHAR, 0, MPI_COMM_WORLD);
            TU_CHECK(tu_all(A == NULL && strcmp(msg, msg0) == 0 &&
                            strstr(msg, "Matrix Market") != NULL &&
                            strstr(msg, what[fault]) != NULL));
            TU_CHECK(tu_all(tu_dir_empty(files) && !fd_in(files)));
            deso__mtx_unit_limit(0);
            write_mtx(good, n, n, kind, FINE);
            double want[45], got[45];
            product_of_fn(ctx, n, n, kind, want);
            TU_CALL(deso_mat_from_mtx(ctx, good, &A));
            if (A != NULL) tu_ooc_product(ctx, A, n, n, got);
            TU_CHECK(memcmp(want, got, sizeof want) == 0);
            tu_case_end();
        }
    if (rank() == 0) {
        remove(bad);
        remove(good);
    }
}

static void test_hostile_files_fail_everywhere(void **state)
{
    (void)state;
    char dir[512], files[512];
    assert_true(tu_all(tu_scratch_dir("ooc-mtx", dir, sizeof dir) == 0));
    assert_true(tu_all(tu_scratch_dir("ooc-mtx-f", files, sizeof files) == 0));
    for (int ooc = 0; ooc < 2; ooc++) {
        int64_t budget = ooc ? 1024 : 0;
        deso_ctx *ctx = tu_ctx_budget(DESO_MODE_FULL, 0, 0, NB, budget, files);
        hostile_files(ctx, dir, files, budget);
        TU_OK(deso_finalize(&ctx));
    }
    TU_SYNC();
    tu_scratch_done(files);
    tu_scratch_done(dir);
}

TU_MAIN_SETUP(tu_ooc_setup,
        cmocka_unit_test(test_conversion_memory_bounded),
        cmocka_unit_test(test_array_files_every_size),
        cmocka_unit_test(test_hostile_files_fail_everywhere))
