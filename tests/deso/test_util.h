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

/* The grids a test runs at: the default one, plus 1 x P, plus both 2-D
 * shapes at P = 6.                                                         */
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
        grids[k][0] = 2;
        grids[k++][1] = 1;
    }
    return k;
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

#define TU_MAIN(...)                                                         \
    int main(int argc, char **argv)                                          \
    {                                                                        \
        MPI_Init(&argc, &argv);                                              \
        const struct CMUnitTest tests[] = {__VA_ARGS__};                     \
        int rc = cmocka_run_group_tests(tests, NULL, NULL);                  \
        MPI_Finalize();                                                      \
        return rc;                                                           \
    }

#endif
