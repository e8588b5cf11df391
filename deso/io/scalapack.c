/* ScaLAPACK interoperability: deso matrices and vectors from ScaLAPACK
 * descriptors and local arrays, and back.
 *
 * A deso matrix on an R x C grid is stored exactly as ScaLAPACK stores a
 * block-cyclic matrix with RSRC = CSRC = 0 on a BLACS grid made with
 * Cblacs_gridinit(..., "Row", R, C) over the context's communicator: grid
 * position (r, c) is communicator rank r * C + c, and the local piece is
 * column-major with leading dimension max(1, local rows).  So a descriptor
 * whose LLD equals the local row count can be borrowed without a copy, and
 * a deso view can be handed out as a ScaLAPACK local array.  A vector is
 * ScaLAPACK's n x 1 matrix: rows block-cyclic over grid rows, all of it in
 * grid column 0 (CSRC = 0).
 *
 * BLACS's C interface has no header in Debian; the prototypes are below.  */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/ooc.h"
#include "deso/io/api_io.h"
#include "placement/alloc.h"

int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow,
                     int *mycol);
void Cblacs_gridexit(int ctxt);

deso_err deso__blacs_context(deso_ctx *ctx, int *ctxt)
{
    static const char *fn = "deso_blacs_context";
    DESO_TRY(deso__ctx_check(ctx, fn));
    DESO_CHECK(ctxt != NULL, DESO_ENULL, "%s: ctxt is NULL", fn);
    *ctxt = -1;
    /* a BLACS system handle for our own communicator, so that BLACS
     * numbers processes by their rank in it (Cblacs_get(-1, 0, ...) would
     * number MPI_COMM_WORLD ranks); "Row" maps grid position (r, c) to
     * rank r * C + c, deso's own numbering                                  */
    int sys = Csys2blacs_handle(ctx->comm);
    int c = sys;
    Cblacs_gridinit(&c, "Row", ctx->df.pr, ctx->df.pc);
    Cfree_blacs_system_handle(sys);
    int pr = -1, pc = -1, r = -1, col = -1;
    if (c >= 0) Cblacs_gridinfo(c, &pr, &pc, &r, &col);
    deso_err err = DESO_OK;
    if (c < 0 || pr != ctx->df.pr || pc != ctx->df.pc ||
        r != ctx->coord[0] || col != ctx->coord[1])
        err = deso__fail(DESO_EGRID, "%s: BLACS made a %dx%d grid with this "
                         "rank at (%d, %d), expected %dx%d at (%d, %d)", fn,
                         pr, pc, r, col, ctx->df.pr, ctx->df.pc,
                         ctx->coord[0], ctx->coord[1]);
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    if (err != DESO_OK) {
        if (c >= 0 && pr > 0) Cblacs_gridexit(c);
        return err;
    }
    *ctxt = c;
    return DESO_OK;
}

/* This rank's view of a BLACS context must be the deso grid position.    */
static deso_err grid_check(const deso_ctx *ctx, int ctxt, const char *fn)
{
    DESO_CHECK(ctxt >= 0, DESO_EGRID, "%s: BLACS context %d is invalid", fn,
               ctxt);
    int pr = -1, pc = -1, r = -1, c = -1;
    Cblacs_gridinfo(ctxt, &pr, &pc, &r, &c);
    DESO_CHECK(pr == ctx->df.pr && pc == ctx->df.pc && r == ctx->coord[0] &&
                   c == ctx->coord[1],
               DESO_EGRID,
               "%s: BLACS context %d is a %dx%d grid with this rank at (%d, "
               "%d); the deso context needs %dx%d with it at (%d, %d) (use "
               "deso_blacs_context, or Cblacs_gridinit \"Row\" over the same "
               "ranks in the same order)",
               fn, ctxt, pr, pc, r, c, ctx->df.pr, ctx->df.pc, ctx->coord[0],
               ctx->coord[1]);
    return DESO_OK;
}

/* Checks a descriptor against the context; the layout it describes.     */
static deso_err desc_check(const deso_ctx *ctx, const int desc[9],
                           bool vec, const char *fn, blas_layout *lay)
{
    DESO_CHECK(desc[0] == 1, DESO_EINVAL, "%s: DTYPE = %d, expected 1", fn,
               desc[0]);
    DESO_CHECK(desc[2] >= 0 && desc[3] >= 0, DESO_ESIZE,
               "%s: M = %d, N = %d", fn, desc[2], desc[3]);
    DESO_CHECK(desc[4] >= 1 && desc[5] >= 1, DESO_EINVAL,
               "%s: MB = %d, NB = %d (must be >= 1)", fn, desc[4], desc[5]);
    DESO_CHECK(desc[6] == 0 && desc[7] == 0, DESO_ENOTSUP,
               "%s: RSRC = %d, CSRC = %d (only 0 supported)", fn, desc[6],
               desc[7]);
    DESO_CHECK(!vec || desc[3] == 1, DESO_ESIZE,
               "%s: N = %d, a vector is an M x 1 descriptor", fn, desc[3]);
    DESO_TRY(grid_check(ctx, desc[1], fn));
    if (vec)
        *lay = blas_layout_vec(desc[2], 0, desc[4], 0u, ctx->df.pr,
                               ctx->df.pc);
    else
        *lay = blas_layout_mat(desc[2], desc[3], desc[4], desc[5],
                               ctx->df.pr, ctx->df.pc);
    int64_t rows, cols;
    blas_layout_local(lay, ctx->coord[0], ctx->coord[1], &rows, &cols);
    DESO_CHECK(desc[8] >= (rows > 1 ? rows : 1), DESO_EINVAL,
               "%s: LLD = %d < max(1, local rows %lld)", fn, desc[8],
               (long long)rows);
    return DESO_OK;
}

/* A ready value in `lay` holding this rank's piece of `local` (leading
 * dimension lld): its own copy, or the array itself when borrowing is
 * possible (the view's leading dimension is its row count).              */
static deso_err wrap(deso_ctx *ctx, blas_kind kind, const blas_layout *lay,
                     double *local, int64_t lld, deso_copy_mode mode,
                     deso__handle **h)
{
    deso__value *v = deso__value_new(kind, lay->kind == BLAS_MAT ? lay->m : 1,
                                     lay->n);
    DESO_CHECK(v != NULL, DESO_ENOMEM, "out of memory");
    deso_err err = deso__view_alloc(ctx, lay, &v->views);
    if (err == DESO_OK) {
        deso__view *w = v->views;
        bool same = w->cols <= 1 || lld == w->rows;
        if (mode == DESO_BORROW && same && w->rows * w->cols > 0) {
            free(w->data);
            w->data = local;
            w->borrowed = true;
        } else {
            for (int64_t j = 0; j < w->cols; j++)
                memcpy(w->data + j * w->rows, local + j * lld,
                       (size_t)w->rows * sizeof(double));
        }
        v->ready = true;
        err = deso__handle_new(ctx, kind, v, h);
    }
    if (err != DESO_OK) {
        v->refs = 1;
        deso__value_unref(v);
    }
    return err;
}

static deso_err from_scalapack(deso_ctx *ctx, double *local, const int desc[9],
                               deso_copy_mode mode, bool vec, void *out,
                               const char *fn)
{
    DESO_TRY(deso__ctx_check(ctx, fn));
    deso_err err = DESO_OK;
    blas_layout lay;
    if (out == NULL || desc == NULL)
        err = deso__fail(DESO_ENULL, "%s: NULL descriptor or out-parameter",
                         fn);
    else if (mode != DESO_COPY && mode != DESO_BORROW)
        err = deso__fail(DESO_EINVAL, "%s: mode %d is not DESO_COPY or "
                         "DESO_BORROW", fn, (int)mode);
    else
        err = desc_check(ctx, desc, vec, fn, &lay);
    if (err == DESO_OK) {
        int64_t rows, cols;
        blas_layout_local(&lay, ctx->coord[0], ctx->coord[1], &rows, &cols);
        if (local == NULL && rows * cols > 0)
            err = deso__fail(DESO_ENULL, "%s: local array is NULL", fn);
    }
    /* a bad descriptor on one rank fails every rank: handle creation is
     * collective (it enters the SPMD hash)                                  */
    DESO_TRY(deso__agree_counted(ctx, fn, err, NULL, 0));
    deso__handle *h;
    DESO_TRY(wrap(ctx, vec ? BLAS_VEC : BLAS_MAT, &lay, local, desc[8], mode,
                  &h));
    if (vec) *(deso_vec **)out = (deso_vec *)h;
    else *(deso_mat **)out = (deso_mat *)h;
    return DESO_OK;
}

deso_err deso__mat_from_scalapack(deso_ctx *ctx, double *local,
                                 const int desc[9], deso_copy_mode mode,
                                 deso_mat **out)
{
    return from_scalapack(ctx, local, desc, mode, false, out,
                          "deso_mat_from_scalapack");
}

deso_err deso__vec_from_scalapack(deso_ctx *ctx, double *local,
                                 const int desc[9], deso_copy_mode mode,
                                 deso_vec **out)
{
    return from_scalapack(ctx, local, desc, mode, true, out,
                          "deso_vec_from_scalapack");
}

/* Forces, brings the value into `lay` and hands out its local piece.     */
static deso_err to_scalapack(deso_ctx *ctx, deso__value *v,
                             const blas_layout *lay, int ctxt, int mb, int nb,
                             deso_copy_mode mode, int desc[9], double **local,
                             const char *fn)
{
    deso__view *w;
    DESO_TRY(deso__mat_in_core(v, fn));
    DESO_TRY(deso__value_view(ctx, v, lay, &w));
    int m, n, lld;
    DESO_TRY(deso__to_int(v->kind == BLAS_MAT ? v->m : v->n, "M", &m));
    DESO_TRY(deso__to_int(v->kind == BLAS_MAT ? v->n : 1, "N", &n));
    /* ScaLAPACK wants LLD >= NUMROC(M) even where a rank holds no column
     * (deso's local shape is 0 there)                                       */
    int64_t lr = blas_numroc(v->kind == BLAS_MAT ? v->m : v->n, mb,
                             ctx->coord[0], ctx->df.pr);
    DESO_TRY(deso__to_int(lr > 1 ? lr : 1, "LLD", &lld));
    double *buf = w->data;
    if (mode == DESO_COPY) {
        int64_t len = w->rows * w->cols;
        buf = deso__malloc((size_t)(len > 0 ? len : 1) * sizeof(double));
        DESO_CHECK(buf != NULL, DESO_ENOMEM, "%s: out of memory", fn);
        if (len > 0) memcpy(buf, w->data, (size_t)len * sizeof(double));
    }
    int d[9] = {1, ctxt, m, n, mb, nb, 0, 0, lld};
    memcpy(desc, d, sizeof d);
    *local = buf;
    return DESO_OK;
}

/* Shared front half of the two exports: checks, the BLACS context (made
 * when ctxt < 0), the force.                                              */
static deso_err export_begin(const deso__handle *h, blas_kind kind, int *ctxt,
                             deso_copy_mode mode, const int *desc,
                             double **local, deso_ctx **ctx, const char *fn)
{
    *ctx = NULL;
    DESO_TRY(deso__handle_check(h, kind, ctx, fn, "handle"));
    deso_err err = DESO_OK;
    if (desc == NULL || local == NULL)
        err = deso__fail(DESO_ENULL, "%s: desc or local is NULL", fn);
    else if (mode != DESO_COPY && mode != DESO_BORROW)
        err = deso__fail(DESO_EINVAL, "%s: mode %d is not DESO_COPY or "
                         "DESO_BORROW", fn, (int)mode);
    else if (*ctxt >= 0)
        err = grid_check(*ctx, *ctxt, fn);
    DESO_TRY(deso__agree_counted(*ctx, fn, err, NULL, 0));
    DESO_TRY(deso__view_sync(*ctx, (deso__handle *)h));
    DESO_TRY(deso__force(*ctx));
    DESO_TRY(deso__value_usable(h->val, fn));
    DESO_CHECK(h->val->ready && h->val->views, DESO_EINTERNAL,
               "%s: value not computed after a force", fn);
    if (*ctxt < 0) DESO_TRY(deso__blacs_context(*ctx, ctxt));
    return DESO_OK;
}

deso_err deso__mat_to_scalapack(const deso_mat *a, int ctxt, int64_t mb,
                               int64_t nb, deso_copy_mode mode, int desc[9],
                               double **local)
{
    static const char *fn = "deso_mat_to_scalapack";
    deso_ctx *ctx;
    const deso__handle *h = a ? &a->h : NULL;
    if (local != NULL) *local = NULL;
    int made = ctxt < 0;
    DESO_TRY(export_begin(h, BLAS_MAT, &ctxt, mode, desc, local, &ctx, fn));
    deso__value *v = h->val;
    if (mb == 0 && nb == 0) {       /* keep the matrix's current folding */
        mb = v->views->lay.b;
        nb = v->views->lay.nb;
    }
    deso_err err = DESO_OK;
    int imb = 0, inb = 0;
    if (mb < 1 || nb < 1)
        err = deso__fail(DESO_EINVAL, "%s: mb = %lld, nb = %lld (>= 1, or "
                         "both 0)", fn, (long long)mb, (long long)nb);
    if (err == DESO_OK) err = deso__to_int(mb, "MB", &imb);
    if (err == DESO_OK) err = deso__to_int(nb, "NB", &inb);
    if (err == DESO_OK) {
        blas_layout lay = blas_layout_mat(v->m, v->n, mb, nb, ctx->df.pr,
                                          ctx->df.pc);
        err = to_scalapack(ctx, v, &lay, ctxt, imb, inb, mode, desc, local,
                           fn);
    }
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    if (err != DESO_OK && made) Cblacs_gridexit(ctxt);
    if (err != DESO_OK && mode == DESO_COPY && *local != NULL) {
        free(*local);
        *local = NULL;
    }
    return err;
}

deso_err deso__vec_to_scalapack(const deso_vec *x, int ctxt, int64_t mb,
                               deso_copy_mode mode, int desc[9],
                               double **local)
{
    static const char *fn = "deso_vec_to_scalapack";
    deso_ctx *ctx;
    const deso__handle *h = x ? &x->h : NULL;
    if (local != NULL) *local = NULL;
    int made = ctxt < 0;
    DESO_TRY(export_begin(h, BLAS_VEC, &ctxt, mode, desc, local, &ctx, fn));
    deso__value *v = h->val;
    if (mb == 0) {
        int64_t one = v->n > 1 ? v->n : 1;
        mb = ctx->nb_opt > 0 ? ctx->nb_opt
                             : (one + ctx->df.pr - 1) / ctx->df.pr;
    }
    deso_err err = DESO_OK;
    int imb = 0;
    if (mb < 1)
        err = deso__fail(DESO_EINVAL, "%s: mb = %lld < 0", fn,
                         (long long)mb);
    if (err == DESO_OK) err = deso__to_int(mb, "MB", &imb);
    if (err == DESO_OK) {
        blas_layout lay = blas_layout_vec(v->n, 0, mb, 0u, ctx->df.pr,
                                          ctx->df.pc);
        err = to_scalapack(ctx, v, &lay, ctxt, imb, 1, mode, desc, local, fn);
    }
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    if (err != DESO_OK && made) Cblacs_gridexit(ctxt);
    if (err != DESO_OK && mode == DESO_COPY && *local != NULL) {
        free(*local);
        *local = NULL;
    }
    return err;
}
