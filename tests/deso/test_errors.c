/* Bad input returns its error code on every rank, never a crash or a
 * hang: mismatched lengths, NULL handles, destroyed handles (ESTALE),
 * handles of another context (ECONTEXT), unsupported increments, bad
 * enums, bad options, and ranks recording different call sequences
 * (EMISMATCH at the force point, on every rank, after which the context
 * still works): an extra call, rank-dependent sizes, an extra call at the
 * end of the DAG or in its middle.  Every error code's name and message;
 * the files DESO_WISDOM and DESO_TRACE name (the wisdom written and read
 * back, the trace the DOT graph of the last plan).                        */
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

#include "deso/runtime/runtime.h"
#include "optimizer/wisdom.h"

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
    TU_ERR(deso_daxpy(11, 1.0, y, 1, x, 1), DESO_ESIZE);
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
    TU_ERR(deso_daxpy(10, 1.0, x, 0, z, 1), DESO_EINVAL);
    TU_ERR(deso_dcopy(10, x, 1, z, -2), DESO_ESIZE);
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

/* File names under /tmp unique to this run: rank 0's process id.        */
static void temp_paths(char *wpath, char *tpath)
{
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(wpath, 64, "/tmp/deso-test-errors-%ld-w.txt", pid);
    snprintf(tpath, 64, "/tmp/deso-test-errors-%ld-t.dot", pid);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        remove(wpath);
        remove(tpath);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Two DAGs, each forced by a scalar read: s = x.x, then y = 2 x + y and
 * t = ||y|| (x = 1 .. 12, y = 0).                                        */
static void two_dags(deso_ctx *ctx)
{
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i + 1;
    deso_vec *x, *y;
    deso_scalar *s, *t;
    TU_OK(deso_vec_from_array(ctx, 12, v, DESO_ALL_RANKS, &x));
    TU_OK(deso_vec_create(ctx, 12, &y));
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    TU_OK(deso_scalar_create(ctx, 0.0, &t));
    TU_OK(deso_ddot(12, x, 1, x, 1, s));
    assert_true(tu_all(tu_get(s) == 650.0));
    TU_OK(deso_daxpy(12, 2.0, x, 1, y, 1));
    TU_OK(deso_dnrm2(12, y, 1, t));
    assert_true(tu_all(tu_srel(tu_get(t), 2.0 * sqrt(650.0)) < 1e-14));
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_vec_destroy(&y));
    TU_OK(deso_scalar_destroy(&s));
    TU_OK(deso_scalar_destroy(&t));
}

/* Rank 0: the whole file, NUL-terminated, or NULL.                        */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 1 << 16;
    char *buf = malloc(cap + 1);
    *len = buf ? fread(buf, 1, cap, f) : 0;
    int full = buf && !feof(f) && fgetc(f) != EOF;
    fclose(f);
    if (buf == NULL || full) {
        free(buf);
        return NULL;
    }
    buf[*len] = '\0';
    return buf;
}

/* The trace is a DOT graph of the last plan (y = 2 x + y, t = ||y||), not
 * of the first: exactly what opt_plan_dot makes of it, one digraph with
 * the last DAG's two nodes.  Rank 0 writes it; every rank agrees.        */
static void expect_trace(const deso_ctx *ctx, const char *tpath)
{
    int ok = 1;
    if (ctx->rank == 0) {
        size_t len = 0, wlen = 0;
        char *got = slurp(tpath, &len), *want = NULL;
        FILE *f = open_memstream(&want, &wlen);
        ok = got != NULL && f != NULL &&
             opt_plan_dot(f, &ctx->last_g, &ctx->last_p, &ctx->params) ==
                 DESO_OK;
        if (f != NULL) fclose(f);
        ok = ok && ctx->last_g.nnodes == 2 && len == wlen &&
             memcmp(got, want, len) == 0;
        int nodes = 0, depth = 0;
        for (const char *c = got ? got : ""; *c; c++) {
            depth += (*c == '{') - (*c == '}');
            nodes += strncmp(c, "[shape=ellipse", 14) == 0;
        }
        ok = ok && strncmp(got, "digraph deso_plan {\n", 20) == 0 &&
             strcmp(got + len - 2, "}\n") == 0 && depth == 0 && nodes == 2 &&
             strstr(got, "n0 daxpy") != NULL &&
             strstr(got, "n1 dnrm2") != NULL && strstr(got, "ddot") == NULL &&
             strstr(got + 1, "digraph") == NULL;
        if (!ok) print_error("trace %s:\n%s\n", tpath, got ? got : "(none)");
        free(got);
        free(want);
    }
    assert_true(tu_all(ok));
}

/* The wisdom file finalize wrote: the format's header, this run's grid
 * and calibration, and the plans of both DAGs (one node: ddot's scalar;
 * two: daxpy's vector of 12, dnrm2's scalar).                           */
static void expect_wisdom(const char *wpath, int P)
{
    int me, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        size_t len = 0;
        char *text = slurp(wpath, &len);
        opt_wisdom w;
        int ignored = 1, one = 0, two = 0;
        ok = text != NULL && strncmp(text, "deso-wisdom 3\n", 14) == 0 &&
             opt_wisdom_parse(text, len, NULL, &w, &ignored) == DESO_OK &&
             ignored == 0;
        if (ok) {
            ok = w.config.P == P && w.config.pr == P && w.config.pc == 1 &&
                 w.config.calibrated && w.config.alpha > 0.0 &&
                 strcmp(w.config.version, DESO__VERSION) == 0;
            for (int k = 0; k < w.nplans; k++) {
                const opt_wisdom_plan *pl = &w.plans[k];
                one += pl->nnodes == 1 && pl->nodes[0].lay.kind == BLAS_SCA;
                two += pl->nnodes == 2 && pl->nodes[0].lay.kind == BLAS_VEC &&
                       pl->nodes[0].lay.n == 12 &&
                       pl->nodes[1].lay.kind == BLAS_SCA;
            }
            ok = ok && w.nplans == 2 && one == 1 && two == 1;
            opt_wisdom_free(&w);
        }
        if (!ok)
            print_error("wisdom %s:\n%s\n", wpath, text ? text : "(none)");
        free(text);
    }
    assert_true(tu_all(ok));
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
    char grid[32], wpath[64], tpath[64];
    snprintf(grid, sizeof grid, "%dx1", P);
    setenv("DESO_GRID", grid, 1);
    temp_paths(wpath, tpath);
    setenv("DESO_WISDOM", wpath, 1);
    setenv("DESO_TRACE", tpath, 1);
    TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_true(tu_all(info.grid_rows == P && info.grid_cols == 1 &&
                       info.mode == DESO_MODE_AFFINE &&
                       strcmp(info.wisdom, wpath) == 0 &&
                       strcmp(info.trace, tpath) == 0));
    /* two new plans: the trace is the second's, the wisdom holds both    */
    deso_stats st;
    deso_stats_reset();
    two_dags(ctx);
    TU_OK(deso_stats_get(&st));
    assert_true(tu_all(st.plans_optimised == 2 && st.plans_replayed == 0));
    expect_trace(ctx, tpath);
    TU_OK(deso_finalize(&ctx));
    expect_wisdom(wpath, P);
    /* the file reads back: a new context replays both plans from it      */
    TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
    deso_stats_reset();
    two_dags(ctx);
    TU_OK(deso_stats_get(&st));
    assert_true(tu_all(st.plans_optimised == 0 && st.plans_replayed == 2));
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
        remove(wpath);
        remove(tpath);
    }
}

/* Every code of deso_errors.h, its name and its message written out here:
 * a code added to the table without its line here, or a message changed,
 * fails.  Names and messages are distinct and specific, and a code
 * outside the table has the fallbacks.  Local, the same on every rank.   */
static void test_error_codes(void **state)
{
    (void)state;
    static const struct {
        deso_err code;
        int value;
        const char *name, *msg;
    } want[] = {
        {DESO_OK, 0, "DESO_OK", "success"},
        {DESO_EINVAL, -1, "DESO_EINVAL", "invalid argument"},
        {DESO_ENULL, -2, "DESO_ENULL", "NULL pointer argument"},
        {DESO_ESIZE, -3, "DESO_ESIZE", "invalid or mismatched size"},
        {DESO_ESINGULAR, -4, "DESO_ESINGULAR",
         "alignment matrix is singular or not unimodular"},
        {DESO_EGRID, -5, "DESO_EGRID",
         "process grid does not match the ranks"},
        {DESO_ENOMEM, -6, "DESO_ENOMEM", "out of memory"},
        {DESO_EOVERFLOW, -7, "DESO_EOVERFLOW", "integer overflow"},
        {DESO_EMPI, -8, "DESO_EMPI", "MPI call failed"},
        {DESO_EMISMATCH, -9, "DESO_EMISMATCH",
         "ranks recorded different call sequences"},
        {DESO_ESTALE, -10, "DESO_ESTALE", "handle used after it was freed"},
        {DESO_ECONTEXT, -11, "DESO_ECONTEXT",
         "handle belongs to another context"},
        {DESO_ENOTSUP, -12, "DESO_ENOTSUP", "not supported"},
        {DESO_EWISDOM, -13, "DESO_EWISDOM", "wisdom file rejected"},
        {DESO_EIO, -14, "DESO_EIO", "input/output error"},
        {DESO_ESTATE, -15, "DESO_ESTATE",
         "call not allowed in the current state"},
        {DESO_EINTERNAL, -16, "DESO_EINTERNAL",
         "internal error (a bug in deso)"},
        {DESO_EUSER, -17, "DESO_EUSER", "a user callback failed"},
    };
    const int nwant = (int)(sizeof want / sizeof want[0]);
    const char *unknown = "unknown deso error code";
    int ok = 1, codes = 0;
    /* every code of the enum, through the header's own table             */
#define TEST_CODE(name, value, msg)                                          \
    do {                                                                     \
        int found = 0;                                                       \
        for (int k = 0; k < nwant; k++) found |= want[k].code == (name);     \
        if (!found) print_error("%s has no line in this test\n", #name);     \
        ok &= found && (int)(name) == (value);                               \
        codes++;                                                             \
    } while (0);
    DESO_ERROR_MAP(TEST_CODE)
#undef TEST_CODE
    ok &= codes == nwant;
    for (int k = 0; k < nwant; k++) {
        const char *name = deso_errname(want[k].code);
        const char *msg = deso_strerror(want[k].code);
        int good = (int)want[k].code == want[k].value &&
                   strcmp(name, want[k].name) == 0 &&
                   strcmp(msg, want[k].msg) == 0 && strcmp(msg, unknown) != 0;
        for (int j = 0; j < k; j++)
            good &= strcmp(name, deso_errname(want[j].code)) != 0 &&
                    strcmp(msg, deso_strerror(want[j].code)) != 0;
        if (!good)
            print_error("code %d: %s \"%s\", expected %s \"%s\"\n",
                        (int)want[k].code, name, msg, want[k].name,
                        want[k].msg);
        ok &= good;
    }
    /* codes outside the table                                             */
    const int bad[] = {1, -18, -1000, 42};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ok &= strcmp(deso_strerror((deso_err)bad[k]), unknown) == 0;
        ok &= strcmp(deso_errname((deso_err)bad[k]), "DESO_E?") == 0;
    }
    assert_true(tu_all(ok));
}

TU_MAIN(cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_spmd_divergence),
        cmocka_unit_test(test_spmd_sizes_and_extra_calls),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_error_codes))
