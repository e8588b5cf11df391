/* Halo lists of a sparse product (see halo.h).                            */
#include "placement/halo.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"

/* ---- owner maps ----------------------------------------------------------- */

void pl_blocks_range(const pl_blocks *b, int r, int64_t *lo, int64_t *hi)
{
    int64_t base = b->n / b->nparts, extra = b->n % b->nparts;
    *lo = r * base + (r < extra ? r : extra);
    *hi = *lo + base + (r < extra ? 1 : 0);
}

/* The first `extra` blocks have base + 1 indices, the rest base; an index
 * outside [0, n) has no owner (-1), which the callers refuse.            */
static int blocks_rank(int64_t j, const void *arg)
{
    const pl_blocks *b = arg;
    if (j < 0 || j >= b->n) return -1;
    int64_t base = b->n / b->nparts, extra = b->n % b->nparts;
    int64_t big = extra * (base + 1);
    return (int)(j < big ? j / (base + 1) : extra + (j - big) / base);
}

static int64_t blocks_local(int64_t j, const void *arg)
{
    int64_t lo, hi;
    pl_blocks_range(arg, blocks_rank(j, arg), &lo, &hi);
    return j - lo;
}

pl_owner pl_owner_blocks(const pl_blocks *b)
{
    pl_owner o = {blocks_rank, blocks_local, b};
    return o;
}

static int table_rank(int64_t j, const void *arg)
{
    return ((const pl_owner_table *)arg)->part[j];
}

static int64_t table_local(int64_t j, const void *arg)
{
    return ((const pl_owner_table *)arg)->local[j];
}

deso_err pl_owner_table_init(pl_owner_table *t, const int32_t *part,
                             int64_t n, int nparts)
{
    memset(t, 0, sizeof *t);
    DESO_CHECK(nparts >= 1, DESO_EINVAL, "owner table: %d parts", nparts);
    t->local = deso__malloc((size_t)(n > 0 ? n : 1) * sizeof *t->local);
    t->count = deso__calloc((size_t)nparts, sizeof *t->count);
    if (!t->local || !t->count) {
        pl_owner_table_free(t);
        return deso__fail(DESO_ENOMEM, "owner table: %lld indices", (long long)n);
    }
    t->n = n;
    t->nparts = nparts;
    t->part = part;
    for (int64_t j = 0; j < n; j++) {
        if (part[j] < 0 || part[j] >= nparts) {
            int bad = part[j];
            pl_owner_table_free(t);
            return deso__fail(DESO_EINVAL, "owner table: index %lld in part %d "
                              "of %d", (long long)j, bad, nparts);
        }
        t->local[j] = t->count[part[j]]++;
    }
    return DESO_OK;
}

pl_owner pl_owner_table_map(const pl_owner_table *t)
{
    pl_owner o = {table_rank, table_local, t};
    return o;
}

void pl_owner_table_free(pl_owner_table *t)
{
    if (!t) return;
    free(t->local);
    free(t->count);
    memset(t, 0, sizeof *t);
}

void pl_halo_free(pl_halo *h)
{
    if (!h) return;
    free(h->recv_ptr);
    free(h->recv_idx);
    free(h->send_ptr);
    free(h->send_idx);
    memset(h, 0, sizeof *h);
}

/* ---- receive lists ------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct columns of a owned elsewhere, ascending: *cnt of them.    */
static deso_err foreign_columns(const pl_csr *a, const pl_owner *own, int me,
                                int nparts, int64_t **out, int64_t *cnt)
{
    int64_t nz = a->rowptr[a->nrows];
    int64_t *c = deso__malloc((size_t)(nz > 0 ? nz : 1) * sizeof *c);
    DESO_CHECK(c != NULL, DESO_ENOMEM, "halo: %lld entries", (long long)nz);
    int64_t k = 0;
    for (int64_t e = 0; e < nz; e++) {
        int r = own->rank(a->col[e], own->arg);
        if (r < 0 || r >= nparts) {
            free(c);
            return deso__fail(DESO_EINVAL, "halo: index %lld owned by rank %d "
                              "of %d", (long long)a->col[e], r, nparts);
        }
        if (r != me) c[k++] = a->col[e];
    }
    qsort(c, (size_t)k, sizeof *c, cmp_i64);
    int64_t u = 0;
    for (int64_t e = 0; e < k; e++)
        if (u == 0 || c[u - 1] != c[e]) c[u++] = c[e];
    *out = c;
    *cnt = u;
    return DESO_OK;
}

/* Groups ascending indices by owner, keeping them ascending per owner.   */
static void group_by_owner(const int64_t *c, int64_t cnt, const pl_owner *own,
                           pl_halo *h)
{
    for (int64_t e = 0; e < cnt; e++) h->recv_ptr[own->rank(c[e], own->arg) + 1]++;
    for (int s = 0; s < h->nparts; s++) h->recv_ptr[s + 1] += h->recv_ptr[s];
    for (int64_t e = 0; e < cnt; e++)
        h->recv_idx[h->recv_ptr[own->rank(c[e], own->arg)]++] = c[e];
    for (int s = h->nparts; s > 0; s--) h->recv_ptr[s] = h->recv_ptr[s - 1];
    h->recv_ptr[0] = 0;
}

deso_err pl_halo_recv(const pl_csr *a, const pl_owner *own, int me,
                      int nparts, pl_halo *h)
{
    DESO_CHECK(h != NULL && a != NULL && own != NULL, DESO_ENULL, "halo: NULL");
    memset(h, 0, sizeof *h);
    DESO_CHECK(nparts >= 1 && me >= 0 && me < nparts, DESO_EINVAL,
               "halo: rank %d of %d", me, nparts);
    int64_t *c = NULL, cnt = 0;
    DESO_TRY(foreign_columns(a, own, me, nparts, &c, &cnt));
    h->nparts = nparts;
    h->recv_ptr = deso__calloc((size_t)nparts + 1, sizeof *h->recv_ptr);
    h->recv_idx = deso__malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *h->recv_idx);
    if (!h->recv_ptr || !h->recv_idx) {
        free(c);
        pl_halo_free(h);
        return deso__fail(DESO_ENOMEM, "halo: %lld entries", (long long)cnt);
    }
    group_by_owner(c, cnt, own, h);
    free(c);
    return DESO_OK;
}

/* ---- send lists (all ranks in one process) -------------------------------- */

static deso_err alloc_sends(pl_halo *h, int nparts, const pl_halo *all, int me)
{
    int64_t total = 0;
    for (int r = 0; r < nparts; r++)
        total += all[r].recv_ptr[me + 1] - all[r].recv_ptr[me];
    h->send_ptr = deso__calloc((size_t)nparts + 1, sizeof *h->send_ptr);
    h->send_idx = deso__malloc((size_t)(total > 0 ? total : 1) * sizeof *h->send_idx);
    DESO_CHECK(h->send_ptr && h->send_idx, DESO_ENOMEM, "halo: %lld sends",
               (long long)total);
    return DESO_OK;
}

deso_err pl_halo_sends(pl_halo *h, int nparts)
{
    for (int me = 0; me < nparts; me++) {
        DESO_TRY(alloc_sends(&h[me], nparts, h, me));
        int64_t at = 0;
        for (int r = 0; r < nparts; r++) {
            h[me].send_ptr[r] = at;
            for (int64_t k = h[r].recv_ptr[me]; k < h[r].recv_ptr[me + 1]; k++)
                h[me].send_idx[at++] = h[r].recv_idx[k];
        }
        h[me].send_ptr[nparts] = at;
    }
    return DESO_OK;
}

/* ---- local columns ---------------------------------------------------------- */

/* Position of j in the ascending run idx[lo .. hi); j is known present.   */
static int64_t find(const int64_t *idx, int64_t lo, int64_t hi, int64_t j)
{
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (idx[mid] <= j) lo = mid;
        else hi = mid;
    }
    return lo;
}

deso_err pl_halo_localise(const pl_csr *a, const pl_owner *own, int me,
                          int64_t nowned, const pl_halo *h, int32_t **lcol)
{
    *lcol = NULL;
    int64_t nhalo = h->recv_ptr[h->nparts];
    DESO_CHECK(nowned >= 0 && nowned <= INT32_MAX - nhalo, DESO_EOVERFLOW,
               "halo: %lld own entries and %lld received exceed 32-bit local "
               "indices", (long long)nowned, (long long)nhalo);
    int64_t nz = a->rowptr[a->nrows];
    int32_t *l = deso__malloc((size_t)(nz > 0 ? nz : 1) * sizeof *l);
    DESO_CHECK(l != NULL, DESO_ENOMEM, "halo: %lld entries", (long long)nz);
    for (int64_t e = 0; e < nz; e++) {
        int64_t j = a->col[e];
        int r = own->rank(j, own->arg);
        l[e] = (int32_t)(r == me ? own->local(j, own->arg)
                                 : nowned + find(h->recv_idx, h->recv_ptr[r],
                                                 h->recv_ptr[r + 1], j));
    }
    *lcol = l;
    return DESO_OK;
}
