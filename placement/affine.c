/* Affine alignments f(i) = A i + t with unimodular integer A (d <= 3).    */
#include "placement/errors.h"
#include "placement/pl_arith.h"
#include "placement/placement.h"

#include <stddef.h>
#include <string.h>

pl_affine pl_affine_identity(int d)
{
    pl_affine f;
    memset(&f, 0, sizeof f);
    f.d = d;
    for (int k = 0; k < d && k < PL_MAXD; k++) f.A[k][k] = 1;
    return f;
}

pl_affine pl_affine_transpose(int d)
{
    pl_affine f;
    memset(&f, 0, sizeof f);
    f.d = d;
    if (d < 1 || d > PL_MAXD) return f;
    for (int k = 0; k < d; k++) f.A[k][d - 1 - k] = 1;
    return f;
}

/* The 2 x 2 minor of A without row r and column c (d == 3).              */
static bool minor3(const int64_t A[PL_MAXD][PL_MAXD], int r, int c,
                   int64_t *m)
{
    int r0 = r == 0 ? 1 : 0, r1 = r == 2 ? 1 : 2;
    int c0 = c == 0 ? 1 : 0, c1 = c == 2 ? 1 : 2;
    int64_t p, q;
    return pl__mul(A[r0][c0], A[r1][c1], &p) &&
           pl__mul(A[r0][c1], A[r1][c0], &q) && pl__sub(p, q, m);
}

/* Adjugate and determinant; false on overflow.                            */
static bool adjugate(const pl_affine *f, int64_t adj[PL_MAXD][PL_MAXD],
                     int64_t *det)
{
    const int64_t(*A)[PL_MAXD] = f->A;
    switch (f->d) {
    case 1:
        adj[0][0] = 1;
        *det = A[0][0];
        return true;
    case 2: {
        int64_t p, q;
        if (!pl__mul(A[0][0], A[1][1], &p) || !pl__mul(A[0][1], A[1][0], &q) ||
            !pl__sub(p, q, det))
            return false;
        adj[0][0] = A[1][1];
        adj[1][1] = A[0][0];
        /* Negating INT64_MIN overflows; such an A is never unimodular
         * without overflowing the determinant first, but stay defined.   */
        if (A[0][1] == INT64_MIN || A[1][0] == INT64_MIN) return false;
        adj[0][1] = -A[0][1];
        adj[1][0] = -A[1][0];
        return true;
    }
    case 3: {
        int64_t acc = 0;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                int64_t m;
                if (!minor3(A, r, c, &m)) return false;
                if ((r + c) % 2) {
                    if (m == INT64_MIN) return false;
                    m = -m;
                }
                adj[c][r] = m;       /* transpose of the cofactor matrix */
            }
        for (int c = 0; c < 3; c++)
            if (!pl__fma(acc, A[0][c], adj[c][0], &acc)) return false;
        *det = acc;
        return true;
    }
    default:
        return false;
    }
}

/* Validates d and unimodularity; fills the inverse's matrix if asked.     */
static deso_err check_unimodular(const char *fn, const pl_affine *f,
                                 int64_t inv[PL_MAXD][PL_MAXD])
{
    DESO_CHECK(f->d >= 1 && f->d <= PL_MAXD, DESO_EINVAL,
               "%s: d = %d outside 1..%d", fn, f->d, PL_MAXD);
    int64_t adj[PL_MAXD][PL_MAXD] = {{0}}, det = 0;
    DESO_CHECK(adjugate(f, adj, &det), DESO_EOVERFLOW,
               "%s: determinant of the alignment overflows int64", fn);
    DESO_CHECK(det == 1 || det == -1, DESO_ESINGULAR,
               "%s: alignment determinant %lld is not +1 or -1", fn,
               (long long)det);
    if (inv != NULL)      /* A^-1 = adj(A) / det and 1 / det == det here */
        for (int r = 0; r < f->d; r++)
            for (int c = 0; c < f->d; c++)
                DESO_CHECK(pl__mul(det, adj[r][c], &inv[r][c]),
                           DESO_EOVERFLOW, "%s: inverse overflows int64", fn);
    return DESO_OK;
}

deso_err pl_affine_make(int d, const int64_t *A, const int64_t *t,
                        pl_affine *out)
{
    DESO_CHECK(A != NULL && out != NULL, DESO_ENULL,
               "pl_affine_make: NULL argument");
    DESO_CHECK(d >= 1 && d <= PL_MAXD, DESO_EINVAL,
               "pl_affine_make: d = %d outside 1..%d", d, PL_MAXD);
    pl_affine f = pl_affine_identity(d);
    for (int r = 0; r < d; r++) {
        for (int c = 0; c < d; c++) f.A[r][c] = A[r * d + c];
        f.t[r] = t != NULL ? t[r] : 0;
    }
    DESO_TRY(check_unimodular("pl_affine_make", &f, NULL));
    *out = f;
    return DESO_OK;
}

deso_err pl_affine_compose(const pl_affine *f, const pl_affine *g,
                           pl_affine *out)
{
    DESO_CHECK(f != NULL && g != NULL && out != NULL, DESO_ENULL,
               "pl_affine_compose: NULL argument");
    DESO_CHECK(f->d == g->d && f->d >= 1 && f->d <= PL_MAXD, DESO_EINVAL,
               "pl_affine_compose: dimensionalities %d and %d (must be equal, "
               "1..%d)", f->d, g->d, PL_MAXD);
    int d = f->d;
    pl_affine h = pl_affine_identity(d);
    /* (f o g)(i) = Af (Ag i + tg) + tf = (Af Ag) i + (Af tg + tf)         */
    for (int r = 0; r < d; r++) {
        int64_t tr = f->t[r];
        for (int c = 0; c < d; c++) {
            int64_t s = 0;
            for (int k = 0; k < d; k++)
                DESO_CHECK(pl__fma(s, f->A[r][k], g->A[k][c], &s),
                           DESO_EOVERFLOW,
                           "pl_affine_compose: product overflows int64");
            h.A[r][c] = s;
            DESO_CHECK(pl__fma(tr, f->A[r][c], g->t[c], &tr), DESO_EOVERFLOW,
                       "pl_affine_compose: offset overflows int64");
        }
        h.t[r] = tr;
    }
    *out = h;
    return DESO_OK;
}

deso_err pl_affine_inverse(const pl_affine *f, pl_affine *out)
{
    DESO_CHECK(f != NULL && out != NULL, DESO_ENULL,
               "pl_affine_inverse: NULL argument");
    int64_t inv[PL_MAXD][PL_MAXD] = {{0}};
    DESO_TRY(check_unimodular("pl_affine_inverse", f, inv));
    int d = f->d;
    pl_affine h = pl_affine_identity(d);
    /* f^-1(j) = A^-1 (j - t) = A^-1 j - A^-1 t                            */
    for (int r = 0; r < d; r++) {
        int64_t s = 0;
        for (int c = 0; c < d; c++) {
            h.A[r][c] = inv[r][c];
            DESO_CHECK(pl__fma(s, inv[r][c], f->t[c], &s), DESO_EOVERFLOW,
                       "pl_affine_inverse: offset overflows int64");
        }
        DESO_CHECK(s != INT64_MIN, DESO_EOVERFLOW,
                   "pl_affine_inverse: offset overflows int64");
        h.t[r] = -s;
    }
    *out = h;
    return DESO_OK;
}

deso_err pl_affine_realign(const pl_affine *f, const pl_affine *g,
                           pl_affine *out)
{
    DESO_CHECK(f != NULL && g != NULL && out != NULL, DESO_ENULL,
               "pl_affine_realign: NULL argument");
    pl_affine finv;
    DESO_TRY(pl_affine_inverse(f, &finv));
    return pl_affine_compose(&finv, g, out);
}

void pl_affine_apply(const pl_affine *f, const int64_t *i, int64_t *out)
{
    if (f == NULL || i == NULL || out == NULL) return;
    int64_t v[PL_MAXD];
    for (int r = 0; r < f->d && r < PL_MAXD; r++) {
        /* Unsigned so that an overflow wraps instead of being UB; the
         * placement functions check their boxes map without overflow.    */
        uint64_t s = (uint64_t)f->t[r];
        for (int c = 0; c < f->d && c < PL_MAXD; c++)
            s += (uint64_t)f->A[r][c] * (uint64_t)i[c];
        v[r] = (int64_t)s;
    }
    for (int r = 0; r < f->d && r < PL_MAXD; r++) out[r] = v[r];
}

bool pl_affine_equal(const pl_affine *f, const pl_affine *g)
{
    if (f == NULL || g == NULL || f->d != g->d) return false;
    for (int r = 0; r < f->d && r < PL_MAXD; r++) {
        if (f->t[r] != g->t[r]) return false;
        for (int c = 0; c < f->d && c < PL_MAXD; c++)
            if (f->A[r][c] != g->A[r][c]) return false;
    }
    return true;
}

bool pl_affine_is_identity(const pl_affine *f)
{
    if (f == NULL || f->d < 1 || f->d > PL_MAXD) return false;
    pl_affine id = pl_affine_identity(f->d);
    return pl_affine_equal(f, &id);
}
