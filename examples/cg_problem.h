/* cg_problem.h: the CG benchmark problem shared by every CG in the project
 * (examples/cg.c, examples/cg_cblas.c, tests/bench/cg_seq.c and
 * tests/bench/cg_pblas.c), plus the common option parser. Header-only, no
 * MPI, no BLAS.  It lives beside the examples so that a copy of examples/
 * builds against an installed deso alone (tests/bench/cg_problem.h
 * forwards here).
 *
 * The problem
 * -----------
 *   A (n x n, dense, symmetric):  a(i,j) = 1 / (1 + |i - j|)      0 <= i,j < n
 *   b = A * ones:                 b(i)   = sum_{j=0}^{n-1} a(i,j), summed in
 *                                          order j = 0, 1, ..., n-1 (so b is
 *                                          bitwise identical wherever it is made)
 *   x0 = 0; the exact solution is x = ones.
 *   Stop when ||r|| / ||b|| < tol (recurrence residual, tested before each
 *   iteration) or after `iters` iterations; tol = 0 runs all of them.
 *   The reported residual is the TRUE one, ||b - A x|| / ||b||, computed
 *   explicitly after the last iteration; "error" is ||x - ones|| / sqrt(n).
 *   --repeat R runs the whole solve R times, each from x0 = 0, inside the
 *   timed loop: a benchmark option.  With tol = 0 a single solve stops only
 *   when r.r is exactly zero, which at small n comes after a few hundred
 *   iterations (r.r passing through the denormal range on the way), long
 *   before a loop lasts long enough to be timed; repeating a short solve
 *   keeps every iteration on ordinary numbers.  The iterations reported
 *   are summed over the R solves (so time_loop / iters stays the time of
 *   one iteration); residual and error are the last solve's.
 *
 * Every element is a function of (i, j) alone, so each rank generates exactly
 * the entries it owns and no global array is ever built on one rank.
 *
 * Why A is symmetric positive definite, and well conditioned
 * ---------------------------------------------------------
 * A is the Toeplitz matrix of c_k = 1/(1+k), k = |i-j|. The sequence c is
 * positive, decreasing to 0 and convex (c_{k-1} - 2c_k + c_{k+1} =
 * 2/(k(k+1)(k+2)) > 0), so by the discrete Polya criterion it is a non-negative
 * combination of triangle sequences (1 - k/m)_+, whose Toeplitz matrices are
 * Fejer kernels, positive semidefinite. Sharper: the eigenvalues of every
 * finite section lie strictly inside the range of the symbol
 *   f(t) = 1 + 2 sum_{k>=1} cos(k t)/(k+1)
 *        = -1 - 2 cos(t) ln(2 sin(t/2)) + (pi - t) sin(t),   0 < t <= pi,
 * whose minimum is f(pi) = 2 ln 2 - 1 = 0.386 > 0 (Grenander-Szego). So A is
 * SPD with lambda_min > 0.386 for every n, and lambda_max <= the largest row
 * sum = 2 H((n+1)/2) - 1 < 1 + 2 ln n (H = harmonic number): cond(A) < 35 at
 * n = 1000 and < 46 at n = 8000, growing only like log n. CG needs a moderate
 * number of iterations: measured 35 (n = 1000) and 42 (n = 8000) to reach
 * ||r||/||b|| < 1e-10. The entries never underflow (min 1/n), so the
 * matrix is genuinely dense and the kernels see no denormals.
 */
#ifndef DESO_BENCH_CG_PROBLEM_H
#define DESO_BENCH_CG_PROBLEM_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest n the benchmarks accept (indices are int in ScaLAPACK). */
#define CG_PROBLEM_MAX_N 1000000L

/* a(i,j), 0-based global indices. */
static inline double cg_problem_a(long n, long i, long j)
{
    (void)n;
    long d = i > j ? i - j : j - i;
    return 1.0 / (1.0 + (double)d);
}

/* b(i) = sum_j a(i,j), in the fixed order j = 0..n-1. */
static inline double cg_problem_b(long n, long i)
{
    double s = 0.0;
    for (long j = 0; j < n; j++)
        s += cg_problem_a(n, i, j);
    return s;
}

/* ---- common options ---------------------------------------------------- */

struct cg_opts {
    long n;      /* --n N        default 2000 */
    long iters;  /* --iters K    default 50 */
    double tol;  /* --tol T      default 0 (run all iterations) */
    long nb;     /* --nb NB      default 64 (pblas only) */
    long grid_r; /* --grid RxC   default 0x0 = most square (pblas only) */
    long grid_c;
    long repeat; /* --repeat R   default 1: the whole solve R times */
    int json;    /* --json */
};

static inline int cg_opt_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Parses argv. pblas_opts != 0 also accepts --nb and --grid.
 * Returns 0 on success, 1 for --help (usage in err), -1 on a bad option
 * (one-line reason in err). */
static inline int cg_parse_opts(int argc, char **argv, int pblas_opts,
                                struct cg_opts *o, char *err, size_t errlen)
{
    o->n = 2000;
    o->iters = 50;
    o->tol = 0.0;
    o->nb = 64;
    o->grid_r = 0;
    o->grid_c = 0;
    o->repeat = 1;
    o->json = 0;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        const char *val = NULL;
        char name[32];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq != NULL) {
            size_t len = (size_t)(eq - a);
            if (len >= sizeof name) {
                snprintf(err, errlen, "unknown option '%s'", a);
                return -1;
            }
            memcpy(name, a, len);
            name[len] = '\0';
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%.31s", a);
        }
        if (strcmp(name, "--json") == 0 && val == NULL) {
            o->json = 1;
            continue;
        }
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            snprintf(err, errlen, "usage: %s [--n N] [--iters K] [--tol T] [--repeat R]%s"
                     " [--json]",
                     argv[0], pblas_opts ? " [--nb NB] [--grid RxC]" : "");
            return 1;
        }
        int known = strcmp(name, "--n") == 0 || strcmp(name, "--iters") == 0 ||
                    strcmp(name, "--tol") == 0 || strcmp(name, "--repeat") == 0 ||
                    (pblas_opts && (strcmp(name, "--nb") == 0 || strcmp(name, "--grid") == 0));
        if (!known) {
            snprintf(err, errlen, "unknown option '%s'", a);
            return -1;
        }
        if (val == NULL) {
            if (k + 1 >= argc) {
                snprintf(err, errlen, "option %s needs a value", name);
                return -1;
            }
            val = argv[++k];
        }
        if (strcmp(name, "--n") == 0) {
            if (cg_opt_long(val, 1, CG_PROBLEM_MAX_N, &o->n) != 0) {
                snprintf(err, errlen, "--n must be an integer in [1, %ld], got '%s'",
                         CG_PROBLEM_MAX_N, val);
                return -1;
            }
        } else if (strcmp(name, "--iters") == 0) {
            if (cg_opt_long(val, 0, 100000000L, &o->iters) != 0) {
                snprintf(err, errlen, "--iters must be an integer >= 0, got '%s'", val);
                return -1;
            }
        } else if (strcmp(name, "--repeat") == 0) {
            if (cg_opt_long(val, 1, 1000000L, &o->repeat) != 0) {
                snprintf(err, errlen, "--repeat must be an integer in [1, 1000000], got '%s'",
                         val);
                return -1;
            }
        } else if (strcmp(name, "--tol") == 0) {
            char *end;
            errno = 0;
            double t = strtod(val, &end);
            if (errno != 0 || end == val || *end != '\0' || !(t >= 0.0) || !isfinite(t)) {
                snprintf(err, errlen, "--tol must be a finite number >= 0, got '%s'", val);
                return -1;
            }
            o->tol = t;
        } else if (strcmp(name, "--nb") == 0) {
            if (cg_opt_long(val, 1, 1000000L, &o->nb) != 0) {
                snprintf(err, errlen, "--nb must be an integer >= 1, got '%s'", val);
                return -1;
            }
        } else { /* --grid RxC */
            char buf[64];
            snprintf(buf, sizeof buf, "%s", val);
            char *x = strchr(buf, 'x');
            if (x == NULL)
                x = strchr(buf, 'X');
            if (x == NULL || strlen(val) >= sizeof buf) {
                snprintf(err, errlen, "--grid must look like RxC (e.g. 2x1), got '%s'", val);
                return -1;
            }
            *x = '\0';
            if (cg_opt_long(buf, 1, 1000000L, &o->grid_r) != 0 ||
                cg_opt_long(x + 1, 1, 1000000L, &o->grid_c) != 0) {
                snprintf(err, errlen, "--grid must look like RxC with R, C >= 1, got '%s'", val);
                return -1;
            }
        }
    }
    return 0;
}

#endif /* DESO_BENCH_CG_PROBLEM_H */
