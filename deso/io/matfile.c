/* Global matrix files: deso_mat_to_file and deso_mat_from_file (the format
 * is in deso.h).
 *
 * Every rank reads or writes its own block-cyclic piece straight between
 * the file and its local array with MPI-IO collective calls, the file view
 * being the piece's MPI_Type_create_darray: MPI-IO's two-phase collective
 * I/O then turns the scattered blocks into large contiguous file accesses
 * (the two-phase method of Thakur's runtime support for out-of-core
 * arrays).  A darray type of the whole matrix would need element counts
 * beyond MPI's int, so the file is crossed in slabs of whole block columns:
 * a slab starts at a multiple of nb * (grid columns), so the cyclic pattern
 * restarts at grid column 0 and the slab is a matrix of its own with the
 * same distribution, and its local columns are contiguous in the local
 * array.  When one block column of local rows is itself over the limit (a
 * grid of one column has one block column of n), a slab is part of one
 * block column instead: a matrix of one column block, which the grid
 * column owning it holds alone (each rank's darray is made as if that
 * grid column were the first).
 *
 * An out-of-core matrix's slabs pass through the slab buffers: read from
 * the file then written to the local array file, or read from the local
 * array file then written to the file; the slab width then also keeps
 * every rank's part of a slab within the buffers (deso__ooc_stream_width),
 * so no rank ever holds its whole piece.
 *
 * The checksum is a sum over the elements, so each rank adds up its own
 * part while the slab it just read is still in cache, and one all-reduce
 * at the end compares the total with the header's: no second pass.       */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "deso/core/mpi.h"
#include "deso/io/io.h"
#include "deso/io/api_io.h"
#include "deso/runtime/ooc.h"
#include "placement/alloc.h"

#define HEADER_BYTES 64
#define VERSION 1u
static const char MAGIC[8] = {'D', 'E', 'S', 'O', 'M', 'A', 'T', '\0'};

/* Local elements of one slab at most: keeps every count an int and the
 * darray type's size far below 2^31 bytes.  Settable so that small
 * matrices can be crossed in many slabs (deso__matfile_slab_limit).      */
#define SLAB_ELEMS ((int64_t)1 << 26)
static int64_t slab_elems = SLAB_ELEMS;

void deso__matfile_slab_limit(int64_t elems)
{
    slab_elems = elems >= 1 && elems <= SLAB_ELEMS ? elems : SLAB_ELEMS;
}

typedef struct file_header {
    char magic[8];
    uint32_t version, header_bytes;
    int64_t m, n;
    uint64_t checksum;
    unsigned char zero[24];
} file_header;

_Static_assert(sizeof(file_header) == HEADER_BYTES, "header is 64 bytes");

/* splitmix64's finaliser of the value's bits offset by its global index:
 * a moved, swapped or changed element changes the sum.                   */
static uint64_t mix(uint64_t k, double x)
{
    uint64_t z;
    memcpy(&z, &x, sizeof z);
    z ^= k * 0x9E3779B97F4A7C15ull;
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The file's part of one rank's piece: grid, position, local rows; its
 * elements in memory (data), or in a local array file (ooc) passing
 * through buf, which holds `limit` elements.                              */
typedef struct piece {
    const blas_layout *lay;
    int r, c;
    int64_t rows, cols, ld;
    double *data;
    deso__ooc *ooc;
    double *buf;
    int64_t limit;
} piece;

/* Adds the checksum terms of local columns [lc0, lc1), held in at.        */
static uint64_t piece_sum(const piece *p, const double *at, int64_t m,
                          int64_t lc0, int64_t lc1)
{
    const blas_layout *l = p->lay;
    uint64_t s = 0;
    for (int64_t lj = lc0; lj < lc1; lj++) {
        int64_t j = blas_cyc_global(l->nb, l->pc, p->c, lj);
        const double *col = at + (lj - lc0) * p->ld;
        for (int64_t li = 0; li < p->rows; li++) {
            int64_t i = blas_cyc_global(l->b, l->pr, p->r, li);
            s += mix((uint64_t)(i + j * m), col[li]);
        }
    }
    return s;
}

/* The most local rows any rank has (grid row 0 holds the first block).    */
static int64_t rows_max(const blas_layout *l, int64_t m)
{
    return blas_numroc(m, l->b, 0, l->pr);
}

/* Whether MPI's int arguments can describe the layout's slabs: the row
 * block as a darray argument (the rows are checked with the shape; a
 * slab's other extents and counts are kept within slab_elems).  Checked
 * (and agreed) before any I/O, so that no count is ever truncated.       */
static deso_err slab_fits(const blas_layout *l, int64_t m, const char *fn)
{
    (void)m;
    DESO_CHECK(l->b <= INT_MAX, DESO_ENOTSUP, "%s: row blocks of %lld "
               "exceed MPI's int counts", fn, (long long)l->b);
    return DESO_OK;
}

/* The most local elements of one slab: slab_elems and p's limit.          */
static int64_t slab_most(const piece *p)
{
    return p->limit < slab_elems ? p->limit : slab_elems;
}

/* Whether the slabs are parts of block columns: one block column of local
 * rows exceeds the limit.                                                 */
static bool slab_parts(const piece *p, int64_t m)
{
    return rows_max(p->lay, m) > slab_most(p) / p->lay->nb;
}

/* The columns of every slab: a multiple of nb * pc, as many as keep the
 * local elements of a slab under the limit (at least one block column,
 * which slab_parts keeps within it); or, for parts of block columns, as
 * many columns as the limit holds.                                       */
static int64_t slab_width(const piece *p, int64_t m)
{
    const blas_layout *l = p->lay;
    int64_t rows = rows_max(l, m) > 0 ? rows_max(l, m) : 1;
    if (slab_parts(p, m)) return slab_most(p) / rows > 0 ? slab_most(p) / rows
                                                         : 1;
    int64_t step = l->nb * l->pc;
    int64_t k = slab_most(p) / (rows * l->nb);
    if (k > INT_MAX / step) k = INT_MAX / step;
    return (k < 1 ? 1 : k) * step;
}

/* The darray view of the slab of columns [j0, j0 + w): a matrix with the
 * piece's distribution, or, for a part of a block column, of one column
 * block (w), its owner made the first grid column.                        */
static deso_err slab_view(MPI_File fh, const piece *p, int64_t m, int64_t j0,
                          int64_t w, bool part)
{
    const blas_layout *l = p->lay;
    int gs[2] = {(int)m, (int)w};
    int dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int darg[2] = {(int)l->b, part ? (int)w : (int)l->nb};
    int ps[2] = {l->pr, l->pc};
    int owner = part ? (int)((j0 / l->nb) % l->pc) : 0;
    int c = (p->c - owner + l->pc) % l->pc;
    MPI_Datatype t;
    DESO_TRY(deso__mpi(MPI_Type_create_darray(l->pr * l->pc, p->r * l->pc + c,
                                              2, gs, dist, darg, ps,
                                              MPI_ORDER_FORTRAN, MPI_DOUBLE,
                                              &t),
                       "MPI_Type_create_darray"));
    deso_err err = deso__mpi(MPI_Type_commit(&t), "MPI_Type_commit");
    MPI_Offset disp = HEADER_BYTES + (MPI_Offset)j0 * m * (MPI_Offset)8;
    if (err == DESO_OK)
        err = deso__mpi(MPI_File_set_view(fh, disp, MPI_DOUBLE, t, "native",
                                          MPI_INFO_NULL),
                        "MPI_File_set_view");
    MPI_Type_free(&t);
    return err;
}

/* Local columns of the slab starting at global column j0 (a multiple of
 * nb * pc, or within one block column for a part), of width w:
 * [lc0, lc0 + count).                                                    */
static void slab_local(const piece *p, int64_t j0, int64_t w, bool part,
                       int64_t *lc0, int64_t *count)
{
    const blas_layout *l = p->lay;
    int64_t step = l->nb * l->pc;
    *lc0 = j0 / step * l->nb + (part ? j0 % l->nb : 0);
    if (part) *count = (j0 / l->nb) % l->pc == p->c ? w : 0;
    else *count = blas_numroc(w, l->nb, p->c, l->pc);
}

/* Reads (write = false) or writes one slab of the piece, collectively,
 * adding the checksum of what passes.  An out-of-core piece's columns
 * pass through its buffer; a rank whose local array file fails still
 * takes part in the collective call, with nothing to write.               */
static deso_err cross_slab(MPI_File fh, const piece *p, int64_t m, int64_t j0,
                           int64_t wj, bool part, bool write, uint64_t *sum)
{
    int64_t lc0, lcn;
    slab_local(p, j0, wj, part, &lc0, &lcn);
    DESO_TRY(slab_view(fh, p, m, j0, wj, part));
    double *at = p->ooc != NULL ? p->buf : p->data + lc0 * p->ld;
    int cnt = (int)(p->rows * lcn);      /* within an int: slab_width     */
    MPI_Status st;
    if (write) {
        deso_err err = p->ooc != NULL
                           ? deso__ooc_io_counted(p->ooc, false, lc0, lcn, at)
                           : DESO_OK;
        if (err == DESO_OK) *sum += piece_sum(p, at, m, lc0, lc0 + lcn);
        deso_err wr = deso__mpi(MPI_File_write_all(fh, at,
                                                   err == DESO_OK ? cnt : 0,
                                                   MPI_DOUBLE, &st),
                                "MPI_File_write_all");
        return err != DESO_OK ? err : wr;
    }
    DESO_TRY(deso__mpi(MPI_File_read_all(fh, at, cnt, MPI_DOUBLE, &st),
                       "MPI_File_read_all"));
    *sum += piece_sum(p, at, m, lc0, lc0 + lcn);
    if (p->ooc == NULL) return DESO_OK;
    return deso__ooc_io_counted(p->ooc, true, lc0, lcn, at);
}

/* Every slab in turn; each slab's outcome is agreed, so that a rank whose
 * I/O failed does not leave the others in the next slab's collectives.   */
static deso_err cross_slabs(deso_ctx *ctx, MPI_File fh, const piece *p,
                            int64_t m, int64_t n, bool write, uint64_t *sum,
                            const char *fn)
{
    int64_t w = slab_width(p, m);
    bool part = slab_parts(p, m);
    /* a part ends at its block column's end                              */
    int64_t span = part ? p->lay->nb : n;
    *sum = 0;
    for (int64_t b0 = 0; b0 < n; b0 += span) {
        int64_t end = n - b0 < span ? n : b0 + span;
        for (int64_t j0 = b0; j0 < end; j0 += w) {
            deso_err err = cross_slab(fh, p, m, j0, end - j0 < w ? end - j0 : w,
                                      part, write, sum);
            DESO_TRY(deso__agree_counted(ctx, fn, err, NULL, 0));
        }
    }
    return DESO_OK;
}

/* The global checksum from every rank's part (sums wrap modulo 2^64).     */
static deso_err sum_all(deso_ctx *ctx, uint64_t *sum)
{
    return deso__mpi(MPI_Allreduce(MPI_IN_PLACE, sum, 1, MPI_UINT64_T, MPI_SUM,
                                   ctx->comm),
                     "MPI_Allreduce (checksum)");
}

/* A failed MPI-IO call on the file as DESO_EIO, with MPI's reason.        */
static deso_err io_fail(int rc, const char *fn, const char *what)
{
    if (rc == MPI_SUCCESS) return DESO_OK;
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    return deso__fail(DESO_EIO, "%s: %s: %.*s", fn, what, len, s);
}

/* Opens path collectively (every rank's arguments agreed first, as the
 * open is a collective call); every rank returns the same outcome, and no
 * rank keeps a handle when any failed.                                    */
static deso_err open_agreed(deso_ctx *ctx, const char *path, int amode,
                            const char *fn, MPI_File *fh)
{
    *fh = MPI_FILE_NULL;
    int rc = MPI_File_open(ctx->comm, path, amode, MPI_INFO_NULL, fh);
    deso_err err = rc == MPI_SUCCESS ? DESO_OK
                                     : io_fail(rc, fn, "cannot open the file");
    if (rc != MPI_SUCCESS) *fh = MPI_FILE_NULL;
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    if (err != DESO_OK && *fh != MPI_FILE_NULL) MPI_File_close(fh);
    return err;
}

/* The piece of a view on the context's grid; an out-of-core one's slabs
 * pass through the slab buffers (deso__ooc_stream_width).  Agreed.
 * Collective.                                                            */
static deso_err piece_of(deso_ctx *ctx, deso__view *w, const char *fn,
                         piece *p)
{
    *p = (piece){&w->lay, ctx->coord[0], ctx->coord[1], w->rows, w->cols,
                 w->rows > 1 ? w->rows : 1, w->data, w->ooc, NULL,
                 SLAB_ELEMS};
    if (w->ooc == NULL) return DESO_OK;
    int64_t k;
    DESO_TRY(deso__ooc_stream_width(ctx, w, 1, DESO_OK, fn, &k));
    p->buf = deso__ooc_slab_buf(ctx, 0);
    p->limit = rows_max(&w->lay, w->lay.m) * k;
    return DESO_OK;
}

/* The value's view to write: its first one, or the default layout when
 * that one's grid is not the context's (darray needs every rank).         */
static deso_err write_view(deso_ctx *ctx, deso__value *v, deso__view **w)
{
    *w = v->views;
    if ((*w)->lay.pr * (*w)->lay.pc == ctx->size) return DESO_OK;
    blas_layout lay = opt_default_mat(&ctx->df, v->m, v->n);
    return deso__value_view(ctx, v, &lay, w);
}

static deso_err write_body(deso_ctx *ctx, deso__value *v, MPI_File fh,
                           const char *fn)
{
    deso__view *w;
    deso_err err = write_view(ctx, v, &w);
    if (err == DESO_OK) err = slab_fits(&w->lay, v->m, fn);
    DESO_TRY(deso__agree_counted(ctx, fn, err, NULL, 0));
    piece p;
    DESO_TRY(piece_of(ctx, w, fn, &p));
    uint64_t sum = 0;
    MPI_Offset size = HEADER_BYTES + (MPI_Offset)v->m * v->n * 8;
    err = deso__mpi(MPI_File_set_size(fh, size), "MPI_File_set_size");
    DESO_TRY(deso__agree_counted(ctx, fn, err, NULL, 0));
    if (v->m > 0 && v->n > 0)
        DESO_TRY(cross_slabs(ctx, fh, &p, v->m, v->n, true, &sum, fn));
    DESO_TRY(sum_all(ctx, &sum));
    file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MAGIC, sizeof MAGIC);
    h.version = VERSION;
    h.header_bytes = HEADER_BYTES;
    h.m = v->m;
    h.n = v->n;
    h.checksum = sum;
    /* offsets count in the current view's units: back to plain bytes     */
    DESO_TRY(deso__mpi(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native",
                                         MPI_INFO_NULL),
                       "MPI_File_set_view"));
    err = DESO_OK;
    if (ctx->rank == 0)
        err = deso__mpi(MPI_File_write_at(fh, 0, &h, HEADER_BYTES, MPI_BYTE,
                                          MPI_STATUS_IGNORE),
                        "MPI_File_write_at (header)");
    return deso__agree_counted(ctx, fn, err, NULL, 0);
}

deso_err deso__mat_to_file(const deso_mat *a, const char *path)
{
    static const char *fn = "deso_mat_to_file";
    deso_ctx *ctx = NULL;
    const deso__handle *h = a ? &a->h : NULL;
    DESO_TRY(deso__handle_check(h, BLAS_MAT, &ctx, fn, "a"));
    deso_err mine = path == NULL
                        ? deso__fail(DESO_ENULL, "%s: path is NULL (arg 2)", fn)
                    : h->val->m > INT_MAX
                        ? deso__fail(DESO_ENOTSUP, "%s: %lld rows: at most %d",
                                     fn, (long long)h->val->m, INT_MAX)
                        : DESO_OK;
    DESO_TRY(deso__agree_counted(ctx, fn, mine, NULL, 0));
    /* the force first: a failed one leaves no new, empty file behind     */
    deso_err err = deso__view_sync(ctx, (deso__handle *)h);
    if (err == DESO_OK) err = deso__force(ctx);
    if (err == DESO_OK) err = deso__value_usable(h->val, fn);
    DESO_TRY(deso__agree_counted(ctx, fn, err, NULL, 0));
    MPI_File fh;
    DESO_TRY(open_agreed(ctx, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, fn, &fh));
    err = write_body(ctx, h->val, fh, fn);
    MPI_File_close(&fh);
    return err;
}

/* Rank 0's reading of the header, checked against the file's size before
 * anything is allocated from it.                                          */
static deso_err header_read(MPI_File fh, file_header *h, const char *fn)
{
    MPI_Offset size;
    DESO_TRY(io_fail(MPI_File_get_size(fh, &size), fn, "cannot size the file"));
    DESO_CHECK(size >= HEADER_BYTES, DESO_EIO,
               "%s: %lld bytes: shorter than the %d-byte header", fn,
               (long long)size, HEADER_BYTES);
    DESO_TRY(io_fail(MPI_File_read_at(fh, 0, h, HEADER_BYTES, MPI_BYTE,
                                      MPI_STATUS_IGNORE),
                     fn, "cannot read the header"));
    DESO_CHECK(memcmp(h->magic, MAGIC, sizeof MAGIC) == 0, DESO_EIO,
               "%s: not a deso matrix file (bad magic)", fn);
    DESO_CHECK(h->version != __builtin_bswap32(VERSION), DESO_EIO,
               "%s: written with the other byte order", fn);
    DESO_CHECK(h->version == VERSION && h->header_bytes == HEADER_BYTES,
               DESO_EIO, "%s: version %u, header %u bytes: this reader "
               "knows version %u, %d bytes", fn, h->version, h->header_bytes,
               VERSION, HEADER_BYTES);
    DESO_CHECK(h->m >= 0 && h->n >= 0 && h->m <= INT_MAX, DESO_EIO,
               "%s: shape %lld x %lld", fn, (long long)h->m, (long long)h->n);
    int64_t cap = (INT64_MAX - HEADER_BYTES) / 8;
    DESO_CHECK(h->m == 0 || h->n <= cap / h->m, DESO_EIO,
               "%s: shape %lld x %lld overflows", fn, (long long)h->m,
               (long long)h->n);
    DESO_CHECK(size == HEADER_BYTES + h->m * h->n * 8, DESO_EIO,
               "%s: %lld bytes, expected %lld for %lld x %lld", fn,
               (long long)size, (long long)(HEADER_BYTES + h->m * h->n * 8),
               (long long)h->m, (long long)h->n);
    return DESO_OK;
}

/* Rank 0's header (or its error) on every rank.                           */
static deso_err header_share(deso_ctx *ctx, MPI_File fh, file_header *h,
                             const char *fn)
{
    deso_err err = ctx->rank == 0 ? header_read(fh, h, fn) : DESO_OK;
    DESO_TRY(deso__agree_counted(ctx, fn, err, NULL, 0));
    int64_t f[3] = {h->m, h->n, (int64_t)h->checksum};
    DESO_TRY(deso__mpi(MPI_Bcast(f, 3, MPI_INT64_T, 0, ctx->comm),
                       "MPI_Bcast (file header)"));
    h->m = f[0];
    h->n = f[1];
    h->checksum = (uint64_t)f[2];
    return DESO_OK;
}

/* A new ready matrix in the default layout, filled from the file.         */
static deso_err read_body(deso_ctx *ctx, MPI_File fh, const file_header *h,
                          deso__handle **out, const char *fn)
{
    blas_layout lay = opt_default_mat(&ctx->df, h->m, h->n);
    deso__value *v = deso__value_new(BLAS_MAT, h->m, h->n);
    deso_err err = slab_fits(&lay, h->m, fn);
    deso__view *home = NULL;
    err = deso__mat_home(ctx, &lay, err, fn, &home);
    if (err == DESO_OK && v == NULL)
        err = deso__fail(DESO_ENOMEM, "%s: no memory", fn);
    if (err == DESO_OK && home != NULL) {
        v->views = home;
        v->ooc = true;
        home = NULL;
    } else if (err == DESO_OK) {
        err = deso__view_alloc(ctx, &lay, &v->views);
    }
    deso__view_free(home);
    err = deso__agree_counted(ctx, fn, err, NULL, 0);
    uint64_t sum = 0;
    if (err == DESO_OK && h->m > 0 && h->n > 0) {
        piece p;
        err = piece_of(ctx, v->views, fn, &p);
        if (err == DESO_OK)
            err = cross_slabs(ctx, fh, &p, h->m, h->n, false, &sum, fn);
    }
    if (err == DESO_OK) err = sum_all(ctx, &sum);
    if (err == DESO_OK && sum != h->checksum)
        err = deso__fail(DESO_EIO, "%s: checksum mismatch (file %016llx, "
                         "data %016llx): the file is corrupt", fn,
                         (unsigned long long)h->checksum,
                         (unsigned long long)sum);
    if (err == DESO_OK) {
        v->ready = true;
        err = deso__handle_new(ctx, BLAS_MAT, v, out);
    }
    if (err != DESO_OK && v != NULL) {
        v->refs = 1;
        deso__value_unref(v);
    }
    return err;
}

deso_err deso__mat_from_file(deso_ctx *ctx, const char *path, deso_mat **out)
{
    static const char *fn = "deso_mat_from_file";
    DESO_TRY(deso__ctx_check(ctx, fn));
    deso_err mine = out == NULL
                        ? deso__fail(DESO_ENULL, "%s: out is NULL (arg 3)", fn)
                    : path == NULL
                        ? deso__fail(DESO_ENULL, "%s: path is NULL (arg 2)", fn)
                        : DESO_OK;
    if (out != NULL) *out = NULL;
    DESO_TRY(deso__agree_counted(ctx, fn, mine, NULL, 0));
    MPI_File fh;
    DESO_TRY(open_agreed(ctx, path, MPI_MODE_RDONLY, fn, &fh));
    file_header h;
    memset(&h, 0, sizeof h);
    deso__handle *hd = NULL;
    deso_err err = header_share(ctx, fh, &h, fn);
    if (err == DESO_OK) err = read_body(ctx, fh, &h, &hd, fn);
    MPI_File_close(&fh);
    if (err == DESO_OK) *out = (deso_mat *)hd;
    return err;
}
