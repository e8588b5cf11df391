/* The recorded sparse product deso_dusmv against a sequential CSR
 * product computed here from the same global arrays: y = alpha op(A) x +
 * beta y for op N and T, constant and lazy scalars, beta = 0 (y's NaN must
 * not propagate), on unsymmetric random matrices with empty rows,
 * rectangular both ways, fewer rows or columns than ranks, a single
 * entry, and lap2d / lap2d-perm; chains of Level 1 calls on the product's
 * vectors (ddot, dnrm2, daxpy, dscal, dcopy: the reductions over every
 * rank of a vector by partition); 20 CG iterations on lap2d against a
 * sequential CSR CG (residuals to 1e-12 relative); a dgemv and a dusmv in
 * one force; and the halo's bytes and messages against a brute-force
 * count of the entries each pair of ranks shares; and wisdom: plans with
 * layouts by partition exported, then replayed with nothing searched;
 * ranks that record different calls in a force whose first step that
 * talks is a product: DESO_EMISMATCH everywhere, no halo sent, and the
 * next product right.  Every case in each
 * optimiser mode; the long group (P = 6) on every grid tu_grids gives
 * and with every scalar variant.
 * deso-np: 1 2
 * deso-np-long: 3 4 6                                                     */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"   /* ctx->ran_model                 */
#include "sparse_test.h"
#include "test_util.h"

static int me, np;

/* The grids a test walks: the long group every grid tu_grids gives, the
 * fast group the default one.                                            */
static int walk_grids(int grids[][2])
{
    if (tu_long()) return tu_grids(grids);
    grids[0][0] = grids[0][1] = 0;
    return 1;
}

/* ---- the hand-made and generated matrices --------------------------- */

#define NMAT 8

static glob make_matrix(int k)
{
    switch (k) {
    case 0: return random_matrix(23, 23, 5, 1);      /* square, empty rows */
    case 1: return random_matrix(17, 9, 4, 2);       /* m > n              */
    case 2: return random_matrix(6, 31, 6, 3);       /* m < n              */
    case 3: return random_matrix(2, 3, 3, 4);        /* fewer than ranks   */
    case 4: return single_entry(1, 1, 0, 0);
    case 5: return single_entry(7, 5, 4, 1);         /* one entry, empty   */
    case 6: return random_matrix(40, 40, 3, 5);      /* sparse, unsymmetric */
    default: return random_matrix(3, 1, 2, 6);       /* one column          */
    }
}

/* One product case: y <- alpha op(A) x + beta y with alpha a constant or
 * a lazy scalar, beta 0 (y holding NaN first), a constant or a lazy one. */
static void product_case(deso_ctx *ctx, const glob *g, deso_spmat *a,
                         bool t, int variant)
{
    int64_t xl = t ? g->m : g->n, yl = t ? g->n : g->m;
    double *x = calloc((size_t)xl + 1, sizeof *x);
    double *y = calloc((size_t)yl + 1, sizeof *y);
    fill(x, xl, (unsigned)(variant + 7 * t + 1));
    fill(y, yl, (unsigned)(variant + 13));
    double alpha = variant == 2 ? -0.75 : 1.5;
    double beta = variant == 0 ? 0.0 : variant == 1 ? -0.5 : 2.0;
    if (variant == 0)
        for (int64_t i = 0; i < yl; i++) y[i] = NAN;
    deso_vec *X = tu_vec_of(ctx, xl, x), *Y = tu_vec_of(ctx, yl, y);
    deso_trans tr = t ? DESO_TRANS : DESO_NO_TRANS;
    if (variant == 2) {
        /* lazy scalars: alpha = -0.75 and beta = 2 computed in the DAG   */
        deso_scalar *sa = NULL, *sb = NULL;
        TU_CALL(deso_scalar_create(ctx, -1.5, &sa));
        TU_CALL(deso_scalar_create(ctx, 4.0, &sb));
        TU_CALL(deso_smul(sa, sa, 0.5));
        TU_CALL(deso_sdiv(sb, sb, 2.0));
        TU_CALL(deso_dusmv(ctx, tr, sa, a, X, sb, Y));
        TU_CALL(deso_scalar_destroy(&sa));
        TU_CALL(deso_scalar_destroy(&sb));
    } else {
        TU_CALL(deso_dusmv(ctx, tr, alpha, a, X, beta, Y));
    }
    ref_mv(g, t, alpha, x, beta, y);
    tu_expect_vec(Y, y, yl, 1e-14);
    tu_expect_vec(X, x, xl, 1e-300);    /* x is only read: exact          */
    TU_CALL(deso_vec_destroy(&X));
    TU_CALL(deso_vec_destroy(&Y));
    free(x);
    free(y);
}

/* The fast group walks each matrix and op once per mode, on the default
 * grid, rotating through the scalar variants; the long group walks every
 * combination on every grid.                                             */
static void test_products(void **state)
{
    (void)state;
    int grids[4][2];
    int ng = walk_grids(grids);
    for (int md = 0; md < TU_NMODES; md++)
        for (int gi = 0; gi < ng; gi++) {
            deso_ctx *ctx = tu_ctx_mode(tu_mode(md), grids[gi][0],
                                        grids[gi][1], 0);
            for (int k = 0; k < NMAT; k++) {
                glob g = make_matrix(k);
                deso_spmat *a = spmat_of(ctx, &g);
                tu_label("mode %d grid %d matrix %d", md, gi, k);
                for (int t = 0; t < 2; t++)
                    for (int v = 0; v < 3; v++)
                        if (tu_long() || v == (k + t + md) % 3)
                            product_case(ctx, &g, a, t, v);
                TU_CALL(deso_spmat_destroy(&a));
                glob_free(&g);
                tu_case_end();
            }
            /* a generated matrix, permuted so that rows touch far x     */
            deso_spmat *a = NULL;
            TU_CALL(deso_spmat_from_gen(ctx, "lap2d-perm:5", &a));
            glob g = gathered(a);
            for (int t = 0; t < 2; t++) product_case(ctx, &g, a, t, 1);
            TU_CALL(deso_spmat_destroy(&a));
            glob_free(&g);
            tu_case_end();
            TU_OK(deso_finalize(&ctx));
        }
    TU_SYNC();
}

/* ---- chains: the product's vectors through Level 1 calls -------------- */

static void test_chain(void **state)
{
    (void)state;
    for (int md = 0; md < TU_NMODES; md++) {
        deso_ctx *ctx = tu_ctx_mode(tu_mode(md), 0, 0, 0);
        glob g = random_matrix(29, 29, 5, 9);
        deso_spmat *a = spmat_of(ctx, &g);
        int64_t n = g.n;
        double *x = malloc(sizeof(double) * (size_t)n);
        double *y = malloc(sizeof(double) * (size_t)n);
        double *z = malloc(sizeof(double) * (size_t)n);
        fill(x, n, 21);
        fill(z, n, 22);
        deso_vec *X = tu_vec_of(ctx, n, x), *Y = NULL, *Z = tu_vec_of(ctx, n, z);
        TU_CALL(deso_vec_create(ctx, n, &Y));
        deso_scalar *d = NULL, *nr = NULL;
        TU_CALL(deso_scalar_create(ctx, 0.0, &d));
        TU_CALL(deso_scalar_create(ctx, 0.0, &nr));
        /* y = A x; d = y.z; z += d y; y *= 0.5; x = y; nr = ||z||; then
         * y = A^T x + y: all recorded, one force                         */
        TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
        TU_CALL(deso_ddot(n, Y, 1, Z, 1, d));
        TU_CALL(deso_daxpy(n, d, Y, 1, Z, 1));
        TU_CALL(deso_dscal(n, 0.5, Y, 1));
        TU_CALL(deso_dcopy(n, Y, 1, X, 1));
        TU_CALL(deso_dnrm2(n, Z, 1, nr));
        TU_CALL(deso_dusmv(ctx, DESO_TRANS, 1.0, a, X, 1.0, Y));
        ref_mv(&g, false, 1.0, x, 0.0, y);
        double dd = 0.0, nn = 0.0;
        for (int64_t i = 0; i < n; i++) dd += y[i] * z[i];
        for (int64_t i = 0; i < n; i++) z[i] += dd * y[i];
        for (int64_t i = 0; i < n; i++) nn += z[i] * z[i];
        for (int64_t i = 0; i < n; i++) x[i] = y[i] *= 0.5;
        ref_mv(&g, true, 1.0, x, 1.0, y);
        tu_label("chain, mode %d", md);
        TU_CHECK(tu_srel(tu_value(d), dd) < 1e-13);
        TU_CHECK(tu_srel(tu_value(nr), sqrt(nn)) < 1e-13);
        tu_expect_vec(Y, y, n, 1e-13);
        tu_expect_vec(Z, z, n, 1e-13);
        tu_expect_vec(X, x, n, 1e-13);
        tu_case_end();
        TU_CALL(deso_scalar_destroy(&d));
        TU_CALL(deso_scalar_destroy(&nr));
        TU_CALL(deso_vec_destroy(&X));
        TU_CALL(deso_vec_destroy(&Y));
        TU_CALL(deso_vec_destroy(&Z));
        TU_CALL(deso_spmat_destroy(&a));
        glob_free(&g);
        free(x);
        free(y);
        free(z);
        TU_OK(deso_finalize(&ctx));
    }
    TU_SYNC();
}

/* Brute force: the distinct x entries each pair of ranks shares under
 * A's row blocks (square A: x lives by them too), summed over pairs.    */
static void halo_count(const glob *g, int64_t *bytes, int64_t *msgs)
{
    int64_t *start = calloc((size_t)np + 1, sizeof *start);
    for (int q = 0; q < np; q++)
        start[q + 1] = start[q] + g->m / np + (q < g->m % np);
    int *owner = malloc(sizeof(int) * (size_t)g->n);
    for (int q = 0; q < np; q++)
        for (int64_t i = start[q]; i < start[q + 1]; i++) owner[i] = q;
    *bytes = *msgs = 0;
    char *seen = malloc((size_t)g->n);
    for (int r = 0; r < np; r++) {
        memset(seen, 0, (size_t)g->n);
        int64_t *from = calloc((size_t)np, sizeof *from);
        for (int64_t i = start[r]; i < start[r + 1]; i++)
            for (int64_t e = g->rowptr[i]; e < g->rowptr[i + 1]; e++) {
                int64_t j = g->col[e];
                if (owner[j] != r && !seen[j]) {
                    seen[j] = 1;
                    from[owner[j]]++;
                }
            }
        for (int s = 0; s < np; s++)
            if (from[s] > 0) {
                *bytes += 8 * from[s];
                (*msgs)++;
            }
        free(from);
    }
    free(seen);
    free(owner);
    free(start);
}

/* ---- CG on lap2d against a sequential CSR CG ------------------------- */

#define CG_ITERS 20

/* CG_ITERS iterations against ref_cg, reading r.r after each; then one
 * more iteration moves what the model of its plan says (the halo priced
 * with the rest), and in mode none at least the halo: whether the other
 * vectors join the product's partition or stay where they are (on a 1-D
 * grid, replicated: no reduction communicates) is the model's choice.  */
static void cg_case(deso_ctx *ctx, const char *spec)
{
    deso_spmat *a = NULL;
    TU_CALL(deso_spmat_from_gen(ctx, spec, &a));
    glob g = gathered(a);
    int64_t n = g.n;
    double *b = malloc(8 * (size_t)n), want[CG_ITERS];
    fill(b, n, 5);
    ref_cg(&g, b, CG_ITERS, NULL, want);
    sparse_cg c = sparse_cg_make(ctx, n, b);
    double worst = 0.0;
    for (int it = 0; it < CG_ITERS; it++) {
        sparse_cg_step(ctx, a, n, &c);
        double e = tu_srel(tu_value(c.s[0]), want[it]);
        if (!(e <= worst)) worst = e;
    }
    tu_label("cg %s: worst %g", spec, worst);
    TU_CHECK(worst < 1e-12);
    int64_t bytes, msgs;
    halo_count(&g, &bytes, &msgs);
    deso_stats_reset();
    sparse_cg_step(ctx, a, n, &c);
    (void)tu_value(c.s[0]);
    deso_stats st;
    deso_stats_get(&st);
    int64_t got[2] = {st.bytes_p2p, st.msgs_p2p};
    MPI_Allreduce(MPI_IN_PLACE, got, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    opt_counts model = ctx->ran_model;
    TU_CHECK(got[0] == model.bytes_p2p && got[1] == model.msgs_p2p);
    TU_CHECK(got[0] >= bytes && got[1] >= msgs);
    sparse_cg_free(&c);
    TU_CALL(deso_spmat_destroy(&a));
    glob_free(&g);
    free(b);
    tu_case_end();
}

/* DESO_PARTITION=block for the contexts made until partition_restore:
 * the brute-force counts here are the row blocks'.  Returns the value it
 * replaced (malloc'ed, or NULL when unset).                             */
static char *partition_block(void)
{
    const char *was = getenv("DESO_PARTITION");
    char *keep = was != NULL ? strdup(was) : NULL;
    setenv("DESO_PARTITION", "block", 1);
    return keep;
}

static void partition_restore(char *keep)
{
    if (keep != NULL) setenv("DESO_PARTITION", keep, 1);
    else unsetenv("DESO_PARTITION");
    free(keep);
}

static void test_cg(void **state)
{
    (void)state;
    /* the halo's lower bound is the row blocks' (test_ntg_place.c runs
     * CG-like chains on the graph's partition)                           */
    char *keep = partition_block();
    int grids[4][2];
    int ng = walk_grids(grids);
    for (int md = 0; md < TU_NMODES; md++)
        for (int gi = 0; gi < ng; gi++) {
            deso_ctx *ctx = tu_ctx_mode(tu_mode(md), grids[gi][0],
                                        grids[gi][1], 0);
            cg_case(ctx, "lap2d:7");
            /* (at G = 6 CG has converged to rounding noise by then)      */
            if (tu_long() || md == TU_NMODES - 1)
                cg_case(ctx, "lap2d-perm:7");
            TU_OK(deso_finalize(&ctx));
        }
    partition_restore(keep);
    TU_SYNC();
}

/* ---- a dense dgemv and a sparse product in one force ----------------- */

static void test_mixed(void **state)
{
    (void)state;
    for (int md = 0; md < TU_NMODES; md++) {
        deso_ctx *ctx = tu_ctx_mode(tu_mode(md), 0, 0, 3);
        glob g = random_matrix(19, 13, 4, 31);
        deso_spmat *a = spmat_of(ctx, &g);
        double *dense = calloc((size_t)(g.m * g.n), sizeof *dense);
        for (int64_t i = 0; i < g.m; i++)
            for (int64_t e = g.rowptr[i]; e < g.rowptr[i + 1]; e++)
                dense[i + g.col[e] * g.m] = g.val[e];
        deso_mat *D = NULL;
        TU_CALL(deso_mat_from_array(ctx, g.m, g.n, dense, g.m,
                                    DESO_ALL_RANKS, &D));
        double x[13], y1[19], y2[19], w[19];
        fill(x, g.n, 41);
        fill(w, g.m, 42);
        deso_vec *X = tu_vec_of(ctx, g.n, x), *Y1 = NULL, *Y2 = NULL;
        deso_vec *W = tu_vec_of(ctx, g.m, w);
        TU_CALL(deso_vec_create(ctx, g.m, &Y1));
        TU_CALL(deso_vec_create(ctx, g.m, &Y2));
        deso_scalar *d = NULL;
        TU_CALL(deso_scalar_create(ctx, 0.0, &d));
        /* y1 = D x (dense), y2 = A x + w (sparse), w = y1 - y2, d = w.y1,
         * all in one force                                               */
        TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, g.m, g.n, 1.0, D,
                           g.m, X, 1, 0.0, Y1, 1));
        TU_CALL(deso_dcopy(g.m, W, 1, Y2, 1));
        TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 1.0, Y2));
        TU_CALL(deso_dcopy(g.m, Y1, 1, W, 1));
        TU_CALL(deso_daxpy(g.m, -1.0, Y2, 1, W, 1));
        TU_CALL(deso_ddot(g.m, W, 1, Y1, 1, d));
        ref_mv(&g, false, 1.0, x, 0.0, y1);
        double dd = 0.0;
        for (int64_t i = 0; i < g.m; i++) {
            y2[i] = y1[i] + w[i];
            w[i] = -w[i];           /* y1 - (y1 + w), as computed exactly  */
            dd += w[i] * y1[i];
        }
        tu_label("mixed, mode %d", md);
        TU_CHECK(tu_srel(tu_value(d), dd) < 1e-12);
        tu_expect_vec(Y1, y1, g.m, 1e-13);
        tu_expect_vec(Y2, y2, g.m, 1e-13);
        tu_case_end();
        TU_CALL(deso_scalar_destroy(&d));
        deso_vec *vs[4] = {X, Y1, Y2, W};
        for (int k = 0; k < 4; k++) TU_CALL(deso_vec_destroy(&vs[k]));
        TU_CALL(deso_mat_destroy(&D));
        TU_CALL(deso_spmat_destroy(&a));
        glob_free(&g);
        free(dense);
        TU_OK(deso_finalize(&ctx));
    }
    TU_SYNC();
}

/* ---- ranks that recorded different calls, a product first ---------- */

/* CG iterations on spec, read each time (replayed from the third on);
 * then one where rank 0 alone records the product and the others a copy
 * in its place.  The product is each force's first step that talks: its
 * halo goes out only once the force's agreement is over, so every rank
 * fails with DESO_EMISMATCH and no message went out.  Had rank 0 sent its halo
 * first, it would wait for messages no rank sends, or leave receives
 * posted that the next product's messages would match: that product,
 * checked here against the sequential one, would hang or go wrong.     */
static void mismatch_case(deso_ctx *ctx, const char *spec)
{
    deso_spmat *a = NULL;
    TU_CALL(deso_spmat_from_gen(ctx, spec, &a));
    glob g = gathered(a);
    int64_t n = g.n;
    double *b = malloc(8 * (size_t)n), *y = malloc(8 * (size_t)n);
    fill(b, n, 7);
    sparse_cg c = sparse_cg_make(ctx, n, b);
    for (int it = 0; it < 6; it++) {
        sparse_cg_step(ctx, a, n, &c);
        (void)tu_value(c.s[0]);
    }
    if (me == 0) TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, c.p, 0.0, c.q));
    else TU_CALL(deso_dcopy(n, c.p, 1, c.q, 1));
    TU_CALL(deso_ddot(n, c.p, 1, c.q, 1, c.s[2]));
    double v = 0.0;
    TU_CHECK(tu_all(deso_scalar_get(c.s[2], &v) == DESO_EMISMATCH));
    deso_vec *X = tu_vec_of(ctx, n, b), *Y = NULL;
    TU_CALL(deso_vec_create(ctx, n, &Y));
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
    ref_mv(&g, false, 1.0, b, 0.0, y);
    tu_expect_vec(Y, y, n, 1e-13);
    sparse_cg_free(&c);
    TU_CALL(deso_vec_destroy(&X));
    TU_CALL(deso_vec_destroy(&Y));
    TU_CALL(deso_spmat_destroy(&a));
    glob_free(&g);
    free(b);
    free(y);
}

static void test_mismatch(void **state)
{
    (void)state;
    if (np == 1) return;          /* one rank records one sequence       */
    for (int md = 0; md < TU_NMODES; md++) {
        deso_ctx *ctx = tu_ctx_mode(tu_mode(md), 0, 0, 0);
        /* the product split (rows under the halo) up to P = 6, and on
         * x's copy (most rows read the halo)                             */
        tu_label("mismatch, mode %d, lap2d:60", md);
        mismatch_case(ctx, "lap2d:60");
        tu_case_end();
        tu_label("mismatch, mode %d, lap2d:9", md);
        mismatch_case(ctx, "lap2d:9");
        tu_case_end();
        TU_OK(deso_finalize(&ctx));
    }
    TU_SYNC();
}

/* ---- the halo's bytes and messages ----------------------------------- */


static void test_counts(void **state)
{
    (void)state;
    /* the brute force counts the row blocks' halo (test_ntg_place.c
     * counts the graph partition's)                                      */
    char *keep = partition_block();
    for (int md = 0; md < TU_NMODES; md++) {
        deso_ctx *ctx = tu_ctx_mode(tu_mode(md), 0, 0, 0);
        glob g = random_matrix(37, 37, 4, 51);
        deso_spmat *a = spmat_of(ctx, &g);
        int64_t bytes, msgs;
        halo_count(&g, &bytes, &msgs);
        double x[37];
        fill(x, 37, 52);
        deso_vec *X = tu_vec_of(ctx, 37, x), *Y = NULL;
        TU_CALL(deso_vec_create(ctx, 37, &Y));
        /* the first product leaves y where A's rows are; the second reads
         * it there, so its force moves the halo and nothing else, and the
         * transpose moves it back the same way                           */
        TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
        TU_CALL(deso_flush(ctx));
        for (int t = 0; t < 2; t++) {
            deso_stats_reset();
            TU_CALL(deso_dusmv(ctx, t ? DESO_TRANS : DESO_NO_TRANS, 1.0, a, Y,
                               0.0, X));
            TU_CALL(deso_flush(ctx));
            deso_stats st;
            deso_stats_get(&st);
            int64_t got[2] = {st.bytes_p2p, st.msgs_p2p};
            MPI_Allreduce(MPI_IN_PLACE, got, 2, MPI_INT64_T, MPI_SUM,
                          MPI_COMM_WORLD);
            tu_label("counts, mode %d, trans %d", md, t);
            TU_CHECK(got[0] == bytes && got[1] == msgs);
            deso_vec *tmp = X;
            X = Y;
            Y = tmp;
        }
        tu_case_end();
        TU_CALL(deso_vec_destroy(&X));
        TU_CALL(deso_vec_destroy(&Y));
        TU_CALL(deso_spmat_destroy(&a));
        glob_free(&g);
        TU_OK(deso_finalize(&ctx));
    }
    partition_restore(keep);
    TU_SYNC();
}

/* ---- a pending product and its matrix's lifetime ------------------- */

static void test_lifetime(void **state)
{
    (void)state;
    deso_ctx *ctx = tu_ctx(0, 0, 0);
    glob g = random_matrix(11, 11, 3, 61);
    deso_spmat *a = spmat_of(ctx, &g);
    double x[11], y[11], y2[11];
    fill(x, 11, 62);
    deso_vec *X = tu_vec_of(ctx, 11, x), *Y = NULL, *Y2 = NULL;
    TU_CALL(deso_vec_create(ctx, 11, &Y));
    TU_CALL(deso_vec_create(ctx, 11, &Y2));
    /* new values with a product pending: it runs with the old ones      */
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
    double *nv = malloc(sizeof(double) * (size_t)g.rowptr[11]);
    for (int64_t k = 0; k < g.rowptr[11]; k++) nv[k] = -3.0 * g.val[k];
    TU_CALL(deso_spmat_set_values(a, nv, DESO_ALL_RANKS));
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y2));
    /* destroyed with a product pending: it still runs                   */
    TU_CALL(deso_spmat_destroy(&a));
    ref_mv(&g, false, 1.0, x, 0.0, y);
    for (int k = 0; k < 11; k++) y2[k] = -3.0 * y[k];
    tu_label("lifetime");
    tu_expect_vec(Y, y, 11, 1e-14);
    tu_expect_vec(Y2, y2, 11, 1e-14);
    tu_case_end();
    TU_CALL(deso_vec_destroy(&X));
    TU_CALL(deso_vec_destroy(&Y));
    TU_CALL(deso_vec_destroy(&Y2));
    free(nv);
    glob_free(&g);
    TU_OK(deso_finalize(&ctx));
    TU_SYNC();
}

/* ---- wisdom: plans with layouts by partition, exported and replayed ---- */

/* Three forces of y = A x; d = y.y; x = 0.01 y in mode full with wisdom
 * file `path` (imported at init, exported at finalize); *d the last d,
 * *optimised the plans searched for.                                    */
static void wisdom_run(const char *path, double *d, int64_t *optimised)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = DESO_MODE_FULL;
    o.wisdom = path;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    deso_spmat *a = NULL;
    TU_CALL(deso_spmat_from_gen(ctx, "lap2d:7", &a));
    double b[49];
    fill(b, 49, 71);
    deso_vec *x = tu_vec_of(ctx, 49, b), *y = NULL;
    TU_CALL(deso_vec_create(ctx, 49, &y));
    deso_scalar *s = NULL;
    TU_CALL(deso_scalar_create(ctx, 0.0, &s));
    deso_stats_reset();
    for (int it = 0; it < 3; it++) {
        TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, x, 0.0, y));
        TU_CALL(deso_ddot(49, y, 1, y, 1, s));
        TU_CALL(deso_dscal(49, 0.01, y, 1));
        TU_CALL(deso_dcopy(49, y, 1, x, 1));
        *d = tu_value(s);
    }
    deso_stats st;
    deso_stats_get(&st);
    *optimised = st.plans_optimised;
    TU_CALL(deso_scalar_destroy(&s));
    TU_CALL(deso_vec_destroy(&x));
    TU_CALL(deso_vec_destroy(&y));
    TU_CALL(deso_spmat_destroy(&a));
    TU_OK(deso_finalize(&ctx));
}

static void test_wisdom(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    assert_true(tu_all(tu_scratch_dir("dusmv", dir, sizeof dir) == 0));
    snprintf(path, sizeof path, "%s/wisdom", dir);
    double d1, d2;
    int64_t o1, o2;
    wisdom_run(path, &d1, &o1);
    /* the second run finds every plan in the file: nothing is searched,
     * and the same plans give the same bits                              */
    wisdom_run(path, &d2, &o2);
    tu_label("wisdom: %lld then %lld plans searched", (long long)o1,
             (long long)o2);
    TU_CHECK(o1 > 0 && o2 == 0 && d1 == d2);
    tu_case_end();
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(path);
    tu_scratch_done(dir);
    TU_SYNC();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_products), cmocka_unit_test(test_chain),
        cmocka_unit_test(test_cg),       cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_counts),   cmocka_unit_test(test_lifetime),
        cmocka_unit_test(test_wisdom),   cmocka_unit_test(test_mismatch),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
