/* Reading and refilling a placed sparse matrix in pattern order: once a
 * matrix's rows are placed by a graph partition its blocks are freed
 * (spmat_place.c), so deso_spmat_gather and deso_spmat_set_values work
 * on the placed copy.  Each placed row keeps where its first entry is in
 * pattern order (poff, learnt when placing), so entries go straight
 * between the copy and the caller's global arrays, with no block order
 * in between: a rank's rows travel as (first entry, length) pairs, then
 * their columns and values.                                              */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"

int64_t deso__spmat_placed_len(const deso__spmat_data *pd, int q)
{
    return 2 * (pd->start[q + 1] - pd->start[q]) + 2 * pd->count[q];
}

/* Each row's first entry in pattern order and length.                   */
static void pack_heads(const deso__spmat_data *pd, double *buf)
{
    const pl_csr *a = &pd->rows;
    for (int64_t r = 0; r < a->nrows; r++) {
        buf[2 * r] = (double)pd->poff[r];
        buf[2 * r + 1] = (double)(a->rowptr[r + 1] - a->rowptr[r]);
    }
}

/* Rank me's heads, then its columns, then its values.                   */
static void pack_rows(const deso__spmat_data *pd, int me, double *buf)
{
    const pl_csr *a = &pd->rows;
    int64_t nnz = a->rowptr[a->nrows];
    pack_heads(pd, buf);
    buf += 2 * a->nrows;
    for (int64_t e = 0; e < nnz; e++)
        buf[e] = (double)deso__spmat_col(pd, me, e);
    if (nnz > 0) memcpy(buf + nnz, a->val, (size_t)nnz * sizeof *buf);
}

/* Rank q's packed rows (pack_rows) into the global arrays: its l-th row
 * is row iperm[start[q] + l].                                            */
static void unpack_rows(const deso__spmat_data *pd, int q, const double *buf,
                        int64_t *rowptr, int64_t *col, double *val)
{
    int64_t p0 = pd->start[q], nr = pd->start[q + 1] - p0;
    const double *cols = buf + 2 * nr, *vals = cols + pd->count[q];
    for (int64_t l = 0; l < nr; l++) {
        int64_t at = (int64_t)buf[2 * l], len = (int64_t)buf[2 * l + 1];
        rowptr[pd->part->iperm[p0 + l]] = at;
        for (int64_t e = 0; e < len; e++) col[at + e] = (int64_t)cols[e];
        if (len > 0) memcpy(val + at, vals, (size_t)len * sizeof *val);
        cols += len;
        vals += len;
    }
}

deso_err deso__spmat_placed_gather(deso_ctx *ctx, const deso__spmat_data *pd,
                                   int64_t *rowptr, int64_t *col, double *val,
                                   int r0, double *buf)
{
    if (ctx->rank != r0) {
        int64_t len = deso__spmat_placed_len(pd, ctx->rank);
        if (pd->rows.nrows == 0) return DESO_OK;
        pack_rows(pd, ctx->rank, buf);
        return deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &r0, &buf, &len,
                              0, NULL, NULL, NULL, &(MPI_Request){0});
    }
    for (int q = 0; q < ctx->size; q++) {
        int64_t len = deso__spmat_placed_len(pd, q);
        if (pd->start[q + 1] == pd->start[q]) continue;
        if (q == r0) pack_rows(pd, r0, buf);
        else DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL,
                                     NULL, 1, &q, &buf, &len,
                                     &(MPI_Request){0}));
        unpack_rows(pd, q, buf, rowptr, col, val);
    }
    rowptr[pd->m] = pd->nnz;         /* every other row's start was set  */
    return DESO_OK;
}

/* This rank's entries from the values in pattern order.                 */
static void take_own(deso__spmat_data *pd, const double *val)
{
    pl_csr *a = &pd->rows;
    for (int64_t r = 0; r < a->nrows; r++) {
        int64_t len = a->rowptr[r + 1] - a->rowptr[r];
        if (len > 0)
            memcpy(a->val + a->rowptr[r], val + pd->poff[r],
                   (size_t)len * sizeof(double));
    }
}

/* The root, for rank q: q's heads in, q's entries (packed after them in
 * buf) out.                                                              */
static deso_err serve_rank(deso_ctx *ctx, const deso__spmat_data *pd, int q,
                           const double *val, double *buf)
{
    int64_t nr = pd->start[q + 1] - pd->start[q], nh = 2 * nr;
    DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL, NULL, 1,
                            &q, &buf, &nh, &(MPI_Request){0}));
    double *out = buf + nh, *at = out;
    for (int64_t l = 0; l < nr; l++) {
        int64_t first = (int64_t)buf[2 * l], len = (int64_t)buf[2 * l + 1];
        if (len > 0) memcpy(at, val + first, (size_t)len * sizeof *at);
        at += len;
    }
    int64_t ne = at - out;
    if (ne == 0) return DESO_OK;
    return deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &q, &out, &ne, 0, NULL,
                          NULL, NULL, &(MPI_Request){0});
}

deso_err deso__spmat_placed_values(deso_ctx *ctx, deso__spmat_data *pd,
                                   const double *val, int root, double *buf)
{
    if (root == DESO_ALL_RANKS || root == ctx->rank) take_own(pd, val);
    if (root == DESO_ALL_RANKS) return DESO_OK;
    if (root == ctx->rank) {
        for (int q = 0; q < ctx->size; q++)
            if (q != root && pd->start[q + 1] > pd->start[q])
                DESO_TRY(serve_rank(ctx, pd, q, val, buf));
        return DESO_OK;
    }
    pl_csr *a = &pd->rows;
    int64_t nh = 2 * a->nrows, ne = a->rowptr[a->nrows];
    if (nh == 0) return DESO_OK;
    pack_heads(pd, buf);
    DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &root, &buf, &nh, 0,
                            NULL, NULL, NULL, &(MPI_Request){0}));
    if (ne == 0) return DESO_OK;
    return deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL, NULL, 1,
                          &root, &a->val, &ne, &(MPI_Request){0});
}
