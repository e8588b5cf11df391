/* deso/redist_pull.c: the programs of single-copy remaps (redist_shm.c),
 * built once at plan time, pure computation (the planner, no MPI).
 *
 * When a sender's source lies in shared memory (deso_redist_array_alloc)
 * its receiver can read it in place: the message's runs on the sender's
 * source zipped with the same message's runs on the receiver's target
 * give a program from one array straight into the other ("direct").  When
 * every sender of a rank allows it, the rank's whole target comes from its
 * own source (the self copy) and its senders' sources, and one program
 * over all of them, in target order ("assembly", side a numbering the
 * arrays: 0 its own source, 1 + j the sender of receive j), writes the
 * target once, front to back, whole cache lines around the cache.        */
#include "redist_pull.h"

#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"

/* The message of plan p to or from `peer` (a list's messages have
 * distinct peers when the shared-memory transport is used).              */
static const pl_msg *find_msg(const pl_msg *m, int n, int peer)
{
    for (int i = 0; i < n; i++)
        if (m[i].peer == peer) return &m[i];
    return NULL;
}

/* Zips a message's runs on the sender's source (s) and on the receiver's
 * target (t), both in packed order, into items source -> target.         */
static int64_t zip(const pl_msg *s, const pl_msg *t, int64_t w,
                   deso__cp_item *out)
{
    int64_t n = 0, i = 0, j = 0, oi = 0, oj = 0;
    while (i < s->nruns && j < t->nruns) {
        int64_t li = s->runs[i].len - oi, lj = t->runs[j].len - oj;
        int64_t len = li < lj ? li : lj;
        out[n++] = (deso__cp_item){ (w << DESO__CP_WBIT) + s->runs[i].off + oi,
                                    t->runs[j].off + oj, len, 1, 1 };
        oi += len;
        oj += len;
        if (oi == s->runs[i].len) { i++; oi = 0; }
        if (oj == t->runs[j].len) { j++; oj = 0; }
    }
    return n;
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
    deso__cp_item *out = malloc((size_t)(nall ? nall : 1) * sizeof *out);
    int64_t *at = malloc((size_t)nl * sizeof *at);
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
                          const pl_bc_layout *dst, pl_sched_kind kind,
                          deso__pull *out)
{
    memset(out, 0, sizeof *out);
    int nr = r->nrecv;
    out->direct = calloc((size_t)(nr ? nr : 1), sizeof *out->direct);
    out->peer_rows = calloc((size_t)(nr ? nr : 1), sizeof *out->peer_rows);
    int64_t *cut = malloc(((size_t)nr + 2) * sizeof *cut);
    pl_remap_rank theirs;
    memset(&theirs, 0, sizeof theirs);
    const pl_remap_rank *mp = r->plan;
    deso__cp_item *all = NULL, *tmp = NULL;
    deso_err e = out->direct && out->peer_rows && cut ? DESO_OK : DESO_ENOMEM;
    if (mp == NULL) e = DESO_EINTERNAL;
    /* Items: the self copy's runs, then every direct program's.          */
    int64_t nall = 0, cap = 0;
    if (e == DESO_OK) {
        cap = mp->nself;
        for (int j = 0; j < mp->nrecv; j++) cap += mp->recv[j].nruns;
        all = malloc((size_t)(cap ? cap : 1) * sizeof *all);
        if (all == NULL) e = DESO_ENOMEM;
    }
    for (int64_t i = 0; e == DESO_OK && i < mp->nself; i++)
        all[nall++] = (deso__cp_item){ mp->self_src[i].off,
                                       mp->self_dst[i].off,
                                       mp->self_src[i].len, 1, 1 };
    if (e == DESO_OK) cut[0] = 0;
    for (int j = 0; e == DESO_OK && j < nr; j++) {
        cut[j + 1] = nall;
        int q = r->recv[j].peer;
        const pl_msg *t = find_msg(mp->recv, mp->nrecv, q);
        pl_remap_rank_free(&theirs);
        e = pl_remap_plan_rank(src, dst, r->size, kind, q, &theirs);
        if (e != DESO_OK) break;
        const pl_msg *s = find_msg(theirs.send, theirs.nsend, r->me);
        if (t == NULL || s == NULL || s->count != t->count) {
            e = DESO_EINTERNAL;
            break;
        }
        if (nall + s->nruns + t->nruns > cap) {
            cap = nall + s->nruns + t->nruns;
            deso__cp_item *grown = realloc(all, (size_t)cap * sizeof *all);
            if (grown == NULL) {
                e = DESO_ENOMEM;
                break;
            }
            all = grown;
        }
        out->peer_rows[j] = theirs.src_lrows;
        int64_t n = zip(s, t, 1 + (int64_t)j, all + nall);
        /* The direct program: the same items, array numbers cleared.    */
        free(tmp);
        tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
        if (tmp == NULL) {
            e = DESO_ENOMEM;
            break;
        }
        for (int64_t i = 0; i < n; i++) {
            tmp[i] = all[nall + i];
            tmp[i].a &= ((int64_t)1 << DESO__CP_WBIT) - 1;
        }
        e = deso__cp_compile(tmp, n, &out->direct[j]);
        nall += n;
    }
    if (e == DESO_OK) cut[nr + 1] = nall;
    if (e == DESO_OK && !order_by_target(&all, nall, cut, nr + 1))
        e = DESO_ENOMEM;
    if (e == DESO_OK) e = deso__cp_compile_tables(all, nall, &out->assembly);
    if (e == DESO_OK) e = deso__cp_clone(&out->assembly, &out->resolved);
    free(all);
    free(tmp);
    free(cut);
    pl_remap_rank_free(&theirs);
    if (e != DESO_OK) deso__pull_free(out, nr);
    return e;
}
