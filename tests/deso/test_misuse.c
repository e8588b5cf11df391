/* API misuse: every public function of deso.h and deso_redist.h called
 * with NULL pointers, destroyed handles, handles of another context,
 * wrong sizes (mismatched lengths, m/n disagreeing), negative and huge
 * arguments (n = -1, n = INT64_MAX, roots out of range, lld too small,
 * block sizes 0) returns its documented code on every rank, leaves a
 * non-empty deso_last_error(), and leaves the context usable: a small
 * computation afterwards gives the right answer.
 *
 * Collective safety: a bad argument on one rank only (a NULL buffer on
 * the root, a bad lld on one rank) must not leave the others waiting in a
 * collective; those cases check each rank's code separately.  Every
 * assertion is all-reduced (tu_all) so that all ranks fail together.
 *
 * Optimiser modes: the calls of test_create and test_handles fail in a
 * context of each mode (none, affine, full), which must compute correctly
 * afterwards; the other tests' contexts take one mode each.  P = 4 runs
 * on the 2x2 grid, P = 6 (the long group) on 2x3.
 * deso-np: 1 2 3 4
 * deso-np-long: 6                                                         */
#include <stdlib.h>

#include <cblas.h>

#include "deso/runtime/runtime.h"
#include "placement/errors.h"
#include "test_util.h"

static int me, np;

/* Failed expectations on this rank since the last MU_SYNC.  Checks are
 * counted locally and all-reduced in batches (one all-reduce per check
 * would dominate the run time on a loaded 2-core machine); every failure
 * is printed with its rank, call and message.                              */
static int mu_bad;

#define MU_SYNC()                                                            \
    do {                                                                     \
        assert_true(tu_all(mu_bad == 0));                                    \
        mu_bad = 0;                                                          \
    } while (0)

/* The call returns code_here on this rank (codes may differ by rank), and
 * an error leaves a detailed message.                                      */
#define MU_ERR_RANK(call, code_here)                                         \
    do {                                                                     \
        deso__fail(DESO_OK, "%s", "");                                      \
        deso_err want_ = (code_here);                                        \
        deso_err e_ = (call);                                                \
        int ok_ = e_ == want_ &&                                             \
                  (want_ == DESO_OK || deso_last_error()[0] != '\0');        \
        if (!ok_)                                                            \
            print_error("rank %d, %s: %s -> %s (\"%s\"), expected %s\n", me, \
                        tu_where(), #call, deso_errname(e_),                 \
                        deso_last_error(), deso_errname(want_));             \
        mu_bad += !ok_;                                                      \
    } while (0)

/* The call returns `code` on every rank, with a detailed message.       */
#define MU_ERR(call, code) MU_ERR_RANK(call, code)

static double idx1(int64_t i, void *arg)
{
    (void)arg;
    return (double)(i + 1);
}

static double mat_ij(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return (double)(i == j ? 2 : 0) + 0.01 * (double)(i + j);
}

/* The context still computes, against CBLAS: x = (1 .. 7), x . x = 140,
 * and y = A x (a gemv result, which lives along the grid's other
 * dimension) and x . y; nothing is left pending by the failed calls.    */
static void check_usable(deso_ctx *ctx)
{
    deso_info info;
    TU_CALL(deso_get_info(ctx, &info));
    TU_CHECK(info.pending == 0);
    double x[7], A[49], y[7], g[7];
    for (int j = 0; j < 7; j++) {
        x[j] = idx1(j, NULL);
        for (int i = 0; i < 7; i++) A[j * 7 + i] = mat_ij(i, j, NULL);
    }
    cblas_dgemv(CblasColMajor, CblasNoTrans, 7, 7, 1.0, A, 7, x, 1, 0.0, y, 1);
    double xy = cblas_ddot(7, x, 1, y, 1);
    deso_vec *dx, *dy;
    deso_mat *dA;
    deso_scalar *s, *t;
    TU_CALL(deso_vec_from_fn(ctx, 7, idx1, NULL, &dx));
    TU_CALL(deso_vec_create(ctx, 7, &dy));
    TU_CALL(deso_mat_from_fn(ctx, 7, 7, mat_ij, NULL, &dA));
    TU_CALL(deso_scalar_create(ctx, 0.0, &s));
    TU_CALL(deso_scalar_create(ctx, 0.0, &t));
    TU_CALL(deso_ddot(7, dx, 1, dx, 1, s));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, 7, 7, 1.0, dA, 7, dx, 1,
                       0.0, dy, 1));
    TU_CALL(deso_ddot(7, dx, 1, dy, 1, t));
    TU_CHECK(tu_value(s) == 140.0);
    TU_CHECK(tu_srel(tu_value(t), xy) < 1e-12);
    tu_fetch(dy, g);
    TU_CHECK(tu_relerr(g, y, 7) < 1e-12);
    TU_CALL(deso_vec_destroy(&dx));
    TU_CALL(deso_vec_destroy(&dy));
    TU_CALL(deso_mat_destroy(&dA));
    TU_CALL(deso_scalar_destroy(&s));
    TU_CALL(deso_scalar_destroy(&t));
    TU_SYNC();
}

/* A context in the given mode, default grid, block size 2.               */
static deso_ctx *mu_ctx(deso_mode mode)
{
    tu_label("mode %s", deso_mode_name(mode));
    return tu_ctx_mode(mode, 0, 0, 2);
}

/* ---- context, options, plans, wisdom, statistics ------------------------ */

static void test_context(void **state)
{
    (void)state;
    tu_label("options");
    deso_ctx *ctx = NULL;
    deso_options o;
    MU_ERR(deso_init(MPI_COMM_WORLD, NULL, NULL), DESO_ENULL);
    MU_ERR(deso_init(MPI_COMM_NULL, NULL, &ctx), DESO_EINVAL);
    assert_null(ctx);
    deso_options_default(&o);
    o.mode = (deso_mode)99;
    MU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EINVAL);
    deso_options_default(&o);
    o.mode = (deso_mode)-1;
    MU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EINVAL);
    deso_options_default(&o);
    o.nb = -5;
    MU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EINVAL);
    deso_options_default(&o);
    o.grid_rows = -1;
    o.grid_cols = 1;
    MU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EINVAL);
    deso_options_default(&o);
    o.grid_rows = np;
    o.grid_cols = 2;
    MU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EGRID);
    deso_options_default(&o);
    o.grid_rows = 1 << 30;
    o.grid_cols = 1 << 30;
    MU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EGRID);
    deso_options_default(&o);
    o.max_nodes = -1;
    MU_ERR(deso_init(MPI_COMM_WORLD, &o, &ctx), DESO_EINVAL);
    assert_null(ctx);
    /* the environment, value by value                                       */
    static const char *bad[][2] = {
        {"DESO_NB", "abc"},         {"DESO_NB", "0"},
        {"DESO_NB", "-3"},          {"DESO_NB", "99999999999999999999999"},
        {"DESO_MAX_NODES", "-1"},   {"DESO_MAX_NODES", "12x"},
        {"DESO_GRID", "axb"},       {"DESO_GRID", "2x"},
        {"DESO_GRID", "0x1"},       {"DESO_OPT", "fast"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        setenv(bad[k][0], bad[k][1], 1);
        MU_ERR(deso_init(MPI_COMM_WORLD, NULL, &ctx), DESO_EINVAL);
        assert_null(ctx);
        unsetenv(bad[k][0]);
    }
    setenv("DESO_GRID", "2000000x1", 1);
    MU_ERR(deso_init(MPI_COMM_WORLD, NULL, &ctx), DESO_EINVAL);
    unsetenv("DESO_GRID");

    ctx = mu_ctx(DESO_MODE_NONE);
    MU_ERR(deso_flush(NULL), DESO_ENULL);
    deso_info info;
    MU_ERR(deso_get_info(NULL, &info), DESO_ENULL);
    MU_ERR(deso_get_info(ctx, NULL), DESO_ENULL);
    MU_ERR(deso_plan_explain(NULL, stdout), DESO_ENULL);
    MU_ERR(deso_plan_explain(ctx, NULL), DESO_ENULL);
    MU_ERR(deso_wisdom_export(NULL, "w.txt"), DESO_ENULL);
    MU_ERR(deso_wisdom_export(ctx, NULL), DESO_ENULL);
    MU_ERR(deso_wisdom_import(NULL, "w.txt"), DESO_ENULL);
    MU_ERR(deso_wisdom_import(ctx, NULL), DESO_ENULL);
    MU_ERR(deso_wisdom_import(ctx, "/nonexistent/deso/wisdom"), DESO_EIO);
    MU_ERR(deso_wisdom_export(ctx, "/nonexistent/deso/wisdom"), DESO_EIO);
    MU_ERR(deso_stats_get(NULL), DESO_ENULL);
    /* names of bad codes and modes are strings, never NULL                  */
    assert_non_null(deso_mode_name((deso_mode)99));
    assert_non_null(deso_strerror((deso_err)12345));
    assert_non_null(deso_errname((deso_err)-12345));
    assert_non_null(deso_schedule_name((deso_schedule)99));
    deso_options_default(NULL);   /* NULL-safe                              */
    deso_ctx *none = NULL;
    TU_OK(deso_finalize(NULL));
    TU_OK(deso_finalize(&none));
    MU_SYNC();
    check_usable(ctx);
    TU_OK(deso_finalize(&ctx));
    assert_null(ctx);
}

/* ---- creating values ---------------------------------------------------- */

static void create_in(deso_mode mode)
{
    deso_ctx *ctx = mu_ctx(mode);
    deso_vec *x = NULL;
    deso_mat *A = NULL;
    deso_scalar *s = NULL;
    double data[16] = {0};
    double *mine0 = me == 0 ? NULL : data;   /* NULL on rank 0 only     */

    MU_ERR(deso_vec_create(NULL, 3, &x), DESO_ENULL);
    MU_ERR(deso_vec_create(ctx, 3, NULL), DESO_ENULL);
    MU_ERR(deso_vec_create(ctx, -1, &x), DESO_ESIZE);
    MU_ERR(deso_vec_create(ctx, INT64_MIN, &x), DESO_ESIZE);
    MU_ERR(deso_vec_create(ctx, INT64_MAX, &x), DESO_ENOMEM);
    MU_ERR(deso_vec_create(ctx, (int64_t)1 << 52, &x), DESO_ENOMEM);
    assert_null(x);

    MU_ERR(deso_vec_from_array(NULL, 4, data, DESO_ALL_RANKS, &x), DESO_ENULL);
    MU_ERR(deso_vec_from_array(ctx, 4, data, DESO_ALL_RANKS, NULL),
           DESO_ENULL);
    MU_ERR(deso_vec_from_array(ctx, 4, NULL, DESO_ALL_RANKS, &x), DESO_ENULL);
    MU_ERR(deso_vec_from_array(ctx, -1, data, DESO_ALL_RANKS, &x),
           DESO_ESIZE);
    MU_ERR(deso_vec_from_array(ctx, INT64_MAX, data, DESO_ALL_RANKS, &x),
           DESO_ENOMEM);
    MU_ERR(deso_vec_from_array(ctx, INT64_MAX, data, 0, &x), DESO_ENOMEM);
    MU_ERR(deso_vec_from_array(ctx, 4, data, np, &x), DESO_EINVAL);
    MU_ERR(deso_vec_from_array(ctx, 4, data, -2, &x), DESO_EINVAL);
    MU_ERR(deso_vec_from_array(ctx, 4, data, 1 << 30, &x), DESO_EINVAL);
    /* NULL data on the root only: every rank fails (no one is left in the
     * broadcast)                                                           */
    MU_ERR(deso_vec_from_array(ctx, 4, mine0, 0, &x), DESO_ENULL);
    /* an out-parameter NULL on one rank only                                */
    MU_ERR(deso_vec_from_array(ctx, 4, data, 0, me == np - 1 ? NULL : &x),
           DESO_ENULL);
    assert_null(x);

    MU_ERR(deso_vec_from_fn(NULL, 4, idx1, NULL, &x), DESO_ENULL);
    MU_ERR(deso_vec_from_fn(ctx, 4, NULL, NULL, &x), DESO_ENULL);
    MU_ERR(deso_vec_from_fn(ctx, 4, idx1, NULL, NULL), DESO_ENULL);
    MU_ERR(deso_vec_from_fn(ctx, -1, idx1, NULL, &x), DESO_ESIZE);
    MU_ERR(deso_vec_from_fn(ctx, INT64_MAX, idx1, NULL, &x), DESO_ENOMEM);

    MU_ERR(deso_mat_create(NULL, 2, 2, &A), DESO_ENULL);
    MU_ERR(deso_mat_create(ctx, 2, 2, NULL), DESO_ENULL);
    MU_ERR(deso_mat_create(ctx, -1, 2, &A), DESO_ESIZE);
    MU_ERR(deso_mat_create(ctx, 2, -1, &A), DESO_ESIZE);
    MU_ERR(deso_mat_create(ctx, INT64_MAX, INT64_MAX, &A), DESO_ENOMEM);
    MU_ERR(deso_mat_create(ctx, (int64_t)1 << 32, (int64_t)1 << 32, &A),
           DESO_ENOMEM);
    MU_ERR(deso_mat_create(ctx, 2, INT64_MAX, &A), DESO_ENOMEM);
    MU_ERR(deso_mat_from_fn(NULL, 2, 2, mat_ij, NULL, &A), DESO_ENULL);
    MU_ERR(deso_mat_from_fn(ctx, 2, 2, NULL, NULL, &A), DESO_ENULL);
    MU_ERR(deso_mat_from_fn(ctx, 2, 2, mat_ij, NULL, NULL), DESO_ENULL);
    MU_ERR(deso_mat_from_fn(ctx, -2, 2, mat_ij, NULL, &A), DESO_ESIZE);

    MU_ERR(deso_mat_from_array(NULL, 4, 4, data, 4, DESO_ALL_RANKS, &A),
           DESO_ENULL);
    MU_ERR(deso_mat_from_array(ctx, 4, 4, data, 4, DESO_ALL_RANKS, NULL),
           DESO_ENULL);
    MU_ERR(deso_mat_from_array(ctx, 4, 4, NULL, 4, DESO_ALL_RANKS, &A),
           DESO_ENULL);
    MU_ERR(deso_mat_from_array(ctx, -4, 4, data, 4, DESO_ALL_RANKS, &A),
           DESO_ESIZE);
    MU_ERR(deso_mat_from_array(ctx, 4, 4, data, 3, DESO_ALL_RANKS, &A),
           DESO_EINVAL);
    MU_ERR(deso_mat_from_array(ctx, 4, 4, data, 0, 0, &A), DESO_EINVAL);
    MU_ERR(deso_mat_from_array(ctx, 4, 4, data, -1, 0, &A), DESO_EINVAL);
    MU_ERR(deso_mat_from_array(ctx, 4, 4, data, 4, np, &A), DESO_EINVAL);
    MU_ERR(deso_mat_from_array(ctx, 4, 4, data, 4, -7, &A), DESO_EINVAL);
    MU_ERR(deso_mat_from_array(ctx, 4, 4, mine0, 4, 0, &A), DESO_ENULL);
    MU_ERR(deso_mat_from_array(ctx, INT64_MAX, 2, data, INT64_MAX, 0, &A),
           DESO_ENOMEM);
    assert_null(A);

    MU_ERR(deso_scalar_create(NULL, 1.0, &s), DESO_ENULL);
    MU_ERR(deso_scalar_create(ctx, 1.0, NULL), DESO_ENULL);
    assert_null(s);

    /* the failed root-side calls changed nothing: a rooted create works    */
    for (int k = 0; k < 16; k++) data[k] = k;
    TU_OK(deso_mat_from_array(ctx, 4, 4, me == 0 ? data : NULL, 4, 0, &A));
    double back[16];
    TU_OK(deso_mat_gather(A, back, 4, DESO_ALL_RANKS));
    assert_true(tu_all(memcmp(back, data, sizeof back) == 0));
    TU_OK(deso_mat_destroy(&A));
    MU_SYNC();
    check_usable(ctx);
    TU_OK(deso_finalize(&ctx));
}

/* In every optimiser mode: the context must compute after the failures. */
static void test_create(void **state)
{
    (void)state;
    for (int m = 0; m < TU_NMODES; m++) create_in(tu_mode(m));
}

/* ---- handles in level 1, level 2 and scalar calls ------------------------ */

static void handles_in(deso_mode mode)
{
    deso_ctx *ctx = mu_ctx(mode), *other = tu_ctx(0, 0, 3);
    deso_vec *x, *y, *z, *ox, *dead;
    deso_mat *A, *S, *oA, *deadA;
    deso_scalar *s, *os, *deads;
    TU_OK(deso_vec_create(ctx, 6, &x));
    TU_OK(deso_vec_create(ctx, 6, &y));
    TU_OK(deso_vec_create(ctx, 5, &z));
    TU_OK(deso_vec_create(ctx, 6, &dead));
    TU_OK(deso_vec_create(other, 6, &ox));
    TU_OK(deso_mat_create(ctx, 5, 6, &A));   /* 5 x 6: not square       */
    TU_OK(deso_mat_create(ctx, 6, 6, &S));
    TU_OK(deso_mat_create(ctx, 6, 6, &deadA));
    TU_OK(deso_mat_create(other, 6, 6, &oA));
    TU_OK(deso_scalar_create(ctx, 1.0, &s));
    TU_OK(deso_scalar_create(ctx, 1.0, &deads));
    TU_OK(deso_scalar_create(other, 1.0, &os));
    deso_vec *stale = dead;
    deso_mat *staleA = deadA;
    deso_scalar *stales = deads;
    TU_OK(deso_vec_destroy(&dead));
    TU_OK(deso_mat_destroy(&deadA));
    TU_OK(deso_scalar_destroy(&deads));
    const deso_vec *sv = (const deso_vec *)(const void *)s;   /* wrong kind */
    const deso_scalar *ns = NULL;
    const int64_t big = INT64_MAX;

    /* destroy: stale pointers, NULL                                         */
    MU_ERR(deso_vec_destroy(&stale), DESO_ESTALE);
    assert_null(stale);
    TU_OK(deso_vec_destroy(NULL));
    TU_OK(deso_vec_destroy(&stale));
    TU_OK(deso_mat_destroy(NULL));
    TU_OK(deso_scalar_destroy(NULL));
    deso_mat *staleA2 = staleA;
    MU_ERR(deso_mat_destroy(&staleA2), DESO_ESTALE);
    deso_scalar *stales2 = stales;
    MU_ERR(deso_scalar_destroy(&stales2), DESO_ESTALE);
    /* stale is NULL from here on: shell is a destroyed vector             */
    deso_vec *shell;
    TU_OK(deso_vec_create(ctx, 6, &shell));
    deso_vec *dshell = shell;
    TU_OK(deso_vec_destroy(&dshell));

    /* queries                                                               */
    int64_t n, m;
    MU_ERR(deso_vec_length(NULL, &n), DESO_ENULL);
    MU_ERR(deso_vec_length(x, NULL), DESO_ENULL);
    MU_ERR(deso_vec_length(shell, &n), DESO_ESTALE);
    MU_ERR(deso_vec_length(sv, &n), DESO_EINVAL);
    MU_ERR(deso_mat_shape(NULL, &m, &n), DESO_ENULL);
    MU_ERR(deso_mat_shape(A, NULL, &n), DESO_ENULL);
    MU_ERR(deso_mat_shape(A, &m, NULL), DESO_ENULL);
    MU_ERR(deso_mat_shape(staleA, &m, &n), DESO_ESTALE);

    /* level 1: NULL, stale, other context, wrong kind, sizes, increments    */
    MU_ERR(deso_dcopy(6, NULL, 1, y, 1), DESO_ENULL);
    MU_ERR(deso_dcopy(6, x, 1, NULL, 1), DESO_ENULL);
    MU_ERR(deso_dcopy(6, shell, 1, y, 1), DESO_ESTALE);
    MU_ERR(deso_dcopy(6, x, 1, ox, 1), DESO_ECONTEXT);
    MU_ERR(deso_dcopy(6, sv, 1, y, 1), DESO_EINVAL);
    MU_ERR(deso_dcopy(4, x, 2, y, 1), DESO_ESIZE);
    MU_ERR(deso_dcopy(6, x, 1, z, 1), DESO_ESIZE);
    MU_ERR(deso_dcopy(-1, x, 1, y, 1), DESO_ESIZE);
    MU_ERR(deso_dcopy(big, x, 1, y, 1), DESO_ESIZE);
    MU_ERR(deso_dcopy(6, x, 0, y, 1), DESO_EINVAL);
    MU_ERR(deso_dcopy(6, x, 1, y, big), DESO_ESIZE);
    MU_ERR(deso_dcopy(2, x, 1, y, INT64_MIN), DESO_ESIZE);
    MU_ERR(deso_dcopy(6, x, -1, y, 0), DESO_EINVAL);
    MU_ERR(deso_dswap(6, x, 1, NULL, 1), DESO_ENULL);
    MU_ERR(deso_dswap(6, shell, 1, y, 1), DESO_ESTALE);
    MU_ERR(deso_dswap(6, ox, 1, y, 1), DESO_ECONTEXT);
    MU_ERR(deso_dswap(6, x, 1, z, 1), DESO_ESIZE);
    MU_ERR(deso_dswap(6, x, -2, y, 1), DESO_ESIZE);
    MU_ERR(deso_dscal(6, 2.0, NULL, 1), DESO_ENULL);
    MU_ERR(deso_dscal(6, ns, x, 1), DESO_ENULL);
    MU_ERR(deso_dscal(6, stales, x, 1), DESO_ESTALE);
    MU_ERR(deso_dscal(6, os, x, 1), DESO_ECONTEXT);
    MU_ERR(deso_dscal(-1, 2.0, x, 1), DESO_ESIZE);
    MU_ERR(deso_dscal(7, 2.0, x, 1), DESO_ESIZE);
    MU_ERR(deso_dscal(6, 2.0, x, 2), DESO_ESIZE);
    MU_ERR(deso_dscal(6, 2.0, x, 0), DESO_EINVAL);
    MU_ERR(deso_daxpy(6, 2.0, NULL, 1, y, 1), DESO_ENULL);
    MU_ERR(deso_daxpy(6, ns, x, 1, y, 1), DESO_ENULL);
    MU_ERR(deso_daxpy(6, 2.0, x, 1, shell, 1), DESO_ESTALE);
    MU_ERR(deso_daxpy(6, os, x, 1, y, 1), DESO_ECONTEXT);
    MU_ERR(deso_daxpy(6, 2.0, x, 1, z, 1), DESO_ESIZE);
    MU_ERR(deso_daxpy(INT64_MIN, 2.0, x, 1, y, 1), DESO_ESIZE);
    MU_ERR(deso_daxpby(6, 2.0, x, 1, ns, y, 1), DESO_ENULL);
    MU_ERR(deso_daxpby(6, 2.0, x, 1, stales, y, 1), DESO_ESTALE);
    MU_ERR(deso_daxpby(6, s, x, 1, os, y, 1), DESO_ECONTEXT);
    MU_ERR(deso_daxpby(6, 2.0, x, 1, 3.0, z, 1), DESO_ESIZE);
    MU_ERR(deso_daxpby(6, 2.0, x, 1, 3.0, y, 0), DESO_EINVAL);
    /* reductions                                                            */
    MU_ERR(deso_ddot(6, x, 1, y, 1, NULL), DESO_ENULL);
    MU_ERR(deso_ddot(6, x, 1, NULL, 1, s), DESO_ENULL);
    MU_ERR(deso_ddot(6, x, 1, y, 1, stales), DESO_ESTALE);
    MU_ERR(deso_ddot(6, x, 1, y, 1, os), DESO_ECONTEXT);
    MU_ERR(deso_ddot(6, x, 1, ox, 1, s), DESO_ECONTEXT);
    MU_ERR(deso_ddot(6, x, 1, z, 1, s), DESO_ESIZE);
    MU_ERR(deso_ddot(6, x, 1, y, 1, (deso_scalar *)(void *)x), DESO_EINVAL);
    static deso_err (*const red[])(int64_t, const deso_vec *, int64_t,
                                   deso_scalar *) = {deso_dnrm2, deso_dasum,
                                                     deso_idamax};
    for (int k = 0; k < 3; k++) {
        MU_ERR(red[k](6, NULL, 1, s), DESO_ENULL);
        MU_ERR(red[k](6, x, 1, NULL), DESO_ENULL);
        MU_ERR(red[k](6, shell, 1, s), DESO_ESTALE);
        MU_ERR(red[k](6, x, 1, stales), DESO_ESTALE);
        MU_ERR(red[k](6, ox, 1, s), DESO_ECONTEXT);
        MU_ERR(red[k](6, x, 1, os), DESO_ECONTEXT);
        MU_ERR(red[k](4, x, 2, s), DESO_ESIZE);
        MU_ERR(red[k](-1, x, 1, s), DESO_ESIZE);
        MU_ERR(red[k](big, x, 1, s), DESO_ESIZE);
        MU_ERR(red[k](6, x, 3, s), DESO_ESIZE);
        MU_ERR(red[k](6, x, 0, s), DESO_EINVAL);
    }

    /* level 2                                                               */
    const deso_order C = DESO_COL_MAJOR;
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, 1.0, NULL, 5, x, 1, 0.0, z, 1),
           DESO_ENULL);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, 1.0, A, 5, NULL, 1, 0.0, z, 1),
           DESO_ENULL);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, 1.0, A, 5, x, 1, 0.0, NULL, 1),
           DESO_ENULL);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 6, 6, 1.0, staleA, 6, x, 1, 0.0, y,
                      1),
           DESO_ESTALE);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 6, 6, 1.0, oA, 6, x, 1, 0.0, y, 1),
           DESO_ECONTEXT);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, os, A, 5, x, 1, 0.0, z, 1),
           DESO_ECONTEXT);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, 1.0, A, 5, x, 1, ns, z, 1),
           DESO_ENULL);
    /* m and n disagreeing with A, x or y                                     */
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 6, 5, 1.0, A, 6, x, 1, 0.0, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, 1.0, A, 5, z, 1, 0.0, x, 1),
           DESO_ESIZE);
    MU_ERR(deso_dgemv(C, DESO_TRANS, 5, 6, 1.0, A, 5, x, 1, 0.0, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, -5, 6, 1.0, A, 5, x, 1, 0.0, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, big, 1.0, A, 5, x, 1, 0.0, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, 1.0, A, 0, x, 1, 0.0, z, 1),
           DESO_EINVAL);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, 1.0, A, -big, x, 1, 0.0, z, 1),
           DESO_EINVAL);
    MU_ERR(deso_dgemv((deso_order)0, DESO_NO_TRANS, 5, 6, 1.0, A, 5, x, 1,
                      0.0, z, 1),
           DESO_EINVAL);
    MU_ERR(deso_dgemv(C, (deso_trans)114, 5, 6, 1.0, A, 5, x, 1, 0.0, z, 1),
           DESO_EINVAL);
    MU_ERR(deso_dgemv(C, DESO_NO_TRANS, 5, 6, 1.0, A, 5, x, 2, 0.0, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dger(C, 5, 6, 1.0, z, 1, x, 1, NULL, 5), DESO_ENULL);
    MU_ERR(deso_dger(C, 5, 6, 1.0, NULL, 1, x, 1, A, 5), DESO_ENULL);
    MU_ERR(deso_dger(C, 5, 6, 1.0, z, 1, x, 1, staleA, 5), DESO_ESTALE);
    MU_ERR(deso_dger(C, 6, 6, 1.0, x, 1, y, 1, oA, 6), DESO_ECONTEXT);
    MU_ERR(deso_dger(C, 6, 5, 1.0, x, 1, z, 1, A, 6), DESO_ESIZE);
    MU_ERR(deso_dger(C, 5, 6, 1.0, x, 2, y, 1, A, 5), DESO_ESIZE);
    MU_ERR(deso_dger(C, -1, 6, 1.0, z, 1, x, 1, A, 5), DESO_ESIZE);
    MU_ERR(deso_dger(C, 5, 6, 1.0, z, 1, x, 1, A, 0), DESO_EINVAL);
    MU_ERR(deso_dger((deso_order)103, 5, 6, 1.0, z, 1, x, 1, A, 5),
           DESO_EINVAL);
    MU_ERR(deso_dger(C, 5, 6, stales, z, 1, x, 1, A, 5), DESO_ESTALE);
    MU_ERR(deso_dsymv(C, DESO_UPPER, 6, 1.0, NULL, 6, x, 1, 0.0, y, 1),
           DESO_ENULL);
    MU_ERR(deso_dsymv(C, DESO_UPPER, 6, 1.0, S, 6, x, 1, 0.0, NULL, 1),
           DESO_ENULL);
    MU_ERR(deso_dsymv(C, DESO_UPPER, 6, 1.0, oA, 6, x, 1, 0.0, y, 1),
           DESO_ECONTEXT);
    MU_ERR(deso_dsymv(C, DESO_UPPER, 6, 1.0, S, 6, x, 1, 0.0, ox, 1),
           DESO_ECONTEXT);
    MU_ERR(deso_dsymv(C, DESO_UPPER, 5, 1.0, A, 5, z, 1, 0.0, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dsymv(C, DESO_UPPER, 6, 1.0, S, 6, x, 1, 0.0, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dsymv(C, DESO_UPPER, -6, 1.0, S, 6, x, 1, 0.0, y, 1),
           DESO_ESIZE);
    MU_ERR(deso_dsymv(C, (deso_uplo)0, 6, 1.0, S, 6, x, 1, 0.0, y, 1),
           DESO_EINVAL);
    MU_ERR(deso_dsymv(C, DESO_LOWER, 6, 1.0, S, 0, x, 1, 0.0, y, 1),
           DESO_EINVAL);
    MU_ERR(deso_dsymv(C, DESO_LOWER, 6, 1.0, S, 6, x, 1, stales, y, 1),
           DESO_ESTALE);
    MU_ERR(deso_dsymv(C, DESO_LOWER, 6, 1.0, S, 6, x, 1, 0.0, y, 0),
           DESO_EINVAL);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_NO_TRANS, DESO_UNIT, 6, NULL, 6, x,
                      1),
           DESO_ENULL);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_NO_TRANS, DESO_UNIT, 6, S, 6, NULL,
                      1),
           DESO_ENULL);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_NO_TRANS, DESO_UNIT, 6, S, 6, shell,
                      1),
           DESO_ESTALE);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_NO_TRANS, DESO_UNIT, 6, S, 6, ox,
                      1),
           DESO_ECONTEXT);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_NO_TRANS, DESO_UNIT, 5, A, 5, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_NO_TRANS, DESO_UNIT, 6, S, 6, z, 1),
           DESO_ESIZE);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_NO_TRANS, DESO_UNIT, big, S, 6, x,
                      1),
           DESO_ESIZE);
    MU_ERR(deso_dtrsv(C, (deso_uplo)7, DESO_NO_TRANS, DESO_UNIT, 6, S, 6, x,
                      1),
           DESO_EINVAL);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, (deso_trans)0, DESO_UNIT, 6, S, 6, x, 1),
           DESO_EINVAL);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_TRANS, (deso_diag)0, 6, S, 6, x, 1),
           DESO_EINVAL);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_TRANS, DESO_UNIT, 6, S, -1, x, 1),
           DESO_EINVAL);
    MU_ERR(deso_dtrsv(C, DESO_UPPER, DESO_TRANS, DESO_UNIT, 6, S, 6, x, 5),
           DESO_ESIZE);

    /* scalar arithmetic                                                     */
    MU_ERR(deso_sadd(NULL, 1.0, 2.0), DESO_ENULL);
    MU_ERR(deso_sadd(s, ns, 2.0), DESO_ENULL);
    MU_ERR(deso_ssub(s, 1.0, ns), DESO_ENULL);
    MU_ERR(deso_smul(stales, 1.0, 2.0), DESO_ESTALE);
    MU_ERR(deso_sdiv(s, stales, 2.0), DESO_ESTALE);
    MU_ERR(deso_sdiv(s, 1.0, os), DESO_ECONTEXT);
    MU_ERR(deso_sadd(os, s, 1.0), DESO_ECONTEXT);
    MU_ERR(deso_ssqrt(NULL, s), DESO_ENULL);
    MU_ERR(deso_ssqrt(s, os), DESO_ECONTEXT);
    MU_ERR(deso_sneg(s, stales), DESO_ESTALE);
    MU_ERR(deso_sneg((deso_scalar *)(void *)x, 1.0), DESO_EINVAL);
    MU_ERR(deso_sset(NULL, 1.0), DESO_ENULL);
    MU_ERR(deso_sset(s, ns), DESO_ENULL);
    MU_ERR(deso_sset(s, os), DESO_ECONTEXT);
    MU_ERR(deso_sset(s, stales), DESO_ESTALE);

    /* reading                                                               */
    double v, buf[36];
    MU_ERR(deso_scalar_get(NULL, &v), DESO_ENULL);
    MU_ERR(deso_scalar_get(stales, &v), DESO_ESTALE);
    MU_ERR(deso_scalar_get(s, NULL), DESO_ENULL);
    MU_ERR(deso_vec_get(NULL, 0, &v), DESO_ENULL);
    MU_ERR(deso_vec_get(shell, 0, &v), DESO_ESTALE);
    MU_ERR(deso_vec_get(x, 0, NULL), DESO_ENULL);
    MU_ERR(deso_vec_get(x, -1, &v), DESO_EINVAL);
    MU_ERR(deso_vec_get(x, 6, &v), DESO_EINVAL);
    MU_ERR(deso_vec_get(x, big, &v), DESO_EINVAL);
    MU_ERR(deso_vec_gather(NULL, buf, 0), DESO_ENULL);
    MU_ERR(deso_vec_gather(shell, buf, 0), DESO_ESTALE);
    MU_ERR(deso_vec_gather(x, NULL, DESO_ALL_RANKS), DESO_ENULL);
    MU_ERR(deso_vec_gather(x, buf, np), DESO_EINVAL);
    MU_ERR(deso_vec_gather(x, buf, -2), DESO_EINVAL);
    MU_ERR(deso_mat_gather(NULL, buf, 6, 0), DESO_ENULL);
    MU_ERR(deso_mat_gather(staleA, buf, 6, 0), DESO_ESTALE);
    MU_ERR(deso_mat_gather(S, NULL, 6, DESO_ALL_RANKS), DESO_ENULL);
    MU_ERR(deso_mat_gather(S, buf, 5, DESO_ALL_RANKS), DESO_EINVAL);
    MU_ERR(deso_mat_gather(S, buf, 0, 0), DESO_EINVAL);
    MU_ERR(deso_mat_gather(S, buf, 6, np), DESO_EINVAL);

    MU_SYNC();
    /* bad arguments on one rank only: no rank is left in a collective      */
    int last = np - 1;
    MU_ERR(deso_vec_gather(x, me == last ? NULL : buf, last), DESO_ENULL);
    MU_ERR(deso_vec_get(x, 0, me == last ? NULL : &v), DESO_ENULL);
    MU_ERR(deso_mat_gather(S, me == last ? NULL : buf, 6, last), DESO_ENULL);
    MU_ERR(deso_mat_gather(S, buf, me == last ? 2 : 6, last), DESO_EINVAL);
    MU_ERR_RANK(deso_scalar_get(s, me == last ? NULL : &v),
                me == last ? DESO_ENULL : DESO_OK);
    /* a rank's non-root buffer is never read                                */
    TU_OK(deso_vec_gather(x, me == 0 ? buf : NULL, 0));
    TU_OK(deso_mat_gather(S, me == 0 ? buf : NULL, me == 0 ? 6 : 0, 0));

    /* none of the above recorded anything, and x, y, s still compute      */
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.pending == 0));
    TU_OK(deso_finalize(&other));
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_vec_destroy(&z));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_mat_destroy(&S));
    TU_OK(deso_scalar_destroy(&s));
    MU_SYNC();
    check_usable(ctx);
    TU_OK(deso_finalize(&ctx));
}

static void test_handles(void **state)
{
    (void)state;
    for (int m = 0; m < TU_NMODES; m++) handles_in(tu_mode(m));
}

/* ---- deso_redist.h ------------------------------------------------------ */

static void test_remap(void **state)
{
    (void)state;
    tu_label("no context");
    deso_layout a = {12, 1, 2, 1, 1, np, NULL, 0};
    deso_layout b = {12, 1, 3, 1, np, 1, NULL, 0};
    deso_redist *r = NULL;
    const deso_schedule G = DESO_SCHED_GREEDY;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, NULL, &b, G, &r), DESO_ENULL);
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &a, NULL, G, &r), DESO_ENULL);
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &a, &b, G, NULL), DESO_ENULL);
    MU_ERR(deso_redist_create(MPI_COMM_NULL, &a, &b, G, &r), DESO_EINVAL);
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &a, &b, (deso_schedule)9, &r),
           DESO_EINVAL);
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &a, &b, (deso_schedule)-1, &r),
           DESO_EINVAL);
    deso_layout c = a;
    c.mb = 0;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r), DESO_EINVAL);
    c = a;
    c.nb = -1;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r), DESO_EINVAL);
    c = a;
    c.pr = 0;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r), DESO_EINVAL);
    c = a;
    c.pr = np + 1;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r), DESO_EINVAL);
    c = a;
    c.pr = 1 << 30;
    c.pc = 1 << 30;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r), DESO_EINVAL);
    /* b's grid is np x 1: a rank list of np entries, wrong in one: a rank
     * out of range, a rank twice                                           */
    int bad_ranks[64], rep_ranks[64];
    assert_true(np <= 64);
    for (int k = 0; k < np; k++) {
        bad_ranks[k] = k;
        rep_ranks[k] = k;
    }
    bad_ranks[0] = np;
    c = b;
    c.ranks = bad_ranks;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &a, &c, G, &r), DESO_EINVAL);
    if (np > 1) {
        rep_ranks[1] = 0;
        c.ranks = rep_ranks;
        MU_ERR(deso_redist_create(MPI_COMM_WORLD, &a, &c, G, &r),
               DESO_EINVAL);
    }
    c = a;
    c.m = -1;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r), DESO_ESIZE);
    c = a;
    c.m = 13;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r), DESO_ESIZE);
    /* arguments that differ between ranks                                   */
    if (np > 1) {
        c = a;
        c.mb = me == 0 ? 2 : 4;
        MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r),
               DESO_EMISMATCH);
    }
    /* a layout bad on one rank only: every rank fails with its code        */
    c = a;
    if (me == np - 1) c.mb = 0;
    MU_ERR(deso_redist_create(MPI_COMM_WORLD, &c, &b, G, &r), DESO_EINVAL);
    assert_null(r);
    MU_SYNC();

    /* execute                                                               */
    MU_ERR(deso_redist_execute(NULL, NULL, 1, NULL, 1), DESO_ENULL);
    TU_OK(deso_redist_create(MPI_COMM_WORLD, &a, &b, G, &r));
    int64_t sr, sc, dr, dc;
    MU_ERR(deso_redist_local_shape(NULL, &sr, &sc, &dr, &dc), DESO_ENULL);
    TU_OK(deso_redist_local_shape(r, NULL, NULL, NULL, NULL));
    TU_OK(deso_redist_local_shape(r, &sr, &sc, &dr, &dc));
    double src[16], dst[16];
    for (int k = 0; k < 16; k++) src[k] = -1.0;
    /* which ranks hold data, decided collectively before any expectation */
    int holds_s = sr * sc > 0, holds_d = dr * dc > 0;
    int any_s = !tu_all(!holds_s), any_d = !tu_all(!holds_d);
    int short_s = holds_s && sr > 1, none_short = tu_all(!short_s);
    int64_t sl = sr > 0 ? sr : 1, dl = dr > 0 ? dr : 1;
    /* an error on the ranks holding data is every rank's (P = 1: the one
     * rank holds it all)                                                  */
    if (any_s) {
        MU_ERR(deso_redist_execute(r, NULL, sl, dst, dl), DESO_ENULL);
        MU_ERR(deso_redist_execute(r, src, sr - 1, dst, dl),
               none_short ? DESO_OK : DESO_EINVAL);
    }
    if (any_d) {
        MU_ERR(deso_redist_execute(r, src, sl, NULL, dl), DESO_ENULL);
        MU_ERR(deso_redist_execute(r, src, sl, dst, holds_d ? -5 : 1),
               DESO_EINVAL);
    }
    /* still works: a is 12 x 1 on a 1 x np grid (all on grid column 0), b
     * cyclic(3) over np grid rows                                          */
    for (int64_t l = 0; l < sr; l++) src[l] = (double)l;
    TU_OK(deso_redist_execute(r, src, sl, dst, dl));
    int good = 1;
    for (int64_t l = 0; l < dr; l++)
        good &= dst[l] == (double)((l / 3) * 3 * np + me * 3 + l % 3);
    assert_true(tu_all(good));
    deso_redist_destroy(&r);
    assert_null(r);
    deso_redist_destroy(NULL);
    deso_redist_destroy(&r);

    /* ScaLAPACK descriptors, schedules, slice plans                          */
    deso_layout l;
    int desc[9] = {1, -1, 4, 4, 2, 2, 0, 0, 4};
    MU_ERR(deso_layout_from_scalapack(NULL, &l), DESO_ENULL);
    MU_ERR(deso_layout_from_scalapack(desc, NULL), DESO_ENULL);
    MU_ERR(deso_layout_from_scalapack(desc, &l), DESO_EGRID);
    deso_layout_release(NULL);
    deso_schedule sch;
    MU_ERR(deso_schedule_parse(NULL, &sch), DESO_ENULL);
    MU_ERR(deso_schedule_parse("greedy", NULL), DESO_ENULL);
    MU_ERR(deso_schedule_parse("bogus", &sch), DESO_EINVAL);
    MU_ERR(deso_schedule_parse("", &sch), DESO_EINVAL);
    deso_slice_plan sp;
    MU_ERR(deso_redist_slice_plan(2, 1, 3, 1, G, NULL), DESO_ENULL);
    MU_ERR(deso_redist_slice_plan(0, 1, 3, 1, G, &sp), DESO_EINVAL);
    MU_ERR(deso_redist_slice_plan(2, 1, -3, 1, G, &sp), DESO_EINVAL);
    MU_ERR(deso_redist_slice_plan(2, 0, 3, 1, G, &sp), DESO_EINVAL);
    MU_ERR(deso_redist_slice_plan(2, 1, 3, -1, G, &sp), DESO_EINVAL);
    MU_ERR(deso_redist_slice_plan(2, 1, 3, 1, (deso_schedule)5, &sp),
           DESO_EINVAL);
    MU_ERR(deso_redist_slice_plan(1 << 20, 1, 1 << 20, 1, G, &sp),
           DESO_EINVAL);
    MU_ERR(deso_redist_slice_plan(3, INT64_MAX / 2, 5, INT64_MAX / 3, G, &sp),
           DESO_EOVERFLOW);
    deso_slice_plan_free(NULL);
    TU_OK(deso_redist_slice_plan(2, 1, 3, 1, G, &sp));
    deso_slice_plan_free(&sp);
    MU_SYNC();
}

/* deso_mat_from_scalapack and friends: the argument checks that need no
 * BLACS grid.                                                              */
static void test_scalapack_args(void **state)
{
    (void)state;
    deso_ctx *ctx = mu_ctx(DESO_MODE_AFFINE);
    int desc[9] = {1, 0, 4, 4, 2, 2, 0, 0, 4};
    double local[16] = {0};
    deso_mat *A = NULL;
    deso_vec *x = NULL;
    int ctxt;
    MU_ERR(deso_blacs_context(NULL, &ctxt), DESO_ENULL);
    MU_ERR(deso_blacs_context(ctx, NULL), DESO_ENULL);
    MU_ERR(deso_mat_from_scalapack(NULL, local, desc, DESO_COPY, &A),
           DESO_ENULL);
    MU_ERR(deso_mat_from_scalapack(ctx, local, NULL, DESO_COPY, &A),
           DESO_ENULL);
    MU_ERR(deso_mat_from_scalapack(ctx, local, desc, DESO_COPY, NULL),
           DESO_ENULL);
    MU_ERR(deso_vec_from_scalapack(NULL, local, desc, DESO_COPY, &x),
           DESO_ENULL);
    MU_ERR(deso_vec_from_scalapack(ctx, local, NULL, DESO_COPY, &x),
           DESO_ENULL);
    int d9[9];
    double *lp;
    MU_ERR(deso_mat_to_scalapack(NULL, -1, 0, 0, DESO_COPY, d9, &lp),
           DESO_ENULL);
    MU_ERR(deso_vec_to_scalapack(NULL, -1, 0, DESO_COPY, d9, &lp),
           DESO_ENULL);
    assert_null(A);
    assert_null(x);
    MU_SYNC();
    check_usable(ctx);
    TU_OK(deso_finalize(&ctx));
}

/* Every communicator a context creates returns MPI errors (never aborts),
 * and an MPI error code becomes DESO_EMPI with MPI's message.             */
static void test_mpi_errors(void **state)
{
    (void)state;
    deso_ctx *ctx = mu_ctx(DESO_MODE_FULL);
    MPI_Comm comms[3] = {ctx->comm, ctx->dimcomm[0], ctx->dimcomm[1]};
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        MPI_Errhandler eh;
        ok &= MPI_Comm_get_errhandler(comms[k], &eh) == MPI_SUCCESS;
        ok &= eh == MPI_ERRORS_RETURN;
        MPI_Errhandler_free(&eh);
    }
    assert_true(tu_all(ok));
    /* a real failing call on the context's communicator: a bad root        */
    double b = 0.0;
    int rc = MPI_Bcast(&b, 1, MPI_DOUBLE, np + 5, ctx->comm);
    assert_true(tu_all(rc != MPI_SUCCESS));
    MU_ERR(deso__mpi(rc, "MPI_Bcast"), DESO_EMPI);
    assert_true(tu_all(strstr(deso_last_error(), "MPI_Bcast") != NULL));
    MU_ERR(deso__mpi(MPI_ERR_COMM, "MPI_Allreduce"), DESO_EMPI);
    assert_true(tu_all(deso__mpi(MPI_SUCCESS, "x") == DESO_OK));
    MU_SYNC();
    check_usable(ctx);
    TU_OK(deso_finalize(&ctx));
}

/* ---- rotations, dtrmv, dsyr, dsyr2, element-wise, smax / smin ------------ */

/* The level 1 extensions and rotations: NULL, stale, other context, wrong
 * kind, sizes, increments, bad flags.                                     */
static void more_level1(deso_vec *x, deso_vec *y, deso_vec *z,
                        deso_vec *shell, deso_vec *ox, deso_scalar *s,
                        deso_scalar *stales, deso_scalar *os)
{
    const deso_scalar *ns = NULL;
    const deso_vec *sv = (const deso_vec *)(const void *)s;   /* wrong kind */
    double P[5] = {-1.0, 1.0, 0.0, 0.0, 1.0}, bad[5] = {0.5, 1, 0, 0, 1};
    MU_ERR(deso_drot(6, NULL, 1, y, 1, 0.6, 0.8), DESO_ENULL);
    MU_ERR(deso_drot(6, x, 1, NULL, 1, 0.6, 0.8), DESO_ENULL);
    MU_ERR(deso_drot(6, x, 1, y, 1, ns, 0.8), DESO_ENULL);
    MU_ERR(deso_drot(6, x, 1, y, 1, 0.6, ns), DESO_ENULL);
    MU_ERR(deso_drot(6, shell, 1, y, 1, 0.6, 0.8), DESO_ESTALE);
    MU_ERR(deso_drot(6, x, 1, y, 1, stales, 0.8), DESO_ESTALE);
    MU_ERR(deso_drot(6, x, 1, ox, 1, 0.6, 0.8), DESO_ECONTEXT);
    MU_ERR(deso_drot(6, x, 1, y, 1, 0.6, os), DESO_ECONTEXT);
    MU_ERR(deso_drot(6, x, 1, z, 1, 0.6, 0.8), DESO_ESIZE);
    MU_ERR(deso_drot(-1, x, 1, y, 1, 0.6, 0.8), DESO_ESIZE);
    MU_ERR(deso_drot(INT64_MAX, x, 1, y, 1, 0.6, 0.8), DESO_ESIZE);
    MU_ERR(deso_drot(6, x, 2, y, 1, 0.6, 0.8), DESO_ESIZE);
    MU_ERR(deso_drot(6, x, 1, y, 1, (deso_scalar *)(void *)x, 0.8),
           DESO_EINVAL);
    MU_ERR(deso_drot(6, x, 1, x, 1, 0.6, 0.8), DESO_EINVAL);
    MU_ERR(deso_drotm(6, x, 1, y, 1, NULL), DESO_ENULL);
    MU_ERR(deso_drotm(6, x, 1, y, 1, bad), DESO_EINVAL);
    bad[0] = NAN;
    MU_ERR(deso_drotm(6, x, 1, y, 1, bad), DESO_EINVAL);
    MU_ERR(deso_drotm(6, NULL, 1, y, 1, P), DESO_ENULL);
    MU_ERR(deso_drotm(6, shell, 1, y, 1, P), DESO_ESTALE);
    MU_ERR(deso_drotm(6, ox, 1, y, 1, P), DESO_ECONTEXT);
    MU_ERR(deso_drotm(4, x, 2, y, 1, P), DESO_ESIZE);
    MU_ERR(deso_drotm(6, x, 1, y, -2, P), DESO_ESIZE);
    MU_ERR(deso_drotm(6, y, 1, y, 1, P), DESO_EINVAL);
    double a = 1.0, b = 2.0, c, sn, d1 = 1.0, d2 = 1.0, b1 = 1.0;
    MU_ERR(deso_drotg(NULL, &b, &c, &sn), DESO_ENULL);
    MU_ERR(deso_drotg(&a, NULL, &c, &sn), DESO_ENULL);
    MU_ERR(deso_drotg(&a, &b, NULL, &sn), DESO_ENULL);
    MU_ERR(deso_drotg(&a, &b, &c, NULL), DESO_ENULL);
    MU_ERR(deso_drotmg(NULL, &d2, &b1, 1.0, P), DESO_ENULL);
    MU_ERR(deso_drotmg(&d1, NULL, &b1, 1.0, P), DESO_ENULL);
    MU_ERR(deso_drotmg(&d1, &d2, NULL, 1.0, P), DESO_ENULL);
    MU_ERR(deso_drotmg(&d1, &d2, &b1, 1.0, NULL), DESO_ENULL);
    static deso_err (*const el[])(int64_t, const deso_vec *, int64_t,
                                  deso_vec *, int64_t) = {
        deso_dvdiv, deso_dvrecip, deso_dvabs};
    for (int k = 0; k < 3; k++) {
        MU_ERR(el[k](6, NULL, 1, y, 1), DESO_ENULL);
        MU_ERR(el[k](6, x, 1, NULL, 1), DESO_ENULL);
        MU_ERR(el[k](6, shell, 1, y, 1), DESO_ESTALE);
        MU_ERR(el[k](6, x, 1, ox, 1), DESO_ECONTEXT);
        MU_ERR(el[k](6, sv, 1, y, 1), DESO_EINVAL);
        MU_ERR(el[k](6, x, 1, z, 1), DESO_ESIZE);
        MU_ERR(el[k](-1, x, 1, y, 1), DESO_ESIZE);
        MU_ERR(el[k](6, x, 0, y, 1), DESO_EINVAL);
        MU_ERR(el[k](6, x, 1, y, 3), DESO_ESIZE);
    }
}

/* dtrmv, dsyr, dsyr2.                                                     */
static void more_level2(deso_vec *x, deso_vec *y, deso_vec *z,
                        deso_vec *shell, deso_vec *ox, deso_mat *A,
                        deso_mat *S, deso_mat *staleA, deso_mat *oA,
                        deso_scalar *stales, deso_scalar *os)
{
    const deso_order C = DESO_COL_MAJOR, R = DESO_ROW_MAJOR;
    const deso_uplo U = DESO_UPPER;
    const deso_trans N = DESO_NO_TRANS;
    const deso_diag D = DESO_NON_UNIT;
    const deso_scalar *ns = NULL;
    MU_ERR(deso_dtrmv(C, U, N, D, 6, NULL, 6, x, 1), DESO_ENULL);
    MU_ERR(deso_dtrmv(C, U, N, D, 6, S, 6, NULL, 1), DESO_ENULL);
    MU_ERR(deso_dtrmv(C, U, N, D, 6, staleA, 6, x, 1), DESO_ESTALE);
    MU_ERR(deso_dtrmv(C, U, N, D, 6, S, 6, shell, 1), DESO_ESTALE);
    MU_ERR(deso_dtrmv(C, U, N, D, 6, oA, 6, x, 1), DESO_ECONTEXT);
    MU_ERR(deso_dtrmv(C, U, N, D, 6, S, 6, ox, 1), DESO_ECONTEXT);
    MU_ERR(deso_dtrmv(C, U, N, D, 5, A, 5, z, 1), DESO_ESIZE);
    MU_ERR(deso_dtrmv(R, U, N, D, 6, A, 6, x, 1), DESO_ESIZE);
    MU_ERR(deso_dtrmv(C, U, N, D, 6, S, 6, z, 1), DESO_ESIZE);
    MU_ERR(deso_dtrmv(C, U, N, D, -1, S, 6, x, 1), DESO_ESIZE);
    MU_ERR(deso_dtrmv((deso_order)0, U, N, D, 6, S, 6, x, 1), DESO_EINVAL);
    MU_ERR(deso_dtrmv(C, (deso_uplo)0, N, D, 6, S, 6, x, 1), DESO_EINVAL);
    MU_ERR(deso_dtrmv(C, U, (deso_trans)0, D, 6, S, 6, x, 1), DESO_EINVAL);
    MU_ERR(deso_dtrmv(C, U, N, (deso_diag)0, 6, S, 6, x, 1), DESO_EINVAL);
    MU_ERR(deso_dtrmv(C, U, N, D, 6, S, 0, x, 1), DESO_EINVAL);
    MU_ERR(deso_dtrmv(C, U, N, D, 6, S, 6, x, 2), DESO_ESIZE);
    MU_ERR(deso_dsyr(C, U, 6, 1.0, NULL, 1, S, 6), DESO_ENULL);
    MU_ERR(deso_dsyr(C, U, 6, 1.0, x, 1, NULL, 6), DESO_ENULL);
    MU_ERR(deso_dsyr(C, U, 6, ns, x, 1, S, 6), DESO_ENULL);
    MU_ERR(deso_dsyr(C, U, 6, stales, x, 1, S, 6), DESO_ESTALE);
    MU_ERR(deso_dsyr(C, U, 6, 1.0, x, 1, staleA, 6), DESO_ESTALE);
    MU_ERR(deso_dsyr(C, U, 6, 1.0, x, 1, oA, 6), DESO_ECONTEXT);
    MU_ERR(deso_dsyr(C, U, 6, os, x, 1, S, 6), DESO_ECONTEXT);
    MU_ERR(deso_dsyr(C, U, 5, 1.0, z, 1, A, 5), DESO_ESIZE);
    MU_ERR(deso_dsyr(C, U, 6, 1.0, z, 1, S, 6), DESO_ESIZE);
    MU_ERR(deso_dsyr(C, U, -6, 1.0, x, 1, S, 6), DESO_ESIZE);
    MU_ERR(deso_dsyr(C, (deso_uplo)1, 6, 1.0, x, 1, S, 6), DESO_EINVAL);
    MU_ERR(deso_dsyr((deso_order)1, U, 6, 1.0, x, 1, S, 6), DESO_EINVAL);
    MU_ERR(deso_dsyr(C, U, 6, 1.0, x, 1, S, -6), DESO_EINVAL);
    MU_ERR(deso_dsyr(C, U, 6, 1.0, x, 2, S, 6), DESO_ESIZE);
    MU_ERR(deso_dsyr2(C, U, 6, 1.0, x, 1, NULL, 1, S, 6), DESO_ENULL);
    MU_ERR(deso_dsyr2(C, U, 6, 1.0, NULL, 1, y, 1, S, 6), DESO_ENULL);
    MU_ERR(deso_dsyr2(C, U, 6, 1.0, x, 1, y, 1, NULL, 6), DESO_ENULL);
    MU_ERR(deso_dsyr2(C, U, 6, 1.0, x, 1, shell, 1, S, 6), DESO_ESTALE);
    MU_ERR(deso_dsyr2(C, U, 6, 1.0, x, 1, ox, 1, S, 6), DESO_ECONTEXT);
    MU_ERR(deso_dsyr2(C, U, 6, os, x, 1, y, 1, S, 6), DESO_ECONTEXT);
    MU_ERR(deso_dsyr2(C, U, 6, 1.0, x, 1, z, 1, S, 6), DESO_ESIZE);
    MU_ERR(deso_dsyr2(C, U, 5, 1.0, z, 1, z, 1, A, 5), DESO_ESIZE);
    MU_ERR(deso_dsyr2(C, (deso_uplo)0, 6, 1.0, x, 1, y, 1, S, 6),
           DESO_EINVAL);
    MU_ERR(deso_dsyr2(C, U, 6, 1.0, x, 1, y, 1, S, 0), DESO_EINVAL);
    MU_ERR(deso_dsyr2(C, U, 6, 1.0, x, 1, y, 7, S, 6), DESO_ESIZE);
}

/* smax and smin.                                                          */
static void more_scalar(deso_scalar *s, deso_scalar *stales, deso_scalar *os,
                        deso_vec *x)
{
    const deso_scalar *ns = NULL;
    MU_ERR(deso_smax(NULL, 1.0, 2.0), DESO_ENULL);
    MU_ERR(deso_smin(NULL, 1.0, 2.0), DESO_ENULL);
    MU_ERR(deso_smax(s, ns, 2.0), DESO_ENULL);
    MU_ERR(deso_smin(s, 1.0, ns), DESO_ENULL);
    MU_ERR(deso_smax(stales, 1.0, 2.0), DESO_ESTALE);
    MU_ERR(deso_smin(s, stales, 2.0), DESO_ESTALE);
    MU_ERR(deso_smax(s, 1.0, os), DESO_ECONTEXT);
    MU_ERR(deso_smin(os, s, 1.0), DESO_ECONTEXT);
    MU_ERR(deso_smax((deso_scalar *)(void *)x, 1.0, 2.0), DESO_EINVAL);
}

static void test_more_routines(void **state)
{
    (void)state;
    deso_ctx *ctx = mu_ctx(DESO_MODE_FULL), *other = tu_ctx(0, 0, 3);
    deso_vec *x, *y, *z, *shell, *ox;
    deso_mat *A, *S, *staleA, *oA;
    deso_scalar *s, *stales, *os;
    TU_OK(deso_vec_create(ctx, 6, &x));
    TU_OK(deso_vec_create(ctx, 6, &y));
    TU_OK(deso_vec_create(ctx, 5, &z));
    TU_OK(deso_vec_create(ctx, 6, &shell));
    TU_OK(deso_vec_create(other, 6, &ox));
    TU_OK(deso_mat_create(ctx, 5, 6, &A));
    TU_OK(deso_mat_create(ctx, 6, 6, &S));
    TU_OK(deso_mat_create(ctx, 6, 6, &staleA));
    TU_OK(deso_mat_create(other, 6, 6, &oA));
    TU_OK(deso_scalar_create(ctx, 1.0, &s));
    TU_OK(deso_scalar_create(ctx, 1.0, &stales));
    TU_OK(deso_scalar_create(other, 1.0, &os));
    deso_vec *dv = shell;
    deso_mat *dm = staleA;
    deso_scalar *ds = stales;
    TU_OK(deso_vec_destroy(&dv));
    TU_OK(deso_mat_destroy(&dm));
    TU_OK(deso_scalar_destroy(&ds));
    more_level1(x, y, z, shell, ox, s, stales, os);
    more_level2(x, y, z, shell, ox, A, S, staleA, oA, stales, os);
    more_scalar(s, stales, os, x);
    /* none of the above recorded anything                                 */
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.pending == 0));
    /* drotm with the flag -2 records nothing either                       */
    const double ident[5] = {-2.0, 9.0, 9.0, 9.0, 9.0};
    TU_OK(deso_drotm(6, x, 1, y, 1, ident));
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.pending == 0));
    TU_OK(deso_finalize(&other));
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_vec_destroy(&z));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_mat_destroy(&S));
    TU_OK(deso_scalar_destroy(&s));
    MU_SYNC();
    check_usable(ctx);
    TU_OK(deso_finalize(&ctx));
}

/* The context's live handles.                                            */
static int new_values_live(const deso_ctx *ctx)
{
    int k = 0;
    for (const deso__handle *h = ctx->handles; h != NULL; h = h->next)
        k += h->magic == DESO__MAGIC_LIVE;
    return k;
}

/* Values made for the caller and the error handler's setters.           */
static void test_new_values(void **state)
{
    (void)state;
    deso_ctx *ctx = mu_ctx(DESO_MODE_AFFINE), *other = tu_ctx(0, 0, 3);
    deso_vec *x, *y, *o, *dead, *dup = NULL;
    deso_mat *A;
    deso_scalar *r = NULL;
    TU_OK(deso_vec_create(ctx, 5, &x));
    TU_OK(deso_vec_create(ctx, 5, &y));
    TU_OK(deso_vec_create(ctx, 5, &dead));
    TU_OK(deso_vec_create(other, 5, &o));
    TU_OK(deso_mat_create(ctx, 5, 5, &A));
    deso_vec *stale = dead;
    TU_OK(deso_vec_destroy(&dead));
    int live = new_values_live(ctx);
    MU_ERR(deso_vec_duplicate(NULL, &dup), DESO_ENULL);
    MU_ERR(deso_vec_duplicate(x, NULL), DESO_ENULL);
    MU_ERR(deso_vec_duplicate(stale, &dup), DESO_ESTALE);
    MU_ERR(deso_vec_duplicate((deso_vec *)A, &dup), DESO_EINVAL);
    assert_null(dup);
    MU_ERR(deso_ddot_new(5, x, 1, y, 1, NULL), DESO_ENULL);
    MU_ERR(deso_ddot_new(-1, x, 1, y, 1, &r), DESO_ESIZE);
    MU_ERR(deso_ddot_new(INT64_MAX, x, 1, y, 1, &r), DESO_ESIZE);
    MU_ERR(deso_ddot_new(4, x, 2, y, 1, &r), DESO_ESIZE);
    MU_ERR(deso_ddot_new(5, NULL, 1, y, 1, &r), DESO_ENULL);
    MU_ERR(deso_ddot_new(5, x, 1, NULL, 1, &r), DESO_ENULL);
    MU_ERR(deso_ddot_new(5, x, 1, stale, 1, &r), DESO_ESTALE);
    MU_ERR(deso_ddot_new(5, x, 1, o, 1, &r), DESO_ECONTEXT);
    MU_ERR(deso_ddot_new(5, x, 2, y, 1, &r), DESO_ESIZE);
    MU_ERR(deso_dnrm2_new(5, x, 1, NULL), DESO_ENULL);
    MU_ERR(deso_dnrm2_new(6, x, 1, &r), DESO_ESIZE);
    MU_ERR(deso_dnrm2_new(5, stale, 1, &r), DESO_ESTALE);
    MU_ERR(deso_dasum_new(5, NULL, 1, &r), DESO_ENULL);
    MU_ERR(deso_dasum_new(5, x, 0, &r), DESO_EINVAL);
    MU_ERR(deso_idamax_new(-3, x, 1, &r), DESO_ESIZE);
    MU_ERR(deso_idamax_new(5, (deso_vec *)A, 1, &r), DESO_EINVAL);
    assert_null(r);
    /* a refused call leaves no handle behind                               */
    assert_true(tu_all(new_values_live(ctx) == live));
    /* a refused reduction names the call made                             */
    MU_ERR(deso_dnrm2_new(6, x, 1, &r), DESO_ESIZE);
    assert_true(tu_all(strncmp(deso_last_error(), "deso_dnrm2_new: ", 16) == 0));
    deso_error_handler h;
    void *arg;
    MU_ERR(deso_set_error_handler(NULL, DESO_ERRORS_ABORT, NULL), DESO_ENULL);
    MU_ERR(deso_get_error_handler(NULL, &h, &arg), DESO_ENULL);
    MU_ERR(deso_get_error_handler(ctx, NULL, &arg), DESO_ENULL);
    MU_ERR(deso_get_error_handler(ctx, &h, NULL), DESO_ENULL);
    MU_SYNC();
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_vec_destroy(&o));
    check_usable(ctx);
    TU_OK(deso_finalize(&other));
    TU_OK(deso_finalize(&ctx));
}

/* ---- sparse matrices ------------------------------------------------------ */

static void test_spmat(void **state)
{
    (void)state;
    deso_ctx *ctx = mu_ctx(DESO_MODE_FULL);
    deso_spmat *a = NULL, *dead = NULL;
    deso_vec *x;
    int64_t rp[3] = {0, 1, 2}, cl[2] = {1, 0}, m, n, nnz, buf[8];
    double v[2] = {1.0, 2.0}, vb[8];
    const int64_t big = INT64_MAX;
    TU_OK(deso_vec_create(ctx, 4, &x));
    TU_OK(deso_spmat_from_gen(ctx, "lap2d:2", &dead));
    deso_spmat *stale = dead;
    TU_OK(deso_spmat_destroy(&dead));
    const deso_spmat *xs = (const deso_spmat *)(const void *)x; /* a vector */
    MU_ERR(deso_spmat_from_csr(NULL, 2, 2, rp, cl, v, 0, &a), DESO_ENULL);
    MU_ERR(deso_spmat_from_csr(ctx, 2, 2, rp, cl, v, 0, NULL), DESO_ENULL);
    MU_ERR(deso_spmat_from_csr(ctx, -1, 2, rp, cl, v, 0, &a), DESO_ESIZE);
    MU_ERR(deso_spmat_from_csr(ctx, 2, big, rp, cl, v, 0, &a), DESO_ESIZE);
    MU_ERR(deso_spmat_from_csr(ctx, 2, 2, rp, cl, v, np, &a), DESO_EINVAL);
    MU_ERR(deso_spmat_from_csr(ctx, 2, 2, rp, cl, v, DESO_ALL_RANKS, &a),
           DESO_EINVAL);
    MU_ERR(deso_spmat_from_csr(ctx, 2, 2, NULL, cl, v, 0, &a), DESO_ENULL);
    MU_ERR(deso_spmat_from_csr(ctx, 2, 2, rp, NULL, v, 0, &a), DESO_ENULL);
    MU_ERR(deso_spmat_from_csr(ctx, 2, 1, rp, cl, v, 0, &a), DESO_EINVAL);
    MU_ERR(deso_spmat_from_rows(ctx, 2, 2, 0, 3, rp, cl, v, &a), DESO_EINVAL);
    MU_ERR(deso_spmat_from_rows(ctx, 2, 2, -1, 0, rp, cl, v, &a),
           DESO_EINVAL);
    MU_ERR(deso_spmat_from_rows(ctx, big, 2, 0, 0, rp, cl, v, &a),
           DESO_ESIZE);
    MU_ERR(deso_spmat_from_gen(ctx, NULL, &a), DESO_ENULL);
    MU_ERR(deso_spmat_from_gen(ctx, "lap2d:", &a), DESO_EINVAL);
    MU_ERR(deso_spmat_from_gen(ctx, "lap3d:99999999", &a), DESO_ESIZE);
    MU_ERR(deso_spmat_from_mtx(ctx, NULL, &a), DESO_ENULL);
    assert_null(a);
    MU_ERR(deso_spmat_shape(NULL, &m, &n, &nnz), DESO_ENULL);
    MU_ERR(deso_spmat_shape(stale, &m, &n, &nnz), DESO_ESTALE);
    MU_ERR(deso_spmat_shape(xs, &m, &n, &nnz), DESO_EINVAL);
    MU_ERR(deso_spmat_local(stale, &m, &n, &nnz), DESO_ESTALE);
    deso_partition placed = DESO_PARTITION_AUTO;
    MU_ERR(deso_spmat_placement(NULL, &placed), DESO_ENULL);
    MU_ERR(deso_spmat_placement(stale, &placed), DESO_ESTALE);
    MU_ERR(deso_spmat_placement(xs, &placed), DESO_EINVAL);
    assert_int_equal(placed, DESO_PARTITION_AUTO);   /* left alone        */
    MU_ERR(deso_spmat_local_rows(NULL, buf, buf, vb), DESO_ENULL);
    MU_ERR(deso_spmat_local_rows(stale, buf, buf, vb), DESO_ESTALE);
    MU_ERR(deso_spmat_local_rows(xs, buf, buf, vb), DESO_EINVAL);
    MU_ERR(deso_spmat_set_values(NULL, v, 0), DESO_ENULL);
    MU_ERR(deso_spmat_set_values(stale, v, 0), DESO_ESTALE);
    MU_ERR(deso_spmat_gather(stale, buf, buf, vb, 0), DESO_ESTALE);
    MU_ERR(deso_spmat_gather(xs, buf, buf, vb, 0), DESO_EINVAL);
    deso_spmat *again = stale;
    MU_ERR(deso_spmat_destroy(&again), DESO_ESTALE);
    MU_ERR(deso_spmat_destroy(NULL), DESO_OK);
    TU_OK(deso_spmat_from_csr(ctx, 2, 2, rp, cl, v, 0, &a));
    MU_ERR(deso_spmat_gather(a, buf, buf, vb, -3), DESO_EINVAL);
    MU_ERR(deso_spmat_gather(a, NULL, buf, vb, DESO_ALL_RANKS), DESO_ENULL);
    MU_ERR(deso_spmat_set_values(a, NULL, DESO_ALL_RANKS), DESO_ENULL);
    /* a rank's rows: NULL arrays refused where they have rows to hold     */
    TU_OK(deso_spmat_local(a, &m, &n, &nnz));
    MU_ERR(deso_spmat_local_rows(a, NULL, buf, vb), DESO_ENULL);
    MU_ERR_RANK(deso_spmat_local_rows(a, buf, NULL, vb),
                nnz > 0 ? DESO_ENULL : DESO_OK);
    MU_ERR_RANK(deso_spmat_local_rows(a, buf, buf + 3, NULL),
                nnz > 0 ? DESO_ENULL : DESO_OK);
    MU_SYNC();
    /* bad arguments on one rank only: no rank is left in a collective      */
    int last = np - 1;
    MU_ERR(deso_spmat_gather(a, me == last ? NULL : buf, buf, vb, last),
           DESO_ENULL);
    MU_ERR(deso_spmat_set_values(a, me == last ? NULL : v, last), DESO_ENULL);
    MU_ERR(deso_spmat_from_gen(ctx, me == last ? NULL : "lap2d:2", &a),
           DESO_ENULL);
    MU_ERR(deso_spmat_from_rows(ctx, 2, 2, 0, me == last ? 2 : 0,
                                me == last ? NULL : rp, cl, v, &a),
           DESO_ENULL);
    MU_SYNC();
    /* the matrix still reads back, the context still computes            */
    TU_OK(deso_spmat_from_csr(ctx, 2, 2, rp, cl, v, 0, &a));
    TU_OK(deso_spmat_gather(a, buf, buf + 3, vb, DESO_ALL_RANKS));
    assert_true(tu_all(buf[1] == 1 && buf[2] == 2 && buf[3] == 1 &&
                       buf[4] == 0 && vb[0] == 1.0 && vb[1] == 2.0));
    TU_OK(deso_spmat_destroy(&a));
    TU_OK(deso_vec_destroy(&x));
    check_usable(ctx);
    TU_OK(deso_finalize(&ctx));
}

/* The sparse product: every argument refused with its code, in argument
 * order (a NULL or stale context, a bad trans, a NULL, stale or wrong-kind
 * matrix, a matrix or vector of another context, vectors of the wrong
 * length for either op, a stale lazy scalar); a bad length on one rank
 * only fails the next force on every rank; the matrix and the context
 * compute afterwards.                                                    */
static void test_dusmv_args(void **state)
{
    (void)state;
    deso_ctx *ctx = mu_ctx(DESO_MODE_FULL), *other = mu_ctx(DESO_MODE_NONE);
    /* A is 2 x 3: N reads x of 3 into y of 2, T the other way           */
    int64_t rp[3] = {0, 2, 3}, cl[3] = {0, 2, 1};
    double v[3] = {1.0, 2.0, 3.0}, got[3];
    deso_spmat *a = NULL, *oa = NULL, *dead = NULL;
    deso_vec *x3, *y2, *ox3, *deadv;
    deso_scalar *deads;
    TU_OK(deso_spmat_from_csr(ctx, 2, 3, rp, cl, v, 0, &a));
    TU_OK(deso_spmat_from_csr(other, 2, 3, rp, cl, v, 0, &oa));
    TU_OK(deso_spmat_from_csr(ctx, 2, 3, rp, cl, v, 0, &dead));
    deso_spmat *stale = dead;
    TU_OK(deso_spmat_destroy(&dead));
    TU_OK(deso_vec_from_fn(ctx, 3, idx1, NULL, &x3));
    TU_OK(deso_vec_create(ctx, 2, &y2));
    TU_OK(deso_vec_create(other, 3, &ox3));
    TU_OK(deso_vec_create(ctx, 3, &deadv));
    deso_vec *stalev = deadv;
    TU_OK(deso_vec_destroy(&deadv));
    TU_OK(deso_scalar_create(ctx, 1.0, &deads));
    deso_scalar *stales = deads;
    TU_OK(deso_scalar_destroy(&deads));
    const deso_spmat *xs = (const deso_spmat *)(const void *)x3; /* a vec */
    const deso_vec *ms = (const deso_vec *)(const void *)a;     /* a matrix */
    const deso_trans N = DESO_NO_TRANS, T = DESO_TRANS;
    MU_ERR(deso_dusmv(NULL, N, 1.0, a, x3, 0.0, y2), DESO_ENULL);
    MU_ERR(deso_dusmv(ctx, (deso_trans)7, 1.0, a, x3, 0.0, y2), DESO_EINVAL);
    MU_ERR(deso_dusmv(ctx, N, 1.0, NULL, x3, 0.0, y2), DESO_ENULL);
    MU_ERR(deso_dusmv(ctx, N, 1.0, stale, x3, 0.0, y2), DESO_ESTALE);
    MU_ERR(deso_dusmv(ctx, N, 1.0, xs, x3, 0.0, y2), DESO_EINVAL);
    MU_ERR(deso_dusmv(ctx, N, 1.0, oa, x3, 0.0, y2), DESO_ECONTEXT);
    MU_ERR(deso_dusmv(ctx, N, 1.0, a, NULL, 0.0, y2), DESO_ENULL);
    MU_ERR(deso_dusmv(ctx, N, 1.0, a, stalev, 0.0, y2), DESO_ESTALE);
    MU_ERR(deso_dusmv(ctx, N, 1.0, a, ms, 0.0, y2), DESO_EINVAL);
    MU_ERR(deso_dusmv(ctx, N, 1.0, a, ox3, 0.0, y2), DESO_ECONTEXT);
    MU_ERR(deso_dusmv(ctx, N, 1.0, a, y2, 0.0, y2), DESO_ESIZE);
    MU_ERR(deso_dusmv(ctx, N, 1.0, a, x3, 0.0, NULL), DESO_ENULL);
    MU_ERR(deso_dusmv(ctx, N, 1.0, a, x3, 0.0, x3), DESO_ESIZE);
    MU_ERR(deso_dusmv(ctx, T, 1.0, a, x3, 0.0, y2), DESO_ESIZE);
    MU_ERR(deso_dusmv(ctx, T, 1.0, a, y2, 0.0, y2), DESO_ESIZE);
    MU_ERR(deso_dusmv(ctx, N, stales, a, x3, 0.0, y2), DESO_ESTALE);
    MU_ERR(deso_dusmv(ctx, N, 1.0, a, x3, stales, y2), DESO_ESTALE);
    MU_ERR(deso_dusmv(other, N, 1.0, a, x3, 0.0, y2), DESO_ECONTEXT);
    MU_SYNC();
    /* one rank records a bad call: the next force fails everywhere        */
    int last = np - 1;
    MU_ERR_RANK(deso_dusmv(ctx, N, 1.0, a, me == last ? y2 : x3, 0.0, y2),
                me == last ? DESO_ESIZE : DESO_OK);
    MU_ERR(deso_flush(ctx), np > 1 ? DESO_EMISMATCH : DESO_OK);
    MU_SYNC();
    /* the matrix still computes (y2 was lost with the failed flush): y =
     * A (1, 2, 3) = (1 + 6, 6), then A^T y = (7, 18, 14)                 */
    deso_vec *x3b;
    TU_OK(deso_vec_destroy(&y2));
    TU_OK(deso_vec_create(ctx, 2, &y2));
    TU_OK(deso_vec_create(ctx, 3, &x3b));
    TU_OK(deso_dusmv(ctx, N, 1.0, a, x3, 0.0, y2));
    TU_OK(deso_dusmv(ctx, T, 1.0, a, y2, 0.0, x3b));
    TU_OK(deso_vec_gather(x3b, got, DESO_ALL_RANKS));
    assert_true(tu_all(got[0] == 7.0 && got[1] == 18.0 && got[2] == 14.0));
    TU_OK(deso_vec_destroy(&x3b));
    TU_OK(deso_vec_destroy(&x3));
    TU_OK(deso_vec_destroy(&y2));
    TU_OK(deso_vec_destroy(&ox3));
    TU_OK(deso_spmat_destroy(&a));
    TU_OK(deso_spmat_destroy(&oa));
    check_usable(ctx);
    TU_OK(deso_finalize(&other));
    TU_OK(deso_finalize(&ctx));
}

/* Views: every argument of deso_vec_view, deso_mat_col, deso_mat_cols and
 * deso_mat_block refused with its code (NULL, stale, wrong kind, a view
 * of a view, out of range, an empty block, zero stride), nothing left
 * behind; a block used with another shape is refused; a view whose
 * parent was destroyed is stale in every call; a view as deso_mat_diag's
 * output is refused; a view is destroyed like any handle and only once. */
static void test_views(void **state)
{
    (void)state;
    deso_ctx *ctx = mu_ctx(DESO_MODE_FULL), *other = tu_ctx(0, 0, 3);
    deso_vec *x, *y, *o, *dead, *v = NULL, *w = NULL;
    deso_mat *A, *deadA, *M = NULL;
    deso_scalar *s;
    TU_OK(deso_vec_create(ctx, 6, &x));
    TU_OK(deso_vec_create(ctx, 3, &y));
    TU_OK(deso_vec_create(ctx, 6, &dead));
    TU_OK(deso_vec_create(other, 6, &o));
    TU_OK(deso_mat_create(ctx, 4, 3, &A));
    TU_OK(deso_mat_create(ctx, 4, 3, &deadA));
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    deso_vec *stale = dead;
    deso_mat *staleA = deadA;
    TU_OK(deso_vec_destroy(&dead));
    TU_OK(deso_mat_destroy(&deadA));
    int live = new_values_live(ctx);
    MU_ERR(deso_vec_view(NULL, 0, 2, 1, &v), DESO_ENULL);
    MU_ERR(deso_vec_view(x, 0, 2, 1, NULL), DESO_ENULL);
    MU_ERR(deso_vec_view(stale, 0, 2, 1, &v), DESO_ESTALE);
    MU_ERR(deso_vec_view((deso_vec *)A, 0, 2, 1, &v), DESO_EINVAL);
    MU_ERR(deso_vec_view(x, 0, 2, 0, &v), DESO_EINVAL);
    MU_ERR(deso_vec_view(x, 0, -1, 1, &v), DESO_ESIZE);
    MU_ERR(deso_vec_view(x, -1, 2, 1, &v), DESO_ESIZE);
    MU_ERR(deso_vec_view(x, 6, 1, 1, &v), DESO_ESIZE);
    MU_ERR(deso_vec_view(x, 7, 0, 1, &v), DESO_ESIZE);
    MU_ERR(deso_vec_view(x, 1, 3, 3, &v), DESO_ESIZE);
    MU_ERR(deso_vec_view(x, 1, 3, -1, &v), DESO_ESIZE);
    MU_ERR(deso_vec_view(x, 0, INT64_MAX, 1, &v), DESO_ESIZE);
    MU_ERR(deso_vec_view(x, 5, 2, INT64_MIN, &v), DESO_ESIZE);
    MU_ERR(deso_mat_col(NULL, 0, &v), DESO_ENULL);
    MU_ERR(deso_mat_col(A, 0, NULL), DESO_ENULL);
    MU_ERR(deso_mat_col(staleA, 0, &v), DESO_ESTALE);
    MU_ERR(deso_mat_col((deso_mat *)x, 0, &v), DESO_EINVAL);
    MU_ERR(deso_mat_col(A, -1, &v), DESO_ESIZE);
    MU_ERR(deso_mat_col(A, 3, &v), DESO_ESIZE);
    MU_ERR(deso_mat_cols(NULL, 0, 1, &M), DESO_ENULL);
    MU_ERR(deso_mat_cols(A, 0, 1, NULL), DESO_ENULL);
    MU_ERR(deso_mat_cols(staleA, 0, 1, &M), DESO_ESTALE);
    MU_ERR(deso_mat_cols(A, -1, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_cols(A, 1, 3, &M), DESO_ESIZE);
    MU_ERR(deso_mat_cols(A, 0, 0, &M), DESO_ESIZE);
    MU_ERR(deso_mat_cols(A, 4, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_cols(A, 1, INT64_MAX, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(NULL, 0, 0, 1, 1, &M), DESO_ENULL);
    MU_ERR(deso_mat_block(A, 0, 0, 1, 1, NULL), DESO_ENULL);
    MU_ERR(deso_mat_block(staleA, 0, 0, 1, 1, &M), DESO_ESTALE);
    MU_ERR(deso_mat_block((deso_mat *)x, 0, 0, 1, 1, &M), DESO_EINVAL);
    MU_ERR(deso_mat_block(A, -1, 0, 1, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 4, 0, 1, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 0, -1, 1, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 0, 3, 1, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 0, 0, 0, 1, &M), DESO_ESIZE);   /* empty   */
    MU_ERR(deso_mat_block(A, 0, 0, 1, 0, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 0, 0, -1, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 1, 0, 4, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 0, 1, 1, 3, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 1, 1, INT64_MAX, 1, &M), DESO_ESIZE);
    MU_ERR(deso_mat_block(A, 1, 1, 1, INT64_MAX, &M), DESO_ESIZE);
    assert_true(tu_all(v == NULL && M == NULL));
    assert_true(tu_all(new_values_live(ctx) == live));
    /* views of views are refused; views are used as their kind         */
    TU_OK(deso_vec_view(x, 5, 3, -2, &v));
    MU_ERR(deso_vec_view(v, 0, 1, 1, &w), DESO_EINVAL);
    TU_OK(deso_mat_cols(A, 1, 2, &M));
    MU_ERR(deso_mat_col(M, 0, &w), DESO_EINVAL);
    MU_ERR(deso_mat_cols(M, 0, 1, (deso_mat **)&w), DESO_EINVAL);
    MU_ERR(deso_mat_block(M, 0, 0, 1, 1, (deso_mat **)&w), DESO_EINVAL);
    deso_mat *Bk = NULL;
    TU_OK(deso_mat_block(A, 1, 1, 2, 2, &Bk));
    MU_ERR(deso_mat_block(Bk, 0, 0, 1, 1, (deso_mat **)&w), DESO_EINVAL);
    MU_ERR(deso_mat_col(Bk, 0, &w), DESO_EINVAL);
    assert_true(tu_all(w == NULL));
    /* a block is used as a matrix of its own shape, whatever lda says    */
    MU_ERR(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, 2, 3, 1.0, Bk, 4, y, 1,
                      0.0, x, 1), DESO_ESIZE);
    MU_ERR(deso_dger(DESO_COL_MAJOR, 3, 2, 1.0, y, 1, y, 1, Bk, 4),
           DESO_ESIZE);
    MU_ERR(deso_daxpy(3, 1.0, v, 1, y, 1), DESO_OK);
    MU_ERR(deso_daxpy(3, 1.0, v, 2, y, 1), DESO_ESIZE);
    MU_ERR(deso_daxpy(3, 1.0, v, 0, y, 1), DESO_EINVAL);
    MU_ERR(deso_daxpy(3, 1.0, o, 1, v, 1), DESO_ECONTEXT);
    MU_ERR(deso_daxpy(3, 1.0, y, 1, (deso_vec *)M, 1), DESO_EINVAL);
    MU_ERR(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, 4, 3, 1.0, M, 4, y, 1,
                      0.0, x, 1), DESO_ESIZE);
    TU_OK(deso_vec_view(x, 0, 3, 1, &w));
    MU_ERR(deso_mat_diag(A, w), DESO_ENOTSUP);
    /* the parent destroyed: its views are stale everywhere              */
    TU_OK(deso_vec_destroy(&x));
    MU_ERR(deso_daxpy(3, 1.0, v, 1, y, 1), DESO_ESTALE);
    MU_ERR(deso_daxpy(3, 1.0, y, 1, w, 1), DESO_ESTALE);
    MU_ERR(deso_ddot(3, v, 1, y, 1, s), DESO_ESTALE);
    MU_ERR(deso_vec_gather(v, NULL, DESO_ALL_RANKS), DESO_ESTALE);
    TU_OK(deso_mat_destroy(&A));
    MU_ERR(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, 4, 2, 1.0, M, 4, y, 1,
                      0.0, y, 1), DESO_ESTALE);
    MU_ERR(deso_mat_gather(M, NULL, 4, DESO_ALL_RANKS), DESO_ESTALE);
    MU_ERR(deso_dger(DESO_COL_MAJOR, 2, 2, 1.0, y, 1, y, 1, Bk, 4),
           DESO_ESTALE);
    MU_ERR(deso_dgemv(DESO_COL_MAJOR, DESO_TRANS, 2, 2, 1.0, Bk, 4, y, 1,
                      0.0, y, 1), DESO_ESTALE);
    TU_OK(deso_mat_destroy(&Bk));
    deso_vec *vv = v;
    TU_OK(deso_vec_destroy(&v));
    MU_ERR(deso_vec_destroy(&vv), DESO_ESTALE);
    TU_OK(deso_vec_destroy(&w));
    TU_OK(deso_mat_destroy(&M));
    MU_SYNC();
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_vec_destroy(&o));
    TU_OK(deso_scalar_destroy(&s));
    TU_OK(deso_flush(ctx));       /* the calls that were accepted        */
    check_usable(ctx);
    TU_OK(deso_finalize(&other));
    TU_OK(deso_finalize(&ctx));
}

/* A user operator's callback: y <- 2 x (x replicated: all of it); the
 * failing one returns 3 on the last rank only.                          */
static int twice_fn(void *user, const double *x, const deso_op_part *xp,
                    double *y, const deso_op_part *yp)
{
    (void)user;
    (void)xp;
    for (int64_t i = 0; i < yp->nlocal; i++)
        y[i] = 2.0 * x[deso_op_global(yp, i)];
    return 0;
}

static int last_fails_fn(void *user, const double *x, const deso_op_part *xp,
                         double *y, const deso_op_part *yp)
{
    (void)user;
    (void)x;
    (void)xp;
    (void)y;
    (void)yp;
    return me == np - 1 ? 3 : 0;
}

/* User operators: every argument of deso_op_create, deso_op_create_spmat,
 * deso_op_apply and deso_op_destroy refused with its code (NULL, stale,
 * wrong kind, another context, bad sizes and layouts), nothing left
 * behind; deso_op_create (and _spmat) bad on one rank only (or declared
 * differently there) fails on every
 * rank; deso_op_apply bad on one rank only fails there and makes the next
 * force a mismatch on every rank; a callback that
 * fails on one rank fails the force on every rank with DESO_EUSER, loses
 * only that flush's values, and leaves the context usable; an operator
 * destroyed after an apply was recorded still runs it.                  */
static void test_user_ops(void **state)
{
    (void)state;
    deso_ctx *ctx = mu_ctx(DESO_MODE_FULL), *other = tu_ctx(0, 0, 3);
    deso_vec *x, *y, *o, *dead;
    deso_mat *A, *B;
    deso_op *op = NULL, *bad = NULL, *gone = NULL;
    TU_OK(deso_vec_create(ctx, 5, &x));
    TU_OK(deso_vec_create(ctx, 5, &y));
    TU_OK(deso_vec_create(ctx, 5, &dead));
    TU_OK(deso_vec_create(other, 5, &o));
    TU_OK(deso_mat_create(ctx, 5, 4, &A));
    TU_OK(deso_mat_create(other, 5, 4, &B));
    deso_vec *stale = dead;
    TU_OK(deso_vec_destroy(&dead));
    int live = new_values_live(ctx);
    const deso_op_layout R = DESO_OP_REPLICATED, L = DESO_OP_LIKE_Y;
    const deso_op_layout Y = DESO_OP_ANY, W = DESO_OP_ROWS;
    MU_ERR(deso_op_create(NULL, 5, 5, twice_fn, NULL, R, Y, NULL, &op),
           DESO_ENULL);
    MU_ERR(deso_op_create(ctx, -1, 5, twice_fn, NULL, R, Y, NULL, &op),
           DESO_ESIZE);
    MU_ERR(deso_op_create(ctx, 5, -1, twice_fn, NULL, R, Y, NULL, &op),
           DESO_ESIZE);
    MU_ERR(deso_op_create(ctx, 5, 5, NULL, NULL, R, Y, NULL, &op),
           DESO_ENULL);
    MU_ERR(deso_op_create(ctx, 5, 5, twice_fn, NULL, Y, Y, NULL, &op),
           DESO_EINVAL);
    MU_ERR(deso_op_create(ctx, 5, 5, twice_fn, NULL, (deso_op_layout)0, Y,
                          NULL, &op), DESO_EINVAL);
    MU_ERR(deso_op_create(ctx, 5, 5, twice_fn, NULL, R, L, NULL, &op),
           DESO_EINVAL);
    MU_ERR(deso_op_create(ctx, 5, 5, twice_fn, NULL, R, (deso_op_layout)9,
                          NULL, &op), DESO_EINVAL);
    MU_ERR(deso_op_create(ctx, 5, 4, twice_fn, NULL, L, Y, NULL, &op),
           DESO_ESIZE);
    MU_ERR(deso_op_create(ctx, 5, 4, twice_fn, NULL, R, W, NULL, &op),
           DESO_ENULL);
    MU_ERR(deso_op_create(ctx, 5, 4, twice_fn, NULL, R, Y, A, &op),
           DESO_EINVAL);
    MU_ERR(deso_op_create(ctx, 4, 4, twice_fn, NULL, R, W, A, &op),
           DESO_ESIZE);
    MU_ERR(deso_op_create(ctx, 5, 4, twice_fn, NULL, R, W, B, &op),
           DESO_ECONTEXT);
    MU_ERR(deso_op_create(ctx, 5, 4, twice_fn, NULL, R, W, (deso_mat *)x,
                          &op), DESO_EINVAL);
    MU_ERR(deso_op_create(ctx, 5, 5, twice_fn, NULL, R, Y, NULL, NULL),
           DESO_ENULL);
    /* bad on one rank only: deso_op_create agrees, so every rank fails
     * with that rank's code, and no rank has the operator               */
    const int last = np - 1;
    MU_ERR(deso_op_create(ctx, me == last ? -1 : 5, 5, twice_fn, NULL, R, Y,
                          NULL, &op), DESO_ESIZE);
    MU_ERR(deso_op_create(ctx, 5, 5, me == last ? NULL : twice_fn, NULL, R,
                          Y, NULL, &op), DESO_ENULL);
    MU_ERR(deso_op_create(ctx, 5, 4, twice_fn, NULL, R, W,
                          me == last ? B : A, &op), DESO_ECONTEXT);
    MU_ERR(deso_op_create(ctx, 5, 5, twice_fn, NULL, R, Y, NULL,
                          me == last ? NULL : &op), DESO_ENULL);
    /* valid everywhere, but not the same operator on every rank          */
    MU_ERR(deso_op_create(ctx, 5, 5, twice_fn, NULL, me == last ? L : R, Y,
                          NULL, &op), np > 1 ? DESO_EMISMATCH : DESO_OK);
    TU_OK(deso_op_destroy(&op));
    assert_true(tu_all(op == NULL && new_values_live(ctx) == live));
    /* on a sparse matrix's rows: every argument, and a matrix of another
     * context on one rank only (agreed: every rank fails)                 */
    deso_spmat *S = NULL, *T = NULL, *Sd = NULL;
    TU_OK(deso_spmat_from_gen(ctx, "lap2d:2", &S));
    TU_OK(deso_spmat_from_gen(other, "lap2d:2", &T));
    TU_OK(deso_spmat_from_gen(ctx, "lap2d:2", &Sd));
    deso_spmat *sstale = Sd;
    TU_OK(deso_spmat_destroy(&Sd));
    MU_ERR(deso_op_create_spmat(NULL, twice_fn, NULL, S, &op), DESO_ENULL);
    MU_ERR(deso_op_create_spmat(ctx, NULL, NULL, S, &op), DESO_ENULL);
    MU_ERR(deso_op_create_spmat(ctx, twice_fn, NULL, NULL, &op), DESO_ENULL);
    MU_ERR(deso_op_create_spmat(ctx, twice_fn, NULL, sstale, &op),
           DESO_ESTALE);
    MU_ERR(deso_op_create_spmat(ctx, twice_fn, NULL,
                                (const deso_spmat *)(const void *)x, &op),
           DESO_EINVAL);
    MU_ERR(deso_op_create_spmat(ctx, twice_fn, NULL, T, &op), DESO_ECONTEXT);
    MU_ERR(deso_op_create_spmat(ctx, twice_fn, NULL, S, NULL), DESO_ENULL);
    MU_ERR(deso_op_create_spmat(ctx, twice_fn, NULL, me == last ? T : S, &op),
           DESO_ECONTEXT);
    TU_OK(deso_spmat_destroy(&S));
    TU_OK(deso_spmat_destroy(&T));
    assert_true(tu_all(op == NULL && new_values_live(ctx) == live));
    TU_OK(deso_op_create(ctx, 5, 5, twice_fn, NULL, R, Y, NULL, &op));
    TU_OK(deso_op_create(ctx, 5, 4, twice_fn, NULL, R, W, A, &bad));
    MU_ERR(deso_op_apply(NULL, x, y), DESO_ENULL);
    MU_ERR(deso_op_apply((deso_op *)x, x, y), DESO_EINVAL);
    MU_ERR(deso_op_apply(op, NULL, y), DESO_ENULL);
    MU_ERR(deso_op_apply(op, x, NULL), DESO_ENULL);
    MU_ERR(deso_op_apply(op, stale, y), DESO_ESTALE);
    MU_ERR(deso_op_apply(op, x, stale), DESO_ESTALE);
    MU_ERR(deso_op_apply(op, o, y), DESO_ECONTEXT);
    MU_ERR(deso_op_apply(op, x, (deso_vec *)A), DESO_EINVAL);
    MU_ERR(deso_op_apply(bad, x, y), DESO_ESIZE);       /* x: 4, not 5  */
    assert_true(tu_all(new_values_live(ctx) == live + 2));
    /* an apply refused on one rank only: recorded elsewhere, so the next
     * force fails with DESO_EMISMATCH on every rank and the context goes
     * on                                                                */
    MU_ERR_RANK(deso_op_apply(op, x, me == last ? NULL : y),
                me == last ? DESO_ENULL : DESO_OK);
    MU_ERR(deso_flush(ctx), np > 1 ? DESO_EMISMATCH : DESO_OK);
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_vec_create(ctx, 5, &y));
    /* destroyed with an apply pending: the apply still runs             */
    TU_OK(deso_vec_from_fn(ctx, 5, idx1, NULL, &dead));
    gone = op;
    TU_OK(deso_op_apply(op, dead, y));
    TU_OK(deso_op_destroy(&op));
    assert_true(tu_all(op == NULL));
    MU_ERR(deso_op_apply(gone, x, y), DESO_ESTALE);
    MU_ERR(deso_op_destroy(&gone), DESO_ESTALE);
    MU_ERR(deso_op_destroy(NULL), DESO_OK);
    double g[5] = {0};
    TU_OK(deso_vec_gather(y, g, DESO_ALL_RANKS));
    assert_true(tu_all(g[0] == 2.0 && g[4] == 10.0));
    /* a callback failing on one rank: every rank's force fails          */
    deso_op *fails = NULL;
    TU_OK(deso_op_create(ctx, 5, 5, last_fails_fn, NULL, L, Y, NULL, &fails));
    TU_OK(deso_op_apply(fails, dead, y));
    MU_ERR(deso_flush(ctx), DESO_EUSER);
    MU_ERR(deso_vec_gather(y, g, DESO_ALL_RANKS), DESO_EUSER);
    TU_OK(deso_op_destroy(&fails));
    TU_OK(deso_op_destroy(&bad));
    MU_SYNC();
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_vec_destroy(&dead));
    TU_OK(deso_vec_destroy(&o));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_mat_destroy(&B));
    check_usable(ctx);
    TU_OK(deso_finalize(&other));
    TU_OK(deso_finalize(&ctx));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    unsetenv("DESO_OPT");
    unsetenv("DESO_GRID");
    unsetenv("DESO_NB");
    unsetenv("DESO_WISDOM");
    unsetenv("DESO_MAX_NODES");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context),
        cmocka_unit_test(test_create),
        cmocka_unit_test(test_handles),
        cmocka_unit_test(test_remap),
        cmocka_unit_test(test_scalapack_args),
        cmocka_unit_test(test_mpi_errors),
        cmocka_unit_test(test_more_routines),
        cmocka_unit_test(test_new_values),
        cmocka_unit_test(test_spmat),
        cmocka_unit_test(test_dusmv_args),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_user_ops),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
