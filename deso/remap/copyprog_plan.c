/* deso/remap/copyprog_plan.c: copy programs compiled straight from a
 * plan's per-period description of a message (placement/remap.h), so that
 * compiling, like planning, costs one period and not one pass over the
 * elements.  Pure computation, no MPI.
 *
 * The rows of a column are one period of pieces repeated `full` times and
 * then cut: one group of the period's items repeated `full` times (or,
 * when the period holds too many items, each progression a group of its
 * own per period).  Columns repeat that row program at a fixed shift: a
 * row program of few items, spelt out, becomes one group per column
 * progression, and groups that carry each other on merge, so the columns
 * of every period make one group; a longer row program is the body of a
 * loop (copyprog.h) per column progression, loops merged likewise.
 * Neighbours that continue each other merge, as deso__cp_compile's do,
 * so messages that are one run stay one run.                           */
#include "deso/remap/copyprog.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

/* Longest period, in items, made one repeated group; longer periods are
 * spelt out progression by progression.                                  */
#define FLAT_MAX 4096

/* Row programs of at most this many items are spelt out and repeated
 * across the columns of a piece as one group.                            */
#define ROWS_FLAT 64

/* A program being built, in (mine, other) coordinates: a is always this
 * rank's array, b the packed buffer or the self copy's target.          */
typedef struct cpb {
    deso__cp_group *g;
    deso__cp_item *it;
    int64_t ng, ni, capg, capi, elems;
    deso__cp_loop *lp;       /* the loops that repeat (reps >= 2)         */
    int64_t nl, capl;
    int64_t floor;           /* groups below it are in closed loops       */
    bool open;               /* the last group is literal and open        */
    bool nomem;
    bool borrowed;           /* g and it are the caller's (cpb_scratch)   */
} cpb;

/* A scratch program (never handed over) that starts in the caller's
 * arrays of ROWS_FLAT groups and items, and moves to the heap only when
 * it outgrows them: a short row program then costs no allocation.      */
static cpb cpb_scratch(deso__cp_group *g, deso__cp_item *it)
{
    return (cpb){ .g = g, .it = it, .capg = ROWS_FLAT, .capi = ROWS_FLAT,
                  .borrowed = true };
}

static void cpb_free(cpb *b)
{
    if (!b->borrowed) {
        free(b->g);
        free(b->it);
    }
    free(b->lp);
    memset(b, 0, sizeof *b);
}

/* The caller's arrays of a scratch program copied to the heap.          */
static bool unborrow(cpb *b)
{
    deso__cp_group *g = deso__malloc((size_t)b->capg * sizeof *g);
    deso__cp_item *it = deso__malloc((size_t)b->capi * sizeof *it);
    if (!g || !it) {
        free(g);
        free(it);
        return false;
    }
    memcpy(g, b->g, (size_t)b->ng * sizeof *g);
    memcpy(it, b->it, (size_t)b->ni * sizeof *it);
    b->g = g;
    b->it = it;
    b->borrowed = false;
    return true;
}

static bool reserve(cpb *b, int64_t items)
{
    if (b->nomem) return false;
    bool grow = b->ni + items > b->capi || b->ng + 1 > b->capg;
    if (grow && b->borrowed && !unborrow(b)) return !(b->nomem = true);
    if (b->ni + items > b->capi) {
        int64_t c = b->capi ? 2 * b->capi : 16;
        while (c < b->ni + items) c *= 2;
        deso__cp_item *v = deso__realloc(b->it, (size_t)c * sizeof *v);
        if (!v) return !(b->nomem = true);
        b->it = v;
        b->capi = c;
    }
    if (b->ng + 1 > b->capg) {
        int64_t c = b->capg ? 2 * b->capg : 16;
        deso__cp_group *v = deso__realloc(b->g, (size_t)c * sizeof *v);
        if (!v) return !(b->nomem = true);
        b->g = v;
        b->capg = c;
    }
    return true;
}

/* Whether x continues p (p then covers both): contiguous or at p's
 * stride, the rules of deso__cp_compile plus strided items.              */
static bool extend(deso__cp_item *p, const deso__cp_item *x)
{
    int64_t sa = p->len > 1 ? p->sa : x->len > 1 ? x->sa : x->a - p->a;
    int64_t sb = p->len > 1 ? p->sb : x->len > 1 ? x->sb : x->b - p->b;
    if (sa == 0 || sb == 0) return false;
    if (p->len > 1 && x->len > 1 && (x->sa != sa || x->sb != sb))
        return false;
    if (p->len == 1 && x->len > 1 && (sa != x->sa || sb != x->sb))
        return false;
    if (x->a != p->a + p->len * sa || x->b != p->b + p->len * sb)
        return false;
    p->sa = sa;
    p->sb = sb;
    p->len += x->len;
    return true;
}

/* Appends one item to the open literal group, merging when it can.       */
static void cpb_item(cpb *b, deso__cp_item x)
{
    if (x.len <= 0 || b->nomem) return;
    if (x.len == 1) x.sa = x.sb = 1;
    b->elems += x.len;
    if (b->open && extend(&b->it[b->ni - 1], &x)) return;
    if (!reserve(b, 1)) return;
    if (!b->open) {
        b->g[b->ng++] = (deso__cp_group){ .first = b->ni, .k = 0, .reps = 1 };
        b->open = true;
    }
    b->it[b->ni++] = x;
    b->g[b->ng - 1].k++;
}

/* Whether k items x repeated reps times at shift (da, db) carry on the
 * last group (its items, one repetition further); then it takes them.
 * Column progressions of one row program, emitted one by one, so become
 * one group over all the columns.                                        */
static bool cpb_continue(cpb *b, const deso__cp_item *x, int64_t k,
                         int64_t reps, int64_t da, int64_t db)
{
    if (b->open || b->ng <= b->floor) return false;
    deso__cp_group *g = &b->g[b->ng - 1];
    if (g->reps < 2 || g->k != k ||
        (reps > 1 && (g->da != da || g->db != db)))
        return false;
    int64_t elems = 0;
    for (int64_t j = 0; j < k; j++) {
        const deso__cp_item *u = &b->it[g->first + j];
        if (x[j].a != u->a + g->reps * g->da ||
            x[j].b != u->b + g->reps * g->db || x[j].len != u->len ||
            (u->len > 1 && (x[j].sa != u->sa || x[j].sb != u->sb)))
            return false;
        elems += x[j].len;
    }
    g->reps += reps;
    b->elems += reps * elems;
    return true;
}

/* Whether the last k items of the open literal group are x one
 * repetition back (shifted by -(da, db)); then they leave it, to start
 * the group of x one repetition earlier (a first column emitted alone,
 * then the progression of the others).                                   */
static bool cpb_absorb(cpb *b, const deso__cp_item *x, int64_t k,
                       int64_t da, int64_t db)
{
    if (!b->open || b->g[b->ng - 1].k < k) return false;
    const deso__cp_item *u = &b->it[b->ni - k];
    int64_t elems = 0;
    for (int64_t j = 0; j < k; j++) {
        if (u[j].a != x[j].a - da || u[j].b != x[j].b - db ||
            u[j].len != x[j].len ||
            (x[j].len > 1 && (u[j].sa != x[j].sa || u[j].sb != x[j].sb)))
            return false;
        elems += u[j].len;
    }
    b->ni -= k;
    b->elems -= elems;
    if ((b->g[b->ng - 1].k -= k) == 0) {
        b->ng--;
        b->open = false;        /* literal groups are never adjacent    */
    }
    return true;
}

/* Appends k items repeated reps times, shifted by (da, db) each time.   */
static void cpb_group(cpb *b, const deso__cp_item *x, int64_t k,
                      int64_t reps, int64_t da, int64_t db)
{
    if (reps <= 0 || k <= 0 || b->nomem) return;
    if (cpb_continue(b, x, k, reps, da, db)) return;
    if (reps >= 2 && k <= ROWS_FLAT && cpb_absorb(b, x, k, da, db)) {
        deso__cp_item y[ROWS_FLAT];
        for (int64_t j = 0; j < k; j++) {
            y[j] = x[j];
            y[j].a -= da;
            y[j].b -= db;
        }
        cpb_group(b, y, k, reps + 1, da, db);
        return;
    }
    if (reps == 1) {
        for (int64_t j = 0; j < k; j++) cpb_item(b, x[j]);
        return;
    }
    if (k == 1 && x->len == 1) {
        cpb_item(b, (deso__cp_item){ x->a, x->b, reps, da, db });
        return;
    }
    if (k == 1 && da == x->len * x->sa && db == x->len * x->sb) {
        cpb_item(b, (deso__cp_item){ x->a, x->b, x->len * reps, x->sa, x->sb });
        return;
    }
    if (!reserve(b, k)) return;
    b->g[b->ng++] = (deso__cp_group){ .first = b->ni, .k = k, .reps = reps,
                                      .da = da, .db = db };
    for (int64_t j = 0; j < k; j++) b->it[b->ni++] = x[j];
    for (int64_t j = 0; j < k; j++) b->elems += reps * x[j].len;
    b->open = false;
}

/* The other side's offset and step of a piece: the packed position (the
 * buffer counts up) or the target offset.                                */
typedef struct oside {
    bool packed;
    int64_t pos;             /* packed: elements emitted so far           */
} oside;

/* n pieces of q from piece 0, shifted by (sm, st), each `len` long.      */
static void seq_emit(cpb *b, const pl_seq *q, int64_t n, int64_t len,
                     int64_t sm, int64_t st, oside *o)
{
    int64_t bb = o->packed ? o->pos : q->theirs + st;
    int64_t db = o->packed ? len : q->dtheirs;
    deso__cp_item x = { q->mine + sm, bb, len, 1, 1 };
    cpb_group(b, &x, 1, n, q->dmine, db);
    o->pos += n * len;
}

/* The pieces of d cut at rem (the last, partial period), shifted by
 * (sm, st).                                                              */
static void rows_tail(cpb *b, const pl_dim *d, int64_t sm, int64_t st,
                      oside *o)
{
    for (int64_t i = 0; i < d->nseq; i++) {
        const pl_seq *q = &d->seq[i];
        int64_t n, last;
        pl_seq_clip(q, d->rem, &n, &last);
        if (n == 0) break;
        int64_t whole = last == q->len ? n : n - 1;
        if (whole > 0) seq_emit(b, q, whole, q->len, sm, st, o);
        if (whole < n) {
            pl_seq p = *q;
            p.mine += whole * q->dmine;
            p.theirs += whole * q->dtheirs;
            seq_emit(b, &p, 1, last, sm, st, o);
        }
    }
}

/* Items of one period: one progression of single elements is one strided
 * item, others one item per piece.                                       */
static int64_t period_items(const pl_dim *d)
{
    int64_t n = 0;
    for (int64_t i = 0; i < d->nseq && n <= FLAT_MAX; i++)
        n += d->seq[i].len == 1 ? 1 : d->seq[i].cnt;
    return n;
}

/* The row program of one column (mine offsets from 0; the other side
 * from o): the whole periods, then the cut one.                         */
static void rows_emit(cpb *b, const pl_dim *d, oside *o)
{
    if (d->full >= 2 && period_items(d) <= FLAT_MAX) {
        deso__cp_group g1[ROWS_FLAT];
        deso__cp_item it1[ROWS_FLAT];
        cpb one = cpb_scratch(g1, it1);
        oside o1 = *o;
        for (int64_t i = 0; i < d->nseq; i++) {
            const pl_seq *q = &d->seq[i];
            if (q->len == 1 || q->cnt == 1) {
                seq_emit(&one, q, q->cnt, q->len, 0, 0, &o1);
                continue;
            }
            for (int64_t j = 0; j < q->cnt; j++)   /* flat: one group      */
                cpb_item(&one, (deso__cp_item){ q->mine + j * q->dmine,
                         o1.packed ? o1.pos + j * q->len
                                   : q->theirs + j * q->dtheirs,
                         q->len, 1, 1 });
            o1.pos += q->cnt * q->len;
        }
        b->nomem |= one.nomem;
        cpb_group(b, one.it, one.ni, d->full, d->dmine,
                  o->packed ? d->per : d->dtheirs);
        cpb_free(&one);
        o->pos += d->full * d->per;
    } else {
        for (int64_t p = 0; p < d->full; p++)
            for (int64_t i = 0; i < d->nseq; i++)
                seq_emit(b, &d->seq[i], d->seq[i].cnt, d->seq[i].len,
                         p * d->dmine, p * d->dtheirs, o);
    }
    rows_tail(b, d, d->full * d->dmine, d->full * d->dtheirs, o);
}

/* Largest program spelt out and compiled again (deso__cp_recompile).   */
#define RECOMPILE_MAX ((int64_t)1 << 16)

/* Items of b spelt out, or -1 when more than RECOMPILE_MAX.             */
static int64_t spelt(const cpb *b)
{
    deso__copy c = { .ngroups = b->ng, .nitems = b->ni, .g = b->g,
                     .it = b->it };
    return deso__cp_spelt(&c, RECOMPILE_MAX);
}

/* Spells R out into x (spelt(R) items, offsets as in R).                 */
static void flatten(const cpb *R, deso__cp_item *x)
{
    deso__copy c = { .ngroups = R->ng, .nitems = R->ni, .g = R->g,
                     .it = R->it };
    deso__cp_spell(&c, x);
}

/* Appends program R (one column's rows) shifted by (sa, sb); x: scratch
 * for R->ni items.                                                       */
static void append_shifted(cpb *b, const cpb *R, int64_t sa, int64_t sb,
                           deso__cp_item *x)
{
    for (int64_t gi = 0; gi < R->ng && !b->nomem; gi++) {
        const deso__cp_group *g = &R->g[gi];
        for (int64_t j = 0; j < g->k; j++) {
            x[j] = R->it[g->first + j];
            x[j].a += sa;
            x[j].b += sb;
        }
        cpb_group(b, x, g->k, g->reps, g->da, g->db);
    }
}

/* The flat row program f (nf items) put at column offsets (cm, b0): x.   */
static void at_column(const deso__cp_item *f, int64_t nf, int64_t a0,
                      int64_t b0, deso__cp_item *x)
{
    for (int64_t j = 0; j < nf; j++) {
        x[j] = f[j];
        x[j].a += a0;
        x[j].b += b0;
    }
}

/* Columns of a message at column offsets (a, b) on both sides, `reps`
 * of them, (da, db) apart: a progression of single columns, or the
 * columns of one piece.                                                 */
typedef struct colrun {
    int64_t a, b, reps, da, db;
} colrun;

typedef void (*colrun_fn)(void *ctx, colrun y);

/* Calls fn for every column run of c shifted by (oa, ob) elements, in
 * order, until *stop: one per progression of single columns, one per
 * piece of several; per: the rows of one column (the packed side moves
 * that much per column, from *pos).                                     */
static void dim_colruns(const pl_dim *c, int64_t oa, int64_t ob,
                        bool packed, int64_t per, int64_t ldm, int64_t ldt,
                        int64_t *pos, const bool *stop, colrun_fn fn,
                        void *ctx)
{
    for (int64_t p = 0; p <= c->full && !*stop; p++)
        for (int64_t i = 0; i < c->nseq; i++) {
            const pl_seq *q = &c->seq[i];
            int64_t n = q->cnt, last = q->len;
            if (p == c->full) pl_seq_clip(q, c->rem, &n, &last);
            int64_t cm = q->mine + p * c->dmine;
            int64_t ct = q->theirs + p * c->dtheirs;
            bool single = q->len == 1;
            for (int64_t j = 0; j < (single ? (n > 0) : n); j++) {
                colrun y = { (cm + j * q->dmine) * ldm + oa,
                             packed ? *pos
                                    : (ct + j * q->dtheirs) * ldt + ob,
                             single ? n : j == n - 1 ? last : q->len,
                             single ? q->dmine * ldm : ldm,
                             packed ? per : single ? q->dtheirs * ldt : ldt };
                fn(ctx, y);
                *pos += y.reps * per;
            }
        }
}

/* Calls fn for every column run of message m in order (dimension 1's
 * runs at every shift of its outer dimensions), until *stop.           */
static void each_colrun(const pl_msg *m, bool packed, int64_t per,
                        int64_t ldm, int64_t ldt, const bool *stop,
                        colrun_fn fn, void *ctx)
{
    int64_t pos = 0, sg, sm, st;
    pl_outer_it o = PL_OUTER_IT(m);
    while (!*stop && pl_outer_next(&o, &sg, &sm, &st))
        dim_colruns(&m->cols, sm * ldm, st * ldt, packed, per, ldm, ldt,
                    &pos, stop, fn, ctx);
}

/* A message whose row program is flat (f, nf items): each column run is
 * one group of the row items, and runs that carry each other on merge
 * (cpb_continue), so the columns cost O(periods x progressions), not
 * O(columns).  x: scratch for nf items.                                 */
typedef struct flat_cols {
    cpb *b;
    const deso__cp_item *f;
    int64_t nf;
    deso__cp_item *x;
} flat_cols;

static void flat_run(void *ctx, colrun y)
{
    flat_cols *c = ctx;
    at_column(c->f, c->nf, y.a, y.b, c->x);
    cpb_group(c->b, c->x, c->nf, y.reps, y.da, y.db);
}

/* Whether x carries the last run l on (then l takes it).                */
static bool colrun_join(colrun *l, colrun x)
{
    int64_t da = l->reps > 1 ? l->da : x.a - l->a;
    int64_t db = l->reps > 1 ? l->db : x.b - l->b;
    if (x.a != l->a + l->reps * da || x.b != l->b + l->reps * db ||
        (x.reps > 1 && (x.da != da || x.db != db)))
        return false;
    l->da = da;
    l->db = db;
    l->reps += x.reps;
    return true;
}

/* Room for one more loop in b; false (and b->nomem) when out of memory. */
static bool loop_room(cpb *b)
{
    if (b->nl < b->capl) return true;
    int64_t c = b->capl ? 2 * b->capl : 8;
    deso__cp_loop *v = deso__realloc(b->lp, (size_t)c * sizeof *v);
    if (!v) return !(b->nomem = true);
    b->lp = v;
    b->capl = c;
    return true;
}

/* Appends the loop of run l: the row program R at its first column, kept
 * apart from the groups before and after (nothing merges across a loop's
 * bounds), repeated l->reps times.  x: scratch for R's items.          */
static void loop_emit(cpb *b, const cpb *R, const colrun *l,
                      deso__cp_item *x)
{
    b->open = false;
    b->floor = b->ng;
    int64_t g0 = b->ng, e0 = b->elems;
    append_shifted(b, R, l->a, l->b, x);
    b->open = false;
    b->floor = b->ng;
    if (l->reps < 2 || b->nomem || b->ng == g0 || !loop_room(b)) return;
    b->lp[b->nl] = (deso__cp_loop){ g0, b->ng, l->reps, l->da, l->db,
                                    b->nl + 1, -1 };
    b->nl++;
    b->elems += (l->reps - 1) * (b->elems - e0);
}

/* Adds run x to the pending run *l, emitting *l first when x does not
 * carry it on.                                                          */
static void colrun_add(cpb *b, const cpb *R, colrun *l, bool *have,
                       colrun x, deso__cp_item *scratch)
{
    if (*have && colrun_join(l, x)) return;
    if (*have) loop_emit(b, R, l, scratch);
    *l = x;
    *have = true;
}

/* A message whose row program R is long: one loop of R per column run,
 * runs that carry each other on merged, so the program holds
 * O(column pieces) groups, not O(columns).  x: scratch for R's items.  */
typedef struct loop_cols {
    cpb *b;
    const cpb *R;
    colrun l;
    bool have;
    deso__cp_item *x;
} loop_cols;

static void loop_run(void *ctx, colrun y)
{
    loop_cols *c = ctx;
    colrun_add(c->b, c->R, &c->l, &c->have, y, c->x);
}

/* ---- d-dimensional messages: one loop per level of each dimension ------ */

/* A d-dimensional message's columns (d >= 3) compiled as nested loops:
 * each column dimension, slowest first, is its whole periods (a loop of
 * one period), then the cut one; a period is its progressions (a loop
 * of pieces each), a piece its elements (a loop of the faster
 * dimensions, or of the row program R for dimension 1).  The program
 * then holds O(product of the dimensions' progressions per period)
 * loops and R's groups once per innermost loop, whatever the extents.  */
typedef struct nest {
    cpb *b;
    const cpb *R;
    deso__cp_item *x;          /* scratch for R's items                   */
    bool packed;
    int nd;                    /* column dimensions                       */
    const pl_dim *dim[PL_ND_MAX];        /* slowest first                 */
    int64_t sa[PL_ND_MAX], sb[PL_ND_MAX];  /* offsets per element         */
    int64_t parent;            /* the loop being built, -1 at the top     */
    const deso__cp_item *f;    /* R spelt out when flat (nf items), or    */
    int64_t nf, per, ldm, ldt; /* nf = 0; per: R's elements               */
} nest;

/* Opens a loop inside n->parent at the end of the program: its index,
 * or -1 when out of memory.                                           */
static int64_t nest_open(nest *n)
{
    cpb *b = n->b;
    if (!loop_room(b)) return -1;
    b->open = false;             /* nothing merges across a loop's bounds */
    b->floor = b->ng;
    int64_t li = b->nl++;
    b->lp[li] = (deso__cp_loop){ .g0 = b->ng, .reps = 1, .up = n->parent };
    n->parent = li;
    return li;
}

/* Removes loop li, the loops inside it taking its place.               */
static void drop_loop(cpb *b, int64_t li)
{
    int64_t up = b->lp[li].up;
    for (int64_t j = li + 1; j < b->nl; j++) {
        deso__cp_loop v = b->lp[j];
        v.end--;
        v.up = v.up == li ? up : v.up > li ? v.up - 1 : v.up;
        b->lp[j - 1] = v;
    }
    b->nl--;
}

/* Simplifies closed loop li: an empty one goes; one run once around
 * loops goes; one around a single loop that it only continues (run once,
 * or repeated at the shift that carries it on) hands it its repetitions. */
static void nest_fold(cpb *b, int64_t li)
{
    deso__cp_loop *L = &b->lp[li];
    if (L->g0 == L->g1) {
        b->nl = li;
        return;
    }
    if (L->end == li + 1) return;
    if (L->reps == 1) {
        drop_loop(b, li);
        return;
    }
    deso__cp_loop *c = &b->lp[li + 1];
    if (c->end != L->end) return;
    if (c->reps == 1) {
        c->da = L->da;
        c->db = L->db;
    } else if (c->reps * c->da != L->da || c->reps * c->db != L->db) {
        return;
    }
    c->reps *= L->reps;
    drop_loop(b, li);
}

/* Closes loop li, opened when the program had e0 elements: its body
 * repeats reps times, shifted by (da, db) (on a packed side by the
 * body's elements).                                                   */
static void nest_close(nest *n, int64_t li, int64_t reps, int64_t da,
                       int64_t db, int64_t e0)
{
    cpb *b = n->b;
    deso__cp_loop *L = &b->lp[li];
    n->parent = L->up;
    b->open = false;
    b->floor = b->ng;
    int64_t body = b->elems - e0;
    *L = (deso__cp_loop){ L->g0, b->ng, reps, da, n->packed ? body : db,
                          b->nl, L->up };
    b->elems += (reps - 1) * body;
    nest_fold(b, li);
}

static void nest_dim(nest *n, int j, int64_t a, int64_t bo);

/* One piece of dimension j, `len` elements from offsets (a, bo): a loop
 * of the faster dimensions, or of R for the fastest.                   */
static void nest_piece(nest *n, int j, int64_t a, int64_t bo, int64_t len)
{
    int64_t e0 = n->b->elems, li = nest_open(n);
    if (li < 0) return;
    if (j + 1 < n->nd) {
        nest_dim(n, j + 1, a, bo);
    } else if (n->nf > 0) {          /* R's items over the piece's columns */
        at_column(n->f, n->nf, a, n->packed ? e0 : bo, n->x);
        cpb_group(n->b, n->x, n->nf, len, n->ldm,
                  n->packed ? n->per : n->ldt);
        len = 1;
    } else {
        append_shifted(n->b, n->R, a, n->packed ? e0 : bo, n->x);
    }
    nest_close(n, li, len, n->sa[j], n->sb[j], e0);
}

/* `cnt` pieces of progression q of dimension j, each `len` long, the
 * first at offsets (a, bo).                                            */
static void nest_seq(nest *n, int j, const pl_seq *q, int64_t cnt,
                     int64_t len, int64_t a, int64_t bo)
{
    if (cnt == 1 || n->b->nomem) {
        if (cnt == 1) nest_piece(n, j, a, bo, len);
        return;
    }
    int64_t e0 = n->b->elems, li = nest_open(n);
    if (li < 0) return;
    nest_piece(n, j, a, bo, len);
    nest_close(n, li, cnt, q->dmine * n->sa[j], q->dtheirs * n->sb[j], e0);
}

/* The fastest dimension over a flat R at offsets (a, bo): one loop run
 * once whose groups are its column runs, each R's items repeated over
 * the run's columns, runs that carry each other on merged (flat_cols),
 * as a matrix's columns are.                                           */
static void nest_flat(nest *n, const pl_dim *D, int64_t a, int64_t bo)
{
    int64_t e0 = n->b->elems, pos = e0, li = nest_open(n);
    if (li < 0) return;
    flat_cols c = { n->b, n->f, n->nf, n->x };
    dim_colruns(D, a, bo, n->packed, n->per, n->ldm, n->ldt, &pos,
                &n->b->nomem, flat_run, &c);
    nest_close(n, li, 1, 0, 0, e0);
}

/* Most column runs of the fastest dimension listed by nest_flat; more
 * are looped over per period.                                         */
#define FLAT_COLRUNS 8

/* Column runs of D (dim_colruns's calls), or more than FLAT_COLRUNS.  */
static int64_t colruns_of(const pl_dim *D)
{
    int64_t k = 0;
    for (int64_t i = 0; i < D->nseq && k <= FLAT_COLRUNS; i++)
        k += D->seq[i].len == 1 ? 1 : D->seq[i].cnt;
    return D->full < FLAT_COLRUNS ? k * (D->full + 1) : FLAT_COLRUNS + 1;
}

/* Dimension j at offsets (a, bo): a loop of its whole periods, then its
 * progressions cut at rem (the last piece apart when cut short).       */
static void nest_dim(nest *n, int j, int64_t a, int64_t bo)
{
    const pl_dim *D = n->dim[j];
    int64_t sa = n->sa[j], sb = n->sb[j];
    if (n->nf > 0 && j + 1 == n->nd && colruns_of(D) <= FLAT_COLRUNS) {
        nest_flat(n, D, a, bo);
        return;
    }
    if (D->full >= 1) {
        int64_t e0 = n->b->elems, li = nest_open(n);
        if (li < 0) return;
        for (int64_t i = 0; i < D->nseq; i++) {
            const pl_seq *q = &D->seq[i];
            nest_seq(n, j, q, q->cnt, q->len, a + q->mine * sa,
                     bo + q->theirs * sb);
        }
        nest_close(n, li, D->full, D->dmine * sa, D->dtheirs * sb, e0);
    }
    a += D->full * D->dmine * sa;
    bo += D->full * D->dtheirs * sb;
    for (int64_t i = 0; i < D->nseq; i++) {
        const pl_seq *q = &D->seq[i];
        int64_t cnt, last;
        pl_seq_clip(q, D->rem, &cnt, &last);
        if (cnt == 0) break;
        int64_t whole = last == q->len ? cnt : cnt - 1;
        if (whole > 0)
            nest_seq(n, j, q, whole, q->len, a + q->mine * sa,
                     bo + q->theirs * sb);
        if (whole < cnt)
            nest_piece(n, j, a + (q->mine + whole * q->dmine) * sa,
                       bo + (q->theirs + whole * q->dtheirs) * sb, last);
    }
}

/* The columns of d-dimensional message m as nested loops of R.         */
static void nest_emit(cpb *b, const cpb *R, const pl_msg *m, bool packed,
                      int64_t ldm, int64_t ldt, deso__cp_item *x,
                      const deso__cp_item *f, int64_t nf)
{
    nest n = { .b = b, .R = R, .x = x, .packed = packed,
               .nd = m->nouter + 1, .parent = -1, .f = f, .nf = nf,
               .per = m->rows.count, .ldm = ldm, .ldt = ldt };
    for (int k = 0; k < m->nouter; k++) {
        int j = m->nouter - 1 - k;
        n.dim[j] = &m->outer[k];
        n.sa[j] = m->mstep[k] * ldm;
        n.sb[j] = m->tstep[k] * ldt;
    }
    n.dim[m->nouter] = &m->cols;
    n.sa[m->nouter] = ldm;
    n.sb[m->nouter] = ldt;
    nest_dim(&n, 0, 0, 0);
}

/* The whole message: the row program once, then either the columns by
 * progressions (a row program of at most ROWS_FLAT items, spelt out) or
 * loops of the row program (loop_cols).                                 */
static void msg_emit(cpb *b, const pl_msg *m, bool packed, int64_t ldm,
                     int64_t ldt)
{
    deso__cp_group rg[ROWS_FLAT];
    deso__cp_item rit[ROWS_FLAT], f[ROWS_FLAT], xs[ROWS_FLAT];
    cpb R = cpb_scratch(rg, rit);
    oside o = { packed, 0 };
    rows_emit(&R, &m->rows, &o);
    int64_t nf = spelt(&R);
    bool flat = nf >= 1 && nf <= ROWS_FLAT;
    deso__cp_item *x = R.ni <= ROWS_FLAT
        ? xs : deso__malloc((size_t)R.ni * sizeof *x);
    b->nomem |= R.nomem || x == NULL;
    int64_t per = m->rows.count;
    if (flat && !b->nomem) flatten(&R, f);
    if (m->nouter > 0 && !b->nomem) {
        nest_emit(b, &R, m, packed, ldm, ldt, x, f, flat ? nf : 0);
    } else if (flat && !b->nomem) {
        flat_cols c = { b, f, nf, x };
        each_colrun(m, packed, per, ldm, ldt, &b->nomem, flat_run, &c);
    } else if (!b->nomem) {
        loop_cols c = { b, &R, { 0 }, false, x };
        each_colrun(m, packed, per, ldm, ldt, &b->nomem, loop_run, &c);
        if (c.have) loop_emit(b, &R, &c.l, x);
    }
    if (x != xs) free(x);
    cpb_free(&R);
}

/* A program of few items in all but more than COMPACT_GROUPS groups (b,
 * whose arrays out holds) is spelt out and compiled again by
 * deso__cp_compile, whose search for periods also finds the ones that
 * span columns (a column's items repeated across columns): the program
 * executions were tuned on.  Larger ones stay as built, and so do
 * compact ones (columns by progressions, flat_cols, already give the
 * groups that span columns): spelling them out would cost O(columns).  */
#define COMPACT_GROUPS 2

static bool cp_recompile = true;

bool deso__cp_set_recompile(bool on)
{
    bool was = cp_recompile;
    cp_recompile = on;
    return was;
}

/* Swaps b's sides (built as this rank's array, the other side).         */
static void swap_sides(cpb *b)
{
    for (int64_t i = 0; i < b->ni; i++) {
        deso__cp_item *u = &b->it[i];
        *u = (deso__cp_item){ u->b, u->a, u->len, u->sb, u->sa };
    }
    for (int64_t gi = 0; gi < b->ng; gi++) {
        int64_t t = b->g[gi].da;
        b->g[gi].da = b->g[gi].db;
        b->g[gi].db = t;
    }
    for (int64_t li = 0; li < b->nl; li++) {
        int64_t t = b->lp[li].da;
        b->lp[li].da = b->lp[li].db;
        b->lp[li].db = t;
    }
}

/* A loop at the top run once: groups [g0, g1) at index n.               */
static deso__cp_loop once(int64_t g0, int64_t g1, int64_t n)
{
    return (deso__cp_loop){ g0, g1, 1, 0, 0, n + 1, -1 };
}

/* Hands b's arrays to out, its loops at the top completed into a
 * partition of the groups by loops run once (none when b has no loops),
 * the loops inside them renumbered.  False when out of memory (b then
 * still holds them).                                                  */
static bool hand_over(cpb *b, deso__copy *out)
{
    deso__cp_loop *lp = NULL;
    int64_t n = 0, at = 0;
    if (b->nl > 0) {
        lp = deso__malloc((size_t)(2 * b->nl + 1) * sizeof *lp);
        if (!lp) return false;
        for (int64_t i = 0; i < b->nl; i = b->lp[i].end) {
            if (b->lp[i].g0 > at) lp[n] = once(at, b->lp[i].g0, n), n++;
            int64_t shift = n - i;
            for (int64_t j = i; j < b->lp[i].end; j++, n++) {
                lp[n] = b->lp[j];
                lp[n].end += shift;
                if (lp[n].up >= 0) lp[n].up += shift;
            }
            at = b->lp[i].g1;
        }
        if (b->ng > at) lp[n] = once(at, b->ng, n), n++;
    }
    *out = (deso__copy){ .ngroups = b->ng, .nitems = b->ni,
                         .elems = b->elems, .g = b->g, .it = b->it,
                         .nloops = n, .lp = lp };
    free(b->lp);
    return true;
}

deso_err deso__cp_from_msg(const pl_msg *m, deso__cp_role role,
                           int64_t ld_mine, int64_t ld_theirs,
                           deso__copy *out)
{
    memset(out, 0, sizeof *out);
    cpb b = { 0 };
    bool packed = role == DESO__CP_SEND || role == DESO__CP_RECV;
    msg_emit(&b, m, packed, ld_mine, ld_theirs);
    if (role == DESO__CP_RECV || role == DESO__CP_PULL) swap_sides(&b);
    if (b.nomem || !hand_over(&b, out)) {
        cpb_free(&b);
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
    }
    int64_t n = cp_recompile && (out->ngroups > COMPACT_GROUPS ||
                                 deso__cp_looped(out))
                    ? deso__cp_spelt(out, RECOMPILE_MAX) : -1;
    if (n > 1) return deso__cp_recompile(out, n);
    return deso__cp_tables(out, false);
}
