/* deso/remap/copyprog.c: copy programs, the compiled form of a remap's
 * runs: compiling run lists into periodic groups, cutting them into
 * pieces; copyprog_run.c runs them.  Pure computation, no MPI.          */
#include "deso/remap/copyprog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"


/* ---- copy programs -------------------------------------------------------- */

deso_err deso__cp_clone(const deso__copy *c, deso__copy *out)
{
    memset(out, 0, sizeof *out);
    *out = *c;
    out->g = deso__malloc((size_t)(c->ngroups ? c->ngroups : 1) * sizeof *out->g);
    out->it = deso__malloc((size_t)(c->nitems ? c->nitems : 1) * sizeof *out->it);
    out->ea = c->nelem ? deso__malloc((size_t)c->nelem * sizeof *out->ea) : NULL;
    out->eb = c->nelem ? deso__malloc((size_t)c->nelem * sizeof *out->eb) : NULL;
    out->lp = c->nloops ? deso__malloc((size_t)c->nloops * sizeof *out->lp) : NULL;
    if (!out->g || !out->it || (c->nelem && (!out->ea || !out->eb)) ||
        (c->nloops && !out->lp)) {
        deso__cp_free(out);
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
    }
    memcpy(out->g, c->g, (size_t)c->ngroups * sizeof *out->g);
    memcpy(out->it, c->it, (size_t)c->nitems * sizeof *out->it);
    if (c->nelem) {
        memcpy(out->ea, c->ea, (size_t)c->nelem * sizeof *out->ea);
        memcpy(out->eb, c->eb, (size_t)c->nelem * sizeof *out->eb);
    }
    if (c->nloops)
        memcpy(out->lp, c->lp, (size_t)c->nloops * sizeof *out->lp);
    return DESO_OK;
}

static int64_t resolve_a(int64_t a, const int64_t *delta)
{
    return (a & (((int64_t)1 << DESO__CP_WBIT) - 1)) +
           delta[a >> DESO__CP_WBIT];
}

void deso__cp_resolve(const deso__copy *c, const int64_t *delta,
                      deso__copy *out)
{
    for (int64_t i = 0; i < c->nitems; i++)
        out->it[i].a = resolve_a(c->it[i].a, delta);
    for (int64_t e = 0; e < c->nelem; e++)
        out->ea[e] = resolve_a(c->ea[e], delta);
}

#define CP_KMAX 64    /* longest period looked for, in runs               */
#define CP_WIN 512    /* items looked at to choose a period               */


static bool item_shift(const deso__cp_item *x, const deso__cp_item *y,
                       int64_t da, int64_t db)
{
    return y->len == x->len && y->a - x->a == da && y->b - x->b == db &&
           y->sa == x->sa && y->sb == x->sb &&
           y->a >> DESO__CP_WBIT == x->a >> DESO__CP_WBIT;
}

/* How many repetitions of the k items at it[0] (shifted by (da, db) each)
 * start the first n items, knowing that the first c0 do.                 */
static int64_t cp_extend(const deso__cp_item *it, int64_t n, int64_t k,
                         int64_t da, int64_t db, int64_t c0)
{
    int64_t c = c0;
    while ((c + 1) * k <= n) {
        int64_t j = 0, base = c * k;
        while (j < k && item_shift(&it[j], &it[base + j], c * da, c * db))
            j++;
        if (j < k) break;
        c++;
    }
    return c;
}

/* Compresses n items (consumed) into periodic groups.  Greedy: at each
 * position, the period k <= CP_KMAX that covers the most of the next
 * CP_WIN items (at least two repetitions; ties to the shorter), extended
 * as far as it goes; otherwise the item joins a literal group.  About
 * CP_KMAX * CP_WIN steps per group plus O(n): block-cyclic lists give few
 * groups (one per column of a matrix at most), irregular ones O(n KMAX). */
static deso_err compile(deso__cp_item *it, int64_t n, bool tables,
                        deso__copy *out);

deso_err deso__cp_compile(deso__cp_item *it, int64_t n, deso__copy *out)
{
    return compile(it, n, false, out);
}

deso_err deso__cp_compile_tables(deso__cp_item *it, int64_t n,
                                 deso__copy *out)
{
    return compile(it, n, true, out);
}

/* Merges runs contiguous on both sides, and single elements at a
 * constant stride (cyclic(1) sides) into strided items, in place; returns
 * the items left and adds the elements to *elems.                       */
static int64_t merge_items(deso__cp_item *it, int64_t n, int64_t *elems)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (it[i].len <= 0) continue;
        *elems += it[i].len;
        deso__cp_item *p = m > 0 ? &it[m - 1] : NULL;
        if (p && it[i].a == p->a + p->len * p->sa &&
            it[i].b == p->b + p->len * p->sb &&
            (it[i].len == 1 || (p->sa == 1 && p->sb == 1 &&
                                 it[i].sa == 1 && it[i].sb == 1))) {
            p->len += it[i].len;
        } else if (p && p->len == 1 && it[i].len == 1 &&
                   it[i].a != p->a && it[i].b != p->b &&
                   it[i].a >> DESO__CP_WBIT == p->a >> DESO__CP_WBIT) {
            p->sa = it[i].a - p->a;
            p->sb = it[i].b - p->b;
            p->len = 2;
        } else {
            it[m++] = it[i];
        }
    }
    return m;
}

static deso_err compile(deso__cp_item *it, int64_t n, bool tables,
                        deso__copy *out)
{
    memset(out, 0, sizeof *out);
    n = merge_items(it, n, &out->elems);
    deso__cp_group *g = deso__malloc((size_t)(n ? n : 1) * sizeof *g);
    if (g == NULL)
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
    int64_t ng = 0, ni = 0, i = 0;
    bool literal = false;             /* last group is open for literals */
    while (i < n) {
        /* The period covering the most of the next CP_WIN items (ties:
         * the shorter), then extended as far as it goes.                  */
        int64_t k = 0, da = 0, db = 0, reps = 0, win = n - i;
        if (win > CP_WIN) win = CP_WIN;
        for (int64_t kk = 1; kk <= CP_KMAX && 2 * kk <= win; kk++) {
            int64_t xa = it[i + kk].a - it[i].a, xb = it[i + kk].b - it[i].b;
            int64_t c = cp_extend(it + i, win, kk, xa, xb, 1);
            if (c >= 2 && c * kk > reps * k) {
                k = kk;
                reps = c;
                da = xa;
                db = xb;
            }
        }
        if (k > 0) reps = cp_extend(it + i, n - i, k, da, db, reps);
        if (k == 0) {                 /* no period here: a literal run    */
            if (!literal) {
                g[ng++] = (deso__cp_group){ .first = ni, .k = 0, .reps = 1 };
                literal = true;
            }
            it[ni++] = it[i++];
            g[ng - 1].k++;
            continue;
        }
        g[ng++] = (deso__cp_group){ .first = ni, .k = k, .reps = reps,
                                    .da = da, .db = db };
        for (int64_t j = 0; j < k; j++) it[ni + j] = it[i + j];
        ni += k;
        i += reps * k;
        literal = false;
    }
    out->ngroups = ng;
    out->nitems = ni;
    out->g = deso__realloc(g, (size_t)(ng ? ng : 1) * sizeof *g);
    if (out->g == NULL) out->g = g;
    out->it = deso__malloc((size_t)(ni ? ni : 1) * sizeof *out->it);
    if (out->it == NULL) {
        free(out->g);
        out->g = NULL;
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
    }
    memcpy(out->it, it, (size_t)ni * sizeof *it);

    return deso__cp_tables(out, tables);
}

/* Periodic groups of short runs are copied element by element from an
 * offset table: no branch per run.                                       */
deso_err deso__cp_tables(deso__copy *out, bool tables)
{
    int64_t ng = out->ngroups;
    int64_t ne = 0;
    for (int64_t gi = 0; gi < ng; gi++) {
        deso__cp_group *q = &out->g[gi];
        int64_t e = 0;
        for (int64_t j = 0; j < q->k; j++) e += out->it[q->first + j].len;
        if (q->reps >= 2 && e <= DESO__CP_EMAX && (tables || e < 8 * q->k)) {
            q->e0 = ne;
            q->ne = e;
            ne += e;
        }
    }
    if (ne > 0) {
        out->ea = deso__malloc((size_t)ne * sizeof *out->ea);
        out->eb = deso__malloc((size_t)ne * sizeof *out->eb);
        if (out->ea == NULL || out->eb == NULL) {
            deso__cp_free(out);
            return deso__fail(DESO_ENOMEM, "copy program: out of memory");
        }
        out->nelem = ne;
        for (int64_t gi = 0; gi < ng; gi++) {
            const deso__cp_group *q = &out->g[gi];
            int64_t e = q->e0;
            for (int64_t j = 0; j < q->ne && e < q->e0 + q->ne; j++) {
                const deso__cp_item *u = &out->it[q->first + j];
                for (int64_t x = 0; x < u->len; x++, e++) {
                    out->ea[e] = u->a + x * u->sa;
                    out->eb[e] = u->b + x * u->sb;
                }
            }
        }
        /* A side that counts up (a packed buffer's) needs no table.      */
        for (int64_t gi = 0; gi < ng; gi++) {
            deso__cp_group *q = &out->g[gi];
            bool ua = q->ne > 0, ub = q->ne > 0;
            for (int64_t x = 1; x < q->ne; x++) {
                ua = ua && out->ea[q->e0 + x] == out->ea[q->e0] + x;
                ub = ub && out->eb[q->e0 + x] == out->eb[q->e0] + x;
            }
            q->seq = ub ? 2 : ua ? 1 : 0;
        }
    }
    return DESO_OK;
}

/* Spells groups [g0, g1) out into x from x[*k] on, shifted by (oa, ob). */
static void spell_groups(const deso__copy *c, int64_t g0, int64_t g1,
                         int64_t oa, int64_t ob, deso__cp_item *x,
                         int64_t *k)
{
    for (int64_t gi = g0; gi < g1; gi++) {
        const deso__cp_group *g = &c->g[gi];
        for (int64_t t = 0; t < g->reps; t++)
            for (int64_t j = 0; j < g->k; j++) {
                deso__cp_item *y = &x[(*k)++];
                *y = c->it[g->first + j];
                y->a += oa + t * g->da;
                y->b += ob + t * g->db;
            }
    }
}

/* Spells loop li out, shifted by (oa, ob), into x from *k.              */
static void spell_loop(const deso__copy *c, int64_t li, int64_t oa,
                       int64_t ob, deso__cp_item *x, int64_t *k)
{
    deso__cp_loop lp = deso__cp_loop_at(c, li);
    for (int64_t t = 0; t < lp.reps; t++) {
        if (lp.end == li + 1)
            spell_groups(c, lp.g0, lp.g1, oa + t * lp.da, ob + t * lp.db,
                         x, k);
        else
            for (int64_t j = li + 1; j < lp.end; j = c->lp[j].end)
                spell_loop(c, j, oa + t * lp.da, ob + t * lp.db, x, k);
    }
}

void deso__cp_spell(const deso__copy *c, deso__cp_item *x)
{
    int64_t k = 0;
    for (int64_t li = 0; li < deso__cp_nloops(c);
         li = deso__cp_loop_at(c, li).end)
        spell_loop(c, li, 0, 0, x, &k);
}

/* Items of loop li spelt out, or -1 when more than max.                 */
static int64_t spelt_loop(const deso__copy *c, int64_t li, int64_t max)
{
    deso__cp_loop lp = deso__cp_loop_at(c, li);
    int64_t k = 0;
    if (lp.end == li + 1) {
        for (int64_t gi = lp.g0; gi < lp.g1 && k <= max; gi++)
            k += c->g[gi].k * c->g[gi].reps;
    } else {
        for (int64_t j = li + 1; j < lp.end && k <= max; j = c->lp[j].end) {
            int64_t n = spelt_loop(c, j, max - k);
            if (n < 0) return -1;
            k += n;
        }
    }
    if (k > max || (k > 0 && lp.reps > max / k)) return -1;
    return k * lp.reps;
}

int64_t deso__cp_spelt(const deso__copy *c, int64_t max)
{
    int64_t n = 0;
    for (int64_t li = 0; li < deso__cp_nloops(c);
         li = deso__cp_loop_at(c, li).end) {
        int64_t k = spelt_loop(c, li, max - n);
        if (k < 0) return -1;
        n += k;
    }
    return n;
}

deso_err deso__cp_recompile(deso__copy *c, int64_t n)
{
    deso__cp_item *x = deso__malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (!x) {
        deso__cp_free(c);
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
    }
    deso__cp_spell(c, x);
    deso__copy r;
    deso_err e = deso__cp_compile(x, n, &r);
    free(x);
    deso__cp_free(c);
    if (e == DESO_OK) *c = r;
    return e;
}

void deso__cp_free(deso__copy *c)
{
    free(c->g);
    free(c->it);
    free(c->ea);
    free(c->eb);
    free(c->lp);
    memset(c, 0, sizeof *c);
}

/* Pieces of item u that span at most `span` elements on either side
 * (at least 1).                                                         */
static int64_t split_piece(const deso__cp_item *u, int64_t span)
{
    int64_t st = u->sa > u->sb ? u->sa : u->sb;
    return span / (st < 1 ? 1 : st);
}

/* The groups and items a split may make at most: a literal item becomes
 * at most one periodic group and one item of a literal group.  Returns
 * whether any item is cut (else the split is the program itself).      */
static bool split_bound(const deso__copy *c, int64_t span, int64_t *ng,
                        int64_t *ni)
{
    bool cut = false;
    *ng = 0;
    *ni = 0;
    for (int64_t gi = 0; gi < c->ngroups; gi++) {
        const deso__cp_group *g = &c->g[gi];
        *ng += 1 + (g->reps == 1 ? 2 * g->k : 0);
        *ni += g->k + (g->reps == 1 ? g->k : 0);
        for (int64_t j = 0; g->reps == 1 && j < g->k && !cut; j++) {
            const deso__cp_item *u = &c->it[g->first + j];
            int64_t piece = split_piece(u, span);
            cut = piece >= 1 && u->len >= 2 * piece;
        }
    }
    return cut;
}

/* The program being split: its groups and items so far, and whether the
 * last group is a literal one that the next short item joins.           */
typedef struct splitter {
    deso__cp_group *G;
    deso__cp_item *I;
    int64_t gn, in;
    bool open;
} splitter;

/* Appends literal item u, cut into repetitions of at most `span`
 * elements on either side, then its remainder.                          */
static void split_item(splitter *S, deso__cp_item u, int64_t span)
{
    int64_t piece = split_piece(&u, span);
    if (piece >= 1 && u.len >= 2 * piece) {
        int64_t q = u.len / piece;
        S->G[S->gn++] = (deso__cp_group){ .first = S->in, .k = 1, .reps = q,
                                          .da = piece * u.sa,
                                          .db = piece * u.sb };
        S->I[S->in++] = (deso__cp_item){ u.a, u.b, piece, u.sa, u.sb };
        S->open = false;
        u.a += q * piece * u.sa;
        u.b += q * piece * u.sb;
        u.len -= q * piece;
        if (u.len == 0) return;
    }
    if (!S->open) {
        S->G[S->gn++] = (deso__cp_group){ .first = S->in, .k = 0, .reps = 1 };
        S->open = true;
    }
    S->I[S->in++] = u;
    S->G[S->gn - 1].k++;
}

/* Cuts the long items of literal groups into periodic groups of pieces
 * spanning at most `span` elements on either side, so that a fused pass
 * can interleave them with other programs.  Same copies, same order.
 * A program with loops is left as it is (fusion takes none).            */
deso_err deso__cp_split(deso__copy *c, int64_t span)
{
    if (c->nloops > 0) return DESO_OK;
    int64_t ng, ni;
    /* Nothing to cut: the split would copy the same items in the same
     * order (at most joining adjacent literal groups), so the program
     * serves as it is, without two allocations per program.            */
    if (!split_bound(c, span, &ng, &ni)) return DESO_OK;
    splitter S = { deso__malloc((size_t)(ng ? ng : 1) * sizeof *S.G),
                   deso__malloc((size_t)(ni ? ni : 1) * sizeof *S.I),
                   0, 0, false };
    if (S.G == NULL || S.I == NULL) {
        free(S.G);
        free(S.I);
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
    }
    for (int64_t gi = 0; gi < c->ngroups; gi++) {
        const deso__cp_group *g = &c->g[gi];
        const deso__cp_item *it = c->it + g->first;
        if (g->reps == 1) {
            for (int64_t j = 0; j < g->k; j++) split_item(&S, it[j], span);
            continue;
        }
        S.G[S.gn] = *g;
        S.G[S.gn++].first = S.in;
        for (int64_t j = 0; j < g->k; j++) S.I[S.in++] = it[j];
        S.open = false;
    }
    free(c->g);
    free(c->it);
    c->g = S.G;
    c->it = S.I;
    c->ngroups = S.gn;
    c->nitems = S.in;
    return DESO_OK;
}
