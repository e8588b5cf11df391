/* Recycled views, values and nodes.  A solver's iteration frees and
 * allocates the same things every time: a node and a value per recorded
 * call, and views of the same few small layouts (its vectors' new
 * versions, its scalars).  A freed value or node waits here for the next
 * one; a freed view of a small array waits, data and placement included,
 * for the next view of the same layout and local shape, which then costs
 * a memset instead of two allocations and a placement.
 *
 * What is kept depends only on global sizes (never on a rank's share), so
 * the allocations made stay the same on every rank.  Process-wide like
 * the allocator; emptied when a context is destroyed.                    */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"
#include "placement/alloc.h"

/* Under AddressSanitizer nothing is kept, so that a use after free is
 * still caught there.                                                    */
#ifdef __SANITIZE_ADDRESS__
#define POOL_VIEWS 0
#define POOL_OBJECTS 0
#else
#define POOL_VIEWS 32
#define POOL_OBJECTS 64
#endif
#define POOL_MAX_ELEMENTS 8192          /* global elements: 64 KiB        */

static deso__view *pool[POOL_VIEWS > 0 ? POOL_VIEWS : 1];
static int npool;

static bool poolable(const blas_layout *lay)
{
    return lay->m * lay->n <= POOL_MAX_ELEMENTS;
}

deso__view *deso__view_take(const blas_layout *lay, int64_t rows,
                            int64_t cols, bool zero)
{
    if (POOL_VIEWS == 0 || !poolable(lay)) return NULL;
    for (int k = npool - 1; k >= 0; k--) {
        deso__view *w = pool[k];
        if (w->rows != rows || w->cols != cols ||
            !blas_layout_equal(&w->lay, lay))
            continue;
        pool[k] = pool[--npool];
        if (zero && rows * cols > 0)
            memset(w->data, 0, (size_t)(rows * cols) * sizeof(double));
        w->next = NULL;
        return w;
    }
    return NULL;
}

bool deso__view_put(deso__view *w)
{
    if (w->borrowed || w->ooc != NULL || !poolable(&w->lay) ||
        npool == POOL_VIEWS)
        return false;
    pool[npool++] = w;
    return true;
}

static deso__value *values[POOL_OBJECTS > 0 ? POOL_OBJECTS : 1];
static deso__node *nodes[POOL_OBJECTS > 0 ? POOL_OBJECTS : 1];
static int nvalues, nnodes;

deso__value *deso__value_take(void)
{
    if (nvalues == 0) return deso__calloc(1, sizeof(deso__value));
    deso__value *v = values[--nvalues];
    memset(v, 0, sizeof *v);
    return v;
}

void deso__value_put(deso__value *v)
{
    if (nvalues < POOL_OBJECTS) values[nvalues++] = v;
    else free(v);
}

deso__node *deso__node_take(void)
{
    if (nnodes == 0) return deso__calloc(1, sizeof(deso__node));
    deso__node *nd = nodes[--nnodes];
    memset(nd, 0, sizeof *nd);
    return nd;
}

void deso__node_put(deso__node *nd)
{
    if (nnodes < POOL_OBJECTS) nodes[nnodes++] = nd;
    else free(nd);
}

void deso__recycle_drain(void)
{
    while (npool > 0) {
        deso__view *w = pool[--npool];
        free(w->data);
        free(w);
    }
    while (nvalues > 0) free(values[--nvalues]);
    while (nnodes > 0) free(nodes[--nnodes]);
}
