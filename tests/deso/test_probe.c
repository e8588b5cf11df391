/* The probe's estimator (deso/runtime/probe_rounds.c) on made-up rounds:
 * rounds during which a rank was switched out are thrown away however
 * fast or slow they look, the warm-up round never counts, the figure is
 * the fastest clean round (the undisturbed latency under a load that
 * inflates most rounds by a time slice), none clean gives -1 (the probe
 * falls back), and the rounds stop at 16 clean ones, at the budget once
 * the warm-up is made, or at the cap.  Deterministic: no clock, no MPI
 * traffic; every rank checks the same.
 * deso-np: 1 2 3
 * deso-np-long: 4 6                                                      */
#include "deso/runtime/probe_rounds.h"
#include "test_util.h"

/* A loaded machine: of 64 rounds, three in four are descheduled (3 to 7
 * ms, or now and then a switched round that looks fast); the clean ones
 * take 0.6 to 0.9 us, the fastest exactly 0.6 us.                       */
static void test_descheduled_rounds(void **state)
{
    (void)state;
    tu_rng rng = {7};
    deso__probe_acc a;
    deso__probe_acc_init(&a);
    deso__probe_acc_add(&a, 2e-3, 0);             /* warm-up              */
    int clean = 0;
    for (int k = 0; k < 64; k++) {
        bool dirty = k % 4 != 3;
        double t = dirty ? 3e-3 + 2e-3 * (1.0 + tu_rand(&rng))
                         : 0.6e-6 + 0.15e-6 * (1.0 + tu_rand(&rng));
        if (k == 10) t = 1e-7;                    /* switched yet fast    */
        if (k == 31) t = 0.6e-6;                  /* the undisturbed one  */
        deso__probe_acc_add(&a, t, dirty ? 1 + k % 3 : 0);
        clean += !dirty;
    }
    assert_int_equal(a.rounds, 65);
    assert_int_equal(a.clean, clean);
    assert_true(tu_all(deso__probe_acc_figure(&a) == 0.6e-6));
}

/* The first round sets up the connection: never the figure, even when it
 * is the fastest and clean.                                             */
static void test_warmup_ignored(void **state)
{
    (void)state;
    deso__probe_acc a;
    deso__probe_acc_init(&a);
    deso__probe_acc_add(&a, 1e-8, 0);
    assert_true(deso__probe_acc_figure(&a) == -1.0);
    deso__probe_acc_add(&a, 3e-6, 0);
    deso__probe_acc_add(&a, 2e-6, 0);
    deso__probe_acc_add(&a, 2.5e-6, 0);
    assert_true(tu_all(deso__probe_acc_figure(&a) == 2e-6));
}

/* Every round descheduled: no figure, however many rounds.              */
static void test_all_descheduled(void **state)
{
    (void)state;
    deso__probe_acc a;
    deso__probe_acc_init(&a);
    for (int k = 0; k < 100; k++) deso__probe_acc_add(&a, 4e-3 + k * 1e-6, 1);
    assert_int_equal(a.clean, 0);
    assert_true(tu_all(deso__probe_acc_figure(&a) == -1.0));
}

/* When the rounds stop: 16 clean ones after the warm-up; the budget once
 * the warm-up is made (not before: a first round slower than the budget
 * still gets timed); the cap on rounds whatever else.                   */
static void test_stopping(void **state)
{
    (void)state;
    double budget = DESO__PROBE_BUDGET;
    deso__probe_acc a;
    deso__probe_acc_init(&a);
    assert_false(deso__probe_acc_done(&a, 0.0));
    assert_false(deso__probe_acc_done(&a, 10 * budget));
    deso__probe_acc_add(&a, 1e-6, 0);
    for (int k = 0; k < DESO__PROBE_CLEAN - 1; k++) {
        deso__probe_acc_add(&a, 1e-6, 0);
        deso__probe_acc_add(&a, 5e-3, 1);
        assert_false(deso__probe_acc_done(&a, 0.5 * budget));
    }
    assert_true(deso__probe_acc_done(&a, budget));
    deso__probe_acc_add(&a, 1e-6, 0);
    assert_true(deso__probe_acc_done(&a, 0.0));
    deso__probe_acc b;
    deso__probe_acc_init(&b);
    for (int k = 0; k < DESO__PROBE_MAX_ROUNDS - 1; k++)
        deso__probe_acc_add(&b, 1e-6, 1);
    assert_false(deso__probe_acc_done(&b, 0.0));
    deso__probe_acc_add(&b, 1e-6, 1);
    assert_true(tu_all(deso__probe_acc_done(&b, 0.0)));
}

TU_MAIN(cmocka_unit_test(test_descheduled_rounds),
        cmocka_unit_test(test_warmup_ignored),
        cmocka_unit_test(test_all_descheduled),
        cmocka_unit_test(test_stopping))
