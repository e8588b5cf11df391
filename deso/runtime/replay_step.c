/* One step of a replay's program (replay_prog.h).  What a node asks of
 * the rank (its facts, deso__kfacts) and its operands' local pieces
 * depend only on the node, its placement and its slots' layouts, so a
 * step works them out at its first run and keeps them.  A step whose
 * node is a local kernel talking to no other rank (no operand to fill,
 * no reduction across ranks, not fused, not posted) is then *flat*: each
 * later run is its result's slot prepared, its kernel and finish called
 * through the pointers resolved at that first run, and, for one small
 * node in DESO__TIME_SAMPLE, its timings; the performance log takes its
 * calls in bulk when the program is done (it moves no bytes).  The
 * executor's path for it (deso__log_begin, deso__exec_known and the
 * local-kernel path's tests, deso__log_end) cost about 270 instructions
 * a node, as much as a CG iteration's scalar kernels at n = 100.  Any
 * other step runs through the executor's own pieces.                    */
#include <string.h>

#include "deso/runtime/replay_prog.h"

/* The result's slot as a fresh result view would start: zeroed, or a
 * copy of the updated operand (when the result does not take over that
 * operand's slot).                                                      */
static inline void prepare_result(const tstep *st, deso__view *rv)
{
    if (st->prep == PREP_NONE) return;
    int64_t n = rv->rows * rv->cols;
    if (st->prep == PREP_ZERO && n == 1)
        rv->data[0] = 0.0;              /* a scalar: no call to memset    */
    else if (st->prep == PREP_ZERO && n > 0)
        memset(rv->data, 0, (size_t)n * sizeof(double));
    else if (st->prep == PREP_COPY && n > 0)
        memcpy(rv->data, (*st->copyw)->data, (size_t)n * sizeof(double));
}

/* Whether step st, its facts known, runs flat: a local kernel (not a
 * view, a user operator, a sparse product or a distributed kernel) with
 * no fill, no reduction across ranks and no streamed matrix, neither
 * posted nor fused, whose reduction buffer the scratch holds (else the
 * executor's path reports it).                                          */
static bool flat_ok(const deso_ctx *ctx, const deso__replay *T,
                    const tstep *st)
{
    const deso__kfacts *f = &st->kf;
    blas_op op = T->tnd[st->node].d.op;
    bool local = op != BLAS_OP_VGET && op != BLAS_OP_VPUT &&
                 op != BLAS_OP_USER && op != BLAS_OP_USMV &&
                 f->info->kernel != NULL && !f->info->distributed;
    return local && st->kind == DESO__RUN && st->nfill == 0 &&
           T->c->plan.fuse[st->node] < 0 && f->rd < 0 && !f->streamed &&
           (f->len <= 2 || f->len <= ctx->scratch_len);
}

void deso__replay_learn(const deso_ctx *ctx, deso__replay *T, tstep *st,
                        const opt_place *pl)
{
    deso__node *nd = &T->tnd[st->node];
    deso__view *v[BLAS_MAXOPS];
    for (int k = 0; k < nd->d.nops; k++) {
        st->opw[k] = &T->slot[st->op[k]].w;
        v[k] = *st->opw[k];
    }
    st->nd = nd;
    st->resw = &T->slot[st->res].w;
    st->copyw = st->copy >= 0 ? &T->slot[st->copy].w : NULL;
    st->prep = st->zero ? PREP_ZERO : st->copy >= 0 ? PREP_COPY : PREP_NONE;
    deso__exec_facts(ctx, nd, pl, v, *st->resw, &st->kf, st->L, &st->R);
    st->flat = flat_ok(ctx, T, st);
    const blas_op_info *info = st->kf.info;
    st->kern = NULL;
    if (st->flat && st->kf.part)
        st->kern = st->kf.direct ? info->direct : info->kernel;
    st->fin = st->kern != NULL && st->kf.finish ? info->finish : NULL;
    st->known = true;
}

/* The local pieces' data and layouts: those of the views the step's
 * slots hold now (a live-in slot is bound anew at every force).        */
static inline void set_pieces(tstep *st, const deso__view *rv)
{
    for (int k = 0; k < st->nd->d.nops; k++) {
        const deso__view *v = *st->opw[k];
        st->L[k].data = v->data;
        st->L[k].lay = &v->lay;
    }
    st->R.data = rv->data;
    st->R.lay = &rv->lay;
}

/* A timed flat step (one small node in DESO__TIME_SAMPLE): its kernel
 * and finish each timed as the executor times them (compute time and
 * the log's kernel time), and its whole run for the log, from t0.
 * (Apart, so that the untimed run keeps its registers.)                */
__attribute__((noinline))
static void flat_timed(const deso_ctx *ctx, tstep *st, double *red,
                       double t0)
{
    const blas_desc *d = &st->nd->d;
    if (st->kern != NULL) {
        double k0 = deso__kernel_start(ctx);
        st->kern(d, st->L, &st->R, red);
        deso__kernel_time(ctx, d->op, k0);
    }
    if (st->fin != NULL) {
        double k0 = deso__kernel_start(ctx);
        st->fin(d, st->L, &st->R, red);
        deso__kernel_time(ctx, d->op, k0);
    }
    deso__log_time((int)d->op, (deso__now() - t0) * ctx->weight);
}

/* Flat step st's run.                                                   */
static inline void flat_run(deso_ctx *ctx, tstep *st)
{
    int w = ctx->weight = deso__time_weight(ctx, st->nd);
    double t0 = w > 0 ? deso__now() : 0.0;
    deso__view *rv = *st->resw;
    prepare_result(st, rv);
    set_pieces(st, rv);
    double small[2], *red = st->kf.len > 2 ? ctx->scratch : small;
    if (w > 0) {
        flat_timed(ctx, st, red, t0);
        return;
    }
    if (st->kern != NULL) st->kern(&st->nd->d, st->L, &st->R, red);
    if (st->fin != NULL) st->fin(&st->nd->d, st->L, &st->R, red);
}

int deso__replay_flat(deso_ctx *ctx, const deso__replay *T, int s, int end,
                      bool overlap)
{
    for (; s < end && T->step[s].flat; s++) {
        if (overlap) deso__stats_overlap();
        flat_run(ctx, &T->step[s]);
    }
    return s;
}

/* A node's run on the executor's path, inside its counted run: its
 * operands' fills, its result's slot prepared, the node.  A fill writes
 * every entry of its slot (a remap every element of the matrix; an
 * exchange each element of the vector from one source copy; a
 * replication its copy, then the broadcasts), so its slot, whatever an
 * earlier value left there, is not zeroed first: that was one more pass
 * over each moved vector per iteration.                                 */
deso_err deso__replay_body(deso_ctx *ctx, deso__replay *T, tstep *st,
                           const opt_place *pl)
{
    const tslot *S = T->slot;
    for (int f = 0; f < st->nfill; f++)
        DESO_TRY(deso__view_fill(ctx, st->fkind[f], S[st->fsrc[f]].w,
                                 S[st->fdst[f]].w));
    deso__node *nd = &T->tnd[st->node];
    deso__view *v[BLAS_MAXOPS];
    for (int k = 0; k < nd->d.nops; k++) v[k] = *st->opw[k];
    deso__view *rv = *st->resw;
    prepare_result(st, rv);
    set_pieces(st, rv);
    return deso__exec_known(ctx, nd, pl, &st->kf, v, rv, st->L, &st->R);
}

void deso__replay_count(deso__replay *T, int ran)
{
    if (T->tallied && ran == T->nsteps) {
        deso__log_calls(T->tally, T->ntally);
        return;
    }
    deso__log_tally t[DESO__REPLAY_CALLS];
    int n = 0;
    for (int s = 0; s < ran; s++) {
        const tstep *st = &T->step[s];
        if (!st->flat) continue;
        int op = (int)T->tnd[st->node].d.op, k = 0;
        while (k < n && t[k].op != op) k++;
        if (k == n) t[n++] = (deso__log_tally){.op = op, .calls = 0};
        t[k].calls++;
    }
    deso__log_calls(t, n);
    if (ran < T->nsteps) return;        /* (a failed run: counted once)   */
    memcpy(T->tally, t, (size_t)n * sizeof *t);
    T->ntally = n;
    T->tallied = true;
}
