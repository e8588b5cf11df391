/* Bipartite building blocks of the remap schedules: the Hungarian method
 * (maximum-weight matchings; doc/DESIGN.md, "Schedules") and Konig's
 * alternating-path edge colouring (exactly max-degree colours, paper 001's
 * Theorem 1).  Both are integer and deterministic, so every rank computes
 * the same schedule.                                                      */
#include <stdlib.h>

#include "placement/errors.h"
#include "placement/remap.h"
#include "placement/remap_impl.h"
#include "placement/alloc.h"

deso_err pl__max_assignment(int n, const int64_t *w, int *match)
{
    const int64_t INF = INT64_MAX / 2;
    size_t N = (size_t)n + 1;
    int64_t wmax = 0;
    for (int64_t i = 0; i < (int64_t)n * n; i++)
        if (w[i] > wmax) wmax = w[i];
    int64_t *u = deso__calloc(N, sizeof *u), *v = deso__calloc(N, sizeof *v);
    int64_t *minv = deso__malloc(N * sizeof *minv);
    int *p = deso__calloc(N, sizeof *p), *way = deso__calloc(N, sizeof *way);
    char *used = deso__malloc(N);
    if (!u || !v || !minv || !p || !way || !used) {
        free(u); free(v); free(minv); free(p); free(way); free(used);
        return deso__fail(DESO_ENOMEM, "pl_schedule_build: no memory for "
                          "a %d x %d assignment", n, n);
    }
    /* Minimise cost = wmax - w (non-negative), 1-based rows and columns;
     * column 0 is the virtual start of each augmenting search.            */
#define COST(i, j) (wmax - w[(int64_t)((i) - 1) * n + ((j) - 1)])
    for (int i = 1; i <= n; i++) {
        p[0] = i;
        int j0 = 0;
        for (size_t j = 0; j < N; j++) {
            minv[j] = INF;
            used[j] = 0;
        }
        do {
            used[j0] = 1;
            int i0 = p[j0], j1 = 0;
            int64_t delta = INF;
            for (int j = 1; j <= n; j++) {
                if (used[j]) continue;
                int64_t cur = COST(i0, j) - u[i0] - v[j];
                if (cur < minv[j]) {
                    minv[j] = cur;
                    way[j] = j0;
                }
                if (minv[j] < delta) {
                    delta = minv[j];
                    j1 = j;
                }
            }
            for (int j = 0; j <= n; j++) {
                if (used[j]) {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
        } while (p[j0] != 0);
        do {
            int j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
        } while (j0 != 0);
    }
#undef COST
    for (int j = 1; j <= n; j++) match[p[j] - 1] = j - 1;
    free(u); free(v); free(minv); free(p); free(way); free(used);
    return DESO_OK;
}

deso_err pl__edge_colour(int P, int Q, int64_t nedges, const int *ep,
                         const int *eq, int *colour, int *ncolours)
{
    int *dp = deso__calloc((size_t)P, sizeof *dp), *dq = deso__calloc((size_t)Q, sizeof *dq);
    if (!dp || !dq) {
        free(dp); free(dq);
        return deso__fail(DESO_ENOMEM, "pl_schedule_build: no memory");
    }
    int D = 0;
    for (int64_t e = 0; e < nedges; e++) {
        if (++dp[ep[e]] > D) D = dp[ep[e]];
        if (++dq[eq[e]] > D) D = dq[eq[e]];
    }
    free(dp); free(dq);
    *ncolours = D;
    if (nedges == 0) return DESO_OK;
    /* atp[p * D + c]: the edge of colour c at sender p, or -1.            */
    int64_t *atp = deso__malloc((size_t)P * D * sizeof *atp);
    int64_t *atq = deso__malloc((size_t)Q * D * sizeof *atq);
    int64_t *path = deso__malloc((size_t)nedges * sizeof *path);
    if (!atp || !atq || !path) {
        free(atp); free(atq); free(path);
        return deso__fail(DESO_ENOMEM, "pl_schedule_build: no memory");
    }
    for (int64_t i = 0; i < (int64_t)P * D; i++) atp[i] = -1;
    for (int64_t i = 0; i < (int64_t)Q * D; i++) atq[i] = -1;
    for (int64_t e = 0; e < nedges; e++) {
        int p = ep[e], q = eq[e], a = 0, b = 0;
        while (atp[(int64_t)p * D + a] >= 0) a++;   /* free at p           */
        while (atq[(int64_t)q * D + b] >= 0) b++;   /* free at q           */
        if (atq[(int64_t)q * D + a] >= 0) {
            /* a is busy at q: swap a and b along the a/b path from q.  In a
             * bipartite graph that path cannot reach p, so a becomes free
             * at q and stays free at p.                                    */
            int64_t np = 0;
            int side = 1, vtx = q, c = a;           /* side 1: a receiver  */
            for (;;) {
                int64_t f = side ? atq[(int64_t)vtx * D + c]
                                 : atp[(int64_t)vtx * D + c];
                if (f < 0) break;
                path[np++] = f;
                vtx = side ? ep[f] : eq[f];
                side = !side;
                c = (c == a) ? b : a;
            }
            for (int64_t i = 0; i < np; i++) {
                int64_t f = path[i];
                atp[(int64_t)ep[f] * D + colour[f]] = -1;
                atq[(int64_t)eq[f] * D + colour[f]] = -1;
            }
            for (int64_t i = 0; i < np; i++) {
                int64_t f = path[i];
                colour[f] = (colour[f] == a) ? b : a;
                atp[(int64_t)ep[f] * D + colour[f]] = f;
                atq[(int64_t)eq[f] * D + colour[f]] = f;
            }
        }
        colour[e] = a;
        atp[(int64_t)p * D + a] = e;
        atq[(int64_t)q * D + a] = e;
    }
    free(atp); free(atq); free(path);
    return DESO_OK;
}
