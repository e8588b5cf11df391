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

typedef struct deso__ooc_ahead deso__ooc_ahead;

struct deso__ooc {
    int fd;
    int direct;               /* the same file opened O_DIRECT, for the    */
                              /*   slab reads; -1 where it cannot be       */
    int64_t rows, cols;       /* the local piece, column-major             */
    int64_t slab;             /* columns per slab: a multiple of           */
                              /*   blas_gemv_chunk for these rows           */
    uint64_t writes;          /* writes so far (a read ahead is stale when */
                              /*   this moved)                              */
    deso__ooc_ahead *ahead;   /* the context's read ahead, dropped when    */
                              /*   the file closes                          */
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
/* The bytes a slab buffer holds beyond its columns, and its alignment:
 * a direct read covers whole aligned blocks around the columns asked.   */
#define DESO__OOC_ALIGN ((int64_t)4096)
#define DESO__OOC_SLACK (2 * DESO__OOC_ALIGN)
/* Reads local columns [c0, c0 + w) for a streamed kernel into buf, a
 * slab buffer (DESO__OOC_ALIGN-aligned, DESO__OOC_SLACK bytes beyond
 * the columns): around the page cache when the file system allows it,
 * so that streaming reads the disk and leaves the cache to the rest of
 * the program; *data is where the columns start in buf.  Local.         */
deso_err deso__ooc_read_slab(deso__ooc *f, int64_t c0, int64_t w,
                             double *buf, double **data);
/* deso__ooc_io, its time counted as I/O time and its bytes as read or
 * written in the statistics.  Local.                                     */
/* Reads the whole file once, in order, chunk bytes at a time into buf
 * (aligned to DESO__OOC_ALIGN, chunk a multiple of it): around the page
 * cache where the file system allows it, else through it after asking it
 * to drop the file's pages.  Counted as I/O in the statistics.  Local.   */
deso_err deso__ooc_read_whole(deso__ooc *f, char *buf, int64_t chunk);
/* deso_mat_read_rate (ooc_rate.c).                                       */
deso_err deso__mat_read_rate(const deso_mat *a, double *bytes_per_sec);
deso_err deso__ooc_io_counted(deso__ooc *f, bool write, int64_t c0, int64_t w,
                              double *buf);
void deso__ooc_close(deso__ooc *f);
/* The seconds per byte of reading a file of DESO__OOC_PROBE_BYTES in the
 * context's directory, written, synced and dropped from the page cache
 * first: the cost model's io_beta (probe.c).  Not counted in the
 * statistics.  Local.                                                    */
#define DESO__OOC_PROBE_BYTES ((int64_t)1 << 20)
deso_err deso__ooc_read_rate(deso_ctx *ctx, double *sec_per_byte);
/* Test hook: open the files as on a file system without O_TMPFILE (a
 * named file, unlinked at once) while `on`; the fallback is otherwise
 * never taken here.  Local.                                              */
void deso__ooc_named_files(bool on);
/* Test hook: while off, files opened read their slabs through the page
 * cache (as on a file system without O_DIRECT); deso__ooc_direct_count,
 * the slabs this process has read around the cache.  Local.             */
void deso__ooc_direct_reads(bool on);
long deso__ooc_direct_count(void);
/* Test hook: a fault of the local array files' system calls on this
 * process (a full disk or an unwritable directory on one rank), armed by
 * deso__ooc_inject(fault, after, err): OPEN, the next file's opening
 * fails with errno err; WRITE, the write call `after` calls from now
 * fails with err; SHORT, that call writes half its bytes, and every later
 * one fails with err (a disk filling up) or, err 0, none does (a short
 * write to resume).  NONE disarms.  deso__ooc_injected: whether the armed
 * fault struck.  Local.                                                  */
typedef enum {
    DESO__OOC_FAULT_NONE,
    DESO__OOC_FAULT_OPEN,
    DESO__OOC_FAULT_WRITE,
    DESO__OOC_FAULT_SHORT
} deso__ooc_fault;
void deso__ooc_inject(deso__ooc_fault fault, int64_t after, int err);
bool deso__ooc_injected(void);

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
/* The context's read ahead: after a product's last slab, the reader
 * thread goes on with the matrix's first slab, into the other slab
 * buffer, for the next product on the same matrix (a solver's next
 * iteration), so that once a loop streams no slab's read is exposed.
 * Made with the slab buffers.  Local.                                    */
deso_err deso__ooc_ahead_new(deso__ooc_ahead **out);
/* Waits for a read ahead (its bytes are counted: they were read) and
 * forgets it; NULL or nothing ahead: nothing.  Local.                    */
void deso__ooc_ahead_drop(deso__ooc_ahead *a);
void deso__ooc_ahead_free(deso__ooc_ahead *a);
/* Slab buffer k (0 or 1) for anything but a streamed kernel, the read
 * ahead dropped first (it may be reading into either).  Local.          */
double *deso__ooc_slab_buf(deso_ctx *ctx, int k);
/* Test hooks: the first slabs this process took from a read ahead; while
 * inline is on, every read is done in the calling thread when it is
 * started (so that a read into a buffer still being computed on spoils
 * it every time, not only when the thread wins the race).  Local.       */
long deso__ooc_ahead_taken(void);
void deso__ooc_inline_reads(bool on);

/* Node nd's kernel when its matrix operand (or result) is out of core,
 * slab by slab: dgemv's product into out (its partial products, or the
 * result itself where no reduction is needed: blas_gemv_into), or dger's
 * update of res (out unused).  Local.                                    */
deso_err deso__ooc_kernel(deso_ctx *ctx, const deso__node *nd,
                          blas_local *L, deso__view *const *v,
                          deso__view *rv, blas_gemv_into out);

#endif
