/* The default placements of paper 003's unoptimised layout (2-D grids).   */
#include "placement/errors.h"
#include "placement/placement.h"

#include <stddef.h>

static deso_err check_args(const char *fn, int64_t n, int64_t nb,
                           const pl_grid *g, const pl_placement *out)
{
    DESO_CHECK(g != NULL && out != NULL, DESO_ENULL, "%s: NULL argument", fn);
    DESO_CHECK(g->d == 2, DESO_EGRID, "%s: grid has d = %d, not 2", fn, g->d);
    DESO_CHECK(n >= 0, DESO_ESIZE, "%s: size %lld < 0", fn, (long long)n);
    DESO_CHECK(nb >= 0, DESO_EINVAL, "%s: block size %lld < 0", fn,
               (long long)nb);
    return DESO_OK;
}

/* nb = 0: block; nb > 0: cyclic(nb).                                       */
static pl_fold fold_of(int64_t nb)
{
    pl_fold f = {nb > 0 ? PL_FOLD_CYCLIC : PL_FOLD_BLOCK, nb > 0 ? nb : 0};
    return f;
}

deso_err pl_placement_vector_rows(int64_t n, int64_t nb, const pl_grid *g,
                                  pl_placement *out)
{
    DESO_TRY(check_args("pl_placement_vector_rows", n, nb, g, out));
    int64_t extent[2] = {1, n};
    pl_fold fold[2] = {fold_of(0), fold_of(nb)};
    pl_affine id = pl_affine_identity(2);
    return pl_placement_make(2, extent, NULL, 1u, &id, fold, g, out);
}

deso_err pl_placement_vector_cols(int64_t n, int64_t nb, const pl_grid *g,
                                  pl_placement *out)
{
    DESO_TRY(check_args("pl_placement_vector_cols", n, nb, g, out));
    int64_t extent[2] = {1, n};
    pl_fold fold[2] = {fold_of(nb), fold_of(0)};
    pl_affine tr = pl_affine_transpose(2);     /* element j at (j, 0)   */
    return pl_placement_make(2, extent, NULL, 2u, &tr, fold, g, out);
}

deso_err pl_placement_matrix(int64_t m, int64_t n, int64_t mb, int64_t nb,
                             const pl_grid *g, pl_placement *out)
{
    const char *fn = "pl_placement_matrix";
    DESO_TRY(check_args(fn, m, mb, g, out));
    DESO_TRY(check_args(fn, n, nb, g, out));
    int64_t extent[2] = {m, n};
    pl_fold fold[2] = {fold_of(mb), fold_of(nb)};
    pl_affine id = pl_affine_identity(2);
    return pl_placement_make(2, extent, NULL, 0u, &id, fold, g, out);
}

deso_err pl_placement_scalar(const pl_grid *g, pl_placement *out)
{
    DESO_TRY(check_args("pl_placement_scalar", 1, 0, g, out));
    int64_t extent[2] = {1, 1};
    pl_fold fold[2] = {fold_of(0), fold_of(0)};
    pl_affine id = pl_affine_identity(2);
    return pl_placement_make(2, extent, NULL, 3u, &id, fold, g, out);
}
