/* Internal to optimizer/: helpers its files share.                        */
#ifndef DESO_OPT_IMPL_H
#define DESO_OPT_IMPL_H

#include "optimizer/opt_graph.h"

/* A plan for nnodes nodes, zeroed, fuse groups -1.                         */
deso_err opt__plan_alloc(opt_plan *p, int nnodes);

/* The primary layouts of node i's operands under plan p (live-in values:
 * their primary layout; produced values: their producer's result).       */
void opt__cur_ops(const opt_graph *g, const opt_plan *p, int i,
                  blas_layout *cur);

/* The layouts mode `mode` lets a value of this kind take (at most 4).      */
int opt__layouts(const opt_graph *g, opt_mode mode, blas_kind kind,
                 int64_t n, blas_layout *out);

/* ceil(log2 p) for p >= 1.                                                 */
int opt__log2c(int p);

#endif
