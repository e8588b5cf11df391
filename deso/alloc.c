/* Allocation wrappers with fault injection (see alloc.h).                 */
#include "alloc.h"

#include <stdlib.h>

static int fail_in = -1;        /* calls left before the injected failure  */
static long n_calls, n_injected;

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
    return malloc(size > 0 ? size : 1);
}

void *deso__calloc(size_t count, size_t size)
{
    if (inject()) return NULL;
    if (size != 0 && count > DESO__ALLOC_MAX / size) return NULL;
    if (count == 0 || size == 0) return calloc(1, 1);
    return calloc(count, size);
}

void *deso__realloc(void *p, size_t size)
{
    if (inject() || size > DESO__ALLOC_MAX) return NULL;
    return realloc(p, size > 0 ? size : 1);
}
