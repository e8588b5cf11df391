/* tests/deso/test_remap_nd.c: d-dimensional block-cyclic remaps
 * (deso_redist_create_nd, deso_redist.h), d = 1 .. 4.
 *
 * Oracle: a brute-force index map written here from the layout's
 * definition alone: every global element (i_0, .., i_{d-1}) is visited,
 * its owner found from (i_k / b_k) mod p_k and the row-major grid, its
 * local index from the block-cyclic formula and its local extents by
 * counting the indices each grid position owns.  The source is filled
 * from that map; the expected target (value of the global index at each
 * owned element, a sentinel in padding, unowned places and a guard zone)
 * is built from it and compared element by element.  Every rank draws the
 * same random cases (one seed): d, extents (n < P and extents not
 * divisible by the block included), blocks, grid shapes, rank sets
 * (all, permuted, disjoint, overlapping, subsets), schedule, padding,
 * both transports and, on shared memory, sources in shared arrays (read
 * in place).  Errors must be agreed on every rank, with a message naming
 * the first bad argument.
 * deso-np: 1 2 3 4
 * deso-np-long: 6                                                         */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mpi.h>

#include "deso/deso_redist.h"

static int me, np;

static int all_true(int c)
{
    int r = 0;
    MPI_Allreduce(&c, &r, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return r;
}

static uint64_t rng_state;
static int rnd(int n)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (int)(z % (uint64_t)n);
}

/* ---- the oracle --------------------------------------------------------- */

/* The grid position of `rank` in l (its row-major index), or -1.         */
static int position(const deso_layout_nd *l, int rank)
{
    int n = 1;
    for (int k = 0; k < l->d; k++) n *= l->p[k];
    for (int i = 0; i < n; i++)
        if ((l->ranks ? l->ranks[i] : i) == rank) return i;
    return -1;
}

/* Grid coordinate of dimension k of position `pos` (last fastest).       */
static int coord(const deso_layout_nd *l, int pos, int k)
{
    for (int j = l->d - 1; j > k; j--) pos /= l->p[j];
    return pos % l->p[k];
}

/* Indices of [0, n) that coordinate c owns: counted, not NUMROC.         */
static int64_t owned(int64_t n, int64_t b, int p, int c)
{
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) cnt += (i / b) % p == c;
    return cnt;
}

typedef struct local {
    int pos;
    int64_t ext[DESO_ND_MAX];   /* local extents, 1 beyond d              */
    int64_t lld, len;           /* len = lld * (columns) + guard          */
    double *a, *shared;
} local;

#define GUARD 4
#define SENTINEL (-3.5)

static void local_make(const deso_layout_nd *l, int pad, int share,
                       local *o)
{
    memset(o, 0, sizeof *o);
    o->pos = position(l, me);
    int64_t cols = 1;
    for (int k = 0; k < DESO_ND_MAX; k++) {
        o->ext[k] = k >= l->d ? 1 : o->pos < 0 ? 0
                  : owned(l->n[k], l->b[k], l->p[k], coord(l, o->pos, k));
        if (k > 0) cols *= o->ext[k];
    }
    o->lld = (o->ext[0] > 1 ? o->ext[0] : 1) + pad;
    o->len = o->lld * cols + GUARD;
    if (share) {
        assert_int_equal(deso_redist_array_alloc(MPI_COMM_WORLD, o->len,
                                                 &o->shared), DESO_OK);
        o->a = o->shared;
    } else {
        o->a = malloc((size_t)o->len * sizeof *o->a);
    }
    for (int64_t i = 0; i < o->len; i++) o->a[i] = SENTINEL;
}

static void local_free(local *o)
{
    if (o->shared) deso_redist_array_free(o->shared);
    else free(o->a);
    memset(o, 0, sizeof *o);
}

/* Calls f on every global element this rank owns in l: (offset in o,
 * global linear index, first index fastest).                             */
static void each_owned(const deso_layout_nd *l, const local *o, double *a,
                       int64_t salt)
{
    if (o->pos < 0) return;
    int64_t n[DESO_ND_MAX] = { 1, 1, 1, 1 };
    for (int k = 0; k < l->d; k++) n[k] = l->n[k];
    for (int64_t i3 = 0; i3 < n[3]; i3++)
        for (int64_t i2 = 0; i2 < n[2]; i2++)
            for (int64_t i1 = 0; i1 < n[1]; i1++)
                for (int64_t i0 = 0; i0 < n[0]; i0++) {
                    int64_t g[DESO_ND_MAX] = { i0, i1, i2, i3 }, lo[4];
                    int mine = 1;
                    for (int k = 0; k < DESO_ND_MAX; k++) {
                        int64_t b = k < l->d ? l->b[k] : 1;
                        int p = k < l->d ? l->p[k] : 1;
                        int c = k < l->d ? coord(l, o->pos, k) : 0;
                        mine &= (g[k] / b) % p == c;
                        lo[k] = g[k] / (b * p) * b + g[k] % b;
                    }
                    if (!mine) continue;
                    int64_t off = lo[0] + o->lld * (lo[1] + o->ext[1] *
                                  (lo[2] + o->ext[2] * lo[3]));
                    int64_t lin = i0 + n[0] * (i1 + n[1] * (i2 + n[2] * i3));
                    a[off] = (double)(salt * 1000000 + lin + 1);
                }
}

/* Elements of o that differ from the expected target.                   */
static int64_t local_check(const deso_layout_nd *l, const local *o,
                           int64_t salt)
{
    double *want = malloc((size_t)o->len * sizeof *want);
    for (int64_t i = 0; i < o->len; i++) want[i] = SENTINEL;
    each_owned(l, o, want, salt);
    int64_t bad = 0;
    for (int64_t i = 0; i < o->len; i++) bad += o->a[i] != want[i];
    free(want);
    return bad;
}

/* ---- cases ------------------------------------------------------------ */

typedef struct ncase {
    deso_layout_nd src, dst;
    int src_ranks[8], dst_ranks[8];
    deso_schedule sched;
    int pad_src, pad_dst, shm, share;
} ncase;

static void describe(const ncase *c, const char *what)
{
    const deso_layout_nd *L[2] = { &c->src, &c->dst };
    fprintf(stderr, "rank %d: %s: d=%d %s shm=%d share=%d pads %d %d:", me,
            what, c->src.d, deso_schedule_name(c->sched), c->shm, c->share,
            c->pad_src, c->pad_dst);
    for (int s = 0; s < 2; s++) {
        const deso_layout_nd *l = L[s];
        fprintf(stderr, " %s[", s ? "dst" : "src");
        int n = 1;
        for (int k = 0; k < l->d; k++) {
            fprintf(stderr, "n%lld/b%lld/p%d ", (long long)l->n[k],
                    (long long)l->b[k], l->p[k]);
            n *= l->p[k];
        }
        fprintf(stderr, "ranks ");
        for (int i = 0; i < n; i++)
            fprintf(stderr, "%d,", l->ranks ? l->ranks[i] : i);
        fprintf(stderr, "]");
    }
    fprintf(stderr, ": %s\n", deso_last_error());
}

/* One remap checked: local extents, the target after two executions
 * (a replay), the source untouched.  Returns this rank's failures.      */
static int run(const ncase *c, int64_t salt)
{
    setenv("DESO_REMAP_SHM", c->shm ? "1" : "0", 1);
    deso_redist *r = NULL;
    deso_err e = deso_redist_create_nd(MPI_COMM_WORLD, &c->src, &c->dst,
                                       c->sched, &r);
    if (!all_true(e == DESO_OK)) {
        describe(c, "create failed");
        return 1;
    }
    local s, t;
    local_make(&c->src, c->pad_src, c->share, &s);
    local_make(&c->dst, c->pad_dst, 0, &t);
    each_owned(&c->src, &s, s.a, salt);
    int bad = 0;
    int64_t se[DESO_ND_MAX], de[DESO_ND_MAX];
    deso_redist_local_extents(r, se, de);
    for (int k = 0; k < DESO_ND_MAX; k++)
        bad += se[k] != (s.pos < 0 ? 0 : s.ext[k]) ||
               de[k] != (t.pos < 0 ? 0 : t.ext[k]);
    for (int rep = 0; rep < 2 && bad == 0; rep++) {
        e = deso_redist_execute(r, s.a, s.lld, t.a, t.lld);
        bad += e != DESO_OK;
        bad += local_check(&c->dst, &t, salt) != 0;
        bad += local_check(&c->src, &s, salt) != 0;
    }
    if (bad) describe(c, "wrong result");
    MPI_Barrier(MPI_COMM_WORLD);   /* nobody frees a shared source early */
    local_free(&s);
    local_free(&t);
    deso_redist_destroy(&r);
    return bad;
}

/* cnt grid positions split over d dimensions at random.                  */
static void random_grid(int cnt, int d, int *p)
{
    for (int k = 0; k < d; k++) p[k] = 1;
    for (int f = 2; cnt > 1; f++)
        while (cnt % f == 0) {
            p[rnd(d)] *= f;
            cnt /= f;
        }
}

/* The rank set of one side: NULL (0 ..), permuted, or from `offset`.   */
static const int *random_ranks(int *buf, int cnt, int mode, int offset)
{
    if (mode == 0) return NULL;
    for (int i = 0; i < cnt; i++) buf[i] = offset + i;
    for (int i = cnt - 1; mode == 2 && i > 0; i--) {
        int j = rnd(i + 1), x = buf[i];
        buf[i] = buf[j];
        buf[j] = x;
    }
    return buf;
}

static void random_case(ncase *c)
{
    memset(c, 0, sizeof *c);
    int d = 1 + rnd(DESO_ND_MAX);
    int P = 1 + rnd(np), Q = 1 + rnd(np);
    int disjoint = P + Q <= np && rnd(2) == 0;
    deso_layout_nd *L[2] = { &c->src, &c->dst };
    int *R[2] = { c->src_ranks, c->dst_ranks };
    int64_t n[DESO_ND_MAX];
    int64_t cap = d == 1 ? 300 : d == 2 ? 24 : d == 3 ? 9 : 6;
    for (int k = 0; k < d; k++)
        n[k] = rnd(10) == 0 ? rnd(2) : 1 + rnd((int)cap);
    for (int s = 0; s < 2; s++) {
        deso_layout_nd *l = L[s];
        int cnt = s == 0 ? P : Q;
        l->d = d;
        random_grid(cnt, d, l->p);
        for (int k = 0; k < d; k++) {
            l->n[k] = n[k];
            int block = rnd(5) == 0;     /* block distribution            */
            l->b[k] = block ? (n[k] + l->p[k] - 1) / l->p[k] : 1 + rnd(4);
            if (l->b[k] < 1) l->b[k] = 1;
        }
        int mode = disjoint ? 1 : rnd(3);
        int offset = disjoint ? (s == 0 ? 0 : P) : rnd(np - cnt + 1);
        l->ranks = random_ranks(R[s], cnt, mode, offset);
    }
    c->sched = (deso_schedule)rnd(3);
    c->pad_src = rnd(3) == 0 ? 1 + rnd(3) : 0;
    c->pad_dst = rnd(3) == 0 ? 1 + rnd(3) : 0;
}

static void test_random_against_brute_force(void **state)
{
    (void)state;
    rng_state = 2024;
    int bad = 0;
    for (int k = 0; k < 60; k++) {
        ncase c;
        random_case(&c);
        c.shm = k % 2;
        c.share = c.shm && k % 4 == 1;
        bad += run(&c, k + 1);
    }
    unsetenv("DESO_REMAP_SHM");
    assert_true(all_true(bad == 0));
}

/* Shape changes 2x2x1 -> 1x1x4 and back, identical layouts, one
 * dimension (a vector), a 4-D array with one rank owning nothing, and
 * extents below the grid extent.                                        */
static void test_fixed_cases(void **state)
{
    (void)state;
    int bad = 0, salt = 500;
    int p2 = np >= 4 ? 2 : 1, p4 = np >= 4 ? 4 : np;
    deso_layout_nd a = { .d = 3, .n = { 7, 5, 6 }, .b = { 2, 1, 3 },
                         .p = { p2, p2, 1 } };
    deso_layout_nd b = { .d = 3, .n = { 7, 5, 6 }, .b = { 3, 2, 1 },
                         .p = { 1, 1, p4 } };
    for (int shm = 0; shm < 2; shm++) {
        ncase c = { .src = a, .dst = b, .sched = DESO_SCHED_STEPWISE,
                    .shm = shm };
        bad += run(&c, salt++);
        c.src = b;
        c.dst = a;
        c.pad_dst = 2;
        bad += run(&c, salt++);
        c.dst = b;                               /* identical layouts  */
        bad += run(&c, salt++);
        deso_layout_nd v = { .d = 1, .n = { 1000 }, .b = { 3 },
                             .p = { np } };
        deso_layout_nd w = { .d = 1, .n = { 1000 }, .b = { 5 },
                             .p = { np } };
        c = (ncase){ .src = v, .dst = w, .sched = DESO_SCHED_GREEDY,
                     .shm = shm, .share = shm };
        bad += run(&c, salt++);
        deso_layout_nd x = { .d = 4, .n = { 3, 1, 4, 2 },
                             .b = { 1, 1, 1, 1 }, .p = { 1, 1, 1, np } };
        deso_layout_nd y = { .d = 4, .n = { 3, 1, 4, 2 },
                             .b = { 2, 1, 3, 1 }, .p = { np, 1, 1, 1 } };
        c = (ncase){ .src = x, .dst = y, .sched = DESO_SCHED_CATERPILLAR,
                     .shm = shm, .pad_src = 1 };
        bad += run(&c, salt++);
    }
    unsetenv("DESO_REMAP_SHM");
    assert_true(all_true(bad == 0));
}

/* ---- misuse ----------------------------------------------------------- */

/* Every rank got `code` and one message containing `detail` (the same
 * message everywhere unless `own`: each rank names itself).             */
static int agreed_own(deso_err e, deso_err code, const char *detail,
                      int own)
{
    char mine[512], first[512];
    snprintf(mine, sizeof mine, "%s", deso_last_error());
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    int ok = e == code && (own || strcmp(mine, first) == 0) &&
             strstr(mine, detail) != NULL;
    if (!ok)
        fprintf(stderr, "rank %d: %s \"%s\", expected %s with \"%s\"\n", me,
                deso_errname(e), mine, deso_errname(code), detail);
    return all_true(ok);
}

static int agreed(deso_err e, deso_err code, const char *detail)
{
    return agreed_own(e, code, detail, 0);
}

static deso_err create(const deso_layout_nd *s, const deso_layout_nd *t)
{
    deso_redist *r = NULL;
    deso_err e = deso_redist_create_nd(MPI_COMM_WORLD, s, t,
                                       DESO_SCHED_STEPWISE, &r);
    int null_on_error = e == DESO_OK || r == NULL;
    deso_redist_destroy(&r);
    return null_on_error ? e : DESO_EINTERNAL;
}

static void test_bad_input(void **state)
{
    (void)state;
    const deso_layout_nd ok = { .d = 3, .n = { 5, 4, 3 }, .b = { 2, 2, 2 },
                                .p = { 1, 1, np } };
    deso_layout_nd b = ok;
    int fails = 0;
    fails += !agreed(create(NULL, &ok), DESO_ENULL, "src is NULL");
    b.d = 0;
    fails += !agreed(create(&b, &ok), DESO_EINVAL, "src has d = 0");
    b = ok;
    b.d = 5;
    fails += !agreed(create(&ok, &b), DESO_EINVAL, "dst has d = 5");
    b = ok;
    b.n[1] = -1;
    fails += !agreed(create(&b, &ok), DESO_ESIZE, "n[1] = -1");
    b = ok;
    b.b[2] = 0;
    fails += !agreed(create(&b, &ok), DESO_EINVAL, "b[2] = 0");
    b = ok;
    b.p[0] = 0;
    fails += !agreed(create(&b, &ok), DESO_EINVAL, "p[0] = 0");
    b = ok;
    b.p[0] = 2;
    fails += !agreed(create(&b, &ok), DESO_EINVAL, "more positions");
    b = ok;
    int bad_ranks[8];
    for (int i = 0; i < np; i++) bad_ranks[i] = i;
    bad_ranks[np - 1] = np;
    b.ranks = bad_ranks;
    fails += !agreed(create(&b, &ok), DESO_EINVAL, "outside");
    if (np >= 2) {
        int twice[8] = { 0 };
        b.ranks = twice;
        fails += !agreed(create(&b, &ok), DESO_EINVAL, "are both 0");
    }
    b = ok;
    b.d = 2;
    fails += !agreed(create(&b, &ok), DESO_ESIZE, "src has d = 2");
    b = ok;
    b.n[2] = 4;
    fails += !agreed(create(&ok, &b), DESO_ESIZE, "n[2] = 3");
    b = (deso_layout_nd){ .d = 4, .n = { INT64_MAX / 2, 4, 1, 1 },
                          .b = { 1, 1, 1, 1 }, .p = { 1, 1, 1, 1 } };
    fails += !agreed(create(&b, &b), DESO_ESIZE, "overflows");
    /* one rank alone with another layout: every rank says mismatch      */
    b = ok;
    if (me == np - 1) b.b[0] = 3;
    fails += !agreed_own(create(&b, &ok), np > 1 ? DESO_EMISMATCH : DESO_OK,
                         np > 1 ? "differ between ranks" : "", 1);
    fails += !agreed(deso_redist_create_nd(MPI_COMM_WORLD, &ok, &ok,
                                           DESO_SCHED_STEPWISE, NULL),
                     DESO_ENULL, "out is NULL");
    fails += !agreed(deso_redist_local_extents(NULL, NULL, NULL),
                     DESO_ENULL, "r is NULL");
    /* execute: a too small leading dimension on one rank fails them all */
    deso_layout_nd t = { .d = 3, .n = { 5, 4, 3 }, .b = { 1, 1, 1 },
                         .p = { np, 1, 1 } };
    deso_redist *r = NULL;
    assert_true(all_true(deso_redist_create_nd(MPI_COMM_WORLD, &ok, &t,
                         DESO_SCHED_STEPWISE, &r) == DESO_OK));
    int64_t se[DESO_ND_MAX], de[DESO_ND_MAX];
    deso_redist_local_extents(r, se, de);
    double *a = calloc((size_t)(se[0] * se[1] * se[2]) + 1, sizeof *a);
    double *z = calloc((size_t)(de[0] * de[1] * de[2]) + 1, sizeof *z);
    int64_t lld = se[0] > 1 ? se[0] : 1;
    int64_t bad_lld = me == 0 && se[0] * se[1] * se[2] > 0 && se[0] > 1
                    ? se[0] - 1 : lld;
    int any_bad = !all_true(bad_lld == lld);
    deso_err e = deso_redist_execute(r, a, bad_lld, z,
                                     de[0] > 1 ? de[0] : 1);
    if (any_bad)
        fails += !agreed(e, DESO_EINVAL, "src_lld");
    else
        fails += !all_true(e == DESO_OK);
    free(a);
    free(z);
    deso_redist_destroy(&r);
    assert_int_equal(fails, 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np > 8) {
        if (me == 0) fprintf(stderr, "test_remap_nd: at most 8 ranks\n");
        MPI_Finalize();
        return 0;
    }
    if (np > 1) setenv("CMOCKA_TEST_ABORT", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_fixed_cases),
        cmocka_unit_test(test_bad_input),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
