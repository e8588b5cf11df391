/* Fusion of independent reductions: k independent ddot / dnrm2 / dasum
 * nodes forced together run as ONE collective per communicator (the
 * concatenated partial results), give the sequential values, and a
 * reduction that depends on another is not fused.  Modes none, affine and
 * full, every grid tu_grids gives; on one grid column (and at P = 1) mode
 * none's reductions need no collective, so there the test says fusion is
 * not exercised instead of counting.
 * deso-np: 1 2 3 4                                                          */
#include "test_util.h"

#include "optimizer/opt_graph.h"

#define N 37
#define K 5

#define EXPECT_OK_(call) assert_int_equal((int)(call), (int)DESO_OK)

static deso_ctx *mk(deso_mode mode, int pr, int pc)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = mode;
    o.grid_rows = pr;
    o.grid_cols = pc;
    o.nb = 4;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    return ctx;
}

/* Collective messages summed over ranks since the last reset, without the
 * force's SPMD hash check (one all-reduce on the context's communicator,
 * counted once when P > 1).                                                */
static int64_t coll_msgs(void)
{
    deso_stats s;
    TU_OK(deso_stats_get(&s));
    long long v = (long long)s.msgs_collective;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return (int64_t)v - (tu_size() > 1 ? 1 : 0);
}

static double sdot(const double *a, const double *b)
{
    double s = 0.0;
    for (int i = 0; i < N; i++) s += a[i] * b[i];
    return s;
}

static double sasum(const double *a)
{
    double s = 0.0;
    for (int i = 0; i < N; i++) s += fabs(a[i]);
    return s;
}

static void run(deso_mode mode, int pr, int pc)
{
    deso_ctx *ctx = mk(mode, pr, pc);
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    int rows = info.grid_rows, cols = info.grid_cols;
    tu_rng r = {12345};
    double a[6][N];
    deso_vec *v[6];
    for (int k = 0; k < 6; k++) {
        tu_fill(&r, a[k], N);
        TU_OK(deso_vec_from_array(ctx, N, a[k], DESO_ALL_RANKS, &v[k]));
    }
    deso_scalar *s[K];
    for (int k = 0; k < K; k++) TU_OK(deso_scalar_create(ctx, 0.0, &s[k]));
    TU_OK(deso_flush(ctx));

    /* one reduction alone: the collectives one reduction costs            */
    deso_stats_reset();
    TU_OK(deso_ddot(N, v[4], 1, v[5], 1, s[0]));
    TU_OK(deso_flush(ctx));
    int64_t one = coll_msgs();
    assert_true(tu_all(tu_srel(tu_get(s[0]), sdot(a[4], a[5])) < 1e-12));

    /* K independent reductions forced once: one fused collective          */
    deso_stats_reset();
    TU_OK(deso_ddot(N, v[0], 1, v[1], 1, s[0]));
    TU_OK(deso_dnrm2(N, v[1], 1, s[1]));
    TU_OK(deso_ddot(N, v[2], 1, v[3], 1, s[2]));
    TU_OK(deso_dasum(N, v[3], 1, s[3]));
    TU_OK(deso_dnrm2(N, v[0], 1, s[4]));
    TU_OK(deso_flush(ctx));
    int64_t fused = coll_msgs();
    double want[K] = {sdot(a[0], a[1]), sqrt(sdot(a[1], a[1])),
                      sdot(a[2], a[3]), sasum(a[3]), sqrt(sdot(a[0], a[0]))};
    for (int k = 0; k < K; k++)
        assert_true(tu_all(tu_srel(tu_get(s[k]), want[k]) < 1e-12));
    if (fused != one)
        print_error("mode %d grid %dx%d: %lld collectives for %d fused "
                    "reductions, one alone %lld\n", (int)mode, rows, cols,
                    (long long)fused, K, (long long)one);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (cols > 1) {
        /* The vectors are folded over the grid columns: a reduction is a
         * collective on each grid row's communicator (mode none: exactly
         * one per row), and the K fused reductions cost what one costs,
         * not K times that.  Modes affine and full may gather the two
         * vectors of a reduction alone instead (a short exchange can cost
         * less than a collective), never the six vectors of the K.        */
        if (mode == DESO_MODE_NONE)
            assert_true(tu_all(one == rows && fused == one));
        else
            assert_true(tu_all(fused >= 1 && fused <= (one > 0 ? one : rows)));
    } else {
        /* One grid column (or one rank): mode none's vectors are whole on
         * every rank and no reduction communicates, so fusion cannot
         * show here; the other modes still may not cost more fused.      */
        if (mode == DESO_MODE_NONE)
            assert_true(tu_all(one == 0 && fused == 0));
        assert_true(tu_all(fused == one));
        if (me == 0 && mode == DESO_MODE_NONE)
            printf("grid %dx%d: reductions need no collective, fusion is "
                   "not exercised on this grid\n", rows, cols);
    }
    if (getenv("TEST_FUSE_VERBOSE") != NULL && me == 0)
        printf("mode %d grid %dx%d: one %lld fused(%d) %lld\n", (int)mode,
               rows, cols, (long long)one, K, (long long)fused);

    /* dependent: s1 = ||s0 x2|| with s0 = x4 . x5 reads s0: not fused     */
    deso_stats_reset();
    TU_OK(deso_ddot(N, v[4], 1, v[5], 1, s[0]));
    TU_OK(deso_dscal(N, s[0], v[2], 1));
    TU_OK(deso_dnrm2(N, v[2], 1, s[1]));
    TU_OK(deso_flush(ctx));
    int64_t dep = coll_msgs();
    double d0 = sdot(a[4], a[5]);
    assert_true(tu_all(tu_srel(tu_get(s[0]), d0) < 1e-12));
    assert_true(tu_all(
        tu_srel(tu_get(s[1]), fabs(d0) * sqrt(sdot(a[2], a[2]))) < 1e-12));
    /* (modes affine and full may place x2 where its norm needs no
     * collective at all: only mode none's count is fixed)                 */
    if (mode == DESO_MODE_NONE) assert_true(tu_all(dep == 2 * one));

    for (int k = 0; k < K; k++) TU_OK(deso_scalar_destroy(&s[k]));
    for (int k = 0; k < 6; k++) TU_OK(deso_vec_destroy(&v[k]));
    TU_OK(deso_finalize(&ctx));
}

static void test_fuse_independent(void **state)
{
    (void)state;
    int grids[4][2];
    int ng = tu_grids(grids);
    deso_mode modes[3] = {DESO_MODE_NONE, DESO_MODE_AFFINE, DESO_MODE_FULL};
    for (int m = 0; m < 3; m++)
        for (int g = 0; g < ng; g++) run(modes[m], grids[g][0], grids[g][1]);
}

/* opt_fuse_groups on a hand-made graph (2 x 2 grid, mode none's plan):
 *   n0 a = x0.x1   n1 b = ||x2||   n2 c = a / b   n3 d = |x3|_1
 *   n4 e = x0.x3   n5 f = c * d    n6 g = ||x1||
 * n0, n1 group (n2 reads both: the group ends there); n3 and n4 group
 * (n5 reads d: it ends there); n6 stands alone.  idamax never fuses.    */
static void test_fuse_groups_pure(void **state)
{
    (void)state;
    opt_defaults df = {.mode = OPT_NONE, .pr = 2, .pc = 2, .nb = 4};
    opt_graph g;
    opt_graph_init(&g, &df);
    blas_layout xv = opt_default_vec(&df, 40);
    int x[4], r[8];
    for (int k = 0; k < 4; k++) EXPECT_OK_(opt_graph_livein(&g, &xv, &x[k]));
    int o0[2] = {x[0], x[1]}, o1[1] = {x[2]}, o3[1] = {x[3]};
    int o4[2] = {x[0], x[3]}, o6[1] = {x[1]};
    EXPECT_OK_(opt_graph_node(&g, BLAS_OP_DOT, 0, o0, 1, 1, &r[0]));
    EXPECT_OK_(opt_graph_node(&g, BLAS_OP_NRM2, 0, o1, 1, 1, &r[1]));
    int o2[2] = {r[0], r[1]};
    EXPECT_OK_(opt_graph_node(&g, BLAS_OP_SDIV, 0, o2, 1, 1, &r[2]));
    EXPECT_OK_(opt_graph_node(&g, BLAS_OP_ASUM, 0, o3, 1, 1, &r[3]));
    EXPECT_OK_(opt_graph_node(&g, BLAS_OP_DOT, 0, o4, 1, 1, &r[4]));
    int o5[2] = {r[2], r[3]};
    EXPECT_OK_(opt_graph_node(&g, BLAS_OP_SMUL, 0, o5, 1, 1, &r[5]));
    EXPECT_OK_(opt_graph_node(&g, BLAS_OP_NRM2, 0, o6, 1, 1, &r[6]));
    EXPECT_OK_(opt_graph_node(&g, BLAS_OP_IAMAX, 0, o6, 1, 1, &r[7]));
    opt_plan p;
    EXPECT_OK_(opt_plan_none(&g, &p));
    int fuse[8];
    EXPECT_OK_(opt_fuse_groups(&g, &p, fuse));
    int want[8] = {0, 0, -1, 3, 3, -1, -1, -1};
    for (int i = 0; i < 8; i++) assert_int_equal(fuse[i], want[i]);
    /* the model: the fused pairs cost one collective each, n6 its own   */
    opt_params pp = opt_params_default();
    opt_eval ev;
    EXPECT_OK_(opt_eval_init(&ev, &g));
    EXPECT_OK_(opt_plan_cost(&g, &p, &pp, NULL, &ev, NULL));
    assert_true(ev.node_cost[0].msgs_coll > 0);
    assert_int_equal(ev.node_cost[1].msgs_coll, 0);
    assert_int_equal(ev.node_cost[3].msgs_coll, ev.node_cost[0].msgs_coll);
    assert_int_equal(ev.node_cost[4].msgs_coll, 0);
    assert_int_equal(ev.node_cost[6].msgs_coll, ev.node_cost[0].msgs_coll);
    /* payloads: ddot's sum and dnrm2's three scaled sums of squares (4
     * doubles) against dnrm2 alone (3), and dasum's and ddot's (2)        */
    assert_int_equal(3 * ev.node_cost[0].bytes_coll,
                     4 * ev.node_cost[6].bytes_coll);
    assert_int_equal(3 * ev.node_cost[3].bytes_coll,
                     2 * ev.node_cost[6].bytes_coll);
    opt_eval_free(&ev);
    opt_plan_free(&p);
    opt_graph_free(&g);
}

TU_MAIN(cmocka_unit_test(test_fuse_groups_pure),
        cmocka_unit_test(test_fuse_independent))
