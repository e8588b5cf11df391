/* Internal to optimizer/: helpers its files share.                        */
#ifndef DESO_OPT_IMPL_H
#define DESO_OPT_IMPL_H

#include "optimizer/opt_graph.h"

/* A plan for nnodes nodes, zeroed, fuse groups -1.                         */
deso_err opt__plan_alloc(opt_plan *p, int nnodes);
/* The same with the placements left unset, for a caller that sets every
 * node's whole placement (zeroing them first would be wasted).           */
deso_err opt__plan_alloc_unset(opt_plan *p, int nnodes);

/* The primary layouts of node i's operands under plan p (live-in values:
 * their primary layout; produced values: their producer's result).       */
void opt__cur_ops(const opt_graph *g, const opt_plan *p, int i,
                  blas_layout *cur);

/* Where loop-carried value v (carry >= 0) returns for the next iteration:
 * for a vector of n elements in a graph whose sparse products place
 * vectors of n by a partition (g->parts), that partition's layout (the
 * loop's next product works there); else, when this DAG reads its live-in
 * version, the layout its first reader takes it in (opt__carry_first: the
 * next iteration reads it there first); else the live-in version's
 * primary layout.  Either way the steady state: a vector that came in
 * elsewhere (the first iteration's, made where a set-up force found it
 * cheapest) pays once to move rather than being held where it came in
 * for every later iteration.                                            */
blas_layout opt__carry_to(const opt_graph *g, int v);
/* The operand edge (node * BLAS_MAXOPS + slot) whose layout under the
 * plan is where v returns, or -1 when opt__carry_to's layout is fixed by
 * the graph alone.                                                        */
int opt__carry_first(const opt_graph *g, int v);
/* v's return layout under plan p (opt__carry_to, opt__carry_first).       */
blas_layout opt__carry_back(const opt_graph *g, const opt_plan *p, int v);

/* The layouts mode `mode` lets a value of this kind take (at most
 * OPT__MAXLAYS: 4, and the graph's partitions of a vector's length).     */
#define OPT__MAXLAYS (4 + OPT_MAXPARTS)
int opt__layouts(const opt_graph *g, opt_mode mode, blas_kind kind,
                 int64_t n, blas_layout *out);

/* The mode's layouts of vectors of vn elements (with the graph's
 * partitions of vn indices) and of scalars, made once for the many
 * candidate lists of one search.                                         */
typedef struct opt__modesets {
    opt_mode mode;
    int64_t vn;
    int nvec, nsca;
    blas_layout vec[OPT__MAXLAYS], sca[4];
} opt__modesets;
void opt__modesets_make(const opt_graph *g, opt_mode mode, int64_t vn,
                        opt__modesets *ms);
/* opt_node_cands, taking the mode's layouts from ms where it has them
 * (ms NULL: made here); the same candidates in the same order.           */
deso_err opt__node_cands(const opt_graph *g, int i, opt_mode mode,
                         const blas_layout *cur, const opt__modesets *ms,
                         opt_place *out, int *count);

/* The operand slots (bit k: slot k) whose layouts node i's candidates
 * (opt_node_cands) depend on: two tuples of operand layouts that agree
 * on these slots give the same candidates, in the same order.           */
unsigned opt__cands_reads(const opt_graph *g, int i);

/* The next array of n elements of `size` bytes in a block (16-byte
 * aligned); with base NULL only the offset moves (sizing the block): a
 * structure's arrays in one allocation.                                  */
static inline void *opt__carve(char *base, size_t *off, size_t n,
                               size_t size)
{
    void *p = base != NULL ? base + *off : NULL;
    *off += (n * size + 15) & ~(size_t)15;
    return p;
}

/* ceil(log2 p) for p >= 1.                                                 */
int opt__log2c(int p);

/* ---- the model's parts (opt_cost.c) -------------------------------------- */

void opt__add(opt_counts *a, const opt_counts *b);
/* Whether D is S with more copies (same folding): a broadcast serves it.  */
bool opt__replication_only(const blas_layout *S, const blas_layout *D);
/* The broadcasts from S to D (added to *c), the approximate matrix remap
 * from S (added to *c).                                                   */
void opt__bcast_cost(const blas_layout *S, const blas_layout *D,
                     const opt_params *pp, opt_counts *c);
void opt__remap_cost(const blas_layout *S, const blas_layout *D,
                     const opt_params *pp,
                     opt_counts *c);
/* An exchange's counts and modelled time from cnt[src * P + dst] (the
 * elements dst takes from src); ns: 4 P zeroed int64 of scratch.        */
void opt__p2p_counts(const int64_t *cnt, int P, int64_t *ns,
                     const opt_params *pp, opt_counts *out);
/* A vget or vput node's own exchange under pl (opt_cost_view.c).        */
void opt__view_cost(const opt_node *nd, const opt_place *pl,
                    const opt_params *pp, opt_counts *c);
/* The time to read (or write) every local piece of an out-of-core
 * matrix in layout L: the busiest rank's bytes at pp->io_beta (0 for a
 * vector, a scalar or io_beta 0).                                        */
double opt__io_time(const blas_layout *L, const opt_params *pp);
/* Whether node nd reads or produces an out-of-core matrix.               */
bool opt__node_streams(const opt_graph *g, const opt_node *nd);
/* Whether node nd reads or makes a vector (it has a work term), and the
 * time of that work under pl: the busiest rank's share of each vector
 * operand and of a vector result, at pp->work_beta per byte.            */
bool opt__node_works(const opt_graph *g, const opt_node *nd);
double opt__node_work(const opt_node *nd, const opt_place *pl,
                      const opt_params *pp);
/* Node nd's own cost under placement pl (*c is set): its collective, and
 * the streaming of its out-of-core operands and result.  mult doubles
 * of a fused group's partials (0: not fused), allred: the group is an
 * all-reduce.                                                            */
void opt__node_cost(const opt_graph *g, const opt_node *nd,
                    const opt_place *pl, const opt_params *pp, int mult,
                    bool allred, opt_counts *c);
/* Whether a node of operation op can be fused (its key can be >= 0).     */
bool opt__fuse_op(blas_op op);
/* Node nd's fusion key under pl (-1: not fusable), and the groups those
 * keys make (opt_fuse_groups' rule); taint: nvals ints of scratch.       */
int opt__fuse_key(const opt_graph *g, const opt_node *nd, const opt_place *pl);
void opt__fuse_keys(const opt_graph *g, const int *key, int *taint,
                    int *fuse);

/* ---- plan evaluation by layout ids (opt_eval.c) --------------------------- */

/* The evaluator of one graph under one set of parameters, for a search
 * that costs many plans of it: every layout it meets gets an id (equal
 * layouts, one id, so comparing ids compares layouts), the cost of a move
 * is computed once per (from, to) pair, and each evaluation redoes only
 * what the placements that changed since the previous one affect.        */
typedef struct opt__eval opt__eval;

/* A placement by layout ids: the result and operands 0 .. nops - 1 (the
 * other slots -1).                                                        */
typedef struct opt__place {
    int res;
    int req[BLAS_MAXOPS];
} opt__place;

/* An edge by layout ids (opt_edge's fields otherwise).                    */
typedef struct opt__edge {
    opt_move move;
    int from, to;
    opt_counts cost;
} opt__edge;

/* memo (may be NULL): exchange counts shared beyond this evaluator.       */
deso_err opt__eval_new(const opt_graph *g, const opt_params *pp,
                       opt_memo *memo, opt__eval **out);
void opt__eval_free(opt__eval *e);
/* The id of layout l (interned on first sight).                           */
deso_err opt__intern(opt__eval *e, const blas_layout *l, int *id);
/* The layout of id; valid until the next opt__intern.                     */
const blas_layout *opt__lay(const opt__eval *e, int id);
/* Node i's placement pl by ids, and back (unused slots zeroed).           */
deso_err opt__intern_place(opt__eval *e, int i, const opt_place *pl,
                           opt__place *out);
void opt__place_out(const opt__eval *e, int i, const opt__place *in,
                    opt_place *out);
/* The id of live-in value v's primary layout.                              */
int opt__livein_id(const opt__eval *e, int v);
/* Plan p's total modelled cost, exactly opt_plan_cost's (the same terms
 * added in the same order), and its time alone (the same double).        */
deso_err opt__eval_plan(opt__eval *e, const opt__place *p, opt_counts *total);
deso_err opt__eval_time(opt__eval *e, const opt__place *p, double *time);
/* The edges of the last plan evaluated, indexed as opt_eval's (slots that
 * are no edge: from = to = -1, cost zero), and how many slots there are. */
const opt__edge *opt__eval_edges(const opt__eval *e);
int opt__eval_nedges(const opt__eval *e);
/* The slots that are edges (every other one stays from = to = -1, cost
 * zero), in increasing order: *n of them.                                 */
const int *opt__eval_real_edges(const opt__eval *e, int *n);
/* The operand edges reading value v (node * BLAS_MAXOPS + slot), in node
 * and slot order: *n of them.                                             */
const int *opt__eval_readers(const opt__eval *e, int v, int *n);

/* ---- plans already costed (opt_seen.c) ------------------------------------ */

/* A search's table of the plans (by layout ids, nnodes placements each)
 * it has costed and their modelled times.                                */
typedef struct opt__seen opt__seen;

deso_err opt__seen_new(int nnodes, opt__seen **out);
void opt__seen_free(opt__seen *s);
/* Whether plan p, whose key (any function of the plan alone, the same
 * for every call) is h, is kept; then *time is its time.                 */
bool opt__seen_find(opt__seen *s, const opt__place *p, uint64_t h,
                    double *time);
/* Keeps plan p (key h) with its time; right after a find of the same plan
 * (p unchanged) it takes the slot that find probed.                      */
deso_err opt__seen_add(opt__seen *s, const opt__place *p, uint64_t h,
                       double time);

#endif
