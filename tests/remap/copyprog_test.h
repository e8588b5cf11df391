/* What the copy-program tests share: one process plays every rank of a
 * plan, packing each send with its program and unpacking it with the
 * matching receive's, whole or a window at a time as the shared-memory
 * rings run them.  The including test may set CP_TEST_SEED.             */
#ifndef DESO_TESTS_REMAP_COPYPROG_TEST_H
#define DESO_TESTS_REMAP_COPYPROG_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "deso/remap/copyprog.h"
#include "placement/remap.h"

#ifndef CP_TEST_SEED
#define CP_TEST_SEED 0x9e3779b97f4a7c15ull
#endif

static uint64_t rng = CP_TEST_SEED;
static inline int64_t rnd(int64_t n)   /* uniform-ish in [0, n)            */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)n);
}

static inline const pl_msg *find_recv(const pl_remap_rank *r, int peer,
                                      int step)
{
    for (int i = 0; i < r->nrecv; i++)
        if (r->recv[i].peer == peer && r->recv[i].step == step)
            return &r->recv[i];
    return NULL;
}

/* How the programs run: whole, between arrays stored with ld = local
 * rows, as compiled (recompiled when small); or, `built`, as built
 * (loops kept), between arrays whose leading dimension exceeds their
 * rows by `pad`, every message a window of `span` elements at a time
 * through a buffer that holds one window, as the shared-memory rings
 * run them.  looped counts the programs that loop over columns; runs:
 * run whole, each send must also pack what the runs pl_remap_rank_runs
 * spelt out pack.                                                       */
typedef struct how {
    bool built;
    int64_t pad, span;
    int looped;
    bool runs;
} how;

static inline int64_t ld_of(int64_t rows)
{
    return rows > 1 ? rows : 1;
}

/* Packs program a from src into windows and unpacks each with b, as the
 * rings do (every other window packed as the fused pass packs it).     */
static inline void windows(const deso__copy *a, const deso__copy *b,
                           int64_t count, const double *src, int64_t rows,
                           int64_t ld, double *dst, int64_t qrows,
                           int64_t qld, int64_t span)
{
    double *win = malloc((size_t)(span + 1) * sizeof *win);
    assert_non_null(win);
    deso__cp_pos at = DESO__CP_START, bt = DESO__CP_START;
    for (int64_t k = 0; k * span < count; k++) {
        win[span] = -7.0;
        double *base = deso__cp_packed_base(win, k * span);
        int64_t want = count - k * span < span ? count - k * span : span;
        assert_int_equal(deso__cp_run_window(a, &at, span, src, rows, ld,
                                             base, INT64_MAX, INT64_MAX,
                                             k % 2 == 1), want);
        deso__cp_fence();
        assert_true(win[span] == -7.0);
        assert_int_equal(deso__cp_run_window(b, &bt, span, base, INT64_MAX,
                                             INT64_MAX, dst, qrows, qld,
                                             false), want);
    }
    free(win);
}

/* The runs pl_remap_rank_runs spelt out for message m (their columns
 * walked by pl_cols_next) pack what its program packed into buf.      */
static inline void runs_agree(const pl_msg *m, const double *src,
                              const double *buf)
{
    int64_t k = 0;
    for (int64_t u = 0; u < m->nruns; u++)
        for (int64_t x = 0; x < m->runs[u].len; x++, k++)
            assert_true(k < m->count &&
                        src[m->runs[u].off + x] == buf[k]);
    assert_int_equal(k, m->count);
}

/* Moves message sm from rank r to its peer: packed whole, or by windows. */
static inline void one_message(const pl_remap_rank *p, int r,
                               const pl_msg *sm, double **src, double **dst,
                               how *h)
{
    int q = sm->peer;
    const pl_msg *rm = find_recv(&p[q], r, sm->step);
    assert_non_null(rm);
    assert_int_equal(rm->count, sm->count);
    int64_t lds = ld_of(p[r].src_lrows), qld = ld_of(p[q].dst_lrows);
    deso__copy a, b;
    assert_int_equal(deso__cp_from_msg(sm, DESO__CP_SEND, lds, 0, &a),
                     DESO_OK);
    assert_int_equal(deso__cp_from_msg(rm, DESO__CP_RECV, qld, 0, &b),
                     DESO_OK);
    assert_int_equal(a.elems, sm->count);
    assert_int_equal(b.elems, sm->count);
    h->looped += deso__cp_looped(&a) + deso__cp_looped(&b);
    if (h->built) {
        windows(&a, &b, sm->count, src[r], p[r].src_lrows, lds + h->pad,
                dst[q], p[q].dst_lrows, qld + h->pad, h->span);
    } else {
        double *buf = malloc((size_t)(sm->count + 1) * sizeof *buf);
        assert_non_null(buf);
        buf[sm->count] = -7.0;               /* nothing writes past   */
        deso__cp_run(&a, src[r], lds, lds, buf, INT64_MAX, INT64_MAX);
        assert_true(buf[sm->count] == -7.0);
        if (h->runs) runs_agree(sm, src[r], buf);
        deso__cp_run(&b, buf, INT64_MAX, INT64_MAX, dst[q], qld, qld);
        free(buf);
    }
    deso__cp_free(&a);
    deso__cp_free(&b);
}

/* Rank p's self copy.                                                  */
static inline void self_copy(const pl_remap_rank *p, const double *src,
                             double *dst, how *h)
{
    int64_t lds = ld_of(p->src_lrows), ldd = ld_of(p->dst_lrows);
    deso__copy c;
    assert_int_equal(deso__cp_from_msg(&p->self, DESO__CP_SELF, lds, ldd,
                                       &c), DESO_OK);
    assert_int_equal(c.elems, p->self.count);
    h->looped += deso__cp_looped(&c);
    if (h->built)
        deso__cp_run(&c, src, p->src_lrows, lds + h->pad, dst, p->dst_lrows,
                     ldd + h->pad);
    else
        deso__cp_run(&c, src, lds, lds, dst, ldd, ldd);
    deso__cp_free(&c);
}

/* Every rank's self copy and sends, src and dst indexed by rank.       */
static inline void run_ranks(const pl_remap_rank *p, int C, double **src,
                             double **dst, how *h)
{
    for (int r = 0; r < C; r++) {
        if (p[r].has_self) self_copy(&p[r], src[r], dst[r], h);
        for (int i = 0; i < p[r].nsend; i++)
            one_message(p, r, &p[r].send[i], src, dst, h);
    }
}

#endif
