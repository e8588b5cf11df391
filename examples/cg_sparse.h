/* cg_sparse.h: deso-cg's sparse matrices (examples/cg.c): a generated
 * Laplacian or a Matrix Market coordinate file as a deso_spmat (each rank
 * makes or reads only its rows), a copy of the rank's own rows for the
 * preconditioners, and the two preconditioners' user operators on them.
 *
 * Both operators are made with deso_op_create_spmat: their x and y are
 * laid out as the matrix's rows, so each rank's callback sees exactly the
 * entries of its own rows (deso_op_create's DESO_OP_ANY would let the
 * optimiser hand it any piece, whose rows the rank does not hold, and
 * DESO_OP_ROWS names a dense matrix's rows).  The callbacks take the rows
 * from the part they are given (its first row and length), never from
 * the block arithmetic, so another row ownership of the matrix changes
 * nothing here.
 *   jacobi   d = diag(A) by the diagonal operator (once), D^-1 by
 *            deso_dvrecip, then z = D^-1 r by deso_dvmul each iteration:
 *            deso's own element-wise calls on whatever layout the
 *            optimiser gives the vectors;
 *   bjacobi  block Jacobi: z = M^-1 r with M the symmetric Gauss-Seidel
 *            splitting of each rank's diagonal block of rows (one forward
 *            and one backward sweep, sparse_problem.h's sp_sgs_block).
 *            No deso call expresses a sparse triangular sweep, and the
 *            sweep needs no other rank's entries, so it is the user's
 *            local code, where PETSc's PCBJACOBI with ILU(0)/SOR is.    */
#ifndef DESO_EXAMPLES_CG_SPARSE_H
#define DESO_EXAMPLES_CG_SPARSE_H

#include <stdio.h>
#include <stdlib.h>

#include "deso.h"

#include "sparse_problem.h"

struct cg_sparse {
    deso_spmat *A;
    int64_t n, nnz;
    struct sp_rows rows;      /* this rank's rows, a copy                 */
};

/* The matrix of generator spec `gen` or, when gen is NULL, of the
 * coordinate file `path`, and, when `rows` (a preconditioner reads
 * them), the rank's copy of its rows: without one, the rank holds the
 * matrix once, in deso.  Errors as
 * deso_spmat_from_gen and _from_mtx; DESO_ESIZE for a matrix that is not
 * square and non-empty, DESO_ENOMEM (not agreed: the caller's error
 * handler ends the run) when the copy does not fit.                      */
static inline deso_err cg_sparse_load(deso_ctx *ctx, const char *gen,
                                      const char *path, int rows,
                                      struct cg_sparse *s)
{
    int64_t m = 0, row0 = 0, nrows = 0, nz = 0;
    deso_err e = gen != NULL ? deso_spmat_from_gen(ctx, gen, &s->A)
                             : deso_spmat_from_mtx(ctx, path, &s->A);
    if (e == DESO_OK) e = deso_spmat_shape(s->A, &m, &s->n, &s->nnz);
    if (e == DESO_OK && (m != s->n || m < 1)) e = DESO_ESIZE;
    if (e == DESO_OK) e = deso_spmat_local(s->A, &row0, &nrows, &nz);
    struct sp_rows *r = &s->rows;
    *r = (struct sp_rows){.n = s->n, .first = row0, .nrows = nrows};
    if (e != DESO_OK || !rows) return e;
    r->rowptr = malloc((size_t)(nrows + 1) * sizeof *r->rowptr);
    r->col = malloc((size_t)(nz + 1) * sizeof *r->col);
    r->val = malloc((size_t)(nz + 1) * sizeof *r->val);
    if (r->rowptr == NULL || r->col == NULL || r->val == NULL) {
        sp_rows_free(r);
        return DESO_ENOMEM;
    }
    return deso_spmat_local_rows(s->A, r->rowptr, r->col, r->val);
}

/* The rank's piece of a vector laid out as the matrix's rows must be the
 * rows the rank holds.                                                   */
static inline int cg_sparse_rows_match(const struct sp_rows *r,
                                       const deso_op_part *p)
{
    return p->nlocal == r->nrows && (p->nlocal == 0 || p->first == r->first);
}

/* y <- diag(A) on the rank's rows (x is not read).                       */
static inline int cg_sparse_diag_fn(void *user, const double *x,
                                    const deso_op_part *xp, double *y,
                                    const deso_op_part *yp)
{
    const struct sp_rows *r = user;
    (void)x;
    (void)xp;
    if (!cg_sparse_rows_match(r, yp)) return 1;
    sp_rows_diag(r, y);
    return 0;
}

/* y <- M^-1 x, one symmetric Gauss-Seidel sweep on the rank's block.      */
static inline int cg_sparse_bjacobi_fn(void *user, const double *x,
                                       const deso_op_part *xp, double *y,
                                       const deso_op_part *yp)
{
    const struct sp_rows *r = user;
    if (!cg_sparse_rows_match(r, yp) || !cg_sparse_rows_match(r, xp))
        return 1;
    sp_sgs_block(r, r->first, r->first + r->nrows, x, y);
    return 0;
}

#endif /* DESO_EXAMPLES_CG_SPARSE_H */
