/* deso/remap/copyprog_run.c: running copy programs (copyprog.h) between
 * local arrays and packed buffers: plain copies, and streaming stores with
 * AVX-512 gathers (chosen at run time) for large targets.  Pure
 * computation, no MPI.                                                    */
#include "deso/remap/copyprog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* ---- streaming stores ------------------------------------------------------ */

/* Runs written to a large target at least this long go around the cache
 * (non-temporal stores): the target's lines are not read first, which a
 * copy into memory otherwise pays (about 25% of a copy's time here).     */
#define STREAM_MIN 16

/* AVX-512 gathers (vgatherqpd) for streamed gathers (tables and strided
 * runs), chosen at run time: one instruction fetches a line's 8 elements
 * where the scalar loop issues 8 loads and 8 index loads (measured, one
 * pass at P = 2 from two 64 MiB sources: 85-88% of memcpy with gathers,
 * 71-78% scalar).                                                        */
#if defined(__x86_64__) && defined(__GNUC__)
#define CP_AVX512 1
#include <immintrin.h>

/* Writes `lines` whole lines at d (64-byte aligned) from s: ext holds the
 * offsets of next elements (a whole number of lines, 8 repetitions), after
 * which the pattern repeats `step` further on.                           */
__attribute__((target("avx512f")))
static void gather_lines(double *d, const double *s, const int64_t *ext,
                         int64_t next, int64_t step, int64_t lines)
{
    int64_t p = 0;
    for (int64_t k = 0; k < lines; k++) {
        __m512i ix = _mm512_loadu_si512((const void *)(ext + p));
        _mm512_stream_pd(d + 8 * k, _mm512_i64gather_pd(ix, s, 8));
        p += 8;
        if (p == next) {
            p = 0;
            s += step;
        }
    }
}

/* Writes `lines` whole lines at d (64-byte aligned) from s at stride sa. */
__attribute__((target("avx512f")))
static void gather_strided(double *d, const double *s, int64_t sa,
                           int64_t lines)
{
    __m512i ix = _mm512_set_epi64(7 * sa, 6 * sa, 5 * sa, 4 * sa, 3 * sa,
                                  2 * sa, sa, 0);
    for (int64_t k = 0; k < lines; k++)
        _mm512_stream_pd(d + 8 * k,
                         _mm512_i64gather_pd(ix, s + 8 * k * sa, 8));
}
#endif

static int cp_simd = -1;     /* -1: not decided yet                        */

bool deso__cp_set_simd(bool on)
{
    cp_simd = 0;
#if defined(CP_AVX512)
    if (on) cp_simd = __builtin_cpu_supports("avx512f") ? 1 : 0;
#endif
    return cp_simd == 1;
}

static bool simd(void)
{
    return cp_simd < 0 ? deso__cp_set_simd(true) : cp_simd == 1;
}

/* s[x sa] -> d[x], x < n: the whole 64-byte lines of d with non-temporal
 * stores, the partial lines at either end (which other runs share) with
 * ordinary ones: a partial line written around the cache costs more than
 * it saves.                                                               */
static void stream_gather(double *restrict d, const double *restrict s,
                          int64_t n, int64_t sa)
{
    int64_t x = 0;
#if defined(__SSE2__)
    int64_t head = (int64_t)((64 - ((uintptr_t)d & 63)) & 63);
    if (head % 8 == 0) {                     /* d is 8-byte aligned */
        head /= 8;
        if (head > n) head = n;
        for (; x < head; x++) d[x] = s[x * sa];
#if defined(CP_AVX512)
        if (sa != 1 && n - x >= 64 && simd()) {
            int64_t lines = (n - x) / 8;
            gather_strided(d + x, s + x * sa, sa, lines);
            x += 8 * lines;
        }
#endif
        int64_t end = x + (n - x) / 8 * 8;
        if (sa == 1)
            for (; x < end; x += 2)
                _mm_stream_pd(d + x, _mm_loadu_pd(s + x));
        else
            for (; x < end; x += 2)
                _mm_stream_pd(d + x, _mm_set_pd(s[(x + 1) * sa], s[x * sa]));
    }
#endif
    for (; x < n; x++) d[x] = s[x * sa];
}

/* Repetitions [lo, hi) of an element-table gather whose repetitions tile
 * one run of the target (db = ne): gathered in order, the whole lines of
 * the run written around the cache, 8 elements (one line) at a time.     */
static void stream_table(double *restrict d, const double *restrict s,
                         const int64_t *ea, int64_t ne, int64_t da,
                         int64_t lo, int64_t hi)
{
    int64_t n = (hi - lo) * ne, x = 0, e = 0;
    s += lo * da;
    int64_t head = (int64_t)((64 - ((uintptr_t)d & 63)) & 63);
    if (head % 8 != 0) head = n;             /* d not 8-byte aligned     */
    else head /= 8;
    if (head > n) head = n;
    for (; x < head; x++) {
        d[x] = s[ea[e]];
        if (++e == ne) { e = 0; s += da; }
    }
#if defined(CP_AVX512)
    if (n - x >= 16 * ne && ne <= DESO__CP_EMAX && simd()) {
        /* Offsets of 8 repetitions from the current phase (e, s).       */
        int64_t ext[8 * DESO__CP_EMAX], ee = e, shift = 0;
        for (int64_t k = 0; k < 8 * ne; k++) {
            ext[k] = ea[ee] + shift;
            if (++ee == ne) { ee = 0; shift += da; }
        }
        int64_t lines = (n - x) / 8, m = 8 * lines;
        gather_lines(d + x, s, ext, 8 * ne, 8 * da, lines);
        x += m;
        s += (e + m) / ne * da;
        e = (e + m) % ne;
    }
#endif
#if defined(__SSE2__)
    for (; x + 8 <= n; x += 8) {
        double v[8];
        for (int k = 0; k < 8; k++) {
            v[k] = s[ea[e]];
            if (++e == ne) { e = 0; s += da; }
        }
        _mm_stream_pd(d + x, _mm_set_pd(v[1], v[0]));
        _mm_stream_pd(d + x + 2, _mm_set_pd(v[3], v[2]));
        _mm_stream_pd(d + x + 4, _mm_set_pd(v[5], v[4]));
        _mm_stream_pd(d + x + 6, _mm_set_pd(v[7], v[6]));
    }
#endif
    for (; x < n; x++) {
        d[x] = s[ea[e]];
        if (++e == ne) { e = 0; s += da; }
    }
}

void deso__cp_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* Copies one strided item between flat arrays.                          */
static inline void copy_item(double *restrict d, const double *restrict s,
                             const deso__cp_item *u, bool stream)
{
    int64_t n = u->len, sa = u->sa, sb = u->sb;
    s += u->a;
    d += u->b;
    if (stream && sb == 1 && n >= STREAM_MIN) {
        stream_gather(d, s, n, sa);
        return;
    }
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

/* Repetitions [lo, hi) of periodic group g through its element table
 * (flat arrays).                                                        */
static void run_table(const deso__copy *c, const deso__cp_group *g,
                      int64_t lo, int64_t hi, const double *A, double *B,
                      bool stream)
{
    int64_t da = g->da, db = g->db;
    const int64_t *ea = c->ea + g->e0, *eb = c->eb + g->e0;
    int64_t ne = g->ne;
    if (g->seq == 2 && stream && db == ne && (hi - lo) * ne >= 64) {
        stream_table(B + lo * db + eb[0], A, ea, ne, da, lo, hi);
    } else if (g->seq == 2) {                 /* gather into a run  */
        for (int64_t t = lo; t < hi; t++) {
            const double *restrict s = A + t * da;
            double *restrict d = B + t * db + eb[0];
            int64_t e = 0;
            for (; e + 4 <= ne; e += 4) {
                double v0 = s[ea[e]], v1 = s[ea[e + 1]];
                double v2 = s[ea[e + 2]], v3 = s[ea[e + 3]];
                d[e] = v0;
                d[e + 1] = v1;
                d[e + 2] = v2;
                d[e + 3] = v3;
            }
            for (; e < ne; e++) d[e] = s[ea[e]];
        }
    } else if (g->seq == 1) {                 /* scatter from a run */
        for (int64_t t = lo; t < hi; t++) {
            const double *restrict s = A + t * da + ea[0];
            double *restrict d = B + t * db;
            int64_t e = 0;
            for (; e + 4 <= ne; e += 4) {
                double v0 = s[e], v1 = s[e + 1], v2 = s[e + 2];
                double v3 = s[e + 3];
                d[eb[e]] = v0;
                d[eb[e + 1]] = v1;
                d[eb[e + 2]] = v2;
                d[eb[e + 3]] = v3;
            }
            for (; e < ne; e++) d[eb[e]] = s[e];
        }
    } else {
        for (int64_t t = lo; t < hi; t++) {
            const double *restrict s = A + t * da;
            double *restrict d = B + t * db;
            int64_t e = 0;
            for (; e + 4 <= ne; e += 4) {      /* loads before stores */
                double v0 = s[ea[e]], v1 = s[ea[e + 1]];
                double v2 = s[ea[e + 2]], v3 = s[ea[e + 3]];
                d[eb[e]] = v0;
                d[eb[e + 1]] = v1;
                d[eb[e + 2]] = v2;
                d[eb[e + 3]] = v3;
            }
            for (; e < ne; e++) d[eb[e]] = s[ea[e]];
        }
    }
}

/* Runs units [lo, hi) of group gi between flat arrays: repetitions of a
 * periodic group, items of a literal one (reps == 1).                     */
static void run_range(const deso__copy *c, int64_t gi, int64_t lo,
                      int64_t hi, const double *A, double *B, bool stream)
{
    const deso__cp_group *g = &c->g[gi];
    const deso__cp_item *it = c->it + g->first;
    if (g->reps == 1) {
        for (int64_t j = lo; j < hi; j++) copy_item(B, A, &it[j], stream);
        return;
    }
    int64_t da = g->da, db = g->db;
    if (g->ne > 0) {
        run_table(c, g, lo, hi, A, B, stream);
    } else if (g->k == 1 && it->sa == 1 && it->sb == 1 &&
               !(stream && it->len >= STREAM_MIN)) {
        const deso__cp_item *u = it;
        for (int64_t t = lo; t < hi; t++)
            copy_elems(B + u->b + t * db, A + u->a + t * da, u->len);
    } else {
        for (int64_t t = lo; t < hi; t++)
            for (int64_t j = 0; j < g->k; j++)
                copy_item(B + t * db, A + t * da, &it[j], stream);
    }
}

void deso__cp_run_range(const deso__copy *c, int64_t gi, int64_t lo,
                        int64_t hi, const double *A, double *B)
{
    run_range(c, gi, lo, hi, A, B, false);
}

/* Units of group gi: repetitions, or items of a literal group.            */
int64_t deso__cp_units(const deso__copy *c, int64_t gi)
{
    return c->g[gi].reps == 1 ? c->g[gi].k : c->g[gi].reps;
}

/* Copies item u (shifted by t repetitions of (da, db)) between arrays
 * of any leading dimension: copy_item on flat ones, cut at column
 * boundaries otherwise.                                                   */
static void item_any(const deso__cp_item *u, int64_t ta, int64_t tb,
                     const double *A, int64_t arows, int64_t alld, double *B,
                     int64_t brows, int64_t blld, bool stream)
{
    if (alld == arows && blld == brows) {
        deso__cp_item v = *u;
        v.a += ta;
        v.b += tb;
        copy_item(B, A, &v, stream);
    } else if (u->sa == 1 && u->sb == 1) {
        copy_run(A, arows, alld, u->a + ta, B, brows, blld, u->b + tb,
                 u->len);
    } else {
        for (int64_t x = 0; x < u->len; x++)
            copy_run(A, arows, alld, u->a + ta + x * u->sa, B, brows, blld,
                     u->b + tb + x * u->sb, 1);
    }
}

bool deso__cp_looped(const deso__copy *c)
{
    for (int64_t li = 0; li < c->nloops; li++)
        if (c->lp[li].reps > 1) return true;
    return false;
}

deso__cp_loop deso__cp_loop_at(const deso__copy *c, int64_t li)
{
    if (c->nloops == 0)
        return (deso__cp_loop){ 0, c->ngroups, 1, 0, 0, 1, -1 };
    return c->lp[li];
}

int64_t deso__cp_nloops(const deso__copy *c)
{
    return c->nloops > 0 ? c->nloops : 1;
}

static int64_t loops_of(const deso__copy *c)
{
    return deso__cp_nloops(c);
}

/* Where a program runs: arrays A -> B (rows, leading dimensions), and
 * the shift (oa, ob) of the loop repetition being run.                  */
typedef struct arrays {
    const double *A;
    double *B;
    int64_t arows, alld, brows, blld;
    int64_t oa, ob;
    bool flat, stream;
} arrays;

static arrays arrays_of(const double *A, int64_t arows, int64_t alld,
                        double *B, int64_t brows, int64_t blld, bool stream)
{
    return (arrays){ A, B, arows, alld, brows, blld, 0, 0,
                     alld == arows && blld == brows, stream };
}

/* Units [lo, hi) of group gi, shifted by the loop's (oa, ob).           */
static void run_units(const deso__copy *c, int64_t gi, int64_t lo,
                      int64_t hi, const arrays *w)
{
    const deso__cp_group *g = &c->g[gi];
    if (w->flat) {
        run_range(c, gi, lo, hi, w->A + w->oa, w->B + w->ob, w->stream);
        return;
    }
    bool lit = g->reps == 1;
    for (int64_t u = lo; u < hi; u++)
        for (int64_t j = lit ? u : 0; j < (lit ? u + 1 : g->k); j++)
            item_any(&c->it[g->first + j], (lit ? 0 : u) * g->da + w->oa,
                     (lit ? 0 : u) * g->db + w->ob, w->A, w->arows, w->alld,
                     w->B, w->brows, w->blld, false);
}

/* Runs loop li (its groups, or the loops inside it) once per
 * repetition, shifted by (oa, ob) and its own shift per repetition.     */
static void run_loop(const deso__copy *c, int64_t li, int64_t oa,
                     int64_t ob, arrays *w)
{
    deso__cp_loop lp = deso__cp_loop_at(c, li);
    for (int64_t t = 0; t < lp.reps; t++) {
        int64_t ta = oa + t * lp.da, tb = ob + t * lp.db;
        if (lp.end == li + 1) {
            w->oa = ta;
            w->ob = tb;
            for (int64_t gi = lp.g0; gi < lp.g1; gi++)
                run_units(c, gi, 0, deso__cp_units(c, gi), w);
            continue;
        }
        for (int64_t k = li + 1; k < lp.end; k = c->lp[k].end)
            run_loop(c, k, ta, tb, w);
    }
}

/* Runs the program from array A (rows, ld) to array B: every loop at
 * the top, in order.                                                    */
static void run(const deso__copy *c, const double *A, int64_t arows,
                int64_t alld, double *B, int64_t brows, int64_t blld,
                bool stream)
{
    arrays w = arrays_of(A, arows, alld, B, brows, blld, stream);
    for (int64_t li = 0; li < loops_of(c);
         li = deso__cp_loop_at(c, li).end)
        run_loop(c, li, 0, 0, &w);
}

/* ---- windows ------------------------------------------------------------- */

/* Elements of unit u of group gi.                                         */
static int64_t unit_elems(const deso__copy *c, int64_t gi, int64_t u)
{
    const deso__cp_group *g = &c->g[gi];
    if (g->reps == 1) return c->it[g->first + u].len;
    int64_t n = 0;
    for (int64_t j = 0; j < g->k; j++) n += c->it[g->first + j].len;
    return n;
}

/* Elements [x0, x1) of unit u of group gi, item by item.                 */
static void unit_part(const deso__copy *c, int64_t gi, int64_t u,
                      int64_t x0, int64_t x1, const arrays *w, bool stream)
{
    const deso__cp_group *g = &c->g[gi];
    bool lit = g->reps == 1;
    int64_t t = lit ? 0 : u, pos = 0;
    for (int64_t j = lit ? u : 0; j < (lit ? u + 1 : g->k) && pos < x1; j++) {
        deso__cp_item v = c->it[g->first + j];
        int64_t lo = x0 > pos ? x0 - pos : 0;
        int64_t hi = x1 - pos < v.len ? x1 - pos : v.len;
        pos += v.len;
        if (lo >= hi) continue;
        v.a += lo * v.sa;
        v.b += lo * v.sb;
        v.len = hi - lo;
        item_any(&v, t * g->da + w->oa, t * g->db + w->ob, w->A, w->arows,
                 w->alld, w->B, w->brows, w->blld, stream);
    }
}

/* How many whole units from unit u of group gi fit in `span` elements
 * (*elems: theirs).                                                       */
static int64_t whole_units(const deso__copy *c, int64_t gi, int64_t u,
                           int64_t span, int64_t *elems)
{
    int64_t n = deso__cp_units(c, gi), m = 0, e = 0;
    if (c->g[gi].reps > 1) {
        int64_t ue = unit_elems(c, gi, u);
        m = span / ue < n - u ? span / ue : n - u;
        *elems = m * ue;
        return m;
    }
    while (u + m < n && e + c->it[c->g[gi].first + u + m].len <= span)
        e += c->it[c->g[gi].first + u + m++].len;
    *elems = e;
    return m;
}

/* Runs at most `span` elements of group at->g from *at, which it
 * advances (to the group's end at most); returns how many it ran.       */
static int64_t window_group(const deso__copy *c, deso__cp_pos *at,
                            int64_t span, const arrays *w)
{
    int64_t m = 0, e = 0, gi = at->g;
    if (at->x == 0) m = whole_units(c, gi, at->u, span, &e);
    if (m > 0) {
        run_units(c, gi, at->u, at->u + m, w);
    } else {                         /* the window ends inside this unit */
        int64_t ue = unit_elems(c, gi, at->u);
        int64_t x1 = ue - at->x < span ? ue : at->x + span;
        unit_part(c, gi, at->u, at->x, x1, w, w->stream && w->flat);
        e = x1 - at->x;
        at->x = x1 == ue ? 0 : x1;
        m = x1 == ue ? 1 : 0;
    }
    at->u += m;
    if (at->u == deso__cp_units(c, gi)) {
        at->g++;
        at->u = 0;
    }
    return e;
}

/* Enters loop li, at depth d, at its first repetition's start: down to
 * its first loop with groups, every repetition counter on the way
 * reset.                                                               */
static void enter(const deso__copy *c, deso__cp_pos *at, int64_t li, int d)
{
    at->t[d] = 0;
    while (deso__cp_loop_at(c, li).end != li + 1) {
        li++;
        at->t[++d] = 0;
    }
    at->l = li;
    at->depth = d;
    at->g = deso__cp_loop_at(c, li).g0;
    at->u = at->x = 0;
}

/* At the end of a repetition of loop at->l: the next repetition of it or
 * of a loop around it, or the next loop; at->l = loops when none.     */
static void next_rep(const deso__copy *c, deso__cp_pos *at)
{
    int64_t li = at->l;
    for (int d = at->depth;; d--) {
        deso__cp_loop lp = deso__cp_loop_at(c, li);
        if (++at->t[d] < lp.reps) {
            int64_t t = at->t[d];
            enter(c, at, li, d);
            at->t[d] = t;
            return;
        }
        int64_t end = lp.up < 0 ? loops_of(c) : c->lp[lp.up].end;
        if (lp.end < end) {
            enter(c, at, lp.end, d);
            return;
        }
        if (lp.up < 0) {
            at->l = loops_of(c);
            return;
        }
        li = lp.up;
    }
}

/* The shift of the repetitions at->t of at->l and the loops around it. */
static void shift_of(const deso__copy *c, const deso__cp_pos *at,
                     arrays *w)
{
    w->oa = w->ob = 0;
    int d = at->depth;
    for (int64_t li = at->l; li >= 0; li = deso__cp_loop_at(c, li).up) {
        deso__cp_loop lp = deso__cp_loop_at(c, li);
        w->oa += at->t[d] * lp.da;
        w->ob += at->t[d--] * lp.db;
    }
}

int64_t deso__cp_run_window(const deso__copy *c, deso__cp_pos *at,
                            int64_t span, const double *A, int64_t arows,
                            int64_t alld, double *B, int64_t brows,
                            int64_t blld, bool stream)
{
    arrays w = arrays_of(A, arows, alld, B, brows, blld, stream);
    int64_t done = 0;
    if (at->l < loops_of(c) && deso__cp_loop_at(c, at->l).end != at->l + 1)
        enter(c, at, at->l, 0);      /* the start of a nested program     */
    bool moved = true;               /* the shift is to be found again    */
    while (done < span && at->l < loops_of(c)) {
        deso__cp_loop lp = deso__cp_loop_at(c, at->l);
        if (at->g == lp.g1 && at->t[at->depth] + 1 < lp.reps) {
            at->t[at->depth]++;      /* its next repetition, one shift on */
            at->g = lp.g0;
            w.oa += lp.da;
            w.ob += lp.db;
        } else if (at->g == lp.g1) {
            next_rep(c, at);         /* this loop's last repetition ends  */
            moved = true;
            continue;
        }
        if (moved) shift_of(c, at, &w);
        moved = false;
        done += window_group(c, at, span - done, &w);
    }
    return done;
}

void deso__cp_run(const deso__copy *c, const double *A, int64_t arows,
                  int64_t alld, double *B, int64_t brows, int64_t blld)
{
    run(c, A, arows, alld, B, brows, blld, false);
}

void deso__cp_run_stream(const deso__copy *c, const double *A,
                         int64_t arows, int64_t alld, double *B,
                         int64_t brows, int64_t blld)
{
    run(c, A, arows, alld, B, brows, blld, true);
}
