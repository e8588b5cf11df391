/* The trace graph and the placement cost from a matrix's rows given a
 * piece at a time, as rank 0 gets them when it never holds the whole
 * pattern: the graph is exactly the one built from the whole matrix, and
 * the cost's halo bytes and messages are the distinct (receiver, column)
 * and (receiver, sender) pairs counted by brute force, whatever the
 * pieces and their order.  Random unsymmetric patterns with empty rows,
 * n from 1, pieces of one row to all of them.                           */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "optimizer/ntg.h"
#include "tests/serial_util.h"

#define EXPECT_OK(expr) assert_int_equal((expr), DESO_OK)

static void random_matrix(tu_rng *r, int64_t n, pl_csr *a)
{
    pl_coo coo = {0, 0, NULL, NULL, NULL};
    for (int64_t e = tu_below(r, 4 * n); e > 0; e--)
        EXPECT_OK(pl_coo_push(&coo, tu_below(r, n), tu_below(r, n), 1.0));
    EXPECT_OK(pl_csr_from_coo(&coo, n, n, a));
    pl_coo_free(&coo);
}

/* Cut points 0 = cut[0] < ... < cut[npieces] = n, and an order to give
 * the pieces in (a random permutation).                                  */
static int random_pieces(tu_rng *r, int64_t n, int64_t *cut, int *order)
{
    int np = 0;
    cut[0] = 0;
    while (cut[np] < n) {
        int64_t len = 1 + tu_below(r, n - cut[np]);
        cut[np + 1] = cut[np] + len;
        np++;
    }
    for (int k = 0; k < np; k++) order[k] = k;
    for (int k = np - 1; k > 0; k--) {
        int s = (int)tu_below(r, k + 1), t = order[k];
        order[k] = order[s];
        order[s] = t;
    }
    return np;
}

/* Rows [lo, hi) of a as a piece (its own row pointers, a's columns).    */
static pl_csr piece_of(const pl_csr *a, int64_t lo, int64_t hi, int64_t *rp)
{
    for (int64_t r = lo; r <= hi; r++) rp[r - lo] = a->rowptr[r] - a->rowptr[lo];
    return (pl_csr){.nrows = hi - lo, .ncols = a->ncols, .row0 = lo,
                    .rowptr = rp, .col = a->col + a->rowptr[lo]};
}

static void expect_same_graph(const opt_ntg *x, const opt_ntg *y)
{
    assert_int_equal(x->nvtx, y->nvtx);
    assert_int_equal(x->nedges, y->nedges);
    assert_true(x->scale == y->scale);
    size_t ends = (size_t)x->xadj[x->nvtx];
    assert_memory_equal(x->xadj, y->xadj, (size_t)(x->nvtx + 1) * sizeof *x->xadj);
    assert_memory_equal(x->adjncy, y->adjncy, ends * sizeof *x->adjncy);
    assert_memory_equal(x->adjwgt, y->adjwgt, ends * sizeof *x->adjwgt);
    assert_memory_equal(x->vwgt, y->vwgt,
                        (size_t)x->nvtx * (size_t)x->nvec * sizeof *x->vwgt);
}

/* A trace of three vectors whose products all read matrix a (forward or
 * transposed) mixed with element-wise calls.                             */
static int random_calls(tu_rng *r, const pl_csr *a, opt_ntg_call *c)
{
    int nc = 1 + (int)tu_below(r, 4);
    for (int k = 0; k < nc; k++) {
        bool product = k == 0 || tu_below(r, 2);
        c[k] = (opt_ntg_call){product ? a : NULL, (int)tu_below(r, 3),
                              {(int)tu_below(r, 3), 0, 0}, 1,
                              product && tu_below(r, 2)};
    }
    return nc;
}

static void test_graph_from_pieces(void **state)
{
    (void)state;
    tu_rng r = {1912};
    for (int trial = 0; trial < 300; trial++) {
        int64_t n = 1 + tu_below(&r, 40);
        pl_csr a;
        random_matrix(&r, n, &a);
        opt_ntg_call c[4];
        int nc = random_calls(&r, &a, c);
        opt_ntg_opts o = {.l_scaling = (double)tu_below(&r, 3) / 2,
                          .max_vertices = tu_below(&r, 2) ? 0 : 3 * (1 + tu_below(&r, 20))};
        opt_ntg whole, streamed;
        EXPECT_OK(opt_ntg_build(c, nc, 3, n, &o, &whole));
        /* the builder's products name the matrix by its shape only        */
        int64_t zero = 0;
        pl_csr shape = {.ncols = n, .rowptr = &zero};
        opt_ntg_call cs[4];
        for (int k = 0; k < nc; k++) {
            cs[k] = c[k];
            if (cs[k].a) cs[k].a = &shape;
        }
        int64_t cut[41], *rp = malloc((size_t)(n + 1) * sizeof *rp);
        int order[40], np = random_pieces(&r, n, cut, order);
        opt_ntg_builder *b;
        EXPECT_OK(opt_ntg_begin(cs, nc, 3, n, &o, &b));
        for (int k = 0; k < np; k++) {
            pl_csr p = piece_of(&a, cut[order[k]], cut[order[k] + 1], rp);
            EXPECT_OK(opt_ntg_add_rows(b, &p));
        }
        EXPECT_OK(opt_ntg_end(b, &streamed));
        expect_same_graph(&whole, &streamed);
        opt_ntg_free(&whole);
        opt_ntg_free(&streamed);
        free(rp);
        pl_csr_free(&a);
    }
}

/* A piece that names a row outside the matrix is refused, and the
 * builder is still freed by opt_ntg_abandon.                             */
static void test_piece_out_of_range(void **state)
{
    (void)state;
    int64_t zero = 0, rp[2] = {0, 0};
    pl_csr shape = {.ncols = 4, .rowptr = &zero};
    opt_ntg_call c = {&shape, 0, {1, 0, 0}, 1, false};
    opt_ntg_opts o = {.l_scaling = 0.0, .max_vertices = 0};
    opt_ntg_builder *b;
    EXPECT_OK(opt_ntg_begin(&c, 1, 2, 4, &o, &b));
    pl_csr p = {.nrows = 1, .ncols = 4, .row0 = 4, .rowptr = rp};
    assert_int_equal(opt_ntg_add_rows(b, &p), DESO_EINVAL);
    opt_ntg_abandon(b);
}

/* ---- the cost ------------------------------------------------------------- */

static int table_rank(int64_t j, const void *arg)
{
    return ((const int32_t *)arg)[j];
}

static int64_t table_local(int64_t j, const void *arg)
{
    (void)arg;
    return j;
}

/* Halo bytes and messages by brute force: for every receiver r and column
 * j read by one of r's rows and owned elsewhere, 8 bytes once; for every
 * (r, owner) pair among them, one message.                               */
static void brute_halo(const pl_csr *a, const int32_t *rows, const int32_t *cols,
                       int K, int64_t *bytes, int64_t *msgs)
{
    *bytes = *msgs = 0;
    for (int q = 0; q < K; q++)
        for (int64_t j = 0; j < a->ncols; j++) {
            bool read = false;
            for (int64_t i = 0; i < a->nrows && !read; i++)
                for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
                    read = read || (rows[i] == q && a->col[e] == j);
            *bytes += read && cols[j] != q ? 8 : 0;
        }
    for (int q = 0; q < K; q++)
        for (int s = 0; s < K; s++) {
            bool any = false;
            for (int64_t i = 0; i < a->nrows; i++)
                for (int64_t e = a->rowptr[i]; e < a->rowptr[i + 1]; e++)
                    any = any || (rows[i] == q && cols[a->col[e]] == s && s != q);
            *msgs += any;
        }
}

static void test_cost_from_pieces(void **state)
{
    (void)state;
    tu_rng r = {1848};
    opt_params prm = opt_params_default();
    for (int trial = 0; trial < 300; trial++) {
        int64_t n = 1 + tu_below(&r, 40);
        int K = 1 + (int)tu_below(&r, 5);
        pl_csr a;
        random_matrix(&r, n, &a);
        int32_t rows[40], cols[40];
        for (int64_t i = 0; i < n; i++) {
            rows[i] = (int32_t)tu_below(&r, K);
            cols[i] = tu_below(&r, 2) ? rows[i] : (int32_t)tu_below(&r, K);
        }
        pl_owner ro = {table_rank, table_local, rows}, co = {table_rank, table_local, cols};
        int64_t cut[41], *rp = malloc((size_t)(n + 1) * sizeof *rp);
        int order[40], np = random_pieces(&r, n, cut, order);
        opt_sparse_tally *t;
        EXPECT_OK(opt_sparse_tally_begin(n, K, &t));
        for (int k = 0; k < np; k++) {
            pl_csr p = piece_of(&a, cut[order[k]], cut[order[k] + 1], rp);
            EXPECT_OK(opt_sparse_tally_rows(t, &p, &ro, &co));
        }
        opt_sparse_cost streamed, whole;
        EXPECT_OK(opt_sparse_tally_end(t, &prm, 1e-9, &streamed));
        EXPECT_OK(opt_sparse_cost_eval(&a, &ro, &co, K, &prm, 1e-9, &whole));
        int64_t bytes, msgs;
        brute_halo(&a, rows, cols, K, &bytes, &msgs);
        assert_int_equal(streamed.halo_bytes, bytes);
        assert_int_equal(streamed.halo_msgs, msgs);
        assert_memory_equal(&streamed, &whole, sizeof whole);
        free(rp);
        pl_csr_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_from_pieces),
        cmocka_unit_test(test_piece_out_of_range),
        cmocka_unit_test(test_cost_from_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
