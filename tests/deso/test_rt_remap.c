/* The runtime's matrix remaps on both transports: the shared-memory rings
 * a context makes by default at its second matrix remap when every rank is
 * on one node (deso_info.remap_shm, 0 until then) and MPI messages
 * (DESO_REMAP_SHM=0).  Block folding makes every dtrsv
 * remap its matrix (to square cyclic(b) blocks, b <= 64); each force
 * solves with two matrices of different sizes, then updates one of them
 * (dger), so every force remaps again and the pairs' rings carry on from
 * one remap to the next, within a force and across forces.  Identity:
 * the solution is bitwise the same on both transports and within 1e-10
 * of a sequential solve; both transports count the same point-to-point
 * bytes and messages (a message on the rings counts as one, as on MPI);
 * msgs_shm is 0 on MPI, and positive on the rings when some rank sends
 * (n = 300: blocks of more than 64 rows at P >= 2).  Sizes: n = 1, n < P,
 * n = 67 (not a multiple of the grid or the block), 300; default and 1-D
 * grids (tu_grids).
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>
#include <string.h>

#include "test_util.h"

#define FORCES 3

typedef struct outcome {
    double *x, *y;                /* the two solutions, n and n + 3        */
    int64_t p2p[2], shm[2];       /* msgs, bytes: summed over ranks       */
    int remap_shm;                /* deso_info's                          */
} outcome;

/* A(i, j) of a well-conditioned matrix; `s` picks one of two.           */
static double entry(int64_t i, int64_t j, int64_t n, int s)
{
    double v = 1.0 / (double)(1 + (i > j ? i - j : j - i) + s);
    return i == j ? v + (double)n + 2.0 : v;
}

static double a_fn(int64_t i, int64_t j, void *arg)
{
    return entry(i, j, *(const int64_t *)arg, 0);
}

static double b_fn(int64_t i, int64_t j, void *arg)
{
    return entry(i, j, *(const int64_t *)arg, 1);
}

static double v_fn(int64_t i, void *arg)
{
    (void)arg;
    return (double)(i % 7) - 2.5;
}

/* The same FORCES forces sequentially: x <- A^-1 x (lower), y <- B^-T y
 * (upper), A <- A + 1e-3 x x^T.                                         */
static void reference(int64_t n, double *x, double *y)
{
    int64_t m = n + 3;
    double *A = malloc((size_t)(n * n) * sizeof *A);
    double *B = malloc((size_t)(m * m) * sizeof *B);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) A[i + j * n] = a_fn(i, j, &n);
    for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < m; i++) B[i + j * m] = b_fn(i, j, &m);
    for (int64_t i = 0; i < n; i++) x[i] = v_fn(i, NULL);
    for (int64_t i = 0; i < m; i++) y[i] = v_fn(i, NULL);
    for (int f = 0; f < FORCES; f++) {
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit,
                    (int)n, A, (int)n, x, 1);
        cblas_dtrsv(CblasColMajor, CblasUpper, CblasTrans, CblasNonUnit,
                    (int)m, B, (int)m, y, 1);
        cblas_dger(CblasColMajor, (int)n, (int)n, 1e-3, x, 1, x, 1, A,
                   (int)n);
    }
    free(A);
    free(B);
}

/* This rank's counters since the reset, summed over the ranks.         */
static void traffic(outcome *o)
{
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    int64_t v[4] = {st.msgs_p2p, st.bytes_p2p, st.msgs_shm, st.bytes_shm};
    MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    o->p2p[0] = v[0];
    o->p2p[1] = v[1];
    o->shm[0] = v[2];
    o->shm[1] = v[3];
}

/* A context of grid pr x pc, block folding, on MPI messages (shm 0:
 * deso_options.remap_shm < 0 at n = 300, DESO_REMAP_SHM=0 otherwise) or
 * with the default (the rings where they can be).                        */
static deso_ctx *context(int64_t n, int pr, int pc, int shm)
{
    deso_options opt;
    deso_options_default(&opt);
    opt.grid_rows = pr;
    opt.grid_cols = pc;
    opt.nb = DESO_NB_BLOCK;
    if (!shm && n == 300) opt.remap_shm = -1;
    else if (!shm) setenv("DESO_REMAP_SHM", "0", 1);
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &opt, &ctx));
    unsetenv("DESO_REMAP_SHM");
    return ctx;
}

/* The FORCES forces on context(n, pr, pc, shm).                          */
static void run(int64_t n, int pr, int pc, int shm, outcome *o)
{
    deso_ctx *ctx = context(n, pr, pc, shm);
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    assert_int_equal(info.remap_shm, 0);       /* nothing remapped yet  */
    int64_t m = n + 3;
    deso_mat *A, *B;
    deso_vec *x, *y;
    TU_OK(deso_mat_from_fn(ctx, n, n, a_fn, &n, &A));
    TU_OK(deso_mat_from_fn(ctx, m, m, b_fn, &m, &B));
    TU_OK(deso_vec_from_fn(ctx, n, v_fn, NULL, &x));
    TU_OK(deso_vec_from_fn(ctx, m, v_fn, NULL, &y));
    TU_OK(deso_flush(ctx));
    deso_stats_reset();
    for (int f = 0; f < FORCES; f++) {
        TU_OK(deso_dtrsv(DESO_COL_MAJOR, DESO_LOWER, DESO_NO_TRANS,
                         DESO_NON_UNIT, n, A, n, x, 1));
        TU_OK(deso_dtrsv(DESO_COL_MAJOR, DESO_UPPER, DESO_TRANS,
                         DESO_NON_UNIT, m, B, m, y, 1));
        TU_OK(deso_dger(DESO_COL_MAJOR, n, n, 1e-3, x, 1, x, 1, A, n));
        TU_OK(deso_flush(ctx));
    }
    TU_OK(deso_vec_gather(x, o->x, DESO_ALL_RANKS));
    TU_OK(deso_vec_gather(y, o->y, DESO_ALL_RANKS));
    traffic(o);
    TU_OK(deso_get_info(ctx, &info));
    o->remap_shm = info.remap_shm;
    TU_OK(deso_finalize(&ctx));
}

static int close_to(const double *got, const double *want, int64_t n)
{
    return tu_relerr(got, want, n) < 1e-10;
}

static void check_case(int64_t n, int pr, int pc, int one_node)
{
    int64_t m = n + 3;
    outcome o[2];
    double *buf = malloc((size_t)(4 * m + n + m) * sizeof *buf);
    double *rx = buf + 4 * m, *ry = rx + n;
    for (int shm = 0; shm < 2; shm++) {
        o[shm].x = buf + 2 * m * shm;
        o[shm].y = o[shm].x + m;
        run(n, pr, pc, shm, &o[shm]);
    }
    reference(n, rx, ry);
    int P = tu_size(), rings = one_node && P > 1;
    /* below P = 2 or n = 1 nothing may be remapped, so no rings made    */
    int ok = o[0].remap_shm == 0 && o[1].remap_shm <= rings;
    if (n == 300) ok &= o[1].remap_shm == rings;
    /* pure data movement: the same bits either way                       */
    ok &= memcmp(o[0].x, o[1].x, (size_t)n * sizeof *buf) == 0;
    ok &= memcmp(o[0].y, o[1].y, (size_t)m * sizeof *buf) == 0;
    ok &= close_to(o[1].x, rx, n) && close_to(o[1].y, ry, m);
    ok &= o[0].p2p[0] == o[1].p2p[0] && o[0].p2p[1] == o[1].p2p[1];
    ok &= o[0].shm[0] == 0 && o[0].shm[1] == 0;
    ok &= o[1].shm[0] <= o[1].p2p[0] && o[1].shm[1] <= o[1].p2p[1];
    ok &= rings || o[1].shm[0] == 0;
    if (n == 300) ok &= (o[1].shm[0] > 0) == rings;
    ok &= (o[1].shm[0] > 0) == (o[1].shm[1] > 0);
    if (!ok)
        print_error("n %lld grid %dx%d: remap_shm %d/%d, p2p %lld/%lld "
                    "msgs, shm %lld msgs %lld B\n", (long long)n, pr, pc,
                    o[0].remap_shm, o[1].remap_shm, (long long)o[0].p2p[0],
                    (long long)o[1].p2p[0], (long long)o[1].shm[0],
                    (long long)o[1].shm[1]);
    assert_true(tu_all(ok));
    free(buf);
}

static void test_transports(void **state)
{
    (void)state;
    int grids[4][2];
    int ng = tu_grids(grids), one = tu_one_node();
    const int64_t sizes[] = {1, tu_size() - 1, 67, 300};
    for (int g = 0; g < ng; g++)
        for (int k = 0; k < 4; k++)
            if (sizes[k] > 0) check_case(sizes[k], grids[g][0], grids[g][1],
                                         one);
}

TU_MAIN(cmocka_unit_test(test_transports))
