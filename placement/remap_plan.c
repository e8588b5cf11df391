/* One rank's part of a remap between two 2-D block-cyclic layouts (papers
 * 001 and 000; doc/DESIGN.md, "Any extent, two dimensions, replicated
 * sources"): the message matrix between the actual endpoints (grid
 * positions, or the holders of a replicated array), its schedule, and
 * this rank's messages as runs of its local arrays, in increasing global
 * column-major order on both sides so that packing and unpacking need no
 * index lists.                                                             */
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/pl_arith.h"
#include "placement/remap.h"
#include "placement/placement.h"
#include "placement/remap_impl.h"
#include "placement/alloc.h"

/* One side of the remap.  A replicated array is, per holder, a 1 x 1 grid
 * whose single block is the whole array.                                  */
typedef struct side {
    const pl_bc_layout *l;
    int nend;             /* endpoints: grid positions or holders          */
    int np[2];            /* positions per dimension                       */
    int64_t blk[2];
    int *end_of;          /* comm rank -> endpoint, or -1                  */
} side;

static int side_rank(const side *S, int e)
{
    return S->l->ranks ? S->l->ranks[e] : e;
}

static int side_pos(const side *S, int e, int d)
{
    if (S->l->replicated) return 0;
    return d == 0 ? e / S->l->pc : e % S->l->pc;
}

static deso_err side_make(const pl_bc_layout *l, const char *what,
                          int comm_size, side *S)
{
    memset(S, 0, sizeof *S);
    S->l = l;
    DESO_CHECK(l != NULL, DESO_ENULL, "pl_remap_plan_rank: %s is NULL", what);
    DESO_CHECK(l->pr >= 1 && l->pc >= 1, DESO_EINVAL,
               "pl_remap_plan_rank: %s grid %d x %d must be at least 1 x 1",
               what, l->pr, l->pc);
    DESO_CHECK((int64_t)l->pr * l->pc <= comm_size, DESO_EINVAL,
               "pl_remap_plan_rank: %s grid %d x %d has more positions than "
               "the %d ranks of the communicator", what, l->pr, l->pc,
               comm_size);
    DESO_CHECK(l->replicated || (l->mb >= 1 && l->nb >= 1), DESO_EINVAL,
               "pl_remap_plan_rank: %s block %lld x %lld must be >= 1",
               what, (long long)l->mb, (long long)l->nb);
    DESO_CHECK(l->m >= 0 && l->n >= 0, DESO_ESIZE,
               "pl_remap_plan_rank: %s extents %lld x %lld are negative",
               what, (long long)l->m, (long long)l->n);
    S->nend = l->pr * l->pc;
    S->end_of = deso__malloc((size_t)comm_size * sizeof *S->end_of);
    if (!S->end_of)
        return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    for (int i = 0; i < comm_size; i++) S->end_of[i] = -1;
    for (int e = 0; e < S->nend; e++) {
        int rk = side_rank(S, e);
        if (rk < 0 || rk >= comm_size || S->end_of[rk] >= 0) {
            free(S->end_of);
            S->end_of = NULL;
            if (rk < 0 || rk >= comm_size)
                return deso__fail(DESO_EINVAL, "pl_remap_plan_rank: %s rank "
                                  "%d outside [0, %d)", what, rk, comm_size);
            return deso__fail(DESO_EINVAL, "pl_remap_plan_rank: %s rank %d "
                              "appears twice", what, rk);
        }
        S->end_of[rk] = e;
    }
    if (l->replicated) {
        S->np[0] = S->np[1] = 1;
        S->blk[0] = l->m > 0 ? l->m : 1;
        S->blk[1] = l->n > 0 ? l->n : 1;
    } else {
        S->np[0] = l->pr;
        S->np[1] = l->pc;
        S->blk[0] = l->mb;
        S->blk[1] = l->nb;
    }
    return DESO_OK;
}

static int64_t side_size(const side *S, int e, int64_t lr[2])
{
    if (S->l->replicated) {
        lr[0] = S->l->m;
        lr[1] = S->l->n;
    } else {
        lr[0] = pl_numroc(S->l->m, S->blk[0], side_pos(S, e, 0), 0, S->np[0]);
        lr[1] = pl_numroc(S->l->n, S->blk[1], side_pos(S, e, 1), 0, S->np[1]);
    }
    return lr[0] * lr[1];
}

static bool layouts_identical(const pl_bc_layout *a, const pl_bc_layout *b)
{
    if (a->replicated != b->replicated || a->pr * a->pc != b->pr * b->pc)
        return false;
    if (!a->replicated &&
        (a->pr != b->pr || a->pc != b->pc || a->mb != b->mb || a->nb != b->nb))
        return false;
    /* Holders of a replicated array form a set; positions must match.     */
    int np = a->pr * a->pc;
    for (int i = 0; i < np; i++) {
        int ra = a->ranks ? a->ranks[i] : i;
        if (!a->replicated) {
            if (ra != (b->ranks ? b->ranks[i] : i)) return false;
            continue;
        }
        bool found = false;
        for (int j = 0; j < np && !found; j++)
            found = ra == (b->ranks ? b->ranks[j] : j);
        if (!found) return false;
    }
    return true;
}

/* The pieces of one dimension this endpoint shares with each peer
 * position, grouped by peer (stable) and merged where contiguous on both
 * sides: peer c's pieces are seg[start[c] .. start[c+1]).                  */
typedef struct buckets {
    pl__seg *seg;
    int64_t *start;
} buckets;

static void buckets_free(buckets *b)
{
    free(b->seg);
    free(b->start);
    b->seg = NULL;
    b->start = NULL;
}

static deso_err buckets_make(int64_t M, int P, int64_t r, int a, int Q,
                             int64_t s, buckets *b)
{
    pl__seg *raw;
    int64_t n;
    b->seg = NULL;
    b->start = deso__calloc((size_t)Q + 1, sizeof *b->start);
    if (!b->start) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    DESO_TRY(pl__dim_segments(M, P, r, a, Q, s, &raw, &n));
    b->seg = deso__malloc((n > 0 ? (size_t)n : 1) * sizeof *b->seg);
    int64_t *fill = deso__calloc((size_t)Q + 1, sizeof *fill);
    if (!b->seg || !fill) {
        free(raw);
        free(fill);
        return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    }
    for (int64_t i = 0; i < n; i++) fill[raw[i].peer + 1]++;
    for (int c = 0; c < Q; c++) fill[c + 1] += fill[c];
    int64_t *cnt = b->start;   /* merged counts per peer, then prefix sums */
    for (int64_t i = 0; i < n; i++) {
        int c = raw[i].peer;
        pl__seg *base = b->seg + fill[c];
        if (cnt[c + 1] > 0) {
            pl__seg *last = &base[cnt[c + 1] - 1];
            if (last->mine + last->len == raw[i].mine &&
                last->theirs + last->len == raw[i].theirs) {
                last->len += raw[i].len;
                continue;
            }
        }
        base[cnt[c + 1]++] = raw[i];
    }
    /* Close the gaps left by merging.                                      */
    int64_t w = 0;
    for (int c = 0; c < Q; c++) {
        int64_t k = cnt[c + 1];
        memmove(b->seg + w, b->seg + fill[c], (size_t)k * sizeof *b->seg);
        cnt[c] = w;   /* cnt[c] is already consumed: becomes start[c]      */
        w += k;
    }
    cnt[Q] = w;
    free(raw);
    free(fill);
    return DESO_OK;
}

/* A growing run list; merges a run that continues the previous one.      */
typedef struct runs {
    pl_run *r, *r2;       /* r2: the paired target runs of self copies     */
    int64_t n, cap;
} runs;

static bool runs_push(runs *R, int64_t off, int64_t off2, int64_t len, bool pair)
{
    if (R->n > 0) {
        pl_run *l = &R->r[R->n - 1];
        if (l->off + l->len == off &&
            (!pair || R->r2[R->n - 1].off + R->r2[R->n - 1].len == off2)) {
            l->len += len;
            if (pair) R->r2[R->n - 1].len += len;
            return true;
        }
    }
    if (R->n == R->cap) {
        int64_t nc = R->cap ? 2 * R->cap : 8;
        pl_run *a = deso__realloc(R->r, (size_t)nc * sizeof *a);
        if (!a) return false;
        R->r = a;
        if (pair) {
            pl_run *b = deso__realloc(R->r2, (size_t)nc * sizeof *b);
            if (!b) return false;
            R->r2 = b;
        }
        R->cap = nc;
    }
    R->r[R->n] = (pl_run){off, len};
    if (pair) R->r2[R->n] = (pl_run){off2, len};
    R->n++;
    return true;
}

/* Runs of the message whose row pieces are rb[rc] and column pieces
 * cb[cc]: offsets `mine` on this side (leading dimension ld), `theirs` on
 * the other (ld2) when pair.  Column-major global order.                   */
static deso_err emit(const buckets *rb, int rc, const buckets *cb, int cc,
                     int64_t ld, int64_t ld2, bool pair, runs *R,
                     int64_t *count)
{
    *count = 0;
    for (int64_t ci = cb->start[cc]; ci < cb->start[cc + 1]; ci++) {
        const pl__seg *cs = &cb->seg[ci];
        for (int64_t t = 0; t < cs->len; t++) {
            for (int64_t ri = rb->start[rc]; ri < rb->start[rc + 1]; ri++) {
                const pl__seg *rs = &rb->seg[ri];
                if (!runs_push(R, (cs->mine + t) * ld + rs->mine,
                               (cs->theirs + t) * ld2 + rs->theirs, rs->len,
                               pair))
                    return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no "
                                      "memory for runs");
                *count += rs->len;
            }
        }
    }
    return DESO_OK;
}

void pl_remap_rank_free(pl_remap_rank *r)
{
    if (!r) return;
    for (int i = 0; i < r->nsend; i++) free(r->send[i].runs);
    for (int i = 0; i < r->nrecv; i++) free(r->recv[i].runs);
    free(r->send);
    free(r->recv);
    free(r->self_src);
    free(r->self_dst);
    memset(r, 0, sizeof *r);
}

/* Everything the planning of one rank allocates, freed in one place.     */
typedef struct work {
    side S, T;
    int64_t *lens, *slen, *Lr, *Lc, *load;
    int *holder;
    pl_schedule sch;
    buckets sr, sc, tr, tc;   /* send-side and receive-side pieces        */
} work;

static void work_free(work *w)
{
    free(w->S.end_of);
    free(w->T.end_of);
    free(w->lens); free(w->slen); free(w->Lr); free(w->Lc); free(w->load);
    free(w->holder);
    pl_schedule_free(&w->sch);
    buckets_free(&w->sr); buckets_free(&w->sc);
    buckets_free(&w->tr); buckets_free(&w->tc);
}

/* The message matrix lens[i * NR + j] between source endpoints i and target
 * endpoints j.  A replicated source serves each receiver from one holder:
 * the receiver itself when it holds a copy (a local copy), otherwise the
 * least loaded holder, ties broken from a receiver-dependent start so that
 * equal loads spread.                                                       */
static deso_err message_matrix(work *w)
{
    side *S = &w->S, *T = &w->T;
    int NS = S->nend, NR = T->nend;
    w->lens = deso__calloc((size_t)NS * NR, sizeof *w->lens);
    if (!w->lens) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    if (!S->l->replicated) {
        w->Lr = deso__malloc((size_t)S->np[0] * T->np[0] * sizeof *w->Lr);
        w->Lc = deso__malloc((size_t)S->np[1] * T->np[1] * sizeof *w->Lc);
        if (!w->Lr || !w->Lc)
            return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
        DESO_TRY(pl__dim_lengths(S->l->m, S->np[0], S->blk[0], T->np[0],
                                 T->blk[0], w->Lr));
        DESO_TRY(pl__dim_lengths(S->l->n, S->np[1], S->blk[1], T->np[1],
                                 T->blk[1], w->Lc));
        for (int i = 0; i < NS; i++)
            for (int j = 0; j < NR; j++)
                w->lens[(int64_t)i * NR + j] =
                    w->Lr[(int64_t)side_pos(S, i, 0) * T->np[0] + side_pos(T, j, 0)] *
                    w->Lc[(int64_t)side_pos(S, i, 1) * T->np[1] + side_pos(T, j, 1)];
        return DESO_OK;
    }
    w->load = deso__calloc((size_t)NS, sizeof *w->load);
    if (!w->load) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    for (int j = 0; j < NR; j++) {
        int64_t ext[2], size = side_size(T, j, ext);
        if (size == 0) continue;
        int h = S->end_of[side_rank(T, j)];
        if (h < 0) {
            for (int t = 0; t < NS; t++) {
                int i = (j + t) % NS;
                if (h < 0 || w->load[i] < w->load[h]) h = i;
            }
            w->load[h] += size;
        }
        w->lens[(int64_t)h * NR + j] = size;
    }
    return DESO_OK;
}

static deso_err new_msg(pl_msg **arr, int *n, int peer, int step,
                        int64_t count, runs *R)
{
    pl_msg *a = deso__realloc(*arr, ((size_t)*n + 1) * sizeof *a);
    if (!a) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    *arr = a;
    a[*n] = (pl_msg){peer, step, count, R->n, R->r};
    (*n)++;
    R->r = NULL;
    R->n = R->cap = 0;
    return DESO_OK;
}

static deso_err plan(const pl_bc_layout *src, const pl_bc_layout *dst,
                     int comm_size, pl_sched_kind kind, int me,
                     pl_remap_rank *out, work *w)
{
    DESO_TRY(side_make(src, "src", comm_size, &w->S));
    DESO_TRY(side_make(dst, "dst", comm_size, &w->T));
    side *S = &w->S, *T = &w->T;
    DESO_CHECK(src->m == dst->m && src->n == dst->n, DESO_ESIZE,
               "pl_remap_plan_rank: src is %lld x %lld but dst is %lld x %lld",
               (long long)src->m, (long long)src->n, (long long)dst->m,
               (long long)dst->n);
    int64_t mn;
    DESO_CHECK(pl__mul(src->m, src->n, &mn), DESO_ESIZE,
               "pl_remap_plan_rank: %lld x %lld elements overflow int64",
               (long long)src->m, (long long)src->n);
    int ie = S->end_of[me], je = T->end_of[me];
    int64_t ex[2];
    if (ie >= 0) side_size(S, ie, ex);
    out->src_lrows = ie >= 0 ? ex[0] : 0;
    out->src_lcols = ie >= 0 ? ex[1] : 0;
    if (je >= 0) side_size(T, je, ex);
    out->dst_lrows = je >= 0 ? ex[0] : 0;
    out->dst_lcols = je >= 0 ? ex[1] : 0;
    int64_t lds = out->src_lrows > 1 ? out->src_lrows : 1;
    int64_t ldd = out->dst_lrows > 1 ? out->dst_lrows : 1;

    if (layouts_identical(src, dst)) {
        /* Nothing moves: one copy of the whole local array (the same shape
         * and leading dimension on both sides).                            */
        int64_t all = out->src_lrows * out->src_lcols;
        if (all > 0) {
            out->self_src = deso__malloc(sizeof *out->self_src);
            out->self_dst = deso__malloc(sizeof *out->self_dst);
            if (!out->self_src || !out->self_dst)
                return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
            out->self_src[0] = out->self_dst[0] = (pl_run){0, all};
            out->nself = 1;
        }
        return DESO_OK;
    }

    DESO_TRY(message_matrix(w));
    int NS = S->nend, NR = T->nend;
    /* The schedule sees only real messages: a pair on one rank is a local
     * copy and takes no step.                                              */
    w->slen = deso__malloc((size_t)NS * NR * sizeof *w->slen);
    if (!w->slen) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    for (int i = 0; i < NS; i++)
        for (int j = 0; j < NR; j++)
            w->slen[(int64_t)i * NR + j] =
                side_rank(S, i) == side_rank(T, j) ? 0 : w->lens[(int64_t)i * NR + j];
    DESO_TRY(pl_schedule_build(kind, NS, NR, w->slen, &w->sch));
    out->nsteps = w->sch.nsteps;

    runs R = {0};
    deso_err err = DESO_OK;
    int64_t count;
    if (ie >= 0) {
        int a = side_pos(S, ie, 0), b = side_pos(S, ie, 1);
        DESO_TRY(buckets_make(src->m, S->np[0], S->blk[0], a, T->np[0], T->blk[0], &w->sr));
        DESO_TRY(buckets_make(src->n, S->np[1], S->blk[1], b, T->np[1], T->blk[1], &w->sc));
        for (int k = 0; k < w->sch.nsteps && !err; k++) {
            int j = w->sch.recv_of[(int64_t)k * NS + ie];
            if (j < 0) continue;
            err = emit(&w->sr, side_pos(T, j, 0), &w->sc, side_pos(T, j, 1),
                       lds, 0, false, &R, &count);
            if (!err) err = new_msg(&out->send, &out->nsend, side_rank(T, j), k,
                                    count, &R);
        }
        if (!err && je >= 0 && w->lens[(int64_t)ie * NR + je] > 0) {
            err = emit(&w->sr, side_pos(T, je, 0), &w->sc, side_pos(T, je, 1),
                       lds, ldd, true, &R, &count);
            out->self_src = R.r;
            out->self_dst = R.r2;
            out->nself = R.n;
            R = (runs){0};
        }
    }
    if (!err && je >= 0) {
        int c = side_pos(T, je, 0), d = side_pos(T, je, 1);
        err = buckets_make(src->m, T->np[0], T->blk[0], c, S->np[0], S->blk[0], &w->tr);
        if (!err)
            err = buckets_make(src->n, T->np[1], T->blk[1], d, S->np[1], S->blk[1], &w->tc);
        for (int k = 0; k < w->sch.nsteps && !err; k++) {
            for (int i = 0; i < NS && !err; i++) {
                if (w->sch.recv_of[(int64_t)k * NS + i] != je) continue;
                err = emit(&w->tr, side_pos(S, i, 0), &w->tc, side_pos(S, i, 1),
                           ldd, 0, false, &R, &count);
                if (!err) err = new_msg(&out->recv, &out->nrecv, side_rank(S, i),
                                        k, count, &R);
            }
        }
    }
    free(R.r);
    free(R.r2);
    if (err) return err;
    for (int i = 0; i < out->nsend; i++)
        if (out->send[i].count > out->max_msg) out->max_msg = out->send[i].count;
    for (int i = 0; i < out->nrecv; i++)
        if (out->recv[i].count > out->max_msg) out->max_msg = out->recv[i].count;
    return DESO_OK;
}

deso_err pl_remap_plan_rank(const pl_bc_layout *src, const pl_bc_layout *dst,
                            int comm_size, pl_sched_kind kind, int me,
                            pl_remap_rank *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "pl_remap_plan_rank: out is NULL");
    memset(out, 0, sizeof *out);
    out->me = me;
    DESO_CHECK(comm_size >= 1 && me >= 0 && me < comm_size, DESO_EINVAL,
               "pl_remap_plan_rank: rank %d outside a communicator of %d",
               me, comm_size);
    DESO_CHECK((unsigned)kind < 3u, DESO_EINVAL,
               "pl_remap_plan_rank: unknown schedule kind %d", (int)kind);
    work w;
    memset(&w, 0, sizeof w);
    deso_err err = plan(src, dst, comm_size, kind, me, out, &w);
    work_free(&w);
    if (err) {
        pl_remap_rank_free(out);
        out->me = me;
    }
    return err;
}
