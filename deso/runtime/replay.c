/* Traces (replay.h): the call logs, arming, replaying a call, and breaking
 * a replay back into ordinary recording.                                 */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/replay_prog.h"
#include "placement/alloc.h"

static inline bool desc_equal(const blas_desc *a, const blas_desc *b)
{
    return a->op == b->op && a->flags == b->flags && a->off == b->off &&
           a->inc == b->inc && a->len == b->len && a->rows == b->rows &&
           a->ld == b->ld && a->sp == b->sp;
}

static bool call_equal(const deso__rcall *a, const deso__rcall *b)
{
    if (a->alias != b->alias || a->sp != b->sp ||
        a->nops != b->nops || a->out != b->out ||
        a->shape[0] != b->shape[0] || a->shape[1] != b->shape[1] ||
        (!a->alias && !desc_equal(&a->d, &b->d)))
        return false;
    for (int k = 0; k < a->nops; k++)
        if (a->ids[k] != b->ids[k] || a->cv[k] != b->cv[k]) return false;
    return true;
}

static deso__rcall *log_next(deso_ctx *ctx)
{
    deso__rlog *L = &ctx->rlog[ctx->rlog_cur];
    if (!ctx->replay) return NULL;      /* nothing will be armed          */
    if (L->n == DESO__REPLAY_CALLS) {
        L->over = true;
        return NULL;
    }
    if (L->from != NULL) {              /* calls after a parked replay's   */
        memcpy(L->c, L->from->call, (size_t)L->n * sizeof *L->c);
        L->from = NULL;
    }
    return &L->c[L->n++];
}

void deso__replay_log(deso_ctx *ctx, const blas_desc *d, deso__value **ops,
                     const uint64_t *ids, const deso__handle *out,
                     const int64_t *shape, deso__spmat_data *sp)
{
    deso__rcall *c = log_next(ctx);
    if (c == NULL) return;
    c->d = *d;
    c->shape[0] = shape[0];
    c->shape[1] = shape[1];
    c->alias = false;
    c->sp = sp;
    c->nops = blas_desc_nops(d->op, d->flags);
    for (int k = 0; k < c->nops; k++) {
        c->ids[k] = ids[k];
        c->cv[k] = ids[k] == 0 ? ops[k] : NULL;
    }
    c->out = out->id;
}

void deso__replay_log_alias(deso_ctx *ctx, deso__value *v, uint64_t id,
                           const deso__handle *out)
{
    deso__rcall *c = log_next(ctx);
    if (c == NULL) return;
    memset(c, 0, sizeof *c);
    c->alias = true;
    c->nops = 1;
    c->ids[0] = id;
    c->cv[0] = id == 0 ? v : NULL;
    c->out = out->id;
}

/* A log's calls (its own, or those of the replay it names).             */
static const deso__rcall *log_calls(const deso__rlog *L)
{
    return L->from != NULL ? L->from->call : L->c;
}

/* ---- arming -------------------------------------------------------------- */

/* The live handle with id `id` (not a view), or NULL.                    */
static deso__handle *handle_by_id(deso_ctx *ctx, uint64_t id)
{
    for (deso__handle *h = ctx->handles; h != NULL; h = h->next)
        if (h->id == id)
            return h->magic == DESO__MAGIC_LIVE && h->parent == NULL &&
                           h->val != NULL && h->sp == NULL
                       ? h
                       : NULL;
    return NULL;
}

/* T's index of the handle with id `id`, added when new; -1: none.        */
static int handle_index(deso_ctx *ctx, deso__replay *T, uint64_t id)
{
    for (int h = 0; h < T->nh; h++)
        if (T->hd[h]->id == id) return h;
    deso__handle *p = handle_by_id(ctx, id);
    if (p == NULL || T->nh == REPLAY_HANDLES) return -1;
    T->hd[T->nh] = p;
    T->start[T->nh] = T->cur[T->nh] = p->val;
    deso__value_ref(p->val);
    return T->nh++;
}

/* The matrix of a sparse product a call names, when a live handle still
 * holds it (the log keeps no reference: a matrix destroyed since may
 * have gone) and its products' placement is settled; referenced.        */
static bool take_matrix(const deso_ctx *ctx, deso__replay *T,
                        deso__spmat_data *sp)
{
    bool live = false;
    for (const deso__handle *h = ctx->handles; h != NULL && !live; h = h->next)
        live = h->magic == DESO__MAGIC_LIVE && h->sp != NULL &&
               (h->sp == sp || h->sp->placed == sp);
    if (!live || !sp->placement_chosen) return false;
    for (int k = 0; k < T->nmats; k++)
        if (T->mats[k] == sp) return true;
    sp->refs++;
    T->mats[T->nmats++] = sp;
    return true;
}

/* A constant a call names: one of the context's kept ones, referenced.   */
static bool take_const(const deso_ctx *ctx, deso__replay *T, deso__value *v)
{
    bool kept = false;
    for (int k = 0; k < ctx->nconsts && !kept; k++) kept = ctx->consts[k].v == v;
    if (!kept) return false;
    for (int k = 0; k < T->ncons; k++)
        if (T->cons[k] == v) return true;
    deso__value_ref(v);
    T->cons[T->ncons++] = v;
    return true;
}

/* Which start values die (every handle holding one is written in the
 * iteration, and it is no kept constant), each once with how many of T's
 * handles hold it, and the first handle holding each handle's.          */
void deso__replay_deaths(const deso_ctx *ctx, deso__replay *T)
{
    bool written[REPLAY_HANDLES] = {false};
    for (int i = 0; i < T->ncalls; i++)
        written[T->ch[i][T->call[i].nops]] = true;
    T->ndying = 0;
    for (int h = 0; h < T->nh; h++) {
        T->dies[h] = true;
        for (int k = 0; k < ctx->nconsts; k++)
            if (ctx->consts[k].v == T->start[h]) T->dies[h] = false;
        int first = h, share = 0;
        for (int j = 0; j < T->nh; j++) {
            if (T->start[j] != T->start[h]) continue;
            if (!written[j]) T->dies[h] = false;
            if (j < first) first = j;
            share++;
        }
        T->alias[h] = first;
        if (T->dies[h] && first == h) {
            T->dying[T->ndying] = h;
            T->share[T->ndying++] = share;
        }
    }
}

/* Call i as deso__replay_quick compares it.                            */
static void quick_facts(deso__replay *T, int i)
{
    const deso__rcall *c = &T->call[i];
    tquick *q = &T->quick[i];
    bool plain = !c->alias && c->sp == NULL && c->d.sp == NULL &&
                 c->d.off == 0 && c->d.inc == 0 && c->d.len == 0 &&
                 c->d.rows == 0 && c->d.ld == 0;
    q->key = plain ? (uint64_t)c->d.op << 32 | c->d.flags : UINT64_MAX;
    q->m = c->shape[0];
    q->n = c->shape[1];
    q->nops = c->nops;
    q->out = T->hd[T->ch[i][c->nops]];
    q->res = &T->cur[T->ch[i][c->nops]];
    for (int k = 0; k < c->nops; k++) {
        q->id[k] = c->ids[k];
        q->want[k] = T->ch[i][k] >= 0 ? &T->cur[T->ch[i][k]] : &c->cv[k];
    }
}

/* Every call's handles by index, which start values die, and the calls'
 * hashes.                                                               */
static bool resolve(deso_ctx *ctx, deso__replay *T)
{
    for (int i = 0; i < T->ncalls; i++) {
        const deso__rcall *c = &T->call[i];
        if (c->sp != NULL && !take_matrix(ctx, T, c->sp)) return false;
        for (int k = 0; k < c->nops; k++) {
            T->ch[i][k] = c->ids[k] ? handle_index(ctx, T, c->ids[k]) : -1;
            if (c->ids[k] ? T->ch[i][k] < 0 : !take_const(ctx, T, c->cv[k]))
                return false;
        }
        int o = handle_index(ctx, T, c->out);
        if (o < 0) return false;
        T->ch[i][c->nops] = o;
    }
    deso__replay_deaths(ctx, T);
    for (int i = 0; i < T->ncalls; i++) {
        const deso__rcall *c = &T->call[i];
        quick_facts(T, i);
        if (!c->alias) T->rkind[i] = blas_desc_result(&c->d);
        if (!c->alias)
            T->chash[i] = deso__call_hash(&c->d, c->shape, c->ids, c->nops,
                                          c->sp != NULL ? c->sp->id : 0,
                                          c->out);
    }
    return true;
}

/* The logs naming T get their own copies of its calls: T goes.        */
static void detach_logs(deso_ctx *ctx, const deso__replay *T)
{
    for (int k = 0; k < 2; k++) {
        deso__rlog *L = &ctx->rlog[k];
        if (L->from != T) continue;
        memcpy(L->c, T->call, (size_t)L->n * sizeof *L->c);
        L->from = NULL;
    }
}

static void release(deso_ctx *ctx, deso__replay *T)
{
    detach_logs(ctx, T);
    for (int i = 0; i < T->ncalls; i++) deso__value_unref(T->ph[i]);
    for (int h = 0; h < T->nh; h++) deso__value_unref(T->start[h]);
    for (int k = 0; k < T->ncons; k++) deso__value_unref(T->cons[k]);
    for (int k = 0; k < T->nmats; k++) deso__spmat_data_free(T->mats[k]);
    deso__replay_free_prog(T);
    free(T);
}

static void arm(deso_ctx *ctx, deso__compiled *c, const deso__rlog *L)
{
    /* a force with a node no replay runs is looked at once: trying again
     * at every force would cost an iteration more than recording it     */
    if (c->replayable == 0)
        c->replayable = deso__replay_nodes_ok(&c->g) ? 1 : -1;
    if (c->replayable < 0) return;
    deso__replay *T = deso__calloc(1, sizeof *T);
    if (T == NULL) return;
    T->c = c;
    T->ncalls = L->n;
    memcpy(T->call, log_calls(L), (size_t)L->n * sizeof *L->c);
    if (!resolve(ctx, T) || !deso__replay_compile(ctx, T)) {
        release(ctx, T);
        return;
    }
    ctx->rp = T;
}

static bool logs_equal(const deso__rlog *a, const deso__rlog *b)
{
    if (a->over || b->over || a->n != b->n || a->n == 0) return false;
    const deso__rcall *ca = log_calls(a), *cb = log_calls(b);
    for (int i = 0; i < a->n; i++)
        if (!call_equal(&ca[i], &cb[i])) return false;
    return true;
}

/* ---- parking ------------------------------------------------------------- */

/* A replay whose first expected call is not the one made (a solver's
 * set-up before its next solve, a check between two iterations) has
 * taken nothing; one whose force found the handles' values unfit (the
 * first iteration after a set-up, when a value the program would update
 * in place is still referenced elsewhere) had its calls recorded.
 * Instead of being freed, either is parked, its start values and
 * placeholders let go, and armed again from the handles' values after
 * the next force that ran without it: the next iteration then replays,
 * instead of two being recorded and the program compiled again.        */
static void drop_parked(deso_ctx *ctx)
{
    deso__replay *T = ctx->parked;
    ctx->parked = NULL;
    if (T != NULL) release(ctx, T);
}

static void park(deso_ctx *ctx)
{
    deso__replay *T = ctx->rp;
    ctx->rp = NULL;
    for (int i = 0; i < T->pos; i++) {
        deso__value_unref(T->ph[i]);
        T->ph[i] = NULL;
    }
    T->pos = 0;
    for (int h = 0; h < T->nh; h++) {
        deso__value_unref(T->start[h]);
        T->start[h] = T->cur[h] = NULL;
    }
    drop_parked(ctx);
    ctx->parked = T;
}

/* Which handles the iteration reads before writing them: the program
 * reads their start values.                                             */
static void start_reads(const deso__replay *T, bool *read)
{
    bool written[REPLAY_HANDLES] = {false};
    for (int i = 0; i < T->ncalls; i++) {
        int nops = T->call[i].nops;
        for (int k = 0; k < nops; k++) {
            int h = T->ch[i][k];
            if (h >= 0 && !written[h]) read[h] = true;
        }
        written[T->ch[i][nops]] = true;
    }
}

/* The program was compiled for the values the handles held at arming:
 * handles it reads holding one value held one then too, and a value it
 * reads that died then (its views free for reuse) dies now.  Parked
 * across another force, the handles may hold values related otherwise
 * (a set-up that gave a handle a kept constant): then it is dropped.    */
static void unpark(deso_ctx *ctx)
{
    deso__replay *T = ctx->parked;
    ctx->parked = NULL;
    bool dies[REPLAY_HANDLES], read[REPLAY_HANDLES] = {false}, same = true;
    int alias[REPLAY_HANDLES];
    memcpy(dies, T->dies, sizeof dies);
    memcpy(alias, T->alias, sizeof alias);
    for (int h = 0; h < T->nh; h++) {
        T->start[h] = T->cur[h] = T->hd[h]->val;
        deso__value_ref(T->start[h]);
    }
    deso__replay_deaths(ctx, T);
    start_reads(T, read);
    for (int h = 0; h < T->nh; h++)
        for (int j = 0; j < T->nh && read[h]; j++)
            same = same && dies[h] == T->dies[h] &&
                   (!read[j] || (alias[h] == alias[j]) ==
                                    (T->alias[h] == T->alias[j]));
    if (!same) {
        release(ctx, T);
        return;
    }
    T->restudy = true;
    ctx->rp = T;
}

/* The replay goes at a call that is not the next expected one.          */
static bool give_up(deso_ctx *ctx)
{
    if (ctx->rp->pos == 0) park(ctx);
    else deso__replay_break(ctx);
    return false;
}

void deso__replay_after_force(deso_ctx *ctx, deso__compiled *c, deso_err err)
{
    deso__rlog *L = &ctx->rlog[ctx->rlog_cur];
    bool ran = err == DESO_OK && c != NULL && !ctx->record_force;
    if (ctx->parked != NULL && ctx->rp == NULL && err == DESO_OK) unpark(ctx);
    else if (err != DESO_OK) drop_parked(ctx);
    if (ran && c == ctx->replay_prev && ctx->replay && ctx->rp == NULL &&
        logs_equal(L, &ctx->rlog[1 - ctx->rlog_cur]))
        arm(ctx, c, L);
    ctx->replay_prev = ran ? c : NULL;
    ctx->rlog_cur = 1 - ctx->rlog_cur;
    ctx->rlog[ctx->rlog_cur].n = 0;
    ctx->rlog[ctx->rlog_cur].over = false;
    ctx->rlog[ctx->rlog_cur].from = NULL;
}

/* ---- replaying ----------------------------------------------------------- */

static bool operands_match(const deso__replay *T, int i, deso__value **ops,
                           const uint64_t *ids)
{
    const deso__rcall *c = &T->call[i];
    for (int k = 0; k < c->nops; k++) {
        int h = T->ch[i][k];
        if (ids[k] != c->ids[k] || ops[k]->poison != DESO_OK ||
            ops[k] != (h >= 0 ? T->cur[h] : c->cv[k]))
            return false;
    }
    return true;
}

/* Call i taken: its result handle moves to a fresh placeholder and the
 * call's hash (precomputed at arming) is mixed in.                      */
static inline bool take_call(deso_ctx *ctx, deso__replay *T,
                             deso__handle *out)
{
    int i = T->pos;
    const tquick *q = &T->quick[i];
    deso__value *P = deso__value_new(T->rkind[i], q->m, q->n);
    if (P == NULL) return false;
    P->refs = 2;                        /* the replay's and the handle's   */
    P->hid = out->id;
    T->ph[i] = P;
    deso__value_unref(out->val);
    out->val = P;
    *q->res = P;
    deso__hash_mix(ctx, T->chash[i]);
    T->pos++;
    return true;
}

bool deso__replay_call(deso_ctx *ctx, const blas_desc *d, deso__value **ops,
                      const uint64_t *ids, deso__handle *out,
                      const int64_t *shape, const deso__spmat_data *sp)
{
    deso__replay *T = ctx->rp;
    int i = T->pos;
    const deso__rcall *c = &T->call[i < T->ncalls ? i : 0];
    if (i < T->ncalls && sp == c->sp && !c->alias && desc_equal(&c->d, d) &&
        c->shape[0] == shape[0] && c->shape[1] == shape[1] &&
        out->id == c->out && out == T->hd[T->ch[i][c->nops]] &&
        operands_match(T, i, ops, ids) && take_call(ctx, T, out))
        return true;
    return give_up(ctx);
}

bool deso__replay_quick(deso_ctx *ctx, blas_op op, unsigned flags,
                        deso__value **ops, const uint64_t *ids,
                        deso__handle *out, int64_t m, int64_t n)
{
    deso__replay *T = ctx->rp;
    if (T->pos >= T->ncalls) return false;
    const tquick *q = &T->quick[T->pos];
    if (q->key != ((uint64_t)op << 32 | flags) || q->m != m || q->n != n ||
        q->out != out)
        return false;
    for (int k = 0; k < q->nops; k++)
        if (ids[k] != q->id[k] || ops[k] != *q->want[k]) return false;
    return take_call(ctx, T, out);
}

bool deso__replay_alias(deso_ctx *ctx, deso__value *v, uint64_t id,
                       deso__handle *out)
{
    deso__replay *T = ctx->rp;
    int i = T->pos;
    const deso__rcall *c = &T->call[i < T->ncalls ? i : 0];
    if (!(i < T->ncalls && c->alias && c->ids[0] == id &&
          v == (id ? T->cur[T->ch[i][0]] : c->cv[0]) && out->id == c->out &&
          out == T->hd[T->ch[i][1]]))
        return give_up(ctx);
    deso__value_ref(v);
    deso__value_unref(out->val);
    out->val = v;
    T->cur[T->ch[i][1]] = v;
    deso__hash_alias(ctx, id, out->id);
    T->pos++;
    return true;
}

void deso__replay_logged(deso_ctx *ctx, const deso__replay *T)
{
    deso__rlog *L = &ctx->rlog[ctx->rlog_cur];
    L->n = T->pos;
    L->over = false;
    L->from = T;
}

/* ---- breaking ------------------------------------------------------------ */

/* The replayed calls again, as ordinary nodes into their placeholders
 * (already hashed and logged).                                          */
static deso_err make_nodes(deso_ctx *ctx, deso__replay *T)
{
    uint64_t hash = ctx->hash;
    deso_err err = DESO_OK;
    for (int h = 0; h < T->nh; h++) T->cur[h] = T->start[h];
    for (int i = 0; i < T->pos; i++) {
        const deso__rcall *c = &T->call[i];
        deso__value *ops[BLAS_MAXOPS];
        for (int k = 0; k < c->nops; k++)
            ops[k] = T->ch[i][k] >= 0 ? T->cur[T->ch[i][k]] : c->cv[k];
        int o = T->ch[i][c->nops];
        deso__handle *out = T->hd[o];
        if (c->alias) {
            deso__value_ref(ops[0]);
            deso__value_unref(out->val);
            out->val = ops[0];
            T->cur[o] = ops[0];
            continue;
        }
        if (err == DESO_OK)
            err = deso__record_node(ctx, &c->d, ops, c->ids, out, c->shape,
                                    c->sp, T->ph[i]);
        if (err != DESO_OK) T->ph[i]->poison = err;
        T->cur[o] = T->ph[i];
    }
    ctx->hash = hash;
    return err;
}

deso_err deso__replay_break(deso_ctx *ctx)
{
    deso__replay *T = ctx->rp;
    if (T == NULL) return DESO_OK;
    ctx->rp = NULL;                     /* the nodes are recorded plainly */
    deso_err err = T->pos > 0 ? make_nodes(ctx, T) : DESO_OK;
    deso__replay_logged(ctx, T);
    deso__stats_replay(true);
    release(ctx, T);
    return err;
}

deso_err deso__replay_record(deso_ctx *ctx)
{
    deso__replay *T = ctx->rp;
    ctx->rp = NULL;
    deso_err err = make_nodes(ctx, T);
    deso__replay_logged(ctx, T);
    deso__stats_replay(true);
    ctx->rp = T;
    park(ctx);
    return err;
}

int64_t deso__replay_pending(const deso_ctx *ctx)
{
    const deso__replay *T = ctx->rp;
    int64_t n = 0;
    for (int i = 0; T != NULL && i < T->pos; i++) n += !T->call[i].alias;
    return n;
}

void deso__replay_disarm(deso_ctx *ctx)
{
    deso__replay *T = ctx->rp;
    drop_parked(ctx);
    if (T == NULL) return;
    ctx->rp = NULL;
    release(ctx, T);
}

static void touch_plans(deso_ctx *ctx, const deso__replay *T)
{
    for (int s = 0; T != NULL && T->slot != NULL && s < T->nsteps; s++) {
        const tstep *st = &T->step[s];
        for (int f = 0; f < st->nfill; f++)
            deso__exchange_touch(ctx, st->fkind[f], &T->slot[st->fsrc[f]].lay,
                                 &T->slot[st->fdst[f]].lay);
    }
}

void deso__replay_touch_plans(deso_ctx *ctx)
{
    touch_plans(ctx, ctx->rp);
    touch_plans(ctx, ctx->parked);
}

void deso__replay_forget(deso_ctx *ctx, const deso__compiled *c)
{
    if (ctx->parked != NULL && ctx->parked->c == c) drop_parked(ctx);
    if (ctx->rp != NULL && ctx->rp->c == c) {
        deso__replay *T = ctx->rp;
        ctx->rp = NULL;
        release(ctx, T);
    }
}

static bool names(const deso__replay *T, const deso__handle *h)
{
    for (int k = 0; T != NULL && k < T->nh; k++)
        if (T->hd[k] == h) return true;
    return false;
}

void deso__replay_handle_gone(deso_ctx *ctx, const deso__handle *h)
{
    if (names(ctx->parked, h)) drop_parked(ctx);
    if (names(ctx->rp, h)) deso__replay_break(ctx);
}
