/* deso/remap/remap_shm.c: the remap's shared-memory transport.
 *
 * When every rank of a remap's communicator is on one node, messages need
 * not go through MPI: each sender owns, in an MPI-3 shared window, one ring
 * per receiver (SHM_SLOTS slots of SHM_CHUNK doubles and two counters).
 * The sender packs a message chunk by chunk straight into the ring; the
 * receiver unpacks each chunk into its array as soon as it is there.  The
 * ring stays in cache, so the data crosses memory once from the source
 * array to the target array, where MPI's path writes and reads a whole
 * packed buffer on each side and copies between them (measured at P = 2,
 * 2^24 doubles: pack + MPI + unpack ~2x a memcpy of the moved half, the
 * ring ~1.5x).  Chunk k of a message is the window of packed elements
 * [k SHM_CHUNK, (k + 1) SHM_CHUNK) of its copy program, run from a
 * position each side advances (deso__cp_run_window): the same cut on
 * both sides, and nothing compiled per chunk, so setting the transport
 * up costs no more than planning.
 *
 * Synchronisation is the counters alone: the sender publishes chunk n by
 * storing head = n + 1 (release) after filling its slot, the receiver
 * frees it by storing tail = n + 1 (release) after reading it; neither
 * calls MPI during an execution, nothing is reset between executions
 * (every execution moves the same number of chunks), and a rank returns as
 * soon as its own chunks are through: its source may then be reused.
 * Ranks take the schedule's steps in order, servicing all of a step's
 * messages without blocking on any one of them and filling idle time with
 * pieces of the self copy, so the rank at the lowest step always makes
 * progress (no deadlock).  A rank that waits long yields the processor:
 * tests run more ranks than cores.
 *
 * Single copy: a sender whose source lies in a shared array its receiver
 * has mapped (deso_redist_array_alloc) packs nothing; at the start of each
 * execution it describes its source in the ring's control block, and the
 * receiver copies straight from it (remap_pull.c's programs), then says
 * it is done; the sender returns only then.  A receiver all of whose
 * senders allow it writes its whole target in one ordered pass, whole
 * lines streamed.  Whether it does so or takes the rings is chosen per
 * remap by timing both (remap_pick.c).  Descriptions go one at a time
 * (the receiver acknowledges each): a ring message of few chunks lets its
 * sender run an execution ahead.                                         */
#include "deso/remap/remap.h"
#include "deso/remap/remap_pull.h"
#include "deso/remap/remap_pick.h"
#include "deso/remap/comm_cache.h"
#include "deso/remap/pair_rings.h"

#include <sched.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "deso/core/agree.h"
#include "deso/core/mpi.h"
#include "deso/core/node.h"
#include "placement/alloc.h"
#include "placement/errors.h"
#include "deso/remap/shared_array.h"
#include "deso/core/stats.h"

#define SHM_CHUNK 8192     /* doubles per slot: 64 KiB                     */
#define SHM_SLOTS 4
#define SHM_LINE 128       /* counters on their own (adjacent-line) pairs  */
#define SHM_SPINS 64       /* idle polls before yielding the processor    */
#define SHM_STREAM_ELEMS (1 << 20)   /* 8 MiB: beyond the 2 MiB L2 here */

#if ATOMIC_LLONG_LOCK_FREE != 2
#error "the shared-memory remap needs lock-free 64-bit atomics"
#endif

typedef struct ring_ctl {
    _Atomic long long head;            /* chunks published (sender)       */
    char pad0[SHM_LINE - sizeof(long long)];
    _Atomic long long tail;            /* chunks consumed (receiver)      */
    char pad1[SHM_LINE - sizeof(long long)];
    /* Single copy: the sender says, per execution, whether its receiver
     * reads the source in place (and where it is), the receiver when it
     * is through.                                                         */
    _Atomic long long desc;            /* executions described (sender)   */
    uint64_t src;                      /* its source, as the sender sees it */
    int64_t lld, extent;               /* its leading dimension, elements */
    int pull;                          /* 1: read the source in place     */
    char pad2[SHM_LINE - 4 * sizeof(long long) - sizeof(int)];
    _Atomic long long seen;            /* descriptions read (receiver)    */
    _Atomic long long done;            /* executions pulled (receiver)    */
    char pad3[SHM_LINE - 2 * sizeof(long long)];
} ring_ctl;

#define RING_BYTES \
    ((MPI_Aint)sizeof(ring_ctl) + (MPI_Aint)SHM_SLOTS * SHM_CHUNK * 8)

typedef struct chan {
    ring_ctl *ctl;
    double *slots;
    int64_t nchunks;
    const deso__copy *prog;            /* the message's program (r's)     */
    deso__cp_pos at;                   /* where chunk `next` starts       */
    int64_t next;                      /* chunks done in this execution   */
    long long base;                    /* counter value at its start      */
    bool pull;                         /* this execution: single copy     */
    const double *peer_src;            /* receive: the sender's source    */
    int64_t peer_lld;
} chan;

struct deso__shm {
    deso__comm_cache *cache;           /* where the rings come from       */
    deso__ring *rings;                 /* mine, one per send              */
    bool mapped;                       /* rings taken from the pool       */
    chan *send, *recv;                 /* as r->send, r->recv             */
    int64_t nself;                     /* pieces of the self copy         */
    deso__cp_pos self_at;              /* where the next one starts       */
    long long *xout, *xin;             /* 3 P each: the ring exchange     */
    int *world;                        /* world rank of each plan rank    */
    long long execs;                   /* executions so far               */
    deso__pull pull;                   /* single-copy programs, built     */
    bool pull_built;                   /* here (deso__remap_shm_pull_build) */
    bool pull_on;                      /* built on every rank (agreed):   */
                                       /* senders may be read in place    */
    deso__pick pick;                   /* when they are (remap_pick.c)    */
    const double **bases;              /* nrecv + 1: the assembly's       */
    int64_t *delta;                    /* arrays, resolved for these      */
    bool resolved;                     /* bases (resolved program valid)  */
    const double *ref;                 /* the base it is resolved over    */
};

static void shm_free_local(deso__remap *r, struct deso__shm *s)
{
    if (s->mapped) deso__ring_give(s->cache, s->rings, r->nsend);
    s->mapped = false;
    free(s->rings);
    s->rings = NULL;
    free(s->xout);
    free(s->xin);
    s->xout = s->xin = NULL;
    deso__pull_free(&s->pull, r->nrecv);
    free(s->world);
    free(s->bases);
    free(s->delta);
    s->world = NULL;
    s->bases = NULL;
    s->delta = NULL;
    free(s->send);
    free(s->recv);
}

void deso__remap_shm_free(deso__remap *r)
{
    struct deso__shm *s = r->shm;
    if (s == NULL) return;
    shm_free_local(r, s);
    free(s);
    r->shm = NULL;
}

/* Points every channel at its message's program and counts its chunks
 * and the self copy's pieces; false when a peer has two messages (one
 * ring per pair) or memory ran out.                                       */
static bool prepare(deso__remap *r, struct deso__shm *s)
{
    s->send = deso__calloc((size_t)(r->nsend ? r->nsend : 1), sizeof *s->send);
    s->recv = deso__calloc((size_t)(r->nrecv ? r->nrecv : 1), sizeof *s->recv);
    s->rings = deso__calloc((size_t)(r->nsend ? r->nsend : 1), sizeof *s->rings);
    s->xout = deso__malloc((size_t)r->size * 3 * sizeof *s->xout);
    s->xin = deso__malloc((size_t)r->size * 3 * sizeof *s->xin);
    if (!s->send || !s->recv || !s->rings || !s->xout || !s->xin)
        return false;
    for (int i = 0; i < r->nsend; i++)
        for (int i2 = 0; i2 < i; i2++)
            if (r->send[i2].peer == r->send[i].peer) return false;
    for (int j = 0; j < r->nrecv; j++)
        for (int j2 = 0; j2 < j; j2++)
            if (r->recv[j2].peer == r->recv[j].peer) return false;
    for (int i = 0; i < r->nsend; i++) {
        s->send[i].prog = &r->send[i].prog;
        s->send[i].nchunks = (r->send[i].count + SHM_CHUNK - 1) / SHM_CHUNK;
    }
    for (int j = 0; j < r->nrecv; j++) {
        s->recv[j].prog = &r->recv[j].prog;
        s->recv[j].nchunks = (r->recv[j].count + SHM_CHUNK - 1) / SHM_CHUNK;
    }
    s->nself = (r->self.elems + SHM_CHUNK - 1) / SHM_CHUNK;
    return true;
}

int64_t deso__remap_shm_ring_bytes(void) { return (int64_t)RING_BYTES; }

void deso__remap_shm_ring_clear(char *ring)
{
    ring_ctl *ctl = (ring_ctl *)(void *)ring;
    atomic_init(&ctl->head, 0);
    atomic_init(&ctl->tail, 0);
    atomic_init(&ctl->desc, 0);
    atomic_init(&ctl->seen, 0);
    atomic_init(&ctl->done, 0);
}

/* Where an MPI failure of this transport happened, for its message.     */
#define SHM "deso remap (shared memory): "

/* Takes this rank's rings from the pool and finds the peers' ones
 * (collective: an all-to-all).                                           */
static deso_err map_rings(deso__remap *r, struct deso__shm *s)
{
    /* Without rings here (a window could not be added) this rank still
     * takes part in the all-to-all, then fails: no rank waits for it.    */
    s->mapped = deso__ring_take(s->cache, r->nsend, s->rings);
    /* Per peer: which window and slot my ring for it is, and how long the
     * message is; the all-to-all gives each rank its senders' rings and a
     * check.                                                              */
    int P = r->size;
    long long *out = s->xout, *in = s->xin;
    for (int q = 0; q < P; q++) {
        out[3 * q] = -1;
        out[3 * q + 1] = out[3 * q + 2] = 0;
    }
    for (int i = 0; i < r->nsend && s->mapped; i++) {
        chan *c = &s->send[i];
        char *ring = s->rings[i].at;
        c->ctl = (ring_ctl *)(void *)ring;
        c->slots = (double *)(void *)(ring + sizeof(ring_ctl));
        deso__remap_shm_ring_clear(ring);
        int q = r->send[i].peer;
        out[3 * q] = s->rings[i].win;
        out[3 * q + 1] = s->rings[i].slot;
        out[3 * q + 2] = r->send[i].count;
    }
    atomic_thread_fence(memory_order_seq_cst);
    deso_err e = DESO_OK;
    int rc = MPI_Alltoall(out, 3, MPI_LONG_LONG, in, 3, MPI_LONG_LONG,
                          r->comm);
    if (rc != MPI_SUCCESS) e = deso__mpi(rc, SHM "MPI_Alltoall");
    if (e == DESO_OK && !s->mapped)
        e = deso__fail(DESO_ENOMEM, SHM "rank %d has no free ring", r->me);
    for (int j = 0; j < r->nrecv && e == DESO_OK; j++) {
        int q = r->recv[j].peer;
        if (in[3 * q] < 0 || in[3 * q + 2] != r->recv[j].count) {
            e = deso__fail(DESO_EINTERNAL, "deso remap (shared memory): "
                           "rank %d expects %lld elements from rank %d, "
                           "which plans %lld", r->me,
                           (long long)r->recv[j].count, q, in[3 * q + 2]);
            break;
        }
        char *ring = deso__ring_peer(s->cache, (int)in[3 * q], q,
                                     in[3 * q + 1], &e);
        if (ring == NULL) break;
        s->recv[j].ctl = (ring_ctl *)(void *)ring;
        s->recv[j].slots = (double *)(void *)(ring + sizeof(ring_ctl));
    }
    /* No barrier: a rank's counters were initialised before it entered
     * the all-to-all, which its receivers have completed.                */
    return e;
}

/* Each plan rank's world rank (how shared arrays name their ranks).     */
static bool world_ranks(deso__remap *r, struct deso__shm *s)
{
    s->world = deso__malloc((size_t)r->size * sizeof *s->world);
    int *mine = deso__malloc((size_t)r->size * sizeof *mine);
    MPI_Group g = MPI_GROUP_NULL, w = MPI_GROUP_NULL;
    bool ok = s->world && mine &&
              MPI_Comm_group(r->comm, &g) == MPI_SUCCESS &&
              MPI_Comm_group(MPI_COMM_WORLD, &w) == MPI_SUCCESS;
    for (int q = 0; ok && q < r->size; q++) mine[q] = q;
    ok = ok && MPI_Group_translate_ranks(g, r->size, mine, w, s->world) ==
                   MPI_SUCCESS;
    if (g != MPI_GROUP_NULL) MPI_Group_free(&g);
    if (w != MPI_GROUP_NULL) MPI_Group_free(&w);
    free(mine);
    return ok;
}

/* The rings' chunk programs; false (nothing kept) when the transport
 * cannot be used.  The single-copy programs wait for a shared source
 * (deso__remap_shm_pull_build): most remaps never see one, and a
 * matrix's cost as much as the ring programs.                           */
static bool setup(MPI_Comm comm, deso__comm_cache *cache, deso__remap *r)
{
    if (!deso__shm_allowed(comm) || r == NULL ||
        r->comm == MPI_COMM_NULL)
        return false;
    double t0 = MPI_Wtime();      /* the programs are planning, not setup */
    struct deso__shm *s = deso__calloc(1, sizeof *s);
    if (s == NULL) return false;
    s->cache = cache;
    s->bases = deso__calloc((size_t)r->nrecv + 1, sizeof *s->bases);
    s->delta = deso__calloc((size_t)r->nrecv + 1, sizeof *s->delta);
    if (!prepare(r, s) || !s->bases || !s->delta || !world_ranks(r, s)) {
        shm_free_local(r, s);
        free(s);
        return false;
    }
    r->shm = s;
    r->t_plan += MPI_Wtime() - t0;
    return true;
}

deso_err deso__remap_shm_prepare(MPI_Comm comm, deso__comm_cache *cache,
                                 deso__remap *r, int *ok, int *grow)
{
    *ok = setup(comm, cache, r);
    *grow = *ok && deso__ring_short(cache, r->nsend, RING_BYTES) > 0;
    if (r != NULL && !*ok) deso__remap_drop_plan(r);  /* MPI needs none   */
    return DESO_OK;
}

/* MPI's whole-step buffers, not needed on this transport.               */
static void drop_mpi_buffers(deso__remap *r)
{
    free(r->sendbuf);
    free(r->recvbuf);
    r->sendbuf = r->recvbuf = NULL;
    r->sendbuf_len = r->recvbuf_len = 0;
}

deso_err deso__remap_shm_finish(deso__remap *r, bool use, bool grow)
{
    if (r == NULL || r->shm == NULL) return DESO_OK;
    if (!use) {
        shm_free_local(r, r->shm);
        free(r->shm);
        r->shm = NULL;
        deso__remap_drop_plan(r);
        return DESO_OK;
    }
    /* Every rank adds to the pool when one lacks rings (collective), and
     * must agree that its rings are mapped, or none uses them (they go
     * back to the pool).                                                 */
    struct deso__shm *s = r->shm;
    deso_err mapped = DESO_OK;
    if (grow)
        mapped = deso__ring_grow(s->cache, deso__ring_short(s->cache,
                                 r->nsend, RING_BYTES), RING_BYTES);
    deso_err m2 = map_rings(r, s);
    if (mapped == DESO_OK) mapped = m2;
    if (deso__agree(r->comm, "deso remap (shared memory)", mapped, NULL,
                    0) != DESO_OK) {
        deso__remap_shm_free(r);
        deso__remap_drop_plan(r);
        return DESO_OK;                  /* the plan stays on MPI         */
    }
    /* MPI's whole-step buffers are not needed any more: kept for the
     * next remap on the communicator that goes over MPI.                 */
    deso__remap_keep_buffers(r, s->cache);
    return DESO_OK;
}

/* The messages' channels on the pairs' rings: mine to each receiver, each
 * sender's to me.                                                        */
static void pair_channels(deso__remap *r, struct deso__shm *s,
                          const deso__pair_rings *pr)
{
    for (int i = 0; i < r->nsend; i++) {
        char *ring = deso__pair_ring(pr, r->me, r->send[i].peer);
        s->send[i].ctl = (ring_ctl *)(void *)ring;
        s->send[i].slots = (double *)(void *)(ring + sizeof(ring_ctl));
    }
    for (int j = 0; j < r->nrecv; j++) {
        char *ring = deso__pair_ring(pr, r->recv[j].peer, r->me);
        s->recv[j].ctl = (ring_ctl *)(void *)ring;
        s->recv[j].slots = (double *)(void *)(ring + sizeof(ring_ctl));
    }
}

deso_err deso__remap_shm_attach(deso__remap *r, const deso__pair_rings *pr)
{
    if (pr == NULL || !r->active || r->shm != NULL) return DESO_OK;
    struct deso__shm *s = deso__calloc(1, sizeof *s);
    if (s == NULL || !prepare(r, s)) {
        bool memory = s == NULL || !s->send || !s->recv || !s->rings ||
                      !s->xout || !s->xin;
        if (s != NULL) shm_free_local(r, s);
        free(s);
        return memory
            ? deso__fail(DESO_ENOMEM, "matrix remap (shared memory): out "
                         "of memory")
            : deso__fail(DESO_EINTERNAL, "matrix remap (shared memory): "
                         "rank %d has two messages with one peer", r->me);
    }
    pair_channels(r, s, pr);
    r->shm = s;
    drop_mpi_buffers(r);
    return DESO_OK;
}

/* ---- execution ------------------------------------------------------------ */

/* One chunk of send c, if its slot is free.                              */
static bool produce(chan *c, const double *src, int64_t rows, int64_t lld)
{
    long long n = c->base + c->next;
    if (n - atomic_load_explicit(&c->ctl->tail, memory_order_acquire) >=
        SHM_SLOTS)
        return false;
    double *slot = c->slots + (n % SHM_SLOTS) * SHM_CHUNK;
    deso__cp_run_window(c->prog, &c->at, SHM_CHUNK, src, rows, lld,
                        deso__cp_packed_base(slot, c->next * SHM_CHUNK),
                        INT64_MAX, INT64_MAX, false);
    atomic_store_explicit(&c->ctl->head, n + 1, memory_order_release);
    c->next++;
    return true;
}

/* One chunk of receive c, if it has arrived.                             */
static bool consume(chan *c, double *dst, int64_t rows, int64_t lld,
                    bool stream)
{
    long long n = c->base + c->next;
    if (atomic_load_explicit(&c->ctl->head, memory_order_acquire) <= n)
        return false;
    double *slot = c->slots + (n % SHM_SLOTS) * SHM_CHUNK;
    deso__cp_run_window(c->prog, &c->at, SHM_CHUNK,
                        deso__cp_packed_base(slot, c->next * SHM_CHUNK),
                        INT64_MAX, INT64_MAX, dst, rows, lld, stream);
    atomic_store_explicit(&c->ctl->tail, n + 1, memory_order_release);
    c->next++;
    return true;
}

/* The elements a source of leading dimension slld spans.               */
static int64_t src_extent(const deso__remap *r, int64_t slld)
{
    if (r->src_elems == 0) return 0;
    if (r->src_cols <= 1) slld = r->src_rows;   /* as deso__remap_exec   */
    return (r->src_cols - 1) * slld + r->src_rows;
}

/* Single copy, sender side: tells receiver c (world rank w) whether it
 * reads this execution's source in place, and where it is.              */
static void describe(chan *c, const deso__remap *r, int w, const double *src,
                     int64_t slld, long long e)
{
    int64_t extent = src_extent(r, slld);
    c->pull = r->shm->pull_on && deso__pick_allows(&r->shm->pick, e) &&
              src != NULL && extent > 0 &&
              deso__shared_readable(src, extent, w);
    /* One description at a time: the receiver may not have read the last
     * one yet (a ring message of few chunks lets the sender run ahead).  */
    int idle = 0;
    while (atomic_load_explicit(&c->ctl->seen, memory_order_acquire) < e - 1)
        if (++idle > SHM_SPINS) sched_yield();
    c->ctl->src = (uint64_t)(uintptr_t)src;
    c->ctl->lld = slld;
    c->ctl->extent = extent;
    c->ctl->pull = c->pull;
    atomic_store_explicit(&c->ctl->desc, e, memory_order_release);
}

/* Receiver side: waits for the sender's description of execution e and
 * maps its source; false when a source to read in place is not mapped
 * here (the registries of the two ranks disagree).                      */
static bool described(chan *c, int w, long long e)
{
    int idle = 0;
    while (atomic_load_explicit(&c->ctl->desc, memory_order_acquire) < e)
        if (++idle > SHM_SPINS) sched_yield();
    c->pull = c->ctl->pull != 0;
    c->peer_src = NULL;
    c->peer_lld = c->ctl->lld;
    uint64_t at = c->ctl->src;
    int64_t extent = c->ctl->extent;
    atomic_store_explicit(&c->ctl->seen, e, memory_order_release);
    if (!c->pull) return true;
    c->peer_src = deso__shared_map(w, at, extent);
    return c->peer_src != NULL;
}

/* The assembly resolved for the arrays in s->bases (own source, then the
 * senders' in receive order); false when they are not 8-byte apart.     */
static bool resolve(deso__remap *r, struct deso__shm *s, const double **ref)
{
    int nb = r->nrecv + 1;
    const double *base = NULL;              /* the lowest: offsets >= 0 */
    for (int w = 0; w < nb; w++)
        if (s->bases[w] != NULL &&
            (base == NULL || (uintptr_t)s->bases[w] < (uintptr_t)base))
            base = s->bases[w];
    *ref = base;
    if (base == NULL) return true;           /* nothing to copy          */
    for (int w = 0; w < nb; w++) {
        intptr_t d = s->bases[w] == NULL
            ? 0 : (intptr_t)s->bases[w] - (intptr_t)base;
        if (d % (intptr_t)sizeof(double) != 0) return false;
        s->delta[w] = d / (intptr_t)sizeof(double);
    }
    deso__cp_resolve(&s->pull.assembly, s->delta, &s->pull.resolved);
    return true;
}

/* Every receive read in place and every source flat: the whole target in
 * one ordered pass (re-resolved only when the arrays moved).  False when
 * the assembly does not apply.                                           */
static bool assemble(deso__remap *r, struct deso__shm *s, const double *src,
                     int64_t slld, double *dst, int64_t dlld, bool stream)
{
    if (!s->pull.has_assembly ||
        (r->src_elems > 0 && slld != r->src_rows))
        return false;
    bool same = s->resolved && s->bases[0] == src;
    for (int j = 0; j < r->nrecv; j++) {
        const chan *c = &s->recv[j];
        if (!c->pull || c->peer_lld != s->pull.peer_rows[j]) return false;
        same = same && s->bases[1 + j] == c->peer_src;
    }
    if (!same) {
        s->bases[0] = src;
        for (int j = 0; j < r->nrecv; j++)
            s->bases[1 + j] = s->recv[j].peer_src;
        s->resolved = resolve(r, s, &s->ref);
        if (!s->resolved) return false;
    }
    const double *ref = s->ref;
    if (ref == NULL) return true;
    /* A packed-like side: offsets are absolute from ref (rows = lld = max). */
    (stream ? deso__cp_run_stream : deso__cp_run)(&s->pull.resolved, ref,
                                                  INT64_MAX, INT64_MAX, dst,
                                                  r->dst_rows, dlld);
    return true;
}

/* The next piece of the self copy.                                      */
static void self_piece(deso__remap *r, struct deso__shm *s, const double *src,
                       int64_t slld, double *dst, int64_t dlld, bool stream)
{
    deso__cp_run_window(&r->self, &s->self_at, SHM_CHUNK, src, r->src_rows,
                        slld, dst, r->dst_rows, dlld, stream);
}

/* Rewinds every channel for a new execution; returns the ring chunks to
 * move (those not read in place).                                       */
static int64_t ring_start(deso__remap *r, struct deso__shm *s)
{
    int64_t total = 0;
    for (int i = 0; i < r->nsend; i++) {
        chan *c = &s->send[i];
        c->next = c->pull ? c->nchunks : 0;
        c->at = DESO__CP_START;
        c->base = atomic_load_explicit(&c->ctl->head, memory_order_relaxed);
        total += c->nchunks - c->next;
    }
    for (int j = 0; j < r->nrecv; j++) {
        chan *c = &s->recv[j];
        c->next = c->pull ? c->nchunks : 0;
        c->at = DESO__CP_START;
        c->base = atomic_load_explicit(&c->ctl->tail, memory_order_relaxed);
        total += c->nchunks - c->next;
    }
    s->self_at = DESO__CP_START;
    return total;
}

/* One pass over step st's channels: each produces or consumes a chunk if
 * it can.  *done counts the chunks moved, *left whether any remain;
 * returns whether any moved.                                            */
static bool ring_pass(const deso__remap_step *st, struct deso__shm *s,
                      const deso__remap *r, const double *src, int64_t slld,
                      double *dst, int64_t dlld, bool stream, int64_t *done,
                      bool *left)
{
    bool busy = false;
    *left = false;
    for (int i = st->send0; i < st->send0 + st->nsend; i++) {
        chan *c = &s->send[i];
        if (c->next == c->nchunks) continue;
        if (produce(c, src, r->src_rows, slld)) {
            busy = true;
            ++*done;
        }
        *left |= c->next < c->nchunks;
    }
    for (int j = st->recv0; j < st->recv0 + st->nrecv; j++) {
        chan *c = &s->recv[j];
        if (c->next == c->nchunks) continue;
        if (consume(c, dst, r->dst_rows, dlld, stream)) {
            busy = true;
            ++*done;
        }
        *left |= c->next < c->nchunks;
    }
    return busy;
}

/* The messages through the rings (those not read in place), the self
 * copy keeping pace with them unless `self_done`.                       */
static void ring_loop(deso__remap *r, struct deso__shm *s, const double *src,
                      int64_t slld, double *dst, int64_t dlld, bool stream,
                      bool self_done)
{
    int64_t done = 0, selfk = self_done ? s->nself : 0;
    int64_t total = ring_start(r, s);
    for (int k = 0; k < r->nsteps; k++) {
        int idle = 0;
        for (;;) {
            bool left;
            bool busy = ring_pass(&r->steps[k], s, r, src, slld, dst, dlld,
                                  stream, &done, &left);
            /* The self copy keeps pace with the messages (its pieces then
             * read the source near where the packing does), and fills
             * the time spent waiting.                                     */
            while (selfk < s->nself &&
                   (!busy || selfk * total < done * s->nself)) {
                self_piece(r, s, src, slld, dst, dlld, stream);
                selfk++;
                busy = true;
                if (!left) break;
            }
            if (!left) break;
            if (busy) {
                idle = 0;
            } else if (++idle > SHM_SPINS) {
                sched_yield();
            }
        }
    }
    for (; selfk < s->nself; selfk++)
        self_piece(r, s, src, slld, dst, dlld, stream);
}

bool deso__remap_shm_pull_pending(const deso__remap *r)
{
    return r->shm != NULL && !r->shm->pull_on;
}

bool deso__remap_shm_pull_wanted(const deso__remap *r, const double *src,
                                 int64_t slld)
{
    struct deso__shm *s = r->shm;
    int64_t extent = src_extent(r, slld);
    if (s == NULL || s->pull_on || src == NULL || extent == 0) return false;
    for (int i = 0; i < r->nsend; i++)
        if (deso__shared_readable(src, extent, s->world[r->send[i].peer]))
            return true;
    return false;
}

deso_err deso__remap_shm_pull_build(deso__remap *r)
{
    struct deso__shm *s = r->shm;
    if (s == NULL || s->pull_built) return DESO_OK;
    DESO_TRY(deso__pull_build(r, &s->pull));
    s->pull_built = true;
    deso__remap_drop_plan(r);
    return DESO_OK;
}

void deso__remap_shm_pull_on(deso__remap *r, int mode)
{
    struct deso__shm *s = r->shm;
    if (s == NULL || !s->pull_built) return;
    s->pull_on = true;
    deso__pick_start(&s->pick, mode, s->execs);
}

bool deso__remap_shm_pick_due(const deso__remap *r, int64_t times[2])
{
    const struct deso__shm *s = r->shm;
    if (s == NULL || !s->pull_on || !deso__pick_due(&s->pick, s->execs))
        return false;
    deso__pick_times(&s->pick, times);
    return true;
}

void deso__remap_shm_pick_decide(deso__remap *r, const int64_t agreed[2])
{
    if (r->shm != NULL) deso__pick_decide(&r->shm->pick, agreed);
}

bool deso__remap_shm_single_copy(const deso__remap *r)
{
    return r->shm != NULL && r->shm->pull_on &&
           r->shm->pick.mode == DESO__PICK_SINGLE;
}

deso_err deso__remap_shm_describe(deso__remap *r, const double *src,
                                  int64_t slld, bool valid)
{
    struct deso__shm *s = r->shm;
    if (s == NULL) return DESO_OK;
    long long e = ++s->execs;
    /* Every send described before any wait: receivers wait for nothing
     * else, so no rank can block another here.                          */
    for (int i = 0; i < r->nsend; i++)
        describe(&s->send[i], r, s->world[r->send[i].peer],
                 valid ? src : NULL, slld, e);
    deso_err err = DESO_OK;
    for (int j = 0; j < r->nrecv; j++)
        if (!described(&s->recv[j], s->world[r->recv[j].peer], e) &&
            err == DESO_OK)
            err = deso__fail(DESO_EINTERNAL, "deso remap (shared memory): "
                             "rank %d cannot map the shared source that "
                             "rank %d lets it read in place (their shared "
                             "arrays differ)", r->me, r->recv[j].peer);
    return err;
}

deso_err deso__remap_shm_exec(deso__remap *r, const double *src,
                              int64_t slld, double *dst, int64_t dlld)
{
    struct deso__shm *s = r->shm;
    long long e = s->execs;
    double t0 = deso__now();
    for (int i = 0; i < r->nsend; i++)
        deso__stats_shm(r->send[i].count * (int64_t)sizeof(double));
    bool all_pull = true;
    for (int j = 0; j < r->nrecv; j++) all_pull &= s->recv[j].pull;
    /* A target larger than the caches is written around them.           */
    bool stream = r->dst_elems >= SHM_STREAM_ELEMS;
    bool self_done = false;
    if (r->nrecv > 0 && all_pull)
        self_done = assemble(r, s, src, slld, dst, dlld, stream);
    if (!self_done)
        for (int j = 0; j < r->nrecv; j++) {
            chan *c = &s->recv[j];
            if (c->pull && c->peer_src != NULL)
                deso__cp_run(&s->pull.direct[j], c->peer_src,
                             s->pull.peer_rows[j], c->peer_lld, dst,
                             r->dst_rows, dlld);
        }
    for (int j = 0; j < r->nrecv; j++)
        if (s->recv[j].pull)
            atomic_store_explicit(&s->recv[j].ctl->done, e,
                                  memory_order_release);
    ring_loop(r, s, src, slld, dst, dlld, stream, self_done);
    if (stream) deso__cp_fence();
    /* The source may be reused once every receiver reading it is done.  */
    for (int i = 0; i < r->nsend; i++) {
        chan *c = &s->send[i];
        int idle = 0;
        while (c->pull &&
               atomic_load_explicit(&c->ctl->done, memory_order_acquire) < e)
            if (++idle > SHM_SPINS) sched_yield();
    }
    double t = deso__now() - t0;
    if (r->nsteps > 0) deso__stats_time(DESO_T_P2P, t);
    deso__pick_timed(&s->pick, e, t);
    return DESO_OK;
}
