/* Bad input returns its error code on every rank, never a crash or a
 * hang: mismatched lengths, NULL handles, destroyed handles (ESTALE),
 * handles of another context (ECONTEXT), unsupported increments, bad
 * enums, bad options, and ranks recording different call sequences
 * (EMISMATCH at the force point, on every rank, after which the context
 * still works): an extra call, rank-dependent sizes, an extra call at the
 * end of the DAG or in its middle.                                         */
#include <stdlib.h>

#include "test_util.h"

/* A call made on some ranks only: it must succeed locally (no assertion
 * here, which would itself be collective).                                */
#define TU_OK_LOCAL(call)                                                    \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != DESO_OK)                                                   \
            print_error("%s -> %s\n", #call, deso_errname(e_));              \
        ok_local &= e_ == DESO_OK;                                           \
    } while (0)
static int ok_local = 1;

static void test_bad_arguments(void **state)
{
    (void)state;
    deso_ctx *ctx = tu_ctx(0, 0, 2), *other = tu_ctx(0, 0, 3);
    deso_vec *x, *y, *z, *w;
    deso_mat *A;
    deso_scalar *s, *t;
    TU_OK(deso_vec_create(ctx, 10, &x));
    TU_OK(deso_vec_create(ctx, 11, &y));
    TU_OK(deso_vec_create(ctx, 10, &z));
    TU_OK(deso_vec_create(other, 10, &w));
    TU_OK(deso_mat_create(ctx, 10, 11, &A));
    TU_OK(deso_scalar_create(ctx, 1.0, &s));
    TU_OK(deso_scalar_create(other, 1.0, &t));

    /* lengths and sizes                                                     */
    TU_ERR(deso_daxpy(10, 1.0, x, 1, y, 1), DESO_ESIZE);
    TU_ERR(deso_dcopy(-1, x, 1, z, 1), DESO_ESIZE);
    TU_ERR(deso_ddot(11, x, 1, z, 1, s), DESO_ESIZE);
    TU_ERR(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, 10, 11, 1.0, A, 10, x, 1,
                      0.0, z, 1),
           DESO_ESIZE);
    TU_ERR(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, 11, 10, 1.0, A, 10, x, 1,
                      0.0, y, 1),
           DESO_ESIZE);
    TU_ERR(deso_vec_create(ctx, -5, &w), DESO_ESIZE);
    /* NULL handles                                                          */
    TU_ERR(deso_daxpy(10, 1.0, NULL, 1, z, 1), DESO_ENULL);
    TU_ERR(deso_ddot(10, x, 1, z, 1, NULL), DESO_ENULL);
    TU_ERR(deso_dscal(10, (deso_scalar *)NULL, x, 1), DESO_ENULL);
    TU_ERR(deso_scalar_get(NULL, NULL), DESO_ENULL);
    TU_ERR(deso_vec_create(NULL, 3, &w), DESO_ENULL);
    /* increments, enums                                                     */
    TU_ERR(deso_daxpy(10, 1.0, x, 2, z, 1), DESO_ENOTSUP);
    TU_ERR(deso_dcopy(10, x, 1, z, -1), DESO_ENOTSUP);
    TU_ERR(deso_dgemv((deso_order)7, DESO_NO_TRANS, 10, 11, 1.0, A, 10, y, 1,
                      0.0, x, 1),
           DESO_EINVAL);
    TU_ERR(deso_dgemv(DESO_COL_MAJOR, (deso_trans)7, 10, 11, 1.0, A, 10, y, 1,
                      0.0, x, 1),
           DESO_EINVAL);
    TU_ERR(deso_dtrsv(DESO_COL_MAJOR, DESO_LOWER, DESO_NO_TRANS,
                      (deso_diag)0, 10, A, 10, x, 1),
           DESO_EINVAL);
    /* another context's handles                                             */
    TU_ERR(deso_daxpy(10, 1.0, x, 1, w, 1), DESO_ECONTEXT);
    TU_ERR(deso_daxpy(10, t, x, 1, z, 1), DESO_ECONTEXT);
    TU_ERR(deso_ddot(10, x, 1, z, 1, t), DESO_ECONTEXT);
    /* a scalar handle where a vector is expected is a usage error          */
    TU_ERR(deso_vec_length((const deso_vec *)(const void *)s, &(int64_t){0}),
           DESO_EINVAL);
    /* destroyed handles: the shell stays, so a stale copy is detected      */
    deso_vec *stale = z;
    deso_scalar *sstale = s;
    TU_OK(deso_vec_destroy(&z));
    assert_null(z);
    TU_OK(deso_scalar_destroy(&s));
    TU_ERR(deso_daxpy(10, 1.0, x, 1, stale, 1), DESO_ESTALE);
    TU_ERR(deso_dcopy(10, stale, 1, x, 1), DESO_ESTALE);
    TU_ERR(deso_dnrm2(10, x, 1, sstale), DESO_ESTALE);
    TU_ERR(deso_scalar_get(sstale, &(double){0}), DESO_ESTALE);
    TU_ERR(deso_vec_destroy(&stale), DESO_ESTALE);
    TU_OK(deso_vec_destroy(&z));   /* NULL-safe                             */
    /* nothing above was recorded: a flush has nothing to do                */
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.pending == 0));
    TU_OK(deso_flush(ctx));
    TU_OK(deso_finalize(&other));
    TU_OK(deso_finalize(&ctx));
    assert_null(ctx);
    (void)w;
    (void)y;
    (void)A;
    (void)t;
}

/* Ranks that record different calls: every rank gets DESO_EMISMATCH at
 * the next force point, the pending work is dropped, and the context is
 * usable afterwards.                                                       */
static void test_spmd_divergence(void **state)
{
    (void)state;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    deso_vec *x, *y;
    deso_scalar *s;
    TU_OK(deso_vec_create(ctx, 9, &x));
    TU_OK(deso_vec_create(ctx, 9, &y));
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    TU_OK(deso_daxpy(9, 2.0, x, 1, y, 1));
    /* a local check only: an assertion here would itself be collective    */
    if (me == 0 && tu_size() > 1) assert_int_equal(deso_dscal(9, 3.0, y, 1), 0);
    TU_OK(deso_ddot(9, x, 1, y, 1, s));
    double v;
    deso_err e = deso_scalar_get(s, &v);
    if (tu_size() > 1) {
        assert_true(tu_all(e == DESO_EMISMATCH));
        /* values that depended on the dropped work are unusable             */
        TU_ERR(deso_vec_gather(y, NULL, 0), DESO_EMISMATCH);
        /* fresh values work                                                 */
        deso_vec *a;
        deso_scalar *b;
        TU_ERR(deso_vec_from_fn(ctx, 9, NULL, NULL, &a), DESO_ENULL);
        TU_OK(deso_vec_create(ctx, 9, &a));
        TU_OK(deso_scalar_create(ctx, 0.0, &b));
        TU_OK(deso_dnrm2(9, a, 1, b));
        assert_true(tu_all(tu_get(b) == 0.0));
    } else {
        assert_true(tu_all(e == DESO_OK && v == 0.0));
    }
    TU_OK(deso_finalize(&ctx));
}

/* Every rank gets DESO_EMISMATCH with the same explanation.              */
static void expect_mismatch(deso_err e)
{
    int ok = e == DESO_EMISMATCH &&
             strstr(deso_last_error(), "different call sequences") != NULL;
    if (!ok)
        print_error("%s: %s\n", deso_errname(e), deso_last_error());
    assert_true(tu_all(ok));
}

/* After a mismatch the context computes: (1 .. 5) . (1 .. 5) = 55.        */
static void expect_usable(deso_ctx *ctx)
{
    double v[5] = {1, 2, 3, 4, 5};
    deso_vec *a;
    deso_scalar *b;
    TU_OK(deso_vec_from_array(ctx, 5, v, DESO_ALL_RANKS, &a));
    TU_OK(deso_scalar_create(ctx, 0.0, &b));
    TU_OK(deso_ddot(5, a, 1, a, 1, b));
    assert_true(tu_all(tu_get(b) == 55.0));
    TU_OK(deso_vec_destroy(&a));
    TU_OK(deso_scalar_destroy(&b));
}

/* Divergence in sizes, in the number of calls and in the operation, each
 * detected at the next force point on every rank (no deadlock, same
 * message), after which the context is usable again.                     */
static void test_spmd_sizes_and_extra_calls(void **state)
{
    (void)state;
    int me, P = tu_size();
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (P == 1) return;   /* one rank cannot diverge from itself          */
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    deso_vec *x, *y;
    deso_scalar *s;
    double v;

    /* a vector whose length depends on the rank                            */
    TU_OK(deso_vec_create(ctx, me == 0 ? 8 : 9, &x));
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    TU_OK(deso_dnrm2(me == 0 ? 8 : 9, x, 1, s));
    expect_mismatch(deso_scalar_get(s, &v));
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_scalar_destroy(&s));
    expect_usable(ctx);

    /* the same call on a different vector (and length) on one rank         */
    TU_OK(deso_vec_create(ctx, 6, &x));
    TU_OK(deso_vec_create(ctx, 7, &y));
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    if (me == P - 1) TU_OK_LOCAL(deso_dasum(7, y, 1, s));
    else TU_OK_LOCAL(deso_dasum(6, x, 1, s));
    expect_mismatch(deso_flush(ctx));
    expect_usable(ctx);

    /* one rank records an extra call at the end                            */
    TU_OK(deso_daxpy(6, 1.0, x, 1, x, 1));
    if (me == P - 1) TU_OK_LOCAL(deso_dscal(7, 2.0, y, 1));
    expect_mismatch(deso_flush(ctx));
    /* values the dropped work produced are unusable; others are fine       */
    TU_ERR(deso_vec_gather(x, NULL, 0), DESO_EMISMATCH);
    expect_usable(ctx);

    /* one rank records an extra call in the middle, with a lazy scalar
     * (y is fresh: the last rank's old y was lost with its dropped dscal)  */
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_vec_create(ctx, 7, &y));
    TU_OK(deso_ddot(7, y, 1, y, 1, s));
    if (me == 0) TU_OK_LOCAL(deso_sadd(s, s, 1.0));
    TU_OK(deso_dscal(7, s, y, 1));
    expect_mismatch(deso_vec_get(y, 0, &v));
    expect_usable(ctx);

    /* different scalar constants are data, not structure: no mismatch      */
    deso_vec *z;
    TU_OK(deso_vec_create(ctx, 4, &z));
    TU_OK(deso_dscal(4, (double)me, z, 1));
    TU_OK(deso_flush(ctx));
    assert_true(tu_all(ok_local));
    TU_OK(deso_finalize(&ctx));
}

static void test_options(void **state)
{
    (void)state;
    deso_ctx *ctx = NULL;
    int P = tu_size();
    deso_options o;
    deso_options_default(&o);
    o.grid_rows = P + 1;
    o.grid_cols = 1;
    TU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EGRID);
    assert_null(ctx);
    setenv("DESO_OPT", "fast", 1);
    TU_ERR(deso_init(MPI_COMM_WORLD, NULL, &ctx), DESO_EINVAL);
    setenv("DESO_OPT", "affine", 1);
    setenv("DESO_GRID", "1x1", 1);
    if (P == 1) {
        TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
        deso_info info;
        TU_OK(deso_get_info(ctx, &info));
        assert_true(info.mode == DESO_MODE_AFFINE);
        TU_OK(deso_finalize(&ctx));
    } else {
        TU_ERR(deso_init(MPI_COMM_WORLD, NULL, &ctx), DESO_EGRID);
    }
    char grid[32];
    snprintf(grid, sizeof grid, "%dx1", P);
    setenv("DESO_GRID", grid, 1);
    setenv("DESO_WISDOM", "/tmp/deso-test-errors-w.txt", 1);
    setenv("DESO_TRACE", "/tmp/deso-test-errors-t.dot", 1);
    TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.grid_rows == P && info.grid_cols == 1 &&
                       info.mode == DESO_MODE_AFFINE &&
                       strcmp(info.wisdom, "/tmp/deso-test-errors-w.txt") ==
                           0 &&
                       strcmp(info.trace, "/tmp/deso-test-errors-t.dot") ==
                           0));
    TU_OK(deso_finalize(&ctx));
    /* code wins over the environment                                        */
    o.grid_rows = 1;
    o.grid_cols = P;
    o.mode = DESO_MODE_NONE;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.grid_rows == 1 && info.mode == DESO_MODE_NONE));
    TU_OK(deso_finalize(&ctx));
    unsetenv("DESO_OPT");
    unsetenv("DESO_GRID");
    unsetenv("DESO_WISDOM");
    unsetenv("DESO_TRACE");
    /* finalize exported wisdom (and maybe a trace) there: leave nothing   */
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        remove("/tmp/deso-test-errors-w.txt");
        remove("/tmp/deso-test-errors-t.dot");
    }
    /* strerror knows every code                                             */
    assert_string_equal(deso_strerror(DESO_ESTALE),
                        "handle used after it was freed");
}

TU_MAIN(cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_spmd_divergence),
        cmocka_unit_test(test_spmd_sizes_and_extra_calls),
        cmocka_unit_test(test_options))
