/* deso's own statistics against an independent count: the PMPI interposer
 * (pmpi_count.h) sees every MPI call the process makes, and this test
 * applies doc/DESIGN.md's counting convention to what it saw.  Point-to-
 * point: every send is one message of its payload.  Collectives: one
 * message per communicator, counted by its rank 0, of m x (ranks - 1)
 * bytes, twice that for all-reduce and all-gather.  Sums over the ranks
 * must equal deso_stats' sums exactly, over a window of CG iterations
 * (new plans and replays), in every optimiser mode and on every grid, over
 * executions of a remap, and over forces that remap a matrix for dtrsv.
 * Remap messages on the shared-memory transport make no MPI call; deso
 * reports them apart (msgs_shm, bytes_shm) and they are subtracted here.
 * Run with the interposer preloaded (make check-counts).
 * deso-np: 2 3 4
 * deso-np-long: 6                                                         */
#include "tests/deso/test_util.h"
#include "tests/pmpi/pmpi_count.h"

#define N 61
#define ITERS 6

static pc_api api;

static int tu_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

typedef struct counts {
    long long msgs_p2p, bytes_p2p, msgs_coll, bytes_coll;
} counts;

static double a_fn(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return i == j ? 4.0 : 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
}

static double b_fn(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 + 0.01 * (double)(i % 5);
}

/* What the interposer saw, under deso's convention; -1 fields when a
 * collective of a kind deso never counts was made in the window.         */
static counts observed(int *foreign)
{
    counts c = {0};
    pc_p2p p;
    api.p2p(&p);
    c.msgs_p2p = p.sends;
    c.bytes_p2p = p.send_bytes;
    *foreign = p.persistent > 0;
    const pc_coll *log;
    size_t n = api.colls(&log);
    if (n == (size_t)-1) {
        *foreign = 1;
        return c;
    }
    for (size_t i = 0; i < n; i++) {
        const pc_coll *r = &log[i];
        int twice = r->kind == PC_ALLREDUCE || r->kind == PC_ALLGATHER;
        int counted = twice || r->kind == PC_BCAST || r->kind == PC_REDUCE ||
                      r->kind == PC_GATHER || r->kind == PC_SCATTER;
        if (!counted) {
            print_error("uncounted collective %d on %d ranks in the window\n",
                        r->kind, r->size);
            *foreign = 1;
            continue;
        }
        if (r->rank != 0) continue;
        c.msgs_coll += 1;
        c.bytes_coll += (twice ? 2 : 1) * r->bytes * (r->size - 1);
    }
    return c;
}

static counts reported(void)
{
    deso_stats s;
    counts c = {0};
    if (deso_stats_get(&s) != DESO_OK) return (counts){-1, -1, -1, -1};
    c.msgs_p2p = s.msgs_p2p - s.msgs_shm;
    c.bytes_p2p = s.bytes_p2p - s.bytes_shm;
    c.msgs_coll = s.msgs_collective;
    c.bytes_coll = s.bytes_collective;
    return c;
}

static void sum(counts *c)
{
    MPI_Allreduce(MPI_IN_PLACE, c, 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
}

/* Inside the window calls are checked without TU_OK, whose agreement is
 * an all-reduce the interposer would count; the verdict is agreed after.  */
static int window_failed;
#define WOK(call)                                                            \
    do {                                                                     \
        deso_err e_ = (call);                                                \
        if (e_ != DESO_OK) {                                                 \
            print_error("%s -> %s: %s\n", #call, deso_errname(e_),          \
                        deso_last_error());                                  \
            window_failed = 1;                                               \
        }                                                                    \
    } while (0)

/* CG's iterations as a solver writes them; the residual is read every
 * iteration (a force point), so the window holds ITERS forces.             */
static void cg(deso_ctx *ctx, deso_mat *A, deso_vec *x, deso_vec *r,
               deso_vec *p, deso_vec *q, deso_scalar *s[5])
{
    deso_scalar *rr = s[0], *rrnew = s[1], *pq = s[2], *alpha = s[3],
                *beta = s[4];
    (void)ctx;
    for (int k = 0; k < ITERS; k++) {
        WOK(tu_cg_record(N, A, x, r, p, q, rr, rrnew, pq, alpha, beta));
        double v;
        WOK(deso_scalar_get(rr, &v));
    }
}

static void run(deso_mode mode, int pr, int pc, int64_t nb, int shm)
{
    setenv("DESO_REMAP_SHM", shm ? "1" : "0", 1);
    deso_ctx *ctx = tu_ctx_mode(mode, pr, pc, nb);
    deso_mat *A;
    deso_vec *b, *x, *r, *p, *q;
    deso_scalar *s[5];
    TU_OK(deso_mat_from_fn(ctx, N, N, a_fn, NULL, &A));
    TU_OK(deso_vec_from_fn(ctx, N, b_fn, NULL, &b));
    TU_OK(deso_vec_create(ctx, N, &x));
    TU_OK(deso_vec_create(ctx, N, &r));
    TU_OK(deso_vec_create(ctx, N, &p));
    TU_OK(deso_vec_create(ctx, N, &q));
    for (int i = 0; i < 5; i++) TU_OK(deso_scalar_create(ctx, 0.0, &s[i]));
    TU_OK(deso_dcopy(N, b, 1, r, 1));
    TU_OK(deso_dcopy(N, r, 1, p, 1));
    TU_OK(deso_ddot(N, r, 1, r, 1, s[0]));
    TU_OK(deso_flush(ctx));

    /* the window: the first iterations optimise plans, the rest replay     */
    deso_stats_reset();
    api.reset();
    window_failed = 0;
    cg(ctx, A, x, r, p, q, s);
    WOK(deso_flush(ctx));
    int foreign = 0;
    counts seen = observed(&foreign);
    counts said = reported();
    assert_true(tu_all(!window_failed));
    assert_true(tu_all(!foreign));
    sum(&seen);
    sum(&said);
    if (getenv("PC_VERBOSE") && tu_rank() == 0)
        printf("%s %dx%d nb %lld shm %d: p2p %lld msgs %lld B, coll %lld msgs "
               "%lld B\n", deso_mode_name(mode), pr, pc, (long long)nb, shm,
               seen.msgs_p2p, seen.bytes_p2p, seen.msgs_coll, seen.bytes_coll);
    if (memcmp(&seen, &said, sizeof seen) != 0)
        print_error("%s %dx%d nb %lld shm %d: MPI saw p2p %lld msgs %lld B, coll %lld "
                    "msgs %lld B; deso says p2p %lld msgs %lld B, coll %lld "
                    "msgs %lld B\n", deso_mode_name(mode), pr, pc,
                    (long long)nb, shm, seen.msgs_p2p, seen.bytes_p2p,
                    seen.msgs_coll, seen.bytes_coll, said.msgs_p2p,
                    said.bytes_p2p, said.msgs_coll, said.bytes_coll);
    assert_true(memcmp(&seen, &said, sizeof seen) == 0);
    /* an empty window would make the comparison vacuous                    */
    assert_true(seen.msgs_coll > 0);
    TU_OK(deso_finalize(&ctx));
}

static void test_cg_counts(void **state)
{
    (void)state;
    static const deso_mode modes[] = {DESO_MODE_NONE, DESO_MODE_AFFINE,
                                      DESO_MODE_FULL};
    int grids[4][2];
    int ng = tu_grids(grids);
    for (int shm = 0; shm < 2; shm++)
        for (int m = 0; m < 3; m++) {
            for (int g = 0; g < ng; g++)
                run(modes[m], grids[g][0], grids[g][1], 8, shm);
            run(modes[m], 0, 0, DESO_NB_BLOCK, shm);
        }
}

/* What MPI saw since api.reset() against deso's statistics, summed over
 * the ranks (*seen; what names the case in the message); returns whether
 * the shared-memory transport carried messages on some rank, which must
 * be when shm asked for it (every rank of these tests is on one node).
 * Collective.                                                           */
static int counts_agree(const char *what, int shm, counts *seen)
{
    int foreign = 0;
    *seen = observed(&foreign);
    counts said = reported();
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    assert_true(tu_all(!window_failed && !foreign));
    int on_shm = st.msgs_shm > 0;
    MPI_Allreduce(MPI_IN_PLACE, &on_shm, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    sum(seen);
    sum(&said);
    if (memcmp(seen, &said, sizeof said) != 0)
        print_error("%s shm %d: MPI saw p2p %lld msgs %lld B, coll %lld "
                    "msgs %lld B; deso says p2p %lld msgs %lld B, coll %lld "
                    "msgs %lld B\n", what, shm, seen->msgs_p2p,
                    seen->bytes_p2p, seen->msgs_coll, seen->bytes_coll,
                    said.msgs_p2p, said.bytes_p2p, said.msgs_coll,
                    said.bytes_coll);
    assert_true(memcmp(seen, &said, sizeof said) == 0);
    assert_true(on_shm == (shm && tu_one_node()));
    return on_shm;
}

/* A remap executed in the window, on either transport: on shared memory
 * its messages must be reported as such (no MPI call carries them), on
 * MPI each is one send.  With `shared` sources (deso_redist_array_alloc)
 * and seven executions, the agreements that compile the single-copy
 * programs and that settle single copy against the rings are in it.    */
static void run_remap(int shm, int shared)
{
    setenv("DESO_REMAP_SHM", shm ? "1" : "0", 1);
    int P = tu_size();
    deso_layout src = {.m = 50, .n = 7, .mb = 3, .nb = 2, .pr = 1, .pc = P};
    deso_layout dst = {.m = 50, .n = 7, .mb = 5, .nb = 1, .pr = P, .pc = 1};
    deso_redist *r = NULL;
    TU_OK(deso_redist_create(MPI_COMM_WORLD, &src, &dst, DESO_SCHED_GREEDY, &r));
    int64_t sm, sn, dm, dn;
    TU_OK(deso_redist_local_shape(r, &sm, &sn, &dm, &dn));
    double *a = NULL;
    if (shared) TU_OK(deso_redist_array_alloc(MPI_COMM_WORLD, sm * sn + 1, &a));
    else a = calloc((size_t)(sm * sn + 1), sizeof *a);
    double *b = calloc((size_t)(dm * dn + 1), sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    deso_stats_reset();
    api.reset();
    window_failed = 0;
    for (int k = 0; k < (shared ? 7 : 3); k++)
        WOK(deso_redist_execute(r, a, sm > 0 ? sm : 1, b, dm > 0 ? dm : 1));
    /* both transports were exercised: the MPI one sends, the shared-memory
     * one makes no send at all                                             */
    counts seen;
    int on_shm = counts_agree("remap", shm, &seen);
    assert_true(on_shm ? seen.msgs_p2p == 0 : seen.msgs_p2p > 0);
    if (shared) TU_OK(deso_redist_array_free(a));
    else free(a);
    free(b);
    deso_redist_destroy(&r);
    unsetenv("DESO_REMAP_SHM");
}

static void test_remap_counts(void **state)
{
    (void)state;
    run_remap(0, 0);
    run_remap(1, 0);
    run_remap(1, 1);
}

/* Forces whose dtrsv remaps its matrix (block folding: blocks of more
 * than 64 rows at every P here) and whose dger makes the next force
 * remap it again: the runtime's remaps, on the rings (no MPI call) or on
 * MPI messages (DESO_REMAP_SHM=0).  The first two forces, outside the
 * window, make the rings (at the context's second matrix remap): that
 * set-up is not counted.                                                 */
static void trsv_force(deso_ctx *ctx, deso_mat *A, deso_vec *x, int64_t n)
{
    WOK(deso_dtrsv(DESO_COL_MAJOR, DESO_LOWER, DESO_NO_TRANS, DESO_NON_UNIT,
                   n, A, n, x, 1));
    WOK(deso_dger(DESO_COL_MAJOR, n, n, 1e-3, x, 1, x, 1, A, n));
    WOK(deso_flush(ctx));
}

static void run_trsv(int shm)
{
    if (!shm) setenv("DESO_REMAP_SHM", "0", 1);
    deso_ctx *ctx = tu_ctx(0, 0, DESO_NB_BLOCK);
    unsetenv("DESO_REMAP_SHM");
    const int64_t n = 300;
    deso_mat *A;
    deso_vec *x;
    TU_OK(deso_mat_from_fn(ctx, n, n, a_fn, NULL, &A));
    TU_OK(deso_vec_from_fn(ctx, n, b_fn, NULL, &x));
    window_failed = 0;
    for (int k = 0; k < 2; k++) trsv_force(ctx, A, x, n);
    assert_true(tu_all(!window_failed));
    deso_stats_reset();
    api.reset();
    for (int k = 0; k < 3; k++) trsv_force(ctx, A, x, n);
    counts seen;
    (void)counts_agree("trsv", shm, &seen);
    TU_OK(deso_finalize(&ctx));
}

static void test_runtime_remap_counts(void **state)
{
    (void)state;
    run_trsv(0);
    run_trsv(1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (pc_lookup(&api) != 0) {
        fprintf(stderr, "test_counts: the PMPI interposer is not loaded "
                        "(LD_PRELOAD=libpmpi_count.so)\n");
        MPI_Finalize();
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cg_counts), cmocka_unit_test(test_remap_counts),
        cmocka_unit_test(test_runtime_remap_counts)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
