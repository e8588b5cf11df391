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

/* One side of the remap, in d dimensions (2 for a pl_bc_layout).  A
 * replicated array is, per holder, a 1 x 1 grid whose single block is the
 * whole array.                                                            */
typedef struct side {
    int d;
    bool replicated;
    const int *ranks;     /* endpoint -> comm rank, or NULL (identity)     */
    int nend;             /* endpoints: grid positions or holders          */
    int64_t ext[PL_ND_MAX];   /* global extents                            */
    int np[PL_ND_MAX];        /* positions per dimension                   */
    int64_t blk[PL_ND_MAX];
    int *end_of;          /* comm rank -> endpoint, or -1                  */
} side;

static int side_rank(const side *S, int e)
{
    return S->ranks ? S->ranks[e] : e;
}

/* Dimension k of endpoint e's grid position (row-major: the last
 * dimension varies fastest).                                             */
static int side_pos(const side *S, int e, int k)
{
    if (S->replicated) return 0;
    for (int j = S->d - 1; j > k; j--) e /= S->np[j];
    return e % S->np[k];
}

/* Maps the communicator's ranks to endpoints, refusing a rank outside it
 * or repeated.                                                            */
static deso_err side_ranks(side *S, const char *what, int comm_size)
{
    S->end_of = deso__malloc((size_t)comm_size * sizeof *S->end_of);
    if (!S->end_of)
        return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    for (int i = 0; i < comm_size; i++) S->end_of[i] = -1;
    for (int e = 0; e < S->nend; e++) {
        int rk = side_rank(S, e);
        if (rk < 0 || rk >= comm_size)
            return deso__fail(DESO_EINVAL, "pl_remap_plan_rank: %s rank "
                              "%d outside [0, %d)", what, rk, comm_size);
        if (S->end_of[rk] >= 0)
            return deso__fail(DESO_EINVAL, "pl_remap_plan_rank: %s rank %d "
                              "appears twice", what, rk);
        S->end_of[rk] = e;
    }
    return DESO_OK;
}

static deso_err side_make(const pl_bc_layout *l, const char *what,
                          int comm_size, side *S)
{
    memset(S, 0, sizeof *S);
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
    S->d = 2;
    S->replicated = l->replicated;
    S->ranks = l->ranks;
    S->nend = l->pr * l->pc;
    S->ext[0] = l->m;
    S->ext[1] = l->n;
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
    return side_ranks(S, what, comm_size);
}

static deso_err side_make_nd(const pl_nd_layout *l, const char *what,
                             int comm_size, side *S)
{
    memset(S, 0, sizeof *S);
    DESO_CHECK(l != NULL, DESO_ENULL, "pl_remap_plan_rank: %s is NULL", what);
    DESO_CHECK(l->d >= 1 && l->d <= PL_ND_MAX, DESO_EINVAL,
               "pl_remap_plan_rank: %s has %d dimensions (1 to %d)", what,
               l->d, PL_ND_MAX);
    int64_t np = 1;
    for (int k = 0; k < l->d; k++) {
        DESO_CHECK(l->p[k] >= 1 && l->b[k] >= 1, DESO_EINVAL,
                   "pl_remap_plan_rank: %s dimension %d: grid extent %d and "
                   "block %lld must be >= 1", what, k, l->p[k],
                   (long long)l->b[k]);
        DESO_CHECK(l->n[k] >= 0, DESO_ESIZE, "pl_remap_plan_rank: %s "
                   "dimension %d: extent %lld is negative", what, k,
                   (long long)l->n[k]);
        np *= l->p[k];
        DESO_CHECK(np <= comm_size, DESO_EINVAL, "pl_remap_plan_rank: %s "
                   "grid has more positions than the %d ranks of the "
                   "communicator", what, comm_size);
        S->ext[k] = l->n[k];
        S->np[k] = l->p[k];
        S->blk[k] = l->b[k];
    }
    S->d = l->d;
    S->ranks = l->ranks;
    S->nend = (int)np;
    return side_ranks(S, what, comm_size);
}

/* Endpoint e's local extents (lr[k] for dimension k, 1 beyond d), and
 * their product.                                                         */
static int64_t side_size(const side *S, int e, int64_t lr[PL_ND_MAX])
{
    int64_t n = 1;
    for (int k = 0; k < PL_ND_MAX; k++) {
        lr[k] = k >= S->d ? 1
              : S->replicated ? S->ext[k]
              : pl_numroc(S->ext[k], S->blk[k], side_pos(S, e, k), 0,
                          S->np[k]);
        n *= lr[k];
    }
    return n;
}

/* Endpoint e's local rows and columns (the product of dimensions 1 ..);
 * 0 x 0 for e < 0.                                                        */
static void side_shape(const side *S, int e, int64_t *rows, int64_t *cols)
{
    int64_t lr[PL_ND_MAX];
    *rows = *cols = 0;
    if (e < 0) return;
    side_size(S, e, lr);
    *rows = lr[0];
    *cols = lr[1] * lr[2] * lr[3];
}

static bool has_rank(const side *S, int rank)
{
    for (int j = 0; j < S->nend; j++)
        if (side_rank(S, j) == rank) return true;
    return false;
}

/* Whether A and B place every element on the same rank at the same local
 * offset (their extents are equal).                                      */
static bool layouts_identical(const side *A, const side *B)
{
    if (A->replicated != B->replicated || A->nend != B->nend || A->d != B->d)
        return false;
    for (int k = 0; !A->replicated && k < A->d; k++)
        if (A->np[k] != B->np[k] || A->blk[k] != B->blk[k]) return false;
    /* Holders of a replicated array form a set; positions must match.     */
    for (int i = 0; i < A->nend; i++)
        if (A->replicated ? !has_rank(B, side_rank(A, i))
                          : side_rank(A, i) != side_rank(B, i))
            return false;
    return true;
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

/* Dimension k of the message between endpoint e of A and f of B (mine:
 * A's local offsets), in O(one period).                                  */
static deso_err one_dim(const side *A, int e, const side *B, int f, int k,
                        pl_dim *d)
{
    return pl_dim_make(A->ext[k], A->np[k], A->blk[k], side_pos(A, e, k),
                       B->np[k], B->blk[k], side_pos(B, f, k), d);
}

/* The message's columns: one when d = 1, else dimension 1, with
 * dimensions 2 .. d-1 kept apart as its outer dimensions (pl_msg), each
 * described by one period; the steps are the faster dimensions' global
 * and local extents multiplied.                                         */
static deso_err cols_of(const side *A, int e, const side *B, int f,
                        pl_msg *m)
{
    if (A->d == 1) return whole_dim(1, &m->cols);
    DESO_TRY(one_dim(A, e, B, f, 1, &m->cols));
    int64_t la[PL_ND_MAX], lb[PL_ND_MAX];
    side_size(A, e, la);
    side_size(B, f, lb);
    int64_t n = A->ext[1], lm = la[1], lt = lb[1];
    for (int k = 2; k < A->d; k++) {
        DESO_TRY(one_dim(A, e, B, f, k, &m->outer[k - 2]));
        m->nouter = k - 1;
        m->gstep[k - 2] = n;
        m->mstep[k - 2] = lm;
        m->tstep[k - 2] = lt;
        n *= A->ext[k];
        lm *= la[k];
        lt *= lb[k];
    }
    return DESO_OK;
}

/* The message between endpoint e of side A and endpoint f of side B:
 * rows (dimension 0) times columns (the others).                        */
static deso_err msg_dims(const side *A, int e, const side *B, int f,
                         pl_msg *m)
{
    DESO_TRY(one_dim(A, e, B, f, 0, &m->rows));
    DESO_TRY(cols_of(A, e, B, f, m));
    m->count = m->rows.count * pl_msg_ncols(m);
    int64_t lb[PL_ND_MAX];
    side_size(B, f, lb);
    m->peer_rows = lb[0];
    return DESO_OK;
}

static void msg_free(pl_msg *m)
{
    free(m->runs);
    pl_dim_free(&m->rows);
    pl_dim_free(&m->cols);
    for (int k = 0; k < m->nouter; k++) pl_dim_free(&m->outer[k]);
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
    int64_t *lens, *slen, *load;
    int64_t *dl[PL_ND_MAX];   /* per dimension: its message matrix        */
    pl_schedule sch;
} work;

static void work_free(work *w)
{
    free(w->S.end_of);
    free(w->T.end_of);
    free(w->lens);
    free(w->slen);
    free(w->load);
    for (int k = 0; k < PL_ND_MAX; k++) free(w->dl[k]);
    pl_schedule_free(&w->sch);
}

/* The message between source endpoint i and target endpoint j: the
 * product of the dimensions' message matrices (papers 001, 000).         */
static int64_t product_len(const work *w, int i, int j)
{
    const side *S = &w->S, *T = &w->T;
    int64_t len = 1;
    for (int k = 0; k < S->d && len > 0; k++)
        len *= w->dl[k][(int64_t)side_pos(S, i, k) * T->np[k] +
                        side_pos(T, j, k)];
    return len;
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
    if (!S->replicated) {
        for (int k = 0; k < S->d; k++) {
            w->dl[k] = deso__malloc((size_t)S->np[k] * T->np[k] *
                                    sizeof *w->dl[k]);
            if (!w->dl[k])
                return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no "
                                  "memory");
            DESO_TRY(pl__dim_lengths(S->ext[k], S->np[k], S->blk[k],
                                     T->np[k], T->blk[k], w->dl[k]));
        }
        for (int i = 0; i < NS; i++)
            for (int j = 0; j < NR; j++)
                w->lens[(int64_t)i * NR + j] = product_len(w, i, j);
        return DESO_OK;
    }
    w->load = deso__calloc((size_t)NS, sizeof *w->load);
    if (!w->load) return deso__fail(DESO_ENOMEM, "pl_remap_plan_rank: no memory");
    for (int j = 0; j < NR; j++) {
        int64_t ext[PL_ND_MAX], size = side_size(T, j, ext);
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

/* This rank's local shapes, then its part of the remap between sides S
 * and T (made, with equal extents).                                      */
static deso_err plan_sides(work *w, pl_sched_kind kind, int me,
                           pl_remap_rank *out)
{
    side *S = &w->S, *T = &w->T;
    int ie = S->end_of[me], je = T->end_of[me];
    side_shape(S, ie, &out->src_lrows, &out->src_lcols);
    side_shape(T, je, &out->dst_lrows, &out->dst_lcols);
    if (layouts_identical(S, T)) return plan_identical(out);
    DESO_TRY(plan_schedule(w, kind));
    out->nsteps = w->sch.nsteps;
    return plan_messages(w, ie, je, out);
}

static deso_err plan(const pl_bc_layout *src, const pl_bc_layout *dst,
                     int comm_size, pl_sched_kind kind, int me,
                     pl_remap_rank *out, work *w)
{
    DESO_TRY(side_make(src, "src", comm_size, &w->S));
    DESO_TRY(side_make(dst, "dst", comm_size, &w->T));
    DESO_CHECK(src->m == dst->m && src->n == dst->n, DESO_ESIZE,
               "pl_remap_plan_rank: src is %lld x %lld but dst is %lld x %lld",
               (long long)src->m, (long long)src->n, (long long)dst->m,
               (long long)dst->n);
    int64_t mn;
    DESO_CHECK(pl__mul(src->m, src->n, &mn), DESO_ESIZE,
               "pl_remap_plan_rank: %lld x %lld elements overflow int64",
               (long long)src->m, (long long)src->n);
    return plan_sides(w, kind, me, out);
}

static deso_err plan_nd(const pl_nd_layout *src, const pl_nd_layout *dst,
                        int comm_size, pl_sched_kind kind, int me,
                        pl_remap_rank *out, work *w)
{
    DESO_TRY(side_make_nd(src, "src", comm_size, &w->S));
    DESO_TRY(side_make_nd(dst, "dst", comm_size, &w->T));
    DESO_CHECK(src->d == dst->d, DESO_ESIZE, "pl_remap_plan_rank: src has "
               "%d dimensions but dst %d", src->d, dst->d);
    int64_t all = 1;
    for (int k = 0; k < src->d; k++) {
        DESO_CHECK(src->n[k] == dst->n[k], DESO_ESIZE, "pl_remap_plan_rank: "
                   "extent %d is %lld in src but %lld in dst", k,
                   (long long)src->n[k], (long long)dst->n[k]);
        DESO_CHECK(pl__mul(all, src->n[k], &all), DESO_ESIZE,
                   "pl_remap_plan_rank: the elements overflow int64");
    }
    return plan_sides(w, kind, me, out);
}

/* Checks common to both planners; *out emptied.                          */
static deso_err plan_start(int comm_size, pl_sched_kind kind, int me,
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
    return DESO_OK;
}

/* Frees the work; on error leaves *out empty.                            */
static deso_err plan_end(deso_err err, work *w, int me, pl_remap_rank *out)
{
    work_free(w);
    if (err) {
        pl_remap_rank_free(out);
        out->me = me;
    }
    return err;
}

deso_err pl_remap_plan_rank(const pl_bc_layout *src, const pl_bc_layout *dst,
                            int comm_size, pl_sched_kind kind, int me,
                            pl_remap_rank *out)
{
    DESO_TRY(plan_start(comm_size, kind, me, out));
    work w;
    memset(&w, 0, sizeof w);
    return plan_end(plan(src, dst, comm_size, kind, me, out, &w), &w, me,
                    out);
}

deso_err pl_remap_plan_rank_nd(const pl_nd_layout *src,
                               const pl_nd_layout *dst, int comm_size,
                               pl_sched_kind kind, int me,
                               pl_remap_rank *out)
{
    DESO_TRY(plan_start(comm_size, kind, me, out));
    work w;
    memset(&w, 0, sizeof w);
    return plan_end(plan_nd(src, dst, comm_size, kind, me, out, &w), &w,
                    me, out);
}
