/* The streaming Matrix Market coordinate reader (see mtx_coo.h).  Written
 * for hostile input: lines are bounded, every index is range-checked, and
 * the only allocations are the stream's fixed buffer, the row pointers of
 * the caller's rows, and the columns and values of the entries a first
 * reading counted in those rows; a second reading fills them in place.  */
#include "deso/io/mtx_coo.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "placement/alloc.h"
#include "placement/errors.h"
#include "placement/pl_arith.h"

#define MAX_LINE 1024
#define FILE_BUF ((size_t)1 << 16)   /* bytes read from disk at a time    */

/* Where the stream is: the count comes before the fill, each once.       */
enum { STAGE_OPEN, STAGE_COUNTED, STAGE_DONE };

struct deso__coo {
    FILE *f;                /* NULL for a file held in memory              */
    const char *text;       /* a file held in memory, and its length       */
    size_t len;
    char *buf;              /* the file's window (files only)              */
    const char *p, *end;    /* unread bytes of the window                  */
    int eof;                /* nothing left beyond end                     */
    int64_t size;           /* file bytes in all, -1 when unknown          */
    int64_t fetched;        /* bytes fetched into the window so far        */
    int64_t lineno;
    deso__coo_info info;
    int stage;
    deso__coo_rowmap map;   /* the rows kept, fixed by the count           */
    const void *arg;
    int64_t nlocal;
    uint64_t digest;        /* of the entries of the reading under way     */
    uint64_t counted;       /* the digest the count saw                    */
    char line[MAX_LINE + 1];
};

/* ---- lines ------------------------------------------------------------- */

/* Moves the unread bytes to the front of the window and appends more.    */
static deso_err refill(deso__coo *s)
{
    size_t keep = (size_t)(s->end - s->p);
    memmove(s->buf, s->p, keep);
    size_t got = fread(s->buf + keep, 1, FILE_BUF - keep, s->f);
    DESO_CHECK(!ferror(s->f), DESO_EIO, "Matrix Market: reading the file "
               "failed after line %lld", (long long)s->lineno);
    if (got == 0) s->eof = 1;
    s->fetched += (int64_t)got;
    s->p = s->buf;
    s->end = s->buf + keep + got;
    return DESO_OK;
}

/* The next line into s->line.  *r: 1 a line, 0 the end, -1 a line too
 * long or holding a NUL byte.                                              */
static deso_err next_line(deso__coo *s, int *r)
{
    const char *nl;
    while (!(nl = memchr(s->p, '\n', (size_t)(s->end - s->p))) && !s->eof &&
           s->end - s->p <= MAX_LINE)
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

/* The next line that is neither a comment nor blank, else an error naming
 * what was expected: entry k (1-based), or the size line when k is 0.     */
static deso_err next_data(deso__coo *s, int64_t k)
{
    for (;;) {
        int r;
        DESO_TRY(next_line(s, &r));
        DESO_CHECK(r >= 0, DESO_EIO, "Matrix Market: line %lld is too long "
                   "or holds a NUL byte", (long long)s->lineno);
        if (r == 0 && k == 0)
            return deso__fail(DESO_EIO, "Matrix Market: missing size line");
        DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: expected %lld entries, "
                   "found %lld", (long long)s->info.entries, (long long)k - 1);
        if (s->line[0] != '%' && !blank(s->line)) return DESO_OK;
    }
}

/* Bytes not yet parsed, or -1 when the file's size is unknown.           */
static int64_t bytes_left(const deso__coo *s)
{
    int64_t window = (int64_t)(s->end - s->p);
    if (!s->f) return window;
    return s->size < 0 ? -1 : s->size - (s->fetched - window);
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

static deso_err parse_field_symmetry(const char *field, const char *sym,
                                     deso__coo_info *h)
{
    h->pattern = strcasecmp(field, "pattern") == 0;
    DESO_CHECK(h->pattern || strcasecmp(field, "real") == 0 ||
               strcasecmp(field, "integer") == 0 || strcasecmp(field, "double") == 0,
               DESO_ENOTSUP, "Matrix Market: field '%s' is not supported (real, "
               "integer or pattern)", field);
    if (strcasecmp(sym, "general") == 0) h->symmetric = 0;
    else if (strcasecmp(sym, "symmetric") == 0) h->symmetric = 1;
    else if (strcasecmp(sym, "skew-symmetric") == 0 && !h->pattern) h->symmetric = -1;
    else return deso__fail(DESO_ENOTSUP, "Matrix Market: symmetry '%s' is not "
                           "supported with field '%s'", sym, field);
    return DESO_OK;
}

static deso_err parse_banner(deso__coo *s)
{
    int r;
    DESO_TRY(next_line(s, &r));
    DESO_CHECK(r == 1, DESO_EIO, "Matrix Market: empty file or overlong first line");
    char banner[32], object[32], format[32], field[32], sym[32];
    int k = sscanf(s->line, "%31s %31s %31s %31s %31s", banner, object,
                   format, field, sym);
    DESO_CHECK(k == 5 && strcmp(banner, "%%MatrixMarket") == 0, DESO_EIO,
               "Matrix Market: line 1 is not a '%%%%MatrixMarket matrix "
               "coordinate <field> <symmetry>' banner");
    DESO_CHECK(strcasecmp(object, "matrix") == 0, DESO_ENOTSUP,
               "Matrix Market: object '%s' is not supported (only matrix)", object);
    DESO_CHECK(strcasecmp(format, "array") != 0, DESO_ENOTSUP, "Matrix Market: "
               "an array (dense) file has no sparse reading; read it as a "
               "dense matrix");
    DESO_CHECK(strcasecmp(format, "coordinate") == 0, DESO_EIO,
               "Matrix Market: unknown format '%s'", format);
    return parse_field_symmetry(field, sym, &s->info);
}

/* The claimed sizes against the limits and against the bytes present.    */
static deso_err check_sizes(const deso__coo *s)
{
    const deso__coo_info *h = &s->info;
    DESO_CHECK(h->m >= 0 && h->n >= 0 && h->m < DESO_COO_MAX_DIM &&
               h->n < DESO_COO_MAX_DIM, DESO_ESIZE, "Matrix Market: size "
               "%lld x %lld out of range", (long long)h->m, (long long)h->n);
    DESO_CHECK(h->symmetric == 0 || h->m == h->n, DESO_ESIZE, "Matrix Market: "
               "a symmetric matrix must be square, not %lld x %lld",
               (long long)h->m, (long long)h->n);
    int64_t cells;
    int fits = pl__mul(h->m, h->n, &cells);
    DESO_CHECK(h->entries >= 0 && (!fits || h->entries <= cells), DESO_ESIZE,
               "Matrix Market: %lld entries cannot fit a %lld x %lld matrix",
               (long long)h->entries, (long long)h->m, (long long)h->n);
    /* Every entry takes at least two bytes of text.                       */
    int64_t left = bytes_left(s);
    DESO_CHECK(left < 0 || h->entries <= left / 2 + 1, DESO_EIO, "Matrix "
               "Market: the size line claims %lld entries, more than the file "
               "can hold", (long long)h->entries);
    return DESO_OK;
}

static deso_err parse_size_line(deso__coo *s)
{
    DESO_TRY(next_data(s, 0));
    char *t = s->line;
    deso__coo_info *h = &s->info;
    DESO_CHECK(parse_i64(&t, &h->m) && parse_i64(&t, &h->n) &&
               parse_i64(&t, &h->entries) && blank(t), DESO_EIO,
               "Matrix Market: line %lld: the size line must be 'rows cols "
               "entries'", (long long)s->lineno);
    return check_sizes(s);
}

/* ---- opening ------------------------------------------------------------ */

static deso_err open_common(deso__coo *s, deso__coo **out)
{
    deso_err e = parse_banner(s);
    if (e == DESO_OK) e = parse_size_line(s);
    if (e != DESO_OK) {
        deso__coo_close(s);
        return e;
    }
    *out = s;
    return DESO_OK;
}

deso_err deso__coo_open_mem(const char *text, size_t len, deso__coo **out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__coo_open_mem: out is NULL");
    *out = NULL;
    DESO_CHECK(text != NULL || len == 0, DESO_ENULL, "deso__coo_open_mem: text is NULL");
    deso__coo *s = deso__calloc(1, sizeof *s);
    DESO_CHECK(s != NULL, DESO_ENOMEM, "Matrix Market: out of memory");
    s->text = text ? text : "";
    s->len = len;
    s->p = s->text;
    s->end = s->p + len;
    s->eof = 1;
    s->size = (int64_t)len;
    return open_common(s, out);
}

deso_err deso__coo_open_file(const char *path, deso__coo **out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__coo_open_file: out is NULL");
    *out = NULL;
    DESO_CHECK(path != NULL, DESO_ENULL, "deso__coo_open_file: path is NULL");
    deso__coo *s = deso__calloc(1, sizeof *s);
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
        deso__coo_close(s);
        return deso__fail(DESO_EIO, "cannot open '%s': %s", path, strerror(err));
    }
    struct stat st;
    s->size = fstat(fileno(s->f), &st) == 0 && S_ISREG(st.st_mode)
                  ? (int64_t)st.st_size : -1;
    return open_common(s, out);
}

const deso__coo_info *deso__coo_info_of(const deso__coo *s)
{
    return &s->info;
}

void deso__coo_close(deso__coo *s)
{
    if (!s) return;
    if (s->f) fclose(s->f);
    free(s->buf);
    free(s);
}

int64_t deso__coo_rows_block(int64_t i, const void *arg)
{
    const int64_t *lohi = arg;
    return i >= lohi[0] && i < lohi[1] ? i - lohi[0] : -1;
}

/* ---- entries -------------------------------------------------------------- */

typedef struct entry {
    int64_t i, j;           /* 0-based                                      */
    double v;
} entry;

static deso_err parse_entry(deso__coo *s, entry *x)
{
    const deso__coo_info *h = &s->info;
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

/* Mixes one entry into the reading's digest, so that a file whose entries
 * changed between the two readings (also in rows other ranks keep, which
 * the counts cannot see) is noticed.                                       */
static void mix_entry(deso__coo *s, const entry *x)
{
    uint64_t w[3] = {(uint64_t)x->i, (uint64_t)x->j, 0};
    memcpy(&w[2], &x->v, sizeof x->v);
    for (int k = 0; k < 3; k++) {
        s->digest = (s->digest ^ w[k]) * 0x9e3779b97f4a7c15u;
        s->digest ^= s->digest >> 29;
    }
}

static deso_err changed(const deso__coo *s)
{
    return deso__fail(DESO_EIO, "Matrix Market: the file changed between "
                      "its two readings (seen at line %lld)",
                      (long long)s->lineno);
}

/* What one reading does with the entries it keeps: the count adds one to
 * rowptr[r + 1] (nothing when there was no memory for rowptr); the fill
 * puts the entry at rowptr[r], the next free slot of row r, and advances
 * it.  A slot is free while its column is -1.                           */
typedef struct sink {
    pl_csr *a;
    int fill;
    int64_t nnz;            /* slots, fixed by the count                   */
    int64_t placed;
} sink;

static deso_err keep(const deso__coo *s, sink *k, int64_t i, int64_t j, double v)
{
    int64_t li = s->map(i, s->arg);
    if (li < 0) return DESO_OK;
    DESO_CHECK(li < s->nlocal, DESO_EINVAL, "Matrix Market: the row map puts "
               "row %lld at %lld, beyond %lld local rows", (long long)i,
               (long long)li, (long long)s->nlocal);
    pl_csr *a = k->a;
    if (!k->fill) {
        if (a->rowptr) a->rowptr[li + 1]++;
        return DESO_OK;
    }
    /* A row holding more than it was counted runs into the next row's
     * first slot (taken now, or by that row later) or past the end: caught
     * here or by close_rows, and never written outside the arrays.      */
    int64_t at = a->rowptr[li];
    if (at >= k->nnz || a->col[at] != -1) return changed(s);
    a->col[at] = j;
    a->val[at] = v;
    a->rowptr[li] = at + 1;
    k->placed++;
    return DESO_OK;
}

/* An entry and, in a symmetric file, its mirror image.                   */
static deso_err keep_entry(const deso__coo *s, sink *k, const entry *x)
{
    DESO_TRY(keep(s, k, x->i, x->j, x->v));
    if (s->info.symmetric == 0 || x->i == x->j) return DESO_OK;
    double mirror = s->info.symmetric > 0 ? x->v : -x->v;
    return keep(s, k, x->j, x->i, mirror);
}

/* One reading of every entry (each checked) and of what follows them.    */
static deso_err scan(deso__coo *s, sink *k)
{
    s->digest = 0;
    for (int64_t e = 1; e <= s->info.entries; e++) {
        DESO_TRY(next_data(s, e));
        entry x = {0, 0, 0.0};
        DESO_TRY(parse_entry(s, &x));
        mix_entry(s, &x);
        DESO_TRY(keep_entry(s, k, &x));
    }
    for (;;) {
        int r;
        DESO_TRY(next_line(s, &r));
        if (r == 0) return DESO_OK;
        DESO_CHECK(r == 1 && (s->line[0] == '%' || blank(s->line)), DESO_EIO,
                   "Matrix Market: line %lld: data after the %lld claimed "
                   "entries", (long long)s->lineno, (long long)s->info.entries);
    }
}

/* ---- the two readings ----------------------------------------------------- */

static deso_err check_rows_request(const deso__coo *s, deso__coo_rowmap map,
                                   int64_t nlocal)
{
    DESO_CHECK(s != NULL && map != NULL, DESO_ENULL, "deso__coo_count_rows: NULL");
    DESO_CHECK(s->stage == STAGE_OPEN, DESO_ESTATE, "deso__coo_count_rows: "
               "the stream was read already");
    DESO_CHECK(nlocal >= 0 && nlocal <= s->info.m, DESO_ESIZE, "deso__coo_"
               "count_rows: %lld local rows of a %lld-row matrix",
               (long long)nlocal, (long long)s->info.m);
    DESO_CHECK(nlocal <= DESO_COO_MAX_LOCAL_ROWS, DESO_ESIZE, "Matrix Market: "
               "%lld rows on one rank, more than %lld: use more ranks",
               (long long)nlocal, (long long)DESO_COO_MAX_LOCAL_ROWS);
    return DESO_OK;
}

/* Room for exactly the entries counted, every column slot marked free.   */
static deso_err alloc_entries(pl_csr *a)
{
    for (int64_t r = 0; r < a->nrows; r++) a->rowptr[r + 1] += a->rowptr[r];
    int64_t nz = a->rowptr[a->nrows];
    size_t slots = (size_t)(nz > 0 ? nz : 1);
    a->col = deso__malloc(slots * sizeof *a->col);
    a->val = deso__malloc(slots * sizeof *a->val);
    DESO_CHECK(a->col != NULL && a->val != NULL, DESO_ENOMEM, "Matrix Market: "
               "out of memory for %lld entries", (long long)nz);
    for (int64_t e = 0; e < nz; e++) a->col[e] = -1;
    return DESO_OK;
}

deso_err deso__coo_count_rows(deso__coo *s, deso__coo_rowmap map,
                              const void *arg, int64_t nlocal, pl_csr *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "deso__coo_count_rows: out is NULL");
    memset(out, 0, sizeof *out);
    DESO_TRY(check_rows_request(s, map, nlocal));
    s->stage = STAGE_COUNTED;
    s->map = map;
    s->arg = arg;
    s->nlocal = nlocal;
    out->nrows = nlocal;
    out->ncols = s->info.n;
    out->rowptr = deso__calloc((size_t)nlocal + 1, sizeof *out->rowptr);
    /* Without room for the counts every entry is still checked, so that a
     * malformed file is reported as such, not as a lack of memory.      */
    sink k = {out, 0, 0, 0};
    deso_err e = scan(s, &k);
    if (e == DESO_OK && !out->rowptr)
        e = deso__fail(DESO_ENOMEM, "Matrix Market: out of memory for %lld "
                       "row pointers", (long long)nlocal);
    if (e == DESO_OK) e = alloc_entries(out);
    s->counted = s->digest;
    if (e != DESO_OK) pl_csr_free(out);
    return e;
}

uint64_t deso__coo_digest(const deso__coo *s)
{
    return s->counted;
}

/* Back to the first byte, and the same banner and size line as before.   */
static deso_err rewind_stream(deso__coo *s)
{
    deso__coo_info was = s->info;
    s->lineno = 0;
    if (!s->f) {
        s->p = s->text;
        s->end = s->text + s->len;
    } else {
        DESO_CHECK(fseek(s->f, 0, SEEK_SET) == 0, DESO_EIO, "Matrix Market: "
                   "the file cannot be read a second time (not a regular file?)");
        s->p = s->end = s->buf;
        s->eof = 0;
        s->fetched = 0;
    }
    DESO_TRY(parse_banner(s));
    DESO_TRY(parse_size_line(s));
    const deso__coo_info *h = &s->info;
    if (was.m != h->m || was.n != h->n || was.entries != h->entries ||
        was.pattern != h->pattern || was.symmetric != h->symmetric)
        return changed(s);
    return DESO_OK;
}

/* After a fill, rowptr[r] is where row r ended.  The rows hold exactly
 * what was counted iff every slot was written once and these ends never
 * decrease; then they are the next rows' starts, shifted into place.    */
static deso_err close_rows(const deso__coo *s, const sink *k, pl_csr *a)
{
    if (k->placed != k->nnz || s->digest != s->counted) return changed(s);
    for (int64_t r = 1; r < a->nrows; r++)
        if (a->rowptr[r] < a->rowptr[r - 1]) return changed(s);
    for (int64_t r = a->nrows; r > 0; r--) a->rowptr[r] = a->rowptr[r - 1];
    a->rowptr[0] = 0;
    return DESO_OK;
}

deso_err deso__coo_fill_rows(deso__coo *s, pl_csr *out)
{
    DESO_CHECK(s != NULL && out != NULL, DESO_ENULL, "deso__coo_fill_rows: NULL");
    DESO_CHECK(s->stage == STAGE_COUNTED && out->rowptr != NULL &&
               out->nrows == s->nlocal, DESO_ESTATE, "deso__coo_fill_rows: "
               "not the rows deso__coo_count_rows counted on this stream");
    s->stage = STAGE_DONE;
    /* rowptr[r] holds row r's start: its first free slot.                  */
    sink k = {out, 1, out->rowptr[out->nrows], 0};
    deso_err e = rewind_stream(s);
    if (e == DESO_OK) e = scan(s, &k);
    if (e == DESO_OK) e = close_rows(s, &k, out);
    if (e != DESO_OK) {
        pl_csr_free(out);
        return e;
    }
    pl_csr_sort_rows(out);
    return DESO_OK;
}

deso_err deso__coo_read_rows(deso__coo *s, deso__coo_rowmap map,
                             const void *arg, int64_t nlocal, pl_csr *out)
{
    DESO_TRY(deso__coo_count_rows(s, map, arg, nlocal, out));
    return deso__coo_fill_rows(s, out);
}
