/* Building the navigational trace graph (see ntg.h).                      */
#include "optimizer/ntg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"
#include "placement/pl_arith.h"

/* METIS sums the weights of both directions of every edge in 32 bits;
 * the merged total stays at half of that, with room for the rounding up
 * of light edges to 1.                                                    */
#define WEIGHT_SUM_MAX ((int64_t)1 << 29)

typedef struct edge {
    int64_t u, v, w;        /* u < v                                        */
} edge;

typedef struct edges {
    edge *e;
    int64_t n, cap;
} edges;

static deso_err add_edge(edges *l, int64_t u, int64_t v, int64_t w)
{
    if (u == v || w <= 0) return DESO_OK;  /* self-loops are dropped       */
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 1024;
        edge *e = deso__realloc(l->e, (size_t)cap * sizeof *e);
        DESO_CHECK(e != NULL, DESO_ENOMEM, "NTG: %lld edges", (long long)cap);
        l->e = e;
        l->cap = cap;
    }
    l->e[l->n++] = (edge){u < v ? u : v, u < v ? v : u, w};
    return DESO_OK;
}

/* ---- the trace ------------------------------------------------------------ */

/* The vectors a call touches at each index, as a bit set.                */
static uint32_t touched(const opt_ntg_call *c)
{
    uint32_t s = 1u << c->out;
    for (int k = 0; k < c->nin; k++) s |= 1u << c->in[k];
    return s;
}

static deso_err check_call(const opt_ntg_call *c, int nvec, int64_t n)
{
    int ok = c->out >= 0 && c->out < nvec && c->nin >= 0 &&
             c->nin <= OPT_NTG_MAX_IN && (c->a == NULL || c->nin == 1);
    for (int k = 0; ok && k < c->nin; k++) ok = c->in[k] >= 0 && c->in[k] < nvec;
    DESO_CHECK(ok, DESO_EINVAL, "NTG: a call names a vector outside [0, %d) "
               "or has %d inputs", nvec, c->nin);
    DESO_CHECK(c->a == NULL || (c->a->ncols == n && c->a->rowptr != NULL),
               DESO_EINVAL, "NTG: a product's matrix is not %lld columns wide",
               (long long)n);
    for (int64_t r = 0; c->a && r < c->a->nrows; r++) {
        int64_t i = pl_csr_global_row(c->a, r);
        DESO_CHECK(i >= 0 && i < n, DESO_EINVAL, "NTG: row %lld outside a "
                   "square matrix of %lld", (long long)i, (long long)n);
    }
    return DESO_OK;
}

/* C edges between successive calls k, k + 1 (u touched by k, v by k + 1,
 * u != v) at one index: *pairs of them.                                   */
static int64_t c_pairs(uint32_t sk, uint32_t sk1)
{
    int64_t pairs = 0;
    for (int u = 0; u < 32; u++)
        for (int v = 0; v < 32; v++)
            pairs += (sk >> u & 1) && (sk1 >> v & 1) && u != v;
    return pairs;
}

static deso_err set_weights(const opt_ntg_call *calls, int ncalls,
                            double l_scaling, opt_ntg *g)
{
    int64_t nc = 0;
    for (int k = 0; k + 1 < ncalls; k++) {
        int64_t add;
        DESO_CHECK(pl__mul(c_pairs(touched(&calls[k]), touched(&calls[k + 1])),
                           g->n, &add) && pl__add(nc, add, &nc), DESO_ESIZE,
                   "NTG: too many continuity edges");
    }
    g->ncedges = nc;
    g->c = 1;
    g->p = nc + 1;
    DESO_CHECK(l_scaling >= 0 && l_scaling * (double)g->p < 0x1p62, DESO_EINVAL,
               "NTG: L_SCALING %g out of range", l_scaling);
    g->l = llround(l_scaling * (double)g->p);
    return DESO_OK;
}

static deso_err choose_blocks(int nvec, int64_t n, const opt_ntg_opts *o,
                              opt_ntg *g)
{
    int64_t maxv = o->max_vertices > 0 ? o->max_vertices : OPT_NTG_MAX_VERTICES;
    DESO_CHECK(maxv >= nvec, DESO_EINVAL, "NTG: %lld vertices cannot hold %d "
               "vectors", (long long)maxv, nvec);
    int64_t per_vec = maxv / nvec;
    g->nvec = nvec;
    g->n = n;
    g->block = n > per_vec ? (n + per_vec - 1) / per_vec : 1;
    g->nblocks = (n + g->block - 1) / g->block;
    g->nvtx = (int64_t)nvec * g->nblocks;
    return DESO_OK;
}

/* ---- edges -------------------------------------------------------------- */

static int64_t vtx(const opt_ntg *g, int vec, int64_t i)
{
    return vec * g->nblocks + i / g->block;
}

static int64_t block_len(const opt_ntg *g, int64_t b)
{
    int64_t lo = b * g->block, hi = lo + g->block;
    return (hi < g->n ? hi : g->n) - lo;
}

/* The PC edges of product c for the rows of a (all of its matrix, or a
 * piece of its rows).                                                   */
static deso_err product_edges(const opt_ntg *g, const opt_ntg_call *c,
                              const pl_csr *a, edges *l)
{
    for (int64_t r = 0; r < a->nrows; r++) {
        int64_t i = pl_csr_global_row(a, r);
        for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++) {
            int64_t yi = c->trans ? a->col[e] : i, xj = c->trans ? i : a->col[e];
            DESO_TRY(add_edge(l, vtx(g, c->out, yi), vtx(g, c->in[0], xj),
                              g->p));
        }
    }
    return DESO_OK;
}

static deso_err elementwise_edges(const opt_ntg *g, const opt_ntg_call *c,
                                  edges *l)
{
    for (int64_t b = 0; b < g->nblocks; b++)
        for (int k = 0; k < c->nin; k++)
            DESO_TRY(add_edge(l, c->out * g->nblocks + b, c->in[k] * g->nblocks + b,
                              g->p * block_len(g, b)));
    return DESO_OK;
}

static deso_err continuity_edges(const opt_ntg *g, uint32_t sk, uint32_t sk1,
                                 edges *l)
{
    for (int64_t b = 0; b < g->nblocks; b++)
        for (int u = 0; u < g->nvec; u++)
            for (int v = 0; v < g->nvec; v++)
                if ((sk >> u & 1) && (sk1 >> v & 1) && u != v)
                    DESO_TRY(add_edge(l, u * g->nblocks + b, v * g->nblocks + b,
                                      g->c * block_len(g, b)));
    return DESO_OK;
}

static deso_err locality_edges(const opt_ntg *g, edges *l)
{
    for (int v = 0; v < g->nvec; v++)
        for (int64_t b = 0; b + 1 < g->nblocks; b++)
            DESO_TRY(add_edge(l, v * g->nblocks + b, v * g->nblocks + b + 1, g->l));
    return DESO_OK;
}

/* Every edge but the products' PC edges, which come with their rows.  */
static deso_err call_edges(const opt_ntg *g, const opt_ntg_call *calls,
                           int ncalls, edges *l)
{
    for (int k = 0; k < ncalls; k++) {
        if (!calls[k].a) DESO_TRY(elementwise_edges(g, &calls[k], l));
        if (k + 1 < ncalls)
            DESO_TRY(continuity_edges(g, touched(&calls[k]),
                                      touched(&calls[k + 1]), l));
    }
    return locality_edges(g, l);
}

/* ---- merging into METIS's arrays ------------------------------------------ */

typedef struct half_edge {
    int64_t v, w;
} half_edge;

static int cmp_half(const void *pa, const void *pb)
{
    const half_edge *a = pa, *b = pb;
    return (a->v > b->v) - (a->v < b->v);
}

/* Sorts one vertex's (v, w) pairs by v: insertion sort, since a vertex of
 * the trace graph mostly has a handful of neighbours; a dense row's vertex
 * (thousands) goes to qsort, to stay O(k log k).                         */
static void sort_by_v(half_edge *h, int64_t n)
{
    if (n > 32) {
        qsort(h, (size_t)n, sizeof *h, cmp_half);
        return;
    }
    for (int64_t k = 1; k < n; k++) {
        half_edge x = h[k];
        int64_t s = k;
        for (; s > 0 && h[s - 1].v > x.v; s--) h[s] = h[s - 1];
        h[s] = x;
    }
}

/* Groups the edges by u (a counting sort: linear, where a comparison sort
 * of millions of edges took a third of the build), sorts each group by v
 * and sums parallel edges.  Returns the total weight, -1 without memory. */
static int64_t merge(edges *l, int64_t nvtx)
{
    if (l->n == 0) return 0;
    int64_t *first = deso__calloc((size_t)nvtx + 1, sizeof *first);
    half_edge *h = deso__malloc((size_t)l->n * sizeof *h);
    if (!first || !h) {
        free(first);
        free(h);
        return -1;
    }
    for (int64_t k = 0; k < l->n; k++) first[l->e[k].u + 1]++;
    for (int64_t x = 0; x < nvtx; x++) first[x + 1] += first[x];
    for (int64_t k = 0; k < l->n; k++)
        h[first[l->e[k].u]++] = (half_edge){l->e[k].v, l->e[k].w};
    int64_t out = 0, total = 0, lo = 0;
    for (int64_t u = 0; u < nvtx; u++) {
        int64_t hi = first[u];            /* the scatter left the ends here */
        sort_by_v(h + lo, hi - lo);
        for (int64_t k = lo; k < hi; k++) {
            total += h[k].w;
            if (k > lo && h[k - 1].v == h[k].v) l->e[out - 1].w += h[k].w;
            else l->e[out++] = (edge){u, h[k].v, h[k].w};
        }
        lo = hi;
    }
    l->n = out;
    free(first);
    free(h);
    return total;
}

static int32_t scaled(int64_t w, double scale)
{
    if (scale >= 1.0) return (int32_t)w;
    int64_t s = llround((double)w * scale);
    return (int32_t)(s > 0 ? s : 1);
}

static deso_err alloc_adjacency(opt_ntg *g)
{
    size_t ends = (size_t)(2 * g->nedges > 0 ? 2 * g->nedges : 1);
    g->xadj = deso__calloc((size_t)g->nvtx + 1, sizeof *g->xadj);
    g->adjncy = deso__malloc(ends * sizeof *g->adjncy);
    g->adjwgt = deso__malloc(ends * sizeof *g->adjwgt);
    g->vwgt = deso__calloc((size_t)g->nvtx * (size_t)g->nvec, sizeof *g->vwgt);
    DESO_CHECK(g->xadj && g->adjncy && g->adjwgt && g->vwgt, DESO_ENOMEM,
               "NTG: %lld vertices, %lld edges", (long long)g->nvtx,
               (long long)g->nedges);
    return DESO_OK;
}

static void fill_adjacency(opt_ntg *g, const edges *l)
{
    for (int64_t k = 0; k < l->n; k++) {
        g->xadj[l->e[k].u + 1]++;
        g->xadj[l->e[k].v + 1]++;
    }
    for (int64_t x = 0; x < g->nvtx; x++) g->xadj[x + 1] += g->xadj[x];
    for (int64_t k = 0; k < l->n; k++) {
        int32_t w = scaled(l->e[k].w, g->scale);
        int32_t at = g->xadj[l->e[k].u]++;
        g->adjncy[at] = (int32_t)l->e[k].v; g->adjwgt[at] = w;
        at = g->xadj[l->e[k].v]++;
        g->adjncy[at] = (int32_t)l->e[k].u; g->adjwgt[at] = w;
    }
    for (int64_t x = g->nvtx; x > 0; x--) g->xadj[x] = g->xadj[x - 1];
    g->xadj[0] = 0;
    for (int v = 0; v < g->nvec; v++)
        for (int64_t b = 0; b < g->nblocks; b++)
            g->vwgt[(v * g->nblocks + b) * g->nvec + v] = (int32_t)block_len(g, b);
}

static deso_err finish(opt_ntg *g, edges *l)
{
    int64_t total = merge(l, g->nvtx);
    DESO_CHECK(total >= 0, DESO_ENOMEM, "NTG: merging %lld edges", (long long)l->n);
    g->nedges = l->n;
    DESO_CHECK(2 * g->nedges < INT32_MAX && g->nvtx < INT32_MAX, DESO_ESIZE,
               "NTG: %lld vertices and %lld edges exceed METIS's 32-bit "
               "indices", (long long)g->nvtx, (long long)g->nedges);
    g->scale = total > WEIGHT_SUM_MAX ? (double)WEIGHT_SUM_MAX / (double)total : 1.0;
    DESO_TRY(alloc_adjacency(g));
    fill_adjacency(g, l);
    return DESO_OK;
}

/* A graph under construction: its shape and weights, and the edges so
 * far (merged only at the end: the merged graph does not depend on the
 * order in which edges arrive).                                          */
struct opt_ntg_builder {
    opt_ntg g;
    edges l;
    const opt_ntg_call *calls;
    int ncalls;
};

void opt_ntg_abandon(opt_ntg_builder *b)
{
    if (!b) return;
    opt_ntg_free(&b->g);
    free(b->l.e);
    free(b);
}

deso_err opt_ntg_begin(const opt_ntg_call *calls, int ncalls, int nvec,
                       int64_t n, const opt_ntg_opts *o, opt_ntg_builder **out)
{
    DESO_CHECK(out != NULL && o != NULL && (calls != NULL || ncalls == 0),
               DESO_ENULL, "opt_ntg_build: NULL");
    *out = NULL;
    DESO_CHECK(nvec >= 1 && nvec <= OPT_NTG_MAX_VECS && n >= 1 && ncalls >= 0,
               DESO_EINVAL, "NTG: %d vectors of %lld entries, %d calls", nvec,
               (long long)n, ncalls);
    /* a vector's vertex weights (its block lengths) add up to n, in METIS's
     * 32-bit integers                                                      */
    DESO_CHECK(n < INT32_MAX, DESO_ESIZE, "NTG: %lld entries exceed METIS's "
               "32-bit vertex weights", (long long)n);
    for (int k = 0; k < ncalls; k++) DESO_TRY(check_call(&calls[k], nvec, n));
    opt_ntg_builder *b = deso__calloc(1, sizeof *b);
    DESO_CHECK(b != NULL, DESO_ENOMEM, "NTG: no memory");
    b->calls = calls;
    b->ncalls = ncalls;
    deso_err e = choose_blocks(nvec, n, o, &b->g);
    if (e == DESO_OK) e = set_weights(calls, ncalls, o->l_scaling, &b->g);
    if (e == DESO_OK) e = call_edges(&b->g, calls, ncalls, &b->l);
    if (e != DESO_OK) {
        opt_ntg_abandon(b);
        return e;
    }
    *out = b;
    return DESO_OK;
}

static deso_err check_piece(const opt_ntg *g, const pl_csr *a)
{
    DESO_CHECK(a != NULL && a->rowptr != NULL && a->ncols == g->n &&
                   a->nrows >= 0, DESO_EINVAL, "NTG: a piece of rows that is "
               "not %lld columns wide", (long long)g->n);
    for (int64_t r = 0; r < a->nrows; r++) {
        int64_t i = pl_csr_global_row(a, r);
        DESO_CHECK(i >= 0 && i < g->n, DESO_EINVAL, "NTG: row %lld outside a "
                   "square matrix of %lld", (long long)i, (long long)g->n);
    }
    return DESO_OK;
}

deso_err opt_ntg_add_rows(opt_ntg_builder *b, const pl_csr *piece)
{
    DESO_CHECK(b != NULL, DESO_ENULL, "opt_ntg_add_rows: NULL");
    DESO_TRY(check_piece(&b->g, piece));
    for (int k = 0; k < b->ncalls; k++)
        if (b->calls[k].a)
            DESO_TRY(product_edges(&b->g, &b->calls[k], piece, &b->l));
    return DESO_OK;
}

deso_err opt_ntg_end(opt_ntg_builder *b, opt_ntg *g)
{
    DESO_CHECK(b != NULL && g != NULL, DESO_ENULL, "opt_ntg_end: NULL");
    deso_err e = finish(&b->g, &b->l);
    memset(g, 0, sizeof *g);
    if (e == DESO_OK) {
        *g = b->g;
        memset(&b->g, 0, sizeof b->g);
    }
    opt_ntg_abandon(b);
    return e;
}

deso_err opt_ntg_build(const opt_ntg_call *calls, int ncalls, int nvec,
                       int64_t n, const opt_ntg_opts *o, opt_ntg *g)
{
    DESO_CHECK(g != NULL, DESO_ENULL, "opt_ntg_build: NULL");
    memset(g, 0, sizeof *g);
    opt_ntg_builder *b;
    DESO_TRY(opt_ntg_begin(calls, ncalls, nvec, n, o, &b));
    deso_err e = DESO_OK;
    for (int k = 0; e == DESO_OK && k < ncalls; k++)
        if (calls[k].a)
            e = product_edges(&b->g, &calls[k], calls[k].a, &b->l);
    if (e != DESO_OK) {
        opt_ntg_abandon(b);
        return e;
    }
    return opt_ntg_end(b, g);
}

void opt_ntg_free(opt_ntg *g)
{
    if (!g) return;
    free(g->xadj);
    free(g->adjncy);
    free(g->adjwgt);
    free(g->vwgt);
    memset(g, 0, sizeof *g);
}
