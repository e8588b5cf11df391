/* Options: code first, then the environment, then defaults.  A field the
 * caller set (non-zero) wins over DESO_* variables, which win over the
 * defaults (mode none, the most square grid with rows >= columns, nb 64,
 * 4096 nodes, no wisdom,
 * trace or log, quiet, no memory limit, matrices of up to 32 MiB
 * replicable).  This is one rank's view: options_agree.c makes
 * it the same on every rank.                                               */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"

static deso_err parse_i64(const char *name, const char *s, int64_t lo,
                          int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    DESO_CHECK(errno == 0 && end != s && *end == '\0' && v >= lo,
               DESO_EINVAL, "%s='%s': expected an integer >= %lld", name, s,
               (long long)lo);
    *out = (int64_t)v;
    return DESO_OK;
}

static deso_err parse_grid(const char *s, int *r, int *c)
{
    char buf[64];
    DESO_CHECK(strlen(s) < sizeof buf, DESO_EINVAL, "DESO_GRID too long");
    strcpy(buf, s);
    char *x = strchr(buf, 'x');
    if (x == NULL) x = strchr(buf, 'X');
    DESO_CHECK(x != NULL, DESO_EINVAL,
               "DESO_GRID='%s': expected RxC, e.g. 2x3", s);
    *x = '\0';
    int64_t a, b;
    DESO_TRY(parse_i64("DESO_GRID rows", buf, 1, &a));
    DESO_TRY(parse_i64("DESO_GRID columns", x + 1, 1, &b));
    DESO_CHECK(a <= 1 << 20 && b <= 1 << 20, DESO_EINVAL,
               "DESO_GRID='%s': too large", s);
    *r = (int)a;
    *c = (int)b;
    return DESO_OK;
}

static deso_err parse_mode(const char *s, deso_mode *m)
{
    opt_mode om;
    if (opt_mode_parse(s, &om) != DESO_OK)
        return deso__fail(DESO_EINVAL, "DESO_OPT='%s': expected none, "
                          "affine or full", s);
    *m = om == OPT_NONE ? DESO_MODE_NONE
                        : om == OPT_AFFINE ? DESO_MODE_AFFINE : DESO_MODE_FULL;
    return DESO_OK;
}

/* A file name from the caller or the environment: NULL or empty is unset;
 * longer than DESO__PATH_MAX - 1 is refused (it travels between ranks in
 * a fixed buffer).                                                         */
static deso_err take_path(const char *given, const char *var,
                          const char **out)
{
    const char *e = given;
    if (e == NULL) e = getenv(var);
    if (e != NULL && *e == '\0') e = NULL;
    DESO_CHECK(e == NULL || strlen(e) < DESO__PATH_MAX, DESO_EINVAL,
               "%s: a name of %zu characters (at most %d)", var, strlen(e),
               DESO__PATH_MAX - 1);
    *out = e;
    return DESO_OK;
}

/* A size in bytes: digits, then at most one of K, M, G, T (powers of
 * 1024, either case) and nothing else; "0" is no limit.  Strict, so that
 * a typo ("2 G", "2GB", "1.5G") is refused instead of read as something
 * else.                                                                  */
static deso_err parse_size(const char *name, const char *s, int64_t *out)
{
    const char *p = s;
    int64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        DESO_CHECK(v <= (INT64_MAX - (*p - '0')) / 10, DESO_EINVAL,
                   "%s='%s': too large", name, s);
        v = v * 10 + (*p++ - '0');
    }
    static const char units[] = "KMGTkmgt";
    int shift = 0;
    const char *u = p != s && *p != '\0' ? strchr(units, *p) : NULL;
    if (u != NULL) {
        shift = 10 * (int)((u - units) % 4 + 1);
        p++;
    }
    DESO_CHECK(p != s && *p == '\0', DESO_EINVAL,
               "%s='%s': expected a size in bytes, optionally with K, M, G "
               "or T (e.g. 512M, 2G)", name, s);
    DESO_CHECK(v <= INT64_MAX >> shift, DESO_EINVAL, "%s='%s': too large",
               name, s);
    *out = v << shift;
    return DESO_OK;
}

/* The memory budget (per rank, never agreed: options_agree.c) and the
 * directory of the local array files (default $TMPDIR, else /tmp).     */
static deso_err resolve_memory(deso_options *o)
{
    const char *e;
    if (o->mem_limit == 0 && (e = getenv("DESO_MEM_LIMIT")) && *e) {
        DESO_TRY(parse_size("DESO_MEM_LIMIT", e, &o->mem_limit));
        if (o->mem_limit == 0) o->mem_limit = -1;
    }
    if (o->mem_limit <= 0) o->mem_limit = -1;
    DESO_TRY(take_path(o->ooc_dir, "DESO_OOC_DIR", &o->ooc_dir));
    if (o->ooc_dir == NULL) DESO_TRY(take_path(NULL, "TMPDIR", &o->ooc_dir));
    if (o->ooc_dir == NULL) o->ooc_dir = "/tmp";
    return DESO_OK;
}

/* The largest matrix the optimiser may replicate (DESO_REPLICATE_MAX):
 * 32 MiB by default, small beside a node's memory and far above the
 * matrices whose products replication makes faster; -1: never.          */
static deso_err resolve_replicate(deso_options *o)
{
    const char *e;
    if (o->replicate_max == 0 && (e = getenv("DESO_REPLICATE_MAX")) && *e) {
        DESO_TRY(parse_size("DESO_REPLICATE_MAX", e, &o->replicate_max));
        if (o->replicate_max == 0) o->replicate_max = -1;
    }
    if (o->replicate_max == 0) o->replicate_max = (int64_t)32 << 20;
    if (o->replicate_max < 0) o->replicate_max = -1;
    return DESO_OK;
}

/* Sparse matrices' placement (DESO_PARTITION) and the trace graph's
 * L_SCALING (DESO_NTG_L_SCALING: a number in [0, 1e6], so that l = L p
 * stays far inside 64 bits).                                             */
static deso_err resolve_partition(deso_options *o)
{
    const char *e;
    if (o->partition == DESO_PARTITION_DEFAULT &&
        (e = getenv("DESO_PARTITION")) && *e) {
        if (strcmp(e, "auto") == 0) o->partition = DESO_PARTITION_AUTO;
        else if (strcmp(e, "block") == 0) o->partition = DESO_PARTITION_BLOCK;
        else if (strcmp(e, "ntg") == 0) o->partition = DESO_PARTITION_NTG;
        else return deso__fail(DESO_EINVAL, "DESO_PARTITION='%s': expected "
                               "auto, block or ntg", e);
    }
    if (o->partition == DESO_PARTITION_DEFAULT)
        o->partition = DESO_PARTITION_AUTO;
    DESO_CHECK(o->partition >= DESO_PARTITION_AUTO &&
                   o->partition <= DESO_PARTITION_NTG,
               DESO_EINVAL, "deso_options.partition: unknown value %d",
               (int)o->partition);
    const char *from = "deso_options.l_scaling";
    if (o->l_scaling == 0.0 && (e = getenv("DESO_NTG_L_SCALING")) && *e) {
        char *end;
        errno = 0;
        o->l_scaling = strtod(e, &end);
        DESO_CHECK(errno == 0 && end != e && *end == '\0', DESO_EINVAL,
                   "DESO_NTG_L_SCALING='%s': expected a number", e);
        from = "DESO_NTG_L_SCALING";
    }
    DESO_CHECK(o->l_scaling >= 0.0 && o->l_scaling <= 1e6, DESO_EINVAL,
               "%s = %g (expected 0 <= L_SCALING <= 1e6)", from, o->l_scaling);
    return DESO_OK;
}

/* DESO_VERBOSE: unset, empty or 0 is quiet, anything else explains.      */
static int env_verbose(void)
{
    const char *e = getenv("DESO_VERBOSE");
    return e != NULL && *e != '\0' && strcmp(e, "0") != 0 ? 1 : -1;
}

/* DESO_MEASURE_COLLECTIVES: unset, empty or 0 prices collectives by the
 * formula; anything else measures them.                                  */
static int env_measure_collectives(void)
{
    const char *e = getenv("DESO_MEASURE_COLLECTIVES");
    return e != NULL && *e != '\0' && strcmp(e, "0") != 0 ? 1 : -1;
}

/* DESO_REPLAY: unset, empty or anything but 0 replays iterations.       */
static int env_replay(void)
{
    const char *e = getenv("DESO_REPLAY");
    return e != NULL && strcmp(e, "0") == 0 ? -1 : 1;
}

/* DESO_REMAP_SHM: unset, empty or anything but 0 puts the runtime's
 * matrix remaps on shared memory where it can.                           */
static int env_remap_shm(void)
{
    const char *e = getenv("DESO_REMAP_SHM");
    return e != NULL && strcmp(e, "0") == 0 ? -1 : 1;
}

deso_err deso__options_resolve(const deso_options *in, int P,
                               deso_options *out, pl_grid *grid)
{
    deso_options o;
    if (in != NULL) o = *in;
    else deso_options_default(&o);
    const char *e;
    if (o.mode == DESO_MODE_DEFAULT && (e = getenv("DESO_OPT")) && *e)
        DESO_TRY(parse_mode(e, &o.mode));
    if (o.mode == DESO_MODE_DEFAULT) o.mode = DESO_MODE_NONE;
    DESO_CHECK(o.mode >= DESO_MODE_NONE && o.mode <= DESO_MODE_FULL,
               DESO_EINVAL, "deso_options.mode: unknown mode %d",
               (int)o.mode);
    const char *grid_from = "deso_options.grid_rows, grid_cols";
    if (o.grid_rows == 0 && o.grid_cols == 0 && (e = getenv("DESO_GRID")) &&
        *e) {
        DESO_TRY(parse_grid(e, &o.grid_rows, &o.grid_cols));
        grid_from = "DESO_GRID";
    }
    DESO_CHECK(o.grid_rows >= 0 && o.grid_cols >= 0, DESO_EINVAL,
               "%s: negative grid extent %d x %d", grid_from, o.grid_rows,
               o.grid_cols);
    if (o.nb == 0 && (e = getenv("DESO_NB")) && *e) {
        if (strcmp(e, "block") == 0) o.nb = DESO_NB_BLOCK;
        else DESO_TRY(parse_i64("DESO_NB", e, 1, &o.nb));
    }
    if (o.nb == 0) o.nb = 64;
    DESO_CHECK(o.nb > 0 || o.nb == DESO_NB_BLOCK, DESO_EINVAL,
               "deso_options.nb = %lld (expected > 0 or DESO_NB_BLOCK)",
               (long long)o.nb);
    DESO_TRY(take_path(o.wisdom, "DESO_WISDOM", &o.wisdom));
    DESO_TRY(take_path(o.trace, "DESO_TRACE", &o.trace));
    DESO_TRY(take_path(o.log, "DESO_LOG", &o.log));
    if (o.log != NULL && strcmp(o.log, "0") == 0) o.log = NULL;
    if (o.verbose == 0) o.verbose = env_verbose();
    o.verbose = o.verbose > 0 ? 1 : -1;
    if (o.measure_collectives == 0)
        o.measure_collectives = env_measure_collectives();
    o.measure_collectives = o.measure_collectives > 0 ? 1 : -1;
    if (o.replay == 0) o.replay = env_replay();
    o.replay = o.replay > 0 ? 1 : -1;
    if (o.remap_shm == 0) o.remap_shm = env_remap_shm();
    o.remap_shm = o.remap_shm > 0 ? 1 : -1;
    if (o.max_nodes == 0 && (e = getenv("DESO_MAX_NODES")) && *e)
        DESO_TRY(parse_i64("DESO_MAX_NODES", e, 1, &o.max_nodes));
    if (o.max_nodes == 0) o.max_nodes = 4096;
    DESO_CHECK(o.max_nodes > 0, DESO_EINVAL,
               "deso_options.max_nodes = %lld (expected > 0)",
               (long long)o.max_nodes);
    DESO_TRY(resolve_memory(&o));
    DESO_TRY(resolve_replicate(&o));
    DESO_TRY(resolve_partition(&o));
    bool square = o.grid_rows == 0 && o.grid_cols == 0;
    deso_err e2 = pl_grid_2d(P, o.grid_rows, o.grid_cols, grid);
    if (e2 != DESO_OK)
        return deso__fail(e2, "%s: grid %dx%d does not fit %d ranks",
                          grid_from, o.grid_rows, o.grid_cols, P);
    /* The default is the most square grid with rows >= columns: solvers
     * apply their matrix mostly as A x, whose partial sums are reduced
     * along grid rows, so the smaller extent there (a 2x1 grid needs no
     * reduction at all, only x gathered, as PETSc's row split)           */
    if (square && grid->dims[0] < grid->dims[1]) {
        int t = grid->dims[0];
        grid->dims[0] = grid->dims[1];
        grid->dims[1] = t;
    }
    o.grid_rows = grid->dims[0];
    o.grid_cols = grid->dims[1];
    *out = o;
    return DESO_OK;
}

void deso_options_default(deso_options *opt)
{
    if (opt != NULL) memset(opt, 0, sizeof *opt);
}

const char *deso_mode_name(deso_mode mode)
{
    switch (mode) {
    case DESO_MODE_DEFAULT: return "default";
    case DESO_MODE_NONE: return "none";
    case DESO_MODE_AFFINE: return "affine";
    case DESO_MODE_FULL: return "full";
    }
    return "?";
}
