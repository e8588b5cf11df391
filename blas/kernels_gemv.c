/* dgemv's local kernels: y <- alpha op(A) x + beta y over a rank's piece
 * of A (or a slab of it), one chunk of columns per cblas_dgemv.
 *
 * Where the product needs no reduction across ranks (a grid of one column
 * for no transpose, of one row for the transpose) the executor runs the
 * direct kernel: BLAS writes the result itself, alpha and beta included,
 * with no partial-sum buffer, no zeroing and no finishing pass.  Otherwise
 * the kernel writes the partial product (alpha 1, beta 0: the first chunk
 * sets the buffer, so nothing zeroes it first) and the finish combines the
 * reduced sums with alpha and beta.
 *
 * The chunk is what makes an out-of-core product's bits those of the
 * in-core one: a streamed matrix's slabs are whole chunks, and both add
 * one chunk after another from local column 0.  A chunk holds as many
 * columns as fit in chunk_bytes, at least the column block or
 * BLAS_GEMV_COLS: each cblas_dgemv call costs a fixed few hundred
 * instructions and, without a transpose, one more pass over y, so in core
 * a local piece of up to chunk_bytes is one call.                        */
#include "blas/kernels.h"

#include <cblas.h>

static int64_t chunk_bytes = BLAS_GEMV_CHUNK_BYTES;

void blas_gemv_chunk_bytes(int64_t bytes)
{
    chunk_bytes = bytes >= 0 ? bytes : BLAS_GEMV_CHUNK_BYTES;
}

int64_t blas_gemv_chunk(const blas_layout *A, int64_t rows)
{
    int64_t least = A->nb < BLAS_GEMV_COLS ? A->nb : BLAS_GEMV_COLS;
    int64_t fit = chunk_bytes / ((rows > 1 ? rows : 1) *
                                 (int64_t)sizeof(double));
    int64_t u = fit > least ? fit : least;
    return u > 0 ? u : 1;
}

static int ilen(int64_t n) { return (int)n; }   /* local lengths fit in int */

static void gemv_call(bool trans, int64_t rows, int64_t cols, double alpha,
                      const double *a, int64_t ld, const double *x,
                      double beta, double *y)
{
    cblas_dgemv(CblasColMajor, trans ? CblasTrans : CblasNoTrans, ilen(rows),
                ilen(cols), alpha, a, ilen(ld > 1 ? ld : 1), x, 1, beta, y,
                1);
}

/* y <- beta y over n entries; beta = 0 sets them without reading them
 * (BLAS's convention: y may hold anything, a NaN included).            */
static void scale(double *y, int64_t n, double beta)
{
    if (beta == 1.0) return;
    for (int64_t i = 0; i < n; i++) y[i] = beta == 0.0 ? 0.0 : beta * y[i];
}

/* Whether global element (i, j) is in the masked triangle.                 */
static bool in_mask(unsigned f, int64_t i, int64_t j)
{
    if (f & BLAS_F_LOWER) return (f & BLAS_F_STRICT) ? i > j : i >= j;
    return (f & BLAS_F_STRICT) ? i < j : i <= j;
}

/* One block of a triangle-masked gemv, y += alpha op(block) x: all of
 * it, none, or element by element where the triangle's edge crosses it. */
static void gemv_block_masked(unsigned flags, const double *blk, int64_t ld,
                              int64_t h, int64_t w, int64_t gi0, int64_t gj0,
                              const double *x, double alpha, double *y)
{
    bool trans = (flags & BLAS_F_TRANS) != 0;
    int in = 0;
    for (int64_t a = 0; a < 2; a++)
        for (int64_t b = 0; b < 2; b++)
            in += in_mask(flags, gi0 + a * (h - 1), gj0 + b * (w - 1));
    /* a half-plane and its complement are convex: the corners decide
     * whether the block is wholly in or wholly out.                      */
    if (in == 4) {
        gemv_call(trans, h, w, alpha, blk, ld, x, 1.0, y);
        return;
    }
    if (in == 0) return;
    for (int64_t b = 0; b < w; b++)
        for (int64_t a = 0; a < h; a++) {
            if (!in_mask(flags, gi0 + a, gj0 + b)) continue;
            double v = blk[b * ld + a];
            if (trans) y[b] += alpha * (v * x[a]);
            else y[a] += alpha * (v * x[b]);
        }
}

/* Local columns [j, j + w) of a masked gemv (A's columns from col),
 * split where they cross a column block (global columns are consecutive
 * within one).                                                          */
static void gemv_cols_masked(const blas_desc *d, const blas_local *A,
                             const double *col, int64_t j, int64_t w,
                             const double *x, double alpha, double *y)
{
    bool trans = (d->flags & BLAS_F_TRANS) != 0;
    int64_t rows = A->rows, ld = rows > 1 ? rows : 1;
    int64_t mb = A->lay->b, nb = A->lay->nb;
    for (int64_t k = 0; k < w;) {
        int64_t part = nb - (j + k) % nb;
        if (part > w - k) part = w - k;
        int64_t gj0 = blas_mat_global(A->lay, 1, A->c, j + k);
        for (int64_t li0 = 0; li0 < rows; li0 += mb) {
            int64_t h = rows - li0 < mb ? rows - li0 : mb;
            int64_t gi0 = blas_mat_global(A->lay, 0, A->r, li0);
            gemv_block_masked(d->flags, col + k * ld + li0, ld, h, part, gi0,
                              gj0, trans ? x + li0 : x + j + k, alpha,
                              trans ? y + j + k : y + li0);
        }
        k += part;
    }
}

void blas_gemv_part(const blas_desc *d, const blas_local *A,
                    const blas_local *x, blas_gemv_into out)
{
    bool trans = (d->flags & BLAS_F_TRANS) != 0;
    int64_t rows = A->rows, cols = A->cols, ld = rows > 1 ? rows : 1;
    if (rows == 0 || cols == 0) {       /* nothing to add: y <- beta y     */
        if (trans) scale(out.y + A->c0, cols, out.beta);
        else if (A->c0 == 0) scale(out.y, rows, out.beta);
        return;
    }
    int64_t u = blas_gemv_chunk(A->lay, rows);
    for (int64_t lj0 = 0; lj0 < cols; lj0 += u) {
        int64_t w = cols - lj0 < u ? cols - lj0 : u, j = A->c0 + lj0;
        const double *col = A->data + lj0 * ld;
        /* beta once per entry of y: with the transpose each chunk writes
         * its own part of y, without it the piece's first chunk all of y */
        double beta = trans || j == 0 ? out.beta : 1.0;
        if (d->flags & BLAS_F_MASK) {
            scale(trans ? out.y + j : out.y, trans ? w : rows, beta);
            gemv_cols_masked(d, A, col, j, w, x->data, out.alpha, out.y);
        } else {
            gemv_call(trans, rows, w, out.alpha, col, ld,
                      trans ? x->data : x->data + j, beta,
                      trans ? out.y + j : out.y);
        }
    }
}

static double sval(const blas_local *s) { return s->data[0]; }

blas_gemv_into blas_gemv_direct_into(const blas_desc *d,
                                     const blas_local *ops, blas_local *res)
{
    double b = (d->flags & BLAS_F_BETA) ? sval(&ops[3]) : 0.0;
    return (blas_gemv_into){res->data, sval(&ops[0]), b};
}

/* red <- op(A_loc) x_loc over the local piece, optionally restricted to a
 * triangle of the global matrix (dsymv's halves).                          */
void blas__k_gemv(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)res;
    blas_gemv_part(d, &ops[1], &ops[2], (blas_gemv_into){red, 1.0, 0.0});
}

void blas__d_gemv(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    (void)red;
    blas_gemv_part(d, &ops[1], &ops[2], blas_gemv_direct_into(d, ops, res));
}

void blas__f_gemv(const blas_desc *d, const blas_local *ops, blas_local *res,
                  double *red)
{
    double a = sval(&ops[0]);
    double *y = res->data;
    if ((d->flags & BLAS_F_BETA) && sval(&ops[3]) != 0.0) {
        double b = sval(&ops[3]);
        for (int64_t i = 0; i < res->rows; i++) y[i] = a * red[i] + b * y[i];
    } else {
        for (int64_t i = 0; i < res->rows; i++) y[i] = a * red[i];
    }
}
