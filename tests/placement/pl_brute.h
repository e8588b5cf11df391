/* The brute-force oracle of the placement tests: every claim a placement
 * makes (owners, locate, global, local shape, copies) is checked against a
 * scan of every rank's every local position, and against the folding
 * formulas computed here independently.                                  */
#ifndef DESO_TESTS_PL_BRUTE_H
#define DESO_TESTS_PL_BRUTE_H

#include "pl_test.h"

#include <stdlib.h>

extern int numroc_(const int *n, const int *nb, const int *iproc,
                   const int *isrcproc, const int *nprocs);

static inline bool pl_whole(const pl_placement *pl, int k)
{
    return ((pl->replicated >> k) & 1u) ||
           pl->fold[k].kind == PL_FOLD_COLLAPSED;
}

static inline int64_t pl_blk(const pl_placement *pl, int k)
{
    if (pl->fold[k].kind == PL_FOLD_CYCLIC) return pl->fold[k].b;
    int64_t T = pl->tmpl[k], g = pl->grid.dims[k];
    int64_t b = (T + g - 1) / g;
    return b < 1 ? 1 : b;
}

/* Advances a multi-index over box `ext`; false after the last one.        */
static inline bool pl_next(int d, const int64_t *ext, int64_t *x)
{
    for (int k = d - 1; k >= 0; k--) {
        if (++x[k] < ext[k]) return true;
        x[k] = 0;
    }
    return false;
}

/* tight: the template is exactly the image box (permutation, no offset),
 * so local counts sum to volume * copies.                                */
static inline void pl_brute_check(const pl_placement *pl, bool tight)
{
    int d = pl->d, P = pl_grid_size(&pl->grid);
    int64_t vol = 1, copies = 1;
    for (int k = 0; k < d; k++) {
        vol *= pl->extent[k];
        if (pl_whole(pl, k)) copies *= pl->grid.dims[k];
    }
    assert_int_equal(pl_placement_volume(pl), vol);
    assert_int_equal(pl_placement_copies(pl), copies);
    unsigned char *own = calloc((size_t)(vol * P) + 1, 1);
    assert_non_null(own);

    /* Scan every rank's local positions through pl_placement_global.     */
    int64_t held = 0, positions = 0;
    for (int r = 0; r < P; r++) {
        int c[PL_MAXD];
        int64_t ext[PL_MAXD], cnt, want = 1;
        EXPECT_OK(pl_grid_coords(&pl->grid, r, c));
        EXPECT_OK(pl_placement_local_shape(pl, r, ext, &cnt));
        for (int k = 0; k < d; k++) {
            int T = (int)pl->tmpl[k], nb = (int)pl_blk(pl, k), src = 0;
            int64_t e = pl_whole(pl, k)
                            ? T
                            : numroc_(&T, &nb, &c[k], &src, &pl->grid.dims[k]);
            assert_int_equal(ext[k], e);
            want *= e;
        }
        assert_int_equal(cnt, want);
        positions += cnt;
        if (cnt == 0) continue;
        int64_t x[PL_MAXD] = {0};
        do {
            int64_t i[PL_MAXD], loc[PL_MAXD];
            deso_err e = pl_placement_global(pl, r, x, i);
            if (e != DESO_OK) {
                assert_int_equal(e, DESO_EINVAL);
                assert_false(tight);             /* no holes when tight */
                continue;
            }
            int64_t flat = 0;
            for (int k = 0; k < d; k++) {
                assert_in_range(i[k], 0, pl->extent[k] - 1);
                flat = flat * pl->extent[k] + i[k];
            }
            assert_int_equal(own[flat * P + r], 0);  /* one position each */
            own[flat * P + r] = 1;
            held++;
            bool owns = false;
            EXPECT_OK(pl_placement_locate(pl, i, r, &owns, loc));
            assert_true(owns);
            for (int k = 0; k < d; k++) assert_int_equal(loc[k], x[k]);
        } while (pl_next(d, ext, x));
    }
    assert_int_equal(held, vol * copies);
    if (tight) assert_int_equal(positions, vol * copies);

    /* Every element: owners as claimed, in increasing order, matching the
     * scan; locate agrees for every rank; coordinates and local indices
     * follow the folding formulas applied to v = A i + t.                */
    if (vol > 0) {
        int64_t i[PL_MAXD] = {0};
        int *ranks = malloc(sizeof(int) * (size_t)P);
        assert_non_null(ranks);
        do {
            int64_t flat = 0, v[PL_MAXD];
            for (int k = 0; k < d; k++) flat = flat * pl->extent[k] + i[k];
            for (int k = 0; k < d; k++) {
                v[k] = pl->align.t[k];
                for (int j = 0; j < d; j++) v[k] += pl->align.A[k][j] * i[j];
                assert_in_range(v[k], 0, pl->tmpl[k] - 1);
            }
            int count = -1, n = 0;
            EXPECT_OK(pl_placement_owners(pl, i, ranks, P, &count));
            assert_int_equal(count, copies);
            for (int r = 0; r < P; r++) {
                bool owns = !own[flat * P + r];
                int64_t loc[PL_MAXD];
                EXPECT_OK(pl_placement_locate(pl, i, r, &owns, loc));
                assert_int_equal(owns, own[flat * P + r]);
                if (!owns) continue;
                assert_int_equal(ranks[n], r);   /* increasing, same set  */
                n++;
                int c[PL_MAXD];
                EXPECT_OK(pl_grid_coords(&pl->grid, r, c));
                for (int k = 0; k < d; k++) {
                    if (pl_whole(pl, k)) {
                        assert_int_equal(loc[k], v[k]);
                        continue;
                    }
                    int64_t b = pl_blk(pl, k), g = pl->grid.dims[k];
                    assert_int_equal(c[k], (v[k] / b) % g);
                    assert_int_equal(loc[k], (v[k] / (b * g)) * b + v[k] % b);
                }
            }
            assert_int_equal(n, count);
            int first = -1, c1 = 0;
            EXPECT_OK(pl_placement_owners(pl, i, &first, 1, &c1));
            assert_int_equal(c1, count);
            assert_int_equal(first, ranks[0]);
        } while (pl_next(d, pl->extent, i));
        free(ranks);
    }
    free(own);
}

#endif
