/* deso-remap: plans and runs block-cyclic remaps (CYCLIC(r) on P ranks ->
 * CYCLIC(s) on Q ranks, and 2-D block-cyclic matrices), optionally side by
 * side with ScaLAPACK's pdgemr2d.  See --help.
 *
 *   deso-remap --P 16 --Q 16 --r 3 --s 5 --plan-only --json
 *   mpiexec.mpich -n 2 deso-remap --P 2 --Q 2 --r 3 --s 5 --n 16777216 --run --json
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deso.h"

/* BLACS and ScaLAPACK have no C header: the prototypes we use.            */
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridmap(int *ctxt, int *usermap, int ldumap, int nprow,
                    int npcol);
void Cblacs_gridexit(int ctxt);
void pdgemr2d_(const int *m, const int *n, const double *a, const int *ia,
               const int *ja, const int *desca, double *b, const int *ib,
               const int *jb, const int *descb, const int *ictxt);

static const char *usage =
"usage: deso-remap --P p --Q q --r r --s s [--schedule NAME] --plan-only\n"
"                  [--json]\n"
"       mpiexec.mpich -n N deso-remap [layout options] --run [--json]\n"
"                  [--reps K] [--compare-scalapack] [--in-place] [--memcpy]\n"
"                  [--shared-arrays]\n"
"\n"
"--plan-only  the schedule of one slice of lcm(P r, Q s) elements of\n"
"             CYCLIC(r) on P -> CYCLIC(s) on Q; no MPI launch needed.\n"
"             --json prints one line: P, Q, r, s, schedule, steps,\n"
"             total_cost, messages, slice, grid (P rows of Q lengths).\n"
"--run        remaps an array, verifies every element, prints the time\n"
"             per remap and GB/s (array bytes / time).  --json adds\n"
"             time_create (deso_redist_create), time_plan (its planning\n"
"             alone), time_setup (the rest: the agreements, with the\n"
"             communicator's duplicate and shared window cached by a\n"
"             first remap of the same layouts, whose set-up is\n"
"             time_setup_first) and time_first (the first, verified\n"
"             execution), each the slowest rank's.\n"
"\n"
"layout options (--run)\n"
"  vector: --n LEN  source CYCLIC(r) on P ranks, target CYCLIC(s) on Q\n"
"  matrix: --m M --n N [--grid RxC] [--grid2 RxC] [--mb B --nb B]\n"
"          [--mb2 B --nb2 B]: source R x C grid (default P x 1) with\n"
"          blocks mb x nb (default r x r), target grid2 (default Q x 1)\n"
"          with blocks mb2 x nb2 (default s x s)\n"
"  --src-ranks OFF, --dst-ranks OFF  the source (target) grid uses ranks\n"
"          OFF .. OFF+P-1 in row-major order (default 0)\n"
"  --schedule caterpillar|stepwise|greedy   (default stepwise)\n"
"  --reps K   timed repetitions (default: about 0.2 s worth)\n"
"  --compare-scalapack  also runs pdgemr2d on the same data, checks equal\n"
"          results, adds time_deso, time_scalapack, ratio\n"
"  --in-place  with identical layouts, target = source array (moves\n"
"          nothing); pdgemr2d still copies\n"
"  --memcpy  the yardstick, paired: K times, every rank memcpys its\n"
"          source array, then one remap; adds memcpy_gbs (array bytes /\n"
"          median memcpy time) and pct_memcpy (median of memcpy time /\n"
"          remap time, in %%), which the machine's drift cancels from\n"
"  --shared-arrays  the source arrays come from deso_redist_array_alloc,\n"
"          so that receivers read them in place (single copy)\n"
"\n"
"d-dimensional arrays (--run; deso_redist_create_nd), d <= 4:\n"
"  --dims N0xN1x..  global extents; --grid P0xP1x.. and --grid2 the\n"
"          source and target grids (row-major ranks from --src-ranks,\n"
"          --dst-ranks); --blocks B0xB1x.. and --blocks2 their blocks\n"
"          (default r and s in every dimension).  Prints what --run\n"
"          prints, without --compare-scalapack, --memcpy, --in-place\n";

typedef struct opts {
    int P, Q;
    int64_t r, s, m, n, mb, nb, mb2, nb2;
    int gr, gc, gr2, gc2;
    int src_off, dst_off;
    int64_t reps;
    deso_schedule sched;
    int plan_only, run, json, compare, in_place, memcpy_ref, shared, help;
    int nd;                          /* --dims: dimensions, else 0           */
    int64_t ext[DESO_ND_MAX], blk[DESO_ND_MAX], blk2[DESO_ND_MAX];
    int64_t grid[DESO_ND_MAX], grid2[DESO_ND_MAX];
    const char *grid_s, *grid2_s, *blk_s, *blk2_s;
} opts;

static char errbuf[256];

static int bad(const char *fmt, const char *a, const char *b)
{
    snprintf(errbuf, sizeof errbuf, fmt, a, b);
    return 0;
}

/* A positive integer (>= lo), the whole string.                           */
static int parse_i64(const char *opt, const char *s, int64_t lo,
                     int64_t *out)
{
    if (s == NULL) return bad("%s needs a value", opt, "");
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return bad("%s: '%s' is not an integer", opt, s);
    if (v < lo) {
        snprintf(errbuf, sizeof errbuf, "%s: %s must be >= %lld", opt, s,
                 (long long)lo);
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_int(const char *opt, const char *s, int lo, int *out)
{
    int64_t v;
    if (!parse_i64(opt, s, lo, &v)) return 0;
    if (v > 1 << 20) return bad("%s: %s is too large", opt, s);
    *out = (int)v;
    return 1;
}

static int parse_grid(const char *opt, const char *s, int *r, int *c)
{
    if (s == NULL) return bad("%s needs a value", opt, "");
    int a, b;
    char x, tail;
    if (sscanf(s, "%d%c%d%c", &a, &x, &b, &tail) != 3 || (x != 'x' &&
                                                          x != 'X'))
        return bad("%s: '%s' is not RxC", opt, s);
    if (a < 1 || b < 1 || a > 1 << 20 || b > 1 << 20)
        return bad("%s: '%s' needs extents >= 1", opt, s);
    *r = a;
    *c = b;
    return 1;
}

/* AxBx.. with `want` entries >= 1 (any count up to DESO_ND_MAX when want
 * is 0; *count gets it).                                                 */
static int parse_tuple(const char *opt, const char *s, int want,
                       int64_t *out, int *count)
{
    if (s == NULL) return bad("%s needs a value", opt, "");
    int k = 0;
    for (const char *p = s;; k++) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (k == DESO_ND_MAX)
            return bad("%s: '%s' has more than 4 extents", opt, s);
        if (errno != 0 || end == p || v < 1 || (*end != '\0' &&
                                               *end != 'x' && *end != 'X'))
            return bad("%s: '%s' is not extents >= 1 joined by x", opt, s);
        out[k] = v;
        if (*end == '\0') break;
        p = end + 1;
    }
    k++;
    if (want && k != want)
        return bad("%s: '%s' needs one entry per dimension of --dims", opt,
                   s);
    if (count) *count = k;
    return 1;
}

/* The --dims options, once d is known: grids (needed), blocks (default
 * r and s in every dimension).                                           */
static int parse_nd(opts *o)
{
    if (o->compare || o->memcpy_ref || o->in_place || o->plan_only)
        return bad("--dims runs without --compare-scalapack, --memcpy, "
                   "--in-place and --plan-only%s", "", "");
    if (!o->grid_s || !o->grid2_s)
        return bad("--dims needs --grid and --grid2%s", "", "");
    if (!parse_tuple("--grid", o->grid_s, o->nd, o->grid, NULL) ||
        !parse_tuple("--grid2", o->grid2_s, o->nd, o->grid2, NULL))
        return 0;
    for (int k = 0; k < o->nd; k++) {
        o->blk[k] = o->r;
        o->blk2[k] = o->s;
    }
    if ((o->blk_s && !parse_tuple("--blocks", o->blk_s, o->nd, o->blk,
                                  NULL)) ||
        (o->blk2_s && !parse_tuple("--blocks2", o->blk2_s, o->nd, o->blk2,
                                   NULL)))
        return 0;
    if (!o->blk[0] || !o->blk2[0])
        return bad("--dims needs --r and --s (or --blocks and --blocks2)%s",
                   "", "");
    int64_t P = 1, Q = 1;
    for (int k = 0; k < o->nd; k++) {
        P *= o->grid[k];
        Q *= o->grid2[k];
        if (P > 1 << 20 || Q > 1 << 20)
            return bad("--grid or --grid2 has too many positions%s", "", "");
    }
    o->P = (int)P;
    o->Q = (int)Q;
    o->run = 1;
    return 1;
}

static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->sched = DESO_SCHED_STEPWISE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1, takes = 1;
        if (!strcmp(a, "--P")) ok = parse_int(a, v, 1, &o->P);
        else if (!strcmp(a, "--Q")) ok = parse_int(a, v, 1, &o->Q);
        else if (!strcmp(a, "--r")) ok = parse_i64(a, v, 1, &o->r);
        else if (!strcmp(a, "--s")) ok = parse_i64(a, v, 1, &o->s);
        else if (!strcmp(a, "--m")) ok = parse_i64(a, v, 1, &o->m);
        else if (!strcmp(a, "--n")) ok = parse_i64(a, v, 1, &o->n);
        else if (!strcmp(a, "--mb")) ok = parse_i64(a, v, 1, &o->mb);
        else if (!strcmp(a, "--nb")) ok = parse_i64(a, v, 1, &o->nb);
        else if (!strcmp(a, "--mb2")) ok = parse_i64(a, v, 1, &o->mb2);
        else if (!strcmp(a, "--nb2")) ok = parse_i64(a, v, 1, &o->nb2);
        else if (!strcmp(a, "--reps")) ok = parse_i64(a, v, 1, &o->reps);
        else if (v == NULL && (!strcmp(a, "--grid") ||
                               !strcmp(a, "--grid2") ||
                               !strcmp(a, "--blocks") ||
                               !strcmp(a, "--blocks2")))
            ok = bad("%s needs a value%s", a, "");
        else if (!strcmp(a, "--grid")) o->grid_s = v;
        else if (!strcmp(a, "--grid2")) o->grid2_s = v;
        else if (!strcmp(a, "--blocks")) o->blk_s = v;
        else if (!strcmp(a, "--blocks2")) o->blk2_s = v;
        else if (!strcmp(a, "--dims"))
            ok = parse_tuple(a, v, 0, o->ext, &o->nd);
        else if (!strcmp(a, "--src-ranks"))
            ok = parse_int(a, v, 0, &o->src_off);
        else if (!strcmp(a, "--dst-ranks"))
            ok = parse_int(a, v, 0, &o->dst_off);
        else if (!strcmp(a, "--schedule")) {
            if (v == NULL) ok = bad("%s needs a value", a, "");
            else if (deso_schedule_parse(v, &o->sched) != DESO_OK)
                ok = bad("%s: unknown schedule '%s' (caterpillar, stepwise "
                         "or greedy)", a, v);
        } else {
            takes = 0;
            if (!strcmp(a, "--plan-only")) o->plan_only = 1;
            else if (!strcmp(a, "--run")) o->run = 1;
            else if (!strcmp(a, "--json")) o->json = 1;
            else if (!strcmp(a, "--compare-scalapack")) o->compare = 1;
            else if (!strcmp(a, "--in-place")) o->in_place = 1;
            else if (!strcmp(a, "--memcpy")) o->memcpy_ref = 1;
            else if (!strcmp(a, "--shared-arrays")) o->shared = 1;
            else if (!strcmp(a, "--help") || !strcmp(a, "-h")) o->help = 1;
            else ok = bad("unknown option '%s'%s", a, " (see --help)");
        }
        if (!ok) return 0;
        i += takes;
    }
    if (o->help) return 1;
    if (o->nd) return parse_nd(o);
    if (o->blk_s || o->blk2_s)
        return bad("--blocks and --blocks2 go with --dims%s", "", "");
    if ((o->grid_s && !parse_grid("--grid", o->grid_s, &o->gr, &o->gc)) ||
        (o->grid2_s && !parse_grid("--grid2", o->grid2_s, &o->gr2, &o->gc2)))
        return 0;
    if (o->plan_only == o->run)
        return bad("give exactly one of --plan-only and --run%s", "", "");
    if (o->plan_only) {
        if (!o->P || !o->Q || !o->r || !o->s)
            return bad("--plan-only needs --P, --Q, --r and --s%s", "", "");
        return 1;
    }
    /* --run: fill the layouts' defaults.                                  */
    if (!o->n) return bad("--run needs --n (vector length or columns)%s",
                          "", "");
    if (o->gr) {
        if (o->P && o->P != o->gr * o->gc)
            return bad("--P disagrees with --grid%s", "", "");
        o->P = o->gr * o->gc;
    }
    if (o->gr2) {
        if (o->Q && o->Q != o->gr2 * o->gc2)
            return bad("--Q disagrees with --grid2%s", "", "");
        o->Q = o->gr2 * o->gc2;
    }
    if (!o->P || !o->Q) return bad("--run needs --P and --Q (or --grid and "
                                   "--grid2)%s", "", "");
    if (!o->gr) { o->gr = o->P; o->gc = 1; }
    if (!o->gr2) { o->gr2 = o->Q; o->gc2 = 1; }
    if (!o->mb) o->mb = o->r;
    if (!o->mb2) o->mb2 = o->s;
    if (!o->nb) o->nb = o->r;
    if (!o->nb2) o->nb2 = o->s;
    if (!o->mb || !o->mb2)
        return bad("--run needs --r and --s (or --mb and --mb2)%s", "", "");
    if (!o->m) {                    /* a vector: LEN x 1                    */
        o->m = o->n;
        o->n = 1;
        o->nb = o->nb2 = 1;
        if (o->gc != 1 || o->gc2 != 1)
            return bad("a vector (no --m) needs grids Px1%s", "", "");
    }
    return 1;
}

/* ---- --plan-only ---------------------------------------------------------- */

static int plan_only(const opts *o)
{
    deso_slice_plan sp;
    deso_err e = deso_redist_slice_plan(o->P, o->r, o->Q, o->s, o->sched,
                                        &sp);
    if (e != DESO_OK) {
        /* no MPI here: under mpiexec only rank 0 (PMI_RANK) says why      */
        const char *pmi = getenv("PMI_RANK");
        if (pmi == NULL || strcmp(pmi, "0") == 0)
            fprintf(stderr, "deso-remap: %s\n", deso_last_error());
        return 2;
    }
    if (o->json) {
        printf("{\"P\":%d,\"Q\":%d,\"r\":%" PRId64 ",\"s\":%" PRId64
               ",\"schedule\":\"%s\",\"steps\":%d,\"total_cost\":%" PRId64
               ",\"messages\":%" PRId64 ",\"slice\":%" PRId64 ",\"grid\":[",
               sp.P, sp.Q, sp.r, sp.s, deso_schedule_name(sp.sched),
               sp.steps, sp.total_cost, sp.messages, sp.slice);
        for (int p = 0; p < sp.P; p++) {
            printf(p ? ",[" : "[");
            for (int q = 0; q < sp.Q; q++)
                printf(q ? ",%" PRId64 : "%" PRId64,
                       sp.grid[(int64_t)p * sp.Q + q]);
            printf("]");
        }
        printf("]}\n");
    } else {
        printf("CYCLIC(%" PRId64 ") on %d -> CYCLIC(%" PRId64 ") on %d, "
               "slice %" PRId64 ", schedule %s: %d steps, total cost %"
               PRId64 ", %" PRId64 " messages\n", sp.r, sp.P, sp.s, sp.Q,
               sp.slice, deso_schedule_name(sp.sched), sp.steps,
               sp.total_cost, sp.messages);
        for (int k = 0; k < sp.steps; k++) {
            printf("step %d (cost %" PRId64 "):", k, sp.step_cost[k]);
            for (int p = 0; p < sp.P; p++) {
                int q = sp.recv_of[(int64_t)k * sp.P + p];
                if (q >= 0)
                    printf(" %d->%d(%" PRId64 ")", p, q,
                           sp.grid[(int64_t)p * sp.Q + q]);
            }
            printf("\n");
        }
    }
    deso_slice_plan_free(&sp);
    return 0;
}

/* ---- --run ---------------------------------------------------------------- */

typedef struct side {
    deso_layout l;
    int *ranks;
    int pos, prow, pcol;
    int64_t rows, cols, lld;
    double *a;
    int shared;              /* a from deso_redist_array_alloc            */
    int ctxt;                /* BLACS context, -1 outside the grid         */
} side;

static int64_t l2g(int64_t l, int64_t nb, int ip, int np)
{
    return (l / nb) * nb * np + (int64_t)ip * nb + l % nb;
}

static double value(int64_t m, int64_t gi, int64_t gj)
{
    return (double)(gi + gj * m) + 0.5;
}

static void side_init(side *sd, int64_t m, int64_t n, int64_t mb,
                      int64_t nb, int pr, int pc, int off, int me)
{
    memset(sd, 0, sizeof *sd);
    sd->ranks = malloc((size_t)pr * (size_t)pc * sizeof(int));
    sd->pos = -1;
    for (int i = 0; i < pr * pc; i++) {
        sd->ranks[i] = off + i;
        if (off + i == me) sd->pos = i;
    }
    sd->l = (deso_layout){ .m = m, .n = n, .mb = mb, .nb = nb, .pr = pr,
                           .pc = pc, .ranks = sd->ranks };
    sd->ctxt = -1;
}

/* shared: from deso_redist_array_alloc (collective), else malloc.      */
static void side_alloc(side *sd, int64_t rows, int64_t cols, int shared)
{
    sd->rows = rows;
    sd->cols = cols;
    sd->lld = rows > 1 ? rows : 1;
    if (sd->pos >= 0) {
        sd->prow = sd->pos / sd->l.pc;
        sd->pcol = sd->pos % sd->l.pc;
    }
    int64_t c1 = cols > 0 ? cols : 1;
    /* NULL (reported by the caller) when the size does not even fit      */
    int fits = c1 <= INT64_MAX / (int64_t)sizeof(double) / sd->lld;
    sd->shared = shared;
    if (shared) {
        if (deso_redist_array_alloc(MPI_COMM_WORLD, fits ? sd->lld * c1 : -1,
                                    &sd->a) != DESO_OK)
            sd->a = NULL;
    } else {
        sd->a = fits ? malloc((size_t)(sd->lld * c1) * sizeof(double))
                     : NULL;
    }
}

static void side_free(side *sd)
{
    if (sd->shared) deso_redist_array_free(sd->a);
    else free(sd->a);
    free(sd->ranks);
    sd->a = NULL;
    sd->ranks = NULL;
}

static void side_fill(side *sd)
{
    for (int64_t j = 0; j < sd->cols; j++) {
        int64_t gj = l2g(j, sd->l.nb, sd->pcol, sd->l.pc);
        for (int64_t i = 0; i < sd->rows; i++)
            sd->a[j * sd->lld + i] =
                value(sd->l.m, l2g(i, sd->l.mb, sd->prow, sd->l.pr), gj);
    }
}

static void side_clear(side *sd)
{
    for (int64_t k = 0; k < sd->lld * sd->cols; k++) sd->a[k] = -1.0;
}

static int64_t side_wrong(const side *sd, const double *a)
{
    int64_t wrong = 0;
    for (int64_t j = 0; j < sd->cols; j++) {
        int64_t gj = l2g(j, sd->l.nb, sd->pcol, sd->l.pc);
        for (int64_t i = 0; i < sd->rows; i++)
            if (a[j * sd->lld + i] !=
                value(sd->l.m, l2g(i, sd->l.mb, sd->prow, sd->l.pr), gj))
                wrong++;
    }
    return wrong;
}

static void blacs_map(side *sd, int me)
{
    int ctxt = -1;
    Cblacs_get(-1, 0, &ctxt);
    int pr = sd->l.pr, pc = sd->l.pc;
    int *map = malloc((size_t)pr * (size_t)pc * sizeof(int));
    for (int i = 0; i < pr; i++)
        for (int j = 0; j < pc; j++) map[i + j * pr] = sd->ranks[i * pc + j];
    Cblacs_gridmap(&ctxt, map, pr, pr, pc);
    free(map);
    (void)me;
    sd->ctxt = sd->pos >= 0 ? ctxt : -1;
}

/* Seconds per call of `reps` calls, the slowest rank's.                   */
static double timed(int64_t reps, deso_redist *r, side *a, side *b,
                    int scalapack, int all, int in_place)
{
    int m = (int)a->l.m, n = (int)a->l.n, one = 1;
    int da[9] = { 1, a->ctxt, m, n, (int)a->l.mb, (int)a->l.nb, 0, 0,
                  (int)a->lld };
    int db[9] = { 1, b->ctxt, m, n, (int)b->l.mb, (int)b->l.nb, 0, 0,
                  (int)b->lld };
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int64_t k = 0; k < reps; k++) {
        if (scalapack)
            pdgemr2d_(&m, &n, a->a, &one, &one, da, b->a, &one, &one, db,
                      &all);
        else
            deso_redist_execute(r, a->a, a->lld, in_place ? a->a : b->a,
                                b->lld);
    }
    double t = (MPI_Wtime() - t0) / (double)reps;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The memcpy yardstick, paired with remaps: reps times, every rank copies
 * its source array at once (the slowest rank's time), then one remap.
 * Returns the median memcpy time; *pct the median of memcpy / remap.    */
static double memcpy_paired(int64_t reps, deso_redist *r, side *a, side *b,
                            int in_place, double *pct)
{
    size_t bytes = (size_t)(a->lld * a->cols) * sizeof(double);
    double *scratch = malloc(bytes ? bytes : 1);
    double *tm = malloc((size_t)reps * sizeof *tm);
    double *ratio = malloc((size_t)reps * sizeof *ratio);
    if (scratch == NULL || tm == NULL || ratio == NULL) {
        free(scratch); free(tm); free(ratio);
        *pct = 0.0;
        return 0.0;
    }
    memset(scratch, 0, bytes ? bytes : 1);          /* pages mapped first */
    for (int64_t k = 0; k < reps; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (bytes) memcpy(scratch, a->a, bytes);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
                      MPI_COMM_WORLD);
        tm[k] = t;
        ratio[k] = t / timed(1, r, a, b, 0, 0, in_place);
    }
    qsort(tm, (size_t)reps, sizeof *tm, cmp_double);
    qsort(ratio, (size_t)reps, sizeof *ratio, cmp_double);
    double med = tm[reps / 2];
    *pct = 100.0 * ratio[reps / 2];
    free(scratch); free(tm); free(ratio);
    return med;
}

static int run(const opts *o, int me, int np)
{
    side a, b, c;
    side_init(&a, o->m, o->n, o->mb, o->nb, o->gr, o->gc, o->src_off, me);
    side_init(&b, o->m, o->n, o->mb2, o->nb2, o->gr2, o->gc2, o->dst_off, me);
    side_init(&c, o->m, o->n, o->mb2, o->nb2, o->gr2, o->gc2, o->dst_off, me);
    deso_redist *r = NULL;
    /* The first remap on a communicator sets up what later ones reuse
     * (its duplicate, the shared-memory rings): timed apart.             */
    double tsetup1 = 0.0;
    deso_err e = deso_redist_create(MPI_COMM_WORLD, &a.l, &b.l, o->sched, &r);
    if (e == DESO_OK) deso_redist_times(r, NULL, &tsetup1);
    deso_redist_destroy(&r);
    MPI_Allreduce(MPI_IN_PLACE, &tsetup1, 1, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    double tp = MPI_Wtime();
    if (e == DESO_OK)
        e = deso_redist_create(MPI_COMM_WORLD, &a.l, &b.l, o->sched, &r);
    tp = MPI_Wtime() - tp;
    MPI_Allreduce(MPI_IN_PLACE, &tp, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (e != DESO_OK) {
        if (me == 0) fprintf(stderr, "deso-remap: %s\n", deso_last_error());
        return 2;
    }
    int64_t ar, ac, br, bc;
    deso_redist_local_shape(r, &ar, &ac, &br, &bc);
    side_alloc(&a, ar, ac, o->shared);
    side_alloc(&b, br, bc, 0);
    side_alloc(&c, br, bc, 0);
    int nomem = a.a == NULL || b.a == NULL || c.a == NULL;
    MPI_Allreduce(MPI_IN_PLACE, &nomem, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (nomem) {
        if (me == 0)
            fprintf(stderr, "deso-remap: out of memory for the local arrays "
                    "(%" PRId64 " x %" PRId64 " elements on rank 0)\n", ar,
                    ac);
        deso_redist_destroy(&r);
        side_free(&a); side_free(&b); side_free(&c);
        return 2;
    }
    side_fill(&a);
    side_clear(&b);
    int in_place = o->in_place;
    if (in_place && (a.l.mb != b.l.mb || a.l.nb != b.l.nb || a.l.pr != b.l.pr
                     || a.l.pc != b.l.pc || o->src_off != o->dst_off)) {
        if (me == 0)
            fprintf(stderr, "deso-remap: --in-place needs identical "
                    "layouts\n");
        deso_redist_destroy(&r);
        return 2;
    }

    /* Verify the first execution (timed: plan + it is a one-shot remap),
     * then time the replays.                                             */
    double tplan = 0.0, tsetup = 0.0;
    deso_redist_times(r, &tplan, &tsetup);
    MPI_Allreduce(MPI_IN_PLACE, &tplan, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &tsetup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double tfirst = MPI_Wtime();
    e = deso_redist_execute(r, a.a, a.lld, in_place ? a.a : b.a, b.lld);
    tfirst = MPI_Wtime() - tfirst;
    MPI_Allreduce(MPI_IN_PLACE, &tfirst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int64_t wrong = e == DESO_OK ? side_wrong(&b, in_place ? a.a : b.a) : 1;
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    int64_t reps = o->reps;
    if (reps == 0) {
        double t1 = timed(1, r, &a, &b, 0, 0, in_place);
        reps = t1 > 0 ? (int64_t)(0.2 / t1) : 10000;
        if (reps < 1) reps = 1;
        if (reps > 10000) reps = 10000;
    }
    double t = timed(reps, r, &a, &b, 0, 0, in_place);
    double tm = 0.0, pct = 0.0;
    if (o->memcpy_ref) tm = memcpy_paired(reps, r, &a, &b, in_place, &pct);
    int64_t wrong2 = side_wrong(&b, in_place ? a.a : b.a);
    MPI_Allreduce(MPI_IN_PLACE, &wrong2, 1, MPI_INT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    wrong += wrong2;

    double ts = 0.0;
    int64_t differ = 0;
    if (o->compare) {
        int all = -1;
        Cblacs_get(-1, 0, &all);
        Cblacs_gridinit(&all, "Row", 1, np);
        blacs_map(&a, me);
        blacs_map(&c, me);
        side_clear(&c);
        ts = timed(1, NULL, &a, &c, 1, all, 0);   /* also the check run */
        differ = c.lld * c.cols > 0 && !in_place &&
                 memcmp(b.a, c.a, (size_t)(c.lld * c.cols) *
                        sizeof(double)) != 0;
        differ += side_wrong(&c, c.a) != 0;
        MPI_Allreduce(MPI_IN_PLACE, &differ, 1, MPI_INT64_T, MPI_SUM,
                      MPI_COMM_WORLD);
        ts = timed(reps, NULL, &a, &c, 1, all, 0);
        if (a.ctxt >= 0) Cblacs_gridexit(a.ctxt);
        if (c.ctxt >= 0) Cblacs_gridexit(c.ctxt);
        Cblacs_gridexit(all);
    }

    double gbs = (double)o->m * (double)o->n * 8.0 / t / 1e9;
    if (me == 0) {
        if (o->json) {
            printf("{\"P\":%d,\"Q\":%d,\"r\":%" PRId64 ",\"s\":%" PRId64
                   ",\"m\":%" PRId64 ",\"n\":%" PRId64 ",\"mb\":%" PRId64
                   ",\"nb\":%" PRId64 ",\"mb2\":%" PRId64 ",\"nb2\":%"
                   PRId64 ",\"grid\":\"%dx%d\",\"grid2\":\"%dx%d\","
                   "\"ranks\":%d,\"schedule\":\"%s\",\"in_place\":%s,"
                   "\"transport\":\"%s\",\"shared_arrays\":%s,"
                   "\"reps\":%" PRId64 ",\"time\":%.6e,"
                   "\"gbs\":%.4f,\"time_create\":%.6e,\"time_plan\":%.6e,"
                   "\"time_setup\":%.6e,\"time_setup_first\":%.6e,"
                   "\"time_first\":%.6e,\"verified\":%s",
                   o->P, o->Q, o->mb, o->mb2, o->m, o->n, o->mb, o->nb,
                   o->mb2, o->nb2, o->gr, o->gc, o->gr2, o->gc2, np,
                   deso_schedule_name(o->sched), in_place ? "true" : "false",
                   deso_redist_transport(r), o->shared ? "true" : "false",
                   reps, t, gbs, tp, tplan, tsetup, tsetup1, tfirst,
                   wrong == 0 ? "true" : "false");
            if (o->memcpy_ref)
                printf(",\"memcpy_gbs\":%.4f,\"pct_memcpy\":%.1f",
                       tm > 0 ? (double)o->m * (double)o->n * 8.0 / tm / 1e9
                              : 0.0, pct);
            if (o->compare)
                printf(",\"time_deso\":%.6e,\"time_scalapack\":%.6e,"
                       "\"ratio\":%.4g,\"scalapack_equal\":%s", t, ts,
                       t / ts, differ == 0 ? "true" : "false");
            printf("}\n");
        } else {
            printf("remap %" PRId64 " x %" PRId64 ": %d ranks (%dx%d) -> "
                   "%d (%dx%d), %s, %s%s: %.3e s per remap, %.3f GB/s, plan "
                   "%.3e s, setup %.3e s, first execution %.3e s, %s\n",
                   o->m, o->n, o->P, o->gr, o->gc, o->Q,
                   o->gr2, o->gc2, deso_schedule_name(o->sched),
                   deso_redist_transport(r),
                   o->shared ? " (sources shared)" : "", t, gbs, tplan,
                   tsetup, tfirst, wrong == 0 ? "verified" : "WRONG");
            if (o->memcpy_ref)
                printf("memcpy: %.3f GB/s; remap = %.1f%% of memcpy "
                       "(median of %" PRId64 " pairs)\n",
                       tm > 0 ? (double)o->m * (double)o->n * 8.0 / tm / 1e9
                              : 0.0, pct, reps);
            if (o->compare)
                printf("pdgemr2d: %.3e s per remap; deso/pdgemr2d = %.3f; "
                       "results %s\n", ts, t / ts,
                       differ == 0 ? "equal" : "DIFFER");
        }
    }
    deso_redist_destroy(&r);
    side_free(&a); side_free(&b); side_free(&c);
    return wrong == 0 && differ == 0 ? 0 : 1;
}

/* ---- --run --dims ------------------------------------------------------- */

/* One side of a d-dimensional remap: its layout, this rank's grid
 * coordinates (none: pos < 0) and local array (first index fastest).    */
typedef struct nside {
    deso_layout_nd l;
    int *ranks;
    int pos, c[DESO_ND_MAX];
    int64_t ext[DESO_ND_MAX], count;
    double *a;
    int shared;
} nside;

static void nside_init(nside *sd, const opts *o, const int64_t *grid,
                       const int64_t *blk, int off, int me)
{
    memset(sd, 0, sizeof *sd);
    int n = 1;
    sd->l.d = o->nd;
    for (int k = 0; k < o->nd; k++) {
        sd->l.n[k] = o->ext[k];
        sd->l.b[k] = blk[k];
        sd->l.p[k] = (int)grid[k];
        n *= (int)grid[k];
    }
    sd->ranks = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) sd->ranks[i] = off + i;
    sd->l.ranks = sd->ranks;
    sd->pos = me - off < n && me >= off ? me - off : -1;
    for (int k = o->nd - 1, p = sd->pos; k >= 0 && p >= 0; k--) {
        sd->c[k] = p % sd->l.p[k];
        p /= sd->l.p[k];
    }
}

/* Visits every local element: sets it to its global value (fill) or
 * counts the ones that differ from it.                                   */
static int64_t nside_walk(nside *sd, const double *a, int fill)
{
    int64_t wrong = 0, e[DESO_ND_MAX] = { 1, 1, 1, 1 };
    for (int k = 0; k < sd->l.d; k++) e[k] = sd->ext[k];
    for (int64_t off = 0; off < sd->count; off++) {
        int64_t rest = off, lin = 0, stride = 1;
        for (int k = 0; k < sd->l.d; k++) {
            int64_t lk = rest % e[k];
            rest /= e[k];
            lin += l2g(lk, sd->l.b[k], sd->c[k], sd->l.p[k]) * stride;
            stride *= sd->l.n[k];
        }
        double v = (double)lin + 0.5;
        if (fill) sd->a[off] = v;
        else wrong += a[off] != v;
    }
    return wrong;
}

static void nside_free(nside *sd)
{
    if (sd->shared) deso_redist_array_free(sd->a);
    else free(sd->a);
    free(sd->ranks);
}

/* The slowest rank's value of t.                                         */
static double slowest(double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

/* Allocates both local arrays (the source shared when asked; collective
 * then); false on any rank when one does not fit.                       */
static int nd_alloc(deso_redist *r, nside *a, nside *b, int shared)
{
    deso_redist_local_extents(r, a->ext, b->ext);
    a->count = b->count = 1;
    for (int k = 0; k < DESO_ND_MAX; k++) {
        a->count *= a->ext[k];
        b->count *= b->ext[k];
    }
    a->shared = shared;
    if (shared && deso_redist_array_alloc(MPI_COMM_WORLD, a->count,
                                          &a->a) != DESO_OK)
        a->a = NULL;
    if (!shared) a->a = malloc((size_t)(a->count ? a->count : 1) * 8);
    b->a = malloc((size_t)(b->count ? b->count : 1) * 8);
    int nomem = a->a == NULL || b->a == NULL;
    MPI_Allreduce(MPI_IN_PLACE, &nomem, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return !nomem;
}

static void nd_report(const opts *o, deso_redist *r, int np, int64_t reps,
                      const double *t, int verified)
{
    double elems = 1;
    for (int k = 0; k < o->nd; k++) elems *= (double)o->ext[k];
    const int64_t *tup[4] = { o->ext, o->grid, o->grid2, o->blk };
    const char *name[5] = { "dims", "grid", "grid2", "blocks", "blocks2" };
    printf(o->json ? "{" : "remap");
    for (int i = 0; i < 5; i++) {
        const int64_t *v = i < 4 ? tup[i] : o->blk2;
        printf(o->json ? "%s\"%s\":\"" : " %s%s ", i ? (o->json ? "," : "")
               : "", name[i]);
        for (int k = 0; k < o->nd; k++)
            printf(k ? "x%" PRId64 : "%" PRId64, v[k]);
        if (o->json) printf("\"");
    }
    if (o->json)
        printf(",\"ranks\":%d,\"schedule\":\"%s\",\"transport\":\"%s\","
               "\"shared_arrays\":%s,\"reps\":%" PRId64 ",\"time\":%.6e,"
               "\"gbs\":%.4f,\"time_create\":%.6e,\"time_plan\":%.6e,"
               "\"time_setup\":%.6e,\"time_setup_first\":%.6e,"
               "\"time_first\":%.6e,\"verified\":%s}\n", np,
               deso_schedule_name(o->sched), deso_redist_transport(r),
               o->shared ? "true" : "false", reps, t[0],
               elems * 8.0 / t[0] / 1e9, t[1], t[2], t[3], t[4], t[5],
               verified ? "true" : "false");
    else
        printf(": %s, %s%s: %.3e s per remap, %.3f GB/s, plan %.3e s, "
               "setup %.3e s, first execution %.3e s, %s\n",
               deso_schedule_name(o->sched), deso_redist_transport(r),
               o->shared ? " (sources shared)" : "", t[0],
               elems * 8.0 / t[0] / 1e9, t[2], t[3], t[5],
               verified ? "verified" : "WRONG");
}

static int run_nd(const opts *o, int me, int np)
{
    nside a, b;
    nside_init(&a, o, o->grid, o->blk, o->src_off, me);
    nside_init(&b, o, o->grid2, o->blk2, o->dst_off, me);
    deso_redist *r = NULL;
    double t[6] = { 0 };    /* time, create, plan, setup, setup_first, first */
    deso_err e = deso_redist_create_nd(MPI_COMM_WORLD, &a.l, &b.l, o->sched,
                                       &r);
    if (e == DESO_OK) deso_redist_times(r, NULL, &t[4]);
    deso_redist_destroy(&r);
    t[1] = MPI_Wtime();
    if (e == DESO_OK)
        e = deso_redist_create_nd(MPI_COMM_WORLD, &a.l, &b.l, o->sched, &r);
    t[1] = slowest(MPI_Wtime() - t[1]);
    int ok = e == DESO_OK && nd_alloc(r, &a, &b, o->shared);
    if (!ok) {
        if (me == 0)
            fprintf(stderr, "deso-remap: %s\n", e != DESO_OK ?
                    deso_last_error() : "out of memory for the local arrays");
        deso_redist_destroy(&r);
        nside_free(&a);
        nside_free(&b);
        return 2;
    }
    nside_walk(&a, NULL, 1);
    deso_redist_times(r, &t[2], &t[3]);
    t[2] = slowest(t[2]);
    t[3] = slowest(t[3]);
    t[4] = slowest(t[4]);
    int64_t lda = a.ext[0] > 1 ? a.ext[0] : 1;
    int64_t ldb = b.ext[0] > 1 ? b.ext[0] : 1;
    MPI_Barrier(MPI_COMM_WORLD);
    t[5] = MPI_Wtime();
    e = deso_redist_execute(r, a.a, lda, b.a, ldb);
    t[5] = slowest(MPI_Wtime() - t[5]);
    int64_t wrong = e == DESO_OK ? nside_walk(&b, b.a, 0) : 1;
    int64_t reps = o->reps ? o->reps : 1;
    if (!o->reps && t[5] > 0) reps = (int64_t)(0.2 / t[5]);
    if (reps < 1) reps = 1;
    if (reps > 10000) reps = 10000;
    MPI_Barrier(MPI_COMM_WORLD);
    t[0] = MPI_Wtime();
    for (int64_t k = 0; k < reps; k++)
        deso_redist_execute(r, a.a, lda, b.a, ldb);
    t[0] = slowest((MPI_Wtime() - t[0]) / (double)reps);
    wrong += nside_walk(&b, b.a, 0);
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    if (me == 0) nd_report(o, r, np, reps, t, wrong == 0);
    deso_redist_destroy(&r);
    nside_free(&a);
    nside_free(&b);
    return wrong == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    opts o;
    int ok = parse(argc, argv, &o);
    if (o.help) {
        fputs(usage, stdout);
        return 0;
    }
    if (ok && o.plan_only) return plan_only(&o);

    /* A bad command line fails before MPI_Init, so that a plain launch
     * needs no MPI; under mpiexec only rank 0 (PMI_RANK) says why.       */
    if (!ok) {
        const char *pmi = getenv("PMI_RANK");
        if (pmi == NULL || strcmp(pmi, "0") == 0)
            fprintf(stderr, "deso-remap: %s\n", errbuf);
        return 2;
    }
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int rc;
    if ((int64_t)o.src_off + o.P > np) {
        snprintf(errbuf, sizeof errbuf, "the source needs ranks %d .. %d "
                 "but there are %d (--P, --grid, --src-ranks)", o.src_off,
                 o.src_off + o.P - 1, np);
        rc = 2;
    } else if ((int64_t)o.dst_off + o.Q > np) {
        snprintf(errbuf, sizeof errbuf, "the target needs ranks %d .. %d "
                 "but there are %d (--Q, --grid2, --dst-ranks)", o.dst_off,
                 o.dst_off + o.Q - 1, np);
        rc = 2;
    } else if (o.compare && (o.m > 2147483647 || o.n > 2147483647)) {
        snprintf(errbuf, sizeof errbuf, "--compare-scalapack needs "
                 "extents below 2^31");
        rc = 2;
    } else {
        rc = -1;
    }
    if (rc == 2) {
        if (me == 0) fprintf(stderr, "deso-remap: %s\n", errbuf);
    } else {
        rc = o.nd ? run_nd(&o, me, np) : run(&o, me, np);
    }
    MPI_Finalize();
    return rc;
}
