/* deso_mat_replicated: whether the replication optimiser gave a matrix's
 * current value a copy on every rank (doc/DESIGN.md, "Optimiser modes"):
 * a program's report says which placement its matrix got.              */
#include "deso/runtime/runtime.h"
#include "deso/runtime/api.h"

/* A view of the whole matrix on every rank (on a grid with one rank
 * there is no copy to speak of).                                        */
static bool everywhere(const blas_layout *l)
{
    return l->kind == BLAS_MAT && l->rep != 0 && blas_mat_whole(l, 0) &&
           blas_mat_whole(l, 1);
}

static deso_err mat_replicated(const deso_mat *a, int *replicated,
                               const char *fn)
{
    deso_ctx *ctx = NULL;
    const deso__handle *h = a ? &a->h : NULL;
    DESO_TRY(deso__handle_check(h, BLAS_MAT, &ctx, fn, "a"));
    DESO_CHECK(replicated != NULL, DESO_ENULL,
               "%s: replicated is NULL (arg 2)", fn);
    *replicated = 0;
    for (const deso__view *w = h->val->views; w != NULL; w = w->next)
        if (everywhere(&w->lay)) *replicated = 1;
    return DESO_OK;
}

deso_err deso_mat_replicated(const deso_mat *a, int *replicated)
{
    static const char *fn = "deso_mat_replicated";
    deso_err e = mat_replicated(a, replicated, fn);
    if (e != DESO_OK) e = deso__raise(DESO__CTX(a), fn, e);
    return e;
}
