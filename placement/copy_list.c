/* Element copy lists, run-coded where that is smaller (copy_list.h).     */
#include "placement/copy_list.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"

pl_copy_list pl_copy_new(bool has_src, bool has_dst)
{
    pl_copy_list c;
    memset(&c, 0, sizeof c);
    c.has_src = has_src;
    c.has_dst = has_dst;
    return c;
}

static int64_t *alloc_words(int64_t n)
{
    return deso__malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
}

deso_err pl_copy_alloc(pl_copy_list *c, bool runs_ok)
{
    int64_t sides = (c->has_src ? 1 : 0) + (c->has_dst ? 1 : 0);
    /* a run costs a word per stored side and its length, a listed copy a
     * word per stored side                                               */
    c->runs = runs_ok && c->nruns * (sides + 1) < c->n * sides;
    int64_t words = c->runs ? c->nruns : c->n;
    bool ok = true;
    if (c->has_src) ok = ok && (c->src = alloc_words(words)) != NULL;
    if (c->has_dst) ok = ok && (c->dst = alloc_words(words)) != NULL;
    if (c->runs) ok = ok && (c->len = alloc_words(words)) != NULL;
    DESO_CHECK(ok, DESO_ENOMEM, "copy list: out of memory for %lld copies",
               (long long)c->n);
    c->fill = 0;
    return DESO_OK;
}

static void reverse_words(int64_t *x, int64_t n)
{
    for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
        int64_t t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}

void pl_copy_reverse(pl_copy_list *c)
{
    if (c->runs) return; /* pl_copy_alloc lists a list that is reversed  */
    if (c->has_src) reverse_words(c->src, c->n);
    if (c->has_dst) reverse_words(c->dst, c->n);
}

/* One run, element by element: a run is usually a block (64 elements),
 * where memcpy's call costs about what it saves.                        */
static inline void copy_run(double *restrict to, const double *restrict from,
                            int64_t len)
{
    for (int64_t i = 0; i < len; i++)
        to[i] = from[i];
}

static void run_runs(const pl_copy_list *c, const double *src, double *dst)
{
    int64_t at = 0; /* the implicit side's position                       */
    for (int64_t r = 0; r < c->nruns; r++) {
        int64_t s = c->has_src ? c->src[r] : at;
        int64_t d = c->has_dst ? c->dst[r] : at;
        copy_run(dst + d, src + s, c->len[r]);
        at += c->len[r];
    }
}

void pl_copy_run(const pl_copy_list *c, const double *restrict src,
                 double *restrict dst)
{
    if (c->runs) {
        run_runs(c, src, dst);
    } else if (c->has_src && c->has_dst) {
        for (int64_t k = 0; k < c->n; k++)
            dst[c->dst[k]] = src[c->src[k]];
    } else if (c->has_src) {
        for (int64_t k = 0; k < c->n; k++)
            dst[k] = src[c->src[k]];
    } else if (c->has_dst) {
        for (int64_t k = 0; k < c->n; k++)
            dst[c->dst[k]] = src[k];
    } else {
        copy_run(dst, src, c->n);
    }
}

size_t pl_copy_bytes(const pl_copy_list *c)
{
    size_t words = (size_t)(c->runs ? c->nruns : c->n);
    size_t arrays = (c->has_src ? 1u : 0u) + (c->has_dst ? 1u : 0u) +
                    (c->runs ? 1u : 0u);
    return words * arrays * sizeof(int64_t);
}

void pl_copy_free(pl_copy_list *c)
{
    if (c == NULL) return;
    free(c->src);
    free(c->dst);
    free(c->len);
    *c = pl_copy_new(c->has_src, c->has_dst);
}
