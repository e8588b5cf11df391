/* krylov_deso.h: what the deso versions of the Krylov examples share
 * beside krylov_problem.h: the context, failing on a library error, the
 * start (options, deso_init, the error handler) and the nonsymmetric
 * problem's generators.  Header-only.                                      */
#ifndef DESO_EXAMPLES_KRYLOV_DESO_H
#define DESO_EXAMPLES_KRYLOV_DESO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso.h"

#include "krylov_problem.h"

static int rank0;
static deso_ctx *ctx;
static const char *prog;

/* The nonsymmetric problem's generators for deso_mat_from_fn and
 * deso_vec_from_fn (arg: the order n, a long).                           */
static inline double krylov_ns_a_fn(int64_t i, int64_t j, void *arg)
{
    return krylov_ns_a(*(const long *)arg, (long)i, (long)j);
}

static inline double krylov_ns_b_fn(int64_t i, void *arg)
{
    return krylov_ns_b(*(const long *)arg, (long)i);
}

/* GMRES's breakdown problem (arg: K, a long).                            */
static inline double krylov_shift_a_fn(int64_t i, int64_t j, void *arg)
{
    return krylov_shift_a(*(const long *)arg, (long)i, (long)j);
}

static inline double krylov_shift_b_fn(int64_t i, void *arg)
{
    (void)arg;
    return krylov_shift_b((long)i);
}

/* The context's error handler: any failing deso call ends the run with
 * one line from rank 0 and exit code 1.                                   */
static void fail(deso_ctx *c, deso_err e, const char *fn, const char *msg,
                 void *arg)
{
    (void)c;
    (void)arg;
    if (rank0) fprintf(stderr, "%s: %s: %s (%s)\n", prog, fn, deso_strerror(e), msg);
    deso_finalize(&ctx);
    MPI_Finalize();
    exit(1);
}

/* MPI_Init, the options (--grid, --mode and the KRYLOV_OPT_ bits of
 * `accept`), deso_init with --grid and --mode, then `fail` as the error
 * handler; a bad option: one line on rank 0, exit 2.                      */
static void krylov_start(int *argc, char ***argv, const char *name,
                         int accept, struct krylov_opts *o)
{
    MPI_Init(argc, argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    rank0 = me == 0;
    prog = name;
    char msg[256];
    int bad = krylov_parse(*argc, *argv, KRYLOV_OPT_DESO | accept, o, msg,
                           sizeof msg) != 0;
    deso_options opt;
    deso_options_default(&opt);
    opt.grid_rows = (int)o->grid_r;
    opt.grid_cols = (int)o->grid_c;
    if (!bad && o->mode != NULL) {
        const deso_mode modes[] = {DESO_MODE_NONE, DESO_MODE_AFFINE, DESO_MODE_FULL};
        bad = 1;
        for (int k = 0; k < 3; k++)
            if (strcmp(o->mode, deso_mode_name(modes[k])) == 0) {
                opt.mode = modes[k];
                bad = 0;
            }
        if (bad)
            snprintf(msg, sizeof msg, "--mode must be none, affine or full, got '%s'", o->mode);
    }
    if (!bad && deso_init(MPI_COMM_WORLD, &opt, &ctx) != DESO_OK) {
        snprintf(msg, sizeof msg, "%s", deso_last_error());
        bad = 1;
    }
    if (bad) {
        if (rank0) fprintf(stderr, "%s: %s\n", name, msg);
        MPI_Finalize();
        exit(2);
    }
    deso_set_error_handler(ctx, fail, NULL);
}

#endif
