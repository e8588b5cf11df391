/* Triples into compressed sparse rows (see csr.h).                        */
#include "placement/csr.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

#define COO_MIN_CAP 64

static deso_err coo_grow(pl_coo *t)
{
    int64_t cap = t->cap ? 2 * t->cap : COO_MIN_CAP;
    size_t n = (size_t)cap;
    int64_t *row = deso__realloc(t->row, n * sizeof *row);
    if (row) t->row = row;
    int64_t *col = row ? deso__realloc(t->col, n * sizeof *col) : NULL;
    if (col) t->col = col;
    double *val = col ? deso__realloc(t->val, n * sizeof *val) : NULL;
    if (!val) return deso__fail(DESO_ENOMEM, "sparse assembly: cannot hold "
                                "%lld entries", (long long)cap);
    t->val = val;
    t->cap = cap;
    return DESO_OK;
}

deso_err pl_coo_push(pl_coo *t, int64_t row, int64_t col, double v)
{
    if (t->n == t->cap) DESO_TRY(coo_grow(t));
    t->row[t->n] = row;
    t->col[t->n] = col;
    t->val[t->n] = v;
    t->n++;
    return DESO_OK;
}

void pl_coo_free(pl_coo *t)
{
    if (!t) return;
    free(t->row);
    free(t->col);
    free(t->val);
    memset(t, 0, sizeof *t);
}

void pl_csr_free(pl_csr *a)
{
    if (!a) return;
    free(a->rowptr);
    free(a->col);
    free(a->val);
    memset(a, 0, sizeof *a);
}

static deso_err check_triples(const pl_coo *t, int64_t nrows, int64_t ncols)
{
    for (int64_t k = 0; k < t->n; k++)
        DESO_CHECK(t->row[k] >= 0 && t->row[k] < nrows && t->col[k] >= 0 &&
                   t->col[k] < ncols, DESO_EINVAL, "sparse assembly: entry "
                   "(%lld, %lld) outside %lld x %lld", (long long)t->row[k],
                   (long long)t->col[k], (long long)nrows, (long long)ncols);
    return DESO_OK;
}

/* Sorts one row's (column, value) pairs by column: insertion sort, since
 * rows of the matrices deso meets hold a handful of entries; a long row
 * falls back to a heap sort to stay O(k log k) on hostile input.          */
static void sift(int64_t *c, double *v, int64_t root, int64_t n)
{
    for (;;) {
        int64_t kid = 2 * root + 1;
        if (kid >= n) return;
        if (kid + 1 < n && c[kid + 1] > c[kid]) kid++;
        if (c[root] >= c[kid]) return;
        int64_t tc = c[root]; c[root] = c[kid]; c[kid] = tc;
        double tv = v[root]; v[root] = v[kid]; v[kid] = tv;
        root = kid;
    }
}

static void sort_row(int64_t *c, double *v, int64_t n)
{
    if (n > 32) {
        for (int64_t k = n / 2 - 1; k >= 0; k--) sift(c, v, k, n);
        for (int64_t e = n - 1; e > 0; e--) {
            int64_t tc = c[0]; c[0] = c[e]; c[e] = tc;
            double tv = v[0]; v[0] = v[e]; v[e] = tv;
            sift(c, v, 0, e);
        }
        return;
    }
    for (int64_t k = 1; k < n; k++) {
        int64_t ck = c[k];
        double vk = v[k];
        int64_t s = k;
        for (; s > 0 && c[s - 1] > ck; s--) { c[s] = c[s - 1]; v[s] = v[s - 1]; }
        c[s] = ck;
        v[s] = vk;
    }
}

/* Counting sort of the triples into rows (stable, so duplicates keep the
 * order they were read in and sum the same way on every run).            */
static void bucket(const pl_coo *t, pl_csr *a)
{
    for (int64_t k = 0; k < t->n; k++) a->rowptr[t->row[k] + 1]++;
    for (int64_t r = 0; r < a->nrows; r++) a->rowptr[r + 1] += a->rowptr[r];
    for (int64_t k = 0; k < t->n; k++) {
        int64_t at = a->rowptr[t->row[k]]++;
        a->col[at] = t->col[k];
        a->val[at] = t->val[k];
    }
    for (int64_t r = a->nrows; r > 0; r--) a->rowptr[r] = a->rowptr[r - 1];
    a->rowptr[0] = 0;
}

/* Sorts each row and sums equal columns, compacting in place.            */
static void merge_rows(pl_csr *a)
{
    int64_t out = 0;
    for (int64_t r = 0; r < a->nrows; r++) {
        int64_t b = a->rowptr[r], e = a->rowptr[r + 1];
        sort_row(a->col + b, a->val + b, e - b);
        a->rowptr[r] = out;
        for (int64_t k = b; k < e; k++) {
            if (out > a->rowptr[r] && a->col[out - 1] == a->col[k]) {
                a->val[out - 1] += a->val[k];
                continue;
            }
            a->col[out] = a->col[k];
            a->val[out] = a->val[k];
            out++;
        }
    }
    a->rowptr[a->nrows] = out;
}

void pl_csr_sort_rows(pl_csr *a)
{
    int64_t had = a->rowptr[a->nrows];
    merge_rows(a);
    int64_t nz = a->rowptr[a->nrows];
    if (nz == had || nz == 0) return;
    /* Give back what the summed duplicates held; a refusal to shrink only
     * keeps the larger block.                                              */
    int64_t *col = deso__realloc(a->col, (size_t)nz * sizeof *col);
    if (col) a->col = col;
    double *val = deso__realloc(a->val, (size_t)nz * sizeof *val);
    if (val) a->val = val;
}

deso_err pl_csr_from_coo(const pl_coo *t, int64_t nrows, int64_t ncols,
                         pl_csr *out)
{
    DESO_CHECK(out != NULL && t != NULL, DESO_ENULL, "pl_csr_from_coo: NULL");
    memset(out, 0, sizeof *out);
    DESO_CHECK(nrows >= 0 && ncols >= 0, DESO_ESIZE, "sparse assembly: "
               "negative size %lld x %lld", (long long)nrows, (long long)ncols);
    DESO_TRY(check_triples(t, nrows, ncols));
    size_t nz = (size_t)(t->n > 0 ? t->n : 1);
    out->nrows = nrows;
    out->ncols = ncols;
    out->rowptr = deso__calloc((size_t)nrows + 1, sizeof *out->rowptr);
    out->col = deso__malloc(nz * sizeof *out->col);
    out->val = deso__malloc(nz * sizeof *out->val);
    if (!out->rowptr || !out->col || !out->val) {
        pl_csr_free(out);
        return deso__fail(DESO_ENOMEM, "sparse assembly: cannot hold %lld "
                          "rows and %lld entries", (long long)nrows,
                          (long long)t->n);
    }
    bucket(t, out);
    pl_csr_sort_rows(out);
    return DESO_OK;
}
