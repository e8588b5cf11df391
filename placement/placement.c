/* Placements: replication + alignment + folding + grid, and the maps
 * between array indices and (rank, local multi-index).
 *
 * Along a replicated or collapsed template dimension every grid coordinate
 * holds the whole dimension, so the local position there is v_k itself:
 * with the usual extent T_k = 1 this equals the folding's local index, and
 * for T_k > 1 it is the only choice that keeps local indices distinct.    */
#include "placement/errors.h"
#include "placement/pl_arith.h"
#include "placement/placement.h"

#include <stdio.h>
#include <string.h>

/* Re-raises the current error under the name of the calling function.     */
static deso_err refail(deso_err e, const char *fn)
{
    char inner[400];
    snprintf(inner, sizeof inner, "%s", deso_last_error());
    return deso__fail(e, "%s: %s", fn, inner);
}

static bool whole_dim(const pl_placement *pl, int k)
{
    return ((pl->replicated >> k) & 1u) ||
           pl->fold[k].kind == PL_FOLD_COLLAPSED;
}

/* Range of row k of A x + t over the box 0 <= x_j < e_j (every e_j >= 1). */
static bool row_range(const pl_affine *f, const int64_t *e, int k,
                      int64_t *lo, int64_t *hi)
{
    int64_t l = f->t[k], h = f->t[k];
    for (int j = 0; j < f->d; j++) {
        int64_t a = f->A[k][j];
        if (!pl__fma(a > 0 ? h : l, a, e[j] - 1, a > 0 ? &h : &l))
            return false;
    }
    *lo = l;
    *hi = h;
    return true;
}

/* Template extents: checks (explicit) or computes (NULL) them.           */
static deso_err template_extents(const int64_t *extent, const int64_t *tmpl,
                                 const pl_affine *f, int64_t volume,
                                 int64_t *out)
{
    const char *fn = "pl_placement_make";
    int d = f->d;
    for (int k = 0; k < d; k++) {
        if (tmpl != NULL)
            DESO_CHECK(tmpl[k] >= 0, DESO_ESIZE,
                       "%s: template extent %lld < 0 along dimension %d", fn,
                       (long long)tmpl[k], k);
        if (volume == 0) {
            /* No element to place.  Computed: a row that reads an empty
             * dimension gets extent 0 (so local counts are 0), the others
             * the usual image range.                                      */
            if (tmpl != NULL) {
                out[k] = tmpl[k];
                continue;
            }
            bool empty = false;
            int64_t e1[PL_MAXD];
            for (int j = 0; j < d; j++) {
                if (extent[j] == 0 && f->A[k][j] != 0) empty = true;
                e1[j] = extent[j] > 0 ? extent[j] : 1;
            }
            int64_t lo, hi;
            if (empty) {
                out[k] = 0;
                continue;
            }
            DESO_CHECK(row_range(f, e1, k, &lo, &hi) && hi < INT64_MAX,
                       DESO_EOVERFLOW, "%s: template overflows int64", fn);
            DESO_CHECK(lo >= 0, DESO_ESIZE,
                       "%s: alignment maps an index to %lld < 0 along "
                       "template dimension %d", fn, (long long)lo, k);
            out[k] = hi + 1;
            continue;
        }
        int64_t lo, hi;
        DESO_CHECK(row_range(f, extent, k, &lo, &hi) && hi < INT64_MAX,
                   DESO_EOVERFLOW, "%s: template overflows int64", fn);
        DESO_CHECK(lo >= 0, DESO_ESIZE,
                   "%s: alignment maps an index to %lld < 0 along template "
                   "dimension %d", fn, (long long)lo, k);
        if (tmpl == NULL) {
            out[k] = hi + 1;
        } else {
            DESO_CHECK(hi < tmpl[k], DESO_ESIZE,
                       "%s: alignment maps an index to %lld, outside template "
                       "extent %lld along dimension %d", fn, (long long)hi,
                       (long long)tmpl[k], k);
            out[k] = tmpl[k];
        }
    }
    return DESO_OK;
}

deso_err pl_placement_make(int d, const int64_t *extent, const int64_t *tmpl,
                           unsigned replicated, const pl_affine *align,
                           const pl_fold *fold, const pl_grid *grid,
                           pl_placement *out)
{
    const char *fn = "pl_placement_make";
    DESO_CHECK(extent != NULL && fold != NULL && grid != NULL && out != NULL,
               DESO_ENULL, "%s: NULL argument", fn);
    DESO_CHECK(d >= 1 && d <= PL_MAXD, DESO_EINVAL, "%s: d = %d outside 1..%d",
               fn, d, PL_MAXD);
    pl_placement pl;
    memset(&pl, 0, sizeof pl);
    pl.d = d;
    int64_t volume = 1;
    for (int k = 0; k < d; k++) {
        DESO_CHECK(extent[k] >= 0, DESO_ESIZE,
                   "%s: extent %lld < 0 along dimension %d", fn,
                   (long long)extent[k], k);
        DESO_CHECK(pl__mul(volume, extent[k], &volume), DESO_EOVERFLOW,
                   "%s: volume overflows int64", fn);
        pl.extent[k] = extent[k];
    }
    DESO_CHECK((replicated & ~((1u << d) - 1u)) == 0, DESO_EINVAL,
               "%s: replication bits 0x%x beyond d = %d", fn, replicated, d);
    pl.replicated = replicated;

    pl.align = align != NULL ? *align : pl_affine_identity(d);
    DESO_CHECK(pl.align.d == d, DESO_EINVAL,
               "%s: alignment has d = %d, placement d = %d", fn, pl.align.d,
               d);
    pl_affine inv;
    deso_err e = pl_affine_inverse(&pl.align, &inv);
    if (e != DESO_OK) return refail(e, fn);

    DESO_CHECK(grid->d == d, DESO_EGRID,
               "%s: grid has d = %d, placement d = %d", fn, grid->d, d);
    DESO_CHECK(pl_grid_size(grid) >= 1, DESO_EGRID,
               "%s: malformed grid (an extent < 1 or too many ranks)", fn);
    pl.grid = *grid;

    DESO_TRY(template_extents(pl.extent, tmpl, &pl.align, volume, pl.tmpl));
    for (int k = 0; k < d; k++) {
        e = pl_fold_check(fold[k], pl.tmpl[k], grid->dims[k]);
        if (e != DESO_OK) return refail(e, fn);
        pl.fold[k] = fold[k];
        if (fold[k].kind != PL_FOLD_CYCLIC) pl.fold[k].b = 0;
    }
    *out = pl;
    return DESO_OK;
}

pl_copyfn pl_placement_copyfn(const pl_placement *pl)
{
    if (pl == NULL) return pl_copyfn_identity(0);
    return pl_copyfn_replicated(pl->d, pl->replicated);
}

int64_t pl_placement_volume(const pl_placement *pl)
{
    int64_t v = 1;
    if (pl == NULL) return 0;
    for (int k = 0; k < pl->d; k++) v *= pl->extent[k];
    return v;
}

int64_t pl_placement_copies(const pl_placement *pl)
{
    int64_t c = 1;
    if (pl == NULL) return 0;
    for (int k = 0; k < pl->d; k++)
        if (whole_dim(pl, k)) c *= pl->grid.dims[k];
    return c;
}

/* Checks i against the extents and maps it into the template.             */
static deso_err to_template(const char *fn, const pl_placement *pl,
                            const int64_t *i, int64_t *v)
{
    DESO_CHECK(pl != NULL && i != NULL, DESO_ENULL, "%s: NULL argument", fn);
    DESO_CHECK(pl->d >= 1 && pl->d <= PL_MAXD, DESO_EINVAL,
               "%s: placement has d = %d (not made by pl_placement_make?)",
               fn, pl->d);
    for (int k = 0; k < pl->d; k++)
        DESO_CHECK(i[k] >= 0 && i[k] < pl->extent[k], DESO_EINVAL,
                   "%s: index %lld outside 0..%lld along dimension %d", fn,
                   (long long)i[k], (long long)pl->extent[k] - 1, k);
    pl_affine_apply(&pl->align, i, v);
    return DESO_OK;
}

deso_err pl_placement_owners(const pl_placement *pl, const int64_t *i,
                             int *ranks, int cap, int *count)
{
    const char *fn = "pl_placement_owners";
    int64_t v[PL_MAXD];
    DESO_TRY(to_template(fn, pl, i, v));
    DESO_CHECK(count != NULL && (ranks != NULL || cap <= 0), DESO_ENULL,
               "%s: NULL output", fn);
    int d = pl->d, first[PL_MAXD], span[PL_MAXD], total = 1;
    for (int k = 0; k < d; k++) {
        first[k] = 0;
        span[k] = pl->grid.dims[k];
        if (!whole_dim(pl, k)) {
            int64_t local;
            deso_err e = pl_fold_locate(pl->fold[k], pl->tmpl[k],
                                        pl->grid.dims[k], v[k], &first[k],
                                        &local);
            if (e != DESO_OK) return refail(e, fn);
            span[k] = 1;
        }
        total *= span[k];
    }
    /* The owners form a box of coordinates; walking it lexicographically
     * lists the ranks in increasing (row-major) order.                    */
    int c[PL_MAXD] = {0};
    for (int n = 0; n < total && n < cap; n++) {
        int r = 0;
        for (int k = 0; k < d; k++) r = r * pl->grid.dims[k] + first[k] + c[k];
        ranks[n] = r;
        for (int k = d - 1; k >= 0; k--) {
            if (++c[k] < span[k]) break;
            c[k] = 0;
        }
    }
    *count = total;
    return DESO_OK;
}

deso_err pl_placement_locate(const pl_placement *pl, const int64_t *i,
                             int rank, bool *owns, int64_t *local)
{
    const char *fn = "pl_placement_locate";
    int64_t v[PL_MAXD], loc[PL_MAXD];
    DESO_TRY(to_template(fn, pl, i, v));
    DESO_CHECK(owns != NULL, DESO_ENULL, "%s: owns is NULL", fn);
    int coords[PL_MAXD];
    deso_err e = pl_grid_coords(&pl->grid, rank, coords);
    if (e != DESO_OK) return refail(e, fn);
    bool mine = true;
    for (int k = 0; k < pl->d; k++) {
        if (whole_dim(pl, k)) {
            loc[k] = v[k];
            continue;
        }
        int coord;
        e = pl_fold_locate(pl->fold[k], pl->tmpl[k], pl->grid.dims[k], v[k],
                           &coord, &loc[k]);
        if (e != DESO_OK) return refail(e, fn);
        if (coord != coords[k]) mine = false;
    }
    *owns = mine;
    if (mine && local != NULL)
        for (int k = 0; k < pl->d; k++) local[k] = loc[k];
    return DESO_OK;
}

deso_err pl_placement_global(const pl_placement *pl, int rank,
                             const int64_t *local, int64_t *i)
{
    const char *fn = "pl_placement_global";
    DESO_CHECK(pl != NULL && local != NULL && i != NULL, DESO_ENULL,
               "%s: NULL argument", fn);
    int coords[PL_MAXD];
    deso_err e = pl_grid_coords(&pl->grid, rank, coords);
    if (e != DESO_OK) return refail(e, fn);
    int64_t v[PL_MAXD], x[PL_MAXD];
    for (int k = 0; k < pl->d; k++) {
        if (whole_dim(pl, k)) {
            DESO_CHECK(local[k] >= 0 && local[k] < pl->tmpl[k], DESO_EINVAL,
                       "%s: local index %lld outside 0..%lld along dimension "
                       "%d", fn, (long long)local[k],
                       (long long)pl->tmpl[k] - 1, k);
            v[k] = local[k];
            continue;
        }
        e = pl_fold_global(pl->fold[k], pl->tmpl[k], pl->grid.dims[k],
                           coords[k], local[k], &v[k]);
        if (e != DESO_OK) return refail(e, fn);
    }
    pl_affine inv;
    e = pl_affine_inverse(&pl->align, &inv);
    if (e != DESO_OK) return refail(e, fn);
    /* v is inside the template; A^-1 (v - t) may fall outside the array
     * (a skewed template has holes), which the range check catches.       */
    pl_affine_apply(&inv, v, x);
    for (int k = 0; k < pl->d; k++)
        DESO_CHECK(x[k] >= 0 && x[k] < pl->extent[k], DESO_EINVAL,
                   "%s: local index of rank %d holds no element (template "
                   "point maps to %lld along array dimension %d)", fn, rank,
                   (long long)x[k], k);
    for (int k = 0; k < pl->d; k++) i[k] = x[k];
    return DESO_OK;
}

deso_err pl_placement_local_shape(const pl_placement *pl, int rank,
                                  int64_t *local_extent, int64_t *local_count)
{
    const char *fn = "pl_placement_local_shape";
    DESO_CHECK(pl != NULL, DESO_ENULL, "%s: placement is NULL", fn);
    int coords[PL_MAXD];
    deso_err e = pl_grid_coords(&pl->grid, rank, coords);
    if (e != DESO_OK) return refail(e, fn);
    int64_t count = 1;
    for (int k = 0; k < pl->d; k++) {
        int64_t len = whole_dim(pl, k)
                          ? pl->tmpl[k]
                          : pl_fold_local_len(pl->fold[k], pl->tmpl[k],
                                              pl->grid.dims[k], coords[k]);
        if (local_extent != NULL) local_extent[k] = len;
        DESO_CHECK(pl__mul(count, len, &count), DESO_EOVERFLOW,
                   "%s: local count overflows int64", fn);
    }
    if (local_count != NULL) *local_count = count;
    return DESO_OK;
}
