/* Internal: the I/O layer's entry points used above it (deso/context.c):
 * wisdom files and the performance log at the ends of a run.  Matrix
 * Market files (mtx.h) and ScaLAPACK interop are reached through the
 * public API only.                                                         */
#ifndef DESO_IO_H
#define DESO_IO_H

#include <stdbool.h>

#include "deso/runtime/runtime.h"

/* The run's wisdom config (version, P, grid, calibration).                */
opt_wisdom_config deso__wisdom_config(const deso_ctx *ctx);
/* Import: quiet = true ignores a missing file silently (DESO_WISDOM's
 * first run).  Rank 0 reads, then broadcasts.  Collective.                */
deso_err deso__wisdom_load(deso_ctx *ctx, const char *path, bool quiet);
/* Export: rank 0 writes a temporary file and renames it.  Collective.     */
deso_err deso__wisdom_save(deso_ctx *ctx, const char *path);

/* At deso_finalize: deso_log_view(ctx, ...) when the agreed DESO_LOG
 * option asks for it.  Collective.                                         */
void deso__log_finalize(deso_ctx *ctx);

/* Global matrix files: the most local elements one slab of
 * deso_mat_to_file / deso_mat_from_file moves (elems outside 1 .. the
 * default restores the default, 2^26).  Not collective, but every rank
 * must set the same value before a file call.                            */
void deso__matfile_slab_limit(int64_t elems);

/* Matrix Market array files: the most doubles one unit of columns
 * deso_mat_from_mtx parses on rank 0 holds (doubles outside 1 .. the
 * default restores the default, 2^22), so that small matrices cross many
 * units in core too.  Only rank 0's value counts.  Local.                 */
void deso__mtx_unit_limit(int64_t doubles);

#endif
