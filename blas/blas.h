/* blas/: the operation table.  One row per operation kind: its name, its
 * operand roles, its placement-constraint function (operand placements from
 * the result's placement), its reduction, and its local kernels, which are
 * pure functions on the local pieces of the operands (OpenBLAS underneath).
 *
 * Pure computation: no MPI, nothing from deso/ or optimizer/.  The executor
 * in deso/ moves data so that every operand sits in the placement the row's
 * constraint function asks for, calls `kernel`, performs the row's reduction
 * (if any) over the grid dimension `red_dim` names, then calls `finish`.
 *
 * Layouts.  A pl_placement is the optimiser's currency; the executor indexes
 * local arrays through a blas_layout, the normalised block-cyclic reading of
 * a placement on a 2-D grid (blas_layout_of / blas_placement_of convert).
 *   vector (length n): folded with cyclic(b) over grid dimension `dist`
 *     (0: over grid rows, "column oriented"; 1: over grid columns, "row
 *     oriented"; -1: not distributed), and along every other grid dimension
 *     k either replicated (bit k of `rep`) or held at coordinate 0 only;
 *   matrix (m x n): rows cyclic(b) over grid rows, columns cyclic(nb) over
 *     grid columns, column-major local array; or whole on every rank
 *     (`rep` has the bit of every grid dimension of extent > 1, b = m,
 *     nb = n: the optimiser's replicated matrix, so that a product runs
 *     redundantly instead of communicating);
 *   scalar: a vector of length 1 with dist = -1;
 *   vector by partition (dist = BLAS_DIST_PART): each element on exactly
 *     one rank, rank q (row-major, q = r pc + c) holding the positions
 *     [start[q], start[q + 1]) of a blas_part in order: contiguous ranges
 *     of indices (a sparse matrix's row blocks, which no block-cyclic
 *     folding over one grid dimension describes), or any ownership through
 *     a renumbering (a graph partition's).
 * Normalised means: a grid dimension of extent 1 is never `dist` and always
 * has its `rep` bit set (a vector's or scalar's; a matrix's never, and a
 * matrix's rep is all or nothing), and a block size is never larger than
 * needed, so two layouts with the same local arrays on every rank compare
 * equal.                                                                   */
#ifndef DESO_BLAS_H
#define DESO_BLAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placement/placement.h"

/* ---- layouts ------------------------------------------------------------ */

typedef enum blas_kind {
    BLAS_VEC = 0,
    BLAS_MAT,
    BLAS_SCA
} blas_kind;

/* An explicit partition of n indices over the nparts = pr pc ranks of a
 * grid: index i has position pos(i) = perm[i] (i itself when perm is
 * NULL), and rank q holds the positions [start[q], start[q + 1]) in order
 * (start[0] = 0, start[nparts] = n, non-decreasing; a rank may hold
 * nothing), so local index l on rank q is index iperm[start[q] + l].
 * Without a renumbering (perm NULL, the contiguous blocks every sparse
 * matrix starts with) nothing is looked up; with one, any ownership is a
 * partition and each rank's order is deso's choice.  Both arrays are
 * 32-bit (a renumbering is made only for n <= INT32_MAX): every rank
 * holds them whole, so they are half a whole-length vector each rather
 * than a whole one.  Immutable; its maker
 * keeps it alive as long as any layout may name it (deso/runtime: until
 * the context is freed).                                                  */
typedef struct blas_part {
    int64_t n;
    int nparts;
    const int64_t *start;   /* nparts + 1                                   */
    const int32_t *perm;    /* n: index -> position, or NULL                */
    const int32_t *iperm;   /* n: position -> index (perm's inverse)        */
    uint64_t hash;          /* of perm's contents (0 without one): keys    */
} blas_part;

/* Index i's position in rank order.                                      */
static inline int64_t blas_part_pos(const blas_part *p, int64_t i)
{
    return p->perm != NULL ? p->perm[i] : i;
}

#define BLAS_DIST_PART 2

typedef struct blas_layout {
    blas_kind kind;
    int64_t m, n;   /* global shape: vector (1, n), scalar (1, 1)          */
    int dist;       /* vector: grid dimension folded over, -1 none,        */
                    /*   BLAS_DIST_PART: by `part` over every rank         */
    int64_t b;      /* vector block size; matrix row block size            */
    int64_t nb;     /* matrix column block size                            */
    unsigned rep;   /* bit k: replicated along grid dimension k            */
    int pr, pc;     /* grid shape                                          */
    const blas_part *part;  /* dist BLAS_DIST_PART only, else NULL         */
} blas_layout;

/* Normalises in place (see above); a partition on one rank is the
 * undistributed vector.                                                    */
void blas_layout_normalise(blas_layout *l);
bool blas_part_equal(const blas_part *a, const blas_part *b);
/* Partitions compare by their ranges, not their address (every other
 * layout's is NULL).  Inline: the executor and the compiled-force match
 * compare layouts for every operand of every node.                       */
static inline bool blas_layout_equal(const blas_layout *a,
                                     const blas_layout *b)
{
    return a->kind == b->kind && a->m == b->m && a->n == b->n &&
           a->dist == b->dist && a->b == b->b && a->nb == b->nb &&
           a->rep == b->rep && a->pr == b->pr && a->pc == b->pc &&
           (a->part == b->part || blas_part_equal(a->part, b->part));
}

/* Constructors (normalised).  b or nb <= 0 means block folding,
 * ceil(extent / grid extent).                                              */
blas_layout blas_layout_vec(int64_t n, int dist, int64_t b, unsigned rep,
                            int pr, int pc);
blas_layout blas_layout_mat(int64_t m, int64_t n, int64_t mb, int64_t nb,
                            int pr, int pc);
/* The m x n matrix whole on every rank of a pr x pc grid.              */
blas_layout blas_layout_mat_whole(int64_t m, int64_t n, int pr, int pc);
blas_layout blas_layout_sca(unsigned rep, int pr, int pc);
/* A vector placed by partition p on a pr x pc grid (p->nparts = pr pc).  */
blas_layout blas_layout_part(const blas_part *p, int pr, int pc);
/* The rank holding index i (0 <= i < p->n) of a partition: O(log nparts),
 * the last of equal starts (so never a rank holding nothing).            */
int blas_part_owner(const blas_part *p, int64_t i);
/* The rank holding position pos (blas_part_owner after the renumbering). */
int blas_part_pos_owner(const blas_part *p, int64_t pos);

/* placement <-> layout (the value's kind disambiguates a 1 x n matrix from
 * a vector).  Errors: DESO_ENOTSUP for a placement this executor cannot
 * index (skewed alignment, d != 2, replicated matrix), and for a layout
 * by partition, which no pl_placement folding describes.                  */
deso_err blas_layout_of(const pl_placement *pl, blas_kind kind,
                        blas_layout *out);
deso_err blas_placement_of(const blas_layout *l, pl_placement *out);

/* Whether the rank at grid coordinates (r, c) holds any part of the value. */
bool blas_layout_holds(const blas_layout *l, int r, int c);
/* Local shape at (r, c): rows x cols (vectors and scalars: len x 1; a rank
 * holding nothing gets 0 x 0 for a matrix, 0 x 1 for a vector).            */
void blas_layout_local(const blas_layout *l, int r, int c, int64_t *rows,
                       int64_t *cols);
/* The grid coordinate along `dist` owning vector element i (by
 * partition: the rank); the local index of i there.                       */
int blas_layout_owner(const blas_layout *l, int64_t i);
int64_t blas_layout_lidx(const blas_layout *l, int64_t i);

/* Element g by linear index (vector: i; matrix: i + j m).  Whether the
 * rank at (r, c) holds it; its local index there (matrices: column-major
 * with leading dimension max(1, local rows)); the global index of local
 * index li at (r, c); the rank (r, c) takes it from when it needs it: the
 * rank itself when it holds it, else the copy in its own grid row or
 * column, else the one at coordinate 0 (deso/runtime/exchange.c's rule,
 * which the cost model counts with).                                     */
bool blas_elem_held(const blas_layout *l, int r, int c, int64_t g);
int64_t blas_elem_lidx(const blas_layout *l, int64_t g);
int64_t blas_elem_global(const blas_layout *l, int r, int c, int64_t li);
void blas_elem_src(const blas_layout *S, int r, int c, int64_t g, int *sr,
                   int *sc);
/* The grid coordinates holding element g: rows [*r0, *r1) x columns
 * [*c0, *c1) (a vector's copies span whole grid dimensions).             */
void blas_elem_holders(const blas_layout *l, int64_t g, int *r0, int *r1,
                       int *c0, int *c1);

/* cyclic(b) over p coordinates: global index of local index l at coord c,
 * and numroc.                                                              */
static inline int64_t blas_cyc_global(int64_t b, int p, int c, int64_t l)
{
    return ((l / b) * p + c) * b + l % b;
}
int64_t blas_numroc(int64_t n, int64_t b, int c, int p);

/* A matrix layout's grid extent and coordinate along grid dimension k as
 * its folding sees them (a replicated matrix is whole on every rank, as
 * on one), and the global row (k = 0) or column of local index l.        */
static inline int blas_mat_p(const blas_layout *l, int k)
{
    if ((l->rep >> k) & 1u) return 1;
    return k == 0 ? l->pr : l->pc;
}
static inline int blas_mat_co(const blas_layout *l, int k, int co)
{
    return ((l->rep >> k) & 1u) ? 0 : co;
}
static inline int64_t blas_mat_global(const blas_layout *l, int k, int co,
                                      int64_t li)
{
    return blas_cyc_global(k == 0 ? l->b : l->nb, blas_mat_p(l, k),
                           blas_mat_co(l, k, co), li);
}

/* ---- operations --------------------------------------------------------- */

typedef enum blas_op {
    BLAS_OP_COPY = 0,   /* y <- x                        [x]                */
    BLAS_OP_SCAL,       /* x <- a x                      [a, x]             */
    BLAS_OP_AXPY,       /* y <- a x + y                  [a, x, y]          */
    BLAS_OP_AXPBY,      /* y <- a x + b y                [a, x, b, y]       */
    BLAS_OP_DOT,        /* s <- x . y                    [x, y]             */
    BLAS_OP_NRM2,       /* s <- ||x||_2                  [x]                */
    BLAS_OP_ASUM,       /* s <- sum |x_i|                [x]                */
    BLAS_OP_IAMAX,      /* s <- first argmax |x_i|       [x]                */
    BLAS_OP_SADD,       /* s <- a + b                    [a, b]             */
    BLAS_OP_SSUB,
    BLAS_OP_SMUL,
    BLAS_OP_SDIV,
    BLAS_OP_SSQRT,      /* s <- sqrt(a)                  [a]                */
    BLAS_OP_SNEG,       /* s <- -a                       [a]                */
    BLAS_OP_GEMV,       /* y <- a op(A) x (+ b y)        [a, A, x (, b, y)] */
    BLAS_OP_GER,        /* A <- a x y^T + A              [a, x, y, A]       */
    BLAS_OP_TRSV,       /* x <- op(T)^-1 x               [T, x]             */
    BLAS_OP_VMUL,       /* y <- x .* y (extension)       [x, y]             */
    BLAS_OP_ROT,        /* u <- a u + b v (F_NEG: a u - b v)  [a, u, b, v]  */
    BLAS_OP_VDIV,       /* y <- y ./ x (extension)       [x, y]             */
    BLAS_OP_VRECIP,     /* y <- 1 ./ x (extension)       [x]                */
    BLAS_OP_VABS,       /* y <- |x| (extension)          [x]                */
    BLAS_OP_SMAX,       /* s <- fmax(a, b)               [a, b]             */
    BLAS_OP_SMIN,       /* s <- fmin(a, b)               [a, b]             */
    BLAS_OP_VGET,       /* r <- x[off + inc i], i < |r|  [x]  (view read)   */
    BLAS_OP_VPUT,       /* r <- x, r[off + inc i] <- s[i] [x, s] (write)    */
    BLAS_OP_USER,       /* y <- f(x), a user's operator  [x]  (deso/ runs   */
                        /*   its callback on the local pieces)              */
    BLAS_OP_USMV,       /* y <- a op(A) x (+ b y), A sparse  [a, x (, b, y)] */
                        /*   (deso/ runs it: A is no operand, see sp)      */
    BLAS_OP_COUNT
} blas_op;

#define BLAS_MAXOPS 5

/* Parameters of one node, fixed at record time (value-free).              */
enum {
    BLAS_F_TRANS = 1,       /* gemv, trsv: op(A) = A^T                      */
    BLAS_F_LOWER = 2,       /* trsv: lower triangle; gemv mask: lower part  */
    BLAS_F_UNIT = 4,        /* trsv: unit diagonal                          */
    BLAS_F_BETA = 8,        /* gemv/axpby: y is read (beta not constant 0)  */
    BLAS_F_MASK = 16,       /* gemv: use only a triangle of A (dsymv)       */
    BLAS_F_STRICT = 32,     /* gemv mask: exclude the diagonal              */
    BLAS_F_NEG = 64,        /* rot: subtract the second term                */
    BLAS_F_PMAT = 128,      /* vget, vput: the viewed value is a matrix     */
    BLAS_F_SMAT = 256,      /* vget, vput: the view is a matrix             */
    BLAS_F_XLIKE = 512,     /* user: x where y is (else replicated)         */
    BLAS_F_YREP = 1024,     /* user: y replicated everywhere                */
    BLAS_F_YROWS = 2048,    /* user: y as a matrix's rows, row block inc    */
    BLAS_F_YPART = 4096     /* user: y by the rows of the sparse matrix sp  */
};
/* A user operator's y is replicated everywhere (BLAS_F_YREP), laid out as
 * a dgemv N's result on a matrix with row block `inc` (BLAS_F_YROWS), by
 * the row partition of the sparse matrix whose facts are sp
 * (BLAS_F_YPART), or, with none, placed by the optimiser like any
 * vector; its off is the operator's number in its context, len the
 * length of y.                                                           */
/* vget and vput index a vector, or a matrix column-major (i + j m), by
 * one linear index: a column is a run of m, a column range a run of whole
 * columns.  Their result is a vector or matrix as its shape says.  A
 * block (rows i0 .. i0 + r of columns j0 .. j0 + k of an m-row matrix) is
 * k runs of r: rows = r, ld = m, off = i0 + j0 m, inc = 1, len = r k.    */
/* ger takes BLAS_F_MASK and BLAS_F_LOWER too: only the upper (lower)
 * triangle of A, diagonal included, is updated (dsyr, dsyr2).            */

/* What the optimiser knows of a sparse product's matrix (usmv nodes):
 * where its rows live (y of the product, x of the transposed one) and
 * where the x of its product lives, both partitions of the whole grid,
 * and its halo exchange: tab[s P + r] the x entries rank s sends rank r
 * (P = nparts; the transposed product runs the same messages backwards).
 * Immutable and interned by its maker (deso/runtime: equal facts are one
 * object, kept until the context is freed), so that nodes compare it by
 * address; `hash` is a function of the facts alone (plan keys, wisdom). */
typedef struct blas_sparse {
    const blas_part *rows, *cols;
    const int64_t *tab;     /* P x P                                       */
    uint64_t hash;
} blas_sparse;

typedef struct blas_desc {
    blas_op op;
    unsigned flags;
    int nops;
    int64_t off, inc, len;  /* vget, vput: the view's first linear index,
                             * its stride (inc != 0) and its elements;
                             * user: see above; 0 for other ops           */
    int64_t rows, ld;       /* vget, vput of a block: runs of `rows`
                             * elements, `ld` apart in the viewed matrix;
                             * 0, 0 otherwise (one run)                   */
    const blas_sparse *sp;  /* usmv, and a user operator on a sparse
                             * matrix's rows (BLAS_F_YPART): the matrix's
                             * facts; NULL otherwise                      */
} blas_desc;

/* Whether off, inc, len, rows and ld are part of a node's identity
 * (vget, vput, user): its hashes and keys include them.                  */
static inline bool blas_desc_params(blas_op op)
{
    return op == BLAS_OP_VGET || op == BLAS_OP_VPUT || op == BLAS_OP_USER;
}

/* The layout a user operator's node pins its y to (BLAS_F_YREP,
 * BLAS_F_YROWS, BLAS_F_YPART) on a pr x pc grid; false when y is free.  */
bool blas_user_pinned(const blas_desc *d, int pr, int pc, blas_layout *y);

/* An element map: element so + si i of a source goes to element to + ti i
 * of a target, for i < len (linear indices).  vget is (off, inc, 0, 1),
 * vput (0, 1, off, inc).  With rows > 0 (a block: si = ti = 1) the map is
 * runs of `rows`: element i = a + b rows (a < rows) is so + a + b sld of
 * the source and to + a + b tld of the target; vget's tld and vput's sld
 * are rows (the block itself is contiguous), the other ld the matrix's. */
typedef struct blas_emap {
    int64_t so, si, to, ti, len;
    int64_t rows, sld, tld;
} blas_emap;

/* The map a vget or vput node applies.                                   */
blas_emap blas_desc_map(const blas_desc *d);
bool blas_emap_equal(const blas_emap *a, const blas_emap *b);
/* The source and the target element of map index i.                     */
int64_t blas_emap_src(const blas_emap *e, int64_t i);
int64_t blas_emap_dst(const blas_emap *e, int64_t i);
/* i with blas_emap_src(e, i) == g (blas_emap_dst with target true), or
 * -1.                                                                    */
int64_t blas_emap_index(const blas_emap *e, int64_t g, bool target);

/* One local piece handed to a kernel.  Matrices: column-major with leading
 * dimension max(1, rows).  r, c are this rank's grid coordinates.  A
 * matrix may be a slab of the local piece: its local columns [c0, c0 +
 * cols), c0 a multiple of blas_gemv_chunk (streamed out-of-core
 * matrices; 0 otherwise).                                                 */
typedef struct blas_local {
    double *data;
    int64_t rows, cols;
    const blas_layout *lay;   /* the view's own: no copy per operand       */
    int r, c;
    int64_t c0;
} blas_local;

typedef enum blas_red {
    BLAS_RED_NONE = 0,
    BLAS_RED_SUM,       /* element-wise sum of the reduction buffer         */
    BLAS_RED_MAXLOC     /* buffer = (|value|, global index): largest value, */
                        /* smallest index among ties                        */
} blas_red;

/* Operand placements for a node from its result's placement, given the
 * operands' current placements as hints (mode none uses them where the
 * result leaves a choice, e.g. ddot's vectors).  Layout form.             */
typedef deso_err (*blas_constrain_fn)(const blas_desc *d,
                                      const blas_layout *result,
                                      const blas_layout *current,
                                      blas_layout *required);

/* kernel: local work before the reduction; writes the reduction buffer
 * `red` (length red_len) or, without a reduction, the result in place.
 * The result buffer arrives holding the in/out operand's data (see inout).
 * finish: after the reduction, combines `red` into the result.            */
typedef void (*blas_kernel_fn)(const blas_desc *d, const blas_local *ops,
                               blas_local *res, double *red);

typedef struct blas_op_info {
    const char *name;
    int nops;              /* operands (gemv without beta: 3)              */
    blas_kind roles[BLAS_MAXOPS];
    blas_kind result;
    int inout;             /* operand whose data the result updates, or -1 */
    blas_red red;
    bool distributed;      /* the kernel communicates (trsv): deso/ runs it */
    blas_constrain_fn constrain;
    blas_kernel_fn kernel;
    blas_kernel_fn finish; /* NULL: nothing after the reduction            */
    blas_kernel_fn direct; /* where the node needs no reduction across
                            * ranks, the kernel and the finish in one: the
                            * result written whole, `red` unused; NULL:
                            * kernel, then finish                         */
} blas_op_info;

/* The table row of an operation; NULL for an unknown op.                  */
const blas_op_info *blas_op_get(blas_op op);
/* Operands of a node (gemv without BLAS_F_BETA has 3).                     */
int blas_desc_nops(blas_op op, unsigned flags);
/* The kind of a node's operand k and of its result: the table's roles,
 * except for vget and vput, whose flags say which are matrices.          */
blas_kind blas_desc_role(const blas_desc *d, int k);
blas_kind blas_desc_result(const blas_desc *d);
/* The grid dimension a node reduces over given its operands' layouts
 * (-1: no communication needed; BLAS_RED_ALL: every rank of the grid,
 * for a vector by partition), and its reduction buffer length.          */
#define BLAS_RED_ALL BLAS_DIST_PART
int blas_red_dim(const blas_desc *d, const blas_layout *ops);
/* The bits of a reduction's result layout's rep that make its reduction
 * over rd an all-reduce (any of them set) rather than a reduce to
 * coordinate 0: rd's own bit, or for BLAS_RED_ALL those of every grid
 * dimension of extent > 1 (a normalised layout sets the others).        */
static inline unsigned blas_red_bits(int rd, int pr, int pc)
{
    if (rd == BLAS_RED_ALL) return (pr > 1 ? 1u : 0u) | (pc > 1 ? 2u : 0u);
    return rd >= 0 ? 1u << rd : 0u;
}
/* The doubles a vector reduction's kernel writes for the collective (1:
 * ddot, dasum; 2: idamax's (value, index); 3: dnrm2's scaled sums of
 * squares); 0 for an operation without one or whose length depends on its
 * operands (gemv).  A fused group's collective carries its members'
 * partials one after the other.                                           */
#define BLAS_RED_WIDTH_MAX 3
int blas_red_width(blas_op op);
int64_t blas_red_len(const blas_desc *d, const blas_local *ops);

/* Where a scalar operand must live so that it is present wherever a value
 * of layout `where` lives (paper 003 eq. 8: alpha gains replication).     */
blas_layout blas_scalar_for(const blas_layout *where);

/* The trsv block size a matrix layout supports as it is (square blocks
 * along distributed dimensions, at most 64), or 0 when trsv needs the
 * matrix remapped to cyclic(min(m, 64)).                                  */
int64_t blas_trsv_block_of(const blas_layout *T);

/* ---- kernels used by deso/'s out-of-core streaming ----------------------- */

/* dgemv accumulates its local product one chunk of columns at a time, in
 * core and streamed alike: as many columns as fit in chunk bytes
 * (BLAS_GEMV_CHUNK_BYTES), at least the column block or BLAS_GEMV_COLS,
 * whichever is fewer.  blas_gemv_chunk gives it for a local piece of
 * `rows` rows; blas_gemv_chunk_bytes sets the bytes for the whole process
 * (a test switch, so that small matrices stream in several slabs; set it
 * before creating matrices; negative: the default).                     */
#define BLAS_GEMV_COLS 64
#define BLAS_GEMV_CHUNK_BYTES ((int64_t)4 << 20)
int64_t blas_gemv_chunk(const blas_layout *A, int64_t rows);
void blas_gemv_chunk_bytes(int64_t bytes);
/* Where a local product goes: y <- alpha op(A) x + beta y.              */
typedef struct blas_gemv_into {
    double *y;
    double alpha, beta;
} blas_gemv_into;
/* The product over A's columns (a slab when A->c0 > 0, c0 a multiple of
 * the chunk: x is indexed from c0 for no transpose, y for the transpose),
 * one chunk at a time, as dgemv's kernel runs on the whole local piece;
 * beta applies to each entry of y once (without a transpose, in the
 * chunk at local column 0); dgemv's mask flags restrict it to a
 * triangle.  The partial product of the kernel is (red, 1, 0).          */
void blas_gemv_part(const blas_desc *d, const blas_local *A,
                    const blas_local *x, blas_gemv_into out);
/* The direct kernel's target: the result's local piece, with the node's
 * alpha and beta (0 without BLAS_F_BETA).                               */
blas_gemv_into blas_gemv_direct_into(const blas_desc *d,
                                     const blas_local *ops, blas_local *res);

/* The rotation generators on plain doubles (CBLAS's drotg and drotmg). */
void blas_rotg(double *a, double *b, double *c, double *s);
void blas_rotmg(double *d1, double *d2, double *b1, double b2, double *param);

/* ---- kernels used by deso/'s distributed trsv ---------------------------- */

/* The diagonal-block solve of a blocked trsv: x <- op(T_kk)^-1 x for the
 * bk x bk block at t (leading dimension ld).                               */
void blas_trsv_block(unsigned flags, int64_t bk, const double *t, int64_t ld,
                     double *x);
/* s <- op(T_sub) x_sub for a rows x cols sub-matrix (no transpose: s has
 * rows entries; transpose: cols).  Accumulates into s.                     */
void blas_gemv_acc(bool trans, int64_t rows, int64_t cols, const double *a,
                   int64_t ld, const double *x, double *s);

#endif
