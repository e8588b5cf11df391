/* bicgstab_cblas: BiCGSTAB (van der Vorst) with plain CBLAS on one
 * process, the original that examples/bicgstab.c turns into deso calls;
 * the two differ only in declarations and call names (diff them).
 *
 *   deso-bicgstab-cblas [--n N] [--iters K] [--history]
 *
 * Problem and options: krylov_problem.h.  Prints the relative residual
 * ||r|| / ||b|| of the recurrence after every iteration with --history,
 * and at the end "deso-bicgstab-cblas: n=N iters=K residual=R" with the
 * true residual ||b - A x|| / ||b||.                                       */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "krylov_problem.h"

int main(int argc, char **argv)
{
    struct krylov_opts o;
    char msg[256];
    if (krylov_parse(argc, argv, 0, &o, msg, sizeof msg) != 0) {
        fprintf(stderr, "deso-bicgstab-cblas: %s\n", msg);
        return 2;
    }
    const int n = (int)o.n;
    double *A = malloc((size_t)n * (size_t)n * sizeof *A);
    double *w = malloc(9 * (size_t)n * sizeof *w);
    if (A == NULL || w == NULL) {
        fprintf(stderr, "deso-bicgstab-cblas: out of memory for n = %d\n", n);
        return 1;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) A[(size_t)j * n + i] = krylov_ns_a(n, i, j);
    double *b = w, *x = w + n, *r = w + 2 * (size_t)n, *rhat = w + 3 * (size_t)n;
    double *p = w + 4 * (size_t)n, *v = w + 5 * (size_t)n, *s = w + 6 * (size_t)n;
    double *t = w + 7 * (size_t)n, *u = w + 8 * (size_t)n;
    for (int i = 0; i < n; i++) {
        b[i] = krylov_ns_b(n, i);
        x[i] = 0.0;
        p[i] = 0.0;
        v[i] = 0.0;
    }
    double rho, rhonew, alpha, omega, beta, ratio, rv, ts, tt, nomega, nalpha;
    double bnorm, rnorm;

    cblas_dcopy(n, b, 1, r, 1);
    cblas_dcopy(n, r, 1, rhat, 1);
    rho = 1.0;
    alpha = 1.0;
    omega = 1.0;
    bnorm = cblas_dnrm2(n, b, 1);
    for (long k = 1; k <= o.iters; k++) {
        rhonew = cblas_ddot(n, rhat, 1, r, 1);
        beta = rhonew / rho;
        ratio = alpha / omega;
        beta = beta * ratio;
        nomega = -omega;
        cblas_daxpy(n, nomega, v, 1, p, 1);               /* p - omega v */
        cblas_daxpby(n, 1.0, r, 1, beta, p, 1);           /* r + beta () */
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, A, n, p, 1, 0.0, v, 1);
        rv = cblas_ddot(n, rhat, 1, v, 1);
        alpha = rhonew / rv;
        nalpha = -alpha;
        cblas_dcopy(n, r, 1, s, 1);
        cblas_daxpy(n, nalpha, v, 1, s, 1);               /* s = r - a v */
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, A, n, s, 1, 0.0, t, 1);
        ts = cblas_ddot(n, t, 1, s, 1);
        tt = cblas_ddot(n, t, 1, t, 1);
        omega = ts / tt;
        cblas_daxpy(n, alpha, p, 1, x, 1);
        cblas_daxpy(n, omega, s, 1, x, 1);
        nomega = -omega;
        cblas_dcopy(n, s, 1, r, 1);
        cblas_daxpy(n, nomega, t, 1, r, 1);               /* r = s - w t */
        rho = rhonew;
        if (o.history) {
            rnorm = cblas_dnrm2(n, r, 1);
            printf("iter %ld %.17e\n", k, rnorm / bnorm);
        }
    }
    /* the true residual ||b - A x|| / ||b||                                */
    cblas_dcopy(n, b, 1, u, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, -1.0, A, n, x, 1, 1.0, u, 1);
    rnorm = cblas_dnrm2(n, u, 1);
    printf("deso-bicgstab-cblas: n=%d iters=%ld residual=%.10e\n", n, o.iters,
           rnorm / bnorm);
    free(A);
    free(w);
    return 0;
}
