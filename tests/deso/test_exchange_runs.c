/* Exchange plans whose copy lists are run-coded (placement/copy_list.h)
 * against the same plans listing every element (ctx->exchange_listed):
 * every vector layout (block and cyclic foldings of block 1, 3 and 64 in
 * both orientations and at coordinate 0, held at one coordinate or
 * replicated; a partition in balanced blocks and an uneven one) to every
 * other, under the identity map, and some pairs under element maps that
 * walk a side backwards or skip elements (vget, vput), at n = 1, n < P,
 * and n = 203, divisible neither by P nor by any block.  Each run
 * must write exactly what the element-by-element plan writes, and both
 * what brute force says (the map's targets get their source element,
 * the rest stay as they were); the run-coded plan never keeps more bytes
 * than the listed one, and far fewer for a block partition replicated.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                      */
#include "deso/runtime/runtime.h"
#include "test_util.h"

static int me, np;

#define NLAYOUTS 20

static double elem(int64_t g) { return 0.25 + (double)g * 7.0; }

/* The vector layouts of n elements on ctx's grid; parts first.           */
static int layouts(deso_ctx *ctx, int64_t n, blas_layout *out)
{
    int pr = ctx->df.pr, pc = ctx->df.pc, k = 0;
    int64_t *start = calloc((size_t)np + 1, sizeof *start);
    const blas_part *p;
    /* balanced blocks (the first n % P one longer), then uneven ones:
     * rank q holds about q + 1 shares, the last the rest                 */
    for (int kind = 0; kind < 2; kind++) {
        for (int q = 0; q < np; q++) {
            int64_t len = kind == 0 ? n / np + (q < n % np) : (q + 1) * n / (np * 2);
            start[q + 1] = start[q] + len < n ? start[q] + len : n;
        }
        start[np] = n;
        TU_OK(deso__part_intern(ctx, n, start, &p));
        out[k++] = blas_layout_part(p, pr, pc);
    }
    free(start);
    const int64_t bs[] = {1, 3, 64};
    for (int dist = -1; dist <= 1; dist++)
        for (int bk = 0; bk < 3; bk++)
            for (unsigned rep = 0; rep < 4; rep += 3)
                out[k++] = blas_layout_vec(n, dist, bs[bk], rep, pr, pc);
    return k;
}

/* The target after exchange S -> D under map e, run-coded or listed:
 * a fresh plan (the cache emptied) on fresh views.  Returns the plan's
 * list bytes; the target's local entries in dst (rows of them).         */
static size_t exchange(deso_ctx *ctx, const blas_layout *S,
                       const blas_layout *D, const blas_emap *e, bool listed,
                       double *dst, bool *ok)
{
    int r = ctx->coord[0], c = ctx->coord[1];
    deso__view *s = NULL, *d = NULL;
    *ok = *ok && deso__view_alloc(ctx, S, &s) == DESO_OK &&
          deso__view_alloc(ctx, D, &d) == DESO_OK;
    if (s == NULL || d == NULL) return 0;
    for (int64_t l = 0; l < s->rows; l++)
        s->data[l] = elem(blas_elem_global(S, r, c, l));
    for (int64_t l = 0; l < d->rows; l++) d->data[l] = -1.0;
    deso__exchange_plans_free(ctx);
    ctx->exchange_listed = listed;
    *ok = *ok && deso__exchange_map(ctx, s, d, e) == DESO_OK;
    size_t lists, buffers;
    deso__exchange_plans_bytes(ctx, &lists, &buffers);
    memcpy(dst, d->data, (size_t)d->rows * sizeof *dst);
    deso__view_free(s);
    deso__view_free(d);
    return lists;
}

/* One pair: both forms agree with each other and with brute force.      */
static bool check_pair(deso_ctx *ctx, const blas_layout *S,
                       const blas_layout *D, const blas_emap *e,
                       size_t bytes[2])
{
    int r = ctx->coord[0], c = ctx->coord[1];
    int64_t rows, cols;
    blas_layout_local(D, r, c, &rows, &cols);
    double *coded = calloc((size_t)rows + 1, sizeof *coded);
    double *listed = calloc((size_t)rows + 1, sizeof *listed);
    bool ok = coded != NULL && listed != NULL;
    bytes[0] = exchange(ctx, S, D, e, false, coded, &ok);
    bytes[1] = exchange(ctx, S, D, e, true, listed, &ok);
    for (int64_t l = 0; ok && l < rows; l++) {
        int64_t i = blas_emap_index(e, blas_elem_global(D, r, c, l), true);
        double want = i < 0 ? -1.0 : elem(blas_emap_src(e, i));
        ok = coded[l] == listed[l] && coded[l] == want;
    }
    ok = ok && bytes[0] <= bytes[1];
    if (!ok)
        print_error("rank %d: n %lld dist %d b %lld -> dist %d b %lld map "
                    "(%lld, %lld, %lld, %lld): the forms differ\n", me,
                    (long long)D->n, S->dist, (long long)S->b, D->dist,
                    (long long)D->b, (long long)e->so, (long long)e->si,
                    (long long)e->to, (long long)e->ti);
    free(coded);
    free(listed);
    return ok;
}

/* Maps on vectors of n elements: the identity, then a source walked
 * backwards, a target walked backwards, every other source element
 * (vget), every other target element (vput).                             */
static int maps(int64_t n, blas_emap *out)
{
    int k = 0;
    out[k++] = (blas_emap){0, 1, 0, 1, n, 0, 0, 0};
    out[k++] = (blas_emap){n - 1, -1, 0, 1, n, 0, 0, 0};
    out[k++] = (blas_emap){0, 1, n - 1, -1, n, 0, 0, 0};
    if (n / 2 > 0) {
        out[k++] = (blas_emap){1, 2, 0, 1, n / 2, 0, 0, 0};
        out[k++] = (blas_emap){0, 1, 1, 2, n / 2, 0, 0, 0};
    }
    return k;
}

/* Every pair of layouts of n elements under the identity, the first six
 * under every map; a block partition replicated keeps a run per message
 * where the listed plan keeps an index per element.                      */
static bool all_pairs(deso_ctx *ctx, int64_t n)
{
    blas_layout L[NLAYOUTS];
    blas_emap M[5];
    int nl = layouts(ctx, n, L), nm = maps(n, M);
    bool ok = true;
    size_t bytes[2];
    for (int a = 0; a < nl; a++)
        for (int b = 0; b < nl; b++)
            for (int m = 0; m < (a < 6 && b < 6 ? nm : 1); m++)
                ok = check_pair(ctx, &L[a], &L[b], &M[m], bytes) && ok;
    /* L[0]: balanced blocks; L[3]: replicated on every rank              */
    ok = check_pair(ctx, &L[0], &L[3], &M[0], bytes) && ok;
    if (n >= 200) ok = ok && bytes[1] >= 8 * bytes[0];
    return ok;
}

static void test_forms_agree(void **state)
{
    (void)state;
    int grids[3][2], ng = tu_grids(grids);
    const int64_t ns[] = {1, np > 2 ? np - 1 : 2, 203};
    for (int gk = 0; gk < ng; gk++) {
        deso_ctx *ctx = tu_ctx(grids[gk][0], grids[gk][1], 0);
        bool ok = true;
        for (int k = 0; k < 3; k++) ok = all_pairs(ctx, ns[k]) && ok;
        assert_true(tu_all(ok));
        TU_OK(deso_finalize(&ctx));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms_agree),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
