/* cg_cblas: conjugate gradient with plain CBLAS on one process, the
 * original that examples/cg.c turns into deso calls.  The two files differ
 * only in declarations and call names, as far as C allows (diff them).
 *
 *   deso-cg-cblas [--n N] [--iters K] [--tol T] [--repeat R] [--json]
 *                 [--precond none|jacobi|ssor]
 *
 * Problem (cg_problem.h): a(i,j) = 1/(1+|i-j|), b = A * ones,
 * x0 = 0.  The residual printed is the true ||b - A x|| / ||b||; "error"
 * is ||x - ones|| / sqrt(n).  Preconditioners as deso-cg's: jacobi z =
 * D^-1 r, ssor z = (D+U)^-1 D (D+L)^-1 r (two cblas_dtrsv on A).        */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"

enum { PC_NONE, PC_JACOBI, PC_SSOR };

/* Splits off --precond (cg_problem.h's parser does not know it).         */
static int precond_opt(int *argc, char **argv, int *pc, char *err,
                       size_t errlen)
{
    int k = 1, out = 1;
    while (k < *argc) {
        const char *a = argv[k], *v = NULL;
        if (strcmp(a, "--precond") == 0) {
            if (k + 1 >= *argc) {
                snprintf(err, errlen, "option --precond needs a value");
                return -1;
            }
            v = argv[k + 1];
            k += 2;
        } else if (strncmp(a, "--precond=", 10) == 0) {
            v = a + 10;
            k++;
        } else {
            argv[out++] = argv[k++];
            continue;
        }
        if (strcmp(v, "none") == 0) *pc = PC_NONE;
        else if (strcmp(v, "jacobi") == 0) *pc = PC_JACOBI;
        else if (strcmp(v, "ssor") == 0) *pc = PC_SSOR;
        else {
            snprintf(err, errlen, "--precond must be none, jacobi or ssor, got '%s'", v);
            return -1;
        }
    }
    *argc = out;
    return 0;
}

int main(int argc, char **argv)
{
    struct cg_opts o;
    char msg[256];
    int precond = PC_NONE;
    int rc = precond_opt(&argc, argv, &precond, msg, sizeof msg);
    if (rc == 0) rc = cg_parse_opts(argc, argv, 0, &o, msg, sizeof msg);
    if (rc != 0) {
        fprintf(rc > 0 ? stdout : stderr, "%s%s\n", rc > 0 ? "" : "deso-cg-cblas: ", msg);
        return rc > 0 ? 0 : 2;
    }
    const int n = (int)o.n;
    double *A = malloc((size_t)n * (size_t)n * sizeof *A);
    double *v = malloc(9 * (size_t)n * sizeof *v);
    if (A == NULL || v == NULL) {
        fprintf(stderr, "deso-cg-cblas: out of memory for n = %d\n", n);
        return 1;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            A[(size_t)j * n + i] = cg_problem_a(n, i, j);
    double *b = v, *x = v + n, *r = v + 2 * (size_t)n, *p = v + 3 * (size_t)n;
    double *q = v + 4 * (size_t)n, *t = v + 5 * (size_t)n;
    double *z = precond != PC_NONE ? v + 6 * (size_t)n : r;
    double *d = v + 7 * (size_t)n, *ones = v + 8 * (size_t)n;
    for (int i = 0; i < n; i++) {
        b[i] = cg_problem_b(n, i);
        x[i] = 0.0;
        ones[i] = 1.0;
        d[i] = A[(size_t)i * n + i];                  /* D, computed once    */
        if (precond == PC_JACOBI) d[i] = 1.0 / d[i];  /* D^-1                */
    }
    double rr, rrnew, pq, alpha, nalpha, beta, bnorm = 0.0, tnorm, rnorm = 0.0;

/* z <- M^-1 r                                                               */
#define PRECONDITION()                                                       \
    do {                                                                     \
        if (precond != PC_NONE) cblas_dcopy(n, r, 1, z, 1);                 \
        if (precond == PC_JACOBI)                                            \
            for (int i = 0; i < n; i++) z[i] *= d[i];                        \
        if (precond == PC_SSOR) {                                            \
            cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, A, n, z, 1); \
            for (int i = 0; i < n; i++) z[i] *= d[i];                        \
            cblas_dtrsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, n, A, n, z, 1); \
        }                                                                    \
        if (precond != PC_NONE) rnorm = cblas_dnrm2(n, r, 1);                \
    } while (0)

    long done = 0, iters_run = 0;   /* this solve's, all solves'          */
    double relres = 1.0;
    int converged = o.tol <= 0.0;
    /* --repeat: the whole solve again from x0 = 0 (cg_problem.h)           */
    for (long solve = 0; solve < o.repeat; solve++) {
        if (solve > 0) cblas_dscal(n, 0.0, x, 1);
        cblas_dcopy(n, b, 1, r, 1);
        PRECONDITION();
        cblas_dcopy(n, z, 1, p, 1);
        rr = cblas_ddot(n, r, 1, z, 1);
        bnorm = cblas_dnrm2(n, b, 1);
        done = 0;
        for (;;) {
            double rrv = rr, rn;
            if (precond != PC_NONE) rn = rnorm;
            else rn = sqrt(rrv);
            relres = rn / bnorm;
            if (rn == 0.0 || (o.tol > 0.0 && relres < o.tol)) {
                converged = 1;
                break;
            }
            if (done >= o.iters) break;
            cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, A, n, p, 1, 0.0, q, 1);
            pq = cblas_ddot(n, p, 1, q, 1);
            alpha = rr / pq;
            cblas_daxpy(n, alpha, p, 1, x, 1);
            nalpha = -alpha;
            cblas_daxpy(n, nalpha, q, 1, r, 1);
            PRECONDITION();
            rrnew = cblas_ddot(n, r, 1, z, 1);
            beta = rrnew / rr;
            cblas_dscal(n, beta, p, 1);
            cblas_daxpy(n, 1.0, z, 1, p, 1);
            rr = rrnew;
            done++;
        }
        iters_run += done;
    }

    /* the true residual ||b - A x|| / ||b||                                */
    cblas_dcopy(n, b, 1, t, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, -1.0, A, n, x, 1, 1.0, t, 1);
    tnorm = cblas_dnrm2(n, t, 1);
    double residual = tnorm / bnorm;
    /* the solution error ||x - ones|| / sqrt(n) (the exact x is ones)      */
    cblas_daxpy(n, -1.0, ones, 1, x, 1);
    tnorm = cblas_dnrm2(n, x, 1);
    double error = tnorm / sqrt((double)n);
    if (!converged)
        fprintf(stderr, "deso-cg-cblas: did not reach tol %g in %ld iterations "
                "(residual %.3e)\n", o.tol, done, relres);
    if (o.json)
        printf("{\"impl\":\"cblas\",\"n\":%d,\"p\":1,\"iters\":%ld,\"repeat\":%ld,"
               "\"converged\":%s,\"residual\":%.10e,\"error\":%.10e}\n",
               n, iters_run, o.repeat, converged ? "true" : "false", residual, error);
    else
        printf("deso-cg-cblas: n=%d iters=%ld residual=%.10e error=%.3e\n", n, iters_run,
               residual, error);
    free(A);
    free(v);
    return 0;
}
