/* Configuration that differs between ranks (a launcher that does not give
 * every rank the same environment) never hangs and never splits the
 * ranks: for every DESO_* variable, a valid value that differs on one
 * rank gives every rank rank 0's value (deso_get_info, and what the
 * context does with it), and an invalid value on one rank fails deso_init
 * on every rank with the same code, naming that rank and the variable.
 * Each case sets the variable on chosen ranks before deso_init, runs a
 * small computation checked against brute force, bitwise identical on
 * every rank, and clears the variable again.
 * deso-np: 2 3                                                            */
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static int me, np;
static char dir[256];             /* rank 0's scratch directory, everywhere */

/* Sets var to value on the ranks in mask (bit r: rank r), else unsets it. */
static void env_on(const char *var, unsigned mask, const char *value)
{
    if (mask >> me & 1u) setenv(var, value, 1);
    else unsetenv(var);
}

/* Sets var to a on rank 0 and to b on the last rank (others: a).         */
static void env_split(const char *var, const char *a, const char *b)
{
    setenv(var, me == np - 1 ? b : a, 1);
}

/* The same on every rank.                                                */
static int same(int64_t v)
{
    int64_t lo = v, hi = v;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

static int same_str(const char *s, const char *want)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *c = s != NULL ? s : ""; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    int ok = (s == NULL && want == NULL) ||
             (s != NULL && want != NULL && strcmp(s, want) == 0);
    return tu_all(ok) && same((int64_t)h) && (s == NULL ? 1 : same(1));
}

static double a_fn(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return 1.0 / (double)(1 + i + 2 * j) + (i == j ? 3.0 : 0.0);
}

static double x_fn(int64_t i, void *arg)
{
    (void)arg;
    return (double)(i % 7) - 2.5;
}

/* y = A x, then twenty updates y += 0.5 x, then y . y: more pending calls
 * than a small DAG bound, so a bound that differed between ranks would
 * make them force at different calls.  Checked against brute force and
 * bitwise equal on every rank.                                            */
static void compute(deso_ctx *ctx)
{
    const int64_t n = 37;
    deso_mat *A;
    deso_vec *x, *y;
    deso_scalar *s;
    TU_OK(deso_mat_from_fn(ctx, n, n, a_fn, NULL, &A));
    TU_OK(deso_vec_from_fn(ctx, n, x_fn, NULL, &x));
    TU_OK(deso_vec_create(ctx, n, &y));
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, x, 1,
                     0.0, y, 1));
    for (int k = 0; k < 20; k++) TU_OK(deso_daxpy(n, 0.5, x, 1, y, 1));
    TU_OK(deso_ddot(n, y, 1, y, 1, s));
    double got = tu_get(s), want = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double yi = 10.0 * x_fn(i, NULL);
        for (int64_t j = 0; j < n; j++) yi += a_fn(i, j, NULL) * x_fn(j, NULL);
        want += yi * yi;
    }
    assert_true(tu_all(tu_srel(got, want) < 1e-12));
    int64_t bits;
    memcpy(&bits, &got, sizeof bits);
    assert_true(same(bits));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_scalar_destroy(&s));
}

static deso_info init_info(deso_ctx **ctx)
{
    TU_OK(deso_init(MPI_COMM_WORLD, NULL, ctx));
    deso_info info;
    TU_OK(deso_get_info(*ctx, &info));
    return info;
}

/* deso_init fails with code on every rank; its message names the failing
 * rank and the variable.                                                  */
static void init_fails(deso_err code, int rank, const char *var)
{
    deso_ctx *ctx = (deso_ctx *)&ctx;
    deso_err e = deso_init(MPI_COMM_WORLD, NULL, &ctx);
    char want[32];
    snprintf(want, sizeof want, "rank %d: ", rank);
    const char *msg = deso_last_error();
    if (e != code || strstr(msg, want) == NULL || strstr(msg, var) == NULL)
        print_error("deso_init -> %s '%s', expected %s naming '%s%s'\n",
                    deso_errname(e), msg, deso_errname(code), want, var);
    assert_true(tu_all(e == code && ctx == NULL && strstr(msg, want) &&
                       strstr(msg, var)));
}

static void test_mode(void **state)
{
    (void)state;
    deso_ctx *ctx;
    env_split("DESO_OPT", "full", "none");
    deso_info info = init_info(&ctx);
    assert_true(tu_all(info.mode == DESO_MODE_FULL));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    env_split("DESO_OPT", "affine", "full");
    info = init_info(&ctx);
    assert_true(tu_all(info.mode == DESO_MODE_AFFINE));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    env_on("DESO_OPT", 1u << (np - 1), "fast");
    init_fails(DESO_EINVAL, np - 1, "DESO_OPT");
    env_on("DESO_OPT", 1u, "");            /* empty: unset, the default    */
    info = init_info(&ctx);
    assert_true(tu_all(info.mode == DESO_MODE_NONE));
    TU_OK(deso_finalize(&ctx));
    unsetenv("DESO_OPT");
}

static void test_grid(void **state)
{
    (void)state;
    char row[16], col[16];
    snprintf(row, sizeof row, "1x%d", np);
    snprintf(col, sizeof col, "%dx1", np);
    deso_ctx *ctx;
    setenv("DESO_OPT", "full", 1);
    env_split("DESO_GRID", col, row);
    deso_info info = init_info(&ctx);
    assert_true(tu_all(info.grid_rows == np && info.grid_cols == 1));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    env_split("DESO_GRID", row, col);
    info = init_info(&ctx);
    assert_true(tu_all(info.grid_rows == 1 && info.grid_cols == np));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    unsetenv("DESO_OPT");
    env_on("DESO_GRID", 1u << (np - 1), "2by3");
    init_fails(DESO_EINVAL, np - 1, "DESO_GRID");
    env_on("DESO_GRID", 1u, "5x5");        /* valid text, not these ranks   */
    init_fails(DESO_EGRID, 0, "DESO_GRID: grid 5x5");
    unsetenv("DESO_GRID");
}

static void test_block_size(void **state)
{
    (void)state;
    deso_ctx *ctx;
    env_split("DESO_NB", "3", "block");
    deso_info info = init_info(&ctx);
    assert_true(tu_all(info.nb == 3));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    env_split("DESO_NB", "block", "5");
    info = init_info(&ctx);
    assert_true(tu_all(info.nb == DESO_NB_BLOCK));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    env_on("DESO_NB", 1u << (np - 1), "0");
    init_fails(DESO_EINVAL, np - 1, "DESO_NB");
    unsetenv("DESO_NB");
}

static void test_dag_bound(void **state)
{
    (void)state;
    deso_ctx *ctx;
    env_split("DESO_MAX_NODES", "4", "4096");
    deso_info info = init_info(&ctx);
    assert_true(tu_all(info.max_nodes == 4));
    compute(ctx);
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.flushes >= 4) && same(info.flushes));
    TU_OK(deso_finalize(&ctx));
    env_split("DESO_MAX_NODES", "4096", "3");
    info = init_info(&ctx);
    assert_true(tu_all(info.max_nodes == 4096));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    env_on("DESO_MAX_NODES", 1u << (np - 1), "-3");
    init_fails(DESO_EINVAL, np - 1, "DESO_MAX_NODES");
    unsetenv("DESO_MAX_NODES");
}

static void test_verbose(void **state)
{
    (void)state;
    deso_ctx *ctx;
    env_split("DESO_VERBOSE", "0", "1");
    deso_info info = init_info(&ctx);
    assert_true(tu_all(info.verbose == 0));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    env_on("DESO_VERBOSE", 1u, "yes");     /* anything but 0 explains       */
    info = init_info(&ctx);
    assert_true(tu_all(info.verbose == 1));
    TU_OK(deso_finalize(&ctx));
    unsetenv("DESO_VERBOSE");
}

/* Whether deso_init measures collectives: rank 0's choice on every rank
 * (the figures then the same everywhere: zeros under the formula).     */
static void test_measure_collectives(void **state)
{
    (void)state;
    deso_ctx *ctx;
    env_split("DESO_MEASURE_COLLECTIVES", "0", "1");
    deso_info info = init_info(&ctx);
    assert_true(tu_all(info.measure_collectives == 0 &&
                       info.allreduce_call == 0.0 && info.bcast_call == 0.0));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    env_split("DESO_MEASURE_COLLECTIVES", "1", "0");
    info = init_info(&ctx);
    assert_true(tu_all(info.measure_collectives == 1 &&
                       (info.allreduce_call > 0.0) == (np > 1) &&
                       same((int64_t)(info.reduce_call * 1e12))));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    unsetenv("DESO_MEASURE_COLLECTIVES");
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A name longer than an option takes, set on the last rank only.         */
static void too_long(const char *var)
{
    static char name[5000];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    env_on(var, 1u << (np - 1), name);
    init_fails(DESO_EINVAL, np - 1, var);
    unsetenv(var);
}

/* Wisdom: rank 0's file is read (by rank 0 alone, then broadcast) and
 * written; the other ranks' names are never touched.                    */
static void test_wisdom(void **state)
{
    (void)state;
    char mine[300], other[300];
    snprintf(mine, sizeof mine, "%s/plans.wisdom", dir);
    snprintf(other, sizeof other, "%s/other.wisdom", dir);
    deso_ctx *ctx;
    setenv("DESO_OPT", "full", 1);
    env_split("DESO_WISDOM", mine, other);
    deso_info info = init_info(&ctx);
    assert_true(same_str(info.wisdom, mine));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    assert_true(tu_all(me != 0 || exists(mine)));
    /* a second run replays rank 0's plans on every rank                   */
    deso_stats_reset();
    info = init_info(&ctx);
    compute(ctx);
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    assert_true(tu_all(st.plans_replayed > 0 && st.plans_optimised == 0));
    TU_OK(deso_finalize(&ctx));
    assert_true(tu_all(!exists(other)));
    unsetenv("DESO_OPT");
    unsetenv("DESO_WISDOM");
    if (me == 0) unlink(mine);
    too_long("DESO_WISDOM");
}

/* The trace: rank 0 writes its file at every new plan, nobody else.     */
static void test_trace(void **state)
{
    (void)state;
    char mine[300], other[300];
    snprintf(mine, sizeof mine, "%s/plan.dot", dir);
    snprintf(other, sizeof other, "%s/other.dot", dir);
    deso_ctx *ctx;
    env_split("DESO_TRACE", mine, other);
    deso_info info = init_info(&ctx);
    assert_true(same_str(info.trace, mine));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    assert_true(tu_all((me != 0 || exists(mine)) && !exists(other)));
    unsetenv("DESO_TRACE");
    if (me == 0) unlink(mine);
    too_long("DESO_TRACE");
}

/* The log is collective at deso_finalize: a rank that alone asked for it
 * would wait there for ever.  Rank 0's value decides for all.            */
static void test_log(void **state)
{
    (void)state;
    char mine[300], other[300];
    snprintf(mine, sizeof mine, "%s/log.txt", dir);
    snprintf(other, sizeof other, "%s/other.txt", dir);
    deso_ctx *ctx;
    /* rank 0 alone asking first: unagreed, it would wait for ever in the
     * log's reductions (the other order can complete by luck: a non-root
     * contribution to a reduce may be sent without waiting)              */
    env_split("DESO_LOG", mine, "0");
    deso_info info = init_info(&ctx);
    assert_true(same_str(info.log, mine));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    assert_true(tu_all(me != 0 || exists(mine)));
    env_on("DESO_LOG", 1u << (np - 1), other);
    info = init_info(&ctx);
    assert_true(same_str(info.log, NULL));
    compute(ctx);
    TU_OK(deso_finalize(&ctx));
    assert_true(tu_all(!exists(other)));
    unsetenv("DESO_LOG");
    if (me == 0) unlink(mine);
    too_long("DESO_LOG");
}

/* A cyclic(3) -> cyclic(5) remap of 100 elements whose every rank sends:
 * the transport is rank 0's choice on every rank, and the data arrive.  */
static void remap_with(const char *want)
{
    deso_layout src = { .m = 100, .n = 1, .mb = 3, .nb = 1, .pr = np,
                        .pc = 1 };
    deso_layout dst = { .m = 100, .n = 1, .mb = 5, .nb = 1, .pr = np,
                        .pc = 1 };
    deso_redist *r;
    TU_OK(deso_redist_create(MPI_COMM_WORLD, &src, &dst,
                             DESO_SCHED_STEPWISE, &r));
    const char *t = deso_redist_transport(r);
    if (strcmp(t, want) != 0) print_error("transport %s, not %s\n", t, want);
    assert_true(tu_all(strcmp(t, want) == 0));
    int64_t sr, sc, dr, dc;
    TU_OK(deso_redist_local_shape(r, &sr, &sc, &dr, &dc));
    double a[100], b[100];
    for (int64_t k = 0; k < sr; k++)        /* global index of local k    */
        a[k] = (double)((k / 3 * np + me) * 3 + k % 3);
    TU_OK(deso_redist_execute(r, a, sr > 0 ? sr : 1, b, dr > 0 ? dr : 1));
    int ok = 1;
    for (int64_t k = 0; k < dr; k++)
        ok &= b[k] == (double)((k / 5 * np + me) * 5 + k % 5);
    assert_true(tu_all(ok));
    deso_redist_destroy(&r);
}

static void test_remap_transport(void **state)
{
    (void)state;
    const char *shm = tu_one_node() ? "shared memory" : "mpi";
    env_on("DESO_REMAP_SHM", 1u, "0");
    remap_with("mpi");
    env_on("DESO_REMAP_SHM", 1u << (np - 1), "0");
    remap_with(shm);
    unsetenv("DESO_REMAP_SHM");
    remap_with(shm);
}

static int setup(void **state)
{
    (void)state;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    return tu_scratch_dir("config", dir, sizeof dir);
}

static int teardown(void **state)
{
    (void)state;
    tu_scratch_done(dir);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode),
        cmocka_unit_test(test_grid),
        cmocka_unit_test(test_block_size),
        cmocka_unit_test(test_dag_bound),
        cmocka_unit_test(test_verbose),
        cmocka_unit_test(test_measure_collectives),
        cmocka_unit_test(test_wisdom),
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_remap_transport),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    MPI_Finalize();
    return rc;
}
