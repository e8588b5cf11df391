/* optimizer/: the placement optimiser's view of a DAG, its plans, its cost
 * model and its search (paper 003 section 3, with the errata of
 * doc/DESIGN.md, "Reference: paper 003 (placements)").
 * Pure, no MPI: the same graph and parameters give the same plan on every
 * rank (no timing-dependent choice anywhere).
 *
 *   opt_graph   values (kind, shape; live-in values with the layouts they
 *               currently have, live-out values with the layout a reader
 *               wants them in, if known) and nodes in recording order.
 *   opt_plan    per node: its result's layout and the layout every operand
 *               must have when it runs (the executor's blas_layout).
 *   opt_cands.c the optimiser's constraint notion: for each node, the list
 *               of (result, operands) layout tuples a mode allows.
 *   opt_cost.c  the cost model: an exact emulation of what the executor
 *               (deso/runtime/exec.c, exchange.c, comm.c) moves for a
 *               plan, counted with the rules of doc/DESIGN.md, "Counting
 *               bytes and messages", and its modelled time (alpha + beta *
 *               bytes per message; log2 p rounds for collectives).
 *   opt_eval.c  the same model, evaluated incrementally for the search.
 *   opt_seen.c  the plans a search has costed, with their times.
 *   opt_search.c mode none (the executor's per-node defaults), the greedy
 *               edge elimination for modes affine and full.
 *   opt_explain.c the plan explains itself: text and Graphviz DOT.        */
#ifndef DESO_OPT_GRAPH_H
#define DESO_OPT_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "blas/blas.h"
#include "optimizer/optimizer.h"

#define OPT_MAXVIEWS 4      /* layouts a live-in value may already have     */
#define OPT_MAXPARTS 4      /* partitions of a graph's sparse products the  */
                            /*   optimiser offers vectors (more: ignored)  */

/* ---- the graph ----------------------------------------------------------- */

typedef struct opt_value {
    blas_kind kind;
    int64_t m, n;            /* vector (1, n), scalar (1, 1)                 */
    int producer;            /* node index, or -1: live-in                   */
    int nviews;              /* live-in: layouts held now; [0] = primary     */
    blas_layout views[OPT_MAXVIEWS];
    bool live_out;           /* referenced after the DAG (a handle)         */
    bool has_want;           /* live-out: read in layout `want` afterwards  */
    blas_layout want;
    int carry;               /* live-out: the live-in value it replaces (the
                              * same handle's value when the DAG began), or
                              * -1.  A hint, not part of the graph's
                              * identity: see opt_graph_carry            */
    bool ooc;                /* a matrix held in local array files (out of
                              * core): every node reading or writing it
                              * streams it (opt_graph_ooc)               */
} opt_value;

typedef struct opt_node {
    blas_desc d;
    int ops[BLAS_MAXOPS];    /* operand value ids                            */
    int res;                 /* result value id                              */
} opt_node;

typedef struct opt_graph {
    opt_defaults df;         /* grid shape, default block size               */
    int nvals, nnodes;
    int cap_vals, cap_nodes;
    opt_value *vals;
    opt_node *nodes;
    /* the partitions its sparse products place vectors by (usmv nodes'
     * rows and cols), in order of appearance: candidate layouts for the
     * vectors of their length (opt_cands.c)                              */
    int nparts;
    const blas_part *parts[OPT_MAXPARTS];
} opt_graph;

void opt_graph_init(opt_graph *g, const opt_defaults *df);
void opt_graph_free(opt_graph *g);
/* Empties g for a new graph on df, keeping its storage.                   */
void opt_graph_reset(opt_graph *g, const opt_defaults *df);
/* dst (uninitialised) becomes a copy of src.                              */
deso_err opt_graph_copy(const opt_graph *src, opt_graph *dst);
/* A live-in value with its primary layout (its kind and shape come from
 * the layout).  *id receives the value id.                                */
deso_err opt_graph_livein(opt_graph *g, const blas_layout *lay, int *id);
/* One more layout a live-in value already holds (the executor's views).   */
deso_err opt_graph_livein_view(opt_graph *g, int id, const blas_layout *lay);
/* Appends a node (recording order = topological order): operands ops[0 ..
 * blas_desc_nops), the result's shape (m, n); *res receives its value id. */
deso_err opt_graph_node(opt_graph *g, blas_op op, unsigned flags,
                        const int *ops, int64_t m, int64_t n, int *res);
/* The same for a node described by d (vget and vput carry their view's
 * offset and stride in it).                                               */
deso_err opt_graph_node_desc(opt_graph *g, const blas_desc *d,
                             const int *ops, int64_t m, int64_t n, int *res);
/* Marks a value live-out; want != NULL: a reader wants it in that layout
 * after the DAG (e.g. a force point reading a scalar everywhere).        */
deso_err opt_graph_live_out(opt_graph *g, int id, const blas_layout *want);

/* Marks live-out value `out` as the new version of live-in value `in` (a
 * loop-carried value: a solver's next iteration will read it where `in`
 * was read).  The search then prices moving `out` back to `in`'s primary
 * layout into a plan's modelled time (never into its bytes and messages:
 * that move happens only if the next DAG asks for it), so that a plan does
 * not win one iteration by leaving a vector where every later iteration
 * must fetch it back.  Graphs that differ only in these marks share keys
 * and compiled forces: any plan is correct for either.                   */
deso_err opt_graph_carry(opt_graph *g, int out, int in);

/* Marks matrix value id as out of core: its local pieces live in files,
 * so a node that reads it (or produces it) pays the read (write) of the
 * busiest rank's piece at opt_params.io_beta, and moving it to another
 * layout pays reading every piece and writing the new ones on top of the
 * exchange.  Part of the graph's identity (the plan cache's key).        */
deso_err opt_graph_ooc(opt_graph *g, int id);

/* ---- plans --------------------------------------------------------------- */

typedef struct opt_place {
    blas_layout res;
    blas_layout req[BLAS_MAXOPS];
} opt_place;

typedef struct opt_counts {
    int64_t bytes_p2p, msgs_p2p;     /* summed over ranks                   */
    int64_t bytes_coll, msgs_coll;   /* counted as deso_stats counts them   */
    double time;                     /* modelled seconds                    */
} opt_counts;

typedef struct opt_plan {
    opt_mode mode;
    int nnodes;
    opt_place *node;
    int *fuse;               /* per node: fuse group = index of the group's
                              * first member (-1: none); opt_fuse_groups  */
    opt_counts model;        /* the plan's modelled cost                    */
    int iters;               /* greedy iterations used                      */
    bool settled;            /* opt_search stopped at a local optimum: a
                              * bounded improvement would find nothing     */
} opt_plan;

void opt_plan_free(opt_plan *p);
deso_err opt_plan_copy(const opt_plan *src, opt_plan *dst);
bool opt_plan_equal(const opt_plan *a, const opt_plan *b);

/* ---- cost model (opt_cost.c) --------------------------------------------- */

typedef enum opt_volume {
    OPT_VOL_RANK = 0,        /* collectives cost the per-rank volume        */
    OPT_VOL_ARRAY            /* paper eq. 9: the whole array's volume       */
} opt_volume;

/* The collectives the model prices, and the communicators it prices them
 * on: those along grid dimension 0 (pr ranks each), along dimension 1 (pc
 * ranks each), or every rank (a vector by partition's reductions).       */
typedef enum opt_coll_kind {
    OPT_COLL_ALLREDUCE = 0,
    OPT_COLL_REDUCE,
    OPT_COLL_BCAST,
    OPT_COLL_KINDS
} opt_coll_kind;
#define OPT_COMM_ALL 2
#define OPT_COMMS 3

/* A measured collective: seconds per call (with every communicator of its
 * kind running side by side) and seconds per byte of payload; call <= 0:
 * not measured, the alpha-beta formula prices it.                       */
typedef struct opt_coll_cost {
    double call, byte;
} opt_coll_cost;

typedef struct opt_params {
    double alpha;            /* seconds per message                          */
    double beta;             /* seconds per byte                             */
    opt_coll_cost coll[OPT_COLL_KINDS][OPT_COMMS];
    opt_volume volume;
    bool reduce_holders_only;/* reductions run only on the rows/columns that
                              * hold the operands, as deso/runtime/exec.c
                              * runs them (the runtime sets it); else on
                              * every rank                                 */
    double io_beta;          /* seconds per byte read from or written to an
                              * out-of-core matrix's local array file (the
                              * runtime measures it when some rank has a
                              * memory budget; 0: no I/O term)            */
    double work_beta;        /* seconds per byte a vector kernel streams on
                              * its busiest rank (every vector operand
                              * read, the result written), so that a plan
                              * whose vectors are replicated, or held on
                              * one grid row or column, pays for every
                              * rank doing the whole vector's work; 0: no
                              * work term                                 */
    double mat_work_beta;    /* seconds per byte of its matrix a product
                              * streams on its busiest rank (so that a
                              * matrix whole on every rank pays for every
                              * rank's whole product); 0: no such term     */
    double amortise;         /* runs the one-time move of a matrix to the
                              * layout whole on every rank is spread over
                              * (its view is kept; <= 1: none)           */
} opt_params;

/* Defaults for tests only: the runtime measures alpha and beta.           */
opt_params opt_params_default(void);

/* How one edge (a value into a node's operand slot, or into a live-out
 * reader) is served.                                                       */
typedef enum opt_move {
    OPT_MV_NONE = 0,         /* the value is already in that layout         */
    OPT_MV_CACHED,           /* an earlier edge made this view              */
    OPT_MV_COLLAPSE,         /* fewer copies: a free local copy             */
    OPT_MV_BCAST,            /* broadcasts along grid dimensions            */
    OPT_MV_EXCHANGE,         /* point-to-point exchange                     */
    OPT_MV_REMAP             /* matrix block-cyclic remap (approximate)     */
} opt_move;

typedef struct opt_edge {
    opt_move move;
    blas_layout from, to;
    opt_counts cost;
} opt_edge;

/* Per-evaluation details: edges indexed node * BLAS_MAXOPS + slot, then
 * nnodes * BLAS_MAXOPS + value id for live-out readers; node_cost[i] is
 * node i's own communication (its reduction).                             */
typedef struct opt_eval {
    int nedges, nnodes;
    opt_edge *edge;
    opt_counts *node_cost;
} opt_eval;

deso_err opt_eval_init(opt_eval *ev, const opt_graph *g);
void opt_eval_free(opt_eval *ev);

/* A memo of exchange counts per layout pair (exact counting costs O(blocks)
 * per receiving rank; the memo makes a plan evaluation a few microseconds).
 * Opaque; NULL everywhere means "no memo".                                */
typedef struct opt_memo opt_memo;
opt_memo *opt_memo_new(void);
void opt_memo_free(opt_memo *m);

/* Exact counts of the executor's point-to-point exchange from layout S to
 * layout D (each receiver takes each element from the nearest source copy)
 * and its modelled time.                                                  */
deso_err opt_exchange_cost(const blas_layout *S, const blas_layout *D,
                           const opt_params *pp, opt_memo *memo,
                           opt_counts *out);

/* Fusion of independent reductions: ddot, dnrm2 and dasum nodes
 * that reduce over the same grid dimension on the same communicators are
 * grouped when none depends on another and no node between the group's
 * first and last member reads a member's result.  The executor runs every
 * member's local kernel where it stands, one collective on the members'
 * concatenated buffers at the last member (an all-reduce when any
 * member's result is replicated along the reduced dimension, else a
 * reduce), then every member's finish.  fuse[i] = the group's first
 * member, or -1 (groups of one are not groups).  Pure, deterministic: a
 * function of the graph and the plan's placements only.                  */
deso_err opt_fuse_groups(const opt_graph *g, const opt_plan *p, int *fuse);

/* The plan's total modelled cost; ev (optional) receives the details
 * (a fused group's collective is node_cost of its first member).          */
deso_err opt_plan_cost(const opt_graph *g, const opt_plan *p,
                       const opt_params *pp, opt_memo *memo, opt_eval *ev,
                       opt_counts *total);

/* ---- candidates (opt_cands.c) -------------------------------------------- */

#define OPT_MAXCANDS 64

/* The placements mode `mode` allows for node i, given its operands' current
 * primary layouts cur[]: at most OPT_MAXCANDS, deterministic order, no
 * duplicates; the first is mode none's choice when that is among them.   */
deso_err opt_node_cands(const opt_graph *g, int i, opt_mode mode,
                        const blas_layout *cur, opt_place *out, int *count);
/* Whether plan p of g (mode full) leaves folded a product's matrix that
 * g->df.replicate_max lets the optimiser make whole on every rank.      */
bool opt_plan_may_replicate(const opt_graph *g, const opt_plan *p);

/* ---- search (opt_search.c) ----------------------------------------------- */

typedef struct opt_search_opts {
    opt_mode mode;
    opt_params cost;
    int max_iters;           /* greedy edge attempts (0: default 64)        */
    int passes;              /* passes over the edges (0: default 3)        */
} opt_search_opts;

opt_search_opts opt_search_default(opt_mode mode);

/* Mode none: exactly the executor's per-node defaults (opt_place_node).   */
deso_err opt_plan_none(const opt_graph *g, opt_plan *out);
/* The plan for o->mode (none: opt_plan_none), with out->model filled.
 * Never worse than mode none's plan under o->cost.                        */
deso_err opt_search(const opt_graph *g, const opt_search_opts *o,
                    opt_plan *out);

/* ---- the plan explains itself (opt_explain.c) ----------------------------- */

/* "v dist=1 b=180 rep=1" etc. into buf (at least 64 bytes).               */
const char *opt_layout_str(const blas_layout *l, char *buf, size_t len);
deso_err opt_plan_explain(FILE *f, const opt_graph *g, const opt_plan *p,
                          const opt_params *pp);
deso_err opt_plan_dot(FILE *f, const opt_graph *g, const opt_plan *p,
                      const opt_params *pp);

#endif
