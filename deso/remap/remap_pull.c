/* deso/remap/remap_pull.c: the programs of single-copy remaps (remap_shm.c),
 * built once at plan time from the plan's per-period descriptions, pure
 * computation (no MPI), in O(one period) like the messages' own programs.
 *
 * When a sender's source lies in shared memory (deso_redist_array_alloc)
 * its receiver can read it in place: a received message's description
 * names, per piece, the receiver's target offset and the sender's source
 * offset, so it compiles into a program from one array straight into the
 * other ("direct", deso__cp_from_msg's DESO__CP_PULL).  When every sender
 * of a rank allows it, the rank's whole target comes from its own source
 * (the self copy) and its senders' sources, and one program over all of
 * them, in target order ("assembly", side a numbering the arrays: 0 its
 * own source, 1 + j the sender of receive j), writes the target once,
 * front to back, whole cache lines around the cache.  Every message of a
 * one-column (vector) remap shares the period L = lcm(P r, Q s) and moves
 * L / P further on every source and L / Q further on the target per
 * period, so the assembly is one period's pieces of all of them, merged
 * by target offset and repeated, then the cut last period.  Matrices, and
 * periods of more than ASM_MAX pieces, get no assembly: their receivers
 * run the direct programs one after another.                             */
#include "deso/remap/remap_pull.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

/* Most pieces one period of the assembly may hold: a bound on planning
 * (the period is spelt out and sorted); longer periods (block -> cyclic
 * with its one period of the whole array) get no assembly.              */
#define ASM_MAX ((int64_t)1 << 12)

/* One message of the assembly: its one column's rows, the array side
 * (0: own source, 1 + j: sender of receive j), and which of the
 * description's sides is the source.                                    */
typedef struct asm_msg {
    const pl_dim *rows;
    int64_t w, src_base, dst_base;   /* column offsets times ld           */
    bool src_is_mine;                /* the self copy: mine = source      */
} asm_msg;

/* The one column piece of a description that has one, false otherwise.  */
static bool one_column(const pl_msg *m, int64_t ld_mine, int64_t ld_theirs,
                       int64_t *mine, int64_t *theirs)
{
    if (pl_msg_ncols(m) != 1) return false;
    pl_cols_it it = PL_COLS_IT(m);
    int64_t g, cm, ct, len;
    if (!pl_cols_next(&it, &g, &cm, &ct, &len)) return false;
    *mine = cm * ld_mine;
    *theirs = ct * ld_theirs;
    return true;
}

/* Appends the pieces of m's rows before global row `cut` (whole progressions
 * when cut = INT64_MAX), shifted by `per` periods, to x (*n items).      */
static void asm_pieces(const asm_msg *m, int64_t cut, int64_t per,
                       deso__cp_item *x, int64_t *n)
{
    const pl_dim *d = m->rows;
    for (int64_t i = 0; i < d->nseq; i++) {
        const pl_seq *q = &d->seq[i];
        int64_t cnt = q->cnt, last = q->len;
        if (cut != INT64_MAX) pl_seq_clip(q, cut, &cnt, &last);
        int64_t sm = q->mine + per * d->dmine, st = q->theirs + per * d->dtheirs;
        for (int64_t k = 0; k < cnt; k++) {
            int64_t mo = sm + k * q->dmine, to = st + k * q->dtheirs;
            int64_t a = m->src_is_mine ? mo : to, b = m->src_is_mine ? to : mo;
            x[(*n)++] = (deso__cp_item){ (m->w << DESO__CP_WBIT) + m->src_base + a,
                                         m->dst_base + b,
                                         k == cnt - 1 ? last : q->len, 1, 1 };
        }
    }
}

static int by_target(const void *x, const void *y)
{
    const deso__cp_item *a = x, *b = y;
    return (a->b > b->b) - (a->b < b->b);
}

/* Sorts x[0 .. n) by target and merges the items that continue each other
 * on both sides; returns the new count.                                  */
static int64_t asm_order(deso__cp_item *x, int64_t n)
{
    qsort(x, (size_t)n, sizeof *x, by_target);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m > 0 && x[m - 1].a + x[m - 1].len == x[i].a &&
            x[m - 1].b + x[m - 1].len == x[i].b)
            x[m - 1].len += x[i].len;
        else
            x[m++] = x[i];
    return m;
}

/* Pieces of one period of every message, or -1 when over ASM_MAX.        */
static int64_t asm_count(const asm_msg *m, int nm)
{
    int64_t n = 0;
    for (int w = 0; w < nm; w++)
        for (int64_t i = 0; i < m[w].rows->nseq && n <= ASM_MAX; i++)
            n += m[w].rows->seq[i].cnt;
    return n <= ASM_MAX ? n : -1;
}

/* The assembly of nm messages sharing one period: one group of the
 * period's pieces repeated `full` times, then the cut period, literal.
 * false when it does not apply (more than ASM_MAX pieces, messages of
 * different periods); DESO_ENOMEM in *e.                                 */
static bool asm_build(const asm_msg *m, int nm, deso__copy *out,
                      deso_err *e)
{
    const pl_dim *d0 = m[0].rows;
    for (int w = 1; w < nm; w++) {
        const pl_dim *d = m[w].rows;
        if (d->span != d0->span || d->full != d0->full || d->rem != d0->rem)
            return false;
    }
    int64_t n = asm_count(m, nm);
    if (n < 0) return false;
    deso__cp_item *x = deso__malloc((size_t)(2 * n + 1) * sizeof *x);
    deso__cp_group *g = deso__calloc(2, sizeof *g);
    if (x == NULL || g == NULL) {
        free(x);
        free(g);
        *e = deso__fail(DESO_ENOMEM, "single-copy program: out of memory");
        return false;
    }
    int64_t k = 0, t = 0, ng = 0;
    if (d0->full > 0) {
        for (int w = 0; w < nm; w++) asm_pieces(&m[w], INT64_MAX, 0, x, &k);
        k = asm_order(x, k);
        /* A source moves L / P per period, the target L / Q.             */
        const pl_dim *d = m[0].rows;
        int64_t da = m[0].src_is_mine ? d->dmine : d->dtheirs;
        int64_t db = m[0].src_is_mine ? d->dtheirs : d->dmine;
        g[ng++] = (deso__cp_group){ .first = 0, .k = k, .reps = d0->full,
                                    .da = da, .db = db };
    }
    for (int w = 0; w < nm; w++) asm_pieces(&m[w], d0->rem, d0->full, x + k, &t);
    t = asm_order(x + k, t);
    if (t > 0) g[ng++] = (deso__cp_group){ .first = k, .k = t, .reps = 1 };
    int64_t elems = 0;
    for (int64_t i = 0; i < k; i++) elems += x[i].len * d0->full;
    for (int64_t i = k; i < k + t; i++) elems += x[i].len;
    *out = (deso__copy){ .ngroups = ng, .nitems = k + t, .elems = elems,
                         .g = g, .it = x };
    *e = deso__cp_tables(out, true);
    return *e == DESO_OK;
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

/* The assembly's messages (self first), each with one column; false when
 * some message spans several columns.                                   */
static bool asm_messages(const deso__remap *r, const deso__pull *p,
                         asm_msg *m, int *nm)
{
    const pl_remap_rank *mp = r->plan;
    int64_t lds = mp->src_lrows > 1 ? mp->src_lrows : 1;
    int64_t ldd = mp->dst_lrows > 1 ? mp->dst_lrows : 1;
    *nm = 0;
    if (mp->has_self) {
        asm_msg *a = &m[(*nm)++];
        *a = (asm_msg){ &mp->self.rows, 0, 0, 0, true };
        if (!one_column(&mp->self, lds, ldd, &a->src_base, &a->dst_base))
            return false;
    }
    for (int j = 0; j < r->nrecv; j++) {
        asm_msg *a = &m[(*nm)++];
        int64_t ldp = p->peer_rows[j] > 1 ? p->peer_rows[j] : 1;
        *a = (asm_msg){ &mp->recv[j].rows, 1 + (int64_t)j, 0, 0, false };
        if (!one_column(&mp->recv[j], ldd, ldp, &a->dst_base, &a->src_base))
            return false;
    }
    return *nm > 0;
}

deso_err deso__pull_build(const deso__remap *r, deso__pull *out)
{
    memset(out, 0, sizeof *out);
    int nr = r->nrecv;
    const pl_remap_rank *mp = r->plan;
    if (mp == NULL || mp->nrecv != nr)
        return deso__fail(DESO_EINTERNAL, "single-copy program: no plan");
    out->direct = deso__calloc((size_t)(nr ? nr : 1), sizeof *out->direct);
    out->peer_rows = deso__calloc((size_t)(nr ? nr : 1), sizeof *out->peer_rows);
    asm_msg *m = deso__malloc(((size_t)nr + 1) * sizeof *m);
    deso_err e = out->direct && out->peer_rows && m ? DESO_OK : DESO_ENOMEM;
    int64_t ldd = mp->dst_lrows > 1 ? mp->dst_lrows : 1;
    for (int j = 0; e == DESO_OK && j < nr; j++) {
        const pl_msg *t = &mp->recv[j];
        if (t->peer != r->recv[j].peer) {
            e = deso__fail(DESO_EINTERNAL, "single-copy program: receive "
                           "%d is from rank %d, planned from %d", j,
                           r->recv[j].peer, t->peer);
            break;
        }
        out->peer_rows[j] = t->peer_rows;
        int64_t ldp = out->peer_rows[j] > 1 ? out->peer_rows[j] : 1;
        e = deso__cp_from_msg(t, DESO__CP_PULL, ldd, ldp, &out->direct[j]);
    }
    int nm = 0;
    if (e == DESO_OK && asm_messages(r, out, m, &nm))
        out->has_assembly = asm_build(m, nm, &out->assembly, &e);
    if (e == DESO_OK && out->has_assembly)
        e = deso__cp_clone(&out->assembly, &out->resolved);
    free(m);
    if (e != DESO_OK) deso__pull_free(out, nr);
    return e;
}
