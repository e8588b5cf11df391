/* The probe's rounds (probe_rounds.c): how many to time and what figure
 * they give.  Pure but for deso__probe_switches, so that the estimator
 * is tested on made-up rounds (tests/deso/test_probe.c).                 */
#ifndef DESO_PROBE_ROUNDS_H
#define DESO_PROBE_ROUNDS_H

#include <stdbool.h>

#define DESO__PROBE_CLEAN 16       /* clean rounds that settle a figure    */
#define DESO__PROBE_MAX_ROUNDS 4096
#define DESO__PROBE_BUDGET 8e-3    /* seconds one figure may take          */

/* One figure's rounds so far: the first warms up and is never used; of
 * the others only the clean ones count (no rank taking part was switched
 * out while it ran, so no time slice of another process is in it).     */
typedef struct deso__probe_acc {
    int rounds;                    /* timed, the warm-up included          */
    int clean;                     /* clean rounds after the warm-up       */
    double best;                   /* the fastest clean round              */
} deso__probe_acc;

void deso__probe_acc_init(deso__probe_acc *a);
/* A round of t seconds during which the ranks taking part were switched
 * out `switches` times in all.                                          */
void deso__probe_acc_add(deso__probe_acc *a, double t, long switches);
/* Whether to time no more rounds, `elapsed` seconds after the first:
 * enough clean ones, too many, or the budget spent (the warm-up made).  */
bool deso__probe_acc_done(const deso__probe_acc *a, double elapsed);
/* The figure: the fastest clean round, or -1 when no round was clean
 * (every one was inflated by a descheduling: the caller falls back).    */
double deso__probe_acc_figure(const deso__probe_acc *a);

/* Context switches of this process so far, voluntary or not (0 where
 * the system does not count them: every round is then clean).          */
long deso__probe_switches(void);

#endif
