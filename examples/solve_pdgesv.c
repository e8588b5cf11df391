/* deso-solve-pdgesv: build a linear system with deso, solve it with
 * ScaLAPACK's pdgesv, bring the solution back into deso and check it.
 *
 *   mpiexec.mpich -n P deso-solve-pdgesv [N [NB]]      (defaults 500, 32)
 *
 * A(i, j) = 1 / (1 + |i - j|) + N [i = j] (diagonally dominant), b = A *
 * ones, so the solution is x = ones.  Prints, on rank 0, the relative
 * residual ||b - A x|| / ||b|| (computed by deso) and max |x_i - 1|.
 *
 * Ownership: deso_mat_to_scalapack and deso_vec_to_scalapack with
 * DESO_COPY hand out malloc'd arrays that we free; pdgesv overwrites them
 * (LU factors, solution) without touching deso's A and b.  The BLACS
 * context comes from deso_blacs_context and is ours to Cblacs_gridexit.  */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "deso.h"

void Cblacs_gridexit(int ctxt);
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia,
             const int *ja, const int *desca, int *ipiv, double *b,
             const int *ib, const int *jb, const int *descb, int *info);

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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 500;
    int nb = argc > 2 ? atoi(argv[2]) : 32;
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (n < 1 || nb < 1) {
        if (me == 0) fprintf(stderr, "usage: deso-solve-pdgesv [N [NB]]\n");
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
    if (me == 0) {
        double err = 0.0;
        for (int i = 0; i < n; i++)
            if (fabs(xs[i] - 1.0) > err) err = fabs(xs[i] - 1.0);
        deso_info di;
        D(deso_get_info(ctx, &di));
        printf("deso-solve-pdgesv: n=%d nb=%d P=%d grid=%dx%d "
               "residual=%.3e max|x-1|=%.3e\n",
               n, nb, P, di.grid_rows, di.grid_cols, rv / bv, err);
    }
    free(xs);
    D(deso_finalize(&ctx));
    MPI_Finalize();
    return 0;
}
