/* sparse_problem.h: the sparse CG problems and preconditioners shared by
 * deso-cg's sparse path (examples/cg.c, through cg_sparse.h) and its
 * sequential twin (examples/cg_csr.c).  Header-only, no MPI, no BLAS, so
 * that both programs run the very same arithmetic on a block of rows.
 *
 *   lap2d:G       the 5-point Laplacian on a G x G grid, n = G^2, natural
 *                 (row-major grid) order; diagonal 4, neighbours -1;
 *   lap3d:G       the 7-point Laplacian on a G x G x G grid, n = G^3;
 *                 diagonal 6;
 *   lap2d-perm:G  lap2d:G under a fixed pseudo-random symmetric
 *                 permutation B = Q A Q^T: row i of B is row perm(i) of A.
 * These are deso_spmat_from_gen's matrices entry for entry (the same
 * keyed permutation: a 4-round Feistel network on 2h-bit words with
 * 4^h >= n, walked back into [0, n)), each row made on its own, so every
 * rank makes only its rows.  All are symmetric positive definite
 * (Dirichlet boundaries).
 *
 * Block Jacobi with one symmetric Gauss-Seidel sweep per block
 * (sp_sgs_block): the rows [first, first + nrows) of a block, and only
 * their columns inside the block, give M = (D + L) D^-1 (D + U); z =
 * M^-1 r is a forward sweep (D + L) t = r, then a backward one (D + U) z
 * = D t.  The blocks are a CG's rows per rank: deso's balanced blocks
 * (sp_block_range: the first n % P blocks one row longer), so the twin
 * with --blocks P computes deso-cg's preconditioner at P ranks.
 *
 * The twin's own Matrix Market reader (sp_read_mtx) takes what
 * deso_spmat_from_mtx takes for CG (coordinate real, integer or pattern;
 * general or symmetric, symmetric files expanded; duplicates summed; one
 * reason line on anything else).                                        */
#ifndef DESO_EXAMPLES_SPARSE_PROBLEM_H
#define DESO_EXAMPLES_SPARSE_PROBLEM_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- generated Laplacians ----------------------------------------------- */

#define SP_MAX_ROW 7                  /* entries in one generated row       */

enum { SP_LAP2D, SP_LAP3D, SP_LAP2D_PERM };

struct sp_gen {
    int kind;
    int64_t g, n;
    int half_bits;                    /* the permutation's half word        */
};

/* "lap2d:64" and friends; returns 0, or -1 with a reason in err.         */
static inline int sp_gen_parse(const char *spec, struct sp_gen *g, char *err,
                               size_t errlen)
{
    const char *colon = strchr(spec, ':');
    size_t len = colon != NULL ? (size_t)(colon - spec) : 0;
    if (len == 5 && strncmp(spec, "lap2d", 5) == 0) g->kind = SP_LAP2D;
    else if (len == 5 && strncmp(spec, "lap3d", 5) == 0) g->kind = SP_LAP3D;
    else if (len == 10 && strncmp(spec, "lap2d-perm", 10) == 0)
        g->kind = SP_LAP2D_PERM;
    else {
        snprintf(err, errlen, "--gen must be lap2d:G, lap3d:G or "
                 "lap2d-perm:G, got '%s'", spec);
        return -1;
    }
    char *end;
    errno = 0;
    long long v = strtoll(colon + 1, &end, 10);
    int dims = g->kind == SP_LAP3D ? 3 : 2;
    int64_t n = 1;
    /* deso's bounds: G <= 2^20 and n < 2^40                                */
    int ok = errno == 0 && end != colon + 1 && *end == '\0' && v >= 1 &&
             v <= (1LL << 20);
    for (int d = 0; ok && d < dims; d++) {
        ok = n <= ((INT64_C(1) << 40) - 1) / v;
        n *= v;
    }
    if (!ok) {
        snprintf(err, errlen, "--gen: the grid size in '%s' must be an "
                 "integer >= 1 with G^%d < 2^40", spec, dims);
        return -1;
    }
    g->g = v;
    g->n = n;
    g->half_bits = 1;
    while (((int64_t)1 << (2 * g->half_bits)) < g->n) g->half_bits++;
    return 0;
}

static inline uint64_t sp_mix(uint64_t x)       /* splitmix64's finaliser */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* One direction of the keyed bijection of [0, n) (identity but for
 * lap2d-perm): Feistel rounds on 2h-bit words, cycle-walked into [0, n). */
static inline int64_t sp_perm_walk(const struct sp_gen *g, int64_t i,
                                   int inverse)
{
    if (g->kind != SP_LAP2D_PERM) return i;
    const uint64_t seed = 0x9e3779b97f4a7c15ull;
    int h = g->half_bits;
    uint64_t mask = ((uint64_t)1 << h) - 1, x = (uint64_t)i;
    do {
        uint64_t l = x >> h, r = x & mask;
        for (int k = 0; k < 4; k++) {
            int round = inverse ? 3 - k : k;
            uint64_t key = seed + (uint64_t)round * 0x632be59bd9b4e019ull;
            if (!inverse) {
                uint64_t t = r;
                r = l ^ (sp_mix(r ^ key) & mask);
                l = t;
            } else {
                uint64_t t = l;
                l = r ^ (sp_mix(l ^ key) & mask);
                r = t;
            }
        }
        x = (l << h) | r;
    } while (x >= (uint64_t)g->n);
    return (int64_t)x;
}

/* Row i's entries, columns ascending, into cols[] and vals[] (room for
 * SP_MAX_ROW each); returns their count.                                 */
static inline int sp_gen_row(const struct sp_gen *g, int64_t i, int64_t *cols,
                             double *vals)
{
    int dims = g->kind == SP_LAP3D ? 3 : 2, k = 0;
    int64_t p = sp_perm_walk(g, i, 0), stride = 1;
    cols[k] = p;
    vals[k++] = 2.0 * dims;
    for (int d = 0; d < dims; d++, stride *= g->g) {
        int64_t c = (p / stride) % g->g;
        if (c > 0) { cols[k] = p - stride; vals[k++] = -1.0; }
        if (c < g->g - 1) { cols[k] = p + stride; vals[k++] = -1.0; }
    }
    for (int e = 0; e < k; e++) cols[e] = sp_perm_walk(g, cols[e], 1);
    for (int e = 1; e < k; e++)                /* at most 7: insertion sort */
        for (int s = e; s > 0 && cols[s - 1] > cols[s]; s--) {
            int64_t tc = cols[s]; cols[s] = cols[s - 1]; cols[s - 1] = tc;
            double tv = vals[s]; vals[s] = vals[s - 1]; vals[s - 1] = tv;
        }
    return k;
}

/* ---- CSR rows ------------------------------------------------------------ */

/* Rows [first, first + nrows) of an n x n matrix: rowptr[0] = 0, global
 * columns ascending within a row.                                        */
struct sp_rows {
    int64_t n, first, nrows;
    int64_t *rowptr, *col;
    double *val;
};

static inline void sp_rows_free(struct sp_rows *a)
{
    free(a->rowptr);
    free(a->col);
    free(a->val);
    a->rowptr = a->col = NULL;
    a->val = NULL;
}

/* Rows [lo, hi) of a generated matrix; -1 when out of memory.           */
static inline int sp_gen_rows(const struct sp_gen *g, int64_t lo, int64_t hi,
                              struct sp_rows *a)
{
    size_t cap = (size_t)(hi - lo) * SP_MAX_ROW + 1;
    a->n = g->n;
    a->first = lo;
    a->nrows = hi - lo;
    a->rowptr = malloc((size_t)(hi - lo + 1) * sizeof *a->rowptr);
    a->col = malloc(cap * sizeof *a->col);
    a->val = malloc(cap * sizeof *a->val);
    if (a->rowptr == NULL || a->col == NULL || a->val == NULL) {
        sp_rows_free(a);
        return -1;
    }
    a->rowptr[0] = 0;
    for (int64_t i = lo; i < hi; i++) {
        int64_t at = a->rowptr[i - lo];
        a->rowptr[i - lo + 1] = at + sp_gen_row(g, i, a->col + at, a->val + at);
    }
    return 0;
}

/* Block q of n rows in P blocks: deso's balanced blocks, the first n % P
 * one row longer.                                                        */
static inline void sp_block_range(int64_t n, int64_t P, int64_t q, int64_t *lo,
                                  int64_t *hi)
{
    int64_t base = n / P, extra = n % P;
    *lo = q * base + (q < extra ? q : extra);
    *hi = *lo + base + (q < extra ? 1 : 0);
}

/* y <- A x on the rows of a (x global, y local).                          */
static inline void sp_rows_mv(const struct sp_rows *a, const double *x,
                              double *y)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = 0.0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            s += a->val[k] * x[a->col[k]];
        y[i] = s;
    }
}

/* The diagonal of the rows (0 where a row has none).                      */
static inline void sp_rows_diag(const struct sp_rows *a, double *d)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        d[i] = 0.0;
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            if (a->col[k] == a->first + i) d[i] = a->val[k];
    }
}

/* z <- M^-1 r for one block of rows, rows [lo, hi) of a (local indices
 * lo - a->first on): one symmetric Gauss-Seidel sweep, forward then
 * backward, with the block's own columns only (above).  r and z hold the
 * block's entries (z may not be r).  A zero diagonal divides by zero, as
 * the dense SSOR's triangular solves do.                                 */
static inline void sp_sgs_block(const struct sp_rows *a, int64_t lo,
                                int64_t hi, const double *r, double *z)
{
    for (int64_t i = lo; i < hi; i++) {             /* (D + L) t = r      */
        const int64_t *rp = a->rowptr + (i - a->first);
        double s = r[i - lo], d = 0.0;
        for (int64_t k = rp[0]; k < rp[1]; k++) {
            int64_t j = a->col[k];
            if (j >= lo && j < i) s -= a->val[k] * z[j - lo];
            else if (j == i) d = a->val[k];
        }
        z[i - lo] = s / d;
    }
    for (int64_t i = hi - 1; i >= lo; i--) {        /* (D + U) z = D t    */
        const int64_t *rp = a->rowptr + (i - a->first);
        double s = 0.0, d = 0.0;
        for (int64_t k = rp[0]; k < rp[1]; k++) {
            int64_t j = a->col[k];
            if (j > i && j < hi) s += a->val[k] * z[j - lo];
            else if (j == i) d = a->val[k];
        }
        z[i - lo] -= s / d;
    }
}

/* ---- the twin's Matrix Market reader --------------------------------------- */

struct sp_entry {
    int64_t i, j;
    double v;
};

static inline int sp_entry_cmp(const void *pa, const void *pb)
{
    const struct sp_entry *a = pa, *b = pb;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    if (a->j != b->j) return a->j < b->j ? -1 : 1;
    return 0;
}

/* Reads a square coordinate file into all its rows; 0, or -1 with one
 * reason in err.                                                          */
static inline int sp_read_mtx(const char *path, struct sp_rows *a, char *err,
                              size_t errlen)
{
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char line[1024], obj[64], fmt[64], field[64], sym[64];
    int ok = fgets(line, sizeof line, f) != NULL &&
             sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt,
                    field, sym) == 4 &&
             strcasecmp(obj, "matrix") == 0 &&
             strcasecmp(fmt, "coordinate") == 0;
    int pattern = ok && strcasecmp(field, "pattern") == 0;
    int symmetric = ok && strcasecmp(sym, "symmetric") == 0;
    ok = ok && (pattern || strcasecmp(field, "real") == 0 ||
                strcasecmp(field, "integer") == 0) &&
         (symmetric || strcasecmp(sym, "general") == 0);
    long long m = 0, n = 0, nz = 0;
    while (ok && fgets(line, sizeof line, f) != NULL && line[0] == '%') {}
    /* at most one entry per position: nothing sized by a bigger header  */
    ok = ok && sscanf(line, "%lld %lld %lld", &m, &n, &nz) == 3 && m == n &&
         m >= 1 && m <= (1LL << 31) && nz >= 0 && nz <= (1LL << 40) &&
         (double)nz <= (double)m * (double)n;
    struct sp_entry *e = ok ? malloc(((size_t)nz * 2 + 1) * sizeof *e) : NULL;
    int64_t ne = 0;
    for (long long k = 0; e != NULL && k < nz; k++) {
        long long i, j;
        double v = 1.0;
        int want = pattern ? 2 : 3;
        if (fgets(line, sizeof line, f) == NULL ||
            sscanf(line, "%lld %lld %lf", &i, &j, &v) < want || i < 1 ||
            i > m || j < 1 || j > n) {
            free(e);
            e = NULL;
            break;
        }
        e[ne++] = (struct sp_entry){i - 1, j - 1, v};
        if (symmetric && i != j) e[ne++] = (struct sp_entry){j - 1, i - 1, v};
    }
    fclose(f);
    if (e == NULL) {
        snprintf(err, errlen, "%s: not a square real coordinate Matrix "
                 "Market file (or out of memory)", path);
        return -1;
    }
    qsort(e, (size_t)ne, sizeof *e, sp_entry_cmp);
    a->n = n;
    a->nrows = n;
    a->rowptr = calloc((size_t)n + 1, sizeof *a->rowptr);
    a->col = malloc(((size_t)ne + 1) * sizeof *a->col);
    a->val = malloc(((size_t)ne + 1) * sizeof *a->val);
    if (a->rowptr == NULL || a->col == NULL || a->val == NULL) {
        free(e);
        sp_rows_free(a);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int64_t out = 0;                      /* duplicates summed, in order   */
    for (int64_t k = 0; k < ne; k++) {
        if (k > 0 && sp_entry_cmp(&e[k - 1], &e[k]) == 0) {
            a->val[out - 1] += e[k].v;
            continue;
        }
        a->col[out] = e[k].j;
        a->val[out++] = e[k].v;
        a->rowptr[e[k].i + 1] = out;
    }
    for (int64_t i = 0; i < n; i++)       /* empty rows                    */
        if (a->rowptr[i + 1] < a->rowptr[i]) a->rowptr[i + 1] = a->rowptr[i];
    free(e);
    return 0;
}

#endif /* DESO_EXAMPLES_SPARSE_PROBLEM_H */
