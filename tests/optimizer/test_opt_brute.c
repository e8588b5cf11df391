/* Greedy against brute force on DAGs small enough to enumerate every
 * placement the mode allows.  What greedy guarantees is asserted (never
 * worse than mode none on the same graph; never better than the optimum,
 * which checks that its plan lies in the searched space); how close it
 * comes to the optimum is reported.                                      */
#include "opt_test.h"

#include <stdlib.h>

typedef struct brute {
    const opt_graph *g;
    opt_mode mode;
    opt_params pp;
    opt_memo *memo;
    opt_plan p;
    double best;
    long evals;
} brute;

static void dfs(brute *b, int i)
{
    const opt_graph *g = b->g;
    if (i == g->nnodes) {
        opt_counts c;
        EXPECT_OK(opt_plan_cost(g, &b->p, &b->pp, b->memo, NULL, &c));
        if (b->evals == 0 || c.time < b->best) b->best = c.time;
        b->evals++;
        return;
    }
    blas_layout cur[BLAS_MAXOPS];
    for (int k = 0; k < g->nodes[i].d.nops; k++)
        cur[k] = opt_test_layout(g, &b->p, g->nodes[i].ops[k]);
    opt_place *c = malloc(OPT_MAXCANDS * sizeof *c);
    int n;
    EXPECT_OK(opt_node_cands(g, i, b->mode, cur, c, &n));
    for (int k = 0; k < n; k++) {
        b->p.node[i] = c[k];
        dfs(b, i + 1);
    }
    free(c);
}

static double brute_force(const opt_graph *g, opt_mode mode,
                          const opt_params *pp, long *evals)
{
    brute b = {.g = g, .mode = mode, .pp = *pp, .memo = opt_memo_new()};
    EXPECT_OK(opt_plan_none(g, &b.p));   /* storage of the right size     */
    dfs(&b, 0);
    opt_plan_free(&b.p);
    opt_memo_free(b.memo);
    *evals = b.evals;
    return b.best;
}

typedef struct rng { uint64_t s; } rng;
static unsigned rnd(rng *r, unsigned n)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((r->s >> 33) % n);
}

/* A random DAG of level-1 operations and scalar arithmetic on a grid.    */
static void random_dag(opt_graph *g, const opt_defaults *df, int64_t n,
                       int nodes, rng *r)
{
    opt_graph_init(g, df);
    int vec[32], sca[32], nv = 0, ns = 0, id;
    blas_layout v0 = opt_default_vec(df, n), s0 = opt_default_sca(df);
    for (int k = 0; k < 2; k++) {
        EXPECT_OK(opt_graph_livein(g, &v0, &id));
        vec[nv++] = id;
    }
    EXPECT_OK(opt_graph_livein(g, &s0, &id));
    sca[ns++] = id;
    for (int i = 0; i < nodes; i++) {
        int x = vec[rnd(r, (unsigned)nv)], y = vec[rnd(r, (unsigned)nv)];
        int a = sca[rnd(r, (unsigned)ns)], b = sca[rnd(r, (unsigned)ns)];
        switch (rnd(r, 5)) {
        case 0:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_DOT, 0, (int[]){x, y}, 1, 1,
                                     &id));
            sca[ns++] = id;
            break;
        case 1:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0, (int[]){a, x, y}, 1,
                                     n, &id));
            vec[nv++] = id;
            break;
        case 2:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_SCAL, 0, (int[]){a, x}, 1, n,
                                     &id));
            vec[nv++] = id;
            break;
        case 3:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_SDIV, 0, (int[]){a, b}, 1, 1,
                                     &id));
            sca[ns++] = id;
            break;
        default:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_NRM2, 0, (int[]){x}, 1, 1,
                                     &id));
            sca[ns++] = id;
            break;
        }
    }
    /* the last scalar is read everywhere (a force point), the last vector
     * is live-out                                                         */
    EXPECT_OK(opt_graph_live_out(g, sca[ns - 1], &s0));
    EXPECT_OK(opt_graph_live_out(g, vec[nv - 1], NULL));
}

static void test_brute(void **state)
{
    (void)state;
    int grids[3][2] = {{2, 2}, {2, 3}, {3, 3}};
    rng r = {12345};
    double worst = 1.0, sum = 0.0;
    int cases = 0, optimal = 0;
    for (int gk = 0; gk < 3; gk++)
        for (int t = 0; t < 12; t++) {
            opt_defaults df = {.pr = grids[gk][0], .pc = grids[gk][1], .nb = 0};
            opt_graph g;
            random_dag(&g, &df, 60 + 7 * t, 4 + t % 2, &r);
            for (int m = 1; m < 3; m++) {
                opt_search_opts o = opt_search_default((opt_mode)m);
                opt_plan p, none;
                EXPECT_OK(opt_search(&g, &o, &p));
                EXPECT_OK(opt_plan_none(&g, &none));
                opt_counts cn;
                EXPECT_OK(opt_plan_cost(&g, &none, &o.cost, NULL, NULL, &cn));
                long evals;
                double opt = brute_force(&g, (opt_mode)m, &o.cost, &evals);
                assert_true(p.model.time <= cn.time);
                assert_true(p.model.time >= opt * (1 - 1e-12));
                double ratio = opt > 0 ? p.model.time / opt : 1.0;
                if (ratio > worst) worst = ratio;
                sum += ratio;
                cases++;
                optimal += ratio <= 1 + 1e-12;
                opt_plan_free(&p);
                opt_plan_free(&none);
            }
            opt_graph_free(&g);
        }
    printf("greedy vs brute force on %d random DAGs (4-5 nodes, modes affine "
           "and full): optimal in %d, mean cost ratio %.4f, worst %.4f\n",
           cases, optimal, sum / cases, worst);
}

/* The brief's tiny DAG: s = x.y; z = s x + y; t = ||z||; u = t x.         */
static void test_tiny(void **state)
{
    (void)state;
    opt_defaults df = {.pr = 2, .pc = 2, .nb = 0};
    opt_graph g;
    opt_graph_init(&g, &df);
    blas_layout v0 = opt_default_vec(&df, 100), s0 = opt_default_sca(&df);
    int x, y, s, z, t, u;
    EXPECT_OK(opt_graph_livein(&g, &v0, &x));
    EXPECT_OK(opt_graph_livein(&g, &v0, &y));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_DOT, 0, (int[]){x, y}, 1, 1, &s));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_AXPY, 0, (int[]){s, x, y}, 1, 100, &z));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_NRM2, 0, (int[]){z}, 1, 1, &t));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_SCAL, 0, (int[]){t, x}, 1, 100, &u));
    EXPECT_OK(opt_graph_live_out(&g, t, &s0));
    EXPECT_OK(opt_graph_live_out(&g, u, NULL));
    for (int m = 0; m < 3; m++) {
        opt_search_opts o = opt_search_default((opt_mode)m);
        opt_plan p;
        EXPECT_OK(opt_search(&g, &o, &p));
        long evals;
        double opt = brute_force(&g, (opt_mode)m, &o.cost, &evals);
        printf("tiny DAG, mode %-6s: greedy %.3e s, brute force optimum "
               "%.3e s over %ld plans\n", opt_mode_name((opt_mode)m),
               p.model.time, opt, evals);
        assert_true(p.model.time >= opt * (1 - 1e-12));
        opt_plan_free(&p);
    }
    opt_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_brute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
