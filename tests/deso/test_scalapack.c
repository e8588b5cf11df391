/* ScaLAPACK interop: deso_{mat,vec}_{from,to}_scalapack and
 * deso_blacs_context.
 *
 * Oracles: the round trips are checked element by element against the
 * generator a(i, j) (exact: data is only copied, never computed); the
 * solve against LAPACK's sequential dgesv on the whole matrix, built
 * identically on every rank (relative max error <= 1e-10 on a diagonally
 * dominant matrix, whose condition number is below 10).  Awkward sizes:
 * n not a multiple of the block sizes, n < P, n = 1.
 * deso-np: 1 2 3
 * deso-np-long: 4                                                         */
#include "test_util.h"

void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow,
                     int *mycol);
void Cblacs_gridexit(int ctxt);
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia,
             const int *ja, const int *desca, int *ipiv, double *b,
             const int *ib, const int *jb, const int *descb, int *info);
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda,
            int *ipiv, double *b, const int *ldb, int *info);

static int numroc(int n, int b, int c, int p)
{
    int nblocks = n / b, num = (nblocks / p) * b, extra = nblocks % p;
    if (c < extra) num += b;
    else if (c == extra) num += n % b;
    return num;
}

/* global index of local index l at grid coordinate c, cyclic(b) over p   */
static int glob(int l, int b, int c, int p) { return ((l / b) * p + c) * b + l % b; }

static double gen(int64_t i, int64_t j) { return 1000.0 * (double)i + (double)j + 0.25; }
static double vgen(int64_t i, void *arg)
{
    (void)arg;
    return 0.5 - (double)i;
}

/* A ScaLAPACK local array of gen on this rank (LLD = local rows + pad).  */
typedef struct {
    int desc[9];
    double *a;
    int rows, cols;
} sl_mat;

static sl_mat sl_make(int ctxt, int m, int n, int mb, int nb, int pad, int vec)
{
    int pr, pc, r, c;
    Cblacs_gridinfo(ctxt, &pr, &pc, &r, &c);
    sl_mat s;
    s.rows = numroc(m, mb, r, pr);
    s.cols = numroc(n, nb, c, pc);
    int lld = (s.rows > 1 ? s.rows : 1) + pad;
    int d[9] = {1, ctxt, m, n, mb, nb, 0, 0, lld};
    memcpy(s.desc, d, sizeof d);
    s.a = calloc((size_t)lld * (size_t)(s.cols > 0 ? s.cols : 1), sizeof(double));
    for (int lj = 0; lj < s.cols; lj++)
        for (int li = 0; li < s.rows; li++) {
            int i = glob(li, mb, r, pr), j = glob(lj, nb, c, pc);
            s.a[(size_t)lj * lld + li] = vec ? vgen(i, NULL) : gen(i, j);
        }
    return s;
}

/* Every local element of a descriptor + array equals the generator.     */
static int sl_check(const int desc[9], const double *a, int vec)
{
    int pr, pc, r, c;
    Cblacs_gridinfo(desc[1], &pr, &pc, &r, &c);
    int rows = numroc(desc[2], desc[4], r, pr), cols = numroc(desc[3], desc[5], c, pc);
    int bad = 0;
    if (desc[0] != 1 || desc[6] != 0 || desc[7] != 0 || desc[8] < (rows > 1 ? rows : 1))
        bad++;
    for (int lj = 0; lj < cols && !bad; lj++)
        for (int li = 0; li < rows; li++) {
            int i = glob(li, desc[4], r, pr), j = glob(lj, desc[5], c, pc);
            double want = vec ? vgen(i, NULL) : gen(i, j);
            if (a[(size_t)lj * desc[8] + li] != want) bad++;
        }
    return bad == 0;
}

static int gather_ok(const deso_mat *A, int m, int n)
{
    double *buf = malloc((size_t)(m > 0 ? m : 1) * (size_t)(n > 0 ? n : 1) * sizeof(double));
    TU_OK(deso_mat_gather(A, buf, m > 1 ? m : 1, DESO_ALL_RANKS));
    int ok = 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            if (buf[(size_t)j * m + i] != gen(i, j)) ok = 0;
    free(buf);
    return ok;
}

static int vgather_ok(const deso_vec *x, int n)
{
    double *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    TU_OK(deso_vec_gather(x, buf, DESO_ALL_RANKS));
    int ok = 1;
    for (int i = 0; i < n; i++)
        if (buf[i] != vgen(i, NULL)) ok = 0;
    free(buf);
    return ok;
}

/* ScaLAPACK -> deso -> ScaLAPACK, matrices and vectors, both modes.     */
static void test_round_trip(void **state)
{
    (void)state;
    int P = tu_size();
    const int sizes[][4] = {  /* m, n, mb, nb */
        {1, 1, 1, 1}, {1, 1, 4, 3}, {7, 5, 2, 3}, {13, 11, 4, 4},
        {P > 1 ? P - 1 : 1, 3, 1, 2}, {10, 1, 3, 1}, {0, 4, 2, 2}};
    deso_ctx *ctx = tu_ctx(0, 0, 3);
    int ctxt;
    TU_OK(deso_blacs_context(ctx, &ctxt));
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int m = sizes[k][0], n = sizes[k][1], mb = sizes[k][2], nb = sizes[k][3];
        for (int mode = 0; mode < 2; mode++) {
            deso_copy_mode cm = mode ? DESO_BORROW : DESO_COPY;
            /* padded LLD for a copy; a borrow needs LLD = local rows      */
            sl_mat s = sl_make(ctxt, m, n, mb, nb, mode ? 0 : 2, 0);
            deso_mat *A = NULL;
            TU_OK(deso_mat_from_scalapack(ctx, s.a, s.desc, cm, &A));
            if (!mode) memset(s.a, 0, sizeof(double));  /* a copy is independent */
            assert_true(tu_all(gather_ok(A, m, n)));
            /* back, in its own folding and in another one                 */
            int d[9];
            double *loc = NULL;
            TU_OK(deso_mat_to_scalapack(A, ctxt, 0, 0, cm, d, &loc));
            assert_true(tu_all(d[4] >= 1 && d[5] >= 1 && d[1] == ctxt));
            assert_true(tu_all(sl_check(d, loc, 0)));
            /* borrowed, not copied (where this rank holds data)          */
            assert_true(tu_all(!mode || s.rows * s.cols == 0 || loc == s.a));
            if (!mode) free(loc);
            TU_OK(deso_mat_to_scalapack(A, ctxt, nb + 1, mb + 2, DESO_COPY, d, &loc));
            assert_true(tu_all(d[4] == nb + 1 && d[5] == mb + 2));
            assert_true(tu_all(sl_check(d, loc, 0)));
            free(loc);
            /* a context made by the call (desc[1]), freed by the caller   */
            TU_OK(deso_mat_to_scalapack(A, -1, 2, 2, DESO_COPY, d, &loc));
            assert_true(tu_all(d[1] >= 0 && sl_check(d, loc, 0)));
            Cblacs_gridexit(d[1]);
            free(loc);
            TU_OK(deso_mat_destroy(&A));
            TU_OK(deso_flush(ctx));
            free(s.a);

            /* vectors: an m x 1 descriptor                                */
            sl_mat v = sl_make(ctxt, m, 1, mb, 1, mode ? 0 : 1, 1);
            deso_vec *x = NULL;
            TU_OK(deso_vec_from_scalapack(ctx, v.a, v.desc, cm, &x));
            assert_true(tu_all(vgather_ok(x, m)));
            TU_OK(deso_vec_to_scalapack(x, ctxt, mb + 1, cm, d, &loc));
            assert_true(tu_all(d[2] == m && d[3] == 1 && d[4] == mb + 1 && d[5] == 1));
            assert_true(tu_all(sl_check(d, loc, 1)));
            if (!mode) free(loc);
            TU_OK(deso_vec_destroy(&x));
            TU_OK(deso_flush(ctx));
            free(v.a);
        }
    }
    Cblacs_gridexit(ctxt);
    TU_OK(deso_finalize(&ctx));
}

/* A borrowed matrix in a computation: y = A x against a sequential loop. */
static void test_borrow_compute(void **state)
{
    (void)state;
    const int m = 11, n = 9;
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    int ctxt;
    TU_OK(deso_blacs_context(ctx, &ctxt));
    sl_mat s = sl_make(ctxt, m, n, 3, 2, 0, 0);
    deso_mat *A;
    deso_vec *x, *y;
    TU_OK(deso_mat_from_scalapack(ctx, s.a, s.desc, DESO_BORROW, &A));
    TU_OK(deso_vec_from_fn(ctx, n, vgen, NULL, &x));
    TU_OK(deso_vec_create(ctx, m, &y));
    TU_OK(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, A, m, x, 1, 0.0, y, 1));
    double got[11], want[11];
    tu_gather(y, got);
    for (int i = 0; i < m; i++) {
        want[i] = 0.0;
        for (int j = 0; j < n; j++) want[i] += gen(i, j) * vgen(j, NULL);
    }
    assert_true(tu_all(tu_relerr(got, want, m) < 1e-13));
    TU_OK(deso_finalize(&ctx));   /* frees the handles, not the array    */
    free(s.a);
    Cblacs_gridexit(ctxt);
}

/* Bad descriptors and grids fail on every rank with the same code.      */
static void test_errors(void **state)
{
    (void)state;
    int P = tu_size();
    deso_ctx *ctx = tu_ctx(0, 0, 2);
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    int ctxt;
    TU_OK(deso_blacs_context(ctx, &ctxt));
    sl_mat s = sl_make(ctxt, 6, 6, 2, 2, 0, 0);
    deso_mat *A = NULL;
    int d[9];
    memcpy(d, s.desc, sizeof d);
    d[6] = 1;
    TU_ERR(deso_mat_from_scalapack(ctx, s.a, d, DESO_COPY, &A), DESO_ENOTSUP);
    memcpy(d, s.desc, sizeof d);
    d[0] = 2;
    TU_ERR(deso_mat_from_scalapack(ctx, s.a, d, DESO_COPY, &A), DESO_EINVAL);
    memcpy(d, s.desc, sizeof d);
    d[4] = 0;
    TU_ERR(deso_mat_from_scalapack(ctx, s.a, d, DESO_COPY, &A), DESO_EINVAL);
    memcpy(d, s.desc, sizeof d);
    /* LLD too small on the ranks with > 1 local row (all, at 6 x 6 with
     * MB = 2 on <= 2 grid rows); the others learn it by agreement         */
    if (s.rows > 1) d[8] = s.rows - 1;
    TU_ERR(deso_mat_from_scalapack(ctx, s.a, d, DESO_COPY, &A), DESO_EINVAL);
    deso_vec *xv = NULL;
    TU_ERR(deso_vec_from_scalapack(ctx, s.a, s.desc, DESO_COPY, NULL), DESO_ENULL);
    TU_ERR(deso_vec_from_scalapack(ctx, s.a, s.desc, DESO_COPY, &xv), DESO_ESIZE);
    TU_ERR(deso_mat_from_scalapack(ctx, s.a, s.desc, (deso_copy_mode)7, &A),
           DESO_EINVAL);
    if (info.grid_rows > 1 && info.grid_cols > 1) {
        /* a "Col" grid numbers ranks column-major: not deso's positions   */
        int col;
        Cblacs_get(-1, 0, &col);
        Cblacs_gridinit(&col, "Col", info.grid_rows, info.grid_cols);
        memcpy(d, s.desc, sizeof d);
        d[1] = col;
        TU_ERR(deso_mat_from_scalapack(ctx, s.a, d, DESO_COPY, &A), DESO_EGRID);
        Cblacs_gridexit(col);
    }
    if (P == 1) {
        /* a 1 x 1 BLACS grid of MPI_COMM_WORLD matches a one-rank context */
        int w;
        Cblacs_get(-1, 0, &w);
        Cblacs_gridinit(&w, "Row", 1, 1);
        memcpy(d, s.desc, sizeof d);
        d[1] = w;
        TU_OK(deso_mat_from_scalapack(ctx, s.a, d, DESO_COPY, &A));
        TU_OK(deso_mat_destroy(&A));
        Cblacs_gridexit(w);
    }
    TU_OK(deso_mat_from_scalapack(ctx, s.a, s.desc, DESO_COPY, &A));
    double *loc = NULL;
    TU_ERR(deso_mat_to_scalapack(A, ctxt, 2, 0, DESO_COPY, d, &loc), DESO_EINVAL);
    assert_true(tu_all(loc == NULL));
    TU_ERR(deso_mat_to_scalapack(A, ctxt, 2, 2, DESO_COPY, NULL, &loc), DESO_ENULL);
    TU_ERR(deso_mat_to_scalapack(NULL, ctxt, 2, 2, DESO_COPY, d, &loc), DESO_ENULL);
    TU_OK(deso_mat_destroy(&A));
    free(s.a);
    Cblacs_gridexit(ctxt);
    TU_OK(deso_finalize(&ctx));
}

static double sys_a(int64_t i, int64_t j, void *arg)
{
    int n = *(const int *)arg;
    double v = 1.0 / (1.0 + (double)((i * 7 + j * 3) % 5)) - 0.3;
    return i == j ? v + (double)n : v;   /* diagonally dominant          */
}
static double sys_b(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 + 0.1 * (double)i;
}

/* Build with deso, solve with pdgesv, compare with dgesv.                */
static void test_solve(void **state)
{
    (void)state;
    int P = tu_size();
    const int ns[] = {1, P > 1 ? P - 1 : 2, 10, 37};
    const int nbs[] = {1, 4};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (size_t q = 0; q < 2; q++) {
            int n = ns[k], nb = nbs[q];
            deso_ctx *ctx = tu_ctx(0, 0, 3);
            deso_mat *A;
            deso_vec *b, *x;
            TU_OK(deso_mat_from_fn(ctx, n, n, sys_a, &n, &A));
            TU_OK(deso_vec_from_fn(ctx, n, sys_b, NULL, &b));
            int ctxt;
            TU_OK(deso_blacs_context(ctx, &ctxt));
            int da[9], db[9];
            double *la, *lb;
            TU_OK(deso_mat_to_scalapack(A, ctxt, nb, nb, DESO_COPY, da, &la));
            TU_OK(deso_vec_to_scalapack(b, ctxt, nb, DESO_COPY, db, &lb));
            int one = 1, info = -1;
            int *ipiv = malloc((size_t)(da[8] + nb) * sizeof(int));
            pdgesv_(&n, &one, la, &one, &one, da, ipiv, lb, &one, &one, db, &info);
            assert_true(tu_all(info == 0));
            TU_OK(deso_vec_from_scalapack(ctx, lb, db, DESO_COPY, &x));
            double *got = malloc((size_t)n * sizeof(double));
            tu_gather(x, got);

            double *fa = malloc((size_t)n * (size_t)n * sizeof(double));
            double *fx = malloc((size_t)n * sizeof(double));
            int *fp = malloc((size_t)n * sizeof(int));
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) fa[(size_t)j * n + i] = sys_a(i, j, &n);
            for (int i = 0; i < n; i++) fx[i] = sys_b(i, NULL);
            int finfo = -1;
            dgesv_(&n, &one, fa, &n, fp, fx, &n, &finfo);
            assert_true(tu_all(finfo == 0));
            double err = tu_relerr(got, fx, n);
            if (err > 1e-10)
                print_error("n = %d nb = %d: relative error %g\n", n, nb, err);
            assert_true(tu_all(err <= 1e-10));
            free(fa);
            free(fx);
            free(fp);
            free(got);
            free(ipiv);
            free(la);
            free(lb);
            Cblacs_gridexit(ctxt);
            TU_OK(deso_finalize(&ctx));
        }
}

TU_MAIN(cmocka_unit_test(test_round_trip), cmocka_unit_test(test_borrow_compute),
        cmocka_unit_test(test_errors), cmocka_unit_test(test_solve))
