/* libFuzzer target: the Matrix Market reader must never crash, leak or read
 * out of bounds, and whatever it accepts must be a consistent matrix.  An
 * array file it accepts is read again in units of three columns, as
 * deso_mat_from_mtx streams one (a symmetric file's upper triangle then
 * comes from per-column positions further back in the text), and must
 * give the same elements as the reading one column at a time.
 * deso-fuzz-sources: deso/io/mtx.c deso/io/mtx_stream.c placement/errors.c placement/alloc.c   */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deso/io/mtx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The array file read in units of three columns against x's elements,
 * which deso__mtx_parse lists column by column.                         */
static void units_agree(const uint8_t *data, size_t size, const deso__mtx *x)
{
    deso__mtx_stream *s = NULL;
    if (deso__mtx_open_mem((const char *)data, size, &s) != DESO_OK) abort();
    const deso__mtx_info *h = deso__mtx_info_of(s);
    if (h->coordinate || h->m * h->n == 0) {
        deso__mtx_close(s);
        return;
    }
    double *g = malloc((size_t)(3 * h->m) * sizeof *g);
    if (g == NULL) abort();
    for (int64_t j0 = 0; j0 < h->n; j0 += 3) {
        int64_t j1 = h->n - j0 < 3 ? h->n : j0 + 3;
        if (deso__mtx_columns(s, j0, j1, g) != DESO_OK) abort();
        if (memcmp(g, x->val + j0 * h->m,
                   (size_t)((j1 - j0) * h->m) * sizeof *g) != 0)
            abort();
    }
    free(g);
    deso__mtx_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    deso__mtx x;
    deso_err e = deso__mtx_parse((const char *)data, size, &x);
    if (e != DESO_OK) {
        if (x.row || x.col || x.val || x.nnz) abort();   /* left empty     */
        return 0;
    }
    for (int64_t k = 0; k < x.nnz; k++)
        if (x.row[k] < 0 || x.row[k] >= x.m || x.col[k] < 0 || x.col[k] >= x.n)
            abort();
    units_agree(data, size, &x);
    deso__mtx_free(&x);
    return 0;
}
