/* Partitions of vectors (blas_part) that layouts by partition name: kept
 * by the context until it is freed, since plans, compiled forces, kept
 * views and exchange plans copy layouts and may outlive the sparse matrix
 * a partition came from.  Interned by their ranges, so that two matrices
 * with the same row blocks give one partition and their vectors one
 * layout (and so that a program making matrices in a loop keeps a
 * bounded list).  A sparse product's facts (blas_sparse: its matrix's two
 * partitions and its halo's message table) are kept the same way, since
 * the nodes of graphs and compiled forces name them.                    */
#include "deso/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"

typedef struct deso__part {
    blas_part p;
    int32_t *perm;            /* n each, or NULL: contiguous ranges        */
    int32_t *iperm;
    struct deso__part *next;
    int64_t start[];
} deso__part;

static void part_free(deso__part *k)
{
    free(k->perm);
    free(k->iperm);
    free(k);
}

deso_err deso__part_intern(deso_ctx *ctx, int64_t n, const int64_t *start,
                           const blas_part **out)
{
    int P = ctx->size;
    bool ok = start[0] == 0 && start[P] == n;
    for (int q = 0; ok && q < P; q++) ok = start[q] <= start[q + 1];
    DESO_CHECK(ok, DESO_EINTERNAL,
               "partition: ranges do not tile [0, %lld) in rank order",
               (long long)n);
    blas_part want = {.n = n, .nparts = P, .start = start};
    for (deso__part *k = ctx->parts; k != NULL; k = k->next)
        if (blas_part_equal(&k->p, &want)) {
            *out = &k->p;
            return DESO_OK;
        }
    deso__part *k = deso__calloc(1, sizeof *k + ((size_t)P + 1) * sizeof(int64_t));
    DESO_CHECK(k != NULL, DESO_ENOMEM, "partition: out of memory");
    memcpy(k->start, start, ((size_t)P + 1) * sizeof(int64_t));
    k->p = (blas_part){.n = n, .nparts = P, .start = k->start};
    k->next = ctx->parts;
    ctx->parts = k;
    *out = &k->p;
    return DESO_OK;
}

static uint64_t mix(uint64_t h, uint64_t v);

/* Contiguous blocks in rank order: the renumbering is the identity.     */
static bool identity(const int32_t *perm, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (perm[i] != i) return false;
    return true;
}

/* The renumbering of owner[]: each rank's indices in increasing order,
 * ranks one after another (a stable counting sort).                     */
static deso_err renumber(int64_t n, int P, const int32_t *owner,
                         int64_t *start, deso__part *k)
{
    DESO_CHECK(n <= INT32_MAX, DESO_EINTERNAL, "partition: a renumbering of "
               "%lld indices does not fit 32 bits", (long long)n);
    k->perm = deso__malloc((size_t)(n > 0 ? n : 1) * sizeof *k->perm);
    k->iperm = deso__malloc((size_t)(n > 0 ? n : 1) * sizeof *k->iperm);
    DESO_CHECK(k->perm != NULL && k->iperm != NULL, DESO_ENOMEM,
               "partition: no memory for a renumbering of %lld", (long long)n);
    memset(start, 0, ((size_t)P + 1) * sizeof *start);
    for (int64_t i = 0; i < n; i++) {
        DESO_CHECK(owner[i] >= 0 && owner[i] < P, DESO_EINTERNAL,
                   "partition: index %lld on rank %d of %d", (long long)i,
                   (int)owner[i], P);
        start[owner[i] + 1]++;
    }
    for (int q = 0; q < P; q++) start[q + 1] += start[q];
    int64_t *fill = deso__malloc((size_t)P * sizeof *fill);
    DESO_CHECK(fill != NULL, DESO_ENOMEM, "partition: out of memory");
    memcpy(fill, start, (size_t)P * sizeof *fill);
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = fill[owner[i]]++;
        k->perm[i] = (int32_t)pos;
        k->iperm[pos] = (int32_t)i;
    }
    free(fill);
    return DESO_OK;
}

deso_err deso__part_intern_owners(deso_ctx *ctx, int64_t n,
                                  const int32_t *owner, const blas_part **out)
{
    int P = ctx->size;
    deso__part *k = deso__calloc(1, sizeof *k + ((size_t)P + 1) * sizeof(int64_t));
    DESO_CHECK(k != NULL, DESO_ENOMEM, "partition: out of memory");
    deso_err err = renumber(n, P, owner, k->start, k);
    if (err != DESO_OK || identity(k->perm, n)) {
        /* contiguous blocks: the cheap partition, without a renumbering  */
        if (err == DESO_OK) err = deso__part_intern(ctx, n, k->start, out);
        part_free(k);
        return err;
    }
    uint64_t h = 0x7065726d00000001ull;
    for (int64_t i = 0; i < n; i++) h = mix(h, (uint64_t)k->perm[i]);
    k->p = (blas_part){.n = n, .nparts = P, .start = k->start,
                       .perm = k->perm, .iperm = k->iperm, .hash = h};
    for (deso__part *o = ctx->parts; o != NULL; o = o->next)
        if (blas_part_equal(&o->p, &k->p)) {
            part_free(k);
            *out = &o->p;
            return DESO_OK;
        }
    k->next = ctx->parts;
    ctx->parts = k;
    *out = &k->p;
    return DESO_OK;
}

deso_err deso__spmat_parts(deso_ctx *ctx, const deso__spmat_data *sp,
                           const blas_part **rows, const blas_part **cols)
{
    if (sp->part != NULL) {     /* square, renumbered: x as the rows  */
        *rows = *cols = sp->part;
        return DESO_OK;
    }
    DESO_TRY(deso__part_intern(ctx, sp->m, sp->start, rows));
    int64_t *xs = deso__malloc(((size_t)ctx->size + 1) * sizeof *xs);
    DESO_CHECK(xs != NULL, DESO_ENOMEM, "partition: out of memory");
    deso__spmat_xstart(ctx, sp, xs);
    deso_err err = deso__part_intern(ctx, sp->n, xs, cols);
    free(xs);
    return err;
}

typedef struct deso__sparse {
    blas_sparse s;
    struct deso__sparse *next;
    int64_t tab[];
} deso__sparse;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

static uint64_t part_hash(uint64_t h, const blas_part *p)
{
    h = mix(h, (uint64_t)p->n);
    for (int q = 0; q <= p->nparts; q++) h = mix(h, (uint64_t)p->start[q]);
    return p->perm != NULL ? mix(h, p->hash) : h;
}

deso_err deso__sparse_intern(deso_ctx *ctx, const deso__spmat_data *sp,
                             const double *recv, const blas_sparse **out)
{
    int P = ctx->size;
    size_t PP = (size_t)P * (size_t)P;
    const blas_part *rows, *cols;
    DESO_TRY(deso__spmat_parts(ctx, sp, &rows, &cols));
    deso__sparse *k = deso__malloc(sizeof *k + PP * sizeof(int64_t));
    DESO_CHECK(k != NULL, DESO_ENOMEM, "sparse product: out of memory");
    uint64_t h = part_hash(part_hash(0x7370617273650001ull, rows), cols);
    for (int s = 0; s < P; s++)         /* recv[r P + s]: r gets from s   */
        for (int r = 0; r < P; r++) {
            k->tab[(size_t)s * P + r] = (int64_t)recv[(size_t)r * P + s];
            h = mix(h, (uint64_t)k->tab[(size_t)s * P + r]);
        }
    k->s = (blas_sparse){rows, cols, k->tab, h};
    for (deso__sparse *o = ctx->sparse; o != NULL; o = o->next)
        if (o->s.rows == rows && o->s.cols == cols &&
            memcmp(o->tab, k->tab, PP * sizeof(int64_t)) == 0) {
            free(k);
            *out = &o->s;
            return DESO_OK;
        }
    k->next = ctx->sparse;
    ctx->sparse = k;
    *out = &k->s;
    return DESO_OK;
}

void deso__parts_free(deso_ctx *ctx)
{
    while (ctx->sparse != NULL) {
        deso__sparse *k = ctx->sparse;
        ctx->sparse = k->next;
        free(k);
    }
    while (ctx->parts != NULL) {
        deso__part *k = ctx->parts;
        ctx->parts = k->next;
        part_free(k);
    }
}
