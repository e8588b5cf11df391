/* Halo lists against brute force: random patterns and random (some empty)
 * partitions; every rank's receive lists exactly the foreign x entries
 * its rows touch, grouped by owner; sends are the transpose; local column
 * indices find the right x value in an own-then-halo buffer.             */
#include "pl_test.h"

#include <stdlib.h>

#include "placement/halo.h"

typedef struct problem {
    int64_t n;
    int nparts;
    pl_csr a;               /* all rows, global                             */
    int32_t *part;
} problem;

static void make_problem(uint64_t *s, problem *p)
{
    p->n = rng_range(s, 1, 40);
    p->nparts = (int)rng_range(s, 1, 7);
    p->part = malloc((size_t)p->n * sizeof *p->part);
    for (int64_t j = 0; j < p->n; j++) p->part[j] = (int32_t)rng_range(s, 0, p->nparts - 1);
    pl_coo t = {0, 0, NULL, NULL, NULL};
    int64_t nz = rng_range(s, 0, 4 * p->n);
    for (int64_t k = 0; k < nz; k++)
        EXPECT_OK(pl_coo_push(&t, rng_range(s, 0, p->n - 1), rng_range(s, 0, p->n - 1), 1.0));
    EXPECT_OK(pl_csr_from_coo(&t, p->n, p->n, &p->a));
    pl_coo_free(&t);
}

/* Rank r's rows of a, as an irregular row set (grow, borrowed by the rows:
 * the caller frees it after pl_csr_free).                                 */
static void rows_of(const problem *p, int r, pl_csr *out)
{
    pl_coo t = {0, 0, NULL, NULL, NULL};
    int64_t rows = 0;
    int32_t *grow = malloc((size_t)p->n * sizeof *grow);
    for (int64_t i = 0; i < p->n; i++) {
        if (p->part[i] != r) continue;
        for (int64_t e = p->a.rowptr[i]; e < p->a.rowptr[i + 1]; e++)
            EXPECT_OK(pl_coo_push(&t, rows, p->a.col[e], 1.0));
        grow[rows++] = (int32_t)i;
    }
    EXPECT_OK(pl_csr_from_coo(&t, rows, p->n, out));
    out->grow = grow;
    pl_coo_free(&t);
}

static int needs(const problem *p, int r, int64_t j)
{
    for (int64_t i = 0; i < p->n; i++)
        for (int64_t e = p->a.rowptr[i]; p->part[i] == r && e < p->a.rowptr[i + 1]; e++)
            if (p->a.col[e] == j) return 1;
    return 0;
}

static void expect_recv_exact(const problem *p, int r, const pl_halo *h)
{
    for (int s = 0; s < p->nparts; s++) {
        int64_t k = h->recv_ptr[s];
        for (int64_t j = 0; j < p->n; j++) {
            int want = s != r && p->part[j] == s && needs(p, r, j);
            if (!want) continue;
            assert_true(k < h->recv_ptr[s + 1]);
            assert_int_equal(h->recv_idx[k], j);   /* ascending, exact     */
            k++;
        }
        assert_int_equal(k, h->recv_ptr[s + 1]);
    }
}

static void expect_local_columns(const problem *p, const pl_owner_table *t,
                                 const pl_csr *mine, int r, const pl_halo *h)
{
    pl_owner own = pl_owner_table_map(t);
    int32_t *lcol = NULL;
    int64_t nown = t->count[r], nhalo = h->recv_ptr[p->nparts];
    EXPECT_OK(pl_halo_localise(mine, &own, r, nown, h, &lcol));
    double *xl = malloc((size_t)(nown + nhalo + 1) * sizeof *xl);
    for (int64_t j = 0; j < p->n; j++)
        if (p->part[j] == r) xl[t->local[j]] = 1000.0 + (double)j;
    for (int64_t k = 0; k < nhalo; k++) xl[nown + k] = 1000.0 + (double)h->recv_idx[k];
    for (int64_t e = 0; e < mine->rowptr[mine->nrows]; e++) {
        assert_true(lcol[e] >= 0 && lcol[e] < nown + nhalo);
        assert_true(xl[lcol[e]] == 1000.0 + (double)mine->col[e]);
    }
    free(xl);
    free(lcol);
}

static void test_random_partitions_exact(void **state)
{
    (void)state;
    uint64_t s = 42;
    for (int trial = 0; trial < 300; trial++) {
        problem p;
        make_problem(&s, &p);
        pl_owner_table t;
        EXPECT_OK(pl_owner_table_init(&t, p.part, p.n, p.nparts));
        pl_owner own = pl_owner_table_map(&t);
        pl_halo *h = calloc((size_t)p.nparts, sizeof *h);
        for (int r = 0; r < p.nparts; r++) {
            pl_csr mine;
            rows_of(&p, r, &mine);
            EXPECT_OK(pl_halo_recv(&mine, &own, r, p.nparts, &h[r]));
            expect_recv_exact(&p, r, &h[r]);
            expect_local_columns(&p, &t, &mine, r, &h[r]);
            const int32_t *grow = mine.grow;
            pl_csr_free(&mine);
            free((void *)grow);
        }
        EXPECT_OK(pl_halo_sends(h, p.nparts));
        for (int r = 0; r < p.nparts; r++)
            for (int q = 0; q < p.nparts; q++) {
                int64_t cnt = h[r].send_ptr[q + 1] - h[r].send_ptr[q];
                assert_int_equal(cnt, h[q].recv_ptr[r + 1] - h[q].recv_ptr[r]);
                for (int64_t k = 0; k < cnt; k++) {
                    int64_t j = h[r].send_idx[h[r].send_ptr[q] + k];
                    assert_int_equal(j, h[q].recv_idx[h[q].recv_ptr[r] + k]);
                    assert_int_equal(p.part[j], r);
                }
            }
        for (int r = 0; r < p.nparts; r++) pl_halo_free(&h[r]);
        free(h);
        pl_owner_table_free(&t);
        pl_csr_free(&p.a);
        free(p.part);
    }
}

static void test_blocks_owner(void **state)
{
    (void)state;
    for (int64_t n = 0; n <= 50; n++)
        for (int P = 1; P <= 9; P++) {
            pl_blocks b = {n, P};
            pl_owner o = pl_owner_blocks(&b);
            int64_t next = 0;
            for (int r = 0; r < P; r++) {
                int64_t lo, hi;
                pl_blocks_range(&b, r, &lo, &hi);
                assert_int_equal(lo, next);
                assert_true(hi - lo == n / P || hi - lo == n / P + 1);
                for (int64_t j = lo; j < hi; j++) {
                    assert_int_equal(o.rank(j, o.arg), r);
                    assert_int_equal(o.local(j, o.arg), j - lo);
                }
                next = hi;
            }
            assert_int_equal(next, n);
        }
}

static void test_bad_owner_refused(void **state)
{
    (void)state;
    int32_t part[3] = {0, 2, 1};
    pl_owner_table t;
    EXPECT_FAIL(pl_owner_table_init(&t, part, 3, 2), DESO_EINVAL, "part 2 of 2");
}

/* Local column indices are 32-bit: an own share plus halo beyond 2^31 - 1
 * is refused, so the caller keeps 64-bit columns.                        */
static void test_local_columns_overflow_refused(void **state)
{
    (void)state;
    int32_t part[2] = {0, 1};
    pl_coo t = {0, 0, NULL, NULL, NULL};
    EXPECT_OK(pl_coo_push(&t, 0, 1, 1.0));
    pl_csr a;
    EXPECT_OK(pl_csr_from_coo(&t, 1, 2, &a));
    pl_owner_table tab;
    EXPECT_OK(pl_owner_table_init(&tab, part, 2, 2));
    pl_owner own = pl_owner_table_map(&tab);
    pl_halo h;
    EXPECT_OK(pl_halo_recv(&a, &own, 0, 2, &h));
    int32_t *lcol = NULL;
    EXPECT_FAIL(pl_halo_localise(&a, &own, 0, INT32_MAX, &h, &lcol),
                DESO_EOVERFLOW, "32-bit");
    assert_null(lcol);
    EXPECT_OK(pl_halo_localise(&a, &own, 0, INT32_MAX - 1, &h, &lcol));
    assert_int_equal(lcol[0], INT32_MAX - 1);
    free(lcol);
    pl_halo_free(&h);
    pl_owner_table_free(&tab);
    pl_csr_free(&a);
    pl_coo_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_partitions_exact),
        cmocka_unit_test(test_blocks_owner),
        cmocka_unit_test(test_bad_owner_refused),
        cmocka_unit_test(test_local_columns_overflow_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
