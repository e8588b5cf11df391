/* placement/: the placement algebra of paper 003 (with the errata of
 * doc/DESIGN.md, "Reference: paper 003 (placements)") and process-grid
 * geometry.  Pure computation, no MPI: every function here can be tested
 * in one process for any P.
 *
 * Vocabulary
 *   d         augmented dimensionality, 1 <= d <= PL_MAXD.  New dimensions go
 *             first: an n-vector on a 2-D grid is (1, n), a scalar (1, 1).
 *   template  the virtual processor space: index v = A i + t for array index i.
 *   grid      the physical process grid, one extent per template dimension
 *             (rank numbering is row-major: the last dimension varies fastest).
 *
 * A placement (pl_placement) is replication + alignment + folding + grid:
 *   1. replication: which template dimensions hold a copy at every grid
 *      coordinate (the diagonal copy function (I, diag(s)), s_k = 0 where
 *      replicated);
 *   2. alignment: v = A i + t, A unimodular (integer inverse);
 *   3. folding per template dimension k onto grid dimension k:
 *        PL_FOLD_BLOCK      cyclic(ceil(T_k / g_k)),
 *        PL_FOLD_CYCLIC     cyclic(b),
 *        PL_FOLD_COLLAPSED  not distributed: every coordinate along grid
 *                           dimension k keeps the whole template dimension.
 * Element i is owned by every rank whose coordinate along each dimension k is
 * either fold_k(v_k) or, where k is replicated or collapsed, anything.       */
#ifndef DESO_PLACEMENT_H
#define DESO_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "placement/deso_errors.h"

#define PL_MAXD 3

/* ---- process grid ------------------------------------------------------ */

typedef struct pl_grid {
    int d;              /* number of grid dimensions, 1..PL_MAXD            */
    int dims[PL_MAXD];  /* extents; their product is the number of ranks    */
} pl_grid;

/* A 2-D grid pr x pc for P ranks.  pr = pc = 0 picks the most square shape
 * (pr <= pc, pr the largest divisor of P not above sqrt(P)); pr = 1 gives a
 * 1-D row.  Exactly one of pr, pc being 0 derives it as P / the other.
 * Errors: DESO_EGRID when pr * pc != P (or the given one does not divide
 * P), DESO_EINVAL for P < 1 or a negative extent.                          */
deso_err pl_grid_2d(int P, int pr, int pc, pl_grid *out);

/* A d-dimensional grid with the given extents (each >= 1).                 */
deso_err pl_grid_make(int d, const int *dims, pl_grid *out);

int pl_grid_size(const pl_grid *g);                      /* product of dims */
/* rank <-> coordinates, row-major.  Errors: DESO_EINVAL out of range.      */
deso_err pl_grid_coords(const pl_grid *g, int rank, int *coords);
deso_err pl_grid_rank(const pl_grid *g, const int *coords, int *rank);

/* ---- copy functions (replication descriptors) -------------------------- */

/* A diagonal copy function (D1, D2) of d x d matrices.  Bit k of d1 (d2) is
 * the k-th diagonal entry of D1 (D2): 1 or 0.                              */
typedef struct pl_copyfn {
    int d;
    unsigned d1, d2;
} pl_copyfn;

/* What an exchange r = (D1, D2) does along one dimension (the truth table
 * of doc/DESIGN.md, "Copy-function algebra and its errata", after
 * cancellation).                                                           */
typedef enum pl_repl_step {
    PL_STEP_NONE = 0,      /* equal states: nothing moves                   */
    PL_STEP_BROADCAST,     /* D1 = 1, D2 = 0: broadcast over that dimension */
    PL_STEP_COLLAPSE       /* D1 = 0, D2 = 1: drop copies, free             */
} pl_repl_step;

pl_copyfn pl_copyfn_identity(int d);                      /* (I, I)         */
/* The placement copy function (I, diag(s)) replicating along the set bits of
 * `replicated` (bit k: replicated along dimension k).                      */
pl_copyfn pl_copyfn_replicated(int d, unsigned replicated);
/* Proposition 1: (D1,D2) o (E1,E2) = (D1 E1, E2 D2), then cancelled (the
 * operands are cancelled first too).  Both must have the same d, 1..PL_MAXD.
 * This is a per-dimension state algebra (doc/DESIGN.md, "Copy-function
 * algebra and its errata"), not composition of relations: it is
 * associative on placement copy functions (I, diag(s)) and on chains of
 * exchanges ((c3 o c2^-1) o (c2 o c1^-1) = c3 o c1^-1), but not in
 * general: with R = (1,0), C = (0,1) on one dimension, (R o R) o C = I
 * while R o (R o C) = R.                                                   */
deso_err pl_copyfn_compose(pl_copyfn a, pl_copyfn b, pl_copyfn *out);
pl_copyfn pl_copyfn_inverse(pl_copyfn a);                 /* (D2, D1)       */
/* Proposition 3: equal diagonal entries (even zeros) become 1 in both.     */
pl_copyfn pl_copyfn_cancel(pl_copyfn a);
bool pl_copyfn_equal(pl_copyfn a, pl_copyfn b);          /* after cancel    */
/* The exchange along an edge: r = c_sink o c_src^-1.                      */
deso_err pl_copyfn_exchange(pl_copyfn src, pl_copyfn sink,
                                  pl_copyfn *out);
/* Per-dimension classification of an exchange; steps[k] for k < d.   */
void pl_copyfn_classify(pl_copyfn r, pl_repl_step *steps);

/* ---- affine alignment -------------------------------------------------- */

typedef struct pl_affine {
    int d;
    int64_t A[PL_MAXD][PL_MAXD];
    int64_t t[PL_MAXD];
} pl_affine;

/* f(i) = A i + t from row-major A (d*d entries) and t (d entries; NULL for
 * zero).  Errors: DESO_ESINGULAR when det A is not +1 or -1 (a singular A,
 * or one whose inverse is not integral), DESO_EINVAL for a bad d.          */
deso_err pl_affine_make(int d, const int64_t *A, const int64_t *t,
                        pl_affine *out);
pl_affine pl_affine_identity(int d);
/* The axis swap of a 2-D (or the reversal of a d-D) index: element j of a
 * row-oriented vector at (0, j) goes to (j, 0).                            */
pl_affine pl_affine_transpose(int d);
/* (f o g)(i) = f(g(i)).  Errors: DESO_EINVAL when d differ, DESO_EOVERFLOW
 * when an entry does not fit in int64 (also for inverse and realign).      */
deso_err pl_affine_compose(const pl_affine *f, const pl_affine *g,
                           pl_affine *out);
deso_err pl_affine_inverse(const pl_affine *f, pl_affine *out);
/* The realignment between alignments f (source) and g (sink): f^-1 o g.    */
deso_err pl_affine_realign(const pl_affine *f, const pl_affine *g,
                           pl_affine *out);
/* out = A i + t (out may alias i); wraps modulo 2^64 instead of overflowing. */
void pl_affine_apply(const pl_affine *f, const int64_t *i, int64_t *out);
bool pl_affine_equal(const pl_affine *f, const pl_affine *g);
bool pl_affine_is_identity(const pl_affine *f);

/* ---- folding ------------------------------------------------------------ */

typedef enum pl_fold_kind {
    PL_FOLD_BLOCK = 0,
    PL_FOLD_CYCLIC,
    PL_FOLD_COLLAPSED
} pl_fold_kind;

typedef struct pl_fold {
    pl_fold_kind kind;
    int64_t b;          /* block size for PL_FOLD_CYCLIC (>= 1), else 0     */
} pl_fold;

/* Checks a folding of extent n over p coordinates.  Errors: DESO_ESIZE for
 * n < 0, DESO_EINVAL for p < 1, an unknown kind or cyclic b < 1.           */
deso_err pl_fold_check(pl_fold f, int64_t n, int p);
/* The block size the folding uses: ceil(n/p) for block (at least 1), b for
 * cyclic, n for collapsed; 0 when pl_fold_check rejects the arguments.    */
int64_t pl_fold_block(pl_fold f, int64_t n, int p);
/* Global index i (0 <= i < n) -> (coordinate, local index).  For collapsed
 * the coordinate is 0 and the local index is i (every coordinate has it).  */
deso_err pl_fold_locate(pl_fold f, int64_t n, int p, int64_t i,
                        int *coord, int64_t *local);
/* (coordinate, local index) -> global index; DESO_EINVAL when out of range. */
deso_err pl_fold_global(pl_fold f, int64_t n, int p, int coord,
                        int64_t local, int64_t *i);
/* Local length at coordinate c: ScaLAPACK's numroc (source process 0); n
 * for collapsed; 0 for invalid arguments or c outside 0..p-1.             */
int64_t pl_fold_local_len(pl_fold f, int64_t n, int p, int coord);
/* numroc itself: elements of n in blocks of nb owned by coordinate iproc of
 * nprocs when block 0 is on coordinate isrc (0 for n < 0, nb < 1 or
 * nprocs < 1).                                                             */
int64_t pl_numroc(int64_t n, int64_t nb, int iproc, int isrc, int nprocs);

/* ---- placement ---------------------------------------------------------- */

typedef struct pl_placement {
    int d;
    int64_t extent[PL_MAXD];   /* augmented array extents N_a               */
    int64_t tmpl[PL_MAXD];     /* template extents T_k (v_k in [0, T_k))     */
    unsigned replicated;       /* bit k: replicated along template dim k     */
    pl_affine align;
    pl_fold fold[PL_MAXD];
    pl_grid grid;              /* grid.d == d                                */
} pl_placement;

/* Builds and validates a placement.  extent and tmpl have d entries; tmpl
 * NULL means "the extents mapped through the alignment": the bounding box
 * of the image, max over corners of A i + t, plus 1 (for a permutation, the
 * permuted extents; an empty array gets 0 along the template dimensions
 * that read an empty array dimension).  align NULL means the identity.
 * Every corner of the index box must land inside the template (so no
 * coordinate may be negative).  Errors: DESO_ESIZE (negative extent, a
 * corner outside the template), DESO_EINVAL (bad folding, d mismatch,
 * replication bits at or beyond d), DESO_ESINGULAR (alignment),
 * DESO_EGRID (grid of other dimensionality), DESO_EOVERFLOW.             */
deso_err pl_placement_make(int d, const int64_t *extent, const int64_t *tmpl,
                           unsigned replicated, const pl_affine *align,
                           const pl_fold *fold, const pl_grid *grid,
                           pl_placement *out);

/* The copy function (I, diag(s)) of the placement's replication.          */
pl_copyfn pl_placement_copyfn(const pl_placement *pl);

/* Number of elements (product of extents).                                 */
int64_t pl_placement_volume(const pl_placement *pl);

/* Owners of array index i: writes at most `cap` ranks in increasing order
 * into ranks[] and their count into *count (the full count even when it
 * exceeds cap).  Errors: DESO_EINVAL when i is outside the extents.        */
deso_err pl_placement_owners(const pl_placement *pl, const int64_t *i,
                             int *ranks, int cap, int *count);

/* Whether `rank` owns array index i, and if so its local multi-index
 * (per-dimension local positions, local[k] along template dim k: the
 * folding's local index of v_k, or v_k itself along a replicated or
 * collapsed dimension, where every coordinate holds all of it).  local may
 * be NULL.  Errors: DESO_EINVAL for i outside the extents or a bad rank.  */
deso_err pl_placement_locate(const pl_placement *pl, const int64_t *i,
                             int rank, bool *owns, int64_t *local);

/* The inverse: rank's local multi-index -> array index i.  DESO_EINVAL when
 * the local index holds no element of the array.                          */
deso_err pl_placement_global(const pl_placement *pl, int rank,
                             const int64_t *local, int64_t *i);

/* Local extents at `rank` (per template dimension: numroc, or T_k along a
 * replicated or collapsed dimension) and their product.  With a skewed
 * template some local positions hold no element (see pl_placement_global). */
deso_err pl_placement_local_shape(const pl_placement *pl, int rank,
                                  int64_t *local_extent, int64_t *local_count);

/* Copies of each element: the product of grid extents along replicated or
 * collapsed dimensions.                                                     */
int64_t pl_placement_copies(const pl_placement *pl);

/* The default placements of paper 003's unoptimised layout on a 2-D grid
 * (nb = 0 means block folding, nb > 0 cyclic(nb), matching the matrix):
 *   vector n: (1, n), folded over grid columns, replicated over rows;
 *   vector n "column oriented": transposed, folded over rows, replicated
 *     over columns (a gemv result);
 *   matrix m x n: cyclic(mb) x cyclic(nb) (0: block), not replicated;
 *   scalar: (1, 1), replicated everywhere.                                 */
deso_err pl_placement_vector_rows(int64_t n, int64_t nb, const pl_grid *g,
                                  pl_placement *out);
deso_err pl_placement_vector_cols(int64_t n, int64_t nb, const pl_grid *g,
                                  pl_placement *out);
deso_err pl_placement_matrix(int64_t m, int64_t n, int64_t mb, int64_t nb,
                             const pl_grid *g, pl_placement *out);
deso_err pl_placement_scalar(const pl_grid *g, pl_placement *out);

#endif
