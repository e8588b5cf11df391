/* cg_csr: conjugate gradient on a sparse matrix in CSR, one process, plain
 * C with CBLAS's level 1: the sequential twin of deso-cg's sparse path
 * (examples/cg.c with --gen or a coordinate --matrix), as cg_cblas.c is
 * of the dense one.  The same problems and preconditioners
 * (sparse_problem.h), the same iteration, the same output.
 *
 *   deso-cg-csr [--gen lap2d:G|lap3d:G|lap2d-perm:G | --matrix FILE.mtx]
 *               [--iters K] [--tol T] [--repeat R] [--json] [--history]
 *               [--precond none|jacobi|bjacobi] [--blocks B]
 *
 * Default --gen lap2d:64.  b = A * ones, x0 = 0; the residual printed is
 * the true ||b - A x|| / ||b||, "error" ||x - ones|| / sqrt(n).  jacobi: z
 * = D^-1 r; bjacobi: one symmetric Gauss-Seidel sweep on each of B blocks
 * of rows (deso's balanced blocks: --blocks P gives deso-cg's
 * preconditioner at P ranks; default 1, which is SSOR with omega = 1).
 * --history prints "iter K RESIDUAL" (the recurrence residual tested at
 * iteration K) for every iteration, as deso-cg --history does.  The JSON
 * line's time_loop is the solver loop's wall time (all --repeat solves),
 * for the benchmarks (scripts/bench-sparse.sh).  Bad options: one line on
 * stderr, exit 2.                                                        */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cg_problem.h"
#include "sparse_problem.h"

enum { PC_NONE, PC_JACOBI, PC_BJACOBI };
static const char *const pc_names[] = {"none", "jacobi", "bjacobi"};

struct csr_opts {
    const char *gen, *matrix;
    int precond, history;
    long blocks;
};

/* Splits off the options cg_problem.h's parser does not know.            */
static int csr_opts(int *argc, char **argv, struct csr_opts *co, char *err,
                    size_t errlen)
{
    static const char *const names[] = {"--gen", "--matrix", "--precond",
                                        "--blocks"};
    int k = 1, out = 1;
    while (k < *argc) {
        const char *a = argv[k], *v = NULL;
        if (strcmp(a, "--history") == 0) {
            co->history = 1;
            k++;
            continue;
        }
        int which = -1;
        for (int i = 0; i < 4 && which < 0; i++) {
            size_t len = strlen(names[i]);
            if (strncmp(a, names[i], len) == 0 &&
                (a[len] == '\0' || a[len] == '='))
                which = i;
        }
        if (which < 0) {
            argv[out++] = argv[k++];
            continue;
        }
        const char *eq = strchr(a, '=');
        if (eq != NULL) {
            v = eq + 1;
            k++;
        } else if (k + 1 < *argc) {
            v = argv[k + 1];
            k += 2;
        } else {
            snprintf(err, errlen, "option %s needs a value", names[which]);
            return -1;
        }
        if (which == 0) co->gen = v;
        else if (which == 1) co->matrix = v;
        else if (which == 3) {
            if (cg_opt_long(v, 1, 1000000L, &co->blocks) != 0) {
                snprintf(err, errlen, "--blocks must be an integer in "
                         "[1, 1000000], got '%s'", v);
                return -1;
            }
        } else if (strcmp(v, "none") == 0) co->precond = PC_NONE;
        else if (strcmp(v, "jacobi") == 0) co->precond = PC_JACOBI;
        else if (strcmp(v, "bjacobi") == 0) co->precond = PC_BJACOBI;
        else {
            snprintf(err, errlen, "--precond must be none, jacobi or "
                     "bjacobi, got '%s'", v);
            return -1;
        }
    }
    *argc = out;
    if (co->gen != NULL && co->matrix != NULL) {
        snprintf(err, errlen, "--gen and --matrix: give one of them");
        return -1;
    }
    return 0;
}

/* The whole matrix: generated, or read from the file.                    */
static int load(const struct csr_opts *co, struct sp_rows *A, char *err,
                size_t errlen)
{
    if (co->matrix != NULL) return sp_read_mtx(co->matrix, A, err, errlen);
    struct sp_gen g;
    const char *spec = co->gen != NULL ? co->gen : "lap2d:64";
    if (sp_gen_parse(spec, &g, err, errlen) != 0) return -1;
    if (sp_gen_rows(&g, 0, g.n, A) != 0) {
        snprintf(err, errlen, "out of memory for %s", spec);
        return -1;
    }
    return 0;
}

/* z <- M^-1 r for block Jacobi: the sweep on each block of rows.          */
static void bjacobi(const struct sp_rows *A, long blocks, const double *r,
                    double *z)
{
    for (long q = 0; q < blocks; q++) {
        int64_t lo, hi;
        sp_block_range(A->n, blocks, q, &lo, &hi);
        sp_sgs_block(A, lo, hi, r + lo, z + lo);
    }
}

int main(int argc, char **argv)
{
    struct cg_opts o;
    struct csr_opts co = {NULL, NULL, PC_NONE, 0, 1};
    char msg[256];
    int rc = csr_opts(&argc, argv, &co, msg, sizeof msg);
    if (rc == 0) rc = cg_parse_opts(argc, argv, 0, &o, msg, sizeof msg);
    if (rc != 0) {
        fprintf(rc > 0 ? stdout : stderr, "%s%s\n", rc > 0 ? "" : "deso-cg-csr: ", msg);
        return rc > 0 ? 0 : 2;
    }
    struct sp_rows A;
    if (load(&co, &A, msg, sizeof msg) != 0) {
        fprintf(stderr, "deso-cg-csr: %s\n", msg);
        return 2;
    }
    /* the vectors' lengths are CBLAS's int                                  */
    const int n = A.n <= 200000000 ? (int)A.n : 0;
    double *v = n > 0 ? malloc(9 * (size_t)n * sizeof *v) : NULL;
    if (v == NULL) {
        fprintf(stderr, "deso-cg-csr: out of memory for n = %lld\n", (long long)A.n);
        return 1;
    }
    double *b = v, *x = v + n, *r = v + 2 * (size_t)n, *p = v + 3 * (size_t)n;
    double *q = v + 4 * (size_t)n, *t = v + 5 * (size_t)n;
    double *z = co.precond != PC_NONE ? v + 6 * (size_t)n : r;
    double *d = v + 7 * (size_t)n, *ones = v + 8 * (size_t)n;
    for (int i = 0; i < n; i++) {
        x[i] = 0.0;
        ones[i] = 1.0;
    }
    sp_rows_mv(&A, ones, b);                          /* b = A * ones        */
    sp_rows_diag(&A, d);                              /* D, computed once    */
    for (int i = 0; i < n; i++) d[i] = 1.0 / d[i];    /* D^-1                */
    double rr, rrnew, pq, alpha, nalpha, beta, bnorm = 0.0, tnorm, rnorm = 0.0;

/* z <- M^-1 r                                                               */
#define PRECONDITION()                                                       \
    do {                                                                     \
        if (co.precond == PC_BJACOBI) bjacobi(&A, co.blocks, r, z);          \
        else if (co.precond != PC_NONE) cblas_dcopy(n, r, 1, z, 1);          \
        if (co.precond == PC_JACOBI)                                         \
            for (int i = 0; i < n; i++) z[i] *= d[i];                        \
        if (co.precond != PC_NONE) rnorm = cblas_dnrm2(n, r, 1);             \
    } while (0)

    long done = 0, iters_run = 0;   /* this solve's, all solves'          */
    double relres = 1.0;
    int converged = o.tol <= 0.0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
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
            if (co.precond != PC_NONE) rn = rnorm;
            else rn = sqrt(rrv);
            relres = rn / bnorm;
            if (co.history) printf("iter %ld %.17g\n", done, relres);
            if (rn == 0.0 || (o.tol > 0.0 && relres < o.tol)) {
                converged = 1;
                break;
            }
            if (done >= o.iters) break;
            sp_rows_mv(&A, p, q);
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
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double time_loop = (double)(t1.tv_sec - t0.tv_sec) +
                       1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

    /* the true residual ||b - A x|| / ||b||                                */
    sp_rows_mv(&A, x, t);
    cblas_daxpby(n, 1.0, b, 1, -1.0, t, 1);
    tnorm = cblas_dnrm2(n, t, 1);
    double residual = tnorm / bnorm;
    /* the solution error ||x - ones|| / sqrt(n) (the exact x is ones)      */
    cblas_daxpy(n, -1.0, ones, 1, x, 1);
    tnorm = cblas_dnrm2(n, x, 1);
    double error = tnorm / sqrt((double)n);
    if (!converged)
        fprintf(stderr, "deso-cg-csr: did not reach tol %g in %ld iterations "
                "(residual %.3e)\n", o.tol, done, relres);
    int64_t nnz = A.rowptr[A.nrows];
    if (o.json)
        printf("{\"impl\":\"csr\",\"n\":%d,\"p\":1,\"blocks\":%ld,\"iters\":%ld,"
               "\"repeat\":%ld,\"converged\":%s,\"residual\":%.10e,"
               "\"error\":%.10e,\"sparse\":true,\"nnz\":%lld,"
               "\"precond\":\"%s\",\"partition\":\"block\",\"time_loop\":%.6e}\n",
               n, co.blocks, iters_run, o.repeat, converged ? "true" : "false",
               residual, error, (long long)nnz, pc_names[co.precond], time_loop);
    else
        printf("deso-cg-csr: n=%d nnz=%lld precond=%s iters=%ld "
               "residual=%.10e error=%.3e\n", n, (long long)nnz,
               pc_names[co.precond], iters_run, residual, error);
    sp_rows_free(&A);
    free(v);
    return 0;
}
