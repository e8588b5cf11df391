/* Two dimensions of a d-dimensional remap message made one (remap.h,
 * pl_nd_layout): a local array stores its first index fastest, so the
 * columns of a d-dimensional array seen as a matrix (dimensions 1 .. d-1)
 * are the pieces of the faster dimension repeated once per element of
 * the slower one, shifted by its global and local extents.  The slower
 * dimension's elements are walked one by one and the faster one's pieces
 * appended after each, merging into progressions where they continue
 * each other (pl__seq_push), so a faster dimension moved whole makes one
 * piece per piece of the slower one.                                     */
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/remap.h"
#include "placement/remap_impl.h"

/* The global extent a pl_dim describes pieces of.                        */
static int64_t extent_of(const pl_dim *d)
{
    return d->full * d->dg + d->rem;
}

/* Appends in's pieces shifted by (g, m, t); false when out of memory.   */
static bool append_shifted(pl__seqbuf *B, const pl_dim *in, int64_t g,
                           int64_t m, int64_t t)
{
    int64_t ig, im, it, il;
    pl_dim_it i = PL_DIM_IT(in);
    while (pl_dim_next(&i, &ig, &im, &it, &il))
        if (!pl__seq_push(B, (pl_seq){ .g = g + ig, .len = il,
                                       .mine = m + im, .theirs = t + it,
                                       .cnt = 1 }))
            return false;
    return true;
}

deso_err pl__dim_nest(const pl_dim *in, int64_t n, int64_t lm, int64_t lt,
                      const pl_dim *out, pl_dim *res)
{
    memset(res, 0, sizeof *res);
    pl__seqbuf B = { 0 };
    int64_t og, om, ot, ol;
    pl_dim_it o = PL_DIM_IT(out);
    while (pl_dim_next(&o, &og, &om, &ot, &ol))
        for (int64_t u = 0; u < ol; u++)
            if (!append_shifted(&B, in, (og + u) * n, (om + u) * lm,
                                (ot + u) * lt)) {
                free(B.v);
                return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no "
                                  "memory");
            }
    res->seq = B.v;
    res->nseq = B.n;
    res->span = res->rem = n * extent_of(out);
    res->per = res->count = in->count * out->count;
    return DESO_OK;
}
