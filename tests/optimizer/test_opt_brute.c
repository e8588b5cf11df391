/* Greedy against brute force on DAGs small enough to enumerate every
 * placement the mode allows.  The placements are enumerated here from the
 * placement algebra and doc/DESIGN.md's definition of the modes, not taken
 * from the library's candidate lists (opt_cands.c): every node's list must
 * be the same set as the one enumerated here (a candidate missing from the
 * library, or one the mode does not allow, fails), and the search's plan
 * must lie in that space, cost no more than mode none's and, on these
 * DAGs, reach the brute-force optimum.                                    */
#include "opt_test.h"

#include <stdlib.h>

/* ---- the candidates, enumerated independently -------------------------- */

/* A layout with the ranks that hold any of it (bit r) and, for a vector,
 * the grid dimension it is folded over (-1 for a scalar).                */
typedef struct ref_lay {
    blas_layout lay;
    uint64_t holders;
    int fold;
} ref_lay;

/* The ranks holding an element of a (1, n) placement, from its owners.   */
static uint64_t holders_of(const pl_placement *pl)
{
    int ranks[64], count = 0;
    uint64_t h = 0;
    assert_true(pl_grid_size(&pl->grid) <= 64);
    for (int64_t j = 0; j < pl->extent[1]; j++) {
        int64_t i[PL_MAXD] = {0, j, 0};
        EXPECT_OK(pl_placement_owners(pl, i, ranks, 64, &count));
        for (int k = 0; k < count; k++) h |= 1ull << ranks[k];
    }
    return h;
}

static pl_grid grid_of(const opt_defaults *df)
{
    pl_grid g;
    EXPECT_OK(pl_grid_2d(df->pr * df->pc, df->pr, df->pc, &g));
    return g;
}

/* An n-vector (1, n): aligned by the identity (row oriented: its index on
 * template dimension 1, folded over grid columns) or by the transpose
 * (column oriented: folded over grid rows), folded cyclic(b) (b = 0:
 * block), and along the other dimension replicated or held at coordinate
 * 0 (paper 003's three stages).                                          */
static ref_lay ref_vector(const opt_defaults *df, int64_t n, int64_t b,
                          bool col, bool rep)
{
    pl_grid grid = grid_of(df);
    int k = col ? 0 : 1;
    int64_t extent[2] = {1, n};
    pl_fold fold[2] = {{PL_FOLD_BLOCK, 0}, {PL_FOLD_BLOCK, 0}};
    if (b > 0) fold[k] = (pl_fold){PL_FOLD_CYCLIC, b};
    pl_affine align = col ? pl_affine_transpose(2) : pl_affine_identity(2);
    pl_placement pl;
    EXPECT_OK(pl_placement_make(2, extent, NULL, rep ? 1u << (1 - k) : 0u,
                                &align, fold, &grid, &pl));
    ref_lay r = {.holders = holders_of(&pl), .fold = k};
    EXPECT_OK(blas_layout_of(&pl, BLAS_VEC, &r.lay));
    return r;
}

/* A scalar (1, 1) replicated along the grid dimensions of `rep`, else at
 * coordinate 0.                                                          */
static ref_lay ref_scalar(const opt_defaults *df, unsigned rep)
{
    pl_grid grid = grid_of(df);
    int64_t extent[2] = {1, 1};
    pl_fold fold[2] = {{PL_FOLD_BLOCK, 0}, {PL_FOLD_BLOCK, 0}};
    pl_affine id = pl_affine_identity(2);
    pl_placement pl;
    EXPECT_OK(pl_placement_make(2, extent, NULL, rep, &id, fold, &grid, &pl));
    ref_lay r = {.holders = holders_of(&pl), .fold = -1};
    EXPECT_OK(blas_layout_of(&pl, BLAS_SCA, &r.lay));
    return r;
}

/* What a mode allows (doc/DESIGN.md, "Optimiser modes"), for vectors of
 * one length n folded with the context's block size:
 *   none    vectors row oriented, replicated over grid rows; scalars
 *           everywhere;
 *   affine  also column oriented, replicated over grid columns;
 *   full    also either orientation held at coordinate 0 only; scalars
 *           in any of the four replication states.
 * sca_all holds the four scalar states whatever the mode: a scalar
 * operand goes where its node's result lives.                            */
typedef struct ref_sets {
    const opt_defaults *df;
    opt_mode mode;
    int64_t n;
    int nvec, nsca;
    ref_lay vec[4], sca[4], sca_all[4];
} ref_sets;

static void ref_sets_make(const opt_defaults *df, opt_mode mode, int64_t n,
                          ref_sets *s)
{
    memset(s, 0, sizeof *s);
    s->df = df;
    s->mode = mode;
    s->n = n;
    s->vec[s->nvec++] = ref_vector(df, n, df->nb, false, true);
    if (mode != OPT_NONE)
        s->vec[s->nvec++] = ref_vector(df, n, df->nb, true, true);
    if (mode == OPT_FULL) {
        s->vec[s->nvec++] = ref_vector(df, n, df->nb, false, false);
        s->vec[s->nvec++] = ref_vector(df, n, df->nb, true, false);
    }
    for (unsigned rep = 0; rep < 4; rep++)
        s->sca_all[rep] = ref_scalar(df, rep);
    s->sca[s->nsca++] = s->sca_all[3];
    if (mode == OPT_FULL)
        for (unsigned rep = 0; rep < 3; rep++)
            s->sca[s->nsca++] = s->sca_all[rep];
}

/* The scalar held by exactly the ranks holding y (paper 003's eq. 8: a
 * scalar operand is present wherever the result is).                    */
static blas_layout scalar_for(const ref_sets *s, const ref_lay *y)
{
    for (int k = 0; k < 4; k++)
        if (s->sca_all[k].holders == y->holders) return s->sca_all[k].lay;
    fail_msg("no scalar placement is held where the vector is");
    return s->sca_all[3].lay;
}

/* A reduction of X computes its value on the ranks of each line along
 * X's folded grid dimension that holds X (reduced to coordinate 0 there,
 * or all-reduced): S may live only on such ranks.                        */
static bool reduction_valid(const opt_defaults *df, const ref_lay *X,
                            const ref_lay *S)
{
    int P = df->pr * df->pc;
    for (int r = 0; r < P; r++) {
        if (!(S->holders >> r & 1u)) continue;
        bool fed = false;
        for (int q = 0; q < P && !fed; q++) {
            int rc[2] = {r / df->pc, r % df->pc};
            int qc[2] = {q / df->pc, q % df->pc};
            int other = 1 - X->fold;
            fed = (X->holders >> q & 1u) && rc[other] == qc[other];
        }
        if (!fed) return false;
    }
    return true;
}

static bool is_update(blas_op op)
{
    return op == BLAS_OP_COPY || op == BLAS_OP_SCAL || op == BLAS_OP_AXPY ||
           op == BLAS_OP_AXPBY || op == BLAS_OP_VMUL;
}

static bool is_reduction(blas_op op)
{
    return op == BLAS_OP_DOT || op == BLAS_OP_NRM2 || op == BLAS_OP_ASUM ||
           op == BLAS_OP_IAMAX;
}

static bool is_scalar_op(blas_op op)
{
    return op == BLAS_OP_SADD || op == BLAS_OP_SSUB || op == BLAS_OP_SMUL ||
           op == BLAS_OP_SDIV || op == BLAS_OP_SSQRT || op == BLAS_OP_SNEG;
}

static void add(opt_place *out, int *n, const opt_place *c)
{
    assert_true(*n < OPT_MAXCANDS);
    out[(*n)++] = *c;
}

/* Vector updates: every vector operand where the result is, scalars
 * wherever it lives.                                                     */
static void ref_update(const ref_sets *s, const blas_desc *d, opt_place *out,
                       int *n)
{
    const blas_op_info *info = blas_op_get(d->op);
    for (int v = 0; v < s->nvec; v++) {
        opt_place c;
        memset(&c, 0, sizeof c);
        c.res = s->vec[v].lay;
        for (int k = 0; k < d->nops; k++)
            c.req[k] = info->roles[k] == BLAS_VEC ? s->vec[v].lay
                                                  : scalar_for(s, &s->vec[v]);
        add(out, n, &c);
    }
}

/* Reductions: mode none keeps the vector's current layout and replicates
 * the result everywhere; the others run on any vector layout the mode
 * allows (y aligned with x) into any scalar the mode allows that the
 * reduction can feed.                                                    */
static void ref_reduction(const ref_sets *s, const blas_desc *d,
                          const blas_layout *cur, opt_place *out, int *n)
{
    opt_place c;
    if (s->mode == OPT_NONE) {
        memset(&c, 0, sizeof c);
        c.res = s->sca_all[3].lay;
        c.req[0] = cur[0];
        if (d->op == BLAS_OP_DOT) c.req[1] = cur[0];
        add(out, n, &c);
        return;
    }
    for (int x = 0; x < s->nvec; x++)
        for (int k = 0; k < s->nsca; k++) {
            if (!reduction_valid(s->df, &s->vec[x], &s->sca[k])) continue;
            memset(&c, 0, sizeof c);
            c.res = s->sca[k].lay;
            c.req[0] = s->vec[x].lay;
            if (d->op == BLAS_OP_DOT) c.req[1] = s->vec[x].lay;
            add(out, n, &c);
        }
}

/* gemv N: the result folded over grid rows with A's row blocks, x row
 * oriented with A's column blocks and replicated over grid rows; gemv T
 * the mirror image.  The result is replicated along the summed dimension
 * (an all-reduce); mode full may also leave it at coordinate 0 there (a
 * reduce).                                                               */
static void ref_gemv(const ref_sets *s, const blas_desc *d,
                     const blas_layout *cur, opt_place *out, int *n)
{
    const blas_layout *A = &cur[1];
    bool t = (d->flags & BLAS_F_TRANS) != 0;
    ref_lay x = ref_vector(s->df, t ? A->m : A->n, t ? A->b : A->nb, t, true);
    for (int rep = 1; rep >= (s->mode == OPT_FULL ? 0 : 1); rep--) {
        ref_lay y = ref_vector(s->df, t ? A->n : A->m, t ? A->nb : A->b, !t,
                               rep == 1);
        opt_place c;
        memset(&c, 0, sizeof c);
        c.res = y.lay;
        c.req[0] = scalar_for(s, &y);
        c.req[1] = *A;
        c.req[2] = x.lay;
        if (d->flags & BLAS_F_BETA) {
            c.req[3] = c.req[0];
            c.req[4] = y.lay;
        }
        add(out, n, &c);
    }
}

/* Every placement the mode allows node i, given its operands' layouts.  */
static void ref_cands(const ref_sets *s, const opt_graph *g, int i,
                      const blas_layout *cur, opt_place *out, int *n)
{
    const blas_desc *d = &g->nodes[i].d;
    *n = 0;
    if (d->op != BLAS_OP_GEMV)
        for (int k = 0; k < d->nops; k++)
            if (cur[k].kind == BLAS_VEC) assert_int_equal(cur[k].n, s->n);
    if (is_update(d->op)) {
        ref_update(s, d, out, n);
    } else if (is_reduction(d->op)) {
        ref_reduction(s, d, cur, out, n);
    } else if (is_scalar_op(d->op)) {
        for (int k = 0; k < s->nsca; k++) {
            opt_place c;
            memset(&c, 0, sizeof c);
            c.res = s->sca[k].lay;
            for (int j = 0; j < d->nops; j++) c.req[j] = s->sca[k].lay;
            add(out, n, &c);
        }
    } else if (d->op == BLAS_OP_GEMV) {
        ref_gemv(s, d, cur, out, n);
    } else {
        fail_msg("no reference candidates for operation %d", (int)d->op);
    }
}

static bool place_eq(const opt_place *a, const opt_place *b, int nops)
{
    if (!blas_layout_equal(&a->res, &b->res)) return false;
    for (int k = 0; k < nops; k++)
        if (!blas_layout_equal(&a->req[k], &b->req[k])) return false;
    return true;
}

static bool place_in(const opt_place *c, const opt_place *list, int n,
                     int nops)
{
    for (int k = 0; k < n; k++)
        if (place_eq(c, &list[k], nops)) return true;
    return false;
}

static void print_place(const char *what, int i, const opt_place *c, int nops)
{
    char buf[96];
    print_error("%s at node %d: result %s", what, i,
                opt_layout_str(&c->res, buf, sizeof buf));
    for (int k = 0; k < nops; k++)
        print_error(", op%d %s", k,
                    opt_layout_str(&c->req[k], buf, sizeof buf));
    print_error("\n");
}

/* The library's candidates for node i and the ones enumerated here are
 * the same set: none missing (the library prunes nothing for these
 * operations), none the mode does not allow.                             */
static void expect_same_cands(const ref_sets *s, const opt_graph *g, int i,
                              const blas_layout *cur, const opt_place *ref,
                              int nref)
{
    opt_place lib[OPT_MAXCANDS];
    int nlib = 0, nops = g->nodes[i].d.nops;
    bool ok = true;
    EXPECT_OK(opt_node_cands(g, i, s->mode, cur, lib, &nlib));
    for (int k = 0; k < nref; k++)
        if (!place_in(&ref[k], lib, nlib, nops)) {
            print_place("missing from the library's candidates", i, &ref[k],
                        nops);
            ok = false;
        }
    for (int k = 0; k < nlib; k++)
        if (!place_in(&lib[k], ref, nref, nops)) {
            print_place("not allowed in the mode", i, &lib[k], nops);
            ok = false;
        }
    assert_true(ok);
}

/* Every node of plan p is a placement the mode allows.                   */
static void expect_in_space(const ref_sets *s, const opt_graph *g,
                            const opt_plan *p)
{
    for (int i = 0; i < g->nnodes; i++) {
        blas_layout cur[BLAS_MAXOPS];
        for (int k = 0; k < g->nodes[i].d.nops; k++)
            cur[k] = opt_test_layout(g, p, g->nodes[i].ops[k]);
        opt_place ref[OPT_MAXCANDS];
        int n;
        ref_cands(s, g, i, cur, ref, &n);
        if (!place_in(&p->node[i], ref, n, g->nodes[i].d.nops)) {
            print_place("the search's plan leaves the mode", i, &p->node[i],
                        g->nodes[i].d.nops);
            fail();
        }
    }
}

/* ---- brute force --------------------------------------------------------- */

typedef struct brute {
    const opt_graph *g;
    const ref_sets *s;
    opt_params pp;
    opt_memo *memo;
    opt_plan p;
    double best;
    long evals;
} brute;

/* Every plan of the independently enumerated space; at every node the
 * library's list for the same operand layouts is compared with it.      */
static void dfs(brute *b, int i)
{
    const opt_graph *g = b->g;
    if (i == g->nnodes) {
        opt_counts c;
        EXPECT_OK(opt_plan_cost(g, &b->p, &b->pp, b->memo, NULL, &c));
        if (b->evals == 0 || c.time < b->best) b->best = c.time;
        b->evals++;
        return;
    }
    blas_layout cur[BLAS_MAXOPS];
    for (int k = 0; k < g->nodes[i].d.nops; k++)
        cur[k] = opt_test_layout(g, &b->p, g->nodes[i].ops[k]);
    opt_place *c = malloc(OPT_MAXCANDS * sizeof *c);
    int n;
    ref_cands(b->s, g, i, cur, c, &n);
    assert_true(n > 0);
    expect_same_cands(b->s, g, i, cur, c, n);
    for (int k = 0; k < n; k++) {
        b->p.node[i] = c[k];
        dfs(b, i + 1);
    }
    free(c);
}

static double brute_force(const opt_graph *g, const ref_sets *s,
                          const opt_params *pp, long *evals)
{
    brute b = {.g = g, .s = s, .pp = *pp, .memo = opt_memo_new()};
    EXPECT_OK(opt_plan_none(g, &b.p));   /* storage of the right size     */
    dfs(&b, 0);
    opt_plan_free(&b.p);
    opt_memo_free(b.memo);
    *evals = b.evals;
    return b.best;
}

/* The search on g in mode m against the brute force: in the space, never
 * worse than mode none, and optimal.                                     */
static void check_search(const opt_graph *g, int64_t n, opt_mode m,
                         long *evals)
{
    ref_sets s;
    ref_sets_make(&g->df, m, n, &s);
    opt_search_opts o = opt_search_default(m);
    opt_plan p, none;
    EXPECT_OK(opt_search(g, &o, &p));
    EXPECT_OK(opt_plan_none(g, &none));
    opt_counts cn;
    EXPECT_OK(opt_plan_cost(g, &none, &o.cost, NULL, NULL, &cn));
    double opt = brute_force(g, &s, &o.cost, evals);
    expect_in_space(&s, g, &p);
    assert_true(p.model.time <= cn.time);
    if (p.model.time > opt * (1 + 1e-12) || p.model.time < opt * (1 - 1e-12))
        print_error("mode %s on %dx%d: search %.6e s, optimum %.6e s\n",
                    opt_mode_name(m), g->df.pr, g->df.pc, p.model.time, opt);
    assert_true(p.model.time >= opt * (1 - 1e-12));
    assert_true(p.model.time <= opt * (1 + 1e-12));
    opt_plan_free(&p);
    opt_plan_free(&none);
}

typedef struct rng { uint64_t s; } rng;
static unsigned rnd(rng *r, unsigned n)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((r->s >> 33) % n);
}

/* A random DAG of level-1 operations and scalar arithmetic on a grid.    */
static void random_dag(opt_graph *g, const opt_defaults *df, int64_t n,
                       int nodes, rng *r)
{
    opt_graph_init(g, df);
    int vec[32], sca[32], nv = 0, ns = 0, id;
    blas_layout v0 = opt_default_vec(df, n), s0 = opt_default_sca(df);
    for (int k = 0; k < 2; k++) {
        EXPECT_OK(opt_graph_livein(g, &v0, &id));
        vec[nv++] = id;
    }
    EXPECT_OK(opt_graph_livein(g, &s0, &id));
    sca[ns++] = id;
    for (int i = 0; i < nodes; i++) {
        int x = vec[rnd(r, (unsigned)nv)], y = vec[rnd(r, (unsigned)nv)];
        int a = sca[rnd(r, (unsigned)ns)], b = sca[rnd(r, (unsigned)ns)];
        switch (rnd(r, 5)) {
        case 0:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_DOT, 0, (int[]){x, y}, 1, 1,
                                     &id));
            sca[ns++] = id;
            break;
        case 1:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0, (int[]){a, x, y}, 1,
                                     n, &id));
            vec[nv++] = id;
            break;
        case 2:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_SCAL, 0, (int[]){a, x}, 1, n,
                                     &id));
            vec[nv++] = id;
            break;
        case 3:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_SDIV, 0, (int[]){a, b}, 1, 1,
                                     &id));
            sca[ns++] = id;
            break;
        default:
            EXPECT_OK(opt_graph_node(g, BLAS_OP_NRM2, 0, (int[]){x}, 1, 1,
                                     &id));
            sca[ns++] = id;
            break;
        }
    }
    /* the last scalar is read everywhere (a force point), the last vector
     * is live-out                                                         */
    EXPECT_OK(opt_graph_live_out(g, sca[ns - 1], &s0));
    EXPECT_OK(opt_graph_live_out(g, vec[nv - 1], NULL));
}

static void test_brute(void **state)
{
    (void)state;
    int grids[3][2] = {{2, 2}, {2, 3}, {3, 3}};
    rng r = {12345};
    long plans = 0;
    int cases = 0;
    for (int gk = 0; gk < 3; gk++)
        for (int t = 0; t < 12; t++) {
            opt_defaults df = {.pr = grids[gk][0], .pc = grids[gk][1],
                               .nb = t % 3 == 2 ? 5 : 0};
            opt_graph g;
            int64_t n = 60 + 7 * t;
            random_dag(&g, &df, n, 4 + t % 2, &r);
            for (int m = 0; m < 3; m++) {
                long evals;
                check_search(&g, n, (opt_mode)m, &evals);
                plans += evals;
                cases++;
            }
            opt_graph_free(&g);
        }
    printf("search vs brute force on 36 random DAGs (4-5 nodes) in %d "
           "(DAG, mode) cases: optimal in all, %ld plans enumerated\n", cases,
           plans);
}

/* The brief's tiny DAG: s = x.y; z = s x + y; t = ||z||; u = t x.         */
static void test_tiny(void **state)
{
    (void)state;
    opt_defaults df = {.pr = 2, .pc = 2, .nb = 0};
    opt_graph g;
    opt_graph_init(&g, &df);
    blas_layout v0 = opt_default_vec(&df, 100), s0 = opt_default_sca(&df);
    int x, y, s, z, t, u;
    EXPECT_OK(opt_graph_livein(&g, &v0, &x));
    EXPECT_OK(opt_graph_livein(&g, &v0, &y));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_DOT, 0, (int[]){x, y}, 1, 1, &s));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_AXPY, 0, (int[]){s, x, y}, 1, 100, &z));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_NRM2, 0, (int[]){z}, 1, 1, &t));
    EXPECT_OK(opt_graph_node(&g, BLAS_OP_SCAL, 0, (int[]){t, x}, 1, 100, &u));
    EXPECT_OK(opt_graph_live_out(&g, t, &s0));
    EXPECT_OK(opt_graph_live_out(&g, u, NULL));
    /* 1 plan in mode none; affine: 2 x 2 x 2 x 2; full: each reduction
     * has 12 (4 vector layouts, the scalars each can feed: 4 from the
     * replicated ones, 2 from those at coordinate 0), each update 4     */
    const long want[3] = {1, 16, 12 * 4 * 12 * 4};
    for (int m = 0; m < 3; m++) {
        long evals;
        check_search(&g, 100, (opt_mode)m, &evals);
        printf("tiny DAG, mode %-6s: search optimal over %ld plans\n",
               opt_mode_name((opt_mode)m), evals);
        assert_int_equal(evals, want[m]);
    }
    opt_graph_free(&g);
}

/* CG's iteration DAG (with a gemv) in its steady state, 2 x 3 and 3 x 3:
 * too many plans for brute force, but every node's candidate list is
 * compared with the independent enumeration and the search's plan lies
 * in it.                                                                 */
static void test_cg_cands(void **state)
{
    (void)state;
    int grids[2][2] = {{2, 3}, {3, 3}};
    for (int gk = 0; gk < 2; gk++)
        for (int m = 1; m < 3; m++) {
            opt_defaults df = {.pr = grids[gk][0], .pc = grids[gk][1],
                               .nb = gk == 0 ? 0 : 8};
            opt_search_opts o = opt_search_default((opt_mode)m);
            opt_graph g;
            opt_plan p;
            cg_steady(&df, 200, &o, 3, &g, &p);
            ref_sets s;
            ref_sets_make(&df, (opt_mode)m, 200, &s);
            expect_in_space(&s, &g, &p);
            for (int i = 0; i < g.nnodes; i++) {
                blas_layout cur[BLAS_MAXOPS];
                for (int k = 0; k < g.nodes[i].d.nops; k++)
                    cur[k] = opt_test_layout(&g, &p, g.nodes[i].ops[k]);
                opt_place ref[OPT_MAXCANDS];
                int n;
                ref_cands(&s, &g, i, cur, ref, &n);
                expect_same_cands(&s, &g, i, cur, ref, n);
            }
            opt_plan_free(&p);
            opt_graph_free(&g);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_cg_cands),
        cmocka_unit_test(test_brute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
