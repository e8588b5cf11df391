/* The performance log's table (deso_log_view) in the style of PETSc's
 * -log_view, printed by deso_log_view or at deso_finalize with DESO_LOG.
 * The reductions that build it call MPI directly, not the runtime's
 * counted wrappers, so printing the log changes neither the log nor
 * deso_stats.                                                              */
#include <stdio.h>
#include <string.h>

#include "deso/io/io.h"
#include "deso/io/api_io.h"
#include "deso/runtime/log.h"

enum { NOPS = BLAS_OP_COUNT, NK = DESO__LOG_NKINDS, NROWS = DESO__LOG_NROWS };

static const char *kind_name[DESO__LOG_NKINDS] = {
    "broadcast", "exchange (p2p)", "remap", "reduce", "allreduce",
    "check (SPMD, errors)"};

static void row(FILE *f, const char *name, const double *t,
                const long long *cmax, const long long *csum)
{
    fprintf(f, "%-22s %9lld %12.6f %12.6f %14lld %10lld\n", name, cmax[0],
            t[0], t[1], csum[1], csum[2]);
}

/* The out-of-core matrices' file time (max over ranks) and bytes read
 * and written (sums), as deso_stats counts them, onto rank 0.  Collective. */
static int io_reduce(const deso_ctx *ctx, double *tmax, long long *bsum)
{
    deso_stats st;
    deso_stats_get(&st);
    double t = st.time_io;
    long long b[2] = {(long long)st.bytes_io_read,
                      (long long)st.bytes_io_written};
    int rc = MPI_Reduce(&t, tmax, 1, MPI_DOUBLE, MPI_MAX, 0, ctx->comm);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Reduce(b, bsum, 2, MPI_LONG_LONG, MPI_SUM, 0, ctx->comm);
}

deso_err deso__log_view(deso_ctx *ctx, FILE *f)
{
    DESO_CHECK(ctx != NULL, DESO_ENULL, "deso_log_view: ctx is NULL");
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "deso_log_view: not a live context");
    double t[2 * NROWS], tmax[2 * NROWS];
    long long c[3 * NROWS], cmax[3 * NROWS], csum[3 * NROWS];
    deso__log_pack(t, c);
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
    double io_t = 0.0;
    long long io_b[2] = {0, 0};
    if (rc == MPI_SUCCESS) rc = io_reduce(ctx, &io_t, io_b);
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
    fprintf(f, "\n%-22s %12s %14s %14s\n", "out-of-core files", "time (s)",
            "bytes read", "bytes written");
    fprintf(f, "%-22s %12.6f %14lld %14lld\n", "(deso_stats counting)",
            io_t, io_b[0], io_b[1]);
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
    deso__log_view(ctx, f);
    if (f != stdout) fclose(f);
}
