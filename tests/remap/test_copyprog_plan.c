/* deso__cp_from_msg: copy programs compiled straight from a plan's
 * per-period description, run in one process for every rank of random
 * 2-D layouts.  Each source element holds its global index plus one, from
 * an independent block-cyclic index map; every send is packed by its
 * program, unpacked by the matching receive's, the self copies run, and
 * then every target element must hold its own global index plus one, the
 * sources untouched and the packed lengths equal to the messages'.       */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "deso/remap/copyprog.h"
#include "placement/remap.h"

#define MAXC 6

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int64_t rnd(int64_t n)   /* uniform-ish in [0, n)                   */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

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

/* Fills rank's local array of L (rows x cols) with global index + 1, or
 * with `fill` everywhere when want is false.                             */
static double *local_array(const pl_bc_layout *L, int rank, int64_t rows,
                           int64_t cols, bool want, double fill)
{
    double *a = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof *a);
    assert_non_null(a);
    int e = pos_of(L, rank);
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) {
            int64_t gi = l2g(i, L->mb, e / L->pc, L->pr);
            int64_t gj = l2g(j, L->nb, e % L->pc, L->pc);
            a[i + j * rows] = want ? (double)(gi + gj * L->m + 1) : fill;
        }
    return a;
}

static const pl_msg *find_recv(const pl_remap_rank *r, int peer, int step)
{
    for (int i = 0; i < r->nrecv; i++)
        if (r->recv[i].peer == peer && r->recv[i].step == step)
            return &r->recv[i];
    return NULL;
}

static void simulate(const pl_bc_layout *S, const pl_bc_layout *T, int C)
{
    pl_remap_rank p[MAXC];
    double *src[MAXC], *dst[MAXC];
    for (int r = 0; r < C; r++) {
        assert_int_equal(pl_remap_plan_rank(S, T, C, PL_SCHED_STEPWISE, r,
                                            &p[r]), DESO_OK);
        src[r] = local_array(S, r, p[r].src_lrows, p[r].src_lcols, true, 0);
        dst[r] = local_array(T, r, p[r].dst_lrows, p[r].dst_lcols, false, -1);
    }
    for (int r = 0; r < C; r++) {
        int64_t lds = p[r].src_lrows > 1 ? p[r].src_lrows : 1;
        int64_t ldd = p[r].dst_lrows > 1 ? p[r].dst_lrows : 1;
        if (p[r].has_self) {
            deso__copy c;
            assert_int_equal(deso__cp_from_msg(&p[r].self, DESO__CP_SELF,
                                               lds, ldd, &c), DESO_OK);
            assert_int_equal(c.elems, p[r].self.count);
            deso__cp_run(&c, src[r], lds, lds, dst[r], ldd, ldd);
            deso__cp_free(&c);
        }
        for (int i = 0; i < p[r].nsend; i++) {
            const pl_msg *sm = &p[r].send[i];
            int q = sm->peer;
            const pl_msg *rm = find_recv(&p[q], r, sm->step);
            assert_non_null(rm);
            assert_int_equal(rm->count, sm->count);
            double *buf = malloc((size_t)(sm->count + 1) * sizeof *buf);
            assert_non_null(buf);
            buf[sm->count] = -7.0;               /* nothing writes past   */
            deso__copy a, b;
            int64_t qld = p[q].dst_lrows > 1 ? p[q].dst_lrows : 1;
            assert_int_equal(deso__cp_from_msg(sm, DESO__CP_SEND, lds, 0, &a),
                             DESO_OK);
            assert_int_equal(deso__cp_from_msg(rm, DESO__CP_RECV, qld, 0, &b),
                             DESO_OK);
            assert_int_equal(a.elems, sm->count);
            assert_int_equal(b.elems, sm->count);
            deso__cp_run(&a, src[r], lds, lds, buf, INT64_MAX, INT64_MAX);
            assert_true(buf[sm->count] == -7.0);
            deso__cp_run(&b, buf, INT64_MAX, INT64_MAX, dst[q], qld, qld);
            deso__cp_free(&a);
            deso__cp_free(&b);
            free(buf);
        }
    }
    for (int r = 0; r < C; r++) {
        double *want = local_array(T, r, p[r].dst_lrows, p[r].dst_lcols,
                                   true, 0);
        double *had = local_array(S, r, p[r].src_lrows, p[r].src_lcols,
                                  true, 0);
        int64_t nd = p[r].dst_lrows * p[r].dst_lcols;
        int64_t ns = p[r].src_lrows * p[r].src_lcols;
        for (int64_t x = 0; x < nd; x++)
            if (dst[r][x] != want[x])
                fail_msg("%lld x %lld, src %dx%d blocks %lld x %lld -> dst "
                         "%dx%d blocks %lld x %lld on %d ranks: rank %d "
                         "target element %lld holds %g, wants %g",
                         (long long)S->m, (long long)S->n, S->pr, S->pc,
                         (long long)S->mb, (long long)S->nb, T->pr, T->pc,
                         (long long)T->mb, (long long)T->nb, C, r,
                         (long long)x, dst[r][x], want[x]);
        assert_memory_equal(src[r], had, (size_t)ns * sizeof(double));
        free(want);
        free(had);
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
        simulate(&S, &T, C);
    }
}

/* The benchmark's shapes, small: a vector, whole columns, a grid change,
 * long periods (where the period holds many items) and a row program of
 * many items per column.                                                 */
static void test_shapes(void **state)
{
    (void)state;
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
        simulate(&S, &T, 6);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_layouts),
        cmocka_unit_test(test_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
