/* The optimiser's graph: building it, and plan storage.                   */
#include "optimizer/opt_graph.h"

#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_impl.h"
#include "placement/errors.h"
#include "placement/alloc.h"

void opt_graph_init(opt_graph *g, const opt_defaults *df)
{
    memset(g, 0, sizeof *g);
    g->df = *df;
}

void opt_graph_free(opt_graph *g)
{
    free(g->vals);
    free(g->nodes);
    g->vals = NULL;
    g->nodes = NULL;
    g->nvals = g->nnodes = g->cap_vals = g->cap_nodes = 0;
}

void opt_graph_reset(opt_graph *g, const opt_defaults *df)
{
    g->df = *df;
    g->nvals = g->nnodes = 0;
    g->nparts = 0;
}

deso_err opt_graph_copy(const opt_graph *src, opt_graph *dst)
{
    opt_graph_init(dst, &src->df);
    size_t nv = src->nvals > 0 ? (size_t)src->nvals : 1;
    size_t nn = src->nnodes > 0 ? (size_t)src->nnodes : 1;
    dst->vals = deso__malloc(nv * sizeof *dst->vals);
    dst->nodes = deso__malloc(nn * sizeof *dst->nodes);
    if (dst->vals == NULL || dst->nodes == NULL) {
        opt_graph_free(dst);
        return deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    }
    memcpy(dst->vals, src->vals, (size_t)src->nvals * sizeof *dst->vals);
    memcpy(dst->nodes, src->nodes, (size_t)src->nnodes * sizeof *dst->nodes);
    dst->nvals = dst->cap_vals = src->nvals;
    dst->nnodes = dst->cap_nodes = src->nnodes;
    dst->nparts = src->nparts;
    memcpy(dst->parts, src->parts, sizeof dst->parts);
    return DESO_OK;
}

static deso_err new_value(opt_graph *g, int *id)
{
    if (g->nvals == g->cap_vals) {
        int cap = g->cap_vals ? 2 * g->cap_vals : 16;
        opt_value *v = deso__realloc(g->vals, (size_t)cap * sizeof *v);
        DESO_CHECK(v != NULL, DESO_ENOMEM, "optimizer: out of memory");
        g->vals = v;
        g->cap_vals = cap;
    }
    *id = g->nvals++;
    memset(&g->vals[*id], 0, sizeof g->vals[*id]);
    g->vals[*id].producer = -1;
    g->vals[*id].carry = -1;
    return DESO_OK;
}

/* A partition a sparse product places its vectors by, kept once.         */
static void add_part(opt_graph *g, const blas_part *p)
{
    for (int k = 0; k < g->nparts; k++)
        if (blas_part_equal(g->parts[k], p)) return;
    if (g->nparts < OPT_MAXPARTS) g->parts[g->nparts++] = p;
}

/* A live-in vector a product left on its partition offers that partition
 * too, so that a force with no product of its own (a solver's set-up
 * after b = A x: r = b, p = r, r.r) can keep its vectors there instead
 * of moving them to a block-cyclic layout and back at the next product. */
static void add_livein_part(opt_graph *g, const blas_layout *lay)
{
    if (lay->kind == BLAS_VEC && lay->dist == BLAS_DIST_PART &&
        lay->part != NULL)
        add_part(g, lay->part);
}

deso_err opt_graph_livein(opt_graph *g, const blas_layout *lay, int *id)
{
    DESO_CHECK(g != NULL && lay != NULL && id != NULL, DESO_ENULL,
               "opt_graph_livein: NULL argument");
    DESO_CHECK(lay->pr == g->df.pr && lay->pc == g->df.pc, DESO_EINVAL,
               "opt_graph_livein: layout on a %dx%d grid, graph on %dx%d",
               lay->pr, lay->pc, g->df.pr, g->df.pc);
    DESO_TRY(new_value(g, id));
    opt_value *v = &g->vals[*id];
    v->kind = lay->kind;
    v->m = lay->m;
    v->n = lay->n;
    v->nviews = 1;
    v->views[0] = *lay;
    add_livein_part(g, lay);
    return DESO_OK;
}

deso_err opt_graph_ooc(opt_graph *g, int id)
{
    DESO_CHECK(g != NULL, DESO_ENULL, "opt_graph_ooc: NULL argument");
    DESO_CHECK(id >= 0 && id < g->nvals && g->vals[id].kind == BLAS_MAT,
               DESO_EINVAL, "opt_graph_ooc: %d is not a matrix value", id);
    g->vals[id].ooc = true;
    return DESO_OK;
}

deso_err opt_graph_livein_view(opt_graph *g, int id, const blas_layout *lay)
{
    DESO_CHECK(g != NULL && lay != NULL, DESO_ENULL,
               "opt_graph_livein_view: NULL argument");
    DESO_CHECK(id >= 0 && id < g->nvals && g->vals[id].producer < 0,
               DESO_EINVAL, "opt_graph_livein_view: %d is not live-in", id);
    opt_value *v = &g->vals[id];
    for (int k = 0; k < v->nviews; k++)
        if (blas_layout_equal(&v->views[k], lay)) return DESO_OK;
    if (v->nviews == OPT_MAXVIEWS) return DESO_OK;   /* model: fewer views */
    v->views[v->nviews++] = *lay;
    add_livein_part(g, lay);
    return DESO_OK;
}

deso_err opt_graph_node(opt_graph *g, blas_op op, unsigned flags,
                        const int *ops, int64_t m, int64_t n, int *res)
{
    blas_desc d = {.op = op, .flags = flags};
    return opt_graph_node_desc(g, &d, ops, m, n, res);
}

deso_err opt_graph_node_desc(opt_graph *g, const blas_desc *dd,
                             const int *ops, int64_t m, int64_t n, int *res)
{
    blas_op op = dd->op;
    unsigned flags = dd->flags;
    DESO_CHECK(g != NULL && res != NULL, DESO_ENULL,
               "opt_graph_node: NULL argument");
    const blas_op_info *info = blas_op_get(op);
    DESO_CHECK(info != NULL, DESO_EINVAL, "opt_graph_node: unknown op %d",
               (int)op);
    int nops = blas_desc_nops(op, flags);
    for (int k = 0; k < nops; k++) {
        DESO_CHECK(ops[k] >= 0 && ops[k] < g->nvals, DESO_EINVAL,
                   "opt_graph_node: %s operand %d: no value %d", info->name,
                   k, ops[k]);
        DESO_CHECK(g->vals[ops[k]].kind == blas_desc_role(dd, k), DESO_EINVAL,
                   "opt_graph_node: %s operand %d has the wrong kind",
                   info->name, k);
    }
    if (g->nnodes == g->cap_nodes) {
        int cap = g->cap_nodes ? 2 * g->cap_nodes : 16;
        opt_node *nd = deso__realloc(g->nodes, (size_t)cap * sizeof *nd);
        DESO_CHECK(nd != NULL, DESO_ENOMEM, "optimizer: out of memory");
        g->nodes = nd;
        g->cap_nodes = cap;
    }
    int id;
    DESO_TRY(new_value(g, &id));
    opt_node *nd = &g->nodes[g->nnodes];
    memset(nd, 0, sizeof *nd);
    nd->d.op = op;
    nd->d.flags = flags;
    nd->d.nops = nops;
    nd->d.off = dd->off;
    nd->d.inc = dd->inc;
    nd->d.len = dd->len;
    nd->d.rows = dd->rows;
    nd->d.ld = dd->ld;
    nd->d.sp = dd->sp;
    if (dd->sp != NULL) {
        add_part(g, dd->sp->rows);
        add_part(g, dd->sp->cols);
    }
    for (int k = 0; k < nops; k++) nd->ops[k] = ops[k];
    for (int k = nops; k < BLAS_MAXOPS; k++) nd->ops[k] = -1;
    nd->res = id;
    opt_value *v = &g->vals[id];
    v->kind = blas_desc_result(dd);
    v->m = v->kind == BLAS_SCA ? 1 : m;
    v->n = v->kind == BLAS_SCA ? 1 : n;
    v->producer = g->nnodes++;
    *res = id;
    return DESO_OK;
}

deso_err opt_graph_live_out(opt_graph *g, int id, const blas_layout *want)
{
    DESO_CHECK(g != NULL, DESO_ENULL, "opt_graph_live_out: NULL graph");
    DESO_CHECK(id >= 0 && id < g->nvals, DESO_EINVAL,
               "opt_graph_live_out: no value %d", id);
    opt_value *v = &g->vals[id];
    v->live_out = true;
    if (want != NULL) {
        DESO_CHECK(want->kind == v->kind && want->n == v->n, DESO_EINVAL,
                   "opt_graph_live_out: wanted layout has another shape");
        v->has_want = true;
        v->want = *want;
    }
    return DESO_OK;
}

void opt_plan_free(opt_plan *p)
{
    if (p == NULL) return;
    free(p->node);
    free(p->fuse);
    memset(p, 0, sizeof *p);
}

static deso_err plan_alloc(opt_plan *p, int nnodes, bool zero)
{
    memset(p, 0, sizeof *p);
    size_t n = nnodes > 0 ? (size_t)nnodes : 1;
    p->node = zero ? deso__calloc(n, sizeof *p->node)
                   : deso__malloc(n * sizeof *p->node);
    p->fuse = deso__malloc(n * sizeof *p->fuse);
    if (p->node == NULL || p->fuse == NULL) {
        opt_plan_free(p);
        return deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    }
    p->nnodes = nnodes;
    for (int i = 0; i < nnodes; i++) p->fuse[i] = -1;
    return DESO_OK;
}

deso_err opt__plan_alloc(opt_plan *p, int nnodes)
{
    return plan_alloc(p, nnodes, true);
}

deso_err opt__plan_alloc_unset(opt_plan *p, int nnodes)
{
    return plan_alloc(p, nnodes, false);
}

deso_err opt_plan_copy(const opt_plan *src, opt_plan *dst)
{
    DESO_TRY(plan_alloc(dst, src->nnodes, true));
    dst->mode = src->mode;
    dst->model = src->model;
    dst->iters = src->iters;
    dst->settled = src->settled;
    if (src->nnodes > 0) {
        memcpy(dst->node, src->node, (size_t)src->nnodes * sizeof *dst->node);
        memcpy(dst->fuse, src->fuse, (size_t)src->nnodes * sizeof *dst->fuse);
    }
    return DESO_OK;
}

bool opt_plan_equal(const opt_plan *a, const opt_plan *b)
{
    if (a->nnodes != b->nnodes) return false;
    for (int i = 0; i < a->nnodes; i++) {
        if (!blas_layout_equal(&a->node[i].res, &b->node[i].res)) return false;
        for (int k = 0; k < BLAS_MAXOPS; k++)
            if (!blas_layout_equal(&a->node[i].req[k], &b->node[i].req[k]))
                return false;
        if (a->fuse[i] != b->fuse[i]) return false;
    }
    return true;
}

/* The partition a carried vector v of n elements returns to, or NULL.   */
static const blas_part *carry_part(const opt_graph *g, int v)
{
    const opt_value *val = &g->vals[v];
    if (val->kind == BLAS_VEC)
        for (int k = 0; k < g->nparts; k++)
            if (g->parts[k]->n == val->n) return g->parts[k];
    return NULL;
}

blas_layout opt__carry_to(const opt_graph *g, int v)
{
    const blas_part *part = carry_part(g, v);
    if (part != NULL) return blas_layout_part(part, g->df.pr, g->df.pc);
    return g->vals[g->vals[v].carry].views[0];
}

int opt__carry_first(const opt_graph *g, int v)
{
    if (carry_part(g, v) != NULL) return -1;
    int in = g->vals[v].carry;
    /* one value's return per edge: a second version of the same live-in
     * value (never made by the runtime) keeps the primary layout        */
    for (int w = 0; w < v; w++)
        if (g->vals[w].carry == in) return -1;
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i].d.nops; k++)
            if (g->nodes[i].ops[k] == in) return i * BLAS_MAXOPS + k;
    return -1;
}

blas_layout opt__carry_back(const opt_graph *g, const opt_plan *p, int v)
{
    int x = opt__carry_first(g, v);
    if (x < 0) return opt__carry_to(g, v);
    return p->node[x / BLAS_MAXOPS].req[x % BLAS_MAXOPS];
}

deso_err opt_graph_carry(opt_graph *g, int out, int in)
{
    DESO_CHECK(g != NULL, DESO_ENULL, "opt_graph_carry: NULL graph");
    DESO_CHECK(out >= 0 && out < g->nvals && in >= 0 && in < g->nvals,
               DESO_EINVAL, "opt_graph_carry: no value %d or %d", out, in);
    const opt_value *o = &g->vals[out], *i = &g->vals[in];
    DESO_CHECK(o->live_out && i->producer < 0 && o->kind == i->kind &&
                   o->m == i->m && o->n == i->n,
               DESO_EINVAL, "opt_graph_carry: %d is not a live-out version "
               "of live-in %d", out, in);
    g->vals[out].carry = in;
    return DESO_OK;
}
