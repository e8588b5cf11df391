/* One dimension of a block-cyclic remap for an arbitrary extent M: exact
 * message lengths (doc/DESIGN.md, "Any extent, two dimensions, replicated
 * sources": whole slices by the closed form, the rest walked block by
 * block, never materialising a slice of lcm(P r, Q s) elements), and the
 * local shapes of a layout.  The pieces one position shares with a peer
 * are remap_period.c's.                                                    */
#include <stdlib.h>

#include "placement/errors.h"
#include "placement/pl_arith.h"
#include "placement/placement.h"
#include "placement/remap.h"
#include "placement/remap_impl.h"
#include "placement/alloc.h"


/* The end of the block of size b containing x, clipped to M (no overflow). */
static int64_t block_end(int64_t x, int64_t b, int64_t M)
{
    int64_t rest = b - x % b;
    return (rest > M - x) ? M : x + rest;
}

/* Adds the lengths of [0, M) to len by walking both block structures.     */
static void walk_lengths(int64_t M, int P, int64_t r, int Q, int64_t s,
                         int64_t *len)
{
    int64_t x = 0;
    while (x < M) {
        int64_t y = block_end(x, r, M), y2 = block_end(x, s, M);
        if (y2 < y) y = y2;
        int p = (int)((x / r) % P), q = (int)((x / s) % Q);
        len[(int64_t)p * Q + q] += y - x;
        x = y;
    }
}

deso_err pl__dim_lengths(int64_t M, int P, int64_t r, int Q, int64_t s,
                         int64_t *len)
{
    for (int64_t i = 0; i < (int64_t)P * Q; i++) len[i] = 0;
    int64_t Pr, Qs, L;
    int64_t rest = M;
    /* Whole slices by the closed form when the slice fits and M holds one;
     * the pattern repeats every L, so the tail is walked as [0, M mod L). */
    if (pl__mul(P, r, &Pr) && pl__mul(Q, s, &Qs)) {
        int64_t g = pl__gcd64(Pr, Qs);
        if (pl__mul(Pr / g, Qs, &L) && L <= INT64_MAX / 2 && M >= L) {
            int64_t whole = M / L;
            for (int p = 0; p < P; p++)
                for (int q = 0; q < Q; q++)
                    len[(int64_t)p * Q + q] =
                        whole * pl__slice_len(r, s, g, p, q);
            rest = M % L;
        }
    }
    walk_lengths(rest, P, r, Q, s, len);
    return DESO_OK;
}

void pl_bc_local_shape(const pl_bc_layout *l, int rank, int64_t *lrows,
                       int64_t *lcols)
{
    int64_t lr = 0, lc = 0;
    if (l && l->pr >= 1 && l->pc >= 1) {
        int np = l->pr * l->pc, pos = -1;
        for (int i = 0; i < np; i++) {
            if ((l->ranks ? l->ranks[i] : i) == rank) {
                pos = i;
                break;
            }
        }
        if (pos >= 0 && l->replicated) {
            lr = l->m;
            lc = l->n;
        } else if (pos >= 0 && l->mb >= 1 && l->nb >= 1) {
            lr = pl_numroc(l->m, l->mb, pos / l->pc, 0, l->pr);
            lc = pl_numroc(l->n, l->nb, pos % l->pc, 0, l->pc);
        }
    }
    if (lrows) *lrows = lr;
    if (lcols) *lcols = lc;
}

void pl_nd_local_extents(const pl_nd_layout *l, int rank,
                         int64_t ext[PL_ND_MAX])
{
    for (int k = 0; k < PL_ND_MAX; k++) ext[k] = 0;
    if (l == NULL || l->d < 1 || l->d > PL_ND_MAX) return;
    int64_t np = 1;
    for (int k = 0; k < l->d; k++) {
        if (l->p[k] < 1 || l->b[k] < 1) return;
        np *= l->p[k];
    }
    int pos = -1;
    for (int64_t i = 0; i < np && pos < 0; i++)
        if ((l->ranks ? l->ranks[i] : i) == rank) pos = (int)i;
    if (pos < 0) return;
    for (int k = PL_ND_MAX - 1; k >= 0; k--) {
        if (k >= l->d) {
            ext[k] = 1;
            continue;
        }
        ext[k] = pl_numroc(l->n[k], l->b[k], pos % l->p[k], 0, l->p[k]);
        pos /= l->p[k];
    }
}
