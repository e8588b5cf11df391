/* Shared helpers of the sparse tests (header only): a global matrix in
 * CSR arrays, as the sequential references hold it, and a seeded random
 * one with empty rows.                                                   */
#ifndef DESO_TESTS_CSR_TEST_H
#define DESO_TESTS_CSR_TEST_H

#include <stdint.h>
#include <stdlib.h>

/* A global matrix in CSR, columns sorted and unique within a row.       */
typedef struct glob {
    int64_t m, n, *rowptr, *col;
    double *val;
} glob;

static inline void glob_free(glob *g)
{
    free(g->rowptr);
    free(g->col);
    free(g->val);
}

/* A seeded m x n matrix with up to `per` entries a row (some rows
 * empty), unsymmetric.                                                   */
static inline glob random_matrix(int64_t m, int64_t n, int per, unsigned seed)
{
    glob g = {m, n, calloc((size_t)m + 1, sizeof(int64_t)),
              calloc((size_t)(m * per + 1), sizeof(int64_t)),
              calloc((size_t)(m * per + 1), sizeof(double))};
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 11;
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t j = 0;
        for (int e = 0; e < per && n > 0; e++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            j += (int64_t)((s >> 33) % (uint64_t)(n / 2 + 2));
            if (j >= n) break;
            g.col[k] = j++;
            g.val[k++] = (double)((s >> 20) % 17) / 4.0 - 2.0;
        }
        g.rowptr[i + 1] = k;
    }
    return g;
}

#endif /* DESO_TESTS_CSR_TEST_H */
