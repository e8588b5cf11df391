/* deso-solve-pdgesv: build a linear system with deso, solve it with
 * ScaLAPACK's pdgesv, bring the solution back into deso and check it.
 *
 *   mpiexec.mpich -n P deso-solve-pdgesv [N [NB]]      (defaults 500, 32)
 *
 * A(i, j) = 1 / (1 + |i - j|) + N [i = j] (diagonally dominant), b = A *
 * ones, so the solution is x = ones.  Prints, on rank 0, the relative
 * residual ||b - A x|| / ||b|| (computed by deso) and max |x_i - 1|, and
 * exits 0 when both are at most TOL, else 1 with a line on stderr saying
 * which is not.  Bad arguments: one line on stderr, exit 2.
 *
 * Ownership: deso_mat_to_scalapack and deso_vec_to_scalapack with
 * DESO_COPY hand out malloc'd arrays that we free; pdgesv overwrites them
 * (LU factors, solution) without touching deso's A and b.  The BLACS
 * context comes from deso_blacs_context and is ours to Cblacs_gridexit.  */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "deso.h"

void Cblacs_gridexit(int ctxt);
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia,
             const int *ja, const int *desca, int *ipiv, double *b,
             const int *ib, const int *jb, const int *descb, int *info);

/* The accepted residual and solution error.  A's diagonal dominates its
 * rows (N + 1 against less than 1 + 2 ln N off the diagonal), so A is
 * well conditioned and a correct solve is within a few hundred rounding
 * errors (about 1e-16 each); anything wrong is far above TOL.            */
#define TOL 1e-10

static deso_ctx *ctx;

#define D(call)                                                              \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != DESO_OK) {                                                 \
            fprintf(stderr, "deso-solve-pdgesv: %s: %s (%s)\n", #call,       \
                    deso_strerror(e_), deso_last_error());                   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                    \
        }                                                                    \
    } while (0)

static double a_fn(int64_t i, int64_t j, void *arg)
{
    int64_t d = i > j ? i - j : j - i;
    return 1.0 / (1.0 + (double)d) + (i == j ? (double)*(int *)arg : 0.0);
}

static double b_fn(int64_t i, void *arg)
{
    double s = 0.0;
    for (int64_t j = 0; j < *(int *)arg; j++) s += a_fn(i, j, arg);
    return s;
}

/* Argument k (default dflt when absent) as an integer in [1, 1000000];
 * 0 when it is not one.                                                   */
static int arg_int(int argc, char **argv, int k, int dflt)
{
    if (k >= argc) return dflt;
    char *end;
    errno = 0;
    long v = strtol(argv[k], &end, 10);
    if (errno != 0 || end == argv[k] || *end != '\0' || v < 1 || v > 1000000)
        return 0;
    return (int)v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = arg_int(argc, argv, 1, 500);
    int nb = arg_int(argc, argv, 2, 32);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (n < 1 || nb < 1 || argc > 3) {
        if (me == 0 && argc > 3)
            fprintf(stderr, "deso-solve-pdgesv: too many arguments (usage: "
                    "deso-solve-pdgesv [N [NB]])\n");
        else if (me == 0)
            fprintf(stderr, "deso-solve-pdgesv: %s must be an integer from 1 "
                    "to 1000000, got '%s'\n", n < 1 ? "N" : "NB",
                    argv[n < 1 ? 1 : 2]);
        MPI_Finalize();
        return 2;
    }
    D(deso_init(MPI_COMM_WORLD, NULL, &ctx));

    /* 1. the system, generated where it lives                              */
    deso_mat *A;
    deso_vec *b, *x, *r;
    D(deso_mat_from_fn(ctx, n, n, a_fn, &n, &A));
    D(deso_vec_from_fn(ctx, n, b_fn, &n, &b));

    /* 2. to ScaLAPACK: nb x nb blocks for A, the same row blocks for b   */
    int ctxt, da[9], db[9];
    double *la, *lb;
    D(deso_blacs_context(ctx, &ctxt));
    D(deso_mat_to_scalapack(A, ctxt, nb, nb, DESO_COPY, da, &la));
    D(deso_vec_to_scalapack(b, ctxt, nb, DESO_COPY, db, &lb));
    int one = 1, info = 0;
    int *ipiv = malloc((size_t)(da[8] + nb) * sizeof *ipiv);
    if (ipiv == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    pdgesv_(&n, &one, la, &one, &one, da, ipiv, lb, &one, &one, db, &info);
    if (info != 0) {
        if (me == 0) fprintf(stderr, "deso-solve-pdgesv: pdgesv info %d\n",
                             info);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* 3. the solution back into deso (copied: lb is freed below)          */
    D(deso_vec_from_scalapack(ctx, lb, db, DESO_COPY, &x));
    free(ipiv);
    free(la);
    free(lb);
    Cblacs_gridexit(ctxt);

    /* 4. r = b - A x, with deso                                            */
    deso_scalar *rn, *bn;
    D(deso_vec_create(ctx, n, &r));
    D(deso_scalar_create(ctx, 0.0, &rn));
    D(deso_scalar_create(ctx, 0.0, &bn));
    D(deso_dcopy(n, b, 1, r, 1));
    D(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, -1.0, A, n, x, 1, 1.0,
                 r, 1));
    D(deso_dnrm2(n, r, 1, rn));
    D(deso_dnrm2(n, b, 1, bn));
    double rv, bv;
    D(deso_scalar_get(rn, &rv));
    D(deso_scalar_get(bn, &bv));
    double *xs = me == 0 ? malloc((size_t)n * sizeof *xs) : NULL;
    if (me == 0 && xs == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    D(deso_vec_gather(x, xs, 0));
    deso_info di;
    D(deso_get_info(ctx, &di));
    /* the verdict is rank 0's (it alone holds x), every rank's exit code  */
    int ok = 1;
    if (me == 0) {
        double err = 0.0, res = rv / bv;
        for (int i = 0; i < n; i++)   /* !(<=): a NaN is an error as well  */
            if (!(fabs(xs[i] - 1.0) <= err)) err = fabs(xs[i] - 1.0);
        printf("deso-solve-pdgesv: n=%d nb=%d P=%d grid=%dx%d "
               "residual=%.3e max|x-1|=%.3e\n",
               n, nb, P, di.grid_rows, di.grid_cols, res, err);
        ok = res <= TOL && err <= TOL;
        if (!ok)
            fprintf(stderr, "deso-solve-pdgesv: wrong solution: residual "
                    "%.3e, max|x-1| %.3e (tolerance %.0e)\n", res, err,
                    TOL);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(xs);
    D(deso_finalize(&ctx));
    MPI_Finalize();
    return ok ? 0 : 1;
}
