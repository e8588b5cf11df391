/* The Matrix Market reader of deso_mat_from_mtx (see mtx.h), on the
 * shared text stream (mtx_stream.h), which bounds lines, checks the header
 * against the bytes present and every entry's indices.  What is this
 * reader's own: a coordinate file's entries handed out a chunk at a time,
 * and an array file's columns, a symmetric file's upper triangle found
 * again from where each column was left.                                */
#include "deso/io/mtx.h"

#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "placement/alloc.h"

/* Both formats; rows and columns below 2^31, so that m * n fits int64.   */
static const deso__mtxs_rules array_rules = {(int64_t)1 << 31, 0};

struct deso__mtx_stream {
    deso__mtxs in;          /* first: the stream allocates the reader      */
    int64_t done;           /* coordinate: entries read                    */
    int64_t col;            /* array: the next column to read              */
    deso__mtxs_pos *left;   /* symmetric array, per column read: the line
                               of its first row not yet copied into the
                               upper triangle                              */
};

/* ---- opening ------------------------------------------------------------ */

deso_err deso__mtx_open_mem(const char *text, size_t len,
                            deso__mtx_stream **out)
{
    return deso__mtxs_open_mem(text, len, &array_rules, sizeof **out, out);
}

deso_err deso__mtx_open_file(const char *path, deso__mtx_stream **out)
{
    return deso__mtxs_open_file(path, &array_rules, sizeof **out, out);
}

const deso__mtx_info *deso__mtx_info_of(const deso__mtx_stream *s)
{
    return &s->in.info;
}

void deso__mtx_close(deso__mtx_stream *s)
{
    if (!s) return;
    free(s->left);
    deso__mtxs_close(&s->in);
}

/* ---- a coordinate file's entries ------------------------------------------ */

static void put(int64_t *row, int64_t *col, double *val, int64_t k,
                const deso__mtx_entry *x)
{
    row[k] = x->i;
    col[k] = x->j;
    val[k] = x->v;
}

deso_err deso__mtx_entries(deso__mtx_stream *s, int64_t max, int64_t *row,
                           int64_t *col, double *val, int64_t *got)
{
    const deso__mtx_info *h = &s->in.info;
    *got = 0;
    DESO_CHECK(h->coordinate && max >= 2, DESO_ESTATE, "deso__mtx_entries: "
               "not a coordinate file, or room for %lld entries",
               (long long)max);
    int64_t k = 0;
    for (; s->done < h->entries && k + 2 <= max; s->done++) {
        deso__mtx_entry x, y;
        DESO_TRY(deso__mtxs_entry(&s->in, s->done, &x));
        put(row, col, val, k++, &x);
        if (deso__mtxs_mirror(h, &x, &y)) put(row, col, val, k++, &y);
    }
    *got = k;
    if (s->done == h->entries) DESO_TRY(deso__mtxs_end(&s->in));
    return DESO_OK;
}

/* ---- an array file's columns ---------------------------------------------- */

/* The next value of the array, element (i, j) (0-based, for the message). */
static deso_err next_value(deso__mtx_stream *s, int64_t i, int64_t j,
                           double *v)
{
    int found;
    DESO_TRY(deso__mtxs_value(&s->in, v, &found));
    DESO_CHECK(found, DESO_EIO, "Matrix Market: array ends early at entry "
               "(%lld, %lld)", (long long)i + 1, (long long)j + 1);
    return DESO_OK;
}

/* Column c's stored part (all of it, or the lower triangle) into gc; a
 * symmetric file's column records where row j1 starts (the first row
 * the upper triangle has not taken yet).                                 */
static deso_err direct_column(deso__mtx_stream *s, int64_t c, int64_t j1,
                              double *gc)
{
    const deso__mtx_info *h = &s->in.info;
    int64_t i0 = h->symmetric == 0 ? 0 : c + (h->symmetric < 0);
    if (h->symmetric < 0) gc[c] = 0.0;
    for (int64_t i = i0; i < h->m; i++) {
        if (h->symmetric != 0 && i == j1)
            s->left[c] = deso__mtxs_tell(&s->in);
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
    const int64_t m = s->in.info.m;
    const double sgn = s->in.info.symmetric > 0 ? 1.0 : -1.0;
    for (int64_t c = j0; c < j1; c++)
        for (int64_t r = j0; r < c; r++)
            g[(c - j0) * m + r] = sgn * g[(r - j0) * m + c];
    if (j0 == 0) return DESO_OK;
    deso__mtxs_pos here = deso__mtxs_tell(&s->in);
    deso__mtxs_want(&s->in, (size_t)(j1 - j0) * line_bytes + DESO_MTXS_MAX_LINE);
    for (int64_t r = 0; r < j0; r++) {
        DESO_TRY(deso__mtxs_seek(&s->in, s->left[r]));
        for (int64_t i = j0; i < j1; i++) {
            double v;
            DESO_TRY(next_value(s, i, r, &v));
            g[(i - j0) * m + r] = sgn * v;
        }
        s->left[r] = deso__mtxs_tell(&s->in);
    }
    deso__mtxs_want(&s->in, 0);
    return deso__mtxs_seek(&s->in, here);
}

deso_err deso__mtx_columns(deso__mtx_stream *s, int64_t j0, int64_t j1,
                           double *g)
{
    const deso__mtx_info *h = &s->in.info;
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
    deso__mtxs_pos start = deso__mtxs_tell(&s->in);
    for (int64_t c = j0; c < j1; c++, s->col++)
        DESO_TRY(direct_column(s, c, j1, g + (c - j0) * h->m));
    if (h->symmetric != 0 && j1 > j0) {
        /* the mean line of what was just read sizes the refills          */
        deso__mtxs_pos now = deso__mtxs_tell(&s->in);
        int64_t got = now.lineno - start.lineno, bytes = now.at - start.at;
        size_t line_bytes = got > 0 ? (size_t)(bytes / got) + 1
                                    : DESO_MTXS_MAX_LINE;
        DESO_TRY(upper_part(s, j0, j1, g, line_bytes));
    }
    if (s->col == h->n) DESO_TRY(deso__mtxs_end(&s->in));
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
    const deso__mtx_info *h = &s->in.info;
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
