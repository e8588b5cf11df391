/* libFuzzer target: the Matrix Market reader must never crash, leak or read
 * out of bounds, and whatever it accepts must be a consistent matrix.
 * deso-fuzz-sources: deso/io/mtx.c placement/errors.c placement/alloc.c                        */
#include <stdint.h>
#include <stdlib.h>

#include "deso/io/mtx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    deso__mtx_free(&x);
    return 0;
}
