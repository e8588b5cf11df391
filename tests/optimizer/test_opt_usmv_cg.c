/* The search on a conjugate-gradient iteration around a sparse product
 * (usmv), serially: whenever the plan with every vector on the product's
 * partition is cheaper under the model, modes affine and full find a plan
 * at least as cheap.  That plan is built here by hand (each update's
 * result and each reduction's vector by the partition, scalars replicated
 * everywhere: a plan both modes allow) and priced by opt_plan_cost; the
 * search's plan by the same.  Over grids 1x2, 2x1, 2x2, 1x4, 3x2, 2x3,
 * calibrations from latency-bound to bandwidth-bound, vectors of 37 and
 * 1000 elements, and the iteration's vectors coming in by the partition
 * (a solver's steady state) or in the mode's default layout (the first
 * iteration after a set-up that left them there): a CG needs all its
 * vectors moved at once, which the greedy's one edge at a time cannot do
 * from the default layouts (the partition start does).                   */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "blas/blas.h"
#include "optimizer/opt_impl.h"

#define EXPECT_OK(expr) assert_int_equal((expr), DESO_OK)
#define MAXP 6

typedef struct problem {
    int64_t n;
    int P;
    int64_t start[MAXP + 1];
    blas_part part;
    int64_t tab[MAXP * MAXP];
    blas_sparse facts;
} problem;

/* Balanced blocks of n over P ranks; each rank receives h entries from
 * each of its ring neighbours (a stencil's halo).                        */
static void make_problem(problem *pb, int64_t n, int P, int64_t h)
{
    memset(pb, 0, sizeof *pb);
    pb->n = n;
    pb->P = P;
    for (int q = 0; q <= P; q++) pb->start[q] = n * q / P;
    pb->part = (blas_part){.n = n, .nparts = P, .start = pb->start};
    for (int s = 0; s < P; s++)
        for (int r = 0; r < P; r++)
            if (s != r && (s == (r + 1) % P || r == (s + 1) % P))
                pb->tab[P * s + r] = h;
    pb->facts = (blas_sparse){&pb->part, &pb->part, pb->tab, 0x5eed};
}

/* q = A p; pq = p.q; al = rr/pq; x += al p; nal = -al; r += nal q;
 * rn = r.r; be = rn/rr; p = be p; p += one r: deso-cg's iteration, with
 * its loop-carried values marked and rn read afterwards everywhere.      */
static void build(opt_graph *g, opt_mode mode, int pr, int pc,
                  const problem *pb, bool by_part)
{
    opt_defaults df = {mode, pr, pc, 2, 0};
    opt_graph_init(g, &df);
    blas_layout vl = by_part ? blas_layout_part(&pb->part, pr, pc)
                             : opt_default_vec(&df, pb->n);
    blas_layout sl = opt_default_sca(&df);
    int64_t n = pb->n;
    int one, p, x, r, rr, q, pq, al, x2, nal, r2, rn, be, p2, p3;
    EXPECT_OK(opt_graph_livein(g, &sl, &one));
    EXPECT_OK(opt_graph_livein(g, &vl, &p));
    EXPECT_OK(opt_graph_livein(g, &vl, &x));
    EXPECT_OK(opt_graph_livein(g, &vl, &r));
    EXPECT_OK(opt_graph_livein(g, &sl, &rr));
    blas_desc d = {.op = BLAS_OP_USMV, .flags = 0, .sp = &pb->facts};
    EXPECT_OK(opt_graph_node_desc(g, &d, (int[]){one, p}, 1, n, &q));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_DOT, 0, (int[]){p, q}, 1, 1, &pq));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SDIV, 0, (int[]){rr, pq}, 1, 1, &al));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0, (int[]){al, p, x}, 1, n, &x2));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SNEG, 0, (int[]){al}, 1, 1, &nal));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0, (int[]){nal, q, r}, 1, n, &r2));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_DOT, 0, (int[]){r2, r2}, 1, 1, &rn));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SDIV, 0, (int[]){rn, rr}, 1, 1, &be));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SCAL, 0, (int[]){be, p}, 1, n, &p2));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0, (int[]){one, r2, p2}, 1, n, &p3));
    EXPECT_OK(opt_graph_live_out(g, x2, NULL));
    EXPECT_OK(opt_graph_live_out(g, r2, NULL));
    EXPECT_OK(opt_graph_live_out(g, p3, NULL));
    EXPECT_OK(opt_graph_live_out(g, rn, &sl));
    EXPECT_OK(opt_graph_carry(g, x2, x));
    EXPECT_OK(opt_graph_carry(g, r2, r));
    EXPECT_OK(opt_graph_carry(g, p3, p));
    EXPECT_OK(opt_graph_carry(g, rn, rr));
}

static bool is_reduction(blas_op op)
{
    return op == BLAS_OP_DOT || op == BLAS_OP_NRM2 || op == BLAS_OP_ASUM;
}

/* The plan with every vector node on the partition, scalars replicated
 * everywhere, from mode affine's candidates (mode full allows it too).  */
static void partition_plan(const opt_graph *g, opt_plan *out)
{
    EXPECT_OK(opt__plan_alloc(out, g->nnodes));
    out->mode = OPT_AFFINE;
    opt_place c[OPT_MAXCANDS];
    for (int i = 0; i < g->nnodes; i++) {
        blas_layout cur[BLAS_MAXOPS];
        opt__cur_ops(g, out, i, cur);
        int n;
        EXPECT_OK(opt_node_cands(g, i, OPT_AFFINE, cur, c, &n));
        assert_true(n > 0);
        blas_op op = g->nodes[i].d.op;
        int pick = 0;
        for (int k = 0; k < n; k++) {
            const blas_layout *v = is_reduction(op) ? &c[k].req[0]
                                                    : &c[k].res;
            if (v->kind == BLAS_VEC && v->dist == BLAS_DIST_PART) {
                pick = k;
                break;
            }
        }
        out->node[i] = c[pick];
        const blas_layout *v = is_reduction(op) ? &c[pick].req[0]
                                                : &c[pick].res;
        if (v->kind == BLAS_VEC) assert_int_equal(v->dist, BLAS_DIST_PART);
    }
}

static void test_no_worse(void **state)
{
    (void)state;
    const int grids[6][2] = {{1, 2}, {2, 1}, {2, 2}, {1, 4}, {3, 2}, {2, 3}};
    const double alphas[3] = {1e-7, 1e-6, 1e-5};
    const double betas[4] = {1e-11, 1e-10, 1e-9, 1e-8};
    const int64_t sizes[2] = {37, 1000};
    const opt_mode modes[2] = {OPT_AFFINE, OPT_FULL};
    int worse = 0, elsewhere = 0, total = 0;
    for (int gi = 0; gi < 6; gi++)
        for (int si = 0; si < 2; si++) {
            int pr = grids[gi][0], pc = grids[gi][1];
            problem pb;
            make_problem(&pb, sizes[si], pr * pc, sizes[si] < 100 ? 2 : 20);
            for (int bp = 0; bp < 2; bp++)
                for (int m = 0; m < 2; m++)
                    for (int ai = 0; ai < 3; ai++)
                        for (int bi = 0; bi < 4; bi++) {
                            opt_graph g;
                            build(&g, modes[m], pr, pc, &pb, bp == 1);
                            opt_search_opts o = opt_search_default(modes[m]);
                            o.cost = opt_params_default();
                            o.cost.reduce_holders_only = true;
                            o.cost.alpha = alphas[ai];
                            o.cost.beta = betas[bi];
                            opt_plan s, ref;
                            EXPECT_OK(opt_search(&g, &o, &s));
                            partition_plan(&g, &ref);
                            opt_counts cs, cr;
                            EXPECT_OK(opt_plan_cost(&g, &s, &o.cost, NULL,
                                                    NULL, &cs));
                            EXPECT_OK(opt_plan_cost(&g, &ref, &o.cost, NULL,
                                                    NULL, &cr));
                            if (cs.time > cr.time) {
                                print_error("grid %dx%d n %lld %s mode %d "
                                            "alpha %g beta %g: search %g, "
                                            "partition %g\n", pr, pc,
                                            (long long)pb.n,
                                            bp ? "by partition" : "default",
                                            (int)modes[m], alphas[ai],
                                            betas[bi], cs.time, cr.time);
                                worse++;
                            }
                            elsewhere += cs.time < cr.time;
                            total++;
                            opt_plan_free(&s);
                            opt_plan_free(&ref);
                            opt_graph_free(&g);
                        }
        }
    assert_int_equal(worse, 0);
    /* the sweep covers both verdicts: plans cheaper off the partition (a
     * 1-D grid's replicated vectors need no all-reduce) and plans that
     * cost what the partition's does                                      */
    print_message("%d of %d plans cheaper off the partition\n", elsewhere,
                  total);
    assert_true(elsewhere > 0 && elsewhere < total);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_worse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
