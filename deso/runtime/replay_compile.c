/* A replay's program (replay_prog.h), compiled from its compiled force: the
 * executor's walk over the schedule, made once without data.  Each value
 * of the graph gets its views as slots, in the order the executor would
 * list them (the producer's first, each view made for a reader after the
 * first, newest first), so that a fill picks the source the executor
 * picks.  A result takes over its updated operand's slot when the
 * executor would (the node is the operand's last reader and nothing
 * keeps the operand: no handle after the force, no constant); other
 * results and fills get temporary slots, reused once their value is dead.
 * A live-out value's slots go to its placeholder when the force ends; a
 * temporary slot that leaves so takes over, for the next force, the view
 * of a live-in slot whose value dies with the force (same layout).      */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/replay_prog.h"
#include "placement/alloc.h"

typedef struct sim {
    int n;
    int list[REPLAY_LIST];     /* its slots, in the executor's list order    */
    int readers;              /* operands of nodes not freed yet            */
    bool held;                /* kept after the force (a handle, a constant)*/
} sim;

typedef struct comp {
    deso_ctx *ctx;
    deso__replay *T;
    const opt_graph *g;
    const opt_plan *plan;
    sim *v;
    int cap;
    int *pool, npool;         /* free temporary slots                       */
} comp;

/* Whether node i can be replayed: a local kernel, a sparse product (its
 * halo exchange is the executor's, on the matrix's own plan) or a user
 * operator (its callback and the agreement on its outcome are the
 * executor's; operators live as long as the context), on in-core
 * operands.                                                             */
static bool node_ok(const opt_graph *g, int i)
{
    const opt_node *x = &g->nodes[i];
    const blas_op_info *info = blas_op_get(x->d.op);
    bool kernel = info != NULL && info->kernel != NULL &&
                  !info->distributed && x->d.op != BLAS_OP_VGET &&
                  x->d.op != BLAS_OP_VPUT && x->d.sp == 0;
    if (!(kernel || x->d.op == BLAS_OP_USMV || x->d.op == BLAS_OP_USER) ||
        g->vals[x->res].ooc)
        return false;
    for (int k = 0; k < x->d.nops; k++)
        if (g->vals[x->ops[k]].ooc) return false;
    return true;
}

static int new_slot(comp *C, const blas_layout *lay, bool temp)
{
    if (C->T->nslots == C->cap) return -1;
    int s = C->T->nslots++;
    tslot *t = &C->T->slot[s];
    t->lay = *lay;
    t->h = -1;
    t->src = -1;
    t->temp = temp;
    if (temp && deso__view_alloc(C->ctx, lay, &t->w) != DESO_OK) {
        C->T->nslots--;
        return -1;
    }
    return s;
}

static int temp_slot(comp *C, const blas_layout *lay)
{
    for (int k = 0; k < C->npool; k++) {
        int s = C->pool[k];
        if (!blas_layout_equal(&C->T->slot[s].lay, lay)) continue;
        C->pool[k] = C->pool[--C->npool];
        return s;
    }
    return new_slot(C, lay, true);
}

/* The live-in values: one slot per layout the graph says they hold, to
 * be bound, when a force begins, to the value a handle (or a constant)
 * gives the node that reads them first (a value's views are complete
 * only then: reading a scalar after a force adds the view it reads).   */
static bool bind_liveins(comp *C)
{
    const opt_graph *g = C->g;
    deso__replay *T = C->T;
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i].d.nops; k++) {
            int j = g->nodes[i].ops[k], ci = T->node_call[i];
            sim *s = &C->v[j];
            s->readers++;
            if (g->vals[j].producer >= 0 || s->n > 0) continue;
            int h = T->ch[ci][k];
            s->held = h < 0 || !T->dies[h];
            for (int l = 0; l < g->vals[j].nviews; l++) {
                int t = new_slot(C, &g->vals[j].views[l], false);
                if (t < 0) return false;
                T->slot[t].h = h;
                T->slot[t].cv = h >= 0 ? NULL : T->call[ci].cv[k];
                s->list[s->n++] = t;
            }
        }
    return true;
}

/* The views of the start values that die and that no node reads (a
 * result's old version, such as q's before q = A p): slots too, bound
 * like live-in ones, so that their views can replace temporary slots
 * that leave with the force.                                            */
static bool bind_unread(comp *C)
{
    deso__replay *T = C->T;
    for (int h = 0; h < T->nh; h++) {
        bool seen = !T->dies[h];
        for (int s = 0; s < T->nslots && !seen; s++)
            seen = T->slot[s].h >= 0 && T->start[T->slot[s].h] == T->start[h];
        for (const deso__view *w = T->start[h]->views; !seen && w != NULL;
             w = w->next) {
            bool dup = false;
            for (const deso__view *u = T->start[h]->views; u != w; u = u->next)
                dup = dup || blas_layout_equal(&u->lay, &w->lay);
            if (dup) continue;
            int t = new_slot(C, &w->lay, false);
            if (t < 0) return false;
            T->slot[t].h = h;
        }
    }
    return true;
}

/* Operand k of node i in layout `to`: its slot, or a fill of a new one
 * from the source the executor would pick.                              */
static int operand(comp *C, tstep *st, int j, const blas_layout *to)
{
    sim *s = &C->v[j];
    const blas_layout *have[REPLAY_LIST];
    for (int l = 0; l < s->n; l++) {
        have[l] = &C->T->slot[s->list[l]].lay;
        if (blas_layout_equal(have[l], to)) return s->list[l];
    }
    if (s->n == 0 || s->n == REPLAY_LIST) return -1;
    const blas_layout *src =
        deso__exchange_source(C->g->vals[j].kind, have, s->n, to);
    int from = 0;
    while (have[from] != src) from++;
    int t = temp_slot(C, to);
    if (t < 0) return -1;
    st->fkind[st->nfill] = C->g->vals[j].kind;
    st->fsrc[st->nfill] = s->list[from];
    st->fdst[st->nfill++] = t;
    memmove(&s->list[2], &s->list[1], (size_t)(s->n - 1) * sizeof(int));
    s->list[1] = t;
    s->n++;
    return t;
}

/* Node i's references go: its operands' temporary slots are free once
 * nothing reads them any more.                                          */
static void release(comp *C, int i)
{
    const opt_node *x = &C->g->nodes[i];
    for (int k = 0; k < x->d.nops; k++) {
        sim *s = &C->v[x->ops[k]];
        if (--s->readers > 0 || s->held) continue;
        for (int l = 0; l < s->n; l++)
            if (C->T->slot[s->list[l]].temp) C->pool[C->npool++] = s->list[l];
        s->n = 0;
    }
}

/* A node's step: its operands' slots (with fills), its result's slot.   */
static bool node_step(comp *C, tstep *st, int i)
{
    const opt_node *x = &C->g->nodes[i];
    const opt_place *pl = &C->plan->node[i];
    const blas_op_info *info = blas_op_get(x->d.op);
    for (int k = 0; k < x->d.nops; k++)
        if ((st->op[k] = operand(C, st, x->ops[k], &pl->req[k])) < 0)
            return false;
    int io = info->inout >= 0 && info->inout < x->d.nops ? info->inout : -1;
    sim *u = io >= 0 ? &C->v[x->ops[io]] : NULL;
    st->copy = -1;
    st->zero = false;
    if (u != NULL && u->readers == 1 && !u->held &&
        blas_layout_equal(&C->T->slot[st->op[io]].lay, &pl->res)) {
        st->res = st->op[io];                     /* taken over           */
        int l = 0;
        while (u->list[l] != st->res) l++;
        memmove(&u->list[l], &u->list[l + 1],
                (size_t)(u->n - l - 1) * sizeof(int));
        u->n--;
    } else {
        if ((st->res = temp_slot(C, &pl->res)) < 0) return false;
        st->copy = io >= 0 ? st->op[io] : -1;
        /* a sparse product and a dgemv write all of their result (as
         * prepare.c's writes_whole says), which the executor does not
         * zero                                                          */
        st->zero = io < 0 && !deso__op_sets_result(x->d.op);
    }
    sim *r = &C->v[x->res];
    r->n = 1;
    r->list[0] = st->res;
    r->held = C->g->vals[x->res].live_out;
    return true;
}

/* The schedule walked: steps, and the references dropped where the
 * executor drops them (after a run; a posted node's at its wait; a
 * fused group's members' with its collective).                         */
static bool walk(comp *C)
{
    const deso__compiled *c = C->T->c;
    const int *fuse = C->plan->fuse;
    for (int o = 0; o < c->norder; o++) {
        const deso__step *s = &c->order[o];
        tstep *st = &C->T->step[o];
        memset(st, 0, sizeof *st);
        st->kind = s->kind;
        st->node = s->node;
        int i = s->node, f = fuse[i];
        if (s->kind != DESO__WAIT && !node_step(C, st, i)) return false;
        if (s->kind == DESO__POST) continue;
        if (f >= 0 && s->kind == DESO__RUN && C->T->glast[f] != i) continue;
        for (int j = 0; j < C->g->nnodes; j++)
            if (j == i || (f >= 0 && fuse[j] == f)) release(C, j);
    }
    C->T->nsteps = c->norder;
    return true;
}

/* Whether slot s is one of the finals' (they leave with the force).    */
static bool in_finals(const deso__replay *T, int s)
{
    for (int f = 0; f < T->nfinal; f++)
        for (int l = 0; l < T->final[f].n; l++)
            if (T->final[f].slot[l] == s) return true;
    return false;
}

/* The live-out values the nodes made, and for each temporary slot among
 * their slots, a dead live-in slot whose view replaces it.              */
static bool finals(comp *C)
{
    deso__replay *T = C->T;
    for (int j = 0; j < C->g->nvals; j++) {
        const opt_value *x = &C->g->vals[j];
        if (!x->live_out || x->producer < 0) continue;
        tfinal *f = &T->final[T->nfinal++];
        f->call = T->node_call[x->producer];
        f->n = C->v[j].n;
        memcpy(f->slot, C->v[j].list, (size_t)f->n * sizeof(int));
    }
    bool *used = deso__calloc((size_t)T->nslots, sizeof *used);
    if (used == NULL) return false;
    bool ok = true;
    for (int s = 0; ok && s < T->nslots; s++) {
        if (!T->slot[s].temp || !in_finals(T, s)) continue;
        int d = 0;
        for (; d < T->nslots; d++)
            if (!used[d] && !T->slot[d].temp && T->slot[d].h >= 0 &&
                T->dies[T->slot[d].h] && !in_finals(T, d) &&
                blas_layout_equal(&T->slot[d].lay, &T->slot[s].lay))
                break;
        ok = d < T->nslots;
        if (ok) {
            used[d] = true;
            T->repl[T->nrepl][0] = s;
            T->repl[T->nrepl++][1] = d;
        }
    }
    free(used);
    return ok;
}

/* The nodes as the executor's calls see them, and the fused groups.     */
static void templates(comp *C)
{
    deso__replay *T = C->T;
    for (int i = 0; i < C->g->nnodes; i++) {
        const opt_node *x = &C->g->nodes[i];
        deso__node *nd = &T->tnd[i];
        nd->d = x->d;
        nd->sp = T->call[T->node_call[i]].sp;
        nd->work = C->g->vals[x->res].m * C->g->vals[x->res].n;
        for (int k = 0; k < x->d.nops; k++)
            nd->work += C->g->vals[x->ops[k]].m * C->g->vals[x->ops[k]].n;
        if (C->plan->fuse[i] >= 0) T->glast[C->plan->fuse[i]] = i;
        T->fused = T->fused || C->plan->fuse[i] >= 0;
    }
}

bool deso__replay_nodes_ok(const opt_graph *g)
{
    for (int i = 0; i < g->nnodes; i++)
        if (!node_ok(g, i)) return false;
    return true;
}

/* Which call made each node (calls without a node are deso_sset's).    */
static bool node_calls(const opt_graph *g, deso__replay *T)
{
    int i = 0;
    for (int ci = 0; ci < T->ncalls; ci++) {
        if (T->call[ci].alias) continue;
        if (i == g->nnodes || g->nodes[i].d.op != T->call[ci].d.op)
            return false;
        T->node_call[i++] = ci;
    }
    return i == g->nnodes;
}

static bool alloc_prog(comp *C)
{
    deso__replay *T = C->T;
    int n = C->g->nnodes, nv = C->g->nvals;
    C->cap = (nv + T->nh) * OPT_MAXVIEWS + n * (BLAS_MAXOPS + 1) + 1;
    T->nnodes = n;
    T->slot = deso__calloc((size_t)C->cap, sizeof *T->slot);
    T->step = deso__calloc((size_t)T->c->norder + 1, sizeof *T->step);
    T->tnd = deso__calloc((size_t)n, sizeof *T->tnd);
    T->fz = deso__calloc((size_t)n, sizeof *T->fz);
    T->grp = deso__calloc((size_t)n, sizeof *T->grp);
    T->glast = deso__calloc((size_t)n, sizeof *T->glast);
    T->final = deso__calloc((size_t)nv, sizeof *T->final);
    T->repl = deso__calloc((size_t)C->cap, sizeof *T->repl);
    T->live = deso__calloc((size_t)C->cap, sizeof *T->live);
    C->v = deso__calloc((size_t)nv, sizeof *C->v);
    C->pool = deso__calloc((size_t)C->cap, sizeof *C->pool);
    return T->slot && T->step && T->tnd && T->fz && T->grp && T->glast &&
           T->final && T->repl && T->live && C->v && C->pool;
}

bool deso__replay_compile(deso_ctx *ctx, deso__replay *T)
{
    const deso__compiled *c = T->c;
    if (!c->scripted || c->plan.nnodes != c->g.nnodes || c->g.nnodes == 0 ||
        !node_calls(&c->g, T))
        return false;
    comp C = {.ctx = ctx, .T = T, .g = &c->g, .plan = &c->plan};
    bool ok = alloc_prog(&C) && bind_liveins(&C) && bind_unread(&C);
    if (ok) {
        for (int s = 0; s < T->nslots; s++)
            if (!T->slot[s].temp) T->live[T->nlive++] = s;
        templates(&C);
        ok = walk(&C) && finals(&C);
    }
    T->quiet = c->quiet;
    T->tallied = false;
    free(C.v);
    free(C.pool);
    return ok;
}

void deso__replay_free_prog(deso__replay *T)
{
    for (int s = 0; T->slot != NULL && s < T->nslots; s++)
        if (T->slot[s].temp) deso__view_free(T->slot[s].w);
    free(T->slot);
    free(T->step);
    free(T->tnd);
    free(T->fz);
    free(T->grp);
    free(T->glast);
    free(T->final);
    free(T->repl);
    free(T->live);
    T->slot = NULL;
}
