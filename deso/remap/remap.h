/* Internal: executing a block-cyclic remap planned by placement/remap.h over
 * MPI.  Used by the public deso_redist_* functions (remap_api.c) and by the
 * runtime's executor for the remaps of a plan.
 *
 * A deso__remap is made once (local planning, no communication) and
 * executed many times; execution only packs, communicates and unpacks, and
 * allocates nothing (FFTW's transpose-alltoall, PETSc's PetscSF).
 *
 * Local arrays are column-major with a caller-chosen leading dimension.  The
 * planner's runs use ld = local rows; when a caller's ld differs, runs are
 * split at column boundaries (slower but exact).                           */
#ifndef DESO_REMAP_REMAP_H
#define DESO_REMAP_REMAP_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "deso/remap/copyprog.h"
#include "placement/remap.h"

/* The one tag of remap messages.  The communicator is the library's own
 * (a duplicate), so the tag only separates remaps from other deso traffic
 * on that communicator.                                                    */
#define DESO__TAG_REMAP 0x5244

#define DESO__FUSE_PACK 1
#define DESO__FUSE_UNPACK 2

/* One message of this rank.                                               */
typedef struct deso__msg {
    int peer, step;
    int64_t count;
    int64_t run_off, run_len;   /* its only run, or run_len = -1           */
    deso__copy prog;            /* array <-> packed buffer                 */
    int64_t buf_off;            /* offset in sendbuf / recvbuf             */
} deso__msg;

/* Where a fused pass is in one of its programs: unit u of group g.     */
typedef struct deso__fcur {
    int64_t g, u;
} deso__fcur;

typedef struct deso__remap_step {
    int send0, nsend;      /* this step's sends: send[send0 ..]            */
    int recv0, nrecv;      /* this step's receives: recv[recv0 ..]         */
} deso__remap_step;

typedef struct deso__remap {
    MPI_Comm comm;         /* borrowed, or owned when owns_comm             */
    bool owns_comm;        /* set by the owner to have it freed             */
    int me, size;
    bool identical;        /* src and dst layouts equal: self copy only     */
    bool active;           /* this rank has anything to do                  */
    int64_t src_rows, src_cols, dst_rows, dst_cols;  /* local shapes      */
    int64_t src_elems, dst_elems;
    int nsend, nrecv;
    deso__msg *send, *recv;     /* sorted by step                          */
    deso__copy self;            /* src array -> dst array                  */
    int nsteps;            /* steps in which this rank takes part           */
    deso__remap_step *steps;
    double *sendbuf, *recvbuf;  /* hold the largest step's messages        */
    int64_t sendbuf_len, recvbuf_len;   /* their lengths (maybe more)      */
    unsigned char cold;    /* untouched new buffers: bit 0 send, 1 receive  */
    int max_reqs;          /* largest nsend + nrecv of one step            */
    /* Fusion (flat arrays only): the self copy interleaved, in chunks of
     * 4096 elements of the array it shares, with the packs of the first
     * step's sends (DESO__FUSE_PACK: src read once; chosen when there are
     * packed sends) or else with the unpack of its one packed receive
     * (DESO__FUSE_UNPACK: dst written once), so that the shared array's
     * cache lines are touched once while cached.  Long items of the
     * programs involved are cut into chunk-sized pieces for this.        */
    int fuse;              /* 0, DESO__FUSE_PACK or DESO__FUSE_UNPACK       */
    int nfuse;             /* messages fused with the self copy             */
    int *fuse_msg;         /* their indices (send or recv); in fuse_cur's   */
                           /* block                                         */
    deso__fcur *fuse_cur;  /* per program (0: the self copy), for the pass  */
    MPI_Request *reqs;     /* max_reqs                                      */
    int *req_msg;          /* per request: receive index, or -1 - send; in  */
                           /* reqs's block                                  */
    struct deso__shm *shm; /* the shared-memory transport, or NULL         */
    pl_remap_rank *plan;   /* this rank's plan, kept by _init_keep          */
    double t_plan;         /* seconds spent planning and compiling, here   */
                           /* and in deso__remap_shm_prepare               */
} deso__remap;

/* Plans this rank's part of the remap src -> dst on `comm` (borrowed: the
 * caller keeps it alive until deso__remap_free, and sets owns_comm if the
 * remap is to free it).  Local: no communication, but every rank of comm
 * must call it with identical arguments to get a consistent plan.  Buffers
 * and request arrays are allocated here.  Errors: DESO_ENULL, DESO_EINVAL,
 * DESO_ESIZE (from the planner), DESO_ENOMEM, DESO_EMPI, DESO_EOVERFLOW
 * (a message longer than INT_MAX elements).  On error *out is left empty
 * (deso__remap_free on it is safe).                                        */
deso_err deso__remap_init(MPI_Comm comm, const pl_bc_layout *src,
                          const pl_bc_layout *dst, pl_sched_kind kind,
                          deso__remap *out);

/* As deso__remap_init, but this rank's planned runs stay in r->plan for
 * deso__remap_shm_prepare (which frees them, as deso__remap_drop_plan
 * does; deso__remap_free too), and the buffers are the ones `cache` keeps
 * (comm_cache.h, deso__buf_take) when those are large enough (cache NULL:
 * new ones).                                                             */
struct deso__comm_cache;
deso_err deso__remap_init_keep(MPI_Comm comm, struct deso__comm_cache *cache,
                               const pl_bc_layout *src,
                               const pl_bc_layout *dst, pl_sched_kind kind,
                               deso__remap *out);
void deso__remap_drop_plan(deso__remap *r);

/* As deso__remap_init_keep for d-dimensional layouts (placement/remap.h,
 * pl_nd_layout): local arrays are local extent 0 x (the product of the
 * others) matrices.                                                      */
deso_err deso__remap_init_nd_keep(MPI_Comm comm,
                                  struct deso__comm_cache *cache,
                                  const pl_nd_layout *src,
                                  const pl_nd_layout *dst,
                                  pl_sched_kind kind, deso__remap *out);

/* Hands r's send and receive buffers to `cache` for the next remap on its
 * communicator (deso__buf_keep: cache NULL frees them), those whose pages
 * were never touched excepted (freed: untouched, they cost nothing to
 * make again); r has none after.  Local.  For a remap about to be freed,
 * or one that no longer needs them (the shared-memory transport).       */
void deso__remap_keep_buffers(deso__remap *r, struct deso__comm_cache *cache);

/* Maps the pages of r's new buffers (one write a page; local), so that
 * the remap's first execution costs what a replay does and the buffers
 * it leaves to its communicator's next remap are mapped too.  For a
 * remap that stays on MPI, once its creation is agreed.                  */
void deso__remap_warm_buffers(deso__remap *r);

/* Plans rank me's part of the remap src -> dst as deso__remap_init does
 * on a communicator of `size` ranks, without one (and times it, t_plan):
 * for counting the planning of many ranks in one process.  The result
 * has no communicator: deso__remap_free it, never execute it.  Errors as
 * deso__remap_init's, DESO_EINVAL for me outside [0, size).             */
deso_err deso__remap_plan_as(int me, int size, const pl_bc_layout *src,
                             const pl_bc_layout *dst, pl_sched_kind kind,
                             deso__remap *out);

/* As deso__remap_plan_as for d-dimensional layouts (pl_nd_layout).     */
deso_err deso__remap_plan_as_nd(int me, int size, const pl_nd_layout *src,
                                const pl_nd_layout *dst, pl_sched_kind kind,
                                deso__remap *out);

/* Moves src_local (this rank's part of the source layout, leading
 * dimension src_lld) into dst_local (its part of the target, dst_lld).
 * Collective over comm; ranks in neither set return at once.  src_local may
 * be NULL when this rank holds no source data, dst_local likewise.  When
 * the layouts are identical and src_local == dst_local with equal leading
 * dimensions nothing moves.  Allocates nothing.  The caller guarantees
 * lld >= max(1, local rows) (checked: DESO_EINVAL, but a local error here
 * would leave partners waiting, so callers validate collectively first).
 * Errors: DESO_EINVAL, DESO_EMPI.                                          */
deso_err deso__remap_exec(deso__remap *r, const double *src_local,
                          int64_t src_lld, double *dst_local,
                          int64_t dst_lld);

/* Frees the plan, buffers, rings (back to their pool) and (when owned)
 * the communicator.  NULL-safe; leaves *r empty.  Local.                  */
void deso__remap_free(deso__remap *r);

/* The shared-memory transport (remap_shm.c), set up in two collective
 * steps around the caller's own agreement.  prepare (collective over comm,
 * the user's communicator: the first time on a communicator it splits it
 * by node and caches the answer on it; then one all-reduce agrees on rank
 * 0's DESO_REMAP_SHM, deso/core/node.h) sets *ok when every rank is on one
 * node, that value is not "0" and r (planned on the duplicate of comm
 * that `cache` holds by deso__remap_init_keep or _init_nd_keep, or NULL
 * when planning failed) got its ring channels, and *grow when cache's
 * pool has too few free rings for r's sends.  r's kept plan stays while
 * the transport may be used: deso__remap_shm_pull_build compiles the
 * single-copy programs from it (once) and frees it.  Once all ranks know
 * whether every rank is ok, whether some rank sends and whether some rank
 * must grow the pool,
 * finish(r, use, grow) takes the rings from the pool (collective when
 * use: a new window when grow, an all-to-all and an agreement) or drops
 * what prepare made (local).  If that fails on any rank (the plans of two
 * ranks disagree, MPI fails), every rank gives its rings back and the
 * plan stays on MPI; deso_last_error says why.  Both return DESO_OK.  The
 * transport is freed by deso__remap_free (local: the rings go back to the
 * pool, which lives as long as the cache).                              */
deso_err deso__remap_shm_prepare(MPI_Comm comm, struct deso__comm_cache *cache,
                                 deso__remap *r, int *ok, int *grow);
deso_err deso__remap_shm_finish(deso__remap *r, bool use, bool grow);

/* Single copy, agreed before any data moves (deso_redist_execute): while
 * pending (r is on the shared-memory transport and its single-copy
 * programs are not yet on, the same answer on every rank), an execution's
 * agreement carries wanted (some send of this rank could be read in place
 * from src: a deso_redist_array_alloc array its receiver has mapped);
 * when that is true on some rank, every rank builds (local; DESO_ENOMEM,
 * DESO_EINTERNAL; nothing when built already) and agrees on the outcome,
 * and on success turns them on (local), after which senders let their
 * receivers read in place.  Until then every message goes through the
 * rings.                                                                */
bool deso__remap_shm_pull_pending(const deso__remap *r);
bool deso__remap_shm_pull_wanted(const deso__remap *r, const double *src,
                                 int64_t slld);
deso_err deso__remap_shm_pull_build(deso__remap *r);
void deso__remap_shm_pull_on(deso__remap *r, int mode);

/* Once the single-copy programs are on, whether receivers read in place
 * is chosen per remap (remap_pick.c): `mode` (agreed when they were
 * turned on) fixes it, or both ways are timed once and the faster kept.
 * pick_due says whether this execution's agreement (after its
 * description) is to carry the two times (filled in, this rank's);
 * pick_decide, given their maximum over the ranks, settles it alike on
 * every rank for the executions that follow.  single_copy: settled on
 * reading in place.  All local.                                          */
bool deso__remap_shm_pick_due(const deso__remap *r, int64_t times[2]);
void deso__remap_shm_pick_decide(deso__remap *r, const int64_t agreed[2]);
bool deso__remap_shm_single_copy(const deso__remap *r);

/* Before an execution's agreement (deso_redist_execute), on every rank
 * of a remap on the shared-memory transport: each sender describes its
 * source to its receivers (whether they read it in place, once the
 * single-copy programs are on, and where it is; `valid`: the execution's
 * arguments passed this rank's checks, else nothing is read in place),
 * each receiver maps the sources it is to read.  Waits only for the
 * senders' descriptions, which every rank posts before waiting.
 * Errors (local, for the agreement that follows, so that no data moves
 * on any rank): DESO_EINTERNAL (a sender's source is not mapped here:
 * the shared arrays of the two ranks disagree).                        */
deso_err deso__remap_shm_describe(deso__remap *r, const double *src,
                                  int64_t slld, bool valid);

/* Executes a remap on its shared-memory transport (r->shm != NULL) once
 * deso__remap_exec has checked the arguments, after
 * deso__remap_shm_describe and an agreement that it succeeded
 * everywhere.  A sender whose source lies in a shared array its receiver
 * has mapped (deso_redist_array_alloc) lets the receiver read it in place
 * once the single-copy programs are on (deso__remap_shm_pull_on); a
 * receiver all of whose senders do writes its target in one ordered
 * pass.  Allocates nothing, returns DESO_OK.                            */
deso_err deso__remap_shm_exec(deso__remap *r, const double *src,
                              int64_t slld, double *dst, int64_t dlld);

/* Frees the transport, its rings back to their pool (local); NULL-safe. */
void deso__remap_shm_free(deso__remap *r);

#endif
