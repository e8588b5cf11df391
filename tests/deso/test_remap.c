/* tests/deso/test_remap.c: block-cyclic remaps over MPI (deso_redist.h).
 *
 * Oracle: every target element must equal a function of its global index,
 * computed here from ScaLAPACK's block-cyclic formulas independently of
 * the planner; padding (lld > local rows) and a guard zone after each
 * array must keep their sentinels.  A second oracle is ScaLAPACK's
 * pdgemr2d: identical results, element for element (exact copies).
 * Every rank draws the same random cases (one seed), and every assertion
 * is collective (a failure flag is all-reduced first).  Cases alternate
 * between the two transports (shared memory, the default on one node, and
 * MPI with DESO_REMAP_SHM=0), and each handle must report the one used.
 * The set-up cached per communicator (its duplicate and rings) is checked
 * through the library's count of caches: one per communicator, shared by
 * its remaps, gone with the communicator and the last of them.  P = 3 and
 * 4 run in the long group (make check's time; test_remap_nd remaps on 3
 * ranks and 2x2 grids in the fast one).
 * deso-np: 1 2
 * deso-np-long: 3 4                                                       */
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
#include "deso/remap/comm_cache.h"
#include "deso/remap/shared_array.h"

/* BLACS and ScaLAPACK (no public C header).                                */
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridmap(int *ctxt, int *usermap, int ldumap, int nprow,
                    int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow,
                     int *mycol);
void Cblacs_gridexit(int ctxt);
void pdgemr2d_(const int *m, const int *n, const double *a, const int *ia,
               const int *ja, const int *desca, double *b, const int *ib,
               const int *jb, const int *descb, const int *ictxt);

static int me, np;

static int any_true(int c)
{
    int r = 0;
    MPI_Allreduce(&c, &r, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return r;
}
#define assert_all_true(c) assert_false(any_true(!(c)))

/* An error agreed across the ranks (deso_redist.h: "the same on every
 * rank, with the failing rank's message"): this rank returned `code` with
 * the message every other rank has, which names the failing rank `who`
 * ("rank W: ", where ranks had to agree) and carries that rank's details
 * d1 and d2 (NULL: none).  Collective: call it on every rank, never after
 * a short-circuit.                                                       */
static int agreed(deso_err e, deso_err code, int who, int named,
                  const char *d1, const char *d2)
{
    char mine[512], first[512], tag[32];
    snprintf(mine, sizeof mine, "%s", deso_last_error());
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(tag, sizeof tag, "rank %d: ", who);
    int ok = e == code && strcmp(mine, first) == 0 && strstr(mine, d1) &&
             (d2 == NULL || strstr(mine, d2)) && (!named || strstr(mine, tag));
    if (!ok)
        fprintf(stderr, "rank %d: %s \"%s\"; expected %s from rank %d "
                "(\"%s\") on every rank, rank 0 has \"%s\"\n", me,
                deso_errname(e), mine, deso_errname(code), who, d1, first);
    return ok;
}

/* ---- one random stream, the same on every rank ------------------------- */

static uint64_t rng_state;
static uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int rnd(int n) { return (int)(rnd64() % (uint64_t)n); }

/* ---- the oracle: block-cyclic index maps -------------------------------- */

static int64_t numroc(int64_t n, int64_t nb, int ip, int np_)
{
    int64_t nblocks = n / nb, num = (nblocks / np_) * nb;
    int64_t extra = nblocks % np_;
    if (ip < extra) num += nb;
    else if (ip == extra) num += n % nb;
    return num;
}

static int64_t l2g(int64_t l, int64_t nb, int ip, int np_)
{
    return (l / nb) * nb * np_ + (int64_t)ip * nb + l % nb;
}

/* Grid position of `rank` in layout l, or -1.                              */
static int position(const deso_layout *l, int rank)
{
    for (int i = 0; i < l->pr * l->pc; i++)
        if ((l->ranks ? l->ranks[i] : i) == rank) return i;
    return -1;
}

typedef struct local {
    int pos, prow, pcol;
    int64_t rows, cols, lld, len;   /* len = lld * cols + guard            */
    double *a;
    double *shared;                 /* from deso_redist_array_alloc, or NULL */
} local;

#define GUARD 5
#define SENTINEL (-7.25)

/* share: 0 plain memory; 1 a shared array (deso_redist_array_alloc, so
 * that receivers read it in place); collective when share != 0, and then
 * ranks whose bit in `mask` is clear use plain memory all the same (mixed
 * single-copy and ring messages in one remap).                            */
static void local_make_shared(const deso_layout *l, int pad, int share,
                              unsigned mask, local *o);

static void local_make(const deso_layout *l, int pad, local *o)
{
    local_make_shared(l, pad, 0, 0, o);
}

static void local_make_shared(const deso_layout *l, int pad, int share,
                              unsigned mask, local *o)
{
    memset(o, 0, sizeof *o);
    o->pos = position(l, me);
    if (o->pos >= 0) {
        o->prow = o->pos / l->pc;
        o->pcol = o->pos % l->pc;
        if (l->replicated) {
            o->rows = l->m;
            o->cols = l->n;
        } else {
            o->rows = numroc(l->m, l->mb, o->prow, l->pr);
            o->cols = numroc(l->n, l->nb, o->pcol, l->pc);
        }
    }
    o->lld = (o->rows > 1 ? o->rows : 1) + pad;
    o->len = o->lld * o->cols + GUARD;
    if (share) {
        deso_err e = deso_redist_array_alloc(MPI_COMM_WORLD, o->len,
                                             &o->shared);
        assert_int_equal(e, DESO_OK);
    }
    o->a = share && (mask >> me & 1u) ? o->shared
                                      : malloc((size_t)o->len * sizeof(double));
    for (int64_t i = 0; i < o->len; i++) o->a[i] = SENTINEL;
}

static void global_of(const deso_layout *l, const local *o, int64_t i,
                      int64_t j, int64_t *gi, int64_t *gj)
{
    if (l->replicated) {
        *gi = i;
        *gj = j;
    } else {
        *gi = l2g(i, l->mb, o->prow, l->pr);
        *gj = l2g(j, l->nb, o->pcol, l->pc);
    }
}

static double value(int64_t salt, int64_t m, int64_t gi, int64_t gj)
{
    return (double)(salt * 100000000 + gi + gj * m + 1);
}

static void local_fill(const deso_layout *l, local *o, int64_t salt)
{
    for (int64_t j = 0; j < o->cols; j++)
        for (int64_t i = 0; i < o->rows; i++) {
            int64_t gi, gj;
            global_of(l, o, i, j, &gi, &gj);
            o->a[j * o->lld + i] = value(salt, l->m, gi, gj);
        }
}

/* Number of wrong elements: data, padding, guard.                          */
static int64_t local_check(const deso_layout *l, const local *o,
                           int64_t salt)
{
    int64_t bad = 0;
    for (int64_t k = 0; k < o->len; k++) {
        int64_t j = k / o->lld, i = k % o->lld;
        double want = SENTINEL;
        if (j < o->cols && i < o->rows) {
            int64_t gi, gj;
            global_of(l, o, i, j, &gi, &gj);
            want = value(salt, l->m, gi, gj);
        }
        if (o->a[k] != want) bad++;
    }
    return bad;
}

static void local_free(local *o)
{
    if (o->a != o->shared) free(o->a);
    assert_int_equal(deso_redist_array_free(o->shared), DESO_OK);
    o->a = o->shared = NULL;
}

static const double *src_ptr(const local *o)
{
    return o->rows * o->cols > 0 ? o->a : NULL;
}
static double *dst_ptr(const local *o)
{
    return o->rows * o->cols > 0 ? o->a : NULL;
}

/* ---- random cases -------------------------------------------------------- */

typedef struct rcase {
    deso_layout src, dst;
    int src_ranks[64], dst_ranks[64];
    deso_schedule sched;
    int pad_src, pad_dst;
    int share;                      /* sources: see local_make_shared      */
    unsigned share_mask;
} rcase;

static void random_grid(int P, int two_d, int *pr, int *pc)
{
    if (!two_d) { *pr = P; *pc = 1; return; }
    int d[16], nd = 0;
    for (int i = 1; i <= P; i++) if (P % i == 0) d[nd++] = i;
    *pr = d[rnd(nd)];
    *pc = P / *pr;
}

/* A random permutation prefix of 0..np-1 (or NULL for the identity).    */
static const int *random_ranks(int *buf, int n, int mode, int offset)
{
    if (mode == 0) return NULL;
    if (mode == 1) {                    /* a contiguous range from offset */
        for (int i = 0; i < n; i++) buf[i] = offset + i;
        return buf;
    }
    int perm[64];
    for (int i = 0; i < np; i++) perm[i] = i;
    for (int i = np - 1; i > 0; i--) {
        int j = rnd(i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < n; i++) buf[i] = perm[i];
    return buf;
}

static void random_case(rcase *c)
{
    memset(c, 0, sizeof *c);
    int two_d = rnd(2);
    int64_t m = two_d ? 1 + rnd(40) : rnd(8) == 0 ? rnd(3) : 1 + rnd(400);
    int64_t n = two_d ? 1 + rnd(30) : 1;
    int P = 1 + rnd(np), Q = 1 + rnd(np);
    deso_layout *L[2] = { &c->src, &c->dst };
    int *R[2] = { c->src_ranks, c->dst_ranks };
    int disjoint = P + Q <= np && rnd(3) == 0;
    for (int k = 0; k < 2; k++) {
        deso_layout *l = L[k];
        int cnt = k == 0 ? P : Q;
        l->m = m;
        l->n = n;
        random_grid(cnt, two_d, &l->pr, &l->pc);
        int big = rnd(6) == 0;          /* block distribution */
        l->mb = big ? (m + l->pr - 1) / l->pr : 1 + rnd(7);
        l->nb = two_d ? (big ? (n + l->pc - 1) / l->pc : 1 + rnd(5)) : 1;
        if (l->mb < 1) l->mb = 1;
        if (l->nb < 1) l->nb = 1;
        l->replicated = rnd(12) == 0;
        int mode = disjoint ? 1 : rnd(3);
        int offset = disjoint ? (k == 0 ? 0 : P) : rnd(np - cnt + 1);
        l->ranks = random_ranks(R[k], cnt, mode, offset);
    }
    c->sched = (deso_schedule)rnd(3);
    c->pad_src = rnd(3) == 0 ? rnd(4) : 0;
    c->pad_dst = rnd(3) == 0 ? rnd(4) : 0;
}

static void describe(const char *what, const rcase *c)
{
    const deso_layout *L[2] = { &c->src, &c->dst };
    fprintf(stderr, "rank %d: %s: %lldx%lld %s", me, what,
            (long long)c->src.m, (long long)c->src.n,
            deso_schedule_name(c->sched));
    for (int k = 0; k < 2; k++) {
        const deso_layout *l = L[k];
        fprintf(stderr, " %s[%dx%d mb=%lld nb=%lld rep=%d ranks=", k ? "dst"
                : "src", l->pr, l->pc, (long long)l->mb, (long long)l->nb,
                l->replicated);
        for (int i = 0; i < l->pr * l->pc; i++)
            fprintf(stderr, "%d,", l->ranks ? l->ranks[i] : i);
        fprintf(stderr, "]");
    }
    fprintf(stderr, " pads %d %d share %d/%x: %s\n", c->pad_src, c->pad_dst,
            c->share, c->share_mask, deso_last_error());
}

/* Every rank of MPI_COMM_WORLD on one node (where shared memory is the
 * default transport)?                                                      */
static int one_node(void)
{
    MPI_Comm node;
    int n = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n == np;
}

/* Selects the transport of the next deso_redist_create.                  */
static void use_shm(int on) { setenv("DESO_REMAP_SHM", on ? "1" : "0", 1); }

/* The transport a handle reports agrees with the one asked for.          */
static int transport_ok(const deso_redist *r)
{
    const char *t = deso_redist_transport(r), *want = getenv("DESO_REMAP_SHM");
    if (strcmp(t, "none") == 0) return 1;
    if (want != NULL && strcmp(want, "0") == 0)
        return strcmp(t, "mpi") == 0;
    return !one_node() || strcmp(t, "shared memory") == 0;
}

/* Runs one case `reps` times (the later ones replay the plan, through the
 * same rings); 0 when correct.                                            */
static int run_case_n(const rcase *c, int64_t salt, int reps)
{
    deso_redist *r = NULL;
    deso_err e = deso_redist_create(MPI_COMM_WORLD, &c->src, &c->dst,
                                    c->sched, &r);
    if (e != DESO_OK) {
        describe(deso_errname(e), c);
        return 1;
    }
    if (!transport_ok(r)) {
        describe(deso_redist_transport(r), c);
        deso_redist_destroy(&r);
        return 1;
    }
    local s, d;
    local_make_shared(&c->src, c->pad_src, c->share, c->share_mask, &s);
    local_make(&c->dst, c->pad_dst, &d);
    local_fill(&c->src, &s, salt);
    int bad = 0;
    for (int rep = 0; rep < reps && !bad; rep++) {
        for (int64_t i = 0; i < d.len; i++) d.a[i] = SENTINEL;
        e = deso_redist_execute(r, src_ptr(&s), s.lld, dst_ptr(&d), d.lld);
        int64_t wrong = e == DESO_OK ? local_check(&c->dst, &d, salt) : -1;
        int64_t wrong_src = local_check(&c->src, &s, salt);
        if (e != DESO_OK || wrong != 0 || wrong_src != 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s, %lld wrong target, %lld changed "
                     "source (rep %d)", deso_errname(e), (long long)wrong,
                     (long long)wrong_src, rep);
            describe(msg, c);
            bad = 1;
        }
        bad = any_true(bad);         /* stop together: executes are collective */
    }
    deso_redist_destroy(&r);
    local_free(&s);
    local_free(&d);
    return bad;
}

static int run_case(const rcase *c, int64_t salt)
{
    return run_case_n(c, salt, 2);
}

/* ---- tests ------------------------------------------------------------- */

static void test_random_against_brute_force(void **state)
{
    (void)state;
    rng_state = 20240611;
    int cases = np <= 2 ? 300 : 150, bad = 0;
    for (int k = 0; k < cases; k++) {
        rcase c;
        random_case(&c);
        use_shm(k % 2 == 0);
        /* Shared-memory cases: ring only, sources read in place by every
         * receiver, or by the receivers of some senders only.             */
        c.share = k % 2 == 0 && k % 6 != 0;
        c.share_mask = k % 6 == 2 ? ~0u : (unsigned)rnd(1 << np);
        bad += run_case(&c, k + 1);
    }
    unsetenv("DESO_REMAP_SHM");
    assert_all_true(bad == 0);
}

/* Messages of many ring chunks (a chunk is 8192 doubles, a ring 4 of
 * them), so that the rings wrap within one execution and carry on across
 * executions; padded leading dimensions, rank subsets, replicated sides,
 * targets large enough for non-temporal stores.
 * Each case on MPI, on the rings, and with sources in shared arrays read
 * in place, executed three times.                    */
static void test_large_messages(void **state)
{
    (void)state;
    static const int all[6] = { 0, 1, 2, 3, 4, 5 };
    static const int rev[6] = { 5, 4, 3, 2, 1, 0 };
    if (np > 6) return;                     /* the rank tables below      */
    int q = np > 1 ? np - 1 : 1;            /* a subset, when there is one */
    struct { int64_t m, n, mb, nb, mb2, nb2; int pr, pc, pr2, pc2, pad;
             const int *r1, *r2; int rep2; } cs[] = {
        { 200003, 1, 3, 1, 5, 1, np, 1, np, 1, 0, NULL, NULL, 0 },
        { 150001, 1, 64, 1, 1, 1, np, 1, q, 1, 0, NULL, rev + 6 - q, 0 },
        { 120000, 1, (120000 + np - 1) / np, 1, 1, 1, np, 1, np, 1, 0,
          all, rev + 6 - np, 0 },
        { 611, 433, 7, 5, 3, 64, 1, np, np, 1, 3, NULL, NULL, 0 },
        { 509, 401, 64, 64, 1, 1, np, 1, 1, np, 2, NULL, rev + 6 - np, 0 },
        { 300, 257, 5, 3, 1, 1, 1, 1, q, 1, 1, all + np - 1, NULL, 1 },
        /* over 2^20 target elements per rank: written around the cache  */
        { 1100000 * (int64_t)np, 1, 64, 1, 1, 1, np, 1, np, 1, 0, NULL,
          NULL, 0 },
        { 1100000 * (int64_t)np, 1, 7, 1, 64, 1, np, 1, np, 1, 0, NULL,
          rev + 6 - np, 0 },
    };
    int bad = 0;
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
        for (int shm = 0; shm < 3; shm++) {     /* MPI, rings, in place */
            rcase c;
            memset(&c, 0, sizeof c);
            c.src = (deso_layout){ cs[k].m, cs[k].n, cs[k].mb, cs[k].nb,
                                   cs[k].pr, cs[k].pc, cs[k].r1, 0 };
            c.dst = (deso_layout){ cs[k].m, cs[k].n, cs[k].mb2, cs[k].nb2,
                                   cs[k].pr2, cs[k].pc2, cs[k].r2,
                                   cs[k].rep2 };
            c.sched = (deso_schedule)(k % 3);
            c.pad_src = cs[k].pad;
            c.pad_dst = (cs[k].pad + 1) % 3;
            use_shm(shm > 0);
            c.share = shm == 2;
            c.share_mask = ~0u;
            bad += run_case_n(&c, 1000 + (int64_t)k, 3);
        }
    unsetenv("DESO_REMAP_SHM");
    assert_all_true(bad == 0);
}

/* A case from src to dst in schedule sched, nothing else set.           */
static rcase case_of(const deso_layout *src, const deso_layout *dst,
                     deso_schedule sched)
{
    rcase c;
    memset(&c, 0, sizeof c);
    c.src = *src;
    c.dst = *dst;
    c.sched = sched;
    return c;
}

static void test_fixed_cases(void **state)
{
    (void)state;
    int bad = 0;
    int64_t salt = 1000;
    /* cyclic(3) -> cyclic(5) over all ranks, in three schedules          */
    for (int sc = 0; sc < 3; sc++) {
        rcase c;
        memset(&c, 0, sizeof c);
        c.src = (deso_layout){ .m = 1000, .n = 1, .mb = 3, .nb = 1,
                               .pr = np, .pc = 1 };
        c.dst = (deso_layout){ .m = 1000, .n = 1, .mb = 5, .nb = 1,
                               .pr = np, .pc = 1 };
        c.sched = (deso_schedule)sc;
        bad += run_case(&c, salt++);
        c.pad_src = 3;          /* lld > local rows on both sides          */
        c.pad_dst = 2;
        bad += run_case(&c, salt++);
    }
    /* identical layouts (a local copy) and a single-rank set              */
    {
        rcase c;
        memset(&c, 0, sizeof c);
        c.src = (deso_layout){ .m = 37, .n = 11, .mb = 4, .nb = 3,
                               .pr = 1, .pc = np };
        c.dst = c.src;
        bad += run_case(&c, salt++);
        c.dst.pr = 1;
        c.dst.pc = 1;
        c.dst.ranks = (const int[]){ np - 1 };
        bad += run_case(&c, salt++);
    }
    /* grid-shape changes 1xP -> 2x(P/2) -> Px1 (P = np, or 1x1 etc.)    */
    {
        int pr2 = np % 2 == 0 ? 2 : 1;
        deso_layout g[3] = {
            { .m = 50, .n = 46, .mb = 3, .nb = 2, .pr = 1, .pc = np },
            { .m = 50, .n = 46, .mb = 2, .nb = 5, .pr = pr2, .pc = np / pr2 },
            { .m = 50, .n = 46, .mb = 7, .nb = 1, .pr = np, .pc = 1 },
        };
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                rcase c = case_of(&g[a], &g[b], DESO_SCHED_STEPWISE);
                bad += run_case(&c, salt++);
            }
    }
    assert_all_true(bad == 0);
}

/* Matrices whose messages take their columns by progressions (a row
 * program of few pieces repeated over column progressions, merged across
 * column periods): grid changes to and from 1 x P with 1 x 1 blocks, as
 * the benchmark's 2x1 (64 x 64) -> 1x2 (1 x 1), at extents that are not
 * multiples of the column period, with fewer columns than ranks, 1 x 1,
 * column pieces of several columns, padded arrays; on both transports,
 * and from shared arrays (single copy) on shared memory.               */
static void test_column_progressions(void **state)
{
    (void)state;
    int pr = np % 2 == 0 ? 2 : np;
    const deso_layout src[6] = {
        { .m = 37, .n = 67, .mb = 4, .nb = 4, .pr = pr, .pc = np / pr },
        { .m = 5, .n = 2, .mb = 2, .nb = 2, .pr = np, .pc = 1 },
        { .m = 1, .n = 1, .mb = 1, .nb = 1, .pr = np, .pc = 1 },
        { .m = 23, .n = 29, .mb = 3, .nb = 3, .pr = np, .pc = 1 },
        { .m = 130, .n = 41, .mb = 64, .nb = 5, .pr = 1, .pc = np },
        { .m = 19, .n = 53, .mb = 1, .nb = 1, .pr = 1, .pc = np },
    };
    const deso_layout dst[6] = {
        { .m = 37, .n = 67, .mb = 1, .nb = 1, .pr = 1, .pc = np },
        { .m = 5, .n = 2, .mb = 1, .nb = 1, .pr = 1, .pc = np },
        { .m = 1, .n = 1, .mb = 1, .nb = 1, .pr = 1, .pc = np },
        { .m = 23, .n = 29, .mb = 23, .nb = 2, .pr = 1, .pc = np },
        { .m = 130, .n = 41, .mb = 64, .nb = 7, .pr = pr, .pc = np / pr },
        { .m = 19, .n = 53, .mb = 4, .nb = 3, .pr = np, .pc = 1 },
    };
    int bad = 0;
    int64_t salt = 5000;
    for (int way = 0; way < 3; way++) {  /* MPI, rings, single copy   */
        use_shm(way > 0);
        for (int k = 0; k < 6; k++) {
            rcase c = case_of(&src[k], &dst[k], DESO_SCHED_GREEDY);
            c.pad_src = k % 2;
            c.pad_dst = (k + way) % 3;
            c.share = way == 2;
            c.share_mask = ~0u;
            bad += run_case(&c, salt++);
        }
    }
    unsetenv("DESO_REMAP_SHM");
    assert_all_true(bad == 0);
}

static void test_identical_in_place(void **state)
{
    (void)state;
    deso_layout l = { .m = 101, .n = 7, .mb = 4, .nb = 2, .pr = np,
                      .pc = 1 };
    deso_redist *r = NULL;
    deso_err e = deso_redist_create(MPI_COMM_WORLD, &l, &l,
                                    DESO_SCHED_STEPWISE, &r);
    assert_all_true(e == DESO_OK);
    local s;
    local_make(&l, 1, &s);
    local_fill(&l, &s, 77);
    e = deso_redist_execute(r, src_ptr(&s), s.lld, dst_ptr(&s), s.lld);
    assert_all_true(e == DESO_OK && local_check(&l, &s, 77) == 0);
    local_free(&s);
    deso_redist_destroy(&r);
    assert_null(r);
}

/* ---- against ScaLAPACK's pdgemr2d ------------------------------------- */

static int blacs_context(const deso_layout *l)
{
    int ctxt = -1;
    Cblacs_get(-1, 0, &ctxt);
    int map[64];
    for (int i = 0; i < l->pr; i++)
        for (int j = 0; j < l->pc; j++)
            map[i + j * l->pr] = l->ranks ? l->ranks[i * l->pc + j]
                                          : i * l->pc + j;
    Cblacs_gridmap(&ctxt, map, l->pr, l->pr, l->pc);
    if (position(l, me) < 0) return -1;
    return ctxt;
}

/* Grid position i is world rank i (what BLACS's numbering gives).       */
static int row_major_world(const deso_layout *l)
{
    for (int i = 0; l->ranks && i < l->pr * l->pc; i++)
        if (l->ranks[i] != i) return 0;
    return 1;
}

static void test_agrees_with_pdgemr2d(void **state)
{
    (void)state;
    rng_state = 99;
    int all = -1;
    Cblacs_get(-1, 0, &all);
    Cblacs_gridinit(&all, "Row", 1, np);
    int bad = 0;
    for (int k = 0; k < (np <= 2 ? 12 : 8); k++) {
        rcase c;
        do {
            random_case(&c);
        } while (c.src.replicated || c.dst.replicated || c.src.m == 0);
        if (k % 2 == 0) {                  /* make every other one 2-D     */
            c.src.n = c.dst.n = 1 + rnd(25);
            c.src.nb = 1 + rnd(4);
            c.dst.nb = 1 + rnd(4);
        }
        int ca = blacs_context(&c.src), cb = blacs_context(&c.dst);
        local s, d1, d2;
        local_make(&c.src, c.pad_src, &s);
        local_make(&c.dst, c.pad_dst, &d1);
        local_make(&c.dst, c.pad_dst, &d2);
        local_fill(&c.src, &s, k + 5);

        deso_redist *r = NULL;
        deso_err e = deso_redist_create(MPI_COMM_WORLD, &c.src, &c.dst,
                                        c.sched, &r);
        if (e == DESO_OK)
            e = deso_redist_execute(r, src_ptr(&s), s.lld, dst_ptr(&d1),
                                    d1.lld);
        deso_redist_destroy(&r);

        int m = (int)c.src.m, n = (int)c.src.n, one = 1;
        int da[9] = { 1, ca, m, n, (int)c.src.mb, (int)c.src.nb, 0, 0,
                      (int)s.lld };
        int db[9] = { 1, cb, m, n, (int)c.dst.mb, (int)c.dst.nb, 0, 0,
                      (int)d2.lld };
        pdgemr2d_(&m, &n, s.a, &one, &one, da, d2.a, &one, &one, db, &all);

        /* The descriptor read back gives the same layout.                 */
        deso_layout fs;
        deso_err ef = deso_layout_from_scalapack(da, &fs);
        if (ca < 0) {
            if (ef != DESO_EGRID) {
                describe("from_scalapack outside the grid", &c);
                bad++;
            }
        } else if (!row_major_world(&c.src)) {
            /* A Cblacs_gridmap grid: BLACS numbers are not world ranks;
             * a rank that can tell refuses, the others cannot know.      */
            if (ef == DESO_OK) deso_layout_release(&fs);
            else if (ef != DESO_ENOTSUP) bad++;
        } else if (ef != DESO_OK || fs.pr != c.src.pr || fs.pc != c.src.pc ||
                   fs.mb != c.src.mb || fs.nb != c.src.nb || fs.m != m) {
            describe("from_scalapack: wrong layout", &c);
            bad++;
        } else {
            for (int i = 0; i < fs.pr * fs.pc; i++)
                if ((fs.ranks ? fs.ranks[i] : i) !=
                    (c.src.ranks ? c.src.ranks[i] : i)) {
                    describe("from_scalapack: wrong ranks", &c);
                    bad++;
                    break;
                }
            deso_layout_release(&fs);
        }
        if (ca >= 0) {
            da[6] = 1;                           /* rsrc != 0             */
            if (deso_layout_from_scalapack(da, &fs) != DESO_ENOTSUP) bad++;
        }
        if (e != DESO_OK || memcmp(d1.a, d2.a, (size_t)d1.len *
                                   sizeof(double)) != 0) {
            describe("differs from pdgemr2d", &c);
            bad++;
        }
        if (ca >= 0) Cblacs_gridexit(ca);
        if (cb >= 0) Cblacs_gridexit(cb);
        local_free(&s);
        local_free(&d1);
        local_free(&d2);
    }
    /* A "Row" grid over all ranks: the usual way, ranks 0 .. np-1.      */
    int dall[9] = { 1, all, 10, 3 * np, 2, 3, 0, 0, 10 };
    deso_layout fl;
    if (deso_layout_from_scalapack(dall, &fl) != DESO_OK || fl.pr != 1 ||
        fl.pc != np || fl.ranks != NULL || fl.n != 3 * np || fl.nb != 3)
        bad++;
    deso_layout_release(&fl);
    Cblacs_gridexit(all);
    assert_all_true(bad == 0);
}

/* ---- bad input ------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    (void)state;
    deso_layout a = { .m = 20, .n = 1, .mb = 3, .nb = 1, .pr = np, .pc = 1 };
    deso_layout b = a;
    deso_redist *r = (deso_redist *)&a;          /* must be cleared      */
    b.mb = 0;
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, &a, &b,
                                       DESO_SCHED_GREEDY, &r) == DESO_EINVAL
                    && r == NULL && strlen(deso_last_error()) > 0);
    b = a;
    b.mb = -2;
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, &b, &a,
                                       DESO_SCHED_GREEDY, &r) == DESO_EINVAL);
    b = a;
    b.pr = np + 1;
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, &a, &b,
                                       DESO_SCHED_GREEDY, &r) == DESO_EINVAL);
    int outside[64];
    for (int i = 0; i < np; i++) outside[i] = i;
    outside[np - 1] = np;                         /* not in the comm      */
    b = a;
    b.ranks = outside;
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, &a, &b,
                                       DESO_SCHED_GREEDY, &r) == DESO_EINVAL);
    b = a;
    b.m = 21;
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, &a, &b,
                                       DESO_SCHED_GREEDY, &r) == DESO_ESIZE);
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, NULL, &a,
                                       DESO_SCHED_GREEDY, &r) == DESO_ENULL);
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, &a, &a,
                                       (deso_schedule)7, &r) == DESO_EINVAL);
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, &a, &a,
                                       DESO_SCHED_GREEDY, NULL) == DESO_ENULL);
    if (np > 1) {                           /* layouts differ by rank    */
        b = a;
        b.mb = me == 0 ? 2 : 3;
        deso_err e = deso_redist_create(MPI_COMM_WORLD, &a, &b,
                                        DESO_SCHED_GREEDY, &r);
        assert_all_true(e == DESO_EMISMATCH && r == NULL);
        e = deso_redist_create(MPI_COMM_WORLD, &a, &a,
                               me == 0 ? DESO_SCHED_GREEDY
                                       : DESO_SCHED_STEPWISE, &r);
        assert_all_true(e == DESO_EMISMATCH);
    }

    /* Bad arguments on some ranks: every rank fails with the code and
     * message of the lowest failing rank (every rank holds target data;
     * one rank alone has no one to agree with).                          */
    b = a;
    b.mb = 5;
    deso_err e = deso_redist_create(MPI_COMM_WORLD, &a, &b,
                                    DESO_SCHED_GREEDY, &r);
    assert_all_true(e == DESO_OK);
    local s, d;
    local_make(&a, 0, &s);
    local_make(&b, 0, &d);
    local_fill(&a, &s, 3);
    char detail[96];
    /* lld too small on rank 0 only                                        */
    int64_t lld = me == 0 ? d.rows - 1 : d.lld;
    e = deso_redist_execute(r, src_ptr(&s), s.lld, dst_ptr(&d), lld);
    assert_all_true(agreed(e, DESO_EINVAL, 0, np > 1, "dst_lld = ",
                           "local rows of rank 0"));
    /* dst NULL on the last rank holding target data only (with many
     * ranks the last ones hold none)                                      */
    int last = d.rows * d.cols > 0 ? me : -1;
    MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    e = deso_redist_execute(r, src_ptr(&s), s.lld,
                            me == last ? NULL : dst_ptr(&d), d.lld);
    snprintf(detail, sizeof detail, "rank %d holds a", last);
    assert_all_true(agreed(e, DESO_ENULL, last, np > 1, detail,
                           "but dst is NULL"));
    /* rank 1's lld and that rank's dst: rank 1's error everywhere         */
    if (np >= 3) {
        lld = me == 1 ? d.rows - 1 : d.lld;
        e = deso_redist_execute(r, src_ptr(&s), s.lld,
                                me == last ? NULL : dst_ptr(&d), lld);
        assert_all_true(agreed(e, DESO_EINVAL, 1, 1, "dst_lld = ",
                               "local rows of rank 1"));
    }
    assert_all_true(deso_redist_execute(NULL, NULL, 1, NULL, 1)
                    == DESO_ENULL);
    e = deso_redist_execute(r, src_ptr(&s), s.lld, dst_ptr(&d), d.lld);
    assert_all_true(e == DESO_OK && local_check(&b, &d, 3) == 0);
    deso_redist_destroy(&r);
    deso_redist_destroy(&r);                      /* NULL-safe           */
    deso_redist_destroy(NULL);
    local_free(&s);
    local_free(&d);

    deso_slice_plan sp;
    assert_all_true(deso_redist_slice_plan(4, 0, 4, 5, DESO_SCHED_GREEDY,
                                           &sp) == DESO_EINVAL);
    deso_schedule k;
    assert_all_true(deso_schedule_parse("zigzag", &k) != DESO_OK);
}

/* deso_redist_array_alloc / _free: bad arguments fail every rank with a
 * message; a good array is zeroed, writable, and freed.                  */
static void test_shared_array_api(void **state)
{
    (void)state;
    double *p = (double *)&p;                    /* must be cleared      */
    assert_all_true(deso_redist_array_alloc(MPI_COMM_WORLD, -1, &p) ==
                    DESO_EINVAL && p == NULL &&
                    strlen(deso_last_error()) > 0);
    deso_err e = deso_redist_array_alloc(MPI_COMM_WORLD, me == 0 ? -5 : 10,
                                         &p);
    assert_all_true(agreed(e, DESO_EINVAL, 0, 1, "count = -5 is negative",
                           NULL) && p == NULL);
    p = (double *)&p;
    e = deso_redist_array_alloc(MPI_COMM_WORLD, me == np - 1 ? -7 : 10, &p);
    assert_all_true(agreed(e, DESO_EINVAL, np - 1, 1,
                           "count = -7 is negative", NULL) && p == NULL);
    assert_all_true(deso_redist_array_alloc(MPI_COMM_WORLD, 4, NULL) ==
                    DESO_ENULL);
    assert_int_equal(deso_redist_array_alloc(MPI_COMM_NULL, 4, &p),
                     DESO_EINVAL);
    double *a = NULL, *z = NULL;
    assert_all_true(deso_redist_array_alloc(MPI_COMM_WORLD, 1000 + me, &a) ==
                    DESO_OK && a != NULL);
    assert_all_true(deso_redist_array_alloc(MPI_COMM_WORLD, 0, &z) ==
                    DESO_OK && z != NULL && z != a);
    int zero = 1;
    for (int i = 0; i < 1000 + me; i++) zero &= a[i] == 0.0;
    for (int i = 0; i < 1000 + me; i++) a[i] = i;
    assert_all_true(zero && a[999 + me] == 999 + me);
    double x = 0;
    assert_int_equal(deso_redist_array_free(&x), DESO_EINVAL);
    assert_int_equal(deso_redist_array_free(NULL), DESO_OK);
    assert_int_equal(deso_redist_array_free(z), DESO_OK);
    assert_int_equal(deso_redist_array_free(a), DESO_OK);
}

/* Whether rank me's local vector (cyclic(b) over np ranks) of `n`
 * elements holds global index + 1 everywhere, or SENTINEL everywhere.   */
static int vector_is(const double *d, int64_t n, int64_t b, int sentinel)
{
    int ok = 1;
    for (int64_t i = 0; i < n; i++)
        ok &= d[i] == (sentinel ? SENTINEL : (double)(l2g(i, b, me, np) + 1));
    return ok;
}

/* A receiver that cannot map a source it is to read in place (two ranks'
 * shared arrays disagreeing, injected on the last rank) fails every rank
 * with its message before any data moves; the next execution moves
 * everything.                                                           */
static void test_shared_map_fails(void **state)
{
    (void)state;
    if (np < 2 || !one_node()) return;   /* no receiver reads in place   */
    use_shm(1);
    const int64_t n = 1001;
    deso_layout src = { n, 1, 3, 1, np, 1, NULL, 0 };
    deso_layout dst = { n, 1, 5, 1, np, 1, NULL, 0 };
    deso_redist *r = NULL;
    assert_all_true(deso_redist_create(MPI_COMM_WORLD, &src, &dst,
                                       DESO_SCHED_STEPWISE, &r) == DESO_OK &&
                    strcmp(deso_redist_transport(r), "shared memory") == 0);
    int64_t sr, dr;
    assert_int_equal(deso_redist_local_shape(r, &sr, NULL, &dr, NULL),
                     DESO_OK);
    double *a = NULL, *d = malloc((size_t)dr * sizeof *d);
    assert_all_true(deso_redist_array_alloc(MPI_COMM_WORLD, sr, &a) ==
                    DESO_OK && d != NULL);
    for (int64_t i = 0; i < sr; i++) a[i] = (double)(l2g(i, 3, me, np) + 1);
    int ok = 1;
    for (int k = 0; k < 3; k++) {        /* k = 1: the failing one       */
        for (int64_t i = 0; i < dr; i++) d[i] = SENTINEL;
        if (k == 1 && me == np - 1) deso__shared_map_fail(1);
        deso_err e = deso_redist_execute(r, a, sr, d, dr);
        if (k == 1)
            ok &= agreed(e, DESO_EINTERNAL, np - 1, 1, "cannot map the "
                         "shared source", NULL) && vector_is(d, dr, 5, 1);
        else
            ok &= e == DESO_OK && vector_is(d, dr, 5, 0);
    }
    deso__shared_map_fail(0);
    assert_all_true(ok);
    deso_redist_destroy(&r);
    free(d);
    assert_int_equal(deso_redist_array_free(a), DESO_OK);
    unsetenv("DESO_REMAP_SHM");
}

/* Slice plans of paper 001's examples 1 and 4 (doc/DESIGN.md, "Worked
 * examples (paper 001)").                                                 */
static void test_slice_plan(void **state)
{
    (void)state;
    deso_slice_plan sp;
    assert_int_equal(deso_redist_slice_plan(16, 3, 16, 5, DESO_SCHED_STEPWISE,
                                            &sp), DESO_OK);
    assert_int_equal(sp.total_cost, 15);
    assert_int_equal(sp.slice, 240);
    int64_t sum = 0;
    for (int i = 0; i < 16 * 16; i++) sum += sp.grid[i];
    assert_int_equal(sum, 240);
    deso_slice_plan_free(&sp);
    assert_int_equal(deso_redist_slice_plan(12, 4, 8, 3, DESO_SCHED_STEPWISE,
                                            &sp), DESO_OK);
    assert_int_equal(sp.total_cost, 8);
    assert_int_equal(sp.steps, 4);
    deso_slice_plan_free(&sp);
    assert_int_equal(deso_redist_slice_plan(12, 4, 8, 3,
                                            DESO_SCHED_CATERPILLAR, &sp),
                     DESO_OK);
    assert_int_equal(sp.total_cost, 18);
    deso_slice_plan_free(&sp);
    deso_slice_plan_free(NULL);
}

/* Moves a cyclic(3) vector to cyclic(5) and back through r1, r2 (either
 * NULL: skipped), checking the result; the number of wrong elements.    */
static int64_t there_and_back(deso_redist *r1, deso_redist *r2,
                              const deso_layout *a, const deso_layout *b,
                              int64_t salt)
{
    local x, y;
    local_make(a, 0, &x);
    local_make(b, 1, &y);
    local_fill(a, &x, salt);
    int64_t bad = 0;
    if (r1 != NULL) {
        bad += deso_redist_execute(r1, src_ptr(&x), x.lld, dst_ptr(&y),
                                   y.lld) != DESO_OK;
        bad += local_check(b, &y, salt);
    }
    if (r2 != NULL) {
        local_fill(b, &y, salt + 1);
        for (int64_t i = 0; i < x.lld * x.cols; i++) x.a[i] = SENTINEL;
        bad += deso_redist_execute(r2, src_ptr(&y), y.lld, dst_ptr(&x),
                                   x.lld) != DESO_OK;
        bad += local_check(a, &x, salt + 1);
    }
    local_free(&x);
    local_free(&y);
    return bad;
}

/* The duplicate communicator and the shared-memory rings are made by the
 * first remap on a communicator and reused by the next ones (one cache,
 * on both transports); freeing the communicator while a remap still uses
 * the cache leaves that remap working, and the cache goes with the last
 * of them; a communicator freed after its remaps takes its cache along. */
static void test_setup_cached(void **state)
{
    (void)state;
    deso_layout a = { .m = 1001, .n = 1, .mb = 3, .nb = 1, .pr = np, .pc = 1 };
    deso_layout b = a;
    b.mb = 5;
    int base = deso__comm_cache_count();
    int64_t bad = 0;
    for (int shm = 0; shm < 2; shm++) {
        use_shm(shm);
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        deso_redist *r1 = NULL, *r2 = NULL, *r3 = NULL;
        assert_all_true(deso_redist_create(c, &a, &b, DESO_SCHED_GREEDY,
                                           &r1) == DESO_OK);
        assert_all_true(deso__comm_cache_count() == base + 1);
        assert_all_true(deso_redist_create(c, &b, &a, DESO_SCHED_STEPWISE,
                                           &r2) == DESO_OK);
        assert_all_true(deso__comm_cache_count() == base + 1);
        assert_all_true(transport_ok(r1) && transport_ok(r2));
        bad += there_and_back(r1, r2, &a, &b, 10 + shm);
        /* a ring given back is taken again by the next remap             */
        deso_redist_destroy(&r1);
        assert_all_true(deso_redist_create(c, &a, &b, DESO_SCHED_GREEDY,
                                           &r3) == DESO_OK);
        bad += there_and_back(r3, r2, &a, &b, 20 + shm);
        deso_redist_destroy(&r3);
        MPI_Comm_free(&c);              /* r2 still holds the cache       */
        assert_all_true(deso__comm_cache_count() == base + 1);
        bad += there_and_back(NULL, r2, &a, &b, 30 + shm);
        deso_redist_destroy(&r2);
        assert_all_true(deso__comm_cache_count() == base);
        /* remaps destroyed first: the communicator frees its cache      */
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        assert_all_true(deso_redist_create(c, &a, &b, DESO_SCHED_GREEDY,
                                           &r1) == DESO_OK);
        bad += there_and_back(r1, NULL, &a, &b, 40 + shm);
        deso_redist_destroy(&r1);
        assert_all_true(deso__comm_cache_count() == base + 1);
        MPI_Comm_free(&c);
        assert_all_true(deso__comm_cache_count() == base);
    }
    unsetenv("DESO_REMAP_SHM");
    assert_all_true(bad == 0);
}

/* Whether comm's cache keeps a receive buffer, taken once only (a taken
 * buffer leaves the cache); put back as it was.                        */
static int recv_buffer_kept_once(MPI_Comm comm)
{
    deso__comm_cache *cc = NULL;
    if (deso__comm_cache_get(comm, &cc) != DESO_OK) return 0;
    int64_t len = 0, len2 = 0;
    double *b = deso__buf_take(cc, DESO__BUF_RECV, 1, &len);
    int once = b != NULL && deso__buf_take(cc, DESO__BUF_RECV, 1, &len2) ==
                            NULL;
    deso__buf_keep(cc, DESO__BUF_RECV, b, len);
    deso__comm_cache_release(cc);
    return once;
}

/* On MPI, a destroyed remap's buffers stay on the communicator's cache
 * for the next remap, which takes them only when large enough (the
 * destroyed one here is smaller) and alone: two remaps alive at once
 * after it each compute right, again and again.                        */
static void test_buffers_kept(void **state)
{
    (void)state;
    use_shm(0);
    deso_layout s = { .m = 999, .n = 1, .mb = 3, .nb = 1, .pr = np, .pc = 1 };
    deso_layout t = s;
    t.mb = 5;
    deso_layout a = s, b = t;
    a.m = b.m = 30011 * (int64_t)np;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    deso_redist *r0 = NULL, *r1 = NULL, *r2 = NULL;
    int64_t bad = 0;
    assert_all_true(deso_redist_create(c, &s, &t, DESO_SCHED_GREEDY,
                                       &r0) == DESO_OK);
    bad += there_and_back(r0, NULL, &s, &t, 50);
    deso_redist_destroy(&r0);
    /* (at P = 1 no rank receives a message: nothing to keep)            */
    assert_all_true(np == 1 || recv_buffer_kept_once(c));
    for (int k = 0; k < 2; k++) {        /* the second time: r1's kept   */
        assert_all_true(deso_redist_create(c, &a, &b, DESO_SCHED_GREEDY,
                                           &r1) == DESO_OK);
        assert_all_true(deso_redist_create(c, &b, &a, DESO_SCHED_STEPWISE,
                                           &r2) == DESO_OK);
        for (int rep = 0; rep < 2; rep++)
            bad += there_and_back(r1, r2, &a, &b, 60 + 2 * k + rep);
        deso_redist_destroy(&r1);
        deso_redist_destroy(&r2);
    }
    MPI_Comm_free(&c);
    unsetenv("DESO_REMAP_SHM");
    assert_all_true(bad == 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np > 1) setenv("CMOCKA_TEST_ABORT", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_plan),
        cmocka_unit_test(test_fixed_cases),
        cmocka_unit_test(test_column_progressions),
        cmocka_unit_test(test_identical_in_place),
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_large_messages),
        cmocka_unit_test(test_agrees_with_pdgemr2d),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_shared_array_api),
        cmocka_unit_test(test_shared_map_fails),
        cmocka_unit_test(test_setup_cached),
        cmocka_unit_test(test_buffers_kept),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
