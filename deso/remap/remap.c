/* deso/remap/remap.c: planning a block-cyclic remap's buffers and executing it
 * over MPI.
 *
 * The plan (placement/remap.h) lists, for this rank, the messages it sends
 * and receives as runs of its local arrays, each tagged with a schedule
 * step, plus the runs it copies to itself.  Execution walks the steps: post
 * the step's receives, pack and post its sends, then unpack receives as
 * they complete (MPI_Waitany).  The self copy runs while the first step's
 * messages are in flight, or, on flat arrays (ld = local rows), is fused
 * with the first step's packing or unpacking: one pass over the array the
 * two share, in cache-sized chunks (see deso__remap.fuse).  Identical
 * layouts out of place are one memcpy per rank.  Buffers hold one step's
 * messages and are made at plan time (or, for the public remaps, taken
 * from the ones a destroyed remap left on the communicator, comm_cache.h),
 * so execution allocates nothing.
 *
 * When every rank is on one node the public API switches a plan to the
 * shared-memory transport instead (remap_shm.c: chunked rings, no MPI
 * call during an execution), and so do the runtime's matrix remaps, on
 * the rings their context made at its second matrix remap (pair_rings.h).
 *
 * Measured and rejected (MPICH 4.0 ch4:ucx, shared memory, P = 2): MPI
 * derived datatypes (MPI_Type_vector / indexed) instead of pack + unpack
 * were 10-30x slower than contiguous messages, whose transfer costs about
 * one memcpy; splitting messages into chunks slowed the transfer.        */
#include "deso/remap/remap.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"
#include "deso/core/mpi.h"
#include "deso/remap/comm_cache.h"
#include "deso/core/stats.h"

/* A message with one run that stays contiguous under the caller's ld can
 * be sent from, or received into, the user's array directly.              */
static bool direct(const deso__msg *m, int64_t rows, int64_t lld)
{
    if (m->run_len < 0) return false;
    if (lld == rows) return true;
    return m->run_off % rows + m->run_len <= rows;
}

static int64_t run_pos(int64_t rows, int64_t lld, int64_t off)
{
    return (off / rows) * lld + off % rows;
}

/* ---- fusion ------------------------------------------------------------- */

#define FUSE_CHUNK 4096   /* elements of the shared array per chunk       */

/* Offset on the shared side (b if side_b) of unit u of group gi.          */
static int64_t unit_key(const deso__copy *c, int64_t gi, int64_t u,
                        bool side_b)
{
    const deso__cp_group *g = &c->g[gi];
    if (g->reps == 1) {
        const deso__cp_item *x = &c->it[g->first + u];
        return side_b ? x->b : x->a;
    }
    const deso__cp_item *x = &c->it[g->first];
    return side_b ? x->b + u * g->db : x->a + u * g->da;
}

/* Fused program p: 0 the self copy, p > 0 message fuse_msg[p - 1].   */
static const deso__copy *fused_prog(const deso__remap *r, int p)
{
    if (p == 0) return &r->self;
    int i = r->fuse_msg[p - 1];
    return r->fuse == DESO__FUSE_UNPACK ? &r->recv[i].prog
                                        : &r->send[i].prog;
}

/* Runs units [lo, hi) of group g of fused program p.                   */
static void run_piece(const deso__remap *r, int p, int64_t g, int64_t lo,
                      int64_t hi, const double *src, double *dst)
{
    const deso__copy *c = fused_prog(r, p);
    if (p == 0) {
        deso__cp_run_range(c, g, lo, hi, src, dst);
    } else if (r->fuse == DESO__FUSE_PACK) {
        const deso__msg *m = &r->send[r->fuse_msg[p - 1]];
        deso__cp_run_range(c, g, lo, hi, src, r->sendbuf + m->buf_off);
    } else {
        const deso__msg *m = &r->recv[r->fuse_msg[p - 1]];
        deso__cp_run_range(c, g, lo, hi, r->recvbuf + m->buf_off, dst);
    }
}

/* The end of the units of cursor q's group, from q->u on, whose shared
 * side starts below `limit` (at least q->u + 1).                       */
static int64_t units_below(const deso__copy *c, const deso__fcur *q,
                           int64_t limit, bool side_b)
{
    const deso__cp_group *g = &c->g[q->g];
    int64_t n = deso__cp_units(c, q->g), u = q->u + 1;
    int64_t d = side_b ? g->db : g->da;
    if (g->reps == 1) {
        while (u < n && unit_key(c, q->g, u, side_b) < limit) u++;
        return u;
    }
    if (d <= 0) return n;
    int64_t k0 = unit_key(c, q->g, q->u, side_b);
    int64_t m = (limit - k0 + d - 1) / d;            /* >= 1             */
    return q->u + m < n ? q->u + m : n;
}

/* Runs the units of fused program p that start below `limit` on the
 * shared side, from its cursor on, and advances the cursor.            */
static void advance(deso__remap *r, int p, int64_t limit, bool side_b,
                    const double *src, double *dst)
{
    const deso__copy *c = fused_prog(r, p);
    deso__fcur *q = &r->fuse_cur[p];
    while (q->g < c->ngroups && unit_key(c, q->g, q->u, side_b) < limit) {
        int64_t u = units_below(c, q, limit, side_b);
        run_piece(r, p, q->g, q->u, u, src, dst);
        q->u = u;
        if (u == deso__cp_units(c, q->g)) {
            q->g++;
            q->u = 0;
        }
    }
}

/* The fused pass: the self copy interleaved with the fused messages'
 * programs, in chunks of FUSE_CHUNK elements of the shared side, every
 * unit of every program run exactly once whatever the offsets' order.
 * Walked at execution (O(elements / FUSE_CHUNK) steps, which the copy
 * dwarfs), so that planning stays O(period).                           */
static void run_fused(deso__remap *r, const double *src, double *dst)
{
    int np = 1 + r->nfuse;
    bool side_b = r->fuse == DESO__FUSE_UNPACK;
    for (int p = 0; p < np; p++) r->fuse_cur[p] = (deso__fcur){ 0, 0 };
    int64_t limit = 0;
    for (;;) {
        bool left = false;
        int64_t next = INT64_MAX;
        for (int p = 0; p < np; p++) {
            const deso__copy *c = fused_prog(r, p);
            const deso__fcur *q = &r->fuse_cur[p];
            if (q->g >= c->ngroups) continue;
            left = true;
            int64_t k = unit_key(c, q->g, q->u, side_b);
            if (k < next) next = k;
        }
        if (!left) break;
        limit += FUSE_CHUNK;
        if (next >= limit) limit = next - next % FUSE_CHUNK + FUSE_CHUNK;
        for (int p = 0; p < np; p++)
            advance(r, p, limit, side_b, src, dst);
    }
}

/* Whether the self copy or a packed message of the first step loops
 * over column periods: fusion cuts programs by groups, so it takes
 * none of those (long matrix row programs, whose columns are loops).   */
static bool looped_first(const deso__remap *r)
{
    const deso__remap_step *st = &r->steps[0];
    bool l = deso__cp_looped(&r->self);
    for (int i = st->send0; i < st->send0 + st->nsend; i++)
        l = l || deso__cp_looped(&r->send[i].prog);
    for (int j = st->recv0; j < st->recv0 + st->nrecv; j++)
        l = l || deso__cp_looped(&r->recv[j].prog);
    return l;
}

/* Chooses what the self copy is fused with (see deso__remap.fuse).        */
static deso_err plan_fusion(deso__remap *r)
{
    r->fuse = 0;
    if (r->self.elems == 0 || r->nsteps == 0 || looped_first(r))
        return DESO_OK;
    const deso__remap_step *st = &r->steps[0];
    int npack = 0, nunpack = 0, last = -1;
    for (int i = st->send0; i < st->send0 + st->nsend; i++)
        if (r->send[i].run_len < 0) npack++;
    for (int j = st->recv0; j < st->recv0 + st->nrecv; j++)
        if (r->recv[j].run_len < 0) {
            nunpack++;
            last = j;
        }
    DESO_TRY(deso__cp_split(&r->self, FUSE_CHUNK));
    for (int i = st->send0; i < st->send0 + st->nsend; i++)
        if (r->send[i].run_len < 0)
            DESO_TRY(deso__cp_split(&r->send[i].prog, FUSE_CHUNK));
    for (int j = st->recv0; j < st->recv0 + st->nrecv; j++)
        if (r->recv[j].run_len < 0)
            DESO_TRY(deso__cp_split(&r->recv[j].prog, FUSE_CHUNK));
    /* Fusing with the packs measured as good as or better than with the
     * unpack (P = 2: 5-20% faster than no fusion, either way), and keeps
     * the self copy ahead of the first receive.                           */
    if (npack > 0) {
        r->fuse = DESO__FUSE_PACK;
        r->nfuse = npack;
    } else if (nunpack == 1) {
        r->fuse = DESO__FUSE_UNPACK;
        r->nfuse = 1;
    } else {
        return DESO_OK;
    }
    /* One block: the cursors, then the indices (freed with fuse_cur).  */
    size_t ncur = (size_t)r->nfuse + 1;
    r->fuse_cur = deso__calloc(1, ncur * sizeof *r->fuse_cur +
                                  (size_t)r->nfuse * sizeof *r->fuse_msg);
    if (r->fuse_cur == NULL)
        return deso__fail(DESO_ENOMEM, "remap plan: out of memory");
    r->fuse_msg = (int *)(r->fuse_cur + ncur);
    if (r->fuse == DESO__FUSE_UNPACK) {
        r->fuse_msg[0] = last;
    } else {
        int n = 0;
        for (int i = st->send0; i < st->send0 + st->nsend; i++)
            if (r->send[i].run_len < 0) r->fuse_msg[n++] = i;
    }
    return DESO_OK;
}

/* ---- plan --------------------------------------------------------------- */

static bool same_ranks(const pl_bc_layout *a, const pl_bc_layout *b)
{
    int n = a->pr * a->pc;
    if (a->ranks == NULL && b->ranks == NULL) return true;
    for (int i = 0; i < n; i++) {
        int x = a->ranks ? a->ranks[i] : i;
        int y = b->ranks ? b->ranks[i] : i;
        if (x != y) return false;
    }
    return true;
}

static bool layouts_equal(const pl_bc_layout *a, const pl_bc_layout *b)
{
    if (a->m != b->m || a->n != b->n || a->pr != b->pr || a->pc != b->pc ||
        a->replicated != b->replicated)
        return false;
    if (!a->replicated && (a->mb != b->mb || a->nb != b->nb)) return false;
    return same_ranks(a, b);
}

/* Compiles one planner message straight from its per-period description
 * (deso__cp_from_msg); a message that is one run of the array keeps it
 * (run_off, run_len) to go from or to the caller's array directly.     */
static deso_err compile_msg(const pl_msg *pm, deso__cp_role role,
                            int64_t ld, deso__msg *out)
{
    out->peer = pm->peer;
    out->step = pm->step;
    out->count = pm->count;
    int dummy;
    DESO_TRY(deso__to_int(pm->count, "message length", &dummy));
    DESO_TRY(deso__cp_from_msg(pm, role, ld, 0, &out->prog));
    const deso__copy *c = &out->prog;
    if (c->elems != pm->count)
        return deso__fail(DESO_EINTERNAL, "deso__remap_init: a message to "
                          "or from rank %d copies %lld elements but has "
                          "count %lld", pm->peer, (long long)c->elems,
                          (long long)pm->count);
    out->run_len = -1;
    if (c->ngroups == 1 && c->nitems == 1 && c->g[0].reps == 1 &&
        !deso__cp_looped(c) &&
        (c->it[0].len == 1 || (c->it[0].sa == 1 && c->it[0].sb == 1))) {
        out->run_off = role == DESO__CP_SEND ? c->it[0].a : c->it[0].b;
        out->run_len = c->it[0].len;
    }
    return DESO_OK;
}

static deso_err build(deso__remap *out, const pl_remap_rank *p)
{
    int64_t lds = p->src_lrows > 1 ? p->src_lrows : 1;
    int64_t ldd = p->dst_lrows > 1 ? p->dst_lrows : 1;
    out->send = deso__calloc((size_t)(p->nsend ? p->nsend : 1), sizeof *out->send);
    out->recv = deso__calloc((size_t)(p->nrecv ? p->nrecv : 1), sizeof *out->recv);
    if (!out->send || !out->recv)
        return deso__fail(DESO_ENOMEM, "deso__remap_init: out of memory");
    deso_err e = DESO_OK;
    for (int i = 0; i < p->nsend && e == DESO_OK; i++, out->nsend++)
        e = compile_msg(&p->send[i], DESO__CP_SEND, lds, &out->send[i]);
    for (int i = 0; i < p->nrecv && e == DESO_OK; i++, out->nrecv++)
        e = compile_msg(&p->recv[i], DESO__CP_RECV, ldd, &out->recv[i]);
    if (e == DESO_OK && p->has_self)
        e = deso__cp_from_msg(&p->self, DESO__CP_SELF, lds, ldd, &out->self);
    return e;
}

/* The layouts of a remap: a matrix pair or a d-dimensional pair.       */
typedef struct layouts {
    const pl_bc_layout *src, *dst;
    const pl_nd_layout *src_nd, *dst_nd;
} layouts;

static deso_err remap_init(MPI_Comm comm, const layouts *l,
                           pl_sched_kind kind, deso__comm_cache *cache,
                           bool keep, deso__remap *out);

deso_err deso__remap_init(MPI_Comm comm, const pl_bc_layout *src,
                          const pl_bc_layout *dst, pl_sched_kind kind,
                          deso__remap *out)
{
    layouts l = { src, dst, NULL, NULL };
    return remap_init(comm, &l, kind, NULL, false, out);
}

deso_err deso__remap_init_keep(MPI_Comm comm, deso__comm_cache *cache,
                               const pl_bc_layout *src,
                               const pl_bc_layout *dst, pl_sched_kind kind,
                               deso__remap *out)
{
    layouts l = { src, dst, NULL, NULL };
    return remap_init(comm, &l, kind, cache, true, out);
}

deso_err deso__remap_init_nd_keep(MPI_Comm comm, deso__comm_cache *cache,
                                  const pl_nd_layout *src,
                                  const pl_nd_layout *dst,
                                  pl_sched_kind kind, deso__remap *out)
{
    layouts l = { NULL, NULL, src, dst };
    return remap_init(comm, &l, kind, cache, true, out);
}

void deso__remap_keep_buffers(deso__remap *r, deso__comm_cache *cache)
{
    bool send_cold = r->cold & (1u << DESO__BUF_SEND);
    bool recv_cold = r->cold & (1u << DESO__BUF_RECV);
    deso__buf_keep(send_cold ? NULL : cache, DESO__BUF_SEND, r->sendbuf,
                   r->sendbuf_len);
    deso__buf_keep(recv_cold ? NULL : cache, DESO__BUF_RECV, r->recvbuf,
                   r->recvbuf_len);
    r->sendbuf = r->recvbuf = NULL;
    r->sendbuf_len = r->recvbuf_len = 0;
    r->cold = 0;
}

/* One write a page (4 KiB, the smallest) maps every page of buf.        */
static void touch(double *buf, int64_t len)
{
    const int64_t page = 4096 / (int64_t)sizeof(double);
    for (int64_t i = 0; i < len; i += page) buf[i] = 0.0;
}

void deso__remap_warm_buffers(deso__remap *r)
{
    if (r->cold & (1u << DESO__BUF_SEND)) touch(r->sendbuf, r->sendbuf_len);
    if (r->cold & (1u << DESO__BUF_RECV)) touch(r->recvbuf, r->recvbuf_len);
    r->cold = 0;
}

/* Whether two d-dimensional layouts are the same (extents included).   */
static bool nd_equal(const pl_nd_layout *a, const pl_nd_layout *b)
{
    if (a->d != b->d) return false;
    int np = 1;
    for (int k = 0; k < a->d; k++) {
        if (a->n[k] != b->n[k] || a->b[k] != b->b[k] || a->p[k] != b->p[k])
            return false;
        np *= a->p[k];
    }
    for (int i = 0; i < np; i++)
        if ((a->ranks ? a->ranks[i] : i) != (b->ranks ? b->ranks[i] : i))
            return false;
    return true;
}

/* This rank's plan of the remap, and whether the layouts are equal.    */
static deso_err plan_of(const layouts *l, int size, pl_sched_kind kind,
                        int me, pl_remap_rank *plan, bool *identical)
{
    if (l->src_nd != NULL || l->dst_nd != NULL) {
        DESO_CHECK(l->src_nd != NULL && l->dst_nd != NULL, DESO_ENULL,
                   "deso__remap_init: a layout is NULL");
        DESO_TRY(pl_remap_plan_rank_nd(l->src_nd, l->dst_nd, size, kind, me,
                                       plan));
        *identical = nd_equal(l->src_nd, l->dst_nd);
        return DESO_OK;
    }
    DESO_CHECK(l->src != NULL && l->dst != NULL, DESO_ENULL,
               "deso__remap_init: a layout is NULL");
    DESO_TRY(pl_remap_plan_rank(l->src, l->dst, size, kind, me, plan));
    *identical = layouts_equal(l->src, l->dst);
    return DESO_OK;
}

/* Groups the messages by step (both lists are sorted by step) and lays
 * out each step's messages in the buffers.  False when out of memory.   */
static bool lay_out_steps(deso__remap *out)
{
    int nsteps = 0;
    for (int pass = 0; pass < 2; pass++) {
        int i = 0, j = 0, s = 0;
        int64_t sbuf = 0, rbuf = 0;
        int maxreq = 0;
        while (i < out->nsend || j < out->nrecv) {
            int k = INT_MAX;
            if (i < out->nsend) k = out->send[i].step;
            if (j < out->nrecv && out->recv[j].step < k) k = out->recv[j].step;
            deso__remap_step st = { .send0 = i, .recv0 = j };
            int64_t so = 0, ro = 0;
            for (; i < out->nsend && out->send[i].step == k; i++) {
                out->send[i].buf_off = so;
                so += out->send[i].count;
            }
            for (; j < out->nrecv && out->recv[j].step == k; j++) {
                out->recv[j].buf_off = ro;
                ro += out->recv[j].count;
            }
            st.nsend = i - st.send0;
            st.nrecv = j - st.recv0;
            if (pass == 1) out->steps[s] = st;
            s++;
            if (so > sbuf) sbuf = so;
            if (ro > rbuf) rbuf = ro;
            if (st.nsend + st.nrecv > maxreq) maxreq = st.nsend + st.nrecv;
        }
        if (pass == 0) {
            nsteps = s;
            out->steps = deso__calloc((size_t)nsteps, sizeof *out->steps);
            if (out->steps == NULL) return false;
        } else {
            out->nsteps = nsteps;
            out->sendbuf_len = sbuf;
            out->recvbuf_len = rbuf;
            out->max_reqs = maxreq;
        }
    }
    return true;
}

/* The compiled programs of this rank's plan, kept for the shared-memory
 * transport when `keep` (deso__remap_shm_prepare), freed otherwise.    */
static deso_err compile_plan(deso__remap *out, pl_remap_rank *plan, bool keep)
{
    out->src_rows = plan->src_lrows;
    out->src_cols = plan->src_lcols;
    out->dst_rows = plan->dst_lrows;
    out->dst_cols = plan->dst_lcols;
    out->src_elems = plan->src_lrows * plan->src_lcols;
    out->dst_elems = plan->dst_lrows * plan->dst_lcols;
    out->active = plan->nsend > 0 || plan->nrecv > 0 || plan->has_self;
    deso_err e = build(out, plan);
    if (e == DESO_OK && keep) {
        out->plan = deso__malloc(sizeof *out->plan);
        if (out->plan == NULL)
            e = deso__fail(DESO_ENOMEM, "deso__remap_init: out of memory");
        else
            *out->plan = *plan;
    }
    if (out->plan == NULL)
        pl_remap_rank_free(plan); /* the compiled programs replace it    */
    return e;
}

/* A buffer of at least *len doubles: the one cache keeps of `kind` when
 * large enough, else a new one (*len: the length it has).  Not zeroed:
 * every element is packed (or received) before it is read, and zeroing
 * a large buffer was half of planning a large remap; untouched, its
 * pages cost nothing when the shared-memory transport gives it up.     */
static double *buffer(deso__comm_cache *cache, deso__buf_kind kind,
                      int64_t *len, unsigned char *cold)
{
    int64_t kept = 0;
    double *b = deso__buf_take(cache, kind, *len, &kept);
    if (b != NULL) {
        *len = kept;
        return b;
    }
    *cold |= (unsigned char)(1u << kind);
    return deso__malloc((size_t)*len * sizeof(double));
}

/* Everything deso__remap_init does after asking the communicator for
 * out->me and out->size: local, no MPI call but the clock.             */
static deso_err plan_local(const layouts *l, pl_sched_kind kind, bool keep,
                           deso__comm_cache *cache, deso__remap *out)
{
    double t0 = MPI_Wtime();
    pl_remap_rank plan;
    memset(&plan, 0, sizeof plan);
    DESO_TRY(plan_of(l, out->size, kind, out->me, &plan, &out->identical));
    deso_err e = compile_plan(out, &plan, keep);
    if (e != DESO_OK) return e;
    if (!lay_out_steps(out)) goto nomem;
    out->sendbuf = buffer(cache, DESO__BUF_SEND, &out->sendbuf_len,
                          &out->cold);
    out->recvbuf = buffer(cache, DESO__BUF_RECV, &out->recvbuf_len,
                          &out->cold);
    /* One block: the requests, then their messages (freed with reqs). */
    out->reqs = deso__calloc(1, (size_t)out->max_reqs *
                                (sizeof *out->reqs + sizeof *out->req_msg));
    if (!out->sendbuf || !out->recvbuf || !out->reqs) goto nomem;
    out->req_msg = (int *)(out->reqs + out->max_reqs);
    if (plan_fusion(out) != DESO_OK) goto nomem;
    out->t_plan = MPI_Wtime() - t0;
    return DESO_OK;
nomem:
    return deso__fail(DESO_ENOMEM, "deso__remap_init: out of memory for "
                      "the buffers of a remap");
}

static deso_err remap_init(MPI_Comm comm, const layouts *l,
                           pl_sched_kind kind, deso__comm_cache *cache,
                           bool keep, deso__remap *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__remap_init: out is NULL");
    memset(out, 0, sizeof *out);
    out->comm = MPI_COMM_NULL;
    DESO_CHECK(comm != MPI_COMM_NULL, DESO_EINVAL,
               "deso__remap_init: comm is MPI_COMM_NULL");
    DESO_MPI_TRY(MPI_Comm_rank(comm, &out->me),
                 "deso remap: MPI_Comm_rank");
    DESO_MPI_TRY(MPI_Comm_size(comm, &out->size),
                 "deso remap: MPI_Comm_size");
    deso_err e = plan_local(l, kind, keep, cache, out);
    if (e != DESO_OK) {
        deso__remap_free(out);
        return e;
    }
    out->comm = comm;
    return DESO_OK;
}

static deso_err plan_as(int me, int size, const layouts *l,
                        pl_sched_kind kind, deso__remap *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__remap_plan_as: out is NULL");
    memset(out, 0, sizeof *out);
    out->comm = MPI_COMM_NULL;
    DESO_CHECK(size >= 1 && me >= 0 && me < size, DESO_EINVAL,
               "deso__remap_plan_as: rank %d of %d", me, size);
    out->me = me;
    out->size = size;
    deso_err e = plan_local(l, kind, false, NULL, out);
    if (e != DESO_OK) deso__remap_free(out);
    return e;
}

deso_err deso__remap_plan_as(int me, int size, const pl_bc_layout *src,
                             const pl_bc_layout *dst, pl_sched_kind kind,
                             deso__remap *out)
{
    layouts l = { src, dst, NULL, NULL };
    return plan_as(me, size, &l, kind, out);
}

deso_err deso__remap_plan_as_nd(int me, int size, const pl_nd_layout *src,
                                const pl_nd_layout *dst, pl_sched_kind kind,
                                deso__remap *out)
{
    layouts l = { NULL, NULL, src, dst };
    return plan_as(me, size, &l, kind, out);
}

void deso__remap_drop_plan(deso__remap *r)
{
    if (r->plan == NULL) return;
    pl_remap_rank_free(r->plan);
    free(r->plan);
    r->plan = NULL;
}

void deso__remap_free(deso__remap *r)
{
    if (r == NULL) return;
    deso__remap_shm_free(r);
    deso__remap_drop_plan(r);
    for (int i = 0; i < r->nsend; i++) deso__cp_free(&r->send[i].prog);
    for (int i = 0; i < r->nrecv; i++) deso__cp_free(&r->recv[i].prog);
    deso__cp_free(&r->self);
    free(r->send);
    free(r->recv);
    free(r->steps);
    free(r->sendbuf);
    free(r->recvbuf);
    free(r->reqs);                /* req_msg lies in the same block     */
    free(r->fuse_cur);            /* and fuse_msg in this one           */
    if (r->owns_comm && r->comm != MPI_COMM_NULL) MPI_Comm_free(&r->comm);
    memset(r, 0, sizeof *r);
    r->comm = MPI_COMM_NULL;
}

/* ---- execution ---------------------------------------------------------- */

/* One execution over MPI: the arrays (flat paths when ld = rows), the
 * fused pass's kind, and what it has done so far.                      */
typedef struct xrun {
    const double *src;
    double *dst;
    int64_t srows, slld, drows, dlld;
    int fuse;                /* r->fuse, or 0 when an array is not flat  */
    bool self_done;
    double t_pack;           /* seconds spent packing and unpacking      */
} xrun;

/* Runs the self copy (once), timed.                                     */
static void self_copy(const deso__remap *r, xrun *x)
{
    if (x->self_done) return;
    double a = deso__now();
    deso__cp_run(&r->self, x->src, x->srows, x->slld, x->dst, x->drows,
                 x->dlld);
    x->t_pack += deso__now() - a;
    x->self_done = true;
}

/* Posts the receives of step st (directly into the target when one run
 * stays contiguous there).                                              */
static deso_err post_recvs(deso__remap *r, const deso__remap_step *st,
                           xrun *x, int *nreq)
{
    for (int j = st->recv0; j < st->recv0 + st->nrecv; j++) {
        const deso__msg *m = &r->recv[j];
        double *buf = direct(m, x->drows, x->dlld)
            ? x->dst + run_pos(x->drows, x->dlld, m->run_off)
            : r->recvbuf + m->buf_off;
        DESO_MPI_TRY(MPI_Irecv(buf, (int)m->count, MPI_DOUBLE, m->peer,
                               DESO__TAG_REMAP, r->comm, &r->reqs[*nreq]),
                     "deso remap: MPI_Irecv");
        r->req_msg[(*nreq)++] = j;
    }
    return DESO_OK;
}

/* Sends message i: from the source directly, or packed (unless the
 * fused pass packed it already).                                        */
static deso_err send_one(deso__remap *r, int i, bool dir, bool packed,
                         xrun *x, int *nreq)
{
    const deso__msg *m = &r->send[i];
    const double *buf = dir ? x->src + run_pos(x->srows, x->slld, m->run_off)
                            : r->sendbuf + m->buf_off;
    if (!dir && !packed) {
        double a = deso__now();
        deso__cp_run(&m->prog, x->src, x->srows, x->slld,
                     r->sendbuf + m->buf_off, INT64_MAX, INT64_MAX);
        x->t_pack += deso__now() - a;
    }
    DESO_MPI_TRY(MPI_Isend(buf, (int)m->count, MPI_DOUBLE, m->peer,
                           DESO__TAG_REMAP, r->comm, &r->reqs[*nreq]),
                 "deso remap: MPI_Isend");
    deso__stats_p2p(m->count * (int64_t)sizeof(double));
    r->req_msg[(*nreq)++] = -1 - i;
    return DESO_OK;
}

/* The sends of step k: direct ones first, then the packed ones (packed
 * in one pass with the self copy when fused).                          */
static deso_err post_sends(deso__remap *r, int k, xrun *x, int *nreq)
{
    const deso__remap_step *st = &r->steps[k];
    bool fused_pack = k == 0 && x->fuse == DESO__FUSE_PACK;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && fused_pack) {
            double a = deso__now();
            run_fused(r, x->src, x->dst);
            x->t_pack += deso__now() - a;
            x->self_done = true;
        }
        for (int i = st->send0; i < st->send0 + st->nsend; i++) {
            bool dir = direct(&r->send[i], x->srows, x->slld);
            if (dir == (pass == 0))
                DESO_TRY(send_one(r, i, dir, fused_pack, x, nreq));
        }
    }
    return DESO_OK;
}

/* Waits for step k's requests, unpacking receives as they complete (the
 * fused receive in one pass with the self copy).                        */
static deso_err wait_step(deso__remap *r, int k, int nreq, xrun *x)
{
    for (int left = nreq; left > 0; left--) {
        int idx;
        DESO_MPI_TRY(MPI_Waitany(nreq, r->reqs, &idx, MPI_STATUS_IGNORE),
                     "deso remap: MPI_Waitany");
        if (idx == MPI_UNDEFINED) break;
        int j = r->req_msg[idx];
        if (j < 0) continue;
        const deso__msg *m = &r->recv[j];
        if (direct(m, x->drows, x->dlld)) continue;
        double a = deso__now();
        if (k == 0 && x->fuse == DESO__FUSE_UNPACK && j == r->fuse_msg[0]) {
            run_fused(r, x->src, x->dst);          /* with the self copy */
            x->self_done = true;
        } else {
            deso__cp_run(&m->prog, r->recvbuf + m->buf_off, INT64_MAX,
                         INT64_MAX, x->dst, x->drows, x->dlld);
        }
        x->t_pack += deso__now() - a;
    }
    return DESO_OK;
}

/* The MPI transport: the steps in order, the self copy overlapping the
 * first one's traffic.                                                  */
static deso_err exec_mpi(deso__remap *r, xrun *x)
{
    double t0 = deso__now();
    for (int k = 0; k < r->nsteps; k++) {
        int nreq = 0;
        DESO_TRY(post_recvs(r, &r->steps[k], x, &nreq));
        DESO_TRY(post_sends(r, k, x, &nreq));
        if (x->fuse != DESO__FUSE_UNPACK) self_copy(r, x);
        DESO_TRY(wait_step(r, k, nreq, x));
    }
    self_copy(r, x);
    if (r->nsteps > 0)
        deso__stats_time(DESO_T_P2P, deso__now() - t0 - x->t_pack);
    deso__stats_time(DESO_T_OVERHEAD, x->t_pack);
    return DESO_OK;
}

/* deso__remap_exec's checks of its arguments.                           */
static deso_err exec_check(const deso__remap *r, const double *src,
                           int64_t slld, const double *dst, int64_t dlld)
{
    int64_t srows = r->src_rows, drows = r->dst_rows;
    if (r->src_elems > 0) {
        DESO_CHECK(src != NULL, DESO_ENULL,
                   "deso__remap_exec: rank %d holds %lld source elements "
                   "but src is NULL", r->me, (long long)r->src_elems);
        DESO_CHECK(slld >= (srows > 1 ? srows : 1), DESO_EINVAL,
                   "deso__remap_exec: src_lld = %lld < local rows %lld on "
                   "rank %d", (long long)slld, (long long)srows, r->me);
    }
    if (r->dst_elems > 0) {
        DESO_CHECK(dst != NULL, DESO_ENULL,
                   "deso__remap_exec: rank %d holds %lld target elements "
                   "but dst is NULL", r->me, (long long)r->dst_elems);
        DESO_CHECK(dlld >= (drows > 1 ? drows : 1), DESO_EINVAL,
                   "deso__remap_exec: dst_lld = %lld < local rows %lld on "
                   "rank %d", (long long)dlld, (long long)drows, r->me);
    }
    return DESO_OK;
}

deso_err deso__remap_exec(deso__remap *r, const double *src_local,
                          int64_t src_lld, double *dst_local,
                          int64_t dst_lld)
{
    DESO_CHECK(r != NULL, DESO_ENULL, "deso__remap_exec: remap is NULL");
    if (!r->active) return DESO_OK;
    DESO_TRY(exec_check(r, src_local, src_lld, dst_local, dst_lld));
    int64_t srows = r->src_rows, drows = r->dst_rows;
    /* A leading dimension addresses nothing in a single column (or none):
     * take it as the rows, so the flat paths apply.                      */
    if (r->src_cols <= 1 || srows == 0) src_lld = srows;
    if (r->dst_cols <= 1 || drows == 0) dst_lld = drows;

    /* Identical layouts in place: nothing to move.                        */
    if (r->identical && (const double *)dst_local == src_local &&
        src_lld == dst_lld)
        return DESO_OK;
    /* Out of place, flat: one copy of the local array.                   */
    if (r->identical && srows == src_lld && drows == dst_lld &&
        r->src_elems == r->dst_elems) {
        double a = deso__now();
        if (r->src_elems > 0)
            memcpy(dst_local, src_local,
                   (size_t)r->src_elems * sizeof *dst_local);
        deso__stats_time(DESO_T_OVERHEAD, deso__now() - a);
        return DESO_OK;
    }
    if (r->shm != NULL)
        return deso__remap_shm_exec(r, src_local, src_lld, dst_local,
                                    dst_lld);
    /* The fused pass needs flat arrays (ld = local rows).                 */
    xrun x = { src_local, dst_local, srows, src_lld, drows, dst_lld,
               srows == src_lld && drows == dst_lld ? r->fuse : 0, false,
               0.0 };
    return exec_mpi(r, &x);
}
