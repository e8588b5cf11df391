/* deso-gmres: restarted GMRES(m) with classical Gram-Schmidt and Givens
 * rotations through deso, the same algorithm as examples/gmres_cblas.c
 * (diff them).  The basis V is one n x (m + 1) deso matrix: its columns
 * are written by level 1 calls through column views (deso_mat_col), and
 * h = V(:, 0:j)^T w and w -= V(:, 0:j) h are one dgemv each on the column
 * range V(:, 0:j) (deso_mat_cols).  The small least-squares problem lives
 * on the host, as in the twin: each iteration reads ||w|| and h (one
 * force), rotates H's new column with deso_drotg on host doubles, and
 * each restart hands the correction y back as a vector.  An exact
 * breakdown (||w|| = 0: the Krylov space is invariant, and the correction
 * from the columns so far solves the system) ends the cycle there without
 * dividing by zero, and a zero residual at a restart ends the solve.
 *
 *   mpiexec.mpich -n P deso-gmres [--n N] [--iters K] [--history]
 *                     [--breakdown K] [--grid RxC] [--mode none|affine|full]
 *
 * Problem and options: krylov_problem.h (m = KRYLOV_RESTART).  Output as
 * deso-gmres-cblas's, on rank 0; a library error: one line on stderr,
 * exit 1.                                                                  */
#include "krylov_deso.h"

int main(int argc, char **argv)
{
    struct krylov_opts o;
    krylov_start(&argc, &argv, "deso-gmres", KRYLOV_OPT_BREAKDOWN, &o);
    const long n = o.n;
    const int m = KRYLOV_RESTART, ld = m + 1;
    deso_mat *A, *V;
    if (o.breakdown > 0)
        deso_mat_from_fn(ctx, n, n, krylov_shift_a_fn, &o.breakdown, &A);
    else
        deso_mat_from_fn(ctx, n, n, krylov_ns_a_fn, (void *)&n, &A);
    deso_mat_create(ctx, n, ld, &V);
    deso_vec *b, *x, *r, *u, *dh, *yv;
    if (o.breakdown > 0) deso_vec_from_fn(ctx, n, krylov_shift_b_fn, NULL, &b);
    else deso_vec_from_fn(ctx, n, krylov_ns_b_fn, (void *)&n, &b);
    deso_vec **vecs[] = {&x, &r, &u};
    for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++)
        deso_vec_create(ctx, n, vecs[k]);
    deso_vec_create(ctx, ld, &dh);
    deso_scalar *bnorms, *betas, *hns, *rnorms;
    deso_scalar **scas[] = {&bnorms, &betas, &hns, &rnorms};
    for (size_t k = 0; k < sizeof scas / sizeof scas[0]; k++)
        deso_scalar_create(ctx, 0.0, scas[k]);
    double *H = calloc((size_t)ld * (size_t)m, sizeof *H);
    double *hs = calloc(5 * (size_t)ld, sizeof *hs);
    if (H == NULL || hs == NULL) {
        fprintf(stderr, "deso-gmres: out of memory\n");
        return 1;
    }
    double *h = hs, *c = hs + ld, *s = hs + 2 * (size_t)ld;
    double *g = hs + 3 * (size_t)ld, *y = hs + 4 * (size_t)ld;
    double bnorm, beta, hn;

    deso_dnrm2(n, b, 1, bnorms);
    deso_scalar_get(bnorms, &bnorm);
    long k = 0;
    while (k < o.iters) {
        deso_dcopy(n, b, 1, r, 1);                        /* r = b - A x */
        deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, -1.0, A, n, x, 1, 1.0, r, 1);
        deso_dnrm2(n, r, 1, betas);
        deso_scalar_get(betas, &beta);
        if (beta == 0.0) break;                           /* x solves it */
        deso_vec *v0;
        deso_mat_col(V, 0, &v0);
        deso_dcopy(n, r, 1, v0, 1);
        deso_dscal(n, 1.0 / beta, v0, 1);
        deso_vec_destroy(&v0);
        g[0] = beta;
        int j = 0, invariant = 0;
        for (; j < m && k < o.iters && !invariant; j++, k++) {
            deso_vec *vj, *vn, *hv;
            deso_mat *Vj;                                 /* V(:, 0:j)   */
            deso_mat_col(V, j, &vj);
            deso_mat_col(V, j + 1, &vn);
            deso_mat_cols(V, 0, j + 1, &Vj);
            deso_vec_view(dh, 0, j + 1, 1, &hv);
            deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, vj, 1, 0.0, u, 1);
            deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, n, j + 1, 1.0, Vj, n, u, 1, 0.0, hv, 1);
            deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, j + 1, -1.0, Vj, n, hv, 1, 1.0, u, 1);
            deso_dnrm2(n, u, 1, hns);
            deso_scalar_get(hns, &hn);
            deso_vec_gather(hv, h, DESO_ALL_RANKS);
            invariant = hn == 0.0;              /* exact breakdown: w = 0  */
            if (!invariant) {
                deso_dcopy(n, u, 1, vn, 1);
                deso_dscal(n, 1.0 / hn, vn, 1);
            }
            double *hj = &H[(size_t)j * ld];
            for (int i = 0; i <= j; i++) hj[i] = h[i];
            hj[j + 1] = hn;
            krylov_rotate(hj, c, s, j);
            deso_drotg(&hj[j], &hj[j + 1], &c[j], &s[j]);
            g[j + 1] = -s[j] * g[j];
            g[j] = c[j] * g[j];
            if (o.history && rank0) printf("iter %ld %.17e\n", k + 1, fabs(g[j + 1]) / bnorm);
            deso_vec_destroy(&vj);
            deso_vec_destroy(&vn);
            deso_vec_destroy(&hv);
            deso_mat_destroy(&Vj);
        }
        krylov_backsolve(H, ld, j, g, y);                 /* x += V y    */
        deso_mat *Vk;
        deso_mat_cols(V, 0, j, &Vk);
        deso_vec_from_array(ctx, j, y, DESO_ALL_RANKS, &yv);
        deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, j, 1.0, Vk, n, yv, 1, 1.0, x, 1);
        deso_vec_destroy(&yv);
        deso_mat_destroy(&Vk);
    }
    /* the true residual ||b - A x|| / ||b||                                */
    deso_dcopy(n, b, 1, u, 1);
    deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, -1.0, A, n, x, 1, 1.0, u, 1);
    double rnorm;
    deso_dnrm2(n, u, 1, rnorms);
    deso_scalar_get(rnorms, &rnorm);
    if (rank0)
        printf("deso-gmres: n=%ld iters=%ld residual=%.10e\n", n, k,
               rnorm / bnorm);
    free(H);
    free(hs);
    deso_finalize(&ctx);
    MPI_Finalize();
    return 0;
}
