/* krylov_problem.h: the problems and the command line shared by the
 * BiCGSTAB, GMRES and Lanczos examples (examples/bicgstab.c beside
 * examples/bicgstab_cblas.c, gmres.c beside gmres_cblas.c, lanczos.c
 * beside lanczos_cblas.c).  Header-only, no MPI, no BLAS.
 *
 * BiCGSTAB and GMRES(KRYLOV_RESTART) solve A x = b for the nonsymmetric
 *   a(i,j) = exp((j - i) / n) / (1 + |i-j|),
 * b = A * ones (summed in order j = 0..n-1, so b is bitwise the same
 * wherever it is made), x0 = 0.  A = D^-1 S D with D = diag(exp(i / n))
 * and S cg_problem.h's SPD matrix: its eigenvalues are S's (real, in
 * (0.386, 1 + 2 ln n)), so the iteration is well defined and converges in
 * a few dozen steps, while A itself is far from symmetric (a(i,j) /
 * a(j,i) = e^2 at the corners).
 * Lanczos runs on cg_problem.h's symmetric matrix with two diagonal
 * entries changed, a(0,0) = 0.1 and a(n-1,n-1) = 11, which push one
 * eigenvalue below the rest (about -0.14) and one above (about 11.1): the
 * extreme Ritz values converge in a few dozen steps, so a program and its
 * twin can be compared on them.  Start vector v(i) = 1 + i / n,
 * normalised; no reorthogonalisation.  After k steps the extreme
 * eigenvalues of the k x k tridiagonal matrix (bisection on its Sturm
 * sequence) are the Ritz values printed.
 *
 * PCG (examples/pcg.c beside pcg_cblas.c) solves A x = b for the
 * tridiagonal A = tridiag(-1, d_i, -1) with d_i = 2.02 + 0.3 ((37 i) mod
 * 11) (2.02 .. 5.02), applied matrix-free (krylov_shell_row),
 * preconditioned by Jacobi (x_i / d_i); b = A * ones, x0 = 0.  A is
 * strictly diagonally dominant, so SPD; by Gershgorin D^-1 A's spectrum
 * lies in (1 - 2 / 2.02, 1 + 2 / 2.02), so PCG converges, in more steps
 * than the comparison with the twin needs (at least 8 above 1e-7).
 *
 * GMRES with --breakdown K (1 <= K <= n) solves instead P x = e_0 for
 * the permutation P that shifts the first K unit vectors cyclically (P
 * e_i = e_(i+1 mod K)) and fixes the others: every quantity GMRES forms
 * is 0 or 1 exactly, its residual stays 1 for K - 1 iterations, and the
 * K-th meets w = A v - V h = 0 exactly (||w|| = 0, the exact breakdown
 * of an invariant Krylov space), where x = e_(K-1) solves the system.
 *
 * Options (each program accepts the ones it uses; --grid and --mode only
 * the deso versions):
 *   --n N        order (default 200)
 *   --iters K    iterations (default 50)
 *   --breakdown K  (GMRES) the permutation problem above
 *   --history    one line per iteration: "iter K VALUE [VALUE]" (the
 *                relative residual ||r||/||b||, or the two extreme Ritz
 *                values), for comparing a program with its twin
 *   --grid RxC, --mode none|affine|full   (deso versions)
 * Bad options: one line "PROGRAM: reason" on stderr, exit 2.             */
#ifndef DESO_EXAMPLES_KRYLOV_PROBLEM_H
#define DESO_EXAMPLES_KRYLOV_PROBLEM_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"

static inline double krylov_ns_a(long n, long i, long j)
{
    long d = i > j ? i - j : j - i;
    return exp((double)(j - i) / (double)n) / (1.0 + (double)d);
}

static inline double krylov_sym_a(long n, long i, long j)
{
    if (i == j && i == 0) return 0.1;
    if (i == j && i == n - 1) return 11.0;
    return cg_problem_a(n, i, j);
}

static inline double krylov_start_v(long n, long i)
{
    return 1.0 + (double)i / (double)n;
}

/* PCG's operator: its diagonal, and row i applied to x (all of x).      */
static inline double krylov_shell_d(long n, long i)
{
    (void)n;
    return 2.1 + 1.0 * (double)((37 * i) % 11);
}

static inline double krylov_shell_row(long n, long i, const double *x)
{
    double y = krylov_shell_d(n, i) * x[i];
    if (i > 0) y -= x[i - 1];
    if (i + 1 < n) y -= x[i + 1];
    return y;
}

/* b = A * ones, term by term as krylov_shell_row adds them.              */
static inline double krylov_shell_b(long n, long i)
{
    double y = krylov_shell_d(n, i);
    if (i > 0) y -= 1.0;
    if (i + 1 < n) y -= 1.0;
    return y;
}

static inline double krylov_ns_b(long n, long i)
{
    double s = 0.0;
    for (long j = 0; j < n; j++) s += krylov_ns_a(n, i, j);
    return s;
}

/* GMRES's breakdown problem: the shift of the first k unit vectors.    */
static inline double krylov_shift_a(long k, long i, long j)
{
    if (i < k && j < k) return i == (j + 1) % k ? 1.0 : 0.0;
    return i == j ? 1.0 : 0.0;
}

static inline double krylov_shift_b(long i)
{
    return i == 0 ? 1.0 : 0.0;
}

/* krylov_parse's `accept` bits: the deso versions' --grid and --mode,
 * GMRES's --breakdown.                                                    */
#define KRYLOV_OPT_DESO 1
#define KRYLOV_OPT_BREAKDOWN 2

struct krylov_opts {
    long n, iters;
    long breakdown;          /* GMRES: 0, or K of --breakdown K            */
    int history;
    long grid_r, grid_c;     /* 0 x 0: deso's default grid                 */
    const char *mode;        /* NULL: deso's default mode                  */
};

/* Parses argv; `accept` (KRYLOV_OPT_ bits) adds --grid and --mode, and
 * --breakdown.  Returns 0, or -1 with a one-line reason in err.           */
static inline int krylov_parse(int argc, char **argv, int accept,
                               struct krylov_opts *o, char *err, size_t len)
{
    int deso_opts = (accept & KRYLOV_OPT_DESO) != 0;
    *o = (struct krylov_opts){200, 50, 0, 0, 0, 0, NULL};
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if (strcmp(a, "--history") == 0) {
            o->history = 1;
            continue;
        }
        int grid = deso_opts && strcmp(a, "--grid") == 0;
        int mode = deso_opts && strcmp(a, "--mode") == 0;
        int brk = (accept & KRYLOV_OPT_BREAKDOWN) && strcmp(a, "--breakdown") == 0;
        int num = strcmp(a, "--n") == 0 || strcmp(a, "--iters") == 0;
        if (!grid && !mode && !num && !brk) {
            snprintf(err, len, "unknown option '%s'", a);
            return -1;
        }
        if (k + 1 >= argc) {
            snprintf(err, len, "option %s needs a value", a);
            return -1;
        }
        const char *v = argv[++k];
        char tail;
        if (mode) {
            o->mode = v;
        } else if (grid) {
            if (sscanf(v, "%ldx%ld%c", &o->grid_r, &o->grid_c, &tail) != 2 ||
                o->grid_r < 1 || o->grid_c < 1) {
                snprintf(err, len, "--grid must be RxC with R, C >= 1, got '%s'", v);
                return -1;
            }
        } else if (brk) {
            if (cg_opt_long(v, 1, 100000, &o->breakdown) != 0) {
                snprintf(err, len, "--breakdown must be an integer in 1..100000, got '%s'", v);
                return -1;
            }
        } else if (cg_opt_long(v, 1, 100000, a[2] == 'n' ? &o->n : &o->iters) != 0) {
            snprintf(err, len, "%s must be an integer in 1..100000, got '%s'", a, v);
            return -1;
        }
    }
    if (o->breakdown > o->n) {
        snprintf(err, len, "--breakdown %ld exceeds the order %ld", o->breakdown, o->n);
        return -1;
    }
    return 0;
}

/* Eigenvalues of the symmetric tridiagonal T (diagonal a[0..k), off-
 * diagonal b[0..k-1)) below x: the negative pivots of T - x I.            */
static inline int krylov_sturm(const double *a, const double *b, int k, double x)
{
    int below = 0;
    double q = 1.0;
    for (int i = 0; i < k; i++) {
        double off = i > 0 ? b[i - 1] * b[i - 1] / q : 0.0;
        q = a[i] - x - off;
        if (q == 0.0) q = -1e-300;     /* a zero pivot counts as negative */
        if (q < 0.0) below++;
    }
    return below;
}

/* GMRES's restart length m: the basis has m + 1 columns.                */
#define KRYLOV_RESTART 8

/* GMRES's host side.  H is (m + 1) x m, column-major (leading dimension
 * m + 1), c and s the Givens rotations so far.  Column j of H (h[0 .. j+1])
 * gets rotations 0 .. j-1 applied.                                        */
static inline void krylov_rotate(double *h, const double *c, const double *s,
                                 int j)
{
    for (int i = 0; i < j; i++) {
        double t = c[i] * h[i] + s[i] * h[i + 1];
        h[i + 1] = -s[i] * h[i] + c[i] * h[i + 1];
        h[i] = t;
    }
}

/* y <- R^-1 g for the upper triangle R of H's first k columns (leading
 * dimension ld): GMRES's correction in the basis.                        */
static inline void krylov_backsolve(const double *H, int ld, int k,
                                    const double *g, double *y)
{
    for (int i = k - 1; i >= 0; i--) {
        double t = g[i];
        for (int j = i + 1; j < k; j++) t -= H[i + (size_t)j * ld] * y[j];
        y[i] = t / H[i + (size_t)i * ld];
    }
}

/* The j-th smallest eigenvalue of T (0-based) by bisection inside the
 * Gershgorin interval, to the last bits.                                   */
static inline double krylov_eig(const double *a, const double *b, int k, int j)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < k; i++) {
        double r = (i > 0 ? fabs(b[i - 1]) : 0.0) + (i + 1 < k ? fabs(b[i]) : 0.0);
        lo = fmin(lo, a[i] - r);
        hi = fmax(hi, a[i] + r);
    }
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        if (krylov_sturm(a, b, k, mid) > j) hi = mid;
        else lo = mid;
    }
    return 0.5 * (lo + hi);
}

#endif
