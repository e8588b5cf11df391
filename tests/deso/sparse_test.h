/* Sparse test matrices as global CSR arrays, and the sequential reference
 * product the MPI tests compare deso_dusmv with (test_dusmv.c,
 * test_ntg_place.c, test_op_spmat.c).                                    */
#ifndef DESO_TEST_SPARSE_TEST_H
#define DESO_TEST_SPARSE_TEST_H

#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

/* A global matrix in CSR, columns sorted and unique within a row.       */
typedef struct glob {
    int64_t m, n, *rowptr, *col;
    double *val;
} glob;

static inline void glob_free(glob *g)
{
    free(g->rowptr);
    free(g->col);
    free(g->val);
}

/* A seeded m x n matrix with up to `per` entries a row (some rows
 * empty), unsymmetric.                                                   */
static inline glob random_matrix(int64_t m, int64_t n, int per, unsigned seed)
{
    glob g = {m, n, calloc((size_t)m + 1, sizeof(int64_t)),
              calloc((size_t)(m * per + 1), sizeof(int64_t)),
              calloc((size_t)(m * per + 1), sizeof(double))};
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 11;
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t j = 0;
        for (int e = 0; e < per && n > 0; e++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            j += (int64_t)((s >> 33) % (uint64_t)(n / 2 + 2));
            if (j >= n) break;
            g.col[k] = j++;
            g.val[k++] = (double)((s >> 20) % 17) / 4.0 - 2.0;
        }
        g.rowptr[i + 1] = k;
    }
    return g;
}

/* One entry, at (i, j).                                                  */
static inline glob single_entry(int64_t m, int64_t n, int64_t i, int64_t j)
{
    glob g = {m, n, calloc((size_t)m + 1, sizeof(int64_t)),
              calloc(1, sizeof(int64_t)), calloc(1, sizeof(double))};
    for (int64_t r = i + 1; r <= m; r++) g.rowptr[r] = 1;
    g.col[0] = j;
    g.val[0] = 2.5;
    return g;
}

/* A generated matrix's global arrays, read back from the handle.       */
static inline glob gathered(deso_spmat *a)
{
    int64_t m, n, nnz;
    TU_OK(deso_spmat_shape(a, &m, &n, &nnz));
    glob g = {m, n, calloc((size_t)m + 1, sizeof(int64_t)),
              calloc((size_t)nnz + 1, sizeof(int64_t)),
              calloc((size_t)nnz + 1, sizeof(double))};
    TU_OK(deso_spmat_gather(a, g.rowptr, g.col, g.val, DESO_ALL_RANKS));
    return g;
}

/* y = alpha op(A) x + beta y, sequentially (beta 0: y overwritten).     */
static inline void ref_mv(const glob *g, bool t, double alpha, const double *x,
                   double beta, double *y)
{
    int64_t ylen = t ? g->n : g->m;
    double *s = calloc((size_t)ylen + 1, sizeof *s);
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t e = g->rowptr[i]; e < g->rowptr[i + 1]; e++) {
            if (t) s[g->col[e]] += g->val[e] * x[i];
            else s[i] += g->val[e] * x[g->col[e]];
        }
    for (int64_t i = 0; i < ylen; i++)
        y[i] = beta == 0.0 ? alpha * s[i] : alpha * s[i] + beta * y[i];
    free(s);
}

/* Sequential CG on g from x0 = 0 with right-hand side b, iters
 * iterations: x (n doubles, or NULL) the iterate, rr (iters, or NULL)
 * r.r after each iteration.                                             */
static inline void ref_cg(const glob *g, const double *b, int iters,
                          double *x, double *rr)
{
    int64_t n = g->n;
    double *w = calloc(4 * (size_t)n + 1, sizeof *w);
    double *xx = w, *r = w + n, *p = w + 2 * n, *q = w + 3 * n;
    double rho = 0.0;
    for (int64_t i = 0; i < n; i++) {
        r[i] = p[i] = b[i];
        rho += b[i] * b[i];
    }
    for (int it = 0; it < iters; it++) {
        ref_mv(g, false, 1.0, p, 0.0, q);
        double pq = 0.0, rn = 0.0;
        for (int64_t i = 0; i < n; i++) pq += p[i] * q[i];
        double al = rho / pq;
        for (int64_t i = 0; i < n; i++) {
            xx[i] += al * p[i];
            r[i] -= al * q[i];
            rn += r[i] * r[i];
        }
        double be = rn / rho;
        for (int64_t i = 0; i < n; i++) p[i] = r[i] + be * p[i];
        rho = rn;
        if (rr != NULL) rr[it] = rn;
    }
    if (x != NULL)
        for (int64_t i = 0; i < n; i++) x[i] = xx[i];
    free(w);
}

/* One CG iteration recorded as deso-cg writes it (q = A p, alpha = rr /
 * p.q, x += alpha p, r -= alpha q, rn = r.r, p = r + (rn / rr) p,
 * rr = rn); s: rr, rn, pq, alpha, -alpha, beta.                         */
static inline void sparse_cg_iter(deso_ctx *ctx, deso_spmat *a, int64_t n,
                                  deso_vec *x, deso_vec *r, deso_vec *p,
                                  deso_vec *q, deso_scalar *const *s)
{
    deso_scalar *rr = s[0], *rn = s[1], *pq = s[2], *al = s[3], *nal = s[4];
    deso_scalar *be = s[5];
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, p, 0.0, q));
    TU_CALL(deso_ddot(n, p, 1, q, 1, pq));
    TU_CALL(deso_sdiv(al, rr, pq));
    TU_CALL(deso_daxpy(n, al, p, 1, x, 1));
    TU_CALL(deso_sneg(nal, al));
    TU_CALL(deso_daxpy(n, nal, q, 1, r, 1));
    TU_CALL(deso_ddot(n, r, 1, r, 1, rn));
    TU_CALL(deso_sdiv(be, rn, rr));
    TU_CALL(deso_dscal(n, be, p, 1));
    TU_CALL(deso_daxpy(n, 1.0, r, 1, p, 1));
    TU_CALL(deso_sset(rr, rn));
}

/* A CG loop's state on a sparse matrix: x = 0, r = p = b, q, and
 * sparse_cg_iter's six scalars with rr = r.r recorded.                  */
typedef struct sparse_cg {
    deso_vec *x, *r, *p, *q;
    deso_scalar *s[6];
} sparse_cg;

static inline sparse_cg sparse_cg_make(deso_ctx *ctx, int64_t n,
                                       const double *b)
{
    sparse_cg c = {NULL, tu_vec_of(ctx, n, b), tu_vec_of(ctx, n, b), NULL,
                   {NULL}};
    TU_CALL(deso_vec_create(ctx, n, &c.x));
    TU_CALL(deso_vec_create(ctx, n, &c.q));
    for (int k = 0; k < 6; k++) TU_CALL(deso_scalar_create(ctx, 0.0, &c.s[k]));
    TU_CALL(deso_ddot(n, c.r, 1, c.r, 1, c.s[0]));
    return c;
}

static inline void sparse_cg_step(deso_ctx *ctx, deso_spmat *a, int64_t n,
                                  sparse_cg *c)
{
    sparse_cg_iter(ctx, a, n, c->x, c->r, c->p, c->q, c->s);
}

static inline void sparse_cg_free(sparse_cg *c)
{
    deso_vec *vs[4] = {c->x, c->r, c->p, c->q};
    for (int k = 0; k < 4; k++) TU_CALL(deso_vec_destroy(&vs[k]));
    for (int k = 0; k < 6; k++) TU_CALL(deso_scalar_destroy(&c->s[k]));
}

static inline void fill(double *v, int64_t n, unsigned seed)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 3;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)((s >> 33) % 1000) / 250.0 - 2.0;
    }
}

static inline deso_spmat *spmat_of(deso_ctx *ctx, const glob *g)
{
    deso_spmat *a = NULL;
    TU_CALL(deso_spmat_from_csr(ctx, g->m, g->n, g->rowptr, g->col, g->val,
                                0, &a));
    return a;
}

#endif
