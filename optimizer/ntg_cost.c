/* The cost of a sparse product's placement (see ntg.h): the halo it needs
 * and the load of its busiest rank, counted exactly from the pattern.     */
#include "optimizer/ntg.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

typedef struct rank_load {
    int64_t bytes, msgs, nnz, rows;
} rank_load;

typedef struct scratch {
    int32_t *seen;          /* per column: the last rank that counted it    */
    int32_t *heard;         /* per rank: the last receiver that counted it  */
    rank_load *load;
} scratch;

static void scratch_free(scratch *s)
{
    free(s->seen);
    free(s->heard);
    free(s->load);
}

static deso_err scratch_alloc(scratch *s, int64_t ncols, int nparts)
{
    s->seen = deso__malloc((size_t)(ncols > 0 ? ncols : 1) * sizeof *s->seen);
    s->heard = deso__malloc((size_t)nparts * sizeof *s->heard);
    s->load = deso__calloc((size_t)nparts, sizeof *s->load);
    if (!s->seen || !s->heard || !s->load) {
        scratch_free(s);
        return deso__fail(DESO_ENOMEM, "sparse cost: %lld columns",
                          (long long)ncols);
    }
    for (int64_t j = 0; j < ncols; j++) s->seen[j] = -1;
    for (int r = 0; r < nparts; r++) s->heard[r] = -1;
    return DESO_OK;
}

/* Rows of a grouped by the rank that computes them: order[], first[].   */
static deso_err rows_by_rank(const pl_csr *a, const pl_owner *rows, int nparts,
                             int64_t **order, int64_t **first)
{
    int64_t *o = deso__malloc((size_t)(a->nrows > 0 ? a->nrows : 1) * sizeof *o);
    int64_t *f = deso__calloc((size_t)nparts + 1, sizeof *f);
    if (!o || !f) {
        free(o);
        free(f);
        return deso__fail(DESO_ENOMEM, "sparse cost: %lld rows", (long long)a->nrows);
    }
    for (int64_t r = 0; r < a->nrows; r++) {
        int q = rows->rank(pl_csr_global_row(a, r), rows->arg);
        if (q < 0 || q >= nparts) {
            free(o);
            free(f);
            return deso__fail(DESO_EINVAL, "sparse cost: row %lld on rank %d "
                              "of %d", (long long)pl_csr_global_row(a, r), q, nparts);
        }
        f[q + 1]++;
    }
    for (int q = 0; q < nparts; q++) f[q + 1] += f[q];
    for (int64_t r = 0; r < a->nrows; r++)
        o[f[rows->rank(pl_csr_global_row(a, r), rows->arg)]++] = r;
    for (int q = nparts; q > 0; q--) f[q] = f[q - 1];
    f[0] = 0;
    *order = o;
    *first = f;
    return DESO_OK;
}

/* Rank me's rows: each distinct foreign column is 8 bytes received, each
 * distinct sender one message.                                            */
static deso_err count_rank(const pl_csr *a, const pl_owner *cols, int me,
                           int nparts, const int64_t *rows, int64_t nrows,
                           scratch *s)
{
    rank_load *ld = &s->load[me];
    ld->rows = nrows;
    for (int64_t k = 0; k < nrows; k++) {
        int64_t r = rows[k];
        ld->nnz += a->rowptr[r + 1] - a->rowptr[r];
        for (int64_t e = a->rowptr[r]; e < a->rowptr[r + 1]; e++) {
            int64_t j = a->col[e];
            int q = cols->rank(j, cols->arg);
            DESO_CHECK(q >= 0 && q < nparts, DESO_EINVAL, "sparse cost: x_%lld "
                       "on rank %d of %d", (long long)j, q, nparts);
            if (q == me || s->seen[j] == me) continue;
            s->seen[j] = me;
            ld->bytes += (int64_t)sizeof(double);
            if (s->heard[q] != me) { s->heard[q] = me; ld->msgs++; }
        }
    }
    return DESO_OK;
}

static void summarise(const scratch *s, int nparts, const opt_params *prm,
                      double sec_per_nnz, opt_sparse_cost *c)
{
    memset(c, 0, sizeof *c);
    double comm = 0.0;
    for (int q = 0; q < nparts; q++) {
        const rank_load *ld = &s->load[q];
        c->halo_bytes += ld->bytes;
        c->halo_msgs += ld->msgs;
        if (ld->bytes > c->max_rank_bytes) c->max_rank_bytes = ld->bytes;
        if (ld->msgs > c->max_rank_msgs) c->max_rank_msgs = ld->msgs;
        if (ld->nnz > c->max_rank_nnz) c->max_rank_nnz = ld->nnz;
        if (ld->rows > c->max_rank_rows) c->max_rank_rows = ld->rows;
        double t = prm->alpha * (double)ld->msgs + prm->beta * (double)ld->bytes;
        if (t > comm) comm = t;
    }
    c->time = comm + sec_per_nnz * (double)c->max_rank_nnz;
}

deso_err opt_sparse_cost_eval(const pl_csr *a, const pl_owner *rows,
                              const pl_owner *cols, int nparts,
                              const opt_params *prm, double sec_per_nnz,
                              opt_sparse_cost *c)
{
    DESO_CHECK(a && rows && cols && prm && c, DESO_ENULL, "sparse cost: NULL");
    DESO_CHECK(nparts >= 1, DESO_EINVAL, "sparse cost: %d ranks", nparts);
    scratch s;
    DESO_TRY(scratch_alloc(&s, a->ncols, nparts));
    int64_t *order = NULL, *first = NULL;
    deso_err e = rows_by_rank(a, rows, nparts, &order, &first);
    for (int q = 0; e == DESO_OK && q < nparts; q++)
        e = count_rank(a, cols, q, nparts, order + first[q], first[q + 1] - first[q], &s);
    if (e == DESO_OK) summarise(&s, nparts, prm, sec_per_nnz, c);
    free(order);
    free(first);
    scratch_free(&s);
    return e;
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
