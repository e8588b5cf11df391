/* Cached exchange plans (deso/runtime/exchange.c) under
 * deso__exchange_plans_trim, which the end of every prepared force calls:
 * a plan of a change of layout lives through the force that used it and
 * the next one, and goes at the end of the second force that did not use
 * it; a lookup or a touch (a live replay's fill) starts the count again;
 * two plans used in alternate forces both stay; a plan under an element
 * map (vget, vput) is never freed by it.  Counted with
 * deso__exchange_plans_count, at n = 1, n < P and n = 203 (divisible
 * neither by P nor by the block), on every grid; every exchange, the ones
 * whose plan was made again after a trim included, must write what brute
 * force says.  On one rank every vector layout is the plain vector, so
 * there a change of layout makes no plan (checked) and only the map's
 * plan is counted.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                      */
#include "deso/runtime/runtime.h"
#include "test_util.h"

static int me, np;

static double elem(int64_t g) { return 0.5 + (double)g * 3.0; }

/* Exchange S -> D under map e (NULL: the change of layout) on fresh
 * views; true when every target element is its source element (or, under
 * a map, -1 where the map writes nothing).                                */
static bool exchange_once(deso_ctx *ctx, const blas_layout *S,
                          const blas_layout *D, const blas_emap *e)
{
    int r = ctx->coord[0], c = ctx->coord[1];
    deso__view *s = NULL, *d = NULL;
    bool ok = deso__view_alloc(ctx, S, &s) == DESO_OK &&
              deso__view_alloc(ctx, D, &d) == DESO_OK;
    for (int64_t l = 0; ok && l < s->rows; l++)
        s->data[l] = elem(blas_elem_global(S, r, c, l));
    for (int64_t l = 0; ok && l < d->rows; l++) d->data[l] = -1.0;
    if (ok)
        ok = (e == NULL ? deso__view_fill(ctx, BLAS_VEC, s, d)
                        : deso__exchange_map(ctx, s, d, e)) == DESO_OK;
    for (int64_t l = 0; ok && l < d->rows; l++) {
        int64_t g = blas_elem_global(D, r, c, l);
        int64_t i = e == NULL ? g : blas_emap_index(e, g, true);
        double want = i < 0 ? -1.0 : elem(e == NULL ? g : blas_emap_src(e, i));
        ok = d->data[l] == want;
    }
    deso__view_free(s);
    deso__view_free(d);
    return ok;
}

/* Trims once; true when that leaves `want` plans.                        */
static bool trim_leaves(deso_ctx *ctx, int want)
{
    deso__exchange_plans_trim(ctx);
    return deso__exchange_plans_count(ctx) == want;
}

/* S: cyclic, block 3, held at coordinate 0; D: an uneven partition (rank
 * q about q + 1 shares).                                                 */
static void two_layouts(deso_ctx *ctx, int64_t n, blas_layout *S,
                        blas_layout *D)
{
    int64_t *start = calloc((size_t)np + 1, sizeof *start);
    for (int q = 0; q < np; q++) {
        int64_t len = (q + 1) * n / (np * 2);
        start[q + 1] = start[q] + len < n ? start[q] + len : n;
    }
    start[np] = n;
    const blas_part *p;
    TU_OK(deso__part_intern(ctx, n, start, &p));
    free(start);
    *S = blas_layout_vec(n, 0, 3, 0, ctx->df.pr, ctx->df.pc);
    *D = blas_layout_part(p, ctx->df.pr, ctx->df.pc);
}

/* The plan of S -> D: through its force and the next, gone after the
 * one after; made again, it writes the same.                             */
static bool ages(deso_ctx *ctx, const blas_layout *S, const blas_layout *D)
{
    deso__exchange_plans_free(ctx);
    bool ok = exchange_once(ctx, S, D, NULL) &&
              deso__exchange_plans_count(ctx) == 1;
    ok = ok && trim_leaves(ctx, 1) && trim_leaves(ctx, 1) &&
         trim_leaves(ctx, 0);
    return ok && exchange_once(ctx, S, D, NULL) &&
           deso__exchange_plans_count(ctx) == 1;
}

/* A lookup, or a touch, in a later force starts its count again.        */
static bool kept_by_use(deso_ctx *ctx, const blas_layout *S,
                        const blas_layout *D)
{
    deso__exchange_plans_free(ctx);
    bool ok = exchange_once(ctx, S, D, NULL) && trim_leaves(ctx, 1) &&
              trim_leaves(ctx, 1);
    ok = ok && exchange_once(ctx, S, D, NULL) && trim_leaves(ctx, 1) &&
         trim_leaves(ctx, 1);
    deso__exchange_touch(ctx, BLAS_VEC, S, D);
    ok = ok && trim_leaves(ctx, 1) && trim_leaves(ctx, 1) &&
         trim_leaves(ctx, 0);
    return ok;
}

/* S -> D in odd forces, D -> S in even ones: both plans stay.            */
static bool alternating(deso_ctx *ctx, const blas_layout *S,
                        const blas_layout *D)
{
    deso__exchange_plans_free(ctx);
    bool ok = true;
    for (int k = 0; k < 6; k++) {
        ok = ok && (k % 2 == 0 ? exchange_once(ctx, S, D, NULL)
                               : exchange_once(ctx, D, S, NULL));
        ok = ok && trim_leaves(ctx, k == 0 ? 1 : 2);
    }
    return ok;
}

/* Under an element map (every other source element: a vget) the plan
 * stays whatever the forces; the change of layout beside it goes.        */
static bool maps_stay(deso_ctx *ctx, const blas_layout *S,
                      const blas_layout *D, int64_t n)
{
    if (n < 2) return true;
    deso__exchange_plans_free(ctx);
    blas_emap e = {1, 2, 0, 1, n / 2, 0, 0, 0};
    int both = np > 1 ? 2 : 1;
    bool ok = exchange_once(ctx, S, D, &e) && exchange_once(ctx, S, D, NULL) &&
              deso__exchange_plans_count(ctx) == both;
    ok = ok && trim_leaves(ctx, both) && trim_leaves(ctx, both) &&
         trim_leaves(ctx, 1);
    for (int k = 0; k < 3; k++) ok = ok && trim_leaves(ctx, 1);
    return ok && exchange_once(ctx, S, D, &e);
}

static void test_trim(void **state)
{
    (void)state;
    int grids[3][2], ng = tu_grids(grids);
    const int64_t ns[] = {1, np > 2 ? np - 1 : 2, 203};
    for (int gk = 0; gk < ng; gk++) {
        deso_ctx *ctx = tu_ctx(grids[gk][0], grids[gk][1], 0);
        bool ok = true;
        for (int k = 0; k < 3; k++) {
            blas_layout S, D;
            two_layouts(ctx, ns[k], &S, &D);
            bool a, b, c;
            if (np == 1) {       /* one rank: no plan for a change of layout */
                deso__exchange_plans_free(ctx);
                a = b = c = exchange_once(ctx, &S, &D, NULL) &&
                            deso__exchange_plans_count(ctx) == 0;
            } else {
                a = ages(ctx, &S, &D);
                b = kept_by_use(ctx, &S, &D);
                c = alternating(ctx, &S, &D);
            }
            bool d = maps_stay(ctx, &S, &D, ns[k]);
            if (!(a && b && c && d))
                print_error("rank %d: grid %dx%d n %lld: ages %d, kept by use "
                            "%d, alternating %d, maps %d\n", me, grids[gk][0],
                            grids[gk][1], (long long)ns[k], a, b, c, d);
            ok = ok && a && b && c && d;
        }
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
        cmocka_unit_test(test_trim),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
