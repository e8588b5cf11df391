/* The placement optimiser on CG's iteration DAG: modelled bytes per mode,
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

/* Mode none's plan is exactly the executor's per-node defaults.          */
static void test_none_is_default(void **state)
{
    (void)state;
    opt_defaults df = grid(2, 3);
    cg_state s = cg_initial(&df, 100);
    cg_ids id;
    opt_graph g;
    cg_build(&g, &df, &s, &id);
    opt_plan p;
    opt_search_opts o = opt_search_default(OPT_NONE);
    EXPECT_OK(opt_search(&g, &o, &p));
    for (int i = 0; i < g.nnodes; i++) {
        blas_layout cur[BLAS_MAXOPS], res, req[BLAS_MAXOPS];
        for (int k = 0; k < g.nodes[i].d.nops; k++)
            cur[k] = opt_test_layout(&g, &p, g.nodes[i].ops[k]);
        EXPECT_OK(opt_place_node(&df, &g.nodes[i].d, cur, &res, req));
        assert_true(blas_layout_equal(&res, &p.node[i].res));
        for (int k = 0; k < g.nodes[i].d.nops; k++)
            assert_true(blas_layout_equal(&req[k], &p.node[i].req[k]));
    }
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
        cmocka_unit_test(test_exchange_exact),
        cmocka_unit_test(test_cg_modes),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_dot),
        cmocka_unit_test(test_eval_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
