/* Allocation failure on one rank only: deso__alloc_fail_after(n) armed on
 * a single rank (the last one, and rank 0 at P = 2) makes that rank's n-th
 * allocation fail, for n = 0, 1, 2, ... until the call runs through
 * without reaching it.  Every rank must return the same code (the failing
 * rank's DESO_ENOMEM, with a message naming it), nobody may hang (the
 * runner's timeout), and the context must stay usable (a later force
 * computes the right value).  Walked through:
 *   - a CG iteration's force, in every optimiser mode: the optimising
 *     force of a new DAG, and the force that replays its plan (which, in
 *     modes none and full, must allocate nothing at all, except under
 *     AddressSanitizer, where nothing is recycled);
 *   - a triangular solve's force that remaps its matrix, on the
 *     shared-memory rings and on MPI messages (the remap's plan, made in
 *     the preparation, takes the rings there);
 *   - the reads that move data after their force: deso_vec_gather (to one
 *     root and to every rank) and deso_mat_gather (their forces are the
 *     force walks' business: here nothing is pending), and
 *     deso_wisdom_import;
 *   - deso_redist_create (a remap whose ranks all send);
 *   - deso_redist_execute on the shared-memory transport from a
 *     deso_redist_array_alloc source, whose first execution compiles the
 *     single-copy programs (a vector and a three-column matrix): on
 *     failure the target must be untouched on every rank, and the next
 *     execution must move everything;
 *   - deso_init;
 *   - user operators: deso_op_create (agreed: the same code on every
 *     rank, and no rank has the operator), deso_op_apply (recorded, so
 *     not agreed: the victim alone fails, and the next force fails with
 *     DESO_EMISMATCH on every rank), and the force that runs an apply.
 * The number of failures injected per walk is printed.
 * deso-np: 2
 * deso-np-long: 1 3                                                       */
#include <stdlib.h>

#include "placement/alloc.h"
#include "test_util.h"

#define N 11
#define NT 195

/* Under AddressSanitizer nothing is recycled (deso/runtime/recycle.c), so
 * there a replayed force allocates its views like any other.            */
#ifdef __SANITIZE_ADDRESS__
#define RECYCLED 0
#else
#define RECYCLED 1
#endif

static int me, np;

static double fa(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return 1.0 / (double)(1 + (i > j ? i - j : j - i)) + (i == j ? 4 : 0);
}

static double fx(int64_t i, void *arg)
{
    (void)arg;
    return (double)(i % 5) - 1.5;
}

/* Arms the failure on `victim` only; returns whether it was injected.    */
static void arm(int victim, int n)
{
    deso__alloc_fail_after(me == victim ? n : -1);
}

static int disarm(long before)
{
    deso__alloc_fail_after(-1);
    return deso__alloc_injected() != before;
}

/* The same code on every rank; DESO_ENOMEM naming the victim when it was
 * injected anywhere, else DESO_OK; with `optional`, an injected failure
 * may also have been survived (DESO_OK everywhere): the shared-memory
 * remap transport falls back to MPI messages on every rank.  `good`: the
 * caller's own local checks.  One all-reduce; *any: injected anywhere. */
static int agreed(deso_err e, int injected, int victim, int optional,
                  int good, int *any)
{
    int v[4] = {(int)e, -(int)e, injected, !good};
    MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    *any = v[2];
    char want[24];
    snprintf(want, sizeof want, "rank %d: ", victim);
    int ok = v[0] == -v[1] && !v[3] &&
             (v[2] ? (e == DESO_ENOMEM &&
                      (np == 1 || strstr(deso_last_error(), want))) ||
                         (optional && e == DESO_OK)
                   : e == DESO_OK);
    if (!ok)
        print_error("rank %d: %s (%s), injected %d/%d at allocation %ld\n",
                    me, deso_errname(e), deso_last_error(), injected, v[2],
                    deso__alloc_injected());
    return tu_all(ok);
}

/* A local check, reported with the next agreement.                       */
#define OK_LOCAL(call)                                                       \
    do {                                                                     \
        if ((call) != DESO_OK) *good = 0;                                    \
    } while (0)

/* One CG iteration's calls on fresh vectors: q = A p, alpha = rr / p.q,
 * x += alpha p, r -= alpha q, rr' = r.r, beta = rr' / rr, p = r + beta p.
 * Its force runs with the n-th allocation failing on `victim` (n < 0:
 * none); *injected says whether it did.  Returns the force's code.     */
static deso_err cg_iteration(deso_ctx *ctx, deso_mat *A, int victim, int n,
                             int *injected, double *rr_out, int *good)
{
    deso_vec *x = NULL, *r = NULL, *p = NULL, *q = NULL;
    deso_scalar *rr = NULL, *pq = NULL, *al = NULL, *rn = NULL, *be = NULL;
    OK_LOCAL(deso_vec_create(ctx, N, &x));
    OK_LOCAL(deso_vec_from_fn(ctx, N, fx, NULL, &r));
    OK_LOCAL(deso_vec_from_fn(ctx, N, fx, NULL, &p));
    OK_LOCAL(deso_vec_create(ctx, N, &q));
    OK_LOCAL(deso_scalar_create(ctx, 0.0, &rr));
    OK_LOCAL(deso_scalar_create(ctx, 0.0, &pq));
    OK_LOCAL(deso_scalar_create(ctx, 0.0, &al));
    OK_LOCAL(deso_scalar_create(ctx, 0.0, &rn));
    OK_LOCAL(deso_scalar_create(ctx, 0.0, &be));
    OK_LOCAL(deso_ddot(N, r, 1, r, 1, rr));
    OK_LOCAL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, N, N, 1.0, A, N, p,
                        1, 0.0, q, 1));
    OK_LOCAL(deso_ddot(N, p, 1, q, 1, pq));
    OK_LOCAL(deso_sdiv(al, rr, pq));
    OK_LOCAL(deso_daxpy(N, al, p, 1, x, 1));
    OK_LOCAL(deso_sneg(al, al));
    OK_LOCAL(deso_daxpy(N, al, q, 1, r, 1));
    OK_LOCAL(deso_ddot(N, r, 1, r, 1, rn));
    OK_LOCAL(deso_sdiv(be, rn, rr));
    OK_LOCAL(deso_daxpby(N, 1.0, r, 1, be, p, 1));
    long before = deso__alloc_injected();
    if (n >= 0) arm(victim, n);
    deso_err e = deso_scalar_get(rn, rr_out);
    *injected = disarm(before);
    deso_vec *v[4] = {x, r, p, q};
    deso_scalar *s[5] = {rr, pq, al, rn, be};
    for (int k = 0; k < 4; k++) OK_LOCAL(deso_vec_destroy(&v[k]));
    for (int k = 0; k < 5; k++) OK_LOCAL(deso_scalar_destroy(&s[k]));
    return e;
}

/* A triangular solve's force: x = T^-1 v with T made for it, of NT rows
 * (block folding: blocks of more than 64 rows up to P = 3), so that each
 * force remaps a new matrix for dtrsv and a failure may hit its remap's
 * plan (on shared memory, its rings).                                   */
static deso_err trsv_iteration(deso_ctx *ctx, deso_mat *A, int victim, int n,
                               int *injected, double *x0, int *good)
{
    (void)A;
    deso_mat *T = NULL;
    deso_vec *x = NULL;
    OK_LOCAL(deso_mat_from_fn(ctx, NT, NT, fa, NULL, &T));
    OK_LOCAL(deso_vec_from_fn(ctx, NT, fx, NULL, &x));
    OK_LOCAL(deso_dtrsv(DESO_COL_MAJOR, DESO_LOWER, DESO_NO_TRANS,
                        DESO_NON_UNIT, NT, T, NT, x, 1));
    long before = deso__alloc_injected();
    if (n >= 0) arm(victim, n);
    deso_err e = deso_vec_get(x, NT - 1, x0);
    *injected = disarm(before);
    OK_LOCAL(deso_vec_destroy(&x));
    OK_LOCAL(deso_mat_destroy(&T));
    return e;
}

typedef deso_err (*iteration_fn)(deso_ctx *ctx, deso_mat *A, int victim,
                                 int n, int *injected, double *out,
                                 int *good);

/* A context in `mode` with block size nb on the default grid.           */
static deso_ctx *nb_context(deso_mode mode, int64_t nb)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = mode;
    o.nb = nb;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    return ctx;
}

static deso_ctx *nb2_context(deso_mode mode) { return nb_context(mode, 2); }

/* A context in `mode` with the CG matrix A, nothing forced yet; block
 * folding for the triangular solve's walk (its matrix is remapped).     */
static deso_ctx *cg_context(deso_mode mode, deso_mat **A, iteration_fn it)
{
    deso_ctx *ctx = it == trsv_iteration ? nb_context(mode, DESO_NB_BLOCK)
                                         : nb2_context(mode);
    TU_OK(deso_mat_from_fn(ctx, N, N, fa, NULL, A));
    return ctx;
}

/* Walks one-rank failures through an iteration's force (a CG one, or a
 * triangular solve's); `replay`: a
 * first iteration (not injected) makes the plan the injected one replays;
 * else the result to check comes from another context, and the walked one
 * has never forced this DAG, so its first injected force plans anew.
 * Returns the failures injected.                                          */
static int walk_force(deso_mode mode, int victim, int replay,
                      iteration_fn it)
{
    deso_mat *A;
    double want = 0.0, got = 0.0;
    int injected, good = 1, any;
    deso_ctx *ctx = cg_context(mode, &A, it);
    deso_err e = it(ctx, A, victim, -1, &injected, &want, &good);
    assert_true(agreed(e, 0, victim, 0, good, &any));
    if (!replay) {
        TU_OK(deso_finalize(&ctx));
        ctx = cg_context(mode, &A, it);
    }
    /* a replayed plan is improved at its next forces until a search finds
     * nothing better (each search allocates): three more forces settle it */
    for (int k = 0; replay && k < 3; k++) {
        e = it(ctx, A, victim, -1, &injected, &got, &good);
        assert_true(agreed(e, 0, victim, 0, good, &any));
    }
    int failures = 0, done = 0;
    for (int n = 0; n < 100000 && !done; n++) {
        if (replay) {
            e = it(ctx, A, victim, -1, &injected, &got, &good);
            good &= e == DESO_OK;
        }
        got = -1.0;
        e = it(ctx, A, victim, n, &injected, &got, &good);
        assert_true(agreed(e, injected, victim, 0, good, &any));
        done = !any;
        failures += !done;
        good = !done || tu_srel(got, want) < 1e-12;
    }
    e = it(ctx, A, victim, -1, &injected, &got, &good);  /* usable */
    good &= tu_srel(got, want) < 1e-12;
    assert_true(agreed(e, 0, victim, 0, good, &any) && done);
    TU_OK(deso_finalize(&ctx));
    return failures;
}

/* The victims of a force walk: the last rank and rank 0 at P = 2; the
 * last rank only above (three ranks on this two-core machine make every
 * collective slow, and a walk runs thousands of forces).                */
static int nvictims(void) { return np == 2 ? 2 : 1; }

static void test_force(void **state)
{
    (void)state;
    const deso_mode modes[3] = {DESO_MODE_NONE, DESO_MODE_AFFINE,
                                DESO_MODE_FULL};
    for (int m = 0; m < 3; m++)
        for (int replay = 0; replay < 2; replay++)
            for (int k = 0; k < nvictims(); k++) {
                int victim = k == 0 ? np - 1 : 0;
                int f = walk_force(modes[m], victim, replay, cg_iteration);
                if (me == 0)
                    print_message("force (%s, %s), failing on rank %d: %d "
                                  "failures injected\n",
                                  deso_mode_name(modes[m]),
                                  replay ? "replayed plan" : "new plan",
                                  victim, f);
                /* a new plan allocates; a replayed settled plan allocates
                 * nothing (compiled plan and its script, recycled views,
                 * kept arrays)                                          */
                if (!replay || !RECYCLED)
                    assert_true(tu_all(f > 0));
                else
                    assert_true(tu_all(f == 0));
            }
}

/* The triangular solve's force, whose matrix is remapped: on the
 * shared-memory rings (taken by the remap's plan in the preparation, so
 * that a failure there is agreed by the force) and on MPI messages.     */
static void test_force_trsv(void **state)
{
    (void)state;
    for (int shm = 1; shm >= 0; shm--)
        for (int replay = 0; replay < 2; replay++)
            for (int k = 0; k < nvictims(); k++) {
                setenv("DESO_REMAP_SHM", shm ? "1" : "0", 1);
                int victim = k == 0 ? np - 1 : 0;
                int f = walk_force(DESO_MODE_NONE, victim, replay,
                                   trsv_iteration);
                unsetenv("DESO_REMAP_SHM");
                if (me == 0)
                    print_message("dtrsv force (%s, %s), failing on rank "
                                  "%d: %d failures injected\n",
                                  shm ? "shared memory" : "MPI",
                                  replay ? "replayed plan" : "new plan",
                                  victim, f);
                if (!replay) assert_true(tu_all(f > 0));
            }
}

/* One read of x = 2 fx or A = fa + x x^T (A only for the matrix read:
 * the product would leave x's copies in the layouts the vector reads
 * ask for), both computed; checks what it read when it succeeded.       */
typedef deso_err (*read_call)(deso_ctx *ctx, deso_vec *x, deso_mat *A,
                              const char *wisdom, int *good);

static double x_at(int64_t i) { return 2.0 * fx(i, NULL); }

static deso_err read_vec_root(deso_ctx *ctx, deso_vec *x, deso_mat *A,
                              const char *wisdom, int *good)
{
    (void)ctx, (void)A, (void)wisdom;
    double buf[N];
    int root = np - 1;
    deso_err e = deso_vec_gather(x, buf, root);
    for (int i = 0; e == DESO_OK && me == root && i < N; i++)
        *good &= buf[i] == x_at(i);
    return e;
}

static deso_err read_vec_all(deso_ctx *ctx, deso_vec *x, deso_mat *A,
                             const char *wisdom, int *good)
{
    (void)ctx, (void)A, (void)wisdom;
    double buf[N];
    deso_err e = deso_vec_gather(x, buf, DESO_ALL_RANKS);
    for (int i = 0; e == DESO_OK && i < N; i++) *good &= buf[i] == x_at(i);
    return e;
}

static deso_err read_mat(deso_ctx *ctx, deso_vec *x, deso_mat *A,
                         const char *wisdom, int *good)
{
    (void)ctx, (void)x, (void)wisdom;
    double buf[N * N];
    deso_err e = deso_mat_gather(A, buf, N, DESO_ALL_RANKS);
    for (int j = 0; e == DESO_OK && j < N; j++)
        for (int i = 0; i < N; i++)
            *good &= tu_srel(buf[i + j * N],
                             fa(i, j, NULL) + x_at(i) * x_at(j)) < 1e-15;
    return e;
}

static deso_err read_wisdom(deso_ctx *ctx, deso_vec *x, deso_mat *A,
                            const char *wisdom, int *good)
{
    (void)x, (void)A, (void)good;
    return deso_wisdom_import(ctx, wisdom);
}

/* Walks one-rank failures through one read on the last rank; returns the
 * failures injected.  A wisdom file (exported by a context that ran a CG
 * iteration) is there for read_wisdom.  `optional`: a failure may be
 * survived (the wisdom parser gives back its spare room when it can).    */
static int walk_read(read_call call, const char *wisdom, int optional)
{
    deso_options o;
    deso_options_default(&o);
    o.mode = DESO_MODE_FULL;
    o.nb = 2;
    /* 1 x P: x is spread over the ranks, so reading it whole anywhere
     * needs a view made for the read (on P x 1 it may already be whole) */
    o.grid_rows = 1;
    o.grid_cols = np;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    int victim = np - 1, failures = 0, done = 0;
    for (int n = 0; n < 100000 && !done; n++) {
        deso_vec *x = NULL;
        deso_mat *A = NULL;
        int ok = 1, *good = &ok, any;
        OK_LOCAL(deso_vec_from_fn(ctx, N, fx, NULL, &x));
        OK_LOCAL(deso_mat_from_fn(ctx, N, N, fa, NULL, &A));
        OK_LOCAL(deso_dscal(N, 2.0, x, 1));
        if (call == read_mat)
            OK_LOCAL(deso_dger(DESO_COL_MAJOR, N, N, 1.0, x, 1, x, 1, A, N));
        double x0;
        OK_LOCAL(deso_vec_get(x, 0, &x0));                  /* a force   */
        long before = deso__alloc_injected();
        arm(victim, n);
        deso_err e = call(ctx, x, A, wisdom, good);
        int injected = disarm(before);
        assert_true(agreed(e, injected, victim, optional, ok, &any));
        done = !any;
        failures += !done;
        OK_LOCAL(deso_vec_destroy(&x));
        OK_LOCAL(deso_mat_destroy(&A));
        assert_true(tu_all(ok));
    }
    assert_true(tu_all(done));
    TU_OK(deso_finalize(&ctx));
    return failures;
}

static void test_reads(void **state)
{
    (void)state;
    char wisdom[64];
    snprintf(wisdom, sizeof wisdom, "test_alloc_rank.%d.wisdom", np);
    deso_options o;
    deso_options_default(&o);
    o.mode = DESO_MODE_FULL;
    o.grid_rows = 1;                 /* walk_read's grid: its wisdom    */
    o.grid_cols = np;
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, &o, &ctx));
    deso_mat *A;
    TU_OK(deso_mat_from_fn(ctx, N, N, fa, NULL, &A));
    double rr;
    int injected, good = 1;
    TU_OK(cg_iteration(ctx, A, 0, -1, &injected, &rr, &good));
    TU_OK(deso_wisdom_export(ctx, wisdom));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_finalize(&ctx));
    assert_true(tu_all(good));
    const struct {
        const char *name;
        read_call call;
        int optional;
    } reads[] = {{"deso_vec_gather (one root)", read_vec_root, 0},
                 {"deso_vec_gather (every rank)", read_vec_all, 0},
                 {"deso_mat_gather", read_mat, 0},
                 {"deso_wisdom_import", read_wisdom, 1}};
    for (size_t k = 0; k < sizeof reads / sizeof reads[0]; k++) {
        int f = walk_read(reads[k].call, wisdom, reads[k].optional);
        if (me == 0)
            print_message("%s, failing on rank %d: %d failures injected\n",
                          reads[k].name, np - 1, f);
        /* on one rank a gather is a local copy, which may allocate
         * nothing: then there is nothing to inject                        */
        assert_true(tu_all(f > 0 || np == 1));
    }
    if (me == 0) remove(wisdom);
}

static void test_remap(void **state)
{
    (void)state;
    deso_layout src = {.m = 40, .n = 1, .mb = 3, .nb = 1, .pr = np, .pc = 1};
    deso_layout dst = {.m = 40, .n = 1, .mb = 5, .nb = 1, .pr = np, .pc = 1};
    for (int k = 0; k < (np > 1 ? 2 : 1); k++) {
        int victim = k == 0 ? np - 1 : 0, failures = 0, done = 0;
        for (int n = 0; n < 100000 && !done; n++) {
            deso_redist *r = NULL;
            long before = deso__alloc_injected();
            arm(victim, n);
            deso_err e = deso_redist_create(MPI_COMM_WORLD, &src, &dst,
                                            DESO_SCHED_STEPWISE, &r);
            int injected = disarm(before);
            /* the transport, too, is the same everywhere                  */
            int mpi = r != NULL && strcmp(deso_redist_transport(r), "mpi") == 0;
            int any;
            assert_true(agreed(e, injected, victim, 1,
                               (e == DESO_OK) == (r != NULL), &any));
            assert_true(tu_all(mpi) == !tu_all(!mpi));
            done = !any;
            failures += !done;
            deso_redist_destroy(&r);
        }
        if (me == 0)
            print_message("deso_redist_create, failing on rank %d: %d "
                          "failures injected\n", victim, failures);
        assert_true(tu_all(done && failures > 0));
    }
}

/* The value of element (i, j) of the single-copy walk's arrays.          */
static double g_at(int64_t i, int64_t j) { return (double)(i + 1000 * j); }

/* Global row of local row i of a CYCLIC(b) row distribution on np ranks. */
static int64_t g_row(int64_t i, int64_t b)
{
    return ((i / b) * np + me) * b + i % b;
}

/* One remap rows x cols, CYCLIC(3) -> CYCLIC(5) rows on np x 1 ranks, from
 * a shared source, executed first with the n-th allocation failing on
 * `victim` (then, after a failure, again with none).  *any: injected
 * anywhere; *failed: the execution failed (everywhere); *shm: the
 * transport was shared memory.  Returns whether every check passed on
 * every rank.                                                            */
static int pull_once(int64_t rows, int64_t cols, int victim, int n,
                     int *any, int *failed, int *shm)
{
    deso_layout src = {.m = rows, .n = cols, .mb = 3, .nb = cols,
                       .pr = np, .pc = 1};
    deso_layout dst = src;
    dst.mb = 5;
    deso_redist *r = NULL;
    TU_OK(deso_redist_create(MPI_COMM_WORLD, &src, &dst,
                             DESO_SCHED_STEPWISE, &r));
    *shm = strcmp(deso_redist_transport(r), "shared memory") == 0;
    int64_t sm, sn, dm, dn;
    TU_OK(deso_redist_local_shape(r, &sm, &sn, &dm, &dn));
    double *a = NULL, *b = malloc((size_t)(dm * dn + 1) * sizeof *b);
    TU_OK(deso_redist_array_alloc(MPI_COMM_WORLD, sm * sn + 1, &a));
    for (int64_t j = 0; j < sn; j++)
        for (int64_t i = 0; i < sm; i++) a[i + j * sm] = g_at(g_row(i, 3), j);
    for (int64_t k = 0; k < dm * dn; k++) b[k] = -1.0;
    long before = deso__alloc_injected();
    arm(victim, n);
    deso_err e = deso_redist_execute(r, a, sm > 0 ? sm : 1, b,
                                     dm > 0 ? dm : 1);
    int injected = disarm(before), good = 1;
    if (e != DESO_OK)          /* agreed before any data moved         */
        for (int64_t k = 0; k < dm * dn; k++) good &= b[k] == -1.0;
    /* a shrinking realloc that fails is survived (it keeps the block)   */
    int ok = agreed(e, injected, victim, 1, good, any);
    *failed = e != DESO_OK;
    if (e != DESO_OK)          /* usable: the next execution moves all */
        ok &= tu_all(deso_redist_execute(r, a, sm > 0 ? sm : 1, b,
                                         dm > 0 ? dm : 1) == DESO_OK);
    for (int64_t j = 0; j < dn; j++)
        for (int64_t i = 0; i < dm; i++)
            good &= b[i + j * dm] == g_at(g_row(i, 5), j);
    ok &= tu_all(good);
    deso_redist_destroy(&r);
    TU_OK(deso_redist_array_free(a));
    free(b);
    return ok;
}

static void test_remap_pull(void **state)
{
    (void)state;
    const int64_t shape[2][2] = {{40, 1}, {23, 3}};
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < (np > 1 ? 2 : 1); k++) {
            int victim = k == 0 ? np - 1 : 0, failures = 0, done = 0, shm;
            for (int n = 0; n < 100000 && !done; n++) {
                int any, failed;
                assert_true(pull_once(shape[c][0], shape[c][1], victim, n,
                                      &any, &failed, &shm));
                done = !any;
                failures += failed;
            }
            if (me == 0)
                print_message("deso_redist_execute (single copy, %lld x "
                              "%lld), failing on rank %d: %d failures "
                              "injected\n", (long long)shape[c][0],
                              (long long)shape[c][1], victim, failures);
            /* the shared-memory transport compiles on every rank        */
            assert_true(tu_all(done && (failures > 0) == shm));
        }
}

static void test_init(void **state)
{
    (void)state;
    for (int k = 0; k < (np > 1 ? 2 : 1); k++) {
        int victim = k == 0 ? np - 1 : 0, failures = 0, done = 0;
        for (int n = 0; n < 100000 && !done; n++) {
            deso_ctx *ctx = NULL;
            long before = deso__alloc_injected();
            arm(victim, n);
            deso_err e = deso_init(MPI_COMM_WORLD, NULL, &ctx);
            int injected = disarm(before);
            int any;
            assert_true(agreed(e, injected, victim, 0,
                               (e == DESO_OK) == (ctx != NULL), &any));
            done = !any;
            failures += !done;
            TU_OK(deso_finalize(&ctx));
        }
        if (me == 0)
            print_message("deso_init, failing on rank %d: %d failures "
                          "injected\n", victim, failures);
        assert_true(tu_all(done && failures > 0));
    }
}

/* Pending applies before the walked one (above the recycled objects).    */
#define FILL 72

/* A user operator's callback: y <- 3 x, x laid out like y.              */
static int thrice_fn(void *user, const double *x, const deso_op_part *xp,
                     double *y, const deso_op_part *yp)
{
    (void)user, (void)xp;
    for (int64_t i = 0; i < yp->nlocal; i++) y[i] = 3.0 * x[i];
    return 0;
}

/* op(x) = 3 fx on every rank, into a new vector read back (a force).    */
static int apply_right(deso_ctx *ctx, deso_op *op, deso_vec *x)
{
    double buf[N];
    deso_vec *y = NULL;
    int ok = deso_vec_create(ctx, N, &y) == DESO_OK &&
             deso_op_apply(op, x, y) == DESO_OK &&
             deso_vec_gather(y, buf, DESO_ALL_RANKS) == DESO_OK;
    for (int i = 0; ok && i < N; i++) ok = buf[i] == 3.0 * fx(i, NULL);
    return deso_vec_destroy(&y) == DESO_OK && ok;
}

/* x and y made again: a failed force lost the values it owed.           */
static void remake(deso_ctx *ctx, deso_vec **x, deso_vec **y)
{
    TU_OK(deso_vec_destroy(x));
    TU_OK(deso_vec_destroy(y));
    TU_OK(deso_vec_from_fn(ctx, N, fx, NULL, x));
    TU_OK(deso_vec_create(ctx, N, y));
}

/* Walks one-rank failures through deso_op_create, deso_op_apply and the
 * force that runs an apply, failing on `victim`; the context computes
 * the operator's right result after each.  Returns the failures injected
 * into the three.                                                        */
static void walk_op(deso_ctx *ctx, int victim, int failures[3])
{
    deso_vec *x, *y;
    TU_OK(deso_vec_from_fn(ctx, N, fx, NULL, &x));
    TU_OK(deso_vec_create(ctx, N, &y));
    int done = 0, any;
    for (int n = 0; n < 100000 && !done; n++) {
        deso_op *op = NULL;
        long before = deso__alloc_injected();
        arm(victim, n);
        deso_err e = deso_op_create(ctx, N, N, thrice_fn, NULL,
                                    DESO_OP_LIKE_Y, DESO_OP_ANY, NULL, &op);
        int injected = disarm(before);
        assert_true(agreed(e, injected, victim, 0,
                           (e == DESO_OK) == (op != NULL), &any));
        done = !any;
        failures[0] += !done;
        if (op != NULL) {
            assert_true(tu_all(apply_right(ctx, op, x)));
            TU_OK(deso_op_destroy(&op));
        }
    }
    deso_op *op;
    TU_OK(deso_op_create(ctx, N, N, thrice_fn, NULL, DESO_OP_LIKE_Y,
                         DESO_OP_ANY, NULL, &op));
    done = 0;
    for (int n = 0; n < 100000 && !done; n++) {
        /* more pending calls than the recycled nodes and values
         * (deso/runtime/recycle.c keeps 64 of each), so that the walked
         * apply allocates its own; on vectors of distinct lengths, which
         * the loop detection (period.c) does not take for a loop's
         * periods to force                                              */
        deso_vec *ys[FILL];
        for (int k = 0; k < FILL; k++) {
            TU_OK(deso_vec_create(ctx, k + 1, &ys[k]));
            TU_OK(deso_dscal(k + 1, 2.0, ys[k], 1));
        }
        long before = deso__alloc_injected();
        arm(victim, n);
        deso_err e = deso_op_apply(op, x, y);
        int injected = disarm(before);
        int v[2] = {injected, e != (injected ? DESO_ENOMEM : DESO_OK)};
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        assert_true(v[1] == 0);
        done = !v[0];
        failures[1] += !done;
        /* the victim recorded nothing: a mismatch everywhere (with one
         * rank, nothing is pending)                                     */
        deso_err want = v[0] && np > 1 ? DESO_EMISMATCH : DESO_OK;
        assert_true(tu_all(deso_flush(ctx) == want));
        if (!done) remake(ctx, &x, &y);
        for (int k = 0; k < FILL; k++) TU_OK(deso_vec_destroy(&ys[k]));
        assert_true(tu_all(apply_right(ctx, op, x)));
    }
    done = 0;
    for (int n = 0; n < 100000 && !done; n++) {
        double buf[N];
        int good = deso_dscal(N, 0.5, x, 1) == DESO_OK &&
                   deso_op_apply(op, x, y) == DESO_OK &&
                   deso_dscal(N, 2.0, x, 1) == DESO_OK;
        long before = deso__alloc_injected();
        arm(victim, n);
        deso_err e = deso_vec_gather(y, buf, DESO_ALL_RANKS);
        int injected = disarm(before);
        for (int i = 0; e == DESO_OK && i < N; i++)
            good &= buf[i] == 1.5 * fx(i, NULL);
        assert_true(agreed(e, injected, victim, 0, good, &any));
        done = !any;
        failures[2] += !done;
        if (!done) remake(ctx, &x, &y);
        assert_true(tu_all(apply_right(ctx, op, x)));
    }
    TU_OK(deso_op_destroy(&op));
    TU_OK(deso_vec_destroy(&x));
    TU_OK(deso_vec_destroy(&y));
}

static void test_op(void **state)
{
    (void)state;
    const char *what[3] = {"deso_op_create", "deso_op_apply",
                           "a force running deso_op_apply"};
    for (int k = 0; k < nvictims(); k++) {
        int victim = k == 0 ? np - 1 : 0, failures[3] = {0, 0, 0};
        deso_ctx *ctx = nb2_context(DESO_MODE_FULL);
        walk_op(ctx, victim, failures);
        TU_OK(deso_finalize(&ctx));
        for (int j = 0; j < 3; j++) {
            if (me == 0)
                print_message("%s, failing on rank %d: %d failures "
                              "injected\n", what[j], victim, failures[j]);
            assert_true(tu_all(failures[j] > 0));
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_force),
        cmocka_unit_test(test_force_trsv),
        cmocka_unit_test(test_reads),
        cmocka_unit_test(test_remap),
        cmocka_unit_test(test_remap_pull),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_op),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
