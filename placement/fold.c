/* Folding of one template dimension onto one grid dimension: block,
 * cyclic(b) and collapsed, with ScaLAPACK's numroc for local lengths.     */
#include "placement/errors.h"
#include "placement/placement.h"

#include <stddef.h>

deso_err pl_fold_check(pl_fold f, int64_t n, int p)
{
    DESO_CHECK(n >= 0, DESO_ESIZE, "pl_fold_check: extent %lld < 0",
               (long long)n);
    DESO_CHECK(p >= 1, DESO_EINVAL, "pl_fold_check: %d coordinates < 1", p);
    switch (f.kind) {
    case PL_FOLD_BLOCK:
    case PL_FOLD_COLLAPSED:
        return DESO_OK;
    case PL_FOLD_CYCLIC:
        DESO_CHECK(f.b >= 1, DESO_EINVAL,
                   "pl_fold_check: cyclic block size %lld < 1",
                   (long long)f.b);
        return DESO_OK;
    }
    return deso__fail(DESO_EINVAL, "pl_fold_check: unknown folding kind %d",
                      (int)f.kind);
}

int64_t pl_fold_block(pl_fold f, int64_t n, int p)
{
    if (pl_fold_check(f, n, p) != DESO_OK) return 0;
    switch (f.kind) {
    case PL_FOLD_BLOCK: {
        int64_t b = n / p + (n % p != 0);
        return b > 1 ? b : 1;
    }
    case PL_FOLD_CYCLIC:
        return f.b;
    case PL_FOLD_COLLAPSED:
        return n;
    }
    return 0;
}

int64_t pl_numroc(int64_t n, int64_t nb, int iproc, int isrc, int nprocs)
{
    if (n < 0 || nb < 1 || nprocs < 1) return 0;
    /* Distance from the source coordinate, taken modulo nprocs.           */
    int64_t dist = ((int64_t)iproc - isrc) % nprocs;
    if (dist < 0) dist += nprocs;
    int64_t nblocks = n / nb;
    int64_t len = (nblocks / nprocs) * nb;
    int64_t extra = nblocks % nprocs;
    if (dist < extra)
        len += nb;
    else if (dist == extra)
        len += n % nb;
    return len;
}

int64_t pl_fold_local_len(pl_fold f, int64_t n, int p, int coord)
{
    if (pl_fold_check(f, n, p) != DESO_OK || coord < 0 || coord >= p)
        return 0;
    if (f.kind == PL_FOLD_COLLAPSED) return n;
    return pl_numroc(n, pl_fold_block(f, n, p), coord, 0, p);
}

deso_err pl_fold_locate(pl_fold f, int64_t n, int p, int64_t i, int *coord,
                        int64_t *local)
{
    DESO_CHECK(coord != NULL && local != NULL, DESO_ENULL,
               "pl_fold_locate: NULL argument");
    DESO_TRY(pl_fold_check(f, n, p));
    DESO_CHECK(i >= 0 && i < n, DESO_EINVAL,
               "pl_fold_locate: index %lld outside 0..%lld", (long long)i,
               (long long)n - 1);
    if (f.kind == PL_FOLD_COLLAPSED) {
        *coord = 0;
        *local = i;
        return DESO_OK;
    }
    int64_t b = pl_fold_block(f, n, p);
    int64_t blk = i / b;
    *coord = (int)(blk % p);
    /* (blk / p) * b rather than i / (b * p): b * p may overflow.          */
    *local = (blk / p) * b + i % b;
    return DESO_OK;
}

deso_err pl_fold_global(pl_fold f, int64_t n, int p, int coord, int64_t local,
                        int64_t *i)
{
    DESO_CHECK(i != NULL, DESO_ENULL, "pl_fold_global: i is NULL");
    DESO_TRY(pl_fold_check(f, n, p));
    DESO_CHECK(coord >= 0 && coord < p, DESO_EINVAL,
               "pl_fold_global: coordinate %d outside 0..%d", coord, p - 1);
    int64_t len = pl_fold_local_len(f, n, p, coord);
    DESO_CHECK(local >= 0 && local < len, DESO_EINVAL,
               "pl_fold_global: local index %lld outside 0..%lld at "
               "coordinate %d", (long long)local, (long long)len - 1, coord);
    if (f.kind == PL_FOLD_COLLAPSED) {
        *i = local;
        return DESO_OK;
    }
    int64_t b = pl_fold_block(f, n, p);
    /* In range by the check above, so no intermediate exceeds n.          */
    *i = ((local / b) * p + coord) * b + local % b;
    return DESO_OK;
}
