/* deso/remap/remap_pick.c: whether a remap on shared memory reads its
 * senders' shared sources in place (single copy) or moves them through
 * the rings, chosen per remap; pure bookkeeping, no MPI.
 *
 * Neither is faster everywhere: single copy takes fewer instructions
 * (fewest where pieces are short), but where a source's cache lines hold
 * elements for several receivers (cyclic layouts with blocks shorter
 * than a line, block -> cyclic) every such receiver reads the whole line
 * from memory, while on the rings its owner reads it once and passes the
 * others' elements through a ring that stays in cache.  Which matters
 * more depends on the sizes, the layouts and the machine, so the remap
 * measures: counted from the execution e0 whose agreement
 * turned the single-copy programs on (itself on the rings), e0 + 1 reads
 * in place untimed (the receiver maps the sender's pages on first touch),
 * e0 + 2 is timed on the rings, e0 + 3 timed reading in place, e0 + 4
 * reads in place while its agreement takes each time's maximum over the
 * ranks, and from e0 + 5 on the faster one is kept (ties: single copy).
 * The times are agreed, so every rank decides alike.                    */
#include "deso/remap/remap_pick.h"

#include <stdlib.h>
#include <string.h>

/* Executions after e0 at which the rings and single copy are timed, and
 * at which the agreement carries the times.                              */
#define PICK_RINGS_AT 2
#define PICK_SINGLE_AT 3
#define PICK_DUE_AT 4

int deso__pick_env(void)
{
    const char *v = getenv("DESO_REMAP_SINGLE_COPY");
    if (v != NULL && strcmp(v, "0") == 0) return DESO__PICK_RINGS;
    if (v != NULL && strcmp(v, "1") == 0) return DESO__PICK_SINGLE;
    return DESO__PICK_MEASURE;
}

void deso__pick_start(deso__pick *p, int mode, long long e)
{
    *p = (deso__pick){ .mode = mode, .from = e, .ns = { 0, 0 } };
}

bool deso__pick_allows(const deso__pick *p, long long e)
{
    if (e <= p->from || p->mode == DESO__PICK_RINGS) return false;
    return p->mode == DESO__PICK_SINGLE || e - p->from != PICK_RINGS_AT;
}

void deso__pick_timed(deso__pick *p, long long e, double seconds)
{
    if (p->mode != DESO__PICK_MEASURE) return;
    int64_t ns = (int64_t)(seconds * 1e9);
    if (e - p->from == PICK_RINGS_AT) p->ns[0] = ns;
    if (e - p->from == PICK_SINGLE_AT) p->ns[1] = ns;
}

bool deso__pick_due(const deso__pick *p, long long e)
{
    return p->mode == DESO__PICK_MEASURE && e - p->from >= PICK_DUE_AT;
}

void deso__pick_times(const deso__pick *p, int64_t out[2])
{
    out[0] = p->ns[0];
    out[1] = p->ns[1];
}

void deso__pick_decide(deso__pick *p, const int64_t agreed[2])
{
    p->mode = agreed[1] <= agreed[0] ? DESO__PICK_SINGLE : DESO__PICK_RINGS;
}
