/* The wisdom serialiser: one emitter run twice, counting then writing, so
 * the allocation is exact (FFTW export-wisdom-to-string).                  */
#include "optimizer/wisdom.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement/errors.h"
#include "optimizer/wisdom_impl.h"
#include "placement/alloc.h"

/* buf == NULL: count only.  Integers only go through printf ("%d" and
 * PRId64 do not depend on the locale); doubles are formatted by hand.    */
typedef struct printer {
    char *buf;
    size_t cap, n;
} printer;

static void put(printer *p, const char *fmt, ...) DESO__PRINTF(2, 3);

static void put(printer *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(p->buf ? p->buf + p->n : NULL,
                      p->buf ? p->cap - p->n : 0, fmt, ap);
    va_end(ap);
    if (k > 0) p->n += (size_t)k;
}

static void emit(const opt_wisdom *w, const opt_wisdom_plan *const *order,
                 printer *p)
{
    const opt_wisdom_config *c = &w->config;
    char a[OPT__HEXDBL_BUF], b[OPT__HEXDBL_BUF], io[OPT__HEXDBL_BUF];
    opt__wisdom_fmt_double(c->alpha, a);
    opt__wisdom_fmt_double(c->beta, b);
    opt__wisdom_fmt_double(c->io_beta, io);
    put(p, "deso-wisdom %d\n", OPT_WISDOM_FORMAT);
    put(p, "config %s %d %dx%d %d %s %s %s\n", c->version, c->P, c->pr,
        c->pc, c->calibrated ? 1 : 0, a, b, io);
    put(p, "collectives");
    for (int k = 0; k < OPT_WISDOM_COLL; k++) {
        char x[OPT__HEXDBL_BUF];
        opt__wisdom_fmt_double(c->coll[k], x);
        put(p, " %s", x);
    }
    put(p, "\n");
    for (int i = 0; i < w->nplans; i++) {
        const opt_wisdom_plan *pl = order[i];
        put(p, "plan %016" PRIx64 " %d %" PRIu32 "\n", pl->key, pl->nnodes,
            pl->hits);
        for (int k = 0; k < pl->nnodes; k++) {
            const opt_wisdom_node *nd = &pl->nodes[k];
            const blas_layout *l = &nd->lay;
            put(p,
                "node %s %" PRId64 " %" PRId64 " %d %" PRId64 " %" PRId64
                " %u %d %d %d\n",
                opt__wisdom_kind_name(l->kind), l->m, l->n, l->dist, l->b,
                l->nb, l->rep, l->pr, l->pc, nd->variant);
        }
    }
    /* The counting pass has no bytes to sum; the CRC's width is fixed.    */
    uint32_t crc = p->buf ? opt_wisdom_crc32(p->buf, p->n) : 0;
    put(p, "end %d %08" PRIx32 "\n", w->nplans, crc);
}

static int by_key(const void *x, const void *y)
{
    const opt_wisdom_plan *a = *(const opt_wisdom_plan *const *)x;
    const opt_wisdom_plan *b = *(const opt_wisdom_plan *const *)y;
    return a->key < b->key ? -1 : a->key > b->key;
}

static deso_err validate(const opt_wisdom *w)
{
    const char *why = opt__wisdom_check_config(&w->config);
    DESO_CHECK(why == NULL, DESO_EINVAL, "opt_wisdom_write: config: %s", why);
    DESO_CHECK(w->nplans >= 0 && w->nplans <= OPT_WISDOM_MAX_PLANS,
               DESO_EINVAL, "opt_wisdom_write: %d plans (0 to %d)",
               w->nplans, OPT_WISDOM_MAX_PLANS);
    DESO_CHECK(w->nplans == 0 || w->plans != NULL, DESO_ENULL,
               "opt_wisdom_write: NULL plans");
    for (int i = 0; i < w->nplans; i++) {
        const opt_wisdom_plan *pl = &w->plans[i];
        DESO_CHECK(pl->nnodes >= 0 && pl->nnodes <= OPT_WISDOM_MAX_NODES,
                   DESO_EINVAL, "opt_wisdom_write: plan %016" PRIx64
                   " has %d nodes (0 to %d)", pl->key, pl->nnodes,
                   OPT_WISDOM_MAX_NODES);
        DESO_CHECK(pl->nnodes == 0 || pl->nodes != NULL, DESO_ENULL,
                   "opt_wisdom_write: plan %016" PRIx64 ": NULL nodes",
                   pl->key);
        for (int k = 0; k < pl->nnodes; k++) {
            why = opt__wisdom_check_node(&pl->nodes[k], &w->config);
            DESO_CHECK(why == NULL, DESO_EINVAL,
                       "opt_wisdom_write: plan %016" PRIx64 " node %d: %s",
                       pl->key, k, why);
        }
    }
    return DESO_OK;
}

deso_err opt_wisdom_write(const opt_wisdom *w, char **text, size_t *len)
{
    DESO_CHECK(text != NULL && len != NULL, DESO_ENULL,
               "opt_wisdom_write: NULL argument");
    *text = NULL;
    *len = 0;
    DESO_CHECK(w != NULL, DESO_ENULL, "opt_wisdom_write: NULL wisdom");
    DESO_TRY(validate(w));

    const opt_wisdom_plan **order = NULL;
    if (w->nplans > 0) {
        order = deso__malloc((size_t)w->nplans * sizeof *order);
        DESO_CHECK(order != NULL, DESO_ENOMEM,
                   "opt_wisdom_write: out of memory");
        for (int i = 0; i < w->nplans; i++) order[i] = &w->plans[i];
        qsort(order, (size_t)w->nplans, sizeof *order, by_key);
        for (int i = 1; i < w->nplans; i++)
            if (order[i]->key == order[i - 1]->key) {
                uint64_t key = order[i]->key;
                free(order);
                return deso__fail(DESO_EINVAL,
                                  "opt_wisdom_write: two plans with key "
                                  "%016" PRIx64, key);
            }
    }

    printer p = {0};
    emit(w, order, &p);
    size_t n = p.n;
    p.buf = deso__malloc(n + 1);
    if (!p.buf) {
        free(order);
        return deso__fail(DESO_ENOMEM, "opt_wisdom_write: out of memory");
    }
    p.cap = n + 1;
    p.n = 0;
    emit(w, order, &p);
    free(order);
    if (p.n != n) {                     /* the two passes must agree        */
        free(p.buf);
        return deso__fail(DESO_EINTERNAL, "opt_wisdom_write: counted %zu "
                          "bytes, wrote %zu", n, p.n);
    }
    *text = p.buf;
    *len = n;
    return DESO_OK;
}
