/* One dimension of a block-cyclic remap described per period
 * (doc/DESIGN.md, "One dimension: period and message
 * matrix"): the pieces position a of
 * CYCLIC(r) on P shares with position c of CYCLIC(s) on Q, for one period
 * of L = lcm(P r, Q s) elements only, as arithmetic progressions of equal
 * pieces, plus the number of whole periods and the rest.  Element x + L
 * lives where x does, L / P further on the source and L / Q further on the
 * target, so one period describes the whole extent.
 *
 * Inside a period the pieces come from walking the blocks of whichever
 * side has fewer of them there: the other side's blocks met by one walked
 * block are a progression (a partial first, equal middles, a partial
 * last), so the cost is O(min(L / (P r), L / (Q s))) whatever the extent:
 * a block -> cyclic(1) remap of 2^24 elements is three progressions.     */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"
#include "placement/pl_arith.h"
#include "placement/remap.h"
#include "placement/remap_impl.h"

/* One block structure: `np` positions of blocks of `b`, this one `pos`.  */
typedef struct bside {
    int64_t np, b, pos;
} bside;

static int64_t local_of(const bside *S, int64_t x)
{
    return x / S->b / S->np * S->b + x % S->b;
}

/* The distance between a position's blocks; saturates, since a block may
 * be as long as the extent and np b then exceeds int64.                  */
static int64_t stride_of(const bside *S)
{
    int64_t T;
    return pl__mul(S->np, S->b, &T) ? T : INT64_MAX;
}

/* Where the position's first block starts (saturating likewise).         */
static int64_t first_of(const bside *S)
{
    int64_t f;
    return pl__mul(S->pos, S->b, &f) ? f : INT64_MAX;
}

/* A piece that continues the last progression on every side (global,
 * mine, theirs) lengthens it instead.                                    */
bool pl__seq_push(pl__seqbuf *B, pl_seq x)
{
    if (B->n > 0) {
        pl_seq *l = &B->v[B->n - 1];
        if (l->cnt == 1 && x.cnt == 1 && l->g + l->len == x.g &&
            l->mine + l->len == x.mine && l->theirs + l->len == x.theirs) {
            l->len += x.len;
            return true;
        }
        if (l->len == x.len && x.cnt == 1 &&
            (l->cnt == 1 || (x.g - l->g == l->cnt * l->dg &&
                             x.mine - l->mine == l->cnt * l->dmine &&
                             x.theirs - l->theirs == l->cnt * l->dtheirs))) {
            if (l->cnt == 1) {
                l->dg = x.g - l->g;
                l->dmine = x.mine - l->mine;
                l->dtheirs = x.theirs - l->theirs;
            }
            l->cnt++;
            return true;
        }
    }
    if (B->n == B->cap) {
        int64_t nc = B->cap ? 2 * B->cap : 8;
        pl_seq *v = deso__realloc(B->v, (size_t)nc * sizeof *v);
        if (!v) return false;
        B->v = v;
        B->cap = nc;
    }
    B->v[B->n++] = x;
    return true;
}

/* A piece [x0, x1) and the progression of `cnt` pieces it starts (global
 * step dg, walked-side step dw, other-side step dothr), as seen from side
 * a (`flip`: the walked side is c).                                      */
static bool piece(pl__seqbuf *B, const bside *W, const bside *O, bool flip,
                  int64_t x0, int64_t x1, int64_t cnt)
{
    int64_t T = stride_of(O);
    int64_t lw = local_of(W, x0), lo = local_of(O, x0);
    pl_seq q = { .g = x0, .len = x1 - x0, .cnt = cnt, .dg = cnt > 1 ? T : 0 };
    q.mine = flip ? lo : lw;
    q.theirs = flip ? lw : lo;
    q.dmine = cnt > 1 ? (flip ? O->b : T) : 0;
    q.dtheirs = cnt > 1 ? (flip ? T : O->b) : 0;
    return pl__seq_push(B, q);
}

/* The pieces of the walked block [w0, w1) with the other side's blocks. */
static bool one_block(pl__seqbuf *B, const bside *W, const bside *O,
                      bool flip, int64_t w0, int64_t w1)
{
    int64_t T = stride_of(O), first = first_of(O);
    if (w1 <= first) return true;
    int64_t jf = w0 - first < O->b ? 0 : (w0 - first - O->b) / T + 1;
    int64_t jl = (w1 - first - 1) / T;
    if (jf > jl) return true;
    int64_t s0 = jf * T + first, sl = jl * T + first;
    int64_t h1 = w1 - s0 > O->b ? s0 + O->b : w1;
    if (!piece(B, W, O, flip, s0 > w0 ? s0 : w0, h1, 1)) return false;
    if (jl == jf) return true;
    if (jl - jf >= 2 &&
        !piece(B, W, O, flip, s0 + T, s0 + T + O->b, jl - jf - 1))
        return false;
    return piece(B, W, O, flip, sl, w1 - sl > O->b ? sl + O->b : w1, 1);
}

/* Walks the blocks of W that start in [0, E).                            */
static bool walk(pl__seqbuf *B, const bside *W, const bside *O, bool flip,
                 int64_t E)
{
    int64_t T = stride_of(W);
    for (int64_t w0 = first_of(W); w0 < E; w0 += T) {
        int64_t w1 = E - w0 > W->b ? w0 + W->b : E;
        if (!one_block(B, W, O, flip, w0, w1)) return false;
        if (T > E - w0) break;
    }
    return true;
}

/* Elements of q that lie below x.                                         */
int64_t pl_seq_clip(const pl_seq *q, int64_t x, int64_t *npieces,
                     int64_t *lastlen)
{
    *npieces = 0;
    *lastlen = 0;
    if (x <= q->g) return 0;
    int64_t n = q->cnt == 1 ? 1 : (x - q->g - 1) / q->dg + 1;
    if (n > q->cnt) n = q->cnt;
    int64_t start = q->g + (n - 1) * q->dg;
    int64_t last = x - start < q->len ? x - start : q->len;
    *npieces = n;
    *lastlen = last;
    return (n - 1) * q->len + last;
}

void pl_dim_free(pl_dim *d)
{
    if (!d) return;
    free(d->seq);
    memset(d, 0, sizeof *d);
}

/* L = lcm(P r, Q s), or 0 when it does not fit in int64.                 */
static int64_t period_of(int P, int64_t r, int Q, int64_t s)
{
    int64_t Pr, Qs, L;
    if (!pl__mul(P, r, &Pr) || !pl__mul(Q, s, &Qs)) return 0;
    if (!pl__mul(Pr / pl__gcd64(Pr, Qs), Qs, &L)) return 0;
    return L;
}

/* One position on both sides (a vector's columns, a one-row grid's
 * rows): every element keeps its index on both sides, so [0, M) is one
 * piece, described once without periods and without walking blocks.    */
static deso_err one_piece(int64_t M, pl_dim *out)
{
    out->seq = deso__malloc(sizeof *out->seq);
    if (!out->seq) return deso__fail(DESO_ENOMEM, "pl_dim_make: no memory");
    out->seq[0] = (pl_seq){ .len = M, .cnt = 1 };
    out->nseq = 1;
    out->span = out->rem = out->per = out->count = M;
    return DESO_OK;
}

deso_err pl_dim_make(int64_t M, int P, int64_t r, int a, int Q, int64_t s,
                     int c, pl_dim *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "pl_dim_make: out is NULL");
    memset(out, 0, sizeof *out);
    DESO_CHECK(M >= 0 && P >= 1 && Q >= 1 && r >= 1 && s >= 1 && a >= 0 &&
               a < P && c >= 0 && c < Q, DESO_EINVAL,
               "pl_dim_make: extent %lld, cyclic(%lld) position %d of %d -> "
               "cyclic(%lld) position %d of %d", (long long)M, (long long)r,
               a, P, (long long)s, c, Q);
    if (P == 1 && Q == 1 && M > 0) return one_piece(M, out);
    int64_t L = period_of(P, r, Q, s);
    bool whole = L > 0 && L <= M;
    int64_t E = whole ? L : M;
    bside A = { P, r, a }, C = { Q, s, c };
    /* Blocks of each side in [0, E); walk the side with fewer.           */
    bool flip = E / Q / s < E / P / r;
    pl__seqbuf B = { 0 };
    if (!(flip ? walk(&B, &C, &A, true, E) : walk(&B, &A, &C, false, E))) {
        free(B.v);
        return deso__fail(DESO_ENOMEM, "pl_dim_make: no memory");
    }
    out->seq = B.v;
    out->nseq = B.n;
    out->span = E;
    out->full = whole ? M / L : 0;
    out->rem = whole ? M % L : M;
    out->dg = whole ? L : 0;
    out->dmine = whole ? L / P : 0;
    out->dtheirs = whole ? L / Q : 0;
    for (int64_t i = 0; i < B.n; i++) out->per += B.v[i].cnt * B.v[i].len;
    int64_t tail = 0, np, ll;
    for (int64_t i = 0; i < B.n; i++)
        tail += pl_seq_clip(&B.v[i], out->rem, &np, &ll);
    out->count = out->full * out->per + tail;
    return DESO_OK;
}

bool pl_dim_next(pl_dim_it *it, int64_t *g, int64_t *mine, int64_t *theirs,
                 int64_t *len)
{
    const pl_dim *d = it->d;
    while (it->p <= d->full) {
        if (it->i >= d->nseq) {
            it->p++;
            it->i = it->j = 0;
            continue;
        }
        const pl_seq *q = &d->seq[it->i];
        int64_t n = q->cnt, last = q->len;
        /* The last pass is the cut one (the only one when full = 0).    */
        if (it->p == d->full) pl_seq_clip(q, d->rem, &n, &last);
        if (it->j >= n) {
            it->i++;
            it->j = 0;
            continue;
        }
        *g = q->g + it->j * q->dg + it->p * d->dg;
        *mine = q->mine + it->j * q->dmine + it->p * d->dmine;
        *theirs = q->theirs + it->j * q->dtheirs + it->p * d->dtheirs;
        *len = it->p == d->full && it->j == n - 1 ? last : q->len;
        it->j++;
        return true;
    }
    return false;
}
