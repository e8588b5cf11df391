/* The preconditioned CG demo's library parts: deso_dvmul (y <- x .* y)
 * against a sequential loop at awkward sizes; deso_mat_from_mtx on small
 * Matrix Market files (symmetric coordinate, general array, malformed and
 * missing ones: DESO_EIO with the same message on every rank), and
 * deso_mat_diag; Jacobi- and SSOR-preconditioned CG through deso against a
 * sequential CBLAS PCG, iterate by iterate, in modes none and full.
 * deso-np: 1 2 3
 * deso-np-long: 4                                                         */
#include <cblas.h>
#include <unistd.h>

#include "test_util.h"

/* ---- deso_dvmul ---------------------------------------------------------- */

static void run_vmul(deso_ctx *ctx, int64_t n)
{
    double *x = malloc((size_t)(n + 1) * sizeof *x);
    double *y = malloc((size_t)(n + 1) * sizeof *y);
    double *want = malloc((size_t)(n + 1) * sizeof *want);
    double *got = malloc((size_t)(n + 1) * sizeof *got);
    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(want);
    assert_non_null(got);
    tu_rng rng = {(uint64_t)n * 7919u + 3u};
    tu_fill(&rng, x, n);
    tu_fill(&rng, y, n);
    deso_vec *dx, *dy;
    TU_OK(deso_vec_from_array(ctx, n, x, DESO_ALL_RANKS, &dx));
    TU_OK(deso_vec_from_array(ctx, n, y, DESO_ALL_RANKS, &dy));
    /* y <- x .* y; y <- 2 y + x; y <- x .* y; and a dot of the result, so
     * the optimiser places vmul among reductions and updates              */
    for (int64_t i = 0; i < n; i++) {
        want[i] = x[i] * y[i];
        want[i] = 2.0 * want[i] + x[i];
        want[i] = x[i] * want[i];
    }
    deso_scalar *s;
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    for (int rep = 0; rep < (n > 50 ? 2 : 1); rep++) { /* 2nd: replayed  */
        TU_OK(deso_vec_destroy(&dy));
        TU_OK(deso_vec_from_array(ctx, n, y, DESO_ALL_RANKS, &dy));
        TU_OK(deso_dvmul(n, dx, 1, dy, 1));
        TU_OK(deso_daxpby(n, 1.0, dx, 1, 2.0, dy, 1));
        TU_OK(deso_dvmul(n, dx, 1, dy, 1));
        TU_OK(deso_ddot(n, dy, 1, dy, 1, s));
        double sv = tu_get(s), sw = 0.0;
        for (int64_t i = 0; i < n; i++) sw += want[i] * want[i];
        assert_true(tu_all(tu_srel(sv, sw) < 1e-12));
        tu_gather(dy, got);
        int same = 1;
        for (int64_t i = 0; i < n; i++) same &= got[i] == want[i];
        assert_true(tu_all(same));
    }
    /* the argument checks                                                  */
    TU_ERR(deso_dvmul(n + 1, dx, 1, dy, 1), DESO_ESIZE);
    TU_ERR(deso_dvmul(-1, dx, 1, dy, 1), DESO_ESIZE);
    TU_ERR(deso_dvmul(n, NULL, 1, dy, 1), DESO_ENULL);
    TU_ERR(deso_dvmul(n, dx, 0, dy, 1), DESO_EINVAL);
    TU_OK(deso_vec_destroy(&dx));
    TU_OK(deso_vec_destroy(&dy));
    TU_OK(deso_scalar_destroy(&s));
    free(x);
    free(y);
    free(want);
    free(got);
}

static void test_dvmul(void **state)
{
    (void)state;
    static const int64_t sizes[] = {0, 1, 7, 97};
    int grids[4][2];
    int ng = tu_grids(grids);
    /* the default grid in modes none and full, other grids in full (at
     * P = 4 every collective is slow on shared cores: keep runs few)      */
    for (int gi = 0; gi < ng; gi++)
        for (int mi = gi == 0 ? 0 : 1; mi < 2; mi++) {
            deso_ctx *ctx = tu_ctx_mode(mi ? DESO_MODE_FULL : DESO_MODE_NONE,
                                        grids[gi][0], grids[gi][1], 3);
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
                run_vmul(ctx, sizes[k]);
            TU_OK(deso_finalize(&ctx));
        }
    deso_ctx *ctx = tu_ctx_mode(DESO_MODE_AFFINE, 0, 0, DESO_NB_BLOCK);
    run_vmul(ctx, 97);
    TU_OK(deso_finalize(&ctx));
}

/* ---- deso_mat_from_mtx, deso_mat_diag ------------------------------------ */

/* A path unique to this run (rank 0's pid), the same on every rank.       */
static void tmp_path(char *buf, size_t len, const char *tag)
{
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(buf, len, "/tmp/deso_test_precond_%ld_%s.mtx", pid, tag);
}

static void write_file(const char *path, const char *text)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int ok = 1;
    if (me == 0) {
        FILE *f = fopen(path, "w");
        ok = f != NULL && fputs(text, f) >= 0;
        if (f != NULL) ok &= fclose(f) == 0;
    }
    assert_true(tu_all(ok));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void remove_file(const char *path)
{
    int me;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) remove(path);
}

static const char SYM_TEXT[] =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "% a comment\n"
    "5 5 8\n"
    "1 1 4.0\n2 2 5.0\n3 3 6.0\n4 4 7.0\n5 5 8.0\n"
    "2 1 -1.5\n5 3 0.25\n4 2 2e-1\n";

static const char GEN_TEXT[] =
    "%%MatrixMarket matrix array real general\n"
    "3 4\n"
    "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";

static const char BAD_TEXT[] =
    "%%MatrixMarket matrix coordinate real general\n"
    "3 3 2\n"
    "1 1 1.0\n"
    "4 1 2.0\n";

static void check_mat(deso_ctx *ctx, const char *path, int64_t m, int64_t n,
                      const double *want)
{
    deso_mat *A = NULL;
    TU_OK(deso_mat_from_mtx(ctx, path, &A));
    int64_t gm = -1, gn = -1;
    TU_OK(deso_mat_shape(A, &gm, &gn));
    assert_true(tu_all(gm == m && gn == n));
    double got[32];
    TU_OK(deso_mat_gather(A, got, m, DESO_ALL_RANKS));
    int same = 1;
    for (int64_t k = 0; k < m * n; k++) same &= got[k] == want[k];
    assert_true(tu_all(same));
    /* the diagonal                                                         */
    int64_t kd = m < n ? m : n;
    deso_vec *d;
    TU_OK(deso_vec_create(ctx, kd, &d));
    TU_OK(deso_mat_diag(A, d));
    double dg[8];
    tu_gather(d, dg);
    same = 1;
    for (int64_t i = 0; i < kd; i++) same &= dg[i] == want[i * m + i];
    assert_true(tu_all(same));
    deso_vec *bad;
    TU_OK(deso_vec_create(ctx, kd + 1, &bad));
    TU_ERR(deso_mat_diag(A, bad), DESO_ESIZE);
    TU_OK(deso_vec_destroy(&bad));
    TU_OK(deso_vec_destroy(&d));
    TU_OK(deso_mat_destroy(&A));
}

/* Every rank fails with code and the same message.                         */
static void check_fails(deso_ctx *ctx, const char *path, deso_err code)
{
    deso_mat *A = (deso_mat *)ctx;   /* must be reset to NULL              */
    TU_ERR(deso_mat_from_mtx(ctx, path, &A), code);
    assert_true(tu_all(A == NULL));
    char msg[256], root[256];
    snprintf(msg, sizeof msg, "%s", deso_last_error());
    memcpy(root, msg, sizeof root);
    MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    assert_true(tu_all(msg[0] != '\0' && strcmp(msg, root) == 0));
}

static void test_mtx(void **state)
{
    (void)state;
    char psym[128], pgen[128], pbad[128], pmiss[128];
    tmp_path(psym, sizeof psym, "sym");
    tmp_path(pgen, sizeof pgen, "gen");
    tmp_path(pbad, sizeof pbad, "bad");
    tmp_path(pmiss, sizeof pmiss, "missing");
    write_file(psym, SYM_TEXT);
    write_file(pgen, GEN_TEXT);
    write_file(pbad, BAD_TEXT);
    double sym[25] = {0}, gen[12];
    for (int i = 0; i < 5; i++) sym[i * 5 + i] = 4.0 + i;
    sym[0 * 5 + 1] = sym[1 * 5 + 0] = -1.5;
    sym[2 * 5 + 4] = sym[4 * 5 + 2] = 0.25;
    sym[1 * 5 + 3] = sym[3 * 5 + 1] = 2e-1;
    for (int k = 0; k < 12; k++) gen[k] = k + 1.0;
    int grids[4][2];
    int ng = tu_grids(grids);
    for (int gi = 0; gi < ng; gi++) {
        deso_ctx *ctx = tu_ctx_mode(DESO_MODE_FULL, grids[gi][0], grids[gi][1],
                                    gi == 0 ? 2 : DESO_NB_BLOCK);
        check_mat(ctx, psym, 5, 5, sym);
        check_mat(ctx, pgen, 3, 4, gen);
        check_fails(ctx, pbad, DESO_EIO);
        check_fails(ctx, pmiss, DESO_EIO);
        /* the context still works after the failures                       */
        check_mat(ctx, psym, 5, 5, sym);
        TU_OK(deso_finalize(&ctx));
    }
    remove_file(psym);
    remove_file(pgen);
    remove_file(pbad);
}

/* ---- preconditioned CG ----------------------------------------------------- */

#define N 43
#define ITERS 5

enum { PC_JACOBI, PC_SSOR };

static double a_fn(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    double v = 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
    return i == j ? v + (double)(i % 5) : v;   /* SPD, uneven diagonal    */
}

static double one_fn(int64_t i, void *arg)
{
    (void)i;
    (void)arg;
    return 1.0;
}

/* z <- M^-1 r, sequentially.                                               */
static void seq_prec(int pc, const double *A, const double *d,
                     const double *dinv, const double *r, double *z)
{
    cblas_dcopy(N, r, 1, z, 1);
    if (pc == PC_JACOBI) {
        for (int i = 0; i < N; i++) z[i] *= dinv[i];
        return;
    }
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, N, A, N,
                z, 1);
    for (int i = 0; i < N; i++) z[i] *= d[i];
    cblas_dtrsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, N, A, N,
                z, 1);
}

static void run_pcg(int pc, int pr, int pcols, int64_t nb, deso_mode mode)
{
    static double A[N * N], b[N], x[N], r[N], z[N], p[N], q[N], d[N], di[N];
    double rho_seq[ITERS + 1];
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) A[j * N + i] = a_fn(i, j, NULL);
    for (int i = 0; i < N; i++) {
        x[i] = 1.0;
        d[i] = A[i * N + i];
        di[i] = 1.0 / d[i];
    }
    cblas_dgemv(CblasColMajor, CblasNoTrans, N, N, 1.0, A, N, x, 1, 0.0, b, 1);
    for (int i = 0; i < N; i++) x[i] = 0.0;
    cblas_dcopy(N, b, 1, r, 1);
    seq_prec(pc, A, d, di, r, z);
    cblas_dcopy(N, z, 1, p, 1);
    double rho = cblas_ddot(N, r, 1, z, 1);
    for (int k = 0; k < ITERS; k++) {
        rho_seq[k] = rho;
        cblas_dgemv(CblasColMajor, CblasNoTrans, N, N, 1.0, A, N, p, 1, 0.0, q, 1);
        double alpha = rho / cblas_ddot(N, p, 1, q, 1);
        cblas_daxpy(N, alpha, p, 1, x, 1);
        cblas_daxpy(N, -alpha, q, 1, r, 1);
        seq_prec(pc, A, d, di, r, z);
        double rhonew = cblas_ddot(N, r, 1, z, 1);
        cblas_dscal(N, rhonew / rho, p, 1);
        cblas_daxpy(N, 1.0, z, 1, p, 1);
        rho = rhonew;
    }
    rho_seq[ITERS] = rho;

    deso_ctx *ctx = tu_ctx_mode(mode, pr, pcols, nb);
    deso_mat *dA;
    deso_vec *ones, *db, *dx, *dr, *dz, *dp, *dq, *dd, *ddi;
    TU_OK(deso_mat_from_fn(ctx, N, N, a_fn, NULL, &dA));
    TU_OK(deso_vec_from_fn(ctx, N, one_fn, NULL, &ones));
    TU_OK(deso_vec_create(ctx, N, &db));
    TU_OK(deso_vec_create(ctx, N, &dx));
    TU_OK(deso_vec_create(ctx, N, &dr));
    TU_OK(deso_vec_create(ctx, N, &dz));
    TU_OK(deso_vec_create(ctx, N, &dp));
    TU_OK(deso_vec_create(ctx, N, &dq));
    TU_OK(deso_vec_create(ctx, N, &dd));
    TU_OK(deso_vec_create(ctx, N, &ddi));
    TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, N, N, 1.0, dA, N, ones, 1,
                     0.0, db, 1));
    TU_OK(deso_mat_diag(dA, dd));
    /* D^-1 = ones ./ d: a Jacobi preconditioner needs it once; here it is
     * built from the gathered diagonal                                     */
    double dg[N];
    tu_gather(dd, dg);
    for (int i = 0; i < N; i++) dg[i] = 1.0 / dg[i];
    TU_OK(deso_vec_destroy(&ddi));
    TU_OK(deso_vec_from_array(ctx, N, dg, DESO_ALL_RANKS, &ddi));
    deso_scalar *srho, *srhonew, *spq, *salpha, *sbeta;
    TU_OK(deso_scalar_create(ctx, 0.0, &srho));
    TU_OK(deso_scalar_create(ctx, 0.0, &srhonew));
    TU_OK(deso_scalar_create(ctx, 0.0, &spq));
    TU_OK(deso_scalar_create(ctx, 0.0, &salpha));
    TU_OK(deso_scalar_create(ctx, 0.0, &sbeta));
#define PREC()                                                               \
    do {                                                                     \
        TU_OK(deso_dcopy(N, dr, 1, dz, 1));                                  \
        if (pc == PC_JACOBI) {                                               \
            TU_OK(deso_dvmul(N, ddi, 1, dz, 1));                             \
        } else {                                                             \
            TU_OK(deso_dtrsv(DESO_COL_MAJOR, DESO_LOWER, DESO_NO_TRANS,      \
                             DESO_NON_UNIT, N, dA, N, dz, 1));               \
            TU_OK(deso_dvmul(N, dd, 1, dz, 1));                              \
            TU_OK(deso_dtrsv(DESO_COL_MAJOR, DESO_UPPER, DESO_NO_TRANS,      \
                             DESO_NON_UNIT, N, dA, N, dz, 1));               \
        }                                                                    \
    } while (0)
    TU_OK(deso_dcopy(N, db, 1, dr, 1));
    PREC();
    TU_OK(deso_dcopy(N, dz, 1, dp, 1));
    TU_OK(deso_ddot(N, dr, 1, dz, 1, srho));
    for (int k = 0; k < ITERS; k++) {
        double v = tu_get(srho);
        assert_true(tu_all(tu_srel(v, rho_seq[k]) < 1e-9));
        TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, N, N, 1.0, dA, N, dp,
                         1, 0.0, dq, 1));
        TU_OK(deso_ddot(N, dp, 1, dq, 1, spq));
        TU_OK(deso_sdiv(salpha, srho, spq));
        TU_OK(deso_daxpy(N, salpha, dp, 1, dx, 1));
        TU_OK(deso_sneg(salpha, salpha));
        TU_OK(deso_daxpy(N, salpha, dq, 1, dr, 1));
        PREC();
        TU_OK(deso_ddot(N, dr, 1, dz, 1, srhonew));
        TU_OK(deso_sdiv(sbeta, srhonew, srho));
        TU_OK(deso_dscal(N, sbeta, dp, 1));
        TU_OK(deso_daxpy(N, 1.0, dz, 1, dp, 1));
        TU_OK(deso_sset(srho, srhonew));
    }
#undef PREC
    assert_true(tu_all(tu_srel(tu_get(srho), rho_seq[ITERS]) < 1e-9));
    double g[N];
    tu_gather(dx, g);
    assert_true(tu_all(tu_relerr(g, x, N) < 1e-9));
    TU_OK(deso_finalize(&ctx));
}

static void test_pcg_jacobi(void **state)
{
    (void)state;
    int grids[4][2];
    int ng = tu_grids(grids);
    run_pcg(PC_JACOBI, 0, 0, 8, DESO_MODE_NONE);
    run_pcg(PC_JACOBI, 0, 0, 8, DESO_MODE_FULL);
    if (ng > 1) run_pcg(PC_JACOBI, grids[1][0], grids[1][1], 5, DESO_MODE_FULL);
}

static void test_pcg_ssor(void **state)
{
    (void)state;
    run_pcg(PC_SSOR, 0, 0, 8, DESO_MODE_NONE);
    run_pcg(PC_SSOR, 0, 0, 8, DESO_MODE_FULL);
    /* block folding: the optimiser must weigh a cyclic remap of A against
     * running the triangular solves on the block folding                  */
    run_pcg(PC_SSOR, 0, 0, DESO_NB_BLOCK, DESO_MODE_FULL);
}

TU_MAIN(cmocka_unit_test(test_dvmul), cmocka_unit_test(test_mtx),
        cmocka_unit_test(test_pcg_jacobi), cmocka_unit_test(test_pcg_ssor))
