/* A replayed update whose result starts as a copy of the operand it
 * updates (doc/DESIGN.md, "Replaying an iteration"): each iteration
 * computes s = r.r, then r = r - c q, and reads s.  On a 1 x P grid
 * (P > 1) s's reduction is posted and r.r keeps its reference to r's old
 * value until its wait, after the update, so the update cannot take over
 * r's buffer: its result is a new slot holding a copy of r first.  The
 * loop runs with replay (the default) and recording every call: the same
 * vectors and scalars to the last bit, the same bytes, messages and plan
 * counts, most iterations replayed; both within 1e-12 of a sequential
 * loop.  Modes none and full, 1-D grids both ways, n not a multiple of
 * the block size, n < P.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"   /* ctx->params                    */
#include "replay_test.h"
#include "test_util.h"

#define ITERS 12

/* The loop on ctx: r and the last s into out (n + 1 doubles), checked
 * against the sequential loop, and its statistics since it began.      */
static void run_loop(deso_ctx *ctx, int64_t n, uint64_t seed, double *out,
                     deso_stats *st)
{
    tu_rng rng = {seed};
    double *r = calloc((size_t)n, sizeof *r), *q = calloc((size_t)n, sizeof *q);
    tu_fill(&rng, r, n);
    tu_fill(&rng, q, n);
    deso_vec *dr, *dq;
    deso_scalar *ds;
    TU_CALL(deso_vec_from_array(ctx, n, r, DESO_ALL_RANKS, &dr));
    TU_CALL(deso_vec_from_array(ctx, n, q, DESO_ALL_RANKS, &dq));
    TU_CALL(deso_scalar_create(ctx, 0.0, &ds));
    deso_stats st0;
    TU_CALL(deso_stats_get(&st0));
    double s = 0.0;
    for (int it = 0; it < ITERS; it++) {
        s = cblas_ddot((int)n, r, 1, r, 1);
        cblas_daxpy((int)n, -0.25, q, 1, r, 1);
        TU_CALL(deso_ddot(n, dr, 1, dr, 1, ds));
        TU_CALL(deso_daxpy(n, -0.25, dq, 1, dr, 1));
        TU_CHECK(tu_srel(tu_value(ds), s) < 1e-12);
    }
    tu_fetch(dr, out);
    out[n] = tu_value(ds);
    TU_CHECK(tu_relerr(out, r, n) < 1e-12);
    TU_CALL(deso_stats_get(st));
    st->bytes_p2p -= st0.bytes_p2p;
    st->msgs_p2p -= st0.msgs_p2p;
    st->bytes_collective -= st0.bytes_collective;
    st->msgs_collective -= st0.msgs_collective;
    st->plans_optimised -= st0.plans_optimised;
    st->plans_replayed -= st0.plans_replayed;
    st->nodes_overlapped -= st0.nodes_overlapped;
    st->forces_replayed -= st0.forces_replayed;
    st->replays_broken -= st0.replays_broken;
    TU_CALL(deso_vec_destroy(&dr));
    TU_CALL(deso_vec_destroy(&dq));
    TU_CALL(deso_scalar_destroy(&ds));
    free(r);
    free(q);
}

static void compare(const tu_case *c, int64_t n, uint64_t seed)
{
    size_t len = (size_t)n + 1;
    double *on = calloc(len, sizeof *on), *off = calloc(len, sizeof *off);
    deso_stats a, b;
    opt_params params;
    deso_ctx *ctx = replay_ctx(c, DESO_PARTITION_DEFAULT, 1, &params);
    run_loop(ctx, n, seed, on, &a);
    TU_CALL(deso_finalize(&ctx));
    ctx = replay_ctx(c, DESO_PARTITION_DEFAULT, 0, &params);
    run_loop(ctx, n, seed, off, &b);
    TU_CALL(deso_finalize(&ctx));
    TU_CHECK(memcmp(on, off, len * sizeof *on) == 0);
    TU_CHECK(a.bytes_p2p == b.bytes_p2p && a.msgs_p2p == b.msgs_p2p);
    TU_CHECK(a.bytes_collective == b.bytes_collective &&
             a.msgs_collective == b.msgs_collective);
    TU_CHECK(a.plans_optimised == b.plans_optimised &&
             a.plans_replayed == b.plans_replayed);
    TU_CHECK(a.nodes_overlapped == b.nodes_overlapped);
    TU_CHECK(b.forces_replayed == 0 && a.replays_broken == 0);
    TU_CHECK(a.forces_replayed >= ITERS / 2);
    free(on);
    free(off);
}

static void test_replayed_copy(void **state)
{
    (void)state;
    int P = tu_size();
    const tu_case cases[] = {{DESO_MODE_NONE, 1, P, 2},
                             {DESO_MODE_FULL, 1, P, 3},
                             {DESO_MODE_NONE, P, 1, 2}};
    const int64_t sizes[] = {37, 2};
    for (int ci = 0; ci < 3; ci++) {
        for (int si = 0; si < 2; si++) {
            tu_label("%s, n %lld", tu_case_name(&cases[ci]),
                     (long long)sizes[si]);
            compare(&cases[ci], sizes[si], 7u + (uint64_t)(2 * ci + si));
        }
        tu_case_end();
    }
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_replayed_copy))
