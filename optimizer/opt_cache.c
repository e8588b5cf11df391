/* The plan cache: structural keys, a bounded LRU map, plan variants.     */
#include "optimizer/opt_cache.h"

#include <stdlib.h>
#include <string.h>

#include "optimizer/opt_impl.h"
#include "placement/errors.h"
#include "placement/alloc.h"

/* ---- keys ----------------------------------------------------------------- */

typedef struct hpair { uint64_t a, b; } hpair;

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void hput(hpair *h, uint64_t v)
{
    h->a = mix64(h->a ^ v) + 0x9e3779b97f4a7c15ull;
    h->b = mix64((h->b + v) * 0xff51afd7ed558ccdull ^ 0xc4ceb9fe1a85ec53ull);
}

static void hlay(hpair *h, const blas_layout *l)
{
    hput(h, (uint64_t)l->kind);
    hput(h, (uint64_t)l->m);
    hput(h, (uint64_t)l->n);
    hput(h, (uint64_t)(int64_t)l->dist);
    hput(h, (uint64_t)l->b);
    hput(h, (uint64_t)l->nb);
    hput(h, (uint64_t)l->rep);
    hput(h, (uint64_t)l->pr);
    hput(h, (uint64_t)l->pc);
    if (l->part != NULL) {      /* a layout by partition: its ranges     */
        for (int q = 0; q <= l->part->nparts; q++)
            hput(h, (uint64_t)l->part->start[q]);
        if (l->part->perm != NULL) hput(h, l->part->hash);  /* renumbering */
    }
}

static uint64_t graph_key(const opt_graph *g, opt_mode mode, uint64_t *check,
                          bool layouts)
{
    hpair h = {0x6465736f2d6b6579ull, 0x636865636b2d3031ull};
    hput(&h, 0x0dea0001u);                       /* key format version     */
    hput(&h, (uint64_t)mode);
    hput(&h, (uint64_t)g->df.pr);
    hput(&h, (uint64_t)g->df.pc);
    hput(&h, (uint64_t)g->df.nb);
    hput(&h, (uint64_t)g->nvals);
    hput(&h, (uint64_t)g->nnodes);
    for (int v = 0; v < g->nvals; v++) {
        const opt_value *x = &g->vals[v];
        hput(&h, (uint64_t)x->kind);
        hput(&h, (uint64_t)x->m);
        hput(&h, (uint64_t)x->n);
        hput(&h, (uint64_t)(int64_t)x->producer);
        /* the out-of-core mark adds nothing to an in-core graph's key    */
        hput(&h, ((uint64_t)x->ooc << 2) | ((uint64_t)x->live_out << 1) |
                     (uint64_t)x->has_want);
        if (x->has_want) hlay(&h, &x->want);
        if (x->producer < 0 && !layouts) {
            hput(&h, (uint64_t)x->kind);   /* the shape only              */
        } else if (x->producer < 0) {
            hput(&h, (uint64_t)x->nviews);
            for (int k = 0; k < x->nviews; k++) hlay(&h, &x->views[k]);
        }
    }
    for (int i = 0; i < g->nnodes; i++) {
        const opt_node *nd = &g->nodes[i];
        hput(&h, (uint64_t)nd->d.op);
        hput(&h, (uint64_t)nd->d.flags);
        hput(&h, (uint64_t)nd->d.nops);
        if (blas_desc_params(nd->d.op)) {
            hput(&h, (uint64_t)nd->d.off);
            hput(&h, (uint64_t)nd->d.inc);
            hput(&h, (uint64_t)nd->d.len);
            hput(&h, (uint64_t)nd->d.rows);
            hput(&h, (uint64_t)nd->d.ld);
        }
        /* a sparse product: its matrix's partitions and halo (the plan's
         * layouts and cost depend on them, never on the matrix's id)     */
        if (nd->d.sp != NULL) hput(&h, nd->d.sp->hash);
        for (int k = 0; k < nd->d.nops; k++) hput(&h, (uint64_t)nd->ops[k]);
        hput(&h, (uint64_t)nd->res);
    }
    if (check != NULL) *check = h.b ? h.b : 1;   /* 0 means "unknown"      */
    return layouts ? h.a : h.a ^ 0x5348415045ull;
}

uint64_t opt_graph_key(const opt_graph *g, opt_mode mode, uint64_t *check)
{
    return graph_key(g, mode, check, true);
}

uint64_t opt_graph_shape_key(const opt_graph *g, opt_mode mode)
{
    return graph_key(g, mode, NULL, false);
}

/* ---- variants ------------------------------------------------------------- */

static bool place_eq(const opt_place *a, const opt_place *b, int nops)
{
    if (!blas_layout_equal(&a->res, &b->res)) return false;
    for (int k = 0; k < nops; k++)
        if (!blas_layout_equal(&a->req[k], &b->req[k])) return false;
    return true;
}

deso_err opt_plan_variants(const opt_graph *g, const opt_plan *p,
                           opt_mode mode, int *variant)
{
    DESO_CHECK(p->nnodes == g->nnodes, DESO_EINVAL,
               "opt_plan_variants: plan and graph differ in size");
    opt_place *c = deso__malloc(OPT_MAXCANDS * sizeof *c);
    DESO_CHECK(c != NULL, DESO_ENOMEM, "optimizer: out of memory");
    deso_err err = DESO_OK;
    for (int i = 0; i < g->nnodes && err == DESO_OK; i++) {
        blas_layout cur[BLAS_MAXOPS];
        opt__cur_ops(g, p, i, cur);
        int n = 0;
        err = opt_node_cands(g, i, mode, cur, c, &n);
        variant[i] = -1;
        for (int k = 0; k < n && err == DESO_OK; k++)
            if (place_eq(&c[k], &p->node[i], g->nodes[i].d.nops)) {
                variant[i] = k;
                break;
            }
    }
    free(c);
    return err;
}

deso_err opt_plan_rebuild(const opt_graph *g, opt_mode mode, int nnodes,
                          const blas_layout *res, const int *variant,
                          const opt_params *pp, opt_plan *out)
{
    DESO_CHECK(nnodes == g->nnodes, DESO_EINVAL,
               "plan: %d nodes, the DAG has %d", nnodes, g->nnodes);
    DESO_TRY(opt__plan_alloc(out, g->nnodes));
    out->mode = mode;
    opt_place *c = deso__malloc(OPT_MAXCANDS * sizeof *c);
    deso_err err = c ? DESO_OK
                     : deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    for (int i = 0; i < g->nnodes && err == DESO_OK; i++) {
        blas_layout cur[BLAS_MAXOPS];
        opt__cur_ops(g, out, i, cur);
        int n = 0;
        err = opt_node_cands(g, i, mode, cur, c, &n);
        if (err != DESO_OK) break;
        /* a layout by partition read from wisdom names none: the key
         * (which hashes the graph's partitions) vouches for it           */
        blas_layout want = res[i];
        if (want.dist == BLAS_DIST_PART && want.part == NULL &&
            variant[i] >= 0 && variant[i] < n)
            want.part = c[variant[i]].res.part;
        if (variant[i] < 0 || variant[i] >= n ||
            !blas_layout_equal(&c[variant[i]].res, &want)) {
            err = deso__fail(DESO_EINVAL,
                             "plan: node %d does not fit its candidates", i);
            break;
        }
        out->node[i] = c[variant[i]];
    }
    free(c);
    if (err == DESO_OK)
        err = opt_plan_cost(g, out, pp, NULL, NULL, &out->model);
    if (err != DESO_OK) opt_plan_free(out);
    return err;
}

/* ---- the LRU map ------------------------------------------------------------ */

struct opt_cache {
    int cap, n;
    uint64_t tick;
    opt_cache_entry *e;
};

opt_cache *opt_cache_new(int cap)
{
    if (cap < 1) cap = 1;
    opt_cache *c = deso__calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->e = deso__calloc((size_t)cap, sizeof *c->e);
    if (c->e == NULL) {
        free(c);
        return NULL;
    }
    c->cap = cap;
    return c;
}

static void entry_clear(opt_cache_entry *e)
{
    opt_plan_free(&e->plan);
    free(e->variant);
    memset(e, 0, sizeof *e);
}

void opt_cache_free(opt_cache *c)
{
    if (c == NULL) return;
    for (int k = 0; k < c->n; k++) entry_clear(&c->e[k]);
    free(c->e);
    free(c);
}

void opt_cache_clear(opt_cache *c)
{
    if (c == NULL) return;
    for (int k = 0; k < c->n; k++) entry_clear(&c->e[k]);
    c->n = 0;
}

int opt_cache_count(const opt_cache *c) { return c ? c->n : 0; }
int opt_cache_capacity(const opt_cache *c) { return c ? c->cap : 0; }

opt_cache_entry *opt_cache_at(opt_cache *c, int k)
{
    if (c == NULL || k < 0 || k >= c->n) return NULL;
    return &c->e[k];
}

opt_cache_entry *opt_cache_find(opt_cache *c, uint64_t key, uint64_t check)
{
    if (c == NULL) return NULL;
    for (int k = 0; k < c->n; k++) {
        opt_cache_entry *e = &c->e[k];
        if (e->key != key) continue;
        if (check != 0 && e->check != 0 && e->check != check) return NULL;
        e->used = ++c->tick;
        return e;
    }
    return NULL;
}

opt_cache_entry *opt_cache_find_shape(opt_cache *c, uint64_t shape)
{
    if (c == NULL) return NULL;
    opt_cache_entry *best = NULL;
    for (int k = 0; k < c->n; k++)
        if (c->e[k].shape == shape && (best == NULL || c->e[k].used > best->used))
            best = &c->e[k];
    if (best != NULL) best->used = ++c->tick;
    return best;
}

deso_err opt_cache_put(opt_cache *c, uint64_t key, uint64_t check,
                       uint64_t shape, const opt_plan *p, const int *variant,
                       opt_cache_entry **out)
{
    DESO_CHECK(c != NULL && p != NULL, DESO_ENULL, "opt_cache_put: NULL");
    opt_cache_entry ne;
    memset(&ne, 0, sizeof ne);
    DESO_TRY(opt_plan_copy(p, &ne.plan));
    if (variant != NULL) {
        size_t n = p->nnodes > 0 ? (size_t)p->nnodes : 1;
        ne.variant = deso__malloc(n * sizeof *ne.variant);
        if (ne.variant == NULL) {
            opt_plan_free(&ne.plan);
            return deso__fail(DESO_ENOMEM, "plan cache: out of memory");
        }
        if (p->nnodes > 0)
            memcpy(ne.variant, variant, (size_t)p->nnodes * sizeof *variant);
    }
    ne.key = key;
    ne.check = check;
    ne.shape = shape;
    ne.used = ++c->tick;
    int slot = -1;
    for (int k = 0; k < c->n && slot < 0; k++)
        if (c->e[k].key == key) slot = k;
    if (slot < 0 && c->n < c->cap) slot = c->n++;
    if (slot < 0) {
        slot = 0;
        for (int k = 1; k < c->n; k++)
            if (c->e[k].used < c->e[slot].used) slot = k;
    }
    entry_clear(&c->e[slot]);     /* a fresh slot is all zero: no-op     */
    c->e[slot] = ne;
    if (out != NULL) *out = &c->e[slot];
    return DESO_OK;
}
