/* The alpha-beta probe: ping-pongs between ranks 0 and 1 (short and long
 * messages) and small broadcasts.  Each figure is the fastest of its
 * clean rounds (probe_rounds.c: a round during which a rank taking part
 * was switched out is thrown away, since on a loaded machine it timed
 * another process's time slice, not the message); rounds go on until 16
 * clean ones are in or the figure's budget (8 ms) is spent, so the probe
 * takes well under a millisecond on an idle machine and some tens of
 * milliseconds on a loaded one.  A ping-pong with no clean round leaves
 * alpha and beta at opt_params_default's figures, a broadcast with none
 * adds nothing: a figure inflated by a descheduling made every later plan
 * avoid messages it could well afford (a sparse CG gathered its vectors
 * every iteration instead of exchanging a halo).  Then, when the options
 * ask for it, each kind of collective on each kind of communicator a plan
 * runs it on (coll_probe), which the cost model then prices by what was
 * measured.  The figures are MAX-allreduced, so every rank feeds the same
 * numbers to the (deterministic) optimiser.  Not counted in the
 * statistics: it is the library measuring the machine, not the user's
 * work.
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
#include "deso/runtime/probe_rounds.h"
#include "deso/runtime/runtime.h"

#define PROBE_TAG 0x5052
#define PROBE_REPS 16             /* calls per collective figure            */
#define PROBE_LONG 4096           /* doubles: 32 KiB                        */
#define IO_BETA_UNKNOWN 1e-8      /* seconds per byte: a 100 MB/s disk      */
/* alpha, beta, io_beta, the broadcast round, then the collectives     */
#define PROBE_FIGURES 4
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

/* Rank 1's side of the ping-pong: echoes every message rank 0 sends
 * until one says stop (buf[0] = 0), putting in its reply how often it was
 * switched out since its previous reply, so that rank 0 can throw away
 * the rounds it spent waiting for a descheduled partner.                 */
static void pingpong_echo(MPI_Comm comm, double *buf, int len, int *rc)
{
    long prev = deso__probe_switches();
    while (*rc == MPI_SUCCESS) {
        *rc = MPI_Recv(buf, len, MPI_DOUBLE, 0, PROBE_TAG, comm,
                       MPI_STATUS_IGNORE);
        if (*rc != MPI_SUCCESS || buf[0] == 0.0) return;
        long now = deso__probe_switches();
        buf[0] = (double)(now - prev);
        prev = now;
        *rc = MPI_Send(buf, len, MPI_DOUBLE, 0, PROBE_TAG, comm);
    }
}

/* Half a ping-pong's round trip of len doubles between ranks 0 and 1 (the
 * fastest clean round, deso__probe_acc), -1 when no round was clean;
 * rank 0 times, says in buf[0] whether another round follows, and alone
 * returns the figure (rank 1: 0).                                        */
static double pingpong(MPI_Comm comm, int me, double *buf, int len, int *rc)
{
    if (me == 1) {
        pingpong_echo(comm, buf, len, rc);
        return 0.0;
    }
    deso__probe_acc acc;
    deso__probe_acc_init(&acc);
    double start = MPI_Wtime();
    while (*rc == MPI_SUCCESS) {
        bool more = !deso__probe_acc_done(&acc, MPI_Wtime() - start);
        buf[0] = more ? 1.0 : 0.0;
        long s0 = deso__probe_switches();
        double t0 = MPI_Wtime();
        *rc = MPI_Send(buf, len, MPI_DOUBLE, 1, PROBE_TAG, comm);
        if (!more || *rc != MPI_SUCCESS) break;
        *rc = MPI_Recv(buf, len, MPI_DOUBLE, 1, PROBE_TAG, comm,
                       MPI_STATUS_IGNORE);
        double t = (MPI_Wtime() - t0) / 2.0;
        long mine = deso__probe_switches() - s0;
        deso__probe_acc_add(&acc, t, mine + (long)buf[0]);
    }
    return deso__probe_acc_figure(&acc);
}

/* One-double broadcasts from rank 0 (each one's time over ceil(log2 P)),
 * rank 0 saying in the payload whether another follows; this rank's
 * fastest round in which it was not switched out, -1 when there was
 * none.                                                                 */
static double broadcast_round(const deso_ctx *ctx, double *buf, int *rc)
{
    int lg = 0;
    while ((1 << lg) < ctx->size) lg++;
    deso__probe_acc acc;
    deso__probe_acc_init(&acc);
    double start = MPI_Wtime();
    while (*rc == MPI_SUCCESS) {
        if (ctx->rank == 0)
            buf[0] = deso__probe_acc_done(&acc, MPI_Wtime() - start) ? 0.0
                                                                   : 1.0;
        long s0 = deso__probe_switches();
        double t0 = MPI_Wtime();
        *rc = MPI_Bcast(buf, 1, MPI_DOUBLE, 0, ctx->comm);
        double t = (MPI_Wtime() - t0) / (lg > 0 ? lg : 1);
        if (*rc != MPI_SUCCESS || buf[0] == 0.0) break;
        deso__probe_acc_add(&acc, t, deso__probe_switches() - s0);
    }
    return deso__probe_acc_figure(&acc);
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

/* Rank 0's alpha and beta from its ping-pongs into v[0], v[1]; both
 * left at 0 (the defaults stand) unless each size had a clean round.    */
static void pingpong_figures(const deso_ctx *ctx, double *buf, double *v,
                             int *rc)
{
    double ts = pingpong(ctx->comm, ctx->rank, buf, 1, rc);
    double tl = *rc == MPI_SUCCESS
                    ? pingpong(ctx->comm, ctx->rank, buf, PROBE_LONG, rc)
                    : -1.0;
    if (ctx->rank != 0 || !(ts > 0.0) || !(tl > 0.0)) return;
    double bytes = (double)(PROBE_LONG - 1) * sizeof(double);
    v[0] = ts;
    v[1] = tl > ts ? (tl - ts) / bytes : 0.0;
}

deso_err deso__probe(deso_ctx *ctx, opt_params *out)
{
    *out = opt_params_default();
    out->reduce_holders_only = true;
    DESO_TRY(io_probe(ctx, &out->io_beta));
    if (ctx->size == 1) return DESO_OK;
    static double buf[PROBE_LONG];
    int rc = MPI_SUCCESS;
    double v[PROBE_FIGURES + PROBE_COLL_FIGURES] = {0.0, 0.0, out->io_beta};
    if (ctx->rank <= 1) pingpong_figures(ctx, buf, v, &rc);
    if (rc == MPI_SUCCESS) v[3] = broadcast_round(ctx, buf, &rc);
    if (rc == MPI_SUCCESS && ctx->measure_collectives)
        rc = coll_probe(ctx, buf, v + PROBE_FIGURES);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(MPI_IN_PLACE, v, PROBE_FIGURES + PROBE_COLL_FIGURES,
                           MPI_DOUBLE, MPI_MAX, ctx->comm);
    DESO_TRY(deso__mpi(rc, "alpha-beta probe"));
    /* no clean ping-pong: the defaults, never an inflated figure         */
    if (v[0] > 0.0) {
        out->alpha = v[0];
        out->beta = v[1];
    }
    /* a broadcast round is a message: alpha covers both                  */
    if (v[3] > out->alpha) out->alpha = 0.5 * (out->alpha + v[3]);
    /* clamp to sane ranges (a timer glitch must not make messages free)   */
    if (!(out->alpha >= 1e-8)) out->alpha = 1e-8;
    if (out->alpha > 1e-2) out->alpha = 1e-2;
    if (!(out->beta >= 1e-12)) out->beta = 1e-12;
    if (out->beta > 1e-6) out->beta = 1e-6;
    out->io_beta = v[2];
    coll_set(out, ctx, v + PROBE_FIGURES);
    return DESO_OK;
}
