/* deso__cp_from_msg on d-dimensional plans (pl_remap_plan_rank_nd,
 * d = 1 .. 4), run in one process for every rank.  Oracle: a brute-force
 * index map written here from the layout's definition: local index l_k
 * of grid coordinate c_k is global (l_k / b_k) p_k b_k + c_k b_k + l_k
 * mod b_k, local extents are counted, and each source element holds its
 * global linear index plus one.  Every send is packed by its program and
 * unpacked by the matching receive's, the self copies run, then every
 * target element must hold its own global index plus one, padding and
 * sources untouched; the runs pl_remap_rank_runs spells out must pack
 * what the programs pack.  Each case runs twice: whole programs as compiled
 * (small ones compiled again from their runs), and programs as built
 * (the dimensions' nested loops kept) a window at a time, as the
 * shared-memory rings run them, between padded arrays.  A remap of 2^33
 * elements over 3 dimensions is planned and compiled for every rank
 * without its arrays: its descriptions and programs must stay small.   */
#define CP_TEST_SEED 0x2545f4914f6cdd1dull
#include "copyprog_test.h"

#define MAXC 6

static int npos(const pl_nd_layout *L)
{
    int n = 1;
    for (int k = 0; k < L->d; k++) n *= L->p[k];
    return n;
}

static int pos_of(const pl_nd_layout *L, int rank)
{
    for (int e = 0; e < npos(L); e++)
        if ((L->ranks ? L->ranks[e] : e) == rank) return e;
    return -1;
}

/* Grid coordinate in dimension k of position e (the last fastest).     */
static int coord(const pl_nd_layout *L, int e, int k)
{
    for (int j = L->d - 1; j > k; j--) e /= L->p[j];
    return e % L->p[k];
}

/* Indices of [0, n) that coordinate c of p owns, counted.              */
static int64_t owned(int64_t n, int64_t b, int p, int c)
{
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) cnt += (i / b) % p == c;
    return cnt;
}

/* Rank's local extents in L (all 0 when it holds nothing, 1 beyond d).  */
static void extents(const pl_nd_layout *L, int rank, int64_t ext[4])
{
    int e = pos_of(L, rank);
    for (int k = 0; k < 4; k++)
        ext[k] = e < 0 ? 0 : k >= L->d ? 1
               : owned(L->n[k], L->b[k], L->p[k], coord(L, e, k));
}

/* Rank's local array of L (leading dimension ld >= its local rows), the
 * global linear index plus one at each element it owns when `want`,
 * `fill` everywhere else.                                               */
static double *local_array(const pl_nd_layout *L, int rank, int64_t ld,
                           bool want, double fill)
{
    int64_t ext[4];
    extents(L, rank, ext);
    int64_t cols = ext[1] * ext[2] * ext[3];
    size_t n = (size_t)(ld * cols > 0 ? ld * cols : 1);
    double *a = malloc(n * sizeof *a);
    assert_non_null(a);
    for (size_t x = 0; x < n; x++) a[x] = fill;
    int e = pos_of(L, rank);
    int64_t l[4];
    for (int64_t x = 0; want && x < ext[0] * cols; x++) {
        int64_t r = x, g = 0, stride = 1;
        for (int k = 0; k < 4; k++) {
            l[k] = r % ext[k];
            r /= ext[k];
        }
        for (int k = 0; k < L->d; k++) {
            int64_t b = L->b[k];
            int c = coord(L, e, k);
            g += (l[k] / b * L->p[k] * b + c * b + l[k] % b) * stride;
            stride *= L->n[k];
        }
        a[l[0] + ld * (l[1] + ext[1] * (l[2] + ext[2] * l[3]))] =
            (double)(g + 1);
    }
    return a;
}

/* Rank r's target holds what the oracle says, its source is unchanged. */
static void check_rank(const pl_nd_layout *S, const pl_nd_layout *T, int r,
                       const pl_remap_rank *p, const double *src,
                       const double *dst, int64_t pad)
{
    int64_t lds = ld_of(p->src_lrows) + pad, ldd = ld_of(p->dst_lrows) + pad;
    double *want = local_array(T, r, ldd, true, -1);
    double *had = local_array(S, r, lds, true, 0);
    for (int64_t x = 0; x < ldd * p->dst_lcols; x++)
        if (dst[x] != want[x])
            fail_msg("d = %d, %lld x %lld x %lld x %lld: rank %d target "
                     "element %lld holds %g, wants %g", S->d,
                     (long long)S->n[0], (long long)S->n[1],
                     (long long)S->n[2], (long long)S->n[3], r,
                     (long long)x, dst[x], want[x]);
    assert_memory_equal(src, had,
                        (size_t)(lds * p->src_lcols) * sizeof(double));
    free(want);
    free(had);
}

/* Plans every rank, checks its local shapes against the oracle's.      */
static void plan_all(const pl_nd_layout *S, const pl_nd_layout *T, int C,
                     pl_remap_rank *p)
{
    for (int r = 0; r < C; r++) {
        assert_int_equal(pl_remap_plan_rank_nd(S, T, C, PL_SCHED_STEPWISE,
                                               r, &p[r]), DESO_OK);
        int64_t es[4], et[4];
        extents(S, r, es);
        extents(T, r, et);
        assert_int_equal(p[r].src_lrows, es[0]);
        assert_int_equal(p[r].src_lcols, es[1] * es[2] * es[3]);
        assert_int_equal(p[r].dst_lrows, et[0]);
        assert_int_equal(p[r].dst_lcols, et[1] * et[2] * et[3]);
    }
}

static void simulate(const pl_nd_layout *S, const pl_nd_layout *T, int C,
                     how *h)
{
    pl_remap_rank p[MAXC];
    double *src[MAXC], *dst[MAXC];
    int64_t pad = h->built ? h->pad : 0;
    bool was = deso__cp_set_recompile(!h->built);
    plan_all(S, T, C, p);
    for (int r = 0; r < C && !h->built; r++)
        assert_int_equal(pl_remap_rank_runs(&p[r]), DESO_OK);
    for (int r = 0; r < C; r++) {
        src[r] = local_array(S, r, ld_of(p[r].src_lrows) + pad, true, 0);
        dst[r] = local_array(T, r, ld_of(p[r].dst_lrows) + pad, false, -1);
    }
    run_ranks(p, C, src, dst, h);
    deso__cp_set_recompile(was);
    for (int r = 0; r < C; r++) {
        check_rank(S, T, r, &p[r], src[r], dst[r], pad);
        free(src[r]);
        free(dst[r]);
        pl_remap_rank_free(&p[r]);
    }
}

/* A random grid of at most C positions (dimension k gets p[k]) on
 * ranks off, off + 1, ... (mod C), blocks of 1 .. 5 or whole.          */
static void random_layout(pl_nd_layout *L, int *ranks, int C, int d,
                          const int64_t *n)
{
    memset(L, 0, sizeof *L);
    L->d = d;
    int left = C;
    for (int k = 0; k < d; k++) {
        L->p[k] = 1 + (int)rnd(left);
        left /= L->p[k];
        L->n[k] = n[k];
        L->b[k] = rnd(5) == 0 ? (n[k] > 0 ? n[k] : 1) : 1 + rnd(5);
    }
    int off = (int)rnd(C);
    for (int e = 0; e < npos(L); e++) ranks[e] = (off + e) % C;
    L->ranks = ranks;
}

static void test_random_layouts(void **state)
{
    (void)state;
    int looped = 0;
    for (int t = 0; t < 300; t++) {
        int C = 1 + (int)rnd(MAXC), d = 1 + (int)(t % 4);
        int64_t cap = d == 1 ? 200 : d == 2 ? 30 : d == 3 ? 14 : 7;
        int64_t n[4];
        for (int k = 0; k < d; k++)
            n[k] = rnd(12) == 0 ? rnd(2) : 1 + rnd(cap);
        int rs[MAXC], rt[MAXC];
        pl_nd_layout S, T;
        random_layout(&S, rs, C, d, n);
        random_layout(&T, rt, C, d, n);
        how whole = {.runs = true};
        how built = {.built = true, .pad = rnd(3),
                     .span = 1 + rnd(t % 3 ? 30 : 500)};
        simulate(&S, &T, C, &whole);
        simulate(&S, &T, C, &built);
        looped += built.looped;
    }
    assert_true(looped > 0);
}

/* Shapes whose programs nest several loops: cyclic(3) -> cyclic(5) in
 * every dimension, grid changes 2x2x1 -> 1x1x4 and 1x2x3 -> 3x2x1, a
 * dimension of extent 1, and d = 4.                                   */
static void test_shapes(void **state)
{
    (void)state;
    static const int64_t cs[][15] = {
        /* d, n0..n3, b, p0..p3, b2, q0..q3 */
        { 3, 40, 37, 23, 1, 3, 2, 2, 1, 1, 5, 1, 2, 3, 1 },
        { 3, 9, 31, 17, 1, 2, 2, 2, 1, 1, 1, 1, 1, 4, 1 },
        { 3, 29, 1, 45, 1, 3, 1, 2, 3, 1, 5, 3, 2, 1, 1 },
        { 4, 11, 13, 7, 9, 3, 1, 2, 1, 3, 5, 2, 1, 3, 1 },
        { 4, 6, 5, 17, 33, 2, 1, 1, 2, 2, 3, 1, 1, 1, 6 },
    };
    int looped = 0;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const int64_t *c = cs[i];
        pl_nd_layout S = { .d = (int)c[0] }, T = { .d = (int)c[0] };
        for (int k = 0; k < 4; k++) {
            S.n[k] = T.n[k] = c[1 + k];
            S.b[k] = c[5];
            S.p[k] = (int)c[6 + k];
            T.b[k] = c[10];
            T.p[k] = (int)c[11 + k];
        }
        how whole = {.runs = true}, built = {.built = true, .pad = 1, .span = 97};
        simulate(&S, &T, 6, &whole);
        simulate(&S, &T, 6, &built);
        looped += built.looped;
    }
    assert_true(looped > 0);
}

/* Pieces of a rank's plan, and groups, items and loops of its compiled
 * programs (summed into *prog); every program copies its message.      */
static int64_t rank_sizes(const pl_remap_rank *p, int64_t *prog)
{
    int64_t pieces = 0, lds = ld_of(p->src_lrows), ldd = ld_of(p->dst_lrows);
    for (int i = 0; i < p->nsend + p->nrecv + 1; i++) {
        bool send = i < p->nsend, self = i == p->nsend + p->nrecv;
        const pl_msg *m = send ? &p->send[i]
                        : self ? &p->self : &p->recv[i - p->nsend];
        if (self && !p->has_self) break;
        deso__copy c;
        assert_int_equal(deso__cp_from_msg(m, send ? DESO__CP_SEND
                                              : self ? DESO__CP_SELF
                                                     : DESO__CP_RECV,
                                           send || self ? lds : ldd,
                                           ldd, &c), DESO_OK);
        assert_int_equal(c.elems, m->count);
        *prog += c.ngroups + c.nitems + c.nloops;
        pieces += pl_msg_pieces(m);
        deso__cp_free(&c);
    }
    return pieces;
}

/* 2048^3 = 2^33 elements, cyclic(3) on 2x2x1 -> cyclic(5) on 1x2x3:
 * planning keeps one period per dimension (the product of dimensions
 * 1 and 2 listed would be about 2048 x 2048 / 8 pieces per message)
 * and the programs loop over the periods (listing the columns' pieces
 * would take about as many groups).  Nothing of the arrays' size is
 * allocated.                                                          */
static void test_large_plan_small(void **state)
{
    (void)state;
    pl_nd_layout S = { .d = 3, .n = { 2048, 2048, 2048 }, .b = { 3, 3, 3 },
                       .p = { 2, 2, 1 } };
    pl_nd_layout T = { .d = 3, .n = { 2048, 2048, 2048 }, .b = { 5, 5, 5 },
                       .p = { 1, 2, 3 } };
    int64_t pieces = 0, prog = 0, elems = 0;
    for (int r = 0; r < 6; r++) {
        pl_remap_rank p;
        assert_int_equal(pl_remap_plan_rank_nd(&S, &T, 6, PL_SCHED_STEPWISE,
                                               r, &p), DESO_OK);
        pieces += rank_sizes(&p, &prog);
        for (int i = 0; i < p.nsend; i++) elems += p.send[i].count;
        elems += p.has_self ? p.self.count : 0;
        pl_remap_rank_free(&p);
    }
    print_message("pieces %lld, program entries %lld\n", (long long)pieces,
                  (long long)prog);
    assert_int_equal(elems, (int64_t)1 << 33);
    assert_true(pieces <= 1000);
    assert_true(prog <= 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_layouts),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_large_plan_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
