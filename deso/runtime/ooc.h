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
void deso__ooc_close(deso__ooc *f);

/* ---- where a matrix lives (ooc_make.c) ----------------------------------- */
/* Where a new matrix of layout lay lives: *w NULL (in core: the caller
 * allocates as before) or an out-of-core view (zero-filled).  local, the
 * caller's outcome so far, is agreed with the decision and the files' set
 * up.  Collective when some rank has a budget (ctx->ooc_any), else local.*/
deso_err deso__mat_home(deso_ctx *ctx, const blas_layout *lay,
                        deso_err local, const char *fn, deso__view **w);
/* A matrix made in core from an array or a file (v's one view) whose
 * home is out of core: its data goes to home's file and the memory is
 * freed; local (the caller's outcome so far; v is used only when it is
 * DESO_OK) is agreed with the writes.  On error home is freed and v left
 * as it was.  Collective.  (The peak is the in-core piece: streaming
 * these sources slab by slab is not done yet.)                          */
deso_err deso__mat_spill(deso_ctx *ctx, deso__value *v, deso__view *home,
                         deso_err local, const char *fn);
/* A zero-filled matrix in core whatever the budget (the sources above
 * fill it before deso__mat_spill).  Local.                               */
deso_err deso__mat_new_in_core(deso_ctx *ctx, int64_t m, int64_t n,
                               deso_mat **a);
/* Writes in-core view src (same layout) into out-of-core view w.  Local. */
deso_err deso__ooc_fill(deso_ctx *ctx, deso__view *w, const deso__view *src);
/* An out-of-core view in layout lay (a dger's result on an out-of-core
 * matrix that is read again afterwards).  Local.                        */
deso_err deso__ooc_view_new(deso_ctx *ctx, const blas_layout *lay,
                            deso__view **out);

/* DESO_ENOTSUP, naming fn, when v is an out-of-core matrix (reading one
 * back whole is not provided: gather, files, ScaLAPACK, the diagonal).
 * The same on every rank.                                                */
deso_err deso__mat_in_core(const deso__value *v, const char *fn);

/* ---- streaming (ooc_exec.c) ---------------------------------------------- */
/* Node nd's kernel when its matrix operand (or result) is out of core:
 * dgemv's partial products, or dger's update of res, slab by slab.
 * Local.                                                                 */
deso_err deso__ooc_kernel(deso_ctx *ctx, const deso__node *nd,
                          blas_local *L, deso__view *const *v,
                          deso__view *rv, double *red);

#endif
