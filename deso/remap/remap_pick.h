/* deso/remap/remap_pick.h: single copy or the rings, chosen per remap
 * (internal; see remap_pick.c).                                         */
#ifndef DESO_REMAP_PICK_H
#define DESO_REMAP_PICK_H

#include <stdbool.h>
#include <stdint.h>

/* How a remap on shared memory moves the messages whose sources its
 * receivers could read in place: measured (both timed once, the faster
 * kept), or fixed by DESO_REMAP_SINGLE_COPY.  The order matters: where
 * ranks' environments differ, the agreement keeps the largest.          */
enum { DESO__PICK_MEASURE = 0, DESO__PICK_RINGS = 1, DESO__PICK_SINGLE = 2 };

typedef struct deso__pick {
    int mode;                /* DESO__PICK_*, the same on every rank     */
    long long from;          /* the execution that turned single copy on */
    int64_t ns[2];           /* this rank's timed executions: rings [0], */
                             /* single copy [1], nanoseconds              */
} deso__pick;

/* This rank's DESO_REMAP_SINGLE_COPY: "0" the rings, "1" single copy,
 * anything else (or unset) measure.                                      */
int deso__pick_env(void);

/* Starts choosing with `mode` (agreed) after execution e's agreement
 * turned the single-copy programs on.                                   */
void deso__pick_start(deso__pick *p, int mode, long long e);

/* Whether execution e lets receivers read sources in place.              */
bool deso__pick_allows(const deso__pick *p, long long e);

/* Records that execution e took `seconds` on this rank (kept when it is
 * one of the two timed ones).                                            */
void deso__pick_timed(deso__pick *p, long long e, double seconds);

/* Whether execution e's agreement is to carry the two times (then
 * deso__pick_times fills them, the agreement takes their maximum over
 * the ranks and deso__pick_decide settles the mode on every rank alike). */
bool deso__pick_due(const deso__pick *p, long long e);
void deso__pick_times(const deso__pick *p, int64_t out[2]);
void deso__pick_decide(deso__pick *p, const int64_t agreed[2]);

#endif
