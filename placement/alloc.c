/* Allocation wrappers with fault injection (see alloc.h).                 */
#define _DEFAULT_SOURCE                 /* madvise, MADV_HUGEPAGE (Linux)  */
#include "placement/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_MAKE_MEM_DEFINED
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void)(p), (void)(n))
#endif

/* Arrays of at least this many bytes ask for transparent huge pages: a
 * matrix is streamed through once per product, and 2 MiB pages need fewer
 * page walks to do it.  glibc
 * serves such sizes with a fresh mapping, so the advice comes before the
 * first touch; only the 2 MiB-aligned interior can be huge.  Advice the
 * kernel refuses (huge pages off) is ignored.                             */
#define HUGE_MIN ((size_t)8 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void *advise_huge(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
    if (p != NULL && size >= HUGE_MIN) {
        uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        uintptr_t b = ((uintptr_t)p + size) & ~(HUGE_PAGE - 1);
        if (b > a) (void)madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
    }
#else
    (void)size;
#endif
    return p;
}

static int fail_in = -1;        /* calls left before the injected failure  */
static long n_calls, n_injected;
static size_t largest;          /* the largest request since the reset     */

size_t deso__alloc_largest(void) { return largest; }

void deso__alloc_largest_reset(void) { largest = 0; }

/* Notes a request of size bytes for deso__alloc_largest.                  */
static void note(size_t size)
{
    if (size > largest) largest = size;
}

void deso__alloc_fail_after(int n) { fail_in = n < 0 ? -1 : n; }

long deso__alloc_count(void) { return n_calls; }

long deso__alloc_injected(void) { return n_injected; }

/* True when this call must fail (injected); counts the call.             */
static int inject(void)
{
    n_calls++;
    if (fail_in < 0) return 0;
    if (fail_in-- > 0) return 0;
    fail_in = -1;
    n_injected++;
    return 1;
}

void *deso__malloc(size_t size)
{
    if (inject() || size > DESO__ALLOC_MAX) return NULL;
    note(size);
    return advise_huge(malloc(size > 0 ? size : 1), size);
}

void *deso__calloc(size_t count, size_t size)
{
    if (inject()) return NULL;
    if (size != 0 && count > DESO__ALLOC_MAX / size) return NULL;
    if (count == 0 || size == 0) return calloc(1, 1);
    note(count * size);
    return advise_huge(calloc(count, size), count * size);
}

/* Below this many bytes deso__calloc_untouched is calloc: a page or two
 * is not worth a system call.                                            */
#define UNTOUCHED_MIN ((size_t)64 << 10)

void deso__zero_untouched(void *p, size_t size)
{
    unsigned char *c = p;
#ifdef __linux__
    static uintptr_t page;
    if (page == 0) {
        long ps = sysconf(_SC_PAGESIZE);
        page = ps > 0 ? (uintptr_t)ps : 4096;
    }
    uintptr_t a = ((uintptr_t)c + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)c + size) & ~(page - 1);
    /* Linux gives a private anonymous page back on MADV_DONTNEED and maps
     * a zero page on its next touch; other systems do not promise zeros */
    if (size >= UNTOUCHED_MIN && b > a &&
        madvise((void *)a, (size_t)(b - a), MADV_DONTNEED) == 0) {
        memset(c, 0, (size_t)(a - (uintptr_t)c));
        memset((void *)b, 0, (size_t)((uintptr_t)c + size - b));
        /* memcheck does not know that the pages now read as zeros       */
        VALGRIND_MAKE_MEM_DEFINED((void *)a, (size_t)(b - a));
        return;
    }
#endif
    if (size > 0) memset(c, 0, size);
}

void *deso__calloc_untouched(size_t count, size_t size)
{
    if (size == 0 || count == 0 || count < UNTOUCHED_MIN / size)
        return deso__calloc(count, size);
    if (count > DESO__ALLOC_MAX / size) {
        (void)inject();
        return NULL;
    }
    void *p = deso__malloc(count * size);
    if (p != NULL) deso__zero_untouched(p, count * size);
    return p;
}

void *deso__shrink(void *p, size_t size)
{
    void *q = realloc(p, size > 0 ? size : 1);
    return q != NULL ? q : p;
}

void *deso__realloc(void *p, size_t size)
{
    if (inject() || size > DESO__ALLOC_MAX) return NULL;
    note(size);
    return realloc(p, size > 0 ? size : 1);
}

void deso__alloc_release(void)
{
#ifdef __GLIBC__
    (void)malloc_trim(0);
#endif
}
