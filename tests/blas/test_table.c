/* The operation table (blas/table.c) and its local kernels, serially.
 * Every row says what blas.h documents; every constraint function asks for
 * the placements its comment promises, writes no more operands than the
 * node has, and refuses an operand of the wrong kind or a misaligned
 * result with the right code.  Every kernel, run on the local pieces of
 * each rank of a grid and reduced by hand as the executor would, matches a
 * brute-force loop over the global operands, at sizes where off-by-ones
 * show: n = 1, odd sizes, m != n, blocks straddling the diagonal, ranks
 * holding nothing.  Global-to-local maps are written out here rather than
 * taken from blas/layout.c, so that a bug shared with it cannot hide.     */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "blas/blas.h"
#include "placement/errors.h"
#include "tests/serial_util.h"

#define EXPECT_OK(expr) assert_int_equal((expr), DESO_OK)

/* expr must return `code` and leave a fresh message naming `what`.        */
#define EXPECT_FAIL(expr, code, what)                                        \
    do {                                                                     \
        (void)deso__fail(DESO_OK, "%s", "");                                 \
        assert_int_equal((expr), (code));                                    \
        assert_non_null(strstr(deso_last_error(), (what)));                  \
    } while (0)

#define PR 2            /* the grid of the constraint tests: both extents */
#define PC 3            /* > 1 and unequal, so no dimension is a no-op    */
#define MAXN 64
#define SENT (-7.25)    /* past the end of a result: must stay untouched  */

/* ---- the table's rows --------------------------------------------------- */

/* Each row as blas.h's operation list documents it: operand kinds (V, M,
 * S), result kind, the operand the result updates, the reduction.        */
static const struct {
    blas_op op;
    const char *roles;
    char result;
    int inout;
    blas_red red;
} documented[] = {
    {BLAS_OP_COPY, "V", 'V', -1, BLAS_RED_NONE},
    {BLAS_OP_SCAL, "SV", 'V', 1, BLAS_RED_NONE},
    {BLAS_OP_AXPY, "SVV", 'V', 2, BLAS_RED_NONE},
    {BLAS_OP_AXPBY, "SVSV", 'V', 3, BLAS_RED_NONE},
    {BLAS_OP_DOT, "VV", 'S', -1, BLAS_RED_SUM},
    {BLAS_OP_NRM2, "V", 'S', -1, BLAS_RED_SUM},
    {BLAS_OP_ASUM, "V", 'S', -1, BLAS_RED_SUM},
    {BLAS_OP_IAMAX, "V", 'S', -1, BLAS_RED_MAXLOC},
    {BLAS_OP_SADD, "SS", 'S', -1, BLAS_RED_NONE},
    {BLAS_OP_SSUB, "SS", 'S', -1, BLAS_RED_NONE},
    {BLAS_OP_SMUL, "SS", 'S', -1, BLAS_RED_NONE},
    {BLAS_OP_SDIV, "SS", 'S', -1, BLAS_RED_NONE},
    {BLAS_OP_SSQRT, "S", 'S', -1, BLAS_RED_NONE},
    {BLAS_OP_SNEG, "S", 'S', -1, BLAS_RED_NONE},
    {BLAS_OP_GEMV, "SMVSV", 'V', 4, BLAS_RED_SUM},
    {BLAS_OP_GER, "SVVM", 'M', 3, BLAS_RED_NONE},
    {BLAS_OP_TRSV, "MV", 'V', 1, BLAS_RED_NONE},
    {BLAS_OP_VMUL, "VV", 'V', 1, BLAS_RED_NONE},
    {BLAS_OP_ROT, "SVSV", 'V', 1, BLAS_RED_NONE},
    {BLAS_OP_VDIV, "VV", 'V', 1, BLAS_RED_NONE},
    {BLAS_OP_VRECIP, "V", 'V', -1, BLAS_RED_NONE},
    {BLAS_OP_VABS, "V", 'V', -1, BLAS_RED_NONE},
    {BLAS_OP_SMAX, "SS", 'S', -1, BLAS_RED_NONE},
    {BLAS_OP_SMIN, "SS", 'S', -1, BLAS_RED_NONE},
    {BLAS_OP_VGET, "V", 'V', -1, BLAS_RED_NONE},
    {BLAS_OP_VPUT, "VV", 'V', 0, BLAS_RED_NONE},
    {BLAS_OP_USER, "V", 'V', -1, BLAS_RED_NONE},
    {BLAS_OP_USMV, "SVSV", 'V', 3, BLAS_RED_NONE},
};

static blas_kind kind_of(char c)
{
    return c == 'M' ? BLAS_MAT : c == 'S' ? BLAS_SCA : BLAS_VEC;
}

static void test_rows_match_the_documentation(void **state)
{
    (void)state;
    /* a new operation fails here until this file knows it                 */
    assert_int_equal(sizeof documented / sizeof documented[0], BLAS_OP_COUNT);
    for (size_t i = 0; i < BLAS_OP_COUNT; i++) {
        blas_op op = documented[i].op;
        const blas_op_info *info = blas_op_get(op);
        assert_non_null(info);
        assert_non_null(info->name);
        assert_non_null(info->constrain);
        assert_int_equal(info->nops, (int)strlen(documented[i].roles));
        for (int k = 0; k < info->nops; k++)
            assert_int_equal(info->roles[k], kind_of(documented[i].roles[k]));
        assert_int_equal(info->result, kind_of(documented[i].result));
        assert_int_equal(info->inout, documented[i].inout);
        assert_int_equal(info->red, documented[i].red);
        /* only trsv, the views and the sparse product communicate by
         * themselves, and a user operator's callback is deso/'s to run;
         * every other row has a kernel, and a reduction needs a finish to
         * turn its buffer into a value                                   */
        assert_true(info->distributed ==
                    (op == BLAS_OP_TRSV || op == BLAS_OP_VGET ||
                     op == BLAS_OP_VPUT || op == BLAS_OP_USER ||
                     op == BLAS_OP_USMV));
        assert_true((info->kernel == NULL) == info->distributed);
        assert_true((info->finish != NULL) == (info->red != BLAS_RED_NONE));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(info->name,
                                    blas_op_get(documented[j].op)->name);
        /* only gemv and usmv drop operands: b and y go without
         * BLAS_F_BETA                                                    */
        assert_int_equal(blas_desc_nops(op, BLAS_F_BETA), info->nops);
        assert_int_equal(blas_desc_nops(op, 0),
                         op == BLAS_OP_GEMV   ? 3
                         : op == BLAS_OP_USMV ? 2
                                              : info->nops);
    }
    assert_null(blas_op_get(BLAS_OP_COUNT));
    assert_null(blas_op_get((blas_op)-1));
    assert_int_equal(blas_desc_nops(BLAS_OP_COUNT, 0), 0);
}

/* ---- constraint functions ----------------------------------------------- */

static void expect_layout(const blas_layout *got, const blas_layout *want,
                          const char *what, int k)
{
    if (!blas_layout_equal(got, want))
        fail_msg("%s operand %d: got kind %d %lldx%lld dist %d b %lld nb %lld"
                 " rep %u, want kind %d %lldx%lld dist %d b %lld nb %lld "
                 "rep %u", what, k, got->kind, (long long)got->m,
                 (long long)got->n, got->dist, (long long)got->b,
                 (long long)got->nb, got->rep, want->kind, (long long)want->m,
                 (long long)want->n, want->dist, (long long)want->b,
                 (long long)want->nb, want->rep);
}

/* Runs op's constraint function.  Entries of req past the node's operands
 * start as `unset` and must stay so; the ones it fills must have the
 * kinds the row's roles name.                                             */
static const blas_layout unset = {.kind = BLAS_MAT, .m = -1, .n = -1};

static deso_err constrain(blas_op op, unsigned flags, const blas_layout *res,
                          const blas_layout *cur, blas_layout *req)
{
    const blas_op_info *info = blas_op_get(op);
    blas_desc d = {op, flags, blas_desc_nops(op, flags), 0, 0, 0, 0, 0, NULL};
    for (int k = 0; k < BLAS_MAXOPS; k++) req[k] = unset;
    deso_err e = info->constrain(&d, res, cur, req);
    if (e != DESO_OK) return e;
    for (int k = 0; k < BLAS_MAXOPS; k++) {
        if (k < d.nops) assert_int_equal(req[k].kind, info->roles[k]);
        else expect_layout(&req[k], &unset, info->name, k);
    }
    return DESO_OK;
}

/* Runs the constraint and compares every required layout with want.       */
static void expect_required(blas_op op, unsigned flags,
                            const blas_layout *res, const blas_layout *cur,
                            const blas_layout *want)
{
    blas_layout req[BLAS_MAXOPS];
    EXPECT_OK(constrain(op, flags, res, cur, req));
    for (int k = 0; k < blas_desc_nops(op, flags); k++)
        expect_layout(&req[k], &want[k], blas_op_get(op)->name, k);
}

static blas_layout vec(int64_t n, int dist, int64_t b, unsigned rep)
{
    return blas_layout_vec(n, dist, b, rep, PR, PC);
}

static blas_layout sca(unsigned rep) { return blas_layout_sca(rep, PR, PC); }

/* Scalars must be present wherever the vector they scale lives: along
 * the vector's distributed dimension and wherever it is replicated.      */
static void test_updates_place_scalars_with_the_vector(void **state)
{
    (void)state;
    blas_layout row = vec(7, 1, 2, 0u), row_rep = vec(7, 1, 2, 1u);
    blas_layout col = vec(7, 0, 3, 0u);
    expect_required(BLAS_OP_COPY, 0, &row, &col, &row);
    expect_required(BLAS_OP_SCAL, 0, &row, (blas_layout[]){sca(1u), col},
                    (blas_layout[]){sca(2u), row});
    expect_required(BLAS_OP_SCAL, 0, &row_rep, (blas_layout[]){sca(1u), col},
                    (blas_layout[]){sca(3u), row_rep});
    expect_required(BLAS_OP_AXPY, 0, &col,
                    (blas_layout[]){sca(2u), row, row_rep},
                    (blas_layout[]){sca(1u), col, col});
    expect_required(BLAS_OP_AXPBY, 0, &row_rep,
                    (blas_layout[]){sca(1u), col, sca(1u), row},
                    (blas_layout[]){sca(3u), row_rep, sca(3u), row_rep});
    expect_required(BLAS_OP_VMUL, 0, &row, (blas_layout[]){col, row_rep},
                    (blas_layout[]){row, row});
    for (blas_op op = BLAS_OP_SADD; op <= BLAS_OP_SNEG; op++) {
        blas_layout s = sca(1u);
        expect_required(op, 0, &s, (blas_layout[]){sca(2u), sca(3u)},
                        (blas_layout[]){s, s});
    }
}

/* Reductions keep x where it is and align y with it; their operand must
 * be a vector.  The reduction runs over x's distributed dimension.        */
static void test_reductions_follow_x(void **state)
{
    (void)state;
    blas_layout row = vec(9, 1, 2, 0u), col = vec(9, 0, 4, 2u);
    blas_layout s = sca(3u), m = blas_layout_mat(9, 9, 2, 2, PR, PC);
    expect_required(BLAS_OP_DOT, 0, &s, (blas_layout[]){row, col},
                    (blas_layout[]){row, row});
    for (blas_op op = BLAS_OP_NRM2; op <= BLAS_OP_IAMAX; op++)
        expect_required(op, 0, &s, &col, &col);
    blas_layout req[BLAS_MAXOPS];
    for (blas_op op = BLAS_OP_DOT; op <= BLAS_OP_IAMAX; op++) {
        EXPECT_FAIL(constrain(op, 0, &s, (blas_layout[]){m, row}, req),
                    DESO_EINTERNAL, "reduction");
        EXPECT_FAIL(constrain(op, 0, &s, (blas_layout[]){s, row}, req),
                    DESO_EINTERNAL, "reduction");
    }
    blas_desc dot = {BLAS_OP_DOT, 0, 2, 0, 0, 0, 0, 0, NULL};
    blas_desc iamax = {BLAS_OP_IAMAX, 0, 1, 0, 0, 0, 0, 0, NULL};
    blas_layout whole = vec(9, -1, 0, 3u);
    assert_int_equal(blas_red_dim(&dot, (blas_layout[]){row, row}), 1);
    assert_int_equal(blas_red_dim(&dot, (blas_layout[]){col, col}), 0);
    assert_int_equal(blas_red_dim(&iamax, &whole), -1);
    blas_local x = {.rows = 5};
    assert_int_equal(blas_red_len(&dot, (blas_local[]){x, x}), 1);
    assert_int_equal(blas_red_len(&iamax, &x), 2);   /* (|value|, index) */
    blas_desc axpy = {BLAS_OP_AXPY, 0, 3, 0, 0, 0, 0, 0, NULL};
    assert_int_equal(blas_red_dim(&axpy, (blas_layout[]){s, row, row}), -1);
    assert_int_equal(blas_red_len(&axpy, (blas_local[]){x, x, x}), 0);
}

/* gemv: the result must be folded like A's rows (N) or columns (T); x
 * then comes folded like the other dimension, replicated across the one
 * the result lives on.                                                   */
static void test_gemv_aligns_with_the_matrix(void **state)
{
    (void)state;
    blas_layout A = blas_layout_mat(5, 7, 2, 3, PR, PC), s = sca(3u);
    blas_layout yn = vec(5, 0, 2, 0u), yn_rep = vec(5, 0, 2, 2u);
    blas_layout yt = vec(7, 1, 3, 0u), any = vec(1, -1, 0, 3u);
    blas_layout cur[BLAS_MAXOPS] = {s, A, any, s, any};
    expect_required(BLAS_OP_GEMV, 0, &yn, cur,
                    (blas_layout[]){sca(1u), A, vec(7, 1, 3, 1u)});
    expect_required(BLAS_OP_GEMV, BLAS_F_BETA | BLAS_F_MASK, &yn_rep, cur,
                    (blas_layout[]){sca(3u), A, vec(7, 1, 3, 1u), sca(3u),
                                    yn_rep});
    expect_required(BLAS_OP_GEMV, BLAS_F_TRANS | BLAS_F_BETA, &yt, cur,
                    (blas_layout[]){sca(2u), A, vec(5, 0, 2, 2u), sca(2u),
                                    yt});
    blas_layout req[BLAS_MAXOPS];
    blas_layout bad[] = {vec(5, 0, 1, 0u),   /* another block size         */
                         vec(5, 1, 2, 0u),   /* the other grid dimension   */
                         vec(6, 0, 2, 0u),   /* another length             */
                         yt};                /* the transposed product's   */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_FAIL(constrain(BLAS_OP_GEMV, 0, &bad[i], cur, req),
                    DESO_ENOTSUP, "gemv");
    EXPECT_FAIL(constrain(BLAS_OP_GEMV, BLAS_F_TRANS, &yn, cur, req),
                DESO_ENOTSUP, "gemv");
    blas_layout not_a_matrix[BLAS_MAXOPS] = {s, yn, any, s, any};
    EXPECT_FAIL(constrain(BLAS_OP_GEMV, 0, &yn, not_a_matrix, req),
                DESO_EINTERNAL, "gemv");
    /* the reduction runs across the grid dimension op(A) x sums over      */
    blas_desc n = {BLAS_OP_GEMV, 0, 3, 0, 0, 0, 0, 0, NULL};
    blas_desc t = {BLAS_OP_GEMV, BLAS_F_TRANS, 3, 0, 0, 0, 0, 0, NULL};
    blas_layout one_col = blas_layout_mat(5, 7, 2, 3, PR, 1);
    assert_int_equal(blas_red_dim(&n, cur), 1);
    assert_int_equal(blas_red_dim(&t, cur), 0);
    assert_int_equal(blas_red_dim(&n, (blas_layout[]){s, one_col, any}), -1);
    blas_local L = {.rows = 3, .cols = 2};
    assert_int_equal(blas_red_len(&n, (blas_local[]){L, L, L}), 3);
    assert_int_equal(blas_red_len(&t, (blas_local[]){L, L, L}), 2);
}

static void test_ger_and_trsv_placements(void **state)
{
    (void)state;
    blas_layout A = blas_layout_mat(5, 7, 2, 3, PR, PC);
    blas_layout any = vec(1, -1, 0, 3u);
    expect_required(BLAS_OP_GER, 0, &A, (blas_layout[]){any, any, any, A},
                    (blas_layout[]){sca(3u), vec(5, 0, 2, 2u),
                                    vec(7, 1, 3, 1u), A});
    blas_layout req[BLAS_MAXOPS], x = vec(6, -1, 0, 3u);
    blas_layout ger_cur[] = {any, any, any, A};
    EXPECT_FAIL(constrain(BLAS_OP_GER, 0, &x, ger_cur, req), DESO_EINTERNAL,
                "ger");
    /* square blocks on a 2-D grid: T stays; unequal ones: cyclic(6)       */
    blas_layout sq = blas_layout_mat(6, 6, 2, 2, PR, PC);
    expect_required(BLAS_OP_TRSV, 0, &x, (blas_layout[]){sq, x},
                    (blas_layout[]){sq, x});
    const int64_t oblong[][2] = {{2, 3}, {3, 2}};
    for (int i = 0; i < 2; i++) {
        blas_layout T = blas_layout_mat(6, 6, oblong[i][0], oblong[i][1], PR,
                                        PC);
        expect_required(BLAS_OP_TRSV, 0, &x, (blas_layout[]){T, x},
                        (blas_layout[]){blas_layout_mat(6, 6, 6, 6, PR, PC),
                                        x});
    }
    /* block folding over 2 columns: 128 gives blocks of 64, the largest
     * kept; 129 gives 65, remapped to cyclic(64)                          */
    for (int64_t m = 128; m <= 129; m++) {
        blas_layout T = blas_layout_mat(m, m, 0, 0, 1, 2);
        blas_layout xm = blas_layout_vec(m, -1, 0, 3u, 1, 2);
        blas_layout want = m == 128 ? T : blas_layout_mat(m, m, 64, 64, 1, 2);
        expect_required(BLAS_OP_TRSV, 0, &xm, (blas_layout[]){T, xm},
                        (blas_layout[]){want, xm});
    }
    EXPECT_FAIL(constrain(BLAS_OP_TRSV, 0, &x, (blas_layout[]){x, x}, req),
                DESO_EINTERNAL, "trsv");
    /* the block trsv solves with: the distributed dimension's, at most 64 */
    blas_layout folded[] = {blas_layout_mat(128, 128, 0, 0, 1, 2),
                            blas_layout_mat(129, 129, 0, 0, 1, 2),
                            blas_layout_mat(9, 9, 4, 7, 2, 1),
                            blas_layout_mat(100, 100, 0, 0, 1, 1),
                            blas_layout_mat(5, 5, 0, 0, 1, 1)};
    const int64_t block[] = {64, 0, 4, 64, 5};
    for (int i = 0; i < 5; i++)
        assert_int_equal(blas_trsv_block_of(&folded[i]), block[i]);
}

/* A user operator: x replicated everywhere or where y is; y anywhere
 * unless declared replicated or as a matrix's rows (then elsewhere is
 * refused).                                                              */
static void test_user_placements(void **state)
{
    (void)state;
    blas_layout rows = vec(7, 0, 2, 2u), repl = vec(7, -1, 0, 3u);
    blas_layout col = vec(7, 1, 3, 0u), x5 = vec(5, 1, 2, 1u);
    blas_layout x7 = vec(7, 1, 2, 1u), x5r = vec(5, -1, 0, 3u);
    blas_layout pin, req[BLAS_MAXOPS];
    const blas_op_info *info = blas_op_get(BLAS_OP_USER);
    /* free y: x replicated (x's own length) or where y is               */
    blas_desc d = {BLAS_OP_USER, 0, 1, 0, 0, 7, 0, 0, NULL};
    assert_false(blas_user_pinned(&d, PR, PC, &pin));
    const blas_layout *ys[] = {&rows, &col, &repl};
    for (int k = 0; k < 3; k++) {
        EXPECT_OK(info->constrain(&d, ys[k], &x5, req));
        expect_layout(&req[0], &x5r, "user", 0);
    }
    d.flags = BLAS_F_XLIKE;
    for (int k = 0; k < 3; k++) {
        EXPECT_OK(info->constrain(&d, ys[k], &x7, req));
        expect_layout(&req[0], ys[k], "user like y", 0);
    }
    /* y declared as rows of block 2, or replicated: pinned there         */
    d.flags = BLAS_F_YROWS;
    d.inc = 2;
    assert_true(blas_user_pinned(&d, PR, PC, &pin));
    expect_layout(&pin, &rows, "user rows", -1);
    EXPECT_OK(info->constrain(&d, &rows, &x5, req));
    EXPECT_FAIL(info->constrain(&d, &col, &x5, req), DESO_ENOTSUP, "user");
    d.flags = BLAS_F_YREP | BLAS_F_XLIKE;
    d.inc = 0;
    assert_true(blas_user_pinned(&d, PR, PC, &pin));
    expect_layout(&pin, &repl, "user replicated", -1);
    EXPECT_OK(info->constrain(&d, &repl, &x7, req));
    expect_layout(&req[0], &repl, "user replicated x", 0);
    EXPECT_FAIL(info->constrain(&d, &rows, &x7, req), DESO_ENOTSUP, "user");
}

/* ---- kernels against brute force ---------------------------------------- */

/* The global indices cyclic(b) over p coordinates gives coordinate k, in
 * local order; returns how many.                                         */
static int64_t owned(int64_t n, int64_t b, int p, int k, int64_t *idx)
{
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++)
        if ((i / b) % p == k) idx[cnt++] = i;
    return cnt;
}

static blas_local piece(double *data, int64_t rows, int64_t cols,
                        const blas_layout *lay, int r, int c)
{
    return (blas_local){data, rows, cols, lay, r, c, 0};
}

/* |got - want| within rounding of terms whose magnitudes sum to `scale`:
 * OpenBLAS adds in another order, and with FMA, than the loops here.     */
static void expect_close(double got, double want, double scale,
                         const char *what, int64_t i)
{
    if (!(fabs(got - want) <= 1e-13 * scale))
        fail_msg("%s [%lld]: got %.17g, want %.17g", what, (long long)i, got,
                 want);
}

/* y <- f(x, y) element by element, on one local piece; n = 0 is a rank
 * holding nothing.  Past the piece's end nothing may be written.        */
static void test_elementwise_kernels(void **state)
{
    (void)state;
    tu_rng rng = {20240611};
    const int64_t sizes[] = {0, 1, 2, 3, 7, 16, 33};
    const blas_op ops[] = {BLAS_OP_COPY, BLAS_OP_SCAL, BLAS_OP_AXPY,
                           BLAS_OP_AXPBY, BLAS_OP_VMUL};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            int64_t n = sizes[s];
            const blas_op_info *info = blas_op_get(ops[o]);
            double x[MAXN], y[MAXN], got[MAXN + 1];
            double a = tu_rand(&rng), b = s % 2 ? tu_rand(&rng) : 0.0;
            tu_fill(&rng, x, n);
            tu_fill(&rng, y, n);
            /* beta = 0: y is not read (BLAS convention), even a NaN      */
            if (ops[o] == BLAS_OP_AXPBY && b == 0.0)
                for (int64_t i = 0; i < n; i++) y[i] = NAN;
            blas_layout vl = blas_layout_vec(n, -1, 0, 3u, 1, 1);
            blas_layout sl = blas_layout_sca(3u, 1, 1);
            blas_local vx = piece(x, n, 1, &vl, 0, 0);
            blas_local vy = piece(y, n, 1, &vl, 0, 0);
            blas_local sa = piece(&a, 1, 1, &sl, 0, 0);
            blas_local sb = piece(&b, 1, 1, &sl, 0, 0);
            blas_local in[BLAS_MAXOPS];
            switch (ops[o]) {
            case BLAS_OP_COPY: in[0] = vx; break;
            case BLAS_OP_SCAL: in[0] = sa; in[1] = vy; break;
            case BLAS_OP_AXPY: in[0] = sa; in[1] = vx; in[2] = vy; break;
            case BLAS_OP_AXPBY:
                in[0] = sa; in[1] = vx; in[2] = sb; in[3] = vy; break;
            default: in[0] = vx; in[1] = vy; break;
            }
            /* the result arrives holding the updated operand's data      */
            for (int64_t i = 0; i < n; i++)
                got[i] = info->inout >= 0 ? in[info->inout].data[i] : NAN;
            got[n] = SENT;
            blas_local R = piece(got, n, 1, &vl, 0, 0);
            blas_desc d = {ops[o], 0, info->nops, 0, 0, 0, 0, 0, NULL};
            info->kernel(&d, in, &R, NULL);
            for (int64_t i = 0; i < n; i++) {
                double want, scale;
                switch (ops[o]) {
                case BLAS_OP_COPY: want = x[i]; scale = 0.0; break;
                case BLAS_OP_SCAL: want = a * y[i]; scale = 0.0; break;
                case BLAS_OP_AXPY:
                    want = a * x[i] + y[i];
                    scale = fabs(a * x[i]) + fabs(y[i]);
                    break;
                case BLAS_OP_AXPBY:
                    want = b == 0.0 ? a * x[i] : a * x[i] + b * y[i];
                    scale = b == 0.0 ? 0.0 : fabs(a * x[i]) + fabs(b * y[i]);
                    break;
                default: want = x[i] * y[i]; scale = 0.0; break;
                }
                expect_close(got[i], want, scale, info->name, i);
            }
            assert_true(got[n] == SENT);
        }
}

static void test_scalar_kernels(void **state)
{
    (void)state;
    const double as[] = {2.5, -0.75, 0.0, 1e-300}, bs[] = {-3.0, 0.125};
    for (blas_op op = BLAS_OP_SADD; op <= BLAS_OP_SNEG; op++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 2; j++) {
                const blas_op_info *info = blas_op_get(op);
                double a = op == BLAS_OP_SSQRT ? fabs(as[i]) : as[i];
                double b = bs[j], want = 0.0;
                switch (op) {
                case BLAS_OP_SADD: want = a + b; break;
                case BLAS_OP_SSUB: want = a - b; break;
                case BLAS_OP_SMUL: want = a * b; break;
                case BLAS_OP_SDIV: want = a / b; break;
                case BLAS_OP_SSQRT: want = sqrt(a); break;
                default: want = -a; break;
                }
                blas_layout sl = blas_layout_sca(3u, 1, 1);
                blas_local in[2] = {piece(&a, 1, 1, &sl, 0, 0),
                                    piece(&b, 1, 1, &sl, 0, 0)};
                double got[2] = {NAN, SENT};
                blas_local R = piece(got, 1, 1, &sl, 0, 0);
                blas_desc d = {op, 0, info->nops, 0, 0, 0, 0, 0, NULL};
                info->kernel(&d, in, &R, NULL);
                assert_true(got[0] == want);
                assert_true(got[1] == SENT);
                /* a rank not holding the result writes nothing          */
                got[0] = SENT;
                R.rows = 0;
                info->kernel(&d, in, &R, NULL);
                assert_true(got[0] == SENT);
            }
}

/* One reduction over a vector cyclic(b) over p coordinates of grid
 * dimension dist: the kernel on every coordinate's piece, the reduction
 * by hand (sum; or largest value, smallest index), then finish.  Single-
 * value reductions are finished without operands, as a fused group is. */
static double reduce_by_hand(blas_op op, const double *x, const double *y,
                             int64_t n, int dist, int64_t b, int p)
{
    const blas_op_info *info = blas_op_get(op);
    blas_desc d = {op, 0, info->nops, 0, 0, 0, 0, 0, NULL};
    int pr = dist == 0 ? p : 2, pc = dist == 1 ? p : 1;
    blas_layout lay = blas_layout_vec(n, dist, b, 0u, pr, pc);
    double acc[BLAS_RED_WIDTH_MAX] = {0.0, 0.0, 0.0};
    if (info->red == BLAS_RED_MAXLOC) acc[0] = -1.0;
    for (int k = 0; k < p; k++) {
        int64_t idx[MAXN];
        double xl[MAXN], yl[MAXN], red[BLAS_RED_WIDTH_MAX] = {NAN, NAN, NAN};
        int64_t len = owned(n, b, p, k, idx);
        for (int64_t l = 0; l < len; l++) {
            xl[l] = x[idx[l]];
            yl[l] = y[idx[l]];
        }
        int r = dist == 0 ? k : 0, c = dist == 1 ? k : 0;
        blas_local in[2] = {piece(xl, len, 1, &lay, r, c),
                            piece(yl, len, 1, &lay, r, c)};
        int w = blas_red_width(op);
        assert_int_equal(blas_red_len(&d, in), w);
        info->kernel(&d, in, NULL, red);
        if (info->red == BLAS_RED_SUM) {
            for (int j = 0; j < w; j++) acc[j] += red[j];
        } else if (red[0] > acc[0] || (red[0] == acc[0] && red[1] < acc[1])) {
            acc[0] = red[0];
            acc[1] = red[1];
        }
    }
    double out[2] = {NAN, SENT};
    blas_layout sl = blas_layout_sca(3u, pr, pc);
    blas_local R = piece(out, 1, 1, &sl, 0, 0);
    blas_local x0 = piece(NULL, 0, 1, &lay, 0, 0);
    info->finish(&d, info->red == BLAS_RED_MAXLOC ? &x0 : NULL, &R, acc);
    assert_true(out[1] == SENT);
    return out[0];
}

static void test_reduction_kernels(void **state)
{
    (void)state;
    tu_rng rng = {977};
    const int64_t sizes[] = {1, 2, 3, 7, 10, 31};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int ties = 0; ties < 2; ties++)
            for (int dist = 0; dist < 2; dist++)
                for (int p = 1; p <= 4; p++)
                    for (int64_t b = 1; b <= 3; b++) {
                        int64_t n = sizes[s];
                        double x[MAXN], y[MAXN];
                        /* small integers make |x_i| tie: the first wins */
                        for (int64_t i = 0; i < n; i++) {
                            x[i] = ties ? (double)(tu_below(&rng, 5) - 2)
                                        : tu_rand(&rng);
                            y[i] = tu_rand(&rng);
                        }
                        double dot = 0, sdot = 0, ss = 0, as = 0, big = -1;
                        int64_t first = 0;
                        for (int64_t i = 0; i < n; i++) {
                            dot += x[i] * y[i];
                            sdot += fabs(x[i] * y[i]);
                            ss += x[i] * x[i];
                            as += fabs(x[i]);
                            if (fabs(x[i]) > big) {
                                big = fabs(x[i]);
                                first = i;
                            }
                        }
                        expect_close(reduce_by_hand(BLAS_OP_DOT, x, y, n,
                                                    dist, b, p),
                                     dot, sdot, "ddot", n);
                        expect_close(reduce_by_hand(BLAS_OP_NRM2, x, y, n,
                                                    dist, b, p),
                                     sqrt(ss), sqrt(ss), "dnrm2", n);
                        expect_close(reduce_by_hand(BLAS_OP_ASUM, x, y, n,
                                                    dist, b, p),
                                     as, as, "dasum", n);
                        assert_true(reduce_by_hand(BLAS_OP_IAMAX, x, y, n,
                                                   dist, b, p) ==
                                    (double)first);
                    }
}

/* A matrix m x n, rows cyclic(mb) over pr grid rows, columns cyclic(nb)
 * over pc grid columns.                                                  */
typedef struct grid_case {
    int64_t m, n, mb, nb;
    int pr, pc;
} grid_case;

static const grid_case grid_cases[] = {
    {1, 1, 1, 1, 1, 1},     /* one element                                */
    {1, 6, 1, 4, 1, 2},     /* one row, uneven column pieces              */
    {5, 1, 2, 1, 3, 1},     /* one column, the last grid row short        */
    {3, 5, 3, 5, 1, 1},     /* whole, m != n                              */
    {7, 4, 2, 3, 2, 2},
    {11, 7, 2, 3, 2, 3},    /* odd; blocks straddle the diagonal          */
    {4, 9, 3, 2, 3, 2},     /* grid row 2 holds no rows at all            */
    {6, 6, 2, 2, 2, 3},
};

/* Whether A(i, j) takes part in a masked gemv (dsymv's halves), stated
 * from the flags' documentation.                                         */
static bool kept(unsigned f, int64_t i, int64_t j)
{
    if (!(f & BLAS_F_MASK)) return true;
    if (i == j) return !(f & BLAS_F_STRICT);
    return (f & BLAS_F_LOWER) ? i > j : i < j;
}

/* Piece (r, c) of A (column-major, leading dimension the local rows) in
 * al and the matching piece of x (its rows for the transpose, else its
 * columns) in xl; the piece's global row and column indices in ri, ci.  */
static void gemv_piece(const grid_case *g, bool t, const double *A,
                       const double *x, int r, int c, int64_t *ri,
                       int64_t *ci, int64_t *lr, int64_t *lc, double *al,
                       double *xl)
{
    *lr = owned(g->m, g->mb, g->pr, r, ri);
    *lc = owned(g->n, g->nb, g->pc, c, ci);
    int64_t ld = *lr > 1 ? *lr : 1;
    for (int64_t j = 0; j < *lc; j++)
        for (int64_t i = 0; i < *lr; i++)
            al[j * ld + i] = A[ci[j] * g->m + ri[i]];
    for (int64_t i = 0; i < (t ? *lr : *lc); i++)
        xl[i] = x[t ? ri[i] : ci[i]];
}

/* y <- alpha op(A) x (+ beta y) through the gemv row on every piece of
 * the grid: kernel, sum over the grid dimension the product runs along,
 * finish on every piece of y.                                            */
static void gemv_by_hand(const grid_case *g, unsigned flags, const double *A,
                         const double *x, double alpha, double beta, double *y)
{
    const blas_op_info *info = blas_op_get(BLAS_OP_GEMV);
    blas_desc d = {BLAS_OP_GEMV, flags, blas_desc_nops(BLAS_OP_GEMV, flags),
                   0, 0, 0, 0, 0, NULL};
    bool t = (flags & BLAS_F_TRANS) != 0;
    blas_layout lay = blas_layout_mat(g->m, g->n, g->mb, g->nb, g->pr, g->pc);
    blas_layout sl = blas_layout_sca(3u, g->pr, g->pc);
    double sum[MAXN] = {0};
    for (int r = 0; r < g->pr; r++)
        for (int c = 0; c < g->pc; c++) {
            int64_t ri[MAXN], ci[MAXN], lr, lc;
            double al[MAXN * MAXN], xl[MAXN], red[MAXN];
            gemv_piece(g, t, A, x, r, c, ri, ci, &lr, &lc, al, xl);
            blas_local in[3] = {piece(&alpha, 1, 1, &sl, r, c),
                                piece(al, lr, lc, &lay, r, c),
                                piece(xl, t ? lr : lc, 1, &lay, r, c)};
            int64_t len = blas_red_len(&d, in);
            assert_int_equal(len, t ? lc : lr);
            info->kernel(&d, in, NULL, red);
            for (int64_t i = 0; i < len; i++) sum[t ? ci[i] : ri[i]] += red[i];
        }
    /* without BLAS_F_BETA the node has three operands: b and y are
     * absent, and finish must not look for them                          */
    blas_local in[5] = {piece(&alpha, 1, 1, &sl, 0, 0)};
    if (flags & BLAS_F_BETA) in[3] = piece(&beta, 1, 1, &sl, 0, 0);
    int p = t ? g->pc : g->pr;
    for (int k = 0; k < p; k++) {
        int64_t oi[MAXN];
        double yl[MAXN + 1], part[MAXN];
        int64_t len = owned(t ? g->n : g->m, t ? g->nb : g->mb, p, k, oi);
        for (int64_t i = 0; i < len; i++) {
            yl[i] = y[oi[i]];
            part[i] = sum[oi[i]];
        }
        yl[len] = SENT;
        blas_local R = piece(yl, len, 1, &lay, t ? 0 : k, t ? k : 0);
        info->finish(&d, in, &R, part);
        assert_true(yl[len] == SENT);
        for (int64_t i = 0; i < len; i++) y[oi[i]] = yl[i];
    }
}

/* y <- alpha op(A) x (+ beta y) through the gemv row's direct kernel, on
 * a grid whose product needs no reduction (one grid column, or one grid
 * row for the transpose): every piece writes its piece of y in place. */
static void gemv_direct_by_hand(const grid_case *g, unsigned flags,
                                const double *A, const double *x,
                                double alpha, double beta, double *y)
{
    const blas_op_info *info = blas_op_get(BLAS_OP_GEMV);
    blas_desc d = {BLAS_OP_GEMV, flags, blas_desc_nops(BLAS_OP_GEMV, flags),
                   0, 0, 0, 0, 0, NULL};
    bool t = (flags & BLAS_F_TRANS) != 0;
    blas_layout lay = blas_layout_mat(g->m, g->n, g->mb, g->nb, g->pr, g->pc);
    blas_layout sl = blas_layout_sca(3u, g->pr, g->pc);
    for (int r = 0; r < g->pr; r++)
        for (int c = 0; c < g->pc; c++) {
            int64_t ri[MAXN], ci[MAXN], lr, lc;
            double al[MAXN * MAXN], xl[MAXN], yl[MAXN + 1];
            gemv_piece(g, t, A, x, r, c, ri, ci, &lr, &lc, al, xl);
            int64_t len = t ? lc : lr;
            const int64_t *oi = t ? ci : ri;
            for (int64_t i = 0; i < len; i++) yl[i] = y[oi[i]];
            yl[len] = SENT;
            blas_local in[5] = {piece(&alpha, 1, 1, &sl, r, c),
                                piece(al, lr, lc, &lay, r, c),
                                piece(xl, t ? lr : lc, 1, &lay, r, c)};
            if (flags & BLAS_F_BETA) in[3] = piece(&beta, 1, 1, &sl, r, c);
            blas_local R = piece(yl, len, 1, &lay, r, c);
            info->direct(&d, in, &R, NULL);
            assert_true(yl[len] == SENT);
            for (int64_t i = 0; i < len; i++) y[oi[i]] = yl[i];
        }
}

/* y (yn entries) against alpha op(A) x (+ beta y0) computed here.       */
static void gemv_check(const grid_case *g, unsigned flags, const double *A,
                       const double *x, double alpha, double beta,
                       const double *y0, bool reads_y, const double *y)
{
    bool t = (flags & BLAS_F_TRANS) != 0;
    int64_t xn = t ? g->m : g->n, yn = t ? g->n : g->m;
    for (int64_t k = 0; k < yn; k++) {
        double s = 0.0, scale = 0.0;
        for (int64_t l = 0; l < xn; l++) {
            int64_t i = t ? l : k, j = t ? k : l;
            if (!kept(flags, i, j)) continue;
            s += A[j * g->m + i] * x[l];
            scale += fabs(A[j * g->m + i] * x[l]);
        }
        double want = alpha * s, sc = fabs(alpha) * scale;
        if (reads_y) {
            want += beta * y0[k];
            sc += fabs(beta * y0[k]);
        }
        expect_close(y[k], want, sc, "dgemv", k);
    }
}

/* Kernel, reduction and finish on every grid; the direct kernel too where
 * the grid needs no reduction.  Without a beta (or beta = 0) y holds NaN,
 * which neither may read.  Pieces of one chunk (the default chunk bytes)
 * and of a chunk per column block (chunk bytes 0).                      */
static void gemv_cases(int64_t chunk_bytes)
{
    blas_gemv_chunk_bytes(chunk_bytes);
    tu_rng rng = {31337};
    const unsigned masks[] = {0, BLAS_F_MASK, BLAS_F_MASK | BLAS_F_LOWER,
                              BLAS_F_MASK | BLAS_F_STRICT,
                              BLAS_F_MASK | BLAS_F_LOWER | BLAS_F_STRICT};
    int directs = 0;
    for (size_t gi = 0; gi < sizeof grid_cases / sizeof grid_cases[0]; gi++)
        for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++)
            for (unsigned extra = 0; extra < 4; extra++) {
                const grid_case *g = &grid_cases[gi];
                unsigned flags = masks[mi] |
                                 ((extra & 1) ? BLAS_F_TRANS : 0) |
                                 ((extra & 2) ? BLAS_F_BETA : 0);
                bool t = (flags & BLAS_F_TRANS) != 0;
                int64_t xn = t ? g->m : g->n, yn = t ? g->n : g->m;
                double A[MAXN * MAXN], x[MAXN], y[MAXN], y0[MAXN];
                tu_fill(&rng, A, g->m * g->n);
                tu_fill(&rng, x, xn);
                double alpha = tu_rand(&rng);
                /* beta = 0 or no beta: y is not read, even a NaN          */
                double beta = gi % 2 ? tu_rand(&rng) : 0.0;
                bool reads_y = (flags & BLAS_F_BETA) && beta != 0.0;
                for (int64_t i = 0; i < yn; i++)
                    y0[i] = y[i] = reads_y ? tu_rand(&rng) : NAN;
                gemv_by_hand(g, flags, A, x, alpha, beta, y);
                gemv_check(g, flags, A, x, alpha, beta, y0, reads_y, y);
                if ((t ? g->pr : g->pc) != 1) continue;
                memcpy(y, y0, sizeof y);
                gemv_direct_by_hand(g, flags, A, x, alpha, beta, y);
                gemv_check(g, flags, A, x, alpha, beta, y0, reads_y, y);
                directs++;
            }
    assert_true(directs > 0);
    blas_gemv_chunk_bytes(-1);
}

static void test_gemv_kernel(void **state)
{
    (void)state;
    gemv_cases(BLAS_GEMV_CHUNK_BYTES);
    gemv_cases(0);
}

/* The chunk: as many columns as fit in the chunk bytes, at least the
 * column block or BLAS_GEMV_COLS, whichever is fewer; bytes 0 leave only
 * that least; a negative setting restores the default.                  */
static void test_gemv_chunk(void **state)
{
    (void)state;
    blas_layout whole = blas_layout_mat(1000, 1000, 1000, 1000, 1, 1);
    blas_layout thin = blas_layout_mat(100, 1000, 4, 4, 1, 2);
    int64_t per = BLAS_GEMV_CHUNK_BYTES / 8;
    assert_int_equal(blas_gemv_chunk(&whole, 1000), per / 1000);
    assert_int_equal(blas_gemv_chunk(&whole, 1), per);
    assert_int_equal(blas_gemv_chunk(&whole, per), BLAS_GEMV_COLS);
    assert_int_equal(blas_gemv_chunk(&thin, per), 4);
    assert_int_equal(blas_gemv_chunk(&thin, 100), per / 100);
    blas_gemv_chunk_bytes(8 * 100 * 7);
    assert_int_equal(blas_gemv_chunk(&thin, 100), 7);
    assert_int_equal(blas_gemv_chunk(&whole, 100), BLAS_GEMV_COLS);
    blas_gemv_chunk_bytes(0);
    assert_int_equal(blas_gemv_chunk(&whole, 0), BLAS_GEMV_COLS);
    assert_int_equal(blas_gemv_chunk(&thin, 0), 4);
    blas_gemv_chunk_bytes(-1);
    assert_int_equal(blas_gemv_chunk(&whole, 1000), per / 1000);
}

/* A <- alpha x y^T + A on every piece: x folded like A's rows, y like its
 * columns.                                                               */
static void test_ger_kernel(void **state)
{
    (void)state;
    tu_rng rng = {4242};
    const blas_op_info *info = blas_op_get(BLAS_OP_GER);
    blas_desc d = {BLAS_OP_GER, 0, info->nops, 0, 0, 0, 0, 0, NULL};
    for (size_t gi = 0; gi < sizeof grid_cases / sizeof grid_cases[0]; gi++) {
        const grid_case *g = &grid_cases[gi];
        blas_layout lay = blas_layout_mat(g->m, g->n, g->mb, g->nb, g->pr,
                                          g->pc);
        blas_layout sl = blas_layout_sca(3u, g->pr, g->pc);
        double A[MAXN * MAXN], A0[MAXN * MAXN], x[MAXN], y[MAXN];
        double alpha = tu_rand(&rng);
        tu_fill(&rng, A0, g->m * g->n);
        tu_fill(&rng, x, g->m);
        tu_fill(&rng, y, g->n);
        memcpy(A, A0, (size_t)(g->m * g->n) * sizeof *A);
        for (int r = 0; r < g->pr; r++)
            for (int c = 0; c < g->pc; c++) {
                int64_t ri[MAXN], ci[MAXN];
                int64_t lr = owned(g->m, g->mb, g->pr, r, ri);
                int64_t lc = owned(g->n, g->nb, g->pc, c, ci);
                int64_t ld = lr > 1 ? lr : 1;
                double al[MAXN * MAXN + 1], xl[MAXN], yl[MAXN];
                for (int64_t j = 0; j < lc; j++)
                    for (int64_t i = 0; i < lr; i++)
                        al[j * ld + i] = A[ci[j] * g->m + ri[i]];
                al[lr * lc] = SENT;
                for (int64_t i = 0; i < lr; i++) xl[i] = x[ri[i]];
                for (int64_t j = 0; j < lc; j++) yl[j] = y[ci[j]];
                blas_local R = piece(al, lr, lc, &lay, r, c);
                blas_local in[4] = {piece(&alpha, 1, 1, &sl, r, c),
                                    piece(xl, lr, 1, &lay, r, c),
                                    piece(yl, lc, 1, &lay, r, c), R};
                info->kernel(&d, in, &R, NULL);
                assert_true(al[lr * lc] == SENT);
                for (int64_t j = 0; j < lc; j++)
                    for (int64_t i = 0; i < lr; i++)
                        A[ci[j] * g->m + ri[i]] = al[j * ld + i];
            }
        for (int64_t j = 0; j < g->n; j++)
            for (int64_t i = 0; i < g->m; i++) {
                double a0 = A0[j * g->m + i], u = alpha * x[i] * y[j];
                expect_close(A[j * g->m + i], a0 + u, fabs(a0) + fabs(u),
                             "dger", j * g->m + i);
            }
    }
}

/* trsv's local piece, the diagonal-block solve: op(T) x_new = x_old with
 * T's other triangle, its padding rows and (unit diagonal) its diagonal
 * all NaN, which must never be read.                                     */
static void test_trsv_block_kernel(void **state)
{
    (void)state;
    tu_rng rng = {8675309};
    const int64_t sizes[] = {0, 1, 2, 3, 5, 8};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (unsigned f = 0; f < 8; f++) {
            unsigned flags = ((f & 1) ? BLAS_F_TRANS : 0) |
                             ((f & 2) ? BLAS_F_LOWER : 0) |
                             ((f & 4) ? BLAS_F_UNIT : 0);
            bool lower = f & 2, unit = f & 4, trans = f & 1;
            int64_t bk = sizes[s], ld = bk + 3;
            double T[(MAXN / 4 + 3) * (MAXN / 4)], x[MAXN + 1], b[MAXN];
            for (int64_t j = 0; j < bk; j++)
                for (int64_t i = 0; i < ld; i++) {
                    bool in = i < bk && (lower ? i > j : i < j);
                    T[j * ld + i] = in ? tu_rand(&rng) : NAN;
                    /* diagonal in [1.5, 2.5): well conditioned          */
                    if (i == j && !unit)
                        T[j * ld + i] = 2.0 + tu_rand(&rng) / 2;
                }
            tu_fill(&rng, b, bk);
            memcpy(x, b, (size_t)bk * sizeof *x);
            x[bk] = SENT;
            blas_trsv_block(flags, bk, T, ld, x);
            assert_true(x[bk] == SENT);
            /* op(T) x, summed from the stored triangle alone, gives b back */
            for (int64_t i = 0; i < bk; i++) {
                double v = unit ? x[i] : T[i * ld + i] * x[i];
                double scale = fabs(v);
                for (int64_t j = 0; j < bk; j++) {
                    int64_t row = trans ? j : i, col = trans ? i : j;
                    if (!(lower ? row > col : row < col)) continue;
                    v += T[col * ld + row] * x[j];
                    scale += fabs(T[col * ld + row] * x[j]);
                }
                expect_close(v, b[i], scale, "trsv block", i);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_match_the_documentation),
        cmocka_unit_test(test_updates_place_scalars_with_the_vector),
        cmocka_unit_test(test_reductions_follow_x),
        cmocka_unit_test(test_gemv_aligns_with_the_matrix),
        cmocka_unit_test(test_ger_and_trsv_placements),
        cmocka_unit_test(test_user_placements),
        cmocka_unit_test(test_elementwise_kernels),
        cmocka_unit_test(test_scalar_kernels),
        cmocka_unit_test(test_reduction_kernels),
        cmocka_unit_test(test_gemv_kernel),
        cmocka_unit_test(test_gemv_chunk),
        cmocka_unit_test(test_ger_kernel),
        cmocka_unit_test(test_trsv_block_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
