/* The cost model's local work and where a loop-carried vector returns,
 * against sums written out by hand:
 *   - a daxpy costs work_beta times 8 bytes times the elements its
 *     busiest rank holds of x, y and the result: replicated on a 2 x 1
 *     grid (every rank the whole of n = 1000), block over the grid rows
 *     (500), cyclic(2) over 3 rows at n = 7 (3 on row 0), n = 1 on 3 rows
 *     (1 on row 0, none elsewhere), by a partition of 5 rows into 4, 1
 *     (4); and work_beta = 0 costs nothing;
 *   - p = p * s read by a gemv that wants it whole, p carried to the next
 *     iteration, p in block over the rows: leaving the new p in blocks
 *     saves half the scal's work, but the next iteration's gemv reads p
 *     whole again, so the plan pays gathering it (time only) and keeping
 *     it whole is cheaper; without the carry mark the block plan is.     */
#include "opt_test.h"

#include "optimizer/opt_impl.h"

static int livein(opt_graph *g, blas_layout l)
{
    int id;
    EXPECT_OK(opt_graph_livein(g, &l, &id));
    return id;
}

/* The modelled time of one daxpy with x, y and the result all in L.    */
static double axpy_time(blas_layout L, const opt_params *pp)
{
    opt_defaults df = {.pr = L.pr, .pc = L.pc, .nb = 0};
    opt_graph g;
    opt_graph_init(&g, &df);
    int a = livein(&g, opt_default_sca(&df)), x = livein(&g, L);
    int y = livein(&g, L), r;
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_AXPY, 0, (int[]){a, x, y}, 1, L.n,
                             &r));
    opt_plan p;
    EXPECT_OK(opt_plan_none(&g, &p));
    p.node[0].res = p.node[0].req[1] = p.node[0].req[2] = L;
    opt_counts c;
    EXPECT_OK(opt_plan_cost(&g, &p, pp, NULL, NULL, &c));
    assert_int_equal(c.bytes_p2p + c.msgs_p2p + c.bytes_coll + c.msgs_coll,
                     0);
    opt_plan_free(&p);
    opt_graph_free(&g);
    return c.time;
}

static void test_axpy_work(void **state)
{
    (void)state;
    opt_params pp = opt_params_default();
    double w = pp.work_beta * 8.0;
    assert_true(w > 0.0);
    assert_true(axpy_time(blas_layout_vec(1000, -1, 0, 3u, 2, 1), &pp) ==
                w * 3000);
    assert_true(axpy_time(blas_layout_vec(1000, 0, 0, 2u, 2, 1), &pp) ==
                w * 1500);
    assert_true(axpy_time(blas_layout_vec(7, 0, 2, 2u, 3, 1), &pp) == w * 9);
    assert_true(axpy_time(blas_layout_vec(1, 0, 0, 2u, 3, 1), &pp) == w * 3);
    int64_t start[3] = {0, 4, 5};
    blas_part part = {.n = 5, .nparts = 2, .start = start};
    assert_true(axpy_time(blas_layout_part(&part, 2, 1), &pp) == w * 12);
    pp.work_beta = 0.0;
    assert_true(axpy_time(blas_layout_vec(1000, -1, 0, 3u, 2, 1), &pp) ==
                0.0);
}

/* q = A p (p whole), p1 = s p; the plan with p1 in layout R.            */
static double carry_time(bool carry, const blas_layout *R)
{
    int64_t n = 2000;
    opt_defaults df = {.pr = 2, .pc = 1, .nb = 0};
    blas_layout whole = blas_layout_vec(n, -1, 0, 3u, 2, 1);
    blas_layout rows = blas_layout_vec(n, 0, 0, 2u, 2, 1);
    opt_graph g;
    opt_graph_init(&g, &df);
    int s = livein(&g, opt_default_sca(&df));
    int A = livein(&g, opt_default_mat(&df, n, n)), p = livein(&g, rows);
    int q, p1;
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_GEMV, 0, (int[]){s, A, p}, 1, n,
                             &q));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_SCAL, 0, (int[]){s, p}, 1, n, &p1));
    EXPECT_OK(opt_graph_live_out(&g, q, NULL));
    EXPECT_OK(opt_graph_live_out(&g, p1, NULL));
    if (carry) EXPECT_OK(opt_graph_carry(&g, p1, p));
    opt_plan pl;
    EXPECT_OK(opt_plan_none(&g, &pl));
    pl.node[0].req[2] = whole;          /* the gemv gathers p            */
    pl.node[1].req[1] = *R;
    pl.node[1].res = *R;
    opt_params pp = opt_params_default();
    opt_counts c;
    EXPECT_OK(opt_plan_cost(&g, &pl, &pp, NULL, NULL, &c));
    opt_plan_free(&pl);
    opt_graph_free(&g);
    return c.time;
}

static void test_carry_to_first_read(void **state)
{
    (void)state;
    blas_layout whole = blas_layout_vec(2000, -1, 0, 3u, 2, 1);
    blas_layout rows = blas_layout_vec(2000, 0, 0, 2u, 2, 1);
    assert_true(carry_time(false, &rows) < carry_time(false, &whole));
    assert_true(carry_time(true, &whole) < carry_time(true, &rows));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axpy_work),
        cmocka_unit_test(test_carry_to_first_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
