/* Generated Laplacians (see sparse_gen.h).                                */
#include "placement/sparse_gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

#define MAX_N ((int64_t)1 << 40)
#define FEISTEL_ROUNDS 4
/* A fixed key: lap2d-perm:G must be the same matrix in every run, on every
 * rank and in every program that names it (benchmarks compare against it). */
#define PERM_SEED 0x9e3779b97f4a7c15ull

static deso_err parse_size(const char *s, int64_t *g)
{
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    DESO_CHECK(end != s && *end == '\0' && errno == 0, DESO_EINVAL,
               "generator: '%s' is not a grid size", s);
    DESO_CHECK(v >= 1 && v <= PL_GEN_MAX_G, DESO_ESIZE, "generator: grid size "
               "%lld outside [1, %lld]", v, (long long)PL_GEN_MAX_G);
    *g = v;
    return DESO_OK;
}

/* Smallest h with 4^h >= n: the permutation runs on 2h-bit words, at most
 * 4n of them, and walks the cycle back into [0, n).                       */
static int half_bits_for(int64_t n)
{
    int h = 1;
    while (((int64_t)1 << (2 * h)) < n) h++;
    return h;
}

deso_err pl_gen_parse(const char *spec, pl_gen *g)
{
    DESO_CHECK(spec != NULL && g != NULL, DESO_ENULL, "pl_gen_parse: NULL");
    memset(g, 0, sizeof *g);
    const char *colon = strchr(spec, ':');
    DESO_CHECK(colon != NULL, DESO_EINVAL, "generator '%s': expected "
               "lap2d:G, lap3d:G or lap2d-perm:G", spec);
    size_t len = (size_t)(colon - spec);
    if (len == 5 && strncmp(spec, "lap2d", len) == 0) g->kind = PL_GEN_LAP2D;
    else if (len == 5 && strncmp(spec, "lap3d", len) == 0) g->kind = PL_GEN_LAP3D;
    else if (len == 10 && strncmp(spec, "lap2d-perm", len) == 0) g->kind = PL_GEN_LAP2D_PERM;
    else return deso__fail(DESO_EINVAL, "generator '%s': unknown name", spec);
    DESO_TRY(parse_size(colon + 1, &g->g));
    int dims = g->kind == PL_GEN_LAP3D ? 3 : 2;
    int64_t n = 1;
    for (int d = 0; d < dims; d++) {
        DESO_CHECK(n <= (MAX_N - 1) / g->g, DESO_ESIZE, "generator '%s': %d-D grid "
                   "of %lld points per side is too large", spec, dims,
                   (long long)g->g);
        n *= g->g;
    }
    g->n = n;
    g->half_bits = half_bits_for(n);
    return DESO_OK;
}

/* ---- the keyed permutation ---------------------------------------------- */

static uint64_t mix(uint64_t x)          /* splitmix64's finaliser        */
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t round_fn(uint64_t half, int round, uint64_t mask)
{
    return mix(half ^ (PERM_SEED + (uint64_t)round * 0x632be59bd9b4e019ull)) & mask;
}

/* A balanced Feistel network on 2h-bit words: a bijection whatever the
 * round function, and invertible by running the rounds backwards.        */
static uint64_t feistel(uint64_t x, int h, int inverse)
{
    uint64_t mask = ((uint64_t)1 << h) - 1;
    uint64_t l = x >> h, r = x & mask;
    for (int k = 0; k < FEISTEL_ROUNDS; k++) {
        int round = inverse ? FEISTEL_ROUNDS - 1 - k : k;
        if (!inverse) { uint64_t t = r; r = l ^ round_fn(r, round, mask); l = t; }
        else { uint64_t t = l; l = r ^ round_fn(l, round, mask); r = t; }
    }
    return (l << h) | r;
}

/* Cycle walking: apply the bijection of [0, 4^h) until the value falls in
 * [0, n), which restricts it to a bijection of [0, n).                    */
static int64_t walk(const pl_gen *g, int64_t i, int inverse)
{
    if (g->kind != PL_GEN_LAP2D_PERM) return i;
    uint64_t x = (uint64_t)i;
    do x = feistel(x, g->half_bits, inverse); while (x >= (uint64_t)g->n);
    return (int64_t)x;
}

int64_t pl_gen_perm(const pl_gen *g, int64_t i) { return walk(g, i, 0); }
int64_t pl_gen_perm_inv(const pl_gen *g, int64_t i) { return walk(g, i, 1); }

/* ---- rows ----------------------------------------------------------------- */

/* Grid point i's stencil: the diagonal and each neighbour inside the grid,
 * natural numbering.  Returns the count; columns unsorted.               */
static int stencil(const pl_gen *g, int64_t i, int64_t *cols, double *vals)
{
    int dims = g->kind == PL_GEN_LAP3D ? 3 : 2;
    int k = 0;
    cols[k] = i;
    vals[k++] = 2.0 * dims;
    int64_t stride = 1;
    for (int d = 0; d < dims; d++, stride *= g->g) {
        int64_t coord = (i / stride) % g->g;
        if (coord > 0) { cols[k] = i - stride; vals[k++] = -1.0; }
        if (coord < g->g - 1) { cols[k] = i + stride; vals[k++] = -1.0; }
    }
    return k;
}

int pl_gen_row(const pl_gen *g, int64_t i, int64_t *cols, double *vals)
{
    int k = stencil(g, pl_gen_perm(g, i), cols, vals);
    for (int e = 0; e < k; e++) cols[e] = pl_gen_perm_inv(g, cols[e]);
    for (int e = 1; e < k; e++)            /* at most 7: insertion sort   */
        for (int s = e; s > 0 && cols[s - 1] > cols[s]; s--) {
            int64_t tc = cols[s]; cols[s] = cols[s - 1]; cols[s - 1] = tc;
            double tv = vals[s]; vals[s] = vals[s - 1]; vals[s - 1] = tv;
        }
    return k;
}

deso_err pl_gen_rows(const pl_gen *g, int64_t lo, int64_t hi, pl_csr *out)
{
    DESO_CHECK(g != NULL && out != NULL, DESO_ENULL, "pl_gen_rows: NULL");
    memset(out, 0, sizeof *out);
    DESO_CHECK(0 <= lo && lo <= hi && hi <= g->n, DESO_ESIZE, "generator: "
               "rows [%lld, %lld) outside [0, %lld)", (long long)lo,
               (long long)hi, (long long)g->n);
    int64_t rows = hi - lo;
    size_t cap = (size_t)(rows > 0 ? rows : 1) * PL_GEN_MAX_ROW;
    out->rowptr = deso__malloc(((size_t)rows + 1) * sizeof *out->rowptr);
    out->col = deso__malloc(cap * sizeof *out->col);
    out->val = deso__malloc(cap * sizeof *out->val);
    if (!out->rowptr || !out->col || !out->val) {
        pl_csr_free(out);
        return deso__fail(DESO_ENOMEM, "generator: cannot hold %lld rows",
                          (long long)rows);
    }
    out->nrows = rows;
    out->ncols = g->n;
    out->row0 = lo;
    out->rowptr[0] = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t at = out->rowptr[r];
        out->rowptr[r + 1] = at + pl_gen_row(g, lo + r, out->col + at, out->val + at);
    }
    /* room was made for the widest stencil on every row (lap3d's 7);
     * what lap2d's 5 or a boundary row leave unused would stay resident
     * for the matrix's life                                              */
    size_t nnz = (size_t)out->rowptr[rows];
    out->col = deso__shrink(out->col, nnz * sizeof *out->col);
    out->val = deso__shrink(out->val, nnz * sizeof *out->val);
    return DESO_OK;
}
