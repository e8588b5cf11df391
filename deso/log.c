/* Performance log in the style of PETSc's -log_view: per operation kind
 * and per kind of communication, calls, seconds, bytes and messages,
 * printed by deso_log_view (or at deso_finalize with DESO_LOG).
 *
 * Counters are per process, like deso_stats, and never reset.  The
 * reductions that build the table call MPI directly, not comm.c's counted
 * wrappers, so printing the log changes neither the log nor deso_stats.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_impl.h"

typedef struct {
    int64_t calls, bytes, msgs;
    double time, kernel;
} log_row;

static log_row ops[BLAS_OP_COUNT];
static log_row comms[DESO__LOG_NKINDS];

static const char *kind_name[DESO__LOG_NKINDS] = {
    "broadcast", "exchange (p2p)", "remap", "reduce", "allreduce",
    "check (SPMD, errors)"};

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
    double seconds = deso__now() - t0;
    bool counts = rank_in_comm == 0;    /* deso__stats_collective's rule  */
    deso__log_comm(kind, counts ? payload * (int64_t)(size - 1) * factor : 0,
                   counts ? 1 : 0, seconds);
}

void deso__log_exchange(int nsend, const int64_t *count, double t0)
{
    double seconds = deso__now() - t0;
    int64_t bytes = 0;
    for (int k = 0; k < nsend; k++) bytes += count[k] * (int64_t)sizeof(double);
    deso__log_comm(DESO__LOG_EXCHANGE, bytes, nsend, seconds);
}

static void snapshot(int64_t *bytes, int64_t *msgs)
{
    deso_stats s;
    deso_stats_get(&s);
    *bytes = s.bytes_p2p + s.bytes_collective;
    *msgs = s.msgs_p2p + s.msgs_collective;
}

deso_err deso__log_exec_node(deso_ctx *ctx, deso__node *nd,
                             const opt_place *pl)
{
    int64_t b0, m0, b1, m1;
    snapshot(&b0, &m0);
    double t0 = deso__now();
    deso_err err = deso__exec_node(ctx, nd, pl);
    double dt = deso__now() - t0;
    snapshot(&b1, &m1);
    int op = (int)nd->d.op;
    if (op >= 0 && op < BLAS_OP_COUNT) {
        ops[op].calls++;
        ops[op].time += dt;
        ops[op].bytes += b1 - b0;
        ops[op].msgs += m1 - m0;
    }
    return err;
}

deso_err deso__log_remap(deso_ctx *ctx, const deso__view *src,
                         deso__view *dst)
{
    int64_t b0, m0, b1, m1;
    snapshot(&b0, &m0);
    double t0 = deso__now();
    deso_err err = deso__mat_remap(ctx, src, dst);
    double dt = deso__now() - t0;
    snapshot(&b1, &m1);
    deso__log_comm(DESO__LOG_REMAP, b1 - b0, m1 - m0, dt);
    return err;
}

/* ---- the table -------------------------------------------------------- */

enum { NOPS = BLAS_OP_COUNT, NK = DESO__LOG_NKINDS, NROWS = NOPS + NK };

static void pack(double *t, long long *c)
{
    for (int k = 0; k < NROWS; k++) {
        const log_row *r = k < NOPS ? &ops[k] : &comms[k - NOPS];
        t[2 * k] = r->time;
        t[2 * k + 1] = r->kernel;
        c[3 * k] = r->calls;
        c[3 * k + 1] = r->bytes;
        c[3 * k + 2] = r->msgs;
    }
}

static void row(FILE *f, const char *name, const double *t,
                const long long *cmax, const long long *csum)
{
    fprintf(f, "%-22s %9lld %12.6f %12.6f %14lld %10lld\n", name, cmax[0],
            t[0], t[1], csum[1], csum[2]);
}

deso_err deso_log_view(deso_ctx *ctx, FILE *f)
{
    DESO_CHECK(ctx != NULL, DESO_ENULL, "deso_log_view: ctx is NULL");
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "deso_log_view: not a live context");
    double t[2 * NROWS], tmax[2 * NROWS];
    long long c[3 * NROWS], cmax[3 * NROWS], csum[3 * NROWS];
    pack(t, c);
    deso_stats st;
    deso_stats_get(&st);
    long long plans[2] = {(long long)st.plans_optimised,
                          (long long)st.plans_replayed};
    /* direct MPI on purpose: these reductions are not the program's work */
    int rc = MPI_Reduce(t, tmax, 2 * NROWS, MPI_DOUBLE, MPI_MAX, 0,
                        ctx->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Reduce(c, cmax, 3 * NROWS, MPI_LONG_LONG, MPI_MAX, 0,
                        ctx->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Reduce(c, csum, 3 * NROWS, MPI_LONG_LONG, MPI_SUM, 0,
                        ctx->comm);
    DESO_TRY(deso__mpi(rc, "deso_log_view: MPI_Reduce"));
    if (ctx->rank != 0) return DESO_OK;
    DESO_CHECK(f != NULL, DESO_ENULL, "deso_log_view: f is NULL");
    fprintf(f, "deso log_view: %d ranks, grid %dx%d, mode %s, %lld "
               "executions\n",
            ctx->size, ctx->df.pr, ctx->df.pc, deso_mode_name(ctx->mode),
            (long long)ctx->flushes);
    fprintf(f, "(calls, seconds: max over ranks; bytes, messages: sum over "
               "ranks, deso_stats counting)\n\n");
    fprintf(f, "%-22s %9s %12s %12s %14s %10s\n", "operation", "calls",
            "time (s)", "kernel (s)", "bytes", "messages");
    for (int k = 0; k < NOPS; k++) {
        if (cmax[3 * k] == 0) continue;
        const blas_op_info *info = blas_op_get((blas_op)k);
        row(f, info ? info->name : "?", &tmax[2 * k], &cmax[3 * k],
            &csum[3 * k]);
    }
    fprintf(f, "\n%-22s %9s %12s %12s %14s %10s\n", "communication", "calls",
            "time (s)", "", "bytes", "messages");
    for (int k = 0; k < NK; k++) {
        int r = NOPS + k;
        fprintf(f, "%-22s %9lld %12.6f %12s %14lld %10lld\n", kind_name[k],
                cmax[3 * r], tmax[2 * r], "", csum[3 * r + 1],
                csum[3 * r + 2]);
    }
    long long tot = plans[0] + plans[1];
    fprintf(f, "\nplans (rank 0, since the last deso_stats_reset): optimised "
               "%lld, replayed %lld (cache hit rate %.1f%%)\n",
            plans[0], plans[1], tot > 0 ? 100.0 * (double)plans[1] / tot : 0.0);
    fflush(f);
    return ferror(f) ? deso__fail(DESO_EIO, "deso_log_view: write error")
                     : DESO_OK;
}

void deso__log_finalize(deso_ctx *ctx)
{
    const char *e = ctx->log;          /* agreed at deso_init: every rank
                                        * takes part, or none             */
    if (e == NULL) return;
    FILE *f = stdout;
    bool file = strcmp(e, "1") != 0;
    if (file && ctx->rank == 0) {
        f = fopen(e, "w");
        if (f == NULL) {
            fprintf(stderr, "deso: DESO_LOG=%s: cannot open; log on stdout\n",
                    e);
            f = stdout;
        }
    }
    deso_log_view(ctx, f);
    if (f != stdout) fclose(f);
}
