/* Loops in the pending DAG.
 *
 * A solver that never reads a scalar inside its loop (BiCGSTAB with lazy
 * scalars, a fixed number of iterations) would pile its calls up until
 * the DAG's size bound: thousands of nodes, whose optimisation costs far
 * more than their execution, and a new plan at every bound, since the
 * bound cuts the loop at a different call each time.  Instead, each call
 * recorded gets a signature (operation, flags, shape, the handles it
 * reads and writes, and for an operand produced in this DAG the distance
 * back to its producer, so that the same call in the next iteration
 * signs the same, even on a temporary the iteration made); when the DAG ends in whole repetitions of a period of
 * signatures, MIN_NODES nodes or PERIODS periods at least, it is forced
 * there, and that call's signature becomes the anchor: later DAGs are
 * forced at the call that signs as the anchor (once the same conditions
 * hold).  Every DAG after the first then starts right after the same call
 * of the loop and holds the same calls: the same graph, whose plan is
 * compiled and replayed.  (Cutting at whole periods alone would not do:
 * a DAG's first iteration signs differently from the next ones, since its
 * operands come from the previous DAG, so the repeating tail starts at a
 * different place in the first iteration than in the others.)
 *
 * The period is found without a search: a signature met before at
 * distance d proposes d, and d is kept while each new node equals the
 * node d before it.  A proposal is checked backwards, so the run of
 * matching nodes starts where the repetition really starts.  The
 * decision depends only on the recorded calls, so SPMD ranks force at the
 * same call, as they do at the size bound.                               */
#include "deso/runtime/runtime.h"

#define MAX_PERIOD 256        /* longer loops are left to the size bound  */
#define MIN_NODES 64          /* a force's fixed cost over enough work    */
#define PERIODS 3             /* repetitions seen before trusting a period */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* A handle made while this DAG was recorded (a loop's temporary) is
 * named by its distance back from the newest handle, which is the same
 * in every iteration; an older one by its id.                            */
static uint64_t handle_tag(const deso_ctx *ctx, uint64_t id)
{
    if (id < ctx->period.first_id) return id;
    return (1ull << 62) | (ctx->next_id - id);
}

/* Node nd's signature; `at` is its index in the pending DAG, tag[k] its
 * operand k's handle tag and tag[nops] its result's.                     */
static uint64_t signature(const deso__period *P, const deso__node *nd,
                          const uint64_t *tag, int32_t at)
{
    uint64_t h = mix(0x7065726full, ((uint64_t)nd->d.op << 32) | nd->d.flags);
    h = mix(h, (uint64_t)nd->res->m);
    h = mix(h, (uint64_t)nd->res->n);
    h = mix(h, (uint64_t)nd->d.off);      /* a view's place (else zeros)  */
    h = mix(h, (uint64_t)nd->d.inc);
    h = mix(h, (uint64_t)nd->d.len);
    for (int k = 0; k < nd->d.nops; k++) {
        const deso__value *v = nd->ops[k];
        bool here = v->born_gen == P->gen;
        h = mix(h, here ? (1ull << 63) | (uint64_t)(at - v->born) : tag[k]);
    }
    return mix(h, tag[nd->d.nops]);
}

static void tag_handles(const deso_ctx *ctx, const deso__node *nd,
                        const uint64_t *ids, uint64_t out_id, uint64_t *tag)
{
    for (int k = 0; k < nd->d.nops; k++) tag[k] = handle_tag(ctx, ids[k]);
    tag[nd->d.nops] = handle_tag(ctx, out_id);
}

static uint32_t slot_of(uint64_t sig)
{
    return (uint32_t)(sig >> 40) & (DESO__PERIOD_SLOTS - 1);
}

/* Where sig was last signed in this DAG, or -1.                          */
static int32_t last_seen(const deso__period *P, uint64_t sig)
{
    uint32_t s = slot_of(sig);
    for (int probe = 0; probe < DESO__PERIOD_SLOTS; probe++) {
        if (P->last[s].gen != P->gen) return -1;
        if (P->last[s].sig == sig)
            return P->last[s].at < P->n ? P->last[s].at : -1;
        s = (s + 1) & (DESO__PERIOD_SLOTS - 1);
    }
    return -1;
}

static void remember(deso__period *P, uint64_t sig, int32_t at)
{
    uint32_t s = slot_of(sig);
    while (P->last[s].gen == P->gen && P->last[s].sig != sig)
        s = (s + 1) & (DESO__PERIOD_SLOTS - 1);
    P->last[s].sig = sig;
    P->last[s].gen = P->gen;
    P->last[s].at = at;
}

/* How many nodes in a row, ending at node i, equal the node p before.    */
static int32_t run_length(const deso__period *P, int32_t i, int32_t p)
{
    int32_t r = 0;
    while (i - r - p >= 0 && P->sig[i - r] == P->sig[i - r - p]) r++;
    return r;
}

/* Signs node i and tells whether the DAG should be forced after it.      */
static bool sign(deso__period *P, const deso__node *nd, const uint64_t *tag,
                 int32_t i)
{
    uint64_t sig = signature(P, nd, tag, i);
    P->sig[i] = sig;
    if (P->p > 0 && P->sig[i - P->p] == sig) {
        P->rep++;
    } else {
        int32_t j = last_seen(P, sig);
        P->p = j >= 0 && i - j <= MAX_PERIOD ? i - j : 0;
        P->rep = P->p > 0 ? run_length(P, i, P->p) : 0;
    }
    remember(P, sig, i);
    int32_t span = P->rep + P->p;         /* the repeating tail's length  */
    int32_t least = P->p * PERIODS > MIN_NODES ? P->p * PERIODS : MIN_NODES;
    if (P->p == 0 || span < least) return false;
    /* the call that ended the last such force, else (a first loop, or
     * another one: its call did not come round in a whole period) the end
     * of a period                                                        */
    bool at_anchor = P->anchored && sig == P->anchor;
    bool whole = P->rep % P->p == 0 &&
                 (!P->anchored || span >= least + P->p);
    if (!at_anchor && !whole) return false;
    P->anchor = sig;
    P->anchored = true;
    return true;
}

/* A DAG's first DESO__PERIOD_LAZY calls only keep their handle tags (a
 * solver forcing every iteration, CG reading its residual, never gets
 * further); the call that fills them signs them all, in order.          */
bool deso__period_step(deso_ctx *ctx, deso__node *nd, const uint64_t *ids,
                       uint64_t out_id)
{
    deso__period *P = &ctx->period;
    if (ctx->nnodes == 1) {               /* a new DAG                    */
        P->gen = P->gen + 1 ? P->gen + 1 : 1;
        P->n = 0;
        P->p = P->rep = 0;
        P->first_id = ctx->next_id;
    }
    int32_t i = P->n;
    nd->res->born_gen = P->gen;
    nd->res->born = i;
    if (i >= DESO__PERIOD_WINDOW) return false;
    P->n++;
    if (i >= DESO__PERIOD_LAZY) {
        uint64_t tag[BLAS_MAXOPS + 1];
        tag_handles(ctx, nd, ids, out_id, tag);
        return sign(P, nd, tag, i);
    }
    tag_handles(ctx, nd, ids, out_id, P->tags[i]);
    if (i < DESO__PERIOD_LAZY - 1) return false;
    bool force = false;
    const deso__node *m = ctx->head;
    for (int32_t j = 0; j <= i; j++, m = m->next)
        force = sign(P, m, P->tags[j], j);
    return force;
}

void deso__period_undo(deso_ctx *ctx)
{
    deso__period *P = &ctx->period;
    if (P->n > 0 && P->n == ctx->nnodes + 1) P->n--;
    P->p = P->rep = 0;                    /* found again from the next    */
}
