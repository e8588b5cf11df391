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

/* ---- the pattern to rank 0, a piece at a time ------------------------- */

/* Rows a piece carries: rank 0 holds one piece at a time, never the
 * whole pattern, and a sender packs one piece, never its whole block.   */
#define PIECE_ROWS 16384

typedef deso_err (*piece_fn)(void *arg, const pl_csr *piece);

/* One piece in flight: the packed doubles (row lengths, then columns)
 * and, on rank 0, the piece they make.                                   */
typedef struct piece_bufs {
    double *buf;
    pl_csr piece;
} piece_bufs;

/* The most doubles one of this rank's pieces packs.                      */
static int64_t widest_piece(const pl_csr *a)
{
    int64_t most = 0;
    for (int64_t lo = 0; lo < a->nrows; lo += PIECE_ROWS) {
        int64_t hi = lo + PIECE_ROWS < a->nrows ? lo + PIECE_ROWS : a->nrows;
        int64_t items = hi - lo + a->rowptr[hi] - a->rowptr[lo];
        most = items > most ? items : most;
    }
    return most;
}

static deso_err bufs_alloc(const deso_ctx *ctx, const deso__spmat_data *sp,
                           int64_t most, piece_bufs *b)
{
    b->buf = deso__malloc((size_t)(most > 0 ? most : 1) * sizeof *b->buf);
    if (ctx->rank == 0) {
        b->piece.ncols = sp->n;
        b->piece.rowptr = deso__malloc((PIECE_ROWS + 1) * sizeof(int64_t));
        b->piece.col = deso__malloc((size_t)(most > 0 ? most : 1) *
                                    sizeof(int64_t));
    }
    DESO_CHECK(b->buf != NULL && (ctx->rank != 0 || (b->piece.rowptr != NULL &&
                                                     b->piece.col != NULL)),
               DESO_ENOMEM, "%s: no memory for a piece of %lld entries", fn,
               (long long)most);
    return DESO_OK;
}

/* Rows [lo, lo + nr) of rank q's block to rank 0: their lengths, then
 * their columns (rank 0 learns how many from the lengths).               */
static deso_err piece_move(deso_ctx *ctx, const deso__spmat_data *sp, int q,
                           int64_t lo, int64_t nr, double *buf)
{
    int me = ctx->rank;
    int64_t nc = 0;
    if (me == q) {
        const pl_csr *a = &sp->rows;
        int64_t r0 = lo - sp->start[q], e0 = a->rowptr[r0];
        nc = a->rowptr[r0 + nr] - e0;
        for (int64_t r = 0; r < nr; r++)
            buf[r] = (double)(a->rowptr[r0 + r + 1] - a->rowptr[r0 + r]);
        for (int64_t e = 0; e < nc; e++)
            buf[nr + e] = (double)deso__spmat_col(sp, me, e0 + e);
    }
    if (q == 0) return DESO_OK;
    double *cols = buf + nr;
    if (me == q) {
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, (int[]){0}, &buf,
                                &nr, 0, NULL, NULL, NULL, &(MPI_Request){0}));
        if (nc == 0) return DESO_OK;
        return deso__exchange(ctx->comm, DESO__TAG_DATA, 1, (int[]){0}, &cols,
                              &nc, 0, NULL, NULL, NULL, &(MPI_Request){0});
    }
    DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL, NULL, 1,
                            &q, &buf, &nr, &(MPI_Request){0}));
    for (int64_t r = 0; r < nr; r++) nc += (int64_t)buf[r];
    if (nc == 0) return DESO_OK;
    return deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL, NULL, 1,
                          &q, &cols, &nc, &(MPI_Request){0});
}

/* Rank 0's piece of rows [lo, lo + nr) from the packed doubles.          */
static void piece_unpack(piece_bufs *b, int64_t lo, int64_t nr)
{
    pl_csr *p = &b->piece;
    p->row0 = lo;
    p->nrows = nr;
    p->rowptr[0] = 0;
    for (int64_t r = 0; r < nr; r++)
        p->rowptr[r + 1] = p->rowptr[r] + (int64_t)b->buf[r];
    for (int64_t e = 0; e < p->rowptr[nr]; e++)
        p->col[e] = (int64_t)b->buf[nr + e];
}

/* Every rank's rows, in row order, to rank 0 a piece at a time, where
 * visit(arg, piece) sees each (after its first failure, no more: the
 * pieces still move, and the failure is agreed at the end).  Collective. */
static deso_err pattern_stream(deso_ctx *ctx, const deso__spmat_data *sp,
                               piece_fn visit, void *arg)
{
    int64_t flags[1] = {widest_piece(&sp->rows)};   /* the largest anywhere */
    DESO_TRY(deso__agree_counted(ctx, fn, DESO_OK, flags, 1));
    piece_bufs b;
    memset(&b, 0, sizeof b);
    deso_err err = deso__agree_counted(ctx, fn, bufs_alloc(ctx, sp, flags[0], &b),
                                       NULL, 0);
    deso_err seen = DESO_OK;
    for (int q = 0; err == DESO_OK && q < ctx->size; q++) {
        if (ctx->rank != q && ctx->rank != 0) continue;
        for (int64_t lo = sp->start[q]; err == DESO_OK && lo < sp->start[q + 1];
             lo += PIECE_ROWS) {
            int64_t nr = sp->start[q + 1] - lo < PIECE_ROWS ? sp->start[q + 1] - lo
                                                            : PIECE_ROWS;
            err = piece_move(ctx, sp, q, lo, nr, b.buf);
            if (err != DESO_OK || ctx->rank != 0 || seen != DESO_OK) continue;
            piece_unpack(&b, lo, nr);
            seen = visit(arg, &b.piece);
        }
    }
    free(b.buf);
    pl_csr_free(&b.piece);
    if (err != DESO_OK) return err;
    return deso__agree_counted(ctx, fn, seen, NULL, 0);
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

/* ---- the choice ---------------------------------------------------------- */

/* Rank 0's graph, built as the pieces come: the DAG's calls (their
 * products' matrix only a shape), the first product, the builder.       */
typedef struct graph_job {
    opt_ntg_call *calls;
    int ncalls, nvec, first;
    pl_csr shape;
    int64_t zero;
    opt_ntg_builder *b;
} graph_job;

static deso_err add_piece(void *arg, const pl_csr *piece)
{
    return opt_ntg_add_rows(((graph_job *)arg)->b, piece);
}

/* Rank 0: the trace's calls and a builder for their graph (none when the
 * DAG holds no product of the matrix or the graph would be too large for
 * METIS's 32-bit indices: the blocks stay).                             */
static deso_err graph_begin(const deso_ctx *ctx, const deso__spmat_data *sp,
                            graph_job *j)
{
    j->shape = (pl_csr){.ncols = sp->n, .rowptr = &j->zero};
    j->first = -1;
    DESO_TRY(trace_calls(ctx, sp, &j->shape, &j->calls, &j->ncalls, &j->nvec));
    for (int k = 0; k < j->ncalls && j->first < 0; k++)
        if (j->calls[k].a != NULL) j->first = k;
    if (j->first < 0) return DESO_OK;
    opt_ntg_opts o = {.l_scaling = ctx->l_scaling};
    deso_err err = opt_ntg_begin(j->calls, j->ncalls, j->nvec, sp->n, &o, &j->b);
    return err == DESO_ESIZE ? DESO_OK : err;
}

/* Rank 0: the graph from the builder, partitioned, and owner[n] the
 * partition of the vector indexed by the matrix's rows in the DAG's first
 * product (y = A x's y, y = A^T x's x; every product of the DAG is in the
 * graph).  *have false when it is too large for METIS.                   */
static deso_err graph_owners(const deso_ctx *ctx, graph_job *j,
                             int32_t *owner, bool *have)
{
    opt_ntg graph;
    deso_err err = opt_ntg_end(j->b, &graph);
    j->b = NULL;
    int32_t *vpart = NULL;
    if (err == DESO_OK) {
        vpart = deso__malloc((size_t)(graph.nvtx > 0 ? graph.nvtx : 1) *
                             sizeof *vpart);
        err = vpart != NULL ? opt_ntg_partition(&graph, ctx->size, vpart)
                            : deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    if (err == DESO_OK) {
        const opt_ntg_call *c0 = &j->calls[j->first];
        opt_ntg_owners(&graph, vpart, c0->trans ? c0->in[0] : c0->out, owner);
        *have = true;
    }
    if (err == DESO_ESIZE) err = DESO_OK;        /* keep the row blocks    */
    free(vpart);
    opt_ntg_free(&graph);
    return err;
}

/* Rank 0's two tallies, the row blocks' and the graph partition's, fed
 * the same pieces.                                                       */
typedef struct price_job {
    opt_sparse_tally *tb, *tg;
    pl_owner ob, og;
} price_job;

static deso_err price_piece(void *arg, const pl_csr *piece)
{
    price_job *j = arg;
    DESO_TRY(opt_sparse_tally_rows(j->tb, piece, &j->ob, &j->ob));
    return opt_sparse_tally_rows(j->tg, piece, &j->og, &j->og);
}

/* The graph partition's owner of each index, for the tally (which asks
 * no local positions).                                                   */
static int owner_rank(int64_t j, const void *arg)
{
    return ((const int32_t *)arg)[j];
}

static int64_t no_local(int64_t j, const void *arg)
{
    (void)j;
    (void)arg;
    return -1;
}

/* For auto, both placements priced from the pattern streamed once more
 * (the load term: SEC_PER_NNZ), and whether the graph's is cheaper.      */
static deso_err compare(deso_ctx *ctx, const deso__spmat_data *sp,
                        const int32_t *owner, bool *use)
{
    pl_blocks blk = {sp->n, ctx->size};
    price_job j = {NULL, NULL, pl_owner_blocks(&blk),
                   {owner_rank, no_local, owner}};
    deso_err local = DESO_OK;
    if (ctx->rank == 0) {
        local = opt_sparse_tally_begin(sp->n, ctx->size, &j.tb);
        if (local == DESO_OK) local = opt_sparse_tally_begin(sp->n, ctx->size, &j.tg);
    }
    deso_err err = deso__agree_counted(ctx, fn, local, NULL, 0);
    if (err == DESO_OK) err = pattern_stream(ctx, sp, price_piece, &j);
    opt_sparse_cost cb, cg;
    local = DESO_OK;
    if (err == DESO_OK && ctx->rank == 0) {
        local = opt_sparse_tally_end(j.tb, &ctx->params, SEC_PER_NNZ, &cb);
        deso_err lg = opt_sparse_tally_end(j.tg, &ctx->params, SEC_PER_NNZ, &cg);
        if (local == DESO_OK) local = lg;
        j.tb = j.tg = NULL;
        if (local == DESO_OK) *use = opt_sparse_cheaper(&cg, &cb);
    }
    opt_sparse_tally_free(j.tb);
    opt_sparse_tally_free(j.tg);
    return err != DESO_OK ? err : deso__agree_counted(ctx, fn, local, NULL, 0);
}

/* Rank 0 builds the graph from the pattern streamed to it a piece at a
 * time, partitions it, and (auto) prices both placements from a second
 * stream: it never holds the whole pattern, and METIS's work space is
 * never beside a piece.  *use: keep the graph's partition owner[n]
 * (rank 0's verdict; the caller broadcasts it).  Each step agreed.       */
static deso_err decide(deso_ctx *ctx, const deso__spmat_data *sp,
                       int32_t *owner, bool *use)
{
    graph_job j;
    memset(&j, 0, sizeof j);
    deso_err local = ctx->rank == 0 ? graph_begin(ctx, sp, &j) : DESO_OK;
    int64_t flags[1] = {j.b != NULL};
    deso_err err = deso__agree_counted(ctx, fn, local, flags, 1);
    bool have = false;
    if (err == DESO_OK && flags[0] != 0)
        err = pattern_stream(ctx, sp, add_piece, &j);
    if (err == DESO_OK && flags[0] != 0) {
        local = ctx->rank == 0 ? graph_owners(ctx, &j, owner, &have) : DESO_OK;
        flags[0] = have;
        err = deso__agree_counted(ctx, fn, local, flags, 1);
        have = err == DESO_OK && flags[0] != 0;
    }
    opt_ntg_abandon(j.b);
    free(j.calls);
    *use = have && ctx->partition == DESO_PARTITION_NTG;
    if (have && ctx->partition != DESO_PARTITION_NTG)
        err = compare(ctx, sp, owner, use);
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
 * METIS refuses more parts than vertices); with more than INT32_MAX the
 * partition's 32-bit renumbering (blas_part) could not name them.       */
static bool movable(const deso_ctx *ctx, const deso__spmat_data *sp)
{
    return ctx->size > 1 && ctx->partition != DESO_PARTITION_BLOCK &&
           sp->m == sp->n && sp->m >= ctx->size && sp->m <= INT32_MAX &&
           !sp->pinned;
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
        /* the blocks' rows, the moves' buffers and, on rank 0, the
         * graph and METIS's work space are freed: give their pages back,
         * or they stay resident under the solve that follows           */
        deso__alloc_release();
    }
    return DESO_OK;
}
