/* Internal: the lazy runtime's data structures (context, handles, values,
 * DAG) and the functions the deso/ files share.
 *
 * Values are SSA versions: an operation producing y makes a new value and
 * moves y's handle to it.  A value is referenced by at most one handle and
 * by every pending node that reads it (refs counts both, plus one for the
 * node that produces it).  A value holds one or more views: its data in a
 * placement (the first is where it was produced; the executor adds views
 * when a consumer needs another placement, so that q transposed once for
 * q.p serves r - alpha q as well).  Nodes are freed once executed.        */
#ifndef DESO_IMPL_H
#define DESO_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "blas/blas.h"
#include "deso/deso.h"
#include "optimizer/opt_cache.h"
#include "optimizer/opt_graph.h"
#include "optimizer/optimizer.h"
#include "optimizer/wisdom.h"
#include "placement/csr.h"
#include "placement/errors.h"
#include "placement/halo.h"
#include "deso/remap/remap.h"
#include "deso/core/mpi.h"
#include "deso/core/stats.h"

#define DESO__MAGIC_CTX 0x4443534fu
/* Longest file name an option takes, with its NUL.                         */
#define DESO__PATH_MAX 4096
#define DESO__MAGIC_LIVE 0x4c495645u
#define DESO__MAGIC_DEAD 0x44454144u

/* Message tags on the context's communicator (remaps use DESO__TAG_REMAP). */
#define DESO__TAG_EXCHANGE 0x5845
#define DESO__TAG_DATA 0x4441

/* An out-of-core matrix's local array file (ooc_file.c).                */
typedef struct deso__ooc deso__ooc;

typedef struct deso__view {
    blas_layout lay;
    pl_placement pl;          /* the same placement, for the optimiser      */
    double *data;             /* local piece (may be NULL when empty)       */
    int64_t rows, cols;       /* local shape                                */
    bool borrowed;            /* data is the user's (DESO_BORROW): no free  */
    deso__ooc *ooc;           /* != NULL: the local piece lives in this    */
                              /*   file (data NULL), streamed in slabs     */
    uint64_t serial;          /* numbered when allocated (0: not): with its
                               * address, names this view and its layout
                               * even after the memory of a freed one was
                               * reused                                    */
    struct deso__view *next;
} deso__view;

typedef struct deso__value {
    blas_kind kind;
    int64_t m, n;
    int refs;
    bool ready;               /* computed: views hold its data              */
    bool ooc;                 /* an out-of-core matrix: its one view is a  */
                              /*   local array file, its layout pinned      */
    deso_err poison;          /* != OK: the flush that owed it failed       */
    deso__view *views;
    deso__view *spare;        /* made by a force's preparation, not filled
                               * yet: the executor fills and attaches them */
    /* force.c's scratch while it builds the optimiser's graph              */
    uint64_t mark;            /* == ctx->stamp: seen in this force         */
    int gid;                  /* its value id in the graph                 */
    int nread;                /* pending nodes reading it                  */
    uint64_t hid;             /* id of the handle it was made for (0: none)*/
    /* period.c: the pending DAG (generation) and node that produced it    */
    uint32_t born_gen;
    int32_t born;
} deso__value;

typedef struct deso__node {
    blas_desc d;
    deso__value *ops[BLAS_MAXOPS];
    deso__value *res;
    struct deso__spmat_data *sp;  /* a sparse product's matrix (referenced), */
                                  /*   else NULL                          */
    int64_t work;             /* elements of its operands and result, for  */
                              /*   deso__time_weight (set when recorded)   */
    struct deso__node *next;
} deso__node;

/* A point-to-point exchange in flight (deso__exchange_start, comm.c).   */
typedef struct deso__xfer {
    MPI_Request *req;
    int nreq, nsend;
    const int64_t *scount;
    double spent;
    bool busy;                /* posted and not finished                   */
} deso__xfer;

/* The halo plan of a sparse matrix's product (spmat_halo.c): x in
 * contiguous blocks (xstart), the entries this rank receives (h's receive
 * lists, global) and sends (h's send lists, as local positions), its rows'
 * local columns into [own entries | halo], and the messages' peers,
 * counts and buffers, so that an exchange allocates nothing.             */
typedef struct deso__halo_plan {
    pl_halo h;
    int64_t *xstart;          /* size + 1                                   */
    int64_t nown, nhalo;
    int32_t *lcol;
    int nsend, nrecv;
    int *speer, *rpeer;
    int64_t *scount, *rcount;
    double **sptr, **rptr;    /* into sbuf, rbuf                            */
    double *sbuf, *rbuf;
    double *ext;              /* nown + nhalo: a product's x with its halo, */
                              /*   or the transpose's partial sums          */
    bool split;               /* the product reads x where it lies and the  */
    int64_t nhrow, *hrow;     /*   halo from rbuf; hrow: the rows that read */
                              /*   the halo, ascending (split only)         */
    MPI_Request *req;         /* nsend + nrecv                              */
} deso__halo_plan;

/* A sparse matrix (spmat.c): this rank's block of rows in CSR, and where
 * every rank's block starts.  Not an SSA value: new values on its pattern
 * are written in place, after a force when a pending product reads it
 * (its halo plan, which depends on the pattern only, stays).  Its handle
 * and each pending product hold a reference.  Once placed (placed set),
 * its rows and halo plan are freed: the placed copy holds the entries,
 * and start and count still describe the blocks.                        */

typedef struct deso__spmat_data {
    int refs;
    int64_t m, n, nnz;        /* global shape and entries                   */
    int64_t *start;           /* size + 1: rank r holds rows                */
                              /*   [start[r], start[r + 1])                 */
    int64_t *count;           /* size: the entries each rank holds          */
    const blas_part *part;    /* square and placed by a renumbered        */
                              /*   partition (the context's): rows and x by */
                              /*   it, rows.grow their indices (borrowed: */
                              /*   the partition's iperm); else NULL        */
    pl_csr rows;              /* columns global, sorted, unique per row;    */
                              /*   col freed once the halo plan holds them  */
                              /*   as local columns (deso__spmat_col)       */
    int64_t *poff;            /* a placed copy's: each row's first entry in */
                              /*   pattern order (rows.nrows), else NULL    */
    deso__halo_plan *halo;    /* made with the matrix (deso__spmat_publish) */
    const blas_sparse *facts; /* its product's, for the optimiser (interned)*/
    uint64_t id;              /* its handle's id (the SPMD hash)            */
    /* Where its products run (spmat_place.c, spmat_ntg.c): decided at the
     * first force with a product of it; a copy of its rows placed by a
     * graph partition (referenced), or NULL: on its own blocks.           */
    bool placement_chosen;
    bool pinned;              /* its ranks gave its rows (_from_rows)       */
    struct deso__spmat_data *placed;
} deso__spmat_data;

/* A handle's kind: a value's (blas_kind), or a sparse matrix's or a user
 * operator's, which are no values the optimiser places.                  */
#define DESO__SPMAT ((blas_kind)(BLAS_SCA + 1))
#define DESO__OP ((blas_kind)(BLAS_SCA + 2))

/* A user operator (user_op.c): its callback and declaration.  It lives in
 * its handle's shell until deso_finalize, so calls recorded before the
 * handle was destroyed still find it.                                    */
typedef struct deso__uop {
    deso_op_fn fn;
    void *user;
    int64_t m, n;             /* y's and x's lengths                        */
    unsigned flags;           /* BLAS_F_XLIKE, BLAS_F_YREP, BLAS_F_YROWS,   */
                              /*   BLAS_F_YPART                             */
    int64_t rows_b;           /* BLAS_F_YROWS: the matrix's row block       */
    const blas_sparse *facts; /* BLAS_F_YPART: the sparse matrix's facts    */
                              /*   (interned: they live with the context)   */
    int64_t num;              /* its number in the context (ctx->uops)      */
} deso__uop;

typedef struct deso__handle {
    uint32_t magic;
    blas_kind kind;
    deso_ctx *ctx;
    deso__value *val;         /* NULL for a sparse matrix                   */
    deso__spmat_data *sp;     /* a sparse matrix's data, else NULL          */
    uint64_t id;              /* creation order: the same on every rank     */
    struct deso__handle *next;
    /* a view (views.c): the handle it views (never a view itself), its
     * first linear index and stride there, and for a block its runs of
     * vrows elements vld apart (0, 0: one run); src: the viewed handle's
     * value that val was read from (referenced), so a newer version is
     * seen                                                                */
    struct deso__handle *parent;
    int64_t voff, vinc;
    int64_t vrows, vld;
    deso__value *src;
    deso__uop *uop;           /* a user operator's, else NULL               */
} deso__handle;

struct deso_vec { deso__handle h; };
struct deso_mat { deso__handle h; };
struct deso_scalar { deso__handle h; };
struct deso_spmat { deso__handle h; };
struct deso_op { deso__handle h; };

/* The force's agreement started and not yet finished (comm.c).          */
typedef struct deso__check {
    uint64_t v[2], hash;
    deso_err local;
    MPI_Request req;
} deso__check;

/* A ddot/dnrm2/dasum whose reduction is deferred to its fused group's one
 * collective (force.c, optimizer's opt_fuse_groups).                     */
typedef struct deso__fz {
    deso__node *nd;
    deso__view *rv;           /* the result's view, attached at finish      */
    blas_layout rl;
    int rd;                   /* grid dimension reduced over                */
    bool part;                /* this rank ran the kernel (takes part)      */
    double red[BLAS_RED_WIDTH_MAX];  /* the local partial result          */
} deso__fz;

/* One step of a force's schedule (schedule.c): run node `node` (its
 * reduction, if any, blocking), run it and post its reduction (or its
 * fused group's collective: node is the group's last member) without
 * waiting, or wait for the oldest posted one (node: its node).         */
typedef enum { DESO__RUN, DESO__POST, DESO__WAIT } deso__step_kind;
typedef struct deso__step {
    int node;
    deso__step_kind kind;
} deso__step;

/* Reductions a force keeps in flight at once; each has its own region of
 * the context's scratch.                                                */
#define DESO__INFLIGHT 4

/* A collective started and not yet waited for (comm.c).                 */
typedef struct deso__coll {
    MPI_Request req;
    int size, rank;           /* its communicator's, this rank's in it      */
    int factor;               /* 2: all-reduce, 1: reduce                   */
    int64_t len;              /* doubles                                    */
    double t;                 /* seconds spent starting it                  */
} deso__coll;

/* A node whose reduction is in flight (exec.c): what its finish needs
 * once the reduction is waited for.                                     */
typedef struct deso__pend {
    int node;                 /* its plan index (a fused group: the last  */
                              /*   member's)                                */
    deso__node *nd;           /* not fused: the node                        */
    deso__view *rv;           /* not fused: its result's view               */
    blas_local L[BLAS_MAXOPS], R;
    double *red;              /* its region of the context's scratch        */
    int weight;               /* ctx->weight when it ran                    */
    bool finish;              /* this rank runs its finish                  */
    deso__coll coll;
} deso__pend;

/* Per-node arrays of a force (run.c), kept by the context.              */
typedef struct deso__run_arrays {
    struct deso__view **rv;
    deso__fz *fz;
    deso__fz **grp;
    int *glast;
    struct deso__value **early;   /* results made before the agreement   */
    struct deso__node **nodes;    /* by plan index                        */
    int *prev;                    /* 2 per node: the list's links (run.c) */
    deso__step *order;            /* the schedule (2 per node)            */
    int cap;
} deso__run_arrays;

/* The executor's state during one force (run.c): the plan, its schedule
 * and the prepared views, the agreement in flight under the first steps,
 * and the reductions in flight (a ring, oldest first).                  */
typedef struct deso__run {
    const opt_plan *plan;
    const deso__step *order;
    int norder;
    struct deso__node **nodes;
    int *prev, *next;
    struct deso__view **rv;   /* per planned node: its prepared result view */
    deso__fz *fz;             /* fused reductions' members, by node (NULL:  */
    deso__fz **grp;           /*   no fused group)                          */
    int *glast;               /* per group: its last member                 */
    int quiet;                /* steps that may run before the agreement    */
    bool checking;            /* it is in flight                            */
    deso__check check;
    struct deso__value **early;   /* results of the steps run meanwhile     */
    int nearly;
    deso_err verdict;         /* its outcome                                */
    deso__pend pend[DESO__INFLIGHT];
    int pfirst, npend;
} deso__run;

/* A cached vector exchange plan (exchange.c), a cached matrix remap
 * (remap_matrix.c).                                                        */
typedef struct deso__exchange_plan deso__exchange_plan;
typedef struct deso__matrix_remap deso__matrix_remap;

/* One allocation of a force's preparation (prepare.c): node `node`'s
 * operand `op` gets a view in the plan's layout, filled from a view in
 * layout `src`; op < 0: the node's result view.                         */
typedef struct deso__prep_step {
    int node, op;
    blas_layout src;
} deso__prep_step;

/* A compiled force (compiled.c): a graph and the settled plan it runs,
 * and, once a force has run it, its preparation as a script: what the
 * preparation allocated, valid for a DAG that matches the graph with the
 * same reference counts (they decide which results take their operand's
 * buffer over).                                                         */
typedef struct deso__compiled {
    opt_graph g;
    opt_plan plan;            /* with its fused groups                      */
    uint64_t key, check;      /* its plan cache entry                       */
    uint64_t used;            /* the table's clock at its last use          */
    bool scripted;            /* steps, refs and scratch are set            */
    deso__prep_step *steps;
    int nsteps;
    int *refs;                /* per value id: its references at the force */
    int64_t scratch;          /* the scratch doubles the force needs        */
    deso__step *order;        /* its schedule (schedule.c)                  */
    int norder;
    int quiet;                /* its steps that run before the agreement    */
    signed char replayable;   /* replay*.c: every node may be replayed (1),  */
                              /*   some may not (-1), not looked at yet (0)  */
    uint32_t runs;            /* forces run with it (and its predecessors
                               * for the same graph, see replan_runs)      */
    bool replicable;          /* its plan leaves a matrix folded that the
                               * optimiser could make whole on every rank */
} deso__compiled;

#define DESO__COMPILED 4      /* compiled forces kept per context           */
#define DESO__CONSTS 8        /* constant scalars kept per context (dag.c)  */

/* period.c: the pending DAG's calls as signatures, to find a loop in it.
 * Fixed arrays in the context, so that finding one never allocates (a
 * failure on one rank would make it force alone).                       */
#define DESO__PERIOD_WINDOW 1024  /* nodes looked at, from the DAG's start */
#define DESO__PERIOD_SLOTS 2048   /* the last-seen table (a power of 2)   */
#define DESO__PERIOD_LAZY 32      /* calls kept unsigned before a search  */
typedef struct deso__period {
    uint32_t gen;             /* the pending DAG's generation (from 1)      */
    int32_t n;                /* its nodes signed so far                    */
    int32_t p, rep;           /* the period found, and how many nodes in a
                               * row equal the node p before them           */
    uint64_t first_id;        /* the first handle id made during the DAG    */
    uint64_t anchor;          /* the signature of the call that ended the   */
    bool anchored;            /*   last force made for a loop               */
    uint64_t sig[DESO__PERIOD_WINDOW];
    /* the first calls' handle tags (operands, then the result), kept
     * until the DAG is long enough to be worth searching                  */
    uint64_t tags[DESO__PERIOD_LAZY][BLAS_MAXOPS + 1];
    struct { uint64_t sig; uint32_t gen; int32_t at; }
        last[DESO__PERIOD_SLOTS];
} deso__period;

/* replay.h: a recorded call as a replay compares it (operation, shape, the
 * handles' ids, the constants' values, the result's handle; an alias is
 * deso_sset, which records no node), and the calls since the last force.
 * Fixed in the context, so that logging never allocates.  Fewer calls
 * than DESO__PERIOD_LAZY, so that no loop is looked for in them.        */
#define DESO__REPLAY_CALLS 31
typedef struct deso__rcall {
    blas_desc d;
    int64_t shape[2];
    bool alias;
    int nops;
    uint64_t ids[BLAS_MAXOPS];      /* 0: a constant, cv[k]                  */
    struct deso__value *cv[BLAS_MAXOPS];
    uint64_t out;
    deso__spmat_data *sp;           /* a sparse product's matrix, else NULL  */
} deso__rcall;
typedef struct deso__rlog {
    int n;
    bool over;                /* more calls than DESO__REPLAY_CALLS          */
    /* != NULL: the calls are that replay's first n (a replayed force's
     * log, copied into c only when the replay goes: a copy per force
     * cost as much as a kernel call)                                     */
    const struct deso__replay *from;
    deso__rcall c[DESO__REPLAY_CALLS];
} deso__rlog;

struct deso_ctx {
    uint32_t magic;
    MPI_Comm comm;            /* dup of the user's                          */
    MPI_Comm dimcomm[2];      /* [0]: my grid column (varying row),         */
                              /* [1]: my grid row (varying column)          */
    MPI_Op maxloc;            /* on pairtype: (abs value, index) pairs      */
    MPI_Datatype pairtype;    /* two contiguous doubles                     */
    int rank, size, coord[2];
    opt_defaults df;
    deso_mode mode;
    int64_t nb_opt;           /* as given: DESO_NB_BLOCK or > 0             */
    const char *wisdom, *trace, *log;   /* NULL or into names            */
    char names[3 * DESO__PATH_MAX];     /* rank 0's file names (agreed)   */
    int64_t max_nodes;
    deso_partition partition; /* sparse matrices' rows: auto, block, ntg    */
    bool spmat_choose;        /* a product of a matrix whose placement is   */
                              /*   still to be chosen was recorded          */
    double l_scaling;         /* the trace graph's L_SCALING                */
    deso__period period;      /* period.c                                   */
    deso__node *head, *tail;
    int64_t nnodes;
    uint64_t hash;            /* running hash of recorded calls             */
    uint64_t recorded;        /* deso__sample's state for recording times   */
    uint64_t sampled;         /* ... and for small nodes' (exec.c)          */
    int weight;               /* the running node's timings count this many
                               * times (0: not timed; deso__time_weight)    */
    uint64_t next_id;
    deso__handle *handles;    /* every shell, live or destroyed             */
    deso__uop **uops;         /* the user operators by number (user_op.c)  */
    int64_t nuops, uops_cap;
    deso__exchange_plan *exchange_plans;
    uint64_t exchange_clock;  /* forces ended (deso__exchange_plans_trim)   */
    bool exchange_listed;     /* new exchange plans list every element      */
                              /*   (never run-coded): for tests comparing   */
                              /*   the two forms; false otherwise           */
    deso__matrix_remap *matrix_remaps;
    struct deso__pair_rings *rings;   /* the matrix remaps' shared-memory */
                              /* rings, or NULL (MPI messages)            */
    bool rings_wanted;        /* options: rings at the second matrix remap  */
    bool rings_tried;         /* ... which has come (remap_matrix.c)        */
    int64_t matrix_remaps_run;  /* executed, until then                     */
    struct deso__part *parts; /* part.c: partitions layouts may name        */
    struct deso__sparse *sparse;  /* part.c: sparse products' facts         */
    int64_t flushes;
    bool forcing;
    /* the optimiser (force.c), plan cache and wisdom (wisdom_io.c)         */
    uint64_t stamp;
    opt_params params;        /* alpha, beta: probe.c or the wisdom file    */
    bool calibrated;          /* params were measured (here or in a file)  */
    double time_calibrate;    /* seconds the probe took (0: not run)       */
    opt_cache *cache;
    opt_wisdom wis;           /* plans imported from a wisdom file          */
    opt_graph build;          /* the force's graph, rebuilt in place        */
    deso__compiled compiled[DESO__COMPILED];
    int ncompiled;
    uint64_t compile_clock;
    /* > 0 while a compiled force that ran this many times is planned
     * again, its matrices' one-time moves spread over the runs (compiled.c,
     * deso__compiled_due)                                                 */
    uint32_t replan_runs;
    /* replay.h: the calls of this force and of the last one, the compiled
     * force the last one ran, whether a force was made by a recorded call
     * (the size bound, a loop), the armed replay (NULL: none) and the
     * parked one                                                          */
    deso__rlog rlog[2];
    int rlog_cur;
    deso__compiled *replay_prev;
    bool record_force;
    bool replay;              /* options: replays may be armed               */
    struct deso__replay *rp;
    struct deso__replay *parked;  /* one set aside by a different force    */
    opt_graph last_g;         /* the last optimised flush, for explain and  */
    opt_plan last_p;          /*   DESO_TRACE (last_g.nodes NULL: none)     */
    bool verbose;             /* DESO_VERBOSE: explain every new plan       */
    bool measure_collectives; /* the probe times collectives (options)    */
    opt_counts ran_model;     /* the model of the plan the last flush ran   */
    deso__run_arrays run;     /* force.c's per-node arrays                  */
    struct deso__sim_value *sim;  /* deso__force_prepare's values, kept    */
    int sim_cap;
    double *scratch;          /* reductions' and trsv's workspace, sized by */
    int64_t scratch_len;      /*   deso__force_prepare; DESO__INFLIGHT more */
                              /*   regions of scratch_len follow, one per   */
                              /*   reduction in flight                      */
    /* dag.c: the constant scalars calls were given, kept (referenced) so
     * that a loop's "1.0" is one value, not a new one per call            */
    struct { uint64_t bits; deso__value *v; } consts[DESO__CONSTS];
    int nconsts, next_const;
    deso__fz *defer;          /* != NULL: exec_node defers the node's       */
                              /*   reduction and finish into it (run.c)     */
    deso__pend *post;         /* != NULL: exec_node posts the node's        */
                              /*   reduction into it and returns (run.c)    */
    deso_error_handler errh;  /* errh.c: invoked at the public boundary    */
    void *errh_arg;
    /* out-of-core matrices (ooc_*.c); per rank, never agreed               */
    int64_t mem_limit;        /* bytes; <= 0: no limit                      */
    bool ooc_any;             /* some rank has a limit (agreed at init)     */
    bool ooc_warned;          /* the RAM file system warning was printed   */
    char ooc_dir[DESO__PATH_MAX];
    double *ooc_buf[2];       /* the two slab buffers (one allocation,     */
    void *ooc_raw;            /*   this one, aligned for direct reads)     */
    struct deso__ooc_ahead *ooc_ahead; /* what the reader thread reads     */
                              /*   ahead (ooc_exec.c)                       */
    int64_t ooc_buf_len;      /* doubles in each                            */
};

#define DESO__VERSION "0.1.0"
#define DESO__CACHE_PLANS 256
#define DESO__IMPROVE_ITERS 8

/* ---- the context (ctx.c) ------------------------------------------------ */
/* deso_init's runtime part: the duplicate communicator, the options agreed
 * across the ranks, the grid's communicators, the plan cache.  Collective;
 * on error every rank fails and *ctx is NULL.                             */
deso_err deso__ctx_create(MPI_Comm comm, const deso_options *opt,
                          deso_ctx **ctx);
/* Measures alpha and beta (probe.c) unless a wisdom file gave them.
 * Collective.                                                              */
deso_err deso__ctx_calibrate(deso_ctx *ctx);
/* Frees the context, its handles and its communicators (no force).       */
void deso__ctx_destroy(deso_ctx *ctx);

/* ---- options (options.c, options_agree.c) ------------------------------ */
/* This rank's options: the caller's, its environment's, the defaults.     */
deso_err deso__options_resolve(const deso_options *in, int P,
                               deso_options *out, pl_grid *grid);
/* Makes the options the same on every rank: local is this rank's outcome
 * so far (*o its resolved options when DESO_OK).  On DESO_OK *o holds rank
 * 0's options on every rank, its file names copied into names (3 x
 * DESO__PATH_MAX chars).  An error on any rank is every rank's, naming
 * the rank.  Collective; not counted in the statistics.                   */
deso_err deso__options_agree(MPI_Comm comm, deso_err local, deso_options *o,
                             char *names);

/* ---- handles and values (handles.c) ------------------------------------ */
/* Inline: a recorded call takes and drops several references.  The last
 * reference frees the value with its views (deso__value_release).       */
void deso__value_release(deso__value *v);
static inline void deso__value_ref(deso__value *v) { v->refs++; }
static inline void deso__value_unref(deso__value *v)
{
    if (v != NULL && --v->refs <= 0) deso__value_release(v);
}
/* A ready view of layout `lay` (data allocated zeroed), appended to v.    */
deso_err deso__view_alloc(deso_ctx *ctx, const blas_layout *lay,
                          deso__view **out);
/* The same with its data left as the allocator gives it, for a result
 * its node writes whole before anything reads it: zeroing a vector that
 * is overwritten at once would cost a pass over memory per iteration.   */
deso_err deso__view_alloc_unzeroed(deso_ctx *ctx, const blas_layout *lay,
                                   deso__view **out);
/* Zeroed, for a new value that may stay untouched (deso_vec_create's):
 * a large view's pages take memory only once written
 * (deso__calloc_untouched), so a vector that a solver overwrites, or
 * reads only to move it elsewhere, never holds its zeros resident.      */
deso_err deso__view_alloc_untouched(deso_ctx *ctx, const blas_layout *lay,
                                    deso__view **out);
/* Whether a node of op writes every local entry of its result even when
 * no operand's data is copied in first: a sparse product, and a dgemv
 * (its direct kernel, or its finish, sets all of y; a beta makes y the
 * updated operand, copied in).                                          */
static inline bool deso__op_sets_result(blas_op op)
{
    return op == BLAS_OP_USMV || op == BLAS_OP_GEMV;
}
void deso__view_free(deso__view *w);
/* Recycling (recycle.c): a recycled view of layout lay and local shape
 * rows x cols, zeroed when zero is set, or NULL; keeping a freed view (false: not kept,
 * the caller frees it); a zeroed value or node (recycled or allocated;
 * NULL when out of memory) and their release; freeing everything kept.  */
deso__view *deso__view_take(const blas_layout *lay, int64_t rows,
                            int64_t cols, bool zero);
bool deso__view_put(deso__view *w);
struct deso__value *deso__value_take(void);
void deso__value_put(struct deso__value *v);
struct deso__node *deso__node_take(void);
void deso__node_put(struct deso__node *nd);
void deso__recycle_drain(void);
/* A new value with no views: nothing computed yet (NULL when out of
 * memory).  Inline: a replayed call makes one and little else.          */
static inline deso__value *deso__value_new(blas_kind kind, int64_t m,
                                           int64_t n)
{
    deso__value *v = deso__value_take();
    if (v == NULL) return NULL;
    v->kind = kind;
    v->m = m;
    v->n = n;
    return v;
}
/* w, filled by the node that produces v, becomes v's first view: where it
 * was produced; v is ready.                                               */
void deso__value_computed(deso__value *v, deso__view *w);
/* w, a copy of computed v's data in another layout, is kept for later
 * readers, after the first view (which stays where v was produced).      */
void deso__value_keep(deso__value *v, deso__view *w);
deso__view *deso__value_find(deso__value *v, const blas_layout *lay);
/* A ready constant scalar, replicated everywhere.                          */
deso_err deso__value_const(deso_ctx *ctx, double v, deso__value **out);
deso_err deso__handle_new(deso_ctx *ctx, blas_kind kind, deso__value *v,
                          deso__handle **out);
/* A sparse matrix's handle on sp (which it owns from then on).           */
deso_err deso__handle_new_spmat(deso_ctx *ctx, deso__spmat_data *sp,
                                deso__handle **out);
/* Room for a handle (calloc'd, not yet live: free() it if unused), so
 * that a creation agreed across ranks allocates before its agreement.
 * NULL when out of memory.                                               */
deso__handle *deso__handle_shell(void);
/* Makes shell (from deso__handle_shell) a user operator's handle on u,
 * which the shell owns from then on.  Cannot fail.                       */
void deso__handle_attach_op(deso_ctx *ctx, deso__uop *u,
                            deso__handle *shell);
/* Drops a reference to sp (its handle's or a pending product's); the
 * last frees it.  NULL-safe.                                             */
void deso__spmat_data_free(deso__spmat_data *sp);

/* ---- sparse matrices (spmat.c) ------------------------------------------- */
/* Indices travel as doubles: a sparse matrix's extents are at most 2^53.  */
#define DESO__SPMAT_MAX_DIM ((int64_t)1 << 53)
/* The checks every constructor makes first: out, and the shape.          */
deso_err deso__spmat_begin(int64_t m, int64_t n, const void *out,
                           const char *fn);
/* An empty m x n matrix's data, with room for every rank's start.       */
deso_err deso__spmat_alloc(const deso_ctx *ctx, int64_t m, int64_t n,
                           deso__spmat_data **out);
/* sp's starts: contiguous row blocks, the first m % P one row longer.   */
void deso__spmat_blocks(const deso_ctx *ctx, deso__spmat_data *sp);
/* Every constructor's agreed ending: local is this rank's outcome, sp
 * (NULL when local failed) its rows.  The ranks agree on the outcome, the
 * shape and tag (what else must match: the generator), and learn each
 * other's entry counts; on success *out is the new handle, which owns sp;
 * else sp is freed.  Collective.                                          */
deso_err deso__spmat_publish(deso_ctx *ctx, const char *fn, deso_err local,
                             int64_t tag, deso__spmat_data *sp,
                             deso_spmat **out);

/* ---- sparse matrices placed by a partition (spmat_place.c, spmat_ntg.c) --- */
/* Places a copy of square sp's rows by the renumbered partition part
 * (sp->placed, with its halo plan and facts) along a route made from the
 * blocks and the partition (and freed after): three counted moves (row lengths, columns, values), each
 * after an agreement, then the halo plan and one all-reduce of the
 * copy's entry counts; on success sp's rows and halo plan are freed (on
 * failure the copy is).  Collective; errors agreed.                     */
deso_err deso__spmat_place(deso_ctx *ctx, deso__spmat_data *sp,
                           const blas_part *part);
/* Placed sp's block rows on this rank (deso_spmat_local_rows), brought
 * back from the placed copy along the route (made again) reversed into
 * the caller's arrays (rowptr: the block's rows + 1; col, val: its
 * count).  local is this rank's argument check, agreed first; three
 * counted moves, each agreed.  Collective.                               */
deso_err deso__spmat_rows_back(deso_ctx *ctx, const deso__spmat_data *sp,
                               int64_t *rowptr, int64_t *col, double *val,
                               deso_err local);
/* Test hook: the items a round of the placement's moves carries over all
 * of a rank's peers (n <= 0: the default, 2^17); returns the rounds this
 * rank has run since the previous call.  Must be the same on every rank. */
int64_t deso__spmat_move_rounds(int64_t n);
/* The packed length of rank q's placed rows in a gather (each row's first
 * entry in pattern order and length, its columns and values).  Local.   */
int64_t deso__spmat_placed_len(const deso__spmat_data *pd, int q);
/* Placed copy pd's rows to rank r0, which writes them into the global
 * arrays in pattern order; buf holds deso__spmat_placed_len of this
 * rank's rows, on r0 of any rank's.  One message per rank.  Collective,
 * after the caller's agreement.                                          */
deso_err deso__spmat_placed_gather(deso_ctx *ctx, const deso__spmat_data *pd,
                                   int64_t *rowptr, int64_t *col, double *val,
                                   int r0, double *buf);
/* New values in pattern order into placed copy pd: val on every rank
 * (DESO_ALL_RANKS: each takes its rows' entries, nothing sent), or on
 * root, which learns every rank's rows (first entries and lengths) and
 * sends each its entries; buf holds, on root, deso__spmat_placed_len of
 * any rank.  Collective, after the caller's agreement.                   */
deso_err deso__spmat_placed_values(deso_ctx *ctx, deso__spmat_data *pd,
                                   const double *val, int root, double *buf);
/* Chooses, for every matrix of the pending DAG's products not chosen yet,
 * where its products run (ctx->partition: row blocks, the trace-graph
 * partition, or the cheaper of the two), and points the pending products
 * at the choice.  Called by the force before it plans.  Collective (every
 * rank has the same pending products; one counted agreement first checks
 * it); nothing to choose is local and free.                              */
deso_err deso__spmat_choose(deso_ctx *ctx);
/* Whether the pending DAG has a product whose matrix's placement is still
 * to be chosen (then the force agrees before it chooses); the matrices
 * that keep their blocks whatever happens are marked chosen.  Local.    */
bool deso__spmat_choice_pending(deso_ctx *ctx);

/* ---- the sparse product's halo (spmat_halo.c) ----------------------------- */
/* sp's halo plan, made on the first call (collective then, with two
 * counted agreements, one all-reduce of P x P counts and the lists'
 * exchange) and kept with sp, with sp->facts.  Errors agreed.  Every
 * constructor makes it (deso__spmat_publish).  Once made, the plan's
 * 32-bit local columns are the only ones sp keeps: sp->rows.col (64-bit,
 * global) is freed, and deso__spmat_col gives a global column back.     */
deso_err deso__spmat_halo(deso_ctx *ctx, deso__spmat_data *sp,
                          deso__halo_plan **out);
void deso__halo_plan_free(deso__halo_plan *hp);      /* NULL-safe       */
/* The global column of entry e of sp's rows on rank me (sp->rows.col's
 * while it is kept, else from the halo plan's local column).  Local.   */
int64_t deso__spmat_col(const deso__spmat_data *sp, int me, int64_t e);
/* Where x's entries live in sp's product: the row blocks of a square
 * matrix, else balanced blocks of n (xstart: size + 1).  Local.          */
void deso__spmat_xstart(const deso_ctx *ctx, const deso__spmat_data *sp,
                        int64_t *xstart);

/* ---- partitions (part.c) ------------------------------------------------- */
/* The context's partition of n indices with ranges start[0 .. size]
 * (copied), interned: equal ranges give the same partition, valid until
 * the context is freed.  DESO_EINTERNAL when the ranges do not tile
 * [0, n) in rank order.  Local (every rank gets an equal partition from
 * equal ranges).                                                         */
deso_err deso__part_intern(deso_ctx *ctx, int64_t n, const int64_t *start,
                           const blas_part **out);
/* The context's partition in which index i (of n) is owner[i]'s (in
 * [0, size)): each rank's indices in increasing order, a renumbering
 * (permutation and inverse, n words each) kept once, interned like the
 * ranges; an ownership by contiguous blocks in rank order gives the
 * partition of those ranges, with no renumbering.  DESO_EINTERNAL for an
 * owner out of range, DESO_ENOMEM.  Local.                                */
deso_err deso__part_intern_owners(deso_ctx *ctx, int64_t n,
                                  const int32_t *owner, const blas_part **out);
/* sp's row blocks (a product's y for no transpose) and the blocks of its
 * x (deso__spmat_xstart), as partitions.  Local.                         */
deso_err deso__spmat_parts(deso_ctx *ctx, const deso__spmat_data *sp,
                           const blas_part **rows, const blas_part **cols);
/* sp's product's facts for the optimiser (blas_sparse), from its halo's
 * table of list lengths (recv[r P + s]: what rank r receives from rank
 * s), interned: equal facts are one object, valid until the context is
 * freed.  Local.                                                         */
deso_err deso__sparse_intern(deso_ctx *ctx, const deso__spmat_data *sp,
                             const double *recv, const blas_sparse **out);
/* Frees the partitions and the sparse products' facts.                  */
void deso__parts_free(deso_ctx *ctx);
/* Sends the entries of x's own part (nown of them) that other ranks
 * need, and fills halo[0 .. nhalo) with this rank's halo (halo may be
 * NULL when nhalo is 0).  Collective; allocates nothing.                */
deso_err deso__halo_exchange(deso_ctx *ctx, deso__halo_plan *hp,
                             const double *own, double *halo);
/* y = alpha A x + beta y on A's local rows (hp's matrix's), x this
 * rank's own entries: the halo exchanged through hp, the rows that need
 * none computed while it is in flight when hp->split, else every row on
 * x's copy in hp->ext.  Each row bitwise blas_csr_mv's on [own | halo].
 * Collective; allocates nothing.                                       */
deso_err deso__usmv_rows(deso_ctx *ctx, deso__halo_plan *hp, const pl_csr *A,
                         double alpha, const double *x, double beta,
                         double *y);
/* The exchange's first half: x's entries packed and the messages posted;
 * deso__exchange_finish(x) waits, and hp->rbuf then holds the halo in
 * receive order (the local columns past nown).  Allocates nothing.     */
deso_err deso__halo_start(deso_ctx *ctx, deso__halo_plan *hp,
                          const double *own, deso__xfer *x);
/* The reverse: zext[nown ..) (this rank's contributions to other ranks'
 * entries) is sent back to the owners, which add it into their own
 * zext[0 .. nown).  Collective; allocates nothing.                      */
deso_err deso__halo_reverse(deso_ctx *ctx, deso__halo_plan *hp,
                            double *zext);
/* Validates a context argument of public function fn: DESO_ENULL (NULL),
 * DESO_ESTALE (not a live context).                                       */
deso_err deso__ctx_check(const deso_ctx *ctx, const char *fn);
/* Validates a handle: DESO_ENULL, DESO_ESTALE, DESO_ECONTEXT (when *ctx is
 * already set and differs), DESO_EINVAL (wrong kind).  Sets *ctx.         */
deso_err deso__handle_check_full(const deso__handle *h, blas_kind kind,
                                 deso_ctx **ctx, const char *fn,
                                 const char *arg);
/* Inline, the common case first (a live handle of the right kind, not a
 * view, of a live context), the full check otherwise: every argument of
 * every recorded call passes here.                                       */
static inline deso_err deso__handle_check(const deso__handle *h,
                                          blas_kind kind, deso_ctx **ctx,
                                          const char *fn, const char *arg)
{
    if (h != NULL && h->magic == DESO__MAGIC_LIVE && h->kind == kind &&
        h->parent == NULL && h->ctx != NULL &&
        (*ctx == NULL ? h->ctx->magic == DESO__MAGIC_CTX : h->ctx == *ctx)) {
        *ctx = h->ctx;
        return DESO_OK;
    }
    return deso__handle_check_full(h, kind, ctx, fn, arg);
}
deso_err deso__handle_destroy(deso__handle *h, const char *fn);
/* A readable value: DESO_EMISMATCH etc. when poisoned.  Inline: every
 * operand of every recorded call passes here, and it is almost never lost. */
deso_err deso__value_lost(const deso__value *v, const char *fn);
static inline deso_err deso__value_usable(const deso__value *v,
                                          const char *fn)
{
    return v->poison == DESO_OK ? DESO_OK : deso__value_lost(v, fn);
}

/* ---- views and strided arguments (views.c) ------------------------------- */
/* A view's value brought up to its parent's current version: a vget is
 * recorded when the parent changed since (nothing for other handles).   */
deso_err deso__view_sync(deso_ctx *ctx, deso__handle *h);

/* One vector or matrix argument of a recorded call, as the call uses it:
 * h is the argument's own handle, or `tmp`, a transient view for a
 * strided or partial access (n elements at stride inc).  Opened before
 * the call's nodes are recorded (reading through a view records a vget),
 * finished after them (writing through one records a vput into the
 * viewed handle), and closed either way.                                 */
typedef enum { DESO__IN = 1, DESO__OUT = 2, DESO__INOUT = 3 } deso__use;
typedef struct deso__arg {
    deso__handle *h;
    deso__handle tmp;
    deso__use use;
} deso__arg;
deso_err deso__arg_open(deso_ctx *ctx, const deso__handle *x, int64_t n,
                        int64_t inc, deso__use use, deso__arg *a);
/* Opens x (n at incx, use ux) into a[0] and y (n at incy, use uy) into
 * a[1]; on failure nothing stays open.                                   */
deso_err deso__args_open2(deso_ctx *ctx, int64_t n, const deso__handle *x,
                          int64_t incx, deso__use ux, const deso__handle *y,
                          int64_t incy, deso__use uy, deso__arg *a);
/* The writes through a view of the arguments a[0..k) that were written,
 * in order; then every argument closed.  err: the call's outcome so far
 * (nothing is written after a failure).                                  */
deso_err deso__args_finish(deso_ctx *ctx, deso__arg *a, int k,
                           deso_err err);
void deso__arg_close(deso__arg *a);

/* ---- recording (dag.c) -------------------------------------------------- */
/* Records node op(ops) whose result becomes out's new value.  ids[k] is the
 * handle id operand k came from (0 for a constant), for the SPMD hash.    */
deso_err deso__record(deso_ctx *ctx, blas_op op, unsigned flags,
                      deso__value **ops, const uint64_t *ids,
                      deso__handle *out, const int64_t *shape);
/* The same for a node described by d (vget and vput: with their view's
 * offset and stride).                                                    */
deso_err deso__record_desc(deso_ctx *ctx, const blas_desc *d,
                           deso__value **ops, const uint64_t *ids,
                           deso__handle *out, const int64_t *shape);
/* The same for a sparse product (d->sp set): the node also references
 * the matrix's data sp, which its run reads.                             */
deso_err deso__record_sparse(deso_ctx *ctx, const blas_desc *d,
                             deso__value **ops, const uint64_t *ids,
                             deso__handle *out, const int64_t *shape,
                             deso__spmat_data *sp);
/* What deso__record_sparse does when no replay takes the call (replay.h);
 * given != NULL: the calls a broken replay took, made into nodes with
 * the results their callers already hold (not hashed or logged again).  */
deso_err deso__record_node(deso_ctx *ctx, const blas_desc *d,
                           deso__value **ops, const uint64_t *ids,
                           deso__handle *out, const int64_t *shape,
                           deso__spmat_data *sp, deso__value *given);
/* A recorded call's words (operation, shape, handle ids, the sparse
 * matrix's id or 0, the result's handle id) hashed into one, which the
 * call mixes into the running hash (the SPMD check); deso_sset's.       */
uint64_t deso__call_hash(const blas_desc *d, const int64_t *shape,
                         const uint64_t *ids, int nops, uint64_t sp,
                         uint64_t out);
void deso__hash_call(deso_ctx *ctx, const blas_desc *d, const int64_t *shape,
                     const uint64_t *ids, int nops, const deso__spmat_data *sp,
                     uint64_t out);
void deso__hash_alias(deso_ctx *ctx, uint64_t id, uint64_t out);
/* Resolves a deso_sarg into a value (a constant, or the scalar's value).
 * A constant is one of the context's kept constants (never written: no
 * handle holds it, and a result never takes over a buffer that more than
 * its last reader references).                                           */
deso_err deso__sarg_value(deso_ctx **ctx, deso_sarg a, deso__value **out,
                          uint64_t *id, const char *fn, const char *arg);
/* One word into the running hash: a multiply and a shift per word (a
 * byte-wise hash cost more than the rest of recording a call).  The hash
 * only has to differ when the calls differ, on ranks of one run.  Inline:
 * a replayed call is little more than this.                              */
static inline void deso__hash_mix(deso_ctx *ctx, uint64_t v)
{
    uint64_t h = ctx->hash ? ctx->hash : 0xcbf29ce484222325ull;
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    ctx->hash = h ^ (h >> 29);
}
/* Drops the context's kept constants (deso_finalize).                    */
void deso__consts_clear(deso_ctx *ctx);
/* Drops a node's references on its operands and its result, and frees
 * it; the node is no longer in the DAG.                                   */
void deso__node_free(deso__node *nd);
/* Frees every pending node, marking their results poisoned with `why`.   */
void deso__dag_drop(deso_ctx *ctx, deso_err why);

/* ---- loops in the pending DAG (period.c) -------------------------------- */
/* Signs node nd, just appended to the DAG (ids as for deso__record); true
 * when the DAG should be forced now: it ends in whole repetitions of a
 * period of calls, enough of them to be worth a force of their own.      */
bool deso__period_step(deso_ctx *ctx, deso__node *nd, const uint64_t *ids,
                       uint64_t out_id);
/* The last node was undone (deso__record_undo).                          */
void deso__period_undo(deso_ctx *ctx);

/* ---- the alpha-beta probe (probe.c) ------------------------------------ */
/* Measures alpha and beta (ping-pongs between ranks 0 and 1 and small
 * broadcasts, rounds a descheduling inflated thrown away, each figure's
 * rounds within an 8 ms budget: probe_rounds.h) and, when some rank has
 * a memory budget,
 * io_beta (a read of a 1 MiB file in each rank's out-of-core directory),
 * MAX-allreduced so every rank has the same numbers.  Collective.         */
deso_err deso__probe(deso_ctx *ctx, opt_params *out);

/* ---- compiled forces (compiled.c) -------------------------------------- */
/* The compiled force whose graph the pending DAG is, found without building
 * the graph, or NULL; on success the DAG's values carry the value ids and
 * reader counts build_graph would have given them.  Local.               */
deso__compiled *deso__compiled_match(deso_ctx *ctx);
/* Compiles g with its settled plan (copies both; replaces the least
 * recently used entry when the table is full).  Local.                    */
deso_err deso__compiled_add(deso_ctx *ctx, const opt_graph *g,
                            const opt_plan *plan, uint64_t key,
                            uint64_t check);
void deso__compiled_clear(deso_ctx *ctx);
/* Whether compiled force c is due to be planned again before it runs
 * once more: its plan leaves a replicable matrix folded and it has run
 * 16, 32, 64, .., 1024 times (a replicated matrix's move, paid once, is
 * then priced at its cost over those runs).                              */
bool deso__compiled_due(const deso__compiled *c);

/* ---- force and execution (force.c, exec.c, exec_trsv.c) ----------------- */
deso_err deso__force(deso_ctx *ctx);
/* The same, with the caller's local outcome so far (`before`: what it
 * allocated for reading the result) folded into the force's agreement.   */
deso_err deso__force_with(deso_ctx *ctx, deso_err before);
/* Makes a spare view of v in layout lay unless v has (or will have, from
 * an earlier call) one, and, when v is computed, the plan that will fill
 * it, so that reading v afterwards allocates nothing.  Local.                                                                  */
deso_err deso__value_reserve(deso_ctx *ctx, deso__value *v,
                             const blas_layout *lay);
/* Allocates, before any communication, what running the pending nodes
 * needs, and their schedule: run->nodes and the list links are set from
 * the DAG, run->order from deso__schedule (or c's), run->rv[i] receives
 * node i's result view (NULL when the node takes over its operand's
 * buffer), operands' missing views go on their values' spare lists,
 * exchange and remap plans are made, the scratch is sized.  c: the
 * compiled force the DAG matched (deso__compiled_match), or NULL; its
 * first preparation is written down as its script, and later ones run
 * the script.  run->quiet: how many steps, from the first, communicate
 * with no other rank (no exchange, remap, reduction across ranks,
 * triangular solve or streamed matrix), so that they may run while the
 * force's agreement is in flight.  run: set up by deso__run_begin.
 * Local.                                                               */
deso_err deso__force_prepare(deso_ctx *ctx, deso__compiled *c, int nvals,
                             const opt_plan *plan, deso__run *run);
/* The order a force's n nodes run in (schedule.c): a topological order
 * of the DAG in which each reduction is posted as soon as its inputs are
 * ready, nodes that do not need a reduction in flight run while it is,
 * and each posted reduction is waited for (oldest first) only when no
 * node can run without it, when DESO__INFLIGHT are in flight, or at the
 * end.  Depends only on the DAG and the plan, so every rank posts its
 * collectives in the same order.  order has room for 2 n steps.  Local. */
deso_err deso__schedule(const opt_plan *plan, deso__node *const *nodes,
                        int n, deso__step *order, int *norder);
/* Whether node nd, placed by pl and not fused, can post its reduction
 * without waiting (exec.c): a local kernel reducing across ranks, on no
 * streamed matrix.                                                      */
bool deso__exec_posts(const deso__node *nd, const opt_place *pl);
/* A force's run set up for plan (run.c): the context's run arrays grown
 * to its nodes, run's pointers into them.  Local.                       */
deso_err deso__run_begin(deso_ctx *ctx, const opt_plan *plan, deso__run *run);
/* Runs a prepared force's schedule (run.c); the agreement, when
 * run->checking, ends before step run->quiet.  On return nothing is in
 * flight; the nodes not run are left in the DAG's list.  Collective.   */
deso_err deso__run_schedule(deso_ctx *ctx, deso__run *run);
/* Frees what a run holds after its schedule (prepared views, fused
 * members waiting, whose results are poisoned with err when they did
 * not complete); the possibly changed error.                           */
deso_err deso__run_end(deso__run *run, deso_err err);
/* The force's one agreement: every rank passes the hash of its recorded
 * calls and its outcome so far.  DESO_OK when all succeeded with the same
 * hash; else the failing rank's error, or DESO_EMISMATCH, on every rank.
 * One 16-byte all-reduce (a second agreement only when that one fails).
 * Collective.                                                            */
deso_err deso__force_agree(deso_ctx *ctx, uint64_t hash, deso_err local);
/* The same agreement in two halves, started (non-blocking) and finished,
 * so that nodes that communicate with no other rank can run in between;
 * deso__force_agree is both at once.  local: this rank's outcome so far.
 * finish gives what deso__force_agree gives.  Both collective.          */
deso_err deso__check_start(deso_ctx *ctx, uint64_t hash, deso_err local,
                           deso__check *ck);
deso_err deso__check_finish(deso_ctx *ctx, deso__check *ck);
/* Small nodes' times are sampled: one in DESO__TIME_SAMPLE is timed.     */
#define DESO__TIME_SAMPLE 16
/* Whether to time this one: true with probability 1 / DESO__TIME_SAMPLE,
 * drawn from *state (a linear congruential step; its top bits).  Drawn,
 * not counted: a loop of 10 small nodes sampled every 16th would time
 * only the even ones.  Timing never changes what runs, so the draws
 * need not agree between ranks.                                         */
static inline bool deso__sample(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (*state >> 60) == 0;
}
/* Small nodes (fewer than DESO__TIME_ALWAYS elements in their operands
 * and result, globally) are timed one in DESO__TIME_SAMPLE, that one
 * counting for all: the four clock readings of a timed node (its kernel,
 * its run in the performance log) cost 0.3-0.6 us here, a quarter of a
 * gemv on 100 x 100 elements; from 65536 elements on they cost under 2%. */
#define DESO__TIME_ALWAYS 65536
/* How many times node nd's timings count (0: it is not timed): 1 for a
 * node on large operands, else DESO__TIME_SAMPLE for one small node in
 * DESO__TIME_SAMPLE and 0 for the others.  (Inline: every node run asks,
 * and a replayed step's whole plumbing is a few dozen instructions.)     */
static inline int deso__time_weight(deso_ctx *ctx, const deso__node *nd)
{
    if (nd->work >= DESO__TIME_ALWAYS) return 1;
    return deso__sample(&ctx->sampled) ? DESO__TIME_SAMPLE : 0;
}
/* A kernel's start when the running node is timed (ctx->weight), else 0;
 * its end: compute time and the performance log's kernel time of op (one
 * clock reading for both).                                              */
double deso__kernel_start(const deso_ctx *ctx);
void deso__kernel_time(const deso_ctx *ctx, blas_op op, double t0);
/* Runs one node in its plan's placement pl, into the result view rv its
 * preparation made (NULL: take over the updated operand's buffer).       */
deso_err deso__exec_node(deso_ctx *ctx, deso__node *nd, const opt_place *pl,
                         deso__view *rv);
/* The same once the operands' views v and the result view rv are there
 * (rv holds the updated operand's data when the operation has one).
 * With nd->res NULL (a compiled program's template node, replay_run.c)
 * the result is left in rv and rv is never freed.                      */
deso_err deso__exec_views(deso_ctx *ctx, deso__node *nd, const opt_place *pl,
                          deso__view *const *v, deso__view *rv);
/* What running node nd under placement pl asks of this rank: fixed by
 * the node, its placement and its operands' local shapes, so that a
 * compiled program (replay_run.c) works it out at its first run instead
 * of at every run (the table lookups and layout tests cost as much as a
 * kernel on 100 elements).  Only info is set for a node off the
 * local-kernel path (a view node, a user operator, a sparse product, a
 * triangular solve).                                                    */
typedef struct deso__kfacts {
    const blas_op_info *info;
    int64_t len;              /* its reduction buffer (blas_red_len)       */
    int rd;                   /* grid dimension reduced over, -1: none     */
    bool part;                /* this rank runs the kernel                 */
    bool all;                 /* the reduction is an all-reduce            */
    bool finish;              /* this rank runs the finish                 */
    bool streamed;            /* an out-of-core matrix streams             */
    bool direct;              /* its direct kernel writes the result whole */
} deso__kfacts;
/* Also the local pieces L of v and R of rv, which a compiled program
 * keeps from one run to the next: only their data and layout change.   */
void deso__exec_facts(const deso_ctx *ctx, const deso__node *nd,
                      const opt_place *pl, deso__view *const *v,
                      const deso__view *rv, deso__kfacts *f, blas_local *L,
                      blas_local *R);
/* deso__exec_views with the node's facts f worked out before (on views
 * of the same layouts), and the local pieces L and R (deso__exec_facts's,
 * their data and layout those of v and rv now).                        */
deso_err deso__exec_known(deso_ctx *ctx, deso__node *nd, const opt_place *pl,
                          const deso__kfacts *f, deso__view *const *v,
                          deso__view *rv, blas_local *L, blas_local *R);
/* A fused group's members (deferred by exec_node, in recording order): one
 * collective on their concatenated partial results, then every finish;
 * the results become ready (m[j]->rv = NULL once attached).  Collective. */
deso_err deso__exec_fused(deso_ctx *ctx, deso__fz *const *m, int k);
/* The same with the group's collective posted into pd and not waited
 * for: deso__exec_wait finishes it.  Collective.                        */
deso_err deso__exec_fused_post(deso_ctx *ctx, deso__fz *const *m, int k,
                               deso__pend *pd);
/* Waits for pd's reduction (posted by deso__exec_node with ctx->post, or
 * by deso__exec_fused_post: then m[0..k) are the group's members, else
 * k = 0) and finishes its node(s): their results become ready.          */
deso_err deso__exec_wait(deso_ctx *ctx, deso__pend *pd, deso__fz *const *m,
                         int k);
/* Scratch doubles the triangular solve needs with T in layout lay.     */
int64_t deso__trsv_scratch(const deso_ctx *ctx, const blas_layout *lay);
deso_err deso__exec_trsv(deso_ctx *ctx, const blas_desc *d,
                         const deso__view *T, const deso__view *x,
                         deso__view *res);

/* A sparse product's node (exec_sparse.c): v are its operands' views
 * (alpha, x, and with BLAS_F_BETA beta, y), rv its result's, holding y
 * when y is read.  Collective (the halo exchange).                     */
deso_err deso__exec_usmv(deso_ctx *ctx, const deso__node *nd,
                         deso__view *const *v, deso__view *rv);

/* A user operator's node (exec_user.c): its callback on this rank's
 * pieces x of x and rv of y.  Local; the caller agrees the outcome.     */
deso_err deso__exec_user(deso_ctx *ctx, const deso__node *nd,
                         const deso__view *x, deso__view *rv);

/* vget and vput (exec_view.c): the node's exchange plan readied for its
 * placement (Local: the preparation's), and the node run (Collective).   */
deso_err deso__view_ready(deso_ctx *ctx, const deso__node *nd,
                          const blas_layout *req, const blas_layout *rl);
deso_err deso__exec_view(deso_ctx *ctx, const deso__node *nd,
                         deso__view *const *v, deso__view *rv);

/* ---- exchanges (exchange.c) --------------------------------------------- */
/* The view of v in layout `lay`, made (and kept) if needed.  Collective.  */
deso_err deso__value_view(deso_ctx *ctx, deso__value *v,
                          const blas_layout *lay, deso__view **out);
void deso__exchange_plans_free(deso_ctx *ctx);
/* At the end of a force that went through its preparation: frees the
 * cached plans of changes of layout that neither this force nor the one
 * before used (a live replay's fills, which are not prepared again, are
 * marked first: deso__replay_touch_plans), then counts the force.  Plans
 * under an element map (vget, vput) stay.  Local.                       */
void deso__exchange_plans_trim(deso_ctx *ctx);
/* How many exchange plans the context keeps (for tests).  Local.        */
int deso__exchange_plans_count(const deso_ctx *ctx);
/* Marks the cached plan of the change of layout src -> to (if any) as
 * used by this force.  Local.                                            */
void deso__exchange_touch(deso_ctx *ctx, blas_kind kind,
                          const blas_layout *src, const blas_layout *to);
/* What the context's cached exchange plans keep: bytes of their copy
 * lists and of their message buffers.  Local.                            */
void deso__exchange_plans_bytes(const deso_ctx *ctx, size_t *lists,
                                size_t *buffers);
/* Fills view w (its layout) from view src of a value of `kind`: a matrix
 * remap, broadcasts, or a point-to-point exchange, as deso__value_view
 * makes a new view.  Collective over the ranks the layouts name.         */
deso_err deso__view_fill(deso_ctx *ctx, blas_kind kind, const deso__view *src,
                         deso__view *w);
/* The view a new view in layout `to` of a value of `kind` is made from,
 * when its views have layouts *have[0..n) (in list order): the source
 * deso__value_view picks.                                                */
const blas_layout *deso__exchange_source(blas_kind kind,
                                        const blas_layout *const *have, int n,
                                        const blas_layout *to);
/* Readies (and caches) the plan that makes a view in layout `to` from one
 * in layout `src`.  Local.                                               */
deso_err deso__exchange_ready(deso_ctx *ctx, blas_kind kind,
                              const blas_layout *src, const blas_layout *to);

/* Element map e (vget, vput) from a view in layout src into one in
 * layout to: its plan readied (Local), and run (Collective); the map's
 * target elements of dst are written, the others left as they are.      */
deso_err deso__exchange_map_ready(deso_ctx *ctx, const blas_layout *src,
                                  const blas_layout *to, const blas_emap *e);
deso_err deso__exchange_map(deso_ctx *ctx, const deso__view *src,
                            deso__view *dst, const blas_emap *e);

/* ---- communication (comm.c): the runtime's counted MPI calls ------------ */
typedef enum { DESO__SUM, DESO__MAXLOC } deso__redop;
deso_err deso__allreduce(deso_ctx *ctx, MPI_Comm comm, double *buf,
                         int64_t len, deso__redop op);
deso_err deso__reduce(deso_ctx *ctx, MPI_Comm comm, double *buf,
                      int64_t len, deso__redop op, int root);
deso_err deso__bcast(MPI_Comm comm, double *buf, int64_t len, int root);
/* A reduction (an all-reduce when all, else a reduce to rank 0) started
 * without waiting, counted as deso__allreduce and deso__reduce count;
 * buf must stay untouched until deso__coll_wait, whose wait is timed as
 * collective.  Nothing happens on a communicator of one rank.  Both
 * collective (every rank of comm starts and waits).                     */
deso_err deso__coll_start(deso_ctx *ctx, MPI_Comm comm, double *buf,
                          int64_t len, deso__redop op, bool all,
                          deso__coll *c);
deso_err deso__coll_wait(deso__coll *c);
/* deso__agree on the context's communicator, timed and counted as the
 * user's collectives are (the verdict's broadcast too, when some rank
 * failed).  Collective.                                                  */
deso_err deso__agree_counted(deso_ctx *ctx, const char *fn, deso_err local,
                             int64_t *flags, int nflags);
/* Point-to-point exchange: nrecv receives into rbufs, nsend sends.  req
 * has room for nsend + nrecv requests: the caller's, so that nothing is
 * allocated once data moves (an allocation failing on one rank there
 * would leave its partners waiting).                                      */
deso_err deso__exchange(MPI_Comm comm, int tag, int nsend, const int *speer,
                        double *const *sbuf, const int64_t *scount,
                        int nrecv, const int *rpeer, double *const *rbuf,
                        const int64_t *rcount, MPI_Request *req);
/* The same in two halves, so that local work can run while the messages
 * are in flight: _start posts them (on a failure it has waited for what
 * it posted and x needs no finish), _finish waits.  The exchange's time
 * (deso_stats and the performance log) is what the two spent in MPI.    */
deso_err deso__exchange_start(MPI_Comm comm, int tag, int nsend,
                              const int *speer, double *const *sbuf,
                              const int64_t *scount, int nrecv,
                              const int *rpeer, double *const *rbuf,
                              const int64_t *rcount, MPI_Request *req,
                              deso__xfer *x);
deso_err deso__exchange_finish(deso__xfer *x);

/* ---- matrix remaps (remap_matrix.c) ------------------------------------ */
/* The cached remap plan between two matrix layouts, made if needed.
 * Local.                                                                  */
deso_err deso__mat_remap_plan(deso_ctx *ctx, const blas_layout *src,
                              const blas_layout *dst, deso__remap **out);
/* Remaps src's data into dst.  Collective.                                */
deso_err deso__mat_remap(deso_ctx *ctx, const deso__view *src,
                         deso__view *dst);
void deso__matrix_remaps_free(deso_ctx *ctx);

/* The public functions' implementations and the error handler's hook. */
#include "deso/runtime/api.h"

#endif
