/* The optimiser and the sparse product (usmv), serially on a 2x2 grid
 * with fixed parameters: the product's node is pinned to its matrix's
 * partitions in every mode; the vectors it touches may join them in
 * modes affine and full (an update of a vector that lives by the
 * partition stays there, and its dot product reduces over every rank:
 * the plan moves nothing but the product's halo), while mode none keeps
 * paper 003's default layouts and pays for the moves; the model's halo
 * term is the facts' table (bytes, messages), and the reference
 * evaluation gives the search's total bit for bit.                      */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "blas/blas.h"
#include "optimizer/opt_impl.h"

#define EXPECT_OK(expr) assert_int_equal((expr), DESO_OK)

#define N 10
static const int64_t start[5] = {0, 3, 6, 8, 10};
static const blas_part part = {.n = N, .nparts = 4, .start = start};
/* rank s sends rank r tab[4 s + r] halo entries                          */
static const int64_t tab[16] = {0, 2, 1, 0, 2, 0, 0, 3, 1, 0, 0, 2, 0, 3, 2, 0};
static const blas_sparse facts = {&part, &part, tab, 0x1234};

/* p (by the partition), alpha live in; q = A p; p2 = alpha q + p;
 * s = p2 . p2; p2 and s live out.                                       */
static void build(opt_graph *g, opt_mode mode, int *usmv)
{
    opt_defaults df = {mode, 2, 2, 2, 0};
    opt_graph_init(g, &df);
    blas_layout pl = blas_layout_part(&part, 2, 2);
    blas_layout al = opt_default_sca(&df);
    int p, a, q, p2, s;
    EXPECT_OK(opt_graph_livein(g, &pl, &p));
    EXPECT_OK(opt_graph_livein(g, &al, &a));
    blas_desc d = {.op = BLAS_OP_USMV, .flags = 0, .sp = &facts};
    int o0[2] = {a, p};
    EXPECT_OK(opt_graph_node_desc(g, &d, o0, 1, N, &q));
    *usmv = 0;
    int o1[3] = {a, q, p};
    EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0, o1, 1, N, &p2));
    int o2[2] = {p2, p2};
    EXPECT_OK(opt_graph_node(g, BLAS_OP_DOT, 0, o2, 1, 1, &s));
    EXPECT_OK(opt_graph_live_out(g, p2, NULL));
    EXPECT_OK(opt_graph_live_out(g, s, NULL));
}

static void test_plans(void **state)
{
    (void)state;
    int64_t hb = 0, hm = 0;
    for (int k = 0; k < 16; k++) {
        hb += 8 * tab[k];
        hm += tab[k] > 0;
    }
    const opt_mode modes[3] = {OPT_NONE, OPT_AFFINE, OPT_FULL};
    for (int m = 0; m < 3; m++) {
        opt_graph g;
        int u;
        build(&g, modes[m], &u);
        assert_int_equal(g.nparts, 1);
        opt_search_opts o = opt_search_default(modes[m]);
        o.cost = opt_params_default();
        o.cost.reduce_holders_only = true;
        opt_plan p;
        EXPECT_OK(opt_search(&g, &o, &p));
        /* the product: y and x by the partition, whatever the mode       */
        assert_int_equal(p.node[u].res.dist, BLAS_DIST_PART);
        assert_int_equal(p.node[u].req[1].dist, BLAS_DIST_PART);
        opt_counts ref;
        EXPECT_OK(opt_plan_cost(&g, &p, &o.cost, NULL, NULL, &ref));
        assert_true(memcmp(&ref.time, &p.model.time, sizeof ref.time) == 0);
        assert_int_equal(ref.bytes_p2p, p.model.bytes_p2p);
        if (modes[m] == OPT_NONE) {
            /* the update in the default layout: q and p move there       */
            assert_int_not_equal(p.node[1].res.dist, BLAS_DIST_PART);
            assert_true(p.model.bytes_p2p > hb);
        } else {
            /* the update stays by the partition, the dot product reduces
             * over every rank, and only the halo moves                   */
            assert_int_equal(p.node[1].res.dist, BLAS_DIST_PART);
            assert_int_equal(p.node[2].req[0].dist, BLAS_DIST_PART);
            assert_int_equal(p.model.bytes_p2p, hb);
            assert_int_equal(p.model.msgs_p2p, hm);
            assert_int_equal(blas_red_dim(&g.nodes[2].d, p.node[2].req),
                             BLAS_RED_ALL);
            assert_true(p.model.msgs_coll >= 1);
        }
        opt_plan_free(&p);
        opt_graph_free(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
