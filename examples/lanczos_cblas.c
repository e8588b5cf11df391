/* lanczos_cblas: the symmetric Lanczos iteration with plain CBLAS on one
 * process, the original that examples/lanczos.c turns into deso calls;
 * the two differ only in declarations and call names (diff them).
 *
 *   deso-lanczos-cblas [--n N] [--iters K] [--history]
 *
 * Problem and options: krylov_problem.h.  With --history prints after
 * every step k the extreme eigenvalues of the k x k tridiagonal matrix;
 * at the end "deso-lanczos-cblas: n=N iters=K ritz_min=L ritz_max=H".     */
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
        fprintf(stderr, "deso-lanczos-cblas: %s\n", msg);
        return 2;
    }
    const int n = (int)o.n;
    const long K = o.iters;
    double *A = malloc((size_t)n * (size_t)n * sizeof *A);
    double *vs = malloc(3 * (size_t)n * sizeof *vs);
    double *as = malloc(2 * (size_t)K * sizeof *as), *bs = as + K;
    if (A == NULL || vs == NULL || as == NULL) {
        fprintf(stderr, "deso-lanczos-cblas: out of memory for n = %d\n", n);
        return 1;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) A[(size_t)j * n + i] = krylov_sym_a(n, i, j);
    double *vprev = vs, *v = vs + n, *w = vs + 2 * (size_t)n, *tmp;
    for (int i = 0; i < n; i++) {
        v[i] = krylov_start_v(n, i);
        vprev[i] = 0.0;
    }
    double vnorm, rv, na, nb, rb;
    long k;

    vnorm = cblas_dnrm2(n, v, 1);
    rv = 1.0 / vnorm;
    cblas_dscal(n, rv, v, 1);
    for (k = 0; k < K; k++) {
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, A, n, v, 1, 0.0, w, 1);
        as[k] = cblas_ddot(n, w, 1, v, 1);
        na = -as[k];
        cblas_daxpy(n, na, v, 1, w, 1);
        if (k > 0) {
            nb = -bs[k - 1];
            cblas_daxpy(n, nb, vprev, 1, w, 1);
        }
        bs[k] = cblas_dnrm2(n, w, 1);
        if (o.history)
            printf("iter %ld %.17e %.17e\n", k + 1, krylov_eig(as, bs, (int)k + 1, 0),
                   krylov_eig(as, bs, (int)k + 1, (int)k));
        if (bs[k] == 0.0) {                   /* an invariant subspace      */
            k++;
            break;
        }
        rb = 1.0 / bs[k];
        cblas_dscal(n, rb, w, 1);
        tmp = vprev;                          /* (vprev, v, w) <- (v, w, -) */
        vprev = v;
        v = w;
        w = tmp;
    }
    printf("deso-lanczos-cblas: n=%d iters=%ld ritz_min=%.17e ritz_max=%.17e\n", n, k,
           krylov_eig(as, bs, (int)k, 0), krylov_eig(as, bs, (int)k, (int)k - 1));
    free(A);
    free(vs);
    free(as);
    return 0;
}
