/* Internal: the counters behind deso_log_view and DESO_LOG (PETSc's
 * -log_view): per operation kind and per kind of communication, on this
 * rank.  The hooks are one line each where the runtime already times
 * something:
 *   force.c         deso__log_exec_node wraps each node's execution
 *                   (calls, whole time, bytes and messages it caused);
 *   replay_run.c    deso__log_begin / deso__log_end around a replayed
 *                   step on the executor's path;
 *   replay_step.c   deso__log_calls / deso__log_time for the flat ones;
 *   exec.c          deso__log_op adds a node's local kernel time;
 *   comm.c          deso__log_coll / deso__log_exchange, one per MPI call;
 *   exchange.c      deso__log_remap wraps a matrix remap (whose messages
 *                   the remap engine counts, not comm.c).
 * Bytes and messages follow deso_stats.h's counting rules, so the totals
 * of the table equal deso_stats summed over ranks.                        */
#ifndef DESO_RUNTIME_LOG_H
#define DESO_RUNTIME_LOG_H

#include <stdint.h>

#include "deso/runtime/runtime.h"

typedef enum deso__log_kind {
    DESO__LOG_BCAST = 0,      /* broadcast along a grid dimension (or all)  */
    DESO__LOG_EXCHANGE,       /* point-to-point: transposes, gathers        */
    DESO__LOG_REMAP,          /* block-cyclic matrix remap                  */
    DESO__LOG_REDUCE,         /* reduce to coordinate 0                     */
    DESO__LOG_ALLREDUCE,      /* reduce + broadcast fused                   */
    DESO__LOG_CHECK,          /* SPMD hash and error agreement all-reduces  */
    DESO__LOG_NKINDS
} deso__log_kind;

/* Rows of the table: the operations, then the kinds of communication.    */
#define DESO__LOG_NROWS (BLAS_OP_COUNT + DESO__LOG_NKINDS)

/* Local kernel seconds of one node of operation `op` (a blas_op).        */
void deso__log_op(int op, double seconds);

/* One communication call of `kind`: bytes and messages as counted for
 * deso_stats, and its seconds.                                            */
void deso__log_comm(deso__log_kind kind, int64_t bytes, int64_t msgs,
                    double seconds);

/* A collective on a communicator of `size` ranks (this rank is
 * `rank_in_comm`), payload `payload` bytes, `factor` 2 for all-reduce,
 * started at time t0 (deso__now): deso__log_comm with
 * deso__stats_collective's counting rule.                                  */
void deso__log_coll(deso__log_kind kind, int64_t payload, int size,
                    int rank_in_comm, int factor, double t0);
/* The same for a collective that took `seconds` in all (one started and
 * waited for later: both parts).                                         */
void deso__log_coll_dt(deso__log_kind kind, int64_t payload, int size,
                       int rank_in_comm, int factor, double seconds);

/* A point-to-point exchange that spent `seconds` in MPI and sent nsend
 * messages of count[k] doubles.                                           */
void deso__log_exchange(int nsend, const int64_t *count, double seconds);

/* deso__exec_node(ctx, nd, pl, rv), counted for nd's operation; sets
 * ctx->weight (deso__time_weight) for the node's timings.                */
deso_err deso__log_exec_node(deso_ctx *ctx, deso__node *nd,
                             const opt_place *pl, deso__view *rv);
/* run(ctx, arg), counted for node nd's operation the same way (a compiled
 * program's node, whose operands' exchanges run inside it).              */
deso_err deso__log_run(deso_ctx *ctx, const deso__node *nd,
                       deso_err (*run)(deso_ctx *, void *), void *arg);
/* deso__log_run in two halves, around a node's run made inline (a
 * replayed program's node: no callback and no closure per node).        */
typedef struct deso__log_mark {
    int64_t bytes, msgs;
    int weight;               /* the node's (deso__time_weight)            */
    double t0;
} deso__log_mark;
void deso__log_begin(deso_ctx *ctx, const deso__node *nd, deso__log_mark *m);
void deso__log_end(const deso__node *nd, const deso__log_mark *m);

/* A replayed program's flat steps (replay_step.c) run without
 * deso__log_begin and deso__log_end: they move no byte and send no
 * message, so their calls are counted in bulk when the program is done
 * (t[0..n): an operation and its calls), and a timed one's seconds as it
 * runs.                                                                  */
typedef struct deso__log_tally {
    int op;
    int64_t calls;
} deso__log_tally;
void deso__log_calls(const deso__log_tally *t, int n);
void deso__log_time(int op, double seconds);

/* deso__mat_remap(ctx, src, dst), counted as a remap.                     */
deso_err deso__log_remap(deso_ctx *ctx, const deso__view *src,
                         deso__view *dst);

/* This rank's rows: t[2k] seconds and t[2k+1] kernel seconds, c[3k]
 * calls, c[3k+1] bytes and c[3k+2] messages of row k.                     */
void deso__log_pack(double *t, long long *c);

#endif
