/* Process-grid geometry: shapes and row-major rank <-> coordinates.        */
#include "placement/errors.h"
#include "placement/placement.h"

#include <limits.h>
#include <stddef.h>

static deso_err grid_valid(const char *fn, const pl_grid *g)
{
    DESO_CHECK(g != NULL, DESO_ENULL, "%s: grid is NULL", fn);
    DESO_CHECK(g->d >= 1 && g->d <= PL_MAXD, DESO_EGRID,
               "%s: grid dimensionality %d outside 1..%d", fn, g->d, PL_MAXD);
    for (int k = 0; k < g->d; k++)
        DESO_CHECK(g->dims[k] >= 1, DESO_EGRID,
                   "%s: grid extent %d along dimension %d < 1", fn,
                   g->dims[k], k);
    return DESO_OK;
}

deso_err pl_grid_2d(int P, int pr, int pc, pl_grid *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "pl_grid_2d: out is NULL");
    DESO_CHECK(P >= 1, DESO_EINVAL, "pl_grid_2d: P = %d < 1", P);
    DESO_CHECK(pr >= 0 && pc >= 0, DESO_EINVAL,
               "pl_grid_2d: negative extent %d x %d", pr, pc);
    if (pr == 0 && pc == 0) {
        /* Largest divisor not above sqrt(P): rows <= columns.              */
        pr = 1;
        for (int r = 1; (int64_t)r * r <= P; r++)
            if (P % r == 0) pr = r;
        pc = P / pr;
    } else if (pr == 0) {
        DESO_CHECK(P % pc == 0, DESO_EGRID,
                   "pl_grid_2d: %d columns do not divide P = %d", pc, P);
        pr = P / pc;
    } else if (pc == 0) {
        DESO_CHECK(P % pr == 0, DESO_EGRID,
                   "pl_grid_2d: %d rows do not divide P = %d", pr, P);
        pc = P / pr;
    }
    DESO_CHECK((int64_t)pr * pc == P, DESO_EGRID,
               "pl_grid_2d: grid %d x %d does not have P = %d ranks", pr, pc,
               P);
    pl_grid g = {.d = 2, .dims = {pr, pc}};
    for (int k = 2; k < PL_MAXD; k++) g.dims[k] = 1;
    *out = g;
    return DESO_OK;
}

deso_err pl_grid_make(int d, const int *dims, pl_grid *out)
{
    DESO_CHECK(dims != NULL && out != NULL, DESO_ENULL,
               "pl_grid_make: NULL argument");
    DESO_CHECK(d >= 1 && d <= PL_MAXD, DESO_EINVAL,
               "pl_grid_make: d = %d outside 1..%d", d, PL_MAXD);
    pl_grid g = {.d = d};
    int64_t size = 1;
    for (int k = 0; k < PL_MAXD; k++) {
        g.dims[k] = 1;
        if (k >= d) continue;
        DESO_CHECK(dims[k] >= 1, DESO_EINVAL,
                   "pl_grid_make: extent %d along dimension %d < 1", dims[k],
                   k);
        g.dims[k] = dims[k];
        size *= dims[k];
        /* Ranks are int (MPI's type), so the product must fit in one.      */
        DESO_CHECK(size <= INT_MAX, DESO_EOVERFLOW,
                   "pl_grid_make: grid has more than %d ranks", INT_MAX);
    }
    *out = g;
    return DESO_OK;
}

int pl_grid_size(const pl_grid *g)
{
    /* 0 for a malformed grid, so callers never loop over garbage ranks.   */
    if (g == NULL || g->d < 1 || g->d > PL_MAXD) return 0;
    int64_t size = 1;
    for (int k = 0; k < g->d; k++) {
        if (g->dims[k] < 1) return 0;
        size *= g->dims[k];
        if (size > INT_MAX) return 0;
    }
    return (int)size;
}

deso_err pl_grid_coords(const pl_grid *g, int rank, int *coords)
{
    DESO_TRY(grid_valid("pl_grid_coords", g));
    DESO_CHECK(coords != NULL, DESO_ENULL, "pl_grid_coords: coords is NULL");
    int size = pl_grid_size(g);
    DESO_CHECK(rank >= 0 && rank < size, DESO_EINVAL,
               "pl_grid_coords: rank %d outside 0..%d", rank, size - 1);
    for (int k = g->d - 1; k >= 0; k--) {
        coords[k] = rank % g->dims[k];
        rank /= g->dims[k];
    }
    return DESO_OK;
}

deso_err pl_grid_rank(const pl_grid *g, const int *coords, int *rank)
{
    DESO_TRY(grid_valid("pl_grid_rank", g));
    DESO_CHECK(coords != NULL && rank != NULL, DESO_ENULL,
               "pl_grid_rank: NULL argument");
    int r = 0;
    for (int k = 0; k < g->d; k++) {
        DESO_CHECK(coords[k] >= 0 && coords[k] < g->dims[k], DESO_EINVAL,
                   "pl_grid_rank: coordinate %d along dimension %d outside "
                   "0..%d", coords[k], k, g->dims[k] - 1);
        r = r * g->dims[k] + coords[k];
    }
    *rank = r;
    return DESO_OK;
}
