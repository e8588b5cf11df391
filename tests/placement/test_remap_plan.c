/* pl_remap_plan_rank, simulated in one process: every rank's plan is
 * built, each source local array holds the global index of its elements,
 * the plans are executed by copying through the runs (each send matched
 * with the receive of the same pair and step), and every target element
 * must hold its global index, written exactly once, with the sentinel
 * beyond the arrays untouched.                                              */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "deso_errors.h"
#include "remap.h"
#include "remap_impl.h"

#define MAXC 8
#define GUARD 8

/* Plans one rank and spells its messages out as runs: the runs are what
 * these tests check against the index maps.                              */
static deso_err plan_runs(const pl_bc_layout *src, const pl_bc_layout *dst,
                          int C, pl_sched_kind kind, int me,
                          pl_remap_rank *out)
{
    deso_err e = pl_remap_plan_rank(src, dst, C, kind, me, out);
    return e == DESO_OK ? pl_remap_rank_runs(out) : e;
}

static uint64_t rng = 0x853c49e6748fea9bull;
static int64_t rnd(int64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

static int lrank(const pl_bc_layout *l, int pos)
{
    return l->ranks ? l->ranks[pos] : pos;
}

static int lpos(const pl_bc_layout *l, int rank)
{
    for (int i = 0; i < l->pr * l->pc; i++)
        if (lrank(l, i) == rank) return i;
    return -1;
}

/* Global (row, column) of local offset `off` of rank at position pos.     */
static void to_global(const pl_bc_layout *l, int pos, int64_t ld, int64_t off,
                      int64_t *i, int64_t *j)
{
    int64_t lr = off % ld, lc = off / ld;
    if (l->replicated) {
        *i = lr;
        *j = lc;
        return;
    }
    int a = pos / l->pc, b = pos % l->pc;
    *i = ((lr / l->mb) * l->pr + a) * l->mb + lr % l->mb;
    *j = ((lc / l->nb) * l->pc + b) * l->nb + lc % l->nb;
}

typedef struct stats {
    int64_t cases, msgs, elems_sent, self_elems;
} stats;

static void run_case(const pl_bc_layout *src, const pl_bc_layout *dst, int C,
                     pl_sched_kind kind, stats *st)
{
    pl_remap_rank plan[MAXC];
    double *sa[MAXC], *da[MAXC];
    int *wcount[MAXC];
    int64_t m = src->m, n = src->n;
    bool ident = src->replicated == dst->replicated && src->pr == dst->pr &&
                 src->pc == dst->pc &&
                 (src->replicated || (src->mb == dst->mb && src->nb == dst->nb));
    for (int i = 0; ident && i < src->pr * src->pc; i++)
        ident = lrank(src, i) == lrank(dst, i);
    for (int r = 0; r < C; r++) {
        deso_err e = plan_runs(src, dst, C, kind, r, &plan[r]);
        if (e != DESO_OK) fail_msg("plan failed on rank %d: %s", r, deso_last_error());
        int64_t lr, lc;
        pl_bc_local_shape(src, r, &lr, &lc);
        assert_int_equal(plan[r].src_lrows, lr);
        assert_int_equal(plan[r].src_lcols, lc);
        int sp = lpos(src, r);
        int64_t ld = lr > 1 ? lr : 1;
        sa[r] = malloc((size_t)(lr * lc + GUARD) * sizeof(double));
        for (int64_t o = 0; o < lr * lc + GUARD; o++) {
            int64_t gi, gj;
            if (o >= lr * lc) {
                sa[r][o] = -1.0;
                continue;
            }
            to_global(src, sp, ld, o, &gi, &gj);
            assert_true(gi < m && gj < n);
            sa[r][o] = (double)(gj * m + gi);
        }
        pl_bc_local_shape(dst, r, &lr, &lc);
        assert_int_equal(plan[r].dst_lrows, lr);
        assert_int_equal(plan[r].dst_lcols, lc);
        da[r] = malloc((size_t)(lr * lc + GUARD) * sizeof(double));
        wcount[r] = calloc((size_t)(lr * lc + 1), sizeof(int));
        for (int64_t o = 0; o < lr * lc + GUARD; o++) da[r][o] = NAN;
        assert_int_equal(plan[r].nsteps, plan[0].nsteps);
        if (sp < 0) assert_int_equal(plan[r].nsend, 0);
        if (lpos(dst, r) < 0) assert_int_equal(plan[r].nrecv, 0);
        if (ident) {
            assert_int_equal(plan[r].nsend, 0);
            assert_int_equal(plan[r].nrecv, 0);
        }
    }
    double *buf = malloc((size_t)(m * n + 1) * sizeof *buf);
    char used[MAXC][64];
    memset(used, 0, sizeof used);
    for (int p = 0; p < C; p++) {
        const pl_remap_rank *P = &plan[p];
        int64_t ssz = P->src_lrows * P->src_lcols;
        int64_t maxm = 0;
        for (int k = 0; k < P->nsend; k++) {
            const pl_msg *s = &P->send[k];
            assert_true(s->peer >= 0 && s->peer < C && s->peer != p);
            assert_true(s->step >= 0 && s->step < P->nsteps);
            if (k > 0) assert_true(s->step > P->send[k - 1].step);   /* one send per step */
            if (s->count > maxm) maxm = s->count;
            /* pack */
            int64_t c = 0;
            for (int64_t u = 0; u < s->nruns; u++) {
                assert_true(s->runs[u].len > 0);
                assert_true(s->runs[u].off >= 0 && s->runs[u].off + s->runs[u].len <= ssz);
                for (int64_t x = 0; x < s->runs[u].len; x++) buf[c++] = sa[p][s->runs[u].off + x];
            }
            assert_int_equal(c, s->count);
            assert_true(c > 0);
            /* the matching receive: same pair, same step */
            const pl_remap_rank *Q = &plan[s->peer];
            int found = -1;
            for (int h = 0; h < Q->nrecv; h++)
                if (Q->recv[h].peer == p && Q->recv[h].step == s->step) {
                    assert_int_equal(found, -1);
                    found = h;
                }
            assert_true(found >= 0);
            assert_false(used[s->peer][found]);
            used[s->peer][found] = 1;
            const pl_msg *rv = &Q->recv[found];
            assert_int_equal(rv->count, s->count);
            int64_t dsz = Q->dst_lrows * Q->dst_lcols;
            c = 0;
            for (int64_t u = 0; u < rv->nruns; u++) {
                assert_true(rv->runs[u].off >= 0 && rv->runs[u].off + rv->runs[u].len <= dsz);
                for (int64_t x = 0; x < rv->runs[u].len; x++) {
                    da[s->peer][rv->runs[u].off + x] = buf[c++];
                    wcount[s->peer][rv->runs[u].off + x]++;
                }
            }
            assert_int_equal(c, rv->count);
            st->msgs++;
            st->elems_sent += c;
        }
        for (int k = 0; k < P->nrecv; k++) {
            if (k > 0) assert_true(P->recv[k].step > P->recv[k - 1].step);  /* one receive per step */
            if (P->recv[k].count > maxm) maxm = P->recv[k].count;
        }
        assert_int_equal(P->max_msg, maxm);
        int64_t dsz = P->dst_lrows * P->dst_lcols;
        for (int64_t u = 0; u < P->nself; u++) {
            pl_run a = P->self_src[u], b = P->self_dst[u];
            assert_int_equal(a.len, b.len);
            assert_true(a.off >= 0 && a.off + a.len <= ssz);
            assert_true(b.off >= 0 && b.off + b.len <= dsz);
            for (int64_t x = 0; x < a.len; x++) {
                da[p][b.off + x] = sa[p][a.off + x];
                wcount[p][b.off + x]++;
            }
            st->self_elems += a.len;
        }
    }
    for (int q = 0; q < C; q++) {
        for (int h = 0; h < plan[q].nrecv; h++) assert_true(used[q][h]);
        int qp = lpos(dst, q);
        int64_t lr = plan[q].dst_lrows, lc = plan[q].dst_lcols, ld = lr > 1 ? lr : 1;
        for (int64_t o = 0; o < lr * lc; o++) {
            int64_t gi, gj;
            to_global(dst, qp, ld, o, &gi, &gj);
            if (da[q][o] != (double)(gj * m + gi) || wcount[q][o] != 1)
                fail_msg("rank %d offset %lld: got %g (written %d times), want %lld",
                         q, (long long)o, da[q][o], wcount[q][o],
                         (long long)(gj * m + gi));
        }
        for (int64_t o = lr * lc; o < lr * lc + GUARD; o++) assert_true(isnan(da[q][o]));
    }
    for (int r = 0; r < C; r++) {
        pl_remap_rank_free(&plan[r]);
        free(sa[r]);
        free(da[r]);
        free(wcount[r]);
    }
    free(buf);
    st->cases++;
}

static const int64_t extents[] = {0, 1, 2, 3, 5, 7, 11, 13, 17, 23, 31, 37};

static int64_t rand_extent(int64_t cap)
{
    if (rnd(3) == 0) return 1 + rnd(cap);
    int64_t e = extents[rnd(sizeof extents / sizeof *extents)];
    return e > cap ? cap : e;
}

static void rand_layout(pl_bc_layout *l, int *rk, int C, int64_t m, int64_t n)
{
    memset(l, 0, sizeof *l);
    l->m = m;
    l->n = n;
    l->replicated = rnd(7) == 0;
    int np = 1 + (int)rnd(C);
    int divs[MAXC], nd = 0;
    for (int d = 1; d <= np; d++) if (np % d == 0) divs[nd++] = d;
    l->pr = divs[rnd(nd)];
    l->pc = np / l->pr;
    l->mb = 1 + rnd(rnd(2) ? 4 : (m > 0 ? m + 1 : 2));
    l->nb = 1 + rnd(rnd(2) ? 3 : (n > 0 ? n + 1 : 2));
    if (rnd(3) == 0) {
        l->ranks = NULL;
        return;
    }
    int perm[MAXC];
    for (int i = 0; i < C; i++) perm[i] = i;
    for (int i = C - 1; i > 0; i--) {
        int j = (int)rnd(i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    memcpy(rk, perm, (size_t)np * sizeof *rk);
    l->ranks = rk;
}

static void test_random_plans(void **state)
{
    (void)state;
    stats st = {0};
    int rs[MAXC], rd[MAXC];
    for (int t = 0; t < 1500; t++) {
        int C = 1 + (int)rnd(MAXC);
        int64_t m = rand_extent(40), n = rnd(3) == 0 ? 1 : rand_extent(20);
        pl_bc_layout src, dst;
        rand_layout(&src, rs, C, m, n);
        switch (rnd(6)) {
        case 0:                                   /* identical layouts     */
            dst = src;
            break;
        case 1:                                   /* same ranks, new shape */
            rand_layout(&dst, rd, C, m, n);
            if (!src.replicated && !dst.replicated &&
                dst.pr * dst.pc == src.pr * src.pc) dst.ranks = src.ranks;
            break;
        default:
            rand_layout(&dst, rd, C, m, n);
        }
        run_case(&src, &dst, C, (pl_sched_kind)rnd(3), &st);
    }
    print_message("  %lld plans, %lld messages, %lld elements sent, %lld copied locally\n",
                  (long long)st.cases, (long long)st.msgs,
                  (long long)st.elems_sent, (long long)st.self_elems);
}

/* 1 x 4 -> 2 x 2 -> 4 x 1 on the same four ranks, and onto disjoint ones. */
static void test_shape_changes(void **state)
{
    (void)state;
    stats st = {0};
    int shapes[3][2] = {{1, 4}, {2, 2}, {4, 1}};
    int other[4] = {7, 5, 6, 4};
    for (int64_t m = 1; m <= 13; m += 4)
        for (int64_t n = 1; n <= 11; n += 5)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    for (int k = 0; k < 3; k++) {
                        pl_bc_layout s = {m, n, 2, 3, shapes[a][0], shapes[a][1], NULL, false};
                        pl_bc_layout d = {m, n, 3, 2, shapes[b][0], shapes[b][1], NULL, false};
                        run_case(&s, &d, 4, (pl_sched_kind)k, &st);
                        d.ranks = other;
                        run_case(&s, &d, 8, (pl_sched_kind)k, &st);
                    }
}

/* Identical rows: the column pieces are whole columns, which merge.      */
static void test_run_merging(void **state)
{
    (void)state;
    pl_bc_layout s = {8, 6, 4, 1, 2, 3, NULL, false};
    pl_bc_layout d = {8, 6, 4, 2, 2, 3, NULL, false};
    pl_remap_rank r;
    assert_int_equal(plan_runs(&s, &d, 6, PL_SCHED_STEPWISE, 0, &r), DESO_OK);
    /* rank 0 holds rows 0-3, columns 0,3 -> keeps column 0 (one run of 4
     * local copies) and sends column 3 to rank 1 in one run.              */
    assert_int_equal(r.nself, 1);
    assert_int_equal(r.self_src[0].len, 4);
    assert_int_equal(r.nsend, 1);
    assert_int_equal(r.send[0].nruns, 1);
    assert_int_equal(r.send[0].count, 4);
    pl_remap_rank_free(&r);
    /* Identical layouts: one self run over the whole local array.        */
    assert_int_equal(plan_runs(&s, &s, 6, PL_SCHED_GREEDY, 3, &r), DESO_OK);
    assert_int_equal(r.nsend + r.nrecv, 0);
    assert_int_equal(r.nself, 1);
    assert_int_equal(r.self_src[0].len, 4 * 2);
    pl_remap_rank_free(&r);
    pl_remap_rank_free(NULL);
}

/* Replicated source: holders serve themselves, others are spread.       */
static void test_replicated(void **state)
{
    (void)state;
    stats st = {0};
    int holders[3] = {1, 4, 6};
    pl_bc_layout rep = {30, 4, 1, 1, 1, 3, holders, true};
    pl_bc_layout d = {30, 4, 5, 1, 2, 4, NULL, false};
    for (int k = 0; k < 3; k++) run_case(&rep, &d, 8, (pl_sched_kind)k, &st);
    int64_t sent[8] = {0};
    for (int r = 0; r < 8; r++) {
        pl_remap_rank p;
        assert_int_equal(plan_runs(&rep, &d, 8, PL_SCHED_GREEDY, r, &p), DESO_OK);
        for (int i = 0; i < p.nsend; i++) sent[r] += p.send[i].count;
        if (r == 1 || r == 4 || r == 6) assert_int_equal(p.nrecv, 0);  /* own copy */
        else assert_int_equal(p.nsend, 0);
        pl_remap_rank_free(&p);
    }
    /* Five receivers of 15 elements each over three holders: 2, 2, 1.    */
    int64_t mx = 0, mn = INT64_MAX;
    for (int i = 0; i < 3; i++) {
        if (sent[holders[i]] > mx) mx = sent[holders[i]];
        if (sent[holders[i]] < mn) mn = sent[holders[i]];
    }
    assert_true(mx - mn <= 15);
    /* Replicated target, and replicated to replicated.                   */
    pl_bc_layout rt = {30, 4, 1, 1, 1, 3, holders, true};
    int hs2[2] = {6, 0};
    pl_bc_layout rt2 = {30, 4, 1, 1, 2, 1, hs2, true};
    for (int k = 0; k < 3; k++) {
        run_case(&d, &rt, 8, (pl_sched_kind)k, &st);
        run_case(&rep, &rt2, 8, (pl_sched_kind)k, &st);
        run_case(&rep, &rt, 8, (pl_sched_kind)k, &st);
    }
}

/* 2^33 elements, planned only: message lengths against the formulas.     */
static void test_huge_vector(void **state)
{
    (void)state;
    const int64_t M = (int64_t)1 << 33;
    /* CYCLIC(4096) on 3 -> CYCLIC(4096) on 5: L = 61440, many whole slices. */
    int64_t slice[15], L, tail[15];
    assert_int_equal(pl_remap_slice(3, 4096, 5, 4096, slice, &L), DESO_OK);
    memset(tail, 0, sizeof tail);
    for (int64_t i = (M / L) * L; i < M; i++) tail[((i / 4096) % 3) * 5 + (i / 4096) % 5]++;
    int d5[5] = {7, 6, 5, 4, 3};
    pl_bc_layout s = {M, 1, 4096, 1, 3, 1, NULL, false};
    pl_bc_layout d = {M, 1, 4096, 1, 5, 1, d5, false};
    pl_remap_rank r;
    for (int me = 0; me < 8; me += 3) {   /* ranks 0 and 3: send / receive */
        assert_int_equal(plan_runs(&s, &d, 8, PL_SCHED_STEPWISE, me, &r), DESO_OK);
        for (int i = 0; i < r.nsend; i++) {
            int q = lpos(&d, r.send[i].peer);
            assert_int_equal(r.send[i].count, (M / L) * slice[me * 5 + q] + tail[me * 5 + q]);
        }
        for (int i = 0; i < r.nrecv; i++) {
            int p = r.recv[i].peer, q = lpos(&d, me);
            assert_int_equal(r.recv[i].count, (M / L) * slice[p * 5 + q] + tail[p * 5 + q]);
        }
        assert_int_equal(r.nsend + r.nrecv, me == 0 ? 5 : 3);
        pl_remap_rank_free(&r);
    }
    /* BLOCK on 3 -> BLOCK on 7: lcm(P r, Q s) overflows, lengths are the
     * overlaps of the blocks, one run each.                                */
    int64_t r3 = (M + 2) / 3, r7 = (M + 6) / 7;
    pl_bc_layout b3 = {M, 1, r3, 1, 3, 1, NULL, false};
    pl_bc_layout b7 = {M, 1, r7, 1, 7, 1, NULL, false};
    assert_int_equal(pl_remap_slice(3, r3, 7, r7, NULL, &L), DESO_EOVERFLOW);
    for (int me = 0; me < 7; me++) {
        assert_int_equal(plan_runs(&b3, &b7, 7, PL_SCHED_GREEDY, me, &r), DESO_OK);
        for (int i = 0; i < r.nsend; i++) {
            int q = r.send[i].peer;
            int64_t lo = me * r3 > q * r7 ? me * r3 : q * r7;
            int64_t hi = (me + 1) * r3 < (q + 1) * r7 ? (me + 1) * r3 : (q + 1) * r7;
            if (hi > M) hi = M;
            assert_int_equal(r.send[i].count, hi - lo);
            assert_int_equal(r.send[i].nruns, 1);
        }
        pl_remap_rank_free(&r);
    }
}

static void expect(deso_err got, deso_err want)
{
    assert_int_equal(got, want);
    assert_non_null(strstr(deso_last_error(), "pl_remap_plan_rank"));
}

static void test_bad_input(void **state)
{
    (void)state;
    pl_remap_rank r;
    int dup[4] = {0, 1, 1, 2}, out[2] = {0, 9};
    pl_bc_layout ok = {10, 3, 2, 2, 2, 1, NULL, false};
    pl_bc_layout b = ok;
    b.mb = 0;
    expect(pl_remap_plan_rank(&b, &ok, 4, PL_SCHED_STEPWISE, 0, &r), DESO_EINVAL);
    b = ok;
    b.nb = -2;
    expect(pl_remap_plan_rank(&ok, &b, 4, PL_SCHED_STEPWISE, 0, &r), DESO_EINVAL);
    b = ok;
    b.pr = 2;
    b.pc = 2;
    b.ranks = dup;
    expect(pl_remap_plan_rank(&ok, &b, 4, PL_SCHED_STEPWISE, 0, &r), DESO_EINVAL);
    b = ok;
    b.ranks = out;
    expect(pl_remap_plan_rank(&b, &ok, 4, PL_SCHED_STEPWISE, 0, &r), DESO_EINVAL);
    b = ok;
    b.pr = 5;
    expect(pl_remap_plan_rank(&b, &ok, 4, PL_SCHED_STEPWISE, 0, &r), DESO_EINVAL);
    b = ok;
    b.m = 11;
    expect(pl_remap_plan_rank(&ok, &b, 4, PL_SCHED_STEPWISE, 0, &r), DESO_ESIZE);
    b = ok;
    b.n = -1;
    expect(pl_remap_plan_rank(&b, &b, 4, PL_SCHED_STEPWISE, 0, &r), DESO_ESIZE);
    expect(pl_remap_plan_rank(&ok, &ok, 4, PL_SCHED_STEPWISE, 4, &r), DESO_EINVAL);
    expect(pl_remap_plan_rank(&ok, &ok, 4, (pl_sched_kind)5, 0, &r), DESO_EINVAL);
    expect(pl_remap_plan_rank(NULL, &ok, 4, PL_SCHED_STEPWISE, 0, &r), DESO_ENULL);
    assert_int_equal(r.nsend + r.nrecv, 0);   /* left empty on error       */
    assert_null(r.send);
    pl_remap_rank_free(&r);
    int64_t lr = 5, lc = 5;
    pl_bc_local_shape(&ok, 3, &lr, &lc);      /* rank 3 is not in the set  */
    assert_int_equal(lr, 0);
    assert_int_equal(lc, 0);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_random_plans),
        cmocka_unit_test(test_shape_changes),
        cmocka_unit_test(test_run_merging),
        cmocka_unit_test(test_replicated),
        cmocka_unit_test(test_huge_vector),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
