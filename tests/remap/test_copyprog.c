/* Copy programs (deso/remap/copyprog.c) against brute force, serially:
 * random periodic item lists (short and long runs, strides, gaps, literal
 * tails), compiled plainly and with element tables, run into ordinary and
 * streamed targets at every alignment of the target, with and without the
 * AVX-512 gathers; side a numbering several arrays, resolved over one
 * base; and run a window at a time (deso__cp_run_window), as the
 * shared-memory rings do, into a packed buffer that holds one window.
 * Every element of the target is checked, the untouched ones too.
 * The copy programs are pure computation, so this runs without MPI.      */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso/remap/copyprog.h"
#include "tests/serial_util.h"

#define SENT (-3.5)
#define NARR 3

typedef struct list {
    deso__cp_item *it;
    int64_t n, na, nb;     /* items; extents of side a (per array), b     */
} list;

static tu_rng rs;
static int64_t rnd(int64_t n) { return tu_below(&rs, n); }

/* Whether this processor has the AVX-512 gathers the copy programs can
 * use (avx512f on x86-64), asked of the processor, not of the library.  */
static bool cpu_avx512(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
}

/* A periodic list: k runs per repetition, reps repetitions, targets in
 * order (tiling the period when `tile`), sources anywhere in one of the
 * arrays (w < narr), then a few literal items.                          */
static void make_list(list *l, int narr, int tile, int64_t reps)
{
    int k = 1 + (int)rnd(6);
    int64_t len[8], bo[8], ao[8], w[8], sa[8], db = 0;
    for (int j = 0; j < k; j++) {
        len[j] = rnd(4) == 0 ? 1 + rnd(rnd(2) ? 40 : 300) : 1 + rnd(5);
        sa[j] = rnd(3) == 0 ? 1 + rnd(3) : 1;
        bo[j] = db + (tile ? 0 : rnd(3));
        db = bo[j] + len[j];
        w[j] = rnd(narr);
    }
    db += tile ? 0 : rnd(4);
    int64_t da = 1 + rnd(3 * db), span = 0;
    for (int j = 0; j < k; j++) {
        ao[j] = rnd(2 * db);
        if (ao[j] + len[j] * sa[j] > span) span = ao[j] + len[j] * sa[j];
    }
    int lit = (int)rnd(4);
    l->n = reps * k + lit;
    l->it = malloc((size_t)l->n * sizeof *l->it);
    int64_t m = 0;
    for (int64_t t = 0; t < reps; t++)
        for (int j = 0; j < k; j++)
            l->it[m++] = (deso__cp_item){ (w[j] << DESO__CP_WBIT) + ao[j] +
                                          t * da, bo[j] + t * db, len[j],
                                          sa[j], 1 };
    l->na = reps * da + span;
    l->nb = reps * db;
    for (int q = 0; q < lit; q++) {
        int64_t n = 1 + rnd(30);
        l->it[m++] = (deso__cp_item){ (rnd(narr) << DESO__CP_WBIT) +
                                      rnd(l->na), l->nb + rnd(3), n, 1, 1 };
        l->nb += n + 3;
        if ((l->it[m - 1].a & ((1ll << DESO__CP_WBIT) - 1)) + n > l->na)
            l->na = (l->it[m - 1].a & ((1ll << DESO__CP_WBIT) - 1)) + n;
    }
}

/* B[b + x sb] = A_w[a + x sa] for every item, A_w = A + w * stride.     */
static void brute(const list *l, const double *A, int64_t stride, double *B)
{
    for (int64_t i = 0; i < l->n; i++) {
        const deso__cp_item *u = &l->it[i];
        int64_t w = u->a >> DESO__CP_WBIT;
        int64_t a = u->a & ((1ll << DESO__CP_WBIT) - 1);
        for (int64_t x = 0; x < u->len; x++)
            B[u->b + x * u->sb] = A[w * stride + a + x * u->sa];
    }
}

/* One list: every compile mode, every target alignment, plain, streamed
 * with the scalar loops, and (where the processor has them) streamed with
 * the AVX-512 gathers; 0 when all agree with brute force.  The library
 * shows which loop runs only through deso__cp_set_simd's answer, which is
 * checked at every switch.                                              */
static int check_list(const list *l, int narr)
{
    int64_t stride = l->na + 7;
    double *A = malloc((size_t)(narr * stride) * sizeof *A);
    double *want = malloc((size_t)(l->nb + 8) * sizeof *want);
    double *got = malloc((size_t)(l->nb + 16) * sizeof *got);
    deso__cp_item *tmp = malloc((size_t)l->n * sizeof *tmp);
    for (int64_t i = 0; i < narr * stride; i++) A[i] = (double)i + 0.25;
    for (int64_t i = 0; i < l->nb + 8; i++) want[i] = SENT;
    brute(l, A, stride, want);
    int bad = 0, modes = cpu_avx512() ? 3 : 2;
    for (int tables = 0; tables < 2; tables++) {
        deso__copy virt, res;
        memcpy(tmp, l->it, (size_t)l->n * sizeof *tmp);
        assert_int_equal(tables ? deso__cp_compile_tables(tmp, l->n, &virt)
                                : deso__cp_compile(tmp, l->n, &virt),
                         DESO_OK);
        assert_int_equal(deso__cp_clone(&virt, &res), DESO_OK);
        int64_t delta[NARR];
        for (int w = 0; w < NARR; w++) delta[w] = w * stride;
        deso__cp_resolve(&virt, delta, &res);
        for (int off = 0; off < 8; off++)     /* the target's alignment */
            for (int mode = 0; mode < modes; mode++) {
                double *B = got + off;
                for (int64_t i = 0; i < l->nb + 8; i++) B[i] = SENT;
                assert_int_equal(deso__cp_set_simd(mode == 2), mode == 2);
                if (mode == 0) {
                    deso__cp_run(&res, A, INT64_MAX, INT64_MAX, B,
                                 INT64_MAX, INT64_MAX);
                } else {
                    deso__cp_run_stream(&res, A, INT64_MAX, INT64_MAX, B,
                                        INT64_MAX, INT64_MAX);
                    deso__cp_fence();
                }
                if (memcmp(want, B, (size_t)(l->nb + 8) * sizeof *B)) {
                    if (!bad)
                        fprintf(stderr, "mismatch: %lld items, tables %d, "
                                "offset %d, mode %d\n", (long long)l->n,
                                tables, off, mode);
                    bad = 1;
                }
            }
        deso__cp_free(&virt);
        deso__cp_free(&res);
    }
    assert_int_equal(deso__cp_set_simd(true), modes == 3);
    free(A);
    free(want);
    free(got);
    free(tmp);
    return bad;
}

static void test_random_programs(void **state)
{
    (void)state;
    if (!cpu_avx512())
        printf("no AVX-512 on this processor: the AVX-512 gathers are not "
               "tested, the scalar loops are\n");
    rs.s = 20261121;
    int bad = 0;
    for (int c = 0; c < 300; c++) {
        list l;
        int narr = 1 + (int)rnd(NARR);
        /* Some lists long enough for the streamed, vector-gather path.  */
        int64_t reps = c % 10 == 0 ? 2000 + rnd(3000) : 1 + rnd(60);
        make_list(&l, narr, c % 2, reps);
        bad += check_list(&l, narr);
        free(l.it);
    }
    assert_int_equal(bad, 0);
}

/* The gathers follow the processor: on where it has AVX-512 (the
 * default, and on request), off on request; never on without it.      */
static void test_simd_switch(void **state)
{
    (void)state;
    assert_false(deso__cp_set_simd(false));
    bool on = deso__cp_set_simd(true);
    /* the switch must follow the processor either way                     */
    assert_int_equal(on, cpu_avx512());
    if (!on) printf("no AVX-512 on this processor: the gathers stay off\n");
}

/* Nothing merges, strides or repeats from one array into another: a
 * program over two arrays resolved with arbitrary distances between them
 * still copies from the right one.                                       */
static void test_arrays_stay_apart(void **state)
{
    (void)state;
    int64_t n = 64;
    deso__cp_item it[128];
    for (int64_t i = 0; i < n; i++)     /* a: 0, 1, 2 ... alternating arrays */
        it[i] = (deso__cp_item){ ((i % 2) << DESO__CP_WBIT) + i / 2, i, 1, 1,
                                 1 };
    deso__copy c, r;
    assert_int_equal(deso__cp_compile_tables(it, n, &c), DESO_OK);
    assert_int_equal(deso__cp_clone(&c, &r), DESO_OK);
    double src[200], dst[64];
    for (int i = 0; i < 200; i++) src[i] = i;
    for (int64_t gap = 32; gap <= 150; gap += 59) {
        int64_t delta[2] = { 0, gap };
        deso__cp_resolve(&c, delta, &r);
        deso__cp_run(&r, src, INT64_MAX, INT64_MAX, dst, INT64_MAX,
                     INT64_MAX);
        for (int64_t i = 0; i < n; i++)
            assert_true(dst[i] == (double)((i % 2) * gap + i / 2));
    }
    deso__cp_free(&c);
    deso__cp_free(&r);
}

/* A program whose side b counts 0, 1, 2, ... (a message packed into a
 * buffer) run `span` elements at a time into a buffer holding one window,
 * each window checked against the whole run's; then unpacked back the
 * same way.  0 when every window agrees.                                */
static int check_windows(const list *l, int64_t span, bool tables)
{
    /* Side b made packed: the items' targets laid end to end.           */
    deso__cp_item *it = malloc((size_t)l->n * sizeof *it);
    int64_t nb = 0, na = l->na;
    for (int64_t i = 0; i < l->n; i++) {
        it[i] = l->it[i];
        it[i].a &= ((int64_t)1 << DESO__CP_WBIT) - 1;
        it[i].b = nb;
        it[i].sb = 1;
        nb += it[i].len;
    }
    double *A = malloc((size_t)(na + 1) * sizeof *A);
    double *want = malloc((size_t)(nb + 1) * sizeof *want);
    double *win = malloc((size_t)(span + 1) * sizeof *win);
    double *back = malloc((size_t)(na + 1) * sizeof *back);
    for (int64_t i = 0; i <= na; i++) A[i] = (double)i + 0.5;
    deso__copy c, u;
    deso__cp_item *tmp = malloc((size_t)l->n * sizeof *tmp);
    memcpy(tmp, it, (size_t)l->n * sizeof *tmp);
    assert_int_equal(tables ? deso__cp_compile_tables(tmp, l->n, &c)
                            : deso__cp_compile(tmp, l->n, &c), DESO_OK);
    for (int64_t i = 0; i < l->n; i++)   /* the unpacking program          */
        tmp[i] = (deso__cp_item){ it[i].b, it[i].a, it[i].len, 1, it[i].sa };
    assert_int_equal(deso__cp_compile(tmp, l->n, &u), DESO_OK);
    deso__cp_run(&c, A, INT64_MAX, INT64_MAX, want, INT64_MAX, INT64_MAX);
    for (int64_t i = 0; i <= na; i++) back[i] = SENT;
    deso__cp_pos at = DESO__CP_START, ut = DESO__CP_START;
    int bad = 0;
    for (int64_t k = 0; k * span < nb; k++) {
        for (int64_t i = 0; i <= span; i++) win[i] = SENT;
        double *base = deso__cp_packed_base(win, k * span);
        int64_t n = deso__cp_run_window(&c, &at, span, A, INT64_MAX,
                                        INT64_MAX, base, INT64_MAX,
                                        INT64_MAX, k % 2 == 1);
        deso__cp_fence();
        int64_t want_n = nb - k * span < span ? nb - k * span : span;
        bad |= n != want_n || win[span] != SENT ||
               memcmp(win, want + k * span, (size_t)n * sizeof *win) != 0;
        n = deso__cp_run_window(&u, &ut, span, base, INT64_MAX, INT64_MAX,
                                back, INT64_MAX, INT64_MAX, false);
        bad |= n != want_n;
    }
    /* Every source element the program reads came back to its place.    */
    for (int64_t i = 0; i < l->n; i++)
        for (int64_t x = 0; x < it[i].len; x++)
            bad |= back[it[i].a + x * it[i].sa] != A[it[i].a + x * it[i].sa];
    deso__cp_free(&c);
    deso__cp_free(&u);
    free(it);
    free(tmp);
    free(A);
    free(want);
    free(win);
    free(back);
    return bad;
}

/* Windows of every size from 1 element to more than the whole program,
 * over random programs, plain and with element tables.                  */
static void test_windows(void **state)
{
    (void)state;
    rs.s = 20261126;
    int bad = 0;
    for (int c = 0; c < 120; c++) {
        list l;
        make_list(&l, 1, c % 2, 1 + rnd(c % 7 == 0 ? 400 : 30));
        int64_t span = c % 5 == 0 ? 1 : 1 + rnd(c % 3 == 0 ? 2000 : 64);
        bad += check_windows(&l, span, c % 4 < 2);
        free(l.it);
    }
    assert_int_equal(bad, 0);
}

/* Whether literal item u of c is still long enough for a split at span
 * to cut (two pieces of span / stride elements or more).                */
static bool cuttable(const deso__cp_item *u, int64_t span)
{
    int64_t st = u->sa > u->sb ? u->sa : u->sb, piece = span / st;
    return piece >= 1 && u->len >= 2 * piece;
}

static bool any_cuttable(const deso__copy *c, int64_t span)
{
    for (int64_t gi = 0; gi < c->ngroups; gi++)
        for (int64_t j = 0; c->g[gi].reps == 1 && j < c->g[gi].k; j++)
            if (cuttable(&c->it[c->g[gi].first + j], span)) return true;
    return false;
}

/* deso__cp_split: the same copies after the split, no literal item left
 * that it would cut, and a program with none to cut kept as it is (the
 * same arrays: no allocation).                                          */
static void test_split(void **state)
{
    (void)state;
    rs.s = 20261127;
    for (int c = 0; c < 200; c++) {
        list l;
        make_list(&l, 1, c % 2, 1 + rnd(30));
        int64_t span = 1 + rnd(c % 3 == 0 ? 8 : 400);
        double *A = malloc((size_t)(l.na + 1) * sizeof *A);
        double *want = malloc((size_t)(l.nb + 1) * sizeof *want);
        double *got = malloc((size_t)(l.nb + 1) * sizeof *got);
        for (int64_t i = 0; i <= l.na; i++) A[i] = (double)i + 0.5;
        for (int64_t i = 0; i <= l.nb; i++) want[i] = got[i] = SENT;
        brute(&l, A, 0, want);
        deso__copy p;
        assert_int_equal(deso__cp_compile(l.it, l.n, &p), DESO_OK);
        bool cut = any_cuttable(&p, span);
        const deso__cp_group *g0 = p.g;
        const deso__cp_item *i0 = p.it;
        assert_int_equal(deso__cp_split(&p, span), DESO_OK);
        assert_false(any_cuttable(&p, span));
        if (!cut) {
            assert_ptr_equal(p.g, g0);
            assert_ptr_equal(p.it, i0);
        }
        deso__cp_run(&p, A, INT64_MAX, INT64_MAX, got, INT64_MAX,
                     INT64_MAX);
        assert_memory_equal(want, got, (size_t)(l.nb + 1) * sizeof *got);
        deso__cp_free(&p);
        free(A);
        free(want);
        free(got);
        free(l.it);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simd_switch),
        cmocka_unit_test(test_random_programs),
        cmocka_unit_test(test_arrays_stay_apart),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
