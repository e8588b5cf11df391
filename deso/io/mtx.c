/* A Matrix Market reader written for hostile input, and streaming: the
 * file passes through a window of FILE_BUF bytes, every count is checked
 * against the bytes actually present before anything is sized from it,
 * every line is bounded, every index range-checked.                      */
#define _FILE_OFFSET_BITS 64
#include "deso/io/mtx.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "placement/errors.h"
#include "placement/alloc.h"

#define MAX_LINE 1024
#define MAX_DIM ((int64_t)1 << 31)
#define FILE_BUF ((size_t)1 << 16)   /* bytes read from disk at most      */

/* Where a symmetric array file's column was left: the line of the first
 * row not yet copied into the upper triangle, and its number.            */
typedef struct cursor {
    int64_t at, lineno;
} cursor;

struct deso__mtx_stream {
    FILE *f;                /* NULL for a file held in memory              */
    const char *text;       /* a file held in memory, and its length       */
    size_t len;
    char *buf;              /* the file's window (files only)              */
    const char *p, *end;    /* unread bytes of the window                  */
    int64_t base;           /* offset in the file of the window's start   */
    int eof;                /* nothing left beyond end                     */
    size_t want;            /* bytes one refill asks for                   */
    int64_t size;           /* file bytes in all, -1 when unknown          */
    int64_t lineno;
    deso__mtx_info info;
    int64_t done;           /* coordinate: entries read                    */
    int64_t col;            /* array: the next column to read              */
    cursor *left;           /* symmetric array: one per column read        */
    int ended;              /* the end was checked                         */
    char line[MAX_LINE + 1];
};

/* ---- lines ------------------------------------------------------------- */

/* Offset in the file of the next unread byte.                            */
static int64_t position(const deso__mtx_stream *s)
{
    return s->f ? s->base + (int64_t)(s->p - s->buf)
                : (int64_t)(s->p - s->text);
}

/* Moves to offset `at` (a line's start found earlier) as line `lineno`. */
static deso_err seek_to(deso__mtx_stream *s, int64_t at, int64_t lineno)
{
    s->lineno = lineno;
    if (!s->f) {
        s->p = s->text + at;
        return DESO_OK;
    }
    DESO_CHECK(fseeko(s->f, (off_t)at, SEEK_SET) == 0, DESO_EIO, "Matrix "
               "Market: cannot go back in the file (not a regular file?): %s",
               strerror(errno));
    s->base = at;
    s->p = s->end = s->buf;
    s->eof = 0;
    return DESO_OK;
}

/* Moves the unread bytes to the front of the window and appends more.    */
static deso_err refill(deso__mtx_stream *s)
{
    size_t keep = (size_t)(s->end - s->p);
    memmove(s->buf, s->p, keep);
    s->base += (int64_t)(s->p - s->buf);
    size_t ask = s->want > MAX_LINE + 1 ? s->want : MAX_LINE + 1;
    if (ask > FILE_BUF - keep) ask = FILE_BUF - keep;
    size_t got = fread(s->buf + keep, 1, ask, s->f);
    DESO_CHECK(!ferror(s->f), DESO_EIO, "Matrix Market: reading the file "
               "failed after line %lld", (long long)s->lineno);
    if (got == 0) s->eof = 1;
    s->p = s->buf;
    s->end = s->buf + keep + got;
    return DESO_OK;
}

/* The next line into s->line.  *r: 1 a line, 0 the end, -1 a line too
 * long or holding a NUL byte.                                             */
static deso_err next_line(deso__mtx_stream *s, int *r)
{
    const char *nl;
    while (!(nl = memchr(s->p, '\n', (size_t)(s->end - s->p))) && s->f &&
           !s->eof && s->end - s->p <= MAX_LINE)
        DESO_TRY(refill(s));
    *r = 0;
    if (s->p >= s->end) return DESO_OK;
    const char *stop = nl ? nl : s->end;
    size_t len = (size_t)(stop - s->p);
    s->lineno++;
    *r = -1;
    if (len > MAX_LINE || memchr(s->p, '\0', len)) return DESO_OK;
    memcpy(s->line, s->p, len);
    s->line[len] = '\0';
    if (len > 0 && s->line[len - 1] == '\r') s->line[len - 1] = '\0';
    s->p = nl ? nl + 1 : s->end;
    *r = 1;
    return DESO_OK;
}

static int blank(const char *t)
{
    while (*t && isspace((unsigned char)*t)) t++;
    return *t == '\0';
}

/* The next line that is neither a comment nor blank; *r as next_line's,
 * a bad line an error here.                                              */
static deso_err next_data(deso__mtx_stream *s, int *r)
{
    for (;;) {
        DESO_TRY(next_line(s, r));
        DESO_CHECK(*r >= 0, DESO_EIO, "Matrix Market: line %lld is too long "
                   "or holds a NUL byte", (long long)s->lineno);
        if (*r == 0 || (s->line[0] != '%' && !blank(s->line))) return DESO_OK;
    }
}

/* Bytes not yet parsed, or -1 when the file's size is unknown.           */
static int64_t bytes_left(const deso__mtx_stream *s)
{
    return s->size < 0 ? -1 : s->size - position(s);
}

/* Whatever follows the last entry: comments and blank lines only.       */
static deso_err check_end(deso__mtx_stream *s)
{
    if (s->ended) return DESO_OK;
    s->ended = 1;
    int r;
    DESO_TRY(next_data(s, &r));
    DESO_CHECK(r == 0, DESO_EIO, "Matrix Market: line %lld: data after the "
               "last entry", (long long)s->lineno);
    return DESO_OK;
}

/* ---- numbers ----------------------------------------------------------- */

static int parse_i64(char **t, int64_t *v)
{
    errno = 0;
    char *e;
    long long x = strtoll(*t, &e, 10);
    if (e == *t || errno) return 0;
    *t = e;
    *v = x;
    return 1;
}

static int parse_f64(char **t, double *v)
{
    errno = 0;
    char *e;
    double x = strtod(*t, &e);
    if (e == *t || errno == ERANGE || !isfinite(x)) return 0;
    *t = e;
    *v = x;
    return 1;
}

/* ---- banner and size line ---------------------------------------------- */

static deso_err parse_banner(deso__mtx_stream *s)
{
    deso__mtx_info *h = &s->info;
    int r;
    DESO_TRY(next_line(s, &r));
    DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: empty file or overlong first line");
    char banner[32], object[32], format[32], field[32], sym[32];
    int k = sscanf(s->line, "%31s %31s %31s %31s %31s", banner, object,
                   format, field, sym);
    DESO_CHECK(k == 5 && strcmp(banner, "%%MatrixMarket") == 0, DESO_EIO,
               "Matrix Market: line 1 is not a '%%%%MatrixMarket matrix "
               "<format> <field> <symmetry>' banner");
    DESO_CHECK(strcasecmp(object, "matrix") == 0, DESO_ENOTSUP,
               "Matrix Market: object '%s' is not supported (only matrix)", object);
    if (strcasecmp(format, "coordinate") == 0) h->coordinate = 1;
    else if (strcasecmp(format, "array") == 0) h->coordinate = 0;
    else return deso__fail(DESO_EIO, "Matrix Market: unknown format '%s'", format);
    h->pattern = strcasecmp(field, "pattern") == 0;
    DESO_CHECK(h->pattern || strcasecmp(field, "real") == 0 ||
               strcasecmp(field, "integer") == 0 || strcasecmp(field, "double") == 0,
               DESO_ENOTSUP, "Matrix Market: field '%s' is not supported (real, "
               "integer or pattern)", field);
    DESO_CHECK(!(h->pattern && !h->coordinate), DESO_EIO,
               "Matrix Market: pattern needs the coordinate format");
    if (strcasecmp(sym, "general") == 0) h->symmetric = 0;
    else if (strcasecmp(sym, "symmetric") == 0) h->symmetric = 1;
    else if (strcasecmp(sym, "skew-symmetric") == 0) h->symmetric = -1;
    else return deso__fail(DESO_ENOTSUP, "Matrix Market: symmetry '%s' is not "
                           "supported", sym);
    return DESO_OK;
}

static deso_err parse_size_line(deso__mtx_stream *s)
{
    deso__mtx_info *h = &s->info;
    int r;
    DESO_TRY(next_data(s, &r));
    DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: missing size line");
    char *t = s->line;
    DESO_CHECK(parse_i64(&t, &h->m) && parse_i64(&t, &h->n), DESO_EIO,
               "Matrix Market: line %lld: bad size line", (long long)s->lineno);
    DESO_CHECK(!h->coordinate || parse_i64(&t, &h->entries), DESO_EIO,
               "Matrix Market: line %lld: size line needs 'rows cols entries'",
               (long long)s->lineno);
    DESO_CHECK(blank(t), DESO_EIO, "Matrix Market: line %lld: trailing "
               "characters on the size line", (long long)s->lineno);
    DESO_CHECK(h->m >= 0 && h->n >= 0 && h->m < MAX_DIM && h->n < MAX_DIM,
               DESO_ESIZE, "Matrix Market: size %lld x %lld out of range",
               (long long)h->m, (long long)h->n);
    DESO_CHECK(h->symmetric == 0 || h->m == h->n, DESO_ESIZE,
               "Matrix Market: a symmetric matrix must be square, not "
               "%lld x %lld", (long long)h->m, (long long)h->n);
    if (!h->coordinate)
        h->entries = h->symmetric == 0 ? h->m * h->n
                   : h->symmetric > 0  ? h->n * (h->n + 1) / 2
                   : h->n * (h->n - 1) / 2;
    /* m, n < 2^31, so m * n cannot overflow int64.                         */
    DESO_CHECK(h->entries >= 0 && h->entries <= h->m * h->n, DESO_ESIZE,
               "Matrix Market: %lld entries cannot fit a %lld x %lld matrix",
               (long long)h->entries, (long long)h->m, (long long)h->n);
    /* Every entry takes at least two bytes of text: a size line claiming
     * more than that is corrupt, and must not drive an allocation.       */
    int64_t left = bytes_left(s);
    DESO_CHECK(left < 0 || h->entries <= left / 2 + 1, DESO_EIO, "Matrix "
               "Market: the size line claims %lld entries, more than the file "
               "can hold", (long long)h->entries);
    return DESO_OK;
}

/* ---- opening ------------------------------------------------------------ */

static deso_err open_common(deso__mtx_stream *s, deso__mtx_stream **out)
{
    s->want = FILE_BUF;
    deso_err e = parse_banner(s);
    if (e == DESO_OK) e = parse_size_line(s);
    if (e == DESO_OK && s->info.entries == 0) e = check_end(s);
    if (e != DESO_OK) {
        deso__mtx_close(s);
        return e;
    }
    *out = s;
    return DESO_OK;
}

deso_err deso__mtx_open_mem(const char *text, size_t len,
                            deso__mtx_stream **out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__mtx_open_mem: out is NULL");
    *out = NULL;
    DESO_CHECK(text != NULL || len == 0, DESO_ENULL,
               "deso__mtx_open_mem: text is NULL");
    deso__mtx_stream *s = deso__calloc(1, sizeof *s);
    DESO_CHECK(s != NULL, DESO_ENOMEM, "Matrix Market: out of memory");
    s->text = text ? text : "";
    s->len = len;
    s->p = s->text;
    s->end = s->p + len;
    s->eof = 1;
    s->size = (int64_t)len;
    return open_common(s, out);
}

deso_err deso__mtx_open_file(const char *path, deso__mtx_stream **out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__mtx_open_file: out is NULL");
    *out = NULL;
    DESO_CHECK(path != NULL, DESO_ENULL, "deso__mtx_open_file: path is NULL");
    deso__mtx_stream *s = deso__calloc(1, sizeof *s);
    char *buf = deso__malloc(FILE_BUF);
    if (!s || !buf) {
        free(s);
        free(buf);
        return deso__fail(DESO_ENOMEM, "Matrix Market: out of memory");
    }
    s->buf = buf;
    s->p = s->end = buf;
    s->f = fopen(path, "rb");
    if (!s->f) {
        int err = errno;
        deso__mtx_close(s);
        return deso__fail(DESO_EIO, "cannot open '%s': %s", path, strerror(err));
    }
    /* the window is the only buffer: each refill is one read(2)           */
    setvbuf(s->f, NULL, _IONBF, 0);
    struct stat st;
    s->size = fstat(fileno(s->f), &st) == 0 && S_ISREG(st.st_mode)
                  ? (int64_t)st.st_size : -1;
    return open_common(s, out);
}

const deso__mtx_info *deso__mtx_info_of(const deso__mtx_stream *s)
{
    return &s->info;
}

void deso__mtx_close(deso__mtx_stream *s)
{
    if (!s) return;
    if (s->f) fclose(s->f);
    free(s->buf);
    free(s->left);
    free(s);
}

/* ---- a coordinate file's entries ------------------------------------------ */

deso_err deso__mtx_entries(deso__mtx_stream *s, int64_t max, int64_t *row,
                           int64_t *col, double *val, int64_t *got)
{
    const deso__mtx_info *h = &s->info;
    *got = 0;
    DESO_CHECK(h->coordinate && max >= 2, DESO_ESTATE, "deso__mtx_entries: "
               "not a coordinate file, or room for %lld entries",
               (long long)max);
    int64_t k = 0;
    for (; s->done < h->entries && k + 2 <= max; s->done++) {
        int r;
        DESO_TRY(next_data(s, &r));
        DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: expected %lld entries, "
                   "found %lld", (long long)h->entries, (long long)s->done);
        char *t = s->line;
        int64_t i, j;
        double v = 1.0;
        DESO_CHECK(parse_i64(&t, &i) && parse_i64(&t, &j), DESO_EIO,
                   "Matrix Market: line %lld: expected 'row col%s'",
                   (long long)s->lineno, h->pattern ? "" : " value");
        DESO_CHECK(h->pattern || parse_f64(&t, &v), DESO_EIO,
                   "Matrix Market: line %lld: missing or non-finite value",
                   (long long)s->lineno);
        DESO_CHECK(blank(t), DESO_EIO, "Matrix Market: line %lld: "
                   "trailing characters", (long long)s->lineno);
        DESO_CHECK(i >= 1 && i <= h->m && j >= 1 && j <= h->n, DESO_EIO,
                   "Matrix Market: line %lld: index (%lld, %lld) outside "
                   "%lld x %lld", (long long)s->lineno, (long long)i,
                   (long long)j, (long long)h->m, (long long)h->n);
        DESO_CHECK(h->symmetric == 0 || i >= j, DESO_EIO,
                   "Matrix Market: line %lld: symmetric file has an entry "
                   "above the diagonal", (long long)s->lineno);
        DESO_CHECK(h->symmetric >= 0 || i != j, DESO_EIO,
                   "Matrix Market: line %lld: skew-symmetric file has a "
                   "diagonal entry", (long long)s->lineno);
        row[k] = i - 1;
        col[k] = j - 1;
        val[k++] = v;
        if (h->symmetric != 0 && i != j) {
            row[k] = j - 1;
            col[k] = i - 1;
            val[k++] = h->symmetric > 0 ? v : -v;
        }
    }
    *got = k;
    if (s->done == h->entries) DESO_TRY(check_end(s));
    return DESO_OK;
}

/* ---- an array file's columns ---------------------------------------------- */

/* The next value of the array, element (i, j) (0-based, for the message). */
static deso_err next_value(deso__mtx_stream *s, int64_t i, int64_t j,
                           double *v)
{
    int r;
    DESO_TRY(next_data(s, &r));
    DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: array ends early at entry "
               "(%lld, %lld)", (long long)i + 1, (long long)j + 1);
    char *t = s->line;
    DESO_CHECK(parse_f64(&t, v) && blank(t), DESO_EIO, "Matrix Market: line "
               "%lld: expected one finite value", (long long)s->lineno);
    return DESO_OK;
}

/* Column c's stored part (all of it, or the lower triangle) into gc; a
 * symmetric file's column records where row j1 starts (the first row
 * the upper triangle has not taken yet).                                 */
static deso_err direct_column(deso__mtx_stream *s, int64_t c, int64_t j1,
                              double *gc)
{
    const deso__mtx_info *h = &s->info;
    int64_t i0 = h->symmetric == 0 ? 0 : c + (h->symmetric < 0);
    if (h->symmetric < 0) gc[c] = 0.0;
    for (int64_t i = i0; i < h->m; i++) {
        if (h->symmetric != 0 && i == j1)
            s->left[c] = (cursor){position(s), s->lineno};
        DESO_TRY(next_value(s, i, c, &gc[i]));
    }
    return DESO_OK;
}

/* The upper triangle of columns [j0, j1) of a symmetric file, from the
 * lower triangle's rows j0..j1 - 1: of the slab's own columns, in g
 * already; of each column before, read again from where it was left, a
 * refill asking for about the bytes of those rows only.                 */
static deso_err upper_part(deso__mtx_stream *s, int64_t j0, int64_t j1,
                           double *g, size_t line_bytes)
{
    const int64_t m = s->info.m;
    const double sgn = s->info.symmetric > 0 ? 1.0 : -1.0;
    for (int64_t c = j0; c < j1; c++)
        for (int64_t r = j0; r < c; r++)
            g[(c - j0) * m + r] = sgn * g[(r - j0) * m + c];
    if (j0 == 0) return DESO_OK;
    cursor here = {position(s), s->lineno};
    s->want = (size_t)(j1 - j0) * line_bytes + MAX_LINE;
    for (int64_t r = 0; r < j0; r++) {
        DESO_TRY(seek_to(s, s->left[r].at, s->left[r].lineno));
        for (int64_t i = j0; i < j1; i++) {
            double v;
            DESO_TRY(next_value(s, i, r, &v));
            g[(i - j0) * m + r] = sgn * v;
        }
        s->left[r] = (cursor){position(s), s->lineno};
    }
    s->want = FILE_BUF;
    return seek_to(s, here.at, here.lineno);
}

deso_err deso__mtx_columns(deso__mtx_stream *s, int64_t j0, int64_t j1,
                           double *g)
{
    const deso__mtx_info *h = &s->info;
    DESO_CHECK(!h->coordinate && j0 == s->col && j1 >= j0 && j1 <= h->n,
               DESO_ESTATE, "deso__mtx_columns: columns [%lld, %lld) of an "
               "array file at column %lld", (long long)j0, (long long)j1,
               (long long)s->col);
    /* one position per column: n < 2^31 and, symmetric, n (n - 1) / 2
     * values in at least as many bytes, so n is at most the square root
     * of twice the file's size                                          */
    if (h->symmetric != 0 && s->left == NULL) {
        s->left = deso__calloc((size_t)(h->n > 0 ? h->n : 1), sizeof *s->left);
        DESO_CHECK(s->left != NULL, DESO_ENOMEM, "Matrix Market: out of "
                   "memory for %lld column positions", (long long)h->n);
    }
    int64_t start = position(s), lines = s->lineno;
    for (int64_t c = j0; c < j1; c++, s->col++)
        DESO_TRY(direct_column(s, c, j1, g + (c - j0) * h->m));
    if (h->symmetric != 0 && j1 > j0) {
        /* the mean line of what was just read sizes the refills          */
        int64_t got = s->lineno - lines, bytes = position(s) - start;
        size_t line_bytes = got > 0 ? (size_t)(bytes / got) + 1 : MAX_LINE;
        DESO_TRY(upper_part(s, j0, j1, g, line_bytes));
    }
    if (s->col == h->n) DESO_TRY(check_end(s));
    return DESO_OK;
}

/* ---- the whole file as a list of entries ------------------------------- */

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

static deso_err collect(deso__mtx_stream *s, deso__mtx *x)
{
    const deso__mtx_info *h = &s->info;
    x->m = h->m;
    x->n = h->n;
    x->symmetric = h->symmetric != 0;
    int64_t cells = h->coordinate ? h->entries : h->m * h->n;
    DESO_CHECK(cells <= DESO_MTX_MAX_ENTRIES, DESO_EIO, "Matrix Market: the "
               "size line claims %lld entries, more than one list holds",
               (long long)cells);
    if (h->coordinate) {
        /* mirror images double a symmetric file's list; two more slots
         * keep deso__mtx_entries's room for a pair at the end           */
        int64_t cap = (x->symmetric ? 2 : 1) * h->entries + 2;
        DESO_TRY(alloc_entries(x, cap));
        for (int64_t got = 1; got > 0; x->nnz += got)
            DESO_TRY(deso__mtx_entries(s, cap - x->nnz, x->row + x->nnz,
                                       x->col + x->nnz, x->val + x->nnz, &got));
        return DESO_OK;
    }
    DESO_TRY(alloc_entries(x, cells));
    if (cells == 0) return DESO_OK;
    double *g = deso__malloc((size_t)h->m * sizeof *g);
    DESO_CHECK(g != NULL, DESO_ENOMEM, "Matrix Market: out of memory");
    deso_err e = DESO_OK;
    for (int64_t j = 0; j < h->n && e == DESO_OK; j++) {
        e = deso__mtx_columns(s, j, j + 1, g);
        for (int64_t i = 0; e == DESO_OK && i < h->m; i++, x->nnz++) {
            x->row[x->nnz] = i;
            x->col[x->nnz] = j;
            x->val[x->nnz] = g[i];
        }
    }
    free(g);
    return e;
}

deso_err deso__mtx_parse(const char *text, size_t len, deso__mtx *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__mtx_parse: out is NULL");
    memset(out, 0, sizeof *out);
    deso__mtx_stream *s = NULL;
    DESO_TRY(deso__mtx_open_mem(text, len, &s));
    deso_err e = collect(s, out);
    deso__mtx_close(s);
    if (e != DESO_OK) deso__mtx_free(out);
    return e;
}

deso_err deso__mtx_read(const char *path, deso__mtx *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__mtx_read: out is NULL");
    memset(out, 0, sizeof *out);
    deso__mtx_stream *s = NULL;
    DESO_TRY(deso__mtx_open_file(path, &s));
    deso_err e = collect(s, out);
    deso__mtx_close(s);
    if (e != DESO_OK) deso__mtx_free(out);
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
