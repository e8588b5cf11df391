/* Agreeing a context's options across its ranks (deso_init).
 *
 * Each rank resolves its own options (options.c) from the caller's
 * deso_options, its own environment and the defaults.  Those can differ,
 * since a launcher does not always give every rank the same environment,
 * and ranks that disagree on the grid, the mode or the DAG bound would
 * wait in collectives the others never make.  So, once:
 *   1. rank 0 broadcasts its values (the numbers, then any file names);
 *   2. one agreement (agree.h) carries, per field, whether some rank's
 *      value differs from rank 0's, and the lowest rank whose own options
 *      were invalid, whose error then becomes every rank's;
 *   3. otherwise every rank takes rank 0's values, and rank 0 prints one
 *      warning per field that differed.
 * Like the alpha-beta probe these calls set the context up and are not
 * counted in the statistics.                                               */
#include <stdio.h>
#include <string.h>

#include "deso/core/agree.h"
#include "deso/core/mpi.h"
#include "deso/runtime/runtime.h"

enum { F_MODE, F_GRID, F_NB, F_MAX_NODES, F_VERBOSE, F_PARTITION,
       F_L_SCALING, F_MEASURE, F_REPLAY, F_REMAP_SHM, F_REPLICATE, F_WISDOM,
       F_TRACE, F_LOG, NFIELDS };

static const char *const field_name[NFIELDS] = {
    "DESO_OPT (deso_options.mode)",
    "DESO_GRID (deso_options.grid_rows, grid_cols)",
    "DESO_NB (deso_options.nb)",
    "DESO_MAX_NODES (deso_options.max_nodes)",
    "DESO_VERBOSE (deso_options.verbose)",
    "DESO_PARTITION (deso_options.partition)",
    "DESO_NTG_L_SCALING (deso_options.l_scaling)",
    "DESO_MEASURE_COLLECTIVES (deso_options.measure_collectives)",
    "DESO_REPLAY (deso_options.replay)",
    "DESO_REMAP_SHM (deso_options.remap_shm)",
    "DESO_REPLICATE_MAX (deso_options.replicate_max)",
    "DESO_WISDOM (deso_options.wisdom)",
    "DESO_TRACE (deso_options.trace)",
    "DESO_LOG (deso_options.log)",
};

enum { N_MODE, N_ROWS, N_COLS, N_NB, N_MAX_NODES, N_VERBOSE, N_PARTITION,
       N_L_SCALING, N_MEASURE, N_REPLAY, N_REMAP_SHM, N_REPLICATE, N_WISDOM,
       N_TRACE, N_LOG, NNUMS };

/* The numbers of o, and the lengths (with the NUL; 0: unset) of its
 * names, which follow each other in names.                               */
static void pack(const deso_options *o, int64_t *num, char *names)
{
    num[N_MODE] = o->mode;
    num[N_ROWS] = o->grid_rows;
    num[N_COLS] = o->grid_cols;
    num[N_NB] = o->nb;
    num[N_MAX_NODES] = o->max_nodes;
    num[N_VERBOSE] = o->verbose;
    num[N_PARTITION] = o->partition;
    memcpy(&num[N_L_SCALING], &o->l_scaling, sizeof o->l_scaling);  /* bits */
    num[N_MEASURE] = o->measure_collectives;
    num[N_REPLAY] = o->replay;
    num[N_REMAP_SHM] = o->remap_shm;
    num[N_REPLICATE] = o->replicate_max;
    const char *s[3] = { o->wisdom, o->trace, o->log };
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        size_t len = s[k] != NULL ? strlen(s[k]) + 1 : 0;
        num[N_WISDOM + k] = (int64_t)len;
        if (len > 0) memcpy(names + at, s[k], len);
        at += len;
    }
}

/* The inverse: o's names point into names.                                */
static void unpack(const int64_t *num, char *names, deso_options *o)
{
    o->mode = (deso_mode)num[N_MODE];
    o->grid_rows = (int)num[N_ROWS];
    o->grid_cols = (int)num[N_COLS];
    o->nb = num[N_NB];
    o->max_nodes = num[N_MAX_NODES];
    o->verbose = (int)num[N_VERBOSE];
    o->partition = (deso_partition)num[N_PARTITION];
    memcpy(&o->l_scaling, &num[N_L_SCALING], sizeof o->l_scaling);
    o->measure_collectives = (int)num[N_MEASURE];
    o->replay = (int)num[N_REPLAY];
    o->remap_shm = (int)num[N_REMAP_SHM];
    o->replicate_max = num[N_REPLICATE];
    const char **s[3] = { &o->wisdom, &o->trace, &o->log };
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        size_t len = (size_t)num[N_WISDOM + k];
        *s[k] = len > 0 ? names + at : NULL;
        at += len;
    }
}

static int same_name(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Which fields of mine differ from rank 0's.                             */
static void compare(const deso_options *mine, const deso_options *zero,
                    int64_t *diff)
{
    diff[F_MODE] = mine->mode != zero->mode;
    diff[F_GRID] = mine->grid_rows != zero->grid_rows ||
                   mine->grid_cols != zero->grid_cols;
    diff[F_NB] = mine->nb != zero->nb;
    diff[F_MAX_NODES] = mine->max_nodes != zero->max_nodes;
    diff[F_VERBOSE] = mine->verbose != zero->verbose;
    diff[F_PARTITION] = mine->partition != zero->partition;
    diff[F_L_SCALING] = mine->l_scaling != zero->l_scaling;
    diff[F_MEASURE] = mine->measure_collectives != zero->measure_collectives;
    diff[F_REPLAY] = mine->replay != zero->replay;
    diff[F_REMAP_SHM] = mine->remap_shm != zero->remap_shm;
    diff[F_REPLICATE] = mine->replicate_max != zero->replicate_max;
    diff[F_WISDOM] = !same_name(mine->wisdom, zero->wisdom);
    diff[F_TRACE] = !same_name(mine->trace, zero->trace);
    diff[F_LOG] = !same_name(mine->log, zero->log);
}

static void warn(const int64_t *diff, const deso_options *zero)
{
    for (int k = 0; k < NFIELDS; k++) {
        if (!diff[k]) continue;
        char val[64];
        switch (k) {
        case F_MODE: snprintf(val, sizeof val, "%s",
                              deso_mode_name(zero->mode)); break;
        case F_GRID: snprintf(val, sizeof val, "%dx%d", zero->grid_rows,
                              zero->grid_cols); break;
        case F_NB:
            if (zero->nb == DESO_NB_BLOCK) snprintf(val, sizeof val, "block");
            else snprintf(val, sizeof val, "%lld", (long long)zero->nb);
            break;
        case F_MAX_NODES: snprintf(val, sizeof val, "%lld",
                                   (long long)zero->max_nodes); break;
        case F_VERBOSE: snprintf(val, sizeof val, "%s",
                                 zero->verbose > 0 ? "on" : "off"); break;
        case F_PARTITION: snprintf(val, sizeof val, "%s",
                                   zero->partition == DESO_PARTITION_BLOCK
                                       ? "block"
                                   : zero->partition == DESO_PARTITION_NTG
                                       ? "ntg" : "auto"); break;
        case F_L_SCALING: snprintf(val, sizeof val, "%g", zero->l_scaling);
                          break;
        case F_MEASURE: snprintf(val, sizeof val, "%s",
                                 zero->measure_collectives > 0 ? "measured"
                                                               : "formula");
                        break;
        case F_REPLAY: snprintf(val, sizeof val, "%s",
                                zero->replay > 0 ? "on" : "off"); break;
        case F_REMAP_SHM: snprintf(val, sizeof val, "%s",
                                   zero->remap_shm > 0 ? "on" : "0: MPI");
                          break;
        case F_REPLICATE: snprintf(val, sizeof val, "%lld",
                                   (long long)zero->replicate_max); break;
        default: {
            const char *s = k == F_WISDOM ? zero->wisdom
                            : k == F_TRACE ? zero->trace : zero->log;
            snprintf(val, sizeof val, "%s", s != NULL ? s : "unset");
        }
        }
        fprintf(stderr, "deso: warning: %s differs between ranks; every "
                        "rank uses rank 0's value (%s)\n", field_name[k], val);
    }
}

deso_err deso__options_agree(MPI_Comm comm, deso_err local, deso_options *o,
                             char *names)
{
    static const char *fn = "deso_init";
    int me = 0;
    MPI_Comm_rank(comm, &me);
    int64_t num[NNUMS];
    memset(num, 0, sizeof num);
    if (me == 0 && local == DESO_OK) pack(o, num, names);
    int rc = MPI_Bcast(num, NNUMS, MPI_INT64_T, 0, comm);
    int64_t total = num[N_WISDOM] + num[N_TRACE] + num[N_LOG];
    if (rc == MPI_SUCCESS && total > 0)
        rc = MPI_Bcast(names, (int)total, MPI_CHAR, 0, comm);
    if (rc != MPI_SUCCESS)
        return deso__mpi_at(rc, fn, "MPI_Bcast of rank 0's options");
    deso_options zero;
    memset(&zero, 0, sizeof zero);
    unpack(num, names, &zero);
    int64_t diff[NFIELDS] = { 0 };
    if (local == DESO_OK) compare(o, &zero, diff);
    DESO_TRY(deso__agree(comm, fn, local, diff, NFIELDS));
    if (me == 0) warn(diff, &zero);
    *o = zero;
    return DESO_OK;
}
