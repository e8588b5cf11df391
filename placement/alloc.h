/* Internal: the allocation wrappers of the runtime, with a fault-injection
 * hook for tests.
 *
 * deso__malloc / deso__calloc / deso__realloc behave like their libc
 * namesakes (free with free()), except that
 *   - a request above DESO__ALLOC_MAX bytes, or whose byte count overflows
 *     size_t, returns NULL without calling libc (sanitizers abort on such
 *     requests instead of returning NULL, and no machine can satisfy them);
 *   - a zero-byte request allocates one byte, so every call allocates and
 *     the sequence of calls does not depend on a rank's local share;
 *   - after deso__alloc_fail_after(n), the n-th call from then on (0: the
 *     next one) returns NULL once; later calls succeed again.
 * Not thread-safe (nor is the library).                                    */
#ifndef DESO_ALLOC_H
#define DESO_ALLOC_H

#include <stddef.h>

#define DESO__ALLOC_MAX ((size_t)1 << 46)

void *deso__malloc(size_t size);
void *deso__calloc(size_t count, size_t size);
void *deso__realloc(void *p, size_t size);
/* Zeroed like deso__calloc, for arrays that may never be written (a new
 * zero vector): from 64 KiB on their whole pages are given back to the
 * kernel (Linux's MADV_DONTNEED: they read as zeros and take memory only
 * when first written) rather than cleared, since clearing would make
 * them resident at once whenever the allocator reuses heap memory (which
 * glibc does for arrays below its mapping threshold, a threshold that
 * rises when a large array is freed).  One call of the wrappers, like
 * deso__calloc (counted, injectable).                                   */
void *deso__calloc_untouched(size_t count, size_t size);
/* Clears p[0 .. size) as deso__calloc_untouched does: the whole pages of
 * an area of 64 KiB or more given back (elsewhere than Linux, or if the
 * kernel refuses: memset), the partial pages at its ends cleared.  No
 * allocation.  Exposed for its test.                                    */
void deso__zero_untouched(void *p, size_t size);
/* p (from the wrappers above) shrunk to size bytes, or p itself when the
 * allocator cannot: never a failure, so never injected or counted.      */
void *deso__shrink(void *p, size_t size);
/* Returns the free memory the allocator keeps to the system (glibc's
 * malloc_trim: whole free pages anywhere in the heap, not only at its
 * top), after large arrays are freed: a freed array larger than glibc's
 * mapping threshold raises the threshold, so the arrays after it come from
 * the heap, whose free pages otherwise stay resident.  Elsewhere a no-op. */
void deso__alloc_release(void);

/* Test hook: make the n-th allocation from now fail (n >= 0); n = -1
 * disables injection.  Local.                                              */
void deso__alloc_fail_after(int n);
/* Allocations made through the wrappers since the process started.        */
long deso__alloc_count(void);
/* Failures injected since the process started.                             */
long deso__alloc_injected(void);
/* Test hook: the largest single request (bytes) since the last call of
 * deso__alloc_largest_reset, to bound what a streamed operation holds.   */
size_t deso__alloc_largest(void);
void deso__alloc_largest_reset(void);

#endif
