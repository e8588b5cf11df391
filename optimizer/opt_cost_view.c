/* The cost of a vget or vput node: the point-to-point exchange its
 * element map makes (deso/runtime/exchange.c), counted element by
 * element with the executor's rule for who sends what (blas_elem_src),
 * so that bytes and messages are exact.  Above VIEW_EXACT_P ranks the
 * count would not fit the stack; it is then approximated like a matrix
 * remap: (P-1)/P of the elements in up to P (P-1) messages.              */
#include "optimizer/opt_impl.h"

#include <string.h>

#define VIEW_EXACT_P 64

void opt__view_cost(const opt_node *nd, const opt_place *pl,
                    const opt_params *pp, opt_counts *c)
{
    const blas_layout *S = &pl->req[nd->d.op == BLAS_OP_VGET ? 0 : 1];
    const blas_layout *D = &pl->res;
    blas_emap e = blas_desc_map(&nd->d);
    int P = D->pr * D->pc, pc = D->pc;
    memset(c, 0, sizeof *c);
    if (P <= 1 || e.len == 0) return;
    if (P > VIEW_EXACT_P) {
        c->msgs_p2p = (int64_t)P * (P - 1);
        c->bytes_p2p = 8 * e.len * (P - 1) / P;
        c->time = pp->alpha * (double)(P - 1) +
                  pp->beta * 8.0 * (double)e.len / (double)P;
        return;
    }
    int64_t cnt[VIEW_EXACT_P * VIEW_EXACT_P], ns[4 * VIEW_EXACT_P];
    memset(cnt, 0, (size_t)P * (size_t)P * sizeof *cnt);
    memset(ns, 0, 4 * (size_t)P * sizeof *ns);
    for (int64_t i = 0; i < e.len; i++) {
        int64_t t = blas_emap_dst(&e, i), g = blas_emap_src(&e, i);
        int r0, r1, c0, c1;
        blas_elem_holders(D, t, &r0, &r1, &c0, &c1);
        for (int a = r0; a < r1; a++)
            for (int b = c0; b < c1; b++) {
                int sr, sc;
                blas_elem_src(S, a, b, g, &sr, &sc);
                int q = sr * pc + sc, d = a * pc + b;
                if (q != d) cnt[(int64_t)q * P + d]++;
            }
    }
    opt__p2p_counts(cnt, P, ns, pp, c);
}
