/* Views in the DAG: vget (a view read: the viewed elements into a value
 * of their own) and vput (a write through a view: the viewed value's new
 * version, its old data with the view's elements replaced).  Both move
 * elements with a point-to-point exchange planned from owner computations
 * under the view's element map (exchange.c), as any change of layout is,
 * and are priced by the cost model the same way (optimizer/opt_cost.c). */
#include "deso/runtime/runtime.h"

/* The operand the elements come from: the viewed value (vget) or the new
 * elements (vput).                                                       */
static int source_of(const deso__node *nd)
{
    return nd->d.op == BLAS_OP_VGET ? 0 : 1;
}

deso_err deso__view_ready(deso_ctx *ctx, const deso__node *nd,
                          const blas_layout *req, const blas_layout *rl)
{
    blas_emap e = blas_desc_map(&nd->d);
    return deso__exchange_map_ready(ctx, &req[source_of(nd)], rl, &e);
}

deso_err deso__exec_view(deso_ctx *ctx, const deso__node *nd,
                         deso__view *const *v, deso__view *rv)
{
    blas_emap e = blas_desc_map(&nd->d);
    return deso__exchange_map(ctx, v[source_of(nd)], rv, &e);
}
