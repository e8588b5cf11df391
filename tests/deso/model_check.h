/* One check the optimiser tests share: a flush moved exactly what the
 * model of the plan it ran counts.  Header-only; needs the runtime's
 * internals (the context's ran_model).                                    */
#ifndef DESO_TEST_MODEL_CHECK_H
#define DESO_TEST_MODEL_CHECK_H

#include "test_util.h"

#include "deso/runtime/runtime.h"

/* p2p bytes and messages, collective bytes and messages, summed over
 * ranks.  Collective.                                                    */
static inline void tu_totals(int64_t *t)
{
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    int64_t mine[4] = {st.bytes_p2p, st.msgs_p2p, st.bytes_collective,
                       st.msgs_collective};
    MPI_Allreduce(mine, t, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

/* t0, t1: p2p bytes and messages, collective bytes and messages summed
 * over ranks before and after ctx's last flush.  Whether the difference is
 * the model of the plan that flush ran plus the force's SPMD check (one
 * 16-byte all-reduce); a mismatch is printed with `what`.  Local.        */
static inline bool tu_flush_matches_model(const deso_ctx *ctx,
                                          const int64_t *t0,
                                          const int64_t *t1, const char *what)
{
    int P = tu_size();
    opt_counts mc = ctx->ran_model;
    int64_t agree_b = P > 1 ? 16 * (P - 1) * 2 : 0;
    int64_t agree_m = P > 1 ? 1 : 0;
    bool ok = t1[0] - t0[0] == mc.bytes_p2p && t1[1] - t0[1] == mc.msgs_p2p &&
              t1[2] - t0[2] - agree_b == mc.bytes_coll &&
              t1[3] - t0[3] - agree_m == mc.msgs_coll;
    if (!ok)
        print_error("%s: p2p %lld/%lld vs model %lld/%lld, coll %lld/%lld vs "
                    "%lld/%lld\n", what, (long long)(t1[0] - t0[0]),
                    (long long)(t1[1] - t0[1]), (long long)mc.bytes_p2p,
                    (long long)mc.msgs_p2p,
                    (long long)(t1[2] - t0[2] - agree_b),
                    (long long)(t1[3] - t0[3] - agree_m),
                    (long long)mc.bytes_coll, (long long)mc.msgs_coll);
    return ok;
}

#endif
