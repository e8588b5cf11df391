/* Block views (deso_mat_block: rows i0 .. i0 + m - 1 of columns j0 ..
 * j0 + n - 1 of a matrix), through deso against sequential OpenBLAS on
 * the same sub-matrix of a host array, described as CBLAS describes one:
 * &A[i0 + j0 lda] with lda the parent's rows:
 *   - dgemv N and T with the block as the matrix (alpha 1.25, beta 0.5),
 *     and in row-major order (the block read as its transpose);
 *   - dger through the block, then the whole parent gathered: the block's
 *     elements updated, every other element as it was;
 *   - versions: a dgemv recorded before the dger reads the old block, a
 *     view made before the write reads the new one after it, a view made
 *     after the write too, and the written view reads what it wrote;
 *   - the cost model prices what block views move: a flush of a dger
 *     through one block and a dgemv T through another moves exactly the
 *     bytes and messages the model of its plan counts, in each mode.
 * Parents 7 x 6 and, in the long group, 5 x 4 (n not divisible by P, nor
 * by the block sizes 2 and 3); blocks 1 x 1 (in a corner), one that no block-cyclic block
 * lines up with, some rows of every column, and whole columns (which is
 * deso_mat_cols's view).  Every case in each optimiser mode on default,
 * 1-D and 2-D grids (tu_cases); the fast group takes one block per case
 * and size, in turn, the long group (P = 6) every one.
 * deso-np: 1 2 3 4
 * deso-np-long: 6                                                         */
#include <cblas.h>

#include "model_check.h"

/* the fast group walks the 7 x 6 parent, the long group both            */
static const int64_t SIZES[] = {7, 5};

/* Block k of an M x (M - 1) parent: first row and column, rows, columns. */
static void block_of(int64_t M, int k, int64_t b[4])
{
    int64_t N = M - 1;
    const int64_t all[4][4] = {{M - 1, N - 1, 1, 1},
                               {1, 2, M - 2, N - 3},
                               {2, 0, M - 3, N},
                               {0, 1, M, N - 2}};
    for (int i = 0; i < 4; i++) b[i] = all[k][i];
}

static double *dalloc(int64_t n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(double));
}

/* dgemv N and T on block B of A (host: &A[i0 + j0 M], lda M), column- and
 * row-major.                                                             */
static void gemv_checks(deso_ctx *ctx, deso_mat *B, const double *Ab,
                        int64_t M, int64_t m, int64_t n, tu_rng *rng)
{
    int im = (int)m, in = (int)n, iM = (int)M;
    double *x = dalloc(n), *y = dalloc(m), *w = dalloc(m), *z = dalloc(n);
    tu_fill(rng, x, n);
    tu_fill(rng, y, m);
    tu_fill(rng, w, m);
    tu_fill(rng, z, n);
    deso_vec *dx = tu_vec_of(ctx, n, x), *dy = tu_vec_of(ctx, m, y);
    deso_vec *dw = tu_vec_of(ctx, m, w), *dz = tu_vec_of(ctx, n, z);
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.25, B, M, dx,
                       1, 0.5, dy, 1));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, m, n, 1.25, B, M, dw, 1,
                       0.5, dz, 1));
    cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, 1.25, Ab, iM, x, 1, 0.5,
                y, 1);
    cblas_dgemv(CblasColMajor, CblasTrans, im, in, 1.25, Ab, iM, w, 1, 0.5,
                z, 1);
    tu_expect_vec(dy, y, m, 1e-12);
    tu_expect_vec(dz, z, n, 1e-12);
    /* row-major: the block is an n x m matrix whose rows are its columns */
    TU_CALL(deso_dgemv(DESO_ROW_MAJOR, DESO_NO_TRANS, n, m, 1.0, B, M, dw, 1,
                       0.0, dz, 1));
    cblas_dgemv(CblasRowMajor, CblasNoTrans, in, im, 1.0, Ab, iM, w, 1, 0.0,
                z, 1);
    tu_expect_vec(dz, z, n, 1e-12);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&dy);
    deso_vec_destroy(&dw);
    deso_vec_destroy(&dz);
    free(x);
    free(y);
    free(w);
    free(z);
}

static void block_case(deso_ctx *ctx, int64_t M, int k, tu_rng *rng)
{
    int64_t N = M - 1, b[4];
    block_of(M, k, b);
    int64_t i0 = b[0], j0 = b[1], m = b[2], n = b[3];
    double *A = dalloc(M * N), *u = dalloc(m), *v = dalloc(n);
    tu_fill(rng, A, M * N);
    tu_fill(rng, u, m);
    tu_fill(rng, v, n);
    double *Ab = &A[i0 + j0 * M];
    deso_mat *dA = NULL, *B = NULL, *before = NULL, *after = NULL;
    TU_CALL(deso_mat_from_array(ctx, M, N, A, M, DESO_ALL_RANKS, &dA));
    TU_CALL(deso_mat_block(dA, i0, j0, m, n, &B));
    gemv_checks(ctx, B, Ab, M, m, n, rng);
    /* versions: y0 = B x recorded before the write reads the old block   */
    int im = (int)m, in = (int)n, iM = (int)M;
    double *x = dalloc(n), *y0 = dalloc(m);
    tu_fill(rng, x, n);
    deso_vec *dx = tu_vec_of(ctx, n, x), *dy0 = NULL, *du = tu_vec_of(ctx, m, u);
    deso_vec *dv = tu_vec_of(ctx, n, v), *dy1 = NULL, *dy2 = NULL;
    TU_CALL(deso_vec_create(ctx, m, &dy0));
    TU_CALL(deso_vec_create(ctx, m, &dy1));
    TU_CALL(deso_vec_create(ctx, m, &dy2));
    TU_CALL(deso_mat_block(dA, i0, j0, m, n, &before));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, B, M, dx, 1,
                       0.0, dy0, 1));
    cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, 1.0, Ab, iM, x, 1, 0.0,
                y0, 1);
    /* the write: B += 0.75 u v^T, the parent's next version              */
    TU_CALL(deso_dger(DESO_COL_MAJOR, m, n, 0.75, du, 1, dv, 1, B, M));
    cblas_dger(CblasColMajor, im, in, 0.75, u, 1, v, 1, Ab, iM);
    TU_CALL(deso_mat_block(dA, i0, j0, m, n, &after));
    double *y = dalloc(m);
    cblas_dgemv(CblasColMajor, CblasNoTrans, im, in, 1.0, Ab, iM, x, 1, 0.0,
                y, 1);
    deso_mat *readers[3] = {B, before, after};
    deso_vec *outs[3] = {dy1, dy2, dy0};
    for (int r = 1; r < 3; r++)
        TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0,
                           readers[r], M, dx, 1, 0.0, outs[r - 1], 1));
    tu_expect_vec(dy0, y0, m, 1e-12);
    tu_expect_vec(dy1, y, m, 1e-12);
    tu_expect_vec(dy2, y, m, 1e-12);
    /* the written view itself, and the whole parent                      */
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, B, M, dx, 1,
                       0.0, dy0, 1));
    tu_expect_vec(dy0, y, m, 1e-12);
    double *g = dalloc(M * N);
    TU_CALL(deso_mat_gather(dA, g, M, DESO_ALL_RANKS));
    TU_CHECK(tu_relerr(g, A, M * N) < 1e-12);
    free(g);
    deso_mat_destroy(&B);
    deso_mat_destroy(&before);
    deso_mat_destroy(&after);
    deso_mat_destroy(&dA);
    deso_vec_destroy(&dx);
    deso_vec_destroy(&du);
    deso_vec_destroy(&dv);
    deso_vec_destroy(&dy0);
    deso_vec_destroy(&dy1);
    deso_vec_destroy(&dy2);
    free(A);
    free(u);
    free(v);
    free(x);
    free(y0);
    free(y);
}

static void block_walk(deso_ctx *ctx, int64_t M, int k, uint64_t seed)
{
    tu_rng rng = {seed};
    block_case(ctx, M, k, &rng);
}

static void test_blocks(void **state)
{
    (void)state;
    tu_walk(SIZES, tu_long() ? 2 : 1, 4, 211u, block_walk, "block views");
}

/* Every flush moves exactly what the model of its plan says, plus the
 * force's SPMD check: vget and vput nodes of blocks are priced by the
 * exchange they make.                                                    */
static void test_model(void **state)
{
    (void)state;
    const int64_t M = 11, N = 9;
    for (int md = 0; md < TU_NMODES; md++) {
        tu_label("model, mode %s", deso_mode_name(tu_mode(md)));
        deso_ctx *ctx = tu_ctx_mode(tu_mode(md), 0, 0, 2);
        deso_vec *u, *v, *w;
        deso_mat *A, *B, *C;
        TU_CALL(deso_vec_create(ctx, 5, &u));
        TU_CALL(deso_vec_create(ctx, 4, &v));
        TU_CALL(deso_vec_create(ctx, 7, &w));
        TU_CALL(deso_mat_create(ctx, M, N, &A));
        TU_CALL(deso_flush(ctx));
        for (int it = 0; it < 3; it++) {
            TU_CALL(deso_mat_block(A, 3, 2, 5, 4, &B));
            TU_CALL(deso_dger(DESO_COL_MAJOR, 5, 4, 1.5, u, 1, v, 1, B, M));
            TU_CALL(deso_mat_block(A, 1, 1, 7, 5, &C));
            TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, 7, 5, 1.0, C, M,
                               w, 1, 0.0, u, 1));
            TU_CALL(deso_mat_destroy(&B));
            TU_CALL(deso_mat_destroy(&C));
            tu_flush_as_modelled(ctx, tu_mode(md), it);
        }
        deso_vec_destroy(&u);
        deso_vec_destroy(&v);
        deso_vec_destroy(&w);
        deso_mat_destroy(&A);
        TU_CALL(deso_finalize(&ctx));
    }
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_blocks), cmocka_unit_test(test_model))
