/* The distributed triangular solve x <- op(T)^-1 x.
 *
 * T is folded cyclic(b) with square blocks (the trsv constraint), x and the
 * result are replicated everywhere.  Fan-in by block: for each diagonal
 * block K in dependency order, the ranks holding block row K of op(T)
 * (grid row K mod pr for T, grid column K mod pc for T^T) sum their local
 * products with the already solved blocks, reduce them to the owner of the
 * diagonal block, which solves and broadcasts x_K to every rank.  Two
 * collectives per block: fine for level 2 (O(n^2 / P) flops per rank),
 * sequential along the diagonal by nature.                                 */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"
#include "placement/alloc.h"

/* Local block indices lJ (global block lJ * p + coord) on the solved side
 * of K: [*lo, *hi) in local blocks.                                        */
static void solved_range(bool forward, int64_t K, int coord, int p,
                         int64_t nlocal_blocks, int64_t *lo, int64_t *hi)
{
    if (forward) {          /* J < K                                         */
        *lo = 0;
        *hi = K > coord ? (K - coord + p - 1) / p : 0;
    } else {                /* J > K                                         */
        *lo = K >= coord ? (K - coord) / p + 1 : 0;
        *hi = nlocal_blocks;
    }
    if (*hi > nlocal_blocks) *hi = nlocal_blocks;
    if (*lo > *hi) *lo = *hi;
}

int64_t deso__trsv_scratch(const deso_ctx *ctx, const blas_layout *lay)
{
    int64_t rows, cols;
    blas_layout_local(lay, ctx->coord[0], ctx->coord[1], &rows, &cols);
    int64_t b = blas_trsv_block_of(lay), lmax = rows > cols ? rows : cols;
    return (b > 0 ? b : 0) + (lmax > 0 ? lmax : 1);
}

deso_err deso__exec_trsv(deso_ctx *ctx, const blas_desc *d,
                         const deso__view *T, const deso__view *x,
                         deso__view *res)
{
    (void)x;   /* res already holds x's data (the in/out operand)           */
    int64_t n = T->lay.m, b = blas_trsv_block_of(&T->lay);
    DESO_CHECK(b > 0, DESO_EINTERNAL, "trsv: matrix not cyclic(b)");
    DESO_CHECK(res->rows == n, DESO_EINTERNAL, "trsv: x not replicated");
    if (n == 0) return DESO_OK;
    int pr = ctx->df.pr, pc = ctx->df.pc, r = ctx->coord[0], c = ctx->coord[1];
    bool trans = (d->flags & BLAS_F_TRANS) != 0;
    bool lower = (d->flags & BLAS_F_LOWER) != 0;
    bool forward = lower != trans;
    int64_t nblk = (n + b - 1) / b;
    int64_t lrows = T->rows, lcols = T->cols, ld = lrows > 1 ? lrows : 1;
    double *xv = res->data;
    /* workspace: b partial sums, then a local piece of x (prepared)     */
    DESO_CHECK(deso__trsv_scratch(ctx, &T->lay) <= ctx->scratch_len,
               DESO_EINTERNAL, "trsv: workspace was not prepared");
    double *s = ctx->scratch, *xl = ctx->scratch + b;
    deso_err err = DESO_OK;
    for (int64_t step = 0; step < nblk && err == DESO_OK; step++) {
        int64_t K = forward ? step : nblk - 1 - step;
        int64_t g0 = K * b, bk = n - g0 < b ? n - g0 : b;
        int rK = (int)(K % pr), cK = (int)(K % pc);
        int64_t roff = (K / pr) * b, coff = (K / pc) * b;
        bool in_line = trans ? c == cK : r == rK;
        for (int64_t e = 0; e < bk; e++) s[e] = 0.0;
        if (in_line) {
            double t0 = deso__now();
            /* along the summed dimension: columns for T, rows for T^T     */
            int p = trans ? pr : pc, co = trans ? r : c;
            int64_t nl = trans ? lrows : lcols;
            int64_t lo, hi;
            solved_range(forward, K, co, p, (nl + b - 1) / b, &lo, &hi);
            int64_t a0 = lo * b, a1 = hi * b < nl ? hi * b : nl;
            for (int64_t l = a0; l < a1; l++)
                xl[l] = xv[blas_cyc_global(b, p, co, l)];
            if (a1 > a0) {
                if (trans)
                    blas_gemv_acc(true, a1 - a0, bk, T->data + coff * ld + a0,
                                  ld, xl + a0, s);
                else
                    blas_gemv_acc(false, bk, a1 - a0, T->data + a0 * ld + roff,
                                  ld, xl + a0, s);
            }
            deso__stats_time(DESO_T_COMPUTE, deso__now() - t0);
            MPI_Comm line = trans ? ctx->dimcomm[0] : ctx->dimcomm[1];
            err = deso__reduce(ctx, line, s, bk, DESO__SUM, trans ? rK : cK);
            if (err != DESO_OK) break;
        }
        if (r == rK && c == cK) {
            double t0 = deso__now();
            for (int64_t e = 0; e < bk; e++) xv[g0 + e] -= s[e];
            blas_trsv_block(d->flags, bk, T->data + coff * ld + roff, ld,
                            xv + g0);
            deso__stats_time(DESO_T_COMPUTE, deso__now() - t0);
        }
        err = deso__bcast(ctx->comm, xv + g0, bk, rK * pc + cK);
    }
    return err;
}
