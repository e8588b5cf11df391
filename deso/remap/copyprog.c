/* deso/copyprog.c: copy programs, the compiled form of a remap's runs.
 * Pure computation (no MPI): compiling run lists into periodic groups and
 * running them between local arrays and packed buffers.                  */
#include "deso/remap/copyprog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"

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

/* ---- copy programs -------------------------------------------------------- */

deso_err deso__cp_clone(const deso__copy *c, deso__copy *out)
{
    memset(out, 0, sizeof *out);
    *out = *c;
    out->g = malloc((size_t)(c->ngroups ? c->ngroups : 1) * sizeof *out->g);
    out->it = malloc((size_t)(c->nitems ? c->nitems : 1) * sizeof *out->it);
    out->ea = c->nelem ? malloc((size_t)c->nelem * sizeof *out->ea) : NULL;
    out->eb = c->nelem ? malloc((size_t)c->nelem * sizeof *out->eb) : NULL;
    if (!out->g || !out->it || (c->nelem && (!out->ea || !out->eb))) {
        deso__cp_free(out);
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
    }
    memcpy(out->g, c->g, (size_t)c->ngroups * sizeof *out->g);
    memcpy(out->it, c->it, (size_t)c->nitems * sizeof *out->it);
    if (c->nelem) {
        memcpy(out->ea, c->ea, (size_t)c->nelem * sizeof *out->ea);
        memcpy(out->eb, c->eb, (size_t)c->nelem * sizeof *out->eb);
    }
    return DESO_OK;
}

static int64_t resolve_a(int64_t a, const int64_t *delta)
{
    return (a & (((int64_t)1 << DESO__CP_WBIT) - 1)) +
           delta[a >> DESO__CP_WBIT];
}

void deso__cp_resolve(const deso__copy *c, const int64_t *delta,
                      deso__copy *out)
{
    for (int64_t i = 0; i < c->nitems; i++)
        out->it[i].a = resolve_a(c->it[i].a, delta);
    for (int64_t e = 0; e < c->nelem; e++)
        out->ea[e] = resolve_a(c->ea[e], delta);
}

#define CP_KMAX 64    /* longest period looked for, in runs               */
#define CP_WIN 512    /* items looked at to choose a period               */
#define CP_EMAX 512   /* longest period copied element by element         */


static bool item_shift(const deso__cp_item *x, const deso__cp_item *y,
                       int64_t da, int64_t db)
{
    return y->len == x->len && y->a - x->a == da && y->b - x->b == db &&
           y->sa == x->sa && y->sb == x->sb &&
           y->a >> DESO__CP_WBIT == x->a >> DESO__CP_WBIT;
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
static deso_err compile(deso__cp_item *it, int64_t n, bool tables,
                        deso__copy *out);

deso_err deso__cp_compile(deso__cp_item *it, int64_t n, deso__copy *out)
{
    return compile(it, n, false, out);
}

deso_err deso__cp_compile_tables(deso__cp_item *it, int64_t n,
                                 deso__copy *out)
{
    return compile(it, n, true, out);
}

static deso_err compile(deso__cp_item *it, int64_t n, bool tables,
                        deso__copy *out)
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
            (it[i].len == 1 || (p->sa == 1 && p->sb == 1 &&
                                 it[i].sa == 1 && it[i].sb == 1))) {
            p->len += it[i].len;
        } else if (p && p->len == 1 && it[i].len == 1 &&
                   it[i].a != p->a && it[i].b != p->b &&
                   it[i].a >> DESO__CP_WBIT == p->a >> DESO__CP_WBIT) {
            p->sa = it[i].a - p->a;
            p->sb = it[i].b - p->b;
            p->len = 2;
        } else {
            it[m++] = it[i];
        }
    }
    n = m;
    deso__cp_group *g = malloc((size_t)(n ? n : 1) * sizeof *g);
    if (g == NULL)
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
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
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
    }
    memcpy(out->it, it, (size_t)ni * sizeof *it);

    /* Periodic groups of short runs are copied element by element from an
     * offset table: no branch per run.                                    */
    int64_t ne = 0;
    for (int64_t gi = 0; gi < ng; gi++) {
        deso__cp_group *q = &out->g[gi];
        int64_t e = 0;
        for (int64_t j = 0; j < q->k; j++) e += out->it[q->first + j].len;
        if (q->reps >= 2 && e <= CP_EMAX && (tables || e < 8 * q->k)) {
            q->e0 = ne;
            q->ne = e;
            ne += e;
        }
    }
    if (ne > 0) {
        out->ea = malloc((size_t)ne * sizeof *out->ea);
        out->eb = malloc((size_t)ne * sizeof *out->eb);
        if (out->ea == NULL || out->eb == NULL) {
            deso__cp_free(out);
            return deso__fail(DESO_ENOMEM, "copy program: out of memory");
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
        /* A side that counts up (a packed buffer's) needs no table.      */
        for (int64_t gi = 0; gi < ng; gi++) {
            deso__cp_group *q = &out->g[gi];
            bool ua = q->ne > 0, ub = q->ne > 0;
            for (int64_t x = 1; x < q->ne; x++) {
                ua = ua && out->ea[q->e0 + x] == out->ea[q->e0] + x;
                ub = ub && out->eb[q->e0 + x] == out->eb[q->e0] + x;
            }
            q->seq = ub ? 2 : ua ? 1 : 0;
        }
    }
    return DESO_OK;
}

void deso__cp_free(deso__copy *c)
{
    free(c->g);
    free(c->it);
    free(c->ea);
    free(c->eb);
    memset(c, 0, sizeof *c);
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
    if (n - x >= 16 * ne && ne <= CP_EMAX && simd()) {
        /* Offsets of 8 repetitions from the current phase (e, s).       */
        int64_t ext[8 * CP_EMAX], ee = e, shift = 0;
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
    if (g->ne > 0) {                              /* element table      */
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

/* Runs the program from array A (rows, ld) to array B.                   */
static void run(const deso__copy *c, const double *A, int64_t arows,
                int64_t alld, double *B, int64_t brows, int64_t blld,
                bool stream)
{
    bool flat = alld == arows && blld == brows;
    for (int64_t gi = 0; gi < c->ngroups; gi++) {
        const deso__cp_group *g = &c->g[gi];
        const deso__cp_item *it = c->it + g->first;
        int64_t da = g->da, db = g->db;
        if (flat) {
            run_range(c, gi, 0, deso__cp_units(c, gi), A, B, stream);
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


/* Cuts the long items of literal groups into periodic groups of pieces
 * spanning at most `span` elements on either side, so that a fused pass
 * can interleave them with other programs.  Same copies, same order.    */
deso_err deso__cp_split(deso__copy *c, int64_t span)
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
        return deso__fail(DESO_ENOMEM, "copy program: out of memory");
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

/* ---- pieces ------------------------------------------------------------- */

/* Appends the elements [x0, x0 + n) of item u to the open piece.         */
static void piece_push(deso__cp_item *tmp, int64_t *nt, const deso__cp_item *u,
                       int64_t x0, int64_t n)
{
    tmp[(*nt)++] = (deso__cp_item){ u->a + x0 * u->sa, u->b + x0 * u->sb, n,
                                    u->sa, u->sb };
}

/* Compiles the open piece into out[*np] and starts a new one; packed side
 * offsets are rebased by `base` (side b if rebase_b, a if rebase_a).       */
static deso_err piece_close(deso__cp_item *tmp, int64_t *nt, int pside,
                            int64_t base, deso__copy *out, int64_t *np)
{
    for (int64_t i = 0; i < *nt; i++) {
        if (pside == 1) tmp[i].a -= base;
        if (pside == 2) tmp[i].b -= base;
    }
    deso_err e = deso__cp_compile(tmp, *nt, &out[*np]);
    if (e != DESO_OK) return e;
    (*np)++;
    *nt = 0;
    return DESO_OK;
}

deso_err deso__cp_pieces(const deso__copy *c, int pside, int64_t span,
                         deso__copy **out, int64_t *npieces)
{
    *out = NULL;
    *npieces = 0;
    if (span < 1)
        return deso__fail(DESO_EINVAL, "copy program: pieces of %lld "
                          "elements", (long long)span);
    int64_t total = (c->elems + span - 1) / span;
    deso__copy *P = calloc((size_t)(total ? total : 1), sizeof *P);
    deso__cp_item *tmp = malloc((size_t)span * sizeof *tmp);
    deso_err e = P && tmp ? DESO_OK : DESO_ENOMEM;
    int64_t np = 0, nt = 0, fill = 0, pos = 0;   /* pos: elements so far */
    for (int64_t gi = 0; gi < c->ngroups && e == DESO_OK; gi++) {
        const deso__cp_group *g = &c->g[gi];
        int64_t nu = deso__cp_units(c, gi);
        for (int64_t t = 0; t < nu && e == DESO_OK; t++) {
            int64_t j0 = g->reps == 1 ? t : 0, j1 = g->reps == 1 ? t + 1 : g->k;
            int64_t sh = g->reps == 1 ? 0 : t;
            for (int64_t j = j0; j < j1 && e == DESO_OK; j++) {
                deso__cp_item u = c->it[g->first + j];
                u.a += sh * g->da;
                u.b += sh * g->db;
                /* The packed side must count 0, 1, 2, ... (stride 1).   */
                if ((pside == 1 && (u.a != pos || (u.len > 1 && u.sa != 1))) ||
                    (pside == 2 && (u.b != pos || (u.len > 1 && u.sb != 1))))
                    e = DESO_EINTERNAL;
                for (int64_t x = 0; x < u.len && e == DESO_OK;) {
                    int64_t n = u.len - x;
                    if (n > span - fill) n = span - fill;
                    piece_push(tmp, &nt, &u, x, n);
                    x += n;
                    fill += n;
                    pos += n;
                    if (fill == span) {
                        e = piece_close(tmp, &nt, pside, pos - span, P, &np);
                        fill = 0;
                    }
                }
            }
        }
    }
    if (e == DESO_OK && nt > 0) e = piece_close(tmp, &nt, pside, pos - fill, P, &np);
    free(tmp);
    if (e != DESO_OK) {
        for (int64_t i = 0; i < np; i++) deso__cp_free(&P[i]);
        free(P);
        return e;
    }
    *out = P;
    *npieces = np;
    return DESO_OK;
}
