/* Partitions of vectors (blas_part) that layouts by partition name: kept
 * by the context until it is freed, since plans, compiled forces, kept
 * views and exchange plans copy layouts and may outlive the sparse matrix
 * a partition came from.  Interned by their ranges, so that two matrices
 * with the same row blocks give one partition and their vectors one
 * layout (and so that a program making matrices in a loop keeps a
 * bounded list).                                                         */
#include "deso/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"

typedef struct deso__part {
    blas_part p;
    struct deso__part *next;
    int64_t start[];
} deso__part;

deso_err deso__part_intern(deso_ctx *ctx, int64_t n, const int64_t *start,
                           const blas_part **out)
{
    int P = ctx->size;
    bool ok = start[0] == 0 && start[P] == n;
    for (int q = 0; ok && q < P; q++) ok = start[q] <= start[q + 1];
    DESO_CHECK(ok, DESO_EINTERNAL,
               "partition: ranges do not tile [0, %lld) in rank order",
               (long long)n);
    blas_part want = {n, P, start};
    for (deso__part *k = ctx->parts; k != NULL; k = k->next)
        if (blas_part_equal(&k->p, &want)) {
            *out = &k->p;
            return DESO_OK;
        }
    deso__part *k = deso__malloc(sizeof *k + ((size_t)P + 1) * sizeof(int64_t));
    DESO_CHECK(k != NULL, DESO_ENOMEM, "partition: out of memory");
    memcpy(k->start, start, ((size_t)P + 1) * sizeof(int64_t));
    k->p = (blas_part){n, P, k->start};
    k->next = ctx->parts;
    ctx->parts = k;
    *out = &k->p;
    return DESO_OK;
}

deso_err deso__spmat_parts(deso_ctx *ctx, const deso__spmat_data *sp,
                           const blas_part **rows, const blas_part **cols)
{
    DESO_TRY(deso__part_intern(ctx, sp->m, sp->start, rows));
    int64_t *xs = deso__malloc(((size_t)ctx->size + 1) * sizeof *xs);
    DESO_CHECK(xs != NULL, DESO_ENOMEM, "partition: out of memory");
    deso__spmat_xstart(ctx, sp, xs);
    deso_err err = deso__part_intern(ctx, sp->n, xs, cols);
    free(xs);
    return err;
}

void deso__parts_free(deso_ctx *ctx)
{
    while (ctx->parts != NULL) {
        deso__part *k = ctx->parts;
        ctx->parts = k->next;
        free(k);
    }
}
