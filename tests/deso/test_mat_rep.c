/* A small matrix replicated on every rank (doc/DESIGN.md, "Optimiser
 * modes", "Cost model"), against sequential OpenBLAS: a solver-like loop
 * (a product, dnrm2, ddot and updates; each iteration forced by reading
 * a scalar, replayed once they repeat) and products A x and A^T x; then dger updates A (its replicated copy belongs to the old
 * value) and the loop and the products go on with the new A; then a new
 * matrix takes A's place under the same vector handles.  Every mode, on
 * the default, 1-D and 2-D grids, block sizes 3 and block folding,
 * n = 1, 2 (n < P from P = 3), 7 and 31 (not multiples of 3 or of P).
 * In modes affine and full on more than one rank the optimiser must
 * have replicated A from n = 7 (deso_mat_replicated), in mode none never,
 * nor with replicate_limit off; results within 1e-10 of OpenBLAS's
 * either way.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>
#include <stdbool.h>

#include "test_util.h"

#define TOL 1e-10
#define ITERS 6

typedef struct ref {
    int64_t n;
    double *A, *x, *r, *p, *q, rr;
} ref;

/* One iteration in OpenBLAS, as dev_iters records it: a power step
 * (q = A p, p = q / ||q||) with x += p and rr = p.x: a product, both
 * kinds of reduction and updates, and nothing that vanishes (A is
 * nonsingular), so that n = 1 and 2 iterate as long as n = 31.          */
static void ref_iter(ref *s)
{
    int n = (int)s->n;
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, s->A, n, s->p, 1,
                0.0, s->q, 1);
    double inv = 1.0 / cblas_dnrm2(n, s->q, 1);
    cblas_dcopy(n, s->q, 1, s->p, 1);
    cblas_dscal(n, inv, s->p, 1);
    cblas_daxpy(n, 1.0, s->p, 1, s->x, 1);
    s->rr = cblas_ddot(n, s->p, 1, s->x, 1);
}

typedef struct dev {
    deso_mat *A;
    deso_vec *x, *r, *p, *q, *u;
    deso_scalar *rr, *nr, *inv, *one;
} dev;

static deso_err dev_record(const dev *d, int64_t n)
{
    deso_err e = deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, d->A, n,
                            d->p, 1, 0.0, d->q, 1);
    if (e == DESO_OK) e = deso_dnrm2(n, d->q, 1, d->nr);
    if (e == DESO_OK) e = deso_sdiv(d->inv, d->one, d->nr);
    if (e == DESO_OK) e = deso_dcopy(n, d->q, 1, d->p, 1);
    if (e == DESO_OK) e = deso_dscal(n, d->inv, d->p, 1);
    if (e == DESO_OK) e = deso_daxpy(n, 1.0, d->p, 1, d->x, 1);
    if (e == DESO_OK) e = deso_ddot(n, d->p, 1, d->x, 1, d->rr);
    return e;
}

/* A diagonally dominant matrix, nonsingular.                            */
static void spd_fill(tu_rng *rng, double *A, int64_t n, double shift)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
            A[j * n + i] = i == j ? 2.0 * (double)n + shift
                                  : 0.5 * tu_rand(rng) / (double)n;
}

static void dev_iters(dev *d, ref *s, int k)
{
    for (int it = 0; it < k; it++) {
        TU_CALL(dev_record(d, s->n));
        (void)tu_value(d->rr);
        ref_iter(s);
    }
    tu_expect_vec(d->x, s->x, s->n, TOL);
    TU_CHECK(tu_srel(tu_value(d->rr), s->rr) < TOL);
}

/* u = A x and u = A^T x against OpenBLAS.                               */
static void products(dev *d, ref *s, double *u)
{
    int n = (int)s->n;
    for (int t = 0; t < 2; t++) {
        TU_CALL(deso_dgemv(DESO_COL_MAJOR, t ? DESO_TRANS : DESO_NO_TRANS,
                           s->n, s->n, 1.5, d->A, s->n, d->x, 1, 0.0, d->u,
                           1));
        cblas_dgemv(CblasColMajor, t ? CblasTrans : CblasNoTrans, n, n, 1.5,
                    s->A, n, s->x, 1, 0.0, u, 1);
        tu_expect_vec(d->u, u, s->n, TOL);
    }
}

static int replicated(const deso_mat *A)
{
    int rep = -1;
    TU_CALL(deso_mat_replicated(A, &rep));
    return rep;
}

/* want: 1 or 0, the placement deso_mat_replicated must report; -1: the
 * model's choice either way.                                             */
static void one_case(deso_ctx *ctx, int64_t n, int want, uint64_t seed)
{
    tu_rng rng = {seed};
    size_t nn = (size_t)(n * n), nv = (size_t)n;
    double *A = malloc(nn * sizeof *A), *v = malloc(5 * nv * sizeof *v);
    ref s = {n, A, v, v + n, v + 2 * n, v + 3 * n, 0.0};
    double *u = v + 4 * n;
    spd_fill(&rng, A, n, 0.0);
    tu_fill(&rng, s.r, n);
    memset(s.x, 0, nv * sizeof *s.x);
    memcpy(s.p, s.r, nv * sizeof *s.p);
    dev d;
    TU_CALL(deso_mat_from_array(ctx, n, n, A, n, 0, &d.A));
    d.x = tu_vec_of(ctx, n, s.x);
    d.r = tu_vec_of(ctx, n, s.r);
    d.p = tu_vec_of(ctx, n, s.p);
    d.q = tu_vec_of(ctx, n, s.x);
    d.u = tu_vec_of(ctx, n, s.x);
    TU_CALL(deso_scalar_create(ctx, 0.0, &d.rr));
    TU_CALL(deso_scalar_create(ctx, 0.0, &d.nr));
    TU_CALL(deso_scalar_create(ctx, 0.0, &d.inv));
    TU_CALL(deso_scalar_create(ctx, 1.0, &d.one));
    dev_iters(&d, &s, ITERS);
    TU_CHECK(want < 0 || replicated(d.A) == want);
    products(&d, &s, u);
    /* A += 0.25 r p^T: a new value of A, whose copy is made anew       */
    TU_CALL(deso_dger(DESO_COL_MAJOR, n, n, 0.25, d.r, 1, d.p, 1, d.A, n));
    cblas_dger(CblasColMajor, (int)n, (int)n, 0.25, s.r, 1, s.p, 1, A,
               (int)n);
    products(&d, &s, u);
    dev_iters(&d, &s, ITERS);
    /* a new matrix in A's place, read by the same calls                  */
    deso_mat_destroy(&d.A);
    spd_fill(&rng, A, n, 1.0);
    TU_CALL(deso_mat_from_array(ctx, n, n, A, n, 0, &d.A));
    dev_iters(&d, &s, ITERS);
    products(&d, &s, u);
    TU_CHECK(want < 0 || replicated(d.A) == want);
    deso_mat_destroy(&d.A);
    deso_vec *vecs[5] = {d.x, d.r, d.p, d.q, d.u};
    for (int k = 0; k < 5; k++) deso_vec_destroy(&vecs[k]);
    deso_scalar *sc[4] = {d.rr, d.nr, d.inv, d.one};
    for (int k = 0; k < 4; k++) deso_scalar_destroy(&sc[k]);
    free(A);
    free(v);
}

static deso_ctx *case_ctx(const tu_case *c, int64_t limit)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = c->mode;
    o.grid_rows = c->pr;
    o.grid_cols = c->pc;
    o.nb = c->nb;
    o.replicate_limit = limit;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    return ctx;
}

static void walk(int64_t limit)
{
    const int64_t nbs[] = {3, DESO_NB_BLOCK};
    const int64_t sizes[] = {1, 2, 7, 31};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 2, cases);
    for (int ci = 0; ci < nc; ci++) {
        deso_ctx *ctx = case_ctx(&cases[ci], limit);
        bool may = cases[ci].mode != DESO_MODE_NONE && tu_size() > 1 &&
                   limit >= 0;
        for (int si = 0; si < 4; si++) {
            tu_label("%s, n = %lld, limit %lld", tu_case_name(&cases[ci]),
                     (long long)sizes[si], (long long)limit);
            /* at n = 1 and 2 nearly nothing moves either way and the
             * model may keep the pieces; from n = 7 replicating wins     */
            int want = !may ? 0 : sizes[si] >= 7 ? 1 : -1;
            one_case(ctx, sizes[si], want, 31u + (uint64_t)(si * 7 + ci));
        }
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
}

/* The default cap (4 MiB) admits every matrix here.                      */
static void test_replicated(void **state)
{
    (void)state;
    walk(0);
}

/* replicate_limit off: the same results on block-cyclic pieces only.    */
static void test_limit_off(void **state)
{
    (void)state;
    walk(-1);
}

TU_MAIN(cmocka_unit_test(test_replicated),
        cmocka_unit_test(test_limit_off))
