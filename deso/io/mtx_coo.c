/* The streaming Matrix Market coordinate reader (see mtx_coo.h), on the
 * shared text stream (mtx_stream.h), which bounds lines and checks the
 * header against the bytes present and every entry's indices.  What is
 * this reader's own: the only allocations beyond the stream are the row
 * pointers of the caller's rows and the columns and values of the entries
 * a first reading counted in those rows; a second reading fills them in
 * place.                                                                 */
#include "deso/io/mtx_coo.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

/* Coordinate files only, rows and columns of 64-bit indices.             */
static const deso__mtxs_rules coo_rules = {DESO_COO_MAX_DIM, 1};

/* Where the stream is: the count comes before the fill, each once.       */
enum { STAGE_OPEN, STAGE_COUNTED, STAGE_DONE };

struct deso__coo {
    deso__mtxs in;          /* first: the stream allocates the reader      */
    int stage;
    deso__coo_rowmap map;   /* the rows kept, fixed by the count           */
    const void *arg;
    int64_t nlocal;
    uint64_t digest;        /* of the entries of the reading under way     */
    uint64_t counted;       /* the digest the count saw                    */
};

/* ---- opening ------------------------------------------------------------ */

deso_err deso__coo_open_mem(const char *text, size_t len, deso__coo **out)
{
    return deso__mtxs_open_mem(text, len, &coo_rules, sizeof **out, out);
}

deso_err deso__coo_open_file(const char *path, deso__coo **out)
{
    return deso__mtxs_open_file(path, &coo_rules, sizeof **out, out);
}

const deso__coo_info *deso__coo_info_of(const deso__coo *s)
{
    return &s->in.info;
}

void deso__coo_close(deso__coo *s)
{
    if (s) deso__mtxs_close(&s->in);
}

int64_t deso__coo_rows_block(int64_t i, const void *arg)
{
    const int64_t *lohi = arg;
    return i >= lohi[0] && i < lohi[1] ? i - lohi[0] : -1;
}

/* ---- entries -------------------------------------------------------------- */

/* Mixes one entry into the reading's digest, so that a file whose entries
 * changed between the two readings (also in rows other ranks keep, which
 * the counts cannot see) is noticed.                                       */
static void mix_entry(deso__coo *s, const deso__mtx_entry *x)
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
                      (long long)s->in.lineno);
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
static deso_err keep_entry(const deso__coo *s, sink *k, const deso__mtx_entry *x)
{
    DESO_TRY(keep(s, k, x->i, x->j, x->v));
    deso__mtx_entry y;
    if (!deso__mtxs_mirror(&s->in.info, x, &y)) return DESO_OK;
    return keep(s, k, y.i, y.j, y.v);
}

/* One reading of every entry (each checked) and of what follows them.    */
static deso_err scan(deso__coo *s, sink *k)
{
    s->digest = 0;
    for (int64_t e = 0; e < s->in.info.entries; e++) {
        deso__mtx_entry x = {0, 0, 0.0};
        DESO_TRY(deso__mtxs_entry(&s->in, e, &x));
        mix_entry(s, &x);
        DESO_TRY(keep_entry(s, k, &x));
    }
    return deso__mtxs_end(&s->in);
}

/* ---- the two readings ----------------------------------------------------- */

static deso_err check_rows_request(const deso__coo *s, deso__coo_rowmap map,
                                   int64_t nlocal)
{
    DESO_CHECK(s != NULL && map != NULL, DESO_ENULL, "deso__coo_count_rows: NULL");
    DESO_CHECK(s->stage == STAGE_OPEN, DESO_ESTATE, "deso__coo_count_rows: "
               "the stream was read already");
    DESO_CHECK(nlocal >= 0 && nlocal <= s->in.info.m, DESO_ESIZE, "deso__coo_"
               "count_rows: %lld local rows of a %lld-row matrix",
               (long long)nlocal, (long long)s->in.info.m);
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
    out->ncols = s->in.info.n;
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
    deso__coo_info was = s->in.info;
    DESO_TRY(deso__mtxs_restart(&s->in));
    const deso__coo_info *h = &s->in.info;
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
