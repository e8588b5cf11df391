/* optimizer/: chooses the placement of every value in a DAG.  Pure, no MPI:
 * the same inputs give the same placements on every rank.
 *
 * This header holds the modes, the default layouts of values the user
 * creates, and mode none's placement of one node: paper 003's unoptimised
 * layout on a 2-D grid (matrices cyclic(nb) x cyclic(nb); vectors cyclic(nb)
 * over grid columns and replicated over grid rows, except a gemv N result,
 * folded over rows with A's row blocks and replicated over columns; scalars
 * replicated everywhere), then the operation's constraints.  The executor
 * uses opt_place_node for a node no plan covers; opt_plan_none and the
 * candidates of modes affine and full (opt_cands.c) start from it.  The
 * plans themselves, in every mode, come from opt_search (opt_graph.h); see
 * doc/DESIGN.md, "Optimiser modes".                                       */
#ifndef DESO_OPTIMIZER_H
#define DESO_OPTIMIZER_H

#include <stdint.h>

#include "blas/blas.h"

typedef enum opt_mode {
    OPT_NONE = 0,
    OPT_AFFINE,
    OPT_FULL
} opt_mode;

typedef struct opt_defaults {
    opt_mode mode;
    int pr, pc;       /* grid shape                                        */
    int64_t nb;       /* block size of default placements (0: block)       */
    int64_t replicate_max; /* bytes: a product's in-core matrix of at most
                            * this many may be made whole on every rank
                            * (mode full; 0: never)                       */
} opt_defaults;

/* Default placements of values created by the user.                        */
blas_layout opt_default_vec(const opt_defaults *df, int64_t n);
blas_layout opt_default_mat(const opt_defaults *df, int64_t m, int64_t n);
blas_layout opt_default_sca(const opt_defaults *df);

/* Placements for one node: its result's (*result) and those its operands
 * must have when it runs (req[0 .. d->nops)), given the operands' current
 * placements.  Errors from the operation's constraint function.           */
deso_err opt_place_node(const opt_defaults *df, const blas_desc *d,
                        const blas_layout *cur, blas_layout *result,
                        blas_layout *req);

/* "none" | "affine" | "full" <-> mode.  Errors: DESO_EINVAL.              */
deso_err opt_mode_parse(const char *s, opt_mode *out);
const char *opt_mode_name(opt_mode m);

#endif
