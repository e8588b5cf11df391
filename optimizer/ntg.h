/* Internal: paper 004's navigational trace graph (Pan et al., ICPP 2007),
 * built from recorded calls instead of an instrumented run, partitioned K
 * ways by METIS, and the cost model that compares the partition with
 * contiguous row blocks.  Pure: the same calls give the same graph and,
 * with METIS's fixed seed, the same partition on every rank.
 *
 * Vertices are the entries of the trace's vectors, or blocks of `block`
 * consecutive entries of one vector when the vectors hold more than
 * max_vertices entries in all.  Edges, summed when parallel, self-loops
 * dropped (element-level weights; a block edge is the sum of the element
 * edges it merges):
 *   PC  producer-consumer, weight p: y_i - x_j for every nonzero a_ij of
 *       a product y = A x (y_j - x_i for y = A^T x); out_i - in_i for an
 *       element-wise call;
 *   C   continuity, weight c: between successive calls, every entry call
 *       k touches at index i to every entry call k + 1 touches at index i
 *       (linear in n: never every entry of one call to every entry of the
 *       next);
 *   L   locality, weight l: entry i - entry i + 1 of each vector.
 * c = 1, p = #C + 1 (one PC edge outweighs all C edges together), l =
 * L_SCALING * p.  METIS takes 32-bit weights whose sum must fit too: when
 * the merged total exceeds 2^29 every weight is scaled down alike and
 * rounded, light ones up to 1; then all C edges together may outweigh one
 * PC edge, though each stays thousands of times lighter.                 */
#ifndef DESO_OPTIMIZER_NTG_H
#define DESO_OPTIMIZER_NTG_H

#include <stdbool.h>
#include <stdint.h>

#include "optimizer/opt_graph.h"
#include "placement/csr.h"
#include "placement/halo.h"

#define OPT_NTG_MAX_IN 3
#define OPT_NTG_MAX_VECS 32
/* Two million vertices: METIS partitions that in seconds, and the graph
 * (about 10 edges a vertex, two 32-bit words an edge end) stays near
 * 200 MB on the one rank that builds it.                                  */
#define OPT_NTG_MAX_VERTICES ((int64_t)1 << 21)

/* One call of the trace: a product y = A x (a != NULL: every row of A,
 * rows numbered by pl_csr_global_row; out = y, in[0] = x), or with trans
 * y = A^T x (the PC edges reversed: y_j - x_i for every a_ij), or an
 * element-wise call (a == NULL: out_i from in[0..nin) at each index i).  */
typedef struct opt_ntg_call {
    const pl_csr *a;
    int out;
    int in[OPT_NTG_MAX_IN];
    int nin;
    bool trans;
} opt_ntg_call;

/* L_SCALING's default for sparse products: 0, no locality edges.  The
 * paper's L edges stand in for the neighbourhood a regular loop's array
 * accesses imply; a sparse matrix states its neighbourhood exactly in its
 * nonzeros (the PC edges), and index neighbours are unrelated once the
 * rows are permuted.  Measured on lap2d-perm:64, K = 4 (tests/optimizer/
 * test_ntg.c): halo 0.03x row blocks' at 0, 0.25x at 0.01 and 0.1, 0.45x
 * at 0.5; on lap2d:64 natural order 0.71x at 0 and 1.01x at 0.1.          */
#define OPT_NTG_L_SCALING 0.0

typedef struct opt_ntg_opts {
    double l_scaling;        /* l = l_scaling * p                           */
    int64_t max_vertices;    /* 0: OPT_NTG_MAX_VERTICES                     */
} opt_ntg_opts;

typedef struct opt_ntg {
    int nvec;
    int64_t n;               /* entries per vector                          */
    int64_t block;           /* entries per vertex                          */
    int64_t nblocks;         /* vertices per vector                         */
    int64_t nvtx;            /* nvec * nblocks; vertex = vec * nblocks + b  */
    int64_t nedges;          /* merged, undirected                          */
    int64_t c, p, l;         /* element-level weights                       */
    int64_t ncedges;         /* #C, element-level, before merging           */
    double scale;            /* weights as given to METIS = w * scale       */
    int32_t *xadj, *adjncy, *adjwgt;   /* METIS's CSR, both directions      */
    int32_t *vwgt;           /* nvtx * nvec: entries of vector k in vertex  */
} opt_ntg;

/* Errors: DESO_EINVAL for a bad call (vector id, shape), DESO_ESIZE when
 * the graph cannot be indexed by 32-bit integers, DESO_ENOMEM.            */
deso_err opt_ntg_build(const opt_ntg_call *calls, int ncalls, int nvec,
                       int64_t n, const opt_ntg_opts *o, opt_ntg *g);

/* The same graph built from the matrix's rows a piece at a time, so that
 * the one who builds it never holds the whole pattern: opt_ntg_begin
 * takes the calls (a product's `a` then only says the shape: n columns,
 * a rowptr, no rows needed; calls stays the caller's until the end),
 * opt_ntg_add_rows adds the PC edges of every product for the piece's
 * rows (each row of the matrix in exactly one piece, in any order),
 * opt_ntg_end merges them into g and frees the builder, whatever its
 * outcome; opt_ntg_abandon frees it without a graph (NULL-safe).  The
 * graph is exactly opt_ntg_build's on the whole matrix.                   */
typedef struct opt_ntg_builder opt_ntg_builder;
deso_err opt_ntg_begin(const opt_ntg_call *calls, int ncalls, int nvec,
                       int64_t n, const opt_ntg_opts *o, opt_ntg_builder **b);
deso_err opt_ntg_add_rows(opt_ntg_builder *b, const pl_csr *piece);
deso_err opt_ntg_end(opt_ntg_builder *b, opt_ntg *g);
void opt_ntg_abandon(opt_ntg_builder *b);

/* K-way partition (METIS_PartGraphKway, edge-cut objective, one balance
 * constraint per vector so that every vector is spread evenly, 3%
 * tolerance, fixed seed): vpart[nvtx].                                    */
deso_err opt_ntg_partition(const opt_ntg *g, int nparts, int32_t *vpart);

/* Vector vec's entries' ranks from the vertex partition: owner[n].       */
void opt_ntg_owners(const opt_ntg *g, const int32_t *vpart, int vec,
                    int32_t *owner);

void opt_ntg_free(opt_ntg *g);                     /* NULL-safe           */

/* ---- comparing placements of a product (ntg_cost.c) --------------------- */

/* One product y = A x with row i computed where y_i lives (rows map) and
 * x_j read where it lives (cols map).  Halo counts as deso_stats counts
 * point-to-point traffic (summed over ranks); time = the busiest rank's
 * alpha * messages + beta * bytes received, plus sec_per_nnz times the
 * largest number of nonzeros one rank multiplies.                        */
typedef struct opt_sparse_cost {
    int64_t halo_bytes, halo_msgs;
    int64_t max_rank_bytes, max_rank_msgs;
    int64_t max_rank_nnz, max_rank_rows;
    double time;
} opt_sparse_cost;

deso_err opt_sparse_cost_eval(const pl_csr *a, const pl_owner *rows,
                              const pl_owner *cols, int nparts,
                              const opt_params *prm, double sec_per_nnz,
                              opt_sparse_cost *c);

/* The same count from the rows a piece at a time (each row in exactly
 * one piece, in any order): a tally of ncols columns over nparts ranks,
 * the pieces' rows added with the placement's maps, then the cost (which
 * frees the tally, whatever its outcome; opt_sparse_tally_free frees it
 * without one, NULL-safe).  It keeps every rank's load and the distinct
 * (receiver, column) pairs of the halo, not the rows.                    */
typedef struct opt_sparse_tally opt_sparse_tally;
deso_err opt_sparse_tally_begin(int64_t ncols, int nparts,
                                opt_sparse_tally **t);
deso_err opt_sparse_tally_rows(opt_sparse_tally *t, const pl_csr *piece,
                               const pl_owner *rows, const pl_owner *cols);
deso_err opt_sparse_tally_end(opt_sparse_tally *t, const opt_params *prm,
                              double sec_per_nnz, opt_sparse_cost *c);
void opt_sparse_tally_free(opt_sparse_tally *t);

/* Bytes and messages of moving a vector of n entries from placement
 * `from` to placement `to` (ranks of each entry in [0, nparts)), added
 * into c's halo counts, and the busiest receiver's alpha-beta time into
 * c->time: what mixing vectors placed differently costs.                 */
deso_err opt_sparse_move_cost(const int32_t *from, const int32_t *to,
                              int64_t n, int nparts, const opt_params *prm,
                              opt_sparse_cost *c);

/* Whether placement a is to be kept over b: strictly cheaper modelled
 * time (a tie keeps b, the row blocks, which need no index tables).      */
int opt_sparse_cheaper(const opt_sparse_cost *a, const opt_sparse_cost *b);

#endif
