/* libFuzzer target: the streaming coordinate reader must never crash, leak
 * or read out of bounds; whatever it accepts must be a consistent CSR
 * (rows sorted, columns unique and in range); and where the whole-file
 * parser also accepts the input, the two must agree on the rows kept.
 * The rows kept are a window of at most 4096, as a rank would ask for.
 * A second run changes one byte of the text between the reader's two
 * readings (as a file rewritten while it is read): the fill must refuse
 * it or give a consistent CSR, and never write outside its arrays.
 * deso-fuzz-sources: deso/io/mtx_coo.c deso/io/mtx.c deso/io/mtx_stream.c placement/csr.c placement/errors.c placement/alloc.c */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deso/io/mtx.h"
#include "deso/io/mtx_coo.h"

#define WINDOW 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_csr(const pl_csr *a)
{
    if (a->rowptr[0] != 0) abort();
    for (int64_t r = 0; r < a->nrows; r++) {
        if (a->rowptr[r + 1] < a->rowptr[r]) abort();
        for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++) {
            if (a->col[e] < 0 || a->col[e] >= a->ncols) abort();
            if (e > a->rowptr[r] && a->col[e - 1] >= a->col[e]) abort();
            if (!isfinite(a->val[e]) && !isinf(a->val[e])) abort();
        }
    }
}

/* The whole-file parser's entries in the window, summed per (row, col),
 * against the CSR (duplicates may sum in another order: a tolerance).    */
static void compare(const char *text, size_t size, const pl_csr *a, int64_t lo)
{
    deso__mtx x;
    if (deso__mtx_parse(text, size, &x) != DESO_OK) return;
    pl_coo t = {0, 0, NULL, NULL, NULL};
    for (int64_t k = 0; k < x.nnz; k++)
        if (x.row[k] >= lo && x.row[k] < lo + a->nrows)
            if (pl_coo_push(&t, x.row[k] - lo, x.col[k], x.val[k]) != DESO_OK) abort();
    pl_csr b;
    if (pl_csr_from_coo(&t, a->nrows, a->ncols, &b) != DESO_OK) abort();
    if (b.rowptr[b.nrows] != a->rowptr[a->nrows]) abort();
    for (int64_t e = 0; e < a->rowptr[a->nrows]; e++) {
        if (a->col[e] != b.col[e]) abort();
        double d = fabs(a->val[e] - b.val[e]);
        if (!(d <= 1e-9 * (fabs(b.val[e]) + 1.0)) && isfinite(b.val[e])) abort();
    }
    pl_csr_free(&b);
    pl_coo_free(&t);
    deso__mtx_free(&x);
}

/* Rows [lo, hi) of text: lo is half the rows on odd sizes.               */
static void window(const deso__coo *s, size_t size, int64_t lohi[2])
{
    const deso__coo_info *h = deso__coo_info_of(s);
    lohi[0] = size % 2 ? h->m / 2 : 0;
    lohi[1] = h->m - lohi[0] < WINDOW ? h->m : lohi[0] + WINDOW;
}

/* Counts on data, fills from a copy with one byte flipped (which byte, by
 * the first one): the outcome, if accepted, must still be a sound CSR.   */
static void changed_between_readings(const uint8_t *data, size_t size)
{
    char *text = malloc(size);
    if (!text) abort();
    memcpy(text, data, size);
    deso__coo *s = NULL;
    if (deso__coo_open_mem(text, size, &s) == DESO_OK) {
        int64_t lohi[2];
        window(s, size, lohi);
        pl_csr a;
        if (deso__coo_count_rows(s, deso__coo_rows_block, lohi,
                                 lohi[1] - lohi[0], &a) == DESO_OK) {
            text[((size_t)data[0] * 7919u) % size] ^= 1;
            if (deso__coo_fill_rows(s, &a) == DESO_OK) check_csr(&a);
            else if (a.rowptr || a.col || a.val) abort();
            pl_csr_free(&a);
        }
    }
    deso__coo_close(s);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    deso__coo *s = NULL;
    if (deso__coo_open_mem(text, size, &s) != DESO_OK) {
        if (s) abort();                                 /* left empty      */
        return 0;
    }
    int64_t lohi[2];
    window(s, size, lohi);
    pl_csr a;
    deso_err e = deso__coo_read_rows(s, deso__coo_rows_block, lohi,
                                     lohi[1] - lohi[0], &a);
    deso__coo_close(s);
    changed_between_readings(data, size);
    if (e != DESO_OK) {
        if (a.rowptr || a.col || a.val) abort();
        return 0;
    }
    check_csr(&a);
    compare(text, size, &a, lohi[0]);
    pl_csr_free(&a);
    return 0;
}
