/* deso/remap/remap_pull.c: the programs of single-copy remaps (remap_shm.c),
 * built once at plan time, pure computation (index maps, no MPI).
 *
 * When a sender's source lies in shared memory (deso_redist_array_alloc)
 * its receiver can read it in place: the message's runs on the
 * receiver's target, mapped element range by element range to the
 * sender's local offsets, give a program from one array straight into the
 * other ("direct").  When
 * every sender of a rank allows it, the rank's whole target comes from its
 * own source (the self copy) and its senders' sources, and one program
 * over all of them, in target order ("assembly", side a numbering the
 * arrays: 0 its own source, 1 + j the sender of receive j), writes the
 * target once, front to back, whole cache lines around the cache.        */
#include "deso/remap/remap_pull.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

/* The message to or from `peer` in list m (a list's messages have
 * distinct peers when the shared-memory transport is used).              */
static const pl_msg *find_msg(const pl_msg *m, int n, int peer)
{
    for (int i = 0; i < n; i++)
        if (m[i].peer == peer) return &m[i];
    return NULL;
}

/* One side of the remap as seen from one rank: its grid position and
 * local rows (a replicated side holds everything: local = global).      */
typedef struct bc_side {
    int64_t mb, nb, lrows;
    int pr, pc, prow, pcol;
    bool rep;
} bc_side;

static bool side_of(const pl_bc_layout *l, int rank, bc_side *o)
{
    int n = l->pr * l->pc, pos = -1;
    for (int i = 0; i < n && pos < 0; i++)
        if ((l->ranks ? l->ranks[i] : i) == rank) pos = i;
    if (pos < 0) return false;
    int64_t lcols;
    pl_bc_local_shape(l, rank, &o->lrows, &lcols);
    *o = (bc_side){ l->mb, l->nb, o->lrows, l->pr, l->pc, pos / l->pc,
                    pos % l->pc, l->replicated };
    return true;
}

static int64_t l2g(int64_t l, int64_t b, int p, int np)
{
    return l / b * np * b + (int64_t)p * b + l % b;
}

static int64_t g2l(int64_t g, int64_t b, int np)
{
    return g / b / np * b + g % b;
}

static int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }

/* Appends item x to the growable list (*it, *n, *cap), merging it into
 * the last one when both sides continue it.  False when out of memory.  */
static bool push(deso__cp_item **it, int64_t *n, int64_t *cap,
                 deso__cp_item x)
{
    deso__cp_item *p = *n > 0 ? &(*it)[*n - 1] : NULL;
    if (p && p->a + p->len == x.a && p->b + p->len == x.b) {
        p->len += x.len;
        return true;
    }
    if (*n == *cap) {
        int64_t c = *cap > 0 ? 2 * *cap : 1024;
        deso__cp_item *g = deso__realloc(*it, (size_t)c * sizeof *g);
        if (g == NULL) return false;
        *it = g;
        *cap = c;
    }
    (*it)[(*n)++] = x;
    return true;
}

/* The items (array w of sender S's source -> this rank's target D) of the
 * message whose runs on the target are t: each run cut where a column, a
 * target block or a source block ends, every piece contiguous on both
 * sides.  DESO_EINTERNAL when S does not own an element (the plans
 * disagree), DESO_ENOMEM.                                                */
static deso_err map_runs(const pl_msg *t, const bc_side *D, const bc_side *S,
                         int64_t w, deso__cp_item **it, int64_t *n,
                         int64_t *cap)
{
    for (int64_t r = 0; r < t->nruns; r++) {
        int64_t off = t->runs[r].off, len = t->runs[r].len;
        while (len > 0) {
            int64_t i = off % D->lrows, j = off / D->lrows;
            int64_t gi = D->rep ? i : l2g(i, D->mb, D->prow, D->pr);
            int64_t gj = D->rep ? j : l2g(j, D->nb, D->pcol, D->pc);
            int64_t seg = min64(len, D->lrows - i), li = gi, lj = gj;
            if (!D->rep) seg = min64(seg, D->mb - i % D->mb);
            if (!S->rep) {
                if (gi / S->mb % S->pr != S->prow ||
                    gj / S->nb % S->pc != S->pcol)
                    return deso__fail(DESO_EINTERNAL, "single-copy "
                                      "program: element (%lld, %lld) is not "
                                      "on its source rank", (long long)gi,
                                      (long long)gj);
                li = g2l(gi, S->mb, S->pr);
                lj = g2l(gj, S->nb, S->pc);
                seg = min64(seg, S->mb - gi % S->mb);
            }
            deso__cp_item x = { (w << DESO__CP_WBIT) + li + lj * S->lrows,
                                off, seg, 1, 1 };
            if (!push(it, n, cap, x))
                return deso__fail(DESO_ENOMEM, "single-copy program: out "
                                  "of memory");
            off += seg;
            len -= seg;
        }
    }
    return DESO_OK;
}

static int by_target(const void *x, const void *y)
{
    const deso__cp_item *a = x, *b = y;
    return (a->b > b->b) - (a->b < b->b);
}

static bool sorted_by_target(const deso__cp_item *it, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        if (it[i].b < it[i - 1].b) return false;
    return true;
}

/* Orders `all` by target offset: its nl lists (list k from cut[k] to
 * cut[k + 1]) are merged when each is ordered (they are, for block-cyclic
 * layouts), sorted otherwise.  False when out of memory.                 */
static bool order_by_target(deso__cp_item **all, int64_t nall,
                            const int64_t *cut, int nl)
{
    bool each = true;
    for (int k = 0; k < nl; k++)
        each = each && sorted_by_target(*all + cut[k], cut[k + 1] - cut[k]);
    if (!each) {
        qsort(*all, (size_t)nall, sizeof **all, by_target);
        return true;
    }
    deso__cp_item *out = deso__malloc((size_t)(nall ? nall : 1) * sizeof *out);
    int64_t *at = deso__malloc((size_t)nl * sizeof *at);
    if (out == NULL || at == NULL) {
        free(out);
        free(at);
        return false;
    }
    for (int k = 0; k < nl; k++) at[k] = cut[k];
    for (int64_t n = 0; n < nall; n++) {
        int best = -1;
        for (int k = 0; k < nl; k++)
            if (at[k] < cut[k + 1] &&
                (best < 0 || (*all)[at[k]].b < (*all)[at[best]].b))
                best = k;
        out[n] = (*all)[at[best]++];
    }
    free(at);
    free(*all);
    *all = out;
    return true;
}

void deso__pull_free(deso__pull *p, int nrecv)
{
    if (p->direct)
        for (int j = 0; j < nrecv; j++) deso__cp_free(&p->direct[j]);
    free(p->direct);
    free(p->peer_rows);
    deso__cp_free(&p->assembly);
    deso__cp_free(&p->resolved);
    memset(p, 0, sizeof *p);
}

deso_err deso__pull_build(const deso__remap *r, const pl_bc_layout *src,
                          const pl_bc_layout *dst, deso__pull *out)
{
    memset(out, 0, sizeof *out);
    int nr = r->nrecv;
    out->direct = deso__calloc((size_t)(nr ? nr : 1), sizeof *out->direct);
    out->peer_rows = deso__calloc((size_t)(nr ? nr : 1), sizeof *out->peer_rows);
    int64_t *cut = deso__malloc(((size_t)nr + 2) * sizeof *cut);
    const pl_remap_rank *mp = r->plan;
    deso__cp_item *all = NULL, *tmp = NULL;
    int64_t nall = 0, cap = 0;
    deso_err e = out->direct && out->peer_rows && cut ? DESO_OK : DESO_ENOMEM;
    /* The plan describes messages per period; these programs map runs
     * element range by element range, so spell the runs out here.       */
    if (e == DESO_OK && r->plan != NULL) e = pl_remap_rank_runs(r->plan);
    bc_side D;
    if (e == DESO_OK && (mp == NULL || (nr > 0 && !side_of(dst, r->me, &D))))
        e = DESO_EINTERNAL;
    /* Items: the self copy's runs, then every direct program's.          */
    for (int64_t i = 0; e == DESO_OK && i < mp->nself; i++)
        if (!push(&all, &nall, &cap,
                  (deso__cp_item){ mp->self_src[i].off, mp->self_dst[i].off,
                                   mp->self_src[i].len, 1, 1 }))
            e = DESO_ENOMEM;
    if (e == DESO_OK) cut[0] = 0;
    for (int j = 0; e == DESO_OK && j < nr; j++) {
        cut[j + 1] = nall;
        int q = r->recv[j].peer;
        const pl_msg *t = find_msg(mp->recv, mp->nrecv, q);
        bc_side S;
        if (t == NULL || !side_of(src, q, &S)) {
            e = DESO_EINTERNAL;
            break;
        }
        out->peer_rows[j] = S.lrows;
        e = map_runs(t, &D, &S, 1 + (int64_t)j, &all, &nall, &cap);
        if (e != DESO_OK) break;
        /* The direct program: the same items, array numbers cleared.    */
        int64_t n = nall - cut[j + 1];
        free(tmp);
        tmp = deso__malloc((size_t)(n ? n : 1) * sizeof *tmp);
        if (tmp == NULL) {
            e = DESO_ENOMEM;
            break;
        }
        for (int64_t i = 0; i < n; i++) {
            tmp[i] = all[cut[j + 1] + i];
            tmp[i].a &= ((int64_t)1 << DESO__CP_WBIT) - 1;
        }
        e = deso__cp_compile(tmp, n, &out->direct[j]);
    }
    if (e == DESO_OK) cut[nr + 1] = nall;
    if (e == DESO_OK && !order_by_target(&all, nall, cut, nr + 1))
        e = DESO_ENOMEM;
    if (e == DESO_OK) e = deso__cp_compile_tables(all, nall, &out->assembly);
    if (e == DESO_OK) e = deso__cp_clone(&out->assembly, &out->resolved);
    free(all);
    free(tmp);
    free(cut);
    if (e != DESO_OK) deso__pull_free(out, nr);
    return e;
}
