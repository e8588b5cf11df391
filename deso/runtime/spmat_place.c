/* A square sparse matrix placed by a renumbered partition (a graph
 * partition's): its rows moved from their contiguous blocks to the ranks
 * the partition names, each rank's in its local order, with the halo plan
 * the product needs there.  Once the copy is made the blocks' rows and
 * halo plan are freed, so that a rank holds its share of the matrix once:
 * deso_spmat_gather and _set_values then work on the copy through each
 * placed row's first entry in pattern order (poff), and
 * deso_spmat_local_rows brings a rank's block rows back along the route
 * reversed.  The choice is made once per matrix, so nothing freed is
 * needed by a later force.
 *
 * The route: each rank sends every row to its new owner, in increasing
 * row order, and every receiver knows which rows come from whom (the
 * blocks say where each of its rows was), so one message per pair of
 * ranks carries the row lengths (with each row's first entry in pattern
 * order), then one the columns, then one the values, each through the
 * runtime's counted exchange.  Reversed (the receivers sending), the same
 * messages bring rows back to their blocks.  The route is a 32-bit word
 * a row on each side (local rows: a placed matrix has at most INT32_MAX
 * rows); it is made from the blocks' ranges and the partition, so it is
 * not kept after the placement but made again when rows go back.       */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "deso/runtime/runtime.h"

typedef struct deso__spmat_route {
    int64_t *sptr, *rptr;     /* size + 1: by receiver, by sender           */
    int32_t *srow, *rrow;     /* source local rows, placed local rows       */
} deso__spmat_route;

static void route_free(deso__spmat_route *rt)
{
    if (rt == NULL) return;
    free(rt->sptr);
    free(rt->srow);
    free(rt->rptr);
    free(rt->rrow);
    free(rt);
}

/* Groups items 0 .. n - 1 by key[item] (a stable counting sort): ptr[P +
 * 1], list[n].                                                           */
static void group(const int *key, int64_t n, int P, int64_t *ptr,
                  int32_t *list)
{
    memset(ptr, 0, ((size_t)P + 1) * sizeof *ptr);
    for (int64_t k = 0; k < n; k++) ptr[key[k] + 1]++;
    for (int q = 0; q < P; q++) ptr[q + 1] += ptr[q];
    for (int64_t k = 0; k < n; k++) list[ptr[key[k]]++] = (int32_t)k;
    for (int q = P; q > 0; q--) ptr[q] = ptr[q - 1];
    ptr[0] = 0;
}

static deso_err route_make(const deso_ctx *ctx, const deso__spmat_data *sp,
                           const blas_part *part, deso__spmat_route **out)
{
    int P = ctx->size, me = ctx->rank;
    int64_t ns = sp->start[me + 1] - sp->start[me];
    int64_t p0 = part->start[me], nr = part->start[me + 1] - p0;
    deso__spmat_route *rt = deso__calloc(1, sizeof *rt);
    int *key = deso__malloc((size_t)(ns > nr ? ns : nr) * sizeof *key + 1);
    if (rt != NULL) {
        rt->sptr = deso__malloc(((size_t)P + 1) * sizeof *rt->sptr);
        rt->rptr = deso__malloc(((size_t)P + 1) * sizeof *rt->rptr);
        rt->srow = deso__malloc((size_t)(ns > 0 ? ns : 1) * sizeof *rt->srow);
        rt->rrow = deso__malloc((size_t)(nr > 0 ? nr : 1) * sizeof *rt->rrow);
    }
    if (rt == NULL || key == NULL || !rt->sptr || !rt->rptr || !rt->srow ||
        !rt->rrow) {
        free(key);
        route_free(rt);
        return deso__fail(DESO_ENOMEM, "placing a sparse matrix: no memory");
    }
    for (int64_t r = 0; r < ns; r++)
        key[r] = blas_part_owner(part, sp->start[me] + r);
    group(key, ns, P, rt->sptr, rt->srow);
    blas_part blocks = {.n = sp->m, .nparts = P, .start = sp->start};
    for (int64_t l = 0; l < nr; l++)
        key[l] = blas_part_pos_owner(&blocks, part->iperm[p0 + l]);
    group(key, nr, P, rt->rptr, rt->rrow);
    free(key);
    *out = rt;
    return DESO_OK;
}

/* What moves: two numbers per row (its length and its first entry in
 * pattern order), or its entries' columns, or their values.             */
typedef enum { MOVE_LENS, MOVE_COLS, MOVE_VALS } move_what;

/* The two ends of a move: the rows sent (base: the first of their
 * entries in pattern order) and the rows received (poff: where each
 * row's first entry in pattern order is kept, or NULL).                  */
typedef struct move_ends {
    const deso__spmat_data *sdata;  /* src's matrix: its global columns   */
    int rank;                       /*   (deso__spmat_col), on this rank  */
    const pl_csr *src;
    int64_t base;
    pl_csr *dst;
    int64_t *poff;
} move_ends;

static int64_t row_items(const pl_csr *a, int64_t r, move_what w)
{
    return w == MOVE_LENS ? 2 : a->rowptr[r + 1] - a->rowptr[r];
}

static void pack_row(const move_ends *me, int64_t r, move_what w,
                     double *buf)
{
    const pl_csr *a = me->src;
    int64_t e0 = a->rowptr[r], len = a->rowptr[r + 1] - e0;
    if (w == MOVE_LENS) {
        buf[0] = (double)len;
        buf[1] = (double)(me->base + e0);
    } else if (w == MOVE_COLS) {
        for (int64_t e = 0; e < len; e++)
            buf[e] = (double)deso__spmat_col(me->sdata, me->rank, e0 + e);
    } else if (len > 0) {
        memcpy(buf, a->val + e0, (size_t)len * sizeof *buf);
    }
}

static void unpack_row(const move_ends *me, int64_t r, move_what w,
                       const double *buf)
{
    pl_csr *a = me->dst;
    if (w == MOVE_LENS) {
        a->rowptr[r + 1] = (int64_t)buf[0];          /* a length, for now */
        if (me->poff != NULL) me->poff[r] = (int64_t)buf[1];
        return;
    }
    int64_t e0 = a->rowptr[r], len = a->rowptr[r + 1] - e0;
    if (w == MOVE_COLS) {
        for (int64_t e = 0; e < len; e++) a->col[e0 + e] = (int64_t)buf[e];
    } else if (len > 0) {
        memcpy(a->val + e0, buf, (size_t)len * sizeof *buf);
    }
}

/* Items one round carries between the ranks of a move at most, over all
 * of a rank's peers (a row wider than its peer's share travels alone):
 * the buffers hold a round, not every row that travels, so that the copy
 * is made beside a few MB rather than beside a third copy of the rows.  */
#define ROUND_ITEMS ((int64_t)1 << 17)

static int64_t round_items = ROUND_ITEMS;
static int64_t rounds_run;

int64_t deso__spmat_move_rounds(int64_t n)
{
    round_items = n > 0 ? n : ROUND_ITEMS;
    int64_t ran = rounds_run;
    rounds_run = 0;
    return ran;
}

/* A pair's share of a round (at least 1,024 items, unless a round is
 * smaller); a function of P alone, so that both ends of every pair cut
 * its rows into the same chunks.                                         */
static int64_t peer_budget(int P)
{
    int64_t b = round_items / (P > 1 ? P - 1 : 1);
    int64_t least = round_items < 1024 ? round_items : 1024;
    return b > least ? b : least;
}

/* Buffers and peers of one move, made before its agreement; snext, rnext:
 * by peer, the first of the pair's rows not yet sent or received; rend:
 * the end of the chunk the round receives.                              */
typedef struct move_bufs {
    double *sbuf, *rbuf;
    double *row;              /* one of the rank's rows for itself         */
    double **sp, **rp;
    int64_t *sc, *rc;
    int *speer, *rpeer;
    int64_t *snext, *rnext, *rend;
    MPI_Request *req;
} move_bufs;

static void bufs_free(move_bufs *b)
{
    free(b->sbuf); free(b->rbuf); free(b->row);
    free(b->sp); free(b->rp);
    free(b->sc); free(b->rc);
    free(b->speer); free(b->rpeer);
    free(b->snext);
    free(b->req);
}

static int64_t items(const pl_csr *a, const int32_t *list, int64_t lo,
                     int64_t hi, move_what w)
{
    int64_t n = 0;
    for (int64_t k = lo; k < hi; k++) n += row_items(a, list[k], w);
    return n;
}

/* The end of the chunk of list[k .. end) that starts at k (k < end): rows
 * while their items stay within the budget, at least one.  Both ends of a
 * pair see the same items a row (before the lengths have come, a
 * receiver counts two a row, as the sender does), so they cut the same
 * chunks.                                                               */
static int64_t chunk_end(const pl_csr *a, const int32_t *list, int64_t k,
                         int64_t end, move_what w, int64_t budget)
{
    int64_t n = row_items(a, list[k], w);
    for (k++; k < end; k++) {
        int64_t m = row_items(a, list[k], w);
        if (n + m > budget) break;
        n += m;
    }
    return k;
}

/* Room for one round of the rows list[ptr[q] .. ptr[q + 1]) for every
 * peer q but the rank itself: a peer's chunk is within its budget or one
 * row, and never more than all its rows.                                */
static int64_t round_room(const pl_csr *a, const int64_t *ptr,
                          const int32_t *list, int P, int me, move_what w)
{
    int64_t room = 0, budget = peer_budget(P);
    for (int q = 0; q < P; q++) {
        int64_t total = 0, widest = 0;
        for (int64_t k = ptr[q]; q != me && k < ptr[q + 1]; k++) {
            int64_t n = row_items(a, list[k], w);
            total += n;
            widest = n > widest ? n : widest;
        }
        int64_t cap = widest > budget ? widest : budget;
        room += total < cap ? total : cap;
    }
    return room;
}

/* The most items of one of the rank's rows for itself.                   */
static int64_t widest_self(const deso__spmat_route *rt, const move_ends *me,
                           int rank, move_what w)
{
    int64_t most = 0;
    for (int64_t k = rt->sptr[rank]; k < rt->sptr[rank + 1]; k++) {
        int64_t n = row_items(me->src, rt->srow[k], w);
        most = n > most ? n : most;
    }
    return most;
}

/* The buffers hold one round of what travels between ranks; the rank's
 * rows for itself pass one at a time through `row`, so that the rows a
 * graph partition leaves in place are never held twice more while the
 * copy is made.                                                          */
static deso_err bufs_make(int P, int rank, const deso__spmat_route *rt,
                          const move_ends *me, move_what w, move_bufs *b)
{
    memset(b, 0, sizeof *b);
    int64_t ns = round_room(me->src, rt->sptr, rt->srow, P, rank, w);
    int64_t nr = round_room(me->dst, rt->rptr, rt->rrow, P, rank, w);
    int64_t nrow = widest_self(rt, me, rank, w);
    b->sbuf = deso__malloc((size_t)(ns > 0 ? ns : 1) * sizeof(double));
    b->rbuf = deso__malloc((size_t)(nr > 0 ? nr : 1) * sizeof(double));
    b->row = deso__malloc((size_t)(nrow > 0 ? nrow : 1) * sizeof(double));
    b->sp = deso__malloc((size_t)P * sizeof *b->sp);
    b->rp = deso__malloc((size_t)P * sizeof *b->rp);
    b->sc = deso__malloc((size_t)P * sizeof *b->sc);
    b->rc = deso__malloc((size_t)P * sizeof *b->rc);
    b->speer = deso__malloc((size_t)P * sizeof *b->speer);
    b->rpeer = deso__malloc((size_t)P * sizeof *b->rpeer);
    b->snext = deso__malloc(3 * (size_t)P * sizeof *b->snext);
    b->req = deso__malloc(2 * (size_t)P * sizeof *b->req);
    if (!b->sbuf || !b->rbuf || !b->row || !b->sp || !b->rp || !b->sc ||
        !b->rc || !b->speer || !b->rpeer || !b->snext || !b->req) {
        bufs_free(b);
        return deso__fail(DESO_ENOMEM, "placing a sparse matrix: no memory "
                          "for %lld entries", (long long)(ns + nr));
    }
    b->rnext = b->snext + P;
    b->rend = b->rnext + P;
    return DESO_OK;
}

/* The rank's rows for itself, in order: the k-th it sends itself is the
 * k-th it receives from itself (both in increasing row order).          */
static void move_self(const deso__spmat_route *rt, const move_ends *ends,
                      int me, move_what w, double *row)
{
    int64_t s0 = rt->sptr[me], r0 = rt->rptr[me];
    for (int64_t k = 0; k < rt->sptr[me + 1] - s0; k++) {
        pack_row(ends, rt->srow[s0 + k], w, row);
        unpack_row(ends, rt->rrow[r0 + k], w, row);
    }
}

/* One round's sends: each peer's next chunk packed; returns the peers.  */
static int round_pack(int P, const deso__spmat_route *rt,
                      const move_ends *ends, move_what w, move_bufs *b)
{
    int nsend = 0;
    double *at = b->sbuf;
    for (int q = 0; q < P; q++) {
        int64_t k = b->snext[q], end = rt->sptr[q + 1];
        if (k == end) continue;
        int64_t stop = chunk_end(ends->src, rt->srow, k, end, w,
                                 peer_budget(P));
        double *from = at;
        for (; k < stop; k++) {
            pack_row(ends, rt->srow[k], w, at);
            at += row_items(ends->src, rt->srow[k], w);
        }
        b->speer[nsend] = q;
        b->sp[nsend] = from;
        b->sc[nsend++] = at - from;
        b->snext[q] = stop;
    }
    return nsend;
}

/* One round's receives: each peer's next chunk given its room; returns
 * the peers.                                                            */
static int round_post(int P, const deso__spmat_route *rt,
                      const move_ends *ends, move_what w, move_bufs *b)
{
    int nrecv = 0;
    double *at = b->rbuf;
    for (int s = 0; s < P; s++) {
        int64_t k = b->rnext[s], end = rt->rptr[s + 1];
        b->rend[s] = k;
        if (k == end) continue;
        b->rend[s] = chunk_end(ends->dst, rt->rrow, k, end, w, peer_budget(P));
        b->rpeer[nrecv] = s;
        b->rp[nrecv] = at;
        b->rc[nrecv] = items(ends->dst, rt->rrow, k, b->rend[s], w);
        at += b->rc[nrecv++];
    }
    return nrecv;
}

static void round_unpack(int P, const deso__spmat_route *rt,
                         const move_ends *ends, move_what w, move_bufs *b)
{
    const double *in = b->rbuf;
    for (int s = 0; s < P; s++) {
        for (int64_t k = b->rnext[s]; k < b->rend[s]; k++) {
            unpack_row(ends, rt->rrow[k], w, in);
            in += row_items(ends->dst, rt->rrow[k], w);
        }
        b->rnext[s] = b->rend[s];
    }
}

/* One move along the route (the buffers made and agreed), in rounds of a
 * chunk per pair of ranks: a rank goes on while it has rows to send or to
 * receive, and a pair's k-th chunk travels in round k at both its ends,
 * so a round waits only on ranks that have that round too.  The rank's
 * rows for itself are copied row by row, without a message.             */
static deso_err move_run(deso_ctx *ctx, const deso__spmat_route *rt,
                         const move_ends *ends, move_what w, move_bufs *b)
{
    int P = ctx->size, me = ctx->rank;
    for (int q = 0; q < P; q++) {
        b->snext[q] = q == me ? rt->sptr[q + 1] : rt->sptr[q];
        b->rnext[q] = q == me ? rt->rptr[q + 1] : rt->rptr[q];
    }
    move_self(rt, ends, me, w, b->row);
    for (;;) {
        int nsend = round_pack(P, rt, ends, w, b);
        int nrecv = round_post(P, rt, ends, w, b);
        if (nsend == 0 && nrecv == 0) return DESO_OK;
        rounds_run++;
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, nsend, b->speer,
                                b->sp, b->sc, nrecv, b->rpeer, b->rp, b->rc,
                                b->req));
        round_unpack(P, rt, ends, w, b);
    }
}

/* One agreed move: buffers made, every rank's outcome agreed, then run. */
static deso_err move(deso_ctx *ctx, const deso__spmat_route *rt,
                     const move_ends *ends, move_what w, deso_err local,
                     const char *fn)
{
    move_bufs b;
    memset(&b, 0, sizeof b);
    if (local == DESO_OK)
        local = bufs_make(ctx->size, ctx->rank, rt, ends, w, &b);
    deso_err err = deso__agree_counted(ctx, fn, local, NULL, 0);
    if (err == DESO_OK) err = move_run(ctx, rt, ends, w, &b);
    bufs_free(&b);
    return err;
}

static const char *const place_fn = "placing a sparse matrix";

/* The placed copy's rows: indices, each row's first entry in pattern
 * order, lengths (after the first move: the lengths sit in rowptr[r + 1]
 * until summed), then room for the entries.  The indices are the
 * partition's own (its renumbering's inverse, this rank's range), which
 * the context keeps longer than any matrix: borrowed, not copied, and
 * never freed with the rows (deso__spmat_data_free).                    */
static deso_err rows_alloc(const deso_ctx *ctx, const blas_part *part,
                           deso__spmat_data *pd)
{
    int64_t p0 = part->start[ctx->rank];
    int64_t nr = part->start[ctx->rank + 1] - p0;
    size_t room = (size_t)(nr > 0 ? nr : 1) * sizeof(int64_t);
    pd->rows.nrows = nr;
    pd->rows.grow = part->iperm + p0;
    pd->poff = deso__malloc(room);
    pd->rows.rowptr = deso__calloc((size_t)nr + 1, sizeof(int64_t));
    DESO_CHECK(pd->poff != NULL && pd->rows.rowptr != NULL, DESO_ENOMEM,
               "%s: no memory for %lld rows", place_fn, (long long)nr);
    return DESO_OK;
}

/* rowptr[1 .. nrows] from the lengths the first move left there.        */
static void lengths_sum(pl_csr *a)
{
    a->rowptr[0] = 0;
    for (int64_t r = 0; r < a->nrows; r++) a->rowptr[r + 1] += a->rowptr[r];
}

/* Room for the copy's columns (vals false) or values (true), each made
 * just before its move: the values' room comes after the halo plan has
 * freed the 64-bit columns, so the two are never held together.        */
static deso_err entries_alloc(deso__spmat_data *pd, bool vals)
{
    pl_csr *a = &pd->rows;
    if (!vals) lengths_sum(a);
    int64_t nnz = a->rowptr[a->nrows];
    size_t room = (size_t)(nnz > 0 ? nnz : 1);
    if (vals) a->val = deso__malloc(room * sizeof *a->val);
    else a->col = deso__malloc(room * sizeof *a->col);
    DESO_CHECK(vals ? a->val != NULL : a->col != NULL, DESO_ENOMEM,
               "%s: no memory for %lld entries", place_fn, (long long)nnz);
    return DESO_OK;
}

/* Where rank r's block entries start in pattern order.                  */
static int64_t block_base(const deso__spmat_data *sp, int r)
{
    int64_t off = 0;
    for (int q = 0; q < r; q++) off += sp->count[q];
    return off;
}

/* The copy's rows: three moves along the route, each agreed, and its
 * halo plan between the columns and the values: the plan replaces the
 * copy's 64-bit columns by local ones, so they are gone before the
 * values' buffers are made.                                            */
static deso_err copy_rows(deso_ctx *ctx, const deso__spmat_route *rt,
                          const deso__spmat_data *sp, deso__spmat_data *pd,
                          deso_err local)
{
    move_ends ends = {sp, ctx->rank, &sp->rows, block_base(sp, ctx->rank),
                      pd ? &pd->rows : NULL, pd ? pd->poff : NULL};
    deso_err err = move(ctx, rt, &ends, MOVE_LENS, local, place_fn);
    if (err == DESO_OK) {
        local = entries_alloc(pd, false);
        err = move(ctx, rt, &ends, MOVE_COLS, local, place_fn);
    }
    deso__halo_plan *hp;
    if (err == DESO_OK) err = deso__spmat_halo(ctx, pd, &hp);
    if (err == DESO_OK)
        err = move(ctx, rt, &ends, MOVE_VALS, entries_alloc(pd, true), place_fn);
    return err;
}

/* The copy's entries on every rank (the gather's and new values'
 * buffers are sized by them): one all-reduce, after the halo plan's
 * agreements.                                                            */
static deso_err copy_counts(deso_ctx *ctx, deso__spmat_data *pd)
{
    double *cnt = deso__calloc((size_t)ctx->size, sizeof *cnt);
    deso_err err = cnt != NULL ? DESO_OK
                               : deso__fail(DESO_ENOMEM, "%s: no memory",
                                            place_fn);
    err = deso__agree_counted(ctx, place_fn, err, NULL, 0);
    if (err == DESO_OK) {
        cnt[ctx->rank] = (double)pd->rows.rowptr[pd->rows.nrows];
        err = deso__allreduce(ctx, ctx->comm, cnt, ctx->size, DESO__SUM);
    }
    for (int q = 0; err == DESO_OK && q < ctx->size; q++)
        pd->count[q] = (int64_t)cnt[q];
    free(cnt);
    return err;
}

deso_err deso__spmat_place(deso_ctx *ctx, deso__spmat_data *sp,
                           const blas_part *part)
{
    deso__spmat_data *pd = NULL;
    deso__spmat_route *rt = NULL;
    deso_err local = sp->m == sp->n && part->n == sp->m && part->perm != NULL
                         ? DESO_OK
                         : deso__fail(DESO_EINTERNAL, "%s: not square or no "
                                      "renumbering", place_fn);
    if (local == DESO_OK) local = deso__spmat_alloc(ctx, sp->m, sp->n, &pd);
    if (local == DESO_OK) {
        pd->part = part;
        memcpy(pd->start, part->start, ((size_t)ctx->size + 1) * sizeof *pd->start);
        local = rows_alloc(ctx, part, pd);
    }
    if (local == DESO_OK) {
        pd->nnz = sp->nnz;
        pd->id = sp->id;
        local = route_make(ctx, sp, part, &rt);
    }
    deso_err err = copy_rows(ctx, rt, sp, pd, local);
    if (err == DESO_OK) err = copy_counts(ctx, pd);
    /* the route is made again from the blocks and the partition when a
     * rank's block rows are asked back: one word a row not kept for it  */
    route_free(rt);
    if (err != DESO_OK) {
        /* the blocks stay whole: the products run there                  */
        deso__spmat_data_free(pd);
        return err;
    }
    sp->placed = pd;
    /* the copy holds the entries from now on; the blocks keep their
     * ranges and counts (start, count), which the route was made from   */
    pl_csr_free(&sp->rows);
    deso__halo_plan_free(sp->halo);
    sp->halo = NULL;
    return DESO_OK;
}

deso_err deso__spmat_rows_back(deso_ctx *ctx, const deso__spmat_data *sp,
                               int64_t *rowptr, int64_t *col, double *val,
                               deso_err local)
{
    static const char *fn = "deso_spmat_local_rows";
    deso__spmat_route *rt = NULL;
    if (local == DESO_OK) local = route_make(ctx, sp, sp->placed->part, &rt);
    if (rt == NULL)      /* the one agreement the others' first move makes */
        return deso__agree_counted(ctx, fn, local, NULL, 0);
    /* the route reversed: the copy's rows go back to their blocks        */
    deso__spmat_route back = {.sptr = rt->rptr, .srow = rt->rrow,
                              .rptr = rt->sptr, .rrow = rt->srow};
    int me = ctx->rank;
    pl_csr block = {.nrows = sp->start[me + 1] - sp->start[me],
                    .rowptr = rowptr, .col = col, .val = val};
    move_ends ends = {sp->placed, me, &sp->placed->rows, 0, &block, NULL};
    deso_err err = move(ctx, &back, &ends, MOVE_LENS, local, fn);
    if (err == DESO_OK) {
        lengths_sum(&block);
        err = move(ctx, &back, &ends, MOVE_COLS, DESO_OK, fn);
    }
    if (err == DESO_OK) err = move(ctx, &back, &ends, MOVE_VALS, DESO_OK, fn);
    route_free(rt);
    return err;
}
