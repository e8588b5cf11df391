/* deso-cg: conjugate gradient through deso, the same algorithm as
 * examples/cg_cblas.c with deso handles in place of arrays (diff them: only
 * declarations and call names differ, as far as C allows).
 *
 *   mpiexec.mpich -n P deso-cg [--n N] [--iters K] [--tol T] [--repeat R]
 *                        [--mode none|affine|full]
 *                        [--grid RxC] [--nb NB] [--json] [--verbose]
 *                        [--verbose-every K] [--history]
 *                        [--matrix FILE.mtx [--dense]]
 *                        [--gen lap2d:G|lap3d:G|lap2d-perm:G]
 *                        [--precond none|jacobi|ssor|bjacobi] [--dot FILE.dot]
 *                        [--mem-limit SIZE] [--ooc-dir DIR]
 *                        [--partition auto|block|ntg] [--read-rate]
 *
 * --mem-limit and --ooc-dir set DESO_MEM_LIMIT and DESO_OOC_DIR (deso.h's
 * deso_options: a matrix over the budget is streamed from a local array
 * file; the jacobi and ssor preconditioners need it in core); --partition
 * sets DESO_PARTITION (how a sparse matrix's rows are placed: contiguous
 * blocks, the trace-graph partition, or the cheaper of the two).
 * --read-rate (an out-of-core dense matrix only): after the solve, the
 * disk's rate on the matrix's own local array files (deso_mat_read_rate),
 * the JSON's "read_rate" in bytes per second (0 without the option), the
 * reference for the streamed rate bytes_io_read / time_loop.
 * Problem (cg_problem.h): a(i,j) = 1/(1+|i-j|) generated where
 * it lives (no rank ever holds the whole matrix), b = A * ones, x0 = 0;
 * or --matrix: a square real Matrix Market file, b = A * ones computed
 * by deso.  A coordinate file is read as a sparse matrix (each rank
 * streams it and keeps its rows; deso_dusmv is the product), an array
 * file, or any file with --dense, as a dense one (deso_mat_from_mtx,
 * deso_dgemv); --gen makes a sparse Laplacian where its rows live
 * (deso_spmat_from_gen; sparse_problem.h describes them).  Either way the
 * exact solution is ones, and "error" is ||x - ones|| / sqrt(n).
 * Preconditioned CG (z = M^-1 r, rho = r.z, p = z + beta p): jacobi M = D
 * (D^-1 once by deso_dvrecip, then z = D^-1 r with deso_dvmul); ssor
 * (dense only; symmetric Gauss-Seidel, omega = 1) M = (D+L) D^-1 (D+U),
 * z = (D+U)^-1 D (D+L)^-1 r: two deso_dtrsv on A itself per iteration,
 * which the optimiser may run on A's folding or after a cyclic remap of A;
 * bjacobi (sparse only): block Jacobi, the same symmetric Gauss-Seidel
 * sweep on each rank's diagonal block of rows, a user operator on the
 * matrix's rows (cg_sparse.h says why).
 * Stops when ||r||/||b|| < T, or when r.r is exactly zero (T = 0 runs all
 * K iterations unless that comes first); the residual reported is the
 * true ||b - A x|| / ||b|| computed after the last iteration.  --repeat R
 * solves R times, each from x0 = 0, inside the timed loop (cg_problem.h):
 * iters then counts the iterations of all R solves.  A run with T > 0 that does not reach it prints "deso-cg: did
 * not reach tol ..." on rank 0 (stderr) and still exits 0; --json reports
 * "converged" (true when T = 0).  --verbose prints the recurrence residual
 * every --verbose-every iterations (default 10); --history prints it at
 * every iteration to the last digit ("iter K RESIDUAL" on rank 0, before
 * the JSON line), as deso-cg-csr does.  --dot writes the DOT of
 * the optimised plan of the iteration.  Prints paper 003's Table 1
 * categories; --json prints one line on rank 0 (bytes and messages summed
 * over ranks, the statistics' times of rank 0, and time_loop: the solver's
 * wall time from a barrier to a barrier, the slowest rank's, the one time
 * comparable with the anchors' time_loop).  The JSON line also reports
 * each rank's peak resident memory (getrusage's ru_maxrss, taken by each
 * rank itself after the solve, so that no launcher or wrapper stands
 * between the figure and the rank) and the bound an out-of-core run must
 * stay within: the rank's memory budget, plus its vectors (every vector
 * this program makes, whole, in two layouts: at most what they hold),
 * plus 64 MiB for the program, MPI and the BLAS.  It says whether the
 * matrix was sparse, its entries (n^2 when dense) and, for a sparse one,
 * the partition setting its rows were placed under ("auto", "block" or
 * "ntg"; "none" when dense) and where its products ran ("block" or "ntg":
 * what auto chose), and the cost model's calibration (alpha, beta: the
 * plans depend on it, so that a count says which it was made under).
 * Bad options: one line on stderr, exit 2.                              */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "deso.h"

#include "cg_problem.h"
#include "cg_sparse.h"

static int rank0;
static deso_ctx *ctx;

/* The context's error handler once the problem is loaded: any failing
 * deso call ends the run with one line from rank 0 and exit code 1.      */
static void fail(deso_ctx *c, deso_err e, const char *fn, const char *msg,
                 void *arg)
{
    (void)c;
    (void)arg;
    if (rank0)
        fprintf(stderr, "deso-cg: %s: %s (%s)\n", fn, deso_strerror(e), msg);
    deso_finalize(&ctx);
    MPI_Finalize();
    exit(1);
}

static double a_fn(int64_t i, int64_t j, void *arg)
{
    return cg_problem_a(*(const long *)arg, (long)i, (long)j);
}

static double one_fn(int64_t i, void *arg)
{
    (void)i;
    (void)arg;
    return 1.0;
}

static const char *const pc_names[] = {"none", "jacobi", "ssor", "bjacobi"};

static double b_fn(int64_t i, void *arg)
{
    return cg_problem_b(*(const long *)arg, (long)i);
}

enum { PC_NONE, PC_JACOBI, PC_SSOR, PC_BJACOBI };

struct own_opts {
    deso_mode mode;
    int verbose;
    long every;             /* --verbose-every                             */
    const char *matrix;     /* --matrix                                    */
    int precond;            /* --precond                                   */
    const char *dot;        /* --dot                                       */
    const char *gen;        /* --gen                                       */
    int dense;              /* --dense                                     */
    int history;            /* --history                                   */
    int read_rate;          /* --read-rate                                 */
};

static const char *opt_value(int argc, char **argv, int *k, const char *name,
                             int *missing);

/* --mem-limit SIZE, --ooc-dir DIR and --partition P: the library's own
 * variables, so that it parses and checks them (one message on a bad
 * value).                                                               */
static int library_opt(int argc, char **argv, int *k, int *missing)
{
    static const char *const names[][2] = {
        {"--mem-limit", "DESO_MEM_LIMIT"}, {"--ooc-dir", "DESO_OOC_DIR"},
        {"--partition", "DESO_PARTITION"}};
    for (int i = 0; i < 3; i++) {
        const char *val = opt_value(argc, argv, k, names[i][0], missing);
        if (val != NULL) return setenv(names[i][1], val, 1) == 0 ? 1 : -1;
    }
    return 0;
}

/* The value of option `name` at argv[*k] ("--name V" or "--name=V"), or
 * NULL when argv[*k] is not that option; *k moves past it.                */
static const char *opt_value(int argc, char **argv, int *k, const char *name,
                             int *missing)
{
    const char *a = argv[*k];
    size_t len = strlen(name);
    if (strncmp(a, name, len) != 0 || (a[len] != '\0' && a[len] != '='))
        return NULL;
    if (a[len] == '=') {
        *k += 1;
        return a + len + 1;
    }
    if (*k + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    *k += 2;
    return argv[*k - 1];
}

/* Splits off the options cg_problem.h's parser does not know.            */
static int own_opts(int *argc, char **argv, struct own_opts *oo, char *err,
                    size_t errlen)
{
    int k = 1, out = 1, missing = 0;
    deso_mode *mode = &oo->mode;
    while (k < *argc) {
        const char *a = argv[k], *val;
        int *flag = strcmp(a, "--verbose") == 0   ? &oo->verbose
                    : strcmp(a, "--dense") == 0   ? &oo->dense
                    : strcmp(a, "--history") == 0 ? &oo->history
                    : strcmp(a, "--read-rate") == 0 ? &oo->read_rate
                                                    : NULL;
        if (flag != NULL) {
            *flag = 1;
            k++;
            continue;
        }
        if ((val = opt_value(*argc, argv, &k, "--gen", &missing)) != NULL) {
            oo->gen = val;
            continue;
        }
        if ((val = opt_value(*argc, argv, &k, "--matrix", &missing)) != NULL) {
            oo->matrix = val;
            continue;
        }
        int mem = library_opt(*argc, argv, &k, &missing);
        if (mem < 0) {
            snprintf(err, errlen, "could not set %s", a);
            return -1;
        }
        if (mem > 0) continue;
        if ((val = opt_value(*argc, argv, &k, "--dot", &missing)) != NULL) {
            oo->dot = val;
            continue;
        }
        if ((val = opt_value(*argc, argv, &k, "--verbose-every", &missing)) != NULL) {
            if (cg_opt_long(val, 1, 100000000L, &oo->every) != 0) {
                snprintf(err, errlen, "--verbose-every must be an integer >= 1, got '%s'", val);
                return -1;
            }
            oo->verbose = 1;
            continue;
        }
        if ((val = opt_value(*argc, argv, &k, "--precond", &missing)) != NULL) {
            if (strcmp(val, "none") == 0) oo->precond = PC_NONE;
            else if (strcmp(val, "jacobi") == 0) oo->precond = PC_JACOBI;
            else if (strcmp(val, "ssor") == 0) oo->precond = PC_SSOR;
            else if (strcmp(val, "bjacobi") == 0) oo->precond = PC_BJACOBI;
            else {
                snprintf(err, errlen, "--precond must be none, jacobi, ssor or "
                         "bjacobi, got '%s'", val);
                return -1;
            }
            continue;
        }
        if (missing) {
            snprintf(err, errlen, "option %s needs a value", a);
            return -1;
        }
        if (strncmp(a, "--mode", 6) == 0 && (a[6] == '\0' || a[6] == '=')) {
            const char *v = a[6] == '=' ? a + 7 : (k + 1 < *argc ? argv[k + 1] : NULL);
            if (v == NULL) {
                snprintf(err, errlen, "option --mode needs a value");
                return -1;
            }
            if (strcmp(v, "none") == 0) *mode = DESO_MODE_NONE;
            else if (strcmp(v, "affine") == 0) *mode = DESO_MODE_AFFINE;
            else if (strcmp(v, "full") == 0) *mode = DESO_MODE_FULL;
            else {
                snprintf(err, errlen, "--mode must be none, affine or full, got '%s'", v);
                return -1;
            }
            k += a[6] == '=' ? 1 : 2;
            continue;
        }
        argv[out++] = argv[k++];
    }
    *argc = out;
    return 0;
}

/* Whether path is a Matrix Market coordinate file, by its banner (read on
 * rank 0, so that every rank takes the same path); a file that cannot be
 * read is not, and the dense reader then says what is wrong with it.    */
static int mtx_is_coordinate(const char *path)
{
    int coo = 0;
    if (rank0) {
        char line[256] = "", obj[32], fmt[32];
        FILE *f = fopen(path, "r");
        if (f != NULL && fgets(line, sizeof line, f) != NULL &&
            sscanf(line, "%%%%MatrixMarket %31s %31s", obj, fmt) == 2)
            coo = strcasecmp(fmt, "coordinate") == 0;
        if (f != NULL) fclose(f);
    }
    MPI_Bcast(&coo, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return coo;
}

/* Options that contradict each other (or the matrix's kind): one reason. */
static int check_combination(const struct own_opts *oo, int sparse, char *err,
                             size_t errlen)
{
    if (oo->gen != NULL && oo->matrix != NULL)
        snprintf(err, errlen, "--gen and --matrix: give one of them");
    else if (oo->dense && oo->matrix == NULL)
        snprintf(err, errlen, "--dense needs --matrix (a generated --gen "
                 "matrix is sparse)");
    else if (sparse && oo->precond == PC_SSOR)
        snprintf(err, errlen, "--precond ssor needs a dense matrix (for a "
                 "sparse one: bjacobi; or --dense with --matrix)");
    else if (sparse && oo->read_rate)
        snprintf(err, errlen, "--read-rate needs a dense matrix (out of "
                 "core: --mem-limit)");
    else if (!sparse && oo->precond == PC_BJACOBI)
        snprintf(err, errlen, "--precond bjacobi needs a sparse matrix "
                 "(--gen, or a coordinate --matrix without --dense)");
    else
        return 0;
    return -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    rank0 = me == 0;

    struct cg_opts o;
    char msg[256];
    struct own_opts oo = {DESO_MODE_DEFAULT, 0, 10, NULL, PC_NONE, NULL,
                          NULL, 0, 0, 0};
    int rc = own_opts(&argc, argv, &oo, msg, sizeof msg);
    deso_mode mode = oo.mode;
    int verbose = oo.verbose;
    if (rc == 0) rc = cg_parse_opts(argc, argv, 1, &o, msg, sizeof msg);
    /* sparse: a generated matrix, or a coordinate file unless --dense      */
    int sparse = oo.gen != NULL ||
                 (rc == 0 && oo.matrix != NULL && !oo.dense &&
                  mtx_is_coordinate(oo.matrix));
    if (rc == 0) rc = check_combination(&oo, sparse, msg, sizeof msg);
    if (rc == 1 && rank0)
        printf("%s [--mode none|affine|full] [--verbose] [--verbose-every K]\n"
               "    [--history] [--matrix FILE.mtx [--dense]]\n"
               "    [--gen lap2d:G|lap3d:G|lap2d-perm:G]\n"
               "    [--precond none|jacobi|ssor|bjacobi] [--dot FILE.dot]\n"
               "    [--mem-limit SIZE] [--ooc-dir DIR] [--partition auto|block|ntg]\n"
               "    [--read-rate]\n",
               msg);
    if (rc < 0 && rank0) fprintf(stderr, "deso-cg: %s\n", msg);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    deso_options opt;
    deso_options_default(&opt);
    opt.mode = mode;
    opt.grid_rows = (int)o.grid_r;
    opt.grid_cols = (int)o.grid_c;
    opt.nb = o.nb;
    /* the DOT of the iteration's plan: later plans (the true residual's)
     * would overwrite it, so the runtime writes beside it and the file is
     * taken once the iterations are done                                   */
    char dotpart[4096];
    if (oo.dot != NULL) {
        snprintf(dotpart, sizeof dotpart, "%s.partial", oo.dot);
        opt.trace = dotpart;
    }
    deso_err e = deso_init(MPI_COMM_WORLD, &opt, &ctx);
    if (e != DESO_OK) {
        if (rank0) fprintf(stderr, "deso-cg: %s\n", deso_last_error());
        MPI_Finalize();
        return 2;
    }
    int64_t n = o.n;
    deso_mat *A = NULL;
    /* a sparse matrix: S and the rank's rows (cg_sparse.h); A stays NULL.
     * Where its products run is deso's choice at the first force (the
     * partition setting); nothing below depends on which rows a rank
     * holds.                                                            */
    struct cg_sparse sp = {0};
    deso_spmat *S = NULL;
    deso_vec *b, *x, *r, *p, *q, *t, *z, *d = NULL, *ones;
    if (oo.matrix != NULL || sparse) {
        int64_t m = 0;
        if (sparse) {
            e = cg_sparse_load(ctx, oo.gen, oo.matrix,
                               oo.precond != PC_NONE, &sp);
            S = sp.A;
            n = sp.n;
        } else {
            e = deso_mat_from_mtx(ctx, oo.matrix, &A);
            if (e == DESO_OK) e = deso_mat_shape(A, &m, &n);
            if (e == DESO_OK && (m != n || n < 1))
                e = DESO_ESIZE;
        }
        if (e != DESO_OK) {
            if (rank0) {
                /* made, but not square: else the reader's own reason     */
                if (e == DESO_ESIZE && (S != NULL || A != NULL))
                    fprintf(stderr, "deso-cg: %s: CG needs a square, non-empty matrix\n",
                            oo.matrix != NULL ? oo.matrix : oo.gen);
                else
                    fprintf(stderr, "deso-cg: %s\n", deso_last_error());
            }
            sp_rows_free(&sp.rows);
            deso_finalize(&ctx);
            MPI_Finalize();
            return 2;
        }
    }
    deso_set_error_handler(ctx, fail, NULL);
    deso_info info;
    deso_get_info(ctx, &info);
    static const char *const partition_names[] = {"default", "auto", "block",
                                                  "ntg"};
    const char *partition = partition_names[info.partition];
    if (oo.matrix != NULL || S != NULL) {
        deso_vec_create(ctx, n, &b);
    } else {
        deso_mat_from_fn(ctx, n, n, a_fn, &o.n, &A);
        deso_vec_from_fn(ctx, n, b_fn, &o.n, &b);
    }
    deso_vec_from_fn(ctx, n, one_fn, NULL, &ones);
    if (S != NULL)           /* b = A * ones                               */
        deso_dusmv(ctx, DESO_NO_TRANS, 1.0, S, ones, 0.0, b);
    else if (oo.matrix != NULL)
        deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, ones, 1, 0.0, b, 1);
    deso_op *bj = NULL;      /* bjacobi: the sweep on the rank's block      */
    if (oo.precond == PC_BJACOBI)
        deso_op_create_spmat(ctx, cg_sparse_bjacobi_fn, &sp.rows, S, &bj);
    if (oo.precond == PC_JACOBI || oo.precond == PC_SSOR) {
        deso_vec_create(ctx, n, &d);
        if (S != NULL) {     /* D by the diagonal operator, from the rows   */
            deso_op *dg;
            deso_op_create_spmat(ctx, cg_sparse_diag_fn, &sp.rows, S, &dg);
            deso_op_apply(dg, ones, d);
            deso_op_destroy(&dg);
        } else {
            deso_mat_diag(A, d);   /* D, computed once                      */
        }
    }
    if (oo.precond == PC_JACOBI)     /* d <- D^-1, computed once, lazily    */
        deso_dvrecip(n, d, 1, d, 1);
    deso_vec_create(ctx, n, &x);
    deso_vec_create(ctx, n, &r);
    deso_vec_create(ctx, n, &p);
    deso_vec_create(ctx, n, &q);
    deso_vec_create(ctx, n, &t);
    if (oo.precond != PC_NONE) deso_vec_create(ctx, n, &z);
    else z = r;   /* no preconditioner: z = r, rho = r.r                    */
    deso_scalar *rnorm;
    deso_scalar_create(ctx, 0.0, &rnorm);
    deso_scalar *rr, *rrnew, *pq, *alpha, *nalpha, *beta, *bnorm, *tnorm;
    deso_scalar_create(ctx, 0.0, &rr);
    deso_scalar_create(ctx, 0.0, &rrnew);
    deso_scalar_create(ctx, 0.0, &pq);
    deso_scalar_create(ctx, 0.0, &alpha);
    deso_scalar_create(ctx, 0.0, &nalpha);
    deso_scalar_create(ctx, 0.0, &beta);
    deso_scalar_create(ctx, 0.0, &bnorm);
    deso_scalar_create(ctx, 0.0, &tnorm);
    deso_flush(ctx);
    /* time_loop: the solver's wall time measured as the anchors measure it
     * (tests/bench/cg_pblas.c): from a barrier before the first solver call
     * to a barrier after the final flush, the slowest rank's.  time_total
     * is rank 0's own clock since the reset, with no barrier at the end.   */
    MPI_Barrier(MPI_COMM_WORLD);
    deso_stats_reset();
    double loop_start = MPI_Wtime();

/* z <- M^-1 r                                                               */
#define PRECONDITION()                                                       \
    do {                                                                     \
        if (oo.precond == PC_BJACOBI) deso_op_apply(bj, r, z);               \
        else if (oo.precond != PC_NONE) deso_dcopy(n, r, 1, z, 1);           \
        if (oo.precond == PC_JACOBI) deso_dvmul(n, d, 1, z, 1);              \
        if (oo.precond == PC_SSOR) {                                         \
            deso_dtrsv(DESO_COL_MAJOR, DESO_LOWER, DESO_NO_TRANS, DESO_NON_UNIT, n, A, n, z, 1); \
            deso_dvmul(n, d, 1, z, 1);                                       \
            deso_dtrsv(DESO_COL_MAJOR, DESO_UPPER, DESO_NO_TRANS, DESO_NON_UNIT, n, A, n, z, 1); \
        }                                                                    \
        if (oo.precond != PC_NONE) deso_dnrm2(n, r, 1, rnorm);               \
    } while (0)

    long done = 0, iters_run = 0;   /* this solve's, all solves'          */
    double relres = 1.0, bnormv = 0.0;
    int converged = o.tol <= 0.0;
    /* --repeat: the whole solve again from x0 = 0 (cg_problem.h)           */
    for (long solve = 0; solve < o.repeat; solve++) {
        if (solve > 0) deso_dscal(n, 0.0, x, 1);
        deso_dcopy(n, b, 1, r, 1);
        PRECONDITION();
        deso_dcopy(n, z, 1, p, 1);
        deso_ddot(n, r, 1, z, 1, rr);
        deso_dnrm2(n, b, 1, bnorm);
        deso_scalar_get(bnorm, &bnormv);
        done = 0;
        for (;;) {
            double rrv, rn;
            deso_scalar_get(rr, &rrv);
            if (oo.precond != PC_NONE) deso_scalar_get(rnorm, &rn);
            else rn = sqrt(rrv);
            relres = rn / bnormv;
            if (verbose && rank0 && done % oo.every == 0)
                printf("deso-cg: iteration %ld residual %.3e\n", done, relres);
            if (oo.history && rank0) printf("iter %ld %.17g\n", done, relres);
            if (rn == 0.0 || (o.tol > 0.0 && relres < o.tol)) {
                converged = 1;
                break;
            }
            if (done >= o.iters) break;
            if (S != NULL) deso_dusmv(ctx, DESO_NO_TRANS, 1.0, S, p, 0.0, q);
            else deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, A, n, p, 1, 0.0, q, 1);
            deso_ddot(n, p, 1, q, 1, pq);
            deso_sdiv(alpha, rr, pq);
            deso_daxpy(n, alpha, p, 1, x, 1);
            deso_sneg(nalpha, alpha);
            deso_daxpy(n, nalpha, q, 1, r, 1);
            PRECONDITION();
            deso_ddot(n, r, 1, z, 1, rrnew);
            deso_sdiv(beta, rrnew, rr);
            deso_dscal(n, beta, p, 1);
            deso_daxpy(n, 1.0, z, 1, p, 1);
            deso_sset(rr, rrnew);
            done++;
        }
        iters_run += done;
    }
    deso_flush(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    double time_loop = MPI_Wtime() - loop_start;
    deso_stats st;
    deso_stats_get(&st);
    if (oo.dot != NULL && rank0 && rename(dotpart, oo.dot) != 0)
        fprintf(stderr, "deso-cg: could not write %s\n", oo.dot);
    if (!converged && rank0)
        fprintf(stderr, "deso-cg: did not reach tol %g in %ld iterations "
                "(residual %.3e)\n", o.tol, done, relres);

    /* the true residual ||b - A x|| / ||b|| (not in the statistics)        */
    deso_dcopy(n, b, 1, t, 1);
    if (S != NULL) deso_dusmv(ctx, DESO_NO_TRANS, -1.0, S, x, 1.0, t);
    else deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, -1.0, A, n, x, 1, 1.0, t, 1);
    deso_dnrm2(n, t, 1, tnorm);
    double tnormv;
    deso_scalar_get(tnorm, &tnormv);
    double residual = tnormv / bnormv;
    /* the solution error ||x - ones|| / sqrt(n) (the exact x is ones)      */
    deso_daxpy(n, -1.0, ones, 1, x, 1);
    deso_dnrm2(n, x, 1, tnorm);
    deso_scalar_get(tnorm, &tnormv);
    double error = tnormv / sqrt((double)n);
    if (oo.dot != NULL && rank0) remove(dotpart);
    /* the disk on the matrix's own files, after the timed loop           */
    double read_rate = 0.0;
    if (oo.read_rate) deso_mat_read_rate(A, &read_rate);

    /* where the products ran: what deso chose at the first force          */
    deso_partition placed_as = DESO_PARTITION_DEFAULT;
    if (S != NULL) deso_spmat_placement(S, &placed_as);
    const char *placed = S != NULL ? partition_names[placed_as] : "none";
    /* a dense matrix: folded over the grid, or copied whole onto every
     * rank by the optimiser (the same count on every rank)              */
    const char *matrix_placed = S != NULL ? "sparse"
                                : st.matrices_replicated > 0 ? "replicated"
                                                             : "folded";

    /* totals over ranks, outside the counted statistics                    */
    long long mine[6] = {(long long)st.bytes_p2p, (long long)st.msgs_p2p,
                         (long long)st.bytes_collective,
                         (long long)st.msgs_collective,
                         (long long)st.bytes_io_read,
                         (long long)st.bytes_io_written};
    long long sum[6];
    MPI_Reduce(mine, sum, 6, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    double loop_max = time_loop;
    MPI_Reduce(&time_loop, &loop_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    /* peak resident memory, every rank's (ru_maxrss: KiB on Linux)         */
    struct rusage ru;
    long long rss = getrusage(RUSAGE_SELF, &ru) == 0
                        ? (long long)ru.ru_maxrss * 1024 : -1;
    long long *rss_all = rank0 ? malloc((size_t)P * sizeof *rss_all) : NULL;
    MPI_Gather(&rss, 1, MPI_LONG_LONG, rss_all, 1, MPI_LONG_LONG, 0,
               MPI_COMM_WORLD);
    /* b, x, r, p, q, t, ones, z with a preconditioner, d for jacobi, ssor */
    long long nvec = 7 + (oo.precond != PC_NONE) + (d != NULL);
    long long vec_bytes = nvec * 2 * (long long)n * (long long)sizeof(double);
    long long budget = info.mem_limit > 0 ? (long long)info.mem_limit : 0;
    long long bound = budget + vec_bytes + (64LL << 20);
    if (rank0) {
        char grid[32];
        snprintf(grid, sizeof grid, "%dx%d", info.grid_rows, info.grid_cols);
        if (o.json) {
            printf("{\"impl\":\"deso\",\"n\":%lld,\"p\":%d,\"grid\":\"%s\","
                   "\"mode\":\"%s\",\"precond\":\"%s\",\"iters\":%ld,\"repeat\":%ld,"
                   "\"converged\":%s,\"residual\":%.10e,\"error\":%.10e,"
                   "\"time_loop\":%.6e,\"time_total\":%.6e,\"time_compute\":%.6e,"
                   "\"time_overhead\":%.6e,\"time_p2p\":%.6e,"
                   "\"time_collective\":%.6e,\"time_optimise\":%.6e,"
                   "\"time_io\":%.6e,\"bytes_io_read\":%lld,"
                   "\"bytes_io_written\":%lld,"
                   "\"bytes_p2p\":%lld,\"msgs_p2p\":%lld,"
                   "\"bytes_collective\":%lld,\"msgs_collective\":%lld,"
                   "\"plans_optimised\":%lld,\"plans_replayed\":%lld,"
                   "\"nodes_overlapped\":%lld,\"forces_replayed\":%lld,\"io_beta\":%.6e,\"mem_limit\":%lld,\"vector_bytes\":%lld,"
                   "\"allreduce_call\":%.6e,\"reduce_call\":%.6e,\"bcast_call\":%.6e,"
                   "\"time_calibrate\":%.6e,"
                   "\"rss_bound\":%lld,\"sparse\":%s,\"nnz\":%lld,"
                   "\"partition\":\"%s\",\"placed\":\"%s\",\"matrix\":\"%s\","
                   "\"alpha\":%.17g,"
                   "\"beta\":%.17g,\"read_rate\":%.6e,\"peak_rss\":[",
                   (long long)n, P, grid, deso_mode_name(info.mode),
                   pc_names[oo.precond], iters_run, o.repeat, converged ? "true" : "false",
                   residual, error, loop_max, st.time_total, st.time_compute, st.time_overhead,
                   st.time_p2p, st.time_collective, st.time_optimise,
                   st.time_io, sum[4], sum[5], sum[0],
                   sum[1], sum[2], sum[3], (long long)st.plans_optimised,
                   (long long)st.plans_replayed,
                   (long long)st.nodes_overlapped,
                   (long long)st.forces_replayed, info.io_beta,
                   (long long)info.mem_limit, vec_bytes, info.allreduce_call,
                   info.reduce_call, info.bcast_call,
                   info.time_calibrate, bound,
                   S != NULL ? "true" : "false",
                   S != NULL ? (long long)sp.nnz : (long long)n * (long long)n,
                   S != NULL ? partition : "none", placed, matrix_placed,
                   info.alpha,
                   info.beta, read_rate);
            for (int k = 0; k < P; k++)
                printf("%s%lld", k > 0 ? "," : "", rss_all[k]);
            printf("]}\n");
        } else {
            printf("deso-cg: n=%lld P=%d grid=%s mode=%s precond=%s iters=%ld "
                   "residual=%.3e error=%.3e\n",
                   (long long)n, P, grid, deso_mode_name(info.mode),
                   pc_names[oo.precond], iters_run, residual, error);
            printf("%-22s %12s %14s %10s\n", "category", "time (ms)", "bytes",
                   "messages");
            printf("%-22s %12.3f %14s %10s\n", "computation",
                   1e3 * st.time_compute, "-", "-");
            printf("%-22s %12.3f %14s %10s\n", "runtime overhead",
                   1e3 * st.time_overhead, "-", "-");
            printf("%-22s %12.3f %14lld %10lld\n", "point-to-point",
                   1e3 * st.time_p2p, sum[0], sum[1]);
            printf("%-22s %12.3f %14lld %10lld\n", "collective",
                   1e3 * st.time_collective, sum[2], sum[3]);
            printf("%-22s %12.3f %14s %10s\n", "optimisation",
                   1e3 * st.time_optimise, "-", "-");
            /* bytes read from out-of-core matrices' local array files    */
            printf("%-22s %12.3f %14lld %10s\n", "out-of-core reads",
                   1e3 * st.time_io, sum[4], "-");
            printf("%-22s %12.3f %14lld %10lld\n", "total",
                   1e3 * st.time_total, sum[0] + sum[2], sum[1] + sum[3]);
            if (oo.read_rate)
                printf("disk read rate of the matrix's files: %.3f GB/s\n",
                       read_rate / 1e9);
            printf("plans optimised %lld, replayed %lld (times: rank 0; "
                   "bytes, messages: all ranks)\n",
                   (long long)st.plans_optimised,
                   (long long)st.plans_replayed);
        }
    }
    free(rss_all);
    deso_vec_destroy(&t);
    deso_finalize(&ctx);
    sp_rows_free(&sp.rows);   /* the operators' rows: after their last run */
    MPI_Finalize();
    return 0;
}
