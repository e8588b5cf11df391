/* The cost model's I/O term: an out-of-core matrix is priced by the
 * bytes its busiest rank streams from its local array file.
 *
 * A DAG of K gemvs, each on its own vector x_i, all with one matrix A on a
 * 2 x 2 grid, the vectors in column blocks of 5 and A in blocks of 4: two
 * plans do the same work.  The streaming plan reads A where it is and
 * moves each x_i to A's blocks (K exchanges); the remapping plan moves A
 * once to blocks of 5 and reads every x_i where it is.
 *
 * Oracles: without the I/O term the remap looks cheaper (one remap
 * against K exchanges), which is the choice the term must prevent; with
 * a disk's read time per byte the streaming plan wins; the term is, to
 * rounding, K reads of A's busiest piece for the streaming plan, and for
 * the remapping plan the read of every piece of A (to send it) plus the
 * write and K reads of the new pieces, the busiest piece computed here
 * from the block-cyclic counts; and the search of modes affine and full
 * never moves A: each of its gemvs reads A in the layout it has.         */
#include "opt_test.h"

#include <math.h>

#include "optimizer/opt_impl.h"

#define K 16
#define M 64
#define NX 64
#define IO_BETA 1e-8        /* a 100 MB/s disk                              */

/* The busiest rank's bytes of a matrix in layout l.                      */
static double busiest(const blas_layout *l)
{
    int64_t rows = 0, cols = 0;
    for (int r = 0; r < l->pr; r++) {
        int64_t k = blas_numroc(l->m, l->b, r, l->pr);
        if (k > rows) rows = k;
    }
    for (int c = 0; c < l->pc; c++) {
        int64_t k = blas_numroc(l->n, l->nb, c, l->pc);
        if (k > cols) cols = k;
    }
    return 8.0 * (double)rows * (double)cols;
}

typedef struct dag {
    opt_graph g;
    blas_layout A, A5, x;
    int gemv[K];
} dag;

/* y_i = A x_i for i < K; A out of core.                                  */
static void build(dag *d, const opt_defaults *df)
{
    opt_graph_init(&d->g, df);
    d->A = blas_layout_mat(M, NX, 4, 4, df->pr, df->pc);
    d->A5 = blas_layout_mat(M, NX, 4, 5, df->pr, df->pc);
    /* the vectors where a gemv on A5 reads them, so that they need not
     * move when A does                                                   */
    blas_desc gd = {.op = BLAS_OP_GEMV};
    blas_layout one = opt_default_sca(df), res, req[BLAS_MAXOPS];
    blas_layout cur[BLAS_MAXOPS] = {one, d->A5,
                                    blas_layout_vec(NX, 1, 5, 1u, df->pr,
                                                    df->pc)};
    gd.nops = blas_desc_nops(gd.op, 0);
    EXPECT_OK(opt_place_node(df, &gd, cur, &res, req));
    d->x = req[2];
    int a, Aid;
    EXPECT_OK(opt_graph_livein(&d->g, &one, &a));
    EXPECT_OK(opt_graph_livein(&d->g, &d->A, &Aid));
    EXPECT_OK(opt_graph_ooc(&d->g, Aid));
    for (int i = 0; i < K; i++) {
        int x, y;
        EXPECT_OK(opt_graph_livein(&d->g, &d->x, &x));
        EXPECT_OK(opt_graph_node(&d->g, BLAS_OP_GEMV, 0, (int[]){a, Aid, x},
                                 1, M, &y));
        EXPECT_OK(opt_graph_live_out(&d->g, y, NULL));
        d->gemv[i] = d->g.nnodes - 1;
    }
}

/* The plan that reads A in layout Alay in every gemv.                    */
static void plan_with(const dag *d, const blas_layout *Alay, opt_plan *p)
{
    EXPECT_OK(opt_plan_none(&d->g, p));
    for (int i = 0; i < K; i++) {
        const opt_node *nd = &d->g.nodes[d->gemv[i]];
        blas_layout cur[BLAS_MAXOPS] = {d->g.vals[nd->ops[0]].views[0], *Alay,
                                        d->x};
        opt_place *pl = &p->node[d->gemv[i]];
        EXPECT_OK(opt_place_node(&d->g.df, &nd->d, cur, &pl->res, pl->req));
    }
}

static double cost(const dag *d, const opt_plan *p, double io_beta)
{
    opt_params pp = opt_params_default();
    pp.io_beta = io_beta;
    opt_counts c;
    EXPECT_OK(opt_plan_cost(&d->g, p, &pp, NULL, NULL, &c));
    return c.time;
}

static void near(double got, double want)
{
    if (fabs(got - want) > 1e-9 * fabs(want)) {
        print_error("%.17g, wanted %.17g\n", got, want);
        fail();
    }
}

static void test_stream_beats_remap(void **state)
{
    (void)state;
    opt_defaults df = {.mode = OPT_NONE, .pr = 2, .pc = 2, .nb = 4};
    dag d;
    build(&d, &df);
    opt_plan stream, remap;
    plan_with(&d, &d.A, &stream);
    plan_with(&d, &d.A5, &remap);
    double s0 = cost(&d, &stream, 0.0), r0 = cost(&d, &remap, 0.0);
    double s1 = cost(&d, &stream, IO_BETA), r1 = cost(&d, &remap, IO_BETA);
    printf("without the I/O term: stream %.3e s, remap %.3e s; with it: "
           "stream %.3e s, remap %.3e s\n", s0, r0, s1, r1);
    assert_true(r0 < s0);
    assert_true(s1 < r1);
    near(s1 - s0, K * IO_BETA * busiest(&d.A));
    near(r1 - r0, IO_BETA * (busiest(&d.A) + (1 + K) * busiest(&d.A5)));
    opt_plan_free(&stream);
    opt_plan_free(&remap);
    /* the search streams: A is read where it is                         */
    for (int m = OPT_AFFINE; m <= OPT_FULL; m++) {
        opt_search_opts o = opt_search_default((opt_mode)m);
        o.cost.io_beta = IO_BETA;
        d.g.df.mode = (opt_mode)m;
        opt_plan p;
        EXPECT_OK(opt_search(&d.g, &o, &p));
        for (int i = 0; i < K; i++)
            assert_true(blas_layout_equal(&p.node[d.gemv[i]].req[1], &d.A));
        opt_plan_free(&p);
    }
    opt_graph_free(&d.g);
}

/* A matrix in core costs nothing to read; only an out-of-core one has
 * the term, and only a matrix can be one.                               */
static void test_in_core_free(void **state)
{
    (void)state;
    opt_defaults df = {.mode = OPT_NONE, .pr = 2, .pc = 2, .nb = 4};
    dag d;
    build(&d, &df);
    d.g.vals[1].ooc = false;
    opt_plan p;
    plan_with(&d, &d.A, &p);
    assert_true(cost(&d, &p, IO_BETA) == cost(&d, &p, 0.0));
    int x = d.g.nodes[d.gemv[0]].ops[2];
    assert_int_equal(opt_graph_ooc(&d.g, x), DESO_EINVAL);
    opt_plan_free(&p);
    opt_graph_free(&d.g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_beats_remap),
        cmocka_unit_test(test_in_core_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
