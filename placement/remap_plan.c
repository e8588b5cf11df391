/* One rank's part of a remap between two 2-D block-cyclic layouts (papers
 * 001 and 000; doc/DESIGN.md, "Any extent, two dimensions, replicated
 * sources"): the message matrix between the actual
 * endpoints (grid positions, or the holders of a replicated array), its
 * schedule, and this rank's messages, each the product of a row and a
 * column description of one period (remap_period.c), so that planning
 * costs O(P + Q + period) and never O(elements).  remap_runs.c spells
 * them out as runs when an index list is wanted.                          */
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

/* The message between endpoint e of side A and endpoint f of side B, per
 * dimension (mine: A's local offsets), in O(one period) each.           */
static deso_err msg_dims(const side *A, int e, const side *B, int f,
                         pl_msg *m)
{
    DESO_TRY(pl_dim_make(A->l->m, A->np[0], A->blk[0], side_pos(A, e, 0),
                         B->np[0], B->blk[0], side_pos(B, f, 0), &m->rows));
    DESO_TRY(pl_dim_make(A->l->n, A->np[1], A->blk[1], side_pos(A, e, 1),
                         B->np[1], B->blk[1], side_pos(B, f, 1), &m->cols));
    m->count = m->rows.count * m->cols.count;
    return DESO_OK;
}

static void msg_free(pl_msg *m)
{
    free(m->runs);
    pl_dim_free(&m->rows);
    pl_dim_free(&m->cols);
}

void pl_remap_rank_free(pl_remap_rank *r)
{
    if (!r) return;
    for (int i = 0; i < r->nsend; i++) msg_free(&r->send[i]);
    for (int i = 0; i < r->nrecv; i++) msg_free(&r->recv[i]);
    msg_free(&r->self);
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
} work;

static void work_free(work *w)
{
    free(w->S.end_of);
    free(w->T.end_of);
    free(w->lens); free(w->slen); free(w->Lr); free(w->Lc); free(w->load);
    free(w->holder);
    pl_schedule_free(&w->sch);
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

/* Appends the message between endpoint e of A and f of B (rank peer,
 * step k) to the list; its length must be the message matrix's.        */
static deso_err add_msg(pl_msg **arr, int *n, const side *A, int e,
                        const side *B, int f, int k, int64_t want)
{
    pl_msg *a = deso__realloc(*arr, ((size_t)*n + 1) * sizeof *a);
    if (!a) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    *arr = a;
    pl_msg *m = &a[*n];
    memset(m, 0, sizeof *m);
    m->peer = side_rank(B, f);
    m->step = k;
    (*n)++;
    DESO_TRY(msg_dims(A, e, B, f, m));
    DESO_CHECK(m->count == want, DESO_EINTERNAL, "pl_remap_plan_rank: a "
               "message of %lld elements where the message matrix says %lld",
               (long long)m->count, (long long)want);
    return DESO_OK;
}

/* One dimension copied whole: local offsets 0 .. n on both sides.       */
static deso_err whole_dim(int64_t n, pl_dim *d)
{
    memset(d, 0, sizeof *d);
    d->seq = deso__calloc(1, sizeof *d->seq);
    if (!d->seq) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    d->seq[0] = (pl_seq){ .len = n, .cnt = 1 };
    d->nseq = 1;
    d->span = d->rem = d->per = d->count = n;
    return DESO_OK;
}

/* Identical layouts: nothing moves; the self copy is the whole local
 * array (the same shape and leading dimension on both sides).           */
static deso_err plan_identical(pl_remap_rank *out)
{
    if (out->src_lrows * out->src_lcols == 0) return DESO_OK;
    out->has_self = true;
    out->self.peer = out->me;
    DESO_TRY(whole_dim(out->src_lrows, &out->self.rows));
    DESO_TRY(whole_dim(out->src_lcols, &out->self.cols));
    out->self.count = out->src_lrows * out->src_lcols;
    return DESO_OK;
}

/* The message matrix between the actual endpoints and its schedule; the
 * schedule sees only real messages: a pair on one rank is a local copy
 * and takes no step.                                                     */
static deso_err plan_schedule(work *w, pl_sched_kind kind)
{
    side *S = &w->S, *T = &w->T;
    DESO_TRY(message_matrix(w));
    int NS = S->nend, NR = T->nend;
    w->slen = deso__malloc((size_t)NS * NR * sizeof *w->slen);
    if (!w->slen) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    for (int i = 0; i < NS; i++)
        for (int j = 0; j < NR; j++)
            w->slen[(int64_t)i * NR + j] =
                side_rank(S, i) == side_rank(T, j) ? 0 : w->lens[(int64_t)i * NR + j];
    return pl_schedule_build(kind, NS, NR, w->slen, &w->sch);
}

/* This rank's sends (as source endpoint ie), its self copy, and its
 * receives (as target endpoint je), each described per dimension.       */
static deso_err plan_messages(work *w, int ie, int je, pl_remap_rank *out)
{
    side *S = &w->S, *T = &w->T;
    int NS = S->nend, NR = T->nend;
    for (int k = 0; ie >= 0 && k < w->sch.nsteps; k++) {
        int j = w->sch.recv_of[(int64_t)k * NS + ie];
        if (j >= 0)
            DESO_TRY(add_msg(&out->send, &out->nsend, S, ie, T, j, k,
                             w->lens[(int64_t)ie * NR + j]));
    }
    if (ie >= 0 && je >= 0 && w->lens[(int64_t)ie * NR + je] > 0) {
        out->has_self = true;
        out->self.peer = out->me;
        DESO_TRY(msg_dims(S, ie, T, je, &out->self));
    }
    for (int k = 0; je >= 0 && k < w->sch.nsteps; k++)
        for (int i = 0; i < NS; i++)
            if (w->sch.recv_of[(int64_t)k * NS + i] == je)
                DESO_TRY(add_msg(&out->recv, &out->nrecv, T, je, S, i, k,
                                 w->lens[(int64_t)i * NR + je]));
    for (int i = 0; i < out->nsend; i++)
        if (out->send[i].count > out->max_msg) out->max_msg = out->send[i].count;
    for (int i = 0; i < out->nrecv; i++)
        if (out->recv[i].count > out->max_msg) out->max_msg = out->recv[i].count;
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
    if (layouts_identical(src, dst)) return plan_identical(out);
    DESO_TRY(plan_schedule(w, kind));
    out->nsteps = w->sch.nsteps;
    return plan_messages(w, ie, je, out);
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
