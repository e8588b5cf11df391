/* A replay's force (replay.h): its program run on its slots in the
 * schedule's order, with the force's one agreement in flight under the
 * steps that talk to no other rank, as the executor runs it (run.c); then
 * the live-out values' views given to the placeholders the handles hold,
 * and the next iteration's start.                                       */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/replay_prog.h"

typedef struct trun {
    deso__replay *T;
    const opt_plan *plan;
    bool checking;
    deso__check check;
    deso_err verdict;         /* the agreement's, when it ran under steps */
    deso__pend pend[DESO__INFLIGHT];
    int pfirst, npend;
} trun;

/* Live-in slot t's view of value v, its layout compared: the final slot
 * that gave that view at the last force learnt (none: t keeps -1).     */
__attribute__((noinline))
static deso__view *slot_find(deso__replay *T, tslot *t, deso__value *v)
{
    deso__view *w = deso__value_find(v, &t->lay);
    for (int s = 0; w != NULL && s < T->nslots; s++)
        if (T->slot[s].out == w && T->slot[s].out_serial == w->serial)
            t->src = s;
    return w;
}

/* Live-in slot t's view of value v: the view it was bound to last time,
 * or the one the final slot it was bound to then gave at the last force,
 * when v holds it (the same address and serial: the same view, so the
 * same layout); else slot_find's.  A loop's iteration binds the views
 * the one before it gave, and a pointer walk costs a fraction of
 * comparing layouts.                                                    */
static inline deso__view *slot_view(deso__replay *T, tslot *t,
                                    deso__value *v)
{
    const tslot *o = t->src >= 0 ? &T->slot[t->src] : t;
    for (deso__view *w = v->views; w != NULL; w = w->next)
        if ((w == t->w && w->serial == t->serial) ||
            (w == o->out && w->serial == o->out_serial))
            return w;
    return slot_find(T, t, v);
}

/* The local steps: every live-in slot bound to its value's view of its
 * layout now, and every value the program may write over referenced by
 * the replay alone and holding no user's array.  False: the calls are
 * recorded instead.                                                     */
static bool bind(deso__replay *T)
{
    for (int k = 0; k < T->nlive; k++) {
        tslot *t = &T->slot[T->live[k]];
        deso__view *w = slot_view(T, t, t->h >= 0 ? T->start[t->h] : t->cv);
        t->w = w;
        t->serial = w != NULL ? w->serial : 0;
        if (w == NULL || (t->h >= 0 && T->dies[t->h] && w->borrowed))
            return false;
    }
    for (int k = 0; k < T->ndying; k++)
        if (T->start[T->dying[k]]->refs != T->share[k]) return false;
    return true;
}

/* Fused group f, whose last member is i, in T->grp; its size.          */
static int group(deso__replay *T, const int *fuse, int f, int i)
{
    int k = 0;
    for (int j = f; j <= i; j++)
        if (fuse[j] == f) T->grp[k++] = &T->fz[j];
    return k;
}

/* A run or post step on the executor's path (run.c's run_step, on the
 * slots), counted in the performance log around its run.              */
static deso_err run_node(deso_ctx *ctx, trun *R, tstep *st)
{
    deso__replay *T = R->T;
    int i = st->node, f = R->plan->fuse[i];
    if (R->npend > 0) deso__stats_overlap();
    deso__pend *pd = NULL;
    if (st->kind == DESO__POST) {
        int slot = (R->pfirst + R->npend) % DESO__INFLIGHT;
        pd = &R->pend[slot];
        memset(pd, 0, sizeof *pd);
        pd->node = i;
        pd->red = ctx->scratch + (1 + slot) * ctx->scratch_len;
    }
    ctx->defer = f >= 0 ? &T->fz[i] : NULL;
    ctx->post = f < 0 ? pd : NULL;
    deso__log_mark mark;
    deso__log_begin(ctx, &T->tnd[i], &mark);
    deso_err err = deso__replay_body(ctx, T, st, &R->plan->node[i]);
    deso__log_end(&T->tnd[i], &mark);
    ctx->defer = NULL;
    ctx->post = NULL;
    if (err != DESO_OK) return err;
    if (f < 0) {
        if (pd != NULL) R->npend++;
        return DESO_OK;
    }
    if (T->glast[f] != i) return DESO_OK;
    int k = group(T, R->plan->fuse, f, i);
    if (pd == NULL) return deso__exec_fused(ctx, T->grp, k);
    R->npend++;
    return deso__exec_fused_post(ctx, T->grp, k, pd);
}

static deso_err wait_node(deso_ctx *ctx, trun *R, int i)
{
    deso__pend *pd = &R->pend[R->pfirst];
    DESO_CHECK(R->npend > 0 && pd->node == i, DESO_EINTERNAL,
               "replay: node %d's reduction waited for out of order", i);
    R->pfirst = (R->pfirst + 1) % DESO__INFLIGHT;
    R->npend--;
    int f = R->plan->fuse[i];
    int k = f >= 0 ? group(R->T, R->plan->fuse, f, i) : 0;
    return deso__exec_wait(ctx, pd, R->T->grp, k);
}

/* Step s that is not known to be flat: a wait, or a run on the
 * executor's path, or, once its facts are learnt at its first run, a
 * flat step's (replay_step.c).                                          */
static deso_err run_step(deso_ctx *ctx, trun *R, int s)
{
    tstep *st = &R->T->step[s];
    if (st->kind == DESO__WAIT) return wait_node(ctx, R, st->node);
    if (!st->known)
        deso__replay_learn(ctx, R->T, st, &R->plan->node[st->node]);
    if (!st->flat) return run_node(ctx, R, st);
    deso__replay_flat(ctx, R->T, s, s + 1, R->npend > 0);
    return DESO_OK;
}

static deso_err run_prog(deso_ctx *ctx, trun *R)
{
    deso__replay *T = R->T;
    deso_err err = DESO_OK;
    int ran = 0;                        /* steps run whole                 */
    while (ran < T->nsteps) {
        if (R->checking && ran == T->quiet) {
            R->checking = false;
            err = R->verdict = deso__check_finish(ctx, &R->check);
            if (err != DESO_OK) break;
        }
        /* (while checking, ran < quiet: the agreement is finished there) */
        int end = R->checking ? T->quiet : T->nsteps;
        int next = deso__replay_flat(ctx, T, ran, end, R->npend > 0);
        if (next > ran) {
            ran = next;
            continue;
        }
        err = run_step(ctx, R, ran);
        if (err != DESO_OK) break;
        ran++;
    }
    deso__replay_count(T, ran);
    if (R->checking) {                  /* every step was quiet, or failed */
        R->checking = false;
        R->verdict = deso__check_finish(ctx, &R->check);
        if (err == DESO_OK) err = R->verdict;
    }
    for (; R->npend > 0; R->npend--) {  /* after a failure               */
        (void)deso__coll_wait(&R->pend[R->pfirst].coll);
        R->pfirst = (R->pfirst + 1) % DESO__INFLIGHT;
    }
    return err;
}

static void unlink_view(deso__value *v, deso__view *w)
{
    for (deso__view **pp = &v->views; *pp != NULL; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            w->next = NULL;
            return;
        }
}

/* The live-out values' views to their placeholders (taken from the dead
 * start values where the program wrote over them), and the temporary
 * slots that left replaced by dead live-in views.                       */
static void commit(deso__replay *T)
{
    for (int r = 0; r < T->nrepl; r++) {
        const tslot *d = &T->slot[T->repl[r][1]];
        unlink_view(T->start[d->h], d->w);
    }
    for (int f = 0; f < T->nfinal; f++) {
        const tfinal *x = &T->final[f];
        deso__value *P = T->ph[x->call];
        deso__view **tail = &P->views;
        for (int l = 0; l < x->n; l++) {
            tslot *s = &T->slot[x->slot[l]];
            s->out = s->w;
            s->out_serial = s->w->serial;
            if (!s->temp) unlink_view(T->start[s->h], s->w);
            *tail = s->w;
            tail = &s->w->next;
        }
        *tail = NULL;
        P->ready = true;
    }
    for (int r = 0; r < T->nrepl; r++)
        T->slot[T->repl[r][0]].w = T->slot[T->repl[r][1]].w;
}

/* The next iteration starts from the values the handles hold now.      */
static void restart(const deso_ctx *ctx, deso__replay *T)
{
    /* (a handle holds its value, so an old start value let go here is
     * never a new one's last reference; a handle whose value did not
     * change, such as the matrix's, costs no reference taken and given) */
    for (int h = 0; h < T->nh; h++) {
        deso__value *v = T->hd[h]->val, *old = T->start[h];
        T->cur[h] = v;
        if (v == old) continue;
        T->start[h] = v;
        deso__value_ref(v);
        deso__value_unref(old);
    }
    for (int i = 0; i < T->ncalls; i++) {
        deso__value_unref(T->ph[i]);
        T->ph[i] = NULL;
    }
    T->pos = 0;
    /* after a set-up, handles the iteration writes may have started
     * apart (r.r's old and new value) that one iteration leaves sharing
     * a value; its references then are every later iteration's          */
    if (T->restudy) deso__replay_deaths(ctx, T);
    T->restudy = false;
}

/* A failed force: what the iteration made is poisoned, the replay goes,
 * and after a failed agreement every rank restarts from the same state
 * (as force.c's disagreed).                                             */
static deso_err failed(deso_ctx *ctx, deso__replay *T, deso_err err,
                       bool agreed)
{
    for (int h = 0; h < T->nh; h++)
        if (T->hd[h]->val != T->start[h]) T->hd[h]->val->poison = err;
    deso__replay_disarm(ctx);
    deso__replay_after_force(ctx, NULL, err);
    if (!agreed) {
        opt_cache_clear(ctx->cache);
        deso__compiled_clear(ctx);
        deso__consts_clear(ctx);
        ctx->hash = 0;
    }
    return err;
}

static void ran(deso_ctx *ctx, deso__compiled *c)
{
    ctx->flushes++;
    ctx->ran_model = c->plan.model;
    deso__stats_plan(0);
    deso__stats_replay(false);
    c->used = ++ctx->compile_clock;
    c->runs++;
    opt_cache_entry *e = opt_cache_find(ctx->cache, c->key, c->check);
    if (e != NULL) e->hits++;
    deso__replay_logged(ctx, ctx->rp);
    deso__replay_after_force(ctx, c, DESO_OK);
}

deso_err deso__replay_force(deso_ctx *ctx, deso_err before, bool *done)
{
    deso__replay *T = ctx->rp;
    *done = false;
    if (T->pos == 0 && ctx->head == NULL) return DESO_OK; /* nothing new */
    if (before != DESO_OK || T->pos != T->ncalls)
        return deso__replay_break(ctx);
    if (!bind(T)) return deso__replay_record(ctx);
    *done = true;
    ctx->forcing = true;
    trun R;                             /* (pend is set when used)     */
    R.T = T;
    R.plan = &T->c->plan;
    R.checking = false;
    R.verdict = DESO_OK;
    R.pfirst = R.npend = 0;
    if (T->fused) memset(T->fz, 0, (size_t)T->nnodes * sizeof *T->fz);
    deso_err err;
    if (T->quiet > 0 && ctx->size > 1) {
        err = deso__check_start(ctx, ctx->hash, DESO_OK, &R.check);
        R.checking = err == DESO_OK;
    } else {
        err = deso__force_agree(ctx, ctx->hash, DESO_OK);
    }
    bool agreed = err == DESO_OK;
    if (agreed) err = run_prog(ctx, &R);
    ctx->forcing = false;
    if (err != DESO_OK)
        return failed(ctx, T, err, agreed && R.verdict == DESO_OK);
    commit(T);
    deso__compiled *c = T->c;
    ran(ctx, c);
    restart(ctx, T);
    /* due to be planned again: the next iteration is recorded and
     * matched (compiled.c), the same on every rank                       */
    if (deso__compiled_due(c)) deso__replay_disarm(ctx);
    return DESO_OK;
}
