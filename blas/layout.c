/* Layouts: the executor's normalised block-cyclic reading of a placement. */
#include "blas/blas.h"

#include <string.h>

#include "placement/errors.h"

int64_t blas_numroc(int64_t n, int64_t b, int c, int p)
{
    if (n <= 0 || b <= 0 || p <= 0) return 0;
    int64_t nblocks = n / b;
    int64_t num = (nblocks / p) * b;
    int64_t extra = nblocks % p;
    if (c < extra) num += b;
    else if (c == extra) num += n % b;
    return num;
}

/* a >= 0, b > 0; no overflow near INT64_MAX (a + b - 1 would).           */
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* A block size: <= 0 means block folding; never more than the extent.     */
static int64_t norm_block(int64_t b, int64_t n, int p)
{
    int64_t one = n > 1 ? n : 1;
    if (p <= 1) return one;
    if (b <= 0) b = ceil_div(one, p);
    return b > one ? one : b;
}

void blas_layout_normalise(blas_layout *l)
{
    int dims[2] = {l->pr, l->pc};
    if (l->kind == BLAS_MAT) {
        /* folded over the grid, or whole on every rank (the bits of the
         * grid dimensions of extent > 1, so that on one rank, or along a
         * dimension of extent 1, nothing differs from a folded matrix)   */
        unsigned whole = (l->pr > 1 ? 1u : 0u) | (l->pc > 1 ? 2u : 0u);
        l->rep = (l->rep & 3u) != 0 ? whole : 0u;
        l->b = norm_block(l->b, l->m, blas_mat_p(l, 0));
        l->nb = norm_block(l->nb, l->n, blas_mat_p(l, 1));
        l->dist = -1;
        return;
    }
    if (l->kind == BLAS_SCA) {
        l->m = l->n = 1;
        l->dist = -1;
    }
    l->m = 1;
    l->nb = 0;
    if (l->dist == BLAS_DIST_PART) {
        /* every rank holds its own range, so nothing is replicated; on
         * one rank it is the undistributed vector                        */
        l->b = 0;
        l->rep = 0;
        if (l->pr * l->pc > 1) return;
        l->dist = -1;
    }
    l->part = NULL;
    if (l->dist >= 0 && dims[l->dist] == 1) {
        l->rep |= 1u << l->dist;
        l->dist = -1;
    }
    if (l->dist >= 0) {
        l->b = norm_block(l->b, l->n, dims[l->dist]);
        l->rep &= ~(1u << l->dist);
    } else {
        l->b = 0;
    }
    for (int k = 0; k < 2; k++)
        if (dims[k] == 1) l->rep |= 1u << k;
    if (l->dist >= 0 && dims[l->dist] > 1) l->rep &= ~(1u << l->dist);
    l->rep &= 3u;
}

bool blas_part_equal(const blas_part *a, const blas_part *b)
{
    if (a == b) return true;
    if (a == NULL || b == NULL || a->n != b->n || a->nparts != b->nparts)
        return false;
    for (int q = 0; q <= a->nparts; q++)
        if (a->start[q] != b->start[q]) return false;
    if (a->perm == b->perm) return true;
    /* renumberings are interned, so this compares across contexts only   */
    return a->perm != NULL && b->perm != NULL && a->hash == b->hash &&
           memcmp(a->perm, b->perm, (size_t)a->n * sizeof *a->perm) == 0;
}

int blas_part_pos_owner(const blas_part *p, int64_t pos)
{
    /* the last q with start[q] <= pos                                    */
    int lo = 0, hi = p->nparts - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (p->start[mid] <= pos) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

int blas_part_owner(const blas_part *p, int64_t i)
{
    return blas_part_pos_owner(p, blas_part_pos(p, i));
}

blas_layout blas_layout_vec(int64_t n, int dist, int64_t b, unsigned rep,
                            int pr, int pc)
{
    blas_layout l = {.kind = BLAS_VEC, .m = 1, .n = n, .dist = dist, .b = b,
                     .rep = rep, .pr = pr, .pc = pc};
    blas_layout_normalise(&l);
    return l;
}

blas_layout blas_layout_mat(int64_t m, int64_t n, int64_t mb, int64_t nb,
                            int pr, int pc)
{
    blas_layout l = {.kind = BLAS_MAT, .m = m, .n = n, .b = mb, .nb = nb,
                     .pr = pr, .pc = pc};
    blas_layout_normalise(&l);
    return l;
}

blas_layout blas_layout_mat_whole(int64_t m, int64_t n, int pr, int pc)
{
    blas_layout l = {.kind = BLAS_MAT, .m = m, .n = n, .rep = 3u, .pr = pr,
                     .pc = pc};
    blas_layout_normalise(&l);
    return l;
}

blas_layout blas_layout_sca(unsigned rep, int pr, int pc)
{
    blas_layout l = {.kind = BLAS_SCA, .m = 1, .n = 1, .dist = -1,
                     .rep = rep, .pr = pr, .pc = pc};
    blas_layout_normalise(&l);
    return l;
}

blas_layout blas_layout_part(const blas_part *p, int pr, int pc)
{
    blas_layout l = {.kind = BLAS_VEC, .m = 1, .n = p->n,
                     .dist = BLAS_DIST_PART, .pr = pr, .pc = pc, .part = p};
    blas_layout_normalise(&l);
    return l;
}

static int64_t fold_block(pl_fold f, int64_t n, int p)
{
    switch (f.kind) {
    case PL_FOLD_BLOCK: return n > 0 ? ceil_div(n, p) : 1;
    case PL_FOLD_CYCLIC: return f.b;
    case PL_FOLD_COLLAPSED: return 0;
    }
    return 0;
}

deso_err blas_layout_of(const pl_placement *pl, blas_kind kind,
                        blas_layout *out)
{
    DESO_CHECK(pl != NULL && out != NULL, DESO_ENULL,
               "blas_layout_of: NULL argument");
    DESO_CHECK(pl->d == 2 && pl->grid.d == 2, DESO_ENOTSUP,
               "blas_layout_of: only 2-D placements are supported");
    const int64_t (*A)[PL_MAXD] = pl->align.A;
    bool ident = A[0][0] == 1 && A[1][1] == 1 && A[0][1] == 0 && A[1][0] == 0;
    bool swap = A[0][0] == 0 && A[1][1] == 0 && A[0][1] == 1 && A[1][0] == 1;
    DESO_CHECK(pl->align.t[0] == 0 && pl->align.t[1] == 0 && (ident || swap),
               DESO_ENOTSUP,
               "blas_layout_of: only identity or transposed alignments");
    int pr = pl->grid.dims[0], pc = pl->grid.dims[1];
    blas_layout l = {.pr = pr, .pc = pc, .dist = -1};
    unsigned rep = pl->replicated & 3u;
    for (int k = 0; k < 2; k++)
        if (pl->fold[k].kind == PL_FOLD_COLLAPSED) rep |= 1u << k;
    if (kind == BLAS_MAT) {
        /* replicated: along every grid dimension of extent > 1, or none  */
        unsigned spread = (pr > 1 ? 1u : 0u) | (pc > 1 ? 2u : 0u);
        rep &= spread;
        DESO_CHECK(ident && (rep == 0 || rep == spread), DESO_ENOTSUP,
                   "blas_layout_of: matrices must be aligned, and whole "
                   "on every rank or not replicated");
        l.kind = BLAS_MAT;
        l.m = pl->extent[0];
        l.n = pl->extent[1];
        l.rep = rep;
        l.b = fold_block(pl->fold[0], l.m, (rep & 1u) ? 1 : pr);
        l.nb = fold_block(pl->fold[1], l.n, (rep & 2u) ? 1 : pc);
    } else if (kind == BLAS_SCA) {
        l.kind = BLAS_SCA;
        l.rep = rep;
    } else {
        l.kind = BLAS_VEC;
        l.n = pl->extent[1];
        int t = ident ? 1 : 0;          /* template dim holding the index  */
        if (rep & (1u << t)) {
            l.dist = -1;
        } else {
            l.dist = t;
            l.b = fold_block(pl->fold[t], l.n, pl->grid.dims[t]);
        }
        l.rep = rep;
    }
    blas_layout_normalise(&l);
    *out = l;
    return DESO_OK;
}

deso_err blas_placement_of(const blas_layout *l, pl_placement *out)
{
    DESO_CHECK(l != NULL && out != NULL, DESO_ENULL,
               "blas_placement_of: NULL argument");
    DESO_CHECK(l->dist != BLAS_DIST_PART, DESO_ENOTSUP,
               "blas_placement_of: a layout by partition has no placement");
    pl_placement p;
    memset(&p, 0, sizeof p);
    p.d = 2;
    p.grid.d = 2;
    p.grid.dims[0] = l->pr;
    p.grid.dims[1] = l->pc;
    for (int k = 2; k < PL_MAXD; k++) p.grid.dims[k] = 1;
    p.align.d = 2;
    p.align.A[0][0] = p.align.A[1][1] = 1;
    p.fold[0].kind = p.fold[1].kind = PL_FOLD_BLOCK;
    if (l->kind == BLAS_MAT) {
        p.extent[0] = p.tmpl[0] = l->m;
        p.extent[1] = p.tmpl[1] = l->n;
        p.fold[0] = (pl_fold){PL_FOLD_CYCLIC, l->b};
        p.fold[1] = (pl_fold){PL_FOLD_CYCLIC, l->nb};
        p.replicated = l->rep;
    } else if (l->kind == BLAS_SCA || l->dist != 0) {
        int64_t n = l->kind == BLAS_SCA ? 1 : l->n;
        p.extent[0] = p.tmpl[0] = 1;
        p.extent[1] = p.tmpl[1] = n;
        p.replicated = l->rep;
        if (l->dist == 1) p.fold[1] = (pl_fold){PL_FOLD_CYCLIC, l->b};
        else p.fold[1] = (pl_fold){PL_FOLD_CYCLIC, n > 1 ? n : 1};
    } else {
        /* column oriented: element j at template (j, 0)                   */
        p.extent[0] = 1;
        p.extent[1] = l->n;
        p.tmpl[0] = l->n;
        p.tmpl[1] = 1;
        p.align.A[0][0] = p.align.A[1][1] = 0;
        p.align.A[0][1] = p.align.A[1][0] = 1;
        p.fold[0] = (pl_fold){PL_FOLD_CYCLIC, l->b};
        p.replicated = l->rep;
    }
    for (int k = 2; k < PL_MAXD; k++) p.extent[k] = p.tmpl[k] = 1;
    *out = p;
    return DESO_OK;
}

bool blas_layout_holds(const blas_layout *l, int r, int c)
{
    if (l->kind == BLAS_MAT || l->dist == BLAS_DIST_PART) return true;
    int co[2] = {r, c};
    for (int k = 0; k < 2; k++) {
        if (k == l->dist) continue;
        if (!(l->rep & (1u << k)) && co[k] != 0) return false;
    }
    return true;
}

void blas_layout_local(const blas_layout *l, int r, int c, int64_t *rows,
                       int64_t *cols)
{
    if (l->kind == BLAS_MAT) {
        *rows = blas_numroc(l->m, l->b, blas_mat_co(l, 0, r),
                            blas_mat_p(l, 0));
        *cols = blas_numroc(l->n, l->nb, blas_mat_co(l, 1, c),
                            blas_mat_p(l, 1));
        return;
    }
    *cols = 1;
    if (l->dist == BLAS_DIST_PART) {
        int q = r * l->pc + c;
        *rows = l->part->start[q + 1] - l->part->start[q];
        return;
    }
    if (!blas_layout_holds(l, r, c)) {
        *rows = 0;
        return;
    }
    int co[2] = {r, c}, dims[2] = {l->pr, l->pc};
    *rows = l->dist < 0 ? l->n
                        : blas_numroc(l->n, l->b, co[l->dist], dims[l->dist]);
}

int blas_layout_owner(const blas_layout *l, int64_t i)
{
    if (l->dist < 0) return 0;
    if (l->dist == BLAS_DIST_PART) return blas_part_owner(l->part, i);
    int p = l->dist == 0 ? l->pr : l->pc;
    return (int)((i / l->b) % p);
}

int64_t blas_layout_lidx(const blas_layout *l, int64_t i)
{
    if (l->dist < 0) return i;
    if (l->dist == BLAS_DIST_PART) {
        int64_t pos = blas_part_pos(l->part, i);
        return pos - l->part->start[blas_part_pos_owner(l->part, pos)];
    }
    int p = l->dist == 0 ? l->pr : l->pc;
    return (i / (l->b * p)) * l->b + i % l->b;
}

blas_layout blas_scalar_for(const blas_layout *where)
{
    unsigned rep = 0;
    for (int k = 0; k < 2; k++) {
        if (where->kind == BLAS_MAT || where->dist == k ||
            where->dist == BLAS_DIST_PART ||
            (where->rep & (1u << k)))
            rep |= 1u << k;
    }
    return blas_layout_sca(rep, where->pr, where->pc);
}

/* ---- single elements by linear index ------------------------------------ */

static int mat_owner(int64_t i, int64_t b, int p)
{
    return (int)((i / b) % p);
}

static int64_t mat_lidx(int64_t i, int64_t b, int p)
{
    return (i / (b * p)) * b + i % b;
}

void blas_elem_holders(const blas_layout *l, int64_t g, int *r0, int *r1,
                       int *c0, int *c1)
{
    if (l->kind == BLAS_MAT) {
        int64_t m = l->m > 0 ? l->m : 1;
        *r0 = mat_owner(g % m, l->b, blas_mat_p(l, 0));
        *c0 = mat_owner(g / m, l->nb, blas_mat_p(l, 1));
        *r1 = (l->rep & 1u) ? l->pr : *r0 + 1;
        *c1 = (l->rep & 2u) ? l->pc : *c0 + 1;
        return;
    }
    if (l->dist == BLAS_DIST_PART) {
        int q = blas_part_owner(l->part, g);
        *r0 = q / l->pc;
        *c0 = q % l->pc;
        *r1 = *r0 + 1;
        *c1 = *c0 + 1;
        return;
    }
    int lo[2], hi[2], dims[2] = {l->pr, l->pc};
    for (int k = 0; k < 2; k++) {
        if (k == l->dist) {
            lo[k] = blas_layout_owner(l, g);
            hi[k] = lo[k] + 1;
        } else {
            lo[k] = 0;
            hi[k] = (l->rep & (1u << k)) ? dims[k] : 1;
        }
    }
    *r0 = lo[0];
    *r1 = hi[0];
    *c0 = lo[1];
    *c1 = hi[1];
}

bool blas_elem_held(const blas_layout *l, int r, int c, int64_t g)
{
    int r0, r1, c0, c1;
    blas_elem_holders(l, g, &r0, &r1, &c0, &c1);
    return r >= r0 && r < r1 && c >= c0 && c < c1;
}

int64_t blas_elem_lidx(const blas_layout *l, int64_t g)
{
    if (l->kind != BLAS_MAT) return blas_layout_lidx(l, g);
    int64_t m = l->m > 0 ? l->m : 1, i = g % m, j = g / m;
    int pr = blas_mat_p(l, 0), pc = blas_mat_p(l, 1);
    int r = mat_owner(i, l->b, pr);
    int64_t ld = blas_numroc(l->m, l->b, r, pr);
    if (ld < 1) ld = 1;
    return mat_lidx(i, l->b, pr) + mat_lidx(j, l->nb, pc) * ld;
}

int64_t blas_elem_global(const blas_layout *l, int r, int c, int64_t li)
{
    if (l->kind != BLAS_MAT) {
        if (l->dist < 0) return li;
        if (l->dist == BLAS_DIST_PART) {
            int64_t pos = l->part->start[r * l->pc + c] + li;
            return l->part->iperm != NULL ? l->part->iperm[pos] : pos;
        }
        int co[2] = {r, c}, dims[2] = {l->pr, l->pc};
        return blas_cyc_global(l->b, dims[l->dist], co[l->dist], li);
    }
    int64_t ld, cols;
    blas_layout_local(l, r, c, &ld, &cols);
    if (ld < 1) ld = 1;
    int64_t i = blas_mat_global(l, 0, r, li % ld);
    int64_t j = blas_mat_global(l, 1, c, li / ld);
    return i + j * l->m;
}

void blas_elem_src(const blas_layout *S, int r, int c, int64_t g, int *sr,
                   int *sc)
{
    if (blas_elem_held(S, r, c, g)) {
        *sr = r;
        *sc = c;
        return;
    }
    int r0, r1, c0, c1;
    blas_elem_holders(S, g, &r0, &r1, &c0, &c1);
    /* a copy in my own grid row or column where there is one             */
    *sr = r >= r0 && r < r1 ? r : r0;
    *sc = c >= c0 && c < c1 ? c : c0;
}

/* ---- element maps -------------------------------------------------------- */

blas_emap blas_desc_map(const blas_desc *d)
{
    blas_emap e = {0, 1, 0, 1, d->len, 0, 0, 0};
    if (d->op == BLAS_OP_VGET) {
        e.so = d->off;
        e.si = d->inc;
    } else if (d->op == BLAS_OP_VPUT) {
        e.to = d->off;
        e.ti = d->inc;
    }
    if (d->rows > 0 && (d->op == BLAS_OP_VGET || d->op == BLAS_OP_VPUT)) {
        e.rows = d->rows;
        e.sld = d->op == BLAS_OP_VGET ? d->ld : d->rows;
        e.tld = d->op == BLAS_OP_VGET ? d->rows : d->ld;
    }
    return e;
}

bool blas_emap_equal(const blas_emap *a, const blas_emap *b)
{
    return a->so == b->so && a->si == b->si && a->to == b->to &&
           a->ti == b->ti && a->len == b->len && a->rows == b->rows &&
           a->sld == b->sld && a->tld == b->tld;
}

/* Element i of one side: o + s i, or in runs of rows, o + a + b ld.      */
static int64_t side_elem(const blas_emap *e, int64_t o, int64_t s,
                         int64_t ld, int64_t i)
{
    if (e->rows <= 0) return o + s * i;
    return o + i % e->rows + (i / e->rows) * ld;
}

int64_t blas_emap_src(const blas_emap *e, int64_t i)
{
    return side_elem(e, e->so, e->si, e->sld, i);
}

int64_t blas_emap_dst(const blas_emap *e, int64_t i)
{
    return side_elem(e, e->to, e->ti, e->tld, i);
}

int64_t blas_emap_index(const blas_emap *e, int64_t g, bool target)
{
    int64_t o = target ? e->to : e->so, s = target ? e->ti : e->si;
    int64_t d = g - o;
    if (e->rows > 0) {
        /* runs of rows, ld apart (ld >= rows): run b, element a of it    */
        int64_t ld = target ? e->tld : e->sld;
        if (d < 0) return -1;
        int64_t b = d / ld, a = d % ld;
        int64_t i = a + b * e->rows;
        return a < e->rows && i < e->len ? i : -1;
    }
    if (d % s != 0) return -1;
    int64_t i = d / s;
    return i >= 0 && i < e->len ? i : -1;
}
