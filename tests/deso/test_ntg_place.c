/* Sparse matrices placed at a force by paper 004's trace-graph partition
 * (deso_options.partition auto, block, ntg), against brute force and a
 * sequential CSR reference:
 *   - the placed copy: every index owned by exactly one rank, which holds
 *     its row (the matrix's own entries), in the partition's local order;
 *     each rank's halo receive and send lists exactly the entries its rows
 *     and the other ranks' rows share, computed here from the global
 *     matrix and the partition; new values missing on one rank an error
 *     on every rank;
 *   - products (N and T) and CG-like chains of Level 1 calls on the
 *     product's vectors, over two forces (the second replays the choice),
 *     then new values on the same pattern, in every mode and partition
 *     option, on lap2d-perm, lap2d, an unsymmetric matrix with empty
 *     rows, fewer rows than ranks and a single entry;
 *   - the placement's moves in rounds of a few items, many a pair;
 *   - a dgemv and a dusmv in one force;
 *   - a force whose only product is transposed: placed by the graph too;
 *   - once placed, the blocks' rows and halo plan freed, and the matrix
 *     read back exactly as the sequential reference holds it
 *     (deso_spmat_local, _local_rows with an agreed error, _gather on one
 *     rank and on every rank), after new values on every rank and from
 *     one rank (a pending product sees the old ones), and a later
 *     force's product on them;
 *   - halo bytes of a product, counted, equal to the halo computed here
 *     from the gathered pattern and the owners of the placement that
 *     deso_spmat_placement names (the blocks computed here): on
 *     lap2d-perm the graph partition moves at most a fifth of the row
 *     blocks' bytes, on lap2d (natural order) no more from P = 3 on;
 *     auto keeps one of the two, and never moves more than the blocks;
 *   - the options: DESO_PARTITION and DESO_NTG_L_SCALING validated.
 * deso-np: 1 2
 * deso-np-long: 3 4 6                                                     */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"   /* the placed copy and its halo plan  */
#include "sparse_test.h"
#include "test_util.h"

static int me, np;
static int placed_cases;     /* chain cases read back from a placed copy */

static const deso_partition parts[3] = {
    DESO_PARTITION_AUTO, DESO_PARTITION_BLOCK, DESO_PARTITION_NTG};

static deso_ctx *ctx_with(deso_mode mode, deso_partition p)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = mode;
    o.partition = p;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    return ctx;
}

/* The matrices: k < NGEN generated (lap2d-perm, lap2d), then global CSR. */
#define NMAT 6
static glob matrix(deso_ctx *ctx, int k, deso_spmat **a)
{
    const char *spec[2] = {"lap2d-perm:6", "lap2d:5"};
    if (k < 2) {
        *a = NULL;
        TU_CALL(deso_spmat_from_gen(ctx, spec[k], a));
        return gathered(*a);
    }
    glob g = k == 2   ? random_matrix(23, 23, 5, 31)   /* empty rows       */
             : k == 3 ? random_matrix(2, 2, 2, 32)     /* fewer than ranks */
             : k == 4 ? single_entry(5, 5, 3, 1)
                      : single_entry(1, 1, 0, 0);
    *a = spmat_of(ctx, &g);
    return g;
}

/* ---- the placed copy against brute force -------------------------------- */

/* Rank r's expected halo from rank s: the distinct columns of r's rows
 * that s owns (r != s), ascending.  Returns their number, fills out.    */
static int64_t shared(const glob *g, const blas_part *p, int r, int s,
                      int64_t *out)
{
    char *seen = calloc((size_t)g->n + 1, 1);
    for (int64_t pos = p->start[r]; pos < p->start[r + 1]; pos++) {
        int64_t i = p->iperm[pos];
        for (int64_t e = g->rowptr[i]; e < g->rowptr[i + 1]; e++)
            if (blas_part_owner(p, g->col[e]) == s) seen[g->col[e]] = 1;
    }
    int64_t k = 0;
    for (int64_t j = 0; j < g->n; j++)
        if (seen[j]) out[k++] = j;
    free(seen);
    return k;
}

static void check_placed(const glob *g, const deso__spmat_data *pd)
{
    const blas_part *p = pd->part;
    int64_t n = g->n;
    /* every index owned once, by the rank the partition names             */
    int64_t *own = calloc((size_t)n + 1, sizeof *own);
    for (int64_t r = 0; r < pd->rows.nrows; r++) {
        int64_t i = pd->rows.grow[r];
        TU_CHECK(i == p->iperm[p->start[me] + r]);
        own[i] += me + 1;
        /* the row is the matrix's own                                     */
        int64_t len = pd->rows.rowptr[r + 1] - pd->rows.rowptr[r];
        TU_CHECK(len == g->rowptr[i + 1] - g->rowptr[i]);
        for (int64_t e = 0; e < len; e++)
            TU_CHECK(deso__spmat_col(pd, me, pd->rows.rowptr[r] + e) ==
                         g->col[g->rowptr[i] + e] &&
                     pd->rows.val[pd->rows.rowptr[r] + e] ==
                         g->val[g->rowptr[i] + e]);
    }
    int64_t *cnt = calloc((size_t)n + 1, sizeof *cnt);
    for (int64_t r = 0; r < pd->rows.nrows; r++) cnt[pd->rows.grow[r]] = 1;
    MPI_Allreduce(MPI_IN_PLACE, own, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, cnt, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    for (int64_t i = 0; i < n; i++)
        TU_CHECK(cnt[i] == 1 && own[i] == blas_part_owner(p, i) + 1 &&
                 p->iperm[p->perm[i]] == i);
    /* the halo lists, both ways                                           */
    const pl_halo *h = &pd->halo->h;
    int64_t *want = calloc((size_t)n + 1, sizeof *want);
    for (int s = 0; s < np; s++) {
        int64_t k = s == me ? 0 : shared(g, p, me, s, want);
        TU_CHECK(h->recv_ptr[s + 1] - h->recv_ptr[s] == k);
        for (int64_t e = 0; e < k && h->recv_ptr[s + 1] - h->recv_ptr[s] == k; e++)
            TU_CHECK(h->recv_idx[h->recv_ptr[s] + e] == want[e]);
        k = s == me ? 0 : shared(g, p, s, me, want);
        TU_CHECK(h->send_ptr[s + 1] - h->send_ptr[s] == k);
        for (int64_t e = 0; e < k && h->send_ptr[s + 1] - h->send_ptr[s] == k; e++)
            TU_CHECK(p->iperm[p->start[me] + h->send_idx[h->send_ptr[s] + e]] ==
                     want[e]);
    }
    free(want);
    free(own);
    free(cnt);
}

static void test_quality(void **state)
{
    (void)state;
    deso_ctx *ctx = ctx_with(DESO_MODE_NONE, DESO_PARTITION_NTG);
    for (int k = 0; k < NMAT; k++) {
        deso_spmat *a;
        glob g = matrix(ctx, k, &a);
        double *x = calloc((size_t)g.n + 1, sizeof *x);
        double *y = calloc((size_t)g.n + 1, sizeof *y);
        fill(x, g.n, 5);
        deso_vec *X = tu_vec_of(ctx, g.n, x), *Y = NULL;
        TU_CALL(deso_vec_create(ctx, g.n, &Y));
        TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
        TU_CALL(deso_flush(ctx));
        const deso__spmat_data *sp = a->h.sp;
        tu_label("quality, matrix %d", k);
        TU_CHECK(sp->placement_chosen);
        /* on more than one rank the graph's partition is kept, unless it
         * is contiguous blocks in rank order (then it is those blocks)    */
        int placed = sp->placed != NULL, all = placed;
        MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        TU_CHECK(all == placed && (np > 1 || !placed));
        if (k == 0 && np > 1) TU_CHECK(placed);   /* permuted: never blocks */
        if (placed) {
            check_placed(&g, sp->placed);
            /* new values on every rank but one: every rank's error, since
             * the placed copy takes them by messages                      */
            deso_err e = deso_spmat_set_values(a, me == 0 ? NULL : g.val,
                                               DESO_ALL_RANKS);
            TU_CHECK(e == DESO_ENULL);
        }
        ref_mv(&g, false, 1.0, x, 0.0, y);
        tu_expect_vec(Y, y, g.n, 1e-14);
        tu_case_end();
        TU_CALL(deso_vec_destroy(&X));
        TU_CALL(deso_vec_destroy(&Y));
        TU_CALL(deso_spmat_destroy(&a));
        glob_free(&g);
        free(x);
        free(y);
    }
    TU_OK(deso_finalize(&ctx));
    TU_SYNC();
}

/* ---- reading a placed matrix back -------------------------------------- */

/* Rank me's block of g's rows (balanced: the first m % np one longer).  */
static void my_block(const glob *g, int64_t *lo, int64_t *hi)
{
    int64_t q = g->m / np, r = g->m % np;
    *lo = me * q + (me < r ? me : r);
    *hi = *lo + q + (me < r ? 1 : 0);
}

/* Once placed, the blocks' rows and halo plan are freed.                */
static void check_released(const deso_spmat *a)
{
    const deso__spmat_data *sp = a->h.sp;
    if (sp->placed == NULL) return;
    TU_CHECK(sp->rows.rowptr == NULL && sp->rows.col == NULL &&
             sp->rows.val == NULL && sp->halo == NULL);
}

/* deso_spmat_local and _local_rows: rank me's block of g, exactly; with
 * col NULL on rank 0 (which has entries) an error, on every rank once
 * the rows come back from a placed copy.                                 */
static void check_local(const glob *g, const deso_spmat *a)
{
    int64_t lo, hi, row0, nrows, nnz;
    my_block(g, &lo, &hi);
    TU_CALL(deso_spmat_local(a, &row0, &nrows, &nnz));
    int64_t e0 = g->rowptr[lo], nz = g->rowptr[hi] - e0;
    TU_CHECK(row0 == lo && nrows == hi - lo && nnz == nz);
    int64_t *rp = malloc((size_t)(hi - lo + 1) * sizeof *rp);
    int64_t *cl = malloc((size_t)(nz + 1) * sizeof *cl);
    double *vl = malloc((size_t)(nz + 1) * sizeof *vl);
    for (int64_t i = 0; i <= hi - lo; i++) rp[i] = -7;
    for (int64_t e = 0; e <= nz; e++) cl[e] = -7, vl[e] = -7.0;
    TU_CALL(deso_spmat_local_rows(a, rp, cl, vl));
    for (int64_t i = 0; i <= hi - lo; i++)
        TU_CHECK(rp[i] == g->rowptr[lo + i] - e0);
    for (int64_t e = 0; e < nz; e++)
        TU_CHECK(cl[e] == g->col[e0 + e] && vl[e] == g->val[e0 + e]);
    int bad = me == 0 && nz > 0, any = bad;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    deso_err e = deso_spmat_local_rows(a, rp, bad ? NULL : cl, vl);
    int agreed = a->h.sp->placed != NULL ? any : bad;
    TU_CHECK(e == (agreed ? DESO_ENULL : DESO_OK));
    free(rp);
    free(cl);
    free(vl);
}

/* deso_spmat_gather on `root` (or every rank): g, exactly.              */
static void check_gather(const glob *g, const deso_spmat *a, int root)
{
    int64_t nnz = g->rowptr[g->m];
    int64_t *rp = malloc((size_t)(g->m + 1) * sizeof *rp);
    int64_t *cl = malloc((size_t)(nnz + 1) * sizeof *cl);
    double *vl = malloc((size_t)(nnz + 1) * sizeof *vl);
    for (int64_t i = 0; i <= g->m; i++) rp[i] = -7;
    for (int64_t e = 0; e <= nnz; e++) cl[e] = -7, vl[e] = -7.0;
    TU_CALL(deso_spmat_gather(a, rp, cl, vl, root));
    if (root == DESO_ALL_RANKS || root == me) {
        for (int64_t i = 0; i <= g->m; i++) TU_CHECK(rp[i] == g->rowptr[i]);
        for (int64_t e = 0; e < nnz; e++)
            TU_CHECK(cl[e] == g->col[e] && vl[e] == g->val[e]);
    }
    free(rp);
    free(cl);
    free(vl);
}

/* After the chain (X holds x): the matrix read back, new values on every
 * rank and from the last rank (a product pending across the first sees
 * the old values), read back again and multiplied at a later force.     */
static void readers_case(deso_ctx *ctx, glob *g, deso_spmat *a, deso_vec *X,
                         deso_vec *Y, const double *x, double *y, int tag)
{
    int64_t nnz = g->rowptr[g->m];
    tu_label("chain %d, read back", tag);
    placed_cases += a->h.sp->placed != NULL;
    check_released(a);
    check_local(g, a);
    check_gather(g, a, DESO_ALL_RANKS);
    check_gather(g, a, np - 1);
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
    ref_mv(g, false, 1.0, x, 0.0, y);
    for (int64_t e = 0; e < nnz; e++)
        g->val[e] = -1.5 * g->val[e] + (double)(e % 7);
    TU_CALL(deso_spmat_set_values(a, g->val, DESO_ALL_RANKS));
    tu_expect_vec(Y, y, g->n, 1e-12);       /* the old values            */
    check_gather(g, a, 0);
    check_local(g, a);
    for (int64_t e = 0; e < nnz; e++)
        g->val[e] = 0.25 * (double)((e * 13) % 11) - 1.0;
    TU_CALL(deso_spmat_set_values(a, me == np - 1 ? g->val : NULL, np - 1));
    check_gather(g, a, DESO_ALL_RANKS);
    check_local(g, a);
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
    ref_mv(g, false, 1.0, x, 0.0, y);
    tu_expect_vec(Y, y, g->n, 1e-12);
    check_released(a);
}

/* ---- products and chains ------------------------------------------------ */

/* Two forces of: y = A x; d = y.z; z += d y; y *= 0.5; x = y; nr = ||z||;
 * w = A^T x + y; then new values (A doubled) and y = A x once more.     */
static void chain_case(deso_ctx *ctx, glob *g, deso_spmat *a, int tag)
{
    int64_t n = g->n;
    double *x = calloc((size_t)n + 1, sizeof *x), *y = calloc((size_t)n + 1, sizeof *y);
    double *z = calloc((size_t)n + 1, sizeof *z), *w = calloc((size_t)n + 1, sizeof *w);
    fill(x, n, 21);
    fill(z, n, 22);
    deso_vec *X = tu_vec_of(ctx, n, x), *Z = tu_vec_of(ctx, n, z);
    deso_vec *Y = NULL, *W = NULL;
    TU_CALL(deso_vec_create(ctx, n, &Y));
    TU_CALL(deso_vec_create(ctx, n, &W));
    deso_scalar *d = NULL, *nr = NULL;
    TU_CALL(deso_scalar_create(ctx, 0.0, &d));
    TU_CALL(deso_scalar_create(ctx, 0.0, &nr));
    for (int it = 0; it < 2; it++) {
        TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
        TU_CALL(deso_ddot(n, Y, 1, Z, 1, d));
        TU_CALL(deso_daxpy(n, d, Y, 1, Z, 1));
        TU_CALL(deso_dscal(n, 0.5, Y, 1));
        TU_CALL(deso_dcopy(n, Y, 1, X, 1));
        TU_CALL(deso_dnrm2(n, Z, 1, nr));
        TU_CALL(deso_dcopy(n, Y, 1, W, 1));
        TU_CALL(deso_dusmv(ctx, DESO_TRANS, 1.0, a, X, 1.0, W));
        ref_mv(g, false, 1.0, x, 0.0, y);
        double dd = 0.0, nn = 0.0;
        for (int64_t i = 0; i < n; i++) dd += y[i] * z[i];
        for (int64_t i = 0; i < n; i++) z[i] += dd * y[i];
        for (int64_t i = 0; i < n; i++) nn += z[i] * z[i];
        for (int64_t i = 0; i < n; i++) x[i] = y[i] *= 0.5;
        memcpy(w, y, (size_t)n * sizeof *w);
        ref_mv(g, true, 1.0, x, 1.0, w);
        tu_label("chain %d, iteration %d", tag, it);
        TU_CHECK(tu_srel(tu_value(d), dd) < 1e-12);
        TU_CHECK(tu_srel(tu_value(nr), sqrt(nn)) < 1e-12);
        tu_expect_vec(Z, z, n, 1e-12);
        tu_expect_vec(W, w, n, 1e-12);
    }
    /* new values reach the copy the products run on                       */
    for (int64_t e = 0; e < g->rowptr[g->m]; e++) g->val[e] *= 2.0;
    TU_CALL(deso_spmat_set_values(a, g->val, 0));
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
    ref_mv(g, false, 1.0, x, 0.0, y);
    tu_label("chain %d, new values", tag);
    tu_expect_vec(Y, y, n, 1e-12);
    readers_case(ctx, g, a, X, Y, x, y, tag);
    TU_CALL(deso_scalar_destroy(&d));
    TU_CALL(deso_scalar_destroy(&nr));
    TU_CALL(deso_vec_destroy(&X));
    TU_CALL(deso_vec_destroy(&Y));
    TU_CALL(deso_vec_destroy(&Z));
    TU_CALL(deso_vec_destroy(&W));
    free(x); free(y); free(z); free(w);
}

/* Every mode with the graph partition, and auto and block in mode none;
 * the fast group walks lap2d-perm and one other matrix (round robin),
 * the long group every matrix in every mode and option.                */
static void test_chains(void **state)
{
    (void)state;
    for (int md = 0; md < TU_NMODES; md++)
        for (int pk = 0; pk < 3; pk++) {
            if (!tu_long() && md != 0 && parts[pk] != DESO_PARTITION_NTG)
                continue;
            deso_ctx *ctx = ctx_with(tu_mode(md), parts[pk]);
            for (int k = 0; k < NMAT; k++) {
                if (!tu_long() && k != 0 && k != 1 + (3 * md + pk) % (NMAT - 1))
                    continue;
                deso_spmat *a;
                glob g = matrix(ctx, k, &a);
                chain_case(ctx, &g, a, 100 * md + 10 * pk + k);
                TU_CALL(deso_spmat_destroy(&a));
                glob_free(&g);
                tu_case_end();
            }
            TU_OK(deso_finalize(&ctx));
        }
    /* lap2d-perm is placed by the graph on more than one rank            */
    TU_CHECK(np == 1 || placed_cases >= TU_NMODES);
    TU_SYNC();
}

/* The placement's moves (and the readers' moves back) cut into rounds of
 * three items: each row's lengths, and every row of five entries, travel
 * alone, so every pair takes many rounds, some of them one rank's only;
 * the chains and readers then check the copy as above.                  */
static void test_rounds(void **state)
{
    (void)state;
    deso__spmat_move_rounds(3);
    deso_ctx *ctx = ctx_with(DESO_MODE_NONE, DESO_PARTITION_NTG);
    for (int k = 0; k < NMAT; k++) {
        deso_spmat *a;
        glob g = matrix(ctx, k, &a);
        chain_case(ctx, &g, a, 700 + k);
        TU_CALL(deso_spmat_destroy(&a));
        glob_free(&g);
        tu_case_end();
    }
    TU_OK(deso_finalize(&ctx));
    int64_t ran = deso__spmat_move_rounds(0);
    TU_CHECK(np == 1 || tu_all(ran > 12));
    TU_SYNC();
}

/* ---- a dense and a sparse product in one force -------------------------- */

static void test_mixed(void **state)
{
    (void)state;
    for (int md = 0; md < TU_NMODES; md++) {
        deso_ctx *ctx = ctx_with(tu_mode(md), DESO_PARTITION_NTG);
        deso_spmat *a;
        glob g = matrix(ctx, 0, &a);
        int64_t n = g.n;
        double *dense = calloc((size_t)(n > 0 ? n * n : 1), sizeof *dense);
        for (int64_t i = 0; i < n; i++)
            for (int64_t e = g.rowptr[i]; e < g.rowptr[i + 1]; e++)
                dense[i + g.col[e] * n] = 0.5 * g.val[e];   /* column-major */
        size_t len = (size_t)(n > 0 ? n : 1);
        double *x = calloc(len, sizeof *x), *y = calloc(len, sizeof *y);
        double *u = calloc(len, sizeof *u);
        fill(x, n, 41);
        deso_mat *D = NULL;
        TU_CALL(deso_mat_from_array(ctx, n, n, dense, n, DESO_ALL_RANKS, &D));
        deso_vec *X = tu_vec_of(ctx, n, x), *Y = NULL, *U = NULL;
        TU_CALL(deso_vec_create(ctx, n, &Y));
        TU_CALL(deso_vec_create(ctx, n, &U));
        /* y = A x; u = D y; y = y - 2 u (= 0 up to rounding, then + A u) */
        TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
        TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, D, n, Y, 1,
                           0.0, U, 1));
        TU_CALL(deso_daxpy(n, -2.0, U, 1, Y, 1));
        TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, U, 1.0, Y));
        ref_mv(&g, false, 1.0, x, 0.0, y);
        ref_mv(&g, false, 0.5, y, 0.0, u);
        for (int64_t i = 0; i < n; i++) y[i] -= 2.0 * u[i];
        ref_mv(&g, false, 1.0, u, 1.0, y);
        tu_label("mixed, mode %d", md);
        tu_expect_vec(U, u, n, 1e-12);
        tu_expect_vec(Y, y, n, 1e-10);
        tu_case_end();
        TU_CALL(deso_mat_destroy(&D));
        TU_CALL(deso_vec_destroy(&X));
        TU_CALL(deso_vec_destroy(&Y));
        TU_CALL(deso_vec_destroy(&U));
        TU_CALL(deso_spmat_destroy(&a));
        glob_free(&g);
        free(dense); free(x); free(y); free(u);
        TU_OK(deso_finalize(&ctx));
    }
    TU_SYNC();
}

/* ---- a DAG whose only product is transposed ----------------------------- */

/* W = A^T X, then W scaled, in the first force: the trace graph is built
 * from the transposed product alone (its edges reversed), so on a
 * permuted Laplacian with more than one rank the graph's partition is
 * kept; the result against the sequential reference, on lap2d-perm and
 * an unsymmetric matrix with empty rows, in modes none and full.         */
static void test_transpose_only(void **state)
{
    (void)state;
    const deso_mode modes[2] = {DESO_MODE_NONE, DESO_MODE_FULL};
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 3; k += 2) {
            deso_ctx *ctx = ctx_with(modes[m], DESO_PARTITION_NTG);
            deso_spmat *a = NULL;
            glob g = matrix(ctx, k, &a);
            double *x = calloc((size_t)g.n + 1, sizeof *x);
            double *w = calloc((size_t)g.n + 1, sizeof *w);
            fill(x, g.n, 61);
            deso_vec *X = tu_vec_of(ctx, g.n, x), *W = NULL;
            TU_CALL(deso_vec_create(ctx, g.n, &W));
            TU_CALL(deso_dusmv(ctx, DESO_TRANS, 1.0, a, X, 0.0, W));
            TU_CALL(deso_dscal(g.n, 0.5, W, 1));
            TU_CALL(deso_flush(ctx));
            ref_mv(&g, true, 0.5, x, 0.0, w);
            const deso__spmat_data *sp = a->h.sp;
            tu_label("transpose only, mode %d, matrix %d", (int)modes[m], k);
            TU_CHECK(sp->placement_chosen);
            if (k == 0 && np > 1) TU_CHECK(sp->placed != NULL);
            tu_expect_vec(W, w, g.n, 1e-12);
            tu_case_end();
            TU_CALL(deso_vec_destroy(&X));
            TU_CALL(deso_vec_destroy(&W));
            TU_CALL(deso_spmat_destroy(&a));
            glob_free(&g);
            free(x); free(w);
            TU_OK(deso_finalize(&ctx));
        }
    TU_SYNC();
}

/* ---- halo bytes, counted ------------------------------------------------ */

/* One product's halo on a matrix, with one partition option.            */
typedef struct halo_count {
    int64_t counted;        /* deso_stats' p2p bytes, summed over ranks    */
    int64_t brute;          /* the same from the pattern and the owners    */
    deso_partition placed;  /* deso_spmat_placement after the first force  */
} halo_count;

/* 8 bytes for each distinct pair (rank r, column j) where one of r's rows
 * has an entry in column j and another rank owns x_j (rows and x share
 * their owners: the matrix is square): what the product must move, from
 * the gathered pattern and the owners alone.                            */
static int64_t brute_halo(const glob *g, const int32_t *owner)
{
    int64_t pairs = 0;
    char *seen = calloc((size_t)(g->n * np) + 1, 1);
    for (int64_t i = 0; i < g->n; i++)
        for (int64_t e = g->rowptr[i]; e < g->rowptr[i + 1]; e++) {
            int64_t j = g->col[e];
            int r = owner[i];
            if (owner[j] == r || seen[j * np + r]) continue;
            seen[j * np + r] = 1;
            pairs++;
        }
    free(seen);
    return 8 * pairs;
}

/* Every index's rank where a's products run: the placed copy's partition,
 * or the balanced row blocks (the first n % np ranks one row longer),
 * computed here.                                                         */
static int32_t *owners(const deso_spmat *a, int64_t n, deso_partition placed)
{
    int32_t *owner = malloc((size_t)n * sizeof *owner + 1);
    const deso__spmat_data *pd = a->h.sp->placed;
    /* the placement said is the one the matrix holds                      */
    TU_CHECK((placed == DESO_PARTITION_NTG) == (pd != NULL));
    int64_t q = n / np, rest = n % np;
    for (int64_t i = 0, r = 0; i < n; i++) {
        while (r < np - 1 && i >= (r + 1) * q + (r + 1 < rest ? r + 1 : rest)) r++;
        owner[i] = pd != NULL ? blas_part_owner(pd->part, i) : (int32_t)r;
    }
    return owner;
}

/* The bytes every rank sends in one product y2 = A y once y sits where
 * the products want it (a first product and its force came before).    */
static halo_count product_bytes(deso_partition p, const char *spec)
{
    deso_ctx *ctx = ctx_with(DESO_MODE_NONE, p);
    deso_spmat *a = NULL;
    TU_CALL(deso_spmat_from_gen(ctx, spec, &a));
    glob g = gathered(a);
    halo_count h;
    TU_OK(deso_spmat_placement(a, &h.placed));
    TU_CHECK(h.placed == DESO_PARTITION_DEFAULT);     /* not chosen yet   */
    deso_vec *X = NULL, *Y = NULL;
    TU_CALL(deso_vec_create(ctx, g.n, &X));
    TU_CALL(deso_vec_create(ctx, g.n, &Y));
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, X, 0.0, Y));
    TU_CALL(deso_flush(ctx));
    TU_OK(deso_spmat_placement(a, &h.placed));
    int32_t *owner = owners(a, g.n, h.placed);
    h.brute = brute_halo(&g, owner);
    deso_stats_reset();
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, a, Y, 0.0, X));
    TU_CALL(deso_flush(ctx));
    deso_stats st;
    deso_stats_get(&st);
    h.counted = st.bytes_p2p;
    MPI_Allreduce(MPI_IN_PLACE, &h.counted, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    free(owner);
    glob_free(&g);
    TU_CALL(deso_vec_destroy(&X));
    TU_CALL(deso_vec_destroy(&Y));
    TU_CALL(deso_spmat_destroy(&a));
    TU_OK(deso_finalize(&ctx));
    return h;
}

/* block, ntg and auto on one matrix: each placed where its option says
 * (ntg: the graph's partition unless that is the row blocks themselves;
 * auto: one of the two, moving what that one moves), each moving exactly
 * its brute-force halo.                                                  */
static void three(const char *spec, halo_count h[3])
{
    const deso_partition opt[3] = {DESO_PARTITION_BLOCK, DESO_PARTITION_NTG,
                                   DESO_PARTITION_AUTO};
    tu_label("halo bytes, %s", spec);
    for (int k = 0; k < 3; k++) h[k] = product_bytes(opt[k], spec);
    if (me == 0)
        printf("halo bytes per product on %s at P = %d: block %lld ntg %lld "
               "auto %lld (placed %d), ratio ntg / block %.3f\n", spec, np,
               (long long)h[0].counted, (long long)h[1].counted,
               (long long)h[2].counted, (int)h[2].placed,
               h[0].counted > 0 ? (double)h[1].counted / (double)h[0].counted : 0.0);
    for (int k = 0; k < 3; k++) TU_CHECK(h[k].counted == h[k].brute);
    TU_CHECK(h[0].placed == DESO_PARTITION_BLOCK);
    TU_CHECK(h[1].placed == (np > 1 ? DESO_PARTITION_NTG : DESO_PARTITION_BLOCK) ||
             (h[1].placed == DESO_PARTITION_BLOCK && h[1].counted == h[0].counted));
    TU_CHECK(h[2].counted == h[h[2].placed == DESO_PARTITION_NTG].counted);
    tu_case_end();
}

/* The partition's quality, counted: on lap2d-perm the graph partition
 * moves at most a fifth of the row blocks' bytes (the target at P = 16;
 * the blocks' share of foreign columns only grows with P); on lap2d
 * (natural order) no more from P = 3 on.  At P = 2 one straight cut is
 * the optimum there, which METIS comes close to but need not reach (on
 * lap2d:16, 34 entries against 32), and auto keeps the blocks.          */
static void test_halo_bytes(void **state)
{
    (void)state;
    halo_count perm[3], nat[3];
    three(tu_long() ? "lap2d-perm:40" : "lap2d-perm:16", perm);
    three(tu_long() ? "lap2d:40" : "lap2d:16", nat);
    tu_label("halo bytes: quality");
    /* auto weighs bytes against messages and load with the measured alpha
     * and beta, so which of the two it keeps depends on the machine; in
     * natural order the graph's partition has more bytes than the blocks
     * only where it has no fewer messages and no better load (P = 2: one
     * message a rank either way), so auto never moves more               */
    if (np == 1)
        TU_CHECK(perm[0].counted == 0 && perm[1].counted == 0 &&
                 perm[2].counted == 0 && nat[0].counted == 0 &&
                 nat[1].counted == 0 && nat[2].counted == 0);
    else
        TU_CHECK(perm[0].counted > 0 && 5 * perm[1].counted <= perm[0].counted &&
                 (np < 3 || nat[1].counted <= nat[0].counted) &&
                 nat[2].counted <= nat[0].counted);
    tu_case_end();
    TU_SYNC();
}

/* ---- options ------------------------------------------------------------ */

static void test_options(void **state)
{
    (void)state;
    deso_ctx *ctx = NULL;
    deso_options o;
    deso_options_default(&o);
    o.partition = (deso_partition)7;
    TU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EINVAL);
    deso_options_default(&o);
    o.l_scaling = -1.0;
    TU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EINVAL);
    setenv("DESO_PARTITION", "graph", 1);
    TU_ERR(deso_init(MPI_COMM_WORLD, NULL, &ctx), DESO_EINVAL);
    setenv("DESO_PARTITION", "ntg", 1);
    setenv("DESO_NTG_L_SCALING", "0.5", 1);
    TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.partition == DESO_PARTITION_NTG &&
                       info.l_scaling == 0.5));
    TU_OK(deso_finalize(&ctx));
    setenv("DESO_NTG_L_SCALING", "x", 1);
    TU_ERR(deso_init(MPI_COMM_WORLD, NULL, &ctx), DESO_EINVAL);
    unsetenv("DESO_PARTITION");
    unsetenv("DESO_NTG_L_SCALING");
    TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.partition == DESO_PARTITION_AUTO &&
                       info.l_scaling == 0.0));
    TU_OK(deso_finalize(&ctx));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),    cmocka_unit_test(test_quality),
        cmocka_unit_test(test_chains),     cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_transpose_only),
        cmocka_unit_test(test_halo_bytes),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
