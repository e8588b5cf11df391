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

/* The Hungarian method's arrays, 1-based with column 0 the virtual
 * start of each augmenting search.                                      */
typedef struct assign_ws {
    int64_t *u, *v, *minv;
    int *p, *way;
    char *used;
} assign_ws;

static void assign_ws_free(assign_ws *a)
{
    free(a->u); free(a->v); free(a->minv); free(a->p); free(a->way);
    free(a->used);
}

static deso_err assign_ws_make(int n, assign_ws *a)
{
    size_t N = (size_t)n + 1;
    a->u = deso__calloc(N, sizeof *a->u);
    a->v = deso__calloc(N, sizeof *a->v);
    a->minv = deso__malloc(N * sizeof *a->minv);
    a->p = deso__calloc(N, sizeof *a->p);
    a->way = deso__calloc(N, sizeof *a->way);
    a->used = deso__malloc(N);
    if (a->u && a->v && a->minv && a->p && a->way && a->used) return DESO_OK;
    assign_ws_free(a);
    return deso__fail(DESO_ENOMEM, "pl_schedule_build: no memory for "
                      "a %d x %d assignment", n, n);
}

/* Adds row i to the assignment: the shortest augmenting path from it
 * (potentials u, v kept feasible), then the flips along it.  Costs are
 * wmax - w, non-negative.                                               */
static void assign_row(int n, const int64_t *w, int64_t wmax, int i,
                       assign_ws *a)
{
    const int64_t INF = INT64_MAX / 2;
    int64_t *u = a->u, *v = a->v, *minv = a->minv;
    int *p = a->p, *way = a->way;
    p[0] = i;
    int j0 = 0;
    for (int j = 0; j <= n; j++) {
        minv[j] = INF;
        a->used[j] = 0;
    }
    do {
        a->used[j0] = 1;
        int i0 = p[j0], j1 = 0;
        int64_t delta = INF;
        const int64_t *wrow = w + (int64_t)(i0 - 1) * n;
        for (int j = 1; j <= n; j++) {
            if (a->used[j]) continue;
            int64_t cur = wmax - wrow[j - 1] - u[i0] - v[j];
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
            if (a->used[j]) {
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

deso_err pl__max_assignment(int n, const int64_t *w, int *match)
{
    int64_t wmax = 0;
    for (int64_t i = 0; i < (int64_t)n * n; i++)
        if (w[i] > wmax) wmax = w[i];
    assign_ws a;
    DESO_TRY(assign_ws_make(n, &a));
    for (int i = 1; i <= n; i++) assign_row(n, w, wmax, i, &a);
    for (int j = 1; j <= n; j++) match[a.p[j] - 1] = j - 1;
    assign_ws_free(&a);
    return DESO_OK;
}

/* The largest degree of the multigraph; -1 when out of memory.          */
static int max_degree(int P, int Q, int64_t nedges, const int *ep,
                      const int *eq)
{
    int *dp = deso__calloc((size_t)P, sizeof *dp);
    int *dq = deso__calloc((size_t)Q, sizeof *dq);
    int D = -1;
    if (dp && dq) {
        D = 0;
        for (int64_t e = 0; e < nedges; e++) {
            if (++dp[ep[e]] > D) D = dp[ep[e]];
            if (++dq[eq[e]] > D) D = dq[eq[e]];
        }
    }
    free(dp); free(dq);
    return D;
}

/* The colouring in progress: atp[p * D + c] is the edge of colour c at
 * sender p, or -1; atq the same at receivers; path a scratch of nedges. */
typedef struct colouring {
    const int *ep, *eq;
    int *colour;
    int D;
    int64_t *atp, *atq, *path;
} colouring;

/* Colour a is busy at receiver q and free at the new edge's sender:
 * swaps a and b along the a/b path from q.  In a bipartite graph that
 * path cannot reach the sender, so a becomes free at q and stays free
 * there.                                                                */
static void flip_path(colouring *C, int q, int a, int b)
{
    int64_t D = C->D, np = 0;
    int side = 1, vtx = q, c = a;               /* side 1: a receiver  */
    for (;;) {
        int64_t f = side ? C->atq[vtx * D + c] : C->atp[vtx * D + c];
        if (f < 0) break;
        C->path[np++] = f;
        vtx = side ? C->ep[f] : C->eq[f];
        side = !side;
        c = (c == a) ? b : a;
    }
    for (int64_t i = 0; i < np; i++) {
        int64_t f = C->path[i];
        C->atp[C->ep[f] * D + C->colour[f]] = -1;
        C->atq[C->eq[f] * D + C->colour[f]] = -1;
    }
    for (int64_t i = 0; i < np; i++) {
        int64_t f = C->path[i];
        C->colour[f] = (C->colour[f] == a) ? b : a;
        C->atp[C->ep[f] * D + C->colour[f]] = f;
        C->atq[C->eq[f] * D + C->colour[f]] = f;
    }
}

deso_err pl__edge_colour(int P, int Q, int64_t nedges, const int *ep,
                         const int *eq, int *colour, int *ncolours)
{
    int D = max_degree(P, Q, nedges, ep, eq);
    if (D < 0) return deso__fail(DESO_ENOMEM, "pl_schedule_build: no memory");
    *ncolours = D;
    if (nedges == 0) return DESO_OK;
    colouring C = { ep, eq, colour, D,
                    deso__malloc((size_t)P * D * sizeof *C.atp),
                    deso__malloc((size_t)Q * D * sizeof *C.atq),
                    deso__malloc((size_t)nedges * sizeof *C.path) };
    if (!C.atp || !C.atq || !C.path) {
        free(C.atp); free(C.atq); free(C.path);
        return deso__fail(DESO_ENOMEM, "pl_schedule_build: no memory");
    }
    for (int64_t i = 0; i < (int64_t)P * D; i++) C.atp[i] = -1;
    for (int64_t i = 0; i < (int64_t)Q * D; i++) C.atq[i] = -1;
    for (int64_t e = 0; e < nedges; e++) {
        int p = ep[e], q = eq[e], a = 0, b = 0;
        while (C.atp[(int64_t)p * D + a] >= 0) a++;   /* free at p         */
        while (C.atq[(int64_t)q * D + b] >= 0) b++;   /* free at q         */
        if (C.atq[(int64_t)q * D + a] >= 0) flip_path(&C, q, a, b);
        colour[e] = a;
        C.atp[(int64_t)p * D + a] = e;
        C.atq[(int64_t)q * D + a] = e;
    }
    free(C.atp); free(C.atq); free(C.path);
    return DESO_OK;
}
