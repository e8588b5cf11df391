/* The search's table of plans already costed (optimizer/opt_seen.c)
 * against a brute-force list: random plans of 1 to 12 nodes over a few
 * layout ids (so that many plans differ in one slot only), kept with a
 * time each, looked up again, with keys that collide on purpose (every
 * plan the same key; a key that sees only node 0's result) as well as a
 * good one.  A lookup must give the time kept for that very plan, and
 * nothing for a plan never kept, past the table's growth (hundreds of
 * plans).                                                                */
#include "opt_test.h"

#include <stdlib.h>

#include "optimizer/opt_impl.h"

#define MAXN 12
#define NPLANS 700

enum { KEY_CONST, KEY_WEAK, KEY_GOOD, KEY_COUNT };

static uint64_t key_of(int kind, const opt__place *p, int nnodes)
{
    if (kind == KEY_CONST) return 0;
    if (kind == KEY_WEAK) return (uint64_t)(uint32_t)p[0].res;
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < nnodes; i++) {
        h = (h ^ (uint32_t)p[i].res) * 1099511628211ull;
        for (int k = 0; k < BLAS_MAXOPS; k++)
            h = (h ^ (uint32_t)p[i].req[k]) * 1099511628211ull;
    }
    return h;
}

/* A random plan: ids 0 .. 2, the unused slots -1 as the search has them. */
static void random_plan(opt__place *p, int nnodes, unsigned *seed)
{
    for (int i = 0; i < nnodes; i++) {
        int nops = 1 + i % 3;
        p[i].res = rand_r(seed) % 3;
        for (int k = 0; k < BLAS_MAXOPS; k++)
            p[i].req[k] = k < nops ? rand_r(seed) % 3 : -1;
    }
}

/* The brute-force answer: index of plan p among the n kept, or -1.       */
static int brute_find(const opt__place *kept, int n, const opt__place *p,
                      int nnodes)
{
    for (int x = 0; x < n; x++)
        if (memcmp(&kept[(size_t)x * MAXN], p,
                   (size_t)nnodes * sizeof *p) == 0)
            return x;
    return -1;
}

static void check_one(int nnodes, int kind, unsigned seed)
{
    opt__seen *s;
    EXPECT_OK(opt__seen_new(nnodes, &s));
    opt__place *kept = calloc((size_t)NPLANS * MAXN, sizeof *kept);
    double *times = calloc(NPLANS, sizeof *times);
    assert_non_null(kept);
    assert_non_null(times);
    int n = 0, hits = 0;
    for (int it = 0; it < 3 * NPLANS && n < NPLANS; it++) {
        opt__place p[MAXN];
        random_plan(p, nnodes, &seed);
        uint64_t h = key_of(kind, p, nnodes);
        double t = -1.0;
        bool found = opt__seen_find(s, p, h, &t);
        int x = brute_find(kept, n, p, nnodes);
        assert_int_equal(found, x >= 0);
        if (found) {
            /* the very time kept for this plan, bit for bit              */
            assert_memory_equal(&t, &times[x], sizeof t);
            hits++;
            continue;
        }
        memcpy(&kept[(size_t)n * MAXN], p, (size_t)nnodes * sizeof *p);
        times[n] = (double)rand_r(&seed) / 7.0 + it;
        EXPECT_OK(opt__seen_add(s, p, h, times[n]));
        n++;
    }
    /* every kept plan is found again with its time                       */
    for (int x = 0; x < n; x++) {
        double t = -1.0;
        const opt__place *p = &kept[(size_t)x * MAXN];
        assert_true(opt__seen_find(s, p, key_of(kind, p, nnodes), &t));
        assert_memory_equal(&t, &times[x], sizeof t);
    }
    /* small plans run out of distinct plans; larger ones pass the table's
     * first growth                                                         */
    if (nnodes >= 4) assert_true(n > 256);
    if (nnodes <= 2) assert_true(hits > 0);
    free(kept);
    free(times);
    opt__seen_free(s);
}

static void test_seen_brute(void **state)
{
    (void)state;
    const int sizes[] = {1, 2, 3, 5, 10, 12};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int kind = 0; kind < KEY_COUNT; kind++)
            check_one(sizes[k], kind, 12345u + (unsigned)(7 * k + kind));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seen_brute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
