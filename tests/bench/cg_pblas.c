/* cg_pblas: the hand-written ScaLAPACK anchor. Conjugate gradient on the
 * problem of cg_problem.h written directly on BLACS + PBLAS, the way a user
 * would: a pr x pc BLACS grid, A block-cyclic (nb x nb blocks) and generated
 * where it lives, vectors as n x 1 distributed matrices (block-cyclic over the
 * process rows, in process column 0), pdgemv / pddot / pdaxpy / pdscal /
 * pdcopy / pdnrm2.
 *
 *   mpiexec.mpich -n P cg_pblas [--n N] [--iters K] [--tol T] [--repeat R]
 *                               [--nb NB] [--grid RxC] [--json]
 *
 * Default grid: the most square R x C = P with R >= C (so for P = 2 it is 2x1
 * and the vectors are spread over both ranks). --json prints on rank 0:
 *   {"impl":"pblas","n":..,"p":..,"grid":"RxC","nb":..,"iters":..,"repeat":..,
 *    "residual":..,"error":..,"time_loop":..,"time_total":..,"time_per_iter":..}
 * iters: the iterations of all --repeat solves (cg_problem.h).
 * time_loop: the CG loop's MPI_Wtime from a barrier to a barrier, the slowest
 * rank's (set-up of r, p, rr included; generation and the true-residual check
 * excluded); deso-cg and cg_seq measure their time_loop the same way, so it is
 * the field to compare across programs.  time_total: the same interval on
 * rank 0 alone; time_per_iter = time_total / iters.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"

/* BLACS (C interface) and ScaLAPACK/PBLAS (Fortran interface, all arguments
 * by reference; the PBLAS entry points are C, so no hidden string lengths).
 * Symbols checked with nm -D on Debian's libscalapack-mpich.so.2.2. */
extern void Cblacs_get(int icontxt, int what, int *val);
extern void Cblacs_gridinit(int *icontxt, const char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int icontxt, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int icontxt);
extern void Cblacs_exit(int notdone);
extern void Cdgebs2d(int icontxt, const char *scope, const char *top, int m, int n,
                     const double *a, int lda);
extern void Cdgebr2d(int icontxt, const char *scope, const char *top, int m, int n,
                     double *a, int lda, int rsrc, int csrc);

extern int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
                   const int *nprocs);
extern void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
                      const int *irsrc, const int *icsrc, const int *ictxt, const int *lld,
                      int *info);
extern void pdgemv_(const char *trans, const int *m, const int *n, const double *alpha,
                    const double *a, const int *ia, const int *ja, const int *desca,
                    const double *x, const int *ix, const int *jx, const int *descx,
                    const int *incx, const double *beta, double *y, const int *iy,
                    const int *jy, const int *descy, const int *incy);
extern void pddot_(const int *n, double *dot, const double *x, const int *ix, const int *jx,
                   const int *descx, const int *incx, const double *y, const int *iy,
                   const int *jy, const int *descy, const int *incy);
extern void pdaxpy_(const int *n, const double *alpha, const double *x, const int *ix,
                    const int *jx, const int *descx, const int *incx, double *y,
                    const int *iy, const int *jy, const int *descy, const int *incy);
extern void pdscal_(const int *n, const double *alpha, double *x, const int *ix,
                    const int *jx, const int *descx, const int *incx);
extern void pdcopy_(const int *n, const double *x, const int *ix, const int *jx,
                    const int *descx, const int *incx, double *y, const int *iy,
                    const int *jy, const int *descy, const int *incy);
extern void pdnrm2_(const int *n, double *norm2, const double *x, const int *ix,
                    const int *jx, const int *descx, const int *incx);

/* Global index of local index l (0-based) for block size nb, my coordinate
 * me among np processes, source process 0: ScaLAPACK's INDXL2G. */
static long l2g(long l, long nb, long me, long np)
{
    return ((l / nb) * np + me) * nb + l % nb;
}

static int g_ctxt = -1, g_pc = 1, g_mycol = 0, g_myrow = 0;

/* PBLAS reductions leave their result only in the scope of the operand
 * vectors (process column 0). Loop decisions must agree on every rank, so a
 * scalar that steers control flow is broadcast along the process rows. */
static void share(double *v)
{
    if (g_pc == 1)
        return;
    if (g_mycol == 0)
        Cdgebs2d(g_ctxt, "Row", " ", 1, 1, v, 1);
    else
        Cdgebr2d(g_ctxt, "Row", " ", 1, 1, v, 1, g_myrow, 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    struct cg_opts o;
    char err[256];
    int rc = cg_parse_opts(argc, argv, 1, &o, err, sizeof err);
    if (rc == 0 && o.grid_r > 0 && o.grid_r * o.grid_c != nprocs) {
        snprintf(err, sizeof err, "--grid %ldx%ld needs %ld ranks, running on %d",
                 o.grid_r, o.grid_c, o.grid_r * o.grid_c, nprocs);
        rc = -1;
    }
    if (rc != 0) {
        if (rank == 0)
            fprintf(rc > 0 ? stdout : stderr, "%s%s\n", rc > 0 ? "" : "cg_pblas: ", err);
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }

    int pr, pc;
    if (o.grid_r > 0) {
        pr = (int)o.grid_r;
        pc = (int)o.grid_c;
    } else {
        pc = 1;
        for (int c = 1; (long)c * c <= nprocs; c++)
            if (nprocs % c == 0)
                pc = c;
        pr = nprocs / pc;
    }

    int ctxt, myrow, mycol, nprow, npcol;
    Cblacs_get(0, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", pr, pc);
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    g_ctxt = ctxt;
    g_pc = npcol;
    g_myrow = myrow;
    g_mycol = mycol;

    const int n = (int)o.n, nb = (int)o.nb, izero = 0, ione = 1;
    const int mloc = numroc_(&n, &nb, &myrow, &izero, &nprow);
    const int nloc = numroc_(&n, &nb, &mycol, &izero, &npcol);
    const int lld = mloc > 1 ? mloc : 1;
    int desca[9], descv[9], info_a, info_v;
    descinit_(desca, &n, &n, &nb, &nb, &izero, &izero, &ctxt, &lld, &info_a);
    descinit_(descv, &n, &ione, &nb, &ione, &izero, &izero, &ctxt, &lld, &info_v);

    size_t asize = (size_t)lld * (size_t)(nloc > 0 ? nloc : 1);
    double *a = malloc(asize * sizeof *a);
    double *v = malloc(6 * (size_t)lld * sizeof *v);
    int ok = a != NULL && v != NULL && info_a == 0 && info_v == 0, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rank == 0)
            fprintf(stderr, "cg_pblas: set-up failed for n = %d (out of memory or descinit "
                            "info %d/%d)\n", n, info_a, info_v);
        free(a);
        free(v);
        Cblacs_gridexit(ctxt);
        Cblacs_exit(1);
        MPI_Finalize();
        return 1;
    }
    double *b = v, *x = v + lld, *r = v + 2 * (size_t)lld, *p = v + 3 * (size_t)lld;
    double *q = v + 4 * (size_t)lld, *t = v + 5 * (size_t)lld;
    memset(v, 0, 6 * (size_t)lld * sizeof *v);

    /* generation: each rank fills only the entries it owns */
    for (int jl = 0; jl < nloc; jl++) {
        long jg = l2g(jl, nb, mycol, npcol);
        for (int il = 0; il < mloc; il++)
            a[(size_t)jl * lld + il] = cg_problem_a(n, l2g(il, nb, myrow, nprow), jg);
    }
    if (mycol == 0)
        for (int il = 0; il < mloc; il++)
            b[il] = cg_problem_b(n, l2g(il, nb, myrow, nprow));

    const double one = 1.0, zero = 0.0, mone = -1.0;
#define VEC(y) y, &ione, &ione, descv, &ione
    /* the CG loop, --repeat times from x0 = 0 (cg_problem.h) */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double bnorm = 0.0;
    long done = 0;
    for (long solve = 0; solve < o.repeat; solve++) {
        if (solve > 0)
            pdscal_(&n, &zero, VEC(x));
        pdcopy_(&n, VEC(b), VEC(r));
        pdcopy_(&n, VEC(r), VEC(p));
        double rr = 0.0;
        bnorm = 0.0;
        pddot_(&n, &rr, VEC(r), VEC(r));
        pdnrm2_(&n, &bnorm, VEC(b));
        share(&rr);
        share(&bnorm);
        for (long k = 0; k < o.iters; k++) {
            if (rr == 0.0 || (o.tol > 0.0 && sqrt(rr) / bnorm < o.tol))
                break;
            pdgemv_("N", &n, &n, &one, a, &ione, &ione, desca, VEC(p), &zero, VEC(q));
            double pq = 0.0;
            pddot_(&n, &pq, VEC(p), VEC(q));
            double alpha = rr / pq, malpha = -alpha;
            pdaxpy_(&n, &alpha, VEC(p), VEC(x));
            pdaxpy_(&n, &malpha, VEC(q), VEC(r));
            double rrnew = 0.0;
            pddot_(&n, &rrnew, VEC(r), VEC(r));
            share(&rrnew);
            double beta = rrnew / rr;
            pdscal_(&n, &beta, VEC(p));
            pdaxpy_(&n, &one, VEC(r), VEC(p));
            rr = rrnew;
            done++;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();

    /* true residual ||b - A x|| / ||b|| and error ||x - 1|| / sqrt(n) */
    pdcopy_(&n, VEC(b), VEC(t));
    pdgemv_("N", &n, &n, &mone, a, &ione, &ione, desca, VEC(x), &one, VEC(t));
    double tnorm = 0.0, enorm = 0.0;
    pdnrm2_(&n, &tnorm, VEC(t));
    if (mycol == 0)
        for (int il = 0; il < mloc; il++)
            t[il] = x[il] - 1.0;
    pdnrm2_(&n, &enorm, VEC(t));
#undef VEC
    double residual = tnorm / bnorm, error = enorm / sqrt((double)n);
    double total = t1 - t0, per = done > 0 ? total / (double)done : 0.0;
    double loop_max = total;
    MPI_Reduce(&total, &loop_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        if (o.json)
            printf("{\"impl\":\"pblas\",\"n\":%d,\"p\":%d,\"grid\":\"%dx%d\",\"nb\":%d,"
                   "\"iters\":%ld,\"repeat\":%ld,\"residual\":%.10e,\"error\":%.6e,"
                   "\"time_loop\":%.6e,\"time_total\":%.6e,\"time_per_iter\":%.6e}\n",
                   n, nprocs, nprow, npcol, nb, done, o.repeat, residual, error, loop_max,
                   total, per);
        else
            printf("cg_pblas: n=%d p=%d grid=%dx%d nb=%d iters=%ld residual=%.10e "
                   "error=%.3e time_total=%.4fs time_per_iter=%.3fms\n",
                   n, nprocs, nprow, npcol, nb, done, residual, error, total, 1e3 * per);
        fflush(stdout);
    }
    free(a);
    free(v);
    Cblacs_gridexit(ctxt);
    Cblacs_exit(1);
    MPI_Finalize();
    return 0;
}
