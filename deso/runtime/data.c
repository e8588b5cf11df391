/* Creating values from user data (global arrays, generators; ScaLAPACK
 * arrays are in deso/io/scalapack.c) and reading them back (gather, one
 * element, a scalar).
 * Generators and arrays are read only where the data lives: a matrix is
 * never assembled whole on one rank.                                       */
#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "deso/runtime/ooc.h"

/* No rank can hold more elements than this (deso__ALLOC_MAX bytes): larger
 * sizes fail with DESO_ENOMEM before any layout arithmetic can overflow. */
#define HUGE_ELEMS ((int64_t)(DESO__ALLOC_MAX / sizeof(double)))

/* Every rank learns whether any rank had a local error.  Called before
 * communication that a failed rank would skip (FFTW's any_true).         */
static deso_err agree(deso_ctx *ctx, const char *fn, deso_err err)
{
    return deso__agree_counted(ctx, fn, err, NULL, 0);
}

/* A ready value with one zeroed view in `lay`, and a handle on it; the
 * view is `home` (an out-of-core matrix's: deso__mat_home) when given.
 * Its zeros take no memory until written (deso__view_alloc_untouched):
 * deso_vec_create's vectors are often overwritten, or only read to be
 * moved where a force places them, and a solver makes several.         */
static deso_err new_home(deso_ctx *ctx, const blas_layout *lay,
                         deso__view *home, deso__handle **h)
{
    deso__value *v = deso__value_new(lay->kind, lay->m, lay->n);
    if (v == NULL) deso__view_free(home);
    DESO_CHECK(v != NULL, DESO_ENOMEM, "out of memory");
    v->views = home;
    v->ooc = home != NULL;
    deso_err err = home != NULL
                       ? DESO_OK
                       : deso__view_alloc_untouched(ctx, lay, &v->views);
    if (err == DESO_OK) {
        v->ready = true;
        err = deso__handle_new(ctx, lay->kind, v, h);
    }
    if (err != DESO_OK) {
        v->refs = 1;
        deso__value_unref(v);
    }
    return err;
}

static deso_err new_ready(deso_ctx *ctx, const blas_layout *lay,
                          deso__handle **h)
{
    return new_home(ctx, lay, NULL, h);
}

static int64_t vec_global(const deso_ctx *ctx, const blas_layout *l,
                          int64_t li)
{
    return blas_elem_global(l, ctx->coord[0], ctx->coord[1], li);
}

/* ---- vectors -------------------------------------------------------------- */

static deso_err vec_begin(deso_ctx *ctx, int64_t n, void *out, const char *fn)
{
    DESO_TRY(deso__ctx_check(ctx, fn));
    DESO_CHECK(out != NULL, DESO_ENULL, "%s: out-parameter is NULL", fn);
    DESO_CHECK(n >= 0, DESO_ESIZE, "%s: n = %lld < 0", fn, (long long)n);
    DESO_CHECK(n / ctx->size <= HUGE_ELEMS, DESO_ENOMEM,
               "%s: n = %lld is too large to allocate", fn, (long long)n);
    return DESO_OK;
}

deso_err deso__vec_create(deso_ctx *ctx, int64_t n, deso_vec **x)
{
    DESO_TRY(vec_begin(ctx, n, x, "deso_vec_create"));
    blas_layout lay = opt_default_vec(&ctx->df, n);
    deso__handle *h;
    DESO_TRY(new_ready(ctx, &lay, &h));
    *x = (deso_vec *)h;
    return DESO_OK;
}

deso_err deso__vec_from_fn(deso_ctx *ctx, int64_t n, deso_vec_fn f, void *arg,
                          deso_vec **x)
{
    DESO_TRY(vec_begin(ctx, n, x, "deso_vec_from_fn"));
    DESO_CHECK(f != NULL, DESO_ENULL, "deso_vec_from_fn: f is NULL (arg 3)");
    blas_layout lay = opt_default_vec(&ctx->df, n);
    deso__handle *h;
    DESO_TRY(new_ready(ctx, &lay, &h));
    deso__view *w = h->val->views;
    for (int64_t l = 0; l < w->rows; l++)
        w->data[l] = f(vec_global(ctx, &lay, l), arg);
    *x = (deso_vec *)h;
    return DESO_OK;
}

deso_err deso__vec_from_array(deso_ctx *ctx, int64_t n, const double *data,
                             int root, deso_vec **x)
{
    const char *fn = "deso_vec_from_array";
    DESO_TRY(deso__ctx_check(ctx, fn));
    /* With a root, every check that can differ between ranks (data and x
     * are per-rank pointers; memory) is agreed on before the broadcast, and
     * everything is allocated before that agreement.                      */
    deso_err err = vec_begin(ctx, n, x, fn);
    if (err == DESO_OK && root != DESO_ALL_RANKS &&
        (root < 0 || root >= ctx->size))
        err = deso__fail(DESO_EINVAL, "%s: root %d out of range (arg 4)", fn,
                         root);
    bool mine = root == DESO_ALL_RANKS || root == ctx->rank;
    if (err == DESO_OK && mine && data == NULL && n > 0)
        err = deso__fail(DESO_ENULL, "%s: data is NULL (arg 3)", fn);
    bool talk = root != DESO_ALL_RANKS;
    DESO_TRY(talk ? DESO_OK : err);
    const double *src = data;
    double *tmp = NULL;
    if (talk && err == DESO_OK) {
        /* vectors are O(n): broadcasting the array is simplest            */
        tmp = deso__malloc((size_t)n * sizeof(double));
        if (tmp == NULL) err = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
        src = tmp;
    }
    blas_layout lay = opt_default_vec(&ctx->df, n);
    uint64_t hash0 = ctx->hash, id0 = ctx->next_id;
    deso__handle *h = NULL;
    if (err == DESO_OK) err = new_ready(ctx, &lay, &h);
    if (talk) err = agree(ctx, fn, err);
    if (err == DESO_OK && talk) {
        if (mine && n > 0) memcpy(tmp, data, (size_t)n * sizeof(double));
        err = deso__bcast(ctx->comm, tmp, n, root);
    }
    if (err == DESO_OK) {
        deso__view *w = h->val->views;
        for (int64_t l = 0; l < w->rows; l++)
            w->data[l] = src[vec_global(ctx, &lay, l)];
        *x = (deso_vec *)h;
    } else if (h != NULL) {
        deso_vec *dead = (deso_vec *)h;
        deso_vec_destroy(&dead);
        /* as if never called, so that the ranks' call hashes still agree  */
        ctx->hash = hash0;
        ctx->next_id = id0;
    }
    free(tmp);
    return err;
}

/* ---- matrices ------------------------------------------------------------- */

static deso_err mat_begin(deso_ctx *ctx, int64_t m, int64_t n, void *out,
                          const char *fn)
{
    DESO_TRY(deso__ctx_check(ctx, fn));
    DESO_CHECK(out != NULL, DESO_ENULL, "%s: out-parameter is NULL", fn);
    DESO_CHECK(m >= 0 && n >= 0, DESO_ESIZE, "%s: shape %lld x %lld", fn,
               (long long)m, (long long)n);
    /* m n / P <= HUGE_ELEMS without overflow (so m n fits in int64)     */
    DESO_CHECK(m <= HUGE_ELEMS && n <= HUGE_ELEMS &&
                   (m == 0 || n <= (HUGE_ELEMS / m) * ctx->size),
               DESO_ENOMEM, "%s: %lld x %lld is too large to allocate", fn,
               (long long)m, (long long)n);
    return DESO_OK;
}

static void mat_globals(const blas_layout *l, int r, int c, int64_t li,
                        int64_t lj, int64_t *i, int64_t *j)
{
    *i = blas_mat_global(l, 0, r, li);
    *j = blas_mat_global(l, 1, c, lj);
}

/* A new matrix's default layout and where it lives (deso__mat_home),
 * after the checks of mat_begin, agreed with them when some rank has a
 * memory budget.                                                         */
static deso_err mat_start(deso_ctx *ctx, int64_t m, int64_t n, void *out,
                          const char *fn, deso_err local, blas_layout *lay,
                          deso__view **home)
{
    DESO_TRY(deso__ctx_check(ctx, fn));
    deso_err err = local != DESO_OK ? local : mat_begin(ctx, m, n, out, fn);
    memset(lay, 0, sizeof *lay);
    if (err == DESO_OK) *lay = opt_default_mat(&ctx->df, m, n);
    return deso__mat_home(ctx, lay, err, fn, home);
}

deso_err deso__mat_create(deso_ctx *ctx, int64_t m, int64_t n, deso_mat **a)
{
    blas_layout lay;
    deso__view *home;
    DESO_TRY(mat_start(ctx, m, n, a, "deso_mat_create", DESO_OK, &lay,
                       &home));
    deso__handle *h;
    DESO_TRY(new_home(ctx, &lay, home, &h));
    *a = (deso_mat *)h;
    return DESO_OK;
}

deso_err deso__mat_new_home(deso_ctx *ctx, const blas_layout *lay,
                            deso__view *home, deso_mat **a)
{
    deso__handle *h;
    DESO_TRY(new_home(ctx, lay, home, &h));
    *a = (deso_mat *)h;
    return DESO_OK;
}

/* Local columns [c0, c0 + w) of f's matrix in layout lay into out.      */
static void fn_columns(const deso_ctx *ctx, const blas_layout *lay,
                       int64_t rows, int64_t c0, int64_t w, deso_mat_fn f,
                       void *arg, double *out)
{
    for (int64_t lj = 0; lj < w; lj++)
        for (int64_t li = 0; li < rows; li++) {
            int64_t i, j;
            mat_globals(lay, ctx->coord[0], ctx->coord[1], li, c0 + lj, &i,
                        &j);
            out[lj * rows + li] = f(i, j, arg);
        }
}

/* An out-of-core matrix from f, one slab at a time.  Agreed.             */
static deso_err fn_stream(deso_ctx *ctx, deso__view *w, deso_mat_fn f,
                          void *arg, const char *fn)
{
    deso_err err = DESO_OK;
    deso__ooc *o = w->ooc;
    double *buf = deso__ooc_slab_buf(ctx, 0);
    for (int64_t c0 = 0; err == DESO_OK && c0 < w->cols; c0 += o->slab) {
        int64_t k = w->cols - c0 < o->slab ? w->cols - c0 : o->slab;
        fn_columns(ctx, &w->lay, w->rows, c0, k, f, arg, buf);
        err = deso__ooc_io_counted(o, true, c0, k, buf);
    }
    return deso__agree_counted(ctx, fn, err, NULL, 0);
}

deso_err deso__mat_from_fn(deso_ctx *ctx, int64_t m, int64_t n, deso_mat_fn f,
                          void *arg, deso_mat **a)
{
    static const char *fn = "deso_mat_from_fn";
    blas_layout lay;
    deso__view *home;
    DESO_TRY(deso__ctx_check(ctx, fn));
    deso_err err = f != NULL ? DESO_OK : deso__fail(DESO_ENULL, "%s: f is "
                                                    "NULL (arg 4)", fn);
    DESO_TRY(mat_start(ctx, m, n, a, fn, err, &lay, &home));
    deso__handle *h;
    DESO_TRY(new_home(ctx, &lay, home, &h));
    deso__view *w = h->val->views;
    if (w->ooc != NULL) err = fn_stream(ctx, w, f, arg, fn);
    else fn_columns(ctx, &lay, w->rows, 0, w->cols, f, arg, w->data);
    if (err != DESO_OK) {
        deso_mat *tmp = (deso_mat *)h;
        deso_mat_destroy(&tmp);
        return err;
    }
    *a = (deso_mat *)h;
    return DESO_OK;
}

/* Packs the local piece of grid position (r, c) from a global array.     */
static void pack_local(const blas_layout *l, int r, int c, const double *a,
                       int64_t lda, double *out)
{
    int64_t rows, cols;
    blas_layout_local(l, r, c, &rows, &cols);
    deso__mat_pack(l, r, c, rows, 0, cols, a, lda, out);
}

static void unpack_local(const blas_layout *l, int r, int c, const double *in,
                         double *a, int64_t lda)
{
    int64_t rows, cols;
    blas_layout_local(l, r, c, &rows, &cols);
    deso__mat_unpack(l, r, c, rows, 0, cols, in, a, lda);
}

/* The root packs one destination at a time into one buffer (*buf), so it
 * never holds more than one extra local piece.                           */
static deso_err piece_buffer(const deso_ctx *ctx, const blas_layout *lay,
                             int root, const char *fn, double **buf)
{
    int64_t most = 0;
    for (int q = 0; q < ctx->size; q++) {
        int64_t rows, cols;
        blas_layout_local(lay, q / ctx->df.pc, q % ctx->df.pc, &rows, &cols);
        if (q != root && rows * cols > most) most = rows * cols;
    }
    *buf = deso__malloc((size_t)most * sizeof(double));
    DESO_CHECK(*buf != NULL, DESO_ENOMEM, "%s: no memory", fn);
    return DESO_OK;
}

/* The root's column-major a (lda) to every other rank's local piece w in
 * layout lay, through buf (piece_buffer).  Collective.                   */
static deso_err mat_scatter(deso_ctx *ctx, const blas_layout *lay,
                            const double *a, int64_t lda, int root,
                            double *buf, deso__view *w)
{
    if (ctx->rank != root) {
        int64_t cnt = w->rows * w->cols;
        if (cnt == 0) return DESO_OK;
        return deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL, NULL,
                              1, &root, &w->data, &cnt, &(MPI_Request){0});
    }
    for (int q = 0; q < ctx->size; q++) {
        if (q == root) continue;
        int64_t rows, cols;
        blas_layout_local(lay, q / ctx->df.pc, q % ctx->df.pc, &rows, &cols);
        int64_t cnt = rows * cols;
        if (cnt == 0) continue;
        pack_local(lay, q / ctx->df.pc, q % ctx->df.pc, a, lda, buf);
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &q, &buf, &cnt,
                                0, NULL, NULL, NULL, &(MPI_Request){0}));
    }
    return DESO_OK;
}

deso_err deso__mat_from_array(deso_ctx *ctx, int64_t m, int64_t n,
                             const double *a, int64_t lda, int root,
                             deso_mat **out)
{
    const char *fn = "deso_mat_from_array";
    DESO_TRY(deso__ctx_check(ctx, fn));
    /* Every check that can differ between ranks (pointers, memory) is
     * agreed on before the root starts sending: a rank that gave up alone
     * would leave the others waiting for their piece.                     */
    deso_err err = mat_begin(ctx, m, n, out, fn);
    if (err == DESO_OK && root != DESO_ALL_RANKS &&
        (root < 0 || root >= ctx->size))
        err = deso__fail(DESO_EINVAL, "%s: root %d out of range (arg 6)", fn,
                         root);
    if (err == DESO_OK && lda < (m > 1 ? m : 1))
        err = deso__fail(DESO_EINVAL, "%s: lda = %lld < max(1, m) (arg 5)",
                         fn, (long long)lda);
    bool mine = root == DESO_ALL_RANKS || root == ctx->rank;
    if (err == DESO_OK && mine && a == NULL && m * n > 0)
        err = deso__fail(DESO_ENULL, "%s: a is NULL (arg 4)", fn);
    bool talk = root != DESO_ALL_RANKS;
    blas_layout lay;
    memset(&lay, 0, sizeof lay);
    if (err == DESO_OK) lay = opt_default_mat(&ctx->df, m, n);
    /* out of core: streamed into the files (deso__ooc_from_array)        */
    deso__view *home = NULL;
    err = deso__mat_home(ctx, &lay, err, fn, &home);
    if (err != DESO_OK && !talk) return err;
    uint64_t hash0 = ctx->hash, id0 = ctx->next_id;
    deso__handle *h = NULL;
    if (home != NULL) {
        /* deso__mat_home agreed every rank's outcome so far               */
        err = agree(ctx, fn, new_home(ctx, &lay, home, &h));
        if (err == DESO_OK)
            err = deso__ooc_from_array(ctx, h->val->views, a, lda, root, fn);
    } else {
        if (err == DESO_OK) err = new_ready(ctx, &lay, &h);
        double *buf = NULL;
        if (err == DESO_OK && talk && ctx->rank == root)
            err = piece_buffer(ctx, &lay, root, fn, &buf);
        if (talk) err = agree(ctx, fn, err);
        deso__view *w = err == DESO_OK ? h->val->views : NULL;
        if (err == DESO_OK && mine)
            pack_local(&lay, ctx->coord[0], ctx->coord[1], a, lda, w->data);
        if (err == DESO_OK && talk)
            err = mat_scatter(ctx, &lay, a, lda, root, buf, w);
        free(buf);
    }
    if (err != DESO_OK) {
        if (h != NULL) {
            deso_mat *tmp = (deso_mat *)h;
            deso_mat_destroy(&tmp);
        }
        /* as if never called, so that the ranks' call hashes still agree  */
        ctx->hash = hash0;
        ctx->next_id = id0;
        return err;
    }
    *out = (deso_mat *)h;
    return DESO_OK;
}

/* deso_mat_from_scalapack and the other ScaLAPACK functions: scalapack.c */

/* ---- scalars -------------------------------------------------------------- */

deso_err deso__scalar_create(deso_ctx *ctx, double value, deso_scalar **s)
{
    DESO_TRY(deso__ctx_check(ctx, "deso_scalar_create"));
    DESO_CHECK(s != NULL, DESO_ENULL, "deso_scalar_create: s is NULL");
    deso__value *v;
    DESO_TRY(deso__value_const(ctx, value, &v));
    deso__handle *h;
    deso_err err = deso__handle_new(ctx, BLAS_SCA, v, &h);
    if (err != DESO_OK) {
        v->refs = 1;
        deso__value_unref(v);
        return err;
    }
    *s = (deso_scalar *)h;
    return DESO_OK;
}

/* ---- reading (force points) --------------------------------------------- */

/* Validates, forces, and returns the value (ready).                       */
static deso_err read_begin(const deso__handle *h, blas_kind kind,
                           const char *fn, deso_ctx **ctx, deso__value **v)
{
    *ctx = NULL;
    DESO_TRY(deso__handle_check(h, kind, ctx, fn, "handle"));
    /* a view reads its parent's current version                          */
    DESO_TRY(deso__view_sync(*ctx, (deso__handle *)h));
    DESO_TRY(deso__force(*ctx));
    *v = h->val;
    DESO_TRY(deso__value_usable(*v, fn));
    DESO_CHECK((*v)->ready && (*v)->views, DESO_EINTERNAL,
               "%s: value not computed after a force", fn);
    return DESO_OK;
}

deso_err deso__scalar_get(const deso_scalar *s, double *value)
{
    static const char *fn = "deso_scalar_get";
    deso_ctx *ctx = NULL;
    DESO_TRY(deso__handle_check(s ? &s->h : NULL, BLAS_SCA, &ctx, fn,
                                "handle"));
    /* the replicated view the value is read from is made before the
     * force, whose agreement covers its allocation: a scalar reduced to
     * some ranks only is then broadcast without allocating               */
    blas_layout all = blas_layout_sca(3u, ctx->df.pr, ctx->df.pc);
    deso__value *v = s->h.val;
    DESO_TRY(deso__force_with(ctx, deso__value_reserve(ctx, v, &all)));
    DESO_TRY(deso__value_usable(v, fn));
    DESO_CHECK(v->ready && v->views, DESO_EINTERNAL,
               "%s: value not computed after a force", fn);
    deso__view *w;
    DESO_TRY(deso__value_view(ctx, v, &all, &w));
    /* checked after the collective part: a NULL on one rank only must not
     * leave the others alone in it                                         */
    DESO_CHECK(value != NULL, DESO_ENULL, "deso_scalar_get: value is NULL");
    *value = w->data[0];
    return DESO_OK;
}

deso_err deso__vec_get(const deso_vec *x, int64_t i, double *value)
{
    static const char *fn = "deso_vec_get";
    deso_ctx *ctx;
    deso__value *v;
    DESO_TRY(read_begin(x ? &x->h : NULL, BLAS_VEC, fn, &ctx, &v));
    deso_err err = DESO_OK;
    if (value == NULL)
        err = deso__fail(DESO_ENULL, "%s: value is NULL", fn);
    else if (i < 0 || i >= v->n)
        err = deso__fail(DESO_EINVAL, "%s: index %lld outside [0, %lld)", fn,
                         (long long)i, (long long)v->n);
    DESO_TRY(agree(ctx, fn, err));
    const deso__view *w = v->views;
    /* the first holder: coordinate 0 along every dimension the vector is
     * not folded over                                                     */
    int r0, r1, c0, c1;
    blas_elem_holders(&w->lay, i, &r0, &r1, &c0, &c1);
    int owner = r0 * ctx->df.pc + c0;
    double buf = 0.0;
    if (ctx->rank == owner) buf = w->data[blas_layout_lidx(&w->lay, i)];
    DESO_TRY(deso__bcast(ctx->comm, &buf, 1, owner));
    *value = buf;
    return DESO_OK;
}

/* The checks every gather makes before anything moves: root in range, and
 * a buffer wherever data lands (count elements).  Sets *mine.             */
static deso_err gather_check(const deso_ctx *ctx, int root, const void *buf,
                             int64_t count, const char *fn, bool *mine)
{
    *mine = root == DESO_ALL_RANKS || root == ctx->rank;
    if (root != DESO_ALL_RANKS && (root < 0 || root >= ctx->size))
        return deso__fail(DESO_EINVAL, "%s: root %d out of range", fn, root);
    if (*mine && buf == NULL && count > 0)
        return deso__fail(DESO_ENULL, "%s: buf is NULL", fn);
    return DESO_OK;
}

deso_err deso__vec_gather(const deso_vec *x, double *buf, int root)
{
    static const char *fn = "deso_vec_gather";
    deso_ctx *ctx;
    deso__value *v;
    DESO_TRY(read_begin(x ? &x->h : NULL, BLAS_VEC, fn, &ctx, &v));
    bool mine;
    deso_err err = gather_check(ctx, root, buf, v->n, fn, &mine);
    blas_layout lay = blas_layout_vec(v->n, -1, 0,
                                      root == DESO_ALL_RANKS ? 3u : 0u,
                                      ctx->df.pr, ctx->df.pc);
    /* the view and the plan that fills it are made before the agreement  */
    if (err == DESO_OK) err = deso__value_reserve(ctx, v, &lay);
    DESO_TRY(agree(ctx, fn, err));
    deso__view *w;
    DESO_TRY(deso__value_view(ctx, v, &lay, &w));
    /* lay without replication sits on rank 0; move it on to the root      */
    if (root > 0) {
        int64_t cnt = v->n;
        if (ctx->rank == 0 && cnt > 0)
            DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &root,
                                    &w->data, &cnt, 0, NULL, NULL, NULL,
                                    &(MPI_Request){0}));
        if (ctx->rank == root && cnt > 0)
            DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL,
                                    NULL, 1, (int[]){0}, &buf, &cnt,
                                    &(MPI_Request){0}));
        return DESO_OK;
    }
    if (mine && v->n > 0)
        memcpy(buf, w->data, (size_t)v->n * sizeof(double));
    return DESO_OK;
}

static deso_err mat_gather_run(deso_ctx *ctx, const deso__value *v,
                               const deso__view *w, double *buf, int64_t ld,
                               int root, double *tmp, double *all);

/* deso_mat_gather of an out-of-core matrix: streamed to rank 0 or the
 * root (deso__ooc_to_array), then, for every rank, broadcast from rank 0
 * in place (no packed copy of the matrix): runs of whole columns within
 * MPI's int count when ld is m, else column by column.  local, the
 * checks so far, is agreed first.  Collective.                           */
static deso_err ooc_gather(deso_ctx *ctx, const deso__view *w, double *buf,
                           int64_t ld, int root, deso_err local,
                           const char *fn)
{
    DESO_TRY(agree(ctx, fn, local));
    int r0 = root == DESO_ALL_RANKS ? 0 : root;
    DESO_TRY(deso__ooc_to_array(ctx, w, buf, ld, r0, fn));
    int64_t m = w->lay.m, n = w->lay.n;
    if (root != DESO_ALL_RANKS || m == 0) return DESO_OK;
    int64_t step = ld == m ? INT32_MAX / m : 1;
    if (step < 1) step = 1;
    for (int64_t j = 0; j < n; j += step) {
        int64_t k = n - j < step ? n - j : step;
        DESO_TRY(deso__bcast(ctx->comm, buf + j * ld, k * m, 0));
    }
    return DESO_OK;
}

deso_err deso__mat_gather(const deso_mat *a, double *buf, int64_t ld, int root)
{
    static const char *fn = "deso_mat_gather";
    deso_ctx *ctx;
    deso__value *v;
    DESO_TRY(read_begin(a ? &a->h : NULL, BLAS_MAT, fn, &ctx, &v));
    bool mine;
    deso_err err = gather_check(ctx, root, buf, v->m * v->n, fn, &mine);
    if (err == DESO_OK && mine && ld < (v->m > 1 ? v->m : 1))
        err = deso__fail(DESO_EINVAL, "%s: ld = %lld < max(1, m = %lld)", fn,
                         (long long)ld, (long long)v->m);
    const deso__view *w = v->views;
    int r0 = root == DESO_ALL_RANKS ? 0 : root;
    if (v->ooc) return ooc_gather(ctx, w, buf, ld, root, err, fn);
    /* both buffers are allocated before the agreement: a rank that ran out
     * of memory halfway would leave the others waiting                     */
    double *tmp = NULL, *all = NULL;
    if (err == DESO_OK && ctx->rank == r0)
        err = piece_buffer(ctx, &w->lay, r0, fn, &tmp);
    if (err == DESO_OK && root == DESO_ALL_RANKS) {
        all = deso__malloc((size_t)(v->m * v->n) * sizeof(double));
        if (all == NULL) err = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    }
    err = agree(ctx, fn, err);
    if (err == DESO_OK) err = mat_gather_run(ctx, v, w, buf, ld, root, tmp,
                                             all);
    free(tmp);
    free(all);
    return err;
}

/* The communication of deso_mat_gather, once every rank has its buffers:
 * tmp (root: the largest remote piece), all (DESO_ALL_RANKS: m x n).     */
static deso_err mat_gather_run(deso_ctx *ctx, const deso__value *v,
                               const deso__view *w, double *buf, int64_t ld,
                               int root, double *tmp, double *all)
{
    int r0 = root == DESO_ALL_RANKS ? 0 : root;
    if (ctx->rank == r0) {
        unpack_local(&w->lay, ctx->coord[0], ctx->coord[1], w->data, buf, ld);
        for (int q = 0; q < ctx->size; q++) {
            if (q == r0) continue;
            int qr = q / ctx->df.pc, qc = q % ctx->df.pc;
            int64_t rows, cols;
            blas_layout_local(&w->lay, qr, qc, &rows, &cols);
            int64_t cnt = rows * cols;
            if (cnt == 0) continue;
            DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 0, NULL, NULL,
                                    NULL, 1, &q, &tmp, &cnt,
                                    &(MPI_Request){0}));
            unpack_local(&w->lay, qr, qc, tmp, buf, ld);
        }
    } else if (w->rows * w->cols > 0) {
        int64_t cnt = w->rows * w->cols;
        double *d = w->data;
        DESO_TRY(deso__exchange(ctx->comm, DESO__TAG_DATA, 1, &r0, &d, &cnt,
                                0, NULL, NULL, NULL, &(MPI_Request){0}));
    }
    if (root == DESO_ALL_RANKS && v->m * v->n > 0) {
        /* one broadcast of the packed matrix                               */
        if (ctx->rank == 0)
            for (int64_t j = 0; j < v->n; j++)
                memcpy(all + j * v->m, buf + j * ld,
                       (size_t)v->m * sizeof(double));
        DESO_TRY(deso__bcast(ctx->comm, all, v->m * v->n, 0));
        for (int64_t j = 0; j < v->n; j++)
            memcpy(buf + j * ld, all + j * v->m,
                   (size_t)v->m * sizeof(double));
    }
    return DESO_OK;
}
