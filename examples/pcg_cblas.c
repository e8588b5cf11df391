/* pcg_cblas: preconditioned CG with plain CBLAS on one process, on a
 * matrix-free operator with a Jacobi preconditioner, both written as the
 * loops a matrix-free code has; the original that examples/pcg.c turns
 * into deso calls (diff them: only declarations and call names differ).
 *
 *   deso-pcg-cblas [--n N] [--iters K] [--history]
 *
 * Problem and options: krylov_problem.h.  Prints the relative residual
 * ||r|| / ||b|| of the recurrence after every iteration with --history,
 * and at the end "deso-pcg-cblas: n=N iters=K residual=R" with the true
 * residual ||b - A x|| / ||b||.                                           */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "krylov_problem.h"

/* y <- A x, and y <- D^-1 x (Jacobi), on whole vectors of length n.     */
static void apply_a(long n, const double *x, double *y)
{
    for (long i = 0; i < n; i++) y[i] = krylov_shell_row(n, i, x);
}

static void apply_m(long n, const double *x, double *y)
{
    for (long i = 0; i < n; i++) y[i] = x[i] / krylov_shell_d(n, i);
}

int main(int argc, char **argv)
{
    struct krylov_opts o;
    char msg[256];
    if (krylov_parse(argc, argv, 0, &o, msg, sizeof msg) != 0) {
        fprintf(stderr, "deso-pcg-cblas: %s\n", msg);
        return 2;
    }
    const int n = (int)o.n;
    double *w = malloc(7 * (size_t)n * sizeof *w);
    if (w == NULL) {
        fprintf(stderr, "deso-pcg-cblas: out of memory for n = %d\n", n);
        return 1;
    }
    double *b = w, *x = w + n, *r = w + 2 * (size_t)n, *z = w + 3 * (size_t)n;
    double *p = w + 4 * (size_t)n, *q = w + 5 * (size_t)n, *u = w + 6 * (size_t)n;
    for (int i = 0; i < n; i++) {
        b[i] = krylov_shell_b(n, i);
        x[i] = 0.0;
    }
    double rz, rznew, pq, alpha, nalpha, beta;
    double bnorm, rnorm;

    cblas_dcopy(n, b, 1, r, 1);
    apply_m(n, r, z);                                     /* z = M^-1 r  */
    cblas_dcopy(n, z, 1, p, 1);
    rz = cblas_ddot(n, r, 1, z, 1);
    bnorm = cblas_dnrm2(n, b, 1);
    for (long k = 1; k <= o.iters; k++) {
        apply_a(n, p, q);                                 /* q = A p     */
        pq = cblas_ddot(n, p, 1, q, 1);
        alpha = rz / pq;
        cblas_daxpy(n, alpha, p, 1, x, 1);
        nalpha = -alpha;
        cblas_daxpy(n, nalpha, q, 1, r, 1);
        apply_m(n, r, z);                                 /* z = M^-1 r  */
        rznew = cblas_ddot(n, r, 1, z, 1);
        beta = rznew / rz;
        cblas_daxpby(n, 1.0, z, 1, beta, p, 1);           /* z + beta p  */
        rz = rznew;
        if (o.history) {
            rnorm = cblas_dnrm2(n, r, 1);
            printf("iter %ld %.17e\n", k, rnorm / bnorm);
        }
    }
    /* the true residual ||b - A x|| / ||b||                                */
    apply_a(n, x, u);
    cblas_daxpby(n, 1.0, b, 1, -1.0, u, 1);
    rnorm = cblas_dnrm2(n, u, 1);
    printf("deso-pcg-cblas: n=%d iters=%ld residual=%.10e\n", n, o.iters,
           rnorm / bnorm);
    free(w);
    return 0;
}
