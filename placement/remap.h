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

/* A block-cyclic layout of a d-dimensional array, 1 <= d <= PL_ND_MAX:
 * dimension k has extent n[k], blocks of b[k] on p[k] grid positions.  Grid
 * position (c_0, .., c_{d-1}) is rank ranks[(..(c_0 p_1 + c_1) p_2 ..) +
 * c_{d-1}] (row-major, as MPI_Cart numbers it; NULL: that index itself).
 * A rank's local array stores the first index fastest, with NUMROC local
 * extents per dimension; the planner sees it as a matrix of local rows =
 * the extent of dimension 0 and local columns = the product of the others
 * (column (l_1, .., l_{d-1}) = l_1 + L_1 (l_2 + L_2 l_3)).  d = 2 is a
 * pl_bc_layout that is not replicated.                                   */
#define PL_ND_MAX 4
typedef struct pl_nd_layout {
    int d;
    int64_t n[PL_ND_MAX];
    int64_t b[PL_ND_MAX];
    int p[PL_ND_MAX];
    const int *ranks;
} pl_nd_layout;

/* Local extents of `rank` in layout `l` (0 x 0 when it holds nothing) and
 * its leading dimension (max(1, local rows)).                              */
void pl_bc_local_shape(const pl_bc_layout *l, int rank, int64_t *lrows,
                       int64_t *lcols);

/* Local extents of `rank` in l per dimension (all 0 when it holds nothing;
 * 1 beyond l->d).                                                       */
void pl_nd_local_extents(const pl_nd_layout *l, int rank,
                         int64_t ext[PL_ND_MAX]);

/* A contiguous run of `len` elements at local offset `off` (column-major,
 * leading dimension = local rows).                                          */
typedef struct pl_run {
    int64_t off, len;
} pl_run;

/* ---- one dimension per period ------------------------------------------- */

/* `cnt` pieces of `len` elements: piece k covers global indices
 * [g + k dg, g + k dg + len), at local offset mine + k dmine on the side
 * that asked and theirs + k dtheirs on its peer (steps 0 when cnt = 1).  */
typedef struct pl_seq {
    int64_t g, len, mine, theirs;
    int64_t cnt, dg, dmine, dtheirs;
} pl_seq;

/* What one position of CYCLIC(r) on P shares with one position of
 * CYCLIC(s) on Q over an extent M, described by one period: seq lists,
 * in increasing global order, the pieces of [0, span), span = min(L, M)
 * for L = lcm(P r, Q s).  The list repeats `full` times, shifted by
 * (dg, dmine, dtheirs) = (L, L / P, L / Q) each time, then once more cut
 * at global index rem (full = 0: the list once, cut at rem = M).  per:
 * elements of the list; count: elements of the whole extent.  With one
 * position on both sides (P = Q = 1) the list is the one piece [0, M),
 * span = M, full = 0.                                                     */
typedef struct pl_dim {
    int64_t nseq;
    pl_seq *seq;
    int64_t span, full, rem;
    int64_t dg, dmine, dtheirs;
    int64_t per, count;
} pl_dim;

/* Builds *out for position a of CYCLIC(r) on P and position c of
 * CYCLIC(s) on Q over [0, M) in O(min(L / (P r), L / (Q s)) + 1) time and
 * space, whatever M.  Errors: DESO_ENULL, DESO_EINVAL (an argument out of
 * range), DESO_ENOMEM (*out left empty).                                  */
deso_err pl_dim_make(int64_t M, int P, int64_t r, int a, int Q, int64_t s,
                     int c, pl_dim *out);
void pl_dim_free(pl_dim *d);   /* NULL-safe; leaves it empty               */

/* Elements of q below global index x: *npieces pieces start below x, the
 * last of them with *lastlen elements below x.                           */
int64_t pl_seq_clip(const pl_seq *q, int64_t x, int64_t *npieces,
                    int64_t *lastlen);

/* Walks a pl_dim's pieces in increasing global order: start with
 * PL_DIM_IT(d), then pl_dim_next until it returns false.                 */
typedef struct pl_dim_it {
    const pl_dim *d;
    int64_t p, i, j;     /* period, progression, piece                      */
} pl_dim_it;
#define PL_DIM_IT(dp) ((pl_dim_it){ (dp), 0, 0, 0 })
bool pl_dim_next(pl_dim_it *it, int64_t *g, int64_t *mine, int64_t *theirs,
                 int64_t *len);

/* One message of one rank: to (or from) `peer`, in schedule step `step`,
 * `count` elements packed in increasing global column-major order.  rows
 * and cols describe it per dimension (mine: this rank's local rows and
 * columns; theirs: the peer's); the element in local row i, column j of
 * the message's pieces is at i + j ld.  A d-dimensional message's
 * columns are the product of its dimensions 1 .. d-1, each described by
 * one period: cols is dimension 1, outer[k] dimension k + 2, and element
 * (g, mine, theirs) of outer[k] moves a column by (g gstep[k], mine
 * mstep[k], theirs tstep[k]) (the products of the faster dimensions'
 * global and local extents); pl_cols_next walks the product.
 * peer_rows: the peer's local rows.  runs is empty unless
 * pl_remap_rank_runs spelt it out.                                        */
#define PL_OUTER_MAX (PL_ND_MAX - 2)
typedef struct pl_msg {
    int peer;
    int step;
    int64_t count;
    int64_t peer_rows;
    int64_t nruns;
    pl_run *runs;
    pl_dim rows, cols;
    int nouter;
    pl_dim outer[PL_OUTER_MAX];
    int64_t gstep[PL_OUTER_MAX], mstep[PL_OUTER_MAX], tstep[PL_OUTER_MAX];
} pl_msg;

/* Columns of m: cols' times the outer dimensions'.                       */
int64_t pl_msg_ncols(const pl_msg *m);

/* Walks the column shifts of m's outer dimensions (one, (0, 0, 0), when
 * it has none) in increasing global order: every combination of their
 * elements, slowest dimension outermost, as (global column, mine column,
 * theirs column) to add to cols' pieces.  Start with PL_OUTER_IT(m),
 * then pl_outer_next until it returns false.  O(1) memory.             */
typedef struct pl_outer_it {
    const pl_msg *m;
    bool started, done;
    pl_dim_it it[PL_OUTER_MAX];
    int64_t g[PL_OUTER_MAX], mi[PL_OUTER_MAX], ti[PL_OUTER_MAX];
    int64_t len[PL_OUTER_MAX], u[PL_OUTER_MAX];
} pl_outer_it;
#define PL_OUTER_IT(mp) ((pl_outer_it){ .m = (mp) })
bool pl_outer_next(pl_outer_it *it, int64_t *g, int64_t *mine,
                   int64_t *theirs);

/* Walks every column piece of m (cols' pieces at every outer shift) in
 * increasing global order, as pl_dim_next does for one dimension.      */
typedef struct pl_cols_it {
    pl_outer_it o;
    pl_dim_it c;
    int64_t sg, sm, st;
    bool have;
} pl_cols_it;
#define PL_COLS_IT(mp) ((pl_cols_it){ .o = PL_OUTER_IT(mp) })
bool pl_cols_next(pl_cols_it *it, int64_t *g, int64_t *mine,
                  int64_t *theirs, int64_t *len);

/* Pieces (progressions) of m's per-period description, summed over its
 * dimensions: what planning it stored.                                 */
int64_t pl_msg_pieces(const pl_msg *m);

/* Everything one rank does in a remap: messages it sends (pieces of its
 * source local array), messages it receives (pieces of its target local
 * array), and the local copy (self: mine = source, theirs = target
 * offsets; has_self when it moves anything).  Sends and receives are
 * sorted by step.  Runs (self: pairs of runs of equal length, source then
 * target) exist only after pl_remap_rank_runs.                            */
typedef struct pl_remap_rank {
    int me;
    int nsend, nrecv;
    pl_msg *send, *recv;
    bool has_self;
    pl_msg self;
    bool runs_made;
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

/* As pl_remap_plan_rank for d-dimensional layouts (the same d and
 * extents on both sides): rows are dimension 0, columns the others
 * (pl_nd_layout).  Errors as pl_remap_plan_rank's, and DESO_EINVAL for d
 * outside [1, PL_ND_MAX], DESO_ESIZE for different d or extents.        */
deso_err pl_remap_plan_rank_nd(const pl_nd_layout *src,
                               const pl_nd_layout *dst, int comm_size,
                               pl_sched_kind kind, int me,
                               pl_remap_rank *out);
void pl_remap_rank_free(pl_remap_rank *r);  /* NULL-safe                    */

/* Spells out every message of r (and its self copy) as runs of the local
 * arrays (leading dimension = local rows), adjacent runs merged: O(runs)
 * time and memory, for consumers that need index lists and for tests.
 * Idempotent.  Errors: DESO_ENULL, DESO_ENOMEM (r keeps no runs).         */
deso_err pl_remap_rank_runs(pl_remap_rank *r);

#endif
