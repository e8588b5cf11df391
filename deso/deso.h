/* deso: a delayed-evaluation, self-optimising parallel BLAS over MPI.
 *
 * The one header users include.  Calls are recorded, never executed when
 * made: each operation adds a node to a DAG of lazy values.  At a force
 * point (reading a scalar's value, gathering or reading a vector or matrix,
 * deso_flush, deso_finalize, or the DAG outgrowing its size bound) the
 * library chooses a placement for every value, executes the DAG over MPI
 * and fills the handles.
 *
 * Conventions
 *   - Every function returns a deso_err (DESO_OK = 0); results come back
 *     through out-parameters.  deso_strerror(err) explains a code,
 *     deso_last_error() gives this rank's detailed message of the last
 *     call that failed (every failing call sets one; a call that succeeds
 *     leaves it as it was, as errno).  A context's error handler
 *     (deso_set_error_handler) can also print and abort, or call the
 *     user's function, on every failing call.
 *   - "Collective": every rank of the context's communicator makes the same
 *     call in the same order with the same sizes and handles.  Operations
 *     are collective in this sense even though they only record: ranks that
 *     record different call sequences get DESO_EMISMATCH at the next force
 *     point (on every rank, without deadlock).
 *   - Level 1 and 2 calls take CBLAS's argument order with deso handles in
 *     place of pointers.  alpha and beta accept either a double or a lazy
 *     deso_scalar (C11 _Generic).  Increments other than 1 return
 *     DESO_ENOTSUP.  A matrix handle always stores its data column-major;
 *     a Level 2 call's layout argument says how it reads that storage,
 *     exactly as CBLAS does for the same memory.  With DESO_ROW_MAJOR a
 *     row-major m x n operand is an n x m handle (its transpose): a
 *     row-major dgemv is the column-major one on that handle with the
 *     transpose flipped, dger swaps x and y, dsymv and dtrsv read the
 *     handle's other triangle (and dtrsv flips the transpose).  A handle
 *     whose shape does not fit the layout's reading gives DESO_ESIZE.  lda
 *     is only checked (lda >= 1).
 *   - Sizes and indices are int64_t; indices are 0-based.
 *   - Handles are updated in place (SSA underneath: an operation producing
 *     y makes a new version of y; the handle points at its latest version).
 *     Destroying a handle with operations pending is safe.  A destroyed
 *     handle's shell stays valid until deso_finalize, so using it returns
 *     DESO_ESTALE instead of crashing.
 *   - Thread model: not thread-safe; MPI_THREAD_FUNNELED is enough.        */
#ifndef DESO_H
#define DESO_H

#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "deso_errors.h"
#include "deso_redist.h"
#include "deso_stats.h"

/* The library is built with hidden visibility: what is declared here is
 * its interface, and the only names it exports.                          */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct deso_ctx deso_ctx;
typedef struct deso_vec deso_vec;
typedef struct deso_mat deso_mat;
typedef struct deso_scalar deso_scalar;
typedef struct deso_spmat deso_spmat;

/* ---- context and options ------------------------------------------------ */

typedef enum deso_mode {
    DESO_MODE_DEFAULT = 0,   /* DESO_OPT from the environment, else none    */
    DESO_MODE_NONE,          /* paper 003's unoptimised default placements  */
    DESO_MODE_AFFINE,        /* orientation choices, default replication    */
    DESO_MODE_FULL           /* any replication: reduce instead of all-     */
                             /*   reduce, broadcasts only where needed      */
} deso_mode;

/* Where a sparse matrix's rows and its products' vectors live (the rows of
 * a matrix made by deso_spmat_from_rows stay where its ranks gave them,
 * and a rectangular matrix's on its row blocks, whatever this says).     */
typedef enum deso_partition {
    DESO_PARTITION_DEFAULT = 0,  /* DESO_PARTITION from the environment,    */
                                 /*   else auto                             */
    DESO_PARTITION_AUTO,         /* at the first force with a product of    */
                                 /*   the matrix, the cheaper (by the cost  */
                                 /*   model: halo messages and bytes, and   */
                                 /*   the busiest rank's entries) of the    */
                                 /*   row blocks and paper 004's trace-graph */
                                 /*   partition                             */
    DESO_PARTITION_BLOCK,        /* contiguous row blocks                   */
    DESO_PARTITION_NTG           /* the trace-graph partition               */
} deso_partition;

/* Block folding instead of cyclic(nb) for default placements.              */
#define DESO_NB_BLOCK ((int64_t)-1)

/* Options.  A zero field means "unset": the environment variable named
 * beside it fills it, else the default.  deso_options_default zeroes all.
 * Every field is agreed across the ranks at deso_init: a value that is
 * invalid on any rank fails deso_init on every rank (naming that rank and
 * the variable), and valid values that differ between ranks take rank 0's
 * value everywhere, with one warning on rank 0's stderr naming the
 * variable.  File names are used by rank 0 alone (it reads the wisdom and
 * broadcasts it, and writes the wisdom, trace and log files), so a file
 * that only rank 0's machine can see works.  Two options are per rank and
 * not agreed, since they describe the rank's own node: mem_limit and
 * ooc_dir (an invalid value on any rank still fails deso_init
 * everywhere).                                                           */
typedef struct deso_options {
    deso_mode mode;          /* DESO_OPT=none|affine|full; default none     */
    int grid_rows;           /* DESO_GRID=RxC; default: the most square     */
    int grid_cols;           /*   grid with rows >= columns                 */
    int64_t nb;              /* DESO_NB; block size, default 64;            */
                             /*   DESO_NB_BLOCK: block folding               */
    const char *wisdom;      /* DESO_WISDOM=FILE: import at init, export at */
                             /*   finalize (deso_wisdom_import/export)      */
    const char *trace;       /* DESO_TRACE=FILE.dot: DOT of the last plan   */
    int64_t max_nodes;       /* DESO_MAX_NODES; DAG size bound, default 4096 */
    const char *log;         /* DESO_LOG: "1" the performance log on stdout */
                             /*   at finalize, FILE there, "0" none         */
    int verbose;             /* DESO_VERBOSE: > 0 explain every new plan on */
                             /*   stderr, < 0 quiet; default quiet           */
    int64_t mem_limit;       /* DESO_MEM_LIMIT=SIZE (bytes, or with K, M, G */
                             /*   or T: powers of 1024, e.g. 512M, 2G): the */
                             /*   memory this rank's matrices may take;     */
                             /*   a matrix whose local part exceeds what is */
                             /*   left on any rank lives out of core on     */
                             /*   every rank; < 0 or "0": no limit (default)*/
    const char *ooc_dir;     /* DESO_OOC_DIR: where out-of-core matrices'   */
                             /*   local array files go; default $TMPDIR,    */
                             /*   else /tmp                                 */
    deso_partition partition; /* DESO_PARTITION=auto|block|ntg; default    */
                             /*   auto                                      */
    double l_scaling;        /* DESO_NTG_L_SCALING: the trace graph's       */
                             /*   locality weight over its producer-        */
                             /*   consumer weight (paper 004's L_SCALING),  */
                             /*   >= 0 and at most 1e6; default 0 (a       */
                             /*   matrix's nonzeros already say which       */
                             /*   entries are neighbours)                  */
    int measure_collectives; /* DESO_MEASURE_COLLECTIVES=1 (> 0): deso_init */
                             /*   times each kind of collective and the     */
                             /*   cost model prices collectives by what it  */
                             /*   measured; unset, < 0 or "0" (default):    */
                             /*   by its alpha-beta formula (measuring      */
                             /*   takes seconds when ranks outnumber cores) */
    int replay;              /* DESO_REPLAY: unset or > 0 (default): a loop  */
                             /*   whose forces repeat the same calls on the */
                             /*   same handles replays them (doc/DESIGN.md, */
                             /*   "Replaying an iteration"); < 0 or "0":    */
                             /*   every call is recorded                    */
    int remap_shm;           /* DESO_REMAP_SHM: unset or > 0 (default): the */
                             /*   runtime's matrix remaps (dtrsv's          */
                             /*   refolding, remaps inside a force) run on  */
                             /*   shared-memory rings when every rank is on */
                             /*   one node, made at the context's second    */
                             /*   matrix remap; < 0 or "0": on MPI          */
                             /*   messages (to compare the transports)      */
    int64_t replicate_max;   /* DESO_REPLICATE_MAX=SIZE (as mem_limit): in  */
                             /*   mode full the optimiser may keep a copy   */
                             /*   of an in-core matrix of at most this many */
                             /*   bytes whole on every rank, so that its    */
                             /*   products run without communicating, and   */
                             /*   never more than a quarter of the smallest */
                             /*   rank's mem_limit; default 32M; < 0 or "0":*/
                             /*   never                                     */
} deso_options;

/* Zeroes *opt (every field unset).  Local.                                 */
void deso_options_default(deso_options *opt);

/* Creates a context on (a duplicate of) comm: the library never talks on
 * comm itself.  opt may be NULL (all unset).  Collective over comm.
 * The options are agreed across the ranks (see deso_options): an error on
 * any rank is every rank's, and the message names the rank.
 * Errors: DESO_ENULL (ctx NULL), DESO_EINVAL (a bad option or environment
 * value on some rank, e.g. DESO_OPT=fast), DESO_EGRID (grid does not have
 * the ranks of comm), DESO_EMPI, DESO_ENOMEM.  On error *ctx is NULL.
 * When some rank has a memory budget, each rank measures the read rate of
 * its out-of-core directory; a rank that cannot (an unusable directory, a
 * full disk) does not fail deso_init, which takes 100 MB/s for it, but
 * then every rank's deso_last_error says which rank and why.               */
deso_err deso_init(MPI_Comm comm, const deso_options *opt, deso_ctx **ctx);

/* Forces pending work, then frees the context, its handles (including any
 * the user did not destroy) and its communicators; sets *ctx to NULL.
 * NULL-safe.  Collective.  Force point.  Errors: those of the final force
 * (the context is freed anyway).                                           */
deso_err deso_finalize(deso_ctx **ctx);

/* Executes everything recorded so far.  Collective.  Force point.
 * Errors: DESO_ENULL, DESO_EMISMATCH (ranks recorded different calls: the
 * pending work is dropped and its values become unusable), DESO_EMPI,
 * DESO_ENOMEM, DESO_ENOTSUP.                                               */
deso_err deso_flush(deso_ctx *ctx);

/* What a context resolved its options to: the values in force, the same
 * on every rank (see deso_options).                                       */
typedef struct deso_info {
    int size, rank;          /* ranks of the communicator, this rank       */
    int grid_rows, grid_cols;
    deso_mode mode;
    int64_t nb;              /* DESO_NB_BLOCK for block folding             */
    int64_t max_nodes;
    const char *wisdom, *trace;   /* NULL when unset; owned by the context */
    const char *log;         /* NULL: no log; "1": stdout; else a file      */
    int verbose;             /* 1: every new plan is explained, else 0      */
    int64_t flushes;         /* DAG executions so far                       */
    int64_t pending;         /* nodes recorded and not yet executed         */
    /* The cost model's calibration: seconds per message and per byte, and
     * the seconds deso_init spent measuring them (0 when the wisdom file
     * held them, or on one rank without a memory budget); io_beta: seconds
     * per byte read from an out-of-core matrix's file, the slowest rank's
     * (0 when no rank has a memory budget).  Kept apart from every
     * statistic: it is the library measuring the machine once, not the
     * user's work.                                                         */
    double alpha, beta, time_calibrate;
    double io_beta;
    /* The probe's collectives over every rank, seconds per call of one
     * double: an all-reduce, a reduce and a broadcast, the slowest rank's
     * (0 on one rank, when measure_collectives did not ask for them, or
     * when a wisdom file gave none).  The cost
     * model prices each kind on each communicator it runs on (grid
     * columns, grid rows, every rank) by such figures, measured with
     * every communicator of a kind at once; the wisdom file keeps them.  */
    double allreduce_call, reduce_call, bcast_call;
    int measure_collectives;    /* 1: measured, 0: the formula (options)  */
    int replay;                 /* 1: iterations are replayed (options)    */
    /* This rank's own (never agreed): its memory budget in bytes (-1: no
     * limit) and the directory of its local array files.                  */
    int64_t mem_limit;
    const char *ooc_dir;
    deso_partition partition;   /* auto, block or ntg (never default)     */
    double l_scaling;
    /* 1: the runtime's matrix remaps run on shared-memory rings, made at
     * the context's second matrix remap (every rank on one node,
     * options.remap_shm not off); 0: not yet, or MPI messages.  The same
     * on every rank.                                                      */
    int remap_shm;
} deso_info;

/* Local.  Errors: DESO_ENULL.                                              */
deso_err deso_get_info(const deso_ctx *ctx, deso_info *out);

/* ---- error handlers ------------------------------------------------------ *
 * What a context does when a call fails, in the manner of MPI's error
 * handlers.  Every public function that reaches a context, through its
 * ctx argument or through any handle argument (a destroyed handle's shell
 * included), invokes the context's handler once when it is about to return
 * an error, after everything the call does, so after the agreement of a
 * collective call: a collective error reaches the handler on every rank
 * that returns it, an error that is not agreed (a recording call's bad
 * argument, deso_vec_create out of memory on one rank) only on the ranks
 * that return it.  When the arguments reach several contexts (DESO_ECONTEXT)
 * the first argument's is used.  Not invoked: by deso_init (no context
 * exists yet), by functions that reach no context (deso_redist_*,
 * deso_stats_*, deso_strerror, ...), for errors raised while a handler is
 * running (those calls simply return their code), or when the call
 * succeeds.  After the handler returns, the call returns the code as
 * before.
 *   fn   the public function's name ("deso_daxpy", also for deso_daxpy_arg)
 *   msg  deso_last_error() at that point (a copy, valid during the call)
 * A handler may call deso functions; it may destroy the context
 * (deso_finalize) only if it does not return (exit, abort).  It must not
 * longjmp out.  deso_finalize is collective: a handler that calls it
 * before exiting (as examples/cg.c's does) waits for the other ranks, so
 * it suits errors every rank returns; an error one rank returns alone
 * (the ones marked "not agreed" above) then leaves it waiting, which
 * DESO_ERRORS_ABORT does not.                                             */
typedef void (*deso_error_handler)(deso_ctx *ctx, deso_err err,
                                   const char *fn, const char *msg,
                                   void *arg);

/* Print "deso: fn: message (DESO_ECODE)" on stderr (msg without its
 * leading "fn: "; deso_strerror(err) when msg is empty), then
 * MPI_Abort(the context's communicator, -err), as MPI_ERRORS_ARE_FATAL
 * does.  Usable as a handler (DESO_ERRORS_ABORT) or called from one.     */
void deso_errors_abort(deso_ctx *ctx, deso_err err, const char *fn,
                       const char *msg, void *arg);

/* The predefined handlers: return the code (every context's default), or
 * print and abort.                                                         */
#define DESO_ERRORS_RETURN ((deso_error_handler)0)
#define DESO_ERRORS_ABORT deso_errors_abort

/* Sets the context's handler (DESO_ERRORS_RETURN, DESO_ERRORS_ABORT or the
 * user's h, called with arg).  Local: each rank has its own; set the same
 * on every rank for collective errors to be handled alike.
 * Errors: DESO_ENULL, DESO_ESTALE (not a live context); these do not
 * invoke any handler.                                                      */
deso_err deso_set_error_handler(deso_ctx *ctx, deso_error_handler h,
                                void *arg);

/* The context's handler and its argument (DESO_ERRORS_RETURN and NULL by
 * default), e.g. to restore them after a call whose errors the caller
 * handles itself.  Local.  Errors: DESO_ENULL, DESO_ESTALE.               */
deso_err deso_get_error_handler(const deso_ctx *ctx, deso_error_handler *h,
                                void **arg);

/* "none", "affine", "full"; "default" for DESO_MODE_DEFAULT, "?" for a
 * value outside the enum.  Local.                                          */
const char *deso_mode_name(deso_mode mode);

/* Performance log in the style of PETSc's -log_view, printed on rank 0 to
 * f (f is only used there and may be NULL elsewhere): per operation kind
 * (dgemv, dot, ...) the number of nodes executed, their time (exchanging
 * operands, kernel, reduction), the local kernel time alone, and the bytes
 * and messages they caused; per kind of communication (broadcast,
 * point-to-point exchange, matrix remap, reduce, all-reduce, and the SPMD
 * and error-agreement checks) calls, time, bytes and messages; and the
 * plans optimised and replayed (deso_stats).  Calls and seconds are the
 * maximum over ranks, bytes and messages the sum over ranks under
 * deso_stats' counting rules.  Counters are per process, cover every
 * context since start-up and are not reset by deso_stats_reset (the plan
 * counts are).  The reductions that build the table are not counted.
 * DESO_LOG=1 prints it on stdout at deso_finalize; DESO_LOG=FILE writes it
 * to FILE (rank 0; stdout when FILE cannot be opened); unset, empty or 0:
 * nothing.  Collective (three MPI_Reduce on the context's communicator).
 * Not a force point: pending work is not included.
 * Errors: DESO_ENULL (ctx NULL, or f NULL on rank 0), DESO_ESTALE,
 * DESO_EMPI, DESO_EIO (write error on rank 0).                             */
deso_err deso_log_view(deso_ctx *ctx, FILE *f);

/* ---- plans and wisdom ------------------------------------------------------ */

/* Writes the last plan the optimiser made (or improved) for this context
 * to f: every node with its result's and operands' placements, every edge's
 * exchange and its modelled cost, and the totals ("no plan optimised
 * yet" before the first).  DESO_VERBOSE=1 prints the same on rank 0's
 * stderr for every new plan; DESO_TRACE=FILE.dot writes its Graphviz DOT
 * (rank 0).  Local.  Not a force point.  Errors: DESO_ENULL, DESO_ESTALE. */
deso_err deso_plan_explain(const deso_ctx *ctx, FILE *f);

/* Saves the context's plans (every cached plan, plus those imported) and
 * the cost model's calibration (alpha, beta) to the wisdom file `path`.
 * Only rank 0 writes, through a temporary file renamed over `path`, so a
 * reader never sees a half-written file.  Collective.  Not a force point.
 * Errors (the same on every rank): DESO_ENULL, DESO_ESTALE, DESO_EIO (the
 * file cannot be written), DESO_EMPI, DESO_ENOMEM.  DESO_WISDOM=FILE (or
 * deso_options.wisdom) exports automatically at deso_finalize.          */
deso_err deso_wisdom_export(deso_ctx *ctx, const char *path);

/* Loads a wisdom file: rank 0 reads it and broadcasts the bytes, so every
 * rank agrees on what was read.  Its plans serve later force points whose
 * DAG has the same structural key (they count as replayed, not optimised;
 * each is checked against the optimiser's own candidates first, so a plan
 * can change costs, never results), and its calibration replaces the
 * measured one.  A file for another P, grid or library version is ignored
 * (DESO_OK).  A corrupt, truncated or hostile file is ignored with one
 * warning on rank 0's stderr and returns DESO_EWISDOM; a missing or
 * unreadable one DESO_EIO (also with a warning).  Either way the context
 * is unchanged and usable.  DESO_WISDOM=FILE imports at deso_init (a
 * missing file is then silently a first run).  Collective.  Not a force
 * point.  Errors: DESO_ENULL, DESO_ESTALE, DESO_EWISDOM, DESO_EIO,
 * DESO_EMPI, DESO_ENOMEM.                                                  */
deso_err deso_wisdom_import(deso_ctx *ctx, const char *path);

/* ---- creating and reading values ----------------------------------------- */

/* Data given on every rank (the same array) rather than on one root.     */
#define DESO_ALL_RANKS (-1)

typedef double (*deso_vec_fn)(int64_t i, void *arg);
typedef double (*deso_mat_fn)(int64_t i, int64_t j, void *arg);

/* A vector of length n >= 0, zero-filled.  Collective.  Not a force point.
 * Errors: DESO_ENULL, DESO_ESTALE (not a context), DESO_ESIZE (n < 0),
 * DESO_ENOMEM (also for sizes no rank could hold, e.g. INT64_MAX).  Errors
 * are not agreed between ranks here: a rank that alone ran out of memory
 * makes the next force point fail with DESO_EMISMATCH on every rank.     */
deso_err deso_vec_create(deso_ctx *ctx, int64_t n, deso_vec **x);

/* A vector from a global array data[0 .. n): present on every rank (root =
 * DESO_ALL_RANKS) or only on rank `root` (data may be NULL elsewhere; it is
 * broadcast).  Collective.  Errors: DESO_ENULL, DESO_ESIZE, DESO_EINVAL
 * (root out of range), DESO_EMPI, DESO_ENOMEM; with a root, on every rank
 * when any rank has one (e.g. data NULL on the root).                     */
deso_err deso_vec_from_array(deso_ctx *ctx, int64_t n, const double *data,
                             int root, deso_vec **x);

/* A vector whose element i is f(i, arg), evaluated only on the ranks that
 * hold element i.  Collective.  Errors: as deso_vec_create (DESO_ENULL
 * also for f NULL).                                                        */
deso_err deso_vec_from_fn(deso_ctx *ctx, int64_t n, deso_vec_fn f, void *arg,
                          deso_vec **x);

/* Destroys the handle (pending operations that read it still see its
 * value) and sets *x to NULL.  NULL-safe.  Local.  Errors: DESO_ESTALE
 * when *x was already destroyed through another pointer.                  */
deso_err deso_vec_destroy(deso_vec **x);

/* Length of x.  Local.  Errors: DESO_ENULL, DESO_ESTALE.                  */
deso_err deso_vec_length(const deso_vec *x, int64_t *n);

/* Copies the whole vector into buf[0 .. n) on rank `root`, or on every
 * rank with DESO_ALL_RANKS (buf may be NULL on non-root ranks).
 * Collective.  Force point.  Errors: DESO_ENULL, DESO_ESTALE, DESO_EINVAL
 * (root out of range), the force's errors; buf and root errors on every
 * rank when any rank has one.                                              */
deso_err deso_vec_gather(const deso_vec *x, double *buf, int root);

/* Element i of x, returned on every rank.  Collective.  Force point.
 * Errors: DESO_ENULL, DESO_ESTALE, DESO_EINVAL (i out of range), the
 * force's errors; value and i errors on every rank when any rank has one. */
deso_err deso_vec_get(const deso_vec *x, int64_t i, double *value);

/* An m x n matrix, zero-filled.  Collective.  Errors: DESO_ENULL,
 * DESO_ESTALE, DESO_ESIZE (m or n < 0), DESO_ENOMEM (also for extents no
 * rank could hold), not agreed (as deso_vec_create).                      */
deso_err deso_mat_create(deso_ctx *ctx, int64_t m, int64_t n, deso_mat **a);

/* A matrix from a global column-major array a (leading dimension lda >=
 * max(1, m)) present on every rank (DESO_ALL_RANKS) or only on `root`
 * (which sends every rank its local part; a may be NULL elsewhere).
 * Collective.  Errors: DESO_ENULL, DESO_ESIZE, DESO_EINVAL (root out of
 * range, lda < max(1, m)), DESO_EMPI, DESO_ENOMEM; with a root, on every
 * rank when any rank has one (e.g. a NULL on the root).                  */
deso_err deso_mat_from_array(deso_ctx *ctx, int64_t m, int64_t n,
                             const double *a, int64_t lda, int root,
                             deso_mat **out);

/* A matrix whose element (i, j) is f(i, j, arg), evaluated only where the
 * element lives: no rank ever holds the whole matrix.  Collective.
 * Errors: as deso_mat_create (DESO_ENULL also for f NULL).                */
deso_err deso_mat_from_fn(deso_ctx *ctx, int64_t m, int64_t n, deso_mat_fn f,
                          void *arg, deso_mat **out);

/* A matrix read from a Matrix Market file: "%%MatrixMarket matrix
 * coordinate|array real|integer|pattern general|symmetric|skew-symmetric"
 * (symmetric files are expanded; duplicate coordinate entries are
 * summed).  Rank 0 reads the file as a stream and shares each piece's
 * outcome before its data moves, so every rank returns the same error,
 * wherever in the file it is found: a coordinate file's entries go out in
 * bounded chunks, each rank keeping the ones it owns; an array file's
 * columns a few at a time, each rank receiving its part.  No rank holds
 * the dense matrix, nor rank 0 the file: with a memory budget
 * (DESO_MEM_LIMIT) a matrix larger than memory loads out of core.  path
 * is read on rank 0 only (may be NULL elsewhere).
 * Collective.  Not a force point.
 * Errors (on every rank): DESO_ENULL (ctx or out NULL), DESO_EIO (missing,
 * unreadable or malformed file; deso_last_error gives the parser's message
 * on every rank), DESO_ENOTSUP (complex, hermitian), DESO_ESIZE,
 * DESO_ENOMEM, DESO_EMPI.  On error *out is NULL.                         */
deso_err deso_mat_from_mtx(deso_ctx *ctx, const char *path, deso_mat **out);

/* Global matrix files: a 64-byte header, then the m n doubles of the
 * matrix in column-major order, in the writer's byte order.  Header:
 * bytes 0-7 "DESOMAT\0"; 8-11 version (uint32, 1); 12-15 header size
 * (uint32, 64); 16-23 m (int64); 24-31 n (int64); 32-39 checksum (uint64);
 * 40-63 zero.  checksum = the sum modulo 2^64, over every element A(i, j)
 * with k = i + j m, of splitmix64's finaliser applied to
 * bits(A(i, j)) ^ (k * 0x9E3779B97F4A7C15) + 0x9E3779B97F4A7C15, where
 * bits is the IEEE-754 double's 64 bits: an order-free sum, so every rank
 * checks its own part as it reads and nobody reads the file twice.
 * Every rank reads or writes its own blocks with MPI-IO collective calls
 * (two-phase I/O) in slabs of whole block columns; path names the same
 * file on every rank (a shared file system across nodes).
 *
 * deso_mat_to_file writes A (a force point), replacing the file.
 * deso_mat_from_file reads one into a new matrix in the default layout;
 * the header is checked against the file's size before anything is
 * allocated, the checksum while the data is read.  Collective.  Errors (on
 * every rank, but for a NULL or destroyed a, which fails where it is, as
 * in every call): DESO_ENULL, DESO_ESTALE, DESO_EIO (cannot open, bad magic,
 * version, byte order or size, checksum mismatch: the message says which),
 * DESO_ENOTSUP (m > INT_MAX, or a block column beyond MPI's int counts),
 * DESO_ENOMEM, DESO_EMPI, the force's errors.  On error *out is NULL.    */
deso_err deso_mat_to_file(const deso_mat *a, const char *path);
deso_err deso_mat_from_file(deso_ctx *ctx, const char *path, deso_mat **out);

/* How fast an out-of-core matrix's local array files read from the disk,
 * the reference a streamed product is measured against: every rank reads
 * its whole file once, in order, in requests of one slab (as a streamed
 * product reads it) around the page cache (O_DIRECT; where the file
 * system refuses it, through the cache after asking it to drop the
 * file's pages), all ranks at once after a barrier.  *bytes_per_sec is the bytes all ranks read over the slowest
 * rank's time, the same on every rank.  A force point (the matrix's
 * pending updates are written first); the reads count as I/O in the
 * statistics.  Collective.  Errors: DESO_ENULL, DESO_ESTALE, DESO_EINVAL
 * (a is in core), DESO_EIO, DESO_EMPI, the force's errors.               */
deso_err deso_mat_read_rate(const deso_mat *a, double *bytes_per_sec);

/* d <- diag(A): d[i] = A(i, i) for 0 <= i < min(m, n), d of that length.
 * Recorded as a copy from a vector built where the diagonal lives (one
 * all-reduce of min(m, n) doubles).  Collective.  Force point only when A
 * has pending updates (deso_dger); otherwise nothing else is forced.
 * Errors: DESO_ENULL, DESO_ESTALE, DESO_ECONTEXT, DESO_ESIZE (d has the
 * wrong length), DESO_ENOMEM, DESO_EMPI, the force's errors.              */
deso_err deso_mat_diag(const deso_mat *a, deso_vec *d);

/* ---- sparse matrices ----------------------------------------------------- *
 * An m x n sparse matrix is held as compressed sparse rows: each rank holds
 * a contiguous block of rows (its own entries only; no rank ever holds the
 * whole matrix, and nothing is densified).  Once a force has placed its
 * products by the trace graph (deso_options.partition), each rank holds
 * the rows that placement gives it instead, and no longer its block: the
 * matrix is held once.  Its blocks' ranges stay what deso_spmat_local,
 * _local_rows and deso_op_create_spmat describe.  Within a row the entries are
 * sorted by column and entries given twice are summed; explicit zeros are
 * kept (they are part of the pattern).  The *pattern order* of a matrix is
 * its entries row by row, columns ascending within a row: the order of
 * deso_spmat_gather's arrays and of deso_spmat_set_values's values.
 * m and n are at most 2^53 (indices travel exactly as doubles).  Every
 * constructor is collective and agreed: an error on any rank (a bad
 * argument, memory, the file) is returned on every rank with the same code
 * and message, and *out is NULL.  None is a force point.                  */

/* The matrix of a Matrix Market coordinate file (real, integer or pattern;
 * general or symmetric, symmetric files expanded; duplicates summed).
 * Every rank streams the file twice and keeps its block of rows (the first
 * m % P ranks one row more), so path must name the same regular file on
 * every rank.  Errors: DESO_ENULL, DESO_ESTALE, DESO_EIO (missing,
 * unreadable or malformed file, or one that changed while it was read),
 * DESO_ENOTSUP (array, complex, hermitian, skew-symmetric files),
 * DESO_ESIZE, DESO_EMISMATCH (another file on some rank), DESO_ENOMEM,
 * DESO_EMPI.                                                               */
deso_err deso_spmat_from_mtx(deso_ctx *ctx, const char *path,
                             deso_spmat **out);

/* The matrix of global CSR arrays on rank `root`: row i's entries are
 * col[k], val[k] for rowptr[i] <= k < rowptr[i + 1], rowptr[0] = 0,
 * columns in [0, n) in any order (duplicates summed).  The root sends each
 * rank its block of rows (the first m % P ranks one row more); the arrays
 * may be NULL elsewhere.  Errors: DESO_ENULL, DESO_ESTALE, DESO_ESIZE (m
 * or n < 0 or > 2^53), DESO_EINVAL (root out of range or not the same on
 * every rank, a decreasing rowptr, a column out of range: the first bad
 * entry named), DESO_EMISMATCH (m or n not the same on every rank),
 * DESO_ENOMEM, DESO_EMPI.                                                  */
deso_err deso_spmat_from_csr(deso_ctx *ctx, int64_t m, int64_t n,
                             const int64_t *rowptr, const int64_t *col,
                             const double *val, int root, deso_spmat **out);

/* Distributed assembly: each rank gives its own rows row0 .. row0 + nrows
 * - 1 as local CSR arrays (rowptr[0 .. nrows], rowptr[0] = 0; global
 * columns in [0, n), any order, duplicates summed).  The ranks' row ranges
 * must follow one another in rank order and cover [0, m) exactly (a rank
 * may have none); the matrix keeps that distribution.  Nothing is sent
 * but the ranges and counts.  Errors: as deso_spmat_from_csr, and
 * DESO_EINVAL when the ranges do not tile [0, m) in rank order.          */
deso_err deso_spmat_from_rows(deso_ctx *ctx, int64_t m, int64_t n,
                              int64_t row0, int64_t nrows,
                              const int64_t *rowptr, const int64_t *col,
                              const double *val, deso_spmat **out);

/* A generated matrix, each rank making only its own rows (contiguous
 * blocks, as deso_spmat_from_mtx): "lap2d:G" (the 5-point Laplacian on a
 * G x G grid, n = G^2, natural order), "lap3d:G" (7-point, n = G^3),
 * "lap2d-perm:G" (lap2d:G under a fixed pseudo-random symmetric
 * permutation, the same on every run).  Symmetric positive definite.
 * Errors: DESO_ENULL, DESO_ESTALE, DESO_EINVAL (unknown name, malformed
 * size), DESO_ESIZE (G < 1, n >= 2^40), DESO_EMISMATCH (another
 * generator or size on some rank), DESO_ENOMEM.                            */
deso_err deso_spmat_from_gen(deso_ctx *ctx, const char *spec,
                             deso_spmat **out);

/* New values on the same pattern: val[0 .. nnz) in pattern order, on
 * every rank (DESO_ALL_RANKS: each rank takes its own part, nothing is
 * sent) or on `root` (which sends each rank its part; val may be NULL
 * elsewhere).  The distribution, and so any plan made for the matrix,
 * stays.  Collective; a force point when a product recorded on a (a
 * deso_dusmv) is pending, which runs with the old values.  Once a force
 * has placed a's products by the trace graph (deso_options.partition),
 * the values go to that placement (with a root, each rank first sends
 * the root where its rows' entries start), and errors are agreed on
 * every rank even with DESO_ALL_RANKS.  Errors (with a root, on every
 * rank, but for a NULL or destroyed a, which fails where it is):
 * DESO_ENULL, DESO_ESTALE, DESO_EINVAL (root out of range or not the
 * same on every rank), DESO_ENOMEM (a placed matrix with a root),
 * DESO_EMPI.                                                               */
deso_err deso_spmat_set_values(deso_spmat *a, const double *val, int root);

/* Global shape and entry count (entries summed over ranks).  Local.
 * Errors: DESO_ENULL, DESO_ESTALE.                                          */
deso_err deso_spmat_shape(const deso_spmat *a, int64_t *m, int64_t *n,
                          int64_t *nnz);

/* This rank's share: its block's first row, its row count and its
 * entries (also once a's products are placed by the trace graph, when
 * the rank holds other rows).  Local.  Errors: DESO_ENULL, DESO_ESTALE.  */
deso_err deso_spmat_local(const deso_spmat *a, int64_t *row0,
                          int64_t *nrows, int64_t *nnz);

/* Where a's products run: DESO_PARTITION_BLOCK (its contiguous row
 * blocks) or DESO_PARTITION_NTG (the trace graph's partition), once a
 * force holding a product of a has chosen (deso_options.partition; auto
 * is resolved to one of the two), DESO_PARTITION_DEFAULT before.  The
 * same on every rank.  Local.  Errors: DESO_ENULL, DESO_ESTALE,
 * DESO_EINVAL (a is not a sparse matrix).                                */
deso_err deso_spmat_placement(const deso_spmat *a, deso_partition *placed);

/* A copy of this rank's rows (deso_spmat_local's row0 .. row0 + nrows - 1)
 * in pattern order: rowptr[0 .. nrows] from 0, global columns and values
 * [0 .. nnz); e.g. for a preconditioner working on the rank's own rows
 * (deso_op_create_spmat).  The arrays are the caller's, of nrows + 1 and
 * nnz elements (col and val may be NULL when nnz = 0).  The values are
 * the matrix's current ones.  Collective: every rank calls it.  While a
 * is on its blocks it is a local copy; once a force has placed a's
 * products by the trace graph the rank no longer holds its block, and
 * the rows come back from the placement in counted messages (the same
 * route, reversed), each step agreed.  Errors: DESO_ENULL (a, or an
 * array that has something to hold: on every rank once placed),
 * DESO_ESTALE, once placed DESO_ENOMEM and DESO_EMPI.                   */
deso_err deso_spmat_local_rows(const deso_spmat *a, int64_t *rowptr,
                               int64_t *col, double *val);

/* The whole matrix as global CSR arrays in pattern order on rank `root`
 * (rowptr[0 .. m], col and val [0 .. nnz)), or on every rank with
 * DESO_ALL_RANKS; the arrays may be NULL elsewhere.  Collective.  Errors
 * (on every rank when any rank has one, but for a NULL or destroyed a):
 * DESO_ENULL, DESO_ESTALE, DESO_EINVAL (root out of range or not the same
 * on every rank), DESO_ENOMEM, DESO_EMPI.                                 */
deso_err deso_spmat_gather(const deso_spmat *a, int64_t *rowptr,
                           int64_t *col, double *val, int root);

/* Destroys the handle and sets *a to NULL.  NULL-safe.  Local.  A product
 * recorded on a and still pending keeps its data until it has run.
 * Errors: DESO_ESTALE when *a was already destroyed through another
 * pointer.                                                                */
deso_err deso_spmat_destroy(deso_spmat **a);

/* ---- ScaLAPACK interoperability ------------------------------------------ *
 * A deso context on an R x C grid stores a matrix exactly as ScaLAPACK
 * does on the BLACS grid that Cblacs_gridinit(&ctxt, "Row", R, C) makes
 * over the context's communicator: BLACS numbers the processes of a
 * context by their rank in its communicator (Cblacs_pnum), and "Row" puts
 * grid position (r, c) at rank r * C + c, which is deso's numbering.  So
 * use deso_blacs_context, or build the grid yourself with "Row" order over
 * the same ranks in the same order (e.g. Cblacs_get(-1, 0, &ctxt) then
 * Cblacs_gridinit(&ctxt, "Row", R, C) when the deso context was made on
 * MPI_COMM_WORLD).  A "Col" grid or a Cblacs_gridmap'd one puts ranks
 * elsewhere: every function below then fails with DESO_EGRID.
 * Descriptors are ScaLAPACK's desc[9] = {DTYPE = 1, CTXT, M, N, MB, NB,
 * RSRC, CSRC, LLD}; only RSRC = CSRC = 0 is supported.  A vector is an
 * n x 1 matrix: rows block-cyclic (MB) over grid rows, all in grid column
 * 0 (ScaLAPACK's layout of a right-hand side b).                          */

/* How a user array enters or leaves deso.
 *   DESO_COPY    deso copies the data; the caller keeps (and frees) its
 *                own array and may reuse it at once.
 *   DESO_BORROW  no copy where the layout allows (see each function); the
 *                array is shared with deso.                               */
typedef enum deso_copy_mode { DESO_COPY = 0, DESO_BORROW = 1 } deso_copy_mode;

/* Creates a BLACS context (Cblacs_gridinit, "Row" order) on the context's
 * grid over (a BLACS system handle of) the context's communicator, so that
 * this rank's BLACS grid position is its deso grid position.  The caller
 * owns *ctxt and releases it with Cblacs_gridexit(*ctxt) before
 * deso_finalize (the BLACS grid uses a communicator derived from the
 * context's).  Collective.  Not a force point.
 * Errors: DESO_ENULL, DESO_ESTALE, DESO_EGRID (BLACS made another grid),
 * DESO_EMPI.  On error *ctxt is -1.                                        */
deso_err deso_blacs_context(deso_ctx *ctx, int *ctxt);

/* A matrix from a ScaLAPACK descriptor and this rank's local array.  The
 * matrix keeps the descriptor's MB x NB folding (the optimiser remaps it
 * when an operation wants another).  The BLACS grid of desc[1] must match
 * the context's grid as described above.
 *   DESO_COPY:   local is copied; the caller may free it on return.
 *   DESO_BORROW: when LLD equals this rank's local row count (NUMROC), or
 *     the local piece has at most one column, the matrix's storage IS
 *     local: no copy.  The caller keeps ownership and must keep the array
 *     alive and unmodified until the matrix handle is destroyed and no
 *     pending operation reads it (simplest: until deso_finalize); deso
 *     never frees it.  An operation that updates the matrix (deso_dger)
 *     may write the new values into the array.  Where the layout does not
 *     allow borrowing (a padded LLD) the data is copied instead, silently:
 *     the rules above stay safe either way.
 * Collective.  Not a force point.
 * Errors (on every rank when any rank has one): DESO_ENULL (ctx, desc or
 * out NULL; local NULL where this rank holds data), DESO_EINVAL (DTYPE !=
 * 1, MB or NB < 1, LLD < max(1, local rows), bad mode), DESO_ESIZE (M or
 * N < 0), DESO_ENOTSUP (RSRC or CSRC != 0), DESO_EGRID (the BLACS grid is
 * not the context's), DESO_ESTALE, DESO_EMPI, DESO_ENOMEM.                */
deso_err deso_mat_from_scalapack(deso_ctx *ctx, double *local,
                                 const int desc[9], deso_copy_mode mode,
                                 deso_mat **out);

/* A vector of length M from an M x 1 ScaLAPACK descriptor (N must be 1)
 * and local array.  Ownership and errors as deso_mat_from_scalapack (a
 * vector's local piece is one column, so DESO_BORROW never copies), plus
 * DESO_ESIZE when N != 1.  Collective.  Not a force point.                */
deso_err deso_vec_from_scalapack(deso_ctx *ctx, double *local,
                                 const int desc[9], deso_copy_mode mode,
                                 deso_vec **out);

/* Hands matrix a to ScaLAPACK: forces pending work, brings a into the
 * MB x NB block-cyclic layout (mb = nb = 0: keep its current folding, as
 * reported in desc[4], desc[5]; otherwise both >= 1, e.g. mb = nb for
 * pdgesv), and returns in desc a descriptor of it (RSRC = CSRC = 0, LLD =
 * max(1, local rows)) and in *local this rank's local array.
 *   ctxt >= 0: the descriptor uses that BLACS context, which must match the
 *     context's grid (see above); the caller owns it.
 *   ctxt < 0: a context is made as by deso_blacs_context and returned in
 *     desc[1]; the caller releases it with Cblacs_gridexit(desc[1]) (before
 *     deso_finalize).  Make one with deso_blacs_context and pass it when
 *     exporting several objects for one ScaLAPACK call.
 *   DESO_COPY: *local is a new array (at least one element even when this
 *     rank holds nothing) that the caller frees with free(); ScaLAPACK may
 *     overwrite it (pdgesv's LU) without touching the matrix.
 *   DESO_BORROW: *local is deso's own storage of a in that layout; the
 *     caller must not free it and must treat it as read-only (writing into
 *     it changes the deso matrix behind the library's back).  Valid until
 *     the next force point that runs an operation updating a, or a's
 *     destruction, or deso_finalize.
 * A layout other than a's current one is kept beside it (memory for one
 * more copy of the local piece) for later readers.
 * Collective.  Force point.
 * Errors: DESO_ENULL, DESO_ESTALE, DESO_EINVAL (mb or nb < 0, only one of
 * them 0, bad mode), DESO_EGRID (ctxt does not match the grid),
 * DESO_EOVERFLOW (an extent does not fit in int), DESO_ENOMEM, DESO_EMPI,
 * and the force's errors.  On error *local is NULL and nothing is owed.      */
deso_err deso_mat_to_scalapack(const deso_mat *a, int ctxt, int64_t mb,
                               int64_t nb, deso_copy_mode mode, int desc[9],
                               double **local);

/* Hands vector x to ScaLAPACK as an n x 1 matrix with row block mb (0: the
 * context's block size, or ceil(n / grid rows) with DESO_NB_BLOCK) and
 * NB = 1: the local array is non-empty only in grid column 0.  ctxt,
 * ownership, errors: as deso_mat_to_scalapack.  Collective.  Force point. */
deso_err deso_vec_to_scalapack(const deso_vec *x, int ctxt, int64_t mb,
                               deso_copy_mode mode, int desc[9],
                               double **local);

/* Destroys a matrix handle; NULL-safe, sets *a to NULL; pending operations
 * that read it still see its value.  Local.  Errors: DESO_ESTALE.        */
deso_err deso_mat_destroy(deso_mat **a);

/* Shape of a.  Local.  Errors: DESO_ENULL, DESO_ESTALE.                   */
deso_err deso_mat_shape(const deso_mat *a, int64_t *m, int64_t *n);

/* Copies the whole matrix into buf (column-major, leading dimension ld >=
 * max(1, m)) on `root`, or on every rank with DESO_ALL_RANKS (buf and ld
 * are ignored elsewhere).  Collective.  Force point.  Meant for tests and
 * small matrices.  Errors: DESO_ENULL, DESO_ESTALE, DESO_EINVAL (root out
 * of range, ld too small), DESO_ENOMEM, DESO_EMPI, the force's errors;
 * all but the handle's on every rank when any rank has one.               */
deso_err deso_mat_gather(const deso_mat *a, double *buf, int64_t ld,
                         int root);

/* A scalar with the given value.  Collective.  Errors: DESO_ENULL,
 * DESO_ESTALE, DESO_ENOMEM (not agreed, as deso_vec_create).              */
deso_err deso_scalar_create(deso_ctx *ctx, double value, deso_scalar **s);

/* As deso_vec_destroy.  Local.                                            */
deso_err deso_scalar_destroy(deso_scalar **s);

/* The scalar's value, on every rank.  Collective.  Force point.
 * Errors: DESO_ENULL, DESO_ESTALE, the force's errors.                    */
deso_err deso_scalar_get(const deso_scalar *s, double *value);

/* A new vector of x's length in x's context, zero-filled: like PETSc's
 * VecDuplicate, the values are not copied (deso_dcopy does that, lazily).
 * x may have pending updates; only its length is read.  Collective.  Not
 * a force point.  Errors: DESO_ENULL (x or y NULL), DESO_ESTALE,
 * DESO_EINVAL (x is not a vector), DESO_ENOMEM (not agreed, as
 * deso_vec_create).  On error *y is NULL.                                */
deso_err deso_vec_duplicate(const deso_vec *x, deso_vec **y);

/* ---- reductions into new scalars ------------------------------------------ *
 * deso_ddot, deso_dnrm2, deso_dasum and deso_idamax whose result scalar is
 * created for the caller (in x's context; destroy it with
 * deso_scalar_destroy, or leave it to deso_finalize): the same recorded
 * node, arguments, checks and errors as the call without _new, plus
 * DESO_ENULL for result NULL and DESO_ENOMEM.  On error *result is NULL
 * and no scalar is left behind.  Collective.  Not force points.          */
deso_err deso_ddot_new(int64_t n, const deso_vec *x, int64_t incx,
                       const deso_vec *y, int64_t incy, deso_scalar **result);
deso_err deso_dnrm2_new(int64_t n, const deso_vec *x, int64_t incx,
                        deso_scalar **result);
deso_err deso_dasum_new(int64_t n, const deso_vec *x, int64_t incx,
                        deso_scalar **result);
deso_err deso_idamax_new(int64_t n, const deso_vec *x, int64_t incx,
                         deso_scalar **result);

/* ---- lazy scalar arguments ----------------------------------------------- */

/* A double or a lazy scalar; built by DESO_SARG(x) (C11 _Generic).        */
typedef struct deso_sarg {
    const deso_scalar *s;    /* the lazy scalar when lazy (NULL: an error)  */
    double v;                /* otherwise this value                        */
    int lazy;
} deso_sarg;

deso_sarg deso_sarg_scalar(const deso_scalar *s);   /* Local helpers       */
deso_sarg deso_sarg_double(double v);

#define DESO_SARG(x)                                                         \
    _Generic((x), deso_scalar *: deso_sarg_scalar,                           \
             const deso_scalar *: deso_sarg_scalar,                          \
             default: deso_sarg_double)(x)

/* ---- scalar arithmetic (recorded, never forcing) --------------------------- */

/* out <- a + b, a - b, a * b, a / b, sqrt(a), -a, a (a, b: double or lazy).
 * IEEE semantics (a / 0 is inf, sqrt of a negative is NaN).  Collective.
 * Not a force point.  Errors: DESO_ENULL, DESO_ESTALE, DESO_ECONTEXT.     */
deso_err deso_sadd_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso_ssub_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso_smul_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso_sdiv_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso_ssqrt_arg(deso_scalar *out, deso_sarg a);
deso_err deso_sneg_arg(deso_scalar *out, deso_sarg a);
deso_err deso_sset_arg(deso_scalar *out, deso_sarg a);
/* out <- the larger (smaller) of a and b, as C's fmax (fmin): a NaN
 * operand gives the other one.  Collective.  Not a force point.  Errors:
 * as deso_sadd_arg.                                                       */
deso_err deso_smax_arg(deso_scalar *out, deso_sarg a, deso_sarg b);
deso_err deso_smin_arg(deso_scalar *out, deso_sarg a, deso_sarg b);

#define deso_sadd(out, a, b) deso_sadd_arg((out), DESO_SARG(a), DESO_SARG(b))
#define deso_ssub(out, a, b) deso_ssub_arg((out), DESO_SARG(a), DESO_SARG(b))
#define deso_smul(out, a, b) deso_smul_arg((out), DESO_SARG(a), DESO_SARG(b))
#define deso_sdiv(out, a, b) deso_sdiv_arg((out), DESO_SARG(a), DESO_SARG(b))
#define deso_ssqrt(out, a) deso_ssqrt_arg((out), DESO_SARG(a))
#define deso_sneg(out, a) deso_sneg_arg((out), DESO_SARG(a))
#define deso_sset(out, a) deso_sset_arg((out), DESO_SARG(a))
#define deso_smax(out, a, b) deso_smax_arg((out), DESO_SARG(a), DESO_SARG(b))
#define deso_smin(out, a, b) deso_smin_arg((out), DESO_SARG(a), DESO_SARG(b))

/* ---- views ------------------------------------------------------------------ *
 * A view is a handle on elements of another vector or matrix, its parent:
 * a vector's elements at an offset and stride, a matrix's column, a
 * range of its columns (a matrix of whole columns, so a Krylov basis V can
 * be one matrix whose columns are written by level 1 calls and read by
 * dgemv on V's first k columns), or a block of it (rows and columns: the
 * sub-matrix CBLAS's &A[i0 + j0 lda] with lda describes).  A view is
 * used like any handle of its kind: reading it reads the parent's
 * current version, and a call that writes it makes the parent's next
 * version (the other elements kept).
 * Nothing moves when a view is made or used: the reads and writes are
 * recorded nodes, placed and priced by the optimiser like the calls.
 * Views of views are refused (make the view of the parent instead).
 * Destroy a view with deso_vec_destroy or deso_mat_destroy; a view whose
 * parent was destroyed is stale (DESO_ESTALE).  A view cannot be written
 * from the host (deso_mat_diag refuses one as its d).  Collective (every
 * rank makes the same calls), recorded, not force points.  Errors:
 * DESO_ENULL (a NULL argument), DESO_ESTALE, DESO_EINVAL (the parent is a
 * view; stride 0), DESO_ESIZE (the view does not lie inside the parent;
 * n or ncols < 0; an empty column range or block), DESO_ENOMEM.  On error
 * *view is NULL.                                                        */

/* Elements offset, offset + stride, ..., offset + (n - 1) stride of x
 * (stride may be negative: a reversed view).                             */
deso_err deso_vec_view(deso_vec *x, int64_t offset, int64_t n,
                       int64_t stride, deso_vec **view);
/* Column j of A, a vector of A's m rows.                                 */
deso_err deso_mat_col(deso_mat *a, int64_t j, deso_vec **view);
/* Columns j0 .. j0 + ncols - 1 of A, an m x ncols matrix.                */
deso_err deso_mat_cols(deso_mat *a, int64_t j0, int64_t ncols,
                       deso_mat **view);
/* Rows i0 .. i0 + m - 1 of columns j0 .. j0 + n - 1 of A, an m x n matrix
 * (m, n >= 1): what CBLAS's &A[i0 + j0 lda] with leading dimension lda
 * describes.  Usable wherever a matrix is, as the matrix of dgemv (N or
 * T), dger and the other level 2 calls, read or written; all of A's rows
 * give deso_mat_cols's view.                                            */
deso_err deso_mat_block(deso_mat *a, int64_t i0, int64_t j0, int64_t m,
                        int64_t n, deso_mat **view);

/* ---- user operators ------------------------------------------------------- *
 * A user operator puts the user's own y = op(x) into the DAG: a
 * matrix-free operator (PETSc's MATSHELL) or a preconditioner (PCSHELL).
 * deso_op_apply records it lazily like any call; at the force the
 * executor brings x where the operator declared it needs it (counted and
 * priced like any other operand's move: the optimiser takes the declared
 * placements as fixed), then calls the callback on every rank with that
 * rank's local pieces of x and y.  The callback must not communicate
 * (no MPI: ranks call it at the same point of the plan, and a collective
 * inside it could deadlock against deso's own); it runs once per
 * recorded apply, on every rank, also on ranks holding no part of y.
 *
 * Where x and y live (the operator's declaration):
 *   x  DESO_OP_REPLICATED: every rank gets all of x;
 *      DESO_OP_LIKE_Y: element i of x wherever element i of y is (a
 *        diagonal or point-wise operator, a Jacobi preconditioner; m = n);
 *   y  DESO_OP_ANY: wherever the optimiser places it (the callback learns
 *        where from the part it is given);
 *      DESO_OP_ROWS: as the rows of matrix rows_of (its row blocks over
 *        the grid rows, replicated over the grid columns: where a dgemv's
 *        result is), e.g. an operator that replaces a dgemv on that
 *        matrix;
 *      DESO_OP_REPLICATED: every rank computes all of y.
 * A vector's local piece is a block-cyclic share of it (the part below):
 * local element i is global element deso_op_global(part, i).           */

typedef enum deso_op_layout {
    DESO_OP_REPLICATED = 1,  /* x or y: every rank holds all of it         */
    DESO_OP_LIKE_Y,          /* x only: where y is                         */
    DESO_OP_ANY,             /* y only: where the optimiser puts it        */
    DESO_OP_ROWS             /* y only: as the rows of a matrix            */
} deso_op_layout;

/* One rank's piece of a vector of length n: nlocal elements (0 when the
 * rank holds none), dealt in blocks of `block` over `nparts` parts, of
 * which this rank holds part `part` (a whole vector: nparts 1, part 0),
 * counted from global index `first` (0, but for an operator on a sparse
 * matrix's rows: the rank's first row, with nparts 1, part 0 and one
 * block of nlocal).                                                      */
typedef struct deso_op_part {
    int64_t n;
    int64_t nlocal;
    int64_t block;
    int nparts;
    int part;
    int64_t first;
} deso_op_part;

/* The global index of local element i (0 <= i < p->nlocal).              */
static inline int64_t deso_op_global(const deso_op_part *p, int64_t i)
{
    return p->first +
           ((i / p->block) * p->nparts + p->part) * p->block + i % p->block;
}

/* The callback: y <- op(x) on this rank's pieces.  y arrives zero-filled
 * and is all the callback may write.  Returns 0 on success; any other
 * value fails the force that runs it on every rank with DESO_EUSER
 * (deso_last_error names the rank and the value), the flush's pending
 * values are lost as for any failed flush, and the context stays usable. */
typedef int (*deso_op_fn)(void *user, const double *x, const deso_op_part *xp,
                          double *y, const deso_op_part *yp);

typedef struct deso_op deso_op;

/* An operator from vectors of length n to vectors of length m, calling
 * fn(user, ...) (user is passed through untouched; it may differ between
 * ranks).  x_layout and y_layout as above; rows_of is the matrix for
 * DESO_OP_ROWS (m rows; its layout when the operator is made is the one
 * used) and must be NULL otherwise.  Collective (every rank makes the
 * same operators in the same order), not recorded, not a force point.
 * Errors: DESO_ENULL (ctx, fn, op or, for DESO_OP_ROWS, rows_of),
 * DESO_ESTALE, DESO_ECONTEXT, DESO_ESIZE (m or n < 0; rows_of without m
 * rows; DESO_OP_LIKE_Y with m != n), DESO_EINVAL (a layout that is not
 * one of the above for its side; rows_of given without DESO_OP_ROWS),
 * DESO_EMISMATCH (the ranks declared different m, n, layouts or
 * rows_of), DESO_EMPI, DESO_ENOMEM.  On error *op is NULL.  Every error
 * but a NULL or dead ctx is agreed: a rank that fails alone (a bad
 * argument, out of memory) fails the call with its code and message on
 * every rank, and no rank has made the operator.                        */
deso_err deso_op_create(deso_ctx *ctx, int64_t m, int64_t n, deso_op_fn fn,
                        void *user, deso_op_layout x_layout,
                        deso_op_layout y_layout, const deso_mat *rows_of,
                        deso_op **op);
/* A square operator on the rows of sparse matrix rows_of (m x n): x and
 * y of length m, both laid out as rows_of's rows (deso_dusmv's y: each
 * rank its own rows' range, deso_spmat_local's), so that the callback
 * sees exactly the entries of its rows, its part's `first` being its
 * first row: a block Jacobi or a local smoother on the rank's block of
 * rows (deso_spmat_local_rows).  The layout is fixed for the optimiser
 * as DESO_OP_ROWS's is; everything else as deso_op_create (an operator
 * of m x m with x DESO_OP_LIKE_Y).  Collective, agreed.  Errors:
 * DESO_ENULL (ctx, fn, rows_of or op), DESO_ESTALE, DESO_ECONTEXT,
 * DESO_EINVAL (rows_of not a sparse matrix), DESO_EMISMATCH (another
 * matrix on some rank), DESO_EMPI, DESO_ENOMEM.  On error *op is NULL.  */
deso_err deso_op_create_spmat(deso_ctx *ctx, deso_op_fn fn, void *user,
                              const deso_spmat *rows_of, deso_op **op);
/* y <- op(x), recorded (x of length n, y of length m; views allowed; x
 * and y may be the same vector: the callback reads the old one).
 * Collective; not a force point.  Errors: DESO_ENULL, DESO_ESTALE
 * (a destroyed operator or vector), DESO_ECONTEXT, DESO_ESIZE (a length
 * other than the operator's), DESO_ENOMEM.  As for every recorded call,
 * errors are not agreed here (recording talks to no other rank): a rank
 * that failed alone records nothing, and the next force fails with
 * DESO_EMISMATCH on every rank, drops the pending work and leaves the
 * context usable.                                                       */
deso_err deso_op_apply(deso_op *op, const deso_vec *x, deso_vec *y);
/* Frees the operator; *op is NULL afterwards (NULL and *op NULL: nothing
 * to do).  Calls already recorded still run it.  Local, not a force
 * point.  Errors: DESO_ESTALE (destroyed already).                      */
deso_err deso_op_destroy(deso_op **op);

/* ---- level 1 (recorded; collective; not force points) ---------------------- *
 * Increments are reference BLAS's: any nonzero inc, element i of the call
 * at x[i inc] (from the vector's end, x[(n - 1 - i) |inc|], when inc < 0);
 * the vector must hold 1 + (n - 1) |inc| elements at least.  A strided
 * argument is read and written through a view (above) for the call.
 * Common errors: DESO_ENULL (NULL handle), DESO_ESTALE (destroyed handle),
 * DESO_ECONTEXT (handles of different contexts), DESO_ESIZE (n < 0, or n
 * elements at that increment do not fit a vector), DESO_EINVAL
 * (increment 0).                                                          */

/* y <- x                                                                   */
deso_err deso_dcopy(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy);
/* x <-> y                                                                  */
deso_err deso_dswap(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy);
/* x <- alpha x                                                             */
deso_err deso_dscal_arg(int64_t n, deso_sarg alpha, deso_vec *x,
                        int64_t incx);
/* y <- alpha x + y                                                         */
deso_err deso_daxpy_arg(int64_t n, deso_sarg alpha, const deso_vec *x,
                        int64_t incx, deso_vec *y, int64_t incy);
/* y <- alpha x + beta y                                                    */
deso_err deso_daxpby_arg(int64_t n, deso_sarg alpha, const deso_vec *x,
                         int64_t incx, deso_sarg beta, deso_vec *y,
                         int64_t incy);
/* result <- x . y   (lazy: read it with deso_scalar_get)                   */
deso_err deso_ddot(int64_t n, const deso_vec *x, int64_t incx,
                   const deso_vec *y, int64_t incy, deso_scalar *result);
/* result <- ||x||_2, scaled as reference BLAS's (Blue's algorithm), so
 * that entries near the overflow or underflow thresholds (1e200, 1e-200)
 * give the norm where a plain sum of squares would give inf or 0.        */
deso_err deso_dnrm2(int64_t n, const deso_vec *x, int64_t incx,
                    deso_scalar *result);
/* result <- sum |x_i|                                                      */
deso_err deso_dasum(int64_t n, const deso_vec *x, int64_t incx,
                    deso_scalar *result);
/* result <- the first 0-based index of max |x_i| (as a double; 0 when
 * n = 0), like cblas_idamax.                                               */
deso_err deso_idamax(int64_t n, const deso_vec *x, int64_t incx,
                     deso_scalar *result);

/* Extension (not in the BLAS): y <- x .* y, element by element (y_i <-
 * x_i y_i), e.g. a Jacobi preconditioner z = D^-1 r with x = D^-1.  Same
 * rules and errors as deso_daxpy without the scalar; NaN and inf follow
 * IEEE multiplication.                                                    */
deso_err deso_dvmul(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy);
/* Extensions, rules and errors as deso_dvmul, IEEE arithmetic (x / 0 is
 * +-inf, 0 / 0 NaN):  y <- y ./ x  (deso_dvdiv: y_i <- y_i / x_i);
 * y <- 1 ./ x  (deso_dvrecip: y_i <- 1 / x_i, the old y is not read, e.g.
 * a Jacobi preconditioner's inverse diagonal from deso_mat_diag's);
 * y <- |x|  (deso_dvabs: y_i <- |x_i|, the old y is not read).  x and y
 * may be the same vector.                                                 */
deso_err deso_dvdiv(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy);
deso_err deso_dvrecip(int64_t n, const deso_vec *x, int64_t incx,
                      deso_vec *y, int64_t incy);
deso_err deso_dvabs(int64_t n, const deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy);

/* Plane rotation: x_i <- c x_i + s y_i, y_i <- c y_i - s x_i (both from
 * the old values), c and s doubles or lazy scalars (e.g. computed from
 * deso_ddot results without a force).  x and y must be different vectors
 * (DESO_EINVAL).                                                          */
deso_err deso_drot_arg(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                       int64_t incy, deso_sarg c, deso_sarg s);
/* Modified rotation (x_i, y_i) <- H (x_i, y_i) with H from param as
 * reference BLAS lays it out: param[0] is the flag (-1: H = [h11 h12; h21
 * h22] from param[1..4] = h11, h21, h12, h22; 0: h11 = h22 = 1; 1: h12 =
 * 1, h21 = -1; -2: H = I, nothing is recorded).  param is read at the call
 * (host doubles: the flag decides which nodes are recorded).  Errors: as
 * deso_drot_arg, DESO_ENULL for param, DESO_EINVAL for any other flag.   */
deso_err deso_drotm(int64_t n, deso_vec *x, int64_t incx, deso_vec *y,
                    int64_t incy, const double param[5]);

/* The generators work on the host's doubles, with CBLAS's signatures, and
 * compute at once (local, no context, not recorded, not a force point):
 * they turn two or four numbers into a rotation with branches on their
 * values (drotmg's flag even decides the form of H, so the DAG drotm
 * records), and their inputs are the small data a solver keeps on every
 * rank anyway (GMRES's Hessenberg column, already a host array for its
 * least-squares update).  A lazy version would either force or encode the
 * branches in the DAG, for no gain at this size.  Pass their results to
 * deso_drot / deso_drotm as doubles.  Errors: DESO_ENULL (a NULL pointer;
 * no context is reached, so no error handler runs).
 * deso_drotg: (a, b) -> r = +-sqrt(a^2 + b^2) in *a, z in *b, c and s
 * with [c s; -s c] (a, b)^T = (r, 0)^T, as cblas_drotg.
 * deso_drotmg: as cblas_drotmg (param as deso_drotm reads it).           */
deso_err deso_drotg(double *a, double *b, double *c, double *s);
deso_err deso_drotmg(double *d1, double *d2, double *b1, double b2,
                     double param[5]);

/* Not provided:
 *   dsdot (single-precision vectors accumulated in double): deso has no
 *     single-precision vectors; use deso_ddot.
 *   the banded and packed routines (dgbmv, dsbmv, dspmv, dtbmv, dtpmv,
 *     dtbsv, dtpsv, dspr, dspr2): deso's matrices are dense and
 *     block-cyclic, which a band or packed triangle does not fit without
 *     a storage of its own; a banded matrix is, for now, a dense one with
 *     zeros (deso_dgemv, deso_dsymv, deso_dtrmv, deso_dtrsv, deso_dsyr,
 *     deso_dsyr2 on it), and a sparse handle is where band structure
 *     would pay.                                                          */

#define deso_dscal(n, alpha, x, incx)                                        \
    deso_dscal_arg((n), DESO_SARG(alpha), (x), (incx))
#define deso_drot(n, x, incx, y, incy, c, s)                                 \
    deso_drot_arg((n), (x), (incx), (y), (incy), DESO_SARG(c), DESO_SARG(s))
#define deso_daxpy(n, alpha, x, incx, y, incy)                               \
    deso_daxpy_arg((n), DESO_SARG(alpha), (x), (incx), (y), (incy))
#define deso_daxpby(n, alpha, x, incx, beta, y, incy)                        \
    deso_daxpby_arg((n), DESO_SARG(alpha), (x), (incx), DESO_SARG(beta),     \
                    (y), (incy))

/* ---- level 2 (recorded; collective; not force points) ---------------------- *
 * The enums carry CBLAS's values.  Increments as level 1.  lda is only
 * checked >= 1: a handle is not a pointer, so there is no &A[i0 + j0 lda]
 * to offset.  The sub-matrix CBLAS selects that way is a view passed as
 * the matrix argument: deso_mat_block(A, i0, j0, m, n, &B) for rows i0 ..
 * i0 + m - 1 of columns j0 .. j0 + n - 1, or deso_mat_cols for whole
 * columns (what a Krylov basis needs, V(:, 0:j)).  Errors as level 1,
 * plus DESO_EINVAL for a bad enum or lda < 1 (deso_last_error names the
 * argument's position).                                                  */

typedef enum deso_order { DESO_ROW_MAJOR = 101, DESO_COL_MAJOR = 102 } deso_order;
typedef enum deso_trans { DESO_NO_TRANS = 111, DESO_TRANS = 112 } deso_trans;
typedef enum deso_uplo { DESO_UPPER = 121, DESO_LOWER = 122 } deso_uplo;
typedef enum deso_diag { DESO_NON_UNIT = 131, DESO_UNIT = 132 } deso_diag;

/* y <- alpha op(A) x + beta y, A m x n as `order` reads it (row-major:
 * an n x m handle).  A beta that is the double 0.0 means y is not read.
 * m or n = 0: nothing is recorded (y is not scaled), as reference BLAS.  */
deso_err deso_dgemv_arg(deso_order order, deso_trans trans, int64_t m,
                        int64_t n, deso_sarg alpha, const deso_mat *a,
                        int64_t lda, const deso_vec *x, int64_t incx,
                        deso_sarg beta, deso_vec *y, int64_t incy);
/* A <- alpha x y^T + A, A m x n as `order` reads it (row-major: an n x m
 * handle).                                                                 */
deso_err deso_dger_arg(deso_order order, int64_t m, int64_t n, deso_sarg alpha,
                       const deso_vec *x, int64_t incx, const deso_vec *y,
                       int64_t incy, deso_mat *a, int64_t lda);
/* y <- alpha A x + beta y with A symmetric, only its `uplo` triangle read. */
deso_err deso_dsymv_arg(deso_order order, deso_uplo uplo, int64_t n,
                        deso_sarg alpha, const deso_mat *a, int64_t lda,
                        const deso_vec *x, int64_t incx, deso_sarg beta,
                        deso_vec *y, int64_t incy);
/* x <- op(T)^-1 x, T triangular (its `uplo` triangle).                     */
deso_err deso_dtrsv(deso_order order, deso_uplo uplo, deso_trans trans,
                    deso_diag diag, int64_t n, const deso_mat *a, int64_t lda,
                    deso_vec *x, int64_t incx);
/* x <- op(T) x, T triangular (its `uplo` triangle; with DESO_UNIT the
 * diagonal is taken as ones and not read).                                */
deso_err deso_dtrmv(deso_order order, deso_uplo uplo, deso_trans trans,
                    deso_diag diag, int64_t n, const deso_mat *a, int64_t lda,
                    deso_vec *x, int64_t incx);
/* A <- alpha x x^T + A (dsyr) and A <- alpha x y^T + alpha y x^T + A
 * (dsyr2), A symmetric n x n: only its `uplo` triangle is updated, the
 * other is left as it was (reference BLAS).  alpha = 0.0 leaves A as it
 * is.                                                                      */
deso_err deso_dsyr_arg(deso_order order, deso_uplo uplo, int64_t n,
                       deso_sarg alpha, const deso_vec *x, int64_t incx,
                       deso_mat *a, int64_t lda);
deso_err deso_dsyr2_arg(deso_order order, deso_uplo uplo, int64_t n,
                        deso_sarg alpha, const deso_vec *x, int64_t incx,
                        const deso_vec *y, int64_t incy, deso_mat *a,
                        int64_t lda);

#define deso_dgemv(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy) \
    deso_dgemv_arg((order), (trans), (m), (n), DESO_SARG(alpha), (a), (lda), \
                   (x), (incx), DESO_SARG(beta), (y), (incy))
#define deso_dger(order, m, n, alpha, x, incx, y, incy, a, lda)              \
    deso_dger_arg((order), (m), (n), DESO_SARG(alpha), (x), (incx), (y),     \
                  (incy), (a), (lda))
#define deso_dsymv(order, uplo, n, alpha, a, lda, x, incx, beta, y, incy)    \
    deso_dsymv_arg((order), (uplo), (n), DESO_SARG(alpha), (a), (lda), (x),  \
                   (incx), DESO_SARG(beta), (y), (incy))
#define deso_dsyr(order, uplo, n, alpha, x, incx, a, lda)                    \
    deso_dsyr_arg((order), (uplo), (n), DESO_SARG(alpha), (x), (incx), (a),  \
                  (lda))
#define deso_dsyr2(order, uplo, n, alpha, x, incx, y, incy, a, lda)          \
    deso_dsyr2_arg((order), (uplo), (n), DESO_SARG(alpha), (x), (incx), (y), \
                   (incy), (a), (lda))

/* ---- the sparse product (recorded; not a force point) ------------------ */

/* The sparse product (the Sparse BLAS's usmv, with beta):
 *   y <- alpha op(A) x + beta y,  op(A) = A (DESO_NO_TRANS) or A^T
 *   (DESO_TRANS; 113, CblasConjTrans, is the same for real data).
 * A is m x n; x has exactly n elements (m for the transpose) and y m (n);
 * a strided or partial operand is a view (deso_vec_view).  alpha and beta
 * are lazy scalar arguments as for deso_dgemv (deso_dusmv takes doubles,
 * deso_dusmv_arg deso_sarg); a beta that is the double 0.0 means y is not
 * read (NaN and Inf in it do not propagate).  m or n = 0: nothing is
 * recorded (y is not scaled), as deso_dgemv.  Recorded, not a force point;
 * collective in the sense of every recorded call (every rank records it;
 * it communicates only when it runs).  It runs where A's rows are: y (x
 * for the transpose) by A's row blocks, the other vector by the blocks of
 * x (A's row blocks when A is square, else balanced blocks of n), each
 * rank holding its own range (a layout by partition); the x entries a
 * rank's rows need from other ranks (its halo, planned when A was made)
 * come in one message per pair of ranks that share one, the transpose
 * sends its partial sums back the same way, and both are counted in the
 * statistics as point-to-point messages.  The optimiser decides whether
 * the vectors the product touches live in those layouts or move there
 * for it (and Level 1 calls on them run where they are; their
 * reductions span every rank).  Errors: DESO_ENULL (ctx, A, x or y
 * NULL), DESO_ESTALE (a destroyed handle or context), DESO_ECONTEXT (a
 * handle of another context), DESO_EINVAL (a bad trans; A, x or y of the
 * wrong kind), DESO_ESIZE (x or y of the wrong length), the errors of a
 * lazy scalar argument (a poisoned value), DESO_ENOMEM; when it runs,
 * the force's errors.                                                     */
deso_err deso_dusmv_arg(deso_ctx *ctx, deso_trans trans, deso_sarg alpha,
                        const deso_spmat *a, const deso_vec *x,
                        deso_sarg beta, deso_vec *y);
#define deso_dusmv(ctx, trans, alpha, a, x, beta, y)                         \
    deso_dusmv_arg((ctx), (trans), DESO_SARG(alpha), (a), (x),               \
                   DESO_SARG(beta), (y))

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
