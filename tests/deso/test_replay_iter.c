/* Iterations replayed without being recorded (doc/DESIGN.md, "Replaying an
 * iteration").  A CG loop that reads r.r every iteration runs twice, with
 * replay (the default) and without (deso_options.replay < 0): the same
 * vectors and scalars to the last bit, the same bytes, messages and plan
 * counts, and most forces replayed with it, none without; both within
 * 1e-12 of sequential OpenBLAS.  Variants break the replay in the middle
 * of an iteration: an extra call, a scalar read, a vector read, a
 * handle destroyed and made again, a call of the expected operation into
 * the expected handle on another operand (q.p for p.q), a call that
 * differs only in a constant (one the context keeps); each is still
 * right, counts a broken replay, and replays again afterwards.  A force of other calls between
 * two iterations breaks nothing: the next iteration replays (unless it
 * gave r.r a kept constant, which the replay would write over).  At
 * P > 1, ranks that make different calls while one of them replays fail
 * with DESO_EMISMATCH on every rank, and the context computes on.  Calls
 * with a bad argument in every iteration fail as they do without replay,
 * with the same messages, and break nothing.  Every
 * mode, 1-D and 2-D grids, n not a multiple of the block size, n < P.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "deso/runtime/runtime.h"   /* ctx->params                    */
#include "replay_test.h"
#include "test_util.h"

#define ITERS 16
#define BREAK_AT 8
#define VARIANTS 11

/* w keeps r's old version and save alpha's (a handle holding the same
 * value as another one), so that a result never takes over a buffer
 * something still reads.                                                */
typedef struct seq {
    int n;
    double *A, *x, *r, *p, *q, *w, rr, alpha;
} seq;

typedef struct loop {
    deso_mat *A;
    deso_vec *x, *r, *p, *q, *w;
    deso_scalar *rr, *rrnew, *pq, *alpha, *beta, *save;
    double kept;              /* variant 6's constant                      */
} loop;

/* The sequential CG iteration, up to the update of x (half) or whole.   */
static void seq_half(seq *s)
{
    int n = s->n;
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, s->A, n, s->p, 1,
                0.0, s->q, 1);
    s->alpha = s->rr / cblas_ddot(n, s->p, 1, s->q, 1);
    cblas_daxpy(n, s->alpha, s->p, 1, s->x, 1);
}

static void seq_rest(seq *s, double one)
{
    int n = s->n;
    cblas_dcopy(n, s->r, 1, s->w, 1);
    cblas_daxpy(n, -s->alpha, s->q, 1, s->r, 1);
    double rrnew = cblas_ddot(n, s->r, 1, s->r, 1);
    cblas_dscal(n, rrnew / s->rr, s->p, 1);
    cblas_daxpy(n, one, s->r, 1, s->p, 1);
    s->rr = rrnew;
}

/* Variant 10's constant in the last update of p (1.0 in the others): a
 * call that differs from the expected one only there, with a constant
 * the context keeps already (loop_make sets it).                       */
#define OTHER_ONE 2.0
static double one_of(int k, int it)
{
    return k == 10 && it == BREAK_AT ? OTHER_ONE : 1.0;
}

/* The same through deso, with variant k's break at iteration `it`.     */
static void deso_half(loop *l, int64_t n, int k, int it, const seq *s)
{
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, l->A, n,
                       l->p, 1, 0.0, l->q, 1));
    if (k == 8 && it == BREAK_AT)        /* q.p for p.q: another operand */
        TU_CALL(deso_ddot(n, l->q, 1, l->p, 1, l->pq));
    else
        TU_CALL(deso_ddot(n, l->p, 1, l->q, 1, l->pq));
    if (k == 1 && it == BREAK_AT)        /* an extra call: x * 1 is x      */
        TU_CALL(deso_dscal(n, 1.0, l->x, 1));
    TU_CALL(deso_sdiv(l->alpha, l->rr, l->pq));
    TU_CALL(deso_daxpy(n, l->alpha, l->p, 1, l->x, 1));
    if (k == 2 && it == BREAK_AT)        /* a scalar read in the middle    */
        TU_CHECK(tu_srel(tu_value(l->alpha), s->alpha) < 1e-12);
    if (k == 3 && it == BREAK_AT)        /* a vector read in the middle    */
        tu_expect_vec(l->x, s->x, n, 1e-12);
}

static void deso_rest(loop *l, int64_t n, double one)
{
    TU_CALL(deso_dcopy(n, l->r, 1, l->w, 1));
    TU_CALL(deso_sset(l->save, l->alpha));
    TU_CALL(deso_sneg(l->alpha, l->alpha));
    TU_CALL(deso_daxpy(n, l->alpha, l->q, 1, l->r, 1));
    TU_CALL(deso_ddot(n, l->r, 1, l->r, 1, l->rrnew));
    TU_CALL(deso_sdiv(l->beta, l->rrnew, l->rr));
    TU_CALL(deso_dscal(n, l->beta, l->p, 1));
    TU_CALL(deso_daxpy(n, one, l->r, 1, l->p, 1));
    TU_CALL(deso_sset(l->rr, l->rrnew));
}

/* Variants 5 to 7 and 9: a force of other calls between two iterations
 * (a residual check, a solver's set-up): save gets x.x, which no call of
 * the iteration reads; in 6, rr also gets its own value as a constant,
 * which the replay, compiled for an rr whose value dies each iteration,
 * must not write over; in 7, rr is r.r again, as a solver's set-up
 * computes it: a value of its own, where each iteration leaves rr and
 * rrnew sharing one; in 9, that value divided by 1.5, so that the view
 * the replay bound rr to before (rrnew's, still held) holds another
 * number than rr's own.                                                */
static void other_force(loop *l, int64_t n, seq *s, int k)
{
    l->kept = s->rr;
    if (k == 6) TU_CALL(deso_sset(l->rr, l->kept));
    if (k == 7 || k == 9) TU_CALL(deso_ddot(n, l->r, 1, l->r, 1, l->rr));
    if (k == 9) {                   /* a value of its own, and another one */
        TU_CALL(deso_sdiv(l->rr, l->rr, 1.5));
        s->rr = s->rr / 1.5;
    }
    TU_CALL(deso_ddot(n, l->x, 1, l->x, 1, l->save));
    double xx = cblas_ddot(s->n, s->x, 1, s->x, 1);
    TU_CHECK(tu_srel(tu_value(l->save), xx) < 1e-12 || xx == 0.0);
}

static void seq_make(seq *s, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    s->n = (int)n;
    s->A = malloc((size_t)(n * n) * sizeof *s->A);
    double **vs[] = {&s->x, &s->r, &s->p, &s->q, &s->w};
    for (int k = 0; k < 5; k++) *vs[k] = calloc((size_t)n, sizeof(double));
    /* not symmetric, so that CG never converges exactly (r = 0 would make
     * the next alpha 0 / 0), its symmetric part positive definite, so
     * that p.Ap > 0                                                       */
    tu_fill(&rng, s->A, n * n);
    for (int64_t i = 0; i < n; i++) s->A[i * n + i] += (double)n;
    tu_fill(&rng, s->r, n);
    memcpy(s->p, s->r, (size_t)n * sizeof(double));
    s->rr = cblas_ddot((int)n, s->r, 1, s->r, 1);
}

static void seq_free(seq *s)
{
    double *a[] = {s->A, s->x, s->r, s->p, s->q, s->w};
    for (int k = 0; k < 6; k++) free(a[k]);
}

static void loop_make(deso_ctx *ctx, int64_t n, const seq *s, loop *l)
{
    TU_CALL(deso_mat_from_array(ctx, n, n, s->A, n, DESO_ALL_RANKS, &l->A));
    TU_CALL(deso_vec_create(ctx, n, &l->x));
    TU_CALL(deso_vec_from_array(ctx, n, s->r, DESO_ALL_RANKS, &l->r));
    TU_CALL(deso_vec_from_array(ctx, n, s->p, DESO_ALL_RANKS, &l->p));
    TU_CALL(deso_vec_create(ctx, n, &l->q));
    TU_CALL(deso_vec_create(ctx, n, &l->w));
    deso_scalar **sc[] = {&l->rr, &l->rrnew, &l->pq, &l->alpha, &l->beta,
                          &l->save};
    for (int k = 0; k < 6; k++) TU_CALL(deso_scalar_create(ctx, 0.0, sc[k]));
    TU_CALL(deso_ddot(n, l->r, 1, l->r, 1, l->rr));
    TU_CALL(deso_sset(l->save, OTHER_ONE));   /* the constant is kept    */
}

/* The loop of variant k on context ctx: its results (x, r, p, w, then rr
 * and save) into out (4 n + 2 doubles), and its statistics.              */
static void run_loop(deso_ctx *ctx, int64_t n, int k, uint64_t seed,
                     double *out, deso_stats *st, int64_t *replayed_at)
{
    seq s;
    seq_make(&s, n, seed);
    loop l;
    loop_make(ctx, n, &s, &l);
    deso_stats st0, mid;
    TU_CALL(deso_stats_get(&st0));
    for (int it = 0; it < ITERS; it++) {
        if (k == 4 && it == BREAK_AT) {  /* q goes, and comes back anew    */
            TU_CALL(deso_vec_destroy(&l.q));
            TU_CALL(deso_vec_create(ctx, n, &l.q));
        }
        if (it == BREAK_AT) TU_CALL(deso_stats_get(&mid));
        if (k >= 5 && k != 8 && it == BREAK_AT) other_force(&l, n, &s, k);
        seq_half(&s);
        deso_half(&l, n, k, it, &s);
        seq_rest(&s, one_of(k, it));
        deso_rest(&l, n, one_of(k, it));
        TU_CHECK(tu_srel(tu_value(l.rr), s.rr) < 1e-12);
    }
    tu_fetch(l.x, out);
    tu_fetch(l.r, out + n);
    tu_fetch(l.p, out + 2 * n);
    tu_fetch(l.w, out + 3 * n);
    out[4 * n] = tu_value(l.rr);
    out[4 * n + 1] = tu_value(l.save);
    if (k == 6) {                     /* the constant is still itself      */
        TU_CALL(deso_sset(l.save, l.kept));
        TU_CHECK(tu_value(l.save) == l.kept);
    }
    TU_CHECK(tu_relerr(out, s.x, n) < 1e-12);
    TU_CHECK(tu_relerr(out + n, s.r, n) < 1e-12);
    TU_CHECK(tu_relerr(out + 2 * n, s.p, n) < 1e-12);
    TU_CHECK(tu_relerr(out + 3 * n, s.w, n) < 1e-12);
    TU_CHECK(tu_srel(out[4 * n + 1], s.alpha) < 1e-12);
    TU_CALL(deso_stats_get(st));
    *replayed_at = mid.forces_replayed - st0.forces_replayed;
    int64_t *now[] = {&st->bytes_p2p, &st->msgs_p2p, &st->bytes_collective,
                      &st->msgs_collective, &st->plans_optimised,
                      &st->plans_replayed, &st->nodes_overlapped,
                      &st->forces_replayed, &st->replays_broken};
    const int64_t then[] = {st0.bytes_p2p, st0.msgs_p2p,
                            st0.bytes_collective, st0.msgs_collective,
                            st0.plans_optimised, st0.plans_replayed,
                            st0.nodes_overlapped, st0.forces_replayed,
                            st0.replays_broken};
    for (int j = 0; j < 9; j++) *now[j] -= then[j];
    seq_free(&s);
}

/* Variant k both ways: bitwise the same, counted the same.              */
static void compare(const tu_case *c, int64_t n, int k, uint64_t seed)
{
    size_t len = (size_t)(4 * n + 2);
    double *on = calloc(len, sizeof *on), *off = calloc(len, sizeof *off);
    deso_stats a, b;
    int64_t a_mid, b_mid;
    opt_params params;
    deso_ctx *ctx = replay_ctx(c, DESO_PARTITION_DEFAULT, 1, &params);
    run_loop(ctx, n, k, seed, on, &a, &a_mid);
    TU_CALL(deso_finalize(&ctx));
    ctx = replay_ctx(c, DESO_PARTITION_DEFAULT, 0, &params);
    run_loop(ctx, n, k, seed, off, &b, &b_mid);
    TU_CALL(deso_finalize(&ctx));
    TU_CHECK(memcmp(on, off, len * sizeof *on) == 0);
    /* while the plan still improves (a 1-D grid's first iterations)
     * nothing is armed                                                    */
    /* the other force parks the replay: every iteration after it replays
     * (the first one from values the set-up related otherwise), with no
     * new arming (which would cost two recorded iterations); in mode full
     * the set-up's own plan may leave a value the first one reads without
     * the view it reads, which only an exchange could make before the
     * agreement: that one records its calls, once                        */
    bool once = (k == 5 || k == 7 || k == 9) && c->mode == DESO_MODE_FULL &&
                a.replays_broken == 1 &&
                a.forces_replayed - a_mid == ITERS - BREAK_AT - 1;
    replay_counts_agree(&a, a_mid, &b,
                        (k >= 1 && k <= 4) || k == 8 || k == 10 || once,
                        ITERS);
    if (k == 5 || k == 7 || k == 9)
        TU_CHECK(once || a.forces_replayed - a_mid == ITERS - BREAK_AT);
    free(on);
    free(off);
}

static void test_replay_matches_recording(void **state)
{
    (void)state;
    const int64_t nbs[] = {3, 2};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 2, cases);
    for (int ci = 0; ci < nc; ci++) {
        int64_t n = cases[ci].nb == 3 ? 37 : (ci % 2 ? 5 : 2);
        for (int k = 0; k < VARIANTS; k++) {
            /* the fast group: one variant per case, in turn            */
            if (!tu_long() && k != ci % VARIANTS && !(k >= 8 && ci == 0))
                continue;
            tu_label("%s, n %lld, variant %d", tu_case_name(&cases[ci]),
                     (long long)n, k);
            compare(&cases[ci], n, k, 5u + (uint64_t)(ci * VARIANTS + k));
        }
        tu_case_end();
    }
    TU_SYNC();
}

/* Rank 0 replays an iteration the others make with one more call: every
 * rank fails with DESO_EMISMATCH, and a new computation is right.  On
 * one rank the extra call is rank 0's own: the replay breaks, and the
 * iteration is still right.                                             */
static void test_mismatch_while_replaying(void **state)
{
    (void)state;
    int me, P = tu_size();
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const int64_t n = 11;
    const tu_case c = {DESO_MODE_FULL, 0, 0, 2};
    opt_params params;
    deso_ctx *ctx = replay_ctx(&c, DESO_PARTITION_DEFAULT, 1, &params);
    seq s;
    seq_make(&s, n, 3u);
    loop l;
    loop_make(ctx, n, &s, &l);
    deso_stats start, st0;
    TU_CALL(deso_stats_get(&start));
    for (int it = 0; it <= 8; it++) {
        if (it == 8) TU_CALL(deso_stats_get(&st0));
        seq_half(&s);
        deso_half(&l, n, 0, it, &s);
        if (it == 8 && (P == 1 || me != 0))
            TU_CALL(deso_dscal(n, 1.0, l.x, 1));     /* x * 1 is x      */
        seq_rest(&s, 1.0);
        deso_rest(&l, n, 1.0);
        if (it < 8) TU_CHECK(tu_srel(tu_value(l.rr), s.rr) < 1e-12);
    }
    deso_stats st;
    TU_CALL(deso_stats_get(&st));
    TU_CHECK(st0.forces_replayed - start.forces_replayed >= 2);
    int64_t broken = st.replays_broken;
    double v = 0.0;
    if (P == 1) {
        TU_CALL(deso_scalar_get(l.rr, &v));
        TU_CHECK(tu_srel(v, s.rr) < 1e-12);
        TU_CALL(deso_stats_get(&st));
        /* broken at the extra call, once                                 */
        TU_CHECK(broken == st0.replays_broken + 1 &&
                 st.replays_broken == broken);
    } else {
        TU_CHECK(deso_scalar_get(l.rr, &v) == DESO_EMISMATCH);
    }
    deso_vec *y = tu_vec_of(ctx, n, s.r);
    deso_scalar *d;
    TU_CALL(deso_scalar_create(ctx, 0.0, &d));
    TU_CALL(deso_ddot(n, y, 1, y, 1, d));
    TU_CHECK(tu_srel(tu_value(d), cblas_ddot((int)n, s.r, 1, s.r, 1)) <
             1e-12);
    seq_free(&s);
    TU_CALL(deso_finalize(&ctx));
    TU_SYNC();
}

/* Calls of the iteration's functions with a bad argument, each like a
 * good call of its half of the iteration, into code and msg (4 each).
 * While a replay is armed they test the quick path's checks (record.h):
 * each must fail as it does without a replay and change nothing (the
 * replay goes on).  A dscal at a negative increment does nothing, as in
 * reference BLAS.                                                       */
#define BAD_CALLS 8
static const deso_err bad_want[BAD_CALLS] = {
    DESO_EINVAL, DESO_ESIZE, DESO_ENULL, DESO_ENULL,
    DESO_EINVAL, DESO_ESIZE, DESO_ENULL, DESO_OK};

static void bad_calls(loop *l, int64_t n, int half, deso_err *code,
                      char (*msg)[160])
{
    deso_scalar *none = NULL;
    if (half == 0) {
        code[0] = deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n, n, 1.0, l->A,
                             n, l->p, 0, 0.0, l->q, 1);
        snprintf(msg[0], sizeof msg[0], "%s", deso_last_error());
        code[1] = deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, n + 1, n, 1.0,
                             l->A, n, l->p, 1, 0.0, l->q, 1);
        snprintf(msg[1], sizeof msg[1], "%s", deso_last_error());
        code[2] = deso_ddot(n, l->p, 1, l->q, 1, NULL);
        snprintf(msg[2], sizeof msg[2], "%s", deso_last_error());
        code[3] = deso_sdiv(l->alpha, l->rr, none);
        snprintf(msg[3], sizeof msg[3], "%s", deso_last_error());
        return;
    }
    code[0] = deso_daxpy(n, l->alpha, (const deso_vec *)l->A, 1, l->r, 1);
    snprintf(msg[0], sizeof msg[0], "%s", deso_last_error());
    code[1] = deso_dscal(n + 1, l->beta, l->p, 1);
    snprintf(msg[1], sizeof msg[1], "%s", deso_last_error());
    code[2] = deso_sneg(none, l->alpha);
    snprintf(msg[2], sizeof msg[2], "%s", deso_last_error());
    code[3] = deso_dscal(n, l->beta, l->p, -1);
    snprintf(msg[3], sizeof msg[3], "%s", deso_last_error());
}

/* The loop with the bad calls in every iteration, replaying (on) or not:
 * x and p (2 n doubles) into out, the last iteration's codes and
 * messages, and the statistics of the loop.                            */
static void loop_with_bad_calls(int on, int64_t n, deso_err *code,
                                char (*msg)[160], double *out,
                                deso_stats *st)
{
    const tu_case c = {DESO_MODE_FULL, 0, 0, 2};
    static opt_params params;
    deso_ctx *ctx = replay_ctx(&c, DESO_PARTITION_DEFAULT, on, &params);
    seq s;
    seq_make(&s, n, 7u);
    loop l;
    loop_make(ctx, n, &s, &l);
    deso_stats st0;
    TU_CALL(deso_stats_get(&st0));
    for (int it = 0; it < ITERS; it++) {
        bad_calls(&l, n, 0, code, msg);
        seq_half(&s);
        deso_half(&l, n, 0, it, &s);
        bad_calls(&l, n, 1, code + 4, msg + 4);
        seq_rest(&s, 1.0);
        deso_rest(&l, n, 1.0);
        TU_CHECK(tu_srel(tu_value(l.rr), s.rr) < 1e-12);
        TU_CHECK(memcmp(code, bad_want, sizeof bad_want) == 0);
    }
    tu_fetch(l.x, out);
    tu_fetch(l.p, out + n);
    TU_CALL(deso_stats_get(st));
    st->forces_replayed -= st0.forces_replayed;
    st->replays_broken -= st0.replays_broken;
    seq_free(&s);
    TU_CALL(deso_finalize(&ctx));
}

static void test_bad_calls_while_replaying(void **state)
{
    (void)state;
    const int64_t n = 11;
    deso_err code[2][BAD_CALLS];
    char msg[2][BAD_CALLS][160];
    double out[2][2 * 11];
    deso_stats st[2];
    for (int on = 1; on >= 0; on--)
        loop_with_bad_calls(on, n, code[on], msg[on], out[on], &st[on]);
    for (int j = 0; j < BAD_CALLS; j++)
        TU_CHECK(strcmp(msg[1][j], msg[0][j]) == 0 &&
                 (bad_want[j] == DESO_OK || msg[1][j][0] != '\0'));
    TU_CHECK(memcmp(out[1], out[0], sizeof out[1]) == 0);
    TU_CHECK(st[1].replays_broken == 0 && st[0].forces_replayed == 0);
    TU_CHECK(st[1].forces_replayed >= ITERS / 2);
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_replay_matches_recording),
        cmocka_unit_test(test_mismatch_while_replaying),
        cmocka_unit_test(test_bad_calls_while_replaying))
