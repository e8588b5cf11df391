/* The Matrix Market text stream (see mtx_stream.h): the window over the
 * file, bounded lines, the banner and size line, coordinate entries and
 * array values.  Every count is checked against the bytes present before
 * a reader may size anything from it, every line is bounded, every index
 * range-checked.                                                         */
#define _FILE_OFFSET_BITS 64
#include "deso/io/mtx_stream.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "placement/alloc.h"
#include "placement/errors.h"
#include "placement/pl_arith.h"

#define MAX_LINE DESO_MTXS_MAX_LINE
#define WINDOW DESO_MTXS_WINDOW

/* ---- lines ------------------------------------------------------------- */

deso__mtxs_pos deso__mtxs_tell(const deso__mtxs *s)
{
    int64_t at = s->f ? s->base + (int64_t)(s->p - s->buf)
                      : (int64_t)(s->p - s->text);
    return (deso__mtxs_pos){at, s->lineno};
}

deso_err deso__mtxs_seek(deso__mtxs *s, deso__mtxs_pos to)
{
    s->lineno = to.lineno;
    s->ended = 0;
    if (!s->f) {
        s->p = s->text + to.at;
        return DESO_OK;
    }
    DESO_CHECK(fseeko(s->f, (off_t)to.at, SEEK_SET) == 0, DESO_EIO, "Matrix "
               "Market: cannot go back in the file, so it cannot be read a "
               "second time (not a regular file?): %s", strerror(errno));
    s->base = to.at;
    s->p = s->end = s->buf;
    s->eof = 0;
    return DESO_OK;
}

void deso__mtxs_want(deso__mtxs *s, size_t bytes)
{
    s->want = bytes == 0 || bytes > WINDOW ? WINDOW : bytes;
}

/* Moves the unread bytes to the front of the window and appends more.    */
static deso_err refill(deso__mtxs *s)
{
    size_t keep = (size_t)(s->end - s->p);
    memmove(s->buf, s->p, keep);
    s->base += (int64_t)(s->p - s->buf);
    size_t ask = s->want > MAX_LINE + 1 ? s->want : MAX_LINE + 1;
    if (ask > WINDOW - keep) ask = WINDOW - keep;
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
static deso_err next_line(deso__mtxs *s, int *r)
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
static deso_err next_data(deso__mtxs *s, int *r)
{
    for (;;) {
        DESO_TRY(next_line(s, r));
        DESO_CHECK(*r >= 0, DESO_EIO, "Matrix Market: line %lld is too long "
                   "or holds a NUL byte", (long long)s->lineno);
        if (*r == 0 || (s->line[0] != '%' && !blank(s->line))) return DESO_OK;
    }
}

/* Bytes not yet parsed, or -1 when the file's size is unknown.           */
static int64_t bytes_left(const deso__mtxs *s)
{
    return s->size < 0 ? -1 : s->size - deso__mtxs_tell(s).at;
}

deso_err deso__mtxs_end(deso__mtxs *s)
{
    if (s->ended) return DESO_OK;
    s->ended = 1;
    int r;
    DESO_TRY(next_data(s, &r));
    DESO_CHECK(r == 0, DESO_EIO, "Matrix Market: line %lld: data after the "
               "last entry (the size line claims %lld)", (long long)s->lineno,
               (long long)s->info.entries);
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

static deso_err parse_format(const deso__mtxs *s, const char *format,
                             deso__mtx_info *h)
{
    DESO_CHECK(!s->rules.coordinate_only || strcasecmp(format, "array") != 0,
               DESO_ENOTSUP, "Matrix Market: an array (dense) file has no "
               "sparse reading; read it as a dense matrix");
    if (strcasecmp(format, "coordinate") == 0) h->coordinate = 1;
    else if (strcasecmp(format, "array") == 0) h->coordinate = 0;
    else return deso__fail(DESO_EIO, "Matrix Market: unknown format '%s'", format);
    return DESO_OK;
}

/* The field and the symmetry; a pattern file holds no values, so it can
 * be neither an array nor skew-symmetric (as the format's own reader).  */
static deso_err parse_field_symmetry(const char *field, const char *sym,
                                     deso__mtx_info *h)
{
    h->pattern = strcasecmp(field, "pattern") == 0;
    DESO_CHECK(h->pattern || strcasecmp(field, "real") == 0 ||
               strcasecmp(field, "integer") == 0 || strcasecmp(field, "double") == 0,
               DESO_ENOTSUP, "Matrix Market: field '%s' is not supported (real, "
               "integer or pattern)", field);
    DESO_CHECK(!(h->pattern && !h->coordinate), DESO_EIO,
               "Matrix Market: pattern needs the coordinate format");
    if (strcasecmp(sym, "general") == 0) h->symmetric = 0;
    else if (strcasecmp(sym, "symmetric") == 0) h->symmetric = 1;
    else if (strcasecmp(sym, "skew-symmetric") == 0 && !h->pattern) h->symmetric = -1;
    else return deso__fail(DESO_ENOTSUP, "Matrix Market: symmetry '%s' is not "
                           "supported with field '%s'", sym, field);
    return DESO_OK;
}

static deso_err parse_banner(deso__mtxs *s)
{
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
    DESO_TRY(parse_format(s, format, &s->info));
    return parse_field_symmetry(field, sym, &s->info);
}

/* Values an array file stores: all m n, or a triangle of the square (with
 * the diagonal unless skew), given that n n fits.                       */
static int64_t array_entries(const deso__mtx_info *h, int64_t cells)
{
    int64_t n = h->n, side = h->symmetric > 0 ? n + 1 : n - 1;
    if (h->symmetric == 0) return cells;
    return n % 2 == 0 ? n / 2 * side : side / 2 * n;
}

/* The claimed sizes against the limits and against the bytes present.    */
static deso_err check_sizes(deso__mtxs *s)
{
    deso__mtx_info *h = &s->info;
    const int64_t max = s->rules.max_dim;
    int64_t cells;
    int fits = pl__mul(h->m, h->n, &cells);
    DESO_CHECK(h->m >= 0 && h->n >= 0 && h->m < max && h->n < max &&
               (fits || h->coordinate), DESO_ESIZE, "Matrix Market: size "
               "%lld x %lld out of range", (long long)h->m, (long long)h->n);
    DESO_CHECK(h->symmetric == 0 || h->m == h->n, DESO_ESIZE, "Matrix Market: "
               "a symmetric matrix must be square, not %lld x %lld",
               (long long)h->m, (long long)h->n);
    if (!h->coordinate) h->entries = array_entries(h, cells);
    DESO_CHECK(h->entries >= 0 && (!fits || h->entries <= cells), DESO_ESIZE,
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

static deso_err parse_size_line(deso__mtxs *s)
{
    deso__mtx_info *h = &s->info;
    int r;
    DESO_TRY(next_data(s, &r));
    DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: missing size line");
    char *t = s->line;
    DESO_CHECK(parse_i64(&t, &h->m) && parse_i64(&t, &h->n) &&
               (!h->coordinate || parse_i64(&t, &h->entries)) && blank(t),
               DESO_EIO, "Matrix Market: line %lld: the size line must be "
               "'rows cols%s'", (long long)s->lineno,
               h->coordinate ? " entries" : "");
    return check_sizes(s);
}

/* The banner and size line; a file with no entries read to its end.     */
static deso_err read_header(deso__mtxs *s)
{
    DESO_TRY(parse_banner(s));
    DESO_TRY(parse_size_line(s));
    return s->info.entries == 0 ? deso__mtxs_end(s) : DESO_OK;
}

deso_err deso__mtxs_restart(deso__mtxs *s)
{
    DESO_TRY(deso__mtxs_seek(s, (deso__mtxs_pos){0, 0}));
    memset(&s->info, 0, sizeof s->info);
    return read_header(s);
}

/* ---- opening ------------------------------------------------------------ */

/* A zeroed reader of `size` bytes that begins with its stream.           */
static deso_err new_stream(const deso__mtxs_rules *rules, size_t size,
                           deso__mtxs **out)
{
    *out = NULL;
    DESO_CHECK(rules != NULL && size >= sizeof **out, DESO_EINVAL, "Matrix "
               "Market: a reader of %zu bytes, or no rules", size);
    *out = deso__calloc(1, size);
    DESO_CHECK(*out != NULL, DESO_ENOMEM, "Matrix Market: out of memory");
    (*out)->rules = *rules;
    (*out)->want = WINDOW;
    return DESO_OK;
}

/* The header read, the reader handed out through out (see the header). */
static deso_err open_common(deso__mtxs *s, void *out)
{
    deso_err e = read_header(s);
    if (e != DESO_OK) {
        deso__mtxs_close(s);
        return e;
    }
    memcpy(out, &s, sizeof s);
    return DESO_OK;
}

/* A NULL out is an error; otherwise *out is NULL until the end.          */
static deso_err clear_out(void *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "Matrix Market: open: out is NULL");
    const deso__mtxs *none = NULL;
    memcpy(out, &none, sizeof none);
    return DESO_OK;
}

deso_err deso__mtxs_open_mem(const char *text, size_t len,
                             const deso__mtxs_rules *rules, size_t size,
                             void *out)
{
    DESO_TRY(clear_out(out));
    DESO_CHECK(text != NULL || len == 0, DESO_ENULL, "Matrix Market: open: "
               "text is NULL");
    deso__mtxs *s;
    DESO_TRY(new_stream(rules, size, &s));
    s->text = text ? text : "";
    s->p = s->text;
    s->end = s->p + len;
    s->eof = 1;
    s->size = (int64_t)len;
    return open_common(s, out);
}

deso_err deso__mtxs_open_file(const char *path, const deso__mtxs_rules *rules,
                              size_t size, void *out)
{
    DESO_TRY(clear_out(out));
    DESO_CHECK(path != NULL, DESO_ENULL, "Matrix Market: open: path is NULL");
    deso__mtxs *s;
    DESO_TRY(new_stream(rules, size, &s));
    s->buf = deso__malloc(WINDOW);
    if (!s->buf) {
        deso__mtxs_close(s);
        return deso__fail(DESO_ENOMEM, "Matrix Market: out of memory");
    }
    s->p = s->end = s->buf;
    s->f = fopen(path, "rb");
    if (!s->f) {
        int err = errno;
        deso__mtxs_close(s);
        return deso__fail(DESO_EIO, "cannot open '%s': %s", path, strerror(err));
    }
    /* the window is the only buffer: each refill is one read(2)           */
    setvbuf(s->f, NULL, _IONBF, 0);
    struct stat st;
    s->size = fstat(fileno(s->f), &st) == 0 && S_ISREG(st.st_mode)
                  ? (int64_t)st.st_size : -1;
    return open_common(s, out);
}

void deso__mtxs_close(deso__mtxs *s)
{
    if (!s) return;
    if (s->f) fclose(s->f);
    free(s->buf);
    free(s);
}

/* ---- entries and values ------------------------------------------------- */

deso_err deso__mtxs_entry(deso__mtxs *s, int64_t done, deso__mtx_entry *x)
{
    const deso__mtx_info *h = &s->info;
    int r;
    DESO_TRY(next_data(s, &r));
    DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: expected %lld entries, "
               "found %lld", (long long)h->entries, (long long)done);
    char *t = s->line;
    int64_t i, j;
    x->v = 1.0;
    DESO_CHECK(parse_i64(&t, &i) && parse_i64(&t, &j), DESO_EIO, "Matrix "
               "Market: line %lld: expected 'row col%s'", (long long)s->lineno,
               h->pattern ? "" : " value");
    DESO_CHECK(h->pattern || parse_f64(&t, &x->v), DESO_EIO, "Matrix Market: "
               "line %lld: missing or non-finite value", (long long)s->lineno);
    DESO_CHECK(blank(t), DESO_EIO, "Matrix Market: line %lld: trailing "
               "characters", (long long)s->lineno);
    DESO_CHECK(i >= 1 && i <= h->m && j >= 1 && j <= h->n, DESO_EIO, "Matrix "
               "Market: line %lld: index (%lld, %lld) outside %lld x %lld",
               (long long)s->lineno, (long long)i, (long long)j,
               (long long)h->m, (long long)h->n);
    DESO_CHECK(h->symmetric == 0 || i >= j, DESO_EIO, "Matrix Market: line "
               "%lld: symmetric file has an entry above the diagonal",
               (long long)s->lineno);
    DESO_CHECK(h->symmetric >= 0 || i != j, DESO_EIO, "Matrix Market: line "
               "%lld: skew-symmetric file has a diagonal entry",
               (long long)s->lineno);
    x->i = i - 1;
    x->j = j - 1;
    return DESO_OK;
}

int deso__mtxs_mirror(const deso__mtx_info *h, const deso__mtx_entry *x,
                      deso__mtx_entry *y)
{
    if (h->symmetric == 0 || x->i == x->j) return 0;
    *y = (deso__mtx_entry){x->j, x->i, h->symmetric > 0 ? x->v : -x->v};
    return 1;
}

deso_err deso__mtxs_value(deso__mtxs *s, double *v, int *found)
{
    DESO_TRY(next_data(s, found));
    if (*found == 0) return DESO_OK;
    char *t = s->line;
    DESO_CHECK(parse_f64(&t, v) && blank(t), DESO_EIO, "Matrix Market: line "
               "%lld: expected one finite value", (long long)s->lineno);
    return DESO_OK;
}
