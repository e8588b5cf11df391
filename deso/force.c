/* Force points: check that every rank recorded the same calls, then run
 * the DAG in recording order (a topological order: SSA values are only
 * read after they are produced).  Executed nodes are freed at once; values
 * nobody references any more go with them.                                 */
#include <stdlib.h>

#include "deso_impl.h"

deso_err deso__force(deso_ctx *ctx)
{
    if (ctx->forcing) return DESO_OK;   /* a force inside a force: no-op   */
    ctx->forcing = true;
    bool same = true;
    /* Always agree, even with an empty DAG: a rank with nothing pending
     * must not return while another starts communicating.                 */
    deso_err err = deso__hash_agree(ctx, ctx->hash, &same);
    if (err == DESO_OK && !same)
        err = deso__fail(DESO_EMISMATCH,
                         "force point: ranks recorded different call "
                         "sequences (%lld calls pending here)",
                         (long long)ctx->nnodes);
    if (err != DESO_OK) {
        deso__dag_drop(ctx, err);
        ctx->hash = 0;    /* every rank restarts from the same state       */
        ctx->forcing = false;
        return err;
    }
    if (ctx->head != NULL) {
        ctx->flushes++;
        deso__stats_plan(1);
    }
    while (ctx->head != NULL) {
        deso__node *nd = ctx->head;
        err = deso__exec_node(ctx, nd);
        if (err != DESO_OK) break;
        ctx->head = nd->next;
        if (ctx->head == NULL) ctx->tail = NULL;
        ctx->nnodes--;
        for (int k = 0; k < nd->d.nops; k++) deso__value_unref(nd->ops[k]);
        deso__value_unref(nd->res);
        free(nd);
    }
    if (err != DESO_OK) deso__dag_drop(ctx, err);
    ctx->forcing = false;
    return err;
}
