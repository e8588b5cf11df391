/* Sparse matrices: creating them from global CSR arrays on a root, from
 * each rank's own rows, and from a generator (a Matrix Market file is in
 * deso/io/spmat_mtx.c), all through one agreed ending (deso__spmat_publish).
 *
 * Every rank holds a contiguous block of rows in CSR with global columns,
 * sorted and unique within a row: the form deso/io/sparse_load.h reads and
 * placement/halo.h plans products on.  Indices cross the wire as doubles
 * (exact below 2^53, which the shape checks enforce), so that the
 * runtime's one counted exchange carries them.                          */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/halo.h"
#include "placement/sparse_gen.h"
#include "deso/runtime/runtime.h"

void deso__spmat_data_free(deso__spmat_data *sp)
{
    if (sp == NULL || --sp->refs > 0) return;
    deso__spmat_data_free(sp->placed);
    free(sp->start);
    free(sp->count);
    free(sp->poff);
    pl_csr_free(&sp->rows);
    deso__halo_plan_free(sp->halo);
    free(sp);
}

deso_err deso__spmat_begin(int64_t m, int64_t n, const void *out,
                           const char *fn)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "%s: out-parameter is NULL", fn);
    DESO_CHECK(m >= 0 && n >= 0 && m <= DESO__SPMAT_MAX_DIM &&
                   n <= DESO__SPMAT_MAX_DIM,
               DESO_ESIZE, "%s: shape %lld x %lld (each at most 2^53)", fn,
               (long long)m, (long long)n);
    return DESO_OK;
}

deso_err deso__spmat_alloc(const deso_ctx *ctx, int64_t m, int64_t n,
                           deso__spmat_data **out)
{
    *out = NULL;
    deso__spmat_data *sp = deso__calloc(1, sizeof *sp);
    if (sp != NULL) {
        sp->start = deso__calloc((size_t)ctx->size + 1, sizeof(int64_t));
        sp->count = deso__calloc((size_t)ctx->size, sizeof(int64_t));
    }
    if (sp == NULL || sp->start == NULL || sp->count == NULL) {
        deso__spmat_data_free(sp);
        return deso__fail(DESO_ENOMEM, "out of memory (sparse matrix)");
    }
    sp->refs = 1;
    sp->m = m;
    sp->n = n;
    sp->rows.ncols = n;
    *out = sp;
    return DESO_OK;
}

void deso__spmat_blocks(const deso_ctx *ctx, deso__spmat_data *sp)
{
    pl_blocks b = {sp->m, ctx->size};
    for (int r = 0; r < ctx->size; r++)
        pl_blocks_range(&b, r, &sp->start[r], &sp->start[r + 1]);
}

/* The agreed ending of every constructor.  local is this rank's outcome so
 * far; on success sp holds its rows and every rank's start.  The ranks
 * agree (the shape and tag too: the same everywhere), then learn every
 * rank's entry count in one all-reduce.  sp is the handle's, or freed.  */
deso_err deso__spmat_publish(deso_ctx *ctx, const char *fn, deso_err local,
                             int64_t tag, deso__spmat_data *sp,
                             deso_spmat **out)
{
    uint64_t hash0 = ctx->hash, id0 = ctx->next_id;
    deso__handle *h = NULL;
    double *cnt = NULL;
    int64_t flags[6] = {0, 0, 0, 0, 0, 0};
    if (local == DESO_OK) {
        flags[0] = sp->m; flags[1] = ~sp->m;
        flags[2] = sp->n; flags[3] = ~sp->n;
        flags[4] = tag; flags[5] = ~tag;
        cnt = deso__calloc((size_t)ctx->size, sizeof *cnt);
        if (cnt == NULL) local = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    if (local == DESO_OK) local = deso__handle_new_spmat(ctx, sp, &h);
    deso_err err = deso__agree_counted(ctx, fn, local, flags, 6);
    if (err == DESO_OK && (flags[0] != ~flags[1] || flags[2] != ~flags[3] ||
                           flags[4] != ~flags[5]))
        err = deso__fail(DESO_EMISMATCH, "%s: the matrix differs between "
                         "ranks (shape or generator)", fn);
    if (err == DESO_OK) {
        cnt[ctx->rank] = (double)sp->rows.rowptr[sp->rows.nrows];
        err = deso__allreduce(ctx, ctx->comm, cnt, ctx->size, DESO__SUM);
    }
    if (err == DESO_OK) {
        sp->nnz = 0;
        for (int r = 0; r < ctx->size; r++) {
            sp->count[r] = (int64_t)cnt[r];
            sp->nnz += sp->count[r];
        }
        sp->id = h->id;
        /* the product's halo depends on the pattern only: planned once,
         * here, so that recording a product never communicates           */
        deso__halo_plan *hp;
        err = deso__spmat_halo(ctx, sp, &hp);
    }
    if (err == DESO_OK) {
        *out = (deso_spmat *)h;
    } else if (h != NULL) {
        deso__handle_destroy(h, fn);
        /* as if never called, so that the ranks' call hashes still agree  */
        ctx->hash = hash0;
        ctx->next_id = id0;
    } else {
        deso__spmat_data_free(sp);
    }
    free(cnt);
    return err;
}

/* ---- CSR arrays ------------------------------------------------------- */

/* rowptr[0 .. nrows] starts at 0 and never decreases, and the columns it
 * spans are in [0, n).  The first bad entry is named.                   */
static deso_err csr_check(const char *fn, int64_t nrows, int64_t n,
                          const int64_t *rowptr, const int64_t *col,
                          const double *val)
{
    DESO_CHECK(rowptr != NULL, DESO_ENULL, "%s: rowptr is NULL", fn);
    DESO_CHECK(rowptr[0] == 0, DESO_EINVAL, "%s: rowptr[0] = %lld, not 0",
               fn, (long long)rowptr[0]);
    for (int64_t i = 0; i < nrows; i++)
        DESO_CHECK(rowptr[i + 1] >= rowptr[i], DESO_EINVAL,
                   "%s: rowptr[%lld] = %lld < rowptr[%lld] = %lld", fn,
                   (long long)(i + 1), (long long)rowptr[i + 1],
                   (long long)i, (long long)rowptr[i]);
    int64_t nnz = rowptr[nrows];
    DESO_CHECK(nnz == 0 || (col != NULL && val != NULL), DESO_ENULL,
               "%s: col or val is NULL", fn);
    for (int64_t k = 0; k < nnz; k++)
        DESO_CHECK(col[k] >= 0 && col[k] < n, DESO_EINVAL,
                   "%s: col[%lld] = %lld outside [0, %lld)", fn, (long long)k,
                   (long long)col[k], (long long)n);
    return DESO_OK;
}

/* Room for nrows rows and nnz entries in a.                              */
static deso_err csr_room(int64_t nrows, int64_t nnz, pl_csr *a)
{
    a->nrows = nrows;
    a->rowptr = deso__malloc((size_t)(nrows + 1) * sizeof(int64_t));
    a->col = deso__malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int64_t));
    a->val = deso__malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(double));
    DESO_CHECK(a->rowptr != NULL && a->col != NULL && a->val != NULL,
               DESO_ENOMEM, "out of memory (%lld sparse entries)",
               (long long)nnz);
    a->rowptr[0] = 0;
    return DESO_OK;
}

/* Rows lo .. hi - 1 of CSR arrays into a's room for them (rowptr made
 * relative to rowptr[lo]).                                                */
static void csr_copy(const int64_t *rowptr, const int64_t *col,
                     const double *val, int64_t lo, int64_t hi, pl_csr *a)
{
    int64_t base = rowptr[lo], nnz = rowptr[hi] - base;
    for (int64_t i = lo; i <= hi; i++) a->rowptr[i - lo] = rowptr[i] - base;
    if (nnz > 0) {
        memcpy(a->col, col + base, (size_t)nnz * sizeof(int64_t));
        memcpy(a->val, val + base, (size_t)nnz * sizeof(double));
    }
}

/* ---- from each rank's own rows ----------------------------------------- */

/* Whether the ranks' (row0, nrows) pairs rc[2 r], rc[2 r + 1] tile [0, m)
 * in rank order; start[] receives the blocks.                             */
static deso_err ranges_tile(const deso_ctx *ctx, const char *fn, int64_t m,
                            const double *rc, int64_t *start)
{
    int64_t next = 0;
    for (int r = 0; r < ctx->size; r++) {
        int64_t lo = (int64_t)rc[2 * r], len = (int64_t)rc[2 * r + 1];
        DESO_CHECK(lo == next && len >= 0 && len <= m - lo, DESO_EINVAL,
                   "%s: rank %d's rows [%lld, %lld) do not follow row %lld "
                   "within [0, %lld)", fn, r, (long long)lo,
                   (long long)(lo + len), (long long)next, (long long)m);
        start[r] = lo;
        next = lo + len;
    }
    DESO_CHECK(next == m, DESO_EINVAL, "%s: the ranks' rows end at %lld, not "
               "m = %lld", fn, (long long)next, (long long)m);
    start[ctx->size] = m;
    return DESO_OK;
}

deso_err deso__spmat_from_rows(deso_ctx *ctx, int64_t m, int64_t n,
                               int64_t row0, int64_t nrows,
                               const int64_t *rowptr, const int64_t *col,
                               const double *val, deso_spmat **out)
{
    static const char *fn = "deso_spmat_from_rows";
    DESO_TRY(deso__ctx_check(ctx, fn));
    if (out != NULL) *out = NULL;
    deso_err err = deso__spmat_begin(m, n, out, fn);
    if (err == DESO_OK && (row0 < 0 || nrows < 0 || nrows > m))
        err = deso__fail(DESO_EINVAL, "%s: rows [%lld, %lld) outside [0, "
                         "%lld)", fn, (long long)row0,
                         (long long)(row0 + nrows), (long long)m);
    static const int64_t none = 0;   /* no rows: rowptr may be NULL       */
    if (err == DESO_OK && nrows == 0 && rowptr == NULL) rowptr = &none;
    if (err == DESO_OK) err = csr_check(fn, nrows, n, rowptr, col, val);
    deso__spmat_data *sp = NULL;
    if (err == DESO_OK) err = deso__spmat_alloc(ctx, m, n, &sp);
    double *rc = NULL;
    if (err == DESO_OK) {
        rc = deso__calloc(2 * (size_t)ctx->size, sizeof *rc);
        if (rc == NULL) err = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    /* the ranges are exchanged only once every rank has its arrays       */
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    if (err == DESO_OK) {
        rc[2 * ctx->rank] = (double)row0;
        rc[2 * ctx->rank + 1] = (double)nrows;
        err = deso__allreduce(ctx, ctx->comm, rc, 2 * (int64_t)ctx->size,
                              DESO__SUM);
    }
    /* the same verdict on every rank: they all see the same ranges        */
    if (err == DESO_OK) err = ranges_tile(ctx, fn, m, rc, sp->start);
    free(rc);
    if (err != DESO_OK) {
        deso__spmat_data_free(sp);
        return err;
    }
    err = csr_room(nrows, rowptr[nrows], &sp->rows);
    if (err == DESO_OK) {
        csr_copy(rowptr, col, val, 0, nrows, &sp->rows);
        sp->rows.row0 = row0;
        pl_csr_sort_rows(&sp->rows);
        sp->pinned = true;       /* the caller chose where its rows live  */
    }
    return deso__spmat_publish(ctx, fn, err, 0, sp, out);
}

/* ---- from a generator ----------------------------------------------------- */

deso_err deso__spmat_from_gen(deso_ctx *ctx, const char *spec,
                              deso_spmat **out)
{
    static const char *fn = "deso_spmat_from_gen";
    DESO_TRY(deso__ctx_check(ctx, fn));
    if (out != NULL) *out = NULL;
    deso_err err = deso__spmat_begin(0, 0, out, fn);
    pl_gen g = {0};
    if (err == DESO_OK && spec == NULL)
        err = deso__fail(DESO_ENULL, "%s: spec is NULL", fn);
    if (err == DESO_OK) err = pl_gen_parse(spec, &g);
    deso__spmat_data *sp = NULL;
    if (err == DESO_OK) err = deso__spmat_alloc(ctx, g.n, g.n, &sp);
    if (err == DESO_OK) {
        deso__spmat_blocks(ctx, sp);
        int r = ctx->rank;
        err = pl_gen_rows(&g, sp->start[r], sp->start[r + 1], &sp->rows);
    }
    /* lap2d:8 and lap3d:4 have one shape: the generator is agreed too   */
    int64_t tag = ((int64_t)g.kind << 48) ^ g.g;
    return deso__spmat_publish(ctx, fn, err, tag, sp, out);
}

/* ---- from global CSR arrays on a root ------------------------------------ */

/* Rank q's block of the root's arrays packed as doubles: its row lengths,
 * its columns, its values.                                                 */
static int64_t pack_rows(const int64_t *rowptr, const int64_t *col,
                         const double *val, int64_t lo, int64_t hi,
                         double *buf)
{
    int64_t k = 0;
    for (int64_t i = lo; i < hi; i++)
        buf[k++] = (double)(rowptr[i + 1] - rowptr[i]);
    for (int64_t e = rowptr[lo]; e < rowptr[hi]; e++) buf[k++] = (double)col[e];
    if (rowptr[hi] > rowptr[lo])
        memcpy(buf + k, val + rowptr[lo],
               (size_t)(rowptr[hi] - rowptr[lo]) * sizeof(double));
    return k + rowptr[hi] - rowptr[lo];
}

static void unpack_rows(const double *buf, pl_csr *a)
{
    int64_t nrows = a->nrows, k = 0;
    a->rowptr[0] = 0;
    for (int64_t i = 0; i < nrows; i++)
        a->rowptr[i + 1] = a->rowptr[i] + (int64_t)buf[k++];
    int64_t nnz = a->rowptr[nrows];
    for (int64_t e = 0; e < nnz; e++) a->col[e] = (int64_t)buf[k++];
    if (nnz > 0) memcpy(a->val, buf + k, (size_t)nnz * sizeof(double));
}

/* The root sends every other rank its packed block, one message each,
 * through one buffer of the largest block.                                */
static deso_err scatter_rows(deso_ctx *ctx, const deso__spmat_data *sp,
                             const int64_t *rowptr, const int64_t *col,
                             const double *val, int root, double *buf)
{
    for (int q = 0; q < ctx->size; q++) {
        if (q == root) continue;
        int64_t lo = sp->start[q], hi = sp->start[q + 1];
        if (hi == lo) continue;
        int64_t len = pack_rows(rowptr, col, val, lo, hi, buf);
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &q, &buf, &len,
                                0, NULL, NULL, NULL, &(MPI_Request){0}));
    }
    return DESO_OK;
}

/* Room for this rank's rows (cnt entries), and the buffer a block travels
 * in: the root's holds the largest other block, a receiver's its own.   */
static deso_err root_buffers(deso_ctx *ctx, deso__spmat_data *sp,
                             const double *cnt, int root, double **buf)
{
    int r = ctx->rank;
    int64_t len = 0;
    for (int q = 0; q < ctx->size; q++) {
        int64_t lq = sp->start[q + 1] - sp->start[q] + 2 * (int64_t)cnt[q];
        if ((r == root && q != root && lq > len) || (r != root && q == r))
            len = lq;
    }
    sp->rows.row0 = sp->start[r];
    DESO_TRY(csr_room(sp->start[r + 1] - sp->start[r], (int64_t)cnt[r],
                      &sp->rows));
    *buf = deso__malloc((size_t)(len > 0 ? len : 1) * sizeof(double));
    DESO_CHECK(*buf != NULL, DESO_ENOMEM,
               "deso_spmat_from_csr: out of memory (%lld doubles)",
               (long long)len);
    return DESO_OK;
}

deso_err deso__spmat_from_csr(deso_ctx *ctx, int64_t m, int64_t n,
                              const int64_t *rowptr, const int64_t *col,
                              const double *val, int root, deso_spmat **out)
{
    static const char *fn = "deso_spmat_from_csr";
    DESO_TRY(deso__ctx_check(ctx, fn));
    if (out != NULL) *out = NULL;
    deso_err err = deso__spmat_begin(m, n, out, fn);
    if (err == DESO_OK && (root < 0 || root >= ctx->size))
        err = deso__fail(DESO_EINVAL, "%s: root %d out of range", fn, root);
    bool mine = root == ctx->rank;
    if (err == DESO_OK && mine) err = csr_check(fn, m, n, rowptr, col, val);
    deso__spmat_data *sp = NULL;
    double *cnt = NULL, *buf = NULL;
    if (err == DESO_OK) err = deso__spmat_alloc(ctx, m, n, &sp);
    if (err == DESO_OK) {
        cnt = deso__calloc((size_t)ctx->size, sizeof *cnt);
        if (cnt == NULL) err = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    /* the root and the shape, the same everywhere, before the counts move */
    int64_t flags[2] = {root, ~(int64_t)root};
    err = deso__agree_counted(ctx, fn, err, flags, 2);
    if (err == DESO_OK && flags[0] != ~flags[1])
        err = deso__fail(DESO_EINVAL, "%s: root differs between ranks", fn);
    if (err == DESO_OK) {
        deso__spmat_blocks(ctx, sp);
        if (mine)
            for (int q = 0; q < ctx->size; q++)
                cnt[q] = (double)(rowptr[sp->start[q + 1]] -
                                  rowptr[sp->start[q]]);
        err = deso__bcast(ctx->comm, cnt, ctx->size, root);
        /* every rank's room is made before the data moves                */
        if (err == DESO_OK) err = root_buffers(ctx, sp, cnt, root, &buf);
        err = deso__agree_counted(ctx, fn, err, NULL, 0);
    }
    if (err != DESO_OK) {
        /* agreed: every rank stops here                                   */
        free(buf);
        free(cnt);
        deso__spmat_data_free(sp);
        return err;
    }
    if (mine) {
        csr_copy(rowptr, col, val, sp->start[root], sp->start[root + 1],
                 &sp->rows);
        err = scatter_rows(ctx, sp, rowptr, col, val, root, buf);
    } else if (sp->rows.nrows > 0) {
        int64_t len = sp->rows.nrows + 2 * (int64_t)cnt[ctx->rank];
        err = deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL, NULL,
                             1, &root, &buf, &len, &(MPI_Request){0});
        if (err == DESO_OK) unpack_rows(buf, &sp->rows);
    }
    free(buf);
    free(cnt);
    if (err == DESO_OK) pl_csr_sort_rows(&sp->rows);
    return deso__spmat_publish(ctx, fn, err, 0, sp, out);
}
