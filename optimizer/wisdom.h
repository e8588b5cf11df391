/* optimizer/: the wisdom format.  Optimised plans, keyed by the structural
 * key of their DAG, plus the calibrated cost model, as versioned,
 * check-summed, line-oriented text, after FFTW's wisdom.
 * Pure, no MPI and no files: deso/ reads the file on rank 0, broadcasts the
 * bytes, parses them here on every rank, and has rank 0 write what
 * opt_wisdom_write returns through a temporary file and rename.
 *
 * The format, version 3 (one space between fields, "\n" after every line,
 * nothing after the end line):
 *
 *   deso-wisdom 3
 *   config <version> <P> <pr>x<pc> <calibrated 0|1> <alpha> <beta> <io_beta>
 *   collectives <c_1> ... <c_18>
 *   plan <key> <nnodes> <hits>
 *   node <kind> <m> <n> <dist> <b> <nb> <rep> <pr> <pc> <variant>
 *   ...                                   (nnodes node lines per plan)
 *   end <nplans> <crc>
 *
 *   version   the library version, 1..31 characters of [A-Za-z0-9._+-]
 *   alpha     seconds per message, beta seconds per byte, io_beta seconds
 *             per byte read from an out-of-core matrix's local array file
 *             (0 when no rank had a memory budget): C99 hexadecimal
 *             floats as glibc's "%a" prints them ("0x1.4f8b588e368f1p-17",
 *             "0x0p+0"), so doubles survive bit-exactly.  deso formats and
 *             scans them itself, so the file does not depend on the locale
 *   c_i       the measured collectives (optimizer/opt_graph.h's opt_params
 *             coll): for all-reduce, reduce and broadcast in turn, on a
 *             grid column, a grid row and every rank in turn, seconds per
 *             call and per byte (zeros: not measured), hexadecimal floats
 *             as above
 *   key       the plan's structural key, 16 lower-case hex digits
 *   kind      vec | mat | sca (names, not enum values, so reordering the
 *             enum cannot silently change the meaning of old files)
 *   crc       CRC-32 (IEEE 802.3, as zlib's crc32) of every byte before the
 *             "end" line, 8 lower-case hex digits
 *
 * Every field has one spelling (integers in decimal without leading zeros,
 * "+" or "-0"; floats as above), and plans appear in strictly increasing key
 * order, so a file is accepted only in the exact form opt_wisdom_write
 * produces: write(parse(text)) == text byte for byte.  That also makes a
 * duplicate key a syntax error found in one pass.
 *
 * Field ranges (the normalised layouts of blas/blas.h, on the config's grid):
 *   config: 1 <= pr, pc; pr * pc == P <= OPT_WISDOM_MAX_P; alpha, beta,
 *           io_beta and every c_i finite and >= 0 (-0 allowed);
 *   node:   pr, pc equal the config's; variant >= 0;
 *           mat: m, n >= 0, b, nb >= 1, dist -1, rep 0;
 *           vec: m 1, n >= 0, dist in {-1, 0, 1, 2}, b >= 1 if dist is 0
 *                or 1 and b 0 if dist -1, nb 0, rep <= 3; dist 2
 *                (BLAS_DIST_PART, a layout by partition) with b 0 and
 *                rep 0: the file names no partition (its ranges are in
 *                the plan's key), the rebuilt plan takes it from the
 *                graph's candidates (opt_plan_rebuild);
 *           sca: m 1, n 1, dist -1, b 0, nb 0, rep <= 3.
 * Bounds: a line holds at most OPT_WISDOM_MAX_LINE bytes before its "\n";
 * at most OPT_WISDOM_MAX_NODES nodes per plan and OPT_WISDOM_MAX_PLANS
 * plans; a plan's node count must fit in the bytes that follow it, so
 * nothing is allocated for nodes that are not there.                       */
#ifndef DESO_OPTIMIZER_WISDOM_H
#define DESO_OPTIMIZER_WISDOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blas/blas.h"

#define OPT_WISDOM_FORMAT 3
#define OPT_WISDOM_COLL 18     /* the collectives line's figures         */
#define OPT_WISDOM_VERSION_MAX 31
#define OPT_WISDOM_MAX_LINE 512
#define OPT_WISDOM_MAX_NODES 1000000
#define OPT_WISDOM_MAX_PLANS 100000
#define OPT_WISDOM_MAX_P (1 << 24)

typedef struct opt_wisdom_config {
    char version[OPT_WISDOM_VERSION_MAX + 1];  /* NUL-terminated           */
    int P, pr, pc;          /* ranks and grid shape                          */
    bool calibrated;        /* alpha and beta were measured                  */
    double alpha;           /* seconds per message                           */
    double beta;            /* seconds per byte                              */
    double io_beta;         /* seconds per byte read from a local array file */
    double coll[OPT_WISDOM_COLL];  /* the measured collectives, in order    */
} opt_wisdom_config;

/* One node of a plan: its result's layout and its kernel/communication
 * variant (e.g. reduce vs all-reduce), an opaque small integer.            */
typedef struct opt_wisdom_node {
    blas_layout lay;
    int variant;
} opt_wisdom_node;

typedef struct opt_wisdom_plan {
    uint64_t key;           /* structural key of the DAG (opaque here)       */
    uint32_t hits;          /* times replayed / improvement rounds           */
    int nnodes;
    opt_wisdom_node *nodes; /* owned by the wisdom                           */
} opt_wisdom_plan;

/* plans: sorted by strictly increasing key when built with opt_wisdom_add
 * or opt_wisdom_parse (opt_wisdom_find relies on it).                      */
typedef struct opt_wisdom {
    opt_wisdom_config config;
    int nplans;
    opt_wisdom_plan *plans; /* owned; NULL when nplans == 0                  */
} opt_wisdom;

/* An empty wisdom (all zero).  Local.                                      */
void opt_wisdom_init(opt_wisdom *w);

/* Frees everything w owns and leaves it empty.  NULL-safe.  Local.         */
void opt_wisdom_free(opt_wisdom *w);

/* Adds a copy of the plan (key, hits, nodes[0 .. nnodes)), replacing any
 * plan with the same key; keeps plans sorted.  The nodes are not validated
 * here (opt_wisdom_write does).  Local.  Errors: DESO_ENULL, DESO_ESIZE
 * (nnodes < 0 or > OPT_WISDOM_MAX_NODES, or too many plans), DESO_ENOMEM;
 * on error w is unchanged.                                                 */
deso_err opt_wisdom_add(opt_wisdom *w, uint64_t key, uint32_t hits,
                        int nnodes, const opt_wisdom_node *nodes);

/* The plan with this key, or NULL.  Binary search: w's plans must be sorted
 * (see opt_wisdom).  The pointer is valid until w is next changed.  Local. */
const opt_wisdom_plan *opt_wisdom_find(const opt_wisdom *w, uint64_t key);

/* Whether a wisdom made under config `file` may be used under `run`: same
 * library version, P and grid (the cost parameters are data, not a
 * condition).  Local.                                                      */
bool opt_wisdom_config_matches(const opt_wisdom_config *file,
                               const opt_wisdom_config *run);

/* Whether a and b hold the same config (doubles compared bit for bit) and
 * the same plans in the same order.  Local.                                */
bool opt_wisdom_equal(const opt_wisdom *a, const opt_wisdom *b);

/* Serialises w into a new NUL-terminated string of exactly *len bytes
 * (allocated len + 1; the caller frees it with free()).  Plans are written
 * in key order whatever their order in w.  Counts, then writes, so the
 * allocation is exact (FFTW export-wisdom-to-string).  Local.
 * Errors: DESO_ENULL; DESO_EINVAL for a config or node outside the ranges
 * above, or two plans with one key (deso_last_error names it);
 * DESO_ENOMEM.  On error *text is NULL and *len 0.                        */
deso_err opt_wisdom_write(const opt_wisdom *w, char **text, size_t *len);

/* Parses text[0 .. len) (need not be NUL-terminated; NUL bytes are an
 * error) into *out, which is overwritten, not freed: pass an empty or
 * uninitialised wisdom.  Transactional: either the whole file is accepted
 * or *out is left empty (all zero).
 *   DESO_OK, *ignored = 0: *out holds the file's config and plans.
 *   DESO_OK, *ignored = 1: a file the library cannot use but that is not
 *     corrupt: another format version ("deso-wisdom 2"; *out all zero), or
 *     a well-formed file whose config does not match *expect
 *     (opt_wisdom_config_matches; *out holds the file's config, no plans).
 *   DESO_EWISDOM: any syntax error, bad checksum, truncation, overlong
 *     line, NUL or other control byte, count beyond the bounds or the bytes
 *     present, field out of range, duplicate or unsorted key, bytes after
 *     the end line.  deso_last_error() names the line and the reason.
 *   DESO_ENULL (out NULL, or text NULL with len > 0), DESO_ENOMEM.
 * expect may be NULL (accept any config); ignored may be NULL.  Local.     */
deso_err opt_wisdom_parse(const char *text, size_t len,
                          const opt_wisdom_config *expect, opt_wisdom *out,
                          int *ignored);

/* CRC-32 (IEEE, zlib's crc32) of data[0 .. len).  Local.                   */
uint32_t opt_wisdom_crc32(const void *data, size_t len);

#endif
