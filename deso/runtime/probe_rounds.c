/* The probe's estimator.  On a machine with more runnable processes than
 * cores a rank waiting for a message is often switched out, and the round
 * it was timing then takes a whole time slice of some other process
 * (milliseconds where the message takes a microsecond).  The best of a
 * fixed number of rounds is not enough: under load every one of them can
 * be inflated, and a probe that took one of those for the latency made
 * every plan avoid messages it could well afford.  So each round counts
 * the context switches of the ranks taking part and is thrown away when
 * there was one; the figure is the fastest of the rest.  Rounds go on
 * until DESO__PROBE_CLEAN clean ones are in (well under a millisecond on
 * an idle machine) or the figure's budget is spent; when none was clean
 * the caller falls back to a default rather than to an inflated figure. */
#include "deso/runtime/probe_rounds.h"

#include <sys/resource.h>

void deso__probe_acc_init(deso__probe_acc *a)
{
    a->rounds = 0;
    a->clean = 0;
    a->best = -1.0;
}

void deso__probe_acc_add(deso__probe_acc *a, double t, long switches)
{
    a->rounds++;
    if (a->rounds == 1 || switches != 0 || !(t >= 0.0)) return;
    a->clean++;
    if (a->best < 0.0 || t < a->best) a->best = t;
}

bool deso__probe_acc_done(const deso__probe_acc *a, double elapsed)
{
    if (a->clean >= DESO__PROBE_CLEAN) return true;
    if (a->rounds >= DESO__PROBE_MAX_ROUNDS) return true;
    return a->rounds >= 1 && elapsed >= DESO__PROBE_BUDGET;
}

double deso__probe_acc_figure(const deso__probe_acc *a)
{
    return a->clean > 0 ? a->best : -1.0;
}

long deso__probe_switches(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return ru.ru_nvcsw + ru.ru_nivcsw;
}
