/* Shared helpers of the deso MPI tests (header-only).                     */
#ifndef DESO_TEST_UTIL_H
#define DESO_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "deso/deso.h"
#include "tests/serial_util.h"   /* tu_rng, tu_rand, tu_below, tu_fill */

/* Every rank asserts the same thing: one rank failing alone would leave
 * the others waiting in a collective.                                     */
static inline int tu_all(int ok)
{
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return v;
}

#define TU_OK(call)                                                          \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != DESO_OK)                                                   \
            print_error("%s -> %s: %s\n", #call, deso_errname(e_),           \
                        deso_last_error());                                  \
        assert_true(tu_all(e_ == DESO_OK));                                  \
    } while (0)

#define TU_ERR(call, code)                                                   \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != (code))                                                    \
            print_error("%s -> %s, expected %s\n", #call, deso_errname(e_),  \
                        deso_errname(code));                                 \
        assert_true(tu_all(e_ == (code)));                                   \
    } while (0)

/* max |a - b| / max(max |b|, tiny)                                         */
static inline double tu_relerr(const double *a, const double *b, int64_t n)
{
    double d = 0.0, m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]);
        if (e > d || isnan(e)) d = isnan(e) ? INFINITY : e;
        if (fabs(b[i]) > m) m = fabs(b[i]);
    }
    return d / (m > 1e-300 ? m : 1.0);
}

static inline double tu_srel(double a, double b)
{
    double d = fabs(a - b), m = fabs(b);
    return d / (m > 1e-300 ? m : 1.0);
}

static inline int tu_size(void)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}

/* Whether every rank of MPI_COMM_WORLD is on one node (where the remap
 * engine's shared-memory transport is used).  Collective.                */
static inline int tu_one_node(void)
{
    MPI_Comm node;
    int n = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n == tu_size();
}

/* A context with the given grid (0 x 0: default) and block size.          */
static inline deso_ctx *tu_ctx(int pr, int pc, int64_t nb)
{
    deso_options o;
    deso_options_default(&o);
    o.grid_rows = pr;
    o.grid_cols = pc;
    o.nb = nb;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    return ctx;
}

/* The grids a test runs at: the default one (the most square with rows
 * >= columns: 2x1 at P = 2, 2x2 at P = 4), plus the other 1-D orientation
 * 1 x P at P = 2 and 4, and both 2-D shapes at P = 6.                    */
static inline int tu_grids(int grids[][2])
{
    int P = tu_size(), k = 0;
    grids[k][0] = 0;
    grids[k++][1] = 0;
    if (P == 6) {
        grids[k][0] = 2;
        grids[k++][1] = 3;
        grids[k][0] = 3;
        grids[k++][1] = 2;
    } else if (P == 4) {
        grids[k][0] = 1;
        grids[k++][1] = 4;
    } else if (P == 2) {
        grids[k][0] = 1;
        grids[k++][1] = 2;
    }
    return k;
}

/* ---- checks counted in batches ------------------------------------------
 * An all-reduce per check dominates the run time at P > 2 on a loaded
 * 2-core machine, so the computing tests count their checks on each rank
 * and all-reduce the count once per case (tu_case_end, TU_SYNC).  TU_CALL
 * suits every call that cannot leave a rank alone in a collective:
 * recording calls (a rank that failed alone makes the next force point
 * fail on every rank) and collective calls whose errors deso agrees
 * across the ranks.  Each failure is printed at once with the case it
 * happened in.                                                            */

/* The case running, named in every failure message (set by tu_label).   */
static inline char *tu_where(void)
{
    static char where[256];
    return where;
}

static inline void tu_label(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tu_where(), 256, fmt, ap);
    va_end(ap);
}

/* Failures on this rank since the last TU_SYNC.                          */
static inline int *tu_failed(void)
{
    static int failed;
    return &failed;
}

#define TU_CHECK(cond)                                                       \
    do {                                                                     \
        if (!(cond)) {                                                       \
            print_error("%s: line %d: %s\n", tu_where(), __LINE__, #cond);  \
            ++*tu_failed();                                                  \
        }                                                                    \
    } while (0)

#define TU_CALL(call)                                                        \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != DESO_OK) {                                                 \
            print_error("%s: %s -> %s: %s\n", tu_where(), #call,            \
                        deso_errname(e_), deso_last_error());               \
            ++*tu_failed();                                                  \
        }                                                                    \
    } while (0)

/* The call returns `code` (a failure counted as TU_CALL's).             */
#define TU_CALL_ERR(call, code)                                              \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != (code)) {                                                  \
            print_error("%s: %s -> %s, expected %s\n", tu_where(), #call,   \
                        deso_errname(e_), deso_errname(code));              \
            ++*tu_failed();                                                  \
        }                                                                    \
    } while (0)

/* Cases that failed since the last TU_SYNC (the same count on every rank). */
static inline int *tu_failed_cases(void)
{
    static int failed;
    return &failed;
}

/* Ends one case of a walk: a failure counted on any rank fails the case on
 * every rank, and the walk goes on, so that the messages name every case
 * that fails (a fault of one optimiser mode shows as that mode's); the
 * TU_SYNC after the walk then fails the test.                             */
static inline void tu_case_end(void)
{
    int f = *tu_failed();
    *tu_failed() = 0;
    if (!tu_all(f == 0)) ++*tu_failed_cases();
}

/* Every rank fails together when any rank counted a failure.             */
#define TU_SYNC()                                                            \
    do {                                                                     \
        int f_ = *tu_failed() + *tu_failed_cases();                          \
        *tu_failed() = 0;                                                    \
        *tu_failed_cases() = 0;                                              \
        assert_true(tu_all(f_ == 0));                                        \
    } while (0)

/* ---- optimiser modes and the cases a test walks -------------------------
 * Every computing test runs in each optimiser mode and compares each with
 * sequential CBLAS, never one mode with another (a fault the modes share
 * would pass).  The fast group (make check, deso-np: P <= 4) cannot walk
 * every combination of mode, grid and block size in its time budget; the
 * long group (deso-np-long: P = 6) does.                                  */
#define TU_NMODES 3

static inline deso_mode tu_mode(int k)
{
    static const deso_mode modes[TU_NMODES] = {
        DESO_MODE_NONE, DESO_MODE_AFFINE, DESO_MODE_FULL};
    return modes[k];
}

/* A context in `mode` with the given grid (0 x 0: default), block size,
 * memory budget (0: none) and directory for local array files (NULL:
 * the default).                                                          */
static inline deso_ctx *tu_ctx_budget(deso_mode mode, int pr, int pc,
                                      int64_t nb, int64_t limit,
                                      const char *dir)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = mode;
    o.grid_rows = pr;
    o.grid_cols = pc;
    o.nb = nb;
    o.mem_limit = limit;
    o.ooc_dir = dir;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    return ctx;
}

/* A context in `mode` with the given grid (0 x 0: default) and block size. */
static inline deso_ctx *tu_ctx_mode(deso_mode mode, int pr, int pc,
                                    int64_t nb)
{
    return tu_ctx_budget(mode, pr, pc, nb, 0, NULL);
}

/* One CG iteration as a solver writes it, recorded without a force: q =
 * A p, alpha = rr / p.q, x += alpha p, r -= alpha q, rrnew = r.r, beta =
 * rrnew / rr, p = r + beta p, rr = rrnew (alpha is negated in place for
 * the r update).  The first error, later calls skipped.                  */
static inline deso_err tu_cg_record(int64_t n, deso_mat *A, deso_vec *x,
                                    deso_vec *r, deso_vec *p, deso_vec *q,
                                    deso_scalar *rr, deso_scalar *rrnew,
                                    deso_scalar *pq, deso_scalar *alpha,
                                    deso_scalar *beta)
{
    deso_err e = deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, p,
                            1, 0.0, q, 1);
    if (e == DESO_OK) e = deso_ddot(n, p, 1, q, 1, pq);
    if (e == DESO_OK) e = deso_sdiv(alpha, rr, pq);
    if (e == DESO_OK) e = deso_daxpy(n, alpha, p, 1, x, 1);
    if (e == DESO_OK) e = deso_sneg(alpha, alpha);
    if (e == DESO_OK) e = deso_daxpy(n, alpha, q, 1, r, 1);
    if (e == DESO_OK) e = deso_ddot(n, r, 1, r, 1, rrnew);
    if (e == DESO_OK) e = deso_sdiv(beta, rrnew, rr);
    if (e == DESO_OK) e = deso_dscal(n, beta, p, 1);
    if (e == DESO_OK) e = deso_daxpy(n, 1.0, r, 1, p, 1);
    if (e == DESO_OK) e = deso_sset(rr, rrnew);
    return e;
}

/* Whether this run walks every combination: the long group runs the
 * tests at P = 6 (their deso-np-long line).                               */
static inline int tu_long(void)
{
    return tu_size() >= 5;
}

typedef struct tu_case {
    deso_mode mode;
    int pr, pc;          /* 0 x 0: the default grid                          */
    int64_t nb;
} tu_case;

#define TU_MAX_CASES 64

/* The default grid's rows (deso.h: the most square grid, rows >= columns:
 * 2x1 at P = 2, 2x2 at P = 4, 3x2 at P = 6).                              */
static inline int tu_default_rows(void)
{
    int P = tu_size(), cols = 1;
    for (int c = 1; c * c <= P; c++)
        if (P % c == 0) cols = c;
    return P / cols;
}

/* The cases of a test: every mode on every grid of tu_grids, with block
 * sizes from nbs[0 .. nnb) (nnb <= 4).  Every block size meets every mode
 * on 2-D grids (the fast group's is 2x2 at P = 4) and, in the long group,
 * on every grid.  On the fast group's 1-D grids each mode takes one block
 * size, in turn from an offset of P, so that its runs at P = 1 .. 4
 * together still pair every mode with every block size on a 1-D grid.  A
 * grid tu_grids lists explicitly that equals the default one (3x2 at
 * P = 6) is walked once.  Returns the number of cases.                    */
static inline int tu_cases(const int64_t *nbs, int nnb, tu_case *out)
{
    int grids[4][2], P = tu_size(), rows = tu_default_rows(), n = 0;
    int ng = tu_grids(grids);
    for (int gi = 0, g = 0; gi < ng; gi++) {
        if (grids[gi][0] == rows && grids[gi][1] == P / rows) continue;
        int r = grids[gi][0] > 0 ? grids[gi][0] : rows;
        int all = tu_long() || (r > 1 && r < P);
        for (int m = 0; m < TU_NMODES; m++)
            for (int b = 0; b < nnb; b++) {
                if (!all && b != (P + g + m) % nnb) continue;
                out[n++] = (tu_case){tu_mode(m), grids[gi][0],
                                     grids[gi][1], nbs[b]};
            }
        g++;
    }
    return n;
}

/* The case's context; the default grid must be the one tu_cases assumed
 * (at P = 4 it is the fast group's only 2-D grid).                       */
static inline deso_ctx *tu_case_ctx(const tu_case *c)
{
    deso_ctx *ctx = tu_ctx_mode(c->mode, c->pr, c->pc, c->nb);
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    int rows = c->pr > 0 ? c->pr : tu_default_rows();
    assert_true(tu_all(info.mode == c->mode && info.grid_rows == rows &&
                       info.grid_cols == tu_size() / rows));
    return ctx;
}

/* "mode affine, grid 2x2, nb 3" (the default grid as "default").        */
static inline const char *tu_case_name(const tu_case *c)
{
    static char name[96];
    char grid[24] = "default";
    if (c->pr > 0) snprintf(grid, sizeof grid, "%dx%d", c->pr, c->pc);
    if (c->nb == DESO_NB_BLOCK)
        snprintf(name, sizeof name, "mode %s, grid %s, block folding",
                 deso_mode_name(c->mode), grid);
    else
        snprintf(name, sizeof name, "mode %s, grid %s, nb %lld",
                 deso_mode_name(c->mode), grid, (long long)c->nb);
    return name;
}

/* One case of a walk: size n, variant k, a seed of its own.            */
typedef void (*tu_walk_fn)(deso_ctx *ctx, int64_t n, int k, uint64_t seed);

/* Runs f on every case of tu_cases (block sizes 2, 3 and block folding)
 * for each size of sizes[0 .. nsizes) and variant k < nvar: every
 * variant in the long group; in the fast group one variant per case and
 * size, in turn, so that its cases together still meet every variant.
 * Seeds from seed0.  Failures per case (tu_case_end), then TU_SYNC.     */
static inline void tu_walk(const int64_t *sizes, int nsizes, int nvar,
                           uint64_t seed0, tu_walk_fn f, const char *what)
{
    const int64_t nbs[] = {2, 3, DESO_NB_BLOCK};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 3, cases);
    for (int ci = 0; ci < nc; ci++) {
        deso_ctx *ctx = tu_case_ctx(&cases[ci]);
        for (int si = 0; si < nsizes; si++)
            for (int k = 0; k < nvar; k++) {
                if (!tu_long() && k != (ci + si) % nvar) continue;
                tu_label("%s, %s, n %lld, variant %d", what,
                         tu_case_name(&cases[ci]), (long long)sizes[si], k);
                f(ctx, sizes[si], k, seed0 + (uint64_t)(si * 31 + ci * 7 + k));
            }
        TU_CALL(deso_finalize(&ctx));
        tu_case_end();
    }
    TU_SYNC();
}

static inline void tu_gather(const deso_vec *x, double *buf)
{
    TU_OK(deso_vec_gather(x, buf, DESO_ALL_RANKS));
}

static inline double tu_get(const deso_scalar *s)
{
    double v = NAN;
    TU_OK(deso_scalar_get(s, &v));
    return v;
}

/* tu_gather and tu_get with the failure counted for the next TU_SYNC.   */
static inline void tu_fetch(const deso_vec *x, double *buf)
{
    TU_CALL(deso_vec_gather(x, buf, DESO_ALL_RANKS));
}

static inline double tu_value(const deso_scalar *s)
{
    double v = NAN;
    TU_CALL(deso_scalar_get(s, &v));
    return v;
}

/* A vector of n elements from the global array v (a failure counted as
 * TU_CALL's).  Collective.                                               */
static inline deso_vec *tu_vec_of(deso_ctx *ctx, int64_t n, const double *v)
{
    deso_vec *x = NULL;
    TU_CALL(deso_vec_from_array(ctx, n, v, DESO_ALL_RANKS, &x));
    return x;
}

/* x's elements within relative error tol of want[0 .. n) (counted as
 * TU_CHECK's).  Collective.  Force point.                                */
static inline void tu_expect_vec(const deso_vec *x, const double *want,
                                 int64_t n, double tol)
{
    double *g = calloc((size_t)(n > 0 ? n : 1), sizeof *g);
    tu_fetch(x, g);
    TU_CHECK(g != NULL && tu_relerr(g, want, n) < tol);
    free(g);
}

/* A scratch directory made by rank 0 (mkdtemp under $TMPDIR or /tmp,
 * named after `name`), its path on every rank in dir; 0, or -1 when it
 * could not be made.  Collective.                                         */
static inline int tu_scratch_dir(const char *name, char *dir, size_t len)
{
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0 && (tu_temp_template(name, dir, len) != 0 ||
                    mkdtemp(dir) == NULL))
        dir[0] = '\0';
    MPI_Bcast(dir, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    return dir[0] == '\0' ? -1 : 0;
}

/* The scratch directory removed (it must be empty by then).  Collective. */
static inline void tu_scratch_done(const char *dir)
{
    int me = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) rmdir(dir);
}

#define TU_MAIN(...) TU_MAIN_SETUP(NULL, __VA_ARGS__)

/* TU_MAIN with a setup run once on every rank before the tests.          */
#define TU_MAIN_SETUP(setup, ...)                                            \
    int main(int argc, char **argv)                                          \
    {                                                                        \
        MPI_Init(&argc, &argv);                                              \
        const struct CMUnitTest tests[] = {__VA_ARGS__};                     \
        int rc = cmocka_run_group_tests(tests, setup, NULL);                 \
        MPI_Finalize();                                                      \
        return rc;                                                           \
    }

#endif
