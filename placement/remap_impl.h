/* Internal to the remap planner (remap_*.c): one-dimensional intersections
 * of two block-cyclic distributions and the schedule helpers they share.
 * Not installed; deso/ uses remap.h only.                                  */
#ifndef DESO_PLACEMENT_REMAP_IMPL_H
#define DESO_PLACEMENT_REMAP_IMPL_H

#include <stdint.h>

#include "placement/remap.h"

int64_t pl__gcd64(int64_t a, int64_t b);

/* Elements of one slice that source rank p sends to target rank q, given
 * g = gcd(P r, Q s) (doc/DESIGN.md, "One dimension: period and message
 * matrix"), in O(1): the sum of vol(z) over the z = k (mod g) in
 * [1-r, s-1] is summed piece by piece (rising, plateau, falling), never
 * term by term, since r and s may be ~2^33.  Requires r + s to fit in
 * int64.                                                                   */
int64_t pl__slice_len(int64_t r, int64_t s, int64_t g, int p, int q);

/* Exact message lengths of CYCLIC(r) on P -> CYCLIC(s) on Q for an extent
 * of M (any M, not only multiples of the slice): len[p * Q + q].  Whole
 * slices use the closed form, the partial slice is walked block by block,
 * so the cost is O(P Q + (M mod L) / min(r, s)).                           */
deso_err pl__dim_lengths(int64_t M, int P, int64_t r, int Q, int64_t s,
                         int64_t *len);

/* Edge colouring of a bipartite multigraph (Konig): colours every edge
 * (ep[e], eq[e]) with one of D = maximum degree colours so that no two
 * edges at a vertex share one.  colour[e] receives it.                     */
deso_err pl__edge_colour(int P, int Q, int64_t nedges, const int *ep,
                         const int *eq, int *colour, int *ncolours);

/* Maximum-weight assignment on an n x n matrix of non-negative weights
 * (Hungarian method, O(n^3), deterministic).  match[i] = column of row i.
 * Weights must stay below INT64_MAX / (4 (n + 1)).                         */
deso_err pl__max_assignment(int n, const int64_t *w, int *match);

/* A growing list of progressions (remap_period.c); pl__seq_push appends
 * a piece, lengthening the last progression when the piece continues it
 * on every side.  False when out of memory.                              */
typedef struct pl__seqbuf {
    pl_seq *v;
    int64_t n, cap;
} pl__seqbuf;
bool pl__seq_push(pl__seqbuf *B, pl_seq x);

#endif
