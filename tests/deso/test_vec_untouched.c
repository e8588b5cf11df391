/* New zero values (deso_vec_create, deso_mat_create) whose storage takes
 * no memory until written (deso__calloc_untouched):
 *   - a vector never written reads back zeros, gathered and element by
 *     element, and as an operand (y + 2 x is y, x.y and ||x|| are 0, a
 *     scaled x is zero), and so does a matrix (gathered; A y is zero), in
 *     every optimiser mode, on every grid of tu_grids, at n = 1, n < P,
 *     n that P does not divide, and n whose share is well above the
 *     64 KiB from which pages are left untouched;
 *   - a new vector's own pages are not resident (mincore, Linux), even
 *     when the allocator hands it heap memory that was written before
 *     (made here: glibc's mapping and trim thresholds set high, as
 *     freeing a large array raises them, then a written array freed into
 *     the heap), where clearing it would have made every page resident.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#define _DEFAULT_SOURCE                 /* mincore                       */
#include "test_util.h"

#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "deso/runtime/runtime.h"

static double fy(int64_t i, void *arg)
{
    (void)arg;
    return (double)(i % 97) + 0.5;
}

static double fa(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return (double)((i + 3 * j) % 11) - 5.0;
}

static void expect_zeros(const double *g, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += g[i] != 0.0;
    TU_CHECK(bad == 0);
}

/* x never written, then read every way a solver reads it.               */
static void vec_case(deso_ctx *ctx, int64_t n)
{
    deso_vec *x = NULL, *y = NULL, *z = NULL;
    deso_scalar *dot = NULL, *nrm = NULL;
    TU_CALL(deso_vec_create(ctx, n, &x));
    TU_CALL(deso_vec_create(ctx, n, &z));
    TU_CALL(deso_vec_from_fn(ctx, n, fy, NULL, &y));
    TU_CALL(deso_scalar_create(ctx, 1.0, &dot));
    TU_CALL(deso_scalar_create(ctx, 1.0, &nrm));
    double *g = calloc((size_t)n, sizeof *g);
    TU_CHECK(g != NULL);
    tu_fetch(x, g);
    expect_zeros(g, n);
    double last = -1.0;
    TU_CALL(deso_vec_get(x, n - 1, &last));
    TU_CHECK(last == 0.0);
    TU_CALL(deso_daxpy(n, 2.0, x, 1, y, 1));
    TU_CALL(deso_ddot(n, x, 1, y, 1, dot));
    TU_CALL(deso_dnrm2(n, x, 1, nrm));
    TU_CALL(deso_dscal(n, 3.0, z, 1));
    tu_fetch(y, g);
    int64_t differ = 0;
    for (int64_t i = 0; i < n; i++) differ += g[i] != fy(i, NULL);
    TU_CHECK(differ == 0);
    TU_CHECK(tu_value(dot) == 0.0 && tu_value(nrm) == 0.0);
    tu_fetch(z, g);
    expect_zeros(g, n);
    free(g);
    deso_scalar_destroy(&dot);
    deso_scalar_destroy(&nrm);
    deso_vec_destroy(&x);
    deso_vec_destroy(&y);
    deso_vec_destroy(&z);
}

/* A new m x n matrix: zeros gathered, and A y = 0 (y = A y + 0 y).      */
static void mat_case(deso_ctx *ctx, int64_t m, int64_t n)
{
    deso_mat *A = NULL, *B = NULL;
    deso_vec *y = NULL, *q = NULL;
    TU_CALL(deso_mat_create(ctx, m, n, &A));
    TU_CALL(deso_mat_from_fn(ctx, m, n, fa, NULL, &B));
    TU_CALL(deso_vec_from_fn(ctx, n, fy, NULL, &y));
    TU_CALL(deso_vec_from_fn(ctx, m, fy, NULL, &q));
    double *g = calloc((size_t)(m * n), sizeof *g);
    TU_CHECK(g != NULL);
    TU_CALL(deso_mat_gather(A, g, m, DESO_ALL_RANKS));
    expect_zeros(g, m * n);
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, A, m, y, 1,
                       0.0, q, 1));
    tu_fetch(q, g);
    expect_zeros(g, m);
    free(g);
    deso_mat_destroy(&A);
    deso_mat_destroy(&B);
    deso_vec_destroy(&y);
    deso_vec_destroy(&q);
}

static void test_zeros(void **state)
{
    (void)state;
    int P = tu_size(), grids[4][2];
    int ng = tu_grids(grids);
    const int64_t sizes[] = {1, P > 1 ? P - 1 : 2, 1001, 3 * 40009};
    for (int mode = 0; mode < TU_NMODES; mode++)
        for (int gk = 0; gk < ng; gk++) {
            deso_ctx *ctx = tu_ctx_mode(tu_mode(mode), grids[gk][0],
                                        grids[gk][1], 0);
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
                tu_label("mode %d, grid %dx%d, n %lld", mode, grids[gk][0],
                         grids[gk][1], (long long)sizes[s]);
                vec_case(ctx, sizes[s]);
                tu_case_end();
            }
            tu_label("mode %d, grid %dx%d, matrix", mode, grids[gk][0],
                     grids[gk][1]);
            mat_case(ctx, 301, 299);
            tu_case_end();
            TU_OK(deso_finalize(&ctx));
        }
    TU_SYNC();
}

/* Resident whole pages of a view's data.                                */
static size_t resident(const deso__view *w)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)w->rows *
                                                       (size_t)w->cols * 8;
    uintptr_t a = ((uintptr_t)w->data + ps - 1) & ~(uintptr_t)(ps - 1);
    uintptr_t b = ((uintptr_t)w->data + bytes) & ~(uintptr_t)(ps - 1);
    if (b <= a) return 0;
    size_t n = (b - a) / ps, got = 0;
    unsigned char *vec = malloc(n);
    if (vec == NULL || mincore((void *)a, b - a, vec) != 0) {
        free(vec);
        return (size_t)-1;
    }
    for (size_t k = 0; k < n; k++) got += vec[k] & 1;
    free(vec);
    return got;
}

/* Heap memory written and freed, where the next large arrays come from:
 * glibc's thresholds fixed above them (as freeing a large array raises
 * them in deso-cg), so the written array stays in the heap.           */
static void dirty_heap(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
    size_t big = (size_t)20 << 20;
    char *p = malloc(big);
    if (p != NULL) memset(p, 1, big);
    free(p);
}

static void test_not_resident(void **state)
{
    (void)state;
#ifdef __linux__
    deso_ctx *ctx = tu_ctx_mode(DESO_MODE_FULL, 0, 0, 0);
    dirty_heap();
    deso_vec *x[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        TU_CALL(deso_vec_create(ctx, (int64_t)1 << 20, &x[k]));
        tu_label("vector %d", k);
        const deso__view *w = x[k]->h.val->views;
        TU_CHECK(w != NULL && w->rows * w->cols * 8 >= (1 << 20));
        if (w != NULL) TU_CHECK(resident(w) == 0);
    }
    for (int k = 0; k < 2; k++) deso_vec_destroy(&x[k]);
    TU_OK(deso_finalize(&ctx));
    TU_SYNC();
#endif
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zeros),
        cmocka_unit_test(test_not_resident),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
