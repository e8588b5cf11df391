/* The cost of a sparse product's placement (see ntg.h): the halo it needs
 * and the load of its busiest rank, counted exactly from the pattern.     */
#include "optimizer/ntg.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

typedef struct rank_load {
    int64_t bytes, msgs, nnz, rows;
} rank_load;

/* The distinct (receiver, column) pairs of the halo as a set of keys
 * receiver * ncols + column + 1 (open addressing, 0 empty, at most half
 * full): as large as the halo, not as the matrix or n times the ranks.   */
struct opt_sparse_tally {
    int64_t ncols;
    int nparts;
    rank_load *load;         /* nparts                                     */
    unsigned char *heard;    /* nparts x nparts: receiver r from sender s  */
    uint64_t *set;
    int64_t cap, used;       /* cap a power of two                         */
};

void opt_sparse_tally_free(opt_sparse_tally *t)
{
    if (!t) return;
    free(t->load);
    free(t->heard);
    free(t->set);
    free(t);
}

deso_err opt_sparse_tally_begin(int64_t ncols, int nparts,
                                opt_sparse_tally **out)
{
    DESO_CHECK(out != NULL, DESO_ENULL, "sparse cost: NULL");
    *out = NULL;
    DESO_CHECK(nparts >= 1 && ncols >= 0, DESO_EINVAL, "sparse cost: %d ranks,"
               " %lld columns", nparts, (long long)ncols);
    opt_sparse_tally *t = deso__calloc(1, sizeof *t);
    if (t != NULL) {
        t->ncols = ncols;
        t->nparts = nparts;
        t->cap = 1024;
        t->load = deso__calloc((size_t)nparts, sizeof *t->load);
        t->heard = deso__calloc((size_t)nparts * (size_t)nparts, 1);
        t->set = deso__calloc((size_t)t->cap, sizeof *t->set);
    }
    if (!t || !t->load || !t->heard || !t->set) {
        opt_sparse_tally_free(t);
        return deso__fail(DESO_ENOMEM, "sparse cost: %d ranks", nparts);
    }
    *out = t;
    return DESO_OK;
}

static int64_t slot_of(const uint64_t *set, int64_t cap, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    int64_t at = (int64_t)(h >> 20) & (cap - 1);
    while (set[at] != 0 && set[at] != key) at = (at + 1) & (cap - 1);
    return at;
}

static deso_err set_grow(opt_sparse_tally *t)
{
    int64_t cap = 2 * t->cap;
    uint64_t *set = deso__calloc((size_t)cap, sizeof *set);
    DESO_CHECK(set != NULL, DESO_ENOMEM, "sparse cost: %lld halo entries",
               (long long)t->used);
    for (int64_t k = 0; k < t->cap; k++)
        if (t->set[k] != 0) set[slot_of(set, cap, t->set[k])] = t->set[k];
    free(t->set);
    t->set = set;
    t->cap = cap;
    return DESO_OK;
}

/* Whether (receiver r, column j) is new to the halo (then added).        */
static deso_err set_add(opt_sparse_tally *t, int r, int64_t j, bool *added)
{
    if (2 * (t->used + 1) > t->cap) DESO_TRY(set_grow(t));
    uint64_t key = (uint64_t)r * (uint64_t)t->ncols + (uint64_t)j + 1;
    int64_t at = slot_of(t->set, t->cap, key);
    *added = t->set[at] == 0;
    if (*added) {
        t->set[at] = key;
        t->used++;
    }
    return DESO_OK;
}

/* Row i's entries, computed on rank q: each distinct foreign column of
 * q's rows is 8 bytes received, each distinct sender one message.        */
static deso_err tally_row(opt_sparse_tally *t, const pl_csr *a, int64_t r,
                          int q, const pl_owner *cols)
{
    rank_load *ld = &t->load[q];
    ld->rows++;
    ld->nnz += a->rowptr[r + 1] - a->rowptr[r];
    for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++) {
        int64_t j = a->col[e];
        int s = cols->rank(j, cols->arg);
        DESO_CHECK(s >= 0 && s < t->nparts && j >= 0 && j < t->ncols,
                   DESO_EINVAL, "sparse cost: x_%lld on rank %d of %d",
                   (long long)j, s, t->nparts);
        bool added = false;
        if (s != q) DESO_TRY(set_add(t, q, j, &added));
        if (!added) continue;
        ld->bytes += (int64_t)sizeof(double);
        unsigned char *h = &t->heard[(size_t)q * (size_t)t->nparts + (size_t)s];
        if (!*h) { *h = 1; ld->msgs++; }
    }
    return DESO_OK;
}

deso_err opt_sparse_tally_rows(opt_sparse_tally *t, const pl_csr *a,
                               const pl_owner *rows, const pl_owner *cols)
{
    DESO_CHECK(t && a && rows && cols, DESO_ENULL, "sparse cost: NULL");
    for (int64_t r = 0; r < a->nrows; r++) {
        int64_t i = pl_csr_global_row(a, r);
        int q = rows->rank(i, rows->arg);
        DESO_CHECK(q >= 0 && q < t->nparts, DESO_EINVAL, "sparse cost: row "
                   "%lld on rank %d of %d", (long long)i, q, t->nparts);
        DESO_TRY(tally_row(t, a, r, q, cols));
    }
    return DESO_OK;
}

deso_err opt_sparse_tally_end(opt_sparse_tally *t, const opt_params *prm,
                              double sec_per_nnz, opt_sparse_cost *c)
{
    if (!t || !prm || !c) {
        opt_sparse_tally_free(t);
        return deso__fail(DESO_ENULL, "sparse cost: NULL");
    }
    memset(c, 0, sizeof *c);
    double comm = 0.0;
    for (int q = 0; q < t->nparts; q++) {
        const rank_load *ld = &t->load[q];
        c->halo_bytes += ld->bytes;
        c->halo_msgs += ld->msgs;
        if (ld->bytes > c->max_rank_bytes) c->max_rank_bytes = ld->bytes;
        if (ld->msgs > c->max_rank_msgs) c->max_rank_msgs = ld->msgs;
        if (ld->nnz > c->max_rank_nnz) c->max_rank_nnz = ld->nnz;
        if (ld->rows > c->max_rank_rows) c->max_rank_rows = ld->rows;
        double tm = prm->alpha * (double)ld->msgs + prm->beta * (double)ld->bytes;
        if (tm > comm) comm = tm;
    }
    c->time = comm + sec_per_nnz * (double)c->max_rank_nnz;
    opt_sparse_tally_free(t);
    return DESO_OK;
}

deso_err opt_sparse_cost_eval(const pl_csr *a, const pl_owner *rows,
                              const pl_owner *cols, int nparts,
                              const opt_params *prm, double sec_per_nnz,
                              opt_sparse_cost *c)
{
    DESO_CHECK(a && rows && cols && prm && c, DESO_ENULL, "sparse cost: NULL");
    opt_sparse_tally *t;
    DESO_TRY(opt_sparse_tally_begin(a->ncols, nparts, &t));
    deso_err e = opt_sparse_tally_rows(t, a, rows, cols);
    if (e != DESO_OK) {
        opt_sparse_tally_free(t);
        return e;
    }
    return opt_sparse_tally_end(t, prm, sec_per_nnz, c);
}

deso_err opt_sparse_move_cost(const int32_t *from, const int32_t *to,
                              int64_t n, int nparts, const opt_params *prm,
                              opt_sparse_cost *c)
{
    int64_t *pair = deso__calloc((size_t)nparts * (size_t)nparts, sizeof *pair);
    DESO_CHECK(pair != NULL, DESO_ENOMEM, "move cost: %d ranks", nparts);
    for (int64_t i = 0; i < n; i++)
        if (from[i] != to[i]) pair[(int64_t)to[i] * nparts + from[i]]++;
    double worst = 0.0;
    for (int r = 0; r < nparts; r++) {
        int64_t bytes = 0, msgs = 0;
        for (int s = 0; s < nparts; s++) {
            bytes += pair[(int64_t)r * nparts + s] * (int64_t)sizeof(double);
            msgs += pair[(int64_t)r * nparts + s] > 0;
        }
        c->halo_bytes += bytes;
        c->halo_msgs += msgs;
        double t = prm->alpha * (double)msgs + prm->beta * (double)bytes;
        if (t > worst) worst = t;
    }
    c->time += worst;
    free(pair);
    return DESO_OK;
}

int opt_sparse_cheaper(const opt_sparse_cost *a, const opt_sparse_cost *b)
{
    return a->time < b->time;
}
