/* Schedules of a P x Q message-length matrix (doc/DESIGN.md, "Schedules",
 * "Caterpillar model" and "Stepwise: the B-trick"):
 *   caterpillar  the baseline: N = max(P, Q) steps, step k pairs p with
 *                q = (p - k) mod N (the shift model that reproduces paper
 *                001's figures);
 *   stepwise     exactly max-degree steps (Konig): each step is a
 *                maximum-weight matching covering every vertex of current
 *                maximum degree (Hungarian + the B-trick);
 *   greedy       least total cost we can find: the cheapest of several
 *                schedules (maximum-weight matchings by length; classes of
 *                equal length coloured apart; stepwise; caterpillar), so it
 *                is never worse than the other two.
 * Stepwise and greedy end with a compaction pass that moves messages into
 * other steps that already pay for them, which never raises a cost.       */
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/pl_arith.h"
#include "placement/remap.h"
#include "placement/remap_impl.h"
#include "placement/alloc.h"

/* Above this many vertices per side the O(n^3)-per-step Hungarian method is
 * too slow to run at plan time; edge colouring takes over.                 */
#define HUNGARIAN_MAX 128

static const char *const names[] = {"caterpillar", "stepwise", "greedy"};

const char *pl_sched_name(pl_sched_kind k)
{
    return ((unsigned)k < 3u) ? names[k] : "?";
}

deso_err pl_sched_parse(const char *name, pl_sched_kind *out)
{
    DESO_CHECK(name && out, DESO_ENULL, "pl_sched_parse: NULL argument");
    for (int k = 0; k < 3; k++) {
        if (strcmp(name, names[k]) == 0) {
            *out = (pl_sched_kind)k;
            return DESO_OK;
        }
    }
    return deso__fail(DESO_EINVAL, "pl_sched_parse: unknown schedule \"%s\" "
                      "(caterpillar, stepwise, greedy)", name);
}

int pl_schedule_min_steps(int P, int Q, const int64_t *len)
{
    int D = 0;
    if (!len || P < 1 || Q < 1) return 0;
    for (int p = 0; p < P; p++) {
        int d = 0;
        for (int q = 0; q < Q; q++) d += len[(int64_t)p * Q + q] > 0;
        if (d > D) D = d;
    }
    for (int q = 0; q < Q; q++) {
        int d = 0;
        for (int p = 0; p < P; p++) d += len[(int64_t)p * Q + q] > 0;
        if (d > D) D = d;
    }
    return D;
}

void pl_schedule_free(pl_schedule *s)
{
    if (!s) return;
    free(s->recv_of);
    free(s->step_cost);
    memset(s, 0, sizeof *s);
}

/* The nonzero entries as edges; step_of[e] is filled by a builder.        */
typedef struct edges {
    int P, Q;
    int64_t n;
    int *p, *q;
    int64_t *w;
} edges;

static void edges_free(edges *E)
{
    free(E->p); free(E->q); free(E->w);
}

static deso_err edges_make(int P, int Q, const int64_t *len, edges *E)
{
    memset(E, 0, sizeof *E);
    E->P = P;
    E->Q = Q;
    int64_t n = 0;
    for (int64_t i = 0; i < (int64_t)P * Q; i++) n += len[i] > 0;
    size_t c = n > 0 ? (size_t)n : 1;
    E->p = deso__malloc(c * sizeof *E->p);
    E->q = deso__malloc(c * sizeof *E->q);
    E->w = deso__malloc(c * sizeof *E->w);
    if (!E->p || !E->q || !E->w) {
        edges_free(E);
        return deso__fail(DESO_ENOMEM, "pl_schedule_build: no memory for "
                          "%lld messages", (long long)n);
    }
    for (int p = 0; p < P; p++)
        for (int q = 0; q < Q; q++) {
            int64_t w = len[(int64_t)p * Q + q];
            if (w > 0) {
                E->p[E->n] = p;
                E->q[E->n] = q;
                E->w[E->n++] = w;
            }
        }
    return DESO_OK;
}

static deso_err nomem(void)
{
    return deso__fail(DESO_ENOMEM, "pl_schedule_build: out of memory");
}

/* Turns an assignment step_of[e] in [0, nsteps) into *out.                */
static deso_err to_schedule(const edges *E, const int *step_of, int nsteps,
                            pl_schedule *out)
{
    memset(out, 0, sizeof *out);
    out->P = E->P;
    out->Q = E->Q;
    out->nsteps = nsteps;
    size_t ns = nsteps > 0 ? (size_t)nsteps : 1;
    out->recv_of = deso__malloc(ns * (size_t)E->P * sizeof *out->recv_of);
    out->step_cost = deso__calloc(ns, sizeof *out->step_cost);
    if (!out->recv_of || !out->step_cost) {
        pl_schedule_free(out);
        return nomem();
    }
    for (int64_t i = 0; i < (int64_t)nsteps * E->P; i++) out->recv_of[i] = -1;
    for (int64_t e = 0; e < E->n; e++) {
        int k = step_of[e];
        out->recv_of[(int64_t)k * E->P + E->p[e]] = E->q[e];
        if (E->w[e] > out->step_cost[k]) out->step_cost[k] = E->w[e];
    }
    for (int k = 0; k < nsteps; k++) out->total_cost += out->step_cost[k];
    out->messages = E->n;
    return DESO_OK;
}

/* The dearest step other than k (steps by increasing cost in order)
 * whose cost covers w and where both ends are free (ap[t * P] and
 * aq[t * Q] < 0), or -1.                                                */
static int covering_step(const int *order, int S, int k, const int64_t *cost,
                         int64_t w, const int64_t *ap, int P,
                         const int64_t *aq, int Q)
{
    for (int oj = S - 1; oj >= 0; oj--) {
        int t = order[oj];
        if (t != k && cost[t] >= w && ap[(int64_t)t * P] < 0 &&
            aq[(int64_t)t * Q] < 0)
            return t;
    }
    return -1;
}

/* New numbers of the S steps: the non-empty ones by decreasing cost,
 * ties in their old order, the empty ones -1; returns how many are kept. */
static int renumber(const int64_t *cost, int S, int *newid)
{
    int kept = 0;
    for (int i = 0; i < S; i++) newid[i] = -1;
    for (;;) {
        int pick = -1;
        for (int i = 0; i < S; i++)
            if (newid[i] < 0 && cost[i] > 0 &&
                (pick < 0 || cost[i] > cost[pick]))
                pick = i;
        if (pick < 0) break;
        newid[pick] = kept++;
    }
    return kept;
}

/* Moves messages into other steps whose cost already covers them and where
 * both ends are free, cheapest steps first, then drops empty steps and
 * orders the rest by decreasing cost (stable).  Never raises a step cost,
 * never adds a step.                                                       */
static deso_err compact(const edges *E, int *step_of, int *nsteps)
{
    int S = *nsteps, P = E->P, Q = E->Q;
    if (S == 0) return DESO_OK;
    int64_t *cost = deso__calloc((size_t)S, sizeof *cost);
    int64_t *atp = deso__malloc((size_t)S * P * sizeof *atp);
    int64_t *atq = deso__malloc((size_t)S * Q * sizeof *atq);
    int *order = deso__malloc((size_t)S * sizeof *order);
    int *newid = deso__malloc((size_t)S * sizeof *newid);
    if (!cost || !atp || !atq || !order || !newid) {
        free(cost); free(atp); free(atq); free(order); free(newid);
        return nomem();
    }
    for (int64_t i = 0; i < (int64_t)S * P; i++) atp[i] = -1;
    for (int64_t i = 0; i < (int64_t)S * Q; i++) atq[i] = -1;
    for (int64_t e = 0; e < E->n; e++) {
        int k = step_of[e];
        atp[(int64_t)k * P + E->p[e]] = e;
        atq[(int64_t)k * Q + E->q[e]] = e;
        if (E->w[e] > cost[k]) cost[k] = E->w[e];
    }
    /* Steps by increasing cost (insertion sort: S is small and stable).   */
    for (int i = 0; i < S; i++) {
        int j = i;
        while (j > 0 && cost[order[j - 1]] > cost[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (int oi = 0; oi < S; oi++) {
        int k = order[oi];
        for (int p = 0; p < P; p++) {
            int64_t e = atp[(int64_t)k * P + p];
            if (e < 0) continue;
            int q = E->q[e];
            int best = covering_step(order, S, k, cost, E->w[e], atp + p, P,
                                     atq + q, Q);
            if (best < 0) continue;
            atp[(int64_t)k * P + p] = -1;
            atq[(int64_t)k * Q + q] = -1;
            atp[(int64_t)best * P + p] = e;
            atq[(int64_t)best * Q + q] = e;
            step_of[e] = best;
        }
        cost[k] = 0;
        for (int p = 0; p < P; p++) {
            int64_t e = atp[(int64_t)k * P + p];
            if (e >= 0 && E->w[e] > cost[k]) cost[k] = E->w[e];
        }
    }
    int kept = renumber(cost, S, newid);
    for (int64_t e = 0; e < E->n; e++) step_of[e] = newid[step_of[e]];
    *nsteps = kept;
    free(cost); free(atp); free(atq); free(order); free(newid);
    return DESO_OK;
}

static deso_err build_caterpillar(const edges *E, const int64_t *len,
                                  pl_schedule *out)
{
    int P = E->P, Q = E->Q, N = P > Q ? P : Q;
    int *step_of = deso__malloc((E->n > 0 ? (size_t)E->n : 1) * sizeof *step_of);
    if (!step_of) return nomem();
    /* Edges are in row-major order, so edge e of row p is found by a scan. */
    int64_t e = 0;
    for (int p = 0; p < P; p++)
        for (int q = 0; q < Q; q++)
            if (len[(int64_t)p * Q + q] > 0)
                step_of[e++] = ((p - q) % N + N) % N;   /* q = (p - k) mod N */
    deso_err err = to_schedule(E, step_of, N, out);
    free(step_of);
    return err;
}

/* Values the matching weights are built from: the lengths when the scaled
 * weights fit the Hungarian method's range, else their dense ranks.       */
typedef struct weights {
    int64_t *v;      /* per edge                                           */
    int64_t K;       /* tie-break multiplier (1: no tie-break)             */
    int64_t B;       /* cover bonus for stepwise (0 for greedy)            */
} weights;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static deso_err weights_make(const edges *E, bool cover, weights *W)
{
    int n = E->P > E->Q ? E->P : E->Q, mn = E->P < E->Q ? E->P : E->Q;
    int64_t limit = INT64_MAX / (4 * ((int64_t)n + 1));
    size_t c = E->n > 0 ? (size_t)E->n : 1;
    W->v = deso__malloc(c * sizeof *W->v);
    int64_t *sorted = deso__malloc(c * sizeof *sorted);
    if (!W->v || !sorted) {
        free(W->v); free(sorted);
        W->v = NULL;
        return nomem();
    }
    memcpy(sorted, E->w, (size_t)E->n * sizeof *sorted);
    qsort(sorted, (size_t)E->n, sizeof *sorted, cmp_i64);
    int64_t nd = 0;
    for (int64_t i = 0; i < E->n; i++)
        if (i == 0 || sorted[i] != sorted[i - 1]) sorted[nd++] = sorted[i];
    for (int mode = 0; mode < 3; mode++) {
        int64_t maxv = mode == 0 ? (nd ? sorted[nd - 1] : 0) : nd;
        int64_t K = mode < 2 ? 2 * (int64_t)n * mn + 1 : 1;
        int64_t B = 0, top, t;
        bool ok = true;
        if (cover) ok = pl__fma(1, mn, maxv, &B);
        ok = ok && pl__fma(maxv, 2, B, &t) && pl__mul(t, K, &top) &&
             pl__add(top, 2 * (int64_t)n, &top) && top < limit;
        if (!ok) continue;
        for (int64_t e = 0; e < E->n; e++) {
            if (mode == 0) {
                W->v[e] = E->w[e];
            } else {
                int64_t *f = bsearch(&E->w[e], sorted, (size_t)nd,
                                     sizeof *sorted, cmp_i64);
                W->v[e] = (f - sorted) + 1;
            }
        }
        W->K = K;
        W->B = B;
        free(sorted);
        return DESO_OK;
    }
    free(sorted);
    free(W->v);
    W->v = NULL;
    return deso__fail(DESO_EOVERFLOW, "pl_schedule_build: matching weights "
                      "overflow for a %d x %d matrix", E->P, E->Q);
}

/* Scratch of build_matchings: the n x n weights of one step and the
 * edge behind each entry, the remaining degrees, the matching.          */
typedef struct match_ws {
    int64_t *wm, *eid;
    int *dp, *dq, *match;
} match_ws;

static void match_ws_free(match_ws *M)
{
    free(M->wm); free(M->eid); free(M->dp); free(M->dq); free(M->match);
}

static deso_err match_ws_make(int P, int Q, int n, match_ws *M)
{
    M->wm = deso__malloc((size_t)n * n * sizeof *M->wm);
    M->eid = deso__malloc((size_t)n * n * sizeof *M->eid);
    M->dp = deso__malloc((size_t)P * sizeof *M->dp);
    M->dq = deso__malloc((size_t)Q * sizeof *M->dq);
    M->match = deso__malloc((size_t)n * sizeof *M->match);
    if (M->wm && M->eid && M->dp && M->dq && M->match) return DESO_OK;
    match_ws_free(M);
    return nomem();
}

/* The weights of one step over the edges not yet scheduled: length,
 * plus the cover bonus for an end of current maximum degree (stepwise),
 * scaled by K with the ends' degrees as tie-break.                      */
static void step_weights(const edges *E, const weights *W, bool cover,
                         const int *step_of, match_ws *M)
{
    int P = E->P, Q = E->Q, n = P > Q ? P : Q, D = 0;
    memset(M->dp, 0, (size_t)P * sizeof *M->dp);
    memset(M->dq, 0, (size_t)Q * sizeof *M->dq);
    for (int64_t i = 0; i < (int64_t)n * n; i++) {
        M->wm[i] = 0;
        M->eid[i] = -1;
    }
    for (int64_t e = 0; e < E->n; e++) {
        if (step_of[e] >= 0) continue;
        M->dp[E->p[e]]++;
        M->dq[E->q[e]]++;
        M->eid[(int64_t)E->p[e] * n + E->q[e]] = e;
    }
    for (int p = 0; p < P; p++) if (M->dp[p] > D) D = M->dp[p];
    for (int q = 0; q < Q; q++) if (M->dq[q] > D) D = M->dq[q];
    for (int64_t e = 0; e < E->n; e++) {
        if (step_of[e] >= 0) continue;
        int p = E->p[e], q = E->q[e];
        int64_t cov = cover ? (M->dp[p] == D) + (M->dq[q] == D) : 0;
        M->wm[(int64_t)p * n + q] = (W->v[e] + W->B * cov) * W->K +
                                    (W->K > 1 ? M->dp[p] + M->dq[q] : 0);
    }
}

/* Repeated maximum-weight matchings of the remaining edges.  With cover,
 * every vertex of current maximum degree is matched (B-trick), so the
 * number of steps is the initial maximum degree.                           */
static deso_err build_matchings(const edges *E, bool cover, int *step_of,
                                int *nsteps)
{
    int P = E->P, Q = E->Q, n = P > Q ? P : Q;
    weights W = {0};
    DESO_TRY(weights_make(E, cover, &W));
    match_ws M;
    deso_err err = match_ws_make(P, Q, n, &M);
    if (err) {
        free(W.v);
        return err;
    }
    for (int64_t e = 0; e < E->n; e++) step_of[e] = -1;
    int64_t left = E->n;
    int k = 0;
    while (left > 0 && !err) {
        step_weights(E, &W, cover, step_of, &M);
        err = pl__max_assignment(n, M.wm, M.match);
        int64_t took = 0;
        for (int p = 0; p < P && !err; p++) {
            int64_t at = (int64_t)p * n + M.match[p];
            if (M.match[p] < Q && M.eid[at] >= 0 && M.wm[at] > 0) {
                step_of[M.eid[at]] = k;
                took++;
            }
        }
        if (!err && took == 0)   /* cannot happen: a positive edge is taken */
            err = deso__fail(DESO_EINTERNAL, "pl_schedule_build: empty "
                             "matching");
        left -= took;
        k++;
    }
    if (!err) *nsteps = k;
    free(W.v);
    match_ws_free(&M);
    return err;
}

/* Konig colouring of the edges in the given order: exactly max-degree
 * steps, used for stepwise when the Hungarian method is too slow.          */
static deso_err build_colouring(const edges *E, int *step_of, int *nsteps)
{
    return pl__edge_colour(E->P, E->Q, E->n, E->p, E->q, step_of, nsteps);
}

/* Classes of equal length, longest first, each coloured with its own
 * maximum degree: every step then pays exactly its class's length (the
 * grouping that reaches the optimum of paper 001's Example 5:
 * doc/DESIGN.md, "Worked examples (paper 001)").                           */
static deso_err build_classes(const edges *E, int *step_of, int *nsteps)
{
    size_t c = E->n > 0 ? (size_t)E->n : 1;
    int64_t *idx = deso__malloc(c * sizeof *idx);
    int *cp = deso__malloc(c * sizeof *cp), *cq = deso__malloc(c * sizeof *cq);
    int *col = deso__malloc(c * sizeof *col);
    char *done = deso__calloc(c, 1);
    deso_err err = DESO_OK;
    if (!idx || !cp || !cq || !col || !done) {
        err = nomem();
        goto out;
    }
    int base = 0;
    for (;;) {
        int64_t wmax = 0;
        for (int64_t e = 0; e < E->n; e++)
            if (!done[e] && E->w[e] > wmax) wmax = E->w[e];
        if (wmax == 0) break;
        int64_t m = 0;
        for (int64_t e = 0; e < E->n; e++) {
            if (!done[e] && E->w[e] == wmax) {
                idx[m] = e;
                cp[m] = E->p[e];
                cq[m++] = E->q[e];
                done[e] = 1;
            }
        }
        int nc = 0;
        err = pl__edge_colour(E->P, E->Q, m, cp, cq, col, &nc);
        if (err) goto out;
        for (int64_t i = 0; i < m; i++) step_of[idx[i]] = base + col[i];
        base += nc;
    }
    *nsteps = base;
out:
    free(idx); free(cp); free(cq); free(col); free(done);
    return err;
}

typedef deso_err (*builder)(const edges *, int *, int *);

static deso_err build_matchings_cover(const edges *E, int *so, int *ns)
{
    return build_matchings(E, true, so, ns);
}

static deso_err build_matchings_plain(const edges *E, int *so, int *ns)
{
    return build_matchings(E, false, so, ns);
}

/* Runs one builder, compacts, and converts.                               */
static deso_err run_builder(builder b, const edges *E, pl_schedule *out)
{
    int *step_of = deso__malloc((E->n > 0 ? (size_t)E->n : 1) * sizeof *step_of);
    if (!step_of) return nomem();
    int ns = 0;
    deso_err err = b(E, step_of, &ns);
    if (!err) err = compact(E, step_of, &ns);
    if (!err) err = to_schedule(E, step_of, ns, out);
    free(step_of);
    return err;
}

/* Keeps the cheaper of *best and *cand (fewer steps on equal cost).       */
static void keep_better(pl_schedule *best, pl_schedule *cand)
{
    if (cand->total_cost < best->total_cost ||
        (cand->total_cost == best->total_cost && cand->nsteps < best->nsteps)) {
        pl_schedule_free(best);
        *best = *cand;
        memset(cand, 0, sizeof *cand);
    } else {
        pl_schedule_free(cand);
    }
}

/* No rank sends or receives more than one message: the messages are one
 * matching, so every schedule but the caterpillar is that one step (the
 * fewest steps, and the least cost: a step pays the longest message
 * anyway), built without edges or matchings: a small remap (P = 2) plans
 * in a fraction of the general path's instructions.                      */
static deso_err one_step(int P, int Q, const int64_t *len, pl_schedule *out)
{
    int64_t n = 0, cost = 0;
    for (int64_t i = 0; i < (int64_t)P * Q; i++)
        if (len[i] > 0) {
            n++;
            if (len[i] > cost) cost = len[i];
        }
    out->P = P;
    out->Q = Q;
    /* Allocated even for no message, as the general path does.          */
    out->recv_of = deso__malloc((size_t)P * sizeof *out->recv_of);
    out->step_cost = deso__malloc(sizeof *out->step_cost);
    if (!out->recv_of || !out->step_cost) {
        pl_schedule_free(out);
        return nomem();
    }
    for (int p = 0; p < P; p++) {
        out->recv_of[p] = -1;
        for (int q = 0; q < Q; q++)
            if (len[(int64_t)p * Q + q] > 0) out->recv_of[p] = q;
    }
    out->nsteps = n > 0;
    out->step_cost[0] = cost;
    out->total_cost = cost;
    out->messages = n;
    return DESO_OK;
}

deso_err pl_schedule_build(pl_sched_kind kind, int P, int Q,
                           const int64_t *len, pl_schedule *out)
{
    DESO_CHECK(out != NULL && len != NULL, DESO_ENULL,
               "pl_schedule_build: NULL %s", out ? "len" : "out");
    memset(out, 0, sizeof *out);
    DESO_CHECK((unsigned)kind < 3u, DESO_EINVAL,
               "pl_schedule_build: unknown schedule kind %d", (int)kind);
    DESO_CHECK(P >= 1 && Q >= 1, DESO_EINVAL,
               "pl_schedule_build: P = %d and Q = %d must be >= 1", P, Q);
    for (int64_t i = 0; i < (int64_t)P * Q; i++)
        DESO_CHECK(len[i] >= 0, DESO_EINVAL, "pl_schedule_build: negative "
                   "length %lld at (%lld, %lld)", (long long)len[i],
                   (long long)(i / Q), (long long)(i % Q));
    if (kind != PL_SCHED_CATERPILLAR && pl_schedule_min_steps(P, Q, len) <= 1)
        return one_step(P, Q, len, out);
    edges E;
    DESO_TRY(edges_make(P, Q, len, &E));
    bool small = (P > Q ? P : Q) <= HUNGARIAN_MAX;
    deso_err err;
    if (kind == PL_SCHED_CATERPILLAR) {
        err = build_caterpillar(&E, len, out);
    } else {
        err = run_builder(small ? build_matchings_cover : build_colouring,
                          &E, out);
        if (!err && kind == PL_SCHED_GREEDY) {
            pl_schedule cand;
            builder others[] = {build_classes, build_matchings_plain};
            for (int i = 0; i < 2 && !err; i++) {
                if (i == 1 && !small) break;
                err = run_builder(others[i], &E, &cand);
                if (!err) keep_better(out, &cand);
            }
            if (!err) {
                err = build_caterpillar(&E, len, &cand);
                if (!err) keep_better(out, &cand);
            }
        }
    }
    if (err) pl_schedule_free(out);
    edges_free(&E);
    return err;
}
