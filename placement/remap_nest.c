/* The columns of a d-dimensional remap message (remap.h, pl_msg): a local
 * array stores its first index fastest, so the columns of the array seen
 * as a matrix (dimensions 1 .. d-1) are dimension 1's pieces repeated once
 * per combination of elements of the slower dimensions, shifted by their
 * global and local extents.  Planning keeps each dimension's one-period
 * description and never lists that product; these iterators walk it for
 * consumers that go column by column, in O(1) memory.                    */
#include "placement/remap.h"

int64_t pl_msg_ncols(const pl_msg *m)
{
    int64_t n = m->cols.count;
    for (int k = 0; k < m->nouter; k++) n *= m->outer[k].count;
    return n;
}

int64_t pl_msg_pieces(const pl_msg *m)
{
    int64_t n = m->rows.nseq + m->cols.nseq;
    for (int k = 0; k < m->nouter; k++) n += m->outer[k].nseq;
    return n;
}

/* Level k's next piece, from its first element; false at its end.       */
static bool level_piece(pl_outer_it *it, int k)
{
    it->u[k] = 0;
    return pl_dim_next(&it->it[k], &it->g[k], &it->mi[k], &it->ti[k],
                       &it->len[k]);
}

static bool level_restart(pl_outer_it *it, int k)
{
    it->it[k] = PL_DIM_IT(&it->m->outer[k]);
    return level_piece(it, k);
}

/* Moves to the next combination, level 0 (dimension 2) fastest; false
 * after the last.                                                        */
static bool advance(pl_outer_it *it)
{
    const pl_msg *m = it->m;
    if (!it->started) {
        it->started = true;
        for (int k = 0; k < m->nouter; k++)
            if (!level_restart(it, k)) return false;
        return true;
    }
    for (int k = 0; k < m->nouter; k++) {
        if (++it->u[k] < it->len[k] || level_piece(it, k)) return true;
        level_restart(it, k);        /* carry into the slower level      */
    }
    return false;
}

bool pl_outer_next(pl_outer_it *it, int64_t *g, int64_t *mine,
                   int64_t *theirs)
{
    if (it->done || !advance(it)) {
        it->done = true;
        return false;
    }
    const pl_msg *m = it->m;
    *g = *mine = *theirs = 0;
    for (int k = 0; k < m->nouter; k++) {
        *g += (it->g[k] + it->u[k]) * m->gstep[k];
        *mine += (it->mi[k] + it->u[k]) * m->mstep[k];
        *theirs += (it->ti[k] + it->u[k]) * m->tstep[k];
    }
    return true;
}

bool pl_cols_next(pl_cols_it *it, int64_t *g, int64_t *mine,
                  int64_t *theirs, int64_t *len)
{
    for (;;) {
        if (it->have && pl_dim_next(&it->c, g, mine, theirs, len)) {
            *g += it->sg;
            *mine += it->sm;
            *theirs += it->st;
            return true;
        }
        if (!pl_outer_next(&it->o, &it->sg, &it->sm, &it->st)) return false;
        it->c = PL_DIM_IT(&it->o.m->cols);
        it->have = true;
    }
}
