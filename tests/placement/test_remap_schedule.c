/* Schedules: validity for exhaustive small and random cases, stepwise
 * reaches the minimum number of steps, the caterpillar has max(P, Q)
 * steps, greedy never costs more than either, and the worked examples of
 * paper 001 (doc/DESIGN.md, "Worked examples (paper 001)").                 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso_errors.h"
#include "remap.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int64_t rnd(int64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

/* Every property a schedule promises.                                     */
static void validate(const pl_schedule *s, int P, int Q, const int64_t *len)
{
    assert_int_equal(s->P, P);
    assert_int_equal(s->Q, Q);
    char *seen = calloc((size_t)P * Q, 1), *rq = malloc((size_t)Q);
    int64_t total = 0, msgs = 0, nnz = 0;
    for (int k = 0; k < s->nsteps; k++) {
        memset(rq, 0, (size_t)Q);
        int64_t cost = 0;
        for (int p = 0; p < P; p++) {
            int q = s->recv_of[(int64_t)k * P + p];
            if (q < 0) continue;
            assert_true(q < Q);
            assert_false(rq[q]);            /* a receiver once per step     */
            rq[q] = 1;
            int64_t w = len[(int64_t)p * Q + q];
            assert_true(w > 0);             /* zero entries never           */
            assert_false(seen[(int64_t)p * Q + q]);   /* at most once       */
            seen[(int64_t)p * Q + q] = 1;
            if (w > cost) cost = w;
            msgs++;
        }
        assert_int_equal(s->step_cost[k], cost);
        total += cost;
    }
    for (int64_t i = 0; i < (int64_t)P * Q; i++)
        if (len[i] > 0) {
            assert_true(seen[i]);           /* every message once           */
            nnz++;
        }
    assert_int_equal(msgs, nnz);
    assert_int_equal(s->messages, nnz);
    assert_int_equal(s->total_cost, total);
    free(seen);
    free(rq);
}

typedef struct totals {
    int64_t cases, tc[3], ns[3], greedy_better;
} totals;

/* All three kinds on one matrix, with the relations between them.        */
static void check_all(int P, int Q, const int64_t *len, totals *T)
{
    pl_schedule s[3];
    int N = P > Q ? P : Q, D = pl_schedule_min_steps(P, Q, len);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(pl_schedule_build((pl_sched_kind)k, P, Q, len, &s[k]),
                         DESO_OK);
        validate(&s[k], P, Q, len);
    }
    assert_int_equal(s[PL_SCHED_CATERPILLAR].nsteps, N);
    assert_int_equal(s[PL_SCHED_STEPWISE].nsteps, D);
    assert_true(s[PL_SCHED_GREEDY].nsteps >= D);
    assert_true(s[PL_SCHED_GREEDY].total_cost <= s[PL_SCHED_CATERPILLAR].total_cost);
    assert_true(s[PL_SCHED_GREEDY].total_cost <= s[PL_SCHED_STEPWISE].total_cost);
    if (T) {
        T->cases++;
        for (int k = 0; k < 3; k++) {
            T->tc[k] += s[k].total_cost;
            T->ns[k] += s[k].nsteps;
        }
        T->greedy_better += s[2].total_cost < s[1].total_cost;
    }
    for (int k = 0; k < 3; k++) pl_schedule_free(&s[k]);
}

static void report(const char *what, const totals *T)
{
    printf("  %s: %lld cases; total cost caterpillar %lld, stepwise %lld, "
           "greedy %lld; steps %lld / %lld / %lld; greedy cheaper than "
           "stepwise in %lld\n", what, (long long)T->cases,
           (long long)T->tc[0], (long long)T->tc[1], (long long)T->tc[2],
           (long long)T->ns[0], (long long)T->ns[1], (long long)T->ns[2],
           (long long)T->greedy_better);
}

static void test_exhaustive_slices(void **state)
{
    (void)state;
    int64_t len[144];
    totals T = {0};
    for (int P = 1; P <= 12; P++)
        for (int Q = 1; Q <= 12; Q++)
            for (int r = 1; r <= 4; r++)
                for (int s = 1; s <= 4; s++) {
                    assert_int_equal(pl_remap_slice(P, r, Q, s, len, NULL), DESO_OK);
                    check_all(P, Q, len, &T);
                }
    report("slices P,Q<=12 r,s<=4", &T);
}

static void test_random_slices_to_64(void **state)
{
    (void)state;
    int64_t *len = malloc(64 * 64 * sizeof *len);
    totals T = {0};
    for (int t = 0; t < 30; t++) {
        int P = 1 + (int)rnd(64), Q = 1 + (int)rnd(64);
        int64_t r = 1 + rnd(12), s = 1 + rnd(12);
        assert_int_equal(pl_remap_slice(P, r, Q, s, len, NULL), DESO_OK);
        check_all(P, Q, len, &T);
    }
    report("random slices P,Q<=64", &T);
    free(len);
}

/* Arbitrary sparse matrices (not slices): irregular degrees and lengths.  */
static void test_random_matrices(void **state)
{
    (void)state;
    int64_t *len = malloc(64 * 64 * sizeof *len);
    totals T = {0};
    for (int t = 0; t < 60; t++) {
        int P = 1 + (int)rnd(t < 40 ? 16 : 64), Q = 1 + (int)rnd(t < 40 ? 16 : 64);
        int dens = 1 + (int)rnd(100);
        int64_t maxw = 1 + rnd(t % 2 ? 5 : 100000);
        for (int i = 0; i < P * Q; i++)
            len[i] = rnd(100) < dens ? 1 + rnd(maxw) : 0;
        check_all(P, Q, len, &T);
    }
    /* All zero: no messages, the caterpillar still has its steps.         */
    memset(len, 0, 9 * sizeof *len);
    check_all(3, 3, len, NULL);
    report("random sparse matrices", &T);
    free(len);
}

/* Matrices where no rank sends or receives twice (partial permutations,
 * on both sides of the Hungarian limit, and the empty one): stepwise and
 * greedy are one step costing the longest message, the least possible.  */
static void test_one_matching(void **state)
{
    (void)state;
    int64_t *len = malloc(150 * 150 * sizeof *len);
    int *perm = malloc(150 * sizeof *perm);
    for (int t = 0; t < 40; t++) {
        int P = 1 + (int)rnd(t < 30 ? 12 : 150);
        int Q = t % 5 == 0 ? P : 1 + (int)rnd(t < 30 ? 12 : 150);
        int N = P > Q ? P : Q;
        for (int i = 0; i < N; i++) perm[i] = i;
        for (int i = N - 1; i > 0; i--) {
            int j = (int)rnd(i + 1), x = perm[i];
            perm[i] = perm[j];
            perm[j] = x;
        }
        memset(len, 0, (size_t)P * Q * sizeof *len);
        int64_t longest = 0;
        for (int p = 0; p < P; p++)
            if (perm[p] < Q && rnd(4) != 0) {
                len[(int64_t)p * Q + perm[p]] = 1 + rnd(1000);
                if (len[(int64_t)p * Q + perm[p]] > longest)
                    longest = len[(int64_t)p * Q + perm[p]];
            }
        check_all(P, Q, len, NULL);
        for (int k = PL_SCHED_STEPWISE; k <= PL_SCHED_GREEDY; k++) {
            pl_schedule s;
            assert_int_equal(pl_schedule_build((pl_sched_kind)k, P, Q, len,
                                               &s), DESO_OK);
            assert_int_equal(s.nsteps, longest > 0);
            assert_int_equal(s.total_cost, longest);
            pl_schedule_free(&s);
        }
    }
    free(perm);
    free(len);
}

/* Above the Hungarian limit stepwise colours the edges instead.          */
static void test_large_grid(void **state)
{
    (void)state;
    int P = 150, Q = 140;
    int64_t *len = malloc((size_t)P * Q * sizeof *len);
    for (int i = 0; i < P * Q; i++) len[i] = rnd(100) < 10 ? 1 + rnd(50) : 0;
    check_all(P, Q, len, NULL);
    free(len);
}

static void build(pl_sched_kind k, int P, int64_t r, int Q, int64_t s,
                  pl_schedule *out, int64_t *len)
{
    assert_int_equal(pl_remap_slice(P, r, Q, s, len, NULL), DESO_OK);
    assert_int_equal(pl_schedule_build(k, P, Q, len, out), DESO_OK);
    validate(out, P, Q, len);
}

/* Paper 001's Example 5: P = 15 -> Q = 6, r = 2, s = 3; g = 6, one slice
 * is L = 90 elements.  Its message matrix (Table 14), row p:
 *   p = 0 mod 3: 2 elements to every even q,
 *   p = 1 mod 3: 1 element to every q,
 *   p = 2 mod 3: 2 elements to every odd q;
 * so every receiver gets 10 messages, 5 long (2) and 5 short (1), and
 * only the 5 senders p = 1 mod 3 have short ones.  Stepwise: 10 steps
 * (the maximum degree), which cost 20 (the paper's 10/20): in 10 steps
 * every receiver receives in every step, and a step of short messages
 * only serves at most 5 of the 6 receivers, so every step costs 2.  The
 * optimum is 16, which greedy reaches in 11 steps (the paper's greedy:
 * 12/18): with a steps of cost 2 (a >= 5: 5 long messages per receiver)
 * and b of cost 1, the 60 messages fit only if 30 <= (6 a - 30) + 5 b
 * (the short ones in the cost-2 steps' free receivers, at most 5 per
 * cost-1 step), so 2 a + b >= 12 + 4 a / 5 >= 16.  The caterpillar takes
 * 15 steps and costs 30.                                                 */
static void example5(void)
{
    int64_t len[15 * 6], slice = 0;
    pl_schedule s;
    assert_int_equal(pl_remap_slice(15, 2, 6, 3, len, &slice), DESO_OK);
    assert_int_equal(slice, 90);
    for (int p = 0; p < 15; p++)
        for (int q = 0; q < 6; q++) {
            int64_t want = 0;
            if (p % 3 == 1) want = 1;
            else if ((p % 3 == 0) == (q % 2 == 0)) want = 2;
            assert_int_equal(len[p * 6 + q], want);
        }
    assert_int_equal(pl_schedule_min_steps(15, 6, len), 10);
    const struct { pl_sched_kind k; int ns; int64_t tc; } want[] = {
        {PL_SCHED_STEPWISE, 10, 20},
        {PL_SCHED_GREEDY, 11, 16},
        {PL_SCHED_CATERPILLAR, 15, 30},
    };
    for (int k = 0; k < 3; k++) {
        assert_int_equal(pl_schedule_build(want[k].k, 15, 6, len, &s),
                         DESO_OK);
        validate(&s, 15, 6, len);
        assert_int_equal(s.messages, 60);
        assert_int_equal(s.nsteps, want[k].ns);
        assert_int_equal(s.total_cost, want[k].tc);
        pl_schedule_free(&s);
    }
}

static void test_worked_examples(void **state)
{
    (void)state;
    int64_t len[256];
    pl_schedule s;
    struct { int P; int64_t r; int Q; int64_t s; int ns; int64_t tc_max; int64_t cat; }
    ex[] = {
        {16, 3, 16, 5, 7, 15, 48},     /* Ex.1 */
        {16, 7, 16, 11, 16, 77, 112},  /* Ex.2 */
        {15, 3, 15, 5, 10, 27, 45},    /* Ex.3 */
        {12, 4, 8, 3, 4, 8, 18},       /* Ex.4 */
        {15, 2, 6, 3, 10, 20, 30},     /* Ex.5 */
    };
    for (int i = 0; i < 5; i++) {
        build(PL_SCHED_STEPWISE, ex[i].P, ex[i].r, ex[i].Q, ex[i].s, &s, len);
        assert_int_equal(s.nsteps, ex[i].ns);
        assert_true(s.total_cost <= ex[i].tc_max);
        printf("  Ex.%d stepwise NS %d TC %lld", i + 1, s.nsteps,
               (long long)s.total_cost);
        pl_schedule_free(&s);
        build(PL_SCHED_CATERPILLAR, ex[i].P, ex[i].r, ex[i].Q, ex[i].s, &s, len);
        assert_int_equal(s.total_cost, ex[i].cat);
        printf("; caterpillar NS %d TC %lld", s.nsteps, (long long)s.total_cost);
        pl_schedule_free(&s);
        build(PL_SCHED_GREEDY, ex[i].P, ex[i].r, ex[i].Q, ex[i].s, &s, len);
        printf("; greedy NS %d TC %lld\n", s.nsteps, (long long)s.total_cost);
        if (i == 4) {                  /* Ex.5: 16, the optimum (below) */
            assert_int_equal(s.nsteps, 11);
            assert_int_equal(s.total_cost, 16);
        }
        if (i == 0 || i == 1) assert_int_equal(s.total_cost, ex[i].tc_max);
        pl_schedule_free(&s);
    }
    /* Ex.1, Ex.2 and Ex.4 have exact totals (lower bounds reached).       */
    build(PL_SCHED_STEPWISE, 16, 3, 16, 5, &s, len);
    assert_int_equal(s.total_cost, 15);
    pl_schedule_free(&s);
    build(PL_SCHED_STEPWISE, 16, 7, 16, 11, &s, len);
    assert_int_equal(s.total_cost, 77);
    pl_schedule_free(&s);
    build(PL_SCHED_STEPWISE, 12, 4, 8, 3, &s, len);
    assert_int_equal(s.total_cost, 8);
    pl_schedule_free(&s);
    /* Ex.5 exactly: the message matrix, the slice and every schedule.    */
    example5();
    /* Ex.4 caterpillar: Table 19, step by step.                           */
    build(PL_SCHED_CATERPILLAR, 12, 4, 8, 3, &s, len);
    const int64_t t19[] = {3, 0, 0, 0, 3, 3, 3, 0, 0, 0, 3, 3};
    assert_int_equal(s.nsteps, 12);
    assert_memory_equal(s.step_cost, t19, sizeof t19);
    pl_schedule_free(&s);
}

static void test_names_and_errors(void **state)
{
    (void)state;
    pl_sched_kind k;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pl_sched_parse(pl_sched_name((pl_sched_kind)i), &k), DESO_OK);
        assert_int_equal((int)k, i);
    }
    assert_int_equal(pl_sched_parse("fastest", &k), DESO_EINVAL);
    assert_non_null(strstr(deso_last_error(), "pl_sched_parse"));
    int64_t len[4] = {1, 0, 0, 1};
    pl_schedule s;
    assert_int_equal(pl_schedule_build(PL_SCHED_GREEDY, 0, 2, len, &s), DESO_EINVAL);
    assert_non_null(strstr(deso_last_error(), "pl_schedule_build"));
    assert_int_equal(pl_schedule_build((pl_sched_kind)7, 2, 2, len, &s), DESO_EINVAL);
    len[1] = -1;
    assert_int_equal(pl_schedule_build(PL_SCHED_STEPWISE, 2, 2, len, &s), DESO_EINVAL);
    assert_int_equal(pl_schedule_build(PL_SCHED_STEPWISE, 2, 2, NULL, &s), DESO_ENULL);
    pl_schedule_free(NULL);
    pl_schedule_free(&s);   /* empty after a failed build                  */
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_exhaustive_slices),
        cmocka_unit_test(test_random_slices_to_64),
        cmocka_unit_test(test_random_matrices),
        cmocka_unit_test(test_one_matching),
        cmocka_unit_test(test_large_grid),
        cmocka_unit_test(test_worked_examples),
        cmocka_unit_test(test_names_and_errors),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
