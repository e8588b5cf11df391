/* The counters of the performance log (log.h): per operation kind and per
 * kind of communication, calls, seconds, bytes and messages.  Per process,
 * like deso_stats, and never reset; io/log_view.c prints them.            */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/log.h"

typedef struct {
    int64_t calls, bytes, msgs;
    double time, kernel;
} log_row;

static log_row ops[BLAS_OP_COUNT];
static log_row comms[DESO__LOG_NKINDS];

void deso__log_op(int op, double seconds)
{
    if (op >= 0 && op < BLAS_OP_COUNT) ops[op].kernel += seconds;
}

void deso__log_comm(deso__log_kind kind, int64_t bytes, int64_t msgs,
                    double seconds)
{
    if ((int)kind < 0 || kind >= DESO__LOG_NKINDS) return;
    comms[kind].calls++;
    comms[kind].bytes += bytes;
    comms[kind].msgs += msgs;
    comms[kind].time += seconds;
}

void deso__log_coll(deso__log_kind kind, int64_t payload, int size,
                    int rank_in_comm, int factor, double t0)
{
    deso__log_coll_dt(kind, payload, size, rank_in_comm, factor,
                      deso__now() - t0);
}

void deso__log_coll_dt(deso__log_kind kind, int64_t payload, int size,
                       int rank_in_comm, int factor, double seconds)
{
    bool counts = rank_in_comm == 0;    /* deso__stats_collective's rule  */
    deso__log_comm(kind, counts ? payload * (int64_t)(size - 1) * factor : 0,
                   counts ? 1 : 0, seconds);
}

void deso__log_exchange(int nsend, const int64_t *count, double seconds)
{
    int64_t bytes = 0;
    for (int k = 0; k < nsend; k++) bytes += count[k] * (int64_t)sizeof(double);
    deso__log_comm(DESO__LOG_EXCHANGE, bytes, nsend, seconds);
}

/* (inline in deso__log_run, which every executed node goes through)    */
static inline void log_begin(deso_ctx *ctx, const deso__node *nd,
                             deso__log_mark *m)
{
    deso__stats_traffic(&m->bytes, &m->msgs);
    int w = m->weight = ctx->weight = deso__time_weight(ctx, nd);
    m->t0 = w > 0 ? deso__now() : 0.0;
}

static inline void log_end(const deso__node *nd, const deso__log_mark *m)
{
    int w = m->weight;
    double dt = w > 0 ? (deso__now() - m->t0) * w : 0.0;
    int64_t b1, m1;
    deso__stats_traffic(&b1, &m1);
    int op = (int)nd->d.op;
    if (op >= 0 && op < BLAS_OP_COUNT) {
        ops[op].calls++;
        ops[op].time += dt;
        ops[op].bytes += b1 - m->bytes;
        ops[op].msgs += m1 - m->msgs;
    }
}

void deso__log_begin(deso_ctx *ctx, const deso__node *nd, deso__log_mark *m)
{
    log_begin(ctx, nd, m);
}

void deso__log_end(const deso__node *nd, const deso__log_mark *m)
{
    log_end(nd, m);
}

void deso__log_calls(const deso__log_tally *t, int n)
{
    for (int k = 0; k < n; k++)
        if (t[k].op >= 0 && t[k].op < BLAS_OP_COUNT)
            ops[t[k].op].calls += t[k].calls;
}

void deso__log_time(int op, double seconds)
{
    if (op >= 0 && op < BLAS_OP_COUNT) ops[op].time += seconds;
}

deso_err deso__log_run(deso_ctx *ctx, const deso__node *nd,
                       deso_err (*run)(deso_ctx *, void *), void *arg)
{
    deso__log_mark m;
    log_begin(ctx, nd, &m);
    deso_err err = run(ctx, arg);
    log_end(nd, &m);
    return err;
}

typedef struct {
    deso__node *nd;
    const opt_place *pl;
    deso__view *rv;
} node_run;

static deso_err exec_node(deso_ctx *ctx, void *arg)
{
    node_run *r = arg;
    return deso__exec_node(ctx, r->nd, r->pl, r->rv);
}

deso_err deso__log_exec_node(deso_ctx *ctx, deso__node *nd,
                             const opt_place *pl, deso__view *rv)
{
    node_run r = {nd, pl, rv};
    return deso__log_run(ctx, nd, exec_node, &r);
}

deso_err deso__log_remap(deso_ctx *ctx, const deso__view *src,
                         deso__view *dst)
{
    int64_t b0, m0, b1, m1;
    deso__stats_traffic(&b0, &m0);
    double t0 = deso__now();
    deso_err err = deso__mat_remap(ctx, src, dst);
    double dt = deso__now() - t0;
    deso__stats_traffic(&b1, &m1);
    deso__log_comm(DESO__LOG_REMAP, b1 - b0, m1 - m0, dt);
    return err;
}

void deso__log_pack(double *t, long long *c)
{
    for (int k = 0; k < DESO__LOG_NROWS; k++) {
        const log_row *r =
            k < BLAS_OP_COUNT ? &ops[k] : &comms[k - BLAS_OP_COUNT];
        t[2 * k] = r->time;
        t[2 * k + 1] = r->kernel;
        c[3 * k] = r->calls;
        c[3 * k + 1] = r->bytes;
        c[3 * k + 2] = r->msgs;
    }
}
