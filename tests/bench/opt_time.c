/* opt_time: what one plan search costs on CG's iteration DAG, serial, in
 * one process, on grids a run here cannot have.
 *
 *   opt_time [--reps K] [--grid RxC] [--mode affine|full]
 *            [--state first|steady] [--n N]
 *
 * The graph is opt_test.h's cg_build (one iteration of examples/cg.c's
 * loop: q = A p, p.q, alpha, x += alpha p, -alpha, r += -alpha q, r.r,
 * beta, p = beta p, p = r + p) with the loop-carried marks the runtime's
 * force adds (x, r and p come back as the next iteration's live-ins), in
 * two states: "first" (every live-in in its default layout, as the first
 * forced iteration sees it) and "steady" (the live-ins where the previous
 * iteration's plan left them, the third iteration of cg_steady).
 * For each grid (default 1x2 2x1 2x2 1x4 4x1 3x2 4x4), mode (default
 * affine and full) and state it prints the least and the median time of
 * one opt_search over K searches (default 2000), the greedy iterations,
 * the plan's modelled time (%a: bit for bit) and bytes, and a checksum
 * of the plan's layouts, so that two builds can be compared plan for plan.
 * Under valgrind --tool=callgrind, one case (--grid, --mode, --state)
 * run with --reps K + 1 and with --reps 1: the difference over K is the
 * instructions of one search, whatever the set-up costs.                 */
#include "../optimizer/opt_test.h"

#include <stdlib.h>
#include <time.h>

/* The live-in layouts of CG's iteration in state `steady` on df.         */
static cg_state cg_live_ins(const opt_defaults *df, int64_t n, opt_mode mode,
                            bool steady)
{
    cg_state s = cg_initial(df, n);
    for (int it = 0; steady && it < 2; it++) {
        opt_search_opts o = opt_search_default(mode);
        opt_graph g;
        opt_plan p;
        cg_ids id;
        cg_build(&g, df, &s, &id);
        EXPECT_OK(opt_search(&g, &o, &p));
        s.p = opt_test_layout(&g, &p, id.p2);
        s.x = opt_test_layout(&g, &p, id.x1);
        s.r = opt_test_layout(&g, &p, id.r1);
        s.rr = opt_test_layout(&g, &p, id.rr1);
        blas_layout all = opt_default_sca(df);
        s.rr_all = !blas_layout_equal(&s.rr, &all);
        opt_plan_free(&p);
        opt_graph_free(&g);
    }
    return s;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* FNV-1a over the plan's layouts, field by field (no padding read).      */
static uint64_t plan_sum(const opt_graph *g, const opt_plan *p)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < g->nnodes; i++)
        for (int k = -1; k < g->nodes[i].d.nops; k++) {
            const blas_layout *l = k < 0 ? &p->node[i].res : &p->node[i].req[k];
            int64_t f[9] = {l->kind, l->m, l->n, l->dist, l->b, l->nb,
                            (int64_t)l->rep, l->pr, l->pc};
            for (int j = 0; j < 9; j++) {
                h ^= (uint64_t)f[j];
                h *= 1099511628211ull;
            }
        }
    return h;
}

static void run_case(int pr, int pc, int64_t n, opt_mode mode, bool steady,
                     int reps)
{
    opt_defaults df = {.mode = mode, .pr = pr, .pc = pc, .nb = 0};
    cg_state s = cg_live_ins(&df, n, mode, steady);
    opt_graph g;
    cg_ids id;
    cg_build(&g, &df, &s, &id);
    EXPECT_OK(opt_graph_carry(&g, id.x1, id.x));
    EXPECT_OK(opt_graph_carry(&g, id.r1, id.r));
    EXPECT_OK(opt_graph_carry(&g, id.p2, id.p));
    opt_search_opts o = opt_search_default(mode);
    double *t = malloc((size_t)reps * sizeof *t);
    assert_non_null(t);
    opt_plan p;
    for (int k = 0; k < reps; k++) {
        double t0 = now();
        EXPECT_OK(opt_search(&g, &o, &p));
        t[k] = now() - t0;
        if (k < reps - 1) opt_plan_free(&p);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    printf("%dx%d %-6s %-6s min %8.1f us med %8.1f us iters %3d "
           "model %-24a p2p %7lld B coll %5lld B plan %016llx\n",
           pr, pc, opt_mode_name(mode), steady ? "steady" : "first",
           1e6 * t[0], 1e6 * t[reps / 2], p.iters, p.model.time,
           (long long)p.model.bytes_p2p, (long long)p.model.bytes_coll,
           (unsigned long long)plan_sum(&g, &p));
    free(t);
    opt_plan_free(&p);
    opt_graph_free(&g);
}

/* Runs every case the arguments select; 2 on a bad argument.             */
static int run(int argc, char **argv)
{
    int grids[7][2] = {{1, 2}, {2, 1}, {2, 2}, {1, 4}, {4, 1}, {3, 2}, {4, 4}};
    int ng = 7, reps = 2000, nm = 2, st0 = 0, st1 = 2;
    int64_t n = 720;
    opt_mode modes[2] = {OPT_AFFINE, OPT_FULL};
    for (int a = 1; a + 1 < argc; a += 2) {
        const char *v = argv[a + 1];
        if (strcmp(argv[a], "--reps") == 0) reps = atoi(v);
        else if (strcmp(argv[a], "--n") == 0) n = atoll(v);
        else if (strcmp(argv[a], "--grid") == 0 &&
                 sscanf(v, "%dx%d", &grids[0][0], &grids[0][1]) == 2) ng = 1;
        else if (strcmp(argv[a], "--mode") == 0 &&
                 opt_mode_parse(v, &modes[0]) == DESO_OK) nm = 1;
        else if (strcmp(argv[a], "--state") == 0 &&
                 (strcmp(v, "first") == 0 || strcmp(v, "steady") == 0)) {
            st0 = v[0] == 's';
            st1 = st0 + 1;
        }
        else return 2;
    }
    if (argc % 2 == 0 || reps < 1 || n < 1) return 2;
    for (int gk = 0; gk < ng; gk++)
        for (int m = 0; m < nm; m++)
            for (int st = st0; st < st1; st++)
                run_case(grids[gk][0], grids[gk][1], n, modes[m], st == 1,
                         reps);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = run(argc, argv);
    if (rc != 0)
        fprintf(stderr, "usage: opt_time [--reps K] [--grid RxC] "
                        "[--mode affine|full] [--state first|steady] "
                        "[--n N]\n");
    return rc;
}
