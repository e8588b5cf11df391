/* The streaming coordinate reader against a brute-force dense reading of
 * the same text by the whole-file parser (deso/io/mtx.c), for every way of
 * cutting the rows into P blocks; hostile input it must refuse with one
 * clear message, allocating nothing a header asked for, and refuse as the
 * dense reader does (the two share one stream); files that change
 * between the reader's two readings; and the reader's peak heap, measured
 * by counting every byte the process allocates while it reads.  MPI-free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deso/io/mtx.h"
#include "deso/io/mtx_coo.h"
#include "placement/alloc.h"
#include "placement/halo.h"
#include "tests/serial_util.h"

/* ---- heap meter ------------------------------------------------------------
 * Bytes the whole process holds on the heap, and their peak, while
 * heap_on is set: the library frees with plain free(), so the allocation
 * wrappers alone cannot tell what is held.  Under AddressSanitizer its
 * allocator reports every allocation and release to hooks; otherwise this
 * program replaces malloc and friends (glibc supports replacing them) and
 * forwards to glibc's own, counting usable sizes.                         */
static long long heap_now, heap_peak;
static int heap_on;

static void heap_add(long long bytes)
{
    if (!heap_on) return;
    heap_now += bytes;
    if (heap_now > heap_peak) heap_peak = heap_now;
}

#if defined(__SANITIZE_ADDRESS__)
void __sanitizer_install_malloc_and_free_hooks(
    void (*on_malloc)(const volatile void *p, size_t size),
    void (*on_free)(const volatile void *p));
size_t __sanitizer_get_allocated_size(const volatile void *p);

static void hook_malloc(const volatile void *p, size_t size)
{
    (void)p;
    heap_add((long long)size);
}

static void hook_free(const volatile void *p)
{
    heap_add(-(long long)__sanitizer_get_allocated_size(p));
}

/* Once: each call adds another pair of hooks.                            */
static void heap_meter_install(void)
{
    static int installed;
    if (!installed) __sanitizer_install_malloc_and_free_hooks(hook_malloc, hook_free);
    installed = 1;
}
#else
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);
size_t malloc_usable_size(void *p);

void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    if (p) heap_add((long long)malloc_usable_size(p));
    return p;
}

void *calloc(size_t count, size_t size)
{
    void *p = __libc_calloc(count, size);
    if (p) heap_add((long long)malloc_usable_size(p));
    return p;
}

void free(void *p)
{
    if (p) heap_add(-(long long)malloc_usable_size(p));
    __libc_free(p);
}

/* A block that moves exists twice for a moment: counted so.             */
void *realloc(void *p, size_t size)
{
    long long old = p ? (long long)malloc_usable_size(p) : 0;
    void *q = __libc_realloc(p, size);
    if (q == NULL) return NULL;
    if (q == p) {
        heap_add((long long)malloc_usable_size(q) - old);
        return q;
    }
    heap_add((long long)malloc_usable_size(q));
    heap_add(-old);
    return q;
}

static void heap_meter_install(void) {}
#endif

static void heap_start(void)
{
    heap_meter_install();
    heap_now = heap_peak = 0;
    heap_on = 1;
}

/* Rows [lo, hi) of a file held in memory.                                 */
static deso_err read_block(const char *text, size_t len, int64_t lo, int64_t hi,
                           pl_csr *a)
{
    deso__coo *s = NULL;
    memset(a, 0, sizeof *a);
    deso_err e = deso__coo_open_mem(text, len, &s);
    if (e != DESO_OK) return e;
    int64_t lohi[2] = {lo, hi};
    e = deso__coo_read_rows(s, deso__coo_rows_block, lohi, hi - lo, a);
    a->row0 = lo;
    deso__coo_close(s);
    return e;
}

/* The whole-file parser's entries summed into a dense row-major array.   */
static double *dense_reference(const char *text, int64_t *m, int64_t *n)
{
    deso__mtx x;
    assert_int_equal(deso__mtx_parse(text, strlen(text), &x), DESO_OK);
    double *d = calloc((size_t)(x.m * x.n + 1), sizeof *d);
    for (int64_t k = 0; k < x.nnz; k++) d[x.row[k] * x.n + x.col[k]] += x.val[k];
    *m = x.m;
    *n = x.n;
    deso__mtx_free(&x);
    return d;
}

/* Rows of a, checked against the dense reference: sorted unique columns,
 * the same values, and every nonzero of the reference present.  Pattern
 * files hold explicit entries whose sum may be zero: the CSR keeps them. */
static void expect_rows_match(const pl_csr *a, const double *d, int64_t n)
{
    for (int64_t r = 0; r < a->nrows; r++) {
        int64_t i = a->row0 + r, found = 0;
        for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++) {
            if (e > a->rowptr[r]) assert_true(a->col[e - 1] < a->col[e]);
            assert_true(a->val[e] == d[i * n + a->col[e]]);
            found += d[i * n + a->col[e]] != 0.0;
        }
        int64_t want = 0;
        for (int64_t j = 0; j < n; j++) want += d[i * n + j] != 0.0;
        assert_int_equal(found, want);
    }
}

static void expect_all_blocks_match(const char *text)
{
    int64_t m, n;
    double *d = dense_reference(text, &m, &n);
    for (int P = 1; P <= 6; P++) {
        pl_blocks b = {m, P};
        int64_t total = 0;
        for (int r = 0; r < P; r++) {
            int64_t lo, hi;
            pl_blocks_range(&b, r, &lo, &hi);
            pl_csr a;
            assert_int_equal(read_block(text, strlen(text), lo, hi, &a), DESO_OK);
            assert_int_equal(a.nrows, hi - lo);
            assert_int_equal(a.ncols, n);
            expect_rows_match(&a, d, n);
            total += a.nrows;
            pl_csr_free(&a);
        }
        assert_int_equal(total, m);
    }
    free(d);
}

/* A random coordinate file: duplicates, empty rows, all fields.          */
static char *random_file(tu_rng *g, const char *field, int symmetric)
{
    int64_t m = 1 + tu_below(g, 9), n = symmetric ? m : 1 + tu_below(g, 9);
    int64_t entries = tu_below(g, m * n + 1);
    size_t cap = 128 + (size_t)entries * 64, at = 0;
    char *t = malloc(cap);
    at += (size_t)snprintf(t, cap, "%%%%MatrixMarket matrix coordinate %s %s\n"
                           "%% a comment\n%lld %lld %lld\n", field,
                           symmetric ? "symmetric" : "general", (long long)m,
                           (long long)n, (long long)entries);
    for (int64_t k = 0; k < entries; k++) {
        int64_t i = tu_below(g, m), j = tu_below(g, n);
        if (symmetric && j > i) { int64_t s = i; i = j; j = s; }
        double v = strcmp(field, "integer") == 0 ? (double)tu_below(g, 7) - 3
                                                 : tu_rand(g);
        if (strcmp(field, "pattern") == 0)
            at += (size_t)snprintf(t + at, cap - at, "%lld %lld\n", (long long)i + 1, (long long)j + 1);
        else
            at += (size_t)snprintf(t + at, cap - at, "%lld %lld %.17g\n",
                                   (long long)i + 1, (long long)j + 1, v);
    }
    return t;
}

static void test_random_files_match_dense(void **state)
{
    (void)state;
    tu_rng g = {20};
    const char *fields[] = {"real", "integer", "pattern"};
    for (int k = 0; k < 120; k++) {
        char *t = random_file(&g, fields[k % 3], (k / 3) % 2);
        expect_all_blocks_match(t);
        free(t);
    }
}

static void test_symmetric_expanded_and_duplicates_summed(void **state)
{
    (void)state;
    const char *t = "%%MatrixMarket matrix coordinate real symmetric\n"
                    "3 3 5\n1 1 2\n3 1 5\n3 1 0.5\n3 3 7\n2 2 1\n";
    pl_csr a;
    assert_int_equal(read_block(t, strlen(t), 0, 3, &a), DESO_OK);
    int64_t want_ptr[] = {0, 2, 3, 5}, want_col[] = {0, 2, 1, 0, 2};
    double want_val[] = {2, 5.5, 1, 5.5, 7};
    for (int r = 0; r <= 3; r++) assert_int_equal(a.rowptr[r], want_ptr[r]);
    for (int e = 0; e < 5; e++) {
        assert_int_equal(a.col[e], want_col[e]);
        assert_true(a.val[e] == want_val[e]);
    }
    pl_csr_free(&a);
    expect_all_blocks_match(t);
}

static void test_pattern_empty_rows_single_entry(void **state)
{
    (void)state;
    const char *t = "%%MatrixMarket matrix coordinate pattern general\n"
                    "5 4 2\n4 2\n4 2\n";
    pl_csr a;
    assert_int_equal(read_block(t, strlen(t), 0, 5, &a), DESO_OK);
    assert_int_equal(a.rowptr[5], 1);
    assert_int_equal(a.rowptr[3], 0);
    assert_int_equal(a.rowptr[4], 1);
    assert_true(a.col[0] == 1 && a.val[0] == 2.0);
    pl_csr_free(&a);
    expect_all_blocks_match(t);
    /* n < P: blocks of one row and empty ones                               */
    expect_all_blocks_match("%%MatrixMarket matrix coordinate real general\n"
                            "1 1 1\n1 1 -3\n");
    expect_all_blocks_match("%%MatrixMarket matrix coordinate real general\n"
                            "2 3 0\n");
}

static void expect_refused(const char *text, size_t len, deso_err want,
                           const char *says)
{
    long before = deso__alloc_count();
    pl_csr a;
    deso_err e = read_block(text, len, 0, 1, &a);
    if (e != want || strstr(deso_last_error(), says) == NULL)
        print_error("%s -> %s '%s', expected %s '%s'\n", text, deso_errname(e),
                    deso_last_error(), deso_errname(want), says);
    assert_int_equal(e, want);
    assert_non_null(strstr(deso_last_error(), says));
    assert_null(a.rowptr);
    /* the stream, and at most the kept entries of one row: never a size
     * taken from the header                                                */
    assert_true(deso__alloc_count() - before <= 8);
}

#define REFUSE(t, code, says) expect_refused((t), strlen(t), (code), (says))
#define BANNER "%%MatrixMarket matrix coordinate real general\n"

static void test_hostile_headers(void **state)
{
    (void)state;
    REFUSE("", DESO_EIO, "empty file");
    REFUSE("hello world\n", DESO_EIO, "banner");
    REFUSE("%%MatrixMarket matrix array real general\n1 1\n1\n", DESO_ENOTSUP, "array");
    REFUSE("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", DESO_ENOTSUP, "complex");
    REFUSE("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", DESO_ENOTSUP, "hermitian");
    REFUSE("%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", DESO_ENOTSUP, "vector");
    REFUSE(BANNER, DESO_EIO, "missing size line");
    REFUSE(BANNER "2 2\n", DESO_EIO, "size line");
    REFUSE(BANNER "1099511627776 2 1\n1 1 1\n", DESO_ESIZE, "out of range");
    REFUSE(BANNER "-2 2 1\n1 1 1\n", DESO_ESIZE, "out of range");
    REFUSE(BANNER "99999999999999999999 2 1\n1 1 1\n", DESO_EIO, "size line");
    REFUSE(BANNER "1000000000 1000000000 999999999999\n1 1 1\n", DESO_EIO,
           "more than the file can hold");
    REFUSE(BANNER "2 2 5\n1 1 1\n", DESO_ESIZE, "cannot fit");
    REFUSE("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n",
           DESO_ESIZE, "square");
    /* a valid header whose rows would not fit one rank's row pointers    */
    const char *t = BANNER "1099511627775 3 1\n1 1 1\n";
    pl_csr a;
    long before = deso__alloc_count();
    assert_int_equal(read_block(t, strlen(t), 0, (int64_t)1 << 32, &a), DESO_ESIZE);
    assert_non_null(strstr(deso_last_error(), "use more ranks"));
    assert_true(deso__alloc_count() - before <= 1);
}

static void test_hostile_entries(void **state)
{
    (void)state;
    REFUSE(BANNER "2 2 3\n1 1 1\n2 2 1\n", DESO_EIO, "expected 3 entries, found 2");
    REFUSE(BANNER "2 2 1\n1 1 1\n2 2 1\n", DESO_EIO, "line 4: data after");
    REFUSE(BANNER "2 2 1\n0 1 1\n", DESO_EIO, "line 3: index (0, 1) outside");
    REFUSE(BANNER "2 2 1\n3 1 1\n", DESO_EIO, "outside 2 x 2");
    REFUSE(BANNER "2 2 1\n1 -1 1\n", DESO_EIO, "outside");
    REFUSE(BANNER "2 2 1\n1 1 nan\n", DESO_EIO, "non-finite");
    REFUSE(BANNER "2 2 1\n1 1 1e999\n", DESO_EIO, "non-finite");
    REFUSE(BANNER "2 2 1\n1 1 1 x\n", DESO_EIO, "trailing");
    REFUSE(BANNER "2 2 1\n1\n", DESO_EIO, "expected 'row col value'");
    REFUSE("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n",
           DESO_EIO, "above the diagonal");
    REFUSE("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
           DESO_EIO, "diagonal entry");
    char nul[] = BANNER "1 1 1\n1 1 1\n";
    nul[strlen(nul) - 3] = '\0';
    expect_refused(nul, sizeof nul - 1, DESO_EIO, "NUL");
    size_t big = 3000;
    char *t = malloc(big + 64);
    int at = snprintf(t, big + 64, "%s1 1 1\n1 1 ", BANNER);
    memset(t + at, '1', big - (size_t)at);
    t[big] = '\0';
    REFUSE(t, DESO_EIO, "too long");
    free(t);
}

/* Both readers stand on one stream: a hostile coordinate file is the same
 * error, word for word, from the dense reader as from this one.         */
static void expect_same_refusal(const char *text)
{
    pl_csr a;
    deso_err sparse = read_block(text, strlen(text), 0, 1, &a);
    char said[512];
    snprintf(said, sizeof said, "%s", deso_last_error());
    deso__mtx x;
    deso_err dense = deso__mtx_parse(text, strlen(text), &x);
    if (sparse == DESO_OK || dense != sparse ||
        strcmp(said, deso_last_error()) != 0)
        print_error("%s -> sparse %s '%s', dense %s '%s'\n", text,
                    deso_errname(sparse), said, deso_errname(dense),
                    deso_last_error());
    assert_int_not_equal(sparse, DESO_OK);
    assert_int_equal(dense, sparse);
    assert_string_equal(said, deso_last_error());
}

static void test_readers_refuse_alike(void **state)
{
    (void)state;
    expect_same_refusal("%%MatrixMarket matrix coordinate complex general\n1 1 1\n");
    expect_same_refusal("%%MatrixMarket matrix coordinate pattern skew-symmetric\n"
                        "2 2 1\n2 1\n");
    expect_same_refusal(BANNER "2 2\n");
    expect_same_refusal(BANNER "-2 2 1\n1 1 1\n");
    expect_same_refusal(BANNER "2 2 5\n1 1 1\n");
    expect_same_refusal(BANNER "1000000000 1000000000 999999999999\n1 1 1\n");
    expect_same_refusal(BANNER "2 2 3\n1 1 1\n2 2 1\n");
    expect_same_refusal(BANNER "2 2 1\n1 1 1\n2 2 1\n");
    expect_same_refusal(BANNER "2 2 1\n2 3 1\n");
    expect_same_refusal(BANNER "2 2 1\n1 1 inf\n");
    expect_same_refusal(BANNER "2 2 1\n1 1 1 x\n");
    expect_same_refusal("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n");
    expect_same_refusal("%%MatrixMarket matrix coordinate real skew-symmetric\n"
                        "2 2 1\n2 2 1\n");
}

/* A file longer than the reader's window, read from disk and from memory:
 * the same rows; lines cut by the window boundary still parse.           */
static void test_file_matches_memory(void **state)
{
    (void)state;
    tu_rng g = {7};
    int64_t m = 300, entries = 6000;
    size_t cap = 64 + (size_t)entries * 48, at = 0;
    char *t = malloc(cap);
    at += (size_t)snprintf(t, cap, "%s%lld %lld %lld\n", BANNER, (long long)m,
                           (long long)m, (long long)entries);
    for (int64_t k = 0; k < entries; k++)
        at += (size_t)snprintf(t + at, cap - at, "%lld %lld %.17g\n",
                               (long long)tu_below(&g, m) + 1,
                               (long long)tu_below(&g, m) + 1, tu_rand(&g));
    assert_true(at > ((size_t)1 << 16));
    char path[256];
    assert_int_equal(tu_temp_file("mtx-coo", t, at, path, sizeof path), 0);
    deso__coo *s = NULL;
    assert_int_equal(deso__coo_open_file(path, &s), DESO_OK);
    int64_t lohi[2] = {100, 200};
    pl_csr a, b;
    assert_int_equal(deso__coo_read_rows(s, deso__coo_rows_block, lohi, 100, &a), DESO_OK);
    deso__coo_close(s);
    assert_int_equal(read_block(t, at, 100, 200, &b), DESO_OK);
    assert_int_equal(a.rowptr[100], b.rowptr[100]);
    for (int64_t e = 0; e < a.rowptr[100]; e++)
        assert_true(a.col[e] == b.col[e] && a.val[e] == b.val[e]);
    pl_csr_free(&a);
    pl_csr_free(&b);
    unlink(path);
    free(t);
    assert_int_equal(deso__coo_open_file(path, &s), DESO_EIO);
    assert_null(s);
}

/* text to a fresh file; its name in path.                               */
static void write_file(const char *text, size_t len, char path[256])
{
    assert_int_equal(tu_temp_file("mtx-coo", text, len, path, 256), 0);
}

/* The 5-point Laplacian on a g x g grid: its lower triangle (symmetric)
 * or every entry (general), no duplicates.                               */
static char *laplacian_file(int64_t g, int symmetric, size_t *len)
{
    int64_t n = g * g, entries = symmetric ? 3 * n - 2 * g : 5 * n - 4 * g;
    size_t cap = 128 + (size_t)entries * 32, at = 0;
    char *t = malloc(cap);
    at += (size_t)snprintf(t, cap, "%%%%MatrixMarket matrix coordinate real "
                           "%s\n%lld %lld %lld\n", symmetric ? "symmetric" :
                           "general", (long long)n, (long long)n, (long long)entries);
    for (int64_t i = 0; i < n; i++) {
        int64_t x = i / g, y = i % g;
        int64_t nb[5] = {x > 0 ? i - g : -1, y > 0 ? i - 1 : -1, i,
                         y < g - 1 ? i + 1 : -1, x < g - 1 ? i + g : -1};
        for (int k = 0; k < 5; k++)
            if (nb[k] >= 0 && (!symmetric || nb[k] <= i))
                at += (size_t)snprintf(t + at, cap - at, "%lld %lld %s\n",
                                       (long long)i + 1, (long long)nb[k] + 1,
                                       nb[k] == i ? "4" : "-1");
    }
    *len = at;
    return t;
}

/* The reader's heap at its peak, from opening the file to closing it,
 * less what the CSR it returns holds: the fixed read buffer, the stream
 * and stdio's FILE, never a second copy of the entries.  The peak the
 * target allows a rank is 1.5x its CSR; this bound is much tighter.     */
#define READER_FIXED_BYTES ((long long)128 << 10)

static void expect_peak_is_the_csr(const char *path, int64_t lo, int64_t hi)
{
    deso__coo *s = NULL;
    int64_t lohi[2] = {lo, hi};
    pl_csr a;
    heap_start();
    deso_err e = deso__coo_open_file(path, &s);
    if (e == DESO_OK)
        e = deso__coo_read_rows(s, deso__coo_rows_block, lohi, hi - lo, &a);
    deso__coo_close(s);
    heap_on = 0;
    assert_int_equal(e, DESO_OK);
    long long csr = 8LL * (a.nrows + 1) + 16LL * a.rowptr[a.nrows];
    print_message("rows [%lld, %lld): CSR %lld bytes, reader's peak %lld "
                  "bytes (%.3fx)\n", (long long)lo, (long long)hi, csr,
                  heap_peak, (double)heap_peak / (double)csr);
    assert_true(csr > 1000000);
    assert_true(heap_peak <= csr + READER_FIXED_BYTES);
    pl_csr_free(&a);
}

static void test_peak_heap_is_the_csr(void **state)
{
    (void)state;
    for (int symmetric = 0; symmetric <= 1; symmetric++) {
        size_t len;
        char *t = laplacian_file(300, symmetric, &len);
        char path[256];
        write_file(t, len, path);
        free(t);
        expect_peak_is_the_csr(path, 0, 300 * 300);
        expect_peak_is_the_csr(path, 30000, 60000);
        unlink(path);
    }
}

/* The first reading of `before`, the second of `after` (the same length:
 * a file held in memory keeps its length): refused, nothing kept.       */
static void expect_change_caught(const char *before, const char *after,
                                 int64_t lo, int64_t hi, const char *says)
{
    size_t len = strlen(before);
    assert_int_equal(strlen(after), len);
    char *t = malloc(len);
    memcpy(t, before, len);
    deso__coo *s = NULL;
    assert_int_equal(deso__coo_open_mem(t, len, &s), DESO_OK);
    int64_t lohi[2] = {lo, hi};
    pl_csr a;
    assert_int_equal(deso__coo_count_rows(s, deso__coo_rows_block, lohi,
                                          hi - lo, &a), DESO_OK);
    memcpy(t, after, len);
    deso_err e = deso__coo_fill_rows(s, &a);
    if (e != DESO_EIO || strstr(deso_last_error(), says) == NULL)
        print_error("%s -> %s '%s'\n", after, deso_errname(e), deso_last_error());
    assert_int_equal(e, DESO_EIO);
    assert_non_null(strstr(deso_last_error(), says));
    assert_true(a.rowptr == NULL && a.col == NULL && a.val == NULL);
    deso__coo_close(s);
    free(t);
}

#define CHANGED "changed between its two readings"

static void test_file_changed_between_readings(void **state)
{
    (void)state;
    const char *was = BANNER "3 3 3\n1 1 1\n2 2 1\n3 3 1\n";
    /* an entry moved to a row counted with fewer, the total unchanged   */
    expect_change_caught(was, BANNER "3 3 3\n1 1 1\n1 2 1\n3 3 1\n", 0, 3, CHANGED);
    expect_change_caught(was, BANNER "3 3 3\n1 1 1\n3 2 1\n3 3 1\n", 0, 3, CHANGED);
    /* a row over its count before the next row's first entry, which then
     * finds its slot taken: the ends alone look right                    */
    expect_change_caught(BANNER "2 2 3\n1 1 1\n2 1 1\n2 2 1\n",
                         BANNER "2 2 3\n1 1 1\n1 2 1\n2 2 1\n", 0, 2, CHANGED);
    /* every entry into the first row; into the last, past the end        */
    expect_change_caught(was, BANNER "3 3 3\n1 1 1\n1 2 1\n1 3 1\n", 0, 3, CHANGED);
    expect_change_caught(was, BANNER "3 3 3\n3 1 1\n3 2 1\n3 3 1\n", 0, 3, CHANGED);
    expect_change_caught(was, BANNER "3 3 3\n1 1 1\n3 2 1\n3 3 1\n", 1, 3, CHANGED);
    /* only a value, and only a row this reader does not keep             */
    expect_change_caught(was, BANNER "3 3 3\n1 1 1\n2 2 7\n3 3 1\n", 0, 3, CHANGED);
    expect_change_caught(was, BANNER "3 3 3\n1 1 1\n2 2 1\n3 2 1\n", 0, 1, CHANGED);
    /* the header                                                          */
    expect_change_caught(was, BANNER "3 4 3\n1 1 1\n2 2 1\n3 3 1\n", 0, 3, CHANGED);
    expect_change_caught("%%MatrixMarket matrix coordinate real   general\n"
                         "3 3 3\n1 1 1\n2 2 1\n3 3 1\n",
                         "%%MatrixMarket matrix coordinate real symmetric\n"
                         "3 3 3\n1 1 1\n2 2 1\n3 3 1\n", 0, 3, CHANGED);
    /* now malformed: the parse says where                                */
    expect_change_caught(was, BANNER "3 3 3\n1 1 1\n2 9 1\n3 3 1\n", 0, 3,
                         "line 4: index (2, 9) outside");
}

/* The file on disk rewritten between the readings, and a pipe, which
 * cannot be read twice.                                                   */
static void test_disk_file_changed_and_pipe(void **state)
{
    (void)state;
    const char *was = BANNER "4 4 2\n1 1 1\n4 4 1\n";
    char path[256];
    write_file(was, strlen(was), path);
    deso__coo *s = NULL;
    int64_t lohi[2] = {0, 4};
    pl_csr a;
    assert_int_equal(deso__coo_open_file(path, &s), DESO_OK);
    assert_int_equal(deso__coo_count_rows(s, deso__coo_rows_block, lohi, 4, &a), DESO_OK);
    const char *now = BANNER "4 4 3\n1 1 1\n4 4 1\n4 1 1\n";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(now, 1, strlen(now), f), strlen(now));
    fclose(f);
    assert_int_equal(deso__coo_fill_rows(s, &a), DESO_EIO);
    assert_non_null(strstr(deso_last_error(), CHANGED));
    assert_null(a.rowptr);
    deso__coo_close(s);
    unlink(path);
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    assert_int_equal(write(fd[1], was, strlen(was)), (ssize_t)strlen(was));
    close(fd[1]);
    char name[64];
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd[0]);
    assert_int_equal(deso__coo_open_file(name, &s), DESO_OK);
    assert_int_equal(deso__coo_read_rows(s, deso__coo_rows_block, lohi, 4, &a), DESO_EIO);
    assert_non_null(strstr(deso_last_error(), "cannot be read a second time"));
    assert_null(a.rowptr);
    deso__coo_close(s);
    close(fd[0]);
}

/* Count, then fill, each once, on the arrays the count made.            */
static void test_readings_in_order(void **state)
{
    (void)state;
    const char *t = BANNER "2 2 1\n2 1 5\n";
    deso__coo *s = NULL;
    int64_t lohi[2] = {0, 2};
    pl_csr a, b;
    assert_int_equal(deso__coo_open_mem(t, strlen(t), &s), DESO_OK);
    memset(&a, 0, sizeof a);
    assert_int_equal(deso__coo_fill_rows(s, &a), DESO_ESTATE);
    assert_int_equal(deso__coo_count_rows(s, deso__coo_rows_block, lohi, 2, &a), DESO_OK);
    assert_int_equal(a.rowptr[2], 1);
    assert_int_equal(deso__coo_count_rows(s, deso__coo_rows_block, lohi, 2, &b), DESO_ESTATE);
    assert_null(b.rowptr);
    assert_int_equal(deso__coo_fill_rows(s, &a), DESO_OK);
    assert_true(a.rowptr[1] == 0 && a.col[0] == 0 && a.val[0] == 5.0);
    assert_int_equal(deso__coo_fill_rows(s, &a), DESO_ESTATE);
    pl_csr_free(&a);
    deso__coo_close(s);
}

/* Every allocation of a reading failed in turn: DESO_ENOMEM with nothing
 * kept, or (a refused shrink after summing duplicates) the right rows; a
 * malformed file is reported as malformed even without memory.          */
static void test_out_of_memory(void **state)
{
    (void)state;
    const char *t = BANNER "3 3 4\n1 1 1\n3 2 1\n3 2 2\n2 2 5\n";
    int failed = 1;
    for (int k = 0; failed; k++) {
        deso__coo *s = NULL;
        assert_int_equal(deso__coo_open_mem(t, strlen(t), &s), DESO_OK);
        long injected = deso__alloc_injected();
        deso__alloc_fail_after(k);
        int64_t lohi[2] = {0, 3};
        pl_csr a;
        deso_err e = deso__coo_read_rows(s, deso__coo_rows_block, lohi, 3, &a);
        deso__alloc_fail_after(-1);
        failed = deso__alloc_injected() > injected;
        if (e == DESO_OK) {
            assert_true(a.rowptr[3] == 3 && a.col[2] == 1 && a.val[2] == 3.0);
        } else {
            assert_true(failed && e == DESO_ENOMEM);
            assert_true(a.rowptr == NULL && a.col == NULL && a.val == NULL);
        }
        pl_csr_free(&a);
        deso__coo_close(s);
    }
    const char *bad = BANNER "3 3 2\n1 1 1\n3 4 1\n";
    deso__coo *s = NULL;
    assert_int_equal(deso__coo_open_mem(bad, strlen(bad), &s), DESO_OK);
    deso__alloc_fail_after(0);
    int64_t lohi[2] = {0, 3};
    pl_csr a;
    assert_int_equal(deso__coo_read_rows(s, deso__coo_rows_block, lohi, 3, &a), DESO_EIO);
    assert_non_null(strstr(deso_last_error(), "line 4: index (3, 4) outside"));
    assert_null(a.rowptr);
    deso__coo_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_files_match_dense),
        cmocka_unit_test(test_symmetric_expanded_and_duplicates_summed),
        cmocka_unit_test(test_pattern_empty_rows_single_entry),
        cmocka_unit_test(test_hostile_headers),
        cmocka_unit_test(test_hostile_entries),
        cmocka_unit_test(test_readers_refuse_alike),
        cmocka_unit_test(test_file_matches_memory),
        cmocka_unit_test(test_peak_heap_is_the_csr),
        cmocka_unit_test(test_file_changed_between_readings),
        cmocka_unit_test(test_disk_file_changed_and_pipe),
        cmocka_unit_test(test_readings_in_order),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
