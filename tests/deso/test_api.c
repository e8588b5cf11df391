/* Public calls no other test runs to success, each checked by what it
 * produces:
 *   - deso_mode_name: each mode's name, and the name is what DESO_OPT
 *     takes for that mode;
 *   - deso_schedule_name / deso_schedule_parse: every schedule's name
 *     parses back to it, and names outside the list are refused;
 *   - deso_wisdom_export / deso_wisdom_import: a context that imports
 *     another's plans replays them (no plan optimised, the same results),
 *     and exports the same plans again; a corrupt file, a missing one and
 *     one made on another grid change nothing;
 *   - deso_log_view and DESO_LOG: the table's rows count exactly the
 *     operations and executions run, its plan line is deso_stats', and
 *     printing it neither forces nor counts anything;
 *   - DESO_VERBOSE: rank 0 explains every new plan on stderr (one
 *     explanation per plan optimised, the last one deso_plan_explain's
 *     text), the other ranks print nothing.
 * Files go to a scratch directory of rank 0; what a rank prints on stderr
 * is captured in a temporary file of its own.
 * deso-np: 1 2 3                                                          */
#include <unistd.h>

#include "test_util.h"

static int me, np;
static char dir[256];             /* rank 0's scratch directory, everywhere */

/* ---- a small CG: the same calls, forces and results in every context ---- */

enum { CG_N = 40 };

static double a_fn(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    int64_t d = i > j ? i - j : j - i;
    return 1.0 / (1.0 + (double)d) + (i == j ? 1.0 : 0.0);
}

static double b_fn(int64_t i, void *arg)
{
    (void)arg;
    return 1.0 + (double)(i % 5);
}

/* Operations recorded by cg_run, per kind (the log's rows).              */
typedef struct {
    int64_t gemv, dot, axpy, scal, sdiv, sneg, forces;
} cg_counts;

/* iters CG iterations from x = 0 (one force per iteration, at the read of
 * r.r); returns the last r.r.  *cnt: what was recorded and forced.      */
static double cg_run(deso_ctx *ctx, int iters, cg_counts *cnt)
{
    const int64_t n = CG_N;
    deso_mat *A;
    deso_vec *x, *r, *p, *q;
    deso_scalar *rr, *rrnew, *pq, *alpha, *beta;
    TU_OK(deso_mat_from_fn(ctx, n, n, a_fn, NULL, &A));
    TU_OK(deso_vec_create(ctx, n, &x));
    TU_OK(deso_vec_from_fn(ctx, n, b_fn, NULL, &r));
    TU_OK(deso_vec_from_fn(ctx, n, b_fn, NULL, &p));
    TU_OK(deso_vec_create(ctx, n, &q));
    deso_scalar **s[] = {&rr, &rrnew, &pq, &alpha, &beta};
    for (size_t k = 0; k < sizeof s / sizeof s[0]; k++)
        TU_OK(deso_scalar_create(ctx, 0.0, s[k]));
    TU_OK(deso_ddot(n, r, 1, r, 1, rr));
    *cnt = (cg_counts){.dot = 1};
    double v = 0.0;
    for (int it = 0; it < iters; it++) {
        TU_OK(tu_cg_record(n, A, x, r, p, q, rr, rrnew, pq, alpha, beta));
        TU_OK(deso_scalar_get(rr, &v));
        cnt->gemv++;
        cnt->dot += 2;
        cnt->axpy += 3;
        cnt->scal++;
        cnt->sdiv += 2;
        cnt->sneg++;
        cnt->forces++;
    }
    TU_OK(deso_mat_destroy(&A));
    deso_vec **vs[] = {&x, &r, &p, &q};
    for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++)
        TU_OK(deso_vec_destroy(vs[k]));
    for (size_t k = 0; k < sizeof s / sizeof s[0]; k++)
        TU_OK(deso_scalar_destroy(s[k]));
    return v;
}

/* nb 0: the options' default block size                                */
static deso_ctx *ctx_mode(deso_mode mode, int rows, int cols)
{
    return tu_ctx_mode(mode, rows, cols, 0);
}

static deso_stats stats(void)
{
    deso_stats st;
    TU_OK(deso_stats_get(&st));
    return st;
}

/* ---- files -------------------------------------------------------------- */

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

/* The whole file, NUL-terminated (malloc'd), or NULL.                    */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *more = realloc(buf, cap * 2);
            if (more == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL) buf[len] = '\0';
    return buf;
}

static int count_lines(const char *text, const char *prefix)
{
    int k = 0;
    size_t len = strlen(prefix);
    for (const char *l = text; l != NULL && *l; ) {
        if (strncmp(l, prefix, len) == 0) k++;
        l = strchr(l, '\n');
        if (l != NULL) l++;
    }
    return k;
}

/* What this rank writes on stderr between capture_begin and capture_end
 * goes to a temporary file of its own.                                   */
typedef struct {
    FILE *f;
    int saved;
} capture;

static capture capture_begin(void)
{
    capture c;
    fflush(stderr);
    c.f = tmpfile();
    assert_non_null(c.f);
    c.saved = dup(2);
    assert_true(c.saved >= 0 && dup2(fileno(c.f), 2) >= 0);
    return c;
}

/* Restores stderr; returns what was written (malloc'd).                  */
static char *capture_end(capture *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    long len = ftell(c->f);
    char *buf = malloc((size_t)(len > 0 ? len : 0) + 1);
    assert_non_null(buf);
    rewind(c->f);
    size_t got = len > 0 ? fread(buf, 1, (size_t)len, c->f) : 0;
    buf[got] = '\0';
    fclose(c->f);
    return buf;
}

/* ---- names ---------------------------------------------------------------- */

static void test_mode_names(void **state)
{
    (void)state;
    static const struct {
        deso_mode mode;
        const char *name;
    } modes[] = {{DESO_MODE_NONE, "none"},
                 {DESO_MODE_AFFINE, "affine"},
                 {DESO_MODE_FULL, "full"}};
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        const char *name = deso_mode_name(modes[k].mode);
        assert_non_null(name);
        assert_string_equal(name, modes[k].name);
        /* the name is the value DESO_OPT takes for the mode               */
        setenv("DESO_OPT", name, 1);
        deso_ctx *ctx = NULL;
        TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
        deso_info info;
        TU_OK(deso_get_info(ctx, &info));
        assert_true(tu_all(info.mode == modes[k].mode));
        TU_OK(deso_finalize(&ctx));
        unsetenv("DESO_OPT");
    }
    /* "default" is not a mode a context runs in: a name of its own        */
    const char *dflt = deso_mode_name(DESO_MODE_DEFAULT);
    assert_string_equal(dflt, "default");
    assert_string_equal(deso_mode_name((deso_mode)17), "?");
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++)
        assert_string_not_equal(dflt, modes[k].name);
}

static void test_schedule_names(void **state)
{
    (void)state;
    static const struct {
        deso_schedule sched;
        const char *name;
    } scheds[] = {{DESO_SCHED_CATERPILLAR, "caterpillar"},
                  {DESO_SCHED_STEPWISE, "stepwise"},
                  {DESO_SCHED_GREEDY, "greedy"}};
    for (size_t k = 0; k < sizeof scheds / sizeof scheds[0]; k++) {
        assert_string_equal(deso_schedule_name(scheds[k].sched),
                            scheds[k].name);
        deso_schedule got = (deso_schedule)-1;
        assert_int_equal(deso_schedule_parse(scheds[k].name, &got), DESO_OK);
        assert_int_equal(got, scheds[k].sched);
        /* and the parsed schedule is the one a plan is made with          */
        deso_slice_plan sp;
        assert_int_equal(deso_redist_slice_plan(2, 3, 3, 2, got, &sp),
                         DESO_OK);
        assert_int_equal(sp.sched, scheds[k].sched);
        deso_slice_plan_free(&sp);
    }
    /* outside the enum: a string that names no schedule                  */
    deso_schedule outside[] = {(deso_schedule)3, (deso_schedule)-1};
    for (size_t k = 0; k < 2; k++) {
        const char *name = deso_schedule_name(outside[k]);
        deso_schedule got;
        assert_non_null(name);
        assert_string_equal(name, "?");
        assert_int_equal(deso_schedule_parse(name, &got), DESO_EINVAL);
    }
    /* names are exact: no other spelling, prefix or padding               */
    static const char *bad[] = {"", "Greedy", "STEPWISE", "step",
                                "greedy ", " caterpillar", "stepwise2",
                                "?"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        deso_schedule got = DESO_SCHED_GREEDY;
        assert_int_equal(deso_schedule_parse(bad[k], &got), DESO_EINVAL);
        assert_true(deso_last_error()[0] != '\0');
    }
    deso_schedule got;
    assert_int_equal(deso_schedule_parse(NULL, &got), DESO_ENULL);
    assert_int_equal(deso_schedule_parse("greedy", NULL), DESO_ENULL);
}

/* ---- wisdom ----------------------------------------------------------------- */

/* The keys of the file's plans ("plan <key> ..." lines), sorted, one per
 * line (malloc'd), and their number.                                     */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *plan_keys(const char *text, int *count)
{
    int n = count_lines(text, "plan ");
    char **keys = calloc((size_t)(n > 0 ? n : 1), sizeof *keys);
    assert_non_null(keys);
    int k = 0;
    for (const char *l = text; *l && k < n; ) {
        if (strncmp(l, "plan ", 5) == 0) {
            const char *end = strchr(l + 5, ' ');
            assert_non_null(end);
            keys[k++] = strndup(l + 5, (size_t)(end - l - 5));
        }
        l = strchr(l, '\n');
        if (l == NULL) break;
        l++;
    }
    qsort(keys, (size_t)k, sizeof *keys, cmp_str);
    size_t len = 1;
    for (int i = 0; i < k; i++) len += strlen(keys[i]) + 1;
    char *out = malloc(len);
    assert_non_null(out);
    out[0] = '\0';
    for (int i = 0; i < k; i++) {
        strcat(out, keys[i]);
        strcat(out, "\n");
        free(keys[i]);
    }
    free(keys);
    *count = k;
    return out;
}

/* Rank 0: the file is wisdom for this P and grid with nplans >= 1 plans,
 * its "end" line counting them.                                           */
static int wisdom_ok(const char *text, int rows, int cols, int *nplans)
{
    char want[64];
    int n = count_lines(text, "plan "), end = -1;
    const char *e = strstr(text, "\nend ");
    if (e != NULL) sscanf(e + 5, "%d", &end);
    const char *cfg = strstr(text, "\nconfig ");
    int P = 0, r = 0, c = 0;
    if (cfg != NULL) sscanf(cfg + 8, "%*s %d %dx%d", &P, &r, &c);
    snprintf(want, sizeof want, "deso-wisdom 3\n");
    *nplans = n;
    int ok = strncmp(text, want, strlen(want)) == 0 && n >= 1 && end == n &&
             P == np && r == rows && c == cols;
    if (!ok)
        print_error("wisdom: %d plan lines, end %d, config P %d grid %dx%d:"
                    "\n%.300s\n", n, end, P, r, c, text);
    return ok;
}

/* Rank 0 writes a copy of src whose first plan has another hit count
 * (the last number of its "plan" line): still well formed, so only the
 * CRC tells.                                                              */
static int corrupt_copy(const char *src, const char *dst)
{
    char *text = slurp(src);
    if (text == NULL) return 0;
    char *plan = strstr(text, "\nplan ");
    char *eol = plan != NULL ? strchr(plan + 1, '\n') : NULL;
    char *d = eol != NULL ? eol - 1 : NULL;
    int ok = d != NULL && *d >= '0' && *d <= '9';
    if (ok) *d = *d == '9' ? '8' : (char)(*d + 1);
    FILE *f = fopen(dst, "wb");
    ok = ok && f != NULL && fputs(text, f) >= 0;
    if (f != NULL && fclose(f) != 0) ok = 0;
    free(text);
    return ok;
}

static void test_wisdom(void **state)
{
    (void)state;
    char w1[300], w2[300], bad[300];
    path_in(w1, sizeof w1, "first.wisdom");
    path_in(w2, sizeof w2, "again.wisdom");
    path_in(bad, sizeof bad, "corrupt.wisdom");
    cg_counts cnt;

    /* a context optimises its plans, and exports them; with measured
     * collectives (the default prices them by the formula)               */
    setenv("DESO_MEASURE_COLLECTIVES", "1", 1);
    deso_ctx *ctx = ctx_mode(DESO_MODE_FULL, 0, 0);
    unsetenv("DESO_MEASURE_COLLECTIVES");
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    deso_stats_reset();
    double first = cg_run(ctx, 6, &cnt);
    deso_stats st = stats();
    assert_true(tu_all(st.plans_optimised > 0));
    TU_OK(deso_wisdom_export(ctx, w1));
    TU_OK(deso_finalize(&ctx));
    int nplans = 0, ok = 1;
    char *text = me == 0 ? slurp(w1) : NULL;
    if (me == 0)
        ok = text != NULL &&
             wisdom_ok(text, info.grid_rows, info.grid_cols, &nplans);
    assert_true(tu_all(ok));

    /* a new context that imports them optimises nothing, replays them,
     * computes the same, and exports the same plans                      */
    ctx = ctx_mode(DESO_MODE_FULL, 0, 0);
    TU_OK(deso_wisdom_import(ctx, w1));
    /* with the first context's calibration: measured collectives on more
     * than one rank, none on one, bit for bit through the file          */
    deso_info got;
    TU_OK(deso_get_info(ctx, &got));
    int many = tu_size() > 1;
    assert_true(tu_all((info.allreduce_call > 0.0) == many &&
                       (info.reduce_call > 0.0) == many &&
                       (info.bcast_call > 0.0) == many &&
                       got.allreduce_call == info.allreduce_call &&
                       got.reduce_call == info.reduce_call &&
                       got.bcast_call == info.bcast_call &&
                       got.alpha == info.alpha));
    deso_stats_reset();
    double again = cg_run(ctx, 6, &cnt);
    st = stats();
    if (st.plans_optimised != 0 || st.plans_replayed != cnt.forces)
        print_error("after import: optimised %lld, replayed %lld of %lld\n",
                    (long long)st.plans_optimised,
                    (long long)st.plans_replayed, (long long)cnt.forces);
    assert_true(tu_all(st.plans_optimised == 0 &&
                       st.plans_replayed == cnt.forces));
    assert_true(tu_all(tu_srel(again, first) < 1e-12));
    TU_OK(deso_wisdom_export(ctx, w2));
    TU_OK(deso_finalize(&ctx));
    if (me == 0) {
        char *text2 = slurp(w2);
        int n1, n2;
        char *k1 = plan_keys(text, &n1);
        char *k2 = text2 != NULL ? plan_keys(text2, &n2) : NULL;
        ok = k2 != NULL && n1 == nplans && n2 == n1 && strcmp(k1, k2) == 0;
        if (!ok)
            print_error("re-exported plans differ:\n%s--\n%s", k1,
                        k2 ? k2 : "(none)");
        free(k1);
        free(k2);
        free(text2);
        ok = ok && corrupt_copy(w1, bad);
    }
    free(text);
    assert_true(tu_all(ok));

    /* a corrupt file: refused with a warning on rank 0, nothing kept      */
    ctx = ctx_mode(DESO_MODE_FULL, 0, 0);
    capture c = capture_begin();
    deso_err e = deso_wisdom_import(ctx, bad);
    char *err = capture_end(&c);
    ok = e == DESO_EWISDOM && (me == 0) == (strstr(err, "rejected") != NULL);
    if (!ok) print_error("rank %d: import of a corrupt file -> %s, stderr "
                         "'%s'\n", me, deso_errname(e), err);
    free(err);
    assert_true(tu_all(ok));
    /* a missing file: DESO_EIO, nothing kept                              */
    char none[300];
    path_in(none, sizeof none, "missing.wisdom");
    c = capture_begin();
    e = deso_wisdom_import(ctx, none);
    free(capture_end(&c));
    assert_true(tu_all(e == DESO_EIO));
    deso_stats_reset();
    cg_run(ctx, 2, &cnt);
    st = stats();
    assert_true(tu_all(st.plans_optimised > 0));
    TU_OK(deso_finalize(&ctx));

    /* wisdom of another grid is ignored without an error                  */
    if (np > 1) {
        int rows = info.grid_rows == np ? 1 : np;
        ctx = ctx_mode(DESO_MODE_FULL, rows, np / rows);
        TU_OK(deso_wisdom_import(ctx, w1));
        deso_stats_reset();
        cg_run(ctx, 2, &cnt);
        st = stats();
        assert_true(tu_all(st.plans_optimised > 0));
        TU_OK(deso_finalize(&ctx));
    }

    /* export's errors, the same on every rank                             */
    ctx = ctx_mode(DESO_MODE_NONE, 0, 0);
    TU_ERR(deso_wisdom_export(NULL, w2), DESO_ENULL);
    TU_ERR(deso_wisdom_export(ctx, NULL), DESO_ENULL);
    char nodir[300];
    path_in(nodir, sizeof nodir, "no/such/dir/w");
    TU_ERR(deso_wisdom_export(ctx, nodir), DESO_EIO);
    TU_OK(deso_finalize(&ctx));
    if (me == 0) {
        unlink(w1);
        unlink(w2);
        unlink(bad);
    }
}

/* ---- the performance log ------------------------------------------------- */

/* One row of the log: the numbers after the name column (22 wide).       */
typedef struct {
    int found;
    long long calls, bytes, msgs;
} log_row;

static log_row log_find(const char *text, const char *name)
{
    log_row r = {0, 0, 0, 0};
    size_t len = strlen(name);
    for (const char *l = text; l != NULL && *l; ) {
        if (strncmp(l, name, len) == 0 && l[len] == ' ' &&
            strlen(l) > 22) {
            double t, kt;
            long long a, b, c;
            /* operation rows have a kernel time, communication rows not */
            if (sscanf(l + 22, "%lld %lf %lf %lld %lld", &a, &t, &kt, &b,
                       &c) == 5 ||
                sscanf(l + 22, "%lld %lf %lld %lld", &a, &t, &b, &c) == 4) {
                r.found = 1;
                r.calls = a;
                r.bytes = b;
                r.msgs = c;
            }
            return r;
        }
        l = strchr(l, '\n');
        if (l != NULL) l++;
    }
    return r;
}

/* The log of ctx as rank 0 prints it ("" elsewhere; malloc'd).          */
static char *log_text(deso_ctx *ctx, const char *name)
{
    char path[300];
    path_in(path, sizeof path, name);
    FILE *f = me == 0 ? fopen(path, "w") : NULL;
    assert_true(tu_all(me != 0 || f != NULL));
    TU_OK(deso_log_view(ctx, f));       /* f is only used on rank 0       */
    char *text = NULL;
    if (me == 0) {
        fclose(f);
        text = slurp(path);
        unlink(path);
    }
    return text != NULL ? text : strdup("");
}

static const char *const comm_rows[] = {
    "broadcast", "exchange (p2p)", "remap", "reduce", "allreduce",
    "check (SPMD, errors)"};

/* Rank 0: the header names this context; the operation rows grew by what
 * cnt recorded; every communication row is there; the plan line is
 * deso_stats'.                                                            */
static int log_grew(const char *before, const char *after,
                    const deso_info *info, const cg_counts *cnt,
                    const deso_stats *st)
{
    char head[160];
    snprintf(head, sizeof head, "deso log_view: %d ranks, grid %dx%d, mode "
             "%s, %lld executions\n", np, info->grid_rows, info->grid_cols,
             deso_mode_name(info->mode), (long long)info->flushes);
    int ok = strncmp(after, head, strlen(head)) == 0;
    if (!ok) print_error("log header: expected '%s', got '%.200s'\n", head,
                         after);
    static const char *ops[] = {"dgemv", "ddot", "daxpy", "dscal",
                                "scalar_div", "scalar_neg", "dtrsv",
                                "dcopy"};
    const int64_t want[] = {cnt->gemv, cnt->dot, cnt->axpy, cnt->scal,
                            cnt->sdiv, cnt->sneg, 0, 0};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        log_row a = log_find(before, ops[k]), b = log_find(after, ops[k]);
        if (b.calls - a.calls != want[k] || (want[k] > 0 && !b.found)) {
            print_error("log row %s: %lld calls, then %lld; expected %lld "
                        "more\n", ops[k], a.calls, b.calls,
                        (long long)want[k]);
            ok = 0;
        }
    }
    for (size_t k = 0; k < sizeof comm_rows / sizeof comm_rows[0]; k++)
        if (!log_find(after, comm_rows[k]).found) {
            print_error("log: no row '%s'\n", comm_rows[k]);
            ok = 0;
        }
    /* mode none, P > 1: every ddot is an all-reduce, and moves bytes    */
    log_row a = log_find(before, "allreduce"), b = log_find(after,
                                                             "allreduce");
    if (np > 1 && (b.calls <= a.calls || b.bytes <= a.bytes)) {
        print_error("log: allreduce %lld calls %lld B, then %lld calls "
                    "%lld B\n", a.calls, a.bytes, b.calls, b.bytes);
        ok = 0;
    }
    char plans[160];
    snprintf(plans, sizeof plans, "plans (rank 0, since the last "
             "deso_stats_reset): optimised %lld, replayed %lld",
             (long long)st->plans_optimised, (long long)st->plans_replayed);
    if (strstr(after, plans) == NULL) {
        print_error("log: no line '%s'\n", plans);
        ok = 0;
    }
    return ok;
}

static void test_log_view(void **state)
{
    (void)state;
    /* 1 x P: vectors spread over the ranks, so mode none's dots reduce
     * (on the default P x 1 grid they are replicated and reduce nothing) */
    deso_ctx *ctx = ctx_mode(DESO_MODE_NONE, 1, np);
    char *before = log_text(ctx, "log0.txt");
    deso_stats_reset();
    cg_counts cnt;
    cg_run(ctx, 5, &cnt);
    deso_stats st = stats();
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    char *after = log_text(ctx, "log1.txt");
    assert_true(tu_all(me != 0 || log_grew(before, after, &info, &cnt, &st)));

    /* printing the log neither counts nor forces anything: with a call
     * pending, the next log is the same table, the statistics unchanged  */
    deso_vec *x;
    deso_scalar *s;
    TU_OK(deso_vec_from_fn(ctx, CG_N, b_fn, NULL, &x));
    TU_OK(deso_scalar_create(ctx, 0.0, &s));
    TU_OK(deso_ddot(CG_N, x, 1, x, 1, s));
    char *again = log_text(ctx, "log2.txt");
    deso_stats st2 = stats();
    TU_OK(deso_get_info(ctx, &info));
    int ok = info.pending > 0 && st2.bytes_collective == st.bytes_collective &&
             st2.msgs_collective == st.msgs_collective &&
             st2.msgs_p2p == st.msgs_p2p;
    if (me == 0)
        for (size_t k = 0; k < sizeof comm_rows / sizeof comm_rows[0]; k++) {
            log_row a = log_find(after, comm_rows[k]);
            log_row b = log_find(again, comm_rows[k]);
            ok = ok && a.calls == b.calls && a.bytes == b.bytes &&
                 a.msgs == b.msgs;
        }
    assert_true(tu_all(ok));
    assert_true(tu_all(tu_get(s) > 0.0));
    free(before);
    free(after);
    free(again);

    /* errors: no context anywhere; no file on rank 0 (the others, which
     * use none, succeed, and nobody is left waiting)                      */
    TU_ERR(deso_log_view(NULL, stdout), DESO_ENULL);
    deso_err e = deso_log_view(ctx, NULL);
    assert_true(tu_all(e == (me == 0 ? DESO_ENULL : DESO_OK)));
    TU_OK(deso_finalize(&ctx));
}

/* DESO_LOG=FILE: the table, written by rank 0 at deso_finalize.         */
static void test_log_env(void **state)
{
    (void)state;
    char path[300];
    path_in(path, sizeof path, "finalize.log");
    char grid[32];
    snprintf(grid, sizeof grid, "1x%d", np);       /* as test_log_view   */
    setenv("DESO_LOG", path, 1);
    setenv("DESO_OPT", "affine", 1);
    setenv("DESO_GRID", grid, 1);
    deso_ctx *ctx = NULL;
    TU_OK(deso_init(MPI_COMM_WORLD, NULL, &ctx));
    unsetenv("DESO_LOG");
    unsetenv("DESO_OPT");
    unsetenv("DESO_GRID");
    deso_info info;
    TU_OK(deso_get_info(ctx, &info));
    char *before = log_text(ctx, "log3.txt");
    deso_stats_reset();
    cg_counts cnt;
    cg_run(ctx, 3, &cnt);
    deso_stats st = stats();
    TU_OK(deso_get_info(ctx, &info));
    TU_OK(deso_finalize(&ctx));
    int ok = 1;
    if (me == 0) {
        char *text = slurp(path);
        ok = text != NULL && log_grew(before, text, &info, &cnt, &st);
        free(text);
        unlink(path);
    }
    free(before);
    assert_true(tu_all(ok));
}

/* ---- DESO_VERBOSE ------------------------------------------------------------ */

/* With DESO_VERBOSE=1, rank 0 writes one explanation per new plan on
 * stderr (mode none never improves a plan, so new plans are the ones
 * optimised), the last being deso_plan_explain's text; other ranks write
 * nothing.  Without it, nobody writes anything.                         */
static void verbose_run(const char *value, int explains)
{
    if (value != NULL) setenv("DESO_VERBOSE", value, 1);
    else unsetenv("DESO_VERBOSE");
    char grid[32];
    snprintf(grid, sizeof grid, "1x%d", np);   /* dots that all-reduce  */
    setenv("DESO_OPT", "none", 1);
    setenv("DESO_GRID", grid, 1);
    capture c = capture_begin();
    deso_ctx *ctx = NULL;
    deso_err e = deso_init(MPI_COMM_WORLD, NULL, &ctx);
    deso_stats_reset();
    cg_counts cnt;
    if (e == DESO_OK) cg_run(ctx, 4, &cnt);
    char *err = capture_end(&c);
    unsetenv("DESO_VERBOSE");
    unsetenv("DESO_OPT");
    unsetenv("DESO_GRID");
    assert_true(tu_all(e == DESO_OK));
    deso_stats st = stats();
    /* the last explanation, as deso_plan_explain writes it              */
    FILE *f = tmpfile();
    assert_non_null(f);
    TU_OK(deso_plan_explain(ctx, f));
    long len = ftell(f);
    char *last = calloc((size_t)len + 1, 1);
    assert_non_null(last);
    rewind(f);
    size_t got = fread(last, 1, (size_t)len, f);
    fclose(f);
    TU_OK(deso_finalize(&ctx));

    int heads = count_lines(err, "plan (mode none, ");
    int ok;
    if (me == 0 && explains) {
        size_t el = strlen(err);
        /* at P = 1 no reduction communicates, so none is explained     */
        ok = st.plans_optimised > 0 && heads == st.plans_optimised &&
             got == (size_t)len && el >= got &&
             strcmp(err + el - got, last) == 0 &&
             strstr(err, " dgemv -> ") != NULL &&
             (np == 1 || strstr(err, "(all-reduce)") != NULL);
    } else {
        ok = err[0] == '\0';
    }
    if (!ok)
        print_error("rank %d, DESO_VERBOSE=%s: %d explanations for %lld "
                    "plans optimised; stderr:\n%.400s\n", me,
                    value ? value : "(unset)", heads,
                    (long long)st.plans_optimised, err);
    free(err);
    free(last);
    assert_true(tu_all(ok));
}

static void test_verbose(void **state)
{
    (void)state;
    verbose_run("1", 1);
    verbose_run("0", 0);
    verbose_run(NULL, 0);
}

static int setup(void **state)
{
    (void)state;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    return tu_scratch_dir("api", dir, sizeof dir);
}

static int teardown(void **state)
{
    (void)state;
    tu_scratch_done(dir);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode_names),
        cmocka_unit_test(test_schedule_names),
        cmocka_unit_test(test_wisdom),
        cmocka_unit_test(test_log_view),
        cmocka_unit_test(test_log_env),
        cmocka_unit_test(test_verbose),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    MPI_Finalize();
    return rc;
}
