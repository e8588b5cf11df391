/* deso-bicgstab: BiCGSTAB (van der Vorst) through deso, the same algorithm
 * as examples/bicgstab_cblas.c with deso handles in place of arrays and
 * lazy scalars in place of doubles (diff them: only declarations and call
 * names differ).  The scalars stay lazy: with --history the program reads
 * one residual per iteration (a force point); without it nothing is read
 * until the true residual at the end, so the iterations are recorded and
 * run as the optimiser plans them.
 *
 *   mpiexec.mpich -n P deso-bicgstab [--n N] [--iters K] [--history]
 *                        [--grid RxC] [--mode none|affine|full]
 *
 * Problem and options: krylov_problem.h.  The matrix is generated where
 * it lives.  Output as deso-bicgstab-cblas's, on rank 0; a library error:
 * one line on stderr, exit 1.                                               */
#include "krylov_deso.h"

int main(int argc, char **argv)
{
    struct krylov_opts o;
    krylov_start(&argc, &argv, "deso-bicgstab", 0, &o);
    const long n = o.n;
    deso_mat *A;
    deso_mat_from_fn(ctx, n, n, krylov_ns_a_fn, (void *)&n, &A);
    deso_vec *b, *x, *r, *rhat, *p, *v, *s, *t, *u;
    deso_vec_from_fn(ctx, n, krylov_ns_b_fn, (void *)&n, &b);
    deso_vec **vecs[] = {&x, &r, &rhat, &p, &v, &s, &t, &u};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++)
        deso_vec_create(ctx, n, vecs[k]);
    deso_scalar *rho, *rhonew, *alpha, *omega, *beta, *ratio, *rv, *ts, *tt, *nomega, *nalpha;
    deso_scalar *bnorm, *rnorm;
    deso_scalar **scas[] = {&rho, &rhonew, &alpha, &omega, &beta, &ratio, &rv,
                            &ts, &tt, &nomega, &nalpha, &bnorm, &rnorm};
    for (size_t k = 0; k < sizeof scas / sizeof scas[0]; k++)
        deso_scalar_create(ctx, 0.0, scas[k]);
    double bnormv, rnormv;

    deso_dcopy(n, b, 1, r, 1);
    deso_dcopy(n, r, 1, rhat, 1);
    deso_sset(rho, 1.0);
    deso_sset(alpha, 1.0);
    deso_sset(omega, 1.0);
    deso_dnrm2(n, b, 1, bnorm);
    deso_scalar_get(bnorm, &bnormv);
    for (long k = 1; k <= o.iters; k++) {
        deso_ddot(n, rhat, 1, r, 1, rhonew);
        deso_sdiv(beta, rhonew, rho);
        deso_sdiv(ratio, alpha, omega);
        deso_smul(beta, beta, ratio);
        deso_sneg(nomega, omega);
        deso_daxpy(n, nomega, v, 1, p, 1);                /* p - omega v */
        deso_daxpby(n, 1.0, r, 1, beta, p, 1);            /* r + beta () */
        deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, p, 1, 0.0, v, 1);
        deso_ddot(n, rhat, 1, v, 1, rv);
        deso_sdiv(alpha, rhonew, rv);
        deso_sneg(nalpha, alpha);
        deso_dcopy(n, r, 1, s, 1);
        deso_daxpy(n, nalpha, v, 1, s, 1);                /* s = r - a v */
        deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, s, 1, 0.0, t, 1);
        deso_ddot(n, t, 1, s, 1, ts);
        deso_ddot(n, t, 1, t, 1, tt);
        deso_sdiv(omega, ts, tt);
        deso_daxpy(n, alpha, p, 1, x, 1);
        deso_daxpy(n, omega, s, 1, x, 1);
        deso_sneg(nomega, omega);
        deso_dcopy(n, s, 1, r, 1);
        deso_daxpy(n, nomega, t, 1, r, 1);                /* r = s - w t */
        deso_sset(rho, rhonew);
        if (o.history) {
            deso_dnrm2(n, r, 1, rnorm);
            deso_scalar_get(rnorm, &rnormv);
            if (rank0) printf("iter %ld %.17e\n", k, rnormv / bnormv);
        }
    }
    /* the true residual ||b - A x|| / ||b||                                */
    deso_dcopy(n, b, 1, u, 1);
    deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, -1.0, A, n, x, 1, 1.0, u, 1);
    deso_dnrm2(n, u, 1, rnorm);
    deso_scalar_get(rnorm, &rnormv);
    if (rank0)
        printf("deso-bicgstab: n=%ld iters=%ld residual=%.10e\n", n, o.iters,
               rnormv / bnormv);
    deso_finalize(&ctx);
    MPI_Finalize();
    return 0;
}
