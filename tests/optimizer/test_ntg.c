/* Paper 004's navigational trace graph: its edges and weights against the
 * definition written out element by element, and its METIS partition on
 * the 2-D Laplacian, natural and permuted: every index owned once, each
 * vector balanced, halo lists exact, and a halo far below contiguous row
 * blocks' on the permuted matrix and not above it on the natural one.    */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/ntg.h"
#include "placement/sparse_gen.h"
#include "tests/serial_util.h"

#define EXPECT_OK(expr) assert_int_equal((expr), DESO_OK)

/* ---- weights, by brute force ------------------------------------------- */

typedef struct trace {
    int nvec, ncalls;
    int64_t n;
    pl_csr a[4];
    opt_ntg_call call[4];
} trace;

static void random_trace(tu_rng *g, trace *t)
{
    t->nvec = 1 + (int)tu_below(g, 4);
    t->n = 1 + tu_below(g, 12);
    t->ncalls = 1 + (int)tu_below(g, 4);
    for (int k = 0; k < t->ncalls; k++) {
        opt_ntg_call *c = &t->call[k];
        memset(c, 0, sizeof *c);
        c->out = (int)tu_below(g, t->nvec);
        c->nin = 1 + (int)tu_below(g, tu_below(g, 2) ? 1 : OPT_NTG_MAX_IN);
        for (int i = 0; i < c->nin; i++) c->in[i] = (int)tu_below(g, t->nvec);
        memset(&t->a[k], 0, sizeof t->a[k]);
        if (c->nin != 1 || tu_below(g, 2)) continue;
        pl_coo coo = {0, 0, NULL, NULL, NULL};
        for (int64_t e = tu_below(g, 3 * t->n); e > 0; e--)
            EXPECT_OK(pl_coo_push(&coo, tu_below(g, t->n), tu_below(g, t->n), 1.0));
        EXPECT_OK(pl_csr_from_coo(&coo, t->n, t->n, &t->a[k]));
        pl_coo_free(&coo);
        c->a = &t->a[k];
        c->trans = tu_below(g, 2) != 0;
    }
}

static uint32_t touched_by(const opt_ntg_call *c)
{
    uint32_t s = 1u << c->out;
    for (int i = 0; i < c->nin; i++) s |= 1u << c->in[i];
    return s;
}

/* Element-level weights W[(v, i), (u, j)], then summed over the blocks.  */
static int64_t *block_weights(const trace *t, const opt_ntg *g, double ls)
{
    int64_t nv = t->nvec * t->n, nc = 0;
    for (int k = 0; k + 1 < t->ncalls; k++)
        for (int u = 0; u < t->nvec; u++)
            for (int v = 0; v < t->nvec; v++)
                nc += ((touched_by(&t->call[k]) >> u & 1) &&
                       (touched_by(&t->call[k + 1]) >> v & 1) && u != v) * t->n;
    int64_t c = 1, p = nc + 1, l = llround(ls * (double)p);
    assert_int_equal(g->p, p);
    assert_int_equal(g->l, l);
    int64_t *w = calloc((size_t)(nv * nv), sizeof *w);
#define ADD(a, b, x) do { if ((a) != (b)) { w[(a) * nv + (b)] += (x); w[(b) * nv + (a)] += (x); } } while (0)
    for (int k = 0; k < t->ncalls; k++) {
        const opt_ntg_call *cl = &t->call[k];
        for (int64_t i = 0; i < t->n; i++) {
            if (cl->a)
                for (int64_t e = cl->a->rowptr[i]; e < cl->a->rowptr[i + 1]; e++) {
                    int64_t j = cl->a->col[e];   /* A^T: y_j from x_i      */
                    ADD(cl->out * t->n + (cl->trans ? j : i),
                        cl->in[0] * t->n + (cl->trans ? i : j), p);
                }
            else
                for (int q = 0; q < cl->nin; q++) ADD(cl->out * t->n + i, cl->in[q] * t->n + i, p);
            for (int u = 0; k + 1 < t->ncalls && u < t->nvec; u++)
                for (int v = 0; v < t->nvec; v++)
                    if ((touched_by(cl) >> u & 1) && (touched_by(&t->call[k + 1]) >> v & 1) && u != v)
                        ADD(u * t->n + i, v * t->n + i, c);
        }
    }
    for (int v = 0; v < t->nvec; v++)
        for (int64_t i = 0; i + 1 < t->n; i++) ADD(v * t->n + i, v * t->n + i + 1, l);
#undef ADD
    int64_t nb = g->nvtx, *bw = calloc((size_t)(nb * nb), sizeof *bw);
    for (int64_t a = 0; a < nv; a++)
        for (int64_t b = 0; b < nv; b++) {
            int64_t ba = (a / t->n) * g->nblocks + (a % t->n) / g->block;
            int64_t bb = (b / t->n) * g->nblocks + (b % t->n) / g->block;
            if (ba != bb) bw[ba * nb + bb] += w[a * nv + b];
        }
    free(w);
    return bw;
}

static void expect_weights(trace *t, const opt_ntg_opts *o);

static void test_weights_match_definition(void **state)
{
    (void)state;
    tu_rng r = {2007};
    for (int trial = 0; trial < 400; trial++) {
        trace t;
        random_trace(&r, &t);
        opt_ntg_opts o = {.l_scaling = (double)tu_below(&r, 5) / 4,
                          .max_vertices = t.nvec * (1 + tu_below(&r, 14))};
        expect_weights(&t, &o);
    }
}

/* A dense row: one vertex with more neighbours than the short sort takes. */
static void test_dense_row_weights(void **state)
{
    (void)state;
    trace t = {.nvec = 2, .ncalls = 2, .n = 48};
    pl_coo coo = {0, 0, NULL, NULL, NULL};
    for (int64_t j = t.n - 1; j >= 0; j--) EXPECT_OK(pl_coo_push(&coo, 5, j, 1.0));
    for (int64_t i = 0; i < t.n; i++) EXPECT_OK(pl_coo_push(&coo, i, (7 * i) % t.n, 1.0));
    EXPECT_OK(pl_csr_from_coo(&coo, t.n, t.n, &t.a[1]));
    pl_coo_free(&coo);
    /* y = vector 0, so that y_5's edges are grouped under y_5; the
     * element-wise call first, so that they do not arrive sorted         */
    t.call[0] = (opt_ntg_call){NULL, 0, {1, 0, 0}, 1, false};
    t.call[1] = (opt_ntg_call){&t.a[1], 0, {1, 0, 0}, 1, false};
    memset(&t.a[0], 0, sizeof t.a[0]);
    opt_ntg_opts o = {.l_scaling = 0.5, .max_vertices = 0};
    expect_weights(&t, &o);
}

/* A transposed product on A is, edge for edge, the product on A^T built
 * explicitly: y_j - x_i for every a_ij, on an unsymmetric pattern with
 * empty rows, followed by an update of y (continuity edges included).   */
static void test_transpose_reversed(void **state)
{
    (void)state;
    tu_rng r = {1957};
    for (int trial = 0; trial < 50; trial++) {
        int64_t n = 1 + tu_below(&r, 11);
        pl_coo coo = {0, 0, NULL, NULL, NULL}, cot = {0, 0, NULL, NULL, NULL};
        for (int64_t e = tu_below(&r, 3 * n); e > 0; e--) {
            int64_t i = tu_below(&r, n), j = tu_below(&r, n);
            EXPECT_OK(pl_coo_push(&coo, i, j, 1.0));
            EXPECT_OK(pl_coo_push(&cot, j, i, 1.0));
        }
        pl_csr a, at;
        EXPECT_OK(pl_csr_from_coo(&coo, n, n, &a));
        EXPECT_OK(pl_csr_from_coo(&cot, n, n, &at));
        pl_coo_free(&coo);
        pl_coo_free(&cot);
        opt_ntg_call ct[2] = {{&a, 0, {1, 0, 0}, 1, true},
                              {NULL, 0, {0, 1, 0}, 2, false}};
        opt_ntg_call cn[2] = {{&at, 0, {1, 0, 0}, 1, false}, ct[1]};
        opt_ntg_opts o = {.l_scaling = 0.0,
                          .max_vertices = 2 * (1 + tu_below(&r, 12))};
        opt_ntg gt, gn;
        EXPECT_OK(opt_ntg_build(ct, 2, 2, n, &o, &gt));
        EXPECT_OK(opt_ntg_build(cn, 2, 2, n, &o, &gn));
        assert_int_equal(gt.nvtx, gn.nvtx);
        assert_int_equal(gt.xadj[gt.nvtx], gn.xadj[gn.nvtx]);
        size_t ne = (size_t)gt.xadj[gt.nvtx];
        assert_memory_equal(gt.xadj, gn.xadj, (size_t)(gt.nvtx + 1) * sizeof *gt.xadj);
        assert_memory_equal(gt.adjncy, gn.adjncy, ne * sizeof *gt.adjncy);
        assert_memory_equal(gt.adjwgt, gn.adjwgt, ne * sizeof *gt.adjwgt);
        opt_ntg_free(&gt);
        opt_ntg_free(&gn);
        pl_csr_free(&a);
        pl_csr_free(&at);
    }
}

/* The graph of trace t against the brute-force block weights; frees t's
 * matrices.                                                               */
static void expect_weights(trace *t, const opt_ntg_opts *o)
{
    opt_ntg g;
    EXPECT_OK(opt_ntg_build(t->call, t->ncalls, t->nvec, t->n, o, &g));
    assert_true(g.nblocks * g.block >= t->n && (g.nblocks - 1) * g.block < t->n);
    assert_true(o->max_vertices == 0 || g.nvtx <= o->max_vertices);
    assert_true(g.scale == 1.0);
    int64_t *bw = block_weights(t, &g, o->l_scaling);
    int64_t edges = 0;
    for (int64_t u = 0; u < g.nvtx; u++)
        for (int64_t v = 0; v < g.nvtx; v++) edges += bw[u * g.nvtx + v] != 0;
    assert_int_equal(g.xadj[g.nvtx], edges);          /* merged, both ways */
    for (int64_t u = 0; u < g.nvtx; u++)
        for (int32_t e = g.xadj[u]; e < g.xadj[u + 1]; e++)
            assert_int_equal(g.adjwgt[e], bw[u * g.nvtx + g.adjncy[e]]);
    free(bw);
    opt_ntg_free(&g);
    for (int k = 0; k < t->ncalls; k++) pl_csr_free(&t->a[k]);
}

/* ---- partitions of the Laplacian ----------------------------------------- */

enum { VX, VR, VP, VQ, NVEC };

/* One CG iteration's vector updates: q = A p; x += a p; r -= a q;
 * p = r + b p (the dot products read, never write, a vector entry).      */
static int cg_trace(const pl_csr *a, opt_ntg_call call[4])
{
    opt_ntg_call c[4] = {{a, VQ, {VP, 0, 0}, 1, false}, {NULL, VX, {VX, VP, 0}, 2, false},
                         {NULL, VR, {VR, VQ, 0}, 2, false}, {NULL, VP, {VR, VP, 0}, 2, false}};
    memcpy(call, c, sizeof c);
    return 4;
}

typedef struct outcome {
    opt_sparse_cost ntg, blocks;
    int64_t misaligned;     /* indices whose p and q owners differ          */
    double imbalance;       /* worst vector part / even share               */
} outcome;

static void expect_owned_once(const int32_t *owner, int64_t n, int K,
                              double *imbalance)
{
    int64_t *count = calloc((size_t)K, sizeof *count), worst = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(owner[i] >= 0 && owner[i] < K);
        count[owner[i]]++;
    }
    for (int k = 0; k < K; k++) worst = count[k] > worst ? count[k] : worst;
    double even = (double)n / K, ratio = (double)worst / even;
    if (ratio > *imbalance) *imbalance = ratio;
    free(count);
}

/* Halo entries of the product by pl_halo_recv on each rank's rows: must
 * be what the cost model counted.                                         */
static int64_t halo_entries(const pl_csr *a, const pl_owner *rows,
                            const pl_owner *cols, int K)
{
    int64_t total = 0;
    for (int r = 0; r < K; r++) {
        pl_coo t = {0, 0, NULL, NULL, NULL};
        int32_t *grow = malloc((size_t)a->nrows * sizeof *grow);
        int64_t nr = 0;
        for (int64_t i = 0; i < a->nrows; i++) {
            if (rows->rank(i, rows->arg) != r) continue;
            for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
                EXPECT_OK(pl_coo_push(&t, nr, a->col[e], a->val[e]));
            grow[nr++] = (int32_t)i;
        }
        pl_csr mine;
        EXPECT_OK(pl_csr_from_coo(&t, nr, a->ncols, &mine));
        mine.grow = grow;
        pl_halo h;
        EXPECT_OK(pl_halo_recv(&mine, cols, r, K, &h));
        total += h.recv_ptr[K];
        pl_halo_free(&h);
        pl_csr_free(&mine);
        free(grow);                  /* borrowed by the rows, not freed */
        pl_coo_free(&t);
    }
    return total;
}

/* Scaled or not, METIS's edge-weight total fits its 32-bit integers, no
 * weight is zero, and p still dominates c.                                */
static void expect_weights_fit_metis(const opt_ntg *g)
{
    int64_t sum = 0;
    int32_t lo = INT32_MAX, hi = 0;
    for (int32_t e = 0; e < g->xadj[g->nvtx]; e++) {
        sum += g->adjwgt[e];
        lo = g->adjwgt[e] < lo ? g->adjwgt[e] : lo;
        hi = g->adjwgt[e] > hi ? g->adjwgt[e] : hi;
    }
    assert_true(sum <= INT32_MAX && lo >= 1 && hi > 1000 * lo);
    assert_true(g->scale > 0.0 && g->scale <= 1.0);
}

static void place(const char *spec, int K, double ls, outcome *out)
{
    pl_gen gen;
    EXPECT_OK(pl_gen_parse(spec, &gen));
    pl_csr a;
    EXPECT_OK(pl_gen_rows(&gen, 0, gen.n, &a));
    opt_ntg_call call[4];
    opt_ntg_opts o = {.l_scaling = ls, .max_vertices = 0};
    opt_ntg g;
    EXPECT_OK(opt_ntg_build(call, cg_trace(&a, call), NVEC, gen.n, &o, &g));
    expect_weights_fit_metis(&g);
    int32_t *vpart = malloc((size_t)g.nvtx * sizeof *vpart);
    EXPECT_OK(opt_ntg_partition(&g, K, vpart));
    int32_t *own[NVEC];
    memset(out, 0, sizeof *out);
    for (int v = 0; v < NVEC; v++) {
        own[v] = malloc((size_t)gen.n * sizeof *own[v]);
        opt_ntg_owners(&g, vpart, v, own[v]);
        expect_owned_once(own[v], gen.n, K, &out->imbalance);
    }
    for (int64_t i = 0; i < gen.n; i++) out->misaligned += own[VP][i] != own[VQ][i];
    pl_owner_table tq, tp;
    EXPECT_OK(pl_owner_table_init(&tq, own[VQ], gen.n, K));
    EXPECT_OK(pl_owner_table_init(&tp, own[VP], gen.n, K));
    pl_owner rq = pl_owner_table_map(&tq), cp = pl_owner_table_map(&tp);
    pl_blocks b = {gen.n, K};
    pl_owner blk = pl_owner_blocks(&b);
    opt_params prm = opt_params_default();
    EXPECT_OK(opt_sparse_cost_eval(&a, &rq, &cp, K, &prm, 1e-9, &out->ntg));
    EXPECT_OK(opt_sparse_cost_eval(&a, &blk, &blk, K, &prm, 1e-9, &out->blocks));
    assert_int_equal(out->ntg.halo_bytes, 8 * halo_entries(&a, &rq, &cp, K));
    assert_int_equal(out->blocks.halo_bytes, 8 * halo_entries(&a, &blk, &blk, K));
    pl_owner_table_free(&tq);
    pl_owner_table_free(&tp);
    for (int v = 0; v < NVEC; v++) free(own[v]);
    free(vpart);
    opt_ntg_free(&g);
    pl_csr_free(&a);
}

static void report(const char *spec, int K, double ls, const outcome *o)
{
    print_message("%-14s K=%-2d L=%.2f halo bytes ntg %6lld blocks %6lld "
                  "(ratio %.3f), msgs %3lld vs %3lld, p/q misaligned %lld, "
                  "imbalance %.3f, model keeps %s\n", spec, K, ls,
                  (long long)o->ntg.halo_bytes,
                  (long long)o->blocks.halo_bytes,
                  (double)o->ntg.halo_bytes / (double)o->blocks.halo_bytes,
                  (long long)o->ntg.halo_msgs, (long long)o->blocks.halo_msgs,
                  (long long)o->misaligned, o->imbalance,
                  opt_sparse_cheaper(&o->ntg, &o->blocks) ? "ntg" : "blocks");
}

#define L_SCALING OPT_NTG_L_SCALING

static void test_permuted_laplacian_halo_far_below_blocks(void **state)
{
    (void)state;
    int Ks[] = {4, 16};
    for (int k = 0; k < 2; k++) {
        outcome o;
        place("lap2d-perm:64", Ks[k], L_SCALING, &o);
        report("lap2d-perm:64", Ks[k], L_SCALING, &o);
        assert_true(o.ntg.halo_bytes * 10 <= o.blocks.halo_bytes);
        assert_true(opt_sparse_cheaper(&o.ntg, &o.blocks));
        assert_true(o.imbalance <= 1.031);
        assert_true(o.misaligned * 100 <= 4096);
    }
}

static void test_natural_laplacian_not_worse(void **state)
{
    (void)state;
    int Ks[] = {4, 16};
    for (int k = 0; k < 2; k++) {
        outcome o;
        place("lap2d:64", Ks[k], L_SCALING, &o);
        report("lap2d:64", Ks[k], L_SCALING, &o);
        assert_true(o.ntg.halo_bytes <= o.blocks.halo_bytes);
        assert_true(o.imbalance <= 1.031);
        assert_true(o.misaligned * 100 <= 4096);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_match_definition),
        cmocka_unit_test(test_dense_row_weights),
        cmocka_unit_test(test_transpose_reversed),
        cmocka_unit_test(test_permuted_laplacian_halo_far_below_blocks),
        cmocka_unit_test(test_natural_laplacian_not_worse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
