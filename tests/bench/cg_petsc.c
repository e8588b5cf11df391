/* cg_petsc: the CG benchmark problem solved by PETSc's KSPCG, a benchmark
 * anchor only (never linked into deso, never built by make check).
 *
 *   mpiexec.openmpi -n P cg_petsc [--n N] [--iters K] [--tol T] [--repeat R]
 *                                 [--json]
 *                                 [--gen SPEC [--precond none|jacobi|bjacobi]]
 *
 * Debian builds PETSc on Open MPI, so scripts/bench.sh compiles this with
 * mpicc.openmpi and runs it with mpiexec.openmpi.  The matrix is MATDENSE
 * (rows spread over the ranks: grid Px1), b = A * ones as in cg_problem.h;
 * KSPCG with PCNONE and KSP_NORM_NATURAL (one r.r per iteration, as the
 * other CGs compute); with tol 0 the convergence test is skipped and
 * exactly K iterations run (rtol = atol = 0), with tol > 0 rtol = tol.
 * time_loop: KSPSolve from a barrier to a barrier, the slowest rank's
 * (set-up, generation and the final residual check excluded).  --json
 * prints on rank 0 the fields cg_pblas prints:
 *   {"impl":"petsc","n":..,"p":..,"grid":"Px1","iters":..,"repeat":..,
 *    "residual":..,"error":..,"time_loop":..,"time_total":..,"time_per_iter":..}
 * iters: the iterations of all --repeat solves (cg_problem.h).
 * --gen lap2d:G|lap3d:G|lap2d-perm:G: instead, deso-cg's sparse problem
 * (examples/sparse_problem.h) as MATMPIAIJ, each rank generating its own
 * rows (PETSc's default ownership: contiguous blocks, the first n % P
 * one row longer, deso's blocks), b = A * ones by MatMult; --precond
 * jacobi is PCJACOBI, bjacobi PCSOR with one local symmetric sweep
 * (SOR_LOCAL_SYMMETRIC_SWEEP, omega 1, zero initial guess: z = (D+U)^-1
 * D (D+L)^-1 r on each rank's diagonal block, deso-cg's bjacobi); the
 * JSON line adds "sparse":true, "nnz", "precond" and "partition":"block".
 * Exit 0 on success, 1 on a PETSc error or a wrong solve, 2 on bad
 * options.                                                                */
#include <math.h>
#include <petscksp.h>

#include "cg_problem.h"
#include "../../examples/sparse_problem.h"

enum { PC_NONE, PC_JACOBI, PC_BJACOBI };
static const char *const pc_names[] = {"none", "jacobi", "bjacobi"};

/* --gen and --precond, split off before cg_problem.h's parser.           */
struct sparse_opts {
    const char *gen;
    int precond;
};

/* (PETSc 3.18 has no PETSC_SUCCESS: 0 is success.)                        */

/* Rows rs..re of A, column-major with leading dimension lda.             */
static PetscErrorCode fill(Mat A, long n, PetscInt rs, PetscInt re)
{
    PetscScalar *a;
    PetscInt lda;
    PetscCall(MatDenseGetLDA(A, &lda));
    PetscCall(MatDenseGetArrayWrite(A, &a));
    for (long j = 0; j < n; j++)
        for (PetscInt i = rs; i < re; i++)
            a[(size_t)j * (size_t)lda + (size_t)(i - rs)] =
                cg_problem_a(n, (long)i, j);
    PetscCall(MatDenseRestoreArrayWrite(A, &a));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    return 0;
}

/* deso-cg's sparse problem as MATMPIAIJ, each rank making its own rows;
 * its entries in *nnz.                                                   */
static PetscErrorCode make_sparse(const struct sp_gen *g, Mat *A, long *nnz)
{
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE,
                           (PetscInt)g->n, (PetscInt)g->n, SP_MAX_ROW, NULL,
                           SP_MAX_ROW - 1, NULL, A));
    PetscInt rs, re;
    PetscCall(MatGetOwnershipRange(*A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
        int64_t c[SP_MAX_ROW];
        double v[SP_MAX_ROW];
        PetscInt pc[SP_MAX_ROW];
        int k = sp_gen_row(g, (int64_t)i, c, v);
        for (int e = 0; e < k; e++) pc[e] = (PetscInt)c[e];
        PetscCall(MatSetValues(*A, 1, &i, k, pc, v, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
    MatInfo info;
    PetscCall(MatGetInfo(*A, MAT_GLOBAL_SUM, &info));
    *nnz = (long)info.nz_used;
    return 0;
}

static PetscErrorCode set_pc(PC pc, int precond)
{
    if (precond == PC_JACOBI) {
        PetscCall(PCSetType(pc, PCJACOBI));
    } else if (precond == PC_BJACOBI) {
        PetscCall(PCSetType(pc, PCSOR));
        PetscCall(PCSORSetSymmetric(pc, SOR_LOCAL_SYMMETRIC_SWEEP));
        PetscCall(PCSORSetOmega(pc, 1.0));
        PetscCall(PCSORSetIterations(pc, 1, 1));
    } else {
        PetscCall(PCSetType(pc, PCNONE));
    }
    return 0;
}

static PetscErrorCode solve(const struct cg_opts *o, const struct sparse_opts *so,
                            int rank, int P)
{
    long n = o->n, nnz = 0;
    Mat A;
    Vec b, x, t;
    KSP ksp;
    PC pc;
    struct sp_gen g;
    if (so->gen != NULL) {
        char err[256];
        PetscCheck(sp_gen_parse(so->gen, &g, err, sizeof err) == 0,
                   PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "cg_petsc: %s", err);
        n = (long)g.n;
        PetscCall(make_sparse(&g, &A, &nnz));
    } else {
        PetscCall(MatCreateDense(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE,
                                 (PetscInt)n, (PetscInt)n, NULL, &A));
    }
    PetscInt rs, re;
    PetscCall(MatGetOwnershipRange(A, &rs, &re));
    if (so->gen == NULL) PetscCall(fill(A, n, rs, re));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(b, &t));
    if (so->gen != NULL) {              /* b = A * ones                     */
        PetscCall(VecSet(t, 1.0));
        PetscCall(MatMult(A, t, b));
    } else {
        for (PetscInt i = rs; i < re; i++)
            PetscCall(VecSetValue(b, i, cg_problem_b(n, (long)i), INSERT_VALUES));
        PetscCall(VecAssemblyBegin(b));
        PetscCall(VecAssemblyEnd(b));
    }
    PetscCall(VecSet(x, 0.0));

    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(set_pc(pc, so->precond));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_NATURAL));
    PetscCall(KSPSetTolerances(ksp, o->tol > 0.0 ? o->tol : 0.0, 0.0,
                               PETSC_DEFAULT, (PetscInt)o->iters));
    if (o->tol <= 0.0)
        PetscCall(KSPSetConvergenceTest(ksp, KSPConvergedSkip, NULL, NULL));
    PetscCall(KSPSetUp(ksp));

    /* --repeat: the solve again (cg_problem.h); KSP starts every solve
     * from x = 0, its initial guess not being marked nonzero              */
    MPI_Barrier(PETSC_COMM_WORLD);
    double t0 = MPI_Wtime();
    PetscInt its = 0;
    for (long solve = 0; solve < o->repeat; solve++) {
        PetscInt one_its;
        PetscCall(KSPSolve(ksp, b, x));
        PetscCall(KSPGetIterationNumber(ksp, &one_its));
        its += one_its;
    }
    MPI_Barrier(PETSC_COMM_WORLD);
    double t1 = MPI_Wtime();

    /* true residual ||b - A x|| / ||b|| and error ||x - 1|| / sqrt(n)      */
    PetscReal bnorm, tnorm, enorm;
    PetscCall(VecNorm(b, NORM_2, &bnorm));
    PetscCall(MatMult(A, x, t));
    PetscCall(VecAYPX(t, -1.0, b));
    PetscCall(VecNorm(t, NORM_2, &tnorm));
    PetscCall(VecShift(x, -1.0));
    PetscCall(VecNorm(x, NORM_2, &enorm));
    double residual = (double)(tnorm / bnorm);
    double error = (double)enorm / sqrt((double)n);
    double total = t1 - t0, loop_max = total;
    MPI_Reduce(&total, &loop_max, 1, MPI_DOUBLE, MPI_MAX, 0, PETSC_COMM_WORLD);
    double per = its > 0 ? total / (double)its : 0.0;
    if (rank == 0) {
        if (o->json && so->gen != NULL)
            printf("{\"impl\":\"petsc\",\"n\":%ld,\"p\":%d,\"grid\":\"%dx1\","
                   "\"iters\":%ld,\"repeat\":%ld,\"residual\":%.10e,\"error\":%.6e,"
                   "\"time_loop\":%.6e,\"time_total\":%.6e,"
                   "\"time_per_iter\":%.6e,\"sparse\":true,\"nnz\":%ld,"
                   "\"precond\":\"%s\",\"partition\":\"block\"}\n",
                   n, P, P, (long)its, o->repeat, residual, error, loop_max, total,
                   per, nnz, pc_names[so->precond]);
        else if (o->json)
            printf("{\"impl\":\"petsc\",\"n\":%ld,\"p\":%d,\"grid\":\"%dx1\","
                   "\"iters\":%ld,\"repeat\":%ld,\"residual\":%.10e,\"error\":%.6e,"
                   "\"time_loop\":%.6e,\"time_total\":%.6e,"
                   "\"time_per_iter\":%.6e}\n",
                   n, P, P, (long)its, o->repeat, residual, error, loop_max, total,
                   per);
        else
            printf("cg_petsc: n=%ld p=%d grid=%dx1 iters=%ld residual=%.10e "
                   "error=%.3e time_total=%.4fs time_per_iter=%.3fms\n",
                   n, P, P, (long)its, residual, error, total, 1e3 * per);
        fflush(stdout);
    }
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&t));
    PetscCall(MatDestroy(&A));
    /* a solve that ran its iterations must have reduced the residual     */
    PetscCheck(!(residual > 1e-1), PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
               "cg_petsc: residual %g after %ld iterations", residual,
               (long)its);
    return 0;
}

/* Splits off --gen and --precond (cg_problem.h's parser does not know
 * them); 0, or -1 with a reason in err.                                  */
static int sparse_opts(int *argc, char **argv, struct sparse_opts *so,
                       char *err, size_t errlen)
{
    int out = 1;
    for (int k = 1; k < *argc; k++) {
        int gen = strcmp(argv[k], "--gen") == 0;
        if (!gen && strcmp(argv[k], "--precond") != 0) {
            argv[out++] = argv[k];
            continue;
        }
        if (k + 1 >= *argc) {
            snprintf(err, errlen, "option %s needs a value", argv[k]);
            return -1;
        }
        const char *v = argv[++k];
        if (gen) so->gen = v;
        else if (strcmp(v, "none") == 0) so->precond = PC_NONE;
        else if (strcmp(v, "jacobi") == 0) so->precond = PC_JACOBI;
        else if (strcmp(v, "bjacobi") == 0) so->precond = PC_BJACOBI;
        else {
            snprintf(err, errlen, "--precond must be none, jacobi or bjacobi, "
                     "got '%s'", v);
            return -1;
        }
    }
    *argc = out;
    if (so->precond != PC_NONE && so->gen == NULL) {
        snprintf(err, errlen, "--precond needs --gen");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* deso's options first: PETSc would read its own from the same argv */
    struct cg_opts o;
    struct sparse_opts so = {NULL, PC_NONE};
    char err[256];
    int rc = sparse_opts(&argc, argv, &so, err, sizeof err);
    if (rc == 0) rc = cg_parse_opts(argc, argv, 0, &o, err, sizeof err);
    if (rc != 0) {
        fprintf(rc > 0 ? stdout : stderr, "%s%s\n", rc > 0 ? "" : "cg_petsc: ",
                err);
        return rc > 0 ? 0 : 2;
    }
    int pargc = 1;
    if (PetscInitialize(&pargc, &argv, NULL, NULL) != 0) return 1;
    int rank, P;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    MPI_Comm_size(PETSC_COMM_WORLD, &P);
    PetscErrorCode e = solve(&o, &so, rank, P);
    if (PetscFinalize() != 0) return 1;
    return e == 0 ? 0 : 1;
}
