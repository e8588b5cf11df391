/* Diagonal copy functions (paper 003, section 2.2) as per-dimension bit
 * pairs.  The algebra is a per-dimension state algebra, not literal set
 * composition (doc/DESIGN.md, "Copy-function algebra and its errata").    */
#include "placement/errors.h"
#include "placement/placement.h"

#include <stddef.h>

static unsigned dim_mask(int d)
{
    return (d >= 1 && d <= PL_MAXD) ? (1u << d) - 1u : 0u;
}

pl_copyfn pl_copyfn_identity(int d)
{
    pl_copyfn c = {d, dim_mask(d), dim_mask(d)};
    return c;
}

pl_copyfn pl_copyfn_replicated(int d, unsigned replicated)
{
    pl_copyfn c = {d, dim_mask(d), dim_mask(d) & ~replicated};
    return c;
}

pl_copyfn pl_copyfn_cancel(pl_copyfn a)
{
    unsigned m = dim_mask(a.d);
    unsigned same = ~(a.d1 ^ a.d2) & m;
    pl_copyfn c = {a.d, (a.d1 | same) & m, (a.d2 | same) & m};
    return c;
}

deso_err pl_copyfn_compose(pl_copyfn a, pl_copyfn b, pl_copyfn *out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "pl_copyfn_compose: out is NULL");
    DESO_CHECK(a.d >= 1 && a.d <= PL_MAXD, DESO_EINVAL,
               "pl_copyfn_compose: d = %d outside 1..%d", a.d, PL_MAXD);
    DESO_CHECK(a.d == b.d, DESO_EINVAL,
               "pl_copyfn_compose: dimensionalities differ (%d vs %d)", a.d,
               b.d);
    /* Inputs are cancelled first so that compose is a function of the
     * copy functions (Prop. 3 makes (0,0) and (1,1) equal), not of their
     * spelling.  Diagonal products D1 E1 and E2 D2 are bitwise ANDs.      */
    a = pl_copyfn_cancel(a);
    b = pl_copyfn_cancel(b);
    pl_copyfn c = {a.d, a.d1 & b.d1, b.d2 & a.d2};
    *out = pl_copyfn_cancel(c);
    return DESO_OK;
}

pl_copyfn pl_copyfn_inverse(pl_copyfn a)
{
    pl_copyfn c = {a.d, a.d2, a.d1};
    return c;
}

bool pl_copyfn_equal(pl_copyfn a, pl_copyfn b)
{
    pl_copyfn x = pl_copyfn_cancel(a), y = pl_copyfn_cancel(b);
    return x.d == y.d && x.d1 == y.d1 && x.d2 == y.d2;
}

deso_err pl_copyfn_exchange(pl_copyfn src, pl_copyfn sink,
                                  pl_copyfn *out)
{
    pl_copyfn r;
    deso_err e = pl_copyfn_compose(sink, pl_copyfn_inverse(src), &r);
    if (e != DESO_OK)
        return deso__fail(e, "pl_copyfn_exchange: source d = %d, "
                             "sink d = %d (each must be 1..%d and equal)",
                          src.d, sink.d, PL_MAXD);
    *out = r;
    return DESO_OK;
}

void pl_copyfn_classify(pl_copyfn r, pl_repl_step *steps)
{
    if (steps == NULL) return;
    pl_copyfn c = pl_copyfn_cancel(r);
    for (int k = 0; k < c.d && k < PL_MAXD; k++) {
        unsigned one = 1u << k;
        bool d1 = (c.d1 & one) != 0, d2 = (c.d2 & one) != 0;
        steps[k] = (d1 && !d2)   ? PL_STEP_BROADCAST
                   : (!d1 && d2) ? PL_STEP_COLLAPSE
                                 : PL_STEP_NONE;
    }
}
