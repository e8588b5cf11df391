/* Out-of-core matrices and global arrays: an out-of-core matrix from an
 * array (deso_mat_from_array) and back (deso_mat_gather), through the
 * local array files one stream width of local columns at a time
 * (deso__ooc_stream_width), so that no rank ever holds its whole local
 * piece.  From an array, a rank packs its own columns when it has the
 * array, else receives them from the root, which packs each other rank's
 * piece the same width at a time; to an array, each rank reads its columns
 * and sends them to the root, which unpacks them.  Messages between two
 * ranks arrive in the order they were sent, so each piece lands in its
 * columns without tags of its own.                                       */
#include "deso/runtime/ooc.h"

/* Local columns [c0, c0 + w) of grid position (r, c)'s piece between the
 * global array a (lda) and the packed piece p: into p (pack), or out of
 * it into a.                                                             */
static void copy_cols(const blas_layout *l, int r, int c, int64_t rows,
                      int64_t c0, int64_t w, double *a, int64_t lda,
                      double *p, bool pack)
{
    for (int64_t lj = 0; lj < w; lj++) {
        double *col = a + blas_cyc_global(l->nb, l->pc, c, c0 + lj) * lda;
        for (int64_t li = 0; li < rows; li++) {
            double *e = col + blas_cyc_global(l->b, l->pr, r, li);
            if (pack) p[lj * rows + li] = *e;
            else *e = p[lj * rows + li];
        }
    }
}

void deso__mat_pack(const blas_layout *l, int r, int c, int64_t rows,
                    int64_t c0, int64_t w, const double *a, int64_t lda,
                    double *out)
{
    /* a is only read when packing                                       */
    copy_cols(l, r, c, rows, c0, w, (double *)a, lda, out, true);
}

void deso__mat_unpack(const blas_layout *l, int r, int c, int64_t rows,
                      int64_t c0, int64_t w, const double *in, double *a,
                      int64_t lda)
{
    copy_cols(l, r, c, rows, c0, w, a, lda, (double *)in, false);
}

/* The root sends rank q its piece, k columns at a time, through buf.     */
static deso_err send_piece(deso_ctx *ctx, const blas_layout *l, int q,
                           const double *a, int64_t lda, int64_t k,
                           double *buf)
{
    int qr = q / ctx->df.pc, qc = q % ctx->df.pc;
    int64_t rows, cols;
    blas_layout_local(l, qr, qc, &rows, &cols);
    for (int64_t c0 = 0; rows > 0 && c0 < cols; c0 += k) {
        int64_t w = cols - c0 < k ? cols - c0 : k, cnt = rows * w;
        deso__mat_pack(l, qr, qc, rows, c0, w, a, lda, buf);
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &q, &buf, &cnt,
                                0, NULL, NULL, NULL, &(MPI_Request){0}));
    }
    return DESO_OK;
}

deso_err deso__ooc_from_array(deso_ctx *ctx, deso__view *w, const double *a,
                              int64_t lda, int root, const char *fn)
{
    int64_t k;
    DESO_TRY(deso__ooc_stream_width(ctx, w, 1, DESO_OK, fn, &k));
    bool mine = root == DESO_ALL_RANKS || root == ctx->rank;
    double *buf = deso__ooc_slab_buf(ctx, 0);
    /* a failed write stops the writing, not the receiving: the root
     * sends every piece whatever happens here                            */
    deso_err io = DESO_OK, err = DESO_OK;
    for (int64_t c0 = 0; err == DESO_OK && w->rows > 0 && c0 < w->cols;
         c0 += k) {
        int64_t cw = w->cols - c0 < k ? w->cols - c0 : k, cnt = w->rows * cw;
        if (mine)
            deso__mat_pack(&w->lay, ctx->coord[0], ctx->coord[1], w->rows, c0,
                           cw, a, lda, buf);
        else
            err = deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL,
                                 NULL, 1, &root, &buf, &cnt,
                                 &(MPI_Request){0});
        if (err == DESO_OK && io == DESO_OK)
            io = deso__ooc_io_counted(w->ooc, true, c0, cw, buf);
    }
    if (root == ctx->rank)
        for (int q = 0; err == DESO_OK && q < ctx->size; q++)
            if (q != root)
                err = send_piece(ctx, &w->lay, q, a, lda, k, deso__ooc_slab_buf(ctx, 1));
    return deso__agree_counted(ctx, fn, err != DESO_OK ? err : io, NULL, 0);
}

/* The root receives rank q's piece, k columns at a time, through buf, and
 * unpacks it into a.                                                     */
static deso_err recv_piece(deso_ctx *ctx, const blas_layout *l, int q,
                           double *a, int64_t lda, int64_t k, double *buf)
{
    int qr = q / ctx->df.pc, qc = q % ctx->df.pc;
    int64_t rows, cols;
    blas_layout_local(l, qr, qc, &rows, &cols);
    for (int64_t c0 = 0; rows > 0 && c0 < cols; c0 += k) {
        int64_t w = cols - c0 < k ? cols - c0 : k, cnt = rows * w;
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL,
                                NULL, 1, &q, &buf, &cnt, &(MPI_Request){0}));
        deso__mat_unpack(l, qr, qc, rows, c0, w, buf, a, lda);
    }
    return DESO_OK;
}

deso_err deso__ooc_to_array(deso_ctx *ctx, const deso__view *w, double *a,
                            int64_t lda, int root, const char *fn)
{
    int64_t k;
    DESO_TRY(deso__ooc_stream_width(ctx, w, 1, DESO_OK, fn, &k));
    double *buf = deso__ooc_slab_buf(ctx, 0);
    /* a failed read still sends its columns: the root waits for them     */
    deso_err io = DESO_OK, err = DESO_OK;
    for (int64_t c0 = 0; err == DESO_OK && w->rows > 0 && c0 < w->cols;
         c0 += k) {
        int64_t cw = w->cols - c0 < k ? w->cols - c0 : k, cnt = w->rows * cw;
        if (io == DESO_OK)
            io = deso__ooc_io_counted(w->ooc, false, c0, cw, buf);
        if (ctx->rank == root)
            deso__mat_unpack(&w->lay, ctx->coord[0], ctx->coord[1], w->rows,
                             c0, cw, buf, a, lda);
        else
            err = deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &root, &buf,
                                 &cnt, 0, NULL, NULL, NULL,
                                 &(MPI_Request){0});
    }
    if (ctx->rank == root)
        for (int q = 0; err == DESO_OK && q < ctx->size; q++)
            if (q != root)
                err = recv_piece(ctx, &w->lay, q, a, lda, k, deso__ooc_slab_buf(ctx, 1));
    return deso__agree_counted(ctx, fn, err != DESO_OK ? err : io, NULL, 0);
}
