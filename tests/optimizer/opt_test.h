/* Shared helpers of the optimiser tests (header only): the CG iteration
 * DAG of examples/cg.c, built by hand.                                    */
#ifndef DESO_TESTS_OPT_TEST_H
#define DESO_TESTS_OPT_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include <string.h>

#include "optimizer/opt_graph.h"
#include "placement/errors.h"

#define EXPECT_OK(expr) assert_int_equal((expr), DESO_OK)

/* The layouts one CG iteration leaves behind (the next one's live-ins).  */
typedef struct cg_state {
    blas_layout A, p, x, r, rr;
    bool rr_all;          /* rr also has a view everywhere (scalar_get)   */
} cg_state;

typedef struct cg_ids {
    int A, p, x, r, rr;   /* live-ins                                      */
    int q, pq, alpha, x1, nalpha, r1, rr1, beta, p1, p2;
} cg_ids;

static inline cg_state cg_initial(const opt_defaults *df, int64_t n)
{
    cg_state s;
    s.A = opt_default_mat(df, n, n);
    s.p = s.x = s.r = opt_default_vec(df, n);
    s.rr = opt_default_sca(df);
    s.rr_all = false;
    return s;
}

/* One iteration, between two reads of rr (examples/cg.c's loop body):
 *   q = A p; pq = p.q; alpha = rr / pq; x += alpha p; nalpha = -alpha;
 *   r += nalpha q; rr' = r.r; beta = rr' / rr; p = beta p; p = r + p.   */
static inline void cg_build(opt_graph *g, const opt_defaults *df,
                            const cg_state *s, cg_ids *id)
{
    opt_graph_init(g, df);
    blas_layout one = opt_default_sca(df);
    int c1, c2;
    EXPECT_OK(opt_graph_livein(g, &s->A, &id->A));
    EXPECT_OK(opt_graph_livein(g, &s->p, &id->p));
    EXPECT_OK(opt_graph_livein(g, &s->x, &id->x));
    EXPECT_OK(opt_graph_livein(g, &s->r, &id->r));
    EXPECT_OK(opt_graph_livein(g, &s->rr, &id->rr));
    if (s->rr_all) EXPECT_OK(opt_graph_livein_view(g, id->rr, &one));
    EXPECT_OK(opt_graph_livein(g, &one, &c1));
    EXPECT_OK(opt_graph_livein(g, &one, &c2));
    int64_t n = s->p.n;
    EXPECT_OK(opt_graph_node(g, BLAS_OP_GEMV, 0, (int[]){c1, id->A, id->p},
                             1, n, &id->q));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_DOT, 0, (int[]){id->p, id->q}, 1, 1,
                             &id->pq));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SDIV, 0, (int[]){id->rr, id->pq}, 1,
                             1, &id->alpha));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0,
                             (int[]){id->alpha, id->p, id->x}, 1, n, &id->x1));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SNEG, 0, (int[]){id->alpha}, 1, 1,
                             &id->nalpha));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0,
                             (int[]){id->nalpha, id->q, id->r}, 1, n,
                             &id->r1));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_DOT, 0, (int[]){id->r1, id->r1}, 1, 1,
                             &id->rr1));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SDIV, 0, (int[]){id->rr1, id->rr}, 1,
                             1, &id->beta));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_SCAL, 0, (int[]){id->beta, id->p}, 1,
                             n, &id->p1));
    EXPECT_OK(opt_graph_node(g, BLAS_OP_AXPY, 0, (int[]){c2, id->r1, id->p1},
                             1, n, &id->p2));
    EXPECT_OK(opt_graph_live_out(g, id->x1, NULL));
    EXPECT_OK(opt_graph_live_out(g, id->r1, NULL));
    EXPECT_OK(opt_graph_live_out(g, id->p2, NULL));
    EXPECT_OK(opt_graph_live_out(g, id->rr1, &one));  /* scalar_get(rr) */
    EXPECT_OK(opt_graph_live_out(g, id->pq, NULL));
    EXPECT_OK(opt_graph_live_out(g, id->alpha, NULL));
    EXPECT_OK(opt_graph_live_out(g, id->nalpha, NULL));
    EXPECT_OK(opt_graph_live_out(g, id->beta, NULL));
}

/* The layout value v has after plan p (live-in: its primary).            */
static inline blas_layout opt_test_layout(const opt_graph *g,
                                          const opt_plan *p, int v)
{
    const opt_value *val = &g->vals[v];
    return val->producer >= 0 ? p->node[val->producer].res : val->views[0];
}

/* Steady state: `iters` iterations, each optimised in `mode` with the
 * live-ins the previous one left; the last one's graph and plan.         */
static inline void cg_steady(const opt_defaults *df, int64_t n,
                             const opt_search_opts *o, int iters,
                             opt_graph *g, opt_plan *p)
{
    cg_state s = cg_initial(df, n);
    for (int it = 0; it < iters; it++) {
        cg_ids id;
        cg_build(g, df, &s, &id);
        EXPECT_OK(opt_search(g, o, p));
        if (it == iters - 1) return;
        s.p = opt_test_layout(g, p, id.p2);
        s.x = opt_test_layout(g, p, id.x1);
        s.r = opt_test_layout(g, p, id.r1);
        s.rr = opt_test_layout(g, p, id.rr1);
        blas_layout all = opt_default_sca(df);
        s.rr_all = !blas_layout_equal(&s.rr, &all);
        opt_plan_free(p);
        opt_graph_free(g);
    }
}

#endif
