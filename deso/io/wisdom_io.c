/* Wisdom files: plans and the cost model's calibration across runs
 * (optimizer/wisdom.h has the format).
 *
 * Only rank 0 touches the file system.  Import: rank 0 reads the bytes
 * (at most WISDOM_MAX_BYTES) and broadcasts them; every rank parses the
 * same bytes with the same pure parser, so every rank reaches the same
 * verdict.  A corrupt, truncated or hostile file is one warning on rank 0's
 * stderr and is otherwise ignored (the run goes on exactly as without it);
 * a file for another P, grid or library version is ignored silently.
 * Plans from a file are only ever used after opt_plan_rebuild has checked
 * them against the optimiser's candidates, so no file can change a result.
 * Export: every rank builds the same text; rank 0 writes it to a temporary
 * file beside the target and renames it over the target (atomic), and
 * broadcasts the outcome.                                                  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deso/core/agree.h"
#include "deso/runtime/runtime.h"
#include "deso/io/api_io.h"
#include "placement/alloc.h"

#define WISDOM_MAX_BYTES ((int64_t)64 << 20)

_Static_assert(sizeof(((opt_wisdom_config *)0)->coll) ==
                   sizeof(((opt_params *)0)->coll),
               "the wisdom file's collectives are opt_params.coll's figures");

opt_wisdom_config deso__wisdom_config(const deso_ctx *ctx)
{
    opt_wisdom_config c;
    memset(&c, 0, sizeof c);
    snprintf(c.version, sizeof c.version, "%s", DESO__VERSION);
    c.P = ctx->size;
    c.pr = ctx->df.pr;
    c.pc = ctx->df.pc;
    c.calibrated = ctx->calibrated;
    c.alpha = ctx->params.alpha;
    c.beta = ctx->params.beta;
    c.io_beta = ctx->params.io_beta;
    memcpy(c.coll, ctx->params.coll, sizeof c.coll);
    return c;
}

/* Rank 0: the file's bytes.  *len = -1: no such file, -2: unreadable or
 * too large, -3: out of memory (a different error: the file may be fine). */
#define READ_NOMEM (-3)
static char *read_file(const char *path, int64_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        *len = -1;
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = deso__malloc(cap);
    bool nomem = buf == NULL;
    while (buf != NULL) {
        if (n == cap) {
            if ((int64_t)cap >= WISDOM_MAX_BYTES) {
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = deso__realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                nomem = true;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (buf != NULL && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = buf != NULL ? (int64_t)n : nomem ? READ_NOMEM : -2;
    return buf;
}

/* Rank 0's file on every rank: *len is its length, or -1 (cannot be
 * opened), -2 (cannot be read) or READ_NOMEM everywhere; *buf holds the
 * bytes.  The
 * buffers are agreed before the bytes move.  Collective; timed, not
 * counted (set-up, not the user's work).                                 */
static deso_err share_file(deso_ctx *ctx, const char *fn, const char *path,
                           char **buf, int64_t *len)
{
    *buf = NULL;
    *len = 0;
    if (ctx->rank == 0) *buf = read_file(path, len);
    double t0 = deso__now();
    int rc = MPI_Bcast(len, 1, MPI_INT64_T, 0, ctx->comm);
    deso__stats_time(DESO_T_COLLECTIVE, deso__now() - t0);
    DESO_TRY(deso__mpi(rc, "wisdom: broadcast of the file's length"));
    if (*len <= 0) return DESO_OK;
    if (ctx->rank != 0) *buf = deso__malloc((size_t)*len);
    deso_err err = *buf != NULL ? DESO_OK : deso__fail(DESO_ENOMEM, "%s: "
                                                        "out of memory", fn);
    err = deso__agree(ctx->comm, fn, err, NULL, 0);
    t0 = deso__now();
    for (int64_t off = 0; err == DESO_OK && off < *len;) {
        int64_t chunk = *len - off < (1 << 30) ? *len - off : (1 << 30);
        rc = MPI_Bcast(*buf + off, (int)chunk, MPI_CHAR, 0, ctx->comm);
        err = deso__mpi(rc, "wisdom: broadcast of the file");
        off += chunk;
    }
    deso__stats_time(DESO_T_COLLECTIVE, deso__now() - t0);
    if (err != DESO_OK) {
        free(*buf);
        *buf = NULL;
    }
    return err;
}

/* ctx's wisdom with w's calibration and plans merged in (they replace
 * plans with the same keys), or on a failure anywhere ctx's wisdom as it
 * was on every rank, so that every rank keeps choosing the same plans.
 * Collective.                                                            */
static deso_err merge(deso_ctx *ctx, const char *fn, const opt_wisdom *w,
                      const opt_wisdom_config *run)
{
    opt_wisdom all;
    opt_wisdom_init(&all);
    deso_err err = DESO_OK;
    for (int k = 0; k < ctx->wis.nplans && err == DESO_OK; k++) {
        const opt_wisdom_plan *p = &ctx->wis.plans[k];
        err = opt_wisdom_add(&all, p->key, p->hits, p->nnodes, p->nodes);
    }
    for (int k = 0; k < w->nplans && err == DESO_OK; k++) {
        const opt_wisdom_plan *p = &w->plans[k];
        err = opt_wisdom_add(&all, p->key, p->hits, p->nnodes, p->nodes);
    }
    err = deso__agree(ctx->comm, fn, err, NULL, 0);
    if (err != DESO_OK) {
        opt_wisdom_free(&all);
        return err;
    }
    if (w->config.calibrated) {
        ctx->params.alpha = w->config.alpha;
        ctx->params.beta = w->config.beta;
        ctx->params.io_beta = w->config.io_beta;
        memcpy(ctx->params.coll, w->config.coll, sizeof ctx->params.coll);
        ctx->calibrated = true;
    }
    opt_wisdom_free(&ctx->wis);
    ctx->wis = all;
    ctx->wis.config = *run;
    return DESO_OK;
}

deso_err deso__wisdom_load(deso_ctx *ctx, const char *path, bool quiet)
{
    static const char *fn = "deso_wisdom_import";
    /* the same on every rank: the path is checked where it is used      */
    deso_err err = path != NULL ? DESO_OK : deso__fail(DESO_ENULL, "%s: "
                                                       "path is NULL", fn);
    DESO_TRY(deso__agree(ctx->comm, fn, err, NULL, 0));
    int64_t len;
    char *buf;
    DESO_TRY(share_file(ctx, fn, path, &buf, &len));
    if (len == READ_NOMEM)
        return deso__fail(DESO_ENOMEM, "%s: out of memory reading '%s' on "
                                       "rank 0", fn, path);
    if (len < 0) {
        if (len == -1 && quiet) return DESO_OK;
        if (ctx->rank == 0)
            fprintf(stderr, "deso: warning: wisdom file '%s' %s; ignored\n",
                    path, len == -1 ? "cannot be opened" : "cannot be read");
        return deso__fail(DESO_EIO, "wisdom: cannot %s '%s'",
                          len == -1 ? "open" : "read", path);
    }
    opt_wisdom_config run = deso__wisdom_config(ctx);
    opt_wisdom w;
    int ignored = 0;
    err = opt_wisdom_parse(buf, (size_t)len, &run, &w, &ignored);
    free(buf);
    /* the same bytes give the same verdict, unless memory ran out on some
     * ranks only: agreed, a rejection included                            */
    err = deso__agree(ctx->comm, fn, err, NULL, 0);
    if (err == DESO_EWISDOM) {
        if (ctx->rank == 0)
            fprintf(stderr, "deso: warning: wisdom file '%s' rejected (%s); "
                            "ignored\n", path, deso_last_error());
        return quiet ? DESO_OK : err;
    }
    if (err == DESO_OK && !ignored) err = merge(ctx, fn, &w, &run);
    opt_wisdom_free(&w);            /* ignored: another version, P or grid */
    return err;
}

/* The wisdom to export: the imported plans, then every cached plan.      */
static deso_err collect(deso_ctx *ctx, opt_wisdom *w)
{
    opt_wisdom_init(w);
    w->config = deso__wisdom_config(ctx);
    for (int k = 0; k < ctx->wis.nplans; k++)
        DESO_TRY(opt_wisdom_add(w, ctx->wis.plans[k].key,
                                ctx->wis.plans[k].hits,
                                ctx->wis.plans[k].nnodes,
                                ctx->wis.plans[k].nodes));
    for (int k = 0; k < opt_cache_count(ctx->cache); k++) {
        const opt_cache_entry *e = opt_cache_at(ctx->cache, k);
        if (e->variant == NULL) continue;
        int n = e->plan.nnodes;
        opt_wisdom_node *nodes =
            deso__malloc((size_t)(n > 0 ? n : 1) * sizeof *nodes);
        DESO_CHECK(nodes != NULL, DESO_ENOMEM, "wisdom: out of memory");
        for (int i = 0; i < n; i++) {
            nodes[i].lay = e->plan.node[i].res;
            nodes[i].variant = e->variant[i];
        }
        deso_err err = opt_wisdom_add(w, e->key, e->hits, n, nodes);
        free(nodes);
        DESO_TRY(err);
    }
    return DESO_OK;
}

deso_err deso__wisdom_save(deso_ctx *ctx, const char *path)
{
    DESO_CHECK(path != NULL, DESO_ENULL, "deso_wisdom_export: path is NULL");
    opt_wisdom w;
    char *text = NULL;
    size_t len = 0;
    deso_err err = collect(ctx, &w);
    if (err == DESO_OK) err = opt_wisdom_write(&w, &text, &len);
    opt_wisdom_free(&w);
    int code = (int)err;
    if (ctx->rank == 0 && err == DESO_OK) {
        size_t plen = strlen(path) + 32;
        char *tmp = deso__malloc(plen);
        if (tmp == NULL) {
            code = (int)DESO_ENOMEM;
        } else {
            snprintf(tmp, plen, "%s.tmp.%ld", path, (long)getpid());
            FILE *f = fopen(tmp, "wb");
            bool ok = f != NULL && fwrite(text, 1, len, f) == len;
            if (f != NULL && fclose(f) != 0) ok = false;
            if (ok && rename(tmp, path) != 0) ok = false;
            if (!ok) {
                remove(tmp);
                code = (int)DESO_EIO;
            }
            free(tmp);
        }
    }
    free(text);
    /* every rank returns rank 0's outcome                                 */
    int rc = MPI_Bcast(&code, 1, MPI_INT, 0, ctx->comm);
    DESO_TRY(deso__mpi(rc, "wisdom: broadcast of the outcome"));
    if (code == (int)DESO_EIO)
        return deso__fail(DESO_EIO, "wisdom: cannot write '%s'", path);
    if (code != (int)DESO_OK && err == DESO_OK)
        return deso__fail((deso_err)code, "wisdom: export failed on rank 0");
    return (deso_err)code;
}

deso_err deso__wisdom_export(deso_ctx *ctx, const char *path)
{
    DESO_CHECK(ctx != NULL, DESO_ENULL, "deso_wisdom_export: ctx is NULL");
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "deso_wisdom_export: not a live context");
    return deso__wisdom_save(ctx, path);
}

deso_err deso__wisdom_import(deso_ctx *ctx, const char *path)
{
    DESO_CHECK(ctx != NULL, DESO_ENULL, "deso_wisdom_import: ctx is NULL");
    DESO_CHECK(ctx->magic == DESO__MAGIC_CTX, DESO_ESTALE,
               "deso_wisdom_import: not a live context");
    return deso__wisdom_load(ctx, path, false);
}
