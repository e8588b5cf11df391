/* What the replay tests (test_replay_iter.c, test_replay_sparse.c,
 * test_replay_copy.c) ask
 * of one loop run with replay (a) and the same run recording every call
 * (b): the same messages, bytes and plans, nothing replayed in b, and in
 * a replays armed after two forces of the same settled plan, again after
 * a break (a_mid: those replayed up to the break); a variant that breaks
 * the replay in the middle counts it, and a loop that does not replays
 * at least half of its `iters` iterations.                              */
#ifndef DESO_TEST_REPLAY_TEST_H
#define DESO_TEST_REPLAY_TEST_H

#include <stdbool.h>

#include "deso/deso_stats.h"
#include "deso/runtime/runtime.h"   /* ctx->params                    */
#include "test_util.h"

/* The context of case c with vectors placed by `part`, replaying or not.
 * The second context of a pair takes the first's machine figures
 * (*params): each context measures its own, and plans following them
 * could make the two runs compared differ with no replay.              */
static inline deso_ctx *replay_ctx(const tu_case *c, deso_partition part,
                                   int replay, opt_params *params)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = c->mode;
    o.grid_rows = c->pr;
    o.grid_cols = c->pc;
    o.nb = c->nb;
    o.partition = part;
    o.replay = replay ? 1 : -1;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    if (replay) *params = ctx->params;
    else ctx->params = *params;
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    TU_CHECK(info.replay == (replay ? 1 : 0));
    return ctx;
}

static inline void replay_counts_agree(const deso_stats *a, int64_t a_mid,
                                       const deso_stats *b, bool breaks,
                                       int iters)
{
    TU_CHECK(a->bytes_p2p == b->bytes_p2p && a->msgs_p2p == b->msgs_p2p);
    TU_CHECK(a->bytes_collective == b->bytes_collective &&
             a->msgs_collective == b->msgs_collective);
    TU_CHECK(a->plans_optimised == b->plans_optimised &&
             a->plans_replayed == b->plans_replayed);
    TU_CHECK(a->nodes_overlapped == b->nodes_overlapped);
    TU_CHECK(b->forces_replayed == 0 && b->replays_broken == 0);
    TU_CHECK(a_mid >= 1);
    TU_CHECK(a->forces_replayed - a_mid >= 2);
    TU_CHECK(breaks || a->forces_replayed >= iters / 2);
    TU_CHECK(breaks ? a->replays_broken >= 1 : a->replays_broken == 0);
}

#endif
