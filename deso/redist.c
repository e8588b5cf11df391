/* deso/redist.c: executing a planned block-cyclic remap over MPI.
 *
 * The plan (placement/remap.h) lists, for this rank, the messages it sends
 * and receives as runs of its local arrays, each tagged with a schedule
 * step, plus the runs it copies to itself.  Execution walks the steps: post
 * the step's receives, pack and post its sends, then unpack receives as
 * they complete (MPI_Waitany).  The self copy runs while the first step's
 * messages are in flight, or, on flat arrays (ld = local rows), is fused
 * with the first step's packing or unpacking: one pass over the array the
 * two share, in cache-sized chunks (see deso__remap.fuse).  Identical
 * layouts out of place are one memcpy per rank.  Buffers hold one step's
 * messages and are made at plan time, so execution allocates nothing.
 *
 * Measured and rejected (MPICH 4.0 ch4:ucx, shared memory, P = 2): MPI
 * derived datatypes (MPI_Type_vector / indexed) instead of pack + unpack
 * were 10-30x slower than contiguous messages, whose transfer costs about
 * one memcpy; splitting messages into chunks slowed the transfer.        */
#include "redist_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "stats_impl.h"

deso_err deso__to_int(int64_t v, const char *what, int *out)
{
    if (v < INT_MIN || v > INT_MAX)
        return deso__fail(DESO_EOVERFLOW,
                          "%s = %lld does not fit in an MPI int", what,
                          (long long)v);
    *out = (int)v;
    return DESO_OK;
}

static deso_err mpi_fail(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) {
        len = 0;
    }
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = '\0';
    return deso__fail(DESO_EMPI, "deso remap: %s failed: %s", what, msg);
}

#define MPI_TRY(call, what)                                                  \
    do {                                                                     \
        int deso__rc = (call);                                               \
        if (deso__rc != MPI_SUCCESS) return mpi_fail(deso__rc, (what));      \
    } while (0)

/* ---- copying runs ------------------------------------------------------ */

static inline void copy_elems(double *restrict d, const double *restrict s,
                              int64_t len)
{
    /* Short runs are the common case of cyclic layouts: spelt out, since
     * the compiler would turn a loop into a call to memmove.             */
    switch (len) {
    case 8: d[7] = s[7]; /* fall through */
    case 7: d[6] = s[6]; /* fall through */
    case 6: d[5] = s[5]; /* fall through */
    case 5: d[4] = s[4]; /* fall through */
    case 4: d[3] = s[3]; /* fall through */
    case 3: d[2] = s[2]; /* fall through */
    case 2: d[1] = s[1]; /* fall through */
    case 1: d[0] = s[0]; /* fall through */
    case 0: return;
    default: memcpy(d, s, (size_t)len * sizeof *d);
    }
}

/* Copies len elements starting at planner offset soff of a column-major
 * array with s_rows local rows stored with leading dimension s_lld, to
 * planner offset doff of another.  The planner's offsets assume ld = local
 * rows; when a stored ld differs the run is cut at column boundaries.
 * A packed buffer is passed as rows = lld = INT64_MAX (never cut).        */
static void copy_run(const double *s, int64_t s_rows, int64_t s_lld,
                     int64_t soff, double *d, int64_t d_rows, int64_t d_lld,
                     int64_t doff, int64_t len)
{
    if (s_lld == s_rows && d_lld == d_rows) {
        copy_elems(d + doff, s + soff, len);
        return;
    }
    int64_t sc = soff / s_rows, sr = soff % s_rows;
    int64_t dc = doff / d_rows, dr = doff % d_rows;
    while (len > 0) {
        int64_t k = len;
        if (s_rows - sr < k) k = s_rows - sr;
        if (d_rows - dr < k) k = d_rows - dr;
        copy_elems(d + dc * d_lld + dr, s + sc * s_lld + sr, k);
        len -= k;
        sr += k;
        dr += k;
        if (sr == s_rows) { sr = 0; sc++; }
        if (dr == d_rows) { dr = 0; dc++; }
    }
}

/* ---- copy programs -------------------------------------------------------- */

#define CP_KMAX 64    /* longest period looked for, in runs               */
#define CP_WIN 512    /* items looked at to choose a period               */
#define CP_EMAX 512   /* longest period copied element by element         */

static void cp_free(deso__copy *c);

static bool item_shift(const deso__cp_item *x, const deso__cp_item *y,
                       int64_t da, int64_t db)
{
    return y->len == x->len && y->a - x->a == da && y->b - x->b == db &&
           y->sa == x->sa && y->sb == x->sb;
}

/* How many repetitions of the k items at it[0] (shifted by (da, db) each)
 * start the first n items, knowing that the first c0 do.                 */
static int64_t cp_extend(const deso__cp_item *it, int64_t n, int64_t k,
                         int64_t da, int64_t db, int64_t c0)
{
    int64_t c = c0;
    while ((c + 1) * k <= n) {
        int64_t j = 0, base = c * k;
        while (j < k && item_shift(&it[j], &it[base + j], c * da, c * db))
            j++;
        if (j < k) break;
        c++;
    }
    return c;
}

/* Compresses n items (consumed) into periodic groups.  Greedy: at each
 * position, the period k <= CP_KMAX that covers the most of the next
 * CP_WIN items (at least two repetitions; ties to the shorter), extended
 * as far as it goes; otherwise the item joins a literal group.  About
 * CP_KMAX * CP_WIN steps per group plus O(n): block-cyclic lists give few
 * groups (one per column of a matrix at most), irregular ones O(n KMAX). */
static deso_err cp_compile(deso__cp_item *it, int64_t n, deso__copy *out)
{
    memset(out, 0, sizeof *out);
    /* Merge runs contiguous on both sides, and single elements at a
     * constant stride (cyclic(1) sides) into strided items.              */
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (it[i].len <= 0) continue;
        out->elems += it[i].len;
        deso__cp_item *p = m > 0 ? &it[m - 1] : NULL;
        if (p && it[i].a == p->a + p->len * p->sa &&
            it[i].b == p->b + p->len * p->sb &&
            (it[i].len == 1 || (p->sa == 1 && p->sb == 1))) {
            p->len += it[i].len;
        } else if (p && p->len == 1 && it[i].len == 1 &&
                   it[i].a != p->a && it[i].b != p->b) {
            p->sa = it[i].a - p->a;
            p->sb = it[i].b - p->b;
            p->len = 2;
        } else {
            it[m++] = it[i];
        }
    }
    n = m;
    deso__cp_group *g = malloc((size_t)(n ? n : 1) * sizeof *g);
    if (g == NULL) return DESO_ENOMEM;
    int64_t ng = 0, ni = 0, i = 0;
    bool literal = false;             /* last group is open for literals */
    while (i < n) {
        /* The period covering the most of the next CP_WIN items (ties:
         * the shorter), then extended as far as it goes.                  */
        int64_t k = 0, da = 0, db = 0, reps = 0, win = n - i;
        if (win > CP_WIN) win = CP_WIN;
        for (int64_t kk = 1; kk <= CP_KMAX && 2 * kk <= win; kk++) {
            int64_t xa = it[i + kk].a - it[i].a, xb = it[i + kk].b - it[i].b;
            int64_t c = cp_extend(it + i, win, kk, xa, xb, 1);
            if (c >= 2 && c * kk > reps * k) {
                k = kk;
                reps = c;
                da = xa;
                db = xb;
            }
        }
        if (k > 0) reps = cp_extend(it + i, n - i, k, da, db, reps);
        if (k == 0) {                 /* no period here: a literal run    */
            if (!literal) {
                g[ng++] = (deso__cp_group){ .first = ni, .k = 0, .reps = 1 };
                literal = true;
            }
            it[ni++] = it[i++];
            g[ng - 1].k++;
            continue;
        }
        g[ng++] = (deso__cp_group){ .first = ni, .k = k, .reps = reps,
                                    .da = da, .db = db };
        for (int64_t j = 0; j < k; j++) it[ni + j] = it[i + j];
        ni += k;
        i += reps * k;
        literal = false;
    }
    out->ngroups = ng;
    out->nitems = ni;
    out->g = realloc(g, (size_t)(ng ? ng : 1) * sizeof *g);
    if (out->g == NULL) out->g = g;
    out->it = malloc((size_t)(ni ? ni : 1) * sizeof *out->it);
    if (out->it == NULL) {
        free(out->g);
        out->g = NULL;
        return DESO_ENOMEM;
    }
    memcpy(out->it, it, (size_t)ni * sizeof *it);

    /* Periodic groups of short runs are copied element by element from an
     * offset table: no branch per run.                                    */
    int64_t ne = 0;
    for (int64_t gi = 0; gi < ng; gi++) {
        deso__cp_group *q = &out->g[gi];
        int64_t e = 0;
        for (int64_t j = 0; j < q->k; j++) e += out->it[q->first + j].len;
        if (q->reps >= 2 && e <= CP_EMAX && e < 8 * q->k) {
            q->e0 = ne;
            q->ne = e;
            ne += e;
        }
    }
    if (ne > 0) {
        out->ea = malloc((size_t)ne * sizeof *out->ea);
        out->eb = malloc((size_t)ne * sizeof *out->eb);
        if (out->ea == NULL || out->eb == NULL) {
            cp_free(out);
            return DESO_ENOMEM;
        }
        out->nelem = ne;
        for (int64_t gi = 0; gi < ng; gi++) {
            const deso__cp_group *q = &out->g[gi];
            int64_t e = q->e0;
            for (int64_t j = 0; j < q->ne && e < q->e0 + q->ne; j++) {
                const deso__cp_item *u = &out->it[q->first + j];
                for (int64_t x = 0; x < u->len; x++, e++) {
                    out->ea[e] = u->a + x * u->sa;
                    out->eb[e] = u->b + x * u->sb;
                }
            }
        }
    }
    return DESO_OK;
}

static void cp_free(deso__copy *c)
{
    free(c->g);
    free(c->it);
    free(c->ea);
    free(c->eb);
    memset(c, 0, sizeof *c);
}

/* Copies one strided item between flat arrays.                          */
static inline void copy_item(double *restrict d, const double *restrict s,
                             const deso__cp_item *u)
{
    int64_t n = u->len, sa = u->sa, sb = u->sb;
    s += u->a;
    d += u->b;
    /* Gathers and scatters unrolled by 4, loads before stores (about 15%
     * faster than the plain loop, which gcc -O2 leaves scalar).           */
    if (sa == 1 && sb == 1) {
        copy_elems(d, s, n);
    } else if (sb == 1) {
        int64_t x = 0;
        for (; x + 4 <= n; x += 4) {
            double v0 = s[x * sa], v1 = s[(x + 1) * sa];
            double v2 = s[(x + 2) * sa], v3 = s[(x + 3) * sa];
            d[x] = v0;
            d[x + 1] = v1;
            d[x + 2] = v2;
            d[x + 3] = v3;
        }
        for (; x < n; x++) d[x] = s[x * sa];
    } else if (sa == 1) {
        int64_t x = 0;
        for (; x + 4 <= n; x += 4) {
            double v0 = s[x], v1 = s[x + 1], v2 = s[x + 2], v3 = s[x + 3];
            d[x * sb] = v0;
            d[(x + 1) * sb] = v1;
            d[(x + 2) * sb] = v2;
            d[(x + 3) * sb] = v3;
        }
        for (; x < n; x++) d[x * sb] = s[x];
    } else {
        for (int64_t x = 0; x < n; x++) d[x * sb] = s[x * sa];
    }
}

/* Runs units [lo, hi) of group gi between flat arrays: repetitions of a
 * periodic group, items of a literal one (reps == 1).                     */
static void cp_run_range(const deso__copy *c, int64_t gi, int64_t lo,
                         int64_t hi, const double *A, double *B)
{
    const deso__cp_group *g = &c->g[gi];
    const deso__cp_item *it = c->it + g->first;
    if (g->reps == 1) {
        for (int64_t j = lo; j < hi; j++) copy_item(B, A, &it[j]);
        return;
    }
    int64_t da = g->da, db = g->db;
    if (g->ne > 0) {                              /* element table      */
        const int64_t *ea = c->ea + g->e0, *eb = c->eb + g->e0;
        int64_t ne = g->ne;
        for (int64_t t = lo; t < hi; t++) {
            const double *restrict s = A + t * da;
            double *restrict d = B + t * db;
            for (int64_t e = 0; e < ne; e++) d[eb[e]] = s[ea[e]];
        }
    } else if (g->k == 1 && it->sa == 1 && it->sb == 1) {
        const deso__cp_item *u = it;
        for (int64_t t = lo; t < hi; t++)
            copy_elems(B + u->b + t * db, A + u->a + t * da, u->len);
    } else {
        for (int64_t t = lo; t < hi; t++)
            for (int64_t j = 0; j < g->k; j++)
                copy_item(B + t * db, A + t * da, &it[j]);
    }
}

/* Units of group gi: repetitions, or items of a literal group.            */
static int64_t cp_units(const deso__copy *c, int64_t gi)
{
    return c->g[gi].reps == 1 ? c->g[gi].k : c->g[gi].reps;
}

/* Runs the program from array A (rows, ld) to array B.                   */
static void cp_run(const deso__copy *c, const double *A, int64_t arows,
                   int64_t alld, double *B, int64_t brows, int64_t blld)
{
    bool flat = alld == arows && blld == brows;
    for (int64_t gi = 0; gi < c->ngroups; gi++) {
        const deso__cp_group *g = &c->g[gi];
        const deso__cp_item *it = c->it + g->first;
        int64_t da = g->da, db = g->db;
        if (flat) {
            cp_run_range(c, gi, 0, cp_units(c, gi), A, B);
            continue;
        }
        for (int64_t t = 0; t < g->reps; t++)
            for (int64_t j = 0; j < g->k; j++) {
                const deso__cp_item *u = &it[j];
                if (u->sa == 1 && u->sb == 1) {
                    copy_run(A, arows, alld, u->a + t * da, B, brows,
                             blld, u->b + t * db, u->len);
                    continue;
                }
                for (int64_t x = 0; x < u->len; x++)
                    copy_run(A, arows, alld, u->a + t * da + x * u->sa,
                             B, brows, blld, u->b + t * db + x * u->sb, 1);
            }
    }
}

/* A message with one run that stays contiguous under the caller's ld can
 * be sent from, or received into, the user's array directly.              */
static bool direct(const deso__msg *m, int64_t rows, int64_t lld)
{
    if (m->run_len < 0) return false;
    if (lld == rows) return true;
    return m->run_off % rows + m->run_len <= rows;
}

static int64_t run_pos(int64_t rows, int64_t lld, int64_t off)
{
    return (off / rows) * lld + off % rows;
}

static void *xcalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

/* ---- fusion ------------------------------------------------------------- */

#define FUSE_CHUNK 4096   /* elements of the shared array per chunk       */

/* Offset on the shared side (b if side_b) of unit u of group gi.          */
static int64_t unit_key(const deso__copy *c, int64_t gi, int64_t u,
                        bool side_b)
{
    const deso__cp_group *g = &c->g[gi];
    if (g->reps == 1) {
        const deso__cp_item *x = &c->it[g->first + u];
        return side_b ? x->b : x->a;
    }
    const deso__cp_item *x = &c->it[g->first];
    return side_b ? x->b + u * g->db : x->a + u * g->da;
}

typedef struct cursor { int64_t g, u; } cursor;

static deso_err seg_push(deso__remap *r, int64_t *cap, int prog, int64_t g,
                         int64_t lo, int64_t hi)
{
    if (hi <= lo) return DESO_OK;
    if (r->nsegs > 0) {                       /* extend the last piece    */
        deso__seg *q = &r->segs[r->nsegs - 1];
        if (q->prog == prog && q->g == g && q->hi == lo) {
            q->hi = hi;
            return DESO_OK;
        }
    }
    if (r->nsegs == *cap) {
        int64_t nc = *cap ? 2 * *cap : 64;
        deso__seg *ns = realloc(r->segs, (size_t)nc * sizeof *ns);
        if (ns == NULL) return DESO_ENOMEM;
        r->segs = ns;
        *cap = nc;
    }
    r->segs[r->nsegs++] = (deso__seg){ prog, g, lo, hi };
    return DESO_OK;
}

/* Interleaves the self copy with the fused messages' programs, in chunks
 * of FUSE_CHUNK elements of the shared side.  Every unit of every program
 * is emitted exactly once, whatever the offsets' order.                  */
static deso_err plan_segments(deso__remap *r)
{
    int np = 1 + r->nfuse;
    bool side_b = r->fuse == DESO__FUSE_UNPACK;
    const deso__copy **prog = malloc((size_t)np * sizeof *prog);
    cursor *cur = malloc((size_t)np * sizeof *cur);
    deso_err e = prog && cur ? DESO_OK : DESO_ENOMEM;
    if (e != DESO_OK) goto done;
    prog[0] = &r->self;
    for (int p = 1; p < np; p++)
        prog[p] = side_b ? &r->recv[r->fuse_msg[p - 1]].prog
                         : &r->send[r->fuse_msg[p - 1]].prog;
    for (int p = 0; p < np; p++) cur[p] = (cursor){ 0, 0 };
    int64_t cap = 0, limit = 0;
    for (;;) {
        bool left = false;
        int64_t next = INT64_MAX;
        for (int p = 0; p < np; p++)
            if (cur[p].g < prog[p]->ngroups) {
                left = true;
                int64_t k = unit_key(prog[p], cur[p].g, cur[p].u, side_b);
                if (k < next) next = k;
            }
        if (!left) break;
        limit += FUSE_CHUNK;
        if (next >= limit) limit = next - next % FUSE_CHUNK + FUSE_CHUNK;
        for (int p = 0; p < np; p++) {
            const deso__copy *c = prog[p];
            cursor *q = &cur[p];
            while (q->g < c->ngroups &&
                   unit_key(c, q->g, q->u, side_b) < limit) {
                const deso__cp_group *g = &c->g[q->g];
                int64_t n = cp_units(c, q->g), u = q->u + 1;
                int64_t d = side_b ? g->db : g->da;
                if (g->reps == 1) {
                    while (u < n && unit_key(c, q->g, u, side_b) < limit) u++;
                } else if (d > 0) {
                    int64_t k0 = unit_key(c, q->g, q->u, side_b);
                    int64_t m = (limit - k0 + d - 1) / d;   /* >= 1       */
                    u = q->u + m < n ? q->u + m : n;
                } else {
                    u = n;
                }
                e = seg_push(r, &cap, p, q->g, q->u, u);
                if (e != DESO_OK) goto done;
                q->u = u;
                if (u == n) {
                    q->g++;
                    q->u = 0;
                }
            }
        }
    }
done:
    free(prog);
    free(cur);
    return e;
}

/* Cuts the long items of literal groups into periodic groups of pieces
 * spanning at most `span` elements on either side, so that a fused pass
 * can interleave them with other programs.  Same copies, same order.    */
static deso_err cp_split(deso__copy *c, int64_t span)
{
    int64_t ng = 0, ni = 0;
    for (int64_t gi = 0; gi < c->ngroups; gi++) {
        const deso__cp_group *g = &c->g[gi];
        ng += 1;
        ni += g->k;
        if (g->reps == 1)
            for (int64_t j = 0; j < g->k; j++) {
                ng += 2;
                ni += 1;
            }
    }
    deso__cp_group *G = malloc((size_t)(ng ? ng : 1) * sizeof *G);
    deso__cp_item *I = malloc((size_t)(ni ? ni : 1) * sizeof *I);
    if (G == NULL || I == NULL) {
        free(G);
        free(I);
        return DESO_ENOMEM;
    }
    int64_t gn = 0, in = 0;
    bool open = false;                 /* last group is a literal one    */
    for (int64_t gi = 0; gi < c->ngroups; gi++) {
        const deso__cp_group *g = &c->g[gi];
        const deso__cp_item *it = c->it + g->first;
        if (g->reps != 1) {
            G[gn] = *g;
            G[gn++].first = in;
            for (int64_t j = 0; j < g->k; j++) I[in++] = it[j];
            open = false;
            continue;
        }
        for (int64_t j = 0; j < g->k; j++) {
            deso__cp_item u = it[j];
            int64_t st = u.sa > u.sb ? u.sa : u.sb;
            if (st < 1) st = 1;
            int64_t piece = span / st;
            if (piece >= 1 && u.len >= 2 * piece) {
                int64_t q = u.len / piece;
                G[gn++] = (deso__cp_group){ .first = in, .k = 1, .reps = q,
                                            .da = piece * u.sa,
                                            .db = piece * u.sb };
                I[in++] = (deso__cp_item){ u.a, u.b, piece, u.sa, u.sb };
                open = false;
                u.a += q * piece * u.sa;
                u.b += q * piece * u.sb;
                u.len -= q * piece;
                if (u.len == 0) continue;
            }
            if (!open) {
                G[gn++] = (deso__cp_group){ .first = in, .k = 0, .reps = 1 };
                open = true;
            }
            I[in++] = u;
            G[gn - 1].k++;
        }
    }
    free(c->g);
    free(c->it);
    c->g = G;
    c->it = I;
    c->ngroups = gn;
    c->nitems = in;
    return DESO_OK;
}

/* Chooses what the self copy is fused with (see deso__remap.fuse).        */
static deso_err plan_fusion(deso__remap *r)
{
    r->fuse = 0;
    if (r->self.elems == 0 || r->nsteps == 0) return DESO_OK;
    const deso__remap_step *st = &r->steps[0];
    int npack = 0, nunpack = 0, last = -1;
    for (int i = st->send0; i < st->send0 + st->nsend; i++)
        if (r->send[i].run_len < 0) npack++;
    for (int j = st->recv0; j < st->recv0 + st->nrecv; j++)
        if (r->recv[j].run_len < 0) {
            nunpack++;
            last = j;
        }
    if (cp_split(&r->self, FUSE_CHUNK) != DESO_OK) return DESO_ENOMEM;
    for (int i = st->send0; i < st->send0 + st->nsend; i++)
        if (r->send[i].run_len < 0 &&
            cp_split(&r->send[i].prog, FUSE_CHUNK) != DESO_OK)
            return DESO_ENOMEM;
    for (int j = st->recv0; j < st->recv0 + st->nrecv; j++)
        if (r->recv[j].run_len < 0 &&
            cp_split(&r->recv[j].prog, FUSE_CHUNK) != DESO_OK)
            return DESO_ENOMEM;
    /* Fusing with the packs measured as good as or better than with the
     * unpack (P = 2: 5-20% faster than no fusion, either way), and keeps
     * the self copy ahead of the first receive.                           */
    if (npack > 0) {
        r->fuse = DESO__FUSE_PACK;
        r->nfuse = npack;
    } else if (nunpack == 1) {
        r->fuse = DESO__FUSE_UNPACK;
        r->nfuse = 1;
    } else {
        return DESO_OK;
    }
    r->fuse_msg = xcalloc((size_t)r->nfuse, sizeof *r->fuse_msg);
    if (r->fuse_msg == NULL) return DESO_ENOMEM;
    if (r->fuse == DESO__FUSE_UNPACK) {
        r->fuse_msg[0] = last;
    } else {
        int n = 0;
        for (int i = st->send0; i < st->send0 + st->nsend; i++)
            if (r->send[i].run_len < 0) r->fuse_msg[n++] = i;
    }
    return plan_segments(r);
}

/* Runs the fused pass.                                                    */
static void run_segments(const deso__remap *r, const double *src,
                         double *dst)
{
    for (int64_t i = 0; i < r->nsegs; i++) {
        const deso__seg *q = &r->segs[i];
        if (q->prog == 0) {
            cp_run_range(&r->self, q->g, q->lo, q->hi, src, dst);
        } else if (r->fuse == DESO__FUSE_PACK) {
            const deso__msg *m = &r->send[r->fuse_msg[q->prog - 1]];
            cp_run_range(&m->prog, q->g, q->lo, q->hi, src,
                         r->sendbuf + m->buf_off);
        } else {
            const deso__msg *m = &r->recv[r->fuse_msg[q->prog - 1]];
            cp_run_range(&m->prog, q->g, q->lo, q->hi,
                         r->recvbuf + m->buf_off, dst);
        }
    }
}

/* ---- plan --------------------------------------------------------------- */

static bool same_ranks(const pl_bc_layout *a, const pl_bc_layout *b)
{
    int n = a->pr * a->pc;
    if (a->ranks == NULL && b->ranks == NULL) return true;
    for (int i = 0; i < n; i++) {
        int x = a->ranks ? a->ranks[i] : i;
        int y = b->ranks ? b->ranks[i] : i;
        if (x != y) return false;
    }
    return true;
}

static bool layouts_equal(const pl_bc_layout *a, const pl_bc_layout *b)
{
    if (a->m != b->m || a->n != b->n || a->pr != b->pr || a->pc != b->pc ||
        a->replicated != b->replicated)
        return false;
    if (!a->replicated && (a->mb != b->mb || a->nb != b->nb)) return false;
    return same_ranks(a, b);
}

/* Compiles one planner message; `send`: runs are on side a.             */
static deso_err compile_msg(const pl_msg *pm, bool send, deso__cp_item *tmp,
                            deso__msg *out)
{
    out->peer = pm->peer;
    out->step = pm->step;
    out->count = pm->count;
    int dummy;
    DESO_TRY(deso__to_int(pm->count, "message length", &dummy));
    out->run_len = -1;
    if (pm->nruns == 1) {
        out->run_off = pm->runs[0].off;
        out->run_len = pm->runs[0].len;
    }
    int64_t pos = 0;
    for (int64_t i = 0; i < pm->nruns; i++) {
        const pl_run *u = &pm->runs[i];
        tmp[i] = send ? (deso__cp_item){ u->off, pos, u->len, 1, 1 }
                      : (deso__cp_item){ pos, u->off, u->len, 1, 1 };
        pos += u->len;
    }
    if (pos != pm->count)
        return deso__fail(DESO_EINTERNAL, "deso__remap_init: a message to "
                          "or from rank %d has %lld elements in its runs but "
                          "count %lld", pm->peer, (long long)pos,
                          (long long)pm->count);
    if (cp_compile(tmp, pm->nruns, &out->prog) != DESO_OK)
        return deso__fail(DESO_ENOMEM, "deso__remap_init: out of memory");
    return DESO_OK;
}

static deso_err build(deso__remap *out, const pl_remap_rank *p)
{
    int64_t maxruns = p->nself;
    for (int i = 0; i < p->nsend; i++)
        if (p->send[i].nruns > maxruns) maxruns = p->send[i].nruns;
    for (int i = 0; i < p->nrecv; i++)
        if (p->recv[i].nruns > maxruns) maxruns = p->recv[i].nruns;
    deso__cp_item *tmp = xcalloc((size_t)maxruns, sizeof *tmp);
    out->send = xcalloc((size_t)p->nsend, sizeof *out->send);
    out->recv = xcalloc((size_t)p->nrecv, sizeof *out->recv);
    if (!tmp || !out->send || !out->recv) {
        free(tmp);
        return deso__fail(DESO_ENOMEM, "deso__remap_init: out of memory");
    }
    deso_err e = DESO_OK;
    for (int i = 0; i < p->nsend && e == DESO_OK; i++, out->nsend++)
        e = compile_msg(&p->send[i], true, tmp, &out->send[i]);
    for (int i = 0; i < p->nrecv && e == DESO_OK; i++, out->nrecv++)
        e = compile_msg(&p->recv[i], false, tmp, &out->recv[i]);
    if (e == DESO_OK) {
        for (int64_t i = 0; i < p->nself; i++)
            tmp[i] = (deso__cp_item){ p->self_src[i].off, p->self_dst[i].off,
                                      p->self_src[i].len, 1, 1 };
        if (cp_compile(tmp, p->nself, &out->self) != DESO_OK)
            e = deso__fail(DESO_ENOMEM, "deso__remap_init: out of memory");
    }
    free(tmp);
    return e;
}

deso_err deso__remap_init(MPI_Comm comm, const pl_bc_layout *src,
                          const pl_bc_layout *dst, pl_sched_kind kind,
                          deso__remap *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__remap_init: out is NULL");
    memset(out, 0, sizeof *out);
    out->comm = MPI_COMM_NULL;
    DESO_CHECK(src != NULL && dst != NULL, DESO_ENULL,
               "deso__remap_init: a layout is NULL");
    DESO_CHECK(comm != MPI_COMM_NULL, DESO_EINVAL,
               "deso__remap_init: comm is MPI_COMM_NULL");
    MPI_TRY(MPI_Comm_rank(comm, &out->me), "MPI_Comm_rank");
    MPI_TRY(MPI_Comm_size(comm, &out->size), "MPI_Comm_size");

    pl_remap_rank plan;
    memset(&plan, 0, sizeof plan);
    DESO_TRY(pl_remap_plan_rank(src, dst, out->size, kind, out->me, &plan));
    out->comm = comm;
    out->identical = layouts_equal(src, dst);
    out->src_rows = plan.src_lrows;
    out->src_cols = plan.src_lcols;
    out->dst_rows = plan.dst_lrows;
    out->dst_cols = plan.dst_lcols;
    out->src_elems = plan.src_lrows * plan.src_lcols;
    out->dst_elems = plan.dst_lrows * plan.dst_lcols;
    out->active = plan.nsend > 0 || plan.nrecv > 0 || plan.nself > 0;
    deso_err e = build(out, &plan);
    pl_remap_rank_free(&plan);   /* the compiled programs replace its runs */
    if (e != DESO_OK) {
        out->comm = MPI_COMM_NULL;
        deso__remap_free(out);
        return e;
    }

    /* Group the messages by step (both lists are sorted by step) and lay
     * out each step's messages in the buffers.                           */
    int nsteps = 0;
    for (int pass = 0; pass < 2; pass++) {
        int i = 0, j = 0, s = 0;
        int64_t sbuf = 0, rbuf = 0;
        int maxreq = 0;
        while (i < out->nsend || j < out->nrecv) {
            int k = INT_MAX;
            if (i < out->nsend) k = out->send[i].step;
            if (j < out->nrecv && out->recv[j].step < k) k = out->recv[j].step;
            deso__remap_step st = { .send0 = i, .recv0 = j };
            int64_t so = 0, ro = 0;
            for (; i < out->nsend && out->send[i].step == k; i++) {
                out->send[i].buf_off = so;
                so += out->send[i].count;
            }
            for (; j < out->nrecv && out->recv[j].step == k; j++) {
                out->recv[j].buf_off = ro;
                ro += out->recv[j].count;
            }
            st.nsend = i - st.send0;
            st.nrecv = j - st.recv0;
            if (pass == 1) out->steps[s] = st;
            s++;
            if (so > sbuf) sbuf = so;
            if (ro > rbuf) rbuf = ro;
            if (st.nsend + st.nrecv > maxreq) maxreq = st.nsend + st.nrecv;
        }
        if (pass == 0) {
            nsteps = s;
            out->steps = xcalloc((size_t)nsteps, sizeof *out->steps);
            if (out->steps == NULL) goto nomem;
        } else {
            out->nsteps = nsteps;
            out->sendbuf_len = sbuf;
            out->recvbuf_len = rbuf;
            out->max_reqs = maxreq;
        }
    }
    out->sendbuf = xcalloc((size_t)out->sendbuf_len, sizeof(double));
    out->recvbuf = xcalloc((size_t)out->recvbuf_len, sizeof(double));
    out->reqs = xcalloc((size_t)out->max_reqs, sizeof *out->reqs);
    out->req_msg = xcalloc((size_t)out->max_reqs, sizeof *out->req_msg);
    if (!out->sendbuf || !out->recvbuf || !out->reqs || !out->req_msg)
        goto nomem;
    if (plan_fusion(out) != DESO_OK) goto nomem;
    return DESO_OK;

nomem:
    out->comm = MPI_COMM_NULL;
    deso__remap_free(out);
    return deso__fail(DESO_ENOMEM, "deso__remap_init: out of memory for "
                      "the buffers of a remap");
}

void deso__remap_free(deso__remap *r)
{
    if (r == NULL) return;
    for (int i = 0; i < r->nsend; i++) cp_free(&r->send[i].prog);
    for (int i = 0; i < r->nrecv; i++) cp_free(&r->recv[i].prog);
    cp_free(&r->self);
    free(r->send);
    free(r->recv);
    free(r->steps);
    free(r->sendbuf);
    free(r->recvbuf);
    free(r->reqs);
    free(r->req_msg);
    free(r->fuse_msg);
    free(r->segs);
    if (r->owns_comm && r->comm != MPI_COMM_NULL) MPI_Comm_free(&r->comm);
    memset(r, 0, sizeof *r);
    r->comm = MPI_COMM_NULL;
}

/* ---- execution ---------------------------------------------------------- */

deso_err deso__remap_exec(deso__remap *r, const double *src_local,
                          int64_t src_lld, double *dst_local,
                          int64_t dst_lld)
{
    DESO_CHECK(r != NULL, DESO_ENULL, "deso__remap_exec: remap is NULL");
    if (!r->active) return DESO_OK;
    int64_t srows = r->src_rows, drows = r->dst_rows;
    if (r->src_elems > 0) {
        DESO_CHECK(src_local != NULL, DESO_ENULL,
                   "deso__remap_exec: rank %d holds %lld source elements "
                   "but src is NULL", r->me, (long long)r->src_elems);
        DESO_CHECK(src_lld >= (srows > 1 ? srows : 1), DESO_EINVAL,
                   "deso__remap_exec: src_lld = %lld < local rows %lld on "
                   "rank %d", (long long)src_lld, (long long)srows, r->me);
    }
    if (r->dst_elems > 0) {
        DESO_CHECK(dst_local != NULL, DESO_ENULL,
                   "deso__remap_exec: rank %d holds %lld target elements "
                   "but dst is NULL", r->me, (long long)r->dst_elems);
        DESO_CHECK(dst_lld >= (drows > 1 ? drows : 1), DESO_EINVAL,
                   "deso__remap_exec: dst_lld = %lld < local rows %lld on "
                   "rank %d", (long long)dst_lld, (long long)drows, r->me);
    }
    if (srows == 0) src_lld = 0;     /* nothing to address; keep ld == rows */
    if (drows == 0) dst_lld = 0;

    /* Identical layouts in place: nothing to move.                        */
    if (r->identical && (const double *)dst_local == src_local &&
        src_lld == dst_lld)
        return DESO_OK;
    /* Out of place, flat: one copy of the local array.                   */
    if (r->identical && srows == src_lld && drows == dst_lld &&
        r->src_elems == r->dst_elems) {
        double a = deso__now();
        if (r->src_elems > 0)
            memcpy(dst_local, src_local,
                   (size_t)r->src_elems * sizeof *dst_local);
        deso__stats_time(DESO_T_OVERHEAD, deso__now() - a);
        return DESO_OK;
    }

    double t_pack = 0.0;
    double t0 = deso__now();
    bool self_done = false;
    /* The fused pass needs flat arrays (ld = local rows).                 */
    int fuse = srows == src_lld && drows == dst_lld ? r->fuse : 0;

    for (int k = 0; k < r->nsteps; k++) {
        const deso__remap_step *st = &r->steps[k];
        int nreq = 0;
        for (int j = st->recv0; j < st->recv0 + st->nrecv; j++) {
            const deso__msg *m = &r->recv[j];
            double *buf = direct(m, drows, dst_lld)
                ? dst_local + run_pos(drows, dst_lld, m->run_off)
                : r->recvbuf + m->buf_off;
            MPI_TRY(MPI_Irecv(buf, (int)m->count, MPI_DOUBLE, m->peer,
                              DESO__TAG_REMAP, r->comm, &r->reqs[nreq]),
                    "MPI_Irecv");
            r->req_msg[nreq++] = j;
        }
        /* Direct sends first, then the packed ones (packed in one pass
         * with the self copy when fused).                                 */
        bool fused_pack = k == 0 && fuse == DESO__FUSE_PACK;
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1 && fused_pack) {
                double a = deso__now();
                run_segments(r, src_local, dst_local);
                t_pack += deso__now() - a;
                self_done = true;
            }
            for (int i = st->send0; i < st->send0 + st->nsend; i++) {
                const deso__msg *m = &r->send[i];
                bool dir = direct(m, srows, src_lld);
                if (dir != (pass == 0)) continue;
                const double *buf;
                if (dir) {
                    buf = src_local + run_pos(srows, src_lld, m->run_off);
                } else {
                    double *b = r->sendbuf + m->buf_off;
                    if (!fused_pack) {
                        double a = deso__now();
                        cp_run(&m->prog, src_local, srows, src_lld, b,
                               INT64_MAX, INT64_MAX);
                        t_pack += deso__now() - a;
                    }
                    buf = b;
                }
                MPI_TRY(MPI_Isend(buf, (int)m->count, MPI_DOUBLE, m->peer,
                                  DESO__TAG_REMAP, r->comm, &r->reqs[nreq]),
                        "MPI_Isend");
                deso__stats_p2p(m->count * (int64_t)sizeof(double));
                r->req_msg[nreq++] = -1 - i;
            }
        }
        if (!self_done && fuse != DESO__FUSE_UNPACK) {
            /* overlaps the first step's traffic                          */
            double a = deso__now();
            cp_run(&r->self, src_local, srows, src_lld, dst_local, drows,
                   dst_lld);
            t_pack += deso__now() - a;
            self_done = true;
        }
        for (int left = nreq; left > 0; left--) {
            int idx;
            MPI_TRY(MPI_Waitany(nreq, r->reqs, &idx, MPI_STATUS_IGNORE),
                    "MPI_Waitany");
            if (idx == MPI_UNDEFINED) break;
            int j = r->req_msg[idx];
            if (j < 0) continue;
            const deso__msg *m = &r->recv[j];
            if (direct(m, drows, dst_lld)) continue;
            double a = deso__now();
            if (k == 0 && fuse == DESO__FUSE_UNPACK && j == r->fuse_msg[0]) {
                run_segments(r, src_local, dst_local);   /* with the self */
                self_done = true;
            } else {
                cp_run(&m->prog, r->recvbuf + m->buf_off, INT64_MAX,
                       INT64_MAX, dst_local, drows, dst_lld);
            }
            t_pack += deso__now() - a;
        }
    }
    if (!self_done) {
        double a = deso__now();
        cp_run(&r->self, src_local, srows, src_lld, dst_local, drows,
               dst_lld);
        t_pack += deso__now() - a;
    }
    if (r->nsteps > 0) deso__stats_time(DESO_T_P2P, deso__now() - t0 - t_pack);
    deso__stats_time(DESO_T_OVERHEAD, t_pack);
    return DESO_OK;
}
