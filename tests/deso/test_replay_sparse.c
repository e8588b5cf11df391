/* Iterations with sparse products and user operators replayed without
 * being recorded (doc/DESIGN.md, "Replaying an iteration").  A CG loop on
 * a sparse matrix (q = A p by deso_dusmv, its halo exchanged each
 * iteration) that also computes z = S r by a user operator on all of r
 * (S: twice the identity plus a cyclic shift) and w = 0.5 A^T z + w (the
 * transposed product, whose partial sums go back to their owners, y
 * updated in place), and reads r.r every iteration, runs twice, with
 * replay and without (deso_options.replay < 0): the same vectors and
 * scalars to the last bit, the same bytes, messages and plan counts, and
 * most forces replayed with it, none without; both within 1e-12 of a
 * sequential CSR loop.  Variants break the replay in the middle of an
 * iteration: an extra call, a scalar read, a vector read, q destroyed and
 * made again, a new matrix (another diagonal) made before the iteration
 * and taking the old one's place after its product (the old one
 * destroyed with its node pending), a new operator (another scale) made
 * before the iteration in place of the old one; each is still right (a
 * replay that took the new matrix or operator for the old one would not
 * be), counts a broken replay, and replays again afterwards.  Rows in blocks
 * and by the trace graph; every mode, 1-D and 2-D grids, n not a multiple
 * of the block size, n < P.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <math.h>
#include <string.h>

#include "deso/runtime/runtime.h"   /* ctx->params                    */
#include "replay_test.h"
#include "sparse_test.h"
#include "test_util.h"

#define ITERS 18
#define BREAK_AT 8
#define VARIANTS 7

typedef struct seq {
    glob A;
    double *x, *r, *p, *q, *w, *z, rr, alpha, scale;
} seq;

typedef struct loop {
    deso_spmat *A, *A2;       /* A2: variant 5's next matrix               */
    deso_op *S;
    double scale[2];          /* S's first and remade one's, read by the   */
                              /*   callback                                */
    deso_vec *x, *r, *p, *q, *w, *z;
    deso_scalar *rr, *rrnew, *pq, *alpha, *beta;
} loop;

/* z = S r: z_i = c r_i + r_(i+1 mod n) (user: c), on this rank's part
 * of z.                                                                 */
static int shift_op(void *user, const double *x, const deso_op_part *xp,
                    double *y, const deso_op_part *yp)
{
    double c = *(const double *)user;
    for (int64_t i = 0; i < yp->nlocal; i++) {
        int64_t g = deso_op_global(yp, i);
        y[i] = c * x[g] + x[(g + 1) % xp->n];
    }
    return 0;
}

static void seq_shift(int64_t n, double c, const double *x, double *y)
{
    for (int64_t g = 0; g < n; g++) y[g] = c * x[g] + x[(g + 1) % n];
}

static deso_op *op_of(deso_ctx *ctx, int64_t n, double *c)
{
    deso_op *S = NULL;
    TU_CALL(deso_op_create(ctx, n, n, shift_op, c, DESO_OP_REPLICATED,
                           DESO_OP_ANY, NULL, &S));
    return S;
}

/* An n x n matrix with up to three entries off the diagonal a row, in
 * [-1, 1), not symmetric, its diagonal 1/2 more than half its row's and
 * column's off-diagonal magnitudes: the symmetric part is positive
 * definite (p.Ap > 0) but barely, and the skew part strong, so that CG
 * converges slowly and never ends exactly, even at n = 2.               */
static glob make_matrix(int64_t n, uint64_t seed)
{
    tu_rng rng = {seed};
    glob g = {n, n, calloc((size_t)n + 1, sizeof(int64_t)),
              calloc((size_t)(4 * n), sizeof(int64_t)),
              calloc((size_t)(4 * n), sizeof(double))};
    double *mag = calloc((size_t)n, sizeof *mag);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        g.col[k++] = i;                  /* the diagonal, set below        */
        for (int64_t e = n > 1 ? tu_below(&rng, 4) : 0; e > 0; e--) {
            g.col[k] = (i + 1 + tu_below(&rng, n - 1)) % n;
            g.val[k] = tu_rand(&rng);
            mag[i] += 0.5 * fabs(g.val[k]);
            mag[g.col[k]] += 0.5 * fabs(g.val[k]);
            k++;
        }
        g.rowptr[i + 1] = k;
    }
    for (int64_t i = 0; i < n; i++) g.val[g.rowptr[i]] = 0.5 + mag[i];
    free(mag);
    return g;
}

/* The sequential iteration, up to the update of x (half) or whole.      */
static void seq_half(seq *s)
{
    int64_t n = s->A.n;
    ref_mv(&s->A, false, 1.0, s->p, 0.0, s->q);
    double pq = 0.0;
    for (int64_t i = 0; i < n; i++) pq += s->p[i] * s->q[i];
    s->alpha = s->rr / pq;
    for (int64_t i = 0; i < n; i++) s->x[i] += s->alpha * s->p[i];
}

static void seq_rest(seq *s)
{
    int64_t n = s->A.n;
    seq_shift(n, s->scale, s->r, s->z);
    ref_mv(&s->A, true, 0.5, s->z, 1.0, s->w);
    double rrnew = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s->r[i] -= s->alpha * s->q[i];
        rrnew += s->r[i] * s->r[i];
    }
    for (int64_t i = 0; i < n; i++)
        s->p[i] = s->r[i] + rrnew / s->rr * s->p[i];
    s->rr = rrnew;
}

/* Adds 1 to each row's first entry (its diagonal).                      */
static void bump_diagonal(glob *g)
{
    for (int64_t i = 0; i < g->m; i++) g->val[g->rowptr[i]] += 1.0;
}

/* Before iteration BREAK_AT: q destroyed and made again (variant 4), the
 * next matrix made (5), the operator replaced by one of scale 3 (6).    */
static void remake(deso_ctx *ctx, loop *l, seq *s, int64_t n, int k)
{
    if (k == 4) {
        TU_CALL(deso_vec_destroy(&l->q));
        TU_CALL(deso_vec_create(ctx, n, &l->q));
    }
    if (k == 5) {
        glob g = s->A;
        size_t bytes = (size_t)g.rowptr[n] * sizeof(double);
        g.val = malloc(bytes + sizeof(double));
        memcpy(g.val, s->A.val, bytes);
        bump_diagonal(&g);
        l->A2 = spmat_of(ctx, &g);
        free(g.val);
    }
    if (k == 6) {
        TU_CALL(deso_op_destroy(&l->S));
        l->S = op_of(ctx, n, &l->scale[1]);
        s->scale = 3.0;
    }
}

/* The same through deso, with variant k's break at iteration `it`.     */
static void deso_half(deso_ctx *ctx, loop *l, int64_t n, int k, int it,
                      seq *s)
{
    TU_CALL(deso_dusmv(ctx, DESO_NO_TRANS, 1.0, l->A, l->p, 0.0, l->q));
    TU_CALL(deso_ddot(n, l->p, 1, l->q, 1, l->pq));
    if (k == 1 && it == BREAK_AT)        /* an extra call: x * 1 is x      */
        TU_CALL(deso_dscal(n, 1.0, l->x, 1));
    if (k == 5 && it == BREAK_AT) {      /* A goes while its product waits */
        TU_CALL(deso_spmat_destroy(&l->A));
        l->A = l->A2;
        bump_diagonal(&s->A);
    }
    TU_CALL(deso_sdiv(l->alpha, l->rr, l->pq));
    TU_CALL(deso_daxpy(n, l->alpha, l->p, 1, l->x, 1));
    if (k == 2 && it == BREAK_AT)        /* a scalar read in the middle    */
        TU_CHECK(tu_srel(tu_value(l->alpha), s->alpha) < 1e-12);
    if (k == 3 && it == BREAK_AT)        /* a vector read in the middle    */
        tu_expect_vec(l->x, s->x, n, 1e-12);
}

static void deso_rest(deso_ctx *ctx, loop *l, int64_t n)
{
    TU_CALL(deso_op_apply(l->S, l->r, l->z));
    TU_CALL(deso_dusmv(ctx, DESO_TRANS, 0.5, l->A, l->z, 1.0, l->w));
    TU_CALL(deso_sneg(l->alpha, l->alpha));
    TU_CALL(deso_daxpy(n, l->alpha, l->q, 1, l->r, 1));
    TU_CALL(deso_ddot(n, l->r, 1, l->r, 1, l->rrnew));
    TU_CALL(deso_sdiv(l->beta, l->rrnew, l->rr));
    TU_CALL(deso_dscal(n, l->beta, l->p, 1));
    TU_CALL(deso_daxpy(n, 1.0, l->r, 1, l->p, 1));
    TU_CALL(deso_sset(l->rr, l->rrnew));
}

static void seq_make(seq *s, int64_t n, uint64_t seed)
{
    tu_rng rng = {seed + 1};
    s->scale = 2.0;
    s->A = make_matrix(n, seed);
    double **vs[] = {&s->x, &s->r, &s->p, &s->q, &s->w, &s->z};
    for (int k = 0; k < 6; k++) *vs[k] = calloc((size_t)n, sizeof(double));
    tu_fill(&rng, s->r, n);
    memcpy(s->p, s->r, (size_t)n * sizeof(double));
    s->rr = 0.0;
    for (int64_t i = 0; i < n; i++) s->rr += s->r[i] * s->r[i];
}

static void seq_free(seq *s)
{
    double *a[] = {s->x, s->r, s->p, s->q, s->w, s->z};
    for (int k = 0; k < 6; k++) free(a[k]);
    glob_free(&s->A);
}

static void loop_make(deso_ctx *ctx, int64_t n, const seq *s, loop *l)
{
    l->A = spmat_of(ctx, &s->A);
    l->scale[0] = 2.0;
    l->scale[1] = 3.0;
    l->S = op_of(ctx, n, &l->scale[0]);
    TU_CALL(deso_vec_create(ctx, n, &l->x));
    TU_CALL(deso_vec_create(ctx, n, &l->z));
    TU_CALL(deso_vec_from_array(ctx, n, s->r, DESO_ALL_RANKS, &l->r));
    TU_CALL(deso_vec_from_array(ctx, n, s->p, DESO_ALL_RANKS, &l->p));
    TU_CALL(deso_vec_create(ctx, n, &l->q));
    TU_CALL(deso_vec_create(ctx, n, &l->w));
    deso_scalar **sc[] = {&l->rr, &l->rrnew, &l->pq, &l->alpha, &l->beta};
    for (int k = 0; k < 5; k++) TU_CALL(deso_scalar_create(ctx, 0.0, sc[k]));
    TU_CALL(deso_ddot(n, l->r, 1, l->r, 1, l->rr));
}

/* The counts a replay must not change, from st0 to st.                  */
static void counts_since(deso_stats *st, const deso_stats *st0)
{
    int64_t *now[] = {&st->bytes_p2p, &st->msgs_p2p, &st->bytes_collective,
                      &st->msgs_collective, &st->plans_optimised,
                      &st->plans_replayed, &st->nodes_overlapped,
                      &st->forces_replayed, &st->replays_broken};
    const int64_t then[] = {st0->bytes_p2p, st0->msgs_p2p,
                            st0->bytes_collective, st0->msgs_collective,
                            st0->plans_optimised, st0->plans_replayed,
                            st0->nodes_overlapped, st0->forces_replayed,
                            st0->replays_broken};
    for (int j = 0; j < 9; j++) *now[j] -= then[j];
}

/* The loop of variant k on context ctx: its results (x, r, p, w, z,
 * then rr) into out (5 n + 1 doubles), and its statistics.              */
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
        if (it == BREAK_AT) remake(ctx, &l, &s, n, k);
        if (it == BREAK_AT) TU_CALL(deso_stats_get(&mid));
        seq_half(&s);
        deso_half(ctx, &l, n, k, it, &s);
        seq_rest(&s);
        deso_rest(ctx, &l, n);
        TU_CHECK(tu_srel(tu_value(l.rr), s.rr) < 1e-12);
    }
    double *want[] = {s.x, s.r, s.p, s.w, s.z};
    deso_vec *got[] = {l.x, l.r, l.p, l.w, l.z};
    for (int v = 0; v < 5; v++) {
        tu_fetch(got[v], out + v * n);
        TU_CHECK(tu_relerr(out + v * n, want[v], n) < 1e-12);
    }
    out[5 * n] = tu_value(l.rr);
    TU_CALL(deso_stats_get(st));
    *replayed_at = mid.forces_replayed - st0.forces_replayed;
    counts_since(st, &st0);
    TU_CALL(deso_spmat_destroy(&l.A));
    TU_CALL(deso_op_destroy(&l.S));
    seq_free(&s);
}

/* Variant k both ways: bitwise the same, counted the same.              */
static void compare(const tu_case *c, deso_partition part, int64_t n, int k,
                    uint64_t seed)
{
    size_t len = (size_t)(5 * n + 1);
    double *on = calloc(len, sizeof *on), *off = calloc(len, sizeof *off);
    deso_stats a, b;
    int64_t a_mid, b_mid;
    opt_params params;
    deso_ctx *ctx = replay_ctx(c, part, 1, &params);
    run_loop(ctx, n, k, seed, on, &a, &a_mid);
    TU_CALL(deso_finalize(&ctx));
    ctx = replay_ctx(c, part, 0, &params);
    run_loop(ctx, n, k, seed, off, &b, &b_mid);
    TU_CALL(deso_finalize(&ctx));
    TU_CHECK(memcmp(on, off, len * sizeof *on) == 0);
    replay_counts_agree(&a, a_mid, &b, k != 0, ITERS);
    free(on);
    free(off);
}

static void test_sparse_replay_matches_recording(void **state)
{
    (void)state;
    const int64_t nbs[] = {3, 2};
    tu_case cases[TU_MAX_CASES];
    int nc = tu_cases(nbs, 2, cases);
    for (int ci = 0; ci < nc; ci++) {
        int64_t n = cases[ci].nb == 3 ? 37 : (ci % 2 ? 5 : 2);
        for (int k = 0; k < VARIANTS; k++) {
            /* the fast group: one variant per case, in turn from an
             * offset of P, so that P = 1, 2, 3 together run them all   */
            if (!tu_long() && k != (ci + tu_size() + 1) % VARIANTS)
                continue;
            /* (a new matrix gets new facts by the trace graph, which
             * alone break the replay: variant 5 takes blocks in the fast
             * group at P = 2, so that the matrix itself must be compared)*/
            bool ntg = tu_long() ? (ci + k / 2) % 2 : ci % 3 == 1;
            deso_partition part = ntg ? DESO_PARTITION_NTG
                                      : DESO_PARTITION_BLOCK;
            tu_label("%s, n %lld, variant %d, %s rows",
                     tu_case_name(&cases[ci]), (long long)n, k,
                     part == DESO_PARTITION_NTG ? "ntg" : "block");
            compare(&cases[ci], part, n, k,
                    7u + (uint64_t)(ci * VARIANTS + k));
        }
        tu_case_end();
    }
    TU_SYNC();
}

TU_MAIN(cmocka_unit_test(test_sparse_replay_matches_recording))
