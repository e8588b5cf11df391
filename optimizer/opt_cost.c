/* The cost model: what the executor moves for a plan, exactly.
 *
 * deso/runtime/exec.c runs the nodes in recording order; for node i it
 * asks, for operand k = 0, 1, ..., for the view of the operand's value in
 * layout req[k] (deso/runtime/exchange.c):
 *   - a view of that layout exists: free (views are kept: an earlier edge
 *     may have paid for it);
 *   - else a view S with the same folding and fewer copies exists (the
 *     first in the value's view list: the primary, then the newest first):
 *     broadcasts along each grid dimension k = 0, 1 the target adds, among
 *     the ranks holding the value after the previous one;
 *   - else a point-to-point exchange from the primary view, in which every
 *     receiver takes each element from the nearest source copy (itself,
 *     else the copy in its own grid row or column, else coordinate 0);
 *     with no message at all that is a free collapse.
 * The node's reduction then runs over grid dimension rd, one communicator
 * per coordinate of the other dimension (with reduce_holders_only, as the
 * runtime sets it, a vector reduction only on the communicators holding
 * the vector), as an all-reduce when the result is replicated along rd,
 * else a reduce.  Counting follows doc/DESIGN.md, "Counting bytes and
 * messages" (deso/runtime/comm.c): p2p bytes and messages summed over
 * ranks; collectives one per communicator, bytes m (p - 1), doubled for
 * all-reduce.  The time is alpha + beta * bytes per message:
 * an exchange costs its busiest rank, a collective what the probe
 * measured for its kind on its communicators (opt_params.coll) when it
 * measured them, else over p ranks ceil(log2 p) (alpha + beta m), an
 * all-reduce twice that, plus a quarter alpha for the call (CALL_SHARE
 * below); communicators of one collective run side by side.  Volume
 * variant (paper 003's eq. 9 and its errata, doc/DESIGN.md): m is the
 * largest per-communicator payload (OPT_VOL_RANK) or the whole array
 * (OPT_VOL_ARRAY).
 * Every node reading or making a vector adds the time of its local work
 * (opt__node_work): its busiest rank's share of those vectors at
 * work_beta per byte, so that replicated vector work costs what every
 * rank then spends on it.
 * An out-of-core matrix (opt_value.ooc) adds time, never bytes or
 * messages: io_beta per byte of its busiest rank's piece for each node
 * that streams it (read, or written as a dger's result), and for a remap
 * the read of every source piece and the write of the new ones.
 *
 * opt_plan_cost below is the reference: one plan, walked from scratch.
 * The search costs thousands of plans that differ in a node or two with
 * opt_eval.c's evaluator instead, which keeps what did not change and
 * adds the same terms in the same order, so its totals are the same
 * doubles (tests/unit/test_opt_eval.c checks the two against each other). */
#include "optimizer/opt_impl.h"

#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/alloc.h"

#define MEMO_CAP 64
/* Seconds per byte a Level 1 kernel streams: 10 GB/s, a core's share of
 * a node's memory bandwidth (this machine's measured read rate is about
 * that).  On the low side: the term exists to stop a plan from looking
 * free when it makes every rank do the whole vector's work, not to price
 * computation exactly, and a fixed figure keeps plans deterministic.    */
#define WORK_BETA 1e-10
/* Seconds per byte of its matrix a dgemv streams: 40 GB/s, this machine's
 * rate on a matrix in cache (a 100 x 100 product at P = 1 in about 2 us).
 * On the high side for large matrices (memory-bound, nearer WORK_BETA's
 * rate), where a replicated matrix loses by far on either figure: the
 * term is there so that replicating a matrix is not free.               */
#define MAT_WORK_BETA 2.5e-11
#define EVAL_MAXVIEWS 16

opt_params opt_params_default(void)
{
    opt_params p = {.alpha = 2e-6, .beta = 1e-9, .volume = OPT_VOL_RANK,
                    .reduce_holders_only = false, .io_beta = 0.0,
                    .work_beta = WORK_BETA, .mat_work_beta = MAT_WORK_BETA,
                    .amortise = 1.0};
    /* coll zeros: the formula prices every collective                     */
    return p;
}

int opt__log2c(int p)
{
    int r = 0;
    while ((1 << r) < p) r++;
    return r;
}

/* ---- the exchange ------------------------------------------------------- */

struct opt_memo {
    int n, next;
    blas_layout s[MEMO_CAP], d[MEMO_CAP];
    opt_counts c[MEMO_CAP];
};

opt_memo *opt_memo_new(void) { return deso__calloc(1, sizeof(opt_memo)); }
void opt_memo_free(opt_memo *m) { free(m); }

/* The sender of elements [i, hi) to the rank at co (row-major): the
 * rank the executor's exchange takes element i from (blas_elem_src, the
 * one rule both use), and in *e the end of the run it sends (S's block
 * or range boundary, at most hi), within which the sender is the same.  */
static int run_src(const blas_layout *S, const int *co, int64_t i,
                   int64_t hi, int64_t *e)
{
    *e = hi;
    if (S->dist == BLAS_DIST_PART) {
        /* a partition's element has one holder, its owner (which
         * blas_elem_src would find again)                                 */
        int o = blas_part_owner(S->part, i);
        /* renumbered: consecutive indices may live anywhere              */
        if (S->part->perm != NULL) *e = i + 1;
        else if (S->part->start[o + 1] < hi) *e = S->part->start[o + 1];
        return o;
    }
    if (S->dist >= 0) {
        int64_t blk = i / S->b;
        if ((blk + 1) * S->b < hi) *e = (blk + 1) * S->b;
    }
    int sr, sc;
    blas_elem_src(S, co[0], co[1], i, &sr, &sc);
    return sr * S->pc + sc;
}

/* A renumbered partition's receiver: its indices one by one.            */
static void count_renumbered(const blas_layout *S, const blas_layout *D,
                             int me, const int *co, int64_t *cnt)
{
    const blas_part *p = D->part;
    int P = D->pr * D->pc;
    for (int64_t pos = p->start[me]; pos < p->start[me + 1]; pos++) {
        int64_t i = p->iperm[pos], e;
        int q = run_src(S, co, i, i + 1, &e);
        if (q != me) cnt[(int64_t)q * P + me]++;
    }
}

/* cnt[src * P + dst] += elements dst takes from src (src != dst).  Each
 * receiver walks its blocks (or its range) of D split at S's block or
 * range boundaries: within a run the sender is fixed.                    */
static void count_exchange(const blas_layout *S, const blas_layout *D,
                           int64_t *cnt)
{
    int pr = D->pr, pc = D->pc, P = pr * pc, dims[2] = {pr, pc};
    int64_t n = D->n;
    for (int r = 0; r < pr; r++)
        for (int c = 0; c < pc; c++) {
            if (!blas_layout_holds(D, r, c)) continue;
            int me = r * pc + c, co[2] = {r, c};
            if (D->dist == BLAS_DIST_PART && D->part->perm != NULL) {
                count_renumbered(S, D, me, co, cnt);
                continue;
            }
            int64_t b, g0, end = n, step;
            if (D->dist == BLAS_DIST_PART) {
                g0 = D->part->start[me];
                end = D->part->start[me + 1];
                b = step = end - g0;
            } else {
                b = D->dist < 0 ? (n > 0 ? n : 1) : D->b;
                int p = D->dist < 0 ? 1 : dims[D->dist];
                g0 = D->dist < 0 ? 0 : (int64_t)co[D->dist] * b;
                step = (int64_t)p * b;
            }
            for (; g0 < end && b > 0; g0 += step) {
                int64_t hi = g0 + b < n ? g0 + b : n;
                for (int64_t i = g0, e; i < hi; i = e) {
                    int q = run_src(S, co, i, hi, &e);
                    if (q != me) cnt[(int64_t)q * P + me] += e - i;
                }
            }
        }
}

void opt__p2p_counts(const int64_t *cnt, int P, int64_t *ns,
                     const opt_params *pp, opt_counts *out)
{
    int64_t *nr = ns + P, *sb = ns + 2 * P, *rb = ns + 3 * P;
    opt_counts c;
    memset(&c, 0, sizeof c);
    for (int s = 0; s < P; s++)
        for (int d = 0; d < P; d++) {
            int64_t e = cnt[(int64_t)s * P + d];
            if (e == 0) continue;
            c.msgs_p2p++;
            c.bytes_p2p += 8 * e;
            ns[s]++;
            nr[d]++;
            sb[s] += 8 * e;
            rb[d] += 8 * e;
        }
    for (int q = 0; q < P; q++) {
        int64_t m = ns[q] > nr[q] ? ns[q] : nr[q];
        int64_t v = sb[q] > rb[q] ? sb[q] : rb[q];
        double t = pp->alpha * (double)m + pp->beta * (double)v;
        if (t > c.time) c.time = t;
    }
    *out = c;
}

/* Grids of up to this many ranks count an exchange in stack arrays.       */
#define EXCH_SMALL_P 16

deso_err opt_exchange_cost(const blas_layout *S, const blas_layout *D,
                           const opt_params *pp, opt_memo *memo,
                           opt_counts *out)
{
    if (memo != NULL)
        for (int k = 0; k < memo->n; k++)
            if (blas_layout_equal(&memo->s[k], S) &&
                blas_layout_equal(&memo->d[k], D)) {
                *out = memo->c[k];
                return DESO_OK;
            }
    DESO_CHECK(S->pr == D->pr && S->pc == D->pc && S->n == D->n,
               DESO_EINTERNAL, "opt_exchange_cost: layouts do not match");
    int P = D->pr * D->pc;
    /* a small grid's counts on the stack: a search costs a few dozen
     * exchanges, and allocating them cost more than counting            */
    int64_t cnt_small[EXCH_SMALL_P * EXCH_SMALL_P], ns_small[4 * EXCH_SMALL_P];
    bool small = P <= EXCH_SMALL_P;
    int64_t *cnt = small ? cnt_small
                         : deso__malloc((size_t)P * (size_t)P * sizeof *cnt);
    int64_t *ns = small ? ns_small : deso__malloc((size_t)P * 4 * sizeof *ns);
    if (cnt == NULL || ns == NULL) {
        if (!small) {
            free(cnt);
            free(ns);
        }
        return deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    }
    memset(cnt, 0, (size_t)P * (size_t)P * sizeof *cnt);
    memset(ns, 0, (size_t)P * 4 * sizeof *ns);
    count_exchange(S, D, cnt);
    opt_counts c;
    opt__p2p_counts(cnt, P, ns, pp, &c);
    if (!small) {
        free(cnt);
        free(ns);
    }
    if (memo != NULL) {
        int k = memo->n < MEMO_CAP ? memo->n++ : memo->next++ % MEMO_CAP;
        memo->s[k] = *S;
        memo->d[k] = *D;
        memo->c[k] = c;
    }
    *out = c;
    return DESO_OK;
}

/* ---- collectives -------------------------------------------------------- */

/* Every collective also costs CALL_SHARE alpha once, for the call itself
 * on each rank (its set-up, whatever its steps).  Without it an all-reduce
 * and a reduce followed by a broadcast tie (2 log2 p steps each), and so
 * do one all-reduce among the holders followed by broadcasts and the same
 * all-reduce run on every grid row; the search then kept whichever it met
 * first (a 4 x 4 CG in mode full made 17 to 21 collectives an iteration
 * where 12 do; with the term, 12 or 17 depending on the measured alpha
 * and beta: make bench-counts).  A quarter: enough to break ties, too
 * little to outweigh a message.                                          */
#define CALL_SHARE 0.25

/* ncomm communicators of p ranks each, along grid dimension `comm` (or
 * OPT_COMM_ALL); payloads total `tot` elements, the largest `mx`; the
 * array has `arr` elements.  Counted by the rules above; timed by the
 * measured figures of that kind on those communicators where the probe
 * took them (they include the call itself), else by the formula.       */
static void coll_add(opt_counts *c, const opt_params *pp, opt_coll_kind kind,
                     int comm, int p, int64_t ncomm, int64_t tot, int64_t mx,
                     int64_t arr)
{
    if (p <= 1 || ncomm <= 0) return;
    int factor = kind == OPT_COLL_ALLREDUCE ? 2 : 1;
    c->msgs_coll += ncomm;
    c->bytes_coll += 8 * tot * (p - 1) * factor;
    int64_t vol = pp->volume == OPT_VOL_ARRAY ? arr : mx;
    const opt_coll_cost *m = &pp->coll[kind][comm];
    if (m->call > 0.0)
        c->time += m->call + m->byte * 8.0 * (double)vol;
    else
        c->time += factor * opt__log2c(p) *
                       (pp->alpha + pp->beta * 8.0 * (double)vol) +
                   CALL_SHARE * pp->alpha;
}

bool opt__replication_only(const blas_layout *S, const blas_layout *D)
{
    return S->kind == D->kind && S->n == D->n && S->dist == D->dist &&
           S->b == D->b && (S->rep & ~D->rep) == 0 &&
           blas_part_equal(S->part, D->part);
}

/* deso/runtime/exchange.c's replicate(): broadcasts along k = 0, then 1. */
void opt__bcast_cost(const blas_layout *S, const blas_layout *D,
                     const opt_params *pp, opt_counts *c)
{
    int dims[2] = {S->pr, S->pc};
    blas_layout cur = *S;
    for (int k = 0; k < 2; k++) {
        unsigned bit = 1u << k;
        if (!(D->rep & bit) || (cur.rep & bit)) continue;
        blas_layout next = cur;
        next.rep |= bit;
        int o = 1 - k;
        int64_t ncomm = 0, tot = 0, mx = 0;
        if (next.dist == o) {
            for (int x = 0; x < dims[o]; x++) {
                int64_t len = blas_numroc(next.n, next.b, x, dims[o]);
                if (len == 0) continue;     /* deso__bcast skips len 0    */
                ncomm++;
                tot += len;
                if (len > mx) mx = len;
            }
        } else if (next.n > 0) {
            ncomm = (next.rep & (1u << o)) ? dims[o] : 1;
            tot = ncomm * next.n;
            mx = next.n;
        }
        coll_add(c, pp, OPT_COLL_BCAST, k, dims[k], ncomm, tot, mx, next.n);
        cur = next;
    }
}

void opt__remap_cost(const blas_layout *S, const blas_layout *D,
                     const opt_params *pp, opt_counts *c)
{
    /* approximate: a block-cyclic remap between different matrix layouts
     * moves about (P-1)/P of the matrix in up to P (P-1) messages         */
    int64_t P = (int64_t)S->pr * S->pc, vol = S->m * S->n;
    if (P <= 1) return;
    c->msgs_p2p += P * (P - 1);
    if (D->rep == 0) {
        c->bytes_p2p += 8 * vol * (P - 1) / P;
        c->time += pp->alpha * (double)(P - 1) +
                   pp->beta * 8.0 * (double)vol / (double)P;
        return;
    }
    /* to a matrix whole on every rank (an all-gather: each rank receives
     * what it lacks, about (P-1)/P of it), made once and kept as a view
     * of the value, so its time is spread over pp->amortise runs        */
    double runs = pp->amortise > 1.0 ? pp->amortise : 1.0;
    c->bytes_p2p += 8 * vol * (P - 1);
    c->time += (pp->alpha * (double)(P - 1) +
                pp->beta * 8.0 * (double)vol * (double)(P - 1) / (double)P) /
               runs;
}

void opt__add(opt_counts *a, const opt_counts *b)
{
    a->bytes_p2p += b->bytes_p2p;
    a->msgs_p2p += b->msgs_p2p;
    a->bytes_coll += b->bytes_coll;
    a->msgs_coll += b->msgs_coll;
    a->time += b->time;
}

/* ---- out-of-core matrices ------------------------------------------------ */

/* The largest local piece of matrix layout L, in elements.              */
static int64_t mat_busiest(const blas_layout *L)
{
    int64_t rows = 0, cols = 0;
    for (int r = 0; r < L->pr; r++) {
        int64_t lr, lc;
        blas_layout_local(L, r, 0, &lr, &lc);
        if (lr > rows) rows = lr;
    }
    for (int c = 0; c < L->pc; c++) {
        int64_t lr, lc;
        blas_layout_local(L, 0, c, &lr, &lc);
        if (lc > cols) cols = lc;
    }
    return rows * cols;
}

double opt__io_time(const blas_layout *L, const opt_params *pp)
{
    if (!(pp->io_beta > 0.0) || L->kind != BLAS_MAT) return 0.0;
    return pp->io_beta * 8.0 * (double)mat_busiest(L);
}

bool opt__node_streams(const opt_graph *g, const opt_node *nd)
{
    for (int k = 0; k < nd->d.nops; k++)
        if (g->vals[nd->ops[k]].ooc) return true;
    return g->vals[nd->res].ooc;
}

/* Node nd streaming its out-of-core operands (a read each) and result (a
 * write) in the layouts pl gives them.                                   */
static double node_io(const opt_graph *g, const opt_node *nd,
                      const opt_place *pl, const opt_params *pp)
{
    double t = 0.0;
    for (int k = 0; k < nd->d.nops; k++)
        if (g->vals[nd->ops[k]].ooc) t += opt__io_time(&pl->req[k], pp);
    if (g->vals[nd->res].ooc) t += opt__io_time(&pl->res, pp);
    return t;
}

/* ---- the node's reduction ----------------------------------------------- */

/* A sparse product's halo exchange (deso/runtime/spmat_halo.c): one
 * message per (sender, receiver) pair of sp->tab, counted and timed as
 * any point-to-point exchange (opt__p2p_counts' rule: the busiest rank,
 * sending or receiving).  The transposed product runs the same messages
 * backwards: the same counts and time.                                   */
static void halo_cost(const blas_sparse *sp, int P, const opt_params *pp,
                      opt_counts *c)
{
    for (int q = 0; q < P; q++) {
        int64_t ns = 0, nr = 0, sb = 0, rb = 0;
        for (int o = 0; o < P; o++) {
            int64_t out = sp->tab[(int64_t)q * P + o];
            int64_t in = sp->tab[(int64_t)o * P + q];
            ns += out > 0;
            sb += 8 * out;
            nr += in > 0;
            rb += 8 * in;
        }
        c->msgs_p2p += ns;
        c->bytes_p2p += sb;
        int64_t m = ns > nr ? ns : nr, v = sb > rb ? sb : rb;
        double t = pp->alpha * (double)m + pp->beta * (double)v;
        if (t > c->time) c->time = t;
    }
}

/* mult: the doubles a fused group's collective carries, its members'
 * partials one after the other (0: not fused, the node's own reduction
 * width); one collective, an
 * all-reduce when any member's result is replicated along the reduced
 * dimension (allred), else a reduce.                                      */
static void node_collective(const opt_graph *g, const opt_node *nd,
                            const opt_place *pl, const opt_params *pp,
                            int mult, bool allred, opt_counts *c)
{
    const blas_op_info *info = blas_op_get(nd->d.op);
    memset(c, 0, sizeof *c);
    if (nd->d.op == BLAS_OP_VGET || nd->d.op == BLAS_OP_VPUT) {
        opt__view_cost(nd, pl, pp, c);
        return;
    }
    if (nd->d.op == BLAS_OP_USMV) {
        halo_cost(nd->d.sp, g->df.pr * g->df.pc, pp, c);
        return;
    }
    if (info == NULL || info->red == BLAS_RED_NONE) return;
    int rd = blas_red_dim(&nd->d, pl->req);
    if (rd < 0) return;
    opt_coll_kind kind = allred || (pl->res.rep & blas_red_bits(rd, g->df.pr,
                                                                g->df.pc))
                             ? OPT_COLL_ALLREDUCE : OPT_COLL_REDUCE;
    if (rd == BLAS_RED_ALL) {
        /* a vector by partition: one collective over every rank         */
        int64_t len = mult > 0 ? mult : blas_red_width(nd->d.op);
        coll_add(c, pp, kind, OPT_COMM_ALL, g->df.pr * g->df.pc, 1, len, len,
                 len);
        return;
    }
    int dims[2] = {g->df.pr, g->df.pc}, o = 1 - rd;
    if (dims[rd] <= 1) return;
    if (nd->d.op == BLAS_OP_GEMV) {
        const blas_layout *A = &pl->req[1];
        bool t = (nd->d.flags & BLAS_F_TRANS) != 0;
        int64_t len = t ? A->n : A->m, b = t ? A->nb : A->b;
        int64_t tot = 0, mx = 0;
        for (int x = 0; x < dims[o]; x++) {
            int64_t l = blas_numroc(len, b, x, dims[o]);
            tot += l;
            if (l > mx) mx = l;
        }
        coll_add(c, pp, kind, rd, dims[rd], dims[o], tot, mx, len);
        return;
    }
    int64_t len = mult > 0 ? mult : blas_red_width(nd->d.op);
    const blas_layout *X = &pl->req[0];
    int64_t ncomm = dims[o];
    if (pp->reduce_holders_only && X->dist != o && !(X->rep & (1u << o)))
        ncomm = 1;
    coll_add(c, pp, kind, rd, dims[rd], ncomm, ncomm * len, len, len);
}

void opt__node_cost(const opt_graph *g, const opt_node *nd,
                    const opt_place *pl, const opt_params *pp, int mult,
                    bool allred, opt_counts *c)
{
    node_collective(g, nd, pl, pp, mult, allred, c);
    c->time += node_io(g, nd, pl, pp);
}

/* ---- the node's local work ---------------------------------------------- */

/* The most elements of vector layout L that one rank holds.             */
static int64_t vec_busiest(const blas_layout *L)
{
    if (L->dist == BLAS_DIST_PART) {
        int64_t mx = 0;
        for (int q = 0; q < L->part->nparts; q++) {
            int64_t len = L->part->start[q + 1] - L->part->start[q];
            if (len > mx) mx = len;
        }
        return mx;
    }
    if (L->dist < 0) return L->n;
    return blas_numroc(L->n, L->b, 0, L->dist == 0 ? L->pr : L->pc);
}

bool opt__node_works(const opt_graph *g, const opt_node *nd)
{
    if (g->vals[nd->res].kind == BLAS_VEC) return true;
    for (int k = 0; k < nd->d.nops; k++)
        if (g->vals[nd->ops[k]].kind == BLAS_VEC) return true;
    return false;
}

double opt__node_work(const opt_node *nd, const opt_place *pl,
                      const opt_params *pp)
{
    double t = 0.0;
    if (pp->work_beta > 0.0) {
        int64_t elems = pl->res.kind == BLAS_VEC ? vec_busiest(&pl->res) : 0;
        for (int k = 0; k < nd->d.nops; k++)
            if (pl->req[k].kind == BLAS_VEC)
                elems += vec_busiest(&pl->req[k]);
        t = pp->work_beta * 8.0 * (double)elems;
    }
    /* a product streams its busiest rank's piece of the matrix: the whole
     * matrix on every rank where it is replicated                        */
    if (nd->d.op == BLAS_OP_GEMV && pp->mat_work_beta > 0.0)
        t += pp->mat_work_beta * 8.0 * (double)mat_busiest(&pl->req[1]);
    return t;
}

/* ---- fusion of independent reductions ---------------------------------- */

/* A fusable reduction's key: members of a group share the grid dimension
 * reduced over and which communicators take part (deso/runtime/exec.c's
 * takes_part: the ranks holding operand 0); -1: not fusable.  A group is
 * one all-reduce when any member's result is replicated along that
 * dimension (a member that only needed a reduce gets its result at
 * coordinate 0 as well: one collective instead of two), else a reduce.  */
bool opt__fuse_op(blas_op op)
{
    return op == BLAS_OP_DOT || op == BLAS_OP_NRM2 || op == BLAS_OP_ASUM;
}

int opt__fuse_key(const opt_graph *g, const opt_node *nd,
                  const opt_place *pl)
{
    if (!opt__fuse_op(nd->d.op)) return -1;
    int rd = blas_red_dim(&nd->d, pl->req);
    if (rd < 0) return -1;
    if (rd == BLAS_RED_ALL) return 2 * BLAS_RED_ALL;   /* every rank     */
    int dims[2] = {g->df.pr, g->df.pc}, o = 1 - rd;
    if (dims[rd] <= 1) return -1;
    const blas_layout *X = &pl->req[0];
    int all = (X->dist == o || (X->rep & (1u << o))) ? 1 : 0;
    return rd * 2 + all;
}

void opt__fuse_keys(const opt_graph *g, const int *key, int *taint,
                    int *fuse)
{
    int n = g->nnodes;
    for (int i = 0; i < n; i++) fuse[i] = -1;
    for (int v = 0; v < g->nvals; v++) taint[v] = 0;
    for (int i = 0; i < n; i++) {
        if (key[i] < 0 || fuse[i] >= 0) continue;
        /* taint[v] == i + 1: v is a member's result (this group)          */
        taint[g->nodes[i].res] = i + 1;
        int members = 1;
        for (int j = i + 1; j < n; j++) {
            const opt_node *nd = &g->nodes[j];
            bool dep = false;
            for (int k = 0; k < nd->d.nops; k++)
                if (taint[nd->ops[k]] == i + 1) dep = true;
            if (dep) break;       /* the group ends before a reader        */
            if (key[j] == key[i] && fuse[j] < 0) {
                fuse[j] = i;
                taint[nd->res] = i + 1;
                members++;
            }
        }
        /* alone, it is no group (and no fuse[j] names it)                */
        if (members > 1) fuse[i] = i;
    }
}

deso_err opt_fuse_groups(const opt_graph *g, const opt_plan *p, int *fuse)
{
    int n = g->nnodes;
    DESO_CHECK(p->nnodes == n, DESO_EINTERNAL,
               "opt_fuse_groups: plan for %d nodes, graph has %d", p->nnodes,
               n);
    for (int i = 0; i < n; i++) fuse[i] = -1;
    if (n < 2) return DESO_OK;
    int *key = deso__malloc((size_t)n * sizeof *key);
    int *taint = deso__calloc((size_t)(g->nvals > 0 ? g->nvals : 1), sizeof *taint);
    if (key == NULL || taint == NULL) {
        free(key);
        free(taint);
        return deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    }
    for (int i = 0; i < n; i++)
        key[i] = opt__fuse_key(g, &g->nodes[i], &p->node[i]);
    opt__fuse_keys(g, key, taint, fuse);
    free(key);
    free(taint);
    return DESO_OK;
}

/* ---- evaluation --------------------------------------------------------- */

typedef struct vstate {
    int nv;
    blas_layout v[EVAL_MAXVIEWS];
    bool made[EVAL_MAXVIEWS];      /* created by an edge of this DAG        */
} vstate;

/* The executor's deso__value_view on the model.                            */
static deso_err need(vstate *vs, const blas_layout *L, bool ooc,
                     const opt_params *pp, opt_memo *memo, opt_edge *e)
{
    memset(e, 0, sizeof *e);
    e->to = *L;
    e->from = vs->v[0];
    for (int k = 0; k < vs->nv; k++)
        if (blas_layout_equal(&vs->v[k], L)) {
            e->move = vs->made[k] ? OPT_MV_CACHED : OPT_MV_NONE;
            e->from = vs->v[k];
            return DESO_OK;
        }
    int src = 0;
    bool rep = false;
    if (L->kind != BLAS_MAT)
        for (int k = 0; k < vs->nv; k++)
            if (opt__replication_only(&vs->v[k], L)) {
                src = k;
                rep = true;
                break;
            }
    e->from = vs->v[src];
    if (L->kind == BLAS_MAT) {
        e->move = OPT_MV_REMAP;
        opt__remap_cost(&vs->v[0], L, pp, &e->cost);
        /* out of core: every piece read to be sent, every new one written */
        if (ooc)
            e->cost.time += opt__io_time(&vs->v[0], pp) +
                            opt__io_time(L, pp);
    } else if (rep) {
        e->move = OPT_MV_BCAST;
        opt__bcast_cost(&vs->v[src], L, pp, &e->cost);
    } else {
        DESO_TRY(opt_exchange_cost(&vs->v[0], L, pp, memo, &e->cost));
        e->move = e->cost.msgs_p2p > 0 ? OPT_MV_EXCHANGE : OPT_MV_COLLAPSE;
    }
    /* the executor keeps the new view right after the primary             */
    if (vs->nv < EVAL_MAXVIEWS) {
        for (int k = vs->nv; k > 1; k--) {
            vs->v[k] = vs->v[k - 1];
            vs->made[k] = vs->made[k - 1];
        }
        vs->v[1] = *L;
        vs->made[1] = true;
        vs->nv++;
    }
    return DESO_OK;
}

deso_err opt_eval_init(opt_eval *ev, const opt_graph *g)
{
    memset(ev, 0, sizeof *ev);
    ev->nnodes = g->nnodes;
    ev->nedges = g->nnodes * BLAS_MAXOPS + g->nvals;
    ev->edge = deso__calloc((size_t)(ev->nedges > 0 ? ev->nedges : 1),
                      sizeof *ev->edge);
    ev->node_cost = deso__calloc((size_t)(g->nnodes > 0 ? g->nnodes : 1),
                           sizeof *ev->node_cost);
    if (ev->edge == NULL || ev->node_cost == NULL) {
        opt_eval_free(ev);
        return deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    }
    return DESO_OK;
}

void opt_eval_free(opt_eval *ev)
{
    free(ev->edge);
    free(ev->node_cost);
    memset(ev, 0, sizeof *ev);
}

deso_err opt_plan_cost(const opt_graph *g, const opt_plan *p,
                       const opt_params *pp, opt_memo *memo, opt_eval *ev,
                       opt_counts *total)
{
    DESO_CHECK(p->nnodes == g->nnodes, DESO_EINTERNAL,
               "opt_plan_cost: plan for %d nodes, graph has %d", p->nnodes,
               g->nnodes);
    vstate *vs = deso__malloc((size_t)(g->nvals > 0 ? g->nvals : 1) * sizeof *vs);
    DESO_CHECK(vs != NULL, DESO_ENOMEM, "optimizer: out of memory");
    for (int v = 0; v < g->nvals; v++) {
        const opt_value *val = &g->vals[v];
        vs[v].nv = 0;
        if (val->producer >= 0) continue;
        vs[v].nv = val->nviews;
        for (int k = 0; k < val->nviews; k++) {
            vs[v].v[k] = val->views[k];
            vs[v].made[k] = false;
        }
    }
    int *fuse = deso__malloc((size_t)(g->nnodes > 0 ? g->nnodes : 1) * sizeof *fuse);
    int *gsize = deso__calloc((size_t)(g->nnodes > 0 ? g->nnodes : 1),
                        sizeof *gsize);
    if (fuse == NULL || gsize == NULL) {
        free(vs);
        free(fuse);
        free(gsize);
        return deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    }
    deso_err ferr = opt_fuse_groups(g, p, fuse);
    if (ferr != DESO_OK) {
        free(vs);
        free(fuse);
        free(gsize);
        return ferr;
    }
    /* gsize[first]: members; gall[first]: the group is an all-reduce     */
    bool *gall = deso__calloc((size_t)(g->nnodes > 0 ? g->nnodes : 1), sizeof *gall);
    if (gall == NULL) {
        free(vs);
        free(fuse);
        free(gsize);
        return deso__fail(DESO_ENOMEM, "optimizer: out of memory");
    }
    for (int i = 0; i < g->nnodes; i++)
        if (fuse[i] >= 0) {
            gsize[fuse[i]] += blas_red_width(g->nodes[i].d.op);
            int rd = blas_red_dim(&g->nodes[i].d, p->node[i].req);
            if (rd >= 0 && (p->node[i].res.rep & (1u << rd)))
                gall[fuse[i]] = true;
        }
    opt_counts tot;
    memset(&tot, 0, sizeof tot);
    if (ev != NULL) {
        memset(ev->edge, 0, (size_t)ev->nedges * sizeof *ev->edge);
    }
    deso_err err = DESO_OK;
    for (int i = 0; i < g->nnodes && err == DESO_OK; i++) {
        const opt_node *nd = &g->nodes[i];
        const opt_place *pl = &p->node[i];
        for (int k = 0; k < nd->d.nops; k++) {
            opt_edge e;
            vstate *v = &vs[nd->ops[k]];
            if (v->nv == 0) {
                err = deso__fail(DESO_EINTERNAL,
                                 "opt_plan_cost: node %d reads value %d "
                                 "before it is produced", i, nd->ops[k]);
                break;
            }
            err = need(v, &pl->req[k], g->vals[nd->ops[k]].ooc, pp, memo,
                       &e);
            if (err != DESO_OK) break;
            opt__add(&tot, &e.cost);
            if (ev != NULL) ev->edge[i * BLAS_MAXOPS + k] = e;
        }
        opt_counts nc;
        /* a fused group's one collective is its first member's cost       */
        if (fuse[i] < 0) opt__node_cost(g, nd, pl, pp, 0, false, &nc);
        else if (fuse[i] == i)
            opt__node_cost(g, nd, pl, pp, gsize[i], gall[i], &nc);
        else memset(&nc, 0, sizeof nc);
        nc.time += opt__node_work(nd, pl, pp);
        opt__add(&tot, &nc);
        if (ev != NULL) ev->node_cost[i] = nc;
        vstate *r = &vs[nd->res];
        r->nv = 1;
        r->v[0] = pl->res;
        r->made[0] = false;
    }
    for (int v = 0; v < g->nvals && err == DESO_OK; v++) {
        const opt_value *val = &g->vals[v];
        if (!val->has_want || vs[v].nv == 0) continue;
        opt_edge e;
        err = need(&vs[v], &val->want, val->ooc, pp, memo, &e);
        if (err != DESO_OK) break;
        opt__add(&tot, &e.cost);
        if (ev != NULL) ev->edge[g->nnodes * BLAS_MAXOPS + v] = e;
    }
    /* loop-carried values back where they came in: time only (see
     * opt_graph_carry)                                                    */
    for (int v = 0; v < g->nvals && err == DESO_OK; v++) {
        const opt_value *val = &g->vals[v];
        if (val->carry < 0 || vs[v].nv == 0) continue;
        opt_edge e;
        blas_layout back = opt__carry_back(g, p, v);
        err = need(&vs[v], &back, val->ooc, pp, memo, &e);
        if (err == DESO_OK) tot.time += e.cost.time;
    }
    free(vs);
    free(fuse);
    free(gsize);
    free(gall);
    if (err == DESO_OK && total != NULL) *total = tot;
    return err;
}
