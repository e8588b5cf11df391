/* deso-lanczos: the symmetric Lanczos iteration through deso, the same
 * algorithm as examples/lanczos_cblas.c with deso handles in place of
 * arrays (diff them: only declarations and call names differ).  Each
 * step reads its two coefficients, as every Lanczos code does to watch for
 * a breakdown (beta = 0): one force point per step, whose plan is made
 * once and replayed.
 *
 *   mpiexec.mpich -n P deso-lanczos [--n N] [--iters K] [--history]
 *                       [--grid RxC] [--mode none|affine|full]
 *
 * Problem and options: krylov_problem.h.  Output as deso-lanczos-cblas's,
 * on rank 0; a library error: one line on stderr, exit 1.                 */
#include "krylov_deso.h"

static double a_fn(int64_t i, int64_t j, void *arg)
{
    return krylov_sym_a(*(const long *)arg, (long)i, (long)j);
}

static double v_fn(int64_t i, void *arg)
{
    return krylov_start_v(*(const long *)arg, (long)i);
}

int main(int argc, char **argv)
{
    struct krylov_opts o;
    krylov_start(&argc, &argv, "deso-lanczos", 0, &o);
    const long n = o.n;
    const long K = o.iters;
    deso_mat *A;
    deso_mat_from_fn(ctx, n, n, a_fn, (void *)&n, &A);
    double *as = malloc(2 * (size_t)K * sizeof *as), *bs = as + K;
    if (as == NULL) fail(ctx, DESO_ENOMEM, "malloc", "no memory", NULL);
    deso_vec *vprev, *v, *w, *tmp;
    deso_vec_create(ctx, n, &vprev);
    deso_vec_from_fn(ctx, n, v_fn, (void *)&n, &v);
    deso_vec_create(ctx, n, &w);
    deso_scalar *alpha, *beta;
    deso_scalar_create(ctx, 0.0, &alpha);
    deso_scalar_create(ctx, 0.0, &beta);
    double vnorm, rv, na, nb, rb;
    long k;

    deso_dnrm2(n, v, 1, beta);
    deso_scalar_get(beta, &vnorm);
    rv = 1.0 / vnorm;
    deso_dscal(n, rv, v, 1);
    for (k = 0; k < K; k++) {
        deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, v, 1, 0.0, w, 1);
        deso_ddot(n, w, 1, v, 1, alpha);
        deso_scalar_get(alpha, &as[k]);
        na = -as[k];
        deso_daxpy(n, na, v, 1, w, 1);
        if (k > 0) {
            nb = -bs[k - 1];
            deso_daxpy(n, nb, vprev, 1, w, 1);
        }
        deso_dnrm2(n, w, 1, beta);
        deso_scalar_get(beta, &bs[k]);
        if (o.history && rank0)
            printf("iter %ld %.17e %.17e\n", k + 1, krylov_eig(as, bs, (int)k + 1, 0),
                   krylov_eig(as, bs, (int)k + 1, (int)k));
        if (bs[k] == 0.0) {                   /* an invariant subspace      */
            k++;
            break;
        }
        rb = 1.0 / bs[k];
        deso_dscal(n, rb, w, 1);
        tmp = vprev;                          /* (vprev, v, w) <- (v, w, -) */
        vprev = v;
        v = w;
        w = tmp;
    }
    if (rank0)
        printf("deso-lanczos: n=%ld iters=%ld ritz_min=%.17e ritz_max=%.17e\n", n, k,
               krylov_eig(as, bs, (int)k, 0), krylov_eig(as, bs, (int)k, (int)k - 1));
    free(as);
    deso_finalize(&ctx);
    MPI_Finalize();
    return 0;
}
