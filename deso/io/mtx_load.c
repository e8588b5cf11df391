/* Matrix Market files into deso matrices (deso_mat_from_mtx), and the
 * diagonal of a matrix as a vector (deso_mat_diag).
 *
 * deso_mat_from_mtx: rank 0 reads the file as a stream (deso/io/mtx.h,
 * hostile-input-safe) and shares the outcome of its header (error code,
 * message, shape) so that every rank returns the same error; then it
 * reads the file a piece at a time, each piece's outcome agreed before
 * its data moves, so that a malformed line anywhere is every rank's error
 * and no rank waits for data that will not come.  No rank holds the
 * matrix, nor rank 0 the file:
 *   - a coordinate file comes in chunks of at most CHUNK entries, which
 *     rank 0 broadcasts; each rank adds the ones it owns into its local
 *     piece, or, out of core, slab by slab (keep_mine_ooc: each slab the
 *     chunk touches read, added to and written back);
 *   - an array file comes in units of whole global columns (whole block
 *     columns when one fits), which rank 0 parses into one buffer, then
 *     packs and sends each rank its part; the part of a contiguous range
 *     of global columns is a contiguous range of the rank's local
 *     columns, so it lands in its piece, or its local array file, as one
 *     write.  A unit is at most UNIT_DOUBLES, and out of core at most a
 *     slab buffer: rank 0 holds one unit besides the slab buffers.      */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "deso/runtime/ooc.h"
#include "deso/io/mtx.h"
#include "deso/io/api_io.h"
#include "deso/io/io.h"

#define CHUNK ((int64_t)1 << 16)        /* entries per broadcast          */
#define UNIT_DOUBLES ((int64_t)1 << 22) /* 32 MiB: an array file's unit   */
#define MSGLEN 256                 /* bytes of the parser's message sent   */

static int64_t unit_doubles = UNIT_DOUBLES;     /* deso__mtx_unit_limit   */

void deso__mtx_unit_limit(int64_t doubles)
{
    unit_doubles = doubles >= 1 && doubles <= UNIT_DOUBLES ? doubles
                                                           : UNIT_DOUBLES;
}

/* Rank 0's outcome on every rank: the code, the message (so deso_last_error
 * reads the same everywhere) and the header.                             */
static deso_err share_outcome(deso_ctx *ctx, deso_err err,
                              deso__mtx_info *h)
{
    double head[4] = {(double)err, (double)h->m, (double)h->n,
                      (double)h->coordinate};
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
    h->m = (int64_t)head[1];
    h->n = (int64_t)head[2];
    h->coordinate = (int)head[3];
    if (err != DESO_OK && ctx->rank != 0) return deso__fail(err, "%s", msg);
    return err;
}

/* ---- coordinate files: chunks of entries -------------------------------- */

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
static deso_err keep_mine_ooc(deso_ctx *ctx, deso__view *w,
                              const double *buf, int64_t cnt, int64_t *key)
{
    deso__ooc *f = w->ooc;
    int64_t nk = 0;
    for (int64_t k = 0, li, lj; k < cnt; k++)
        if (owned(ctx, &w->lay, buf, k, &li, &lj))
            key[nk++] = lj / f->slab * cnt + k;
    qsort(key, (size_t)nk, sizeof *key, key_cmp);
    double *s = deso__ooc_slab_buf(ctx, 0);
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

/* Rank 0's chunk buffers: the stream's entries, and their triples.       */
typedef struct chunk_bufs {
    int64_t *row, *col, *key;
    double *val, *buf;
} chunk_bufs;

static void chunk_free(chunk_bufs *c)
{
    free(c->row);
    free(c->col);
    free(c->key);
    free(c->val);
    free(c->buf);
}

/* Every entry of the stream (rank 0's; NULL elsewhere) into view w, a
 * chunk at a time.  Agreed.  Collective.                                 */
static deso_err load_entries(deso_ctx *ctx, deso__mtx_stream *s,
                             deso__view *w, const char *fn)
{
    chunk_bufs c = {NULL, NULL, NULL, NULL, NULL};
    size_t len = (size_t)CHUNK;
    c.buf = deso__malloc(3 * len * sizeof(double));
    if (w->ooc != NULL) c.key = deso__malloc(len * sizeof *c.key);
    if (ctx->rank == 0) {
        c.row = deso__malloc(len * sizeof *c.row);
        c.col = deso__malloc(len * sizeof *c.col);
        c.val = deso__malloc(len * sizeof *c.val);
    }
    bool none = c.buf == NULL || (w->ooc != NULL && c.key == NULL) ||
                (ctx->rank == 0 && (!c.row || !c.col || !c.val));
    deso_err err = deso__agree_counted(
        ctx, fn, none ? deso__fail(DESO_ENOMEM, "%s: no memory", fn) : DESO_OK,
        NULL, 0);
    /* a failed slab write on one rank stops every rank at the next chunk */
    deso_err io = DESO_OK;
    while (err == DESO_OK) {
        int64_t got[1] = {0};
        deso_err mine = io;
        if (ctx->rank == 0 && mine == DESO_OK)
            mine = deso__mtx_entries(s, CHUNK, c.row, c.col, c.val, got);
        err = deso__agree_counted(ctx, fn, mine, got, 1);
        if (err != DESO_OK || got[0] == 0) break;
        if (ctx->rank == 0)
            for (int64_t k = 0; k < got[0]; k++) {
                c.buf[3 * k] = (double)c.row[k];
                c.buf[3 * k + 1] = (double)c.col[k];
                c.buf[3 * k + 2] = c.val[k];
            }
        err = deso__bcast(ctx->comm, c.buf, 3 * got[0], 0);
        if (err == DESO_OK && w->ooc == NULL)
            keep_mine(ctx, w, c.buf, got[0]);
        else if (err == DESO_OK)
            io = keep_mine_ooc(ctx, w, c.buf, got[0], c.key);
    }
    chunk_free(&c);
    return err;
}

/* ---- array files: units of whole columns -------------------------------- */

/* Grid position q's part of the unit of global columns [j0, j1) held in
 * g (m rows each): its local rows, and its local columns [*lc0, *lc0 +
 * *cnt), which are contiguous since the columns a grid column owns keep
 * their order in its piece.                                              */
static void unit_part(const blas_layout *l, int q, int64_t j0, int64_t j1,
                      int64_t *rows, int64_t *lc0, int64_t *cnt)
{
    int qr = q / l->pc, qc = q % l->pc;
    *rows = blas_numroc(l->m, l->b, qr, l->pr);
    *lc0 = blas_numroc(j0, l->nb, qc, l->pc);
    *cnt = blas_numroc(j1, l->nb, qc, l->pc) - *lc0;
}

/* Packs q's part of the unit (see unit_part) column-major into out.      */
static void unit_pack(const blas_layout *l, int q, int64_t j0, int64_t j1,
                      const double *g, double *out)
{
    int qr = q / l->pc, qc = q % l->pc;
    int64_t rows, lc0, cnt;
    unit_part(l, q, j0, j1, &rows, &lc0, &cnt);
    for (int64_t lj = 0; lj < cnt; lj++) {
        const double *col =
            g + (blas_cyc_global(l->nb, l->pc, qc, lc0 + lj) - j0) * l->m;
        for (int64_t li = 0; li < rows; li++)
            out[lj * rows + li] = col[blas_cyc_global(l->b, l->pr, qr, li)];
    }
}

/* Global columns per unit: as many as cap doubles hold, whole block
 * columns when one fits, at least one column.                            */
static int64_t unit_width(const blas_layout *l, int64_t cap)
{
    int64_t wd = cap / (l->m > 0 ? l->m : 1);
    if (wd >= l->nb) wd = wd / l->nb * l->nb;
    if (wd < 1) wd = 1;
    return wd < l->n ? wd : l->n;
}

/* Where this rank's part of a unit lands: its piece's columns, or (out of
 * core) the first slab buffer, written to the file after.               */
static double *unit_dest(deso_ctx *ctx, deso__view *w, int64_t lc0)
{
    return w->ooc != NULL ? deso__ooc_slab_buf(ctx, 0) : w->data + lc0 * w->rows;
}

/* Rank 0 hands out the unit in g: its own part packed into place, every
 * other rank's packed into pk and sent.                                  */
static deso_err unit_send(deso_ctx *ctx, deso__view *w, int64_t j0,
                          int64_t j1, const double *g, double *pk)
{
    const blas_layout *l = &w->lay;
    for (int q = 0; q < ctx->size; q++) {
        int64_t rows, lc0, cnt;
        unit_part(l, q, j0, j1, &rows, &lc0, &cnt);
        int64_t len = rows * cnt;
        if (len == 0) continue;
        double *out = q == 0 ? unit_dest(ctx, w, lc0) : pk;
        unit_pack(l, q, j0, j1, g, out);
        if (q != 0)
            DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &q, &out,
                                    &len, 0, NULL, NULL, NULL,
                                    &(MPI_Request){0}));
    }
    return DESO_OK;
}

/* Every column of the stream (rank 0's; NULL elsewhere) into view w, a
 * unit at a time.  Agreed.  Collective.                                  */
static deso_err load_columns(deso_ctx *ctx, deso__mtx_stream *s,
                             deso__view *w, const char *fn)
{
    const blas_layout *l = &w->lay;
    /* rank 0's cap, the one that counts: every rank needs the width      */
    double cap_d = (double)unit_doubles;
    DESO_TRY(deso__bcast(ctx->comm, &cap_d, 1, 0));
    int64_t cap = (int64_t)cap_d;
    if (w->ooc != NULL) {
        int64_t k;
        DESO_TRY(deso__ooc_stream_width(ctx, w, 1, DESO_OK, fn, &k));
        /* what every slab buffer holds now (a rank's may hold more)      */
        int64_t held = blas_numroc(l->m, l->b, 0, l->pr) * k;
        if (held < cap) cap = held;
    }
    int64_t wd = unit_width(l, cap);
    double *g = NULL, *pk = NULL;
    deso_err err = DESO_OK;
    if (ctx->rank == 0) {
        g = deso__malloc((size_t)(l->m * wd) * sizeof *g);
        /* out of core, the second slab buffer holds any rank's part      */
        pk = w->ooc != NULL ? deso__ooc_slab_buf(ctx, 1)
                            : deso__malloc((size_t)(l->m * wd) * sizeof *pk);
        if (g == NULL || pk == NULL)
            err = deso__fail(DESO_ENOMEM, "%s: no memory for %lld columns",
                             fn, (long long)wd);
    }
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    deso_err io = DESO_OK;
    for (int64_t j0 = 0; err == DESO_OK && j0 < l->n; j0 += wd) {
        int64_t j1 = l->n - j0 < wd ? l->n : j0 + wd;
        deso_err mine = io;
        if (ctx->rank == 0 && mine == DESO_OK)
            mine = deso__mtx_columns(s, j0, j1, g);
        /* a unit moves only when rank 0 read it and every write went well */
        err = deso__agree_counted(ctx, fn, mine, NULL, 0);
        int64_t rows, lc0, cnt;
        unit_part(l, ctx->rank, j0, j1, &rows, &lc0, &cnt);
        int64_t len = rows * cnt;
        double *dest = unit_dest(ctx, w, lc0);
        if (err == DESO_OK && ctx->rank == 0)
            err = unit_send(ctx, w, j0, j1, g, pk);
        else if (err == DESO_OK && len > 0)
            err = deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL,
                                 NULL, 1, &(int){0}, &dest, &len,
                                 &(MPI_Request){0});
        if (err == DESO_OK && w->ooc != NULL && len > 0)
            io = deso__ooc_io_counted(w->ooc, true, lc0, cnt, dest);
    }
    free(g);
    if (w->ooc == NULL) free(pk);
    if (err == DESO_OK) err = deso__agree_counted(ctx, fn, io, NULL, 0);
    return err;
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
    deso__mtx_stream *s = NULL;
    deso__mtx_info h = {0, 0, 0, 0, 0, 0};
    deso_err err = DESO_OK;
    if (ctx->rank == 0) {
        if (path == NULL)
            err = deso__fail(DESO_ENULL, "%s: path is NULL (arg 2)", fn);
        else
            err = deso__mtx_open_file(path, &s);
        if (err == DESO_OK) h = *deso__mtx_info_of(s);
    }
    err = share_outcome(ctx, err, &h);
    if (err == DESO_OK) err = deso__agree_counted(ctx, fn, mine, NULL, 0);
    if (err != DESO_OK) {
        deso__mtx_close(s);
        return err;
    }
    uint64_t hash0 = ctx->hash, id0 = ctx->next_id;
    deso_mat *a = NULL;
    blas_layout lay = opt_default_mat(&ctx->df, h.m, h.n);
    deso__view *home = NULL;
    err = deso__mat_home(ctx, &lay, DESO_OK, fn, &home);
    if (err == DESO_OK) err = deso__mat_new_home(ctx, &lay, home, &a);
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    if (err == DESO_OK && h.coordinate)
        err = load_entries(ctx, s, a->h.val->views, fn);
    else if (err == DESO_OK && h.m > 0 && h.n > 0)
        err = load_columns(ctx, s, a->h.val->views, fn);
    deso__mtx_close(s);
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
