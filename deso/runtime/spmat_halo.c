/* The halo plan of a sparse matrix's product, and the exchanges it runs.
 *
 * x (length n) lives in contiguous blocks: the matrix's row blocks when it
 * is square (so that y = A x and x share a distribution, as a solver's
 * vectors must), else balanced blocks of n; or, for a matrix placed by a
 * renumbered partition (a graph partition's), by that partition.  Each rank's rows name the x
 * entries it lacks (placement/halo.h's receive lists); one all-reduce of
 * the P x P table of list lengths tells every owner how many it must
 * send, and the receivers then send their lists to the owners.  From
 * then on a product needs one message per (owner, receiver) pair that
 * shares an entry: the halo exchange, counted as every exchange is.  The
 * transposed product runs the same messages backwards, adding.          */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/halo.h"
#include "deso/runtime/runtime.h"

/* ---- contiguous blocks as an owner map ------------------------------------ */

typedef struct col_blocks {
    const int64_t *start;     /* nparts + 1                                 */
    int nparts;
} col_blocks;

static int blocks_rank(int64_t j, const void *arg)
{
    const col_blocks *b = arg;
    int lo = 0, hi = b->nparts;         /* start[lo] <= j < start[hi]     */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (b->start[mid] <= j) lo = mid;
        else hi = mid;
    }
    return lo;
}

static int64_t blocks_local(int64_t j, const void *arg)
{
    const col_blocks *b = arg;
    return j - b->start[blocks_rank(j, arg)];
}

/* ---- a renumbered partition as an owner map --------------------------------- */

static int renumbered_rank(int64_t j, const void *arg)
{
    return blas_part_owner(arg, j);
}

static int64_t renumbered_local(int64_t j, const void *arg)
{
    const blas_part *p = arg;
    int64_t pos = blas_part_pos(p, j);
    return pos - p->start[blas_part_pos_owner(p, pos)];
}

/* Where sp's product reads x: its renumbered partition, else the blocks
 * cb describes.                                                           */
static pl_owner x_owner(const deso__spmat_data *sp, const col_blocks *cb)
{
    if (sp->part != NULL)
        return (pl_owner){renumbered_rank, renumbered_local, sp->part};
    return (pl_owner){blocks_rank, blocks_local, cb};
}

void deso__halo_plan_free(deso__halo_plan *hp)
{
    if (hp == NULL) return;
    pl_halo_free(&hp->h);
    free(hp->xstart);
    free(hp->lcol);
    free(hp->hrow);
    free(hp->speer);
    free(hp->rpeer);
    free(hp->scount);
    free(hp->rcount);
    free(hp->sptr);
    free(hp->rptr);
    free(hp->sbuf);
    free(hp->rbuf);
    free(hp->ext);
    free(hp->req);
    free(hp);
}

void deso__spmat_xstart(const deso_ctx *ctx, const deso__spmat_data *sp,
                        int64_t *xstart)
{
    if (sp->part != NULL) {
        memcpy(xstart, sp->part->start, ((size_t)ctx->size + 1) * sizeof *xstart);
        return;
    }
    if (sp->m == sp->n) {
        memcpy(xstart, sp->start, ((size_t)ctx->size + 1) * sizeof *xstart);
        return;
    }
    pl_blocks b = {sp->n, ctx->size};
    for (int r = 0; r < ctx->size; r++)
        pl_blocks_range(&b, r, &xstart[r], &xstart[r + 1]);
}

/* The rows that read a halo entry (a local column past the own ones),
 * ascending, and whether the product runs the others while the halo is
 * in flight, reading x where it lies, and then these with x in two
 * pieces (hp->split), or copies x's own entries ahead of the halo
 * (hp->ext) and runs every row on the copy.  Splitting tests each of
 * these rows' entries for the piece it reads; the copy is a read and a
 * write of every own entry: split while these rows hold no more entries
 * than the rank owns (a row block of a mesh: its boundary rows only).   */
static deso_err halo_rows(const pl_csr *A, deso__halo_plan *hp)
{
    int64_t nrows = 0, entries = 0;
    for (int64_t i = 0; i < A->nrows; i++)
        for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++)
            if (hp->lcol[e] >= hp->nown) {
                nrows++;
                entries += A->rowptr[i + 1] - A->rowptr[i];
                break;
            }
    hp->split = entries <= hp->nown;
    if (!hp->split) return DESO_OK;
    hp->hrow = deso__malloc((size_t)(nrows > 0 ? nrows : 1) *
                            sizeof *hp->hrow);
    DESO_CHECK(hp->hrow != NULL, DESO_ENOMEM, "halo plan: no memory");
    for (int64_t i = 0; i < A->nrows; i++)
        for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++)
            if (hp->lcol[e] >= hp->nown) {
                hp->hrow[hp->nhrow++] = i;
                break;
            }
    return DESO_OK;
}

/* Everything a plan needs before the send lists are known: x's blocks,
 * the receive lists, the local columns, the peers it receives from.     */
static deso_err plan_receives(const deso_ctx *ctx, const deso__spmat_data *sp,
                              deso__halo_plan *hp)
{
    int P = ctx->size, me = ctx->rank;
    hp->xstart = deso__malloc(((size_t)P + 1) * sizeof *hp->xstart);
    DESO_CHECK(hp->xstart != NULL, DESO_ENOMEM, "halo plan: no memory");
    deso__spmat_xstart(ctx, sp, hp->xstart);
    col_blocks cb = {hp->xstart, P};
    pl_owner own = x_owner(sp, &cb);
    DESO_TRY(pl_halo_recv(&sp->rows, &own, me, P, &hp->h));
    hp->nown = hp->xstart[me + 1] - hp->xstart[me];
    hp->nhalo = hp->h.recv_ptr[P];
    DESO_TRY(pl_halo_localise(&sp->rows, &own, me, hp->nown, &hp->h,
                              &hp->lcol));
    DESO_TRY(halo_rows(&sp->rows, hp));
    hp->rpeer = deso__malloc((size_t)P * sizeof *hp->rpeer);
    hp->rcount = deso__malloc((size_t)P * sizeof *hp->rcount);
    hp->rptr = deso__malloc((size_t)P * sizeof *hp->rptr);
    hp->rbuf = deso__malloc((size_t)(hp->nhalo > 0 ? hp->nhalo : 1) *
                            sizeof(double));
    hp->speer = deso__malloc((size_t)P * sizeof *hp->speer);
    hp->scount = deso__malloc((size_t)P * sizeof *hp->scount);
    hp->sptr = deso__malloc((size_t)P * sizeof *hp->sptr);
    hp->req = deso__malloc(2 * (size_t)P * sizeof *hp->req);
    hp->ext = deso__malloc((size_t)(hp->nown + hp->nhalo > 0
                                        ? hp->nown + hp->nhalo : 1) *
                           sizeof(double));
    hp->h.send_ptr = deso__calloc((size_t)P + 1, sizeof *hp->h.send_ptr);
    DESO_CHECK(hp->rpeer && hp->rcount && hp->rptr && hp->rbuf && hp->speer &&
                   hp->scount && hp->sptr && hp->req && hp->ext &&
                   hp->h.send_ptr,
               DESO_ENOMEM, "halo plan: no memory");
    for (int s = 0; s < P; s++) {
        int64_t c = hp->h.recv_ptr[s + 1] - hp->h.recv_ptr[s];
        if (c == 0) continue;
        hp->rpeer[hp->nrecv] = s;
        hp->rcount[hp->nrecv] = c;
        hp->rptr[hp->nrecv++] = hp->rbuf + hp->h.recv_ptr[s];
    }
    return DESO_OK;
}

/* The send side, from column `me` of the table of list lengths
 * (tab[r P + s]: what rank r receives from rank s).                      */
static deso_err plan_sends(const deso_ctx *ctx, const double *tab,
                           deso__halo_plan *hp)
{
    int P = ctx->size, me = ctx->rank;
    for (int r = 0; r < P; r++) {
        int64_t c = (int64_t)tab[(size_t)r * P + me];
        hp->h.send_ptr[r + 1] = hp->h.send_ptr[r] + c;
    }
    int64_t total = hp->h.send_ptr[P];
    hp->h.send_idx = deso__malloc((size_t)(total > 0 ? total : 1) *
                                  sizeof *hp->h.send_idx);
    hp->sbuf = deso__malloc((size_t)(total > 0 ? total : 1) * sizeof(double));
    DESO_CHECK(hp->h.send_idx != NULL && hp->sbuf != NULL, DESO_ENOMEM,
               "halo plan: no memory for %lld sends", (long long)total);
    for (int r = 0; r < P; r++) {
        int64_t c = hp->h.send_ptr[r + 1] - hp->h.send_ptr[r];
        if (c == 0) continue;
        hp->speer[hp->nsend] = r;
        hp->scount[hp->nsend] = c;
        hp->sptr[hp->nsend++] = hp->sbuf + hp->h.send_ptr[r];
    }
    return DESO_OK;
}

/* The receivers send their lists (as doubles) to the owners, which keep
 * them as their send lists, then as local positions.                     */
static deso_err swap_lists(deso_ctx *ctx, const deso__spmat_data *sp,
                           deso__halo_plan *hp)
{
    for (int64_t k = 0; k < hp->nhalo; k++)
        hp->rbuf[k] = (double)hp->h.recv_idx[k];
    DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, hp->nrecv, hp->rpeer,
                            hp->rptr, hp->rcount, hp->nsend, hp->speer,
                            hp->sptr, hp->scount, hp->req));
    int64_t x0 = hp->xstart[ctx->rank], nsend = hp->h.send_ptr[ctx->size];
    if (sp->part != NULL)
        for (int64_t k = 0; k < nsend; k++)
            hp->h.send_idx[k] = renumbered_local((int64_t)hp->sbuf[k], sp->part);
    else
        for (int64_t k = 0; k < nsend; k++)
            hp->h.send_idx[k] = (int64_t)hp->sbuf[k] - x0;
    return DESO_OK;
}

static deso_err halo_plan_make(deso_ctx *ctx, deso__spmat_data *sp,
                               deso__halo_plan **out)
{
    static const char *fn = "halo plan";
    *out = NULL;
    int P = ctx->size;
    deso__halo_plan *hp = deso__calloc(1, sizeof *hp);
    double *tab = NULL;
    deso_err err = hp == NULL ? deso__fail(DESO_ENOMEM, "halo plan: no memory")
                              : plan_receives(ctx, sp, hp);
    if (err == DESO_OK) {
        tab = deso__calloc((size_t)P * (size_t)P, sizeof *tab);
        if (tab == NULL) err = deso__fail(DESO_ENOMEM, "halo plan: no memory");
    }
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    if (err == DESO_OK) {
        for (int s = 0; s < P; s++)
            tab[(size_t)ctx->rank * P + s] =
                (double)(hp->h.recv_ptr[s + 1] - hp->h.recv_ptr[s]);
        err = deso__allreduce(ctx, ctx->comm, tab, (int64_t)P * P, DESO__SUM);
        if (err == DESO_OK) err = plan_sends(ctx, tab, hp);
        if (err == DESO_OK) err = deso__sparse_intern(ctx, sp, tab, &sp->facts);
        /* every rank's room is made before the lists move                 */
        err = deso__agree_counted(ctx, fn, err, NULL, 0);
    }
    if (err == DESO_OK) err = swap_lists(ctx, sp, hp);
    free(tab);
    if (err != DESO_OK) {
        deso__halo_plan_free(hp);
        return err;
    }
    *out = hp;
    return DESO_OK;
}

/* The plan's local columns say every global column again (own entries
 * by x's blocks or renumbering, the halo by its receive list), so the
 * 64-bit columns, as large as the values, are not kept beside them.    */
deso_err deso__spmat_halo(deso_ctx *ctx, deso__spmat_data *sp,
                          deso__halo_plan **out)
{
    if (sp->halo == NULL) {
        DESO_TRY(halo_plan_make(ctx, sp, &sp->halo));
        free(sp->rows.col);
        sp->rows.col = NULL;
    }
    *out = sp->halo;
    return DESO_OK;
}

int64_t deso__spmat_col(const deso__spmat_data *sp, int me, int64_t e)
{
    if (sp->rows.col != NULL) return sp->rows.col[e];
    const deso__halo_plan *hp = sp->halo;
    int64_t l = hp->lcol[e];
    if (l >= hp->nown) return hp->h.recv_idx[l - hp->nown];
    if (sp->part != NULL) return sp->part->iperm[sp->part->start[me] + l];
    return hp->xstart[me] + l;
}

deso_err deso__halo_start(deso_ctx *ctx, deso__halo_plan *hp,
                          const double *own, deso__xfer *x)
{
    for (int64_t k = 0; k < hp->h.send_ptr[ctx->size]; k++)
        hp->sbuf[k] = own[hp->h.send_idx[k]];
    return deso__exchange_start(ctx->comm, DESO__TAG_EXCHANGE, hp->nsend,
                                hp->speer, hp->sptr, hp->scount, hp->nrecv,
                                hp->rpeer, hp->rptr, hp->rcount, hp->req, x);
}

deso_err deso__halo_exchange(deso_ctx *ctx, deso__halo_plan *hp,
                             const double *own, double *halo)
{
    deso__xfer x;
    DESO_TRY(deso__halo_start(ctx, hp, own, &x));
    DESO_TRY(deso__exchange_finish(&x));
    if (hp->nhalo > 0)
        memcpy(halo, hp->rbuf, (size_t)hp->nhalo * sizeof(double));
    return DESO_OK;
}

deso_err deso__halo_reverse(deso_ctx *ctx, deso__halo_plan *hp, double *zext)
{
    if (hp->nhalo > 0)
        memcpy(hp->rbuf, zext + hp->nown, (size_t)hp->nhalo * sizeof(double));
    DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_EXCHANGE, hp->nrecv,
                            hp->rpeer, hp->rptr, hp->rcount, hp->nsend,
                            hp->speer, hp->sptr, hp->scount, hp->req));
    for (int64_t k = 0; k < hp->h.send_ptr[ctx->size]; k++)
        zext[hp->h.send_idx[k]] += hp->sbuf[k];
    return DESO_OK;
}
