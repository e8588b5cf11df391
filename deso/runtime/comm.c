/* The runtime's counted communication: the reductions, broadcasts and
 * point-to-point exchanges of the executor, data.c and the I/O layer, the
 * SPMD check and the error agreement go through here, and are counted in
 * deso_stats and the performance log by the rules of doc/DESIGN.md,
 * "Counting bytes and messages": collectives count once per communicator
 * (its rank 0), bytes = payload x (ranks - 1), doubled for all-reduce;
 * every point-to-point send counts one message and its payload.
 * Not everything calls MPI here.  The remap engine (deso/remap/) sends its
 * own messages and counts them itself (matrix remaps included).  Set-up
 * and measurement call MPI directly and are not counted: the options
 * agreement (options_agree.c, deso/core/agree.c), the alpha-beta probe
 * (probe.c), wisdom files (deso/io/wisdom_io.c), the Matrix Market error
 * message (deso/io/mtx_load.c) and the log's table (deso/io/log_view.c). */
#include <stdlib.h>

#include "deso/core/agree.h"
#include "deso/runtime/runtime.h"
#include "deso/runtime/log.h"
#include "placement/alloc.h"

static void comm_shape(MPI_Comm comm, int *size, int *rank)
{
    MPI_Comm_size(comm, size);
    MPI_Comm_rank(comm, rank);
}

/* The all-reduce realises "reduce to coordinate 0, then broadcast" in one
 * call (paper 003's all-reduce = reduce + broadcast; the factor 2 counts
 * both halves).                                                            */
deso_err deso__allreduce(deso_ctx *ctx, MPI_Comm comm, double *buf,
                         int64_t len, deso__redop op)
{
    int size, rank, n;
    comm_shape(comm, &size, &rank);
    if (size == 1) return DESO_OK;
    DESO_TRY(deso__to_int(op == DESO__MAXLOC ? len / 2 : len,
                          "all-reduce length", &n));
    double t0 = deso__now();
    int rc = op == DESO__MAXLOC
                 ? MPI_Allreduce(MPI_IN_PLACE, buf, n, ctx->pairtype,
                                 ctx->maxloc, comm)
                 : MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM,
                                 comm);
    deso__stats_time(DESO_T_COLLECTIVE, deso__now() - t0);
    deso__stats_collective(len * (int64_t)sizeof(double), size, rank, 2);
    deso__log_coll(DESO__LOG_ALLREDUCE, len * 8, size, rank, 2, t0);
    return deso__mpi(rc, "MPI_Allreduce");
}

deso_err deso__reduce(deso_ctx *ctx, MPI_Comm comm, double *buf,
                      int64_t len, deso__redop op, int root)
{
    int size, rank, n;
    comm_shape(comm, &size, &rank);
    if (size == 1) return DESO_OK;
    DESO_TRY(deso__to_int(op == DESO__MAXLOC ? len / 2 : len,
                          "reduce length", &n));
    double t0 = deso__now();
    void *send = rank == root ? MPI_IN_PLACE : (void *)buf;
    int rc = op == DESO__MAXLOC
                 ? MPI_Reduce(send, buf, n, ctx->pairtype, ctx->maxloc,
                              root, comm)
                 : MPI_Reduce(send, buf, n, MPI_DOUBLE, MPI_SUM, root, comm);
    deso__stats_time(DESO_T_COLLECTIVE, deso__now() - t0);
    deso__stats_collective(len * (int64_t)sizeof(double), size, rank, 1);
    deso__log_coll(DESO__LOG_REDUCE, len * 8, size, rank, 1, t0);
    return deso__mpi(rc, "MPI_Reduce");
}

deso_err deso__bcast(MPI_Comm comm, double *buf, int64_t len, int root)
{
    int size, rank, n;
    comm_shape(comm, &size, &rank);
    if (size == 1 || len == 0) return DESO_OK;
    DESO_TRY(deso__to_int(len, "broadcast length", &n));
    double t0 = deso__now();
    int rc = MPI_Bcast(buf, n, MPI_DOUBLE, root, comm);
    deso__stats_time(DESO_T_COLLECTIVE, deso__now() - t0);
    /* counted by the communicator's rank 0, whoever the root is            */
    deso__stats_collective(len * (int64_t)sizeof(double), size, rank, 1);
    deso__log_coll(DESO__LOG_BCAST, len * 8, size, rank, 1, t0);
    return deso__mpi(rc, "MPI_Bcast");
}

/* Started as one call (MPI_Iallreduce or MPI_Ireduce) and counted here,
 * like the blocking ones: the counters see the same collective either
 * way (and so does the PMPI counter, which counts both kinds alike).    */
deso_err deso__coll_start(deso_ctx *ctx, MPI_Comm comm, double *buf,
                          int64_t len, deso__redop op, bool all,
                          deso__coll *c)
{
    c->req = MPI_REQUEST_NULL;
    c->len = len;
    c->factor = all ? 2 : 1;
    c->t = 0.0;
    comm_shape(comm, &c->size, &c->rank);
    if (c->size == 1) return DESO_OK;
    int n;
    DESO_TRY(deso__to_int(op == DESO__MAXLOC ? len / 2 : len,
                          "reduction length", &n));
    MPI_Datatype type = op == DESO__MAXLOC ? ctx->pairtype : MPI_DOUBLE;
    MPI_Op mop = op == DESO__MAXLOC ? ctx->maxloc : MPI_SUM;
    double t0 = deso__now();
    int rc = all ? MPI_Iallreduce(MPI_IN_PLACE, buf, n, type, mop, comm,
                                  &c->req)
                 : MPI_Ireduce(c->rank == 0 ? MPI_IN_PLACE : (void *)buf,
                               buf, n, type, mop, 0, comm, &c->req);
    c->t = deso__now() - t0;
    deso__stats_time(DESO_T_COLLECTIVE, c->t);
    deso__stats_collective(len * (int64_t)sizeof(double), c->size, c->rank,
                           c->factor);
    if (rc != MPI_SUCCESS) c->req = MPI_REQUEST_NULL;
    return deso__mpi(rc, all ? "MPI_Iallreduce" : "MPI_Ireduce");
}

deso_err deso__coll_wait(deso__coll *c)
{
    if (c->size == 1) return DESO_OK;
    double t0 = deso__now();
    int rc = MPI_Wait(&c->req, MPI_STATUS_IGNORE);
    double dt = deso__now() - t0;
    deso__stats_time(DESO_T_COLLECTIVE, dt);
    deso__log_coll_dt(c->factor == 2 ? DESO__LOG_ALLREDUCE : DESO__LOG_REDUCE,
                      c->len * 8, c->size, c->rank, c->factor, c->t + dt);
    return deso__mpi(rc, "MPI_Wait (reduction)");
}

/* max(h) and max(~h) = ~min(h) in one all-reduce: equal iff every rank
 * passed the same hash.  A rank that failed passes all ones twice, which
 * no agreeing set of hashes gives (~max = 0 != max).                     */
static void check_words(deso__check *ck, uint64_t hash, deso_err local)
{
    ck->hash = hash;
    ck->v[0] = hash;
    ck->v[1] = ~hash;
    if (local != DESO_OK) ck->v[0] = ck->v[1] = UINT64_MAX;
}

/* The all-reduce's outcome; counted here, once per check.               */
static deso_err check_verdict(deso_ctx *ctx, deso__check *ck, deso_err local,
                              int rc, double t0)
{
    int size = ctx->size, rank = ctx->rank;
    deso__stats_time(DESO_T_COLLECTIVE, deso__now() - t0);
    deso__stats_collective((int64_t)sizeof ck->v, size, rank, 2);
    deso__log_coll(DESO__LOG_CHECK, sizeof ck->v, size, rank, 2, t0);
    DESO_TRY(deso__mpi(rc, "force: the SPMD check's all-reduce"));
    if (ck->v[0] == ~ck->v[1]) return DESO_OK;
    /* Rare: a failure or different calls.  Which one, and whose.         */
    int64_t h[2] = {(int64_t)ck->hash, (int64_t)~ck->hash};
    deso_err err = deso__agree_counted(ctx, "force", local, h, 2);
    if (err != DESO_OK) return err;
    return deso__fail(DESO_EMISMATCH, "force point: ranks recorded "
                      "different call sequences");
}

/* Always the non-blocking all-reduce, even when waited for at once: MPI
 * never matches a blocking collective with a non-blocking one, and some
 * ranks may wait at once (a local step failed there) while the others
 * run their first nodes.                                                */
deso_err deso__force_agree(deso_ctx *ctx, uint64_t hash, deso_err local)
{
    deso__check ck;
    deso_err err = deso__check_start(ctx, hash, local, &ck);
    if (err != DESO_OK) return err;
    return deso__check_finish(ctx, &ck);
}

deso_err deso__check_start(deso_ctx *ctx, uint64_t hash, deso_err local,
                           deso__check *ck)
{
    ck->req = MPI_REQUEST_NULL;
    ck->local = local;
    if (ctx->size == 1) return DESO_OK;
    check_words(ck, hash, local);
    int rc = MPI_Iallreduce(MPI_IN_PLACE, ck->v, 2, MPI_UINT64_T, MPI_MAX,
                            ctx->comm, &ck->req);
    if (rc != MPI_SUCCESS) ck->req = MPI_REQUEST_NULL;
    return deso__mpi(rc, "force: MPI_Iallreduce (SPMD check)");
}

deso_err deso__check_finish(deso_ctx *ctx, deso__check *ck)
{
    if (ctx->size == 1) return ck->local;
    /* only the wait is timed: the nodes run meanwhile are timed apart    */
    double t0 = deso__now();
    int rc = MPI_Wait(&ck->req, MPI_STATUS_IGNORE);
    return check_verdict(ctx, ck, ck->local, rc, t0);
}

deso_err deso__exchange(MPI_Comm comm, int tag, int nsend, const int *speer,
                        double *const *sbuf, const int64_t *scount,
                        int nrecv, const int *rpeer, double *const *rbuf,
                        const int64_t *rcount, MPI_Request *req)
{
    deso__xfer x;
    DESO_TRY(deso__exchange_start(comm, tag, nsend, speer, sbuf, scount,
                                  nrecv, rpeer, rbuf, rcount, req, &x));
    return deso__exchange_finish(&x);
}

/* Posts the receives, then the sends; on a failure waits for what it
 * posted (x is then finished).                                          */
static deso_err post(MPI_Comm comm, int tag, int nsend, const int *speer,
                     double *const *sbuf, const int64_t *scount, int nrecv,
                     const int *rpeer, double *const *rbuf,
                     const int64_t *rcount, deso__xfer *x)
{
    deso_err err = DESO_OK;
    int rc = MPI_SUCCESS;
    for (int k = 0; k < nrecv && rc == MPI_SUCCESS; k++) {
        int n;
        err = deso__to_int(rcount[k], "message length", &n);
        if (err != DESO_OK) break;
        rc = MPI_Irecv(rbuf[k], n, MPI_DOUBLE, rpeer[k], tag, comm,
                       &x->req[x->nreq++]);
    }
    for (int k = 0; k < nsend && rc == MPI_SUCCESS && err == DESO_OK; k++) {
        int n;
        err = deso__to_int(scount[k], "message length", &n);
        if (err != DESO_OK) break;
        rc = MPI_Isend(sbuf[k], n, MPI_DOUBLE, speer[k], tag, comm,
                       &x->req[x->nreq++]);
        deso__stats_p2p(scount[k] * (int64_t)sizeof(double));
    }
    if (err == DESO_OK && rc == MPI_SUCCESS) return DESO_OK;
    (void)deso__exchange_finish(x);
    if (err != DESO_OK) return err;
    return deso__mpi(rc, "MPI_Isend/Irecv");
}

deso_err deso__exchange_start(MPI_Comm comm, int tag, int nsend,
                              const int *speer, double *const *sbuf,
                              const int64_t *scount, int nrecv,
                              const int *rpeer, double *const *rbuf,
                              const int64_t *rcount, MPI_Request *req,
                              deso__xfer *x)
{
    *x = (deso__xfer){.req = req, .nsend = nsend, .scount = scount,
                      .busy = nsend + nrecv > 0};
    if (!x->busy) return DESO_OK;
    double t0 = deso__now();
    deso_err err = post(comm, tag, nsend, speer, sbuf, scount, nrecv, rpeer,
                        rbuf, rcount, x);
    x->spent += deso__now() - t0;
    return err;
}

deso_err deso__exchange_finish(deso__xfer *x)
{
    if (!x->busy) return DESO_OK;
    x->busy = false;
    double t0 = deso__now();
    /* MPICH's MPI_STATUSES_IGNORE is a sentinel pointer, which GCC takes
     * for an array of no room                                            */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
    int rc = MPI_Waitall(x->nreq, x->req, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    /* the time in MPI: posting and waiting, not what ran in between      */
    x->spent += deso__now() - t0;
    deso__stats_time(DESO_T_P2P, x->spent);
    deso__log_exchange(x->nsend, x->scount, x->spent);
    return deso__mpi(rc, "MPI_Waitall");
}

deso_err deso__agree_counted(deso_ctx *ctx, const char *fn, deso_err local,
                             int64_t *flags, int nflags)
{
    if (ctx->size == 1) return local;
    int size = ctx->size, rank = ctx->rank;
    double t0 = deso__now();
    deso_err err = deso__agree(ctx->comm, fn, local, flags, nflags);
    deso__stats_time(DESO_T_COLLECTIVE, deso__now() - t0);
    int64_t bytes = (1 + (int64_t)nflags) * (int64_t)sizeof(int64_t);
    deso__stats_collective(bytes, size, rank, 2);
    deso__log_coll(DESO__LOG_CHECK, (size_t)bytes, size, rank, 2, t0);
    /* a failure anywhere comes with the failing rank's verdict            */
    if (err != DESO_OK) {
        deso__stats_collective((int64_t)sizeof(deso__verdict), size, rank, 1);
        deso__log_coll(DESO__LOG_CHECK, sizeof(deso__verdict), size, rank, 1,
                       t0);
    }
    return err;
}
