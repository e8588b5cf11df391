/* optimizer/: the plan cache.  Pure, no MPI.
 *
 *   opt_graph_key  a structural key of a DAG: operation kinds and flags,
 *                  operand edges in topological (value id) numbering,
 *                  shapes, the grid (hence P), the mode, the layouts of the
 *                  live-in values (a layout by partition: its ranges),
 *                  which values are live-out and how they are wanted, a
 *                  sparse product's facts (blas_sparse's hash: its
 *                  partitions and halo, not its matrix's identity).
 *                  Never data.  Two independent 64-bit hashes:
 *                  `key` names the plan (also in the wisdom file), `check`
 *                  guards in-memory hits against a key collision.
 *   opt_cache      a bounded LRU map key -> plan (plus the plan's
 *                  per-node candidate variants, for the wisdom file).
 *   variants       a plan as (result layout, candidate index) per node:
 *                  opt_plan_rebuild turns that back into a plan, checking
 *                  every node against its mode's candidates, so a plan from
 *                  a file can only ever be one the optimiser could have
 *                  made (any plan it can make computes the right values). */
#ifndef DESO_OPT_CACHE_H
#define DESO_OPT_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "optimizer/opt_graph.h"

/* The structural key of g for mode `mode`; *check (may be NULL) receives
 * an independent second hash.  Local.                                      */
uint64_t opt_graph_key(const opt_graph *g, opt_mode mode, uint64_t *check);

/* The same key without the live-in layouts (only their kinds and shapes):
 * the DAG's shape.  A plan made for one placement of the live-in values is
 * still correct for any other (the executor exchanges what differs),
 * so a shape match is a sound starting point for a bounded improvement.  */
uint64_t opt_graph_shape_key(const opt_graph *g, opt_mode mode);

/* variant[i] = the index of plan p's node i among opt_node_cands (mode,
 * operands' layouts under p), or -1 when it is not a candidate.  Local.  */
deso_err opt_plan_variants(const opt_graph *g, const opt_plan *p,
                           opt_mode mode, int *variant);

/* The plan whose node i is candidate variant[i] of its mode, and whose
 * result layouts equal res[i] (a layout by partition in res that names no
 * partition, as wisdom files give it, fits the candidate's).  DESO_EINVAL (no message noise beyond
 * deso_last_error) when any node does not fit: wrong count, index out of
 * range, other result layout.  out->model is filled under pp.  Local.     */
deso_err opt_plan_rebuild(const opt_graph *g, opt_mode mode, int nnodes,
                          const blas_layout *res, const int *variant,
                          const opt_params *pp, opt_plan *out);

typedef struct opt_cache_entry {
    uint64_t key, check;    /* check 0: unknown (from a wisdom file)       */
    uint64_t shape;         /* opt_graph_shape_key; 0 unknown              */
    opt_plan plan;
    int *variant;           /* per node; NULL when unknown                 */
    uint32_t hits;          /* replays                                     */
    bool settled;           /* no further improvement found                */
    uint64_t used;          /* LRU tick                                    */
} opt_cache_entry;

typedef struct opt_cache opt_cache;

/* A cache of at most cap plans (cap >= 1).  NULL on out of memory.        */
opt_cache *opt_cache_new(int cap);
void opt_cache_free(opt_cache *c);
/* Empties the cache (frees every entry, allocates nothing).              */
void opt_cache_clear(opt_cache *c);
int opt_cache_count(const opt_cache *c);
int opt_cache_capacity(const opt_cache *c);
/* Entry k (0 <= k < count), in no particular order; NULL out of range.    */
opt_cache_entry *opt_cache_at(opt_cache *c, int k);

/* The entry for (key, check), marked most recently used; NULL on a miss.
 * check 0 matches any check.                                               */
opt_cache_entry *opt_cache_find(opt_cache *c, uint64_t key, uint64_t check);

/* The most recently used entry with this shape key, marked used; NULL
 * when none.                                                               */
opt_cache_entry *opt_cache_find_shape(opt_cache *c, uint64_t shape);

/* Stores a copy of plan p (and of variant[0 .. p->nnodes), may be NULL)
 * under (key, check, shape), replacing an entry with the same key or else the
 * least recently used one when full.  *out (may be NULL) receives the
 * entry.  Errors: DESO_ENOMEM (the cache is unchanged).                   */
deso_err opt_cache_put(opt_cache *c, uint64_t key, uint64_t check,
                       uint64_t shape, const opt_plan *p, const int *variant,
                       opt_cache_entry **out);

/* A bounded improvement of plan *p (at most max_iters greedy edge
 * attempts, one node sweep, from p itself): *better says whether the
 * result is cheaper under o->cost; then *p is replaced.  Local.           */
deso_err opt_search_improve(const opt_graph *g, const opt_search_opts *o,
                            int max_iters, opt_plan *p, bool *better);

#endif
