/* The placement optimiser on CG's iteration DAG: mode none's placements
 * against paper 003's defaults written out, modelled bytes per mode,
 * determinism, the explanation and DOT output, exact exchange counting. */
#include "opt_test.h"

#include <stdlib.h>
#include <time.h>

static opt_defaults grid(int pr, int pc)
{
    opt_defaults df = {.mode = OPT_NONE, .pr = pr, .pc = pc, .nb = 0};
    return df;
}

static void mode_counts(int pr, int pc, int64_t n, opt_mode mode,
                        bool holders, opt_counts *c, bool show)
{
    opt_defaults df = grid(pr, pc);
    opt_search_opts o = opt_search_default(mode);
    o.cost.reduce_holders_only = holders;
    opt_graph g;
    opt_plan p;
    cg_steady(&df, n, &o, 3, &g, &p);
    *c = p.model;
    if (show) EXPECT_OK(opt_plan_explain(stdout, &g, &p, &o.cost));
    /* the guarantee, per flush: never worse than mode none on the same
     * graph (the same live-in layouts)                                    */
    opt_plan none;
    EXPECT_OK(opt_plan_none(&g, &none));
    opt_counts cn;
    EXPECT_OK(opt_plan_cost(&g, &none, &o.cost, NULL, NULL, &cn));
    assert_true(p.model.time <= cn.time);
    opt_plan_free(&none);
    opt_plan_free(&p);
    opt_graph_free(&g);
}

/* full moves at most 1/pc of none's point-to-point bytes (the q -> p
 * realignment: O(N) over 2 pc - 1 ranks instead of O(N pc)) and no more
 * collective bytes; affine never costs more than none.  Collective bytes
 * are compared with reductions run only where the operands live (the
 * executor today also reduces zeros on rows that hold nothing: a few
 * scalar bytes more, printed as "exec-today").                           */
static void test_cg_modes(void **state)
{
    (void)state;
    int grids[3][2] = {{2, 2}, {3, 3}, {4, 4}};
    const int64_t n = 720;
    for (int k = 0; k < 3; k++) {
        int pr = grids[k][0], pc = grids[k][1];
        opt_counts c[3], today[3];
        bool show = getenv("OPT_TEST_VERBOSE") != NULL;
        for (int m = 0; m < 3; m++) {
            mode_counts(pr, pc, n, (opt_mode)m, true, &c[m], show);
            mode_counts(pr, pc, n, (opt_mode)m, false, &today[m], false);
        }
        for (int m = 0; m < 3; m++)
            printf("cg %dx%d n=%lld %-6s: p2p %6lld B %3lld msgs, coll %6lld "
                   "B %3lld ops, modelled %.3e s | exec-today: p2p %6lld B, "
                   "coll %6lld B %3lld ops\n",
                   pr, pc, (long long)n, opt_mode_name((opt_mode)m),
                   (long long)c[m].bytes_p2p, (long long)c[m].msgs_p2p,
                   (long long)c[m].bytes_coll, (long long)c[m].msgs_coll,
                   c[m].time, (long long)today[m].bytes_p2p,
                   (long long)today[m].bytes_coll,
                   (long long)today[m].msgs_coll);
        assert_true(c[OPT_FULL].bytes_p2p * pc <= c[OPT_NONE].bytes_p2p);
        assert_true(c[OPT_FULL].bytes_coll <= c[OPT_NONE].bytes_coll);
        assert_true(today[OPT_FULL].bytes_p2p * pc <= today[OPT_NONE].bytes_p2p);
        assert_true(c[OPT_AFFINE].time <= c[OPT_NONE].time);
    }
}

/* Paper 003's unoptimised placements (doc/DESIGN.md, "Optimiser modes",
 * mode none), written out field by field for each grid below rather than
 * derived from the library's constructors, so that a wrong default in
 * opt_default_*, the executor's per-node choice (opt_place_node) or an
 * operation's constraint fails here.  Normalised by hand: a grid
 * dimension of extent 1 is never folded over and counts as replicated,
 * and a block never exceeds its extent (blas/blas.h).                    */
typedef struct none_case {
    int pr, pc;
    int64_t nb;           /* the context's block size (0: block folding)  */
    int64_t n;            /* CG: A is n x n, the vectors have n entries   */
    /* the expected layouts, written out:                                 */
    int64_t vb;           /* vectors: cyclic(vb) over grid columns        */
    int64_t ab, anb;      /* A: cyclic(ab) x cyclic(anb)                  */
    int qdist;            /* A p: over grid rows with A's row blocks ...  */
    int64_t qb;
    unsigned qrep;        /* ... and replicated over grid columns         */
} none_case;

static blas_layout lay(blas_kind kind, int64_t m, int64_t n, int dist,
                       int64_t b, int64_t nb, unsigned rep, int pr, int pc)
{
    blas_layout l;
    memset(&l, 0, sizeof l);
    l.kind = kind;
    l.m = m;
    l.n = n;
    l.dist = dist;
    l.b = b;
    l.nb = nb;
    l.rep = rep;
    l.pr = pr;
    l.pc = pc;
    return l;
}

static void expect_layout(const char *what, int node, int slot,
                          const blas_layout *got, const blas_layout *want)
{
    if (!blas_layout_equal(got, want)) {
        char a[96], b[96];
        print_error("%s: node %d slot %d is %s, expected %s\n", what, node,
                    slot, opt_layout_str(got, a, sizeof a),
                    opt_layout_str(want, b, sizeof b));
    }
    assert_true(blas_layout_equal(got, want));
}

/* Every node of plan p against want[i] = {result, operands...}.          */
static void expect_plan(const char *what, const opt_graph *g,
                        const opt_plan *p, const blas_layout (*want)[6])
{
    for (int i = 0; i < g->nnodes; i++) {
        expect_layout(what, i, -1, &p->node[i].res, &want[i][0]);
        for (int k = 0; k < g->nodes[i].d.nops; k++)
            expect_layout(what, i, k, &p->node[i].req[k], &want[i][1 + k]);
    }
}

/* CG's iteration (opt_test.h's cg_build) in mode none: everything row
 * oriented as the vectors are created, except A p, which comes out
 * column oriented and is transposed for p.q and r - alpha q; scalars
 * everywhere, so both dots are all-reduces.                              */
static void test_none_is_default(void **state)
{
    (void)state;
    const none_case cases[] = {
        /* 2 x 3, block folding: 100 = 3 blocks of 34 over the columns,
         * 2 blocks of 50 over the rows                                    */
        {2, 3, 0, 100, 34, 50, 34, 0, 50, 2u},
        /* 3 x 2, cyclic(8)                                                */
        {3, 2, 8, 100, 8, 8, 8, 0, 8, 2u},
        /* 1 x 4: one grid row, so A's rows are not folded (one block of
         * 100) and A p is replicated everywhere                           */
        {1, 4, 0, 100, 25, 100, 25, -1, 0, 3u},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const none_case *k = &cases[c];
        int pr = k->pr, pc = k->pc;
        opt_defaults df = {.mode = OPT_NONE, .pr = pr, .pc = pc, .nb = k->nb};
        blas_layout V = lay(BLAS_VEC, 1, k->n, 1, k->vb, 0, 1u, pr, pc);
        blas_layout A = lay(BLAS_MAT, k->n, k->n, -1, k->ab, k->anb, 0u, pr,
                            pc);
        blas_layout S = lay(BLAS_SCA, 1, 1, -1, 0, 0, 3u, pr, pc);
        blas_layout Q = lay(BLAS_VEC, 1, k->n, k->qdist, k->qb, 0, k->qrep,
                            pr, pc);
        /* the layouts of new values                                       */
        blas_layout dv = opt_default_vec(&df, k->n);
        blas_layout dm = opt_default_mat(&df, k->n, k->n);
        blas_layout ds = opt_default_sca(&df);
        expect_layout("new vector", -1, -1, &dv, &V);
        expect_layout("new matrix", -1, -1, &dm, &A);
        expect_layout("new scalar", -1, -1, &ds, &S);
        /* the placement algebra's defaults read as the same layouts       */
        pl_grid grid;
        pl_placement pl;
        blas_layout l;
        EXPECT_OK(pl_grid_2d(pr * pc, pr, pc, &grid));
        EXPECT_OK(pl_placement_vector_rows(k->n, k->nb, &grid, &pl));
        EXPECT_OK(blas_layout_of(&pl, BLAS_VEC, &l));
        expect_layout("pl_placement_vector_rows", -1, -1, &l, &V);
        EXPECT_OK(pl_placement_vector_cols(k->n, k->nb, &grid, &pl));
        EXPECT_OK(blas_layout_of(&pl, BLAS_VEC, &l));
        expect_layout("pl_placement_vector_cols", -1, -1, &l, &Q);
        EXPECT_OK(pl_placement_matrix(k->n, k->n, k->nb, k->nb, &grid, &pl));
        EXPECT_OK(blas_layout_of(&pl, BLAS_MAT, &l));
        expect_layout("pl_placement_matrix", -1, -1, &l, &A);
        EXPECT_OK(pl_placement_scalar(&grid, &pl));
        EXPECT_OK(blas_layout_of(&pl, BLAS_SCA, &l));
        expect_layout("pl_placement_scalar", -1, -1, &l, &S);
        const blas_layout want[10][6] = {
            {Q, S, A, V},     /* q = A p: x row oriented with A's columns */
            {S, V, V},        /* pq = p.q: q transposed to p's layout     */
            {S, S, S},        /* alpha = rr / pq                          */
            {V, S, V, V},     /* x += alpha p                             */
            {S, S},           /* nalpha = -alpha                          */
            {V, S, V, V},     /* r += nalpha q: q transposed (cached)     */
            {S, V, V},        /* rr' = r.r                                */
            {S, S, S},        /* beta = rr' / rr                          */
            {V, S, V},        /* p = beta p                               */
            {V, S, V, V},     /* p = r + p                                */
        };
        cg_ids id;
        opt_graph g;
        cg_state s = {.A = A, .p = V, .x = V, .r = V, .rr = S};
        cg_build(&g, &df, &s, &id);
        assert_int_equal(g.nnodes, 10);
        opt_plan p;
        opt_search_opts o = opt_search_default(OPT_NONE);
        EXPECT_OK(opt_search(&g, &o, &p));
        expect_plan("cg, mode none", &g, &p, want);
        opt_plan_free(&p);
        EXPECT_OK(opt_plan_none(&g, &p));
        expect_plan("cg, opt_plan_none", &g, &p, want);
        opt_plan_free(&p);
        opt_graph_free(&g);
    }
}

/* The other operations' defaults on a 2 x 3 grid, block folding: a gemv T
 * result is the mirror image of a gemv N result, a reduction keeps its
 * vector where it is (here column oriented), dger's result is A, dtrsv's
 * result is replicated everywhere and T, whose blocks (50 x 34) are not
 * square, is asked for in cyclic(64) x cyclic(64).                       */
static void test_none_other_ops(void **state)
{
    (void)state;
    const int pr = 2, pc = 3;
    opt_defaults df = {.mode = OPT_NONE, .pr = pr, .pc = pc, .nb = 0};
    /* A is 60 x 100: rows in 2 blocks of 30, columns in 3 of 34          */
    blas_layout A = lay(BLAS_MAT, 60, 100, -1, 30, 34, 0u, pr, pc);
    blas_layout T = lay(BLAS_MAT, 100, 100, -1, 50, 34, 0u, pr, pc);
    blas_layout T64 = lay(BLAS_MAT, 100, 100, -1, 64, 64, 0u, pr, pc);
    blas_layout x60 = lay(BLAS_VEC, 1, 60, 1, 20, 0, 1u, pr, pc);
    blas_layout x60c = lay(BLAS_VEC, 1, 60, 0, 30, 0, 2u, pr, pc);
    blas_layout y100 = lay(BLAS_VEC, 1, 100, 1, 34, 0, 1u, pr, pc);
    blas_layout z100 = lay(BLAS_VEC, 1, 100, -1, 0, 0, 3u, pr, pc);
    blas_layout S = lay(BLAS_SCA, 1, 1, -1, 0, 0, 3u, pr, pc);
    opt_graph g;
    opt_graph_init(&g, &df);
    int a, t, x, c, y, q, s, a2, z;
    EXPECT_OK(opt_graph_livein(&g, &A, &a));
    EXPECT_OK(opt_graph_livein(&g, &T, &t));
    EXPECT_OK(opt_graph_livein(&g, &x60, &x));
    EXPECT_OK(opt_graph_livein(&g, &S, &c));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_GEMV, BLAS_F_TRANS,
                             (int[]){c, a, x}, 1, 100, &y));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_GEMV, 0, (int[]){c, a, y}, 1, 60,
                             &q));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_NRM2, 0, (int[]){q}, 1, 1, &s));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_GER, 0, (int[]){c, q, y, a}, 60,
                             100, &a2));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_TRSV, BLAS_F_LOWER,
                             (int[]){t, y}, 1, 100, &z));
    EXPECT_OK(opt_graph_live_out(&g, s, NULL));
    EXPECT_OK(opt_graph_live_out(&g, a2, NULL));
    EXPECT_OK(opt_graph_live_out(&g, z, NULL));
    const blas_layout want[5][6] = {
        /* y = A^T x: row oriented with A's column blocks; x column
         * oriented with A's row blocks, replicated over grid columns     */
        {y100, S, A, x60c},
        /* q = A y: column oriented with A's row blocks; y as it is       */
        {x60c, S, A, y100},
        /* ||q||: q stays column oriented                                 */
        {S, x60c},
        /* A + c q y^T: q column oriented, y row oriented, alpha everywhere*/
        {A, S, x60c, y100, A},
        /* T^-1 y                                                          */
        {z100, T64, z100},
    };
    opt_plan p;
    opt_search_opts o = opt_search_default(OPT_NONE);
    EXPECT_OK(opt_search(&g, &o, &p));
    expect_plan("other ops, mode none", &g, &p, want);
    opt_plan_free(&p);
    opt_graph_free(&g);
}

static void test_deterministic(void **state)
{
    (void)state;
    for (int m = 1; m < 3; m++) {
        opt_defaults df = grid(3, 3);
        opt_search_opts o = opt_search_default((opt_mode)m);
        opt_graph g1, g2;
        opt_plan p1, p2;
        cg_steady(&df, 720, &o, 2, &g1, &p1);
        cg_steady(&df, 720, &o, 2, &g2, &p2);
        assert_true(opt_plan_equal(&p1, &p2));
        assert_true(p1.model.time == p2.model.time);
        assert_int_equal(p1.model.bytes_p2p, p2.model.bytes_p2p);
        opt_plan_free(&p1);
        opt_plan_free(&p2);
        opt_graph_free(&g1);
        opt_graph_free(&g2);
    }
}

/* Well-formed DOT: balanced braces, one line per edge.                   */
static void test_dot(void **state)
{
    (void)state;
    opt_defaults df = grid(2, 2);
    opt_search_opts o = opt_search_default(OPT_FULL);
    opt_graph g;
    opt_plan p;
    cg_steady(&df, 64, &o, 2, &g, &p);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    EXPECT_OK(opt_plan_dot(f, &g, &p, &o.cost));
    fclose(f);
    int depth = 0, mindepth = 0, arrows = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '{') depth++;
        if (buf[i] == '}') depth--;
        if (depth < mindepth) mindepth = depth;
    }
    assert_int_equal(depth, 0);
    assert_int_equal(mindepth, 0);
    assert_true(strncmp(buf, "digraph", 7) == 0);
    int want = 0;
    for (int i = 0; i < g.nnodes; i++) want += g.nodes[i].d.nops;
    for (int v = 0; v < g.nvals; v++) want += g.vals[v].has_want;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, " -> ") != NULL) {
            arrows++;
            assert_non_null(strstr(line, "label="));
            assert_non_null(strstr(line, "color="));
            assert_true(line[strlen(line) - 1] == ';');
        }
    }
    assert_int_equal(arrows, want);
    free(buf);
    /* the text explanation mentions every node                            */
    buf = NULL;
    f = open_memstream(&buf, &len);
    EXPECT_OK(opt_plan_explain(f, &g, &p, &o.cost));
    fclose(f);
    for (int i = 0; i < g.nnodes; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "  n%d ", i);
        assert_non_null(strstr(buf, tag));
    }
    free(buf);
    opt_plan_free(&p);
    opt_graph_free(&g);
}

/* The exchange count against a per-element emulation of deso/
 * exchange.c's rule, on many layout pairs (cyclic blocks, odd n).    */
static int naive_src(const blas_layout *S, int r, int c, int64_t i)
{
    int d[2] = {r, c}, s[2];
    bool held = blas_layout_holds(S, r, c) &&
                (S->dist < 0 || d[S->dist] == blas_layout_owner(S, i));
    if (held) return r * S->pc + c;
    for (int k = 0; k < 2; k++) {
        if (k == S->dist) s[k] = blas_layout_owner(S, i);
        else if (S->rep & (1u << k)) s[k] = d[k];
        else s[k] = 0;
    }
    return s[0] * S->pc + s[1];
}

static void test_exchange_exact(void **state)
{
    (void)state;
    opt_params pp = opt_params_default();
    int grids[3][2] = {{2, 3}, {3, 2}, {4, 4}};
    int64_t ns[3] = {1, 37, 100};
    int64_t bs[3] = {0, 1, 7};
    for (int gk = 0; gk < 3; gk++)
        for (int nk = 0; nk < 3; nk++) {
            int pr = grids[gk][0], pc = grids[gk][1], P = pr * pc;
            int64_t n = ns[nk];
            blas_layout L[30];
            int nl = 0;
            for (int dist = -1; dist < 2; dist++)
                for (unsigned rep = 0; rep < 4; rep++)
                    for (int bk = 0; bk < 3; bk++) {
                        if (dist < 0 && bk > 0) continue;
                        L[nl++] = blas_layout_vec(n, dist, bs[bk], rep, pr, pc);
                    }
            for (int a = 0; a < nl; a++)
                for (int b = 0; b < nl; b++) {
                    int64_t *cnt = calloc((size_t)(P * P), sizeof *cnt);
                    for (int r = 0; r < pr; r++)
                        for (int c = 0; c < pc; c++) {
                            int64_t rows, cols;
                            blas_layout_local(&L[b], r, c, &rows, &cols);
                            int dims[2] = {pr, pc}, co[2] = {r, c};
                            for (int64_t l = 0; l < rows; l++) {
                                int64_t i = L[b].dist < 0
                                    ? l
                                    : blas_cyc_global(L[b].b, dims[L[b].dist],
                                                      co[L[b].dist], l);
                                int q = naive_src(&L[a], r, c, i);
                                if (q != r * pc + c) cnt[q * P + r * pc + c]++;
                            }
                        }
                    int64_t bytes = 0, msgs = 0;
                    for (int q = 0; q < P * P; q++) {
                        bytes += 8 * cnt[q];
                        msgs += cnt[q] > 0;
                    }
                    free(cnt);
                    opt_counts oc;
                    EXPECT_OK(opt_exchange_cost(&L[a], &L[b], &pp, NULL, &oc));
                    assert_int_equal(oc.bytes_p2p, bytes);
                    assert_int_equal(oc.msgs_p2p, msgs);
                }
        }
}

/* One plan evaluation of CG at n = 8000 on 4x4 (reported, not asserted:
 * timings are never thresholds in tests).                                */
static void test_eval_speed(void **state)
{
    (void)state;
    opt_defaults df = grid(4, 4);
    opt_search_opts o = opt_search_default(OPT_FULL);
    opt_graph g;
    opt_plan p;
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cg_steady(&df, 8000, &o, 1, &g, &p);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    opt_memo *memo = opt_memo_new();
    opt_counts c;
    const int reps = 200;
    for (int k = 0; k < reps; k++)
        EXPECT_OK(opt_plan_cost(&g, &p, &o.cost, memo, NULL, &c));
    clock_gettime(CLOCK_MONOTONIC, &t2);
    EXPECT_OK(opt_plan_cost(&g, &p, &o.cost, NULL, NULL, &c));
    struct timespec t3;
    clock_gettime(CLOCK_MONOTONIC, &t3);
    double search = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    double ev = ((t2.tv_sec - t1.tv_sec) + 1e-9 * (t2.tv_nsec - t1.tv_nsec)) / reps;
    double cold = (t3.tv_sec - t2.tv_sec) + 1e-9 * (t3.tv_nsec - t2.tv_nsec);
    printf("cg n=8000 4x4 full: search %.3f ms (%d iterations), one plan "
           "evaluation %.1f us (memo) / %.1f us (cold)\n",
           1e3 * search, p.iters, 1e6 * ev, 1e6 * cold);
    opt_memo_free(memo);
    opt_plan_free(&p);
    opt_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none_is_default),
        cmocka_unit_test(test_none_other_ops),
        cmocka_unit_test(test_exchange_exact),
        cmocka_unit_test(test_cg_modes),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_dot),
        cmocka_unit_test(test_eval_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
