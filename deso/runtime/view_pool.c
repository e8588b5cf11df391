/* Recycled views.  A solver's iteration frees and allocates the views of
 * the same few small layouts every time (its vectors' new versions, its
 * scalars); a freed view of a small array waits here, data and placement
 * included, for the next view of the same layout and local shape, which
 * then costs a memset instead of two allocations and a placement.
 *
 * Which views are kept depends only on their global size (never on a
 * rank's share), so the allocations made stay the same on every rank.
 * Process-wide like the allocator; emptied when a context is destroyed. */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"

/* Under AddressSanitizer nothing is kept, so that a view used after it
 * was freed is still caught there.                                       */
#ifdef __SANITIZE_ADDRESS__
#define POOL_VIEWS 0
#else
#define POOL_VIEWS 32
#endif
#define POOL_MAX_ELEMENTS 8192          /* global elements: 64 KiB        */

static deso__view *pool[POOL_VIEWS > 0 ? POOL_VIEWS : 1];
static int npool;

static bool poolable(const blas_layout *lay)
{
    return lay->m * lay->n <= POOL_MAX_ELEMENTS;
}

deso__view *deso__view_pool_take(const blas_layout *lay, int64_t rows,
                                 int64_t cols)
{
    if (POOL_VIEWS == 0 || !poolable(lay)) return NULL;
    for (int k = npool - 1; k >= 0; k--) {
        deso__view *w = pool[k];
        if (w->rows != rows || w->cols != cols ||
            !blas_layout_equal(&w->lay, lay))
            continue;
        pool[k] = pool[--npool];
        if (rows * cols > 0)
            memset(w->data, 0, (size_t)(rows * cols) * sizeof(double));
        w->next = NULL;
        return w;
    }
    return NULL;
}

bool deso__view_pool_put(deso__view *w)
{
    if (w->borrowed || !poolable(&w->lay) || npool == POOL_VIEWS)
        return false;
    pool[npool++] = w;
    return true;
}

void deso__view_pool_drain(void)
{
    while (npool > 0) {
        deso__view *w = pool[--npool];
        free(w->data);
        free(w);
    }
}
