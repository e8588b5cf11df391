/* A list of element copies between two arrays: copy k takes element s_k
 * of the source into element d_k of the target.  An exchange plan keeps
 * one per message (packing: d_k = k, the message buffer's positions;
 * unpacking: s_k = k) and one for the elements a rank keeps itself.
 *
 * Stored as runs (first s, first d, length) where both sides advance by
 * one, which block placements give almost everywhere (a block of 64
 * elements is one run), unless listing the positions one by one takes
 * fewer words (runs of one or two elements).  A side whose positions are
 * 0, 1, ..., n - 1 (a message buffer) is implicit: stored neither way.
 *
 * Built in two passes over the same sequence of pairs: pl_copy_count for
 * every pair, pl_copy_alloc (which picks the form), pl_copy_add for every
 * pair again.  Nothing but the chosen form is ever allocated.            */
#ifndef DESO_PLACEMENT_COPY_LIST_H
#define DESO_PLACEMENT_COPY_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placement/errors.h"

typedef struct pl_copy_list {
    int64_t n;               /* copies                                      */
    int64_t nruns;           /* runs counted (both forms), then filled      */
    bool has_src, has_dst;   /* sides stored (false: implicit 0 .. n - 1)   */
    bool runs;               /* run-coded, else listed                      */
    int64_t *src, *dst;      /* per run its first position, or per copy its */
                             /*   position; NULL for an implicit side       */
    int64_t *len;            /* per run its length; NULL when listed        */
    int64_t last_src, last_dst, fill; /* while built                        */
} pl_copy_list;

/* An empty list whose explicit sides are has_src and has_dst.            */
pl_copy_list pl_copy_new(bool has_src, bool has_dst);

/* Whether copy s -> d continues the last run: every stored side one past
 * the last copy's (an implicit side always is).                          */
static inline bool pl_copy_continues(const pl_copy_list *c, int64_t s,
                                     int64_t d)
{
    return (!c->has_src || s == c->last_src + 1) &&
           (!c->has_dst || d == c->last_dst + 1);
}

/* Counting pass: one more copy s -> d (an implicit side's value is
 * ignored).  Inline, as pl_copy_add: a plan calls them once per element. */
static inline void pl_copy_count(pl_copy_list *c, int64_t s, int64_t d)
{
    if (c->n == 0 || !pl_copy_continues(c, s, d)) c->nruns++;
    c->last_src = s;
    c->last_dst = d;
    c->n++;
}

/* After counting: the arrays of the smaller form (listed when runs_ok is
 * false: a side that will be reversed, pl_copy_reverse).  DESO_ENOMEM.   */
deso_err pl_copy_alloc(pl_copy_list *c, bool runs_ok);

/* Filling pass: the same copies in the same order.                       */
static inline void pl_copy_add(pl_copy_list *c, int64_t s, int64_t d)
{
    if (!c->runs) {
        if (c->has_src) c->src[c->fill] = s;
        if (c->has_dst) c->dst[c->fill] = d;
        c->fill++;
        return;
    }
    if (c->fill > 0 && pl_copy_continues(c, s, d)) {
        c->len[c->fill - 1]++;
    } else {
        if (c->has_src) c->src[c->fill] = s;
        if (c->has_dst) c->dst[c->fill] = d;
        c->len[c->fill++] = 1;
    }
    c->last_src = s;
    c->last_dst = d;
}

/* Reverses the order of a listed list's copies (a message whose map walks
 * one side downwards lists it from the top).                             */
void pl_copy_reverse(pl_copy_list *c);

/* dst[d_k] = src[s_k] for every copy.                                    */
void pl_copy_run(const pl_copy_list *c, const double *src, double *dst);

/* Bytes the list's arrays take.                                          */
size_t pl_copy_bytes(const pl_copy_list *c);

void pl_copy_free(pl_copy_list *c);   /* NULL-safe; leaves it empty       */

#endif
