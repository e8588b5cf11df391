/* cg_cblas: conjugate gradient with plain CBLAS on one process, the
 * original that examples/cg.c turns into deso calls.  The two files differ
 * only in declarations and call names, as far as C allows (diff them).
 *
 *   deso-cg-cblas [--n N] [--iters K] [--tol T] [--json]
 *
 * Problem (cg_problem.h): a(i,j) = 1/(1+|i-j|), b = A * ones,
 * x0 = 0.  The residual printed is the true ||b - A x|| / ||b||.          */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cg_problem.h"

int main(int argc, char **argv)
{
    struct cg_opts o;
    char msg[256];
    int rc = cg_parse_opts(argc, argv, 0, &o, msg, sizeof msg);
    if (rc != 0) {
        fprintf(rc > 0 ? stdout : stderr, "%s%s\n", rc > 0 ? "" : "deso-cg-cblas: ", msg);
        return rc > 0 ? 0 : 2;
    }
    const int n = (int)o.n;
    double *A = malloc((size_t)n * (size_t)n * sizeof *A);
    double *v = malloc(6 * (size_t)n * sizeof *v);
    if (A == NULL || v == NULL) {
        fprintf(stderr, "deso-cg-cblas: out of memory for n = %d\n", n);
        return 1;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            A[(size_t)j * n + i] = cg_problem_a(n, i, j);
    double *b = v, *x = v + n, *r = v + 2 * (size_t)n, *p = v + 3 * (size_t)n;
    double *q = v + 4 * (size_t)n, *t = v + 5 * (size_t)n;
    for (int i = 0; i < n; i++) {
        b[i] = cg_problem_b(n, i);
        x[i] = 0.0;
    }
    double rr, rrnew, pq, alpha, nalpha, beta, bnorm, tnorm;

    cblas_dcopy(n, b, 1, r, 1);
    cblas_dcopy(n, r, 1, p, 1);
    rr = cblas_ddot(n, r, 1, r, 1);
    bnorm = cblas_dnrm2(n, b, 1);
    long done = 0;
    while (done < o.iters) {
        double rrv = rr;
        if (rrv == 0.0 || (o.tol > 0.0 && sqrt(rrv) / bnorm < o.tol))
            break;
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, A, n, p, 1, 0.0, q, 1);
        pq = cblas_ddot(n, p, 1, q, 1);
        alpha = rr / pq;
        cblas_daxpy(n, alpha, p, 1, x, 1);
        nalpha = -alpha;
        cblas_daxpy(n, nalpha, q, 1, r, 1);
        rrnew = cblas_ddot(n, r, 1, r, 1);
        beta = rrnew / rr;
        cblas_dscal(n, beta, p, 1);
        cblas_daxpy(n, 1.0, r, 1, p, 1);
        rr = rrnew;
        done++;
    }

    /* the true residual ||b - A x|| / ||b||                                */
    cblas_dcopy(n, b, 1, t, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, -1.0, A, n, x, 1, 1.0, t, 1);
    tnorm = cblas_dnrm2(n, t, 1);
    double residual = tnorm / bnorm;
    if (o.json)
        printf("{\"impl\":\"cblas\",\"n\":%d,\"p\":1,\"iters\":%ld,\"residual\":%.10e}\n",
               n, done, residual);
    else
        printf("deso-cg-cblas: n=%d iters=%ld residual=%.10e\n", n, done, residual);
    free(A);
    free(v);
    return 0;
}
