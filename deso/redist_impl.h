/* Internal: executing a block-cyclic remap planned by placement/remap.h over
 * MPI.  Used by the public deso_redist_* functions (redist_api.c) and by the
 * runtime's executor for the remaps of a plan.
 *
 * A deso__remap is made once (local planning, no communication) and
 * executed many times; execution only packs, communicates and unpacks, and
 * allocates nothing (FFTW's transpose-alltoall, PETSc's PetscSF).
 *
 * Local arrays are column-major with a caller-chosen leading dimension.  The
 * planner's runs use ld = local rows; when a caller's ld differs, runs are
 * split at column boundaries (slower but exact).                           */
#ifndef DESO_REDIST_IMPL_H
#define DESO_REDIST_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "placement/remap.h"

/* The one tag of remap messages.  The communicator is the library's own
 * (a duplicate), so the tag only separates remaps from other deso traffic
 * on that communicator.                                                    */
#define DESO__TAG_REMAP 0x5244

#define DESO__FUSE_PACK 1
#define DESO__FUSE_UNPACK 2

/* A copy program: pairs of runs (side a -> side b), single elements at a
 * constant stride merged into strided items, compressed into periodic
 * groups.  Group g repeats its k items reps times, shifting the
 * offsets by (da, db) each time; block-cyclic run lists are periodic, so a
 * few groups replace millions of runs and execution reads almost no
 * metadata.  Offsets are in the planner's coordinates (ld = local rows);
 * a packed buffer is one side with unbounded rows.                        */
typedef struct deso__cp_item {
    int64_t a, b, len;     /* len elements: a + x sa -> b + x sb           */
    int64_t sa, sb;        /* 1, 1 for a contiguous run                    */
} deso__cp_item;

typedef struct deso__cp_group {
    int64_t first;         /* index of its first item                      */
    int64_t k, reps;       /* items per repetition, repetitions            */
    int64_t da, db;        /* offset shift per repetition                  */
    int64_t e0, ne;        /* ne > 0: the repetition's elements, one by    */
                           /* one, at ea[e0 ..], eb[e0 ..] (short runs)    */
} deso__cp_group;

typedef struct deso__copy {
    int64_t ngroups, nitems, elems;
    deso__cp_group *g;
    deso__cp_item *it;
    int64_t nelem;         /* length of ea and eb                          */
    int64_t *ea, *eb;      /* element offsets of expanded groups           */
} deso__copy;

/* One message of this rank.                                               */
typedef struct deso__msg {
    int peer, step;
    int64_t count;
    int64_t run_off, run_len;   /* its only run, or run_len = -1           */
    deso__copy prog;            /* array <-> packed buffer                 */
    int64_t buf_off;            /* offset in sendbuf / recvbuf             */
} deso__msg;

/* A piece of a fused pass: units [lo, hi) of group g of fused program
 * prog (0: the self copy; p > 0: message fuse_msg[p - 1]).               */
typedef struct deso__seg {
    int prog;
    int64_t g, lo, hi;
} deso__seg;

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
    int64_t sendbuf_len, recvbuf_len;
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
    int *fuse_msg;         /* their indices (send or recv)                  */
    int64_t nsegs;
    deso__seg *segs;       /* the fused pass, in order                      */
    MPI_Request *reqs;     /* max_reqs                                      */
    int *req_msg;          /* per request: receive index, or -1 - send     */
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

/* Frees the plan, buffers and (when owned) the communicator.  NULL-safe;
 * leaves *r empty.  Local (MPI_Comm_free is collective in name only for a
 * duplicate nobody else uses).                                             */
void deso__remap_free(deso__remap *r);

/* Checked int64 -> int conversion at the MPI boundary: DESO_EOVERFLOW
 * (with `what` in the message) when v does not fit.                        */
deso_err deso__to_int(int64_t v, const char *what, int *out);

#endif
