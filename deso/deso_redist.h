/* deso remaps: moving a dense array between two block-cyclic
 * layouts (ScaLAPACK's) over MPI, with a communication schedule planned
 * once and replayed (papers 001, 000, 002).  Part of the public API
 * (included by deso.h); usable on its own, without deso_init.
 *
 *   deso_layout src = { .m = n, .n = 1, .mb = 3, .nb = 1, .pr = 4, .pc = 1 };
 *   deso_layout dst = { .m = n, .n = 1, .mb = 5, .nb = 1, .pr = 2, .pc = 1 };
 *   deso_redist *r;
 *   deso_redist_create(MPI_COMM_WORLD, &src, &dst, DESO_SCHED_STEPWISE, &r);
 *   for (...) deso_redist_execute(r, a, lld_a, b, lld_b);
 *   deso_redist_destroy(&r);
 *
 * Local arrays are column-major (Fortran order), each with its own leading
 * dimension; a rank's local extents are ScaLAPACK's NUMROC of the layout.
 * Thread model: not thread-safe; MPI_THREAD_FUNNELED is enough.            */
#ifndef DESO_REDIST_H
#define DESO_REDIST_H

#include <stdint.h>

#include <mpi.h>

/* deso is built against MPICH, and its objects only link with MPICH.  Open
 * MPI's mpi.h compiles but fails at link time with undefined ompi_*
 * symbols, so stop here with the cause instead. */
#ifndef MPICH_VERSION
#error "deso needs MPICH's mpi.h: compile with mpicc.mpich, and take MPI flags from pkg-config's mpich (not mpi, which may name Open MPI)"
#endif

#include "deso_errors.h"

/* The library is built with hidden visibility: what is declared here is
 * its interface, and the only names it exports.                          */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A block-cyclic layout of an m x n column-major matrix (a vector is
 * n = 1) on a pr x pc process grid.  Global element (i, j) lives on grid
 * position ((i / mb) mod pr, (j / nb) mod pc); grid position (row, col) is
 * rank ranks[row * pc + col] of the communicator (row-major), or rank
 * row * pc + col when ranks is NULL.  With replicated != 0 every rank of
 * the set holds the whole matrix (local extents m x n) and mb, nb only
 * need to be >= 1.  ScaLAPACK's rsrc = csrc = 0 is implied.                */
typedef struct deso_layout {
    int64_t m, n;           /* global extents, >= 0                         */
    int64_t mb, nb;         /* block sizes, >= 1                            */
    int pr, pc;             /* grid shape, >= 1, pr * pc <= ranks of comm   */
    const int *ranks;       /* pr * pc distinct ranks, or NULL              */
    int replicated;         /* nonzero: every rank of the set has it all    */
} deso_layout;

/* A block-cyclic layout of a d-dimensional array, 1 <= d <= DESO_ND_MAX
 * (paper 000's setting).  Dimension k has extent n[k], blocks of b[k] and
 * p[k] grid positions: global index (i_0, .., i_{d-1}) lives on grid
 * position (c_k = (i_k / b[k]) mod p[k]), which is rank
 * ranks[(..(c_0 p[1] + c_1) p[2] ..) + c_{d-1}] of the communicator
 * (row-major, as MPI_Cart_create numbers a grid), or that index itself
 * when ranks is NULL.  A rank's local array stores the first index
 * fastest: local extents L_k are ScaLAPACK's NUMROC per dimension, and
 * local index (l_0, .., l_{d-1}) is at l_0 + lld (l_1 + L_1 (l_2 + L_2
 * l_3)), lld >= max(1, L_0) being the leading dimension passed to
 * deso_redist_execute (L_0 for a dense array).  Entries beyond d are
 * ignored.  Source and target may use any rank sets (disjoint,
 * overlapping or the same) and grid shapes (2 x 2 x 1 -> 1 x 1 x 4).     */
#define DESO_ND_MAX 4
typedef struct deso_layout_nd {
    int d;                      /* dimensions, 1 .. DESO_ND_MAX             */
    int64_t n[DESO_ND_MAX];     /* global extents, >= 0                     */
    int64_t b[DESO_ND_MAX];     /* block sizes, >= 1                        */
    int p[DESO_ND_MAX];         /* grid extents, >= 1, product <= ranks     */
    const int *ranks;           /* product of p distinct ranks, or NULL     */
} deso_layout_nd;

/* How the messages of a remap are grouped into contention-free steps (every
 * rank sends at most one and receives at most one message per step).      */
typedef enum deso_schedule {
    DESO_SCHED_CATERPILLAR = 0, /* max(P, Q) shifted steps (the baseline)   */
    DESO_SCHED_STEPWISE,        /* fewest steps                              */
    DESO_SCHED_GREEDY           /* least sum over steps of longest message   */
} deso_schedule;

typedef struct deso_redist deso_redist;

/* Plans the remap src -> dst for this rank on (a duplicate of) comm.
 * Every rank of comm calls it with identical arguments; ranks in neither
 * layout get a handle that does nothing.  One MPI_Allreduce checks that the
 * arguments agree (a hash of both layouts and sched) and that planning
 * succeeded everywhere, so all ranks return the same code.
 * The duplicate of comm and the shared-memory rings are made by the first
 * remap on comm and kept (an attribute of comm) for the next ones: they
 * are freed when comm is freed (MPI_Comm_free, or MPI_Finalize for
 * MPI_COMM_WORLD), or with the last remap still using them if that comes
 * later.  Collective over comm.
 * Errors: DESO_ENULL (src, dst or out NULL), DESO_EINVAL (comm is
 * MPI_COMM_NULL, block size or grid extent < 1, a rank outside comm or
 * repeated, pr * pc larger than comm, unknown sched), DESO_ESIZE (negative
 * or different extents), DESO_EMISMATCH (arguments differ between ranks),
 * DESO_ENOMEM, DESO_EOVERFLOW (a message longer than INT_MAX elements),
 * DESO_EMPI.  On error *out is NULL.                                       */
deso_err deso_redist_create(MPI_Comm comm, const deso_layout *src,
                            const deso_layout *dst, deso_schedule sched,
                            deso_redist **out);

/* As deso_redist_create for d-dimensional layouts: the same planner,
 * transports, agreement and cache (a d-dimensional remap is the product
 * of d one-dimensional ones), driven by deso_redist_execute,
 * deso_redist_local_extents and the other deso_redist_* functions.
 * Collective over comm.
 * Errors: DESO_ENULL (src, dst or out NULL), DESO_EINVAL (comm is
 * MPI_COMM_NULL, d outside 1 .. DESO_ND_MAX, a block size or grid extent
 * < 1, a grid larger than comm, a rank outside comm or repeated, unknown
 * sched), DESO_ESIZE (a negative extent, d or extents that differ
 * between src and dst, more elements than int64 holds), DESO_EMISMATCH,
 * DESO_ENOMEM, DESO_EOVERFLOW, DESO_EMPI, as deso_redist_create.  On
 * error *out is NULL.                                                    */
deso_err deso_redist_create_nd(MPI_Comm comm, const deso_layout_nd *src,
                               const deso_layout_nd *dst,
                               deso_schedule sched, deso_redist **out);

/* Moves this rank's part of the source array (src, leading dimension
 * src_lld) into its part of the target array (dst, dst_lld).  src may be
 * NULL on ranks that hold no source data, dst likewise.  src and dst must
 * not overlap, except that with identical layouts src == dst and
 * src_lld == dst_lld is allowed and moves nothing.  For a d-dimensional
 * remap the local rows are the local extent of dimension 0 and the
 * columns the product of the others (deso_layout_nd).  Allocates
 * nothing, except once: on the shared-memory transport, the first
 * execution in which some rank's source is a deso_redist_array_alloc
 * array its receiver can read in place compiles the single-copy programs
 * on every rank (a remap that never does so never pays for them).
 * Collective over the handle's communicator: one MPI_Allreduce agrees on
 * argument errors, so a bad argument on one rank fails every rank (skipped
 * when the remap sends no message at all, e.g. identical layouts: then
 * the call is in effect local); the execution that compiles the
 * single-copy programs agrees on that by a second one, before any data
 * moves.
 * Errors (the same on every rank, with the failing rank's message):
 * DESO_ENULL (r NULL, or src/dst NULL where data is held), DESO_EINVAL
 * (an lld < max(1, local rows)), DESO_EMPI, DESO_ENOMEM (the single-copy
 * programs did not fit on some rank: nothing moved, and the next
 * execution tries again).                                                */
deso_err deso_redist_execute(deso_redist *r, const double *src,
                             int64_t src_lld, double *dst, int64_t dst_lld);

/* Local extents of this rank's part of the source and target arrays (0 x 0
 * when it holds none); any pointer may be NULL.  Local.
 * Errors: DESO_ENULL (r NULL).                                             */
deso_err deso_redist_local_shape(const deso_redist *r, int64_t *src_rows,
                                 int64_t *src_cols, int64_t *dst_rows,
                                 int64_t *dst_cols);

/* This rank's local extents per dimension of the source and target
 * arrays (all 0 where it holds none; 1 beyond d; a remap of
 * deso_redist_create has d = 2: rows, columns); either array may be
 * NULL.  Local.
 * Errors: DESO_ENULL (r NULL).                                           */
deso_err deso_redist_local_extents(const deso_redist *r,
                                   int64_t src[DESO_ND_MAX],
                                   int64_t dst[DESO_ND_MAX]);

/* How this remap's messages travel: "shared memory" when every rank of
 * the communicator is on one node (each sender packs straight into a ring
 * its receiver unpacks from, no MPI call during an execution), "mpi" when
 * they are not or when DESO_REMAP_SHM=0 was in rank 0's environment at
 * deso_redist_create (rank 0's value holds on every rank; where another
 * rank's differs, rank 0 warns once on stderr), "none" when no rank sends
 * anything (r NULL too).
 * On shared memory, a sender whose source array comes from
 * deso_redist_array_alloc may be read in place by its receivers (per
 * execution and per pair): once some rank's source could be, the remap
 * times one execution each way and keeps the faster, the same on every
 * rank, and reports "shared memory, single copy" from then on when that
 * is reading in place.  DESO_REMAP_SINGLE_COPY=1 reads in place from
 * then on without timing, =0 keeps the rings (where ranks' values
 * differ, 1 wins over 0 and either over unset).
 * The same on every rank.  Local.                                          */
const char *deso_redist_transport(const deso_redist *r);

/* Seconds this rank spent in deso_redist_create (any pointer may be
 * NULL): *plan planning alone (message lengths, schedule, the copy
 * programs of both transports; local work, no communication), *setup the
 * rest (the agreements between ranks and, for the first remap on a
 * communicator, the communicator duplicate, the node split and the
 * shared-memory window, which later remaps on it reuse).  Local.
 * Errors: DESO_ENULL (r NULL).                                             */
deso_err deso_redist_times(const deso_redist *r, double *plan,
                           double *setup);

/* Frees the handle (its rings go back to the communicator's pool); the
 * last handle on a communicator already freed also frees the cached
 * duplicate and rings.  NULL-safe, sets *r to NULL.  Collective over the
 * handle's communicator.                                                 */
void deso_redist_destroy(deso_redist **r);

/* Allocates this rank's local array of `count` doubles (zeroed) where the
 * other ranks of comm can read it: a remap whose source arrays all come
 * from here, with every rank of its communicator on one node, moves each
 * element once (the receiver copies it from the sender's array straight
 * into place, writing its target in order) instead of packing it into a
 * ring and unpacking it.  Use it as any local array (ScaLAPACK's too); on
 * several nodes it is ordinary memory.  Collective over comm (an MPI-3
 * shared window); free with deso_redist_array_free.
 * Errors (an error on any rank is every rank's, with a message naming
 * that rank): DESO_ENULL (array NULL), DESO_EINVAL (comm MPI_COMM_NULL,
 * count < 0 or too large), DESO_ENOMEM, DESO_EMPI.  On error *array is
 * NULL.                                                                   */
deso_err deso_redist_array_alloc(MPI_Comm comm, int64_t count,
                                 double **array);

/* Frees an array of deso_redist_array_alloc; NULL-safe.  Collective over
 * the communicator it was allocated on, every rank freeing its own part
 * of the same allocation.  Errors: DESO_EINVAL (not such an array: this
 * rank returns at once, and its partners wait in the collective).       */
deso_err deso_redist_array_free(double *array);

/* Fills *out from a ScaLAPACK array descriptor (dtype, ctxt, m, n, mb, nb,
 * rsrc, csrc, lld): the grid shape comes from Cblacs_gridinfo and the
 * ranks from Cblacs_pnum on the descriptor's context.  BLACS numbers a
 * context's processes row-major within the context, which are the ranks of
 * MPI_COMM_WORLD only for a "Row" grid made by Cblacs_gridinit; this rank
 * checks its own number and refuses other contexts (DESO_ENOTSUP: give
 * the ranks explicitly).  When the ranks are not 0 .. pr*pc-1, out->ranks
 * is allocated: free it with deso_layout_release.  Only on ranks inside
 * the context.  Local.
 * Errors: DESO_ENULL, DESO_EGRID (this rank is not in the context, or the
 * context is invalid), DESO_EINVAL (bad block sizes), DESO_ESIZE
 * (negative extents), DESO_ENOTSUP (rsrc or csrc != 0, or a context whose
 * numbers are not MPI_COMM_WORLD ranks), DESO_ENOMEM.                      */
deso_err deso_layout_from_scalapack(const int desc[9], deso_layout *out);

/* Frees ranks allocated by deso_layout_from_scalapack and sets them NULL;
 * NULL-safe.  Local.                                                       */
void deso_layout_release(deso_layout *l);

/* Schedule names "caterpillar", "stepwise", "greedy" ("?" for a value
 * outside the enum).  Local.                                               */
const char *deso_schedule_name(deso_schedule s);
/* The schedule named `name` (as deso_schedule_name spells it).  Local.
 * Errors: DESO_ENULL (name or out NULL), DESO_EINVAL (unknown name).      */
deso_err deso_schedule_parse(const char *name, deso_schedule *out);

/* The schedule of one slice of a 1-D remap CYCLIC(r) on P ranks ->
 * CYCLIC(s) on Q ranks: a slice is lcm(P r, Q s) elements, grid[p * Q + q]
 * the elements p sends to q per slice, and the steps group the nonzero
 * messages.  Pure computation, no MPI (MPI need not be initialised).
 * Local.  Release with deso_slice_plan_free.
 * Errors: DESO_ENULL, DESO_EINVAL (P, Q, r or s < 1, unknown sched),
 * DESO_EOVERFLOW (the slice length does not fit in int64), DESO_ENOMEM.   */
typedef struct deso_slice_plan {
    int P, Q;
    int64_t r, s;
    deso_schedule sched;
    int64_t slice;          /* lcm(P r, Q s)                                */
    int steps;
    int64_t total_cost;     /* sum over steps of the longest message        */
    int64_t messages;       /* nonzero grid entries                         */
    int64_t *grid;          /* P * Q message lengths                        */
    int *recv_of;           /* steps * P: target of p in step k, or -1      */
    int64_t *step_cost;     /* steps                                        */
} deso_slice_plan;

deso_err deso_redist_slice_plan(int P, int64_t r, int Q, int64_t s,
                                deso_schedule sched, deso_slice_plan *out);
void deso_slice_plan_free(deso_slice_plan *p);   /* NULL-safe             */

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
