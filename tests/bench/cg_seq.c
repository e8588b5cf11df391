/* cg_seq: the sequential anchor. Conjugate gradient on the problem of
 * cg_problem.h with plain CBLAS on one process (no MPI, although it is built
 * with mpicc.mpich like every benchmark).
 *
 *   cg_seq [--n N] [--iters K] [--tol T] [--repeat R] [--json]
 *
 * --json prints one line:
 *   {"impl":"seq","n":..,"p":1,"grid":"1x1","iters":..,"repeat":..,"residual":..,
 *    "error":..,"time_loop":..,"time_total":..,"time_per_iter":..}
 * iters: the iterations of all --repeat solves (cg_problem.h).
 * time_loop is the CG loop's wall time (set-up of r, p, rr included;
 * generation and the final true-residual check excluded), the interval
 * deso-cg and cg_pblas report as time_loop between their barriers (one
 * process needs none); time_total is the same figure, kept for older
 * readers. Run with OPENBLAS_NUM_THREADS=1.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cg_problem.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    struct cg_opts o;
    char err[256];
    int rc = cg_parse_opts(argc, argv, 0, &o, err, sizeof err);
    if (rc != 0) {
        fprintf(rc > 0 ? stdout : stderr, "%s%s\n", rc > 0 ? "" : "cg_seq: ", err);
        return rc > 0 ? 0 : 2;
    }
    const int n = (int)o.n;
    const size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a);
    double *v = malloc(6 * (size_t)n * sizeof *v);
    if (a == NULL || v == NULL) {
        fprintf(stderr, "cg_seq: out of memory for n = %d (%.1f GB)\n", n, 8e-9 * (double)nn);
        free(a);
        free(v);
        return 1;
    }
    double *b = v, *x = v + n, *r = v + 2 * (size_t)n, *p = v + 3 * (size_t)n;
    double *q = v + 4 * (size_t)n, *t = v + 5 * (size_t)n;

    /* generation: column-major, a(i,j) at a[j*n + i] */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            a[(size_t)j * n + i] = cg_problem_a(n, i, j);
    for (int i = 0; i < n; i++) {
        b[i] = cg_problem_b(n, i);
        x[i] = 0.0;
    }

    /* the CG loop, --repeat times from x0 = 0 (cg_problem.h) */
    double t0 = now();
    double bnorm = 1.0;
    long done = 0;
    for (long solve = 0; solve < o.repeat; solve++) {
        if (solve > 0)
            cblas_dscal(n, 0.0, x, 1);
        cblas_dcopy(n, b, 1, r, 1);
        cblas_dcopy(n, r, 1, p, 1);
        double rr = cblas_ddot(n, r, 1, r, 1);
        bnorm = sqrt(cblas_ddot(n, b, 1, b, 1));
        for (long k = 0; k < o.iters; k++) {
            if (rr == 0.0 || (o.tol > 0.0 && sqrt(rr) / bnorm < o.tol))
                break;
            cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, a, n, p, 1, 0.0, q, 1);
            double alpha = rr / cblas_ddot(n, p, 1, q, 1);
            cblas_daxpy(n, alpha, p, 1, x, 1);
            cblas_daxpy(n, -alpha, q, 1, r, 1);
            double rrnew = cblas_ddot(n, r, 1, r, 1);
            double beta = rrnew / rr;
            cblas_dscal(n, beta, p, 1);
            cblas_daxpy(n, 1.0, r, 1, p, 1);
            rr = rrnew;
            done++;
        }
    }
    double t1 = now();

    /* true residual ||b - A x|| / ||b|| and error ||x - 1|| / sqrt(n) */
    cblas_dcopy(n, b, 1, t, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, -1.0, a, n, x, 1, 1.0, t, 1);
    double residual = cblas_dnrm2(n, t, 1) / cblas_dnrm2(n, b, 1);
    for (int i = 0; i < n; i++)
        t[i] = x[i] - 1.0;
    double error = cblas_dnrm2(n, t, 1) / sqrt((double)n);

    double total = t1 - t0;
    double per = done > 0 ? total / (double)done : 0.0;
    if (o.json)
        printf("{\"impl\":\"seq\",\"n\":%d,\"p\":1,\"grid\":\"1x1\",\"iters\":%ld,"
               "\"repeat\":%ld,\"residual\":%.10e,\"error\":%.6e,\"time_loop\":%.6e,"
               "\"time_total\":%.6e,\"time_per_iter\":%.6e}\n",
               n, done, o.repeat, residual, error, total, total, per);
    else
        printf("cg_seq: n=%d iters=%ld residual=%.10e error=%.3e time_total=%.4fs "
               "time_per_iter=%.3fms\n", n, done, residual, error, total, 1e3 * per);
    free(a);
    free(v);
    return 0;
}
