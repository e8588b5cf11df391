/* The optimiser's constraint notion: for each node, the placements
 * (result, operands) a mode allows.  blas/table.c's constrain functions
 * give the operands from the result where the result decides them; where
 * it does not (a reduction's vectors may run in either orientation, its
 * result may stay reduced to one place or be replicated) the candidates
 * below enumerate the choices (doc/DESIGN.md, "Operator constraints":
 * the "reduce" variant first class; an all-reduce is the reduce variant
 * plus an edge broadcast or the fused all-reduce the executor runs when
 * the result is replicated along the reduced dimension).
 *
 *   vectors  affine: row oriented (dist 1) replicated over grid rows, or
 *            column oriented (dist 0) replicated over grid columns (the
 *            default replication of paper 003's unoptimised scheme);
 *            full: either orientation, replicated or at coordinate 0;
 *            updates (copy, scal, axpy, axpby, rot, the element-wise
 *            vmul, vdiv, vrecip, vabs) put every vector operand where the
 *            result is.
 *   scalars  affine: everywhere; full: any of the four replication states.
 *   gemv     x and A fixed; the result's folding fixed; full: reduced to
 *            coordinate 0 or all-reduced, or (a small in-core matrix,
 *            opt_defaults.replicate_max) A whole on every rank, x and
 *            the result whole.
 *   partitions  affine and full also offer, for updates and reductions,
 *            a vector of n elements the layouts by partition of the
 *            graph's sparse products (g->parts) of n indices: where a
 *            product's y or x lives, so that a solver's vectors may stay
 *            there instead of moving for every product.
 *   usmv     mode none's placement only (the product's own layouts).
 *   user     a user operator's y in any vector layout of the mode unless
 *            its declaration pins it (then only there), x where the
 *            declaration says (replicated, or where y is).
 *   vget, vput of a vector: the result in any vector layout of the mode,
 *            the viewed value (vget) or the new elements (vput) where
 *            they are: the node's own exchange moves them (its cost is
 *            the node's); of a matrix: mode none's placement only.
 *   ger, trsv and anything else: mode none's placement only.             */
#include "optimizer/opt_impl.h"

#include <string.h>

#include "placement/errors.h"

/* Candidates of one node differ mostly in their result's orientation and
 * replication: those are compared first (the same answer, sooner).       */
static bool place_equal(const opt_place *a, const opt_place *b)
{
    if (a->res.dist != b->res.dist || a->res.rep != b->res.rep ||
        !blas_layout_equal(&a->res, &b->res))
        return false;
    for (int k = 0; k < BLAS_MAXOPS; k++)
        if (!blas_layout_equal(&a->req[k], &b->req[k])) return false;
    return true;
}

static int push(opt_place *out, int n, const opt_place *c)
{
    for (int k = 0; k < n; k++)
        if (place_equal(&out[k], c)) return n;
    if (n >= OPT_MAXCANDS) return n;
    out[n] = *c;
    return n + 1;
}

/* The mode's vector layouts of n elements, then (parts) the graph's
 * partitions of n indices; v has room for 4 + OPT_MAXPARTS.              */
static int vec_set_with(const opt_graph *g, opt_mode mode, int64_t n,
                        bool parts, blas_layout *v)
{
    int pr = g->df.pr, pc = g->df.pc, c = 0;
    blas_layout all[4] = {
        blas_layout_vec(n, 1, g->df.nb, 1u, pr, pc),
        blas_layout_vec(n, 0, g->df.nb, 2u, pr, pc),
        blas_layout_vec(n, 1, g->df.nb, 0u, pr, pc),
        blas_layout_vec(n, 0, g->df.nb, 0u, pr, pc),
    };
    int lim = mode == OPT_FULL ? 4 : 2;
    for (int k = 0; k < lim; k++) {
        bool dup = false;
        for (int j = 0; j < c; j++) dup |= blas_layout_equal(&v[j], &all[k]);
        if (!dup) v[c++] = all[k];
    }
    for (int k = 0; parts && mode != OPT_NONE && k < g->nparts; k++) {
        if (g->parts[k]->n != n) continue;
        blas_layout l = blas_layout_part(g->parts[k], pr, pc);
        bool dup = false;
        for (int j = 0; j < c; j++) dup |= blas_layout_equal(&v[j], &l);
        if (!dup) v[c++] = l;
    }
    return c;
}

static int vec_set(const opt_graph *g, opt_mode mode, int64_t n,
                   blas_layout *v)
{
    return vec_set_with(g, mode, n, false, v);
}

static int sca_set(const opt_graph *g, opt_mode mode, blas_layout *s)
{
    static const unsigned reps[4] = {3u, 1u, 2u, 0u};
    int c = 0, lim = mode == OPT_FULL ? 4 : 1;
    for (int k = 0; k < lim; k++) {
        blas_layout l = blas_layout_sca(reps[k], g->df.pr, g->df.pc);
        bool dup = false;
        for (int j = 0; j < c; j++) dup |= blas_layout_equal(&s[j], &l);
        if (!dup) s[c++] = l;
    }
    return c;
}

int opt__layouts(const opt_graph *g, opt_mode mode, blas_kind kind,
                 int64_t n, blas_layout *out)
{
    if (mode == OPT_NONE) return 0;
    if (kind == BLAS_VEC) return vec_set_with(g, mode, n, true, out);
    if (kind == BLAS_SCA) return sca_set(g, mode, out);
    return 0;
}

/* A reduction of vector X into a scalar S computes S correctly wherever S
 * lives: along the reduced dimension the executor reduces to coordinate 0
 * (or all-reduces), along the other one only ranks holding X have data.  */
static bool reduction_ok(const blas_layout *X, const blas_layout *S)
{
    /* over every rank: a reduce to rank 0, else an all-reduce            */
    if (X->dist == BLAS_DIST_PART) return true;
    for (int k = 0; k < 2; k++) {
        unsigned bit = 1u << k;
        if (k == X->dist) continue;
        if ((S->rep & bit) && !(X->rep & bit)) return false;
    }
    return true;
}

static bool is_reduction(blas_op op)
{
    return op == BLAS_OP_DOT || op == BLAS_OP_NRM2 || op == BLAS_OP_ASUM ||
           op == BLAS_OP_IAMAX;
}

static bool is_update(blas_op op)
{
    return op == BLAS_OP_COPY || op == BLAS_OP_SCAL || op == BLAS_OP_AXPY ||
           op == BLAS_OP_AXPBY || op == BLAS_OP_VMUL || op == BLAS_OP_ROT ||
           op == BLAS_OP_VDIV || op == BLAS_OP_VRECIP || op == BLAS_OP_VABS;
}

static bool is_scalar_op(blas_op op)
{
    return (op >= BLAS_OP_SADD && op <= BLAS_OP_SNEG) || op == BLAS_OP_SMAX ||
           op == BLAS_OP_SMIN;
}

unsigned opt__cands_reads(const opt_graph *g, int i)
{
    blas_op op = g->nodes[i].d.op;
    /* their constraints (blas/table.c: c_copy, c_update, c_elem,
     * c_scalar) ignore the operands' layouts and mode none's result
     * takes only a vector operand's length, which its value fixes        */
    if (is_update(op) || is_scalar_op(op)) return 0u;
    /* the vector's layout is the first choice and c_reduce's            */
    if (is_reduction(op)) return 1u;
    return (1u << BLAS_MAXOPS) - 1u;
}

static deso_err make(const blas_op_info *info, const blas_desc *d,
                     const blas_layout *res, const blas_layout *cur,
                     opt_place *c)
{
    memset(c, 0, sizeof *c);
    c->res = *res;
    return info->constrain(d, res, cur, c->req);
}

void opt__modesets_make(const opt_graph *g, opt_mode mode, int64_t vn,
                        opt__modesets *ms)
{
    ms->mode = mode;
    ms->vn = vn;
    ms->nvec = vn >= 0 ? vec_set_with(g, mode, vn, true, ms->vec) : 0;
    ms->nsca = sca_set(g, mode, ms->sca);
}

/* The mode's vector layouts of n elements with the graph's partitions
 * (vec_set_with): ms's when it has them, else made in buf.              */
static const blas_layout *vecs_of(const opt_graph *g, opt_mode mode,
                                  int64_t n, const opt__modesets *ms,
                                  blas_layout *buf, int *nv)
{
    if (ms != NULL && ms->mode == mode && ms->vn == n) {
        *nv = ms->nvec;
        return ms->vec;
    }
    *nv = vec_set_with(g, mode, n, true, buf);
    return buf;
}

/* The mode's scalar layouts (sca_set): ms's when it has them.            */
static const blas_layout *scas_of(const opt_graph *g, opt_mode mode,
                                  const opt__modesets *ms, blas_layout *buf,
                                  int *ns)
{
    if (ms != NULL && ms->mode == mode) {
        *ns = ms->nsca;
        return ms->sca;
    }
    *ns = sca_set(g, mode, buf);
    return buf;
}

deso_err opt_node_cands(const opt_graph *g, int i, opt_mode mode,
                        const blas_layout *cur, opt_place *out, int *count)
{
    return opt__node_cands(g, i, mode, cur, NULL, out, count);
}

/* The candidates with results res[0 .. nres) (the operands from the op's
 * constraint), pushed after out's first *n.                              */
static deso_err made_each(const blas_op_info *info, const blas_desc *d,
                          const blas_layout *res, int nres,
                          const blas_layout *cur, opt_place *out, int *n)
{
    opt_place c;
    for (int k = 0; k < nres; k++) {
        DESO_TRY(make(info, d, &res[k], cur, &c));
        *n = push(out, *n, &c);
    }
    return DESO_OK;
}

/* A reduction's candidates: its vector in its current layout or any of
 * the mode's, its scalar in any of the mode's that the vector allows;
 * pushed after out's first n, the new count returned.                    */
static int red_cands(const opt_graph *g, opt_mode mode, const blas_desc *d,
                     const blas_layout *cur, const opt__modesets *ms,
                     opt_place *out, int n)
{
    blas_layout X[5 + OPT_MAXPARTS], V[4 + OPT_MAXPARTS], Sbuf[4];
    int nx = 0, nv, ns;
    if (cur[0].kind == BLAS_VEC) X[nx++] = cur[0];
    const blas_layout *tmp = vecs_of(g, mode, cur[0].n, ms, V, &nv);
    for (int k = 0; k < nv; k++) {
        bool dup = false;
        for (int j = 0; j < nx; j++) dup |= blas_layout_equal(&X[j], &tmp[k]);
        if (!dup) X[nx++] = tmp[k];
    }
    const blas_layout *S = scas_of(g, mode, ms, Sbuf, &ns);
    opt_place c;
    for (int x = 0; x < nx; x++)
        for (int s = 0; s < ns; s++) {
            if (!reduction_ok(&X[x], &S[s])) continue;
            memset(&c, 0, sizeof c);
            c.res = S[s];
            c.req[0] = X[x];
            if (d->op == BLAS_OP_DOT) c.req[1] = X[x];
            n = push(out, n, &c);
        }
    return n;
}

/* Whether node nd's matrix may be made whole on every rank: an in-core
 * matrix of at most df.replicate_max bytes on a grid of several ranks.  */
static bool may_replicate(const opt_graph *g, const opt_node *nd)
{
    const opt_value *A = &g->vals[nd->ops[1]];
    int64_t cap = g->df.replicate_max / 8;
    return g->df.pr * g->df.pc > 1 && !A->ooc && A->kind == BLAS_MAT &&
           A->m > 0 && A->n > 0 && A->m <= cap && A->n <= cap / A->m;
}

/* Mode full's gemv: the result reduced to coordinate 0 of the summed
 * dimension, or all-reduced there; and, where may_replicate allows it,
 * the matrix whole on every rank with x and the result whole too, every
 * rank computing the product by itself (no reduction, and no vector
 * moved where the vectors already are whole); pushed after out's first
 * *n.                                                                     */
static deso_err gemv_cands(const opt_graph *g, const opt_node *nd,
                           const blas_op_info *info, const blas_desc *d,
                           const blas_layout *cur, opt_place *out, int *n)
{
    /* a matrix already whole has its one placement, mode none's       */
    if (cur[1].rep != 0) return DESO_OK;
    int rd = (d->flags & BLAS_F_TRANS) ? 0 : 1;
    opt_place base;
    memset(&base, 0, sizeof base);
    DESO_TRY(opt_place_node(&g->df, d, cur, &base.res, base.req));
    blas_layout r[2] = {base.res, base.res};
    r[0].rep |= 1u << rd;
    r[1].rep &= ~(1u << rd);
    for (int v = 0; v < 2; v++) blas_layout_normalise(&r[v]);
    DESO_TRY(made_each(info, d, r, 2, cur, out, n));
    if (!may_replicate(g, nd)) return DESO_OK;
    blas_layout whole[BLAS_MAXOPS];
    memcpy(whole, cur, (size_t)d->nops * sizeof *cur);
    const blas_layout *A = &cur[1];
    whole[1] = blas_layout_mat_whole(A->m, A->n, A->pr, A->pc);
    bool t = (d->flags & BLAS_F_TRANS) != 0;
    blas_layout y = blas_layout_vec(t ? A->n : A->m, -1, 0, 3u, A->pr, A->pc);
    return made_each(info, d, &y, 1, whole, out, n);
}

deso_err opt__node_cands(const opt_graph *g, int i, opt_mode mode,
                         const blas_layout *cur, const opt__modesets *ms,
                         opt_place *out, int *count)
{
    DESO_CHECK(i >= 0 && i < g->nnodes, DESO_EINTERNAL,
               "opt_node_cands: no node %d", i);
    const opt_node *nd = &g->nodes[i];
    const blas_desc *d = &nd->d;
    const blas_op_info *info = blas_op_get(d->op);
    DESO_CHECK(info != NULL, DESO_EINTERNAL, "opt_node_cands: unknown op");
    int n = 0;
    opt_place c;
    /* mode none's choice first (when it computes the right thing)          */
    memset(&c, 0, sizeof c);
    DESO_TRY(opt_place_node(&g->df, d, cur, &c.res, c.req));
    bool none_ok = !is_reduction(d->op) || reduction_ok(&c.req[0], &c.res);
    if (mode == OPT_NONE || none_ok) n = push(out, n, &c);
    *count = n;
    if (mode == OPT_NONE) return DESO_OK;
    const opt_value *rv = &g->vals[nd->res];
    blas_layout V[4 + OPT_MAXPARTS], Sbuf[4], pin;
    int nl;
    if (is_update(d->op)) {
        const blas_layout *U = vecs_of(g, mode, rv->n, ms, V, &nl);
        return made_each(info, d, U, nl, cur, out, count);
    }
    if (is_reduction(d->op)) {
        *count = red_cands(g, mode, d, cur, ms, out, n);
        return DESO_OK;
    }
    if (is_scalar_op(d->op)) {
        const blas_layout *S = scas_of(g, mode, ms, Sbuf, &nl);
        return made_each(info, d, S, nl, cur, out, count);
    }
    if (((d->op == BLAS_OP_VGET || d->op == BLAS_OP_VPUT) &&
         rv->kind == BLAS_VEC) ||
        (d->op == BLAS_OP_USER &&
         !blas_user_pinned(d, g->df.pr, g->df.pc, &pin))) {
        nl = vec_set(g, mode, rv->n, V);
        return made_each(info, d, V, nl, cur, out, count);
    }
    if (d->op == BLAS_OP_GEMV && mode == OPT_FULL)
        return gemv_cands(g, nd, info, d, cur, out, count);
    return DESO_OK;
}

bool opt_plan_may_replicate(const opt_graph *g, const opt_plan *p)
{
    if (g->df.mode != OPT_FULL || p->nnodes != g->nnodes) return false;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i].d.op == BLAS_OP_GEMV &&
            may_replicate(g, &g->nodes[i]) &&
            p->node[i].req[1].rep == 0)
            return true;
    return false;
}
