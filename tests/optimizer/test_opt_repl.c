/* The replication optimiser's choice of a matrix replicated on every
 * rank (doc/DESIGN.md, "Optimiser modes", "Cost model"): CG's iteration
 * under a fixed calibration (opt_params_default: alpha 2 us, beta 1 ns a
 * byte), with its loop-carried vectors marked as the runtime marks them.
 * A small matrix is replicated in modes affine and full, and then no
 * vector moves and nothing is reduced; a large one is not (its redundant
 * product costs more than the messages it saves), nor one the cap
 * forbids, nor any in mode none; and the gather the first iteration
 * pays is counted exactly, against a count by hand.                     */
#include "opt_test.h"

#include <stdlib.h>

/* What the live-in values hold when the iteration begins.               */
typedef enum start { FIRST, VECS_EVERYWHERE, A_REPLICATED } start;

/* One CG iteration on a pr x pc grid with the cap `limit`; searched in
 * `mode`; *rep: the gemv's matrix is replicated; *c the plan's counts.
 * FIRST: every value in its default layout; VECS_EVERYWHERE: the vectors
 * replicated on every rank (as a replicated plan leaves them);
 * A_REPLICATED: that, and A with a replicated view (a later iteration). */
static void cg_plan_from(int pr, int pc, int64_t n, int64_t limit,
                         opt_mode mode, start st, bool *rep, opt_counts *c)
{
    opt_defaults df = {.mode = mode, .pr = pr, .pc = pc, .nb = 64,
                       .repl_limit = limit};
    opt_search_opts o = opt_search_default(mode);
    cg_state s = cg_initial(&df, n);
    if (st != FIRST)
        s.p = s.x = s.r = blas_layout_vec(n, -1, 0, 3u, pr, pc);
    cg_ids id;
    opt_graph g;
    opt_plan p;
    cg_build(&g, &df, &s, &id);
    blas_layout everywhere = blas_layout_mat_rep(n, n, 0, 0, 3u, pr, pc);
    if (st == A_REPLICATED)
        EXPECT_OK(opt_graph_livein_view(&g, id.A, &everywhere));
    EXPECT_OK(opt_graph_carry(&g, id.p2, id.p));
    EXPECT_OK(opt_graph_carry(&g, id.x1, id.x));
    EXPECT_OK(opt_graph_carry(&g, id.r1, id.r));
    EXPECT_OK(opt_graph_carry(&g, id.rr1, id.rr));
    EXPECT_OK(opt_search(&g, &o, &p));
    if (getenv("OPT_TEST_VERBOSE") != NULL)
        EXPECT_OK(opt_plan_explain(stdout, &g, &p, &o.cost));
    *rep = p.node[0].req[1].rep != 0;
    *c = p.model;
    opt_plan_free(&p);
    opt_graph_free(&g);
}

static void cg_plan(int pr, int pc, int64_t n, int64_t limit, opt_mode mode,
                    bool *rep, opt_counts *c)
{
    cg_plan_from(pr, pc, n, limit, mode, FIRST, rep, c);
}

static bool replicated(int pr, int pc, int64_t n, int64_t limit,
                       opt_mode mode)
{
    bool rep;
    opt_counts c;
    cg_plan(pr, pc, n, limit, mode, &rep, &c);
    return rep;
}

static void test_small_replicated(void **state)
{
    (void)state;
    int grids[4][2] = {{2, 1}, {1, 2}, {2, 2}, {3, 2}};
    for (int k = 0; k < 4; k++) {
        int pr = grids[k][0], pc = grids[k][1];
        assert_true(replicated(pr, pc, 100, 4 << 20, OPT_FULL));
        assert_true(replicated(pr, pc, 100, 4 << 20, OPT_AFFINE));
        /* mode none keeps paper 003's layout                            */
        assert_false(replicated(pr, pc, 100, 4 << 20, OPT_NONE));
    }
}

/* At n = 1000 the product on every rank costs P times its share, more
 * than the messages it saves, even with room for the copy.              */
static void test_large_distributed(void **state)
{
    (void)state;
    for (int m = OPT_AFFINE; m <= OPT_FULL; m++) {
        assert_false(replicated(2, 1, 1000, (int64_t)1 << 30, (opt_mode)m));
        assert_false(replicated(2, 2, 3000, (int64_t)1 << 30, (opt_mode)m));
    }
}

/* The cap: 0 never, and a cap one byte short of the matrix forbids it. */
static void test_cap(void **state)
{
    (void)state;
    int64_t bytes = 8 * 100 * 100;
    for (int m = OPT_AFFINE; m <= OPT_FULL; m++) {
        assert_false(replicated(2, 1, 100, 0, (opt_mode)m));
        assert_false(replicated(2, 1, 100, bytes - 1, (opt_mode)m));
        assert_true(replicated(2, 1, 100, bytes, (opt_mode)m));
    }
}

/* The plan that replicates A moves A's gather and nothing else when the
 * vectors are already everywhere: every rank receives every other rank's
 * block-cyclic piece (n = 100, nb = 64 on 2 x 2: pieces of 64 x 64,
 * 64 x 36, 36 x 64 and 36 x 36 elements), one message from each, and no
 * collective runs.  Once A holds its replicated view (a later
 * iteration), nothing moves at all.                                     */
static void test_gather_counted(void **state)
{
    (void)state;
    for (int m = OPT_AFFINE; m <= OPT_FULL; m++) {
        bool rep;
        opt_counts c;
        cg_plan_from(2, 2, 100, 4 << 20, (opt_mode)m, VECS_EVERYWHERE, &rep,
                     &c);
        assert_true(rep);
        assert_int_equal(c.msgs_p2p, 4 * 3);
        assert_int_equal(c.bytes_p2p, 8 * 3 * 100 * 100);
        assert_int_equal(c.msgs_coll, 0);
        assert_int_equal(c.bytes_coll, 0);
        cg_plan_from(2, 2, 100, 4 << 20, (opt_mode)m, A_REPLICATED, &rep, &c);
        assert_true(rep);
        assert_int_equal(c.msgs_p2p + c.bytes_p2p, 0);
        assert_int_equal(c.msgs_coll + c.bytes_coll, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_replicated),
        cmocka_unit_test(test_large_distributed),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_gather_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
