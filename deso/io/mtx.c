/* A Matrix Market reader written for hostile input: every count is checked
 * against the bytes actually present before anything is allocated, every
 * line is bounded, every index range-checked.                              */
#include "deso/io/mtx.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "placement/errors.h"
#include "placement/alloc.h"

#define MAX_LINE 1024
#define MAX_DIM ((int64_t)1 << 31)

typedef struct cursor {
    const char *p, *end;
    int64_t lineno;
    char line[MAX_LINE + 1];
} cursor;

/* Copies the next line into c->line (NUL-terminated).  Returns 1 on a line,
 * 0 at the end, -1 when the line is too long or holds a NUL byte.          */
static int next_line(cursor *c)
{
    if (c->p >= c->end) return 0;
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    const char *stop = nl ? nl : c->end;
    size_t len = (size_t)(stop - c->p);
    c->lineno++;
    if (len > MAX_LINE) return -1;
    memcpy(c->line, c->p, len);
    c->line[len] = '\0';
    if (strlen(c->line) != len) return -1;
    if (len > 0 && c->line[len - 1] == '\r') c->line[len - 1] = '\0';
    c->p = nl ? nl + 1 : c->end;
    return 1;
}

static int blank(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return *s == '\0';
}

/* Next non-comment, non-blank data line; same returns as next_line.       */
static int next_data_line(cursor *c)
{
    for (;;) {
        int r = next_line(c);
        if (r <= 0) return r;
        if (c->line[0] == '%' || blank(c->line)) continue;
        return 1;
    }
}

static int parse_i64(char **s, int64_t *v)
{
    errno = 0;
    char *e;
    long long x = strtoll(*s, &e, 10);
    if (e == *s || errno) return 0;
    *s = e;
    *v = x;
    return 1;
}

static int parse_f64(char **s, double *v)
{
    errno = 0;
    char *e;
    double x = strtod(*s, &e);
    if (e == *s || errno == ERANGE || !isfinite(x)) return 0;
    *s = e;
    *v = x;
    return 1;
}

static int rest_blank(const char *s) { return blank(s); }

typedef enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW } symmetry;

typedef struct header {
    int coordinate, pattern;
    symmetry sym;
} header;

static deso_err parse_header(cursor *c, header *h)
{
    int r = next_line(c);
    DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: empty file or overlong first line");
    char banner[32], object[32], format[32], field[32], sym[32];
    int k = sscanf(c->line, "%31s %31s %31s %31s %31s", banner, object,
                   format, field, sym);
    DESO_CHECK(k == 5 && strcmp(banner, "%%MatrixMarket") == 0, DESO_EIO,
               "Matrix Market: line 1 is not a '%%%%MatrixMarket matrix "
               "<format> <field> <symmetry>' banner");
    DESO_CHECK(strcasecmp(object, "matrix") == 0, DESO_ENOTSUP,
               "Matrix Market: object '%s' is not supported (only matrix)", object);
    if (strcasecmp(format, "coordinate") == 0) h->coordinate = 1;
    else if (strcasecmp(format, "array") == 0) h->coordinate = 0;
    else return deso__fail(DESO_EIO, "Matrix Market: unknown format '%s'", format);
    h->pattern = 0;
    if (strcasecmp(field, "pattern") == 0) h->pattern = 1;
    else if (strcasecmp(field, "real") != 0 && strcasecmp(field, "integer") != 0
             && strcasecmp(field, "double") != 0)
        return deso__fail(DESO_ENOTSUP, "Matrix Market: field '%s' is not "
                          "supported (real, integer or pattern)", field);
    DESO_CHECK(!(h->pattern && !h->coordinate), DESO_EIO,
               "Matrix Market: pattern needs the coordinate format");
    if (strcasecmp(sym, "general") == 0) h->sym = SYM_GENERAL;
    else if (strcasecmp(sym, "symmetric") == 0) h->sym = SYM_SYMMETRIC;
    else if (strcasecmp(sym, "skew-symmetric") == 0) h->sym = SYM_SKEW;
    else return deso__fail(DESO_ENOTSUP, "Matrix Market: symmetry '%s' is not "
                           "supported", sym);
    return DESO_OK;
}

static deso_err alloc_entries(deso__mtx *x, int64_t cap)
{
    size_t n = (size_t)(cap > 0 ? cap : 1);
    x->row = deso__malloc(n * sizeof *x->row);
    x->col = deso__malloc(n * sizeof *x->col);
    x->val = deso__malloc(n * sizeof *x->val);
    if (!x->row || !x->col || !x->val)
        return deso__fail(DESO_ENOMEM, "Matrix Market: cannot allocate %lld "
                          "entries", (long long)cap);
    return DESO_OK;
}

static void push(deso__mtx *x, int64_t i, int64_t j, double v, symmetry sym)
{
    x->row[x->nnz] = i; x->col[x->nnz] = j; x->val[x->nnz] = v; x->nnz++;
    if (sym != SYM_GENERAL && i != j) {
        x->row[x->nnz] = j; x->col[x->nnz] = i;
        x->val[x->nnz] = sym == SYM_SKEW ? -v : v;
        x->nnz++;
    }
}

static deso_err read_coordinate(cursor *c, const header *h, deso__mtx *x,
                                int64_t entries)
{
    for (int64_t k = 0; k < entries; k++) {
        int r = next_data_line(c);
        DESO_CHECK(r >= 0, DESO_EIO, "Matrix Market: line %lld is too long "
                   "or holds a NUL byte", (long long)c->lineno);
        DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: expected %lld entries, "
                   "found %lld", (long long)entries, (long long)k);
        char *s = c->line;
        int64_t i, j;
        double v = 1.0;
        DESO_CHECK(parse_i64(&s, &i) && parse_i64(&s, &j), DESO_EIO,
                   "Matrix Market: line %lld: expected 'row col%s'",
                   (long long)c->lineno, h->pattern ? "" : " value");
        DESO_CHECK(h->pattern || parse_f64(&s, &v), DESO_EIO,
                   "Matrix Market: line %lld: missing or non-finite value",
                   (long long)c->lineno);
        DESO_CHECK(rest_blank(s), DESO_EIO, "Matrix Market: line %lld: "
                   "trailing characters", (long long)c->lineno);
        DESO_CHECK(i >= 1 && i <= x->m && j >= 1 && j <= x->n, DESO_EIO,
                   "Matrix Market: line %lld: index (%lld, %lld) outside "
                   "%lld x %lld", (long long)c->lineno, (long long)i,
                   (long long)j, (long long)x->m, (long long)x->n);
        DESO_CHECK(h->sym == SYM_GENERAL || i >= j, DESO_EIO,
                   "Matrix Market: line %lld: symmetric file has an entry "
                   "above the diagonal", (long long)c->lineno);
        DESO_CHECK(h->sym != SYM_SKEW || i != j, DESO_EIO,
                   "Matrix Market: line %lld: skew-symmetric file has a "
                   "diagonal entry", (long long)c->lineno);
        push(x, i - 1, j - 1, v, h->sym);
    }
    return DESO_OK;
}

static deso_err read_array(cursor *c, const header *h, deso__mtx *x)
{
    /* Column-major; symmetric files hold the lower triangle only.  An
     * empty matrix has no entries: don't walk its (maybe 2^31) columns.   */
    if (x->m == 0 || x->n == 0) return DESO_OK;
    for (int64_t j = 0; j < x->n; j++) {
        int64_t i0 = h->sym == SYM_GENERAL ? 0 : j + (h->sym == SYM_SKEW);
        for (int64_t i = i0; i < x->m; i++) {
            int r = next_data_line(c);
            DESO_CHECK(r >= 0, DESO_EIO, "Matrix Market: line %lld is too "
                       "long or holds a NUL byte", (long long)c->lineno);
            DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: array ends early at "
                       "entry (%lld, %lld)", (long long)i + 1, (long long)j + 1);
            char *s = c->line;
            double v;
            DESO_CHECK(parse_f64(&s, &v) && rest_blank(s), DESO_EIO,
                       "Matrix Market: line %lld: expected one finite value",
                       (long long)c->lineno);
            push(x, i, j, v, h->sym);
        }
    }
    return DESO_OK;
}

static deso_err parse(cursor *c, deso__mtx *x)
{
    header h = {0, 0, SYM_GENERAL};
    DESO_TRY(parse_header(c, &h));
    int r = next_data_line(c);
    DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: missing size line");
    char *s = c->line;
    int64_t entries = 0;
    DESO_CHECK(parse_i64(&s, &x->m) && parse_i64(&s, &x->n), DESO_EIO,
               "Matrix Market: line %lld: bad size line", (long long)c->lineno);
    DESO_CHECK(!h.coordinate || parse_i64(&s, &entries), DESO_EIO,
               "Matrix Market: line %lld: size line needs 'rows cols entries'",
               (long long)c->lineno);
    DESO_CHECK(rest_blank(s), DESO_EIO, "Matrix Market: line %lld: trailing "
               "characters on the size line", (long long)c->lineno);
    DESO_CHECK(x->m >= 0 && x->n >= 0 && x->m < MAX_DIM && x->n < MAX_DIM,
               DESO_ESIZE, "Matrix Market: size %lld x %lld out of range",
               (long long)x->m, (long long)x->n);
    DESO_CHECK(h.sym == SYM_GENERAL || x->m == x->n, DESO_ESIZE,
               "Matrix Market: a symmetric matrix must be square, not "
               "%lld x %lld", (long long)x->m, (long long)x->n);
    if (!h.coordinate)
        entries = h.sym == SYM_GENERAL ? x->m * x->n
                : h.sym == SYM_SYMMETRIC ? x->n * (x->n + 1) / 2
                : x->n * (x->n - 1) / 2;
    /* m, n < 2^31, so m * n cannot overflow int64.                         */
    DESO_CHECK(entries >= 0 && entries <= x->m * x->n, DESO_ESIZE,
               "Matrix Market: %lld entries cannot fit a %lld x %lld matrix",
               (long long)entries, (long long)x->m, (long long)x->n);
    /* Every entry takes at least two bytes of text: a size line claiming
     * more than that is corrupt, and must not drive the allocation.        */
    int64_t room = (int64_t)(c->end - c->p) / 2 + 1;
    DESO_CHECK(entries <= room && entries <= DESO_MTX_MAX_ENTRIES, DESO_EIO,
               "Matrix Market: the size line claims %lld entries, more than "
               "the file can hold", (long long)entries);
    x->symmetric = h.sym != SYM_GENERAL;
    DESO_TRY(alloc_entries(x, x->symmetric ? 2 * entries : entries));
    if (h.coordinate) DESO_TRY(read_coordinate(c, &h, x, entries));
    else DESO_TRY(read_array(c, &h, x));
    r = next_data_line(c);
    DESO_CHECK(r == 0, DESO_EIO, "Matrix Market: line %lld: data after the "
               "last entry", (long long)c->lineno);
    return DESO_OK;
}

deso_err deso__mtx_parse(const char *text, size_t len, deso__mtx *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__mtx_parse: out is NULL");
    memset(out, 0, sizeof *out);
    DESO_CHECK(text != NULL || len == 0, DESO_ENULL,
               "deso__mtx_parse: text is NULL");
    cursor *c = deso__malloc(sizeof *c);
    if (!c) return deso__fail(DESO_ENOMEM, "deso__mtx_parse: out of memory");
    c->p = text ? text : "";
    c->end = c->p + len;
    c->lineno = 0;
    deso_err e = parse(c, out);
    free(c);
    if (e != DESO_OK) deso__mtx_free(out);
    return e;
}

deso_err deso__mtx_read(const char *path, deso__mtx *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__mtx_read: out is NULL");
    memset(out, 0, sizeof *out);
    DESO_CHECK(path != NULL, DESO_ENULL, "deso__mtx_read: path is NULL");
    FILE *f = fopen(path, "rb");
    DESO_CHECK(f != NULL, DESO_EIO, "cannot open '%s': %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    deso_err e = DESO_OK;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 1 << 16;
            char *nb = deso__realloc(buf, ncap);
            if (!nb) { e = deso__fail(DESO_ENOMEM, "reading '%s': out of memory", path); break; }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) e = deso__fail(DESO_EIO, "reading '%s' failed", path);
            break;
        }
    }
    fclose(f);
    if (e == DESO_OK) e = deso__mtx_parse(buf, len, out);
    free(buf);
    return e;
}

void deso__mtx_free(deso__mtx *x)
{
    if (!x) return;
    free(x->row);
    free(x->col);
    free(x->val);
    memset(x, 0, sizeof *x);
}
