/* The search and its incremental evaluator against invariants, on a fixed
 * set of DAGs (CG, preconditioned CG, a chain of level-1 operations with
 * fusable reductions, gemv N and T, dger, dtrsv), grids and modes; no
 * expected plan is written down here:
 *   - every node of the search's plan is among its mode's candidates;
 *   - the plan's model is a full re-costing of the plan (opt_plan_cost),
 *     bit for bit, and no worse than mode none's plan where the mode
 *     allows that one;
 *   - the search is deterministic (twice: the same plan, the same model);
 *   - a settled plan is one a bounded improvement cannot better;
 *   - one evaluator kept across many changed plans (what the search does)
 *     costs each exactly as a fresh opt_plan_cost does: total, every
 *     edge, every node's collective, also with the matrices out of core
 *     (the streaming and the remaps' file reads and writes priced);
 *   - a node's candidates do not depend on the operand slots
 *     opt__cands_reads leaves out (any layout the mode allows there).    */
#include "opt_test.h"

#include <stdlib.h>

#include "optimizer/opt_cache.h"
#include "optimizer/opt_impl.h"

enum { G_CG0, G_CG1, G_PCG, G_CHAIN, G_GEMV, G_GER, G_COUNT };

static int node(opt_graph *g, blas_op op, unsigned fl, const int *ops,
                int64_t m, int64_t n)
{
    int r;
    EXPECT_OK(opt_graph_node(g, op, fl, ops, m, n, &r));
    return r;
}

static int livein(opt_graph *g, blas_layout l)
{
    int id;
    EXPECT_OK(opt_graph_livein(g, &l, &id));
    return id;
}

/* Jacobi-preconditioned CG: z = d .* r, then r.z and ||r||.              */
static void pcg_build(opt_graph *g, const opt_defaults *df, int64_t n)
{
    opt_graph_init(g, df);
    blas_layout one = opt_default_sca(df), V = opt_default_vec(df, n);
    int A = livein(g, opt_default_mat(df, n, n)), p = livein(g, V);
    int x = livein(g, V), r = livein(g, V), d = livein(g, V);
    int rz = livein(g, one), c = livein(g, one);
    int q = node(g, BLAS_OP_GEMV, 0, (int[]){c, A, p}, 1, n);
    int pq = node(g, BLAS_OP_DOT, 0, (int[]){p, q}, 1, 1);
    int al = node(g, BLAS_OP_SDIV, 0, (int[]){rz, pq}, 1, 1);
    int x1 = node(g, BLAS_OP_AXPY, 0, (int[]){al, p, x}, 1, n);
    int na = node(g, BLAS_OP_SNEG, 0, (int[]){al}, 1, 1);
    int r1 = node(g, BLAS_OP_AXPY, 0, (int[]){na, q, r}, 1, n);
    int z = node(g, BLAS_OP_COPY, 0, (int[]){r1}, 1, n);
    z = node(g, BLAS_OP_VMUL, 0, (int[]){d, z}, 1, n);
    int rn = node(g, BLAS_OP_NRM2, 0, (int[]){r1}, 1, 1);
    int rz1 = node(g, BLAS_OP_DOT, 0, (int[]){r1, z}, 1, 1);
    int be = node(g, BLAS_OP_SDIV, 0, (int[]){rz1, rz}, 1, 1);
    int p1 = node(g, BLAS_OP_SCAL, 0, (int[]){be, p}, 1, n);
    int p2 = node(g, BLAS_OP_AXPY, 0, (int[]){c, z, p1}, 1, n);
    EXPECT_OK(opt_graph_live_out(g, x1, NULL));
    EXPECT_OK(opt_graph_live_out(g, p2, NULL));
    EXPECT_OK(opt_graph_live_out(g, rz1, &one));
    EXPECT_OK(opt_graph_live_out(g, rn, &one));
    /* the next iteration reads x, p and rz where this one did            */
    EXPECT_OK(opt_graph_carry(g, x1, x));
    EXPECT_OK(opt_graph_carry(g, p2, p));
    EXPECT_OK(opt_graph_carry(g, rz1, rz));
}

/* Level-1 operations whose independent reductions fuse: asum, dot and
 * nrm2 in one group when their vectors agree, so that a member leaving
 * or joining changes the size of a group whose first member stays.      */
static void chain_build(opt_graph *g, const opt_defaults *df, int64_t n)
{
    opt_graph_init(g, df);
    blas_layout one = opt_default_sca(df), V = opt_default_vec(df, n);
    int x = livein(g, V), y = livein(g, V), a = livein(g, one);
    int y1 = node(g, BLAS_OP_AXPY, 0, (int[]){a, x, y}, 1, n);
    int x1 = node(g, BLAS_OP_SCAL, 0, (int[]){a, x}, 1, n);
    int s1 = node(g, BLAS_OP_NRM2, 0, (int[]){y1}, 1, 1);
    int z = node(g, BLAS_OP_AXPBY, 0, (int[]){s1, x1, a, y1}, 1, n);
    int s2 = node(g, BLAS_OP_ASUM, 0, (int[]){z}, 1, 1);
    int s3 = node(g, BLAS_OP_IAMAX, 0, (int[]){x1}, 1, 1);
    int s4 = node(g, BLAS_OP_DOT, 0, (int[]){z, x1}, 1, 1);
    int s6 = node(g, BLAS_OP_NRM2, 0, (int[]){x1}, 1, 1);
    int s5 = node(g, BLAS_OP_SADD, 0, (int[]){s2, s4}, 1, 1);
    int w = node(g, BLAS_OP_VMUL, 0, (int[]){z, y1}, 1, n);
    EXPECT_OK(opt_graph_live_out(g, w, NULL));
    EXPECT_OK(opt_graph_live_out(g, s3, &one));
    EXPECT_OK(opt_graph_live_out(g, s5, NULL));
    EXPECT_OK(opt_graph_live_out(g, s6, NULL));
}

/* gemv N with beta, gemv T, a dot and an axpy on the results.            */
static void gemv_build(opt_graph *g, const opt_defaults *df, int64_t m,
                       int64_t n)
{
    opt_graph_init(g, df);
    blas_layout one = opt_default_sca(df), ym = opt_default_vec(df, m);
    int A = livein(g, opt_default_mat(df, m, n));
    int x = livein(g, opt_default_vec(df, n));
    int y = livein(g, ym), a = livein(g, one);
    int y1 = node(g, BLAS_OP_GEMV, BLAS_F_BETA, (int[]){a, A, x, a, y}, 1, m);
    int x1 = node(g, BLAS_OP_GEMV, BLAS_F_TRANS, (int[]){a, A, y1}, 1, n);
    int s = node(g, BLAS_OP_DOT, 0, (int[]){x1, x}, 1, 1);
    int x2 = node(g, BLAS_OP_AXPY, 0, (int[]){s, x1, x}, 1, n);
    EXPECT_OK(opt_graph_live_out(g, x2, NULL));
    EXPECT_OK(opt_graph_live_out(g, y1, &ym));
}

/* dger, then a gemv on the updated matrix and a triangular solve.        */
static void ger_build(opt_graph *g, const opt_defaults *df, int64_t n)
{
    opt_graph_init(g, df);
    blas_layout one = opt_default_sca(df);
    int A = livein(g, opt_default_mat(df, n, n));
    int x = livein(g, opt_default_vec(df, n)), a = livein(g, one);
    int x1 = node(g, BLAS_OP_SCAL, 0, (int[]){a, x}, 1, n);
    int A1 = node(g, BLAS_OP_GER, 0, (int[]){a, x1, x, A}, n, n);
    int z = node(g, BLAS_OP_GEMV, 0, (int[]){a, A1, x}, 1, n);
    int t = node(g, BLAS_OP_TRSV, BLAS_F_LOWER, (int[]){A1, z}, 1, n);
    int s = node(g, BLAS_OP_NRM2, 0, (int[]){t}, 1, 1);
    EXPECT_OK(opt_graph_live_out(g, A1, NULL));
    EXPECT_OK(opt_graph_live_out(g, s, &one));
}

static void build(int which, const opt_defaults *df,
                  const opt_search_opts *o, opt_graph *g)
{
    cg_state s = cg_initial(df, 96);
    cg_ids id;
    opt_plan p;
    switch (which) {
    case G_CG0: cg_build(g, df, &s, &id); break;
    case G_CG1: cg_steady(df, 96, o, 2, g, &p); opt_plan_free(&p); break;
    case G_PCG: pcg_build(g, df, 96); break;
    case G_CHAIN: chain_build(g, df, 37); break;
    case G_GEMV: gemv_build(g, df, 50, 37); break;
    default: ger_build(g, df, 40); break;
    }
}

static const int grids[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 2}};
#define NGRIDS (int)(sizeof grids / sizeof grids[0])

static opt_search_opts opts(opt_mode mode, int variant)
{
    opt_search_opts o = opt_search_default(mode);
    o.cost.reduce_holders_only = variant & 1;
    if (variant & 2) o.cost.volume = OPT_VOL_ARRAY;
    return o;
}

static void expect_same_counts(const opt_counts *a, const opt_counts *b)
{
    assert_true(a->time == b->time);
    assert_int_equal(a->bytes_p2p, b->bytes_p2p);
    assert_int_equal(a->msgs_p2p, b->msgs_p2p);
    assert_int_equal(a->bytes_coll, b->bytes_coll);
    assert_int_equal(a->msgs_coll, b->msgs_coll);
}

/* ---- the search's invariants --------------------------------------------- */

/* Whether every node of p is among its mode's candidates.                 */
static bool valid_in(const opt_graph *g, const opt_plan *p, opt_mode mode)
{
    int *var = malloc((size_t)g->nnodes * sizeof *var);
    assert_non_null(var);
    EXPECT_OK(opt_plan_variants(g, p, mode, var));
    bool ok = true;
    for (int i = 0; i < g->nnodes; i++) ok = ok && var[i] >= 0;
    free(var);
    return ok;
}

static void check_search(const opt_graph *g, const opt_search_opts *o)
{
    opt_plan p, q, none;
    EXPECT_OK(opt_search(g, o, &p));
    assert_true(valid_in(g, &p, o->mode));
    opt_counts c;
    EXPECT_OK(opt_plan_cost(g, &p, &o->cost, NULL, NULL, &c));
    expect_same_counts(&c, &p.model);
    EXPECT_OK(opt_plan_none(g, &none));
    EXPECT_OK(opt_plan_cost(g, &none, &o->cost, NULL, NULL, &c));
    if (o->mode == OPT_NONE) assert_true(opt_plan_equal(&p, &none));
    else if (valid_in(g, &none, o->mode))
        assert_true(p.model.time <= c.time);
    EXPECT_OK(opt_search(g, o, &q));
    assert_true(opt_plan_equal(&p, &q));
    expect_same_counts(&p.model, &q.model);
    assert_int_equal(p.iters, q.iters);
    assert_int_equal(p.settled, q.settled);
    if (p.settled && o->mode != OPT_NONE) {
        bool better = true;
        EXPECT_OK(opt_search_improve(g, o, 8, &q, &better));
        assert_false(better);
    }
    opt_plan_free(&p);
    opt_plan_free(&q);
    opt_plan_free(&none);
}

static void test_search_invariants(void **state)
{
    (void)state;
    int cases = 0;
    for (int gk = 0; gk < NGRIDS; gk++)
        for (int m = 0; m < 3; m++)
            for (int variant = 0; variant < 4; variant++)
                for (int w = 0; w < G_COUNT; w++) {
                    opt_defaults df = {.mode = (opt_mode)m,
                                       .pr = grids[gk][0],
                                       .pc = grids[gk][1], .nb = 0};
                    opt_search_opts o = opts((opt_mode)m, variant);
                    opt_graph g;
                    build(w, &df, &o, &g);
                    check_search(&g, &o);
                    opt_graph_free(&g);
                    cases++;
                }
    printf("search invariants: %d (graph, grid, mode, model) cases\n", cases);
}

/* ---- the incremental evaluator ------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static int pick(int n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

/* Plan p with node i moved to a random candidate given its operands.    */
static void perturb(const opt_graph *g, opt_mode mode, opt_plan *p, int i)
{
    opt_place c[OPT_MAXCANDS];
    blas_layout cur[BLAS_MAXOPS];
    int n;
    opt__cur_ops(g, p, i, cur);
    EXPECT_OK(opt_node_cands(g, i, mode, cur, c, &n));
    assert_true(n > 0);
    p->node[i] = c[pick(n)];
}

/* The kept evaluator's cost of p against a fresh opt_plan_cost.          */
static void check_eval(opt__eval *e, const opt_graph *g, const opt_plan *p,
                       const opt_params *pp)
{
    opt__place ip[64];
    assert_true(g->nnodes <= 64);
    for (int i = 0; i < g->nnodes; i++)
        EXPECT_OK(opt__intern_place(e, i, &p->node[i], &ip[i]));
    opt_counts inc, fresh;
    double t;
    EXPECT_OK(opt__eval_time(e, ip, &t));
    EXPECT_OK(opt__eval_plan(e, ip, &inc));
    opt_eval ev;
    EXPECT_OK(opt_eval_init(&ev, g));
    EXPECT_OK(opt_plan_cost(g, p, pp, NULL, &ev, &fresh));
    expect_same_counts(&inc, &fresh);
    assert_true(t == fresh.time);
    const opt__edge *ed = opt__eval_edges(e);
    for (int x = 0; x < ev.nedges; x++) {
        assert_int_equal(ed[x].move, ev.edge[x].move);
        expect_same_counts(&ed[x].cost, &ev.edge[x].cost);
        if (ed[x].to < 0) continue;
        assert_true(blas_layout_equal(opt__lay(e, ed[x].to), &ev.edge[x].to));
        assert_true(blas_layout_equal(opt__lay(e, ed[x].from),
                                      &ev.edge[x].from));
    }
    opt_eval_free(&ev);
}

/* Every matrix of g out of core, streamed at io_beta.                   */
static void all_ooc(opt_graph *g, opt_search_opts *o, double io_beta)
{
    for (int v = 0; v < g->nvals; v++)
        if (g->vals[v].kind == BLAS_MAT) EXPECT_OK(opt_graph_ooc(g, v));
    o->cost.io_beta = io_beta;
}

static void test_incremental(void **state)
{
    (void)state;
    int evals = 0;
    for (int gk = 1; gk < NGRIDS; gk++)
        for (int m = 1; m < 3; m++)
            for (int w = 0; w < 2 * G_COUNT; w++) {
                opt_defaults df = {.mode = (opt_mode)m, .pr = grids[gk][0],
                                   .pc = grids[gk][1], .nb = 0};
                opt_search_opts o = opts((opt_mode)m, w & 1);
                opt_graph g;
                opt_plan p;
                build(w % G_COUNT, &df, &o, &g);
                /* the second round: the matrices out of core (the ger
                 * graph's dtrsv remaps one on some grids)               */
                if (w >= G_COUNT) all_ooc(&g, &o, 1e-8);
                EXPECT_OK(opt_search(&g, &o, &p));
                opt__eval *e;
                EXPECT_OK(opt__eval_new(&g, &o.cost, NULL, &e));
                for (int step = 0; step < 60; step++, evals++) {
                    /* one node, sometimes a few, as the search moves them */
                    int moves = pick(4) == 0 ? 1 + pick(3) : 1;
                    for (int k = 0; k < moves; k++)
                        perturb(&g, (opt_mode)m, &p, pick(g.nnodes));
                    check_eval(e, &g, &p, &o.cost);
                }
                opt__eval_free(e);
                opt_plan_free(&p);
                opt_graph_free(&g);
            }
    printf("incremental evaluation: %d plans, each equal to a fresh "
           "costing\n", evals);
}

/* Whether two candidate lists are the same placements in the same order. */
static bool same_cands(const opt_place *a, int na, const opt_place *b,
                       int nb, int nops)
{
    if (na != nb) return false;
    for (int c = 0; c < na; c++) {
        if (!blas_layout_equal(&a[c].res, &b[c].res)) return false;
        for (int k = 0; k < nops; k++)
            if (!blas_layout_equal(&a[c].req[k], &b[c].req[k])) return false;
    }
    return true;
}

/* Node i's candidates do not change when an operand slot that
 * opt__cands_reads leaves out takes any other layout the mode allows its
 * value (the search keeps one candidate set for all such tuples).        */
static int check_reads(const opt_graph *g, opt_mode mode, const opt_plan *p,
                       int i)
{
    static opt_place c0[OPT_MAXCANDS], c1[OPT_MAXCANDS];
    blas_layout cur[BLAS_MAXOPS], alt[BLAS_MAXOPS], L[OPT__MAXLAYS];
    int n0, n1, nops = g->nodes[i].d.nops, checked = 0;
    unsigned reads = opt__cands_reads(g, i);
    opt__cur_ops(g, p, i, cur);
    EXPECT_OK(opt_node_cands(g, i, mode, cur, c0, &n0));
    for (int k = 0; k < nops; k++) {
        if (reads & (1u << k)) continue;
        const opt_value *v = &g->vals[g->nodes[i].ops[k]];
        int nl = opt__layouts(g, mode, v->kind, v->n, L);
        for (int t = 0; t < nl; t++, checked++) {
            memcpy(alt, cur, sizeof alt);
            alt[k] = L[t];
            EXPECT_OK(opt_node_cands(g, i, mode, alt, c1, &n1));
            if (!same_cands(c0, n0, c1, n1, nops))
                print_error("node %d (op %d): slot %d changes its "
                            "candidates\n", i, (int)g->nodes[i].d.op, k);
            assert_true(same_cands(c0, n0, c1, n1, nops));
        }
    }
    return checked;
}

static void test_cands_reads(void **state)
{
    (void)state;
    int checked = 0;
    for (int gk = 1; gk < NGRIDS; gk++)
        for (int m = 1; m < 3; m++)
            for (int w = 0; w < G_COUNT; w++) {
                opt_defaults df = {.mode = (opt_mode)m, .pr = grids[gk][0],
                                   .pc = grids[gk][1], .nb = 0};
                opt_search_opts o = opts((opt_mode)m, 0);
                opt_graph g;
                opt_plan p;
                build(w, &df, &o, &g);
                EXPECT_OK(opt_search(&g, &o, &p));
                for (int i = 0; i < g.nnodes; i++)
                    checked += check_reads(&g, (opt_mode)m, &p, i);
                opt_plan_free(&p);
                opt_graph_free(&g);
            }
    assert_true(checked > 0);
    printf("candidates unchanged by %d operand layouts they do not read\n",
           checked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_invariants),
        cmocka_unit_test(test_incremental),
        cmocka_unit_test(test_cands_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
