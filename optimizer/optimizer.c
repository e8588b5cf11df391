/* Default layouts of new values, and mode none's placement of one node:
 * default placements, then the operation's constraints.  Independent of
 * the mode: modes affine and full choose among other candidates in
 * opt_cands.c and opt_search.c, starting from this one.                   */
#include "optimizer/optimizer.h"

#include <string.h>

#include "placement/errors.h"

blas_layout opt_default_vec(const opt_defaults *df, int64_t n)
{
    return blas_layout_vec(n, 1, df->nb, 1u, df->pr, df->pc);
}

blas_layout opt_default_mat(const opt_defaults *df, int64_t m, int64_t n)
{
    return blas_layout_mat(m, n, df->nb, df->nb, df->pr, df->pc);
}

blas_layout opt_default_sca(const opt_defaults *df)
{
    return blas_layout_sca(3u, df->pr, df->pc);
}

/* The result's placement in mode none.                                     */
static deso_err default_result(const opt_defaults *df, const blas_desc *d,
                               const blas_layout *cur, blas_layout *res)
{
    const blas_op_info *info = blas_op_get(d->op);
    DESO_CHECK(info != NULL, DESO_EINTERNAL, "optimizer: unknown op %d",
               (int)d->op);
    switch (d->op) {
    case BLAS_OP_GEMV: {
        const blas_layout *A = &cur[1];
        bool t = (d->flags & BLAS_F_TRANS) != 0;
        *res = t ? blas_layout_vec(A->n, 1, A->nb, 1u, A->pr, A->pc)
                 : blas_layout_vec(A->m, 0, A->b, 2u, A->pr, A->pc);
        return DESO_OK;
    }
    case BLAS_OP_GER: *res = cur[3]; return DESO_OK;
    case BLAS_OP_VGET:
        /* a matrix view is whole columns of its parent, or a block of
         * d->rows rows                                                   */
        if (d->flags & BLAS_F_SMAT) {
            int64_t m = d->rows > 0 ? d->rows : cur[0].m;
            *res = opt_default_mat(df, m, d->len / (m > 0 ? m : 1));
        } else {
            *res = opt_default_vec(df, d->len);
        }
        return DESO_OK;
    case BLAS_OP_VPUT:
        *res = cur[0].kind == BLAS_MAT ? cur[0] : opt_default_vec(df, cur[0].n);
        return DESO_OK;
    case BLAS_OP_TRSV:
        *res = blas_layout_vec(cur[1].n, -1, 0, 3u, df->pr, df->pc);
        return DESO_OK;
    case BLAS_OP_USMV:
        /* by the matrix's rows (the transpose: by its x blocks)          */
        *res = blas_layout_part((d->flags & BLAS_F_TRANS) ? d->sp->cols
                                                           : d->sp->rows,
                                df->pr, df->pc);
        return DESO_OK;
    case BLAS_OP_USER:
        /* where the operator's declaration pins y, else a new vector's   */
        if (!blas_user_pinned(d, df->pr, df->pc, res))
            *res = opt_default_vec(df, d->len);
        return DESO_OK;
    default: break;
    }
    if (info->result == BLAS_SCA) {
        *res = opt_default_sca(df);
        return DESO_OK;
    }
    /* vector updates: the length of their vector operand                   */
    for (int k = 0; k < d->nops; k++)
        if (info->roles[k] == BLAS_VEC) {
            *res = opt_default_vec(df, cur[k].n);
            return DESO_OK;
        }
    return deso__fail(DESO_EINTERNAL, "optimizer: %s has no vector operand",
                      info->name);
}

deso_err opt_place_node(const opt_defaults *df, const blas_desc *d,
                        const blas_layout *cur, blas_layout *result,
                        blas_layout *req)
{
    const blas_op_info *info = blas_op_get(d->op);
    DESO_CHECK(info != NULL, DESO_EINTERNAL, "optimizer: unknown op");
    DESO_TRY(default_result(df, d, cur, result));
    return info->constrain(d, result, cur, req);
}

deso_err opt_mode_parse(const char *s, opt_mode *out)
{
    DESO_CHECK(s != NULL && out != NULL, DESO_ENULL, "opt_mode_parse: NULL");
    if (strcmp(s, "none") == 0) *out = OPT_NONE;
    else if (strcmp(s, "affine") == 0) *out = OPT_AFFINE;
    else if (strcmp(s, "full") == 0) *out = OPT_FULL;
    else
        return deso__fail(DESO_EINVAL,
                          "optimizer mode '%s': expected none, affine or full",
                          s);
    return DESO_OK;
}

const char *opt_mode_name(opt_mode m)
{
    switch (m) {
    case OPT_NONE: return "none";
    case OPT_AFFINE: return "affine";
    case OPT_FULL: return "full";
    }
    return "?";
}
