/* A square sparse matrix placed by a renumbered partition (a graph
 * partition's): its rows moved from their contiguous blocks to the ranks
 * the partition names, each rank's in its local order, with the halo plan
 * the product needs there.  The matrix the user made stays as it was
 * (deso_spmat_local, _gather and _set_values see its blocks); the placed
 * copy is what its products run on, and new values reach it along the
 * same route.
 *
 * The route: each rank sends every row to its new owner, in increasing
 * row order, and every receiver knows which rows come from whom (the
 * blocks say where each of its rows was), so one message per pair of
 * ranks carries the row lengths, then one the columns, then one the
 * values, each through the runtime's counted exchange.                   */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "deso/runtime/runtime.h"

struct deso__spmat_route {
    int64_t *sptr, *srow;     /* size + 1; source local rows by receiver    */
    int64_t *rptr, *rrow;     /* size + 1; placed local rows by sender      */
};

void deso__spmat_route_free(deso__spmat_route *rt)
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
                  int64_t *list)
{
    memset(ptr, 0, ((size_t)P + 1) * sizeof *ptr);
    for (int64_t k = 0; k < n; k++) ptr[key[k] + 1]++;
    for (int q = 0; q < P; q++) ptr[q + 1] += ptr[q];
    for (int64_t k = 0; k < n; k++) list[ptr[key[k]]++] = k;
    for (int q = P; q > 0; q--) ptr[q] = ptr[q - 1];
    ptr[0] = 0;
}

static deso_err route_make(const deso_ctx *ctx, const deso__spmat_data *sp,
                           const blas_part *part, deso__spmat_route **out)
{
    int P = ctx->size, me = ctx->rank;
    int64_t ns = sp->rows.nrows;
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
        deso__spmat_route_free(rt);
        return deso__fail(DESO_ENOMEM, "placing a sparse matrix: no memory");
    }
    for (int64_t r = 0; r < ns; r++)
        key[r] = blas_part_owner(part, sp->rows.row0 + r);
    group(key, ns, P, rt->sptr, rt->srow);
    blas_part blocks = {.n = sp->m, .nparts = P, .start = sp->start};
    for (int64_t l = 0; l < nr; l++)
        key[l] = blas_part_pos_owner(&blocks, part->iperm[p0 + l]);
    group(key, nr, P, rt->rptr, rt->rrow);
    free(key);
    *out = rt;
    return DESO_OK;
}

/* What moves: one number per row (its length), or its entries' columns,
 * or their values.                                                       */
typedef enum { MOVE_LENS, MOVE_COLS, MOVE_VALS } move_what;

static int64_t row_items(const pl_csr *a, int64_t r, move_what w)
{
    return w == MOVE_LENS ? 1 : a->rowptr[r + 1] - a->rowptr[r];
}

static void pack_row(const pl_csr *a, int64_t r, move_what w, double *buf)
{
    int64_t e0 = a->rowptr[r], len = a->rowptr[r + 1] - e0;
    if (w == MOVE_LENS) buf[0] = (double)len;
    else if (w == MOVE_COLS)
        for (int64_t e = 0; e < len; e++) buf[e] = (double)a->col[e0 + e];
    else if (len > 0) memcpy(buf, a->val + e0, (size_t)len * sizeof *buf);
}

static void unpack_row(pl_csr *a, int64_t r, move_what w, const double *buf)
{
    int64_t e0 = a->rowptr[r], len = a->rowptr[r + 1] - e0;
    if (w == MOVE_LENS) a->rowptr[r + 1] = (int64_t)buf[0];  /* a length */
    else if (w == MOVE_COLS)
        for (int64_t e = 0; e < len; e++) a->col[e0 + e] = (int64_t)buf[e];
    else if (len > 0) memcpy(a->val + e0, buf, (size_t)len * sizeof *buf);
}

/* Buffers and peers of one move, made before its agreement.             */
typedef struct move_bufs {
    double *sbuf, *rbuf;
    double **sp, **rp;
    int64_t *sc, *rc;
    int *speer, *rpeer;
    MPI_Request *req;
} move_bufs;

static void bufs_free(move_bufs *b)
{
    free(b->sbuf); free(b->rbuf);
    free(b->sp); free(b->rp);
    free(b->sc); free(b->rc);
    free(b->speer); free(b->rpeer);
    free(b->req);
}

static int64_t items(const pl_csr *a, const int64_t *list, int64_t lo,
                     int64_t hi, move_what w)
{
    int64_t n = 0;
    for (int64_t k = lo; k < hi; k++) n += row_items(a, list[k], w);
    return n;
}

static deso_err bufs_make(int P, const deso__spmat_route *rt,
                          const pl_csr *src, const pl_csr *dst, move_what w,
                          move_bufs *b)
{
    memset(b, 0, sizeof *b);
    int64_t ns = items(src, rt->srow, 0, rt->sptr[P], w);
    int64_t nr = w == MOVE_LENS ? rt->rptr[P]
                                : items(dst, rt->rrow, 0, rt->rptr[P], w);
    b->sbuf = deso__malloc((size_t)(ns > 0 ? ns : 1) * sizeof(double));
    b->rbuf = deso__malloc((size_t)(nr > 0 ? nr : 1) * sizeof(double));
    b->sp = deso__malloc((size_t)P * sizeof *b->sp);
    b->rp = deso__malloc((size_t)P * sizeof *b->rp);
    b->sc = deso__malloc((size_t)P * sizeof *b->sc);
    b->rc = deso__malloc((size_t)P * sizeof *b->rc);
    b->speer = deso__malloc((size_t)P * sizeof *b->speer);
    b->rpeer = deso__malloc((size_t)P * sizeof *b->rpeer);
    b->req = deso__malloc(2 * (size_t)P * sizeof *b->req);
    if (!b->sbuf || !b->rbuf || !b->sp || !b->rp || !b->sc || !b->rc ||
        !b->speer || !b->rpeer || !b->req) {
        bufs_free(b);
        return deso__fail(DESO_ENOMEM, "placing a sparse matrix: no memory "
                          "for %lld entries", (long long)(ns + nr));
    }
    return DESO_OK;
}

/* One move along the route (the buffers made and agreed).  The rank's
 * rows for itself go through its own send buffer, without a message.  */
static deso_err move_run(deso_ctx *ctx, const deso__spmat_route *rt,
                         const pl_csr *src, pl_csr *dst, move_what w,
                         move_bufs *b)
{
    int P = ctx->size, me = ctx->rank, nsend = 0, nrecv = 0;
    double *self = NULL, *at = b->sbuf;
    for (int q = 0; q < P; q++) {
        double *from = at;
        for (int64_t k = rt->sptr[q]; k < rt->sptr[q + 1]; k++) {
            pack_row(src, rt->srow[k], w, at);
            at += row_items(src, rt->srow[k], w);
        }
        if (q == me) self = from;
        else if (at > from) {
            b->speer[nsend] = q;
            b->sp[nsend] = from;
            b->sc[nsend++] = at - from;
        }
    }
    at = b->rbuf;
    for (int s = 0; s < P; s++) {
        int64_t n = w == MOVE_LENS ? rt->rptr[s + 1] - rt->rptr[s]
                                   : items(dst, rt->rrow, rt->rptr[s],
                                           rt->rptr[s + 1], w);
        if (s != me && n > 0) {
            b->rpeer[nrecv] = s;
            b->rp[nrecv] = at;
            b->rc[nrecv++] = n;
        }
        at += s != me ? n : 0;
    }
    DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, nsend, b->speer, b->sp,
                            b->sc, nrecv, b->rpeer, b->rp, b->rc, b->req));
    const double *next = b->rbuf;
    for (int s = 0; s < P; s++) {
        const double *in = s == me ? self : next;
        for (int64_t k = rt->rptr[s]; k < rt->rptr[s + 1]; k++) {
            unpack_row(dst, rt->rrow[k], w, in);
            in += w == MOVE_LENS ? 1 : row_items(dst, rt->rrow[k], w);
        }
        if (s != me) next = in;
    }
    return DESO_OK;
}

/* One agreed move: buffers made, every rank's outcome agreed, then run. */
static deso_err move(deso_ctx *ctx, const deso__spmat_route *rt,
                     const pl_csr *src, pl_csr *dst, move_what w,
                     deso_err local)
{
    move_bufs b;
    memset(&b, 0, sizeof b);
    if (local == DESO_OK) local = bufs_make(ctx->size, rt, src, dst, w, &b);
    deso_err err = deso__agree_counted(ctx, "placing a sparse matrix", local,
                                       NULL, 0);
    if (err == DESO_OK) err = move_run(ctx, rt, src, dst, w, &b);
    bufs_free(&b);
    return err;
}

/* The placed copy's rows: indices, lengths (after the first move: the
 * lengths sit in rowptr[r + 1] until summed), then room for the entries. */
static deso_err rows_alloc(const deso_ctx *ctx, const blas_part *part,
                           deso__spmat_data *pd)
{
    int64_t p0 = part->start[ctx->rank];
    int64_t nr = part->start[ctx->rank + 1] - p0;
    pd->rows.nrows = nr;
    pd->rows.grow = deso__malloc((size_t)(nr > 0 ? nr : 1) * sizeof(int64_t));
    pd->rows.rowptr = deso__calloc((size_t)nr + 1, sizeof(int64_t));
    DESO_CHECK(pd->rows.grow != NULL && pd->rows.rowptr != NULL, DESO_ENOMEM,
               "placing a sparse matrix: no memory for %lld rows",
               (long long)nr);
    if (nr > 0) memcpy(pd->rows.grow, part->iperm + p0, (size_t)nr * sizeof(int64_t));
    return DESO_OK;
}

static deso_err entries_alloc(deso__spmat_data *pd)
{
    pl_csr *a = &pd->rows;
    for (int64_t r = 0; r < a->nrows; r++) a->rowptr[r + 1] += a->rowptr[r];
    int64_t nnz = a->rowptr[a->nrows];
    a->col = deso__malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *a->col);
    a->val = deso__malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *a->val);
    DESO_CHECK(a->col != NULL && a->val != NULL, DESO_ENOMEM,
               "placing a sparse matrix: no memory for %lld entries",
               (long long)nnz);
    return DESO_OK;
}

deso_err deso__spmat_place(deso_ctx *ctx, deso__spmat_data *sp,
                           const blas_part *part)
{
    deso__spmat_data *pd = NULL;
    deso__spmat_route *rt = NULL;
    deso_err local = sp->m == sp->n && part->n == sp->m && part->perm != NULL
                         ? DESO_OK
                         : deso__fail(DESO_EINTERNAL, "placing a sparse "
                                      "matrix: not square or no renumbering");
    if (local == DESO_OK) local = deso__spmat_alloc(ctx, sp->m, sp->n, &pd);
    if (local == DESO_OK) {
        pd->part = part;
        memcpy(pd->start, part->start, ((size_t)ctx->size + 1) * sizeof *pd->start);
        local = rows_alloc(ctx, part, pd);
    }
    if (local == DESO_OK) local = route_make(ctx, sp, part, &rt);
    deso_err err = move(ctx, rt, &sp->rows, pd ? &pd->rows : NULL, MOVE_LENS,
                        local);
    if (err == DESO_OK) {
        local = entries_alloc(pd);
        err = move(ctx, rt, &sp->rows, &pd->rows, MOVE_COLS, local);
    }
    if (err == DESO_OK) err = move(ctx, rt, &sp->rows, &pd->rows, MOVE_VALS, DESO_OK);
    if (err == DESO_OK) {
        /* the counts stay the blocks': only the user's matrix is gathered */
        pd->nnz = sp->nnz;
        pd->id = sp->id;
        deso__halo_plan *hp;
        err = deso__spmat_halo(ctx, pd, &hp);
    }
    if (err != DESO_OK) {
        deso__spmat_data_free(pd);
        deso__spmat_route_free(rt);
        return err;
    }
    sp->placed = pd;
    sp->route = rt;
    return DESO_OK;
}

deso_err deso__spmat_place_values(deso_ctx *ctx, deso__spmat_data *sp)
{
    if (sp->placed == NULL) return DESO_OK;
    return move(ctx, sp->route, &sp->rows, &sp->placed->rows, MOVE_VALS,
                DESO_OK);
}
