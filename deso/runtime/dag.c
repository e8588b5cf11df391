/* Recording: a call becomes a DAG node; nothing executes here.
 *
 * Every recorded call also feeds a running hash (operation, flags, sizes,
 * the ids of the handles involved; never data), compared across ranks at
 * the next force point to detect ranks that recorded different sequences. */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "deso/runtime/record.h"
#include "deso/runtime/replay.h"

deso_sarg deso_sarg_scalar(const deso_scalar *s)
{
    deso_sarg a = {s, 0.0, 1};
    return a;
}

deso_sarg deso_sarg_double(double v)
{
    deso_sarg a = {NULL, v, 0};
    return a;
}

/* The value of constant x: a kept one (the same bits: -0.0 is not 0.0),
 * else a new one, kept in place of the oldest when the table is full.
 * Every rank makes the same calls, so the table is the same everywhere
 * (a failure on one rank fails the next force's agreement, which empties
 * it everywhere), and a loop's constants stay the same values from one
 * force to the next (the compiled force's live-ins).                     */
deso__value *deso__const_find(const deso_ctx *ctx, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    for (int k = 0; k < ctx->nconsts; k++)
        if (ctx->consts[k].bits == bits) return ctx->consts[k].v;
    return NULL;
}

static deso_err const_value(deso_ctx *ctx, double x, deso__value **out)
{
    *out = deso__const_find(ctx, x);
    if (*out != NULL) return DESO_OK;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    deso__value *v;
    DESO_TRY(deso__value_const(ctx, x, &v));
    deso__value_ref(v);                     /* the table's reference       */
    int at;
    if (ctx->nconsts < DESO__CONSTS) {
        at = ctx->nconsts++;
    } else {                      /* pending readers keep the old one alive */
        at = ctx->next_const;
        ctx->next_const = (at + 1) % DESO__CONSTS;
        deso__value_unref(ctx->consts[at].v);
    }
    ctx->consts[at].bits = bits;
    ctx->consts[at].v = v;
    *out = v;
    return DESO_OK;
}

deso_err deso__sarg_value(deso_ctx **ctx, deso_sarg a, deso__value **out,
                          uint64_t *id, const char *fn, const char *arg)
{
    if (a.lazy) {
        DESO_CHECK(a.s != NULL, DESO_ENULL, "%s: %s is NULL", fn, arg);
        DESO_TRY(deso__handle_check(&a.s->h, BLAS_SCA, ctx, fn, arg));
        DESO_TRY(deso__value_usable(a.s->h.val, fn));
        *out = a.s->h.val;
        *id = a.s->h.id;
        return DESO_OK;
    }
    DESO_CHECK(*ctx != NULL, DESO_EINTERNAL, "%s: no context", fn);
    *id = 0;
    return const_value(*ctx, a.v, out);
}

void deso__consts_clear(deso_ctx *ctx)
{
    for (int k = 0; k < ctx->nconsts; k++) deso__value_unref(ctx->consts[k].v);
    ctx->nconsts = ctx->next_const = 0;
}

/* Recording time is sampled: one call in DESO__TIME_SAMPLE is timed and
 * counts for all of them, since two clock readings per call would cost
 * more than the call itself.                                              */
deso_err deso__record(deso_ctx *ctx, blas_op op, unsigned flags,
                      deso__value **ops, const uint64_t *ids,
                      deso__handle *out, const int64_t *shape)
{
    blas_desc dd = {.op = op, .flags = flags};
    return deso__record_desc(ctx, &dd, ops, ids, out, shape);
}

deso_err deso__record_desc(deso_ctx *ctx, const blas_desc *d,
                           deso__value **ops, const uint64_t *ids,
                           deso__handle *out, const int64_t *shape)
{
    return deso__record_sparse(ctx, d, ops, ids, out, shape, NULL);
}

deso_err deso__record_sparse(deso_ctx *ctx, const blas_desc *d,
                             deso__value **ops, const uint64_t *ids,
                             deso__handle *out, const int64_t *shape,
                             deso__spmat_data *sp)
{
    if (ctx->rp != NULL && deso__replay_call(ctx, d, ops, ids, out, shape, sp))
        return DESO_OK;
    return deso__record_node(ctx, d, ops, ids, out, shape, sp, NULL);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

uint64_t deso__call_hash(const blas_desc *d, const int64_t *shape,
                         const uint64_t *ids, int nops, uint64_t sp,
                         uint64_t out)
{
    uint64_t h = mix(0xcbf29ce484222325ull, ((uint64_t)d->op << 32) | d->flags);
    h = mix(h, (uint64_t)shape[0]);
    h = mix(h, (uint64_t)shape[1]);
    if (blas_desc_params(d->op)) {
        h = mix(h, (uint64_t)d->off);
        h = mix(h, (uint64_t)d->inc);
        h = mix(h, (uint64_t)d->len);
        h = mix(h, (uint64_t)d->rows);
        h = mix(h, (uint64_t)d->ld);
    }
    for (int k = 0; k < nops; k++) h = mix(h, ids[k]);
    if (sp != 0) h = mix(h, sp);
    return mix(h, out);
}

void deso__hash_call(deso_ctx *ctx, const blas_desc *d, const int64_t *shape,
                     const uint64_t *ids, int nops, const deso__spmat_data *sp,
                     uint64_t out)
{
    deso__hash_mix(ctx, deso__call_hash(d, shape, ids, nops,
                                        sp != NULL ? sp->id : 0, out));
}

void deso__hash_alias(deso_ctx *ctx, uint64_t id, uint64_t out)
{
    deso__hash_mix(ctx, 0x736574u);
    deso__hash_mix(ctx, id);
    deso__hash_mix(ctx, out);
}

deso_err deso__record_node(deso_ctx *ctx, const blas_desc *d,
                           deso__value **ops, const uint64_t *ids,
                           deso__handle *out, const int64_t *shape,
                           deso__spmat_data *sp, deso__value *given)
{
    blas_op op = d->op;
    unsigned flags = d->flags;
    blas_desc dd = *d;
    bool timed = given == NULL && deso__sample(&ctx->recorded);
    double t0 = timed ? deso__now() : 0.0;
    const blas_op_info *info = blas_op_get(op);
    DESO_CHECK(info != NULL, DESO_EINTERNAL, "record: unknown op %d", op);
    int nops = blas_desc_nops(op, flags);
    deso_err err = DESO_OK;
    for (int k = 0; k < nops && err == DESO_OK; k++)
        err = deso__value_usable(ops[k], info->name);
    for (int k = 0; k < nops && err == DESO_OK; k++)
        if (ops[k]->ooc && op != BLAS_OP_GEMV && op != BLAS_OP_GER)
            err = deso__fail(DESO_ENOTSUP, "%s: the matrix is out of core, "
                             "and only dgemv, dsymv, dtrmv, dger, dsyr and "
                             "dsyr2 stream one (a triangular solve needs "
                             "square cyclic blocks, which an out-of-core "
                             "matrix is never remapped to, and reads a "
                             "block row per diagonal block, which its "
                             "column-major file gives only by rereading it)",
                             info->name);
    deso__node *nd = NULL;
    deso__value *res = NULL;
    if (err == DESO_OK) {
        nd = deso__node_take();
        res = nd == NULL    ? NULL
              : given != NULL ? given
                              : deso__value_new(blas_desc_result(&dd),
                                                shape[0], shape[1]);
        if (res == NULL)
            err = deso__fail(DESO_ENOMEM, "%s: out of memory", info->name);
    }
    if (err != DESO_OK) {
        if (nd != NULL) deso__node_put(nd);
        /* constants made for this call belong to nobody yet              */
        for (int k = 0; k < nops; k++) deso__value_sink(ops[k]);
        return err;
    }
    nd->d.op = op;
    nd->d.flags = flags;
    nd->d.nops = nops;
    nd->d.off = dd.off;
    nd->d.inc = dd.inc;
    nd->d.len = dd.len;
    nd->d.rows = dd.rows;
    nd->d.ld = dd.ld;
    nd->d.sp = dd.sp;
    nd->sp = sp;
    if (sp != NULL) sp->refs++;           /* its values stay until it ran */
    nd->work = shape[0] * shape[1];
    for (int k = 0; k < nops; k++) {
        nd->ops[k] = ops[k];
        nd->work += ops[k]->m * ops[k]->n;
        deso__value_ref(ops[k]);
    }
    nd->res = res;
    /* an update of an out-of-core matrix is out of core                  */
    res->ooc = info->result == BLAS_MAT && info->inout >= 0 &&
               info->inout < nops && ops[info->inout]->ooc;
    deso__value_ref(res);                 /* the node's own reference     */
    deso__value_unref(out->val);          /* the handle moves on          */
    out->val = res;
    res->hid = out->id;
    deso__value_ref(res);
    if (ctx->tail) ctx->tail->next = nd;
    else ctx->head = nd;
    ctx->tail = nd;
    ctx->nnodes++;

    bool loop = deso__period_step(ctx, nd, ids, out->id);
    /* a replayed call made into a node: hashed and logged when replayed,
     * and never a force (too few calls for a loop, below the size bound) */
    if (given != NULL) return DESO_OK;
    deso__hash_call(ctx, &dd, shape, ids, nops, sp, out->id);
    deso__replay_log(ctx, d, ops, ids, out, shape, sp);
    if (timed)
        deso__stats_time(DESO_T_OVERHEAD,
                         DESO__TIME_SAMPLE * (deso__now() - t0));

    /* the size bound, or whole periods of a loop (period.c): the DAG
     * flushes itself (at the same call on every rank, so this force is
     * collective like any other)                                          */
    if (ctx->nnodes >= ctx->max_nodes || loop) {
        ctx->record_force = true;
        deso_err ferr = deso__force(ctx);
        ctx->record_force = false;
        return ferr;
    }
    return DESO_OK;
}

void deso__value_sink(deso__value *v)
{
    if (v != NULL && v->refs == 0) {
        v->refs = 1;
        deso__value_unref(v);
    }
}

bool deso__record_undo(deso_ctx *ctx, deso__handle *out, deso__value *old,
                       uint64_t hash)
{
    if (ctx->rp != NULL) deso__replay_break(ctx);  /* its node, made        */
    deso__node *nd = ctx->tail;
    if (nd == NULL || nd->res != out->val) return false;
    deso__node **pp = &ctx->head;
    deso__node *prev = NULL;
    while (*pp != nd) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    *pp = NULL;
    ctx->tail = prev;
    ctx->nnodes--;
    deso__period_undo(ctx);
    deso__node_free(nd);
    deso__value_ref(old);
    deso__value_unref(out->val);          /* the handle's reference        */
    out->val = old;
    ctx->hash = hash;
    return true;
}

void deso__node_free(deso__node *nd)
{
    deso__spmat_data_free(nd->sp);        /* the node's reference         */
    for (int k = 0; k < nd->d.nops; k++) deso__value_unref(nd->ops[k]);
    deso__value_unref(nd->res);           /* the node's reference          */
    deso__node_put(nd);
}

void deso__dag_drop(deso_ctx *ctx, deso_err why)
{
    deso__node *nd = ctx->head;
    while (nd != NULL) {
        deso__node *next = nd->next;
        nd->res->poison = why;
        deso__node_free(nd);
        nd = next;
    }
    ctx->head = ctx->tail = NULL;
    ctx->nnodes = 0;
}
