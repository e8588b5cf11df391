/* The plan cache (optimizer/opt_cache.h): structural keys, the bounded LRU
 * map under 10^4 distinct DAG shapes, plan variants and their checked
 * rebuild, the bounded improvement.                                       */
#include "opt_test.h"

#include <stdlib.h>

#include "optimizer/opt_cache.h"

static opt_defaults grid(int pr, int pc)
{
    opt_defaults df = {.mode = OPT_NONE, .pr = pr, .pc = pc, .nb = 0};
    return df;
}

/* A small DAG: y = a x + y; s = y . y; t = s / s, with knobs.            */
static void small_dag(opt_graph *g, const opt_defaults *df, int64_t n,
                      blas_op red, unsigned flags, const blas_layout *xl,
                      int edge)
{
    opt_graph_init(g, df);
    blas_layout v = xl ? *xl : opt_default_vec(df, n), sc = opt_default_sca(df);
    blas_layout yv = opt_default_vec(df, n);
    int x, y, a, y1, s, t;
    EXPECT_OK(opt_graph_livein(g, &v, &x));
    EXPECT_OK(opt_graph_livein(g, &yv, &y));
    EXPECT_OK(opt_graph_livein(g, &sc, &a));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, flags, (int[]){a, x, y}, 1, n,
                             &y1));
    if (red == BLAS_OP_DOT)
        EXPECT_OK(opt_graph_node(g, BLAS_OP_DOT, 0,
                                 (int[]){edge ? x : y1, y1}, 1, 1, &s));
    else
        EXPECT_OK(opt_graph_node(g, red, 0, (int[]){edge ? x : y1}, 1, 1, &s));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SDIV, 0, (int[]){s, s}, 1, 1, &t));
    EXPECT_OK(opt_graph_live_out(g, t, NULL));
    EXPECT_OK(opt_graph_live_out(g, y1, NULL));
}

static uint64_t key_of(const opt_graph *g, uint64_t *check)
{
    return opt_graph_key(g, OPT_FULL, check);
}

static void test_key(void **state)
{
    (void)state;
    opt_defaults df = grid(2, 2);
    opt_graph g0, g1;
    uint64_t c0, c1;
    /* identical structure (data never enters a graph): equal keys          */
    small_dag(&g0, &df, 100, BLAS_OP_DOT, 0, NULL, 0);
    small_dag(&g1, &df, 100, BLAS_OP_DOT, 0, NULL, 0);
    assert_true(key_of(&g0, &c0) == key_of(&g1, &c1));
    assert_true(c0 == c1);
    assert_true(opt_graph_shape_key(&g0, OPT_FULL) ==
                opt_graph_shape_key(&g1, OPT_FULL));
    uint64_t k0 = key_of(&g0, NULL);
    opt_graph_free(&g1);
    /* another operation                                                    */
    small_dag(&g1, &df, 100, BLAS_OP_NRM2, 0, NULL, 0);
    assert_true(key_of(&g1, NULL) != k0);
    opt_graph_free(&g1);
    /* another shape                                                        */
    small_dag(&g1, &df, 101, BLAS_OP_DOT, 0, NULL, 0);
    assert_true(key_of(&g1, NULL) != k0);
    opt_graph_free(&g1);
    /* another operand edge                                                 */
    small_dag(&g1, &df, 100, BLAS_OP_DOT, 0, NULL, 1);
    assert_true(key_of(&g1, NULL) != k0);
    opt_graph_free(&g1);
    /* another placement of a live-in value: another key, the same shape   */
    blas_layout col = blas_layout_vec(100, 0, 0, 2u, 2, 2);
    small_dag(&g1, &df, 100, BLAS_OP_DOT, 0, &col, 0);
    assert_true(key_of(&g1, NULL) != k0);
    assert_true(opt_graph_shape_key(&g1, OPT_FULL) ==
                opt_graph_shape_key(&g0, OPT_FULL));
    opt_graph_free(&g1);
    /* another grid, another mode                                           */
    opt_defaults d3 = grid(1, 4);
    small_dag(&g1, &d3, 100, BLAS_OP_DOT, 0, NULL, 0);
    assert_true(key_of(&g1, NULL) != k0);
    assert_true(opt_graph_key(&g0, OPT_AFFINE, NULL) != k0);
    /* an extra view of a live-in value                                     */
    opt_graph_free(&g1);
    small_dag(&g1, &df, 100, BLAS_OP_DOT, 0, NULL, 0);
    EXPECT_OK(opt_graph_livein_view(&g1, 0, &col));
    assert_true(key_of(&g1, NULL) != k0);
    opt_graph_free(&g1);
    opt_graph_free(&g0);
}

/* 10^4 distinct DAG shapes through a 256-plan cache.                      */
static void test_lru(void **state)
{
    (void)state;
    opt_defaults df = grid(2, 2);
    opt_cache *c = opt_cache_new(256);
    assert_non_null(c);
    const int N = 10000;
    uint64_t *keys = malloc((size_t)N * sizeof *keys);
    uint64_t *checks = malloc((size_t)N * sizeof *checks);
    assert_non_null(keys);
    assert_non_null(checks);
    opt_search_opts o = opt_search_default(OPT_NONE);
    for (int k = 0; k < N; k++) {
        opt_graph g;
        small_dag(&g, &df, 10 + k, (k & 1) ? BLAS_OP_DOT : BLAS_OP_ASUM, 0,
                  NULL, 0);
        keys[k] = key_of(&g, &checks[k]);
        for (int j = k - 1; j >= 0 && j > k - 300; j--)
            assert_true(keys[j] != keys[k]);
        opt_plan p;
        EXPECT_OK(opt_search(&g, &o, &p));
        assert_null(opt_cache_find(c, keys[k], checks[k]));
        opt_cache_entry *e = NULL;
        EXPECT_OK(opt_cache_put(c, keys[k], checks[k], 0, &p, NULL, &e));
        assert_non_null(e);
        assert_true(opt_cache_count(c) <= 256);
        /* keep key 0 hot: it must survive every eviction                  */
        if (k > 0) assert_non_null(opt_cache_find(c, keys[0], checks[0]));
        opt_plan_free(&p);
        opt_graph_free(&g);
    }
    assert_int_equal(opt_cache_count(c), 256);
    for (int k = N - 255; k < N; k++) {
        opt_cache_entry *e = opt_cache_find(c, keys[k], checks[k]);
        assert_non_null(e);
        assert_true(e->key == keys[k]);
    }
    for (int k = 1; k < N - 255; k++)
        assert_null(opt_cache_find(c, keys[k], checks[k]));
    assert_non_null(opt_cache_find(c, keys[0], checks[0]));
    /* a wrong check is a miss (collision guard); check 0 matches any      */
    assert_null(opt_cache_find(c, keys[N - 1], checks[N - 1] ^ 1));
    assert_non_null(opt_cache_find(c, keys[N - 1], 0));
    free(keys);
    free(checks);
    opt_cache_free(c);
}

/* A plan as (result layout, variant) per node comes back identical; any
 * tampering is refused.                                                   */
static void test_variants(void **state)
{
    (void)state;
    int grids[3][2] = {{2, 2}, {3, 3}, {1, 2}};
    for (int k = 0; k < 3; k++)
        for (int m = 0; m < 3; m++) {
            opt_defaults df = grid(grids[k][0], grids[k][1]);
            opt_search_opts o = opt_search_default((opt_mode)m);
            opt_graph g;
            opt_plan p, q;
            cg_steady(&df, 200, &o, 2, &g, &p);
            int var[32];
            blas_layout res[32];
            EXPECT_OK(opt_plan_variants(&g, &p, (opt_mode)m, var));
            for (int i = 0; i < g.nnodes; i++) {
                assert_true(var[i] >= 0);
                res[i] = p.node[i].res;
            }
            EXPECT_OK(opt_plan_rebuild(&g, (opt_mode)m, g.nnodes, res, var,
                                       &o.cost, &q));
            assert_true(opt_plan_equal(&p, &q));
            assert_true(q.model.bytes_p2p == p.model.bytes_p2p);
            opt_plan_free(&q);
            /* tampered: out of range, another layout, wrong count          */
            var[0] = 999;
            assert_int_equal(opt_plan_rebuild(&g, (opt_mode)m, g.nnodes, res,
                                              var, &o.cost, &q),
                             DESO_EINVAL);
            EXPECT_OK(opt_plan_variants(&g, &p, (opt_mode)m, var));
            res[1] = opt_default_mat(&df, 5, 5);
            assert_int_equal(opt_plan_rebuild(&g, (opt_mode)m, g.nnodes, res,
                                              var, &o.cost, &q),
                             DESO_EINVAL);
            assert_int_equal(opt_plan_rebuild(&g, (opt_mode)m, g.nnodes - 1,
                                              res, var, &o.cost, &q),
                             DESO_EINVAL);
            opt_plan_free(&p);
            opt_graph_free(&g);
        }
}

/* The bounded improvement never makes a plan worse, and improves mode
 * none's plan in mode full (a CG on a 1 x 4 grid, where mode none's
 * layouts leave room for it).                                             */
static void test_improve(void **state)
{
    (void)state;
    opt_defaults df = grid(1, 4);
    cg_state s = cg_initial(&df, 720);
    cg_ids id;
    opt_graph g;
    cg_build(&g, &df, &s, &id);
    opt_search_opts o = opt_search_default(OPT_FULL);
    opt_plan p;
    EXPECT_OK(opt_search(&g, &o, &p));
    double t = p.model.time;
    bool better = true;
    EXPECT_OK(opt_search_improve(&g, &o, 8, &p, &better));
    assert_true(p.model.time <= t);
    opt_plan_free(&p);
    EXPECT_OK(opt_plan_none(&g, &p));
    EXPECT_OK(opt_plan_cost(&g, &p, &o.cost, NULL, NULL, &p.model));
    t = p.model.time;
    EXPECT_OK(opt_search_improve(&g, &o, 64, &p, &better));
    assert_true(better);
    assert_true(p.model.time < t);
    opt_plan_free(&p);
    opt_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key),
        cmocka_unit_test(test_lru),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_improve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
