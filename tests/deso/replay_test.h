/* What the replay tests (test_replay_iter.c, test_replay_sparse.c) ask
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
#include "test_util.h"

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
