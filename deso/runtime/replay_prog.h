/* An armed replay (replay.h): the calls it expects, the handles they name,
 * and the flat program its force runs.  Private to replay*.c.            */
#ifndef DESO_RUNTIME_REPLAY_PROG_H
#define DESO_RUNTIME_REPLAY_PROG_H

#include "deso/runtime/replay.h"
#include "deso/runtime/log.h"

#define REPLAY_HANDLES (DESO__REPLAY_CALLS * (BLAS_MAXOPS + 1))
#define REPLAY_LIST 8          /* views a value may have in the program    */

/* A view the program reads or writes.  A live-in slot is a view of a
 * value a handle (or a constant) holds when the force begins, found by
 * its layout then; a temporary slot is the replay's own view.            */
typedef struct tslot {
    blas_layout lay;
    deso__view *w;
    uint64_t serial;          /* w's when bound (a live-in slot)            */
    deso__view *out;          /* a final slot: the view it gave when the    */
    uint64_t out_serial;      /*   last force ended, and its serial         */
    int src;                  /* live-in: the final slot whose view it was
                               * bound to last time (-1: none seen)        */
    int h;                    /* live-in: the handle index, else -1        */
    deso__value *cv;          /* live-in constant, else NULL                */
    bool temp;
} tslot;

/* One step of the schedule: a node (its operands' fills first, inside
 * its counted run), or a wait.                                          */
typedef struct tstep {
    deso__step_kind kind;
    int node;
    int nfill;
    blas_kind fkind[BLAS_MAXOPS];
    int fsrc[BLAS_MAXOPS], fdst[BLAS_MAXOPS];
    int op[BLAS_MAXOPS];
    int res;
    int copy;                 /* slot copied into res first, or -1         */
    bool zero;                /* res zeroed first (a fresh result)         */
    bool known;               /* kf, L, R and flat worked out (at the
                               * step's first run)                         */
    bool flat;                /* a local kernel that talks to no rank: run
                               * as a direct call (replay_step.c)          */
    deso__kfacts kf;
    blas_local L[BLAS_MAXOPS], R;  /* the local pieces (data and layout
                                    * set at each run)                    */
    blas_kernel_fn kern, fin;  /* a flat step's kernel and finish on this
                                * rank (NULL: none)                       */
    deso__node *nd;           /* its node (T->tnd)                          */
    deso__view **opw[BLAS_MAXOPS], **resw, **copyw;  /* its slots' views */
    enum { PREP_NONE, PREP_ZERO, PREP_COPY } prep;  /* zero or copy, as
                                                    * a new view's start  */
} tstep;

/* A live-out value: the placeholder of call `call` gets the views of
 * slots slot[0..n) (in their list order) when the force ends.          */
typedef struct tfinal {
    int call;
    int n;
    int slot[REPLAY_LIST];
} tfinal;

/* A call as the quick path compares it (deso__replay_quick), worked out
 * at arming: where the value each operand must hold is found (its
 * handle's current value, or the constant), and where the result's goes. */
typedef struct tquick {
    uint64_t key;             /* op << 32 | flags; all ones when the call
                               * is not plain (an alias, view parameters,
                               * a sparse matrix)                          */
    int64_t m, n;
    int nops;
    deso__handle *out;
    uint64_t id[BLAS_MAXOPS];
    deso__value *const *want[BLAS_MAXOPS];
    deso__value **res;        /* the result handle's current value         */
} tquick;

typedef struct deso__replay {
    deso__compiled *c;
    int ncalls, pos;
    deso__rcall call[DESO__REPLAY_CALLS];
    int ch[DESO__REPLAY_CALLS][BLAS_MAXOPS + 1];  /* handle indices of each
                                                  * call's operands (-1: a
                                                  * constant), then result */
    int node_call[DESO__REPLAY_CALLS];            /* a node's call          */
    uint64_t chash[DESO__REPLAY_CALLS];  /* each call's hash (deso__call_hash) */
    blas_kind rkind[DESO__REPLAY_CALLS]; /* ... and its result's kind      */
    tquick quick[DESO__REPLAY_CALLS];    /* each call as
                                         * deso__replay_quick compares it */
    int nh;
    deso__handle *hd[REPLAY_HANDLES];
    deso__value *start[REPLAY_HANDLES];  /* each handle's value when the
                                         * iteration began (referenced)   */
    deso__value *cur[REPLAY_HANDLES];    /* ... and now                    */
    deso__value *ph[DESO__REPLAY_CALLS]; /* placeholders made (referenced) */
    bool dies[REPLAY_HANDLES];   /* its start value's views may be reused:
                                 * every handle holding it is written     */
    int alias[REPLAY_HANDLES];   /* the first handle holding its start value */
    int ndying;                 /* those values, once each: a handle      */
    int dying[REPLAY_HANDLES];  /*   holding it and how many of T's       */
    int share[REPLAY_HANDLES];  /*   handles do (the references T holds)  */
    bool restudy;               /* the above are for the values the handles
                                 * held when T was unparked: the next
                                 * iteration's start relates them as every
                                 * iteration after it will               */
    int ncons;
    deso__value *cons[DESO__REPLAY_CALLS * BLAS_MAXOPS];  /* referenced   */
    int nmats;
    deso__spmat_data *mats[DESO__REPLAY_CALLS];  /* the sparse products'
                                                 * matrices (referenced)  */
    /* the program */
    int nslots, nsteps, nnodes, quiet;
    bool fused;               /* some reductions are fused                  */
    tslot *slot;
    int nlive;
    int *live;                /* the live-in slots, bound at each force    */
    tstep *step;
    deso__node *tnd;          /* the nodes' descriptions (res NULL)        */
    deso__fz *fz;
    deso__fz **grp;
    int *glast;
    int nfinal;
    tfinal *final;
    bool tallied;             /* tally holds the flat steps' calls, once  */
    int ntally;               /*   every step ran (the performance log's  */
    deso__log_tally tally[DESO__REPLAY_CALLS];  /* counts of a whole run) */
    int nrepl;
    int (*repl)[2];           /* temporary slot [0] takes the view of the
                               * dead live-in slot [1] once [0]'s view went
                               * to a live-out value                      */
} deso__replay;

/* replay_compile.c: whether every node of graph g may be replayed (its
 * kind; the calls and handles are checked when a replay is armed).      */
bool deso__replay_nodes_ok(const opt_graph *g);
/* replay_compile.c: the program of compiled force c for the calls of T
 * (their handles resolved, their start values taken); false when this
 * force cannot be replayed.                                             */
bool deso__replay_compile(deso_ctx *ctx, deso__replay *T);
/* replay.c: the calls T took so far as the context's call log (a replayed
 * call is not logged when it is made).                                  */
void deso__replay_logged(deso_ctx *ctx, const deso__replay *T);
/* replay.c: the calls T took, every expected one, recorded as ordinary
 * nodes (its force found the handles' values unfit), and T parked to be
 * armed again after that force.                                         */
deso_err deso__replay_record(deso_ctx *ctx);
/* replay.c: which start values die (dies, alias, dying, share), from the
 * values the handles hold now.                                          */
void deso__replay_deaths(const deso_ctx *ctx, deso__replay *T);
/* replay_step.c: step st's facts, local pieces and whether it is flat,
 * at its first run (pl: its node's placement).                          */
void deso__replay_learn(const deso_ctx *ctx, deso__replay *T, tstep *st,
                        const opt_place *pl);
/* replay_step.c: the flat steps from s on, up to the first that is not
 * (or end), run: each one's result slot zeroed or holding the updated
 * operand, its kernel and finish called directly, timed as the
 * executor's run and counted later (deso__replay_count); overlap: a
 * reduction is in flight.  Returns the first step not run.             */
int deso__replay_flat(deso_ctx *ctx, const deso__replay *T, int s, int end,
                      bool overlap);
/* replay_step.c: any other step's run (its operands' fills first), into
 * the executor's deso__exec_known.                                      */
deso_err deso__replay_body(deso_ctx *ctx, deso__replay *T, tstep *st,
                           const opt_place *pl);
/* replay_step.c: the performance log's calls of the flat steps among
 * the first `ran` steps.                                                */
void deso__replay_count(deso__replay *T, int ran);
/* replay_compile.c: frees what the program holds.                        */
void deso__replay_free_prog(deso__replay *T);

#endif
