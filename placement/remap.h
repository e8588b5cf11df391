/* placement/remap: planning a remap between two block-cyclic layouts
 * (papers 001, 000, 002; doc/DESIGN.md, "Remap engine").  Pure
 * computation: who sends which runs of which local array to whom, in which
 * contention-free step.  deso/remap/ executes these plans over MPI.
 *
 * One dimension: CYCLIC(r) on P ranks -> CYCLIC(s) on Q ranks.  Element i
 * lives on rank (i / r) mod P.  Per slice of L = lcm(P r, Q s) elements the
 * message lengths form a P x Q matrix (the "grid"); a schedule groups the
 * nonzero messages into steps in which every sender and every receiver
 * appears at most once.
 *
 * Two dimensions: a block-cyclic layout (ScaLAPACK's) of an m x n matrix on
 * a pr x pc grid whose positions map to arbitrary ranks of a communicator;
 * each dimension remaps independently and message lengths multiply.  A
 * vector is the m x 1 case.                                                 */
#ifndef DESO_PLACEMENT_REMAP_H
#define DESO_PLACEMENT_REMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "placement/deso_errors.h"

/* ---- one dimension, one slice ------------------------------------------ */

/* Message lengths of one slice: len[p * Q + q] = elements rank p of the
 * source sends to rank q of the target per slice of lcm(P r, Q s).
 * *slice gets L.  Errors: DESO_EINVAL for P, Q, r or s < 1, DESO_EOVERFLOW
 * when L does not fit in int64.                                             */
deso_err pl_remap_slice(int P, int64_t r, int Q, int64_t s, int64_t *len,
                        int64_t *slice);

typedef enum pl_sched_kind {
    PL_SCHED_CATERPILLAR = 0,  /* baseline: max(P, Q) shifted steps        */
    PL_SCHED_STEPWISE,         /* fewest steps (max messages per rank)      */
    PL_SCHED_GREEDY            /* least total cost (sum of longest message) */
} pl_sched_kind;

/* Name <-> kind ("caterpillar", "stepwise", "greedy").                     */
const char *pl_sched_name(pl_sched_kind k);
deso_err pl_sched_parse(const char *name, pl_sched_kind *out);

/* A schedule over a P x Q message-length matrix.  recv_of[k * P + p] is the
 * target rank that source rank p sends to in step k, or -1; step_cost[k] is
 * the longest message of step k; total_cost their sum.  Every nonzero entry
 * of the matrix appears in exactly one step; zero entries in none.         */
typedef struct pl_schedule {
    int P, Q;
    int nsteps;
    int *recv_of;        /* nsteps * P                                      */
    int64_t *step_cost;  /* nsteps                                          */
    int64_t total_cost;
    int64_t messages;    /* nonzero entries                                 */
} pl_schedule;

deso_err pl_schedule_build(pl_sched_kind kind, int P, int Q,
                           const int64_t *len, pl_schedule *out);
void pl_schedule_free(pl_schedule *s);   /* NULL-safe; leaves it empty     */

/* The least possible number of steps: the largest number of nonzero
 * messages any one rank sends or receives (Konig).                         */
int pl_schedule_min_steps(int P, int Q, const int64_t *len);

/* ---- full layouts and per-rank plans ------------------------------------ */

/* A block-cyclic layout of an m x n column-major array (ScaLAPACK's).     */
typedef struct pl_bc_layout {
    int64_t m, n;        /* global extents (n = 1 for a vector)             */
    int64_t mb, nb;      /* block sizes, >= 1                               */
    int pr, pc;          /* grid shape                                      */
    const int *ranks;    /* pr * pc communicator ranks, row-major grid      */
                         /* position (row * pc + col) -> rank; NULL means   */
                         /* ranks 0 .. pr*pc-1                              */
    bool replicated;     /* every rank of the set holds the whole array     */
                         /* (mb, nb, pr, pc then only name the rank set)    */
} pl_bc_layout;

/* Local extents of `rank` in layout `l` (0 x 0 when it holds nothing) and
 * its leading dimension (max(1, local rows)).                              */
void pl_bc_local_shape(const pl_bc_layout *l, int rank, int64_t *lrows,
                       int64_t *lcols);

/* A contiguous run of `len` elements at local offset `off` (column-major,
 * leading dimension = local rows).                                          */
typedef struct pl_run {
    int64_t off, len;
} pl_run;

/* One message of one rank: to (or from) `peer`, in schedule step `step`,
 * `count` elements packed in the order of its runs.                         */
typedef struct pl_msg {
    int peer;
    int step;
    int64_t count;
    int64_t nruns;
    pl_run *runs;
} pl_msg;

/* Everything one rank does in a remap: messages it sends (runs of its
 * source local array), messages it receives (runs of its target local
 * array), and the local copies (self: pairs of runs of equal length, source
 * then target).  Sends and receives are sorted by step.                    */
typedef struct pl_remap_rank {
    int me;
    int nsend, nrecv;
    pl_msg *send, *recv;
    int64_t nself;
    pl_run *self_src, *self_dst;
    int64_t src_lrows, src_lcols;   /* local shapes of both arrays          */
    int64_t dst_lrows, dst_lcols;
    int64_t max_msg;                /* longest message, for buffers         */
    int nsteps;
} pl_remap_rank;

/* Plans rank `me`'s part of the remap src -> dst on a communicator of
 * `comm_size` ranks with the given schedule kind.  The result is the same
 * on every rank that computes it (pure function of its arguments).  When
 * both layouts are identical, nothing is sent and the self runs cover the
 * whole local array.  Errors: DESO_EINVAL (block size < 1, a rank outside
 * [0, comm_size), a rank repeated in a set), DESO_ESIZE (negative extents,
 * src and dst extents differ), DESO_ENOMEM.                                */
deso_err pl_remap_plan_rank(const pl_bc_layout *src, const pl_bc_layout *dst,
                            int comm_size, pl_sched_kind kind, int me,
                            pl_remap_rank *out);
void pl_remap_rank_free(pl_remap_rank *r);  /* NULL-safe                    */

#endif
