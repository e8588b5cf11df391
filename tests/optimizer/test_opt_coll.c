/* Measured collectives in the cost model: figures equal to the formula's
 * give the formula's plans, on grids whose two dimensions differ (so a
 * figure read from the wrong communicator or kind shows); and a kind
 * priced out by its figures is one that mode full's plans avoid.       */
#include "opt_test.h"

#include <math.h>

/* The formula's figures for every kind and communicator of grid pr x pc
 * (optimizer/opt_cost.c: factor ceil(log2 p) (alpha + beta m), plus a
 * quarter alpha per call).                                              */
static void formula_figures(opt_params *pp, int pr, int pc)
{
    int sizes[OPT_COMMS] = {pr, pc, pr * pc};
    for (int k = 0; k < OPT_COLL_KINDS; k++)
        for (int d = 0; d < OPT_COMMS; d++) {
            int steps = 0;
            while ((1 << steps) < sizes[d]) steps++;
            double f = k == OPT_COLL_ALLREDUCE ? 2.0 : 1.0;
            pp->coll[k][d].call = f * steps * pp->alpha + 0.25 * pp->alpha;
            pp->coll[k][d].byte = f * steps * pp->beta;
        }
}

static void steady(int pr, int pc, opt_mode mode, const opt_params *cost,
                   opt_graph *g, opt_plan *p)
{
    opt_defaults df = {.mode = OPT_NONE, .pr = pr, .pc = pc, .nb = 0};
    opt_search_opts o = opt_search_default(mode);
    o.cost = *cost;
    o.cost.reduce_holders_only = true;
    cg_steady(&df, 600, &o, 3, g, p);
}

static const int grids[][2] = {{2, 4}, {4, 2}, {1, 4}, {3, 2}, {4, 4}};

static void test_formula_figures(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof grids / sizeof *grids; k++)
        for (int m = 0; m < 3; m++) {
            int pr = grids[k][0], pc = grids[k][1];
            opt_params plain = opt_params_default(), measured = plain;
            formula_figures(&measured, pr, pc);
            opt_graph g1, g2;
            opt_plan p1, p2;
            steady(pr, pc, (opt_mode)m, &plain, &g1, &p1);
            steady(pr, pc, (opt_mode)m, &measured, &g2, &p2);
            assert_true(opt_plan_equal(&p1, &p2));
            assert_int_equal(p1.model.msgs_coll, p2.model.msgs_coll);
            assert_int_equal(p1.model.bytes_coll, p2.model.bytes_coll);
            assert_true(fabs(p1.model.time - p2.model.time) <=
                        1e-12 * p1.model.time);
            opt_plan_free(&p1);
            opt_plan_free(&p2);
            opt_graph_free(&g1);
            opt_graph_free(&g2);
        }
}

/* The plan of mode full under `cost`, then its time under `judge`.       */
static double judged(int pr, int pc, const opt_params *cost,
                     const opt_params *judge)
{
    opt_graph g;
    opt_plan p;
    steady(pr, pc, OPT_FULL, cost, &g, &p);
    opt_counts c;
    opt_params j = *judge;
    j.reduce_holders_only = true;
    EXPECT_OK(opt_plan_cost(&g, &p, &j, NULL, NULL, &c));
    opt_plan_free(&p);
    opt_graph_free(&g);
    return c.time;
}

/* One kind (or two) at a second a call, the others at the formula's
 * figures.  With all-reduce priced out, mode full finds a plan without
 * one (its time under those figures stays far below a second): a reduce
 * and a broadcast always do its work.  With reduce and broadcast priced
 * out it cannot always do without them (mode none's plans broadcast
 * too), but it uses fewer than the plan made with all-reduce priced out;
 * and each plan is the cheaper one under its own figures.              */
static void test_priced_out(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof grids / sizeof *grids; k++) {
        int pr = grids[k][0], pc = grids[k][1];
        opt_params base = opt_params_default();
        formula_figures(&base, pr, pc);
        opt_params no_all = base, no_split = base;
        for (int d = 0; d < OPT_COMMS; d++) {
            no_all.coll[OPT_COLL_ALLREDUCE][d].call = 1.0;
            no_split.coll[OPT_COLL_REDUCE][d].call = 1.0;
            no_split.coll[OPT_COLL_BCAST][d].call = 1.0;
        }
        assert_true(judged(pr, pc, &no_all, &no_all) < 0.5);
        assert_true(judged(pr, pc, &no_split, &no_split) + 0.5 <
                    judged(pr, pc, &no_all, &no_split));
        assert_true(judged(pr, pc, &no_all, &no_all) + 0.5 <
                    judged(pr, pc, &no_split, &no_all));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formula_figures),
        cmocka_unit_test(test_priced_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
