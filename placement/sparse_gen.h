/* Internal: generated sparse test matrices, one row at a time, so that each
 * rank makes exactly the rows it holds and nobody builds the whole matrix.
 *   lap2d:G       the 5-point Laplacian on a G x G grid (n = G^2), rows in
 *                 natural (row-major grid) order;
 *   lap3d:G       the 7-point Laplacian on a G x G x G grid (n = G^3);
 *   lap2d-perm:G  lap2d:G under a fixed pseudo-random symmetric permutation
 *                 B = Q A Q^T, the ordering under which contiguous row
 *                 blocks are poor.  The permutation is a keyed bijection
 *                 computed per index (no table of n entries), the same on
 *                 every rank and every run.
 * All are symmetric positive definite with Dirichlet boundaries (diagonal
 * 4 or 6, off-diagonals -1).                                               */
#ifndef DESO_PLACEMENT_SPARSE_GEN_H
#define DESO_PLACEMENT_SPARSE_GEN_H

#include <stdint.h>

#include "placement/csr.h"

#define PL_GEN_MAX_ROW 7           /* entries in one row, at most          */
#define PL_GEN_MAX_G ((int64_t)1 << 20)

typedef enum pl_gen_kind { PL_GEN_LAP2D, PL_GEN_LAP3D, PL_GEN_LAP2D_PERM } pl_gen_kind;

typedef struct pl_gen {
    pl_gen_kind kind;
    int64_t g;              /* grid points per dimension                    */
    int64_t n;              /* rows = columns                               */
    int half_bits;          /* the permutation's Feistel half width         */
} pl_gen;

/* "lap2d:64" and friends.  Errors: DESO_EINVAL for an unknown name or a
 * malformed size, DESO_ESIZE for G < 1, G > PL_GEN_MAX_G, or n >= 2^40.  */
deso_err pl_gen_parse(const char *spec, pl_gen *g);

/* Row i's entries, columns ascending: returns their count and fills
 * cols[] and vals[] (room for PL_GEN_MAX_ROW each).  0 <= i < g->n.     */
int pl_gen_row(const pl_gen *g, int64_t i, int64_t *cols, double *vals);

/* Rows [lo, hi) as a CSR (row0 = lo).  Errors: DESO_ESIZE for a bad
 * range, DESO_ENOMEM.                                                      */
deso_err pl_gen_rows(const pl_gen *g, int64_t lo, int64_t hi, pl_csr *out);

/* The permutation of lap2d-perm and its inverse (identity otherwise):
 * row i of B is row pl_gen_perm(g, i) of A.                               */
int64_t pl_gen_perm(const pl_gen *g, int64_t i);
int64_t pl_gen_perm_inv(const pl_gen *g, int64_t i);

#endif
