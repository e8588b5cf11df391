/* Where a sparse matrix's products run, chosen at the first force that
 * holds one of them (doc/DESIGN.md, *Placement by the trace graph*):
 * contiguous row blocks, or paper 004's navigational trace graph built
 * from the pending DAG (optimizer/ntg.h) and partitioned P ways by METIS,
 * whichever the cost model finds cheaper (or the one the context's
 * partition option names).
 *
 * The graph needs the whole pattern, which no rank holds: rank 0 collects
 * it (row lengths and columns, one message per rank), builds the graph,
 * runs METIS and compares the two placements, then broadcasts the verdict
 * and, for the graph's partition, every index's owner.  One rank and a
 * broadcast rather than METIS on every rank: the graph is O(nnz), which
 * only one rank then holds, and the verdict cannot differ between ranks
 * whatever METIS does.  The choice stays with the matrix (every later
 * product is recorded on it, so plans, compiled forces and their replays
 * see it as they see any partition); a wisdom file keeps plans, not the
 * choice: the next run recomputes it, deterministically (METIS with a
 * fixed seed on the same graph), so the plans' keys match again.       */
#include <stdlib.h>
#include <string.h>

#include "optimizer/ntg.h"
#include "placement/alloc.h"
#include "placement/halo.h"
#include "deso/runtime/runtime.h"

/* The load term of the comparison: seconds per nonzero of the busiest
 * rank (a nonzero streams a value, an index and an x entry, about 20
 * bytes, at the few GB/s one core reads).                                */
#define SEC_PER_NNZ 4e-9

static const char *const fn = "sparse placement";

/* ---- the pattern on rank 0 ----------------------------------------------- */

/* Every rank's row lengths then columns, as doubles, to rank 0, which
 * assembles the global pattern g (values not needed; g->val NULL).       */
static deso_err gather_pattern(deso_ctx *ctx, const deso__spmat_data *sp,
                               pl_csr *g)
{
    int P = ctx->size, me = ctx->rank;
    const pl_csr *a = &sp->rows;
    int64_t own = a->nrows + a->rowptr[a->nrows], most = 0;
    for (int q = 0; q < P; q++) {
        int64_t len = sp->start[q + 1] - sp->start[q] + sp->count[q];
        most = len > most ? len : most;
    }
    int64_t blen = me == 0 ? most : own;
    double *buf = deso__malloc((size_t)(blen > 0 ? blen : 1) * sizeof *buf);
    deso_err local = buf != NULL ? DESO_OK
                                 : deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    if (local == DESO_OK && me == 0) {
        g->nrows = sp->m;
        g->ncols = sp->n;
        g->rowptr = deso__calloc((size_t)sp->m + 1, sizeof *g->rowptr);
        g->col = deso__malloc((size_t)(sp->nnz > 0 ? sp->nnz : 1) *
                              sizeof *g->col);
        if (g->rowptr == NULL || g->col == NULL)
            local = deso__fail(DESO_ENOMEM, "%s: no memory for the pattern "
                               "(%lld entries)", fn, (long long)sp->nnz);
    }
    deso_err err = deso__agree_counted(ctx, fn, local, NULL, 0);
    for (int q = 0; err == DESO_OK && q < P; q++) {
        int64_t lo = sp->start[q], hi = sp->start[q + 1];
        int64_t len = hi - lo + (q == me ? a->rowptr[a->nrows] : sp->count[q]);
        if (len == 0 || (me != 0 && q != me)) continue;
        if (q == me) {
            for (int64_t r = 0; r < a->nrows; r++)
                buf[r] = (double)(a->rowptr[r + 1] - a->rowptr[r]);
            for (int64_t e = 0; e < a->rowptr[a->nrows]; e++)
                buf[a->nrows + e] = (double)deso__spmat_col(sp, me, e);
        }
        if (me != 0)
            err = deso__exchange(ctx->comm, DESO__TAG_DATA, 1, (int[]){0}, &buf,
                                 &len, 0, NULL, NULL, NULL, &(MPI_Request){0});
        else if (q != 0)
            err = deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL, NULL,
                                 1, &q, &buf, &len, &(MPI_Request){0});
        if (err != DESO_OK || me != 0) continue;
        for (int64_t i = lo; i < hi; i++)
            g->rowptr[i + 1] = g->rowptr[i] + (int64_t)buf[i - lo];
        for (int64_t e = 0; e < g->rowptr[hi] - g->rowptr[lo]; e++)
            g->col[g->rowptr[lo] + e] = (int64_t)buf[hi - lo + e];
    }
    free(buf);
    return err;
}

/* ---- the trace of the pending DAG --------------------------------------- */

/* The trace's vectors: handles (a value's hid), else the value itself.  */
typedef struct trace_vecs {
    uint64_t key[OPT_NTG_MAX_VECS];
    int n;
} trace_vecs;

static int vec_id(trace_vecs *v, const deso__value *x)
{
    uint64_t k = x->hid != 0 ? x->hid : (uint64_t)(uintptr_t)x | 1ull << 63;
    for (int i = 0; i < v->n; i++)
        if (v->key[i] == k) return i;
    if (v->n == OPT_NTG_MAX_VECS) return -1;
    v->key[v->n] = k;
    return v->n++;
}

/* Index-aligned calls the trace follows: y_i from x_i (and reductions,
 * whose vectors meet at every index).                                   */
static bool elementwise(blas_op op)
{
    switch (op) {
    case BLAS_OP_COPY: case BLAS_OP_SCAL: case BLAS_OP_AXPY:
    case BLAS_OP_AXPBY: case BLAS_OP_DOT: case BLAS_OP_NRM2:
    case BLAS_OP_ASUM: case BLAS_OP_IAMAX: case BLAS_OP_VMUL:
    case BLAS_OP_ROT: case BLAS_OP_VDIV: case BLAS_OP_VRECIP:
    case BLAS_OP_VABS:
        return true;
    default:
        return false;
    }
}

static bool is_vec(const deso__value *x, int64_t n)
{
    return x->kind == BLAS_VEC && x->n == n;
}

/* Node nd as a call of the trace (false: not one).                       */
static bool as_call(const deso__node *nd, const deso__spmat_data *sp,
                    const pl_csr *g, trace_vecs *v, opt_ntg_call *c)
{
    memset(c, 0, sizeof *c);
    c->out = -1;
    if (nd->d.op == BLAS_OP_USMV) {
        if (nd->sp != sp) return false;
        c->a = g;
        c->trans = (nd->d.flags & BLAS_F_TRANS) != 0;
        c->out = vec_id(v, nd->res);
        c->in[0] = vec_id(v, nd->ops[1]);
        c->nin = 1;
        return c->out >= 0 && c->in[0] >= 0;
    }
    if (!elementwise(nd->d.op)) return false;
    if (is_vec(nd->res, sp->n)) c->out = vec_id(v, nd->res);
    for (int k = 0; k < nd->d.nops; k++) {
        const deso__value *x = nd->ops[k];
        if (x->kind == BLAS_SCA) continue;
        if (!is_vec(x, sp->n)) return false;
        int id = vec_id(v, x);
        if (id < 0) return false;
        if (c->out < 0) c->out = id;
        else if (id != c->out && c->nin < OPT_NTG_MAX_IN) c->in[c->nin++] = id;
    }
    return c->out >= 0;
}

/* The calls of the pending DAG the trace graph is built from.            */
static deso_err trace_calls(const deso_ctx *ctx, const deso__spmat_data *sp,
                            const pl_csr *g, opt_ntg_call **calls, int *ncalls,
                            int *nvec)
{
    trace_vecs v = {.n = 0};
    int64_t most = ctx->nnodes > 0 ? ctx->nnodes : 1;
    opt_ntg_call *c = deso__malloc((size_t)most * sizeof *c);
    DESO_CHECK(c != NULL, DESO_ENOMEM, "%s: no memory", fn);
    int n = 0;
    for (const deso__node *nd = ctx->head; nd != NULL; nd = nd->next)
        if (as_call(nd, sp, g, &v, &c[n])) n++;
    *calls = c;
    *ncalls = n;
    *nvec = v.n;
    return DESO_OK;
}

/* ---- the choice (rank 0) ------------------------------------------------- */

static deso_err cost_of(const deso_ctx *ctx, const pl_csr *g,
                        const pl_owner *own, opt_sparse_cost *c)
{
    return opt_sparse_cost_eval(g, own, own, ctx->size, &ctx->params,
                                SEC_PER_NNZ, c);
}

/* Fills owner[n] with the graph partition of the vector indexed by the
 * matrix's rows in the DAG's first product (y = A x's y, y = A^T x's x;
 * every product of the DAG is in the graph); *have false when the DAG
 * holds no product of it or the graph is too large for METIS's 32-bit
 * indices (the blocks stay).  The pattern g is freed once the graph is
 * built, so that METIS's work space is never held beside it.            */
static deso_err graph_owners(const deso_ctx *ctx, const deso__spmat_data *sp,
                             pl_csr *g, int32_t *owner, bool *have)
{
    *have = false;
    opt_ntg_call *calls = NULL;
    int ncalls = 0, nvec = 0;
    deso_err err = trace_calls(ctx, sp, g, &calls, &ncalls, &nvec);
    int first = -1;
    for (int k = 0; err == DESO_OK && k < ncalls && first < 0; k++)
        if (calls[k].a != NULL) first = k;
    opt_ntg graph;
    memset(&graph, 0, sizeof graph);
    opt_ntg_opts o = {.l_scaling = ctx->l_scaling};
    if (first >= 0)
        err = opt_ntg_build(calls, ncalls, nvec, sp->n, &o, &graph);
    pl_csr_free(g);
    int32_t *vpart = NULL;
    if (first >= 0 && err == DESO_OK) {
        vpart = deso__malloc((size_t)(graph.nvtx > 0 ? graph.nvtx : 1) *
                             sizeof *vpart);
        err = vpart != NULL ? opt_ntg_partition(&graph, ctx->size, vpart)
                            : deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    if (first >= 0 && err == DESO_OK) {
        const opt_ntg_call *c0 = &calls[first];
        opt_ntg_owners(&graph, vpart, c0->trans ? c0->in[0] : c0->out, owner);
        *have = true;
    }
    if (err == DESO_ESIZE) err = DESO_OK;        /* keep the row blocks    */
    free(vpart);
    opt_ntg_free(&graph);
    free(calls);
    return err;
}

/* Whether to keep the graph's partition owner[n] over the row blocks:
 * when it is cheaper for auto, always for DESO_PARTITION_NTG (which
 * needs no pattern here: g is empty).                                   */
static deso_err compare(const deso_ctx *ctx, const deso__spmat_data *sp,
                        const pl_csr *g, const int32_t *owner, bool *use)
{
    *use = ctx->partition == DESO_PARTITION_NTG;
    if (*use) return DESO_OK;
    pl_owner_table t;
    deso_err err = pl_owner_table_init(&t, owner, sp->n, ctx->size);
    pl_blocks b = {sp->n, ctx->size};
    pl_owner ob = pl_owner_blocks(&b), ot = pl_owner_table_map(&t);
    opt_sparse_cost cb, ct;
    if (err == DESO_OK) err = cost_of(ctx, g, &ob, &cb);
    if (err == DESO_OK) err = cost_of(ctx, g, &ot, &ct);
    if (err == DESO_OK) *use = opt_sparse_cheaper(&ct, &cb);
    pl_owner_table_free(&t);
    return err;
}

/* Rank 0's choice: the pattern collected, the graph built from it and
 * partitioned (the pattern freed first), and, for auto, the pattern
 * collected again to price both placements.  Each step agreed.        */
static deso_err decide(deso_ctx *ctx, const deso__spmat_data *sp,
                       int32_t *owner, bool *use)
{
    pl_csr g;
    memset(&g, 0, sizeof g);
    bool have = false;
    deso_err err = gather_pattern(ctx, sp, &g);
    if (err == DESO_OK) {
        deso_err local = ctx->rank == 0 ? graph_owners(ctx, sp, &g, owner, &have)
                                        : DESO_OK;
        int64_t flags[1] = {have};
        err = deso__agree_counted(ctx, fn, local, flags, 1);
        have = err == DESO_OK && flags[0] != 0;
    }
    if (have && ctx->partition != DESO_PARTITION_NTG)
        err = gather_pattern(ctx, sp, &g);
    if (have && err == DESO_OK) {
        deso_err local = ctx->rank == 0 ? compare(ctx, sp, &g, owner, use)
                                        : DESO_OK;
        err = deso__agree_counted(ctx, fn, local, NULL, 0);
    }
    pl_csr_free(&g);
    return err;
}

/* Rank 0's verdict and owners to every rank; then, for the graph's
 * partition, the placed copy.                                            */
static deso_err choose_one(deso_ctx *ctx, deso__spmat_data *sp)
{
    int64_t n = sp->n;
    double *buf = deso__malloc(((size_t)n + 1) * sizeof *buf);
    int32_t *owner = deso__malloc((size_t)(n > 0 ? n : 1) * sizeof *owner);
    deso_err local = buf != NULL && owner != NULL
                         ? DESO_OK
                         : deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    deso_err err = deso__agree_counted(ctx, fn, local, NULL, 0);
    bool use = false;
    if (err == DESO_OK) err = decide(ctx, sp, owner, &use);
    if (err == DESO_OK) {
        buf[0] = use ? 1.0 : 0.0;
        for (int64_t i = 0; use && i < n; i++) buf[i + 1] = (double)owner[i];
        err = deso__bcast(ctx->comm, buf, 1, 0);
    }
    use = err == DESO_OK && buf[0] != 0.0;
    if (use) err = deso__bcast(ctx->comm, buf + 1, n, 0);
    const blas_part *part = NULL;
    if (use && err == DESO_OK) {
        for (int64_t i = 0; i < n; i++) owner[i] = (int32_t)buf[i + 1];
        /* local, and the same on every rank: no agreement needed unless it
         * failed somewhere (memory), which the placement's first agrees  */
        local = deso__part_intern_owners(ctx, n, owner, &part);
        if (local == DESO_OK && part->perm == NULL) use = false;
        int64_t flags[2] = {use, !use};
        err = deso__agree_counted(ctx, fn, local, flags, 2);
        use = err == DESO_OK && flags[0] != 0;
    }
    free(buf);
    free(owner);
    if (use) err = deso__spmat_place(ctx, sp, part);
    return err;
}

/* Matrices whose placement may change: square, not given by their ranks,
 * on more than one rank, unless the option keeps the blocks.  With fewer
 * rows than ranks the blocks already give each row a rank of its own (and
 * METIS refuses more parts than vertices).                              */
static bool movable(const deso_ctx *ctx, const deso__spmat_data *sp)
{
    return ctx->size > 1 && ctx->partition != DESO_PARTITION_BLOCK &&
           sp->m == sp->n && sp->m >= ctx->size && !sp->pinned;
}

bool deso__spmat_choice_pending(deso_ctx *ctx)
{
    if (!ctx->spmat_choose) return false;   /* today's path: one test     */
    bool pending = false;
    for (const deso__node *nd = ctx->head; nd != NULL; nd = nd->next) {
        if (nd->sp == NULL || nd->sp->placement_chosen) continue;
        if (movable(ctx, nd->sp)) pending = true;
        else nd->sp->placement_chosen = true;  /* its blocks, for good    */
    }
    ctx->spmat_choose = pending;
    return pending;
}

/* The pending products of sp now run on its placed copy.               */
static void repoint(deso_ctx *ctx, deso__spmat_data *sp)
{
    deso__spmat_data *pd = sp->placed;
    for (deso__node *nd = ctx->head; pd != NULL && nd != NULL; nd = nd->next) {
        if (nd->sp != sp) continue;
        pd->refs++;
        nd->sp = pd;
        nd->d.sp = pd->facts;
        deso__spmat_data_free(sp);            /* the node's old reference */
    }
}

deso_err deso__spmat_choose(deso_ctx *ctx)
{
    ctx->spmat_choose = false;
    for (deso__node *nd = ctx->head; nd != NULL; nd = nd->next) {
        deso__spmat_data *sp = nd->sp;
        if (sp == NULL || sp->placement_chosen) continue;
        sp->placement_chosen = true;
        if (!movable(ctx, sp)) continue;
        DESO_TRY(choose_one(ctx, sp));
        if (sp->placed != NULL) sp->placed->placement_chosen = true;
        repoint(ctx, sp);
    }
    return DESO_OK;
}
