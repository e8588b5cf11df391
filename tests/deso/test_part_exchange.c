/* Vectors placed by a partition (blas.h's BLAS_DIST_PART) under MPI: the
 * runtime's point-to-point exchange (deso/runtime/exchange.c, its element
 * map the identity) moves a vector between a partition and every other
 * vector layout, and between two partitions, delivering every element to
 * its holders, and moves exactly the bytes and messages the cost model's
 * count of that exchange (opt_exchange_cost) says, summed over ranks.
 * Partitions: a sparse matrix's row blocks and its x blocks (lap2d, a
 * rectangular matrix from CSR, rows in an uneven distribution from each
 * rank), and ranges with ranks holding nothing, all on one rank, n < P
 * and n = 1; the context interns them (equal ranges, one partition) and
 * refuses ranges that do not tile the indices.
 * deso-np: 1 2 3 4
 * deso-np-long: 6                                                         */
#include "deso/runtime/runtime.h"
#include "test_util.h"

static int me, np;

static double elem(int64_t g) { return 0.5 + (double)g * 3.0; }

/* An all-reduce per exchange would dominate the run at P > 2 on a loaded
 * machine: each exchange's counts are kept per pair, and one all-reduce
 * per batch sums them over ranks.                                        */
#define MAXPAIRS 80

typedef struct batch {
    int n;
    int64_t got[2 * MAXPAIRS];    /* this rank's bytes, messages per pair */
    opt_counts model[MAXPAIRS];
    bool ok;                      /* this rank's data all right           */
} batch;

static void local_counts(int64_t *t)
{
    deso_stats st;
    if (deso_stats_get(&st) != DESO_OK) st.bytes_p2p = st.msgs_p2p = -1;
    t[0] = st.bytes_p2p;
    t[1] = st.msgs_p2p;
}

/* One exchange S -> D: the data at every holder (local), the counts kept
 * for batch_ok.                                                          */
static void move(deso_ctx *ctx, batch *bt, const blas_layout *S,
                 const blas_layout *D)
{
    int r = ctx->coord[0], c = ctx->coord[1];
    deso__view *s = NULL, *d = NULL;
    assert_true(bt->n < MAXPAIRS);
    bool ok = deso__view_alloc(ctx, S, &s) == DESO_OK &&
              deso__view_alloc(ctx, D, &d) == DESO_OK;
    assert_true(ok);  /* local allocations of a few elements          */
    for (int64_t l = 0; l < s->rows; l++)
        s->data[l] = elem(blas_elem_global(S, r, c, l));
    for (int64_t l = 0; l < d->rows; l++) d->data[l] = -1.0;
    blas_emap e = {0, 1, 0, 1, D->n, 0, 0, 0};
    int64_t t0[2], t1[2];
    local_counts(t0);
    ok = deso__exchange_map(ctx, s, d, &e) == DESO_OK;
    local_counts(t1);
    for (int64_t l = 0; l < d->rows; l++)
        ok = ok && d->data[l] == elem(blas_elem_global(D, r, c, l));
    ok = ok && opt_exchange_cost(S, D, &ctx->params, NULL,
                                 &bt->model[bt->n]) == DESO_OK;
    if (!ok)
        print_error("rank %d: n %lld dist %d -> %d: wrong data\n", me,
                    (long long)D->n, S->dist, D->dist);
    bt->ok = bt->ok && ok;
    bt->got[2 * bt->n] = t1[0] - t0[0];
    bt->got[2 * bt->n + 1] = t1[1] - t0[1];
    bt->n++;
    deso__view_free(s);
    deso__view_free(d);
}

/* Whether every exchange of the batch delivered its data and moved what
 * the model counts (summed over ranks); empties it.  Collective.         */
static bool batch_ok(batch *bt)
{
    MPI_Allreduce(MPI_IN_PLACE, bt->got, 2 * bt->n, MPI_INT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    bool ok = bt->ok;
    for (int k = 0; k < bt->n; k++)
        if (bt->got[2 * k] != bt->model[k].bytes_p2p ||
            bt->got[2 * k + 1] != bt->model[k].msgs_p2p) {
            if (me == 0)
                print_error("exchange %d: moved %lld B in %lld msgs, model "
                            "%lld B in %lld\n", k, (long long)bt->got[2 * k],
                            (long long)bt->got[2 * k + 1],
                            (long long)bt->model[k].bytes_p2p,
                            (long long)bt->model[k].msgs_p2p);
            ok = false;
        }
    bt->n = 0;
    bt->ok = true;
    return tu_all(ok);
}

/* Partition p both ways against every other vector layout of its grid. */
static bool all_pairs(deso_ctx *ctx, const blas_part *p)
{
    int pr = ctx->df.pr, pc = ctx->df.pc;
    blas_layout L = blas_layout_part(p, pr, pc);
    /* every orientation, block and cyclic(3), held at coordinate 0 or
     * replicated (tests/optimizer/test_part.c counts every layout)       */
    const int64_t bs[] = {0, 3};
    batch bt = {.ok = true};
    for (int dist = -1; dist <= 1; dist++)
        for (int bk = 0; bk < 2; bk++)
            for (unsigned rep = 0; rep < 4; rep += 3) {
                blas_layout V = blas_layout_vec(p->n, dist, bs[bk], rep, pr,
                                                pc);
                move(ctx, &bt, &V, &L);
                move(ctx, &bt, &L, &V);
            }
    return batch_ok(&bt);
}

/* Ranges number k of n over P ranks (as tests/optimizer/test_part.c's). */
static void ranges(int k, int64_t n, int P, int64_t *start)
{
    start[0] = 0;
    for (int q = 0; q < P; q++) {
        int64_t len = k == 0   ? n / P + (q < n % P)
                      : k == 1 ? (q == P - 1 ? n : 0)
                               : (q % 2 == 1 ? 0 : (q + 1) * 2);
        start[q + 1] = start[q] + len < n ? start[q] + len : n;
    }
    start[P] = n;
}

static void test_ranges(void **state)
{
    (void)state;
    int grids[3][2], ng = tu_grids(grids);
    for (int gk = 0; gk < ng; gk++) {
        deso_ctx *ctx = tu_ctx(grids[gk][0], grids[gk][1], 0);
        const int64_t ns[] = {1, 17};
        int64_t *s1 = calloc((size_t)np + 1, sizeof *s1);
        int64_t *s2 = calloc((size_t)np + 1, sizeof *s2);
        for (int nk = 0; nk < 2; nk++)
            for (int k = 0; k < 3; k++) {
                const blas_part *p1, *p2, *again;
                ranges(k, ns[nk], np, s1);
                TU_OK(deso__part_intern(ctx, ns[nk], s1, &p1));
                TU_OK(deso__part_intern(ctx, ns[nk], s1, &again));
                assert_true(tu_all(p1 == again && p1->start != s1));
                assert_true(all_pairs(ctx, p1));
                ranges((k + 1) % 3, ns[nk], np, s2);
                TU_OK(deso__part_intern(ctx, ns[nk], s2, &p2));
                blas_layout L1 = blas_layout_part(p1, ctx->df.pr, ctx->df.pc);
                blas_layout L2 = blas_layout_part(p2, ctx->df.pr, ctx->df.pc);
                batch bt = {.ok = true};
                move(ctx, &bt, &L1, &L2);
                move(ctx, &bt, &L2, &L1);
                assert_true(batch_ok(&bt));
            }
        /* ranges that do not tile [0, n)                                  */
        const blas_part *bad;
        ranges(0, 5, np, s1);
        s1[np] = 4;
        TU_ERR(deso__part_intern(ctx, 5, s1, &bad), DESO_EINTERNAL);
        free(s1);
        free(s2);
        TU_OK(deso_finalize(&ctx));
    }
}

static void expect_parts(deso_ctx *ctx, deso_spmat *a)
{
    deso__spmat_data *sp = a->h.sp;
    const blas_part *rows, *cols;
    TU_OK(deso__spmat_parts(ctx, sp, &rows, &cols));
    bool ok = rows->n == sp->m && cols->n == sp->n;
    int64_t *xs = calloc((size_t)np + 1, sizeof *xs);
    deso__spmat_xstart(ctx, sp, xs);
    for (int q = 0; q <= np; q++)
        ok = ok && rows->start[q] == sp->start[q] && cols->start[q] == xs[q];
    free(xs);
    assert_true(tu_all(ok));
    assert_true(all_pairs(ctx, rows));
    assert_true(all_pairs(ctx, cols));
}

static void test_spmat_blocks(void **state)
{
    (void)state;
    int grids[3][2], ng = tu_grids(grids);
    for (int gk = 0; gk < ng; gk++) {
        deso_ctx *ctx = tu_ctx(grids[gk][0], grids[gk][1], 0);
        deso_spmat *a;
        TU_OK(deso_spmat_from_gen(ctx, "lap2d:4", &a));
        expect_parts(ctx, a);
        TU_OK(deso_spmat_destroy(&a));
        /* 3 x 7 on rank 0: more columns than rows, fewer rows than ranks */
        int64_t rp[4] = {0, 2, 2, 3}, col[3] = {0, 6, 3};
        double val[3] = {1.0, 2.0, 3.0};
        TU_OK(deso_spmat_from_csr(ctx, 3, 7, rp, col, val, 0, &a));
        expect_parts(ctx, a);
        TU_OK(deso_spmat_destroy(&a));
        /* each rank its own rows: rank r holds r rows of a diagonal       */
        int64_t lo = (int64_t)me * (me - 1) / 2, nr = me, m = 0;
        for (int q = 0; q < np; q++) m += q;
        if (m == 0) {
            m = 1;
            nr = 1;
        }
        int64_t *rrp = calloc((size_t)nr + 1, sizeof *rrp);
        int64_t *rc = calloc((size_t)nr + 1, sizeof *rc);
        double *rv = calloc((size_t)nr + 1, sizeof *rv);
        for (int64_t i = 0; i < nr; i++) {
            rrp[i + 1] = i + 1;
            rc[i] = lo + i;
            rv[i] = 1.0;
        }
        TU_OK(deso_spmat_from_rows(ctx, m, m, lo, nr, rrp, rc, rv, &a));
        expect_parts(ctx, a);
        TU_OK(deso_spmat_destroy(&a));
        free(rrp);
        free(rc);
        free(rv);
        TU_OK(deso_finalize(&ctx));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_spmat_blocks),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
