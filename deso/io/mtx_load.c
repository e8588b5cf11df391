/* Matrix Market files into deso matrices (deso_mat_from_mtx), and the
 * diagonal of a matrix as a vector (deso_mat_diag).
 *
 * deso_mat_from_mtx: rank 0 parses (deso__mtx_read, hostile-input-safe),
 * broadcasts the outcome (error code, message, shape) so that every rank
 * returns the same error, then broadcasts the entries in chunks of at most
 * CHUNK (row, column, value) triples; each rank adds the ones it owns into
 * its local piece of the matrix.  No rank holds the dense matrix: rank 0
 * holds the entry list, every rank one chunk and its own local piece.
 * An out-of-core piece is not held either: a chunk's entries are added
 * slab by slab (keep_mine_ooc), each slab they touch read, added to and
 * written back, so a rank holds one chunk and its slab buffers.  (Rank 0's
 * parser still holds the whole entry list: a matrix larger than memory
 * comes from a matrix file, deso_mat_from_file, which deso-mtx2bin makes
 * from a Matrix Market file.)                                            */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "deso/runtime/ooc.h"
#include "deso/io/mtx.h"
#include "deso/io/api_io.h"

#define CHUNK ((int64_t)1 << 16)   /* entries per broadcast               */
#define MSGLEN 256                 /* bytes of the parser's message sent   */

/* Rank 0's outcome on every rank: the code, the message (so deso_last_error
 * reads the same everywhere) and the shape.                               */
static deso_err share_outcome(deso_ctx *ctx, deso_err err, int64_t *m,
                              int64_t *n, int64_t *nnz)
{
    double head[4] = {(double)err, (double)*m, (double)*n, (double)*nnz};
    char msg[MSGLEN];
    memset(msg, 0, sizeof msg);
    if (ctx->rank == 0 && err != DESO_OK)
        snprintf(msg, sizeof msg, "%s", deso_last_error());
    DESO_TRY(deso__bcast(ctx->comm, head, 4, 0));
    if (ctx->size > 1)
        DESO_TRY(deso__mpi(MPI_Bcast(msg, MSGLEN, MPI_CHAR, 0, ctx->comm),
                           "MPI_Bcast (Matrix Market outcome)"));
    msg[MSGLEN - 1] = '\0';
    err = (deso_err)(int)head[0];
    *m = (int64_t)head[1];
    *n = (int64_t)head[2];
    *nnz = (int64_t)head[3];
    if (err != DESO_OK && ctx->rank != 0) return deso__fail(err, "%s", msg);
    return err;
}

/* Whether this rank owns entry k of a chunk (triples), and where in its
 * local piece: (*li, *lj).                                               */
static bool owned(const deso_ctx *ctx, const blas_layout *l,
                  const double *buf, int64_t k, int64_t *li, int64_t *lj)
{
    int64_t i = (int64_t)buf[3 * k], j = (int64_t)buf[3 * k + 1];
    *li = (i / (l->b * l->pr)) * l->b + i % l->b;
    *lj = (j / (l->nb * l->pc)) * l->nb + j % l->nb;
    return (int)((i / l->b) % l->pr) == ctx->coord[0] &&
           (int)((j / l->nb) % l->pc) == ctx->coord[1];
}

/* Adds the entries of one chunk (triples) that this rank owns.            */
static void keep_mine(const deso_ctx *ctx, deso__view *w, const double *buf,
                      int64_t cnt)
{
    for (int64_t k = 0, li, lj; k < cnt; k++)
        if (owned(ctx, &w->lay, buf, k, &li, &lj))
            w->data[lj * w->rows + li] += buf[3 * k + 2];
}

/* Orders slab-and-entry keys.                                            */
static int key_cmp(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* keep_mine for an out-of-core piece: the chunk's entries this rank owns
 * are ordered by slab, keeping the chunk's order within a slab (keys
 * slab * cnt + k), so that duplicates add up in the file's order as in
 * core; each slab touched is read, added to and written back.  key holds
 * cnt.                                                                  */
static deso_err keep_mine_ooc(const deso_ctx *ctx, deso__view *w,
                              const double *buf, int64_t cnt, int64_t *key)
{
    deso__ooc *f = w->ooc;
    int64_t nk = 0;
    for (int64_t k = 0, li, lj; k < cnt; k++)
        if (owned(ctx, &w->lay, buf, k, &li, &lj))
            key[nk++] = lj / f->slab * cnt + k;
    qsort(key, (size_t)nk, sizeof *key, key_cmp);
    double *s = ctx->ooc_buf[0];
    for (int64_t a = 0; a < nk;) {
        int64_t sl = key[a] / cnt, c0 = sl * f->slab;
        int64_t wd = f->cols - c0 < f->slab ? f->cols - c0 : f->slab;
        DESO_TRY(deso__ooc_io_counted(f, false, c0, wd, s));
        for (int64_t li, lj; a < nk && key[a] / cnt == sl; a++) {
            int64_t k = key[a] % cnt;
            owned(ctx, &w->lay, buf, k, &li, &lj);
            s[(lj - c0) * w->rows + li] += buf[3 * k + 2];
        }
        DESO_TRY(deso__ooc_io_counted(f, true, c0, wd, s));
    }
    return DESO_OK;
}

deso_err deso__mat_from_mtx(deso_ctx *ctx, const char *path, deso_mat **out)
{
    const char *fn = "deso_mat_from_mtx";
    DESO_TRY(deso__ctx_check(ctx, fn));
    /* a NULL out on one rank must not leave the others in a collective    */
    deso_err mine = out == NULL
                        ? deso__fail(DESO_ENULL, "%s: out is NULL (arg 3)", fn)
                        : DESO_OK;
    if (out != NULL) *out = NULL;
    deso__mtx x;
    memset(&x, 0, sizeof x);
    deso_err err = DESO_OK;
    if (ctx->rank == 0) {
        if (path == NULL)
            err = deso__fail(DESO_ENULL, "%s: path is NULL (arg 2)", fn);
        else
            err = deso__mtx_read(path, &x);
    }
    int64_t m = x.m, n = x.n, nnz = x.nnz;
    err = share_outcome(ctx, err, &m, &n, &nnz);
    if (err == DESO_OK) err = deso__agree_counted(ctx, fn, mine, NULL, 0);
    if (err != DESO_OK) {
        deso__mtx_free(&x);
        return err;
    }
    uint64_t hash0 = ctx->hash, id0 = ctx->next_id;
    deso_mat *a = NULL;
    blas_layout lay = opt_default_mat(&ctx->df, m, n);
    deso__view *home = NULL;
    err = deso__mat_home(ctx, &lay, DESO_OK, fn, &home);
    if (err == DESO_OK) err = deso__mat_new_home(ctx, &lay, home, &a);
    double *buf = NULL;
    int64_t *key = NULL;
    int64_t chunk = nnz < CHUNK ? nnz : CHUNK;
    if (err == DESO_OK && chunk > 0) {
        buf = deso__malloc((size_t)(3 * chunk) * sizeof(double));
        if (home != NULL) key = deso__malloc((size_t)chunk * sizeof *key);
        if (buf == NULL || (home != NULL && key == NULL))
            err = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    /* a failed slab write stops the writing, not the broadcasts          */
    deso_err io = DESO_OK;
    for (int64_t k0 = 0; k0 < nnz && err == DESO_OK; k0 += chunk) {
        int64_t cnt = nnz - k0 < chunk ? nnz - k0 : chunk;
        if (ctx->rank == 0)
            for (int64_t k = 0; k < cnt; k++) {
                buf[3 * k] = (double)x.row[k0 + k];
                buf[3 * k + 1] = (double)x.col[k0 + k];
                buf[3 * k + 2] = x.val[k0 + k];
            }
        err = deso__bcast(ctx->comm, buf, 3 * cnt, 0);
        if (err == DESO_OK && home == NULL)
            keep_mine(ctx, a->h.val->views, buf, cnt);
        else if (err == DESO_OK && io == DESO_OK)
            io = keep_mine_ooc(ctx, a->h.val->views, buf, cnt, key);
    }
    free(buf);
    free(key);
    deso__mtx_free(&x);
    if (home != NULL && err == DESO_OK)
        err = deso__agree_counted(ctx, fn, io, NULL, 0);
    if (err != DESO_OK) {
        if (a != NULL) deso_mat_destroy(&a);
        /* as if never called, so that the ranks' call hashes still agree  */
        ctx->hash = hash0;
        ctx->next_id = id0;
        return err;
    }
    *out = a;
    return DESO_OK;
}

/* ---- the diagonal ------------------------------------------------------- */

static double diag_at(int64_t i, void *arg)
{
    return ((const double *)arg)[i];
}

deso_err deso__mat_diag(const deso_mat *a, deso_vec *d)
{
    const char *fn = "deso_mat_diag";
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__handle_check(a ? &a->h : NULL, BLAS_MAT, &ctx, fn, "a"));
    DESO_TRY(deso__handle_check(d ? &d->h : NULL, BLAS_VEC, &ctx, fn, "d"));
    DESO_CHECK(d->h.parent == NULL, DESO_ENOTSUP,
               "%s: d (arg 2) is a view: write the diagonal into a vector, "
               "then dcopy it into the view", fn);
    DESO_TRY(deso__view_sync(ctx, (deso__handle *)&a->h));
    DESO_TRY(deso__value_usable(a->h.val, fn));
    int64_t k = a->h.val->m < a->h.val->n ? a->h.val->m : a->h.val->n;
    DESO_CHECK(d->h.val->n == k, DESO_ESIZE,
               "%s: d has length %lld, the diagonal %lld", fn,
               (long long)d->h.val->n, (long long)k);
    if (!a->h.val->ready) DESO_TRY(deso__force(ctx));
    const deso__value *v = a->h.val;
    DESO_TRY(deso__value_usable(v, fn));
    DESO_CHECK(v->ready && v->views != NULL, DESO_EINTERNAL,
               "%s: matrix not computed after a force", fn);
    DESO_TRY(deso__mat_in_core(v, fn));
    double *diag = deso__malloc((size_t)(k > 0 ? k : 1) * sizeof(double));
    deso_err err = deso__agree_counted(
        ctx, fn, diag ? DESO_OK : deso__fail(DESO_ENOMEM, "%s: no memory", fn),
        NULL, 0);
    if (err != DESO_OK) {
        free(diag);
        return err;
    }
    memset(diag, 0, (size_t)(k > 0 ? k : 1) * sizeof(double));
    /* a matrix is never replicated: each diagonal element lives on exactly
     * one rank, so a sum over ranks assembles the diagonal               */
    const deso__view *w = v->views;
    const blas_layout *l = &w->lay;
    for (int64_t lj = 0; lj < w->cols; lj++) {
        int64_t j = blas_cyc_global(l->nb, l->pc, ctx->coord[1], lj);
        if (j >= k || (int)((j / l->b) % l->pr) != ctx->coord[0]) continue;
        int64_t li = (j / (l->b * l->pr)) * l->b + j % l->b;
        diag[j] = w->data[lj * w->rows + li];
    }
    err = deso__allreduce(ctx, ctx->comm, diag, k, DESO__SUM);
    deso_vec *tmp = NULL;
    if (err == DESO_OK) err = deso__vec_from_fn(ctx, k, diag_at, diag, &tmp);
    if (err == DESO_OK) err = deso__dcopy(k, tmp, 1, d, 1);
    deso_vec_destroy(&tmp);
    free(diag);
    return err;
}
