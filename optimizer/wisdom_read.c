/* The wisdom reader: one pass over bounded lines, building into a private
 * wisdom that replaces *out only when the whole file is good ("the wisdom
 * must be above suspicion": FFTW imprt).  Every field is checked against
 * the one spelling the writer uses, so an accepted file re-serialises to
 * the same bytes.                                                         */
#include "optimizer/wisdom.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "optimizer/wisdom_impl.h"
#include "placement/alloc.h"

#define MAXTOK (1 + OPT_WISDOM_COLL)   /* the collectives line is the longest */

typedef struct reader {
    const char *text;
    size_t len, pos;
    long lineno;                        /* of the current line, from 1      */
    size_t start;                       /* offset of the current line       */
    int ntok;
    const char *tok[MAXTOK];
    size_t tl[MAXTOK];
} reader;

static deso_err bad(const reader *r, const char *fmt, ...) DESO__PRINTF(2, 3);

static deso_err bad(const reader *r, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return deso__fail(DESO_EWISDOM, "wisdom rejected: line %ld: %s",
                      r->lineno, why);
}

/* Reads the next line and splits it at single spaces.                     */
static deso_err next_line(reader *r)
{
    r->lineno++;
    r->start = r->pos;
    size_t rest = r->len - r->pos;
    if (rest == 0) return bad(r, "truncated: file ends before its end line");
    const char *s = r->text + r->pos;
    size_t look = rest < OPT_WISDOM_MAX_LINE + 1 ? rest
                                                 : OPT_WISDOM_MAX_LINE + 1;
    const char *nl = memchr(s, '\n', look);
    if (!nl) {
        if (rest > OPT_WISDOM_MAX_LINE)
            return bad(r, "line longer than %d bytes", OPT_WISDOM_MAX_LINE);
        return bad(r, "truncated: last line has no newline");
    }
    size_t n = (size_t)(nl - s);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0) return bad(r, "NUL byte at column %zu", i + 1);
        if (c < 0x20 || c > 0x7E)
            return bad(r, "byte 0x%02x at column %zu", c, i + 1);
    }
    r->pos += n + 1;
    r->ntok = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < n && s[j] != ' ') j++;
        if (j == i) return bad(r, "empty field (stray space or empty line)");
        if (r->ntok == MAXTOK) return bad(r, "too many fields");
        r->tok[r->ntok] = s + i;
        r->tl[r->ntok] = j - i;
        r->ntok++;
        if (j == n) break;
        i = j + 1;
    }
    return DESO_OK;
}

static bool is(const reader *r, int k, const char *word)
{
    size_t n = strlen(word);
    return k < r->ntok && r->tl[k] == n && memcmp(r->tok[k], word, n) == 0;
}

/* Decimal in [lo, hi], no sign but '-', no leading zeros, no "-0".         */
static bool scan_i64(const char *s, size_t n, int64_t lo, int64_t hi,
                     int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (n > 0 && s[0] == '-') {
        neg = true;
        i = 1;
    }
    if (i >= n || n - i > 19) return false;
    if (s[i] == '0' && (n - i > 1 || neg)) return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (uint64_t)(s[i] - '0');    /* 19 digits: no overflow   */
    }
    if (v > (uint64_t)INT64_MAX) return false;  /* drops INT64_MIN: unused  */
    int64_t x = neg ? -(int64_t)v : (int64_t)v;
    if (x < lo || x > hi) return false;
    *out = x;
    return true;
}

/* Exactly `digits` lower-case hex digits.                                  */
static bool scan_hex(const char *s, size_t n, size_t digits, uint64_t *out)
{
    if (n != digits) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        v = (v << 4) | (uint64_t)d;
    }
    *out = v;
    return true;
}

static deso_err field(const reader *r, int k, const char *name, int64_t lo,
                      int64_t hi, int64_t *out)
{
    if (!scan_i64(r->tok[k], r->tl[k], lo, hi, out))
        return bad(r, "field %s: not a decimal integer in [%" PRId64
                   ", %" PRId64 "]", name, lo, hi);
    return DESO_OK;
}

static deso_err read_config(reader *r, opt_wisdom_config *c)
{
    DESO_TRY(next_line(r));
    if (!is(r, 0, "config") || r->ntok != 8)
        return bad(r, "expected config <version> <P> <pr>x<pc> <calibrated> "
                   "<alpha> <beta> <io_beta>");
    if (!opt__wisdom_version_ok(r->tok[1], r->tl[1]))
        return bad(r, "bad library version");
    memcpy(c->version, r->tok[1], r->tl[1]);
    c->version[r->tl[1]] = '\0';
    int64_t v, pr, pc;
    DESO_TRY(field(r, 2, "P", 1, OPT_WISDOM_MAX_P, &v));
    c->P = (int)v;
    const char *g = r->tok[3], *x = memchr(g, 'x', r->tl[3]);
    if (!x) return bad(r, "grid must be <pr>x<pc>");
    size_t nr = (size_t)(x - g);
    if (!scan_i64(g, nr, 1, OPT_WISDOM_MAX_P, &pr) ||
        !scan_i64(x + 1, r->tl[3] - nr - 1, 1, OPT_WISDOM_MAX_P, &pc))
        return bad(r, "grid must be <pr>x<pc>");
    c->pr = (int)pr;
    c->pc = (int)pc;
    DESO_TRY(field(r, 4, "calibrated", 0, 1, &v));
    c->calibrated = v == 1;
    if (!opt__wisdom_scan_double(r->tok[5], r->tl[5], &c->alpha))
        return bad(r, "alpha is not a hexadecimal float as %%a writes it");
    if (!opt__wisdom_scan_double(r->tok[6], r->tl[6], &c->beta))
        return bad(r, "beta is not a hexadecimal float as %%a writes it");
    if (!opt__wisdom_scan_double(r->tok[7], r->tl[7], &c->io_beta))
        return bad(r, "io_beta is not a hexadecimal float as %%a writes it");
    const char *why = opt__wisdom_check_config(c);
    if (why) return bad(r, "%s", why);
    return DESO_OK;
}

static deso_err read_collectives(reader *r, opt_wisdom_config *c)
{
    DESO_TRY(next_line(r));
    if (!is(r, 0, "collectives") || r->ntok != 1 + OPT_WISDOM_COLL)
        return bad(r, "expected collectives and %d figures",
                   OPT_WISDOM_COLL);
    for (int k = 0; k < OPT_WISDOM_COLL; k++)
        if (!opt__wisdom_scan_double(r->tok[1 + k], r->tl[1 + k],
                                     &c->coll[k]))
            return bad(r, "collectives: figure %d is not a hexadecimal "
                       "float as %%a writes it", k + 1);
    const char *why = opt__wisdom_check_config(c);
    if (why) return bad(r, "%s", why);
    return DESO_OK;
}

static deso_err read_node(reader *r, const opt_wisdom_config *c,
                          const opt_wisdom_plan *pl, int k,
                          opt_wisdom_node *nd)
{
    DESO_TRY(next_line(r));
    if (!is(r, 0, "node"))
        return bad(r, "plan %016" PRIx64 " ends after %d of its %d nodes",
                   pl->key, k, pl->nnodes);
    if (r->ntok != 11)
        return bad(r, "expected node <kind> <m> <n> <dist> <b> <nb> <rep> "
                   "<pr> <pc> <variant>");
    blas_layout *l = &nd->lay;
    if (is(r, 1, "vec")) l->kind = BLAS_VEC;
    else if (is(r, 1, "mat")) l->kind = BLAS_MAT;
    else if (is(r, 1, "sca")) l->kind = BLAS_SCA;
    else return bad(r, "kind must be vec, mat or sca");
    int64_t v;
    DESO_TRY(field(r, 2, "m", 0, INT64_MAX, &l->m));
    DESO_TRY(field(r, 3, "n", 0, INT64_MAX, &l->n));
    DESO_TRY(field(r, 4, "dist", -1, BLAS_DIST_PART, &v));
    l->dist = (int)v;
    DESO_TRY(field(r, 5, "b", 0, INT64_MAX, &l->b));
    DESO_TRY(field(r, 6, "nb", 0, INT64_MAX, &l->nb));
    DESO_TRY(field(r, 7, "rep", 0, 3, &v));
    l->rep = (unsigned)v;
    DESO_TRY(field(r, 8, "pr", 1, OPT_WISDOM_MAX_P, &v));
    l->pr = (int)v;
    DESO_TRY(field(r, 9, "pc", 1, OPT_WISDOM_MAX_P, &v));
    l->pc = (int)v;
    DESO_TRY(field(r, 10, "variant", 0, INT32_MAX, &v));
    nd->variant = (int)v;
    const char *why = opt__wisdom_check_node(nd, c);
    if (why) return bad(r, "%s", why);
    return DESO_OK;
}

/* Reads a plan line's fields and its nodes into *pl (which owns its nodes
 * as soon as they are allocated, so the caller frees on any error).       */
static deso_err read_plan(reader *r, const opt_wisdom *w, opt_wisdom_plan *pl)
{
    if (r->ntok != 4) return bad(r, "expected plan <key> <nnodes> <hits>");
    if (!scan_hex(r->tok[1], r->tl[1], 16, &pl->key))
        return bad(r, "key must be 16 lower-case hex digits");
    if (w->nplans > 0) {
        uint64_t prev = w->plans[w->nplans - 1].key;
        if (pl->key == prev)
            return bad(r, "duplicate key %016" PRIx64, pl->key);
        if (pl->key < prev)
            return bad(r, "key %016" PRIx64 " out of order (keys must "
                       "increase)", pl->key);
    }
    int64_t v;
    DESO_TRY(field(r, 2, "nnodes", 0, OPT_WISDOM_MAX_NODES, &v));
    /* Allocate only for nodes whose lines can actually be there.          */
    size_t rest = r->len - r->pos;
    if ((uint64_t)v * OPT__MIN_NODE_LINE + OPT__MIN_END_LINE > rest)
        return bad(r, "plan claims %" PRId64 " nodes but only %zu bytes "
                   "follow", v, rest);
    int nnodes = (int)v;
    DESO_TRY(field(r, 3, "hits", 0, UINT32_MAX, &v));
    pl->hits = (uint32_t)v;
    if (nnodes > 0) {
        pl->nodes = deso__calloc((size_t)nnodes, sizeof *pl->nodes);
        if (!pl->nodes)
            return deso__fail(DESO_ENOMEM, "opt_wisdom_parse: out of memory");
    }
    pl->nnodes = nnodes;
    for (int k = 0; k < nnodes; k++)
        DESO_TRY(read_node(r, &w->config, pl, k, &pl->nodes[k]));
    return DESO_OK;
}

static deso_err read_end(reader *r, const opt_wisdom *w)
{
    int64_t v;
    uint64_t crc;
    if (r->ntok != 3) return bad(r, "expected end <nplans> <crc32>");
    DESO_TRY(field(r, 1, "nplans", 0, OPT_WISDOM_MAX_PLANS, &v));
    if (v != w->nplans)
        return bad(r, "end line says %" PRId64 " plans, file holds %d", v,
                   w->nplans);
    if (!scan_hex(r->tok[2], r->tl[2], 8, &crc))
        return bad(r, "crc must be 8 lower-case hex digits");
    uint32_t sum = opt_wisdom_crc32(r->text, r->start);
    if ((uint32_t)crc != sum)
        return bad(r, "checksum mismatch (file says %08" PRIx32 ", content "
                   "gives %08" PRIx32 ")", (uint32_t)crc, sum);
    if (r->pos != r->len)
        return bad(r, "%zu bytes after the end line", r->len - r->pos);
    return DESO_OK;
}

/* The body: header to end line, into *w (freed by the caller on error).
 * *other_format: a well-formed header of another format version.         */
static deso_err read_all(reader *r, opt_wisdom *w, bool *other_format)
{
    DESO_TRY(next_line(r));
    int64_t fmt;
    if (!is(r, 0, "deso-wisdom") || r->ntok != 2 ||
        !scan_i64(r->tok[1], r->tl[1], 1, INT32_MAX, &fmt))
        return bad(r, "not a deso wisdom file (expected deso-wisdom %d)",
                   OPT_WISDOM_FORMAT);
    if (fmt != OPT_WISDOM_FORMAT) {
        *other_format = true;
        return DESO_OK;
    }
    DESO_TRY(read_config(r, &w->config));
    DESO_TRY(read_collectives(r, &w->config));
    int cap = 0;
    for (;;) {
        DESO_TRY(next_line(r));
        if (is(r, 0, "end")) return read_end(r, w);
        if (!is(r, 0, "plan")) return bad(r, "expected plan or end");
        if (w->nplans == OPT_WISDOM_MAX_PLANS)
            return bad(r, "more than %d plans", OPT_WISDOM_MAX_PLANS);
        if (w->nplans == cap) {
            int ncap = cap ? 2 * cap : 8;
            if (ncap > OPT_WISDOM_MAX_PLANS) ncap = OPT_WISDOM_MAX_PLANS;
            opt_wisdom_plan *g = deso__realloc(w->plans, (size_t)ncap * sizeof *g);
            if (!g)
                return deso__fail(DESO_ENOMEM,
                                  "opt_wisdom_parse: out of memory");
            w->plans = g;
            cap = ncap;
        }
        opt_wisdom_plan pl = {0};
        deso_err e = read_plan(r, w, &pl);
        if (e != DESO_OK) {
            free(pl.nodes);
            return e;
        }
        w->plans[w->nplans++] = pl;
    }
}

deso_err opt_wisdom_parse(const char *text, size_t len,
                          const opt_wisdom_config *expect, opt_wisdom *out,
                          int *ignored)
{
    if (ignored) *ignored = 0;
    DESO_CHECK(out != NULL, DESO_ENULL, "opt_wisdom_parse: NULL out");
    opt_wisdom_init(out);
    DESO_CHECK(text != NULL || len == 0, DESO_ENULL,
               "opt_wisdom_parse: NULL text");
    if (len == 0)
        return deso__fail(DESO_EWISDOM, "wisdom rejected: empty file");
    reader r = {.text = text, .len = len};
    opt_wisdom w;
    opt_wisdom_init(&w);
    bool other_format = false;
    deso_err e = read_all(&r, &w, &other_format);
    if (e != DESO_OK) {
        opt_wisdom_free(&w);
        return e;
    }
    if (other_format) {
        if (ignored) *ignored = 1;
        return DESO_OK;
    }
    if (expect && !opt_wisdom_config_matches(&w.config, expect)) {
        opt_wisdom_config c = w.config;
        opt_wisdom_free(&w);
        out->config = c;
        if (ignored) *ignored = 1;
        return DESO_OK;
    }
    if (w.nplans > 0 && w.nplans < OPT_WISDOM_MAX_PLANS) {
        /* Give back the doubling slack; failure to shrink is harmless.    */
        opt_wisdom_plan *g = deso__realloc(w.plans, (size_t)w.nplans * sizeof *g);
        if (g) w.plans = g;
    }
    *out = w;
    return DESO_OK;
}
