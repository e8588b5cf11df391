/* Streaming an out-of-core matrix through a node's kernel: slabs of whole
 * chunks of dgemv's accumulation (blas_gemv_chunk), the next slab read by
 * a helper thread while the current one is computed on (double buffering
 * in the context's two slab buffers), around the page cache where the
 * file system allows it (deso__ooc_read_slab).  After a dgemv's last
 * slab, the thread reads the first one again, ahead, for the next
 * product on the same matrix: a solver's loop then never waits for a
 * first slab it could have read during the vector operations.
 * A reader thread rather than MPI-IO's non-blocking reads: the file is
 * the rank's own, so plain pread does it with no MPI progress to rely on
 * during the kernel, and MPI_File_iread_at measured slower on the same
 * files (tests/bench/ooc_iread.c).
 *
 * dgemv (with dsymv's and dtrmv's triangle masks) accumulates its product
 * (partial, or the result itself where no reduction is needed) one chunk
 * of columns at a time, as the in-core kernel does (blas_gemv_part), so
 * the streamed and the in-core results are the same bits whatever the
 * slab width.  dger (dsyr, dsyr2) reads a slab, updates
 * it and writes it to the result's file (the operand's own when the node
 * takes its buffer over).
 *
 * The time the kernel waits for a read is the statistics' I/O time; the
 * bytes read and written are counted as they are done.                  */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/ooc.h"
#include "placement/alloc.h"

typedef struct slab_read {
    deso__ooc *f;
    int64_t c0, w;
    double *buf, *data;       /* the slab buffer; where the columns start */
    deso_err err;
    pthread_t th;
    bool running;
    bool waited;              /* joined and counted                        */
} slab_read;

struct deso__ooc_ahead {
    slab_read r;
    bool held;                /* r is a read ahead nobody has taken        */
    uint64_t writes;          /* its file's writes when it started         */
    int buf;                  /* the slab buffer it reads into             */
};

static long taken;              /* deso__ooc_ahead_taken                   */
static bool inline_reads;       /* deso__ooc_inline_reads                  */

long deso__ooc_ahead_taken(void) { return taken; }

void deso__ooc_inline_reads(bool on) { inline_reads = on; }

static void *read_main(void *arg)
{
    slab_read *r = arg;
    r->err = deso__ooc_read_slab(r->f, r->c0, r->w, r->buf, &r->data);
    return NULL;
}

/* Starts reading local columns [c0, c0 + w) of f into buf; in this thread
 * when no thread can be started.                                         */
static void read_start(slab_read *r, deso__ooc *f, int64_t c0, int64_t w,
                       double *buf)
{
    r->f = f;
    r->c0 = c0;
    r->w = w;
    r->buf = buf;
    r->err = DESO_OK;
    r->waited = false;
    r->running = !inline_reads &&
                 pthread_create(&r->th, NULL, read_main, r) == 0;
    if (!r->running) read_main(r);
}

/* Waits for the read, once; the wait is I/O time.                         */
static deso_err read_wait(slab_read *r)
{
    if (r->waited) return r->err;
    double t0 = deso__now();
    if (r->running) pthread_join(r->th, NULL);
    r->running = false;
    r->waited = true;
    deso__stats_time(DESO_T_IO, deso__now() - t0);
    if (r->err == DESO_OK)
        deso__stats_io((int64_t)(r->f->rows * r->w) * (int64_t)sizeof(double),
                       0);
    return r->err;
}

deso_err deso__ooc_ahead_new(deso__ooc_ahead **out)
{
    *out = deso__calloc(1, sizeof **out);
    DESO_CHECK(*out != NULL, DESO_ENOMEM, "out of memory (read ahead)");
    return DESO_OK;
}

void deso__ooc_ahead_drop(deso__ooc_ahead *a)
{
    if (a == NULL || !a->held) return;
    (void)read_wait(&a->r);       /* nobody needs its data or its error */
    a->held = false;
}

void deso__ooc_ahead_free(deso__ooc_ahead *a)
{
    deso__ooc_ahead_drop(a);
    free(a);
}

double *deso__ooc_slab_buf(deso_ctx *ctx, int k)
{
    deso__ooc_ahead_drop(ctx->ooc_ahead);
    return ctx->ooc_buf[k];
}

/* The read of f's first w columns into r: the read ahead when it is that
 * read and f was not written since it started, else a new one into slab
 * buffer 0.  The buffer the first slab is in.                            */
static int first_slab(deso_ctx *ctx, deso__ooc *f, int64_t w, slab_read *r)
{
    deso__ooc_ahead *a = ctx->ooc_ahead;
    if (a->held && a->r.f == f && a->r.w == w && a->writes == f->writes) {
        a->held = false;
        (void)read_wait(&a->r);         /* joined: r is a plain copy now */
        *r = a->r;
        taken++;
        return a->buf;
    }
    deso__ooc_ahead_drop(a);
    read_start(r, f, 0, w, ctx->ooc_buf[0]);
    return 0;
}

/* Starts reading f's first w columns into slab buffer b, for the next
 * product on f.                                                          */
static void read_ahead(deso_ctx *ctx, deso__ooc *f, int64_t w, int b)
{
    deso__ooc_ahead *a = ctx->ooc_ahead;
    a->held = true;
    a->writes = f->writes;
    a->buf = b;
    read_start(&a->r, f, 0, w, ctx->ooc_buf[b]);
}

/* The slab of local columns [c0, c0 + w) of piece P held in buf.         */
static blas_local slab_of(const blas_local *P, double *buf, int64_t c0,
                          int64_t w)
{
    blas_local s = *P;
    s.data = buf;
    s.c0 = c0;
    s.cols = w;
    return s;
}

/* One slab's work: a dgemv's products into y, or a dger's update
 * written to out.                                                        */
static deso_err slab_work(const deso__node *nd, blas_local *L, blas_local *S,
                          deso__ooc *out, blas_gemv_into y)
{
    if (nd->d.op == BLAS_OP_GEMV) {
        blas_gemv_part(&nd->d, S, &L[2], y);
        return DESO_OK;
    }
    blas_op_get(nd->d.op)->kernel(&nd->d, L, S, NULL);
    return deso__ooc_io_counted(out, true, S->c0, S->cols, S->data);
}

deso_err deso__ooc_kernel(deso_ctx *ctx, const deso__node *nd,
                          blas_local *L, deso__view *const *v,
                          deso__view *rv, blas_gemv_into y)
{
    bool gemv = nd->d.op == BLAS_OP_GEMV;
    const deso__view *A = gemv ? v[1] : v[3];
    deso__ooc *f = A->ooc, *out = gemv ? NULL : rv->ooc;
    blas_local P = gemv ? L[1] : L[3];
    if (f->rows == 0 || f->cols == 0) {  /* a dgemv's y <- beta y, only  */
        if (gemv) blas_gemv_part(&nd->d, &P, &L[2], y);
        return DESO_OK;
    }
    int64_t w0 = f->slab < f->cols ? f->slab : f->cols;
    slab_read r;
    int b = first_slab(ctx, f, w0, &r);
    deso_err err = DESO_OK;
    for (int64_t c0 = 0, s = b; c0 < f->cols; c0 += f->slab, s++) {
        int64_t w = f->cols - c0 < f->slab ? f->cols - c0 : f->slab;
        deso_err got = read_wait(&r);
        if (err == DESO_OK) err = got;
        double *cur = r.data;               /* before the next read's      */
        int64_t n0 = c0 + w;
        if (n0 < f->cols)
            read_start(&r, f, n0, f->cols - n0 < f->slab ? f->cols - n0
                                                         : f->slab,
                       ctx->ooc_buf[(s + 1) & 1]);
        else if (gemv && err == DESO_OK)  /* a dger writes what it reads */
            read_ahead(ctx, f, w0, (int)((s + 1) & 1));
        blas_local S = slab_of(&P, cur, c0, w);
        if (err == DESO_OK) err = slab_work(nd, L, &S, out, y);
    }
    return err;
}
