/* tests/deso/test_remap_pick.c: single copy or the rings, chosen per
 * remap on the shared-memory transport (deso_redist.h,
 * DESO_REMAP_SINGLE_COPY; doc/DESIGN.md, "Single copy").
 *
 * Sources in deso_redist_array_alloc arrays, each case executed eight
 * times with the choice forced to the rings ("0"), to single copy ("1")
 * and measured (unset: settled from the sixth execution on).  Oracle: the
 * value of every element's global index, written from the block-cyclic
 * definition here; every execution's whole target (padding and a guard
 * zone included) is compared with it, the three ways' targets must be
 * bitwise equal, deso_redist_transport must name the choice (the same on
 * every rank), and the counts must follow "Counting bytes and messages":
 * the same messages and bytes every way (counted as shared-memory
 * ones), the same collectives, the measured way's one agreement carrying two more flags
 * (16 bytes more in the all-reduce).
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                       */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <mpi.h>

#include "deso/deso_redist.h"
#include "deso/deso_stats.h"
#include "test_util.h"

#define EXECS 8
#define PAD 1
#define GUARD 3
#define SENTINEL (-3.5)

static int me, np;
static int ok_node = 1;      /* remaps that send took the shared memory    */
static int on_node;          /* every rank on one node                    */

/* Global index of local index l, blocks of b dealt over p positions.     */
static int64_t l2g(int64_t l, int64_t b, int pos, int p)
{
    return (l / b) * b * p + (int64_t)pos * b + l % b;
}

/* The value of local element (i, j) of this rank's part of l.            */
static double value(const deso_layout *l, int64_t i, int64_t j)
{
    int pos = me, prow = pos / l->pc, pcol = pos % l->pc;
    int64_t gi = l2g(i, l->mb, prow, l->pr), gj = l2g(j, l->nb, pcol, l->pc);
    return (double)(gi + gj * l->m + 1);
}

/* Number of wrong elements of a rows x cols target (lld = rows + PAD),
 * padding and guard included.                                           */
static int64_t wrong(const deso_layout *l, const double *d, int64_t rows,
                     int64_t cols)
{
    int64_t lld = rows + PAD, bad = 0;
    for (int64_t k = 0; k < lld * cols + GUARD; k++) {
        int64_t j = k / lld, i = k % lld;
        double want = j < cols && i < rows ? value(l, i, j) : SENTINEL;
        bad += d[k] != want;
    }
    return bad;
}

typedef struct outcome {
    double *target;          /* after the last execution                 */
    int64_t len;
    int64_t bad;             /* wrong elements over all executions       */
    int shm;                 /* the transport was shared memory          */
    int single;              /* ... and named single copy                */
    deso_stats st;
} outcome;

/* One case with DESO_REMAP_SINGLE_COPY = mode (NULL: unset).            */
static outcome run(const deso_layout *s, const deso_layout *t,
                   const char *mode)
{
    outcome o;
    memset(&o, 0, sizeof o);
    if (mode) setenv("DESO_REMAP_SINGLE_COPY", mode, 1);
    else unsetenv("DESO_REMAP_SINGLE_COPY");
    deso_redist *r = NULL;
    assert_true(tu_all(deso_redist_create(MPI_COMM_WORLD, s, t,
                                            DESO_SCHED_STEPWISE, &r) ==
                         DESO_OK));
    int64_t sm, sn, dm, dn;
    assert_int_equal(deso_redist_local_shape(r, &sm, &sn, &dm, &dn), DESO_OK);
    double *a = NULL;
    assert_true(tu_all(deso_redist_array_alloc(MPI_COMM_WORLD, sm * sn + 1,
                                                 &a) == DESO_OK));
    for (int64_t j = 0; j < sn; j++)
        for (int64_t i = 0; i < sm; i++) a[i + j * sm] = value(s, i, j);
    o.len = (dm + PAD) * dn + GUARD;
    o.target = malloc((size_t)o.len * sizeof *o.target);
    assert_non_null(o.target);
    deso_stats_reset();
    for (int k = 0; k < EXECS; k++) {
        for (int64_t i = 0; i < o.len; i++) o.target[i] = SENTINEL;
        deso_err e = deso_redist_execute(r, sm * sn > 0 ? a : NULL,
                                         sm > 1 ? sm : 1, o.target, dm + PAD);
        o.bad += e != DESO_OK ? 1 : wrong(t, o.target, dm, dn);
    }
    assert_int_equal(deso_stats_get(&o.st), DESO_OK);
    const char *tr = deso_redist_transport(r);
    o.shm = strncmp(tr, "shared memory", 13) == 0;
    o.single = strcmp(tr, "shared memory, single copy") == 0;
    /* The choice is agreed: the same name on every rank.               */
    int lo = o.single, hi = o.single;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    o.bad += lo != hi;
    deso_redist_destroy(&r);
    assert_int_equal(deso_redist_array_free(a), DESO_OK);
    unsetenv("DESO_REMAP_SINGLE_COPY");
    return o;
}

/* The three ways of one case against each other and the oracle.        */
static int compare(const deso_layout *s, const deso_layout *t)
{
    static const char *modes[3] = { "0", "1", NULL };
    outcome o[3];
    for (int k = 0; k < 3; k++) o[k] = run(s, t, modes[k]);
    /* On one node with messages, every receiver may read in place.      */
    int talks = o[0].shm;
    ok_node = ok_node && (talks || np == 1 || !on_node ||
                          t->m * t->n <= 1);
    int ok = o[0].bad == 0 && o[1].bad == 0 && o[2].bad == 0;
    ok &= !o[0].single && o[1].single == talks;
    for (int k = 1; k < 3; k++) {
        ok &= memcmp(o[k].target, o[0].target,
                     (size_t)o[0].len * sizeof(double)) == 0;
        ok &= o[k].st.msgs_shm == o[0].st.msgs_shm &&
              o[k].st.bytes_shm == o[0].st.bytes_shm &&
              o[k].st.msgs_collective == o[0].st.msgs_collective &&
              o[k].st.msgs_p2p == o[0].st.msgs_p2p &&
              o[k].st.bytes_p2p == o[0].st.bytes_p2p;
    }
    /* Collectives are charged to one rank: compare the sums.            */
    int64_t more[2] = { o[1].st.bytes_collective - o[0].st.bytes_collective,
                        o[2].st.bytes_collective - o[0].st.bytes_collective };
    MPI_Allreduce(MPI_IN_PLACE, more, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* An all-reduce of b bytes counts b (P - 1) 2.                      */
    ok &= more[0] == 0 && more[1] == (talks ? 16 * (np - 1) * 2 : 0);
    if (!ok)
        fprintf(stderr, "rank %d: %lldx%lld mb %lld->%lld nb %lld->%lld: "
                "wrong %lld/%lld/%lld, single %d/%d/%d, shm bytes %lld/%lld/"
                "%lld, collective bytes %lld/%lld/%lld\n", me,
                (long long)s->m, (long long)s->n, (long long)s->mb,
                (long long)t->mb, (long long)s->nb, (long long)t->nb,
                (long long)o[0].bad, (long long)o[1].bad, (long long)o[2].bad,
                o[0].single, o[1].single, o[2].single,
                (long long)o[0].st.bytes_shm, (long long)o[1].st.bytes_shm,
                (long long)o[2].st.bytes_shm,
                (long long)o[0].st.bytes_collective,
                (long long)o[1].st.bytes_collective,
                (long long)o[2].st.bytes_collective);
    for (int k = 0; k < 3; k++) free(o[k].target);
    return ok;
}

/* Vectors (one ordered pass: the assembly; block -> cyclic: the direct
 * programs), a matrix (the direct programs), n < P and n = 1.          */
static void test_choice_same_result(void **state)
{
    (void)state;
    setenv("DESO_REMAP_SHM", "1", 1);
    struct { int64_t m, n, mb, nb, mb2, nb2; int cols; } cs[] = {
        { 100003, 1, 3, 1, 5, 1, 0 },
        { 70001, 1, 64, 1, 1, 1, 0 },
        { 50001, 1, (50001 + np - 1) / np, 1, 1, 1, 0 },
        { 301, 203, 3, 2, 5, 7, 1 },
        { 2, 1, 1, 1, 2, 1, 0 },
        { 1, 1, 1, 1, 1, 1, 0 },
    };
    int ok = 1;
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        /* a matrix: columns dealt over the ranks -> rows dealt over them */
        int c = cs[k].cols;
        deso_layout s = { cs[k].m, cs[k].n, cs[k].mb, cs[k].nb,
                          c ? 1 : np, c ? np : 1, NULL, 0 };
        deso_layout t = { cs[k].m, cs[k].n, cs[k].mb2, cs[k].nb2, np, 1,
                          NULL, 0 };
        ok &= compare(&s, &t);
    }
    unsetenv("DESO_REMAP_SHM");
    assert_true(tu_all(ok && ok_node));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np > 1) setenv("CMOCKA_TEST_ABORT", "1", 1);
    on_node = tu_one_node();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choice_same_result),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
