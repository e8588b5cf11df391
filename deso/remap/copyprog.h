/* deso/remap/copyprog.h: copy programs, the compiled form of a remap's runs
 * (internal).  Pure computation, no MPI: shared by the remap's MPI
 * transport (remap.c) and its shared-memory one (remap_shm.c).         */
#ifndef DESO_COPYPROG_H
#define DESO_COPYPROG_H

#include <stdbool.h>
#include <stdint.h>

#include "placement/deso_errors.h"
#include "placement/remap.h"

/* A copy program: pairs of runs (side a -> side b), single elements at a
 * constant stride merged into strided items, compressed into periodic
 * groups.  Group g repeats its k items reps times, shifting the
 * offsets by (da, db) each time; block-cyclic run lists are periodic, so a
 * few groups replace millions of runs and execution reads almost no
 * metadata.  Offsets are in the planner's coordinates (ld = local rows);
 * a packed buffer is one side with unbounded rows.                        */
/* Side a may address several arrays: an offset's bits from DESO__CP_WBIT
 * up number the array (0, 1, ...), the rest is the offset in it.  Nothing
 * merges, strides or repeats from one array into another, so that
 * deso__cp_resolve can turn such a program into one over a single base. */
#define DESO__CP_WBIT 40

/* Longest period (in elements) that compile turns into an element table
 * and a run copies element by element through it.                        */
#define DESO__CP_EMAX 512

typedef struct deso__cp_item {
    int64_t a, b, len;     /* len elements: a + x sa -> b + x sb           */
    int64_t sa, sb;        /* 1, 1 for a contiguous run                    */
} deso__cp_item;

typedef struct deso__cp_group {
    int64_t first;         /* index of its first item                      */
    int64_t k, reps;       /* items per repetition, repetitions            */
    int64_t da, db;        /* offset shift per repetition                  */
    int64_t e0, ne;        /* ne > 0: the repetition's elements, one by    */
                           /* one, at ea[e0 ..], eb[e0 ..] (short runs)    */
    int seq;               /* 1: ea counts up by one (a packed side), 2: eb */
} deso__cp_group;

/* A third level, the periods of a matrix message's columns: groups [g0,
 * g1) (a column's row program) repeated reps times, shifted by (da, db)
 * each time.  Loops nest, for the dimensions of a d-dimensional message
 * (each dimension's pieces, progressions and periods a loop of the
 * faster ones): lp[li + 1 .. end) are the loops inside loop li, stored
 * after it in order, and they partition its groups; a loop with none
 * inside (end = li + 1) runs its groups.  up: the loop it is inside, -1
 * at the top.  The loops at the top partition the groups in order; a
 * program without any (nloops = 0) is one loop of all its groups, run
 * once.                                                                */
typedef struct deso__cp_loop {
    int64_t g0, g1, reps;
    int64_t da, db;
    int64_t end, up;
} deso__cp_loop;

/* Deepest nesting of loops a program may have.                          */
#define DESO__CP_DEPTH 16

typedef struct deso__copy {
    int64_t ngroups, nitems, elems;
    deso__cp_group *g;
    deso__cp_item *it;
    int64_t nloops;        /* 0: one loop of every group, once            */
    deso__cp_loop *lp;
    int64_t nelem;         /* length of ea and eb                          */
    int64_t *ea, *eb;      /* element offsets of expanded groups           */
} deso__copy;

/* Compiles n items (reordered and consumed as scratch) into *out:
 * contiguous and constant-stride neighbours merged, then periodic groups
 * found greedily.  Errors: DESO_ENOMEM (*out left empty).                  */
deso_err deso__cp_compile(deso__cp_item *it, int64_t n, deso__copy *out);

/* As deso__cp_compile, but every periodic group of short period gets an
 * element table, long runs or not: a target written in order from the
 * tables streams whole lines across runs (deso__cp_run_stream).         */
deso_err deso__cp_compile_tables(deso__cp_item *it, int64_t n,
                                 deso__copy *out);

/* Gives the periodic groups of program `out` (groups and items set) their
 * element tables, as deso__cp_compile does; `tables` as for
 * deso__cp_compile_tables.  Errors: DESO_ENOMEM (*out freed).            */
deso_err deso__cp_tables(deso__copy *out, bool tables);

/* How a planned message's two sides map onto a program's a and b.       */
typedef enum deso__cp_role {
    DESO__CP_SEND,     /* a: this rank's source array, b: a packed buffer */
    DESO__CP_RECV,     /* a: a packed buffer, b: this rank's target array */
    DESO__CP_SELF,     /* a: the source array, b: the target array        */
    DESO__CP_PULL      /* a received message read in place: a: the        */
                       /* sender's source array, b: this rank's target    */
} deso__cp_role;

/* Compiles message m of a plan (placement/remap.h) straight from its
 * per-period rows x columns description, never spelling out its runs:
 * O(one period of rows + the message's column pieces) time and memory
 * when every column holds the same row pattern, and rows x columns
 * otherwise.  ld_mine: leading dimension of the array m's `mine` offsets
 * are in; ld_theirs: of the target (DESO__CP_SELF only).  The program
 * copies the same elements in the same order as compiling m's runs would.
 * DESO__CP_PULL: ld_mine is the target's, ld_theirs the sender's.
 * Errors: DESO_ENOMEM (*out left empty).                                 */
deso_err deso__cp_from_msg(const pl_msg *m, deso__cp_role role,
                           int64_t ld_mine, int64_t ld_theirs,
                           deso__copy *out);

/* Whether deso__cp_from_msg compiles a small program again from its
 * items spelt out (on by default; tests turn it off to run programs as
 * built, loops included).  Returns the previous setting.                */
bool deso__cp_set_recompile(bool on);

/* Makes *out a copy of c (its own groups, items and tables), to be
 * rewritten by deso__cp_resolve.  Errors: DESO_ENOMEM (*out empty).      */
deso_err deso__cp_clone(const deso__copy *c, deso__copy *out);

/* Rewrites clone `out` of c, a program whose side a numbers its arrays,
 * into one over a single base: array w's offsets shifted by delta[w]
 * elements (its distance from the base).  Allocates nothing.             */
void deso__cp_resolve(const deso__copy *c, const int64_t *delta,
                      deso__copy *out);

/* Items of program c spelt out (loops included), or -1 when more than
 * max.                                                                  */
int64_t deso__cp_spelt(const deso__copy *c, int64_t max);

/* Spells program c out into x (deso__cp_spelt(c) items), in order.      */
void deso__cp_spell(const deso__copy *c, deso__cp_item *x);

/* Replaces program c, of n = deso__cp_spelt(c) items, by those items
 * compiled again (deso__cp_compile), loops gone.  Errors: DESO_ENOMEM
 * (c freed).                                                            */
deso_err deso__cp_recompile(deso__copy *c, int64_t n);

/* Frees a program and leaves it empty; safe on an empty one.             */
void deso__cp_free(deso__copy *c);

/* Units of group gi: repetitions, or items of a literal group.            */
int64_t deso__cp_units(const deso__copy *c, int64_t gi);

/* Whether some loop of c repeats its groups (then a group's units are
 * not the program's: deso__cp_run_range and deso__cp_split do not apply). */
bool deso__cp_looped(const deso__copy *c);

/* Loop li of c (the implicit one when c has none); li < max(1, nloops).  */
deso__cp_loop deso__cp_loop_at(const deso__copy *c, int64_t li);

/* Loops of c, the implicit one counted: max(1, nloops).                 */
int64_t deso__cp_nloops(const deso__copy *c);

/* Runs units [lo, hi) of group gi between flat arrays A -> B (a program
 * without repeated loops).                                                */
void deso__cp_run_range(const deso__copy *c, int64_t gi, int64_t lo,
                        int64_t hi, const double *A, double *B);

/* Runs the whole program from array A (arows local rows, leading dimension
 * alld) to array B (brows, blld).  A packed buffer is passed with rows =
 * lld = INT64_MAX.                                                        */
void deso__cp_run(const deso__copy *c, const double *A, int64_t arows,
                  int64_t alld, double *B, int64_t brows, int64_t blld);

/* As deso__cp_run, but long contiguous runs into B (flat arrays only) are
 * written with non-temporal stores, bypassing the cache: for a large
 * target nobody reads soon.  Call deso__cp_fence before B is published.  */
void deso__cp_run_stream(const deso__copy *c, const double *A,
                         int64_t arows, int64_t alld, double *B,
                         int64_t brows, int64_t blld);

/* Whether streamed table gathers use AVX-512 gathers: on by default where
 * the processor has them; on = false forces the scalar loop (tests run
 * both).  Returns whether they are used now.                             */
bool deso__cp_set_simd(bool on);

/* Orders the non-temporal stores made so far before later stores.        */
void deso__cp_fence(void);

/* Cuts the long items of literal groups into periodic groups of pieces
 * spanning at most `span` elements on either side (a program without
 * repeated loops).  Errors: DESO_ENOMEM (the program is unchanged).      */
deso_err deso__cp_split(deso__copy *c, int64_t span);

/* A position in a program, for running it a window at a time: unit u
 * (repetition, or item of a literal group) of group g in loop l (one
 * with no loops inside), x elements into that unit; t[k]: the
 * repetition of the loop at depth k that holds l (t[0] at the top),
 * depth: l's.
 * DESO__CP_START is the program's start.                                */
typedef struct deso__cp_pos {
    int64_t l, g, u, x;
    int64_t t[DESO__CP_DEPTH];
    int depth;             /* l's depth                                   */
} deso__cp_pos;
#define DESO__CP_START ((deso__cp_pos){ 0, 0, 0, 0, { 0 }, 0 })

/* Runs the next `span` elements of program c in program order (fewer at
 * its end) from *at, which it advances, from array A to array B as
 * deso__cp_run does (deso__cp_run_stream's stores when `stream`), and
 * returns how many it ran.  Windows of `span` elements thus cut a
 * message's program at the same packed offsets on both sides, with no
 * pieces compiled beforehand: planning stays O(program).  A packed side
 * holding only the window is passed as a pointer to where the packed
 * element at offset 0 would be (deso__cp_packed_base).                  */
int64_t deso__cp_run_window(const deso__copy *c, deso__cp_pos *at,
                            int64_t span, const double *A, int64_t arows,
                            int64_t alld, double *B, int64_t brows,
                            int64_t blld, bool stream);

/* The base to pass for a packed buffer `buf` holding packed elements
 * from `first` on: buf - first, formed without pointer arithmetic
 * outside the buffer.                                                   */
static inline double *deso__cp_packed_base(double *buf, int64_t first)
{
    return (double *)((uintptr_t)buf - (uintptr_t)first * sizeof(double));
}

#endif
