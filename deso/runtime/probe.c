/* The alpha-beta probe: ping-pongs between ranks 0 and 1 (short and long
 * messages) and small broadcasts, about a millisecond in all.  Each figure
 * is the best of PROBE_REPS rounds: on a loaded machine (more ranks than
 * free cores) single rounds are often descheduled, and a probe that took
 * one of those for the message latency made every later plan avoid
 * messages it could well afford.  Then, when the options ask for it, each
 * kind of collective on each kind of communicator a plan runs it on
 * (coll_probe), which the cost model then prices by what was measured.
 * The figures are MAX-allreduced, so every rank feeds the same numbers to
 * the (deterministic) optimiser.  Not counted in the statistics: it is
 * the library measuring the machine, not the user's work.
 * When some rank has a memory budget (so that matrices may go out of
 * core), each rank also measures the read rate of its out-of-core
 * directory (deso__ooc_read_rate: 1 MiB written, synced, dropped from the
 * page cache and read back, some milliseconds on a disk); the slowest
 * rank's is the cost model's io_beta, since a streamed product waits for
 * it.  A directory that cannot be measured (full, unwritable: creating a
 * matrix there will say so) counts as IO_BETA_UNKNOWN; deso_init goes on,
 * but every rank's deso_last_error then says which rank could not measure
 * and why (one agreement, only when some rank has a budget).            */
#include <stdio.h>

#include "deso/core/agree.h"
#include "deso/runtime/ooc.h"
#include "deso/runtime/runtime.h"

#define PROBE_TAG 0x5052
#define PROBE_REPS 16
#define PROBE_LONG 4096           /* doubles: 32 KiB                        */
#define IO_BETA_UNKNOWN 1e-8      /* seconds per byte: a 100 MB/s disk      */
#define PROBE_COLL_FIGURES (2 * OPT_COLL_KINDS * OPT_COMMS)
#define COLL_SPREAD 4.0

/* This rank's io_beta (0 when no rank has a budget).  A rank that could
 * not measure its directory is agreed on, and its reason left in every
 * rank's deso_last_error; only an MPI failure of the agreement is an
 * error.  Collective when some rank has a budget.                        */
static deso_err io_probe(deso_ctx *ctx, double *io_beta)
{
    *io_beta = 0.0;
    if (!ctx->ooc_any) return DESO_OK;
    double t = 0.0;
    deso_err err = deso__ooc_read_rate(ctx, &t);
    /* a timer glitch must not make the disk free                         */
    *io_beta = err != DESO_OK ? IO_BETA_UNKNOWN : t > 1e-12 ? t : 1e-12;
    err = deso__agree(ctx->comm, "deso_init", err, NULL, 0);
    if (err == DESO_OK || err == DESO_EMPI) return err;
    char why[448];
    snprintf(why, sizeof why, "%s", deso_last_error());
    deso__fail(err, "%s; the read rate of the out-of-core directory is "
                    "taken as %.0f MB/s", why, 1e-6 / IO_BETA_UNKNOWN);
    return DESO_OK;
}

static double pingpong(MPI_Comm comm, int me, double *buf, int len, int *rc)
{
    double best = 1e30;
    for (int rep = 0; rep <= PROBE_REPS && *rc == MPI_SUCCESS; rep++) {
        double t0 = MPI_Wtime();
        if (me == 0) {
            *rc = MPI_Send(buf, len, MPI_DOUBLE, 1, PROBE_TAG, comm);
            if (*rc == MPI_SUCCESS)
                *rc = MPI_Recv(buf, len, MPI_DOUBLE, 1, PROBE_TAG, comm,
                               MPI_STATUS_IGNORE);
        } else {
            *rc = MPI_Recv(buf, len, MPI_DOUBLE, 0, PROBE_TAG, comm,
                           MPI_STATUS_IGNORE);
            if (*rc == MPI_SUCCESS)
                *rc = MPI_Send(buf, len, MPI_DOUBLE, 0, PROBE_TAG, comm);
        }
        double t = (MPI_Wtime() - t0) / 2.0;
        if (rep > 0 && t < best) best = t;   /* rep 0 warms up             */
    }
    return best;
}

/* One round of a one-double broadcast (its time over ceil(log2 P)), the
 * best of PROBE_REPS; rep 0 warms up.                                   */
static double broadcast_round(const deso_ctx *ctx, double *buf, int *rc)
{
    int lg = 0;
    while ((1 << lg) < ctx->size) lg++;
    double best = 1e30;
    for (int rep = 0; rep <= PROBE_REPS && *rc == MPI_SUCCESS; rep++) {
        double t0 = MPI_Wtime();
        *rc = MPI_Bcast(buf, 1, MPI_DOUBLE, 0, ctx->comm);
        double t = (MPI_Wtime() - t0) / (lg > 0 ? lg : 1);
        if (rep > 0 && t < best) best = t;
    }
    return best;
}

/* One collective of kind k over comm, on len doubles of buf (zeros, so
 * that sums stay zeros), rooted at rank 0 of comm.                      */
static int coll_once(opt_coll_kind k, MPI_Comm comm, double *buf, int len)
{
    if (k == OPT_COLL_ALLREDUCE)
        return MPI_Allreduce(MPI_IN_PLACE, buf, len, MPI_DOUBLE, MPI_SUM,
                             comm);
    if (k == OPT_COLL_BCAST) return MPI_Bcast(buf, len, MPI_DOUBLE, 0, comm);
    int me = 0;
    int rc = MPI_Comm_rank(comm, &me);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Reduce(me == 0 ? MPI_IN_PLACE : buf, me == 0 ? buf : NULL, len,
                      MPI_DOUBLE, MPI_SUM, 0, comm);
}

/* The best of PROBE_REPS calls (one more first, to warm up).            */
static double coll_best(opt_coll_kind k, MPI_Comm comm, double *buf, int len,
                        int *rc)
{
    double best = 1e30;
    for (int rep = 0; rep <= PROBE_REPS && *rc == MPI_SUCCESS; rep++) {
        double t0 = MPI_Wtime();
        *rc = coll_once(k, comm, buf, len);
        double t = MPI_Wtime() - t0;
        if (rep > 0 && t < best) best = t;
    }
    return best;
}

/* Each kind of collective on each kind of communicator the executor
 * reduces or broadcasts on (a grid column, a grid row, every rank), all
 * communicators of a kind side by side as a plan runs them: a short call
 * (one double) and a long one (PROBE_LONG doubles), into v as (seconds
 * per call, seconds per byte) pairs in opt_params.coll's order; zeros on
 * a communicator of one rank.  Every rank makes the same calls (the
 * communicators' sizes are the grid's).                                 */
static int coll_probe(const deso_ctx *ctx, double *buf, double *v)
{
    int rc = MPI_SUCCESS;
    int sizes[OPT_COMMS] = {ctx->df.pr, ctx->df.pc, ctx->size};
    for (int k = 0; k < OPT_COLL_KINDS; k++)
        for (int d = 0; d < OPT_COMMS; d++) {
            double *f = v + 2 * (k * OPT_COMMS + d);
            f[0] = f[1] = 0.0;
            if (sizes[d] <= 1) continue;
            MPI_Comm comm = d == OPT_COMM_ALL ? ctx->comm : ctx->dimcomm[d];
            double ts = coll_best((opt_coll_kind)k, comm, buf, 1, &rc);
            double tl = coll_best((opt_coll_kind)k, comm, buf, PROBE_LONG,
                                  &rc);
            f[0] = ts;
            f[1] = tl > ts ? (tl - ts) / ((PROBE_LONG - 1) * 8.0) : 0.0;
        }
    return rc;
}

/* v's collective figures into p.  A call is kept within a factor
 * COLL_SPREAD of what the alpha-beta formula gives for its kind and size
 * (opt_cost.c): the figures decide between near neighbours (an all-reduce
 * against a reduce and a broadcast), and on a machine with more ranks
 * than free cores a collective's every round can be descheduled, which
 * would otherwise price collectives out of every plan.                  */
static void coll_set(opt_params *p, const deso_ctx *ctx, const double *v)
{
    int sizes[OPT_COMMS] = {ctx->df.pr, ctx->df.pc, ctx->size};
    for (int k = 0; k < OPT_COLL_KINDS; k++)
        for (int d = 0; d < OPT_COMMS; d++) {
            const double *f = v + 2 * (k * OPT_COMMS + d);
            opt_coll_cost *c = &p->coll[k][d];
            c->call = c->byte = 0.0;
            if (sizes[d] <= 1 || !(f[0] > 0.0)) continue;
            int steps = 0;
            while ((1 << steps) < sizes[d]) steps++;
            double model = (k == OPT_COLL_ALLREDUCE ? 2 : 1) * steps *
                               (p->alpha + 8.0 * p->beta) +
                           0.25 * p->alpha;
            double lo = model / COLL_SPREAD, hi = model * COLL_SPREAD;
            c->call = f[0] < lo ? lo : f[0] > hi ? hi : f[0];
            c->byte = f[1] > 1e-6 ? 1e-6 : f[1];
        }
}

deso_err deso__probe(deso_ctx *ctx, opt_params *out)
{
    *out = opt_params_default();
    out->reduce_holders_only = true;
    DESO_TRY(io_probe(ctx, &out->io_beta));
    if (ctx->size == 1) return DESO_OK;
    static double buf[PROBE_LONG];
    int rc = MPI_SUCCESS;
    double v[3 + PROBE_COLL_FIGURES] = {0.0, 0.0, out->io_beta};
    if (ctx->rank <= 1) {
        double ts = pingpong(ctx->comm, ctx->rank, buf, 1, &rc);
        double tl = pingpong(ctx->comm, ctx->rank, buf, PROBE_LONG, &rc);
        v[0] = ts;
        double bytes = (double)(PROBE_LONG - 1) * sizeof(double);
        v[1] = tl > ts ? (tl - ts) / bytes : 0.0;
    }
    if (rc == MPI_SUCCESS) {
        double tb = broadcast_round(ctx, buf, &rc);
        /* a broadcast round is a message: alpha covers both              */
        if (tb > v[0] && ctx->rank <= 1) v[0] = 0.5 * (v[0] + tb);
    }
    if (rc == MPI_SUCCESS && ctx->measure_collectives)
        rc = coll_probe(ctx, buf, v + 3);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(MPI_IN_PLACE, v, 3 + PROBE_COLL_FIGURES, MPI_DOUBLE,
                           MPI_MAX, ctx->comm);
    DESO_TRY(deso__mpi(rc, "alpha-beta probe"));
    /* clamp to sane ranges (a timer glitch must not make messages free)   */
    if (!(v[0] >= 1e-8)) v[0] = 1e-8;
    if (v[0] > 1e-2) v[0] = 1e-2;
    if (!(v[1] >= 1e-12)) v[1] = 1e-12;
    if (v[1] > 1e-6) v[1] = 1e-6;
    out->alpha = v[0];
    out->beta = v[1];
    out->io_beta = v[2];
    coll_set(out, ctx, v + 3);
    return DESO_OK;
}
