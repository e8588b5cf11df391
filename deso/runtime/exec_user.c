/* Running a user operator's node: its callback on this rank's pieces of x
 * and y, each described as the block-cyclic share or the range it is
 * (deso.h's deso_op_part).  The executor (exec.c) has brought x where the
 * operator declared it, and agrees the callback's outcome across the
 * ranks.                                                                 */
#include <string.h>

#include "deso/runtime/runtime.h"

static deso_op_part part_of(const deso_ctx *ctx, const deso__view *w)
{
    const blas_layout *l = &w->lay;
    deso_op_part p = {.n = l->n, .nlocal = w->rows,
                      .block = l->n > 0 ? l->n : 1, .nparts = 1, .part = 0,
                      .first = 0};
    if (l->dist == BLAS_DIST_PART) {
        /* this rank's range (rank q is row-major on the grid), one block  */
        int q = ctx->coord[0] * l->pc + ctx->coord[1];
        p.first = l->part->start[q];
        p.block = w->rows > 0 ? w->rows : 1;
        return p;
    }
    if (l->dist >= 0) {
        p.block = l->b;
        p.nparts = l->dist == 0 ? l->pr : l->pc;
        p.part = ctx->coord[l->dist];
    }
    return p;
}

deso_err deso__exec_user(deso_ctx *ctx, const deso__node *nd,
                         const deso__view *x, deso__view *rv)
{
    DESO_CHECK(nd->d.off >= 0 && nd->d.off < ctx->nuops, DESO_EINTERNAL,
               "user operator %lld does not exist", (long long)nd->d.off);
    const deso__uop *u = ctx->uops[nd->d.off];
    deso_op_part xp = part_of(ctx, x), yp = part_of(ctx, rv);
    if (rv->rows > 0) memset(rv->data, 0, (size_t)rv->rows * sizeof(double));
    int rc = u->fn(u->user, x->data, &xp, rv->data, &yp);
    if (rc != 0)
        return deso__fail(DESO_EUSER, "deso_op_apply: the operator's "
                          "callback returned %d", rc);
    return DESO_OK;
}
