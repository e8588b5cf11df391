/* The order a force's nodes run in: a topological order of its DAG that
 * hides reductions' latency behind independent work.
 *
 * A node that reduces across ranks (or a fused group's last member) is
 * *posted*: its kernel runs and its collective starts without waiting.
 * Its result is ready only after a wait step.  The order is a list
 * schedule: among the nodes whose inputs are ready, the one that leads
 * soonest to a posted reduction runs first (key: the first posted node,
 * in recording order, that depends on it), ties in recording order; when
 * no node is ready, the oldest reduction in flight is waited for.  So a
 * reduction starts as soon as its inputs are ready, nodes that need no
 * reduction in flight run while one is (CG's x += alpha p under r.r), and
 * a wait comes only where nothing can run without it.  At most
 * DESO__INFLIGHT reductions are in flight (the oldest is waited for
 * before another is posted), each waited for in posting order.
 *
 * Edges: a node reads the values its operands' producers make (a fused
 * member's result is ready with its group's, at the last member); a fused
 * group's last member follows its other members; nodes that communicate
 * by themselves or call user code (views, user operators, sparse
 * products, the triangular solve, streamed matrices) keep their recording
 * order among themselves.  Everything depends on the DAG and the plan
 * only, so every rank posts its collectives in the same order.          */
#include <limits.h>
#include <stdlib.h>

#include "deso/runtime/runtime.h"
#include "placement/alloc.h"

#define NO_POST INT_MAX

typedef struct sched {
    const opt_plan *plan;
    deso__node *const *nodes;
    int n;
    int *glast;      /* per group: its last member                         */
    bool *posts;     /* per node                                           */
    int *key;        /* per node: the first posted node that depends on it */
    int *unmet;      /* per node: its inputs not ready yet                 */
    int *start;      /* n + 1: node i's consumers are cons[start[i]..]     */
    int *cons;
    int *heap, nheap;
    int fly[DESO__INFLIGHT], f0, nfly;
    deso__step *out;
    int nout;
} sched;

/* A node that must keep its recording order among its kind.             */
static bool ordered(const deso__node *nd)
{
    if (blas_op_get(nd->d.op)->distributed || nd->res->ooc) return true;
    for (int k = 0; k < nd->d.nops; k++)
        if (nd->ops[k]->ooc) return true;
    return false;
}

/* The nodes node i waits for (one entry per edge; at most BLAS_MAXOPS +
 * 1), not counting a group's members before its last one (edges() adds
 * a member's edge to its last one).                                     */
static int deps_of(const sched *s, int i, const int *prod, int last_ordered,
                   int *dep)
{
    const deso__node *nd = s->nodes[i];
    int nd_deps = 0;
    for (int k = 0; k < nd->d.nops; k++) {
        int d = prod[nd->ops[k]->gid];
        if (d < 0) continue;                       /* live-in              */
        int f = s->plan->fuse[d];
        dep[nd_deps++] = f >= 0 ? s->glast[f] : d;
    }
    if (last_ordered >= 0 && ordered(nd)) dep[nd_deps++] = last_ordered;
    return nd_deps;
}

/* Consumers as lists (cons, start) and inputs counted (unmet): each edge
 * once to count, once to fill.                                          */
static void edges(sched *s, const int *prod, bool fill)
{
    int n = s->n, last_ordered = -1, dep[BLAS_MAXOPS + 2];
    for (int i = 0; i < n; i++) {
        int nd_deps = deps_of(s, i, prod, last_ordered, dep);
        if (ordered(s->nodes[i])) last_ordered = i;
        int f = s->plan->fuse[i];
        if (f >= 0 && s->glast[f] != i) dep[nd_deps++] = -1 - s->glast[f];
        for (int e = 0; e < nd_deps; e++) {
            /* (a member's edge is to its group's last member: -1 - last) */
            int from = dep[e] >= 0 ? dep[e] : i;
            int to = dep[e] >= 0 ? i : -1 - dep[e];
            if (!fill) {
                s->start[from + 1]++;
                s->unmet[to]++;
            } else {
                s->cons[s->start[from]++] = to;
            }
        }
    }
}

static bool before(const sched *s, int a, int b)
{
    return s->key[a] < s->key[b] || (s->key[a] == s->key[b] && a < b);
}

static void heap_push(sched *s, int i)
{
    int at = s->nheap++;
    while (at > 0 && before(s, i, s->heap[(at - 1) / 2])) {
        s->heap[at] = s->heap[(at - 1) / 2];
        at = (at - 1) / 2;
    }
    s->heap[at] = i;
}

static int heap_pop(sched *s)
{
    int top = s->heap[0], x = s->heap[--s->nheap], at = 0;
    for (;;) {
        int c = 2 * at + 1;
        if (c >= s->nheap) break;
        if (c + 1 < s->nheap && before(s, s->heap[c + 1], s->heap[c])) c++;
        if (!before(s, s->heap[c], x)) break;
        s->heap[at] = s->heap[c];
        at = c;
    }
    if (s->nheap > 0) s->heap[at] = x;
    return top;
}

/* Node i's result is ready: its consumers may become ready.             */
static void release(sched *s, int i)
{
    int from = i > 0 ? s->start[i - 1] : 0;
    for (int e = from; e < s->start[i]; e++)
        if (--s->unmet[s->cons[e]] == 0) heap_push(s, s->cons[e]);
}

static void emit(sched *s, int i, deso__step_kind kind)
{
    s->out[s->nout].node = i;
    s->out[s->nout].kind = kind;
    s->nout++;
}

static void wait_oldest(sched *s)
{
    int i = s->fly[s->f0];
    s->f0 = (s->f0 + 1) % DESO__INFLIGHT;
    s->nfly--;
    emit(s, i, DESO__WAIT);
    release(s, i);
}

/* The list schedule (top of the file) of the prepared edges.            */
static deso_err list_schedule(sched *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->unmet[i] == 0) heap_push(s, i);
    int done = 0;
    while (done < s->n) {
        if (s->nheap == 0) {
            DESO_CHECK(s->nfly > 0, DESO_EINTERNAL,
                       "force: the DAG's schedule is stuck");
            wait_oldest(s);
            continue;
        }
        int i = heap_pop(s);
        done++;
        if (!s->posts[i]) {
            emit(s, i, DESO__RUN);
            release(s, i);
            continue;
        }
        if (s->nfly == DESO__INFLIGHT) wait_oldest(s);
        emit(s, i, DESO__POST);
        s->fly[(s->f0 + s->nfly++) % DESO__INFLIGHT] = i;
    }
    while (s->nfly > 0) wait_oldest(s);
    return DESO_OK;
}

/* Which nodes post, the edges, and each node's key (the first posted node
 * that depends on it: its consumers come later, so one backward sweep). */
static void analyse(sched *s, int *prod, int nvals)
{
    int n = s->n;
    for (int v = 0; v < nvals; v++) prod[v] = -1;
    for (int i = 0; i < n; i++) {
        prod[s->nodes[i]->res->gid] = i;
        int f = s->plan->fuse[i];
        if (f >= 0) s->glast[f] = i;
        s->unmet[i] = 0;
        s->start[i] = 0;
    }
    s->start[n] = 0;
    for (int i = 0; i < n; i++) {
        int f = s->plan->fuse[i];
        const opt_place *pl = &s->plan->node[i];
        s->posts[i] = f >= 0 ? s->glast[f] == i &&
                                   blas_red_dim(&s->nodes[i]->d, pl->req) >= 0
                             : deso__exec_posts(s->nodes[i], pl);
    }
    edges(s, prod, false);
    for (int i = 0; i < n; i++) s->start[i + 1] += s->start[i];
    edges(s, prod, true);           /* start[i] moves to node i's end      */
    for (int i = n - 1; i >= 0; i--) {
        s->key[i] = s->posts[i] ? i : NO_POST;
        int from = i > 0 ? s->start[i - 1] : 0;
        for (int e = from; e < s->start[i]; e++)
            if (s->key[s->cons[e]] < s->key[i]) s->key[i] = s->key[s->cons[e]];
    }
}

deso_err deso__schedule(const opt_plan *plan, deso__node *const *nodes,
                        int n, deso__step *order, int *norder)
{
    *norder = 0;
    if (n == 0) return DESO_OK;
    int nvals = 0;
    for (int i = 0; i < n; i++)
        if (nodes[i]->res->gid + 1 > nvals) nvals = nodes[i]->res->gid + 1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nodes[i]->d.nops; k++)
            if (nodes[i]->ops[k]->gid + 1 > nvals)
                nvals = nodes[i]->ops[k]->gid + 1;
    size_t nedge = (size_t)n * (BLAS_MAXOPS + 2);
    size_t ints = 5 * (size_t)n + 1 + nedge + (size_t)nvals;
    int *mem = deso__malloc(ints * sizeof *mem);
    bool *posts = deso__malloc((size_t)n * sizeof *posts);
    if (mem == NULL || posts == NULL) {
        free(mem);
        free(posts);
        return deso__fail(DESO_ENOMEM, "force: out of memory (schedule)");
    }
    sched s = {.plan = plan, .nodes = nodes, .n = n, .posts = posts,
               .out = order};
    s.glast = mem;
    s.key = s.glast + n;
    s.unmet = s.key + n;
    s.heap = s.unmet + n;
    s.start = s.heap + n;                   /* n + 1                       */
    s.cons = s.start + n + 1;
    int *prod = s.cons + nedge;             /* nvals                       */
    analyse(&s, prod, nvals);
    deso_err err = list_schedule(&s);
    *norder = s.nout;
    free(mem);
    free(posts);
    return err;
}
