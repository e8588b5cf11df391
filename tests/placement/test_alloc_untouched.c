/* Zeroed arrays that take no memory until written (placement/alloc.h):
 * deso__zero_untouched clears a dirty buffer at awkward offsets and
 * sizes, every byte of it and nothing outside it, and (on Linux) leaves
 * the whole pages inside it not resident (mincore) until they are
 * written; deso__calloc_untouched gives zeros at every size, is one
 * counted and injectable call of the wrappers, and fails for a size
 * that overflows.                                                       */
#define _DEFAULT_SOURCE                 /* mincore                       */
#include "pl_test.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "placement/alloc.h"

#define FILL 0xA5
#define GUARD 64

static size_t page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (size_t)ps : 4096;
}

/* How many of the whole pages in [p, p + size) are resident.            */
static size_t resident_pages(const unsigned char *p, size_t size)
{
    size_t ps = page_size();
    uintptr_t a = ((uintptr_t)p + ps - 1) & ~(uintptr_t)(ps - 1);
    uintptr_t b = ((uintptr_t)p + size) & ~(uintptr_t)(ps - 1);
    if (b <= a) return 0;
    size_t n = (size_t)(b - a) / ps, got = 0;
    unsigned char *vec = malloc(n);
    assert_non_null(vec);
    assert_int_equal(mincore((void *)a, (size_t)(b - a), vec), 0);
    for (size_t k = 0; k < n; k++) got += vec[k] & 1;
    free(vec);
    return got;
}

static void expect_bytes(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t k = 0; k < n; k++)
        if (p[k] != v) fail_msg("byte %zu is %d, not %d", k, p[k], v);
}

/* A dirty buffer cleared from offset off for size bytes: zeros there,
 * the guards around it untouched, and the whole pages inside given back
 * (Linux) when the area is large enough to bother.                      */
static void clear_at(size_t off, size_t size, bool expect_released)
{
    size_t total = off + size + GUARD;
    unsigned char *buf = malloc(total);
    assert_non_null(buf);
    memset(buf, FILL, total);
    deso__zero_untouched(buf + off, size);
#ifdef __linux__
    if (expect_released)
        assert_int_equal(resident_pages(buf + off, size), 0);
#else
    (void)expect_released;
#endif
    expect_bytes(buf, off, FILL);
    expect_bytes(buf + off, size, 0);
    expect_bytes(buf + off + size, GUARD, FILL);
    /* written again, the pages hold what is written                     */
    memset(buf + off, 7, size);
    expect_bytes(buf + off, size, 7);
    free(buf);
}

static void test_zero_untouched(void **state)
{
    (void)state;
    size_t ps = page_size();
    clear_at(0, 0, false);
    clear_at(13, 1, false);
    clear_at(5, 3 * ps + 11, false);      /* below 64 KiB: cleared        */
    clear_at(0, (size_t)1 << 20, true);
    clear_at(13, ((size_t)1 << 20) + 7, true);
    clear_at(ps - 1, 64 * ps + 1, true);
    clear_at(GUARD, ((size_t)9 << 20) + 3, true);   /* huge-page advice  */
}

static void test_calloc_untouched(void **state)
{
    (void)state;
    static const size_t counts[] = {0, 1, 1000, 8191, 8192, 131073,
                                    (size_t)1 << 20};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        long before = deso__alloc_count();
        double *p = deso__calloc_untouched(counts[k], sizeof(double));
        assert_non_null(p);
        assert_int_equal(deso__alloc_count(), before + 1);
        for (size_t i = 0; i < counts[k]; i++)
            if (p[i] != 0.0) fail_msg("count %zu: element %zu", counts[k], i);
        free(p);
        /* the same call injected: NULL once, then again an array        */
        deso__alloc_fail_after(0);
        assert_null(deso__calloc_untouched(counts[k], sizeof(double)));
        p = deso__calloc_untouched(counts[k], sizeof(double));
        assert_non_null(p);
        free(p);
    }
    long before = deso__alloc_count();
    assert_null(deso__calloc_untouched(SIZE_MAX / 4, 8));
    assert_int_equal(deso__alloc_count(), before + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_untouched),
        cmocka_unit_test(test_calloc_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
