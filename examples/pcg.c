/* deso-pcg: preconditioned CG through deso on a matrix-free operator with
 * a user Jacobi preconditioner, both user operators (deso_op_create), the
 * same algorithm as examples/pcg_cblas.c with deso handles in place of
 * arrays, lazy scalars in place of doubles and deso_op_apply in place of
 * the host loops (diff them: only declarations and call names differ).
 * The operator needs all of x and computes this rank's rows of y, placed
 * by the optimiser; the preconditioner works element by element where its
 * vectors are.  Neither forces: with --history the program reads one
 * residual per iteration; without it nothing is read until the true
 * residual at the end.
 *
 *   mpiexec.mpich -n P deso-pcg [--n N] [--iters K] [--history]
 *                    [--grid RxC] [--mode none|affine|full]
 *
 * Problem and options: krylov_problem.h.  Output as deso-pcg-cblas's, on
 * rank 0; a library error: one line on stderr, exit 1.                    */
#include "krylov_deso.h"

static double b_fn(int64_t i, void *arg)
{
    return krylov_shell_b(*(const long *)arg, (long)i);
}

/* y <- A x on this rank's rows (x: all of it), and y <- D^-1 x on this
 * rank's elements (x where y is): the host loops of pcg_cblas.c on the
 * local parts, global rows by deso_op_global.                             */
static int shell_a(void *user, const double *x, const deso_op_part *xp,
                   double *y, const deso_op_part *yp)
{
    (void)user;
    for (int64_t i = 0; i < yp->nlocal; i++)
        y[i] = krylov_shell_row((long)xp->n, (long)deso_op_global(yp, i), x);
    return 0;
}

static int shell_m(void *user, const double *x, const deso_op_part *xp,
                   double *y, const deso_op_part *yp)
{
    (void)user;
    (void)xp;
    for (int64_t i = 0; i < yp->nlocal; i++)
        y[i] = x[i] / krylov_shell_d((long)yp->n, (long)deso_op_global(yp, i));
    return 0;
}

int main(int argc, char **argv)
{
    struct krylov_opts o;
    krylov_start(&argc, &argv, "deso-pcg", 0, &o);
    const long n = o.n;
    deso_op *A, *M;
    deso_op_create(ctx, n, n, shell_a, NULL, DESO_OP_REPLICATED, DESO_OP_ANY,
                   NULL, &A);
    deso_op_create(ctx, n, n, shell_m, NULL, DESO_OP_LIKE_Y, DESO_OP_ANY,
                   NULL, &M);
    deso_vec *b, *x, *r, *z, *p, *q, *u;
    deso_vec_from_fn(ctx, n, b_fn, (void *)&n, &b);
    deso_vec **vecs[] = {&x, &r, &z, &p, &q, &u};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++)
        deso_vec_create(ctx, n, vecs[k]);
    deso_scalar *rz, *rznew, *pq, *alpha, *nalpha, *beta;
    deso_scalar *bnorm, *rnorm;
    deso_scalar **scas[] = {&rz, &rznew, &pq, &alpha, &nalpha, &beta, &bnorm,
                            &rnorm};
    for (size_t k = 0; k < sizeof scas / sizeof scas[0]; k++)
        deso_scalar_create(ctx, 0.0, scas[k]);
    double bnormv, rnormv;

    deso_dcopy(n, b, 1, r, 1);
    deso_op_apply(M, r, z);                               /* z = M^-1 r  */
    deso_dcopy(n, z, 1, p, 1);
    deso_ddot(n, r, 1, z, 1, rz);
    deso_dnrm2(n, b, 1, bnorm);
    deso_scalar_get(bnorm, &bnormv);
    for (long k = 1; k <= o.iters; k++) {
        deso_op_apply(A, p, q);                           /* q = A p     */
        deso_ddot(n, p, 1, q, 1, pq);
        deso_sdiv(alpha, rz, pq);
        deso_daxpy(n, alpha, p, 1, x, 1);
        deso_sneg(nalpha, alpha);
        deso_daxpy(n, nalpha, q, 1, r, 1);
        deso_op_apply(M, r, z);                           /* z = M^-1 r  */
        deso_ddot(n, r, 1, z, 1, rznew);
        deso_sdiv(beta, rznew, rz);
        deso_daxpby(n, 1.0, z, 1, beta, p, 1);            /* z + beta p  */
        deso_sset(rz, rznew);
        if (o.history) {
            deso_dnrm2(n, r, 1, rnorm);
            deso_scalar_get(rnorm, &rnormv);
            if (rank0) printf("iter %ld %.17e\n", k, rnormv / bnormv);
        }
    }
    /* the true residual ||b - A x|| / ||b||                                */
    deso_op_apply(A, x, u);
    deso_daxpby(n, 1.0, b, 1, -1.0, u, 1);
    deso_dnrm2(n, u, 1, rnorm);
    deso_scalar_get(rnorm, &rnormv);
    if (rank0)
        printf("deso-pcg: n=%ld iters=%ld residual=%.10e\n", n, o.iters,
               rnormv / bnormv);
    deso_op_destroy(&A);
    deso_op_destroy(&M);
    deso_finalize(&ctx);
    MPI_Finalize();
    return 0;
}
