/* Copy lists (placement/copy_list.h) against brute force: random pair
 * sequences made of runs of random lengths (1 to 70, so some lists are
 * cheaper listed and some run-coded), with each side explicit or
 * implicit, copied through the list as built and through the same list
 * forced to list every copy; both must write exactly dst[d_k] = src[s_k]
 * and nothing else.  The form chosen is the smaller one, and reversing a
 * listed list reverses its copies.                                        */
#include "pl_test.h"

#include <stdlib.h>

#include "placement/copy_list.h"

#define SPACE 4096

typedef struct pairs {
    int64_t n;
    int64_t s[SPACE], d[SPACE];
} pairs;

/* A permutation of [0, SPACE) cut into runs: each side's positions come
 * in ascending runs, distinct within the side, so no copy overwrites
 * another's target.                                                       */
static void make_pairs(uint64_t *rng, int64_t maxrun, bool has_src,
                       bool has_dst, pairs *p)
{
    int64_t total = rng_range(rng, 0, 300), s0 = 0, d0 = SPACE - 1;
    p->n = 0;
    while (p->n < total) {
        int64_t len = rng_range(rng, 1, maxrun);
        /* a run's sources go up from s0, its targets go up from a start
         * below d0's region, leaving gaps so that runs end             */
        int64_t ds = d0 - len - rng_range(rng, 1, 3) + 1;
        for (int64_t k = 0; k < len && p->n < total; k++) {
            p->s[p->n] = has_src ? s0 + k : p->n;
            p->d[p->n] = has_dst ? ds + k : p->n;
            p->n++;
        }
        s0 += len + rng_range(rng, 0, 2);
        d0 = ds - 1;
    }
}

static void build(const pairs *p, bool has_src, bool has_dst, bool runs_ok,
                  pl_copy_list *c)
{
    *c = pl_copy_new(has_src, has_dst);
    for (int64_t k = 0; k < p->n; k++) pl_copy_count(c, p->s[k], p->d[k]);
    EXPECT_OK(pl_copy_alloc(c, runs_ok));
    for (int64_t k = 0; k < p->n; k++) pl_copy_add(c, p->s[k], p->d[k]);
}

/* dst after the list ran equals brute force's, untouched entries too.    */
static void expect_copies(const pl_copy_list *c, const pairs *p)
{
    static double src[SPACE], got[SPACE], want[SPACE];
    for (int64_t i = 0; i < SPACE; i++) {
        src[i] = 1.0 + (double)i;
        got[i] = want[i] = -(double)i;
    }
    for (int64_t k = 0; k < p->n; k++) want[p->d[k]] = src[p->s[k]];
    pl_copy_run(c, src, got);
    for (int64_t i = 0; i < SPACE; i++) assert_true(got[i] == want[i]);
}

static void test_random_lists(void **state)
{
    (void)state;
    uint64_t rng = 7;
    static pairs p;
    for (int trial = 0; trial < 400; trial++) {
        bool has_src = trial % 4 != 1, has_dst = trial % 4 != 2;
        int64_t maxrun = trial % 3 == 0 ? 2 : trial % 3 == 1 ? 9 : 70;
        make_pairs(&rng, maxrun, has_src, has_dst, &p);
        pl_copy_list coded, listed;
        build(&p, has_src, has_dst, true, &coded);
        build(&p, has_src, has_dst, false, &listed);
        assert_false(listed.runs);
        expect_copies(&coded, &p);
        expect_copies(&listed, &p);
        /* the smaller form is the one kept                               */
        assert_true(pl_copy_bytes(&coded) <= pl_copy_bytes(&listed));
        int64_t sides = (has_src ? 1 : 0) + (has_dst ? 1 : 0);
        assert_true(coded.runs ==
                    (coded.nruns * (sides + 1) < coded.n * sides));
        pl_copy_free(&coded);
        pl_copy_free(&listed);
    }
}

/* One long run: three words instead of 2 n; a list of isolated copies
 * stays listed.                                                          */
static void test_forms(void **state)
{
    (void)state;
    static pairs p;
    p.n = 1000;
    for (int64_t k = 0; k < p.n; k++) {
        p.s[k] = 5 + k;
        p.d[k] = 2000 + k;
    }
    pl_copy_list c;
    build(&p, true, true, true, &c);
    assert_true(c.runs && c.nruns == 1 && pl_copy_bytes(&c) == 3 * 8);
    expect_copies(&c, &p);
    pl_copy_free(&c);
    for (int64_t k = 0; k < p.n; k++) {
        p.s[k] = 3 * k;
        p.d[k] = k; /* the implicit side                                  */
    }
    build(&p, true, false, true, &c);
    assert_false(c.runs);
    assert_true(pl_copy_bytes(&c) == (size_t)p.n * 8);
    expect_copies(&c, &p);
    pl_copy_free(&c);
    /* an empty list copies nothing                                       */
    p.n = 0;
    build(&p, true, true, true, &c);
    expect_copies(&c, &p);
    pl_copy_free(&c);
}

static void test_reverse(void **state)
{
    (void)state;
    static pairs p, back;
    p.n = back.n = 37;
    for (int64_t k = 0; k < p.n; k++) {
        p.s[k] = 100 + k;
        back.s[p.n - 1 - k] = 100 + k;
        p.d[k] = back.d[k] = k;
    }
    pl_copy_list c;
    build(&p, true, false, false, &c);
    pl_copy_reverse(&c);
    expect_copies(&c, &back);
    pl_copy_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_lists),
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_reverse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
