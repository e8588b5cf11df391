/* Matrix moves on the model (doc/DESIGN.md, "Cost model"): between
 * block-cyclic layouts the approximate remap of opt_cost.c; to or from a
 * matrix replicated along a grid dimension the executor's point-to-point
 * exchange (deso/runtime/exchange.c), counted exactly: each rank takes
 * each element it lacks from the nearest copy (blas_elem_src).  Gathering
 * a live-in matrix onto every rank is a one-time fill: the view stays on
 * the value, and every later force that reads the same value finds it
 * (an existing view is free), so its time is spread over REPL_FORCES
 * forces; its bytes and messages are counted in full, as the force that
 * makes it moves them.                                                   */
#include "optimizer/opt_impl.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

/* The forces a replicated copy of a live-in matrix is priced over: a
 * solver that reads its matrix in its loop reads it in every iteration,
 * tens to thousands of them (a CG on n = 100 runs hundreds), and 64 sits
 * low in that range; a matrix read only once pays a 64th of its gather
 * in the model, a gather repl_limit bounds (4 MiB by default: a few
 * milliseconds here).                                                    */
#define REPL_FORCES 64.0

/* cnt[s P + d]: the elements rank d of D takes from rank s of S.        */
static void count_gather(const blas_layout *S, const blas_layout *D,
                         int64_t *cnt)
{
    int P = S->pr * S->pc;
    if (S->rep == 0 && D->rep == 3u) {
        /* every rank takes each other rank's whole piece                 */
        for (int s = 0; s < P; s++) {
            int64_t rows, cols;
            blas_layout_local(S, s / S->pc, s % S->pc, &rows, &cols);
            for (int d = 0; d < P; d++)
                if (d != s) cnt[(int64_t)s * P + d] = rows * cols;
        }
        return;
    }
    for (int64_t g = 0; g < D->m * D->n; g++) {
        int r0, r1, c0, c1;
        blas_elem_holders(D, g, &r0, &r1, &c0, &c1);
        for (int a = r0; a < r1; a++)
            for (int b = c0; b < c1; b++) {
                int sr, sc;
                blas_elem_src(S, a, b, g, &sr, &sc);
                if (sr != a || sc != b)
                    cnt[((int64_t)sr * S->pc + sc) * P + a * D->pc + b]++;
            }
    }
}

deso_err opt__mat_move_cost(const blas_layout *S, const blas_layout *D,
                            const opt_params *pp, opt_move *move,
                            opt_counts *c)
{
    memset(c, 0, sizeof *c);
    if (S->rep == 0 && D->rep == 0) {
        *move = OPT_MV_REMAP;
        opt__remap_cost(S, pp, c);
        return DESO_OK;
    }
    int P = S->pr * S->pc;
    int64_t *cnt = deso__calloc((size_t)P * (size_t)(P + 4), sizeof *cnt);
    DESO_CHECK(cnt != NULL, DESO_ENOMEM, "optimizer: out of memory");
    count_gather(S, D, cnt);
    opt__p2p_counts(cnt, P, cnt + (int64_t)P * P, pp, c);
    free(cnt);
    *move = c->msgs_p2p > 0 ? OPT_MV_EXCHANGE : OPT_MV_COLLAPSE;
    return DESO_OK;
}

void opt__repl_amortise(const opt_value *val, const blas_layout *D,
                        opt_counts *c)
{
    if (val->producer < 0 && D->kind == BLAS_MAT && D->rep != 0)
        c->time /= REPL_FORCES;
}

int64_t opt__mat_busiest(const blas_layout *L)
{
    /* coordinate 0 holds the most of every folding                       */
    int64_t rows, cols;
    blas_layout_local(L, 0, 0, &rows, &cols);
    return rows * cols;
}
