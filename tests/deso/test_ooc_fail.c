/* Out-of-core matrices on a full disk or an unusable directory: the
 * local array files' faults injected on one rank (deso__ooc_inject) while
 * a matrix is written from each source (a generator, an array on rank 0
 * or on every rank, a matrix file, a Matrix Market file).
 *
 * Oracles: a write failing with ENOSPC (the first write, or one after a
 * slab went through) and a short write followed by ENOSPC (a disk filling
 * up) fail the creation with DESO_EIO on every rank, with the failing
 * rank's reason ("No space left on device") in every rank's message and
 * no matrix; the directory stays empty and no descriptor of any rank
 * still points into it (nothing half-written is left, named files or
 * not); a CG on the same context afterwards gives the bits it gave before
 * the failure.  A short write without a failure is resumed: the matrix is
 * the generator's (its product the in-core one's bits).  A directory that
 * refuses the file (an injected EACCES, and a really unwritable one when
 * the test does not run as root) and a path that is a regular file, on
 * one rank, fail the creation with DESO_EIO on every rank likewise.
 * deso_init's read-rate probe failing on one rank leaves deso_init
 * working and its reason in every rank's deso_last_error.
 * Sizes not multiples of the block size, three slabs per rank; the named
 * files at P = 1, 2 and 6.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                      */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ooc_test.h"
#include "test_util.h"
#include "deso/runtime/ooc.h"

#define N 150               /* local columns > two slabs of 64 at P <= 3 */
#define NB 4
#define BUDGET ((int64_t)16 << 10)
#define NCG 21              /* the CG's matrix fits the budget            */
#define NSRC 5

static double one(int64_t i, void *arg)
{
    (void)i;
    (void)arg;
    return 1.0;
}

static int rank(void)
{
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me;
}

/* Whether one of this process's descriptors names a file in dir.        */
static int fd_in(const char *dir)
{
    char want[600];
    snprintf(want, sizeof want, "%s/", dir);
    return tu_fd_named(want, NULL);
}

/* Three CG iterations on tu_ooc_sym's NCG x NCG matrix (in core: it fits
 * the budget) from b = 1; x into out.                                    */
static void cg(deso_ctx *ctx, double *out)
{
    deso_mat *S = NULL;
    TU_CALL(deso_mat_from_fn(ctx, NCG, NCG, tu_ooc_sym, NULL, &S));
    deso_vec *v[4] = {NULL};
    TU_CALL(deso_vec_create(ctx, NCG, &v[0]));
    TU_CALL(deso_vec_from_fn(ctx, NCG, one, NULL, &v[1]));
    TU_CALL(deso_vec_from_fn(ctx, NCG, one, NULL, &v[2]));
    TU_CALL(deso_vec_create(ctx, NCG, &v[3]));
    deso_scalar *s[5] = {NULL};
    for (int k = 0; k < 5; k++) TU_CALL(deso_scalar_create(ctx, 0.0, &s[k]));
    TU_CALL(deso_ddot(NCG, v[1], 1, v[1], 1, s[0]));
    for (int it = 0; it < 3; it++)
        TU_CALL(tu_cg_record(NCG, S, v[0], v[1], v[2], v[3], s[0], s[1], s[2],
                             s[3], s[4]));
    tu_fetch(v[0], out);
    for (int k = 0; k < 5; k++) TU_CALL(deso_scalar_destroy(&s[k]));
    for (int k = 0; k < 4; k++) TU_CALL(deso_vec_destroy(&v[k]));
    TU_CALL(deso_mat_destroy(&S));
}

typedef struct sources {
    double *a;                     /* tu_ooc_gen's matrix, column-major   */
    char bin[600], mtx[600];       /* a matrix file and a Matrix Market   */
} sources;                         /*   file of it, outside the ooc dir   */

/* Rank 0 writes tu_ooc_gen's matrix as a Matrix Market array file.       */
static void write_mtx(const char *path, const double *a)
{
    if (rank() == 0) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%%%%MatrixMarket matrix array real general\n%d %d\n", N,
                N);
        for (int64_t k = 0; k < (int64_t)N * N; k++)
            fprintf(f, "%.17g\n", a[k]);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static deso_err make(deso_ctx *ctx, const sources *s, int src, deso_mat **A)
{
    switch (src) {
    case 0: return deso_mat_from_fn(ctx, N, N, tu_ooc_gen, NULL, A);
    case 1: return deso_mat_from_array(ctx, N, N, s->a, N, 0, A);
    case 2: return deso_mat_from_array(ctx, N, N, s->a, N, DESO_ALL_RANKS, A);
    case 3: return deso_mat_from_file(ctx, s->bin, A);
    default: return deso_mat_from_mtx(ctx, s->mtx, A);
    }
}

/* Whether every rank's last message contains what.                       */
static int said_everywhere(const char *what)
{
    const char *msg = deso_last_error();
    int ok = msg != NULL && strstr(msg, what) != NULL;
    if (!ok) print_error("rank %d: '%s' lacks '%s'\n", rank(), msg, what);
    return tu_all(ok);
}

/* Creating from source src with the fault armed on the last rank only:
 * DESO_EIO everywhere with reason `why`, nothing left in dir, and the
 * CG still gives want.                                                   */
static void fails(deso_ctx *ctx, const sources *s, int src,
                  deso__ooc_fault fault, int64_t after, int err,
                  const char *why, const char *dir, const double *want)
{
    tu_label("source %d, fault %d after %lld writes", src, (int)fault,
             (long long)after);
    int victim = rank() == tu_size() - 1;
    if (victim) deso__ooc_inject(fault, after, err);
    deso_mat *A = NULL;
    deso_err e = make(ctx, s, src, &A);
    TU_CHECK(tu_all(fault == DESO__OOC_FAULT_NONE || !victim ||
                    deso__ooc_injected()));
    deso__ooc_inject(DESO__OOC_FAULT_NONE, 0, 0);
    TU_CHECK(tu_all(e == DESO_EIO));
    TU_CHECK(tu_all(A == NULL));
    TU_CHECK(said_everywhere(why));
    TU_CHECK(tu_all(tu_dir_empty(dir)));
    TU_CHECK(tu_all(!fd_in(dir)));
    if (A != NULL) TU_CALL(deso_mat_destroy(&A));
    double got[NCG];
    cg(ctx, got);
    TU_CHECK(memcmp(got, want, sizeof got) == 0);
    tu_case_end();
}

static void setup_sources(sources *s, const char *other)
{
    s->a = malloc((size_t)N * N * sizeof *s->a);
    assert_non_null(s->a);
    for (int64_t j = 0; j < N; j++)
        for (int64_t i = 0; i < N; i++)
            s->a[j * N + i] = tu_ooc_gen(i, j, NULL);
    snprintf(s->bin, sizeof s->bin, "%s/a.bin", other);
    snprintf(s->mtx, sizeof s->mtx, "%s/a.mtx", other);
    write_mtx(s->mtx, s->a);
    deso_ctx *ctx = tu_ctx_budget(DESO_MODE_NONE, 0, 0, NB, 0, NULL);
    deso_mat *A = NULL;
    TU_OK(deso_mat_from_array(ctx, N, N, s->a, N, DESO_ALL_RANKS, &A));
    TU_OK(deso_mat_to_file(A, s->bin));
    TU_OK(deso_mat_destroy(&A));
    TU_OK(deso_finalize(&ctx));
}

static void drop_sources(sources *s)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank() == 0) {
        remove(s->bin);
        remove(s->mtx);
    }
    free(s->a);
}

/* A full disk on one rank, from every source, named files or not; then a
 * short write that does not fail, resumed.                              */
static void test_full_disk(void **state)
{
    (void)state;
    char dir[512], other[512];
    assert_true(tu_all(tu_scratch_dir("ooc-full", dir, sizeof dir) == 0));
    assert_true(tu_all(tu_scratch_dir("ooc-src", other, sizeof other) == 0));
    sources s;
    setup_sources(&s, other);
    const char *full = strerror(ENOSPC);
    /* the named-file round at P <= 2 and P >= 5 (tu_long): P = 3 and 4
     * run oversubscribed on a two-core machine, in many collectives     */
    int rounds = tu_long() || tu_size() < 3 ? 2 : 1;
    for (int named = 0; named < rounds; named++) {
        deso__ooc_named_files(named);
        deso_ctx *ctx = tu_ctx_budget(DESO_MODE_FULL, 0, 0, NB, BUDGET, dir);
        double want[NCG], yin[N], y[N];
        cg(ctx, want);
        deso_mat *A = NULL;
        TU_OK(make(ctx, &s, 0, &A));
        tu_ooc_product(ctx, A, N, N, yin);
        for (int src = 0; src < NSRC; src++) {
            fails(ctx, &s, src, DESO__OOC_FAULT_WRITE, 0, ENOSPC, full, dir,
                  want);
            fails(ctx, &s, src, DESO__OOC_FAULT_WRITE, 1, ENOSPC, full, dir,
                  want);
            fails(ctx, &s, src, DESO__OOC_FAULT_SHORT, 1, ENOSPC, full, dir,
                  want);
            /* a short write that does not fail: resumed, same matrix     */
            tu_label("source %d, a short write resumed", src);
            if (rank() == tu_size() - 1)
                deso__ooc_inject(DESO__OOC_FAULT_SHORT, 1, 0);
            A = NULL;
            TU_CALL(make(ctx, &s, src, &A));
            TU_CHECK(tu_all(rank() != tu_size() - 1 ||
                            deso__ooc_injected()));
            deso__ooc_inject(DESO__OOC_FAULT_NONE, 0, 0);
            if (A != NULL) tu_ooc_product(ctx, A, N, N, y);
            TU_CHECK(memcmp(y, yin, sizeof y) == 0);
            tu_case_end();
        }
        TU_OK(deso_finalize(&ctx));
        assert_true(tu_all(tu_dir_empty(dir)));
    }
    deso__ooc_named_files(false);
    TU_SYNC();
    drop_sources(&s);
    tu_scratch_done(other);
    tu_scratch_done(dir);
}

/* A directory that refuses the file, on one rank: an injected EACCES;
 * a really unwritable directory unless root (who may write anywhere); a
 * path that is a regular file.                                           */
static void test_unusable_dir(void **state)
{
    (void)state;
    char dir[512], other[512], plain[600];
    assert_true(tu_all(tu_scratch_dir("ooc-ro", dir, sizeof dir) == 0));
    assert_true(tu_all(tu_scratch_dir("ooc-src", other, sizeof other) == 0));
    sources s;
    setup_sources(&s, other);
    snprintf(plain, sizeof plain, "%s/plain", other);
    if (rank() == 0) fclose(fopen(plain, "w"));
    MPI_Barrier(MPI_COMM_WORLD);
    deso_ctx *ctx = tu_ctx_budget(DESO_MODE_AFFINE, 0, 0, NB, BUDGET, dir);
    double want[NCG];
    cg(ctx, want);
    for (int src = 0; src < NSRC; src++)
        fails(ctx, &s, src, DESO__OOC_FAULT_OPEN, 0, EACCES,
              strerror(EACCES), dir, want);
    TU_OK(deso_finalize(&ctx));
    for (int real = 0; real < 2; real++) {
        const char *bad = real ? dir : plain;
        if (real && rank() == 0) chmod(dir, 0500);
        MPI_Barrier(MPI_COMM_WORLD);
        /* root writes through the mode bits: nothing to test then        */
        if (real && access(dir, W_OK) == 0) continue;
        const char *here = rank() == tu_size() - 1 ? bad : dir;
        ctx = tu_ctx_budget(DESO_MODE_AFFINE, 0, 0, NB, BUDGET, here);
        for (int src = 0; src < NSRC; src++)
            fails(ctx, &s, src, DESO__OOC_FAULT_NONE, 0, 0,
                  real ? strerror(EACCES) : strerror(ENOTDIR), dir, want);
        TU_OK(deso_finalize(&ctx));
    }
    if (rank() == 0) {
        chmod(dir, 0700);
        remove(plain);
    }
    TU_SYNC();
    drop_sources(&s);
    tu_scratch_done(other);
    tu_scratch_done(dir);
}

/* deso_init's read-rate probe failing on the last rank (its directory
 * refusing the probe's file, a full disk at its first write): deso_init
 * still succeeds, every rank's cost model counts that rank's disk as
 * 100 MB/s (io_beta is the slowest rank's figure, so at least 1e-8 s per
 * byte: on a loaded machine another rank's measured disk may be slower
 * still), and every rank's deso_last_error names deso_init, the rank
 * and its reason.  A probe that succeeds leaves the message as it was.  */
static void test_probe_fails(void **state)
{
    (void)state;
    char dir[512], who[32];
    assert_true(tu_all(tu_scratch_dir("ooc-probe", dir, sizeof dir) == 0));
    static const struct {
        deso__ooc_fault fault;
        int err;
    } faults[2] = {{DESO__OOC_FAULT_OPEN, EACCES},
                   {DESO__OOC_FAULT_WRITE, ENOSPC}};
    int last = tu_size() - 1;
    snprintf(who, sizeof who, "rank %d", last);
    for (int k = 0; k < 3; k++) {
        tu_label("probe fault %d", k);
        deso__fail(DESO_OK, "untouched");
        if (k < 2 && rank() == last)
            deso__ooc_inject(faults[k].fault, 0, faults[k].err);
        deso_ctx *ctx = tu_ctx_budget(DESO_MODE_NONE, 0, 0, NB, BUDGET, dir);
        deso_info info;
        TU_OK(deso_get_info(ctx, &info));
        const char *msg = deso_last_error();
        if (k < 2)
            TU_CHECK(tu_all(info.io_beta >= 1e-8 &&
                            strstr(msg, "deso_init: ") == msg &&
                            strstr(msg, who) != NULL &&
                            strstr(msg, strerror(faults[k].err)) != NULL &&
                            strstr(msg, "100 MB/s") != NULL));
        else
            TU_CHECK(tu_all(strcmp(msg, "untouched") == 0));
        TU_CHECK(tu_all(k == 2 || rank() != last || deso__ooc_injected()));
        deso__ooc_inject(DESO__OOC_FAULT_NONE, 0, 0);
        TU_OK(deso_finalize(&ctx));
        TU_CHECK(tu_all(tu_dir_empty(dir)));
        tu_case_end();
    }
    TU_SYNC();
    tu_scratch_done(dir);
}

TU_MAIN_SETUP(tu_ooc_setup, cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_unusable_dir),
        cmocka_unit_test(test_probe_fails))
