/* Spelling a planned remap out as runs of the local arrays (remap.h,
 * pl_remap_rank_runs): the rows x columns product of each message's
 * per-period description, in increasing global column-major order on both
 * sides, adjacent runs merged.  O(runs): for index-list consumers and for
 * tests that check plans against brute force; planning itself never does
 * this.                                                                   */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"
#include "placement/remap.h"

/* A growing run list; merges a run that continues the previous one (on
 * both sides when `pair`: a self copy's source and target runs).        */
typedef struct runs {
    pl_run *r, *r2;
    int64_t n, cap;
} runs;

static bool grow(runs *R, bool pair)
{
    int64_t nc = R->cap ? 2 * R->cap : 8;
    pl_run *a = deso__realloc(R->r, (size_t)nc * sizeof *a);
    if (!a) return false;
    R->r = a;
    if (pair) {
        pl_run *b = deso__realloc(R->r2, (size_t)nc * sizeof *b);
        if (!b) return false;
        R->r2 = b;
    }
    R->cap = nc;
    return true;
}

static bool runs_push(runs *R, int64_t off, int64_t off2, int64_t len,
                      bool pair)
{
    if (R->n > 0) {
        pl_run *l = &R->r[R->n - 1];
        if (l->off + l->len == off &&
            (!pair || R->r2[R->n - 1].off + R->r2[R->n - 1].len == off2)) {
            l->len += len;
            if (pair) R->r2[R->n - 1].len += len;
            return true;
        }
    }
    if (R->n == R->cap && !grow(R, pair)) return false;
    R->r[R->n] = (pl_run){ off, len };
    if (pair) R->r2[R->n] = (pl_run){ off2, len };
    R->n++;
    return true;
}

/* The runs of message m: mine at i + j ld, theirs at i + j ld2 (pair).  */
static deso_err expand(const pl_msg *m, int64_t ld, int64_t ld2, bool pair,
                       runs *R)
{
    pl_cols_it ci = PL_COLS_IT(m);
    int64_t cg, cm, ct, cl, rg, rm, rt, rl;
    while (pl_cols_next(&ci, &cg, &cm, &ct, &cl))
        for (int64_t t = 0; t < cl; t++) {
            pl_dim_it ri = PL_DIM_IT(&m->rows);
            while (pl_dim_next(&ri, &rg, &rm, &rt, &rl))
                if (!runs_push(R, (cm + t) * ld + rm, (ct + t) * ld2 + rt,
                               rl, pair))
                    return deso__fail(DESO_ENOMEM, "pl_remap_rank_runs: no "
                                      "memory for runs");
        }
    return DESO_OK;
}

static deso_err msgs_runs(pl_msg *m, int n, int64_t ld)
{
    for (int i = 0; i < n; i++) {
        runs R = { 0 };
        deso_err e = expand(&m[i], ld, 0, false, &R);
        if (e != DESO_OK) {
            free(R.r);
            return e;
        }
        m[i].runs = R.r;
        m[i].nruns = R.n;
    }
    return DESO_OK;
}

static void drop_runs(pl_remap_rank *r)
{
    for (int i = 0; i < r->nsend; i++) {
        free(r->send[i].runs);
        r->send[i].runs = NULL;
        r->send[i].nruns = 0;
    }
    for (int i = 0; i < r->nrecv; i++) {
        free(r->recv[i].runs);
        r->recv[i].runs = NULL;
        r->recv[i].nruns = 0;
    }
    free(r->self_src);
    free(r->self_dst);
    r->self_src = r->self_dst = NULL;
    r->nself = 0;
}

deso_err pl_remap_rank_runs(pl_remap_rank *r)
{
    DESO_CHECK(r != NULL, DESO_ENULL, "pl_remap_rank_runs: r is NULL");
    if (r->runs_made) return DESO_OK;
    int64_t lds = r->src_lrows > 1 ? r->src_lrows : 1;
    int64_t ldd = r->dst_lrows > 1 ? r->dst_lrows : 1;
    deso_err e = msgs_runs(r->send, r->nsend, lds);
    if (e == DESO_OK) e = msgs_runs(r->recv, r->nrecv, ldd);
    runs R = { 0 };
    if (e == DESO_OK && r->has_self) e = expand(&r->self, lds, ldd, true, &R);
    r->self_src = R.r;
    r->self_dst = R.r2;
    r->nself = R.n;
    if (e != DESO_OK) {
        drop_runs(r);
        return e;
    }
    r->runs_made = true;
    return DESO_OK;
}
