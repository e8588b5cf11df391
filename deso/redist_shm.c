/* deso/redist_shm.c: the remap's shared-memory transport.
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
 * ring ~1.5x).  Chunk k of a message is piece k of its copy program
 * (copyprog.h), cut at the same packed offsets on both sides.
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
 * tests run more ranks than cores.                                       */
#include "redist_impl.h"

#include <sched.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "stats_impl.h"

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
} ring_ctl;

#define RING_BYTES \
    ((MPI_Aint)sizeof(ring_ctl) + (MPI_Aint)SHM_SLOTS * SHM_CHUNK * 8)

typedef struct chan {
    ring_ctl *ctl;
    double *slots;
    int64_t nchunks;
    deso__copy *chunk;                 /* piece k: chunk k of the message */
    int64_t next;                      /* chunks done in this execution   */
    long long base;                    /* counter value at its start      */
} chan;

struct deso__shm {
    MPI_Win win;                       /* on the plan's communicator      */
    chan *send, *recv;                 /* as r->send, r->recv             */
    deso__copy *self;                  /* the self copy in pieces         */
    int64_t nself;
    long long *xout, *xin;             /* 2 P each: the ring exchange     */
};

static void chan_free(chan *c)
{
    for (int64_t k = 0; k < c->nchunks; k++) deso__cp_free(&c->chunk[k]);
    free(c->chunk);
}

static void shm_free_local(deso__remap *r, struct deso__shm *s)
{
    if (s->send)
        for (int i = 0; i < r->nsend; i++) chan_free(&s->send[i]);
    if (s->recv)
        for (int j = 0; j < r->nrecv; j++) chan_free(&s->recv[j]);
    for (int64_t k = 0; k < s->nself; k++) deso__cp_free(&s->self[k]);
    free(s->self);
    free(s->xout);
    free(s->xin);
    s->xout = s->xin = NULL;
    free(s->send);
    free(s->recv);
}

void deso__remap_shm_free(deso__remap *r)
{
    struct deso__shm *s = r->shm;
    if (s == NULL) return;
    shm_free_local(r, s);
    if (s->win != MPI_WIN_NULL) MPI_Win_free(&s->win);
    free(s);
    r->shm = NULL;
}

/* Cuts every message into chunk programs and the self copy into pieces;
 * false when a peer has two messages (one ring per pair) or memory ran
 * out.                                                                     */
static bool prepare(deso__remap *r, struct deso__shm *s)
{
    s->send = calloc((size_t)(r->nsend ? r->nsend : 1), sizeof *s->send);
    s->recv = calloc((size_t)(r->nrecv ? r->nrecv : 1), sizeof *s->recv);
    s->xout = malloc((size_t)r->size * 2 * sizeof *s->xout);
    s->xin = malloc((size_t)r->size * 2 * sizeof *s->xin);
    if (!s->send || !s->recv || !s->xout || !s->xin) return false;
    for (int i = 0; i < r->nsend; i++)
        for (int i2 = 0; i2 < i; i2++)
            if (r->send[i2].peer == r->send[i].peer) return false;
    for (int j = 0; j < r->nrecv; j++)
        for (int j2 = 0; j2 < j; j2++)
            if (r->recv[j2].peer == r->recv[j].peer) return false;
    for (int i = 0; i < r->nsend; i++)
        if (deso__cp_pieces(&r->send[i].prog, 2, SHM_CHUNK,
                            &s->send[i].chunk, &s->send[i].nchunks))
            return false;
    for (int j = 0; j < r->nrecv; j++)
        if (deso__cp_pieces(&r->recv[j].prog, 1, SHM_CHUNK,
                            &s->recv[j].chunk, &s->recv[j].nchunks))
            return false;
    return deso__cp_pieces(&r->self, 0, SHM_CHUNK, &s->self,
                           &s->nself) == DESO_OK;
}

/* Whether the environment allows the transport: DESO_REMAP_SHM=0 keeps
 * remaps on MPI (to compare the two, or to rule this one out).            */
static bool env_allows(void)
{
    const char *v = getenv("DESO_REMAP_SHM");
    return v == NULL || strcmp(v, "0") != 0;
}

static deso_err mpi_err(int rc, const char *what)
{
    return deso__fail(DESO_EMPI, "deso remap (shared memory): %s failed "
                      "(MPI error %d)", what, rc);
}

/* Allocates the rings and finds the peers' ones (collective).            */
static deso_err map_rings(deso__remap *r, struct deso__shm *s)
{
    MPI_Aint bytes = (MPI_Aint)r->nsend * RING_BYTES;
    MPI_Info info;
    int rc = MPI_Info_create(&info);
    if (rc != MPI_SUCCESS) return mpi_err(rc, "MPI_Info_create");
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    char *base = NULL;
    rc = MPI_Win_allocate_shared(bytes, 1, info, r->comm, &base, &s->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        s->win = MPI_WIN_NULL;
        return mpi_err(rc, "MPI_Win_allocate_shared");
    }
    /* Per peer: where my ring for it starts and how long the message is;
     * the all-to-all gives each rank its senders' rings and a check.     */
    int P = r->size;
    long long *out = s->xout, *in = s->xin;
    for (int q = 0; q < P; q++) {
        out[2 * q] = -1;
        out[2 * q + 1] = 0;
    }
    for (int i = 0; i < r->nsend; i++) {
        chan *c = &s->send[i];
        char *ring = base + (MPI_Aint)i * RING_BYTES;
        c->ctl = (ring_ctl *)(void *)ring;
        c->slots = (double *)(void *)(ring + sizeof(ring_ctl));
        atomic_init(&c->ctl->head, 0);
        atomic_init(&c->ctl->tail, 0);
        out[2 * r->send[i].peer] = (long long)i * RING_BYTES;
        out[2 * r->send[i].peer + 1] = r->send[i].count;
    }
    atomic_thread_fence(memory_order_seq_cst);
    deso_err e = DESO_OK;
    rc = MPI_Alltoall(out, 2, MPI_LONG_LONG, in, 2, MPI_LONG_LONG, r->comm);
    if (rc != MPI_SUCCESS) e = mpi_err(rc, "MPI_Alltoall");
    for (int j = 0; j < r->nrecv && e == DESO_OK; j++) {
        int q = r->recv[j].peer;
        if (in[2 * q] < 0 || in[2 * q + 1] != r->recv[j].count) {
            e = deso__fail(DESO_EINTERNAL, "deso remap (shared memory): "
                           "rank %d expects %lld elements from rank %d, "
                           "which plans %lld", r->me,
                           (long long)r->recv[j].count, q, in[2 * q + 1]);
            break;
        }
        MPI_Aint sz;
        int du;
        char *qb = NULL;
        rc = MPI_Win_shared_query(s->win, q, &sz, &du, &qb);
        if (rc != MPI_SUCCESS) {
            e = mpi_err(rc, "MPI_Win_shared_query");
            break;
        }
        char *ring = qb + in[2 * q];
        s->recv[j].ctl = (ring_ctl *)(void *)ring;
        s->recv[j].slots = (double *)(void *)(ring + sizeof(ring_ctl));
    }
    /* No barrier: a rank's counters were initialised before it entered
     * the all-to-all, which its receivers have completed.                */
    return e;
}

/* Whether every rank of comm is on one node.  Collective the first time
 * for a communicator (an MPI_Comm_split_type, slow when ranks outnumber
 * cores), then read from an attribute cached on comm: every rank asks in
 * the same order, so every rank hits or misses together.                */
static int one_node(MPI_Comm comm)
{
    static int key = MPI_KEYVAL_INVALID;
    if (key == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
                               MPI_COMM_NULL_DELETE_FN, &key,
                               NULL) != MPI_SUCCESS)
        key = MPI_KEYVAL_INVALID;
    void *val = NULL;
    int found = 0;
    if (key != MPI_KEYVAL_INVALID &&
        MPI_Comm_get_attr(comm, key, &val, &found) == MPI_SUCCESS && found)
        return (int)((intptr_t)val - 1);
    MPI_Comm node = MPI_COMM_NULL;
    int size = 0, nsize = -1;
    MPI_Comm_size(comm, &size);
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                            &node) != MPI_SUCCESS)
        return 0;                               /* MPI's path, then       */
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    int one = nsize == size;
    if (key != MPI_KEYVAL_INVALID)
        MPI_Comm_set_attr(comm, key, (void *)(intptr_t)(one + 1));
    return one;
}

deso_err deso__remap_shm_prepare(MPI_Comm comm, deso__remap *r, int *ok)
{
    *ok = 0;
    if (!one_node(comm) || !env_allows() || r == NULL ||
        r->comm == MPI_COMM_NULL)
        return DESO_OK;
    struct deso__shm *s = calloc(1, sizeof *s);
    if (s == NULL) return DESO_OK;
    s->win = MPI_WIN_NULL;
    if (!prepare(r, s)) {
        shm_free_local(r, s);
        free(s);
        return DESO_OK;
    }
    r->shm = s;
    *ok = 1;
    return DESO_OK;
}

deso_err deso__remap_shm_finish(deso__remap *r, bool use)
{
    if (r == NULL || r->shm == NULL) return DESO_OK;
    if (!use) {
        shm_free_local(r, r->shm);
        free(r->shm);
        r->shm = NULL;
        return DESO_OK;
    }
    /* Every rank must agree that its rings are mapped, or none uses them
     * (the window is then freed everywhere: MPI_Win_free is collective). */
    int ok = map_rings(r, r->shm) == DESO_OK, all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, r->comm) != MPI_SUCCESS)
        all = 0;
    if (!all) {
        deso__remap_shm_free(r);
        return DESO_OK;                  /* the plan stays on MPI         */
    }
    /* MPI's whole-step buffers are not needed any more.                  */
    free(r->sendbuf);
    free(r->recvbuf);
    r->sendbuf = r->recvbuf = NULL;
    r->sendbuf_len = r->recvbuf_len = 0;
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
    deso__cp_run(&c->chunk[c->next], src, rows, lld, slot, INT64_MAX,
                 INT64_MAX);
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
    const double *slot = c->slots + (n % SHM_SLOTS) * SHM_CHUNK;
    (stream ? deso__cp_run_stream : deso__cp_run)(&c->chunk[c->next], slot,
                                                  INT64_MAX, INT64_MAX, dst,
                                                  rows, lld);
    atomic_store_explicit(&c->ctl->tail, n + 1, memory_order_release);
    c->next++;
    return true;
}

void deso__remap_shm_exec(deso__remap *r, const double *src, int64_t slld,
                          double *dst, int64_t dlld)
{
    struct deso__shm *s = r->shm;
    int64_t srows = r->src_rows, drows = r->dst_rows;
    int64_t total = 0, done = 0, selfk = 0;
    for (int i = 0; i < r->nsend; i++) {
        chan *c = &s->send[i];
        c->next = 0;
        c->base = atomic_load_explicit(&c->ctl->head, memory_order_relaxed);
        total += c->nchunks;
        deso__stats_p2p(r->send[i].count * (int64_t)sizeof(double));
    }
    for (int j = 0; j < r->nrecv; j++) {
        chan *c = &s->recv[j];
        c->next = 0;
        c->base = atomic_load_explicit(&c->ctl->tail, memory_order_relaxed);
        total += c->nchunks;
    }
    /* A target larger than the caches is written around them.           */
    bool stream = r->dst_elems >= SHM_STREAM_ELEMS;
    void (*to_dst)(const deso__copy *, const double *, int64_t, int64_t,
                   double *, int64_t, int64_t) =
        stream ? deso__cp_run_stream : deso__cp_run;
    double t0 = deso__now();
    for (int k = 0; k < r->nsteps; k++) {
        const deso__remap_step *st = &r->steps[k];
        int idle = 0;
        for (;;) {
            bool busy = false, left = false;
            for (int i = st->send0; i < st->send0 + st->nsend; i++) {
                chan *c = &s->send[i];
                if (c->next == c->nchunks) continue;
                if (produce(c, src, srows, slld)) {
                    busy = true;
                    done++;
                }
                left |= c->next < c->nchunks;
            }
            for (int j = st->recv0; j < st->recv0 + st->nrecv; j++) {
                chan *c = &s->recv[j];
                if (c->next == c->nchunks) continue;
                if (consume(c, dst, drows, dlld, stream)) {
                    busy = true;
                    done++;
                }
                left |= c->next < c->nchunks;
            }
            /* The self copy keeps pace with the messages (its pieces then
             * read the source near where the packing does), and fills
             * the time spent waiting.                                     */
            while (selfk < s->nself &&
                   (!busy || selfk * total < done * s->nself)) {
                to_dst(&s->self[selfk++], src, srows, slld, dst, drows,
                       dlld);
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
    while (selfk < s->nself)
        to_dst(&s->self[selfk++], src, srows, slld, dst, drows, dlld);
    if (stream) deso__cp_fence();
    if (r->nsteps > 0) deso__stats_time(DESO_T_P2P, deso__now() - t0);
}
