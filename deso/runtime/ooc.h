/* Internal: out-of-core matrices.  A matrix whose local part does not fit
 * what is left of some rank's memory budget (deso_options.mem_limit)
 * lives, on every rank, in a local array file (ooc_file.c); where a new
 * matrix lives is decided and agreed when it is made (ooc_make.c), and
 * the operations that can stream it (dgemv, dsymv, dtrmv, dger, dsyr,
 * dsyr2) read it in slabs of whole column chunks while the previous slab
 * is computed on (ooc_exec.c).  Its layout is pinned: nothing remaps it. */
#ifndef DESO_OOC_H
#define DESO_OOC_H

#include "deso/runtime/runtime.h"

struct deso__ooc {
    int fd;
    int64_t rows, cols;       /* the local piece, column-major             */
    int64_t slab;             /* columns per slab: a multiple of           */
                              /*   blas_gemv_chunk                          */
};

/* ---- the files (ooc_file.c) ---------------------------------------------- */
/* A zero-filled, unnamed file for a rows x cols local piece in the
 * context's directory, after checking its free space (DESO_EIO when it is
 * short or the directory unusable); warns once when it is in RAM.  Local. */
deso_err deso__ooc_open(deso_ctx *ctx, int64_t rows, int64_t cols,
                        int64_t slab, deso__ooc **out);
/* Reads or writes local columns [c0, c0 + w) from or into buf.  Local.   */
deso_err deso__ooc_io(deso__ooc *f, bool write, int64_t c0, int64_t w,
                      double *buf);
/* deso__ooc_io, its time counted as I/O time and its bytes as read or
 * written in the statistics.  Local.                                     */
deso_err deso__ooc_io_counted(deso__ooc *f, bool write, int64_t c0, int64_t w,
                              double *buf);
void deso__ooc_close(deso__ooc *f);
/* Test hook: open the files as on a file system without O_TMPFILE (a
 * named file, unlinked at once) while `on`; the fallback is otherwise
 * never taken here.  Local.                                              */
void deso__ooc_named_files(bool on);

/* ---- where a matrix lives (ooc_make.c) ----------------------------------- */
/* Where a new matrix of layout lay lives: *w NULL (in core: the caller
 * allocates as before) or an out-of-core view (zero-filled).  local, the
 * caller's outcome so far, is agreed with the decision and the files' set
 * up.  Collective when some rank has a budget (ctx->ooc_any), else local.*/
deso_err deso__mat_home(deso_ctx *ctx, const blas_layout *lay,
                        deso_err local, const char *fn, deso__view **w);
/* A ready, zero-filled matrix in layout lay whose one view is home (out
 * of core: deso__mat_home) or, when home is NULL, allocated in core.
 * On error home is freed.  Local.                                        */
deso_err deso__mat_new_home(deso_ctx *ctx, const blas_layout *lay,
                            deso__view *home, deso_mat **a);
/* The width, in local columns, of the pieces in which a source sent from
 * elsewhere (an array on one rank, a global file) fills or drains
 * out-of-core view w: the narrowest slab over the ranks, at least
 * `least`, the slab buffers grown so that each holds that many columns of
 * the most local rows any rank has (the root packs other ranks' pieces
 * in them).  w may be NULL on a rank whose outcome so far, local, is an
 * error; local is agreed.  Collective.                                   */
deso_err deso__ooc_stream_width(deso_ctx *ctx, const deso__view *w,
                                int64_t least, deso_err local,
                                const char *fn, int64_t *k);
/* An out-of-core view in layout lay (a dger's result on an out-of-core
 * matrix that is read again afterwards).  Local.                        */
deso_err deso__ooc_view_new(deso_ctx *ctx, const blas_layout *lay,
                            deso__view **out);

/* ---- global arrays to and from the files (ooc_array.c) ------------------ */
/* Local columns [c0, c0 + w) (rows each) of grid position (r, c)'s piece
 * in layout l, packed column-major from the global column-major a (lda)
 * into out.  Local.                                                      */
void deso__mat_pack(const blas_layout *l, int r, int c, int64_t rows,
                    int64_t c0, int64_t w, const double *a, int64_t lda,
                    double *out);
/* The reverse of deso__mat_pack: packed columns in into a.  Local.       */
void deso__mat_unpack(const blas_layout *l, int r, int c, int64_t rows,
                      int64_t c0, int64_t w, const double *in, double *a,
                      int64_t lda);
/* Fills out-of-core view w from the global array a (lda) held by root
 * (or by every rank: DESO_ALL_RANKS), a stream width of columns at a
 * time (deso__ooc_stream_width): the root sends each rank its piece in
 * such pieces, which the rank writes to its file as they come, so no rank
 * holds more than its slab buffers.  Every rank's arguments must already
 * be agreed valid.  Agreed.  Collective.                                 */
deso_err deso__ooc_from_array(deso_ctx *ctx, deso__view *w, const double *a,
                              int64_t lda, int root, const char *fn);
/* Gathers out-of-core view w into the global array a (lda) on rank root
 * (not DESO_ALL_RANKS), a stream width of columns at a time: each rank
 * reads its columns and sends them to the root.  Every rank's arguments
 * must already be agreed valid.  Agreed.  Collective.                    */
deso_err deso__ooc_to_array(deso_ctx *ctx, const deso__view *w, double *a,
                            int64_t lda, int root, const char *fn);

/* DESO_ENOTSUP, naming fn, when v is an out-of-core matrix (what does
 * not stream one: the ScaLAPACK export, the diagonal).  The same on every
 * rank.                                                                  */
deso_err deso__mat_in_core(const deso__value *v, const char *fn);

/* ---- streaming (ooc_exec.c) ---------------------------------------------- */
/* Node nd's kernel when its matrix operand (or result) is out of core:
 * dgemv's partial products, or dger's update of res, slab by slab.
 * Local.                                                                 */
deso_err deso__ooc_kernel(deso_ctx *ctx, const deso__node *nd,
                          blas_local *L, deso__view *const *v,
                          deso__view *rv, double *red);

#endif
