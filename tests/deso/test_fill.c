/* Element functions run only where their element lives: deso_mat_from_fn
 * calls f(i, j) once, on the one rank that holds (i, j), and
 * deso_vec_from_fn calls f(i) once on each rank that holds a copy of
 * element i, and on no other rank.
 *
 * Oracle: where an element lives, as README ("ScaLAPACK both ways") and
 * doc/DESIGN.md ("Optimiser modes", mode none) state it for the default
 * placements on an R x C grid whose position (r, c) is rank r C + c:
 *   - matrix: cyclic(nb) over the grid rows x cyclic(nb) over the grid
 *     columns: (i, j) lives on rank ((i / nb) mod R) C + (j / nb) mod C;
 *   - vector: cyclic(nb) over the grid columns, replicated over the grid
 *     rows: element i lives on every rank of grid column (i / nb) mod C;
 * with DESO_NB_BLOCK, nb is ceil(extent / grid dimension) instead.
 * Each rank counts its calls per element and checks them against that
 * rule; summed over the ranks, every matrix element is made exactly once
 * (m x n calls in all) and every vector element R times.  The function
 * returns a value that names the element and the calling rank, and the
 * gathered result shows that every stored element is what its holder's
 * call made (checked at one block size per grid: a gather is a force
 * point, slow at P > cores).  Grids: every R x C with R C = P; block
 * sizes 1, 3, the default (64) and block folding; extents that no
 * block size or P divides, extents below P, single rows and columns, and
 * empty ones.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include "test_util.h"

static int me, np;

/* One construction's calls on this rank.                                 */
typedef struct {
    int64_t m, n;          /* extents (a vector: m = 1)                    */
    int copies;            /* ranks that make each element                 */
    int *calls;            /* calls per element, i + j m                   */
    int64_t outside;       /* calls with an index outside the extents      */
} tally;

/* The value of an element: its index and the rank that computed it.      */
static double stamp(int64_t k, int rank) { return (double)(k * 16 + rank); }

static double mat_fn(int64_t i, int64_t j, void *arg)
{
    tally *t = arg;
    if (i < 0 || i >= t->m || j < 0 || j >= t->n) {
        t->outside++;
        return -1.0;
    }
    t->calls[i + j * t->m]++;
    return stamp(i + j * t->m, me);
}

static double vec_fn(int64_t i, void *arg)
{
    tally *t = arg;
    if (i < 0 || i >= t->n) {
        t->outside++;
        return -1.0;
    }
    t->calls[i]++;
    return stamp(i, me);
}

static void tally_init(tally *t, int64_t m, int64_t n, int copies)
{
    t->m = m;
    t->n = n;
    t->copies = copies;
    t->outside = 0;
    t->calls = calloc((size_t)(m * n > 0 ? m * n : 1), sizeof *t->calls);
    assert_non_null(t->calls);
}

/* The grid coordinate that holds index i of an extent folded over p
 * coordinates in blocks of nb (DESO_NB_BLOCK: ceil(extent / p)).         */
static int coord_of(int64_t i, int64_t extent, int64_t nb, int p)
{
    int64_t b = nb;
    if (nb == DESO_NB_BLOCK) {
        int64_t e = extent > 1 ? extent : 1;
        b = e / p + (e % p != 0);
    }
    return (int)((i / b) % p);
}

typedef struct {
    int rows, cols;        /* the grid                                     */
    int64_t nb;            /* the block size in force                      */
} grid;

static int mat_owner(const grid *g, int64_t m, int64_t n, int64_t i,
                     int64_t j)
{
    return coord_of(i, m, g->nb, g->rows) * g->cols +
           coord_of(j, n, g->nb, g->cols);
}

/* Whether `rank` holds element i of a vector of length n.                */
static int vec_holds(const grid *g, int rank, int64_t n, int64_t i)
{
    return rank % g->cols == coord_of(i, n, g->nb, g->cols);
}

/* This rank's calls are exactly the elements it holds, once each.        */
static int calls_match(const tally *t, const int *want)
{
    int64_t bad = 0;
    for (int64_t k = 0; k < t->m * t->n; k++)
        if (t->calls[k] != want[k]) {
            if (bad++ == 0)
                print_error("rank %d: element %lld of %lld x %lld: %d calls, "
                            "expected %d\n", me, (long long)k,
                            (long long)t->m, (long long)t->n, t->calls[k],
                            want[k]);
        }
    if (t->outside != 0)
        print_error("rank %d: %lld calls outside %lld x %lld\n", me,
                    (long long)t->outside, (long long)t->m, (long long)t->n);
    return bad == 0 && t->outside == 0;
}

/* Summed over the ranks, every element of every tally was made `copies`
 * times: one all-reduce for all of a context's constructions.            */
static int sums_match(const tally *t, int count)
{
    int64_t len = 0;
    for (int k = 0; k < count; k++) len += t[k].m * t[k].n;
    int *mine = malloc((size_t)(len > 0 ? len : 1) * sizeof *mine);
    int *sum = malloc((size_t)(len > 0 ? len : 1) * sizeof *sum);
    assert_true(mine != NULL && sum != NULL);
    int64_t off = 0;
    for (int k = 0; k < count; k++) {
        memcpy(mine + off, t[k].calls, (size_t)(t[k].m * t[k].n) * sizeof *mine);
        off += t[k].m * t[k].n;
    }
    MPI_Allreduce(mine, sum, (int)len, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int ok = 1;
    off = 0;
    for (int k = 0; k < count; k++) {
        int64_t e = t[k].m * t[k].n, total = 0, bad = 0;
        for (int64_t i = 0; i < e; i++) {
            total += sum[off + i];
            bad += sum[off + i] != t[k].copies;
        }
        off += e;
        if (bad != 0 || total != t[k].copies * e) {
            print_error("%lld x %lld: %lld elements not made %d times; %lld "
                        "calls in all, expected %lld\n", (long long)t[k].m,
                        (long long)t[k].n, (long long)bad, t[k].copies,
                        (long long)total, (long long)(t[k].copies * e));
            ok = 0;
        }
    }
    free(mine);
    free(sum);
    return ok;
}

/* Failed checks on this rank in the current context: asserted once per
 * context (an all-reduce per check would dominate the run time).         */
static int failures;

/* Makes an m x n matrix into t; with `gather`, also reads it back.      */
static void check_mat(deso_ctx *ctx, const grid *g, tally *t, int64_t m,
                      int64_t n, int gather)
{
    tally_init(t, m, n, 1);
    int *want = calloc((size_t)(m * n > 0 ? m * n : 1), sizeof *want);
    double *buf = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof *buf);
    assert_true(want != NULL && buf != NULL);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
            want[i + j * m] = mat_owner(g, m, n, i, j) == me;
    deso_mat *A;
    TU_OK(deso_mat_from_fn(ctx, m, n, mat_fn, t, &A));
    failures += !calls_match(t, want);
    if (gather && m * n > 0) {
        /* every stored element is the one its owner's call returned      */
        TU_OK(deso_mat_gather(A, buf, m, DESO_ALL_RANKS));
        int64_t wrong = 0;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                wrong += buf[i + j * m] !=
                         stamp(i + j * m, mat_owner(g, m, n, i, j));
        if (wrong != 0)
            print_error("%lld x %lld: %lld elements not their owner's "
                        "value\n", (long long)m, (long long)n,
                        (long long)wrong);
        failures += wrong != 0;
    }
    TU_OK(deso_mat_destroy(&A));
    free(want);
    free(buf);
}

/* Makes a vector of length n into t (one copy per grid row); with
 * `gather`, also reads it back.                                           */
static void check_vec(deso_ctx *ctx, const grid *g, tally *t, int64_t n,
                      int gather)
{
    tally_init(t, 1, n, g->rows);
    int *want = calloc((size_t)(n > 0 ? n : 1), sizeof *want);
    double *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    assert_true(want != NULL && buf != NULL);
    for (int64_t i = 0; i < n; i++) want[i] = vec_holds(g, me, n, i);
    deso_vec *x;
    TU_OK(deso_vec_from_fn(ctx, n, vec_fn, t, &x));
    failures += !calls_match(t, want);
    if (gather && n > 0) {
        TU_OK(deso_vec_gather(x, buf, DESO_ALL_RANKS));
        int64_t wrong = 0;
        for (int64_t i = 0; i < n; i++) {
            double k = floor(buf[i] / 16.0);
            int rank = (int)(buf[i] - 16.0 * k);
            wrong += k != (double)i || rank < 0 || rank >= np ||
                     !vec_holds(g, rank, n, i);
        }
        if (wrong != 0)
            print_error("length %lld: %lld elements not a holder's value\n",
                        (long long)n, (long long)wrong);
        failures += wrong != 0;
    }
    TU_OK(deso_vec_destroy(&x));
    free(want);
    free(buf);
}

enum { NSHAPES = 12, NLENGTHS = 9 };

/* Every grid R x C of the ranks, every block size, every shape.          */
static void test_where(void **state)
{
    (void)state;
    const int64_t nbs[] = {1, 3, 0, DESO_NB_BLOCK};   /* 0: the default   */
    const int64_t shapes[NSHAPES][2] = {
        {0, 0}, {0, 3}, {4, 0}, {1, 1}, {1, 9}, {9, 1}, {2, 3}, {5, 5},
        {7, 5}, {13, 11}, {17, 4}, {65, 66}};
    const int64_t lengths[NLENGTHS] = {0, 1, 2, 3, 5, 7, 13, 65, 130};
    for (int rows = 1; rows <= np; rows++) {
        if (np % rows != 0) continue;
        for (size_t b = 0; b < sizeof nbs / sizeof nbs[0]; b++) {
            deso_ctx *ctx = tu_ctx(rows, np / rows, nbs[b]);
            deso_info info;
            TU_OK(deso_get_info(ctx, &info));
            assert_true(tu_all(info.grid_rows == rows &&
                               info.grid_cols == np / rows));
            grid g = {rows, np / rows, info.nb};
            int gather = nbs[b] == 3;
            tally t[NSHAPES + NLENGTHS];
            failures = 0;
            for (int k = 0; k < NSHAPES; k++)
                check_mat(ctx, &g, &t[k], shapes[k][0], shapes[k][1], gather);
            for (int k = 0; k < NLENGTHS; k++)
                check_vec(ctx, &g, &t[NSHAPES + k], lengths[k], gather);
            failures += !sums_match(t, NSHAPES + NLENGTHS);
            for (int k = 0; k < NSHAPES + NLENGTHS; k++) free(t[k].calls);
            if (failures != 0)
                print_error("rank %d: grid %dx%d, nb %lld: %d failed checks\n",
                            me, g.rows, g.cols, (long long)nbs[b], failures);
            assert_true(tu_all(failures == 0));
            TU_OK(deso_finalize(&ctx));
        }
    }
}

static int setup(void **state)
{
    (void)state;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_where),
    };
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    MPI_Finalize();
    return rc;
}
