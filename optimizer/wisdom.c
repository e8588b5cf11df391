/* The wisdom container, its field rules, and the pieces the reader and the
 * writer share: CRC-32 and the locale-free hexadecimal float format.        */
#include "optimizer/wisdom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "optimizer/wisdom_impl.h"
#include "placement/alloc.h"

/* ---- CRC-32 -------------------------------------------------------------- */

uint32_t opt_wisdom_crc32(const void *data, size_t len)
{
    /* A 1 KiB table per call costs 2048 shifts, nothing beside the parse,
     * and keeps the module free of global state.                           */
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    const unsigned char *p = data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

/* ---- hexadecimal floats -------------------------------------------------- */

/* Formats a finite double as glibc's "%a" does.  Done by hand from the bits
 * because printf's "%a" writes the locale's decimal point.                 */
void opt__wisdom_fmt_double(double x, char buf[OPT__HEXDBL_BUF])
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    const char *sign = (u >> 63) ? "-" : "";
    int e = (int)((u >> 52) & 0x7FF);
    uint64_t f = u & ((UINT64_C(1) << 52) - 1);
    if (e == 0x7FF) {                   /* never written: rules forbid it   */
        snprintf(buf, OPT__HEXDBL_BUF, "%snan", sign);
        return;
    }
    if (e == 0 && f == 0) {
        snprintf(buf, OPT__HEXDBL_BUF, "%s0x0p+0", sign);
        return;
    }
    int lead = e != 0;
    int ex = e != 0 ? e - 1023 : -1022;
    char digs[14];
    int nd = 13;
    for (int i = 0; i < 13; i++)
        digs[i] = "0123456789abcdef"[(f >> (48 - 4 * i)) & 0xF];
    while (nd > 0 && digs[nd - 1] == '0') nd--;
    digs[nd] = '\0';
    if (nd > 0)
        snprintf(buf, OPT__HEXDBL_BUF, "%s0x%d.%sp%+d", sign, lead, digs, ex);
    else
        snprintf(buf, OPT__HEXDBL_BUF, "%s0x%dp%+d", sign, lead, ex);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

bool opt__wisdom_scan_double(const char *s, size_t n, double *out)
{
    size_t i = 0;
    uint64_t sign = 0;
    if (i < n && s[i] == '-') {
        sign = 1;
        i++;
    }
    if (n - i < 3 || s[i] != '0' || s[i + 1] != 'x') return false;
    i += 2;
    if (s[i] != '0' && s[i] != '1') return false;
    int lead = s[i++] - '0';
    uint64_t f = 0;
    int nd = 0;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && nd < 13 && hexval(s[i]) >= 0) {
            f = (f << 4) | (uint64_t)hexval(s[i]);
            nd++;
            i++;
        }
        if (nd == 0) return false;
    }
    f <<= 4 * (13 - nd);
    if (i >= n || s[i] != 'p') return false;
    i++;
    if (i >= n || (s[i] != '+' && s[i] != '-')) return false;
    bool eneg = s[i++] == '-';
    int ex = 0, ndig = 0;
    while (i < n && ndig < 5 && s[i] >= '0' && s[i] <= '9') {
        ex = ex * 10 + (s[i] - '0');
        ndig++;
        i++;
    }
    if (ndig == 0 || i != n) return false;
    if (eneg) ex = -ex;
    uint64_t e;
    if (lead == 1) {
        if (ex < -1022 || ex > 1023) return false;
        e = (uint64_t)(ex + 1023);
    } else {
        if (ex != (f == 0 ? 0 : -1022)) return false;
        e = 0;
    }
    uint64_t u = (sign << 63) | (e << 52) | f;
    double x;
    memcpy(&x, &u, sizeof x);
    /* One spelling per value: what we would write must be what we read
     * (catches trailing zeros, "p-0", "p+01" and the like).                */
    char buf[OPT__HEXDBL_BUF];
    opt__wisdom_fmt_double(x, buf);
    if (strlen(buf) != n || memcmp(buf, s, n) != 0) return false;
    *out = x;
    return true;
}

/* ---- field rules --------------------------------------------------------- */

static bool finite_nonneg(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    if (((u >> 52) & 0x7FF) == 0x7FF) return false;    /* inf, nan          */
    return !(x < 0.0);
}

bool opt__wisdom_version_ok(const char *s, size_t n)
{
    if (n < 1 || n > OPT_WISDOM_VERSION_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '+' || c == '-';
        if (!ok) return false;
    }
    return true;
}

const char *opt__wisdom_check_config(const opt_wisdom_config *c)
{
    size_t n = strnlen(c->version, sizeof c->version);
    if (n == sizeof c->version || !opt__wisdom_version_ok(c->version, n))
        return "version must be 1..31 characters of [A-Za-z0-9._+-]";
    if (c->P < 1 || c->P > OPT_WISDOM_MAX_P) return "P out of range";
    if (c->pr < 1 || c->pc < 1 || (int64_t)c->pr * c->pc != c->P)
        return "grid pr x pc does not make P";
    if (!finite_nonneg(c->alpha) || !finite_nonneg(c->beta))
        return "alpha and beta must be finite and >= 0";
    if (!finite_nonneg(c->io_beta)) return "io_beta must be finite and >= 0";
    for (int k = 0; k < OPT_WISDOM_COLL; k++)
        if (!finite_nonneg(c->coll[k]))
            return "collectives: every figure must be finite and >= 0";
    return NULL;
}

const char *opt__wisdom_check_node(const opt_wisdom_node *nd,
                                   const opt_wisdom_config *c)
{
    const blas_layout *l = &nd->lay;
    if (l->pr != c->pr || l->pc != c->pc) return "grid differs from config";
    if (nd->variant < 0) return "negative variant";
    if (l->m < 0 || l->n < 0) return "negative size";
    switch (l->kind) {
    case BLAS_MAT:
        if (l->b < 1 || l->nb < 1) return "matrix block size < 1";
        if (l->dist != -1 || l->rep != 0)
            return "matrix must have dist -1 and rep 0";
        return NULL;
    case BLAS_VEC:
        if (l->m != 1) return "vector must have m 1";
        if (l->dist < -1 || l->dist > BLAS_DIST_PART)
            return "dist not in {-1, 0, 1, 2}";
        if (l->dist == BLAS_DIST_PART) {
            if (l->b != 0 || l->rep != 0)
                return "vector by partition must have b 0 and rep 0";
        } else if (l->dist >= 0 ? l->b < 1 : l->b != 0) {
            return "vector block size must be >= 1 if distributed, else 0";
        }
        if (l->nb != 0) return "vector must have nb 0";
        if (l->rep > 3) return "rep > 3";
        return NULL;
    case BLAS_SCA:
        if (l->m != 1 || l->n != 1) return "scalar must be 1 x 1";
        if (l->dist != -1 || l->b != 0 || l->nb != 0)
            return "scalar must have dist -1, b 0, nb 0";
        if (l->rep > 3) return "rep > 3";
        return NULL;
    }
    return "unknown kind";
}

const char *opt__wisdom_kind_name(blas_kind k)
{
    switch (k) {
    case BLAS_VEC: return "vec";
    case BLAS_MAT: return "mat";
    case BLAS_SCA: return "sca";
    }
    return "?";
}

/* ---- the container ------------------------------------------------------- */

void opt_wisdom_init(opt_wisdom *w)
{
    if (w) memset(w, 0, sizeof *w);
}

void opt_wisdom_free(opt_wisdom *w)
{
    if (!w) return;
    for (int i = 0; i < w->nplans; i++) free(w->plans[i].nodes);
    free(w->plans);
    memset(w, 0, sizeof *w);
}

/* First index whose key is >= key.                                         */
static int lower_bound(const opt_wisdom *w, uint64_t key)
{
    int lo = 0, hi = w->nplans;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (w->plans[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

deso_err opt_wisdom_add(opt_wisdom *w, uint64_t key, uint32_t hits,
                        int nnodes, const opt_wisdom_node *nodes)
{
    DESO_CHECK(w != NULL && (nodes != NULL || nnodes == 0), DESO_ENULL,
               "opt_wisdom_add: NULL argument");
    DESO_CHECK(nnodes >= 0 && nnodes <= OPT_WISDOM_MAX_NODES, DESO_ESIZE,
               "opt_wisdom_add: %d nodes (at most %d)", nnodes,
               OPT_WISDOM_MAX_NODES);
    int at = lower_bound(w, key);
    bool replace = at < w->nplans && w->plans[at].key == key;
    DESO_CHECK(replace || w->nplans < OPT_WISDOM_MAX_PLANS, DESO_ESIZE,
               "opt_wisdom_add: more than %d plans", OPT_WISDOM_MAX_PLANS);
    opt_wisdom_node *copy = NULL;
    if (nnodes > 0) {
        copy = deso__malloc((size_t)nnodes * sizeof *copy);
        DESO_CHECK(copy != NULL, DESO_ENOMEM, "opt_wisdom_add: out of memory");
        memcpy(copy, nodes, (size_t)nnodes * sizeof *copy);
    }
    opt_wisdom_plan p = {.key = key, .hits = hits, .nnodes = nnodes,
                         .nodes = copy};
    if (replace) {
        free(w->plans[at].nodes);
        w->plans[at] = p;
        return DESO_OK;
    }
    opt_wisdom_plan *grown =
        deso__realloc(w->plans, (size_t)(w->nplans + 1) * sizeof *grown);
    if (!grown) {
        free(copy);
        return deso__fail(DESO_ENOMEM, "opt_wisdom_add: out of memory");
    }
    w->plans = grown;
    memmove(&grown[at + 1], &grown[at],
            (size_t)(w->nplans - at) * sizeof *grown);
    grown[at] = p;
    w->nplans++;
    return DESO_OK;
}

const opt_wisdom_plan *opt_wisdom_find(const opt_wisdom *w, uint64_t key)
{
    if (!w || w->nplans <= 0 || !w->plans) return NULL;
    int at = lower_bound(w, key);
    return at < w->nplans && w->plans[at].key == key ? &w->plans[at] : NULL;
}

bool opt_wisdom_config_matches(const opt_wisdom_config *file,
                               const opt_wisdom_config *run)
{
    return strncmp(file->version, run->version, sizeof file->version) == 0 &&
           file->P == run->P && file->pr == run->pr && file->pc == run->pc;
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static bool layout_same(const blas_layout *a, const blas_layout *b)
{
    return a->kind == b->kind && a->m == b->m && a->n == b->n &&
           a->dist == b->dist && a->b == b->b && a->nb == b->nb &&
           a->rep == b->rep && a->pr == b->pr && a->pc == b->pc;
}

bool opt_wisdom_equal(const opt_wisdom *a, const opt_wisdom *b)
{
    const opt_wisdom_config *x = &a->config, *y = &b->config;
    if (!opt_wisdom_config_matches(x, y) || x->calibrated != y->calibrated ||
        !same_bits(x->alpha, y->alpha) || !same_bits(x->beta, y->beta) ||
        !same_bits(x->io_beta, y->io_beta) ||
        memcmp(x->coll, y->coll, sizeof x->coll) != 0 ||
        a->nplans != b->nplans)
        return false;
    for (int i = 0; i < a->nplans; i++) {
        const opt_wisdom_plan *p = &a->plans[i], *q = &b->plans[i];
        if (p->key != q->key || p->hits != q->hits || p->nnodes != q->nnodes)
            return false;
        for (int k = 0; k < p->nnodes; k++)
            if (!layout_same(&p->nodes[k].lay, &q->nodes[k].lay) ||
                p->nodes[k].variant != q->nodes[k].variant)
                return false;
    }
    return true;
}
