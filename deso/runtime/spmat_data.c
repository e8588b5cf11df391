/* Reading and refilling sparse matrices: new values on the same pattern,
 * the gather of the whole matrix, the shape, this rank's share and where
 * the products run.
 *
 * In pattern order rank r's entries are one contiguous run (its rows are
 * one block, in rank order), starting after the entries of the ranks
 * before it: values move as slices, with no index lists.  A matrix
 * placed by a graph partition no longer holds its blocks: the gather and
 * new values work on the placed copy (spmat_placed.c), and a rank's
 * block rows come back from it along the placement's route
 * (deso__spmat_rows_back); the blocks' ranges and counts stay.          */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "deso/runtime/runtime.h"

static deso_err spmat_check(const deso_spmat *a, const char *fn,
                            deso_ctx **ctx)
{
    *ctx = NULL;
    return deso__handle_check(a ? &a->h : NULL, DESO__SPMAT, ctx, fn, "a");
}

/* Where rank r's entries start in pattern order.                         */
static int64_t entry_offset(const deso__spmat_data *sp, int r)
{
    int64_t off = 0;
    for (int q = 0; q < r; q++) off += sp->count[q];
    return off;
}

deso_err deso__spmat_shape(const deso_spmat *a, int64_t *m, int64_t *n,
                           int64_t *nnz)
{
    static const char *fn = "deso_spmat_shape";
    deso_ctx *ctx;
    DESO_TRY(spmat_check(a, fn, &ctx));
    DESO_CHECK(m != NULL && n != NULL && nnz != NULL, DESO_ENULL,
               "%s: NULL out-parameter", fn);
    *m = a->h.sp->m;
    *n = a->h.sp->n;
    *nnz = a->h.sp->nnz;
    return DESO_OK;
}

deso_err deso__spmat_local(const deso_spmat *a, int64_t *row0,
                           int64_t *nrows, int64_t *nnz)
{
    static const char *fn = "deso_spmat_local";
    deso_ctx *ctx;
    DESO_TRY(spmat_check(a, fn, &ctx));
    DESO_CHECK(row0 != NULL && nrows != NULL && nnz != NULL, DESO_ENULL,
               "%s: NULL out-parameter", fn);
    /* the blocks' ranges and counts, which a placed matrix keeps         */
    const deso__spmat_data *sp = a->h.sp;
    *row0 = sp->start[ctx->rank];
    *nrows = sp->start[ctx->rank + 1] - sp->start[ctx->rank];
    *nnz = sp->count[ctx->rank];
    return DESO_OK;
}

/* The choice is made once per matrix, the same on every rank (rank 0's
 * verdict, broadcast); a placed matrix is the one that holds a copy.   */
deso_err deso__spmat_placement(const deso_spmat *a, deso_partition *placed)
{
    static const char *fn = "deso_spmat_placement";
    deso_ctx *ctx;
    DESO_TRY(spmat_check(a, fn, &ctx));
    DESO_CHECK(placed != NULL, DESO_ENULL, "%s: placed is NULL (arg 2)", fn);
    const deso__spmat_data *sp = a->h.sp;
    *placed = !sp->placement_chosen ? DESO_PARTITION_DEFAULT
              : sp->placed != NULL  ? DESO_PARTITION_NTG
                                    : DESO_PARTITION_BLOCK;
    return DESO_OK;
}

/* deso_spmat_local_rows's arguments, for nz entries.                    */
static deso_err rows_args(const char *fn, int64_t nz, const int64_t *rowptr,
                          const int64_t *col, const double *val)
{
    DESO_CHECK(rowptr != NULL, DESO_ENULL, "%s: rowptr is NULL (arg 2)", fn);
    DESO_CHECK(nz == 0 || col != NULL, DESO_ENULL, "%s: col is NULL (arg 3) "
               "with %lld entries to hold", fn, (long long)nz);
    DESO_CHECK(nz == 0 || val != NULL, DESO_ENULL, "%s: val is NULL (arg 4) "
               "with %lld entries to hold", fn, (long long)nz);
    return DESO_OK;
}

deso_err deso__spmat_local_rows(const deso_spmat *a, int64_t *rowptr,
                                int64_t *col, double *val)
{
    static const char *fn = "deso_spmat_local_rows";
    deso_ctx *ctx;
    DESO_TRY(spmat_check(a, fn, &ctx));
    const deso__spmat_data *sp = a->h.sp;
    deso_err err = rows_args(fn, sp->count[ctx->rank], rowptr, col, val);
    /* the blocks were freed: every rank brings its rows back             */
    if (sp->placed != NULL)
        return deso__spmat_rows_back(ctx, sp, rowptr, col, val, err);
    DESO_TRY(err);
    const pl_csr *rows = &sp->rows;
    int64_t nz = rows->rowptr[rows->nrows];
    memcpy(rowptr, rows->rowptr, (size_t)(rows->nrows + 1) * sizeof *rowptr);
    for (int64_t e = 0; e < nz; e++) col[e] = deso__spmat_col(sp, ctx->rank, e);
    if (nz > 0) memcpy(val, rows->val, (size_t)nz * sizeof *val);
    return DESO_OK;
}

/* ---- new values ---------------------------------------------------------- */

/* New values for a placed matrix: the root's buffer made, the root
 * agreed, then spmat_placed.c's.                                         */
static deso_err placed_set(deso_ctx *ctx, deso__spmat_data *pd,
                           const double *val, int root, deso_err err)
{
    static const char *fn = "deso_spmat_set_values";
    double *buf = NULL;
    if (err == DESO_OK && root != DESO_ALL_RANKS) {
        int64_t len = 0;
        for (int q = 0; q < ctx->size; q++)
            if (ctx->rank == root || q == ctx->rank) {
                int64_t lq = deso__spmat_placed_len(pd, q);
                len = lq > len ? lq : len;
            }
        buf = deso__malloc((size_t)(len > 0 ? len : 1) * sizeof *buf);
        if (buf == NULL) err = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    int64_t flags[2] = {root, ~(int64_t)root};
    err = deso__agree_counted(ctx, fn, err, flags, 2);
    if (err == DESO_OK && flags[0] != ~flags[1])
        err = deso__fail(DESO_EINVAL, "%s: root differs between ranks", fn);
    if (err == DESO_OK) err = deso__spmat_placed_values(ctx, pd, val, root, buf);
    free(buf);
    return err;
}

deso_err deso__spmat_set_values(deso_spmat *a, const double *val, int root)
{
    static const char *fn = "deso_spmat_set_values";
    deso_ctx *ctx;
    DESO_TRY(spmat_check(a, fn, &ctx));
    deso__spmat_data *sp = a->h.sp;
    /* a pending product reads the values it was recorded with: it runs
     * first (every rank has the same pending products, so the same refs) */
    if (sp->refs > 1 || (sp->placed != NULL && sp->placed->refs > 1))
        DESO_TRY(deso__force(ctx));
    deso_err err = DESO_OK;
    if (root != DESO_ALL_RANKS && (root < 0 || root >= ctx->size))
        err = deso__fail(DESO_EINVAL, "%s: root %d out of range", fn, root);
    bool mine = root == DESO_ALL_RANKS || root == ctx->rank;
    if (err == DESO_OK && mine && val == NULL && sp->nnz > 0)
        err = deso__fail(DESO_ENULL, "%s: val is NULL", fn);
    /* the blocks were freed: the values go to the placed copy, agreed    */
    if (sp->placed != NULL) return placed_set(ctx, sp->placed, val, root, err);
    if (root == DESO_ALL_RANKS) {
        DESO_TRY(err);
        int64_t own = sp->count[ctx->rank];
        if (own > 0)
            memcpy(sp->rows.val, val + entry_offset(sp, ctx->rank),
                   (size_t)own * sizeof(double));
        return DESO_OK;
    }
    int64_t flags[2] = {root, ~(int64_t)root};
    DESO_TRY(deso__agree_counted(ctx, fn, err, flags, 2));
    DESO_CHECK(flags[0] == ~flags[1], DESO_EINVAL,
               "%s: root differs between ranks", fn);
    if (!mine) {
        int64_t len = sp->count[ctx->rank];
        if (len > 0)
            DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL,
                                    NULL, 1, &root, &sp->rows.val, &len,
                                    &(MPI_Request){0}));
        return DESO_OK;
    }
    int64_t off = 0;
    for (int q = 0; q < ctx->size; q++) {
        int64_t len = sp->count[q];
        /* MPI only reads a send buffer: the const goes for the call       */
        double *src = (double *)(uintptr_t)(val + off);
        off += len;
        if (len == 0) continue;
        if (q == root) {
            memcpy(sp->rows.val, src, (size_t)len * sizeof(double));
            continue;
        }
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &q, &src, &len,
                                0, NULL, NULL, NULL, &(MPI_Request){0}));
    }
    return DESO_OK;
}

/* ---- gather ---------------------------------------------------------------- */

/* Rank me's rows packed as doubles: row lengths, columns, values.       */
static void pack_own(const deso__spmat_data *sp, int me, double *buf)
{
    const pl_csr *a = &sp->rows;
    int64_t k = 0, nnz = a->rowptr[a->nrows];
    for (int64_t i = 0; i < a->nrows; i++)
        buf[k++] = (double)(a->rowptr[i + 1] - a->rowptr[i]);
    for (int64_t e = 0; e < nnz; e++)
        buf[k++] = (double)deso__spmat_col(sp, me, e);
    if (nnz > 0) memcpy(buf + k, a->val, (size_t)nnz * sizeof(double));
}

/* Rows lo .. hi - 1, packed as pack_own packs them, into the global
 * arrays (rowptr[lo] already set).                                       */
static void unpack_global(const double *buf, int64_t lo, int64_t hi,
                          int64_t *rowptr, int64_t *col, double *val)
{
    int64_t k = 0;
    for (int64_t i = lo; i < hi; i++)
        rowptr[i + 1] = rowptr[i] + (int64_t)buf[k++];
    int64_t e0 = rowptr[lo], nnz = rowptr[hi] - e0;
    for (int64_t e = 0; e < nnz; e++) col[e0 + e] = (int64_t)buf[k++];
    if (nnz > 0) memcpy(val + e0, buf + k, (size_t)nnz * sizeof(double));
}

/* The packed length of rank q's rows.                                     */
static int64_t packed_len(const deso__spmat_data *sp, int q)
{
    return sp->start[q + 1] - sp->start[q] + 2 * sp->count[q];
}

/* Rank r0 collects every rank's packed rows (one message each).        */
static deso_err gather_blocks(deso_ctx *ctx, const deso__spmat_data *sp,
                              int64_t *rowptr, int64_t *col, double *val,
                              int r0, double *buf)
{
    if (ctx->rank == r0) {
        rowptr[0] = 0;
        for (int q = 0; q < ctx->size; q++) {
            int64_t len = packed_len(sp, q);
            if (q == r0) pack_own(sp, r0, buf);
            else if (sp->start[q + 1] > sp->start[q])
                DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL,
                                        NULL, NULL, 1, &q, &buf, &len,
                                        &(MPI_Request){0}));
            unpack_global(buf, sp->start[q], sp->start[q + 1], rowptr, col,
                          val);
        }
    } else if (sp->rows.nrows > 0) {
        int64_t len = packed_len(sp, ctx->rank);
        pack_own(sp, ctx->rank, buf);
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &r0, &buf, &len,
                                0, NULL, NULL, NULL, &(MPI_Request){0}));
    }
    return DESO_OK;
}

/* Rank r0 collects the rows, from the blocks or the placed copy; with
 * every rank as the destination it then broadcasts the three arrays.    */
static deso_err gather_run(deso_ctx *ctx, const deso__spmat_data *sp,
                           int64_t *rowptr, int64_t *col, double *val,
                           int root, double *buf)
{
    int r0 = root == DESO_ALL_RANKS ? 0 : root;
    if (sp->placed != NULL)
        DESO_TRY(deso__spmat_placed_gather(ctx, sp->placed, rowptr, col, val,
                                           r0, buf));
    else
        DESO_TRY(gather_blocks(ctx, sp, rowptr, col, val, r0, buf));
    if (root != DESO_ALL_RANKS) return DESO_OK;
    /* the indices as doubles through buf (room for m + 1 and nnz)        */
    int64_t *ia[2] = {rowptr, col};
    int64_t len[2] = {sp->m + 1, sp->nnz};
    for (int t = 0; t < 2; t++) {
        if (ctx->rank == 0)
            for (int64_t k = 0; k < len[t]; k++) buf[k] = (double)ia[t][k];
        DESO_TRY(deso__bcast(ctx->comm, buf, len[t], 0));
        for (int64_t k = 0; k < len[t]; k++) ia[t][k] = (int64_t)buf[k];
    }
    return deso__bcast(ctx->comm, val, sp->nnz, 0);
}

deso_err deso__spmat_gather(const deso_spmat *a, int64_t *rowptr,
                            int64_t *col, double *val, int root)
{
    static const char *fn = "deso_spmat_gather";
    deso_ctx *ctx;
    DESO_TRY(spmat_check(a, fn, &ctx));
    const deso__spmat_data *sp = a->h.sp;
    deso_err err = DESO_OK;
    if (root != DESO_ALL_RANKS && (root < 0 || root >= ctx->size))
        err = deso__fail(DESO_EINVAL, "%s: root %d out of range", fn, root);
    bool mine = root == DESO_ALL_RANKS || root == ctx->rank;
    if (err == DESO_OK && mine &&
        (rowptr == NULL || (sp->nnz > 0 && (col == NULL || val == NULL))))
        err = deso__fail(DESO_ENULL, "%s: rowptr, col or val is NULL", fn);
    /* the buffer is made before the agreement: the root's holds the
     * largest block, another rank's its own; with every rank as the
     * destination also the broadcast indices                             */
    int r0 = root == DESO_ALL_RANKS ? 0 : root;
    int64_t len = 0;
    for (int q = 0; q < ctx->size; q++)
        if (ctx->rank == r0 || q == ctx->rank) {
            int64_t lq = sp->placed != NULL
                             ? deso__spmat_placed_len(sp->placed, q)
                             : packed_len(sp, q);
            len = lq > len ? lq : len;
        }
    if (root == DESO_ALL_RANKS) {
        len = sp->m + 1 > len ? sp->m + 1 : len;
        len = sp->nnz > len ? sp->nnz : len;
    }
    double *buf = NULL;
    if (err == DESO_OK) {
        buf = deso__malloc((size_t)(len > 0 ? len : 1) * sizeof(double));
        if (buf == NULL) err = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    int64_t flags[2] = {root, ~(int64_t)root};
    err = deso__agree_counted(ctx, fn, err, flags, 2);
    if (err == DESO_OK && flags[0] != ~flags[1])
        err = deso__fail(DESO_EINVAL, "%s: root differs between ranks", fn);
    if (err == DESO_OK) err = gather_run(ctx, sp, rowptr, col, val, root, buf);
    free(buf);
    return err;
}
