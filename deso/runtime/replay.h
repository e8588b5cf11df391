/* Replaying a solver's iteration without recording it (replay*.c).
 *
 * When two forces in a row ran the same compiled force (compiled.c) on
 * the same calls (the same operations on the same handles, the same
 * constants), the context arms a replay: the calls as it expects them
 * next, and the plan compiled into a flat program, the force's schedule
 * with every view it reads or writes a preallocated slot.  While armed,
 * a call that equals the next expected one is a compare and a store: its
 * result handle moves to a fresh value with no node behind it (a
 * placeholder) and nothing else is made.  A force reached after the last
 * expected call runs the program on the slots, in the schedule's order,
 * with the same collectives and exchanges as the executor, then gives
 * every placeholder left in a handle the views holding its data.  A call
 * that differs, a handle destroyed, or a force before the end records
 * the calls matched so far as ordinary nodes (into their placeholders,
 * so that what the caller already holds stays right) and disarms: the
 * force then runs as any other.  doc/DESIGN.md, "Replaying an iteration", says more.  */
#ifndef DESO_RUNTIME_REPLAY_H
#define DESO_RUNTIME_REPLAY_H

#include "deso/runtime/runtime.h"

/* Arms, after a force that ran compiled force c (NULL: none) with outcome
 * err, when the force before it ran c on the same calls; then starts the
 * next force's call log.  Local: a replay that cannot be made (out of
 * memory) is not armed, and a rank replaying runs the same collectives
 * as one recording.                                                     */
void deso__replay_after_force(deso_ctx *ctx, deso__compiled *c, deso_err err);

/* Whether a recorded call (deso__record_sparse's arguments) was the next
 * expected one and is replayed: then nothing more is to be done.  Else
 * the replay is broken (deso__replay_break) and the call is recorded.     */
bool deso__replay_call(deso_ctx *ctx, const blas_desc *d, deso__value **ops,
                      const uint64_t *ids, deso__handle *out,
                      const int64_t *shape, const deso__spmat_data *sp);

/* The quick path of a public function while a replay is armed: whether
 * a plain call (no view parameters, no sparse matrix) of operation op
 * with these operands, into out of shape m x n, was the next expected
 * one and is replayed.  The caller has checked what its own validation
 * would (so that the call could not fail), the operands' values readable
 * (not poisoned) among it; false changes nothing, and
 * the call then takes the ordinary way, which compares it again and
 * breaks the replay where it differs.                                   */
bool deso__replay_quick(deso_ctx *ctx, blas_op op, unsigned flags,
                        deso__value **ops, const uint64_t *ids,
                        deso__handle *out, int64_t m, int64_t n);

/* The same for deso_sset (out <- the value v of handle id, or of a
 * constant when id is 0).                                                */
bool deso__replay_alias(deso_ctx *ctx, deso__value *v, uint64_t id,
                       deso__handle *out);

/* The call logs that arming compares (every recorded call appends).    */
void deso__replay_log(deso_ctx *ctx, const blas_desc *d, deso__value **ops,
                     const uint64_t *ids, const deso__handle *out,
                     const int64_t *shape, deso__spmat_data *sp);
void deso__replay_log_alias(deso_ctx *ctx, deso__value *v, uint64_t id,
                           const deso__handle *out);

/* The calls replayed so far become ordinary pending nodes, and the replay
 * is disarmed.  Returns the first recording error (the remaining
 * placeholders are then poisoned with it).                              */
deso_err deso__replay_break(deso_ctx *ctx);

/* Handle h is about to go: a replay naming it breaks.                    */
void deso__replay_handle_gone(deso_ctx *ctx, const deso__handle *h);

/* A force point, while a replay is armed: *done when it was the replayed
 * force (its outcome returned); else the replay is broken and the caller
 * forces as usual.                                                     */
deso_err deso__replay_force(deso_ctx *ctx, deso_err before, bool *done);

/* The nodes the calls taken so far stand for (deso_info's pending).     */
int64_t deso__replay_pending(const deso_ctx *ctx);

/* Frees the replay without recording the calls it took (the context
 * goes, the compiled forces are emptied, or the force that ran them
 * failed), and the parked one.                                          */
void deso__replay_disarm(deso_ctx *ctx);

/* Marks the exchange plans the armed and the parked replay's fills run
 * as used by this force (deso__exchange_touch): a replay does not
 * prepare its force, so its plans must outlive the trim.               */
void deso__replay_touch_plans(deso_ctx *ctx);

/* Compiled force c goes or moves: the replays running it are freed, as
 * by deso__replay_disarm.                                               */
void deso__replay_forget(deso_ctx *ctx, const deso__compiled *c);

#endif
