/* Exchanges: the view of a value in another placement (doc/DESIGN.md,
 * "The executor").
 *
 * Vectors and scalars:
 *   1. adding copies (same folding) goes through collectives: along a grid
 *      dimension where the source sits at coordinate 0 it is a broadcast
 *      over that dimension's communicator (replicate());
 *   2. everything else (a transpose between grid rows and columns, a change
 *      of block size, a gather) is a direct point-to-point exchange planned
 *      from owner computations: the receiver of element i takes it from the
 *      source copy nearest to it (itself, else the copy in its own grid row
 *      or column, else coordinate 0).  Dropping copies comes out of it as a
 *      free local copy (collapse): no message.  For mode none's transpose of a replicated vector (row
 *      oriented, replicated over grid rows -> column oriented, replicated
 *      over columns) every rank (r, c) then receives the elements of grid
 *      row fold r from the ranks of its own grid row: the paper's direct
 *      O(N P) exchange, one message per pair of ranks in a grid row, no
 *      collective.  Plans are made once per layout pair and cached.
 *   The same exchange under an element map (vget and vput: element
 *   so + si i of the source into element to + ti i of the target, by
 *   linear index, vectors or matrices, or a block's runs: blas_emap) is
 *   how views move data
 *   (exec_view.c); its plans are cached per layout pair and map.
 * Matrices: block-cyclic remaps through deso__remap_* (remap_matrix.c).   */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"
#include "deso/runtime/log.h"
#include "placement/alloc.h"
#include "placement/copy_list.h"

struct deso__exchange_plan {
    blas_layout src, dst;
    blas_emap map;              /* identity for a change of layout          */
    int nsend, nrecv;
    int *speer, *rpeer;
    int64_t *scount, *rcount;
    pl_copy_list *spack, *runpack; /* per message: local elements into the  */
                                /*   buffer, the buffer into local elements */
    pl_copy_list self;          /* the elements a rank keeps                */
    double **sbuf, **rbuf;      /* message buffers, kept with the plan;     */
                                /*   NULL for a message that is one run of  */
                                /*   the source or target, sent from or     */
                                /*   received into it where it lies         */
    double **sptr, **rptr;      /* each message's, set by each exchange     */
    MPI_Request *req;           /* nsend + nrecv, likewise                  */
    uint64_t used;              /* the context's exchange_clock when last   */
                                /*   looked up                              */
    struct deso__exchange_plan *next;
};

static blas_emap identity(const blas_layout *D)
{
    blas_emap e = {0, 1, 0, 1, D->m * D->n, 0, 0, 0};
    return e;
}

static void exchange_plan_free(deso__exchange_plan *p)
{
    if (p == NULL) return;
    /* a plan whose build failed may have counts but not yet the arrays    */
    for (int k = 0; k < p->nsend; k++) {
        if (p->spack != NULL) pl_copy_free(&p->spack[k]);
        if (p->sbuf != NULL) free(p->sbuf[k]);
    }
    for (int k = 0; k < p->nrecv; k++) {
        if (p->runpack != NULL) pl_copy_free(&p->runpack[k]);
        if (p->rbuf != NULL) free(p->rbuf[k]);
    }
    free(p->speer);
    free(p->rpeer);
    free(p->scount);
    free(p->rcount);
    free(p->spack);
    free(p->runpack);
    free(p->sbuf);
    free(p->rbuf);
    free(p->sptr);
    free(p->rptr);
    pl_copy_free(&p->self);
    free(p->req);
    free(p);
}

/* One plan's copy lists and message buffers, in bytes, added in.        */
static void plan_bytes(const deso__exchange_plan *p, size_t *lists,
                       size_t *buffers)
{
    *lists += pl_copy_bytes(&p->self);
    for (int k = 0; k < p->nsend; k++) {
        *lists += pl_copy_bytes(&p->spack[k]);
        *buffers += (size_t)p->scount[k] * sizeof(double);
    }
    for (int k = 0; k < p->nrecv; k++) {
        *lists += pl_copy_bytes(&p->runpack[k]);
        *buffers += (size_t)p->rcount[k] * sizeof(double);
    }
}

void deso__exchange_plans_bytes(const deso_ctx *ctx, size_t *lists,
                                size_t *buffers)
{
    *lists = *buffers = 0;
    for (const deso__exchange_plan *p = ctx->exchange_plans; p != NULL;
         p = p->next)
        plan_bytes(p, lists, buffers);
}

int deso__exchange_plans_count(const deso_ctx *ctx)
{
    int n = 0;
    for (const deso__exchange_plan *p = ctx->exchange_plans; p != NULL;
         p = p->next)
        n++;
    return n;
}

void deso__exchange_plans_free(deso_ctx *ctx)
{
    while (ctx->exchange_plans != NULL) {
        deso__exchange_plan *next = ctx->exchange_plans->next;
        exchange_plan_free(ctx->exchange_plans);
        ctx->exchange_plans = next;
    }
}

/* Forces a plan of a change of layout outlives its last use: a set-up's
 * exchanges (a vector moved from its default layout to a sparse
 * product's partition once) would otherwise hold their copy lists and
 * buffers, a vector's length or more, for as long as the context; two
 * forces, so that a program alternating between two forces keeps both
 * forces' plans.                                                         */
#define PLAN_AGE 2

static bool layout_change(const deso__exchange_plan *p)
{
    blas_emap e = identity(&p->dst);
    return blas_emap_equal(&p->map, &e);
}

void deso__exchange_touch(deso_ctx *ctx, blas_kind kind,
                          const blas_layout *src, const blas_layout *to)
{
    if (kind == BLAS_MAT) return;
    blas_emap e = identity(to);
    for (deso__exchange_plan *p = ctx->exchange_plans; p != NULL; p = p->next)
        if (blas_layout_equal(&p->src, src) && blas_layout_equal(&p->dst, to) &&
            blas_emap_equal(&p->map, &e)) {
            p->used = ctx->exchange_clock;
            return;
        }
}

/* Freed plans of at least this many bytes give their pages back: freed
 * into the heap they would stay resident, and a later force's arrays
 * would come on top of them rather than into them whenever that force
 * needs a plan again (deso-cg's true residual after the solve).         */
#define RELEASE_BYTES ((size_t)1 << 20)

void deso__exchange_plans_trim(deso_ctx *ctx)
{
    size_t lists = 0, buffers = 0;
    deso__exchange_plan **pp = &ctx->exchange_plans;
    while (*pp != NULL) {
        deso__exchange_plan *p = *pp;
        if (layout_change(p) && ctx->exchange_clock - p->used >= PLAN_AGE) {
            *pp = p->next;
            plan_bytes(p, &lists, &buffers);
            exchange_plan_free(p);
        } else {
            pp = &p->next;
        }
    }
    if (lists + buffers >= RELEASE_BYTES) deso__alloc_release();
    ctx->exchange_clock++;
}

/* A plan's per-rank lists while it is built, counted in a first pass and
 * filled in a second (sends: my source elements into the buffer for rank
 * q; receives: the buffer from rank q into my target elements).  Both
 * sides list the elements of a message in increasing map index i, so
 * packing and unpacking agree (a local array's order is increasing
 * linear index, so a side whose stride is negative reverses its lists).  */
typedef struct plan_lists {
    pl_copy_list *sl, *rl;
} plan_lists;

static void lists_free(plan_lists *L, int P)
{
    for (int q = 0; q < P && L->sl != NULL && L->rl != NULL; q++) {
        pl_copy_free(&L->sl[q]);
        pl_copy_free(&L->rl[q]);
    }
    free(L->sl);
    free(L->rl);
}

static deso_err lists_new(plan_lists *L, int P)
{
    L->sl = deso__malloc((size_t)P * sizeof *L->sl);
    L->rl = deso__malloc((size_t)P * sizeof *L->rl);
    DESO_CHECK(L->sl && L->rl, DESO_ENOMEM, "exchange plan: out of memory");
    for (int q = 0; q < P; q++) {
        L->sl[q] = pl_copy_new(true, false);
        L->rl[q] = pl_copy_new(false, true);
    }
    return DESO_OK;
}

/* One pass over my source elements that other ranks take from me (each
 * receiver takes an element from its nearest copy: blas_elem_src):
 * counted (pass 0) or listed.                                            */
static void scan_sends(const deso_ctx *ctx, const blas_layout *S,
                       const blas_layout *D, const blas_emap *e, int pass,
                       plan_lists *L)
{
    int me = ctx->rank, r = ctx->coord[0], c = ctx->coord[1];
    int64_t rows, cols;
    blas_layout_local(S, r, c, &rows, &cols);
    for (int64_t l = 0; l < rows * cols; l++) {
        int64_t i = blas_emap_index(e, blas_elem_global(S, r, c, l), false);
        if (i < 0) continue;
        int a0, a1, b0, b1;
        blas_elem_holders(D, blas_emap_dst(e, i), &a0, &a1, &b0, &b1);
        for (int a = a0; a < a1; a++)
            for (int b = b0; b < b1; b++) {
                int q = a * ctx->df.pc + b, sr, sc;
                if (q == me) continue;
                blas_elem_src(S, a, b, blas_emap_src(e, i), &sr, &sc);
                if (sr != r || sc != c) continue;
                if (pass == 0) pl_copy_count(&L->sl[q], l, 0);
                else pl_copy_add(&L->sl[q], l, 0);
            }
    }
}

/* One pass over my target elements: counted or listed per source rank,
 * or (from myself) the plan's self copies.                               */
static void scan_recvs(const deso_ctx *ctx, const blas_layout *S,
                       const blas_layout *D, const blas_emap *e, int pass,
                       plan_lists *L, deso__exchange_plan *p)
{
    int me = ctx->rank, r = ctx->coord[0], c = ctx->coord[1];
    int64_t rows, cols;
    blas_layout_local(D, r, c, &rows, &cols);
    for (int64_t l = 0; l < rows * cols; l++) {
        int64_t i = blas_emap_index(e, blas_elem_global(D, r, c, l), true);
        if (i < 0) continue;
        int64_t g = blas_emap_src(e, i);
        int sr, sc;
        blas_elem_src(S, r, c, g, &sr, &sc);
        int q = sr * ctx->df.pc + sc;
        pl_copy_list *to = q == me ? &p->self : &L->rl[q];
        int64_t from = q == me ? blas_elem_lidx(S, g) : 0;
        if (pass == 0) pl_copy_count(to, from, l);
        else pl_copy_add(to, from, l);
    }
}

/* After the counting pass: the lists and the self copies allocated, each
 * run-coded where that is smaller, except a side that will be reversed
 * (the runs advance upwards).                                            */
static deso_err lists_alloc(const deso_ctx *ctx, plan_lists *L,
                            const blas_emap *e, deso__exchange_plan *p)
{
    deso_err err = DESO_OK;
    bool runs = !ctx->exchange_listed;
    for (int q = 0; q < ctx->size; q++) {
        if (L->sl[q].n > 0) {
            p->nsend++;
            if (err == DESO_OK)
                err = pl_copy_alloc(&L->sl[q], runs && e->si > 0);
        }
        if (L->rl[q].n > 0) {
            p->nrecv++;
            if (err == DESO_OK)
                err = pl_copy_alloc(&L->rl[q], runs && e->ti > 0);
        }
    }
    if (err == DESO_OK) err = pl_copy_alloc(&p->self, runs);
    return err;
}

/* The plan's peer arrays, sized by the counted peers, and its request
 * array (the exchange's, allocated here so that nothing is allocated
 * once data moves).                                                      */
static deso_err peers_alloc(deso__exchange_plan *p)
{
    int ns = p->nsend > 0 ? p->nsend : 1, nr = p->nrecv > 0 ? p->nrecv : 1;
    p->speer = deso__calloc((size_t)ns, sizeof(int));
    p->rpeer = deso__calloc((size_t)nr, sizeof(int));
    p->scount = deso__calloc((size_t)ns, sizeof(int64_t));
    p->rcount = deso__calloc((size_t)nr, sizeof(int64_t));
    p->spack = deso__calloc((size_t)ns, sizeof *p->spack);
    p->runpack = deso__calloc((size_t)nr, sizeof *p->runpack);
    p->sbuf = deso__calloc((size_t)ns, sizeof(double *));
    p->rbuf = deso__calloc((size_t)nr, sizeof(double *));
    p->sptr = deso__calloc((size_t)ns, sizeof(double *));
    p->rptr = deso__calloc((size_t)nr, sizeof(double *));
    p->req = deso__calloc((size_t)(ns + nr), sizeof(MPI_Request));
    DESO_CHECK(p->speer && p->rpeer && p->scount && p->rcount && p->spack &&
                   p->runpack && p->sbuf && p->rbuf && p->sptr && p->rptr &&
                   p->req,
               DESO_ENOMEM, "exchange plan: out of memory");
    return DESO_OK;
}

/* Whether a message's elements are one run of consecutive positions on
 * the rank's side (a block placement's usual case): then it needs no
 * buffer, and no copy into or out of one.                                */
static bool one_run(const pl_copy_list *c)
{
    return c->runs && c->nruns == 1;
}

/* Each peer in rank order: its count, its copy list (taken from L) and
 * its packing buffer unless the list is one run; lists reversed where the
 * map runs backwards.                                                    */
static deso_err peers_fill(plan_lists *L, int P, const blas_emap *e,
                           deso__exchange_plan *p)
{
    bool ok = true;
    int ks = 0, kr = 0;
    for (int q = 0; q < P; q++) {
        if (L->sl[q].n > 0) {
            p->speer[ks] = q;
            p->scount[ks] = L->sl[q].n;
            p->spack[ks] = L->sl[q];
            L->sl[q] = pl_copy_new(true, false);
            if (e->si < 0) pl_copy_reverse(&p->spack[ks]);
            if (!one_run(&p->spack[ks])) {
                p->sbuf[ks] = deso__malloc((size_t)p->scount[ks] *
                                           sizeof(double));
                if (p->sbuf[ks] == NULL) ok = false;
            }
            ks++;
        }
        if (L->rl[q].n > 0) {
            p->rpeer[kr] = q;
            p->rcount[kr] = L->rl[q].n;
            p->runpack[kr] = L->rl[q];
            L->rl[q] = pl_copy_new(false, true);
            if (e->ti < 0) pl_copy_reverse(&p->runpack[kr]);
            if (!one_run(&p->runpack[kr])) {
                p->rbuf[kr] = deso__malloc((size_t)p->rcount[kr] *
                                           sizeof(double));
                if (p->rbuf[kr] == NULL) ok = false;
            }
            kr++;
        }
    }
    p->nsend = ks;
    p->nrecv = kr;
    DESO_CHECK(ok, DESO_ENOMEM, "exchange plan: out of memory");
    return DESO_OK;
}

/* The exchange from layout S to layout D under map e, planned from owner
 * computations in two passes over this rank's elements: count, then
 * list.                                                                  */
static deso_err exchange_plan_build(deso_ctx *ctx, const blas_layout *S,
                                    const blas_layout *D, const blas_emap *e,
                                    deso__exchange_plan **out)
{
    int P = ctx->size;
    plan_lists L = {0};
    deso__exchange_plan *p = deso__calloc(1, sizeof *p);
    deso_err err = lists_new(&L, P);
    if (err == DESO_OK && p == NULL)
        err = deso__fail(DESO_ENOMEM, "exchange plan: out of memory");
    if (err == DESO_OK) {
        p->src = *S;
        p->dst = *D;
        p->map = *e;
        p->self = pl_copy_new(true, true);
    }
    for (int pass = 0; pass < 2 && err == DESO_OK; pass++) {
        scan_sends(ctx, S, D, e, pass, &L);
        scan_recvs(ctx, S, D, e, pass, &L, p);
        if (pass == 0) err = lists_alloc(ctx, &L, e, p);
    }
    if (err == DESO_OK) err = peers_alloc(p);
    if (err == DESO_OK) err = peers_fill(&L, P, e, p);
    lists_free(&L, P);
    if (err != DESO_OK) {
        exchange_plan_free(p);
        return err;
    }
    *out = p;
    return DESO_OK;
}

static deso_err exchange_plan_get(deso_ctx *ctx, const blas_layout *S,
                          const blas_layout *D, const blas_emap *e,
                          deso__exchange_plan **out)
{
    for (deso__exchange_plan *p = ctx->exchange_plans; p != NULL; p = p->next)
        if (blas_layout_equal(&p->src, S) && blas_layout_equal(&p->dst, D) &&
            blas_emap_equal(&p->map, e)) {
            p->used = ctx->exchange_clock;
            *out = p;
            return DESO_OK;
        }
    deso__exchange_plan *p;
    DESO_TRY(exchange_plan_build(ctx, S, D, e, &p));
    p->used = ctx->exchange_clock;
    p->next = ctx->exchange_plans;
    ctx->exchange_plans = p;
    *out = p;
    return DESO_OK;
}

/* A message that is one run is sent from the source and received into
 * the target where they lie (src and dst are distinct views, as the copy
 * lists' restrict arguments already require); the others go through the
 * plan's buffers.                                                        */
static deso_err exchange_plan_exec(deso_ctx *ctx, deso__exchange_plan *p, const double *src,
                           double *dst)
{
    double t0 = deso__now();
    for (int k = 0; k < p->nsend; k++) {
        if (p->sbuf[k] == NULL) {
            p->sptr[k] = (double *)(src + p->spack[k].src[0]);
            continue;
        }
        pl_copy_run(&p->spack[k], src, p->sbuf[k]);
        p->sptr[k] = p->sbuf[k];
    }
    for (int k = 0; k < p->nrecv; k++)
        p->rptr[k] = p->rbuf[k] != NULL ? p->rbuf[k]
                                        : dst + p->runpack[k].dst[0];
    pl_copy_run(&p->self, src, dst);
    deso__stats_time(DESO_T_OVERHEAD, deso__now() - t0);
    DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_EXCHANGE, p->nsend, p->speer,
                            p->sptr, p->scount, p->nrecv, p->rpeer, p->rptr,
                            p->rcount, p->req));
    t0 = deso__now();
    for (int k = 0; k < p->nrecv; k++)
        if (p->rbuf[k] != NULL) pl_copy_run(&p->runpack[k], p->rbuf[k], dst);
    deso__stats_time(DESO_T_OVERHEAD, deso__now() - t0);
    return DESO_OK;
}

/* Same folding, and D only adds copies where S sits at coordinate 0.     */
static bool replication_only(const blas_layout *S, const blas_layout *D)
{
    return S->kind == D->kind && S->n == D->n && S->dist == D->dist &&
           S->b == D->b && (S->rep & ~D->rep) == 0 &&
           blas_part_equal(S->part, D->part);
}

/* Collapse (free) or broadcast along the grid dimensions D adds.         */
static deso_err replicate(deso_ctx *ctx, const deso__view *s, deso__view *d)
{
    int r = ctx->coord[0], c = ctx->coord[1];
    if (blas_layout_holds(&s->lay, r, c) && d->rows > 0)
        memcpy(d->data, s->data, (size_t)d->rows * sizeof(double));
    blas_layout cur = s->lay;
    for (int k = 0; k < 2; k++) {
        unsigned bit = 1u << k;
        if (!(d->lay.rep & bit) || (cur.rep & bit)) continue;
        /* ranks already holding along the other dimension broadcast from
         * coordinate 0 of dimension k to the rest of it                   */
        blas_layout next = cur;
        next.rep |= bit;
        if (blas_layout_holds(&next, r, c))
            DESO_TRY(deso__bcast(ctx->dimcomm[k], d->data, d->rows, 0));
        cur = next;
    }
    return DESO_OK;
}

/* The source of a new view in layout `to`: the first view, unless one
 * needs only broadcasts.                                                 */
static int pick_source(blas_kind kind, const blas_layout *const *have, int n,
                       const blas_layout *to)
{
    for (int k = 0; kind != BLAS_MAT && k < n; k++)
        if (replication_only(have[k], to)) return k;
    return 0;
}

const blas_layout *deso__exchange_source(blas_kind kind,
                                        const blas_layout *const *have, int n,
                                        const blas_layout *to)
{
    return have[pick_source(kind, have, n < 8 ? n : 8, to)];
}

deso_err deso__exchange_ready(deso_ctx *ctx, blas_kind kind,
                              const blas_layout *src, const blas_layout *to)
{
    if (kind == BLAS_MAT) {
        deso__remap *r;
        return deso__mat_remap_plan(ctx, src, to, &r);
    }
    if (replication_only(src, to)) return DESO_OK;
    deso__exchange_plan *p;
    double t0 = deso__now();
    blas_emap e = identity(to);
    deso_err err = exchange_plan_get(ctx, src, to, &e, &p);
    deso__stats_time(DESO_T_OVERHEAD, deso__now() - t0);
    return err;
}

deso_err deso__view_fill(deso_ctx *ctx, blas_kind kind, const deso__view *src,
                        deso__view *w)
{
    if (kind == BLAS_MAT) return deso__log_remap(ctx, src, w);
    if (replication_only(&src->lay, &w->lay)) return replicate(ctx, src, w);
    deso__exchange_plan *p;
    double t0 = deso__now();
    blas_emap e = identity(&w->lay);
    deso_err err = exchange_plan_get(ctx, &src->lay, &w->lay, &e, &p);
    deso__stats_time(DESO_T_OVERHEAD, deso__now() - t0);
    DESO_TRY(err);
    return exchange_plan_exec(ctx, p, src->data, w->data);
}

/* A view of layout lay from v's spares (made by the force's preparation),
 * else a new one.                                                        */
static deso_err take_view(deso_ctx *ctx, deso__value *v,
                          const blas_layout *lay, deso__view **out)
{
    for (deso__view **pp = &v->spare; *pp != NULL; pp = &(*pp)->next)
        if (blas_layout_equal(&(*pp)->lay, lay)) {
            *out = *pp;
            *pp = (*pp)->next;
            (*out)->next = NULL;
            return DESO_OK;
        }
    return deso__view_alloc(ctx, lay, out);
}

deso_err deso__value_reserve(deso_ctx *ctx, deso__value *v,
                             const blas_layout *lay)
{
    if (deso__value_find(v, lay) != NULL) return DESO_OK;
    for (deso__view *w = v->spare; w != NULL; w = w->next)
        if (blas_layout_equal(&w->lay, lay)) return DESO_OK;
    deso__view *w;
    DESO_TRY(deso__view_alloc(ctx, lay, &w));
    w->next = v->spare;
    v->spare = w;
    /* a value still pending has no source yet: only a replication (no
     * plan) may be reserved on it                                        */
    if (v->views == NULL) return DESO_OK;
    const blas_layout *have[8];
    int n = 0;
    for (const deso__view *s = v->views; s != NULL && n < 8; s = s->next)
        have[n++] = &s->lay;
    return deso__exchange_ready(ctx, v->kind,
                                deso__exchange_source(v->kind, have, n, lay),
                                lay);
}

deso_err deso__value_view(deso_ctx *ctx, deso__value *v,
                          const blas_layout *lay, deso__view **out)
{
    deso__view *w = deso__value_find(v, lay);
    if (w != NULL) {
        *out = w;
        return DESO_OK;
    }
    DESO_CHECK(v->views != NULL, DESO_EINTERNAL,
               "exchange: value has no data");
    const blas_layout *h[8];
    deso__view *byk[8];
    int n = 0;
    for (deso__view *s = v->views; s != NULL && n < 8; s = s->next) {
        byk[n] = s;
        h[n++] = &s->lay;
    }
    deso__view *src = byk[pick_source(v->kind, h, n, lay)];
    DESO_TRY(take_view(ctx, v, lay, &w));
    deso_err err = deso__view_fill(ctx, v->kind, src, w);
    if (err != DESO_OK) {
        deso__view_free(w);
        return err;
    }
    /* keep it: later readers of this version reuse it                      */
    deso__value_keep(v, w);
    *out = w;
    return DESO_OK;
}

deso_err deso__exchange_map_ready(deso_ctx *ctx, const blas_layout *src,
                                  const blas_layout *to, const blas_emap *e)
{
    deso__exchange_plan *p;
    double t0 = deso__now();
    deso_err err = exchange_plan_get(ctx, src, to, e, &p);
    deso__stats_time(DESO_T_OVERHEAD, deso__now() - t0);
    return err;
}

deso_err deso__exchange_map(deso_ctx *ctx, const deso__view *src,
                            deso__view *dst, const blas_emap *e)
{
    deso__exchange_plan *p;
    double t0 = deso__now();
    deso_err err = exchange_plan_get(ctx, &src->lay, &dst->lay, e, &p);
    deso__stats_time(DESO_T_OVERHEAD, deso__now() - t0);
    DESO_TRY(err);
    return exchange_plan_exec(ctx, p, src->data, dst->data);
}
