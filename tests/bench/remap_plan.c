/* remap_plan: what planning a remap costs each rank, for rank counts and
 * extents a run cannot have here (P = 32 -> 24 on two cores, a vector of
 * 2^33 doubles), in one process: deso__remap_plan_as plans every rank's
 * part (or one rank's, --me) as deso_redist_create's planning does,
 * without the arrays, the communicator or an execution.
 *
 *   remap_plan --m M [--n N] --P P --Q Q --r R --s S [--pc C] [--qc C]
 *              [--nb B] [--nb2 B] [--dims D] [--size N] [--me K] [--reps K]
 *              [--json]
 *
 * Source: an M x N matrix (N = 1: a vector) on a P x pc grid of ranks 0,
 * 1, ..., blocks R x nb; target: Q x qc, blocks S x nb2 (nb, nb2 default
 * N: whole columns); --size ranks in all (default the larger grid).
 * --dims D (2 to 4): a D-dimensional array of extent M in every
 * dimension instead, blocks R on P positions per dimension -> blocks S
 * on Q (pl_nd_layout; N, pc, qc, nb and nb2 unused).
 * Prints the largest over the ranks of each rank's least plan time over
 * --reps plans (time_plan, seconds), and the compiled programs' groups,
 * items and loops summed over the ranks; run once under valgrind
 * --tool=callgrind with --me for an instruction count that the machine's
 * load does not change.                                                  */
#include <mpi.h>
#include <stdio.h>

#include "bench_args.h"
#include "deso/remap/remap.h"

/* Sizes of the programs of one planned rank.                           */
static void add_sizes(const deso__remap *r, long long *sz)
{
    for (int i = 0; i < r->nsend + r->nrecv + 1; i++) {
        const deso__copy *c = i < r->nsend ? &r->send[i].prog
                            : i < r->nsend + r->nrecv
                                ? &r->recv[i - r->nsend].prog
                                : &r->self;
        sz[0] += c->ngroups;
        sz[1] += c->nitems;
        sz[2] += c->nloops;
    }
}

/* The remap planned: a matrix pair, or a d-dimensional one when nd.     */
typedef struct pair {
    pl_bc_layout S, T;
    pl_nd_layout SN, TN;
    bool nd;
} pair;

/* Plans rank me `reps` times; its least time, or -1 on error.          */
static double plan_rank(int me, int size, const pair *L, long reps,
                        long long *sz)
{
    double best = -1;
    for (long k = 0; k < reps; k++) {
        deso__remap r;
        deso_err e = L->nd ? deso__remap_plan_as_nd(me, size, &L->SN, &L->TN,
                                                    PL_SCHED_STEPWISE, &r)
                           : deso__remap_plan_as(me, size, &L->S, &L->T,
                                                 PL_SCHED_STEPWISE, &r);
        if (e != DESO_OK) {
            fprintf(stderr, "remap_plan: rank %d: %s\n", me,
                    deso_last_error());
            return -1;
        }
        if (best < 0 || r.t_plan < best) best = r.t_plan;
        if (k == 0) add_sizes(&r, sz);
        deso__remap_free(&r);
    }
    return best;
}

/* The d-dimensional pair: extent m, blocks r on P -> blocks s on Q in
 * every one of d dimensions.                                           */
static void nd_pair(long d, long m, long P, long r, long Q, long s,
                    pair *L)
{
    L->nd = true;
    L->SN = (pl_nd_layout){ .d = (int)d };
    L->TN = (pl_nd_layout){ .d = (int)d };
    for (int k = 0; k < d; k++) {
        L->SN.n[k] = L->TN.n[k] = m;
        L->SN.b[k] = r;
        L->TN.b[k] = s;
        L->SN.p[k] = (int)P;
        L->TN.p[k] = (int)Q;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long m = 0, n = 1, P = 0, Q = 0, r = 0, s = 0, pc = 1, qc = 1;
    long nb = 0, nb2 = 0, size = 0, me = -1, reps = 1, dims = 0;
    const long big = 1L << 40;
    const bench_opt opts[] = {
        { "--m", &m, 1, big }, { "--n", &n, 1, big }, { "--P", &P, 1, 4096 },
        { "--Q", &Q, 1, 4096 }, { "--r", &r, 1, big }, { "--s", &s, 1, big },
        { "--pc", &pc, 1, 4096 }, { "--qc", &qc, 1, 4096 },
        { "--nb", &nb, 1, big }, { "--nb2", &nb2, 1, big },
        { "--size", &size, 1, 1 << 20 }, { "--me", &me, 0, 1 << 20 },
        { "--reps", &reps, 1, 1000000 }, { "--dims", &dims, 2, PL_ND_MAX },
    };
    int json = 0;
    int rc = bench_start(argc, argv, "remap_plan",
                         "--m M [--n N] --P P --Q Q --r R --s S [--pc C] "
                         "[--qc C] [--nb B] [--nb2 B] [--dims D] [--size N] [--me K] "
                         "[--reps K] [--json]",
                         opts, (int)(sizeof opts / sizeof opts[0]), 1, &json);
    if (rc >= 0) return rc;
    if (m == 0 || P == 0 || Q == 0 || r == 0 || s == 0) {
        fprintf(stderr, "remap_plan: --m, --P, --Q, --r and --s are needed\n");
        MPI_Finalize();
        return 2;
    }
    if (dims > 0) {
        pc = P;
        qc = Q;
        for (long k = 2; k < dims; k++) {
            pc *= P;
            qc *= Q;
        }
    }
    long need = P * pc > Q * qc ? P * pc : Q * qc;
    if (size == 0) size = need;
    if (size < need || me >= size) {
        fprintf(stderr, "remap_plan: --size %ld, --me %ld: the grids need "
                "%ld ranks\n", size, me, need);
        MPI_Finalize();
        return 2;
    }
    pair L = { .S = { m, n, r, nb ? nb : n, (int)P, (int)pc, NULL, false },
               .T = { m, n, s, nb2 ? nb2 : n, (int)Q, (int)qc, NULL, false } };
    if (dims > 0) nd_pair(dims, m, P, r, Q, s, &L);
    long long sz[3] = { 0, 0, 0 };
    double worst = 0;
    for (long k = me < 0 ? 0 : me; k < (me < 0 ? size : me + 1); k++) {
        double t = plan_rank((int)k, (int)size, &L, reps, sz);
        if (t < 0) {
            MPI_Finalize();
            return 1;
        }
        if (t > worst) worst = t;
    }
    if (json)
        printf("{\"impl\":\"remap_plan\",\"m\":%ld,\"n\":%ld,\"P\":%ld,"
               "\"Q\":%ld,\"pc\":%ld,\"qc\":%ld,\"r\":%ld,\"s\":%ld,"
               "\"size\":%ld,\"me\":%ld,\"time_plan\":%.6e,\"groups\":%lld,"
               "\"items\":%lld,\"loops\":%lld}\n", m, n, P, Q, pc, qc, r, s,
               size, me, worst, sz[0], sz[1], sz[2]);
    else
        printf("plan %.3e s (slowest rank), %lld groups, %lld items, %lld "
               "loops\n", worst, sz[0], sz[1], sz[2]);
    MPI_Finalize();
    return 0;
}
