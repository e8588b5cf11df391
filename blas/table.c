/* The operation table: one row per operation, with its placement
 * constraints (doc/DESIGN.md, "Operator constraints"; paper 003 eq. 8 for
 * daxpy).                                                                 */
#include <stddef.h>

#include "blas/kernels.h"
#include "placement/errors.h"

/* Largest trsv block: a trsv on coarser blocks (block folding) would be
 * nearly sequential, so the constraint asks for a cyclic remap instead.   */
#define BLAS_TRSV_MAXB 64

static deso_err need_vec(const blas_layout *l, const char *op)
{
    DESO_CHECK(l->kind == BLAS_VEC, DESO_EINTERNAL,
               "%s: operand is not a vector", op);
    return DESO_OK;
}

/* copy: x has the result's placement.                                      */
static deso_err c_copy(const blas_desc *d, const blas_layout *res,
                       const blas_layout *cur, blas_layout *req)
{
    (void)d;
    (void)cur;
    req[0] = *res;
    return DESO_OK;
}

/* scal, axpy, axpby, rot: vectors as the result, scalars wherever it
 * lives.                                                                  */
static deso_err c_update(const blas_desc *d, const blas_layout *res,
                         const blas_layout *cur, blas_layout *req)
{
    (void)cur;
    blas_layout s = blas_scalar_for(res);
    switch (d->op) {
    case BLAS_OP_SCAL: req[0] = s; req[1] = *res; break;
    case BLAS_OP_AXPY: req[0] = s; req[1] = *res; req[2] = *res; break;
    default: req[0] = s; req[1] = *res; req[2] = s; req[3] = *res; break;
    }
    return DESO_OK;
}

/* Reductions: the result leaves the vectors' placement free; keep x's
 * (mode none's choice) and align y with it.  The result is the reduced
 * value; where it is replicated decides reduce vs all-reduce.             */
static deso_err c_reduce(const blas_desc *d, const blas_layout *res,
                         const blas_layout *cur, blas_layout *req)
{
    (void)res;
    DESO_TRY(need_vec(&cur[0], "reduction"));
    req[0] = cur[0];
    if (d->op == BLAS_OP_DOT) req[1] = cur[0];
    return DESO_OK;
}

/* vmul (element-wise y <- x .* y): x and y both in the result's placement,
 * like daxpy without a scalar.                                            */
static deso_err c_elem(const blas_desc *d, const blas_layout *res,
                       const blas_layout *cur, blas_layout *req)
{
    (void)d;
    (void)cur;
    req[0] = *res;
    req[1] = *res;
    return DESO_OK;
}

static deso_err c_scalar(const blas_desc *d, const blas_layout *res,
                         const blas_layout *cur, blas_layout *req)
{
    (void)cur;
    for (int k = 0; k < d->nops; k++) req[k] = *res;
    return DESO_OK;
}

/* gemv N: x row oriented with A's column folding, replicated over rows; the
 * result column oriented with A's row folding (reduced over grid columns).
 * gemv T: the mirror image.  A whole on every rank: x and the result too,
 * each rank computing the whole product by itself (no reduction).        */
static deso_err c_gemv(const blas_desc *d, const blas_layout *res,
                       const blas_layout *cur, blas_layout *req)
{
    const blas_layout *A = &cur[1];
    DESO_CHECK(A->kind == BLAS_MAT, DESO_EINTERNAL, "gemv: A not a matrix");
    bool t = (d->flags & BLAS_F_TRANS) != 0, whole = A->rep != 0;
    int rdim = whole ? -1 : t ? 1 : 0, xdim = whole ? -1 : t ? 0 : 1;
    int64_t rb = t ? A->nb : A->b, xb = t ? A->b : A->nb;
    blas_layout natural = blas_layout_vec(t ? A->n : A->m, rdim, rb,
                                          whole ? 3u : res->rep, A->pr,
                                          A->pc);
    DESO_CHECK(blas_layout_equal(&natural, res), DESO_ENOTSUP,
               "gemv: result placement not aligned with the matrix");
    req[0] = blas_scalar_for(res);
    req[1] = *A;
    req[2] = blas_layout_vec(t ? A->m : A->n, xdim, xb,
                             whole ? 3u : 1u << rdim, A->pr, A->pc);
    if (d->flags & BLAS_F_BETA) {
        req[3] = req[0];
        req[4] = *res;
    }
    return DESO_OK;
}

/* ger: x column oriented with A's rows, y row oriented with A's columns,
 * both replicated across the dimension they are not folded over.         */
static deso_err c_ger(const blas_desc *d, const blas_layout *res,
                      const blas_layout *cur, blas_layout *req)
{
    (void)d;
    (void)cur;
    DESO_CHECK(res->kind == BLAS_MAT, DESO_EINTERNAL, "ger: not a matrix");
    req[0] = blas_layout_sca(3u, res->pr, res->pc);
    req[1] = blas_layout_vec(res->m, 0, res->b, 2u, res->pr, res->pc);
    req[2] = blas_layout_vec(res->n, 1, res->nb, 1u, res->pr, res->pc);
    req[3] = *res;
    return DESO_OK;
}

/* trsv: T folded cyclic(b) with square blocks along any distributed
 * dimension (so diagonal blocks are whole on one rank), b <= 64; x and the
 * result replicated everywhere (the kernel broadcasts each solved block). */
static deso_err c_trsv(const blas_desc *d, const blas_layout *res,
                       const blas_layout *cur, blas_layout *req)
{
    (void)d;
    const blas_layout *T = &cur[0];
    DESO_CHECK(T->kind == BLAS_MAT, DESO_EINTERNAL, "trsv: T not a matrix");
    int64_t b = blas_trsv_block_of(T);
    if (b > 0) {
        req[0] = *T;
    } else {
        int64_t nb = T->m < BLAS_TRSV_MAXB ? T->m : BLAS_TRSV_MAXB;
        req[0] = blas_layout_mat(T->m, T->n, nb, nb, T->pr, T->pc);
    }
    req[1] = *res;
    return DESO_OK;
}

int64_t blas_trsv_block_of(const blas_layout *T)
{
    int64_t b;
    if (T->pr > 1 && T->pc > 1) {
        if (T->b != T->nb) return 0;
        b = T->b;
    } else if (T->pr > 1) {
        b = T->b;
    } else if (T->pc > 1) {
        b = T->nb;
    } else {
        b = T->m < BLAS_TRSV_MAXB ? T->m : BLAS_TRSV_MAXB;
    }
    if (b < 1) b = 1;
    return b <= BLAS_TRSV_MAXB ? b : 0;
}

/* vget: the viewed value where it is (the node moves the elements
 * itself); vput: the old value where the new one goes (a local copy, or
 * its buffer taken over), the new elements where they are.              */
static deso_err c_vget(const blas_desc *d, const blas_layout *res,
                       const blas_layout *cur, blas_layout *req)
{
    (void)d;
    (void)res;
    req[0] = cur[0];
    return DESO_OK;
}

static deso_err c_vput(const blas_desc *d, const blas_layout *res,
                       const blas_layout *cur, blas_layout *req)
{
    (void)d;
    req[0] = *res;
    req[1] = cur[1];
    return DESO_OK;
}

bool blas_user_pinned(const blas_desc *d, int pr, int pc, blas_layout *y)
{
    if (d->flags & BLAS_F_YREP) {
        *y = blas_layout_vec(d->len, -1, 0, 3u, pr, pc);
        return true;
    }
    if (d->flags & BLAS_F_YROWS) {
        *y = blas_layout_vec(d->len, 0, d->inc, 2u, pr, pc);
        return true;
    }
    if ((d->flags & BLAS_F_YPART) && d->sp != NULL) {
        *y = blas_layout_part(d->sp->rows, pr, pc);
        return true;
    }
    return false;
}

/* user: y where its declaration pins it (else anywhere); x replicated
 * everywhere, or where y is (a diagonal operator's x).                   */
static deso_err c_user(const blas_desc *d, const blas_layout *res,
                       const blas_layout *cur, blas_layout *req)
{
    blas_layout pin;
    DESO_CHECK(res->kind == BLAS_VEC, DESO_EINTERNAL,
               "user operator: y is not a vector");
    DESO_CHECK(!blas_user_pinned(d, res->pr, res->pc, &pin) ||
                   blas_layout_equal(&pin, res),
               DESO_ENOTSUP, "user operator: y not where it was declared");
    if (d->flags & BLAS_F_XLIKE) req[0] = *res;
    else req[0] = blas_layout_vec(cur[0].n, -1, 0, 3u, res->pr, res->pc);
    return DESO_OK;
}

/* usmv: y by the matrix's rows (by its x blocks for the transpose), x
 * by the other partition, scalars everywhere.  The node moves x's halo
 * (or the transpose's partial sums) itself, so these are the only
 * layouts it runs in.                                                    */
static deso_err c_usmv(const blas_desc *d, const blas_layout *res,
                       const blas_layout *cur, blas_layout *req)
{
    (void)cur;
    DESO_CHECK(d->sp != NULL, DESO_EINTERNAL, "usmv: no matrix");
    bool t = (d->flags & BLAS_F_TRANS) != 0;
    blas_layout y = blas_layout_part(t ? d->sp->cols : d->sp->rows, res->pr,
                                     res->pc);
    DESO_CHECK(blas_layout_equal(&y, res), DESO_ENOTSUP,
               "usmv: y not placed by the matrix's partition");
    req[0] = blas_layout_sca(3u, res->pr, res->pc);
    req[1] = blas_layout_part(t ? d->sp->rows : d->sp->cols, res->pr,
                              res->pc);
    if (d->flags & BLAS_F_BETA) {
        req[2] = req[0];
        req[3] = *res;
    }
    return DESO_OK;
}

#define V BLAS_VEC
#define M BLAS_MAT
#define S BLAS_SCA

static const blas_op_info table[BLAS_OP_COUNT] = {
    [BLAS_OP_COPY] = {"dcopy", 1, {V}, V, -1, BLAS_RED_NONE, false, c_copy,
                      blas__k_copy, NULL},
    [BLAS_OP_SCAL] = {"dscal", 2, {S, V}, V, 1, BLAS_RED_NONE, false,
                      c_update, blas__k_scal, NULL},
    [BLAS_OP_AXPY] = {"daxpy", 3, {S, V, V}, V, 2, BLAS_RED_NONE, false,
                      c_update, blas__k_axpy, NULL},
    [BLAS_OP_AXPBY] = {"daxpby", 4, {S, V, S, V}, V, 3, BLAS_RED_NONE, false,
                       c_update, blas__k_axpby, NULL},
    [BLAS_OP_DOT] = {"ddot", 2, {V, V}, S, -1, BLAS_RED_SUM, false, c_reduce,
                     blas__k_dot, blas__f_copy},
    [BLAS_OP_NRM2] = {"dnrm2", 1, {V}, S, -1, BLAS_RED_SUM, false, c_reduce,
                      blas__k_nrm2, blas__f_nrm2},
    [BLAS_OP_ASUM] = {"dasum", 1, {V}, S, -1, BLAS_RED_SUM, false, c_reduce,
                      blas__k_asum, blas__f_copy},
    [BLAS_OP_IAMAX] = {"idamax", 1, {V}, S, -1, BLAS_RED_MAXLOC, false,
                       c_reduce, blas__k_iamax, blas__f_index},
    [BLAS_OP_SADD] = {"scalar_add", 2, {S, S}, S, -1, BLAS_RED_NONE, false,
                      c_scalar, blas__k_scalar, NULL},
    [BLAS_OP_SSUB] = {"scalar_sub", 2, {S, S}, S, -1, BLAS_RED_NONE, false,
                      c_scalar, blas__k_scalar, NULL},
    [BLAS_OP_SMUL] = {"scalar_mul", 2, {S, S}, S, -1, BLAS_RED_NONE, false,
                      c_scalar, blas__k_scalar, NULL},
    [BLAS_OP_SDIV] = {"scalar_div", 2, {S, S}, S, -1, BLAS_RED_NONE, false,
                      c_scalar, blas__k_scalar, NULL},
    [BLAS_OP_SSQRT] = {"scalar_sqrt", 1, {S}, S, -1, BLAS_RED_NONE, false,
                       c_scalar, blas__k_scalar, NULL},
    [BLAS_OP_SNEG] = {"scalar_neg", 1, {S}, S, -1, BLAS_RED_NONE, false,
                      c_scalar, blas__k_scalar, NULL},
    [BLAS_OP_GEMV] = {"dgemv", 5, {S, M, V, S, V}, V, 4, BLAS_RED_SUM, false,
                      c_gemv, blas__k_gemv, blas__f_gemv, blas__d_gemv},
    [BLAS_OP_GER] = {"dger", 4, {S, V, V, M}, M, 3, BLAS_RED_NONE, false,
                     c_ger, blas__k_ger, NULL},
    [BLAS_OP_TRSV] = {"dtrsv", 2, {M, V}, V, 1, BLAS_RED_NONE, true, c_trsv,
                      NULL, NULL},
    [BLAS_OP_VMUL] = {"dvmul", 2, {V, V}, V, 1, BLAS_RED_NONE, false, c_elem,
                      blas__k_vmul, NULL},
    [BLAS_OP_ROT] = {"drot", 4, {S, V, S, V}, V, 1, BLAS_RED_NONE, false,
                     c_update, blas__k_rot, NULL},
    [BLAS_OP_VDIV] = {"dvdiv", 2, {V, V}, V, 1, BLAS_RED_NONE, false, c_elem,
                      blas__k_vdiv, NULL},
    [BLAS_OP_VRECIP] = {"dvrecip", 1, {V}, V, -1, BLAS_RED_NONE, false,
                        c_copy, blas__k_vrecip, NULL},
    [BLAS_OP_VABS] = {"dvabs", 1, {V}, V, -1, BLAS_RED_NONE, false, c_copy,
                      blas__k_vabs, NULL},
    [BLAS_OP_SMAX] = {"scalar_max", 2, {S, S}, S, -1, BLAS_RED_NONE, false,
                      c_scalar, blas__k_scalar, NULL},
    [BLAS_OP_SMIN] = {"scalar_min", 2, {S, S}, S, -1, BLAS_RED_NONE, false,
                      c_scalar, blas__k_scalar, NULL},
    [BLAS_OP_VGET] = {"vget", 1, {V}, V, -1, BLAS_RED_NONE, true, c_vget,
                      NULL, NULL},
    [BLAS_OP_VPUT] = {"vput", 2, {V, V}, V, 0, BLAS_RED_NONE, true, c_vput,
                      NULL, NULL},
    [BLAS_OP_USER] = {"user_op", 1, {V}, V, -1, BLAS_RED_NONE, true, c_user,
                      NULL, NULL},
    [BLAS_OP_USMV] = {"dusmv", 4, {S, V, S, V}, V, 3, BLAS_RED_NONE, true,
                      c_usmv, NULL, NULL},
};

const blas_op_info *blas_op_get(blas_op op)
{
    if ((int)op < 0 || op >= BLAS_OP_COUNT) return NULL;
    return &table[op];
}

int blas_desc_nops(blas_op op, unsigned flags)
{
    const blas_op_info *info = blas_op_get(op);
    if (info == NULL) return 0;
    if (op == BLAS_OP_GEMV && !(flags & BLAS_F_BETA)) return 3;
    if (op == BLAS_OP_USMV && !(flags & BLAS_F_BETA)) return 2;
    return info->nops;
}

blas_kind blas_desc_role(const blas_desc *d, int k)
{
    if (d->op == BLAS_OP_VGET || d->op == BLAS_OP_VPUT) {
        unsigned f = k == 0 ? BLAS_F_PMAT : BLAS_F_SMAT;
        return (d->flags & f) ? BLAS_MAT : BLAS_VEC;
    }
    return blas_op_get(d->op)->roles[k];
}

blas_kind blas_desc_result(const blas_desc *d)
{
    if (d->op == BLAS_OP_VGET)
        return (d->flags & BLAS_F_SMAT) ? BLAS_MAT : BLAS_VEC;
    if (d->op == BLAS_OP_VPUT)
        return (d->flags & BLAS_F_PMAT) ? BLAS_MAT : BLAS_VEC;
    return blas_op_get(d->op)->result;
}

int blas_red_dim(const blas_desc *d, const blas_layout *ops)
{
    const blas_op_info *info = blas_op_get(d->op);
    if (info == NULL || info->red == BLAS_RED_NONE) return -1;
    if (d->op == BLAS_OP_GEMV) {
        /* the summed dimension: none across ranks where A is whole      */
        int k = (d->flags & BLAS_F_TRANS) ? 0 : 1;
        return blas_mat_p(&ops[1], k) > 1 ? k : -1;
    }
    return ops[0].dist;     /* BLAS_DIST_PART is BLAS_RED_ALL           */
}

int64_t blas_red_len(const blas_desc *d, const blas_local *ops)
{
    const blas_op_info *info = blas_op_get(d->op);
    if (info == NULL || info->red == BLAS_RED_NONE) return 0;
    if (d->op == BLAS_OP_GEMV)
        return (d->flags & BLAS_F_TRANS) ? ops[1].cols : ops[1].rows;
    return blas_red_width(d->op);
}

int blas_red_width(blas_op op)
{
    switch (op) {
    case BLAS_OP_DOT: case BLAS_OP_ASUM: return 1;
    case BLAS_OP_IAMAX: return 2;
    case BLAS_OP_NRM2: return 3;
    default: return 0;
    }
}
