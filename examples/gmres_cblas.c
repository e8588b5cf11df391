/* gmres_cblas: restarted GMRES(m) with classical Gram-Schmidt and Givens
 * rotations, with plain CBLAS on one process: the original that
 * examples/gmres.c turns into deso calls (diff them: the solver loops
 * differ in declarations, call names, and where deso reads a value).  The
 * basis V is one n x (m + 1) matrix: h = V(:, 0:j)^T w is one dgemv T and
 * w -= V(:, 0:j) h one dgemv N.  An exact breakdown (||w|| = 0: the
 * Krylov space is invariant, and the correction from the columns so far
 * solves the system) ends the cycle there without dividing by zero, and a
 * zero residual at a restart ends the solve.
 *
 *   deso-gmres-cblas [--n N] [--iters K] [--history] [--breakdown K]
 *
 * Problem and options: krylov_problem.h (m = KRYLOV_RESTART).  Prints the
 * relative residual |g(j+1)| / ||b|| of the least-squares problem after
 * every iteration with --history, and at the end
 * "deso-gmres-cblas: n=N iters=K residual=R" (K: the iterations run) with
 * the true residual ||b - A x|| / ||b||.                                  */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "krylov_problem.h"

int main(int argc, char **argv)
{
    struct krylov_opts o;
    char msg[256];
    if (krylov_parse(argc, argv, KRYLOV_OPT_BREAKDOWN, &o, msg, sizeof msg) != 0) {
        fprintf(stderr, "deso-gmres-cblas: %s\n", msg);
        return 2;
    }
    const int n = (int)o.n, m = KRYLOV_RESTART, ld = m + 1;
    double *A = malloc((size_t)n * (size_t)n * sizeof *A);
    double *V = malloc((size_t)n * (size_t)ld * sizeof *V);
    double *w = malloc(4 * (size_t)n * sizeof *w);
    double *H = calloc((size_t)ld * (size_t)m, sizeof *H);
    double *hs = calloc(5 * (size_t)ld, sizeof *hs);
    if (A == NULL || V == NULL || w == NULL || H == NULL || hs == NULL) {
        fprintf(stderr, "deso-gmres-cblas: out of memory for n = %d\n", n);
        return 1;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            A[(size_t)j * n + i] = o.breakdown > 0 ? krylov_shift_a(o.breakdown, i, j)
                                                   : krylov_ns_a(n, i, j);
    double *b = w, *x = w + n, *r = w + 2 * (size_t)n, *u = w + 3 * (size_t)n;
    double *h = hs, *c = hs + ld, *s = hs + 2 * (size_t)ld;
    double *g = hs + 3 * (size_t)ld, *y = hs + 4 * (size_t)ld;
    for (int i = 0; i < n; i++) {
        b[i] = o.breakdown > 0 ? krylov_shift_b(i) : krylov_ns_b(n, i);
        x[i] = 0.0;
    }
    double bnorm, beta, hn;

    bnorm = cblas_dnrm2(n, b, 1);
    long k = 0;
    while (k < o.iters) {
        cblas_dcopy(n, b, 1, r, 1);                       /* r = b - A x */
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, -1.0, A, n, x, 1, 1.0, r, 1);
        beta = cblas_dnrm2(n, r, 1);
        if (beta == 0.0) break;                           /* x solves it */
        double *v0 = V;
        cblas_dcopy(n, r, 1, v0, 1);
        cblas_dscal(n, 1.0 / beta, v0, 1);
        g[0] = beta;
        int j = 0, invariant = 0;
        for (; j < m && k < o.iters && !invariant; j++, k++) {
            double *vj = &V[(size_t)j * n], *vn = &V[(size_t)(j + 1) * n];
            double *Vj = V;                               /* V(:, 0:j)   */
            cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, A, n, vj, 1, 0.0, u, 1);
            cblas_dgemv(CblasColMajor, CblasTrans, n, j + 1, 1.0, Vj, n, u, 1, 0.0, h, 1);
            cblas_dgemv(CblasColMajor, CblasNoTrans, n, j + 1, -1.0, Vj, n, h, 1, 1.0, u, 1);
            hn = cblas_dnrm2(n, u, 1);
            invariant = hn == 0.0;              /* exact breakdown: w = 0  */
            if (!invariant) {
                cblas_dcopy(n, u, 1, vn, 1);
                cblas_dscal(n, 1.0 / hn, vn, 1);
            }
            double *hj = &H[(size_t)j * ld];
            for (int i = 0; i <= j; i++) hj[i] = h[i];
            hj[j + 1] = hn;
            krylov_rotate(hj, c, s, j);
            cblas_drotg(&hj[j], &hj[j + 1], &c[j], &s[j]);
            g[j + 1] = -s[j] * g[j];
            g[j] = c[j] * g[j];
            if (o.history) printf("iter %ld %.17e\n", k + 1, fabs(g[j + 1]) / bnorm);
        }
        krylov_backsolve(H, ld, j, g, y);                 /* x += V y    */
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, j, 1.0, V, n, y, 1, 1.0, x, 1);
    }
    /* the true residual ||b - A x|| / ||b||                                */
    cblas_dcopy(n, b, 1, u, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, -1.0, A, n, x, 1, 1.0, u, 1);
    double rnorm = cblas_dnrm2(n, u, 1);
    printf("deso-gmres-cblas: n=%d iters=%ld residual=%.10e\n", n, k,
           rnorm / bnorm);
    free(A);
    free(V);
    free(w);
    free(H);
    free(hs);
    return 0;
}
