/* deso__cp_from_msg: copy programs compiled straight from a plan's
 * per-period description, run in one process for every rank of random
 * 2-D layouts.  Each source element holds its global index plus one, from
 * an independent block-cyclic index map; every send is packed by its
 * program, unpacked by the matching receive's, the self copies run, and
 * then every target element must hold its own global index plus one, the
 * sources untouched and the packed lengths equal to the messages'.  Each
 * case runs twice: whole programs as compiled, and programs as built
 * (loops over columns kept) a window at a time, as the shared-memory
 * rings run them, between arrays whose leading dimension exceeds their
 * rows (the padding must stay untouched).                                */
#include "copyprog_test.h"

#define MAXC 6

/* Global index of local index l at position p of np, blocks of b.        */
static int64_t l2g(int64_t l, int64_t b, int p, int np)
{
    return l / b * np * b + (int64_t)p * b + l % b;
}

static int pos_of(const pl_bc_layout *L, int rank)
{
    for (int e = 0; e < L->pr * L->pc; e++)
        if ((L->ranks ? L->ranks[e] : e) == rank) return e;
    return -1;
}

/* Fills rank's local array of L (rows x cols, leading dimension ld)
 * with global index + 1, or with `fill` everywhere when want is false;
 * the rows past `rows` of each column always hold `fill`.               */
static double *local_array(const pl_bc_layout *L, int rank, int64_t rows,
                           int64_t cols, int64_t ld, bool want, double fill)
{
    size_t n = (size_t)(ld * cols > 0 ? ld * cols : 1);
    double *a = malloc(n * sizeof *a);
    assert_non_null(a);
    for (size_t x = 0; x < n; x++) a[x] = fill;
    int e = pos_of(L, rank);
    for (int64_t j = 0; j < cols && want; j++)
        for (int64_t i = 0; i < rows; i++) {
            int64_t gi = l2g(i, L->mb, e / L->pc, L->pr);
            int64_t gj = l2g(j, L->nb, e % L->pc, L->pc);
            a[i + j * ld] = (double)(gi + gj * L->m + 1);
        }
    return a;
}

/* Every target element of rank r holds its global index plus one, the
 * padding is untouched and the source unchanged.                       */
static void check_rank(const pl_bc_layout *S, const pl_bc_layout *T, int C,
                       int r, const pl_remap_rank *p, const double *src,
                       const double *dst, int64_t pad)
{
    int64_t lds = ld_of(p->src_lrows) + pad;
    int64_t ldd = ld_of(p->dst_lrows) + pad;
    double *want = local_array(T, r, p->dst_lrows, p->dst_lcols, ldd, true,
                               -1);
    double *had = local_array(S, r, p->src_lrows, p->src_lcols, lds, true,
                              0);
    for (int64_t x = 0; x < ldd * p->dst_lcols; x++)
        if (dst[x] != want[x])
            fail_msg("%lld x %lld, src %dx%d blocks %lld x %lld -> dst "
                     "%dx%d blocks %lld x %lld on %d ranks: rank %d "
                     "target element %lld holds %g, wants %g",
                     (long long)S->m, (long long)S->n, S->pr, S->pc,
                     (long long)S->mb, (long long)S->nb, T->pr, T->pc,
                     (long long)T->mb, (long long)T->nb, C, r,
                     (long long)x, dst[x], want[x]);
    assert_memory_equal(src, had,
                        (size_t)(lds * p->src_lcols) * sizeof(double));
    free(want);
    free(had);
}

static void simulate(const pl_bc_layout *S, const pl_bc_layout *T, int C,
                     how *h)
{
    pl_remap_rank p[MAXC];
    double *src[MAXC], *dst[MAXC];
    int64_t pad = h->built ? h->pad : 0;
    bool was = deso__cp_set_recompile(!h->built);
    for (int r = 0; r < C; r++) {
        assert_int_equal(pl_remap_plan_rank(S, T, C, PL_SCHED_STEPWISE, r,
                                            &p[r]), DESO_OK);
        int64_t lds = ld_of(p[r].src_lrows) + pad;
        int64_t ldd = ld_of(p[r].dst_lrows) + pad;
        src[r] = local_array(S, r, p[r].src_lrows, p[r].src_lcols, lds,
                             true, 0);
        dst[r] = local_array(T, r, p[r].dst_lrows, p[r].dst_lcols, ldd,
                             false, -1);
    }
    run_ranks(p, C, src, dst, h);
    deso__cp_set_recompile(was);
    for (int r = 0; r < C; r++) {
        check_rank(S, T, C, r, &p[r], src[r], dst[r], pad);
        free(src[r]);
        free(dst[r]);
        pl_remap_rank_free(&p[r]);
    }
}

/* A grid of at most C positions on ranks off, off + 1, ... (mod C).     */
static void random_layout(pl_bc_layout *L, int *ranks, int C, int64_t m,
                          int64_t n)
{
    memset(L, 0, sizeof *L);
    L->m = m;
    L->n = n;
    do {
        L->pr = 1 + (int)rnd(C);
        L->pc = 1 + (int)rnd(C);
    } while (L->pr * L->pc > C);
    int64_t big[] = { 1, 2, 3, 5, 7, 64 };
    L->mb = rnd(4) == 0 ? (m > 0 ? m : 1) : big[rnd(6)];
    L->nb = rnd(4) == 0 ? (n > 0 ? n : 1) : big[rnd(6)];
    int off = (int)rnd(C);
    for (int e = 0; e < L->pr * L->pc; e++) ranks[e] = (off + e) % C;
    L->ranks = ranks;
}

static void test_random_layouts(void **state)
{
    (void)state;
    for (int t = 0; t < 400; t++) {
        int C = 1 + (int)rnd(MAXC);
        int64_t m = rnd(t % 10 == 0 ? 300 : 40), n = rnd(t % 7 == 0 ? 90 : 12);
        int rs[MAXC], rt[MAXC];
        pl_bc_layout S, T;
        random_layout(&S, rs, C, m, n);
        random_layout(&T, rt, C, m, n);
        how whole = { 0 };
        how built = {.built = true, .pad = rnd(3),
                     .span = 1 + rnd(t % 3 ? 40 : 900)};
        simulate(&S, &T, C, &whole);
        simulate(&S, &T, C, &built);
    }
}

/* The benchmark's shapes, small: a vector, whole columns, a grid change,
 * long periods (where the period holds many items) and a row program of
 * many items per column.                                                 */
static void test_shapes(void **state)
{
    (void)state;
    int looped = 0;
    static const int64_t cs[][10] = {
        /* m, n, mb, nb, pr, pc, mb2, nb2, pr2, pc2 */
        { 100000, 1, 3, 1, 2, 1, 5, 1, 2, 1 },
        { 100000, 1, 64, 1, 2, 1, 1, 1, 2, 1 },
        { 100000, 1, 50000, 1, 2, 1, 1, 1, 2, 1 },
        { 300, 300, 3, 300, 2, 1, 5, 300, 2, 1 },
        { 300, 300, 64, 64, 2, 1, 1, 1, 1, 2 },
        { 20000, 3, 1000, 2, 2, 1, 1001, 1, 2, 1 },
        { 5000, 40, 7, 3, 3, 2, 2, 5, 2, 3 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        pl_bc_layout S = { cs[i][0], cs[i][1], cs[i][2], cs[i][3],
                           (int)cs[i][4], (int)cs[i][5], NULL, false };
        pl_bc_layout T = { cs[i][0], cs[i][1], cs[i][6], cs[i][7],
                           (int)cs[i][8], (int)cs[i][9], NULL, false };
        how whole = { 0 }, built = {.built = true, .pad = 2, .span = 777};
        simulate(&S, &T, 6, &whole);
        simulate(&S, &T, 6, &built);
        looped += built.looped;
    }
    /* The long row programs (cyclic(3) -> cyclic(5) rows, blocks of 7 ->
     * 2 on a 3x2 grid) loop over their columns.                         */
    assert_true(looped > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_layouts),
        cmocka_unit_test(test_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
