/* The wisdom format: round trips (bit-exact doubles, random plans), every
 * single-byte change and every truncation of a valid file, other format
 * versions and configs (ignored), hostile counts, duplicate keys, field
 * ranges, and the container helpers.                                       */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/wisdom.h"
#include "optimizer/wisdom_impl.h"
#include "placement/errors.h"

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;              /* xorshift64*                      */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * UINT64_C(2685821657736338717);
}

static int64_t rnd_in(int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;   /* no overflow     */
    return (int64_t)((uint64_t)lo + rnd() % span);
}

static double bits_to_double(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static uint64_t double_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* A finite double >= 0 (or -0), often an awkward one.                      */
static double rnd_cost(void)
{
    switch (rnd() % 6) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return bits_to_double(rnd() % (UINT64_C(1) << 52)); /* subnormal */
    case 3: return DBL_MAX;
    default: {
        uint64_t e = (uint64_t)rnd_in(1, 0x7FE);
        return bits_to_double((e << 52) | (rnd() >> 12));
    }
    }
}

static void config_set(opt_wisdom_config *c, const char *version, int pr,
                       int pc)
{
    memset(c, 0, sizeof *c);
    snprintf(c->version, sizeof c->version, "%s", version);
    c->pr = pr;
    c->pc = pc;
    c->P = pr * pc;
    c->calibrated = true;
    c->alpha = 2.5e-6;
    c->beta = 1.0 / 3e9;
    c->io_beta = 1.0 / 2e8;
}

static opt_wisdom_node rnd_node(const opt_wisdom_config *c)
{
    opt_wisdom_node nd = {0};
    blas_layout *l = &nd.lay;
    l->pr = c->pr;
    l->pc = c->pc;
    int64_t big = rnd() % 8 == 0 ? INT64_MAX : 100000;
    switch (rnd() % 3) {
    case 0:
        l->kind = BLAS_MAT;
        l->m = rnd_in(0, big);
        l->n = rnd_in(0, big);
        l->dist = -1;
        l->b = rnd_in(1, big);
        l->nb = rnd_in(1, 64);
        break;
    case 1:
        l->kind = BLAS_VEC;
        l->m = 1;
        l->n = rnd_in(0, big);
        l->dist = (int)rnd_in(-1, BLAS_DIST_PART);
        l->b = l->dist == 0 || l->dist == 1 ? rnd_in(1, big) : 0;
        /* a vector by partition: b 0, rep 0, no partition named         */
        l->rep = l->dist == BLAS_DIST_PART ? 0 : (unsigned)rnd_in(0, 3);
        break;
    default:
        l->kind = BLAS_SCA;
        l->m = l->n = 1;
        l->dist = -1;
        l->rep = (unsigned)rnd_in(0, 3);
        break;
    }
    nd.variant = rnd() % 4 == 0 ? INT32_MAX : (int)rnd_in(0, 3);
    return nd;
}

static void rnd_wisdom(opt_wisdom *w, int maxplans, int maxnodes)
{
    static const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {3, 5},
                                   {4096, 4096}};
    opt_wisdom_init(w);
    const int *g = grids[rnd() % 6];
    config_set(&w->config, rnd() % 2 ? "0.1.0" : "9.99.1-rc+Z_x", g[0], g[1]);
    w->config.calibrated = rnd() % 2;
    w->config.alpha = rnd_cost();
    w->config.beta = rnd_cost();
    w->config.io_beta = rnd_cost();
    for (int k = 0; k < OPT_WISDOM_COLL; k++) w->config.coll[k] = rnd_cost();
    int np = (int)rnd_in(0, maxplans);
    opt_wisdom_node nodes[64];
    for (int i = 0; i < np; i++) {
        int nn = (int)rnd_in(0, maxnodes);
        for (int k = 0; k < nn; k++) nodes[k] = rnd_node(&w->config);
        uint64_t key = rnd() % 4 == 0 ? (uint64_t)i : rnd();
        uint32_t hits = rnd() % 4 == 0 ? UINT32_MAX : (uint32_t)rnd_in(0, 9);
        assert_int_equal(opt_wisdom_add(w, key, hits, nn, nodes), DESO_OK);
    }
}

/* Three plans of a few nodes each on a 2 x 2 grid.                         */
static void sample_wisdom(opt_wisdom *w)
{
    opt_wisdom_init(w);
    config_set(&w->config, "0.1.0", 2, 2);
    opt_wisdom_node n[3] = {
        {blas_layout_mat(100, 80, 16, 16, 2, 2), 0},
        {blas_layout_vec(100, 1, 16, 0, 2, 2), 1},
        {blas_layout_sca(3, 2, 2), 2},
    };
    assert_int_equal(opt_wisdom_add(w, UINT64_C(0xdeadbeef01234567), 7, 3, n),
                     DESO_OK);
    assert_int_equal(opt_wisdom_add(w, 1, 0, 2, n + 1), DESO_OK);
    assert_int_equal(opt_wisdom_add(w, UINT64_MAX, 1, 1, n + 2), DESO_OK);
}

static void assert_empty(const opt_wisdom *w)
{
    assert_int_equal(w->nplans, 0);
    assert_null(w->plans);
}

static void assert_zero(const opt_wisdom *w)
{
    assert_empty(w);
    assert_int_equal(w->config.version[0], 0);
    assert_int_equal(w->config.P, 0);
    assert_int_equal(w->config.pr, 0);
    assert_int_equal(w->config.pc, 0);
    assert_false(w->config.calibrated);
    assert_true(double_bits(w->config.alpha) == 0);
    assert_true(double_bits(w->config.beta) == 0);
    assert_true(double_bits(w->config.io_beta) == 0);
}

/* Parses and expects DESO_EWISDOM naming `needle` (NULL: any message).    */
static void expect_reject(const char *text, size_t len, const char *needle)
{
    opt_wisdom w;
    int ign = -1;
    memset(&w, 0x5A, sizeof w);         /* must be overwritten to empty     */
    deso_err e = opt_wisdom_parse(text, len, NULL, &w, &ign);
    if (e != DESO_EWISDOM || (needle && !strstr(deso_last_error(), needle)))
        fail_msg("expected rejection naming '%s', got %s: %s\n-- text:\n%.*s",
                 needle ? needle : "", deso_errname(e), deso_last_error(),
                 (int)(len < 2000 ? len : 2000), text);
    assert_int_equal(ign, 0);
    assert_zero(&w);
}

static void expect_reject_str(const char *text, const char *needle)
{
    expect_reject(text, strlen(text), needle);
}

/* body + a correct end line for nplans (a forged but well-checksummed
 * file, so a rejection is for the reason under test).                      */
static char *with_end(const char *body, int nplans)
{
    size_t n = strlen(body);
    char *s = malloc(n + 64);
    assert_non_null(s);
    memcpy(s, body, n);
    snprintf(s + n, 64, "end %d %08" PRIx32 "\n", nplans,
             opt_wisdom_crc32(body, n));
    return s;
}

static void reject_forged(const char *body, int nplans, const char *needle)
{
    char *s = with_end(body, nplans);
    expect_reject_str(s, needle);
    free(s);
}

/* A collectives line of unmeasured figures.                             */
#define COLL_ZEROS                                                          \
    "collectives 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 "   \
    "0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 "        \
    "0x0p+0\n"

static const char *HEAD = "deso-wisdom 3\n"
                          "config 0.1.0 4 2x2 1 0x1.4f8b588e368f1p-19 0x0p+0 "
                          "0x0p+0\n" COLL_ZEROS;

/* ---- round trips ------------------------------------------------------- */

static void roundtrip(const opt_wisdom *w)
{
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    assert_int_equal(opt_wisdom_write(w, &t1, &n1), DESO_OK);
    assert_int_equal(strlen(t1), n1);           /* exact, NUL-terminated    */
    opt_wisdom r;
    int ign = -1;
    deso_err e = opt_wisdom_parse(t1, n1, &w->config, &r, &ign);
    if (e != DESO_OK) fail_msg("%s\n%s", deso_last_error(), t1);
    assert_int_equal(ign, 0);
    assert_true(opt_wisdom_equal(w, &r));
    assert_int_equal(opt_wisdom_write(&r, &t2, &n2), DESO_OK);
    assert_int_equal(n1, n2);
    assert_memory_equal(t1, t2, n1);
    opt_wisdom_free(&r);
    free(t1);
    free(t2);
}

static void test_roundtrip_sample(void **state)
{
    (void)state;
    opt_wisdom w;
    sample_wisdom(&w);
    roundtrip(&w);
    char *t;
    size_t n;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_OK);
    /* The documented shape, plans in key order.                           */
    assert_true(strncmp(t, "deso-wisdom 3\nconfig 0.1.0 4 2x2 1 ", 35) == 0);
    assert_non_null(strstr(t, "\nplan 0000000000000001 2 0\n"
                              "node vec 1 100 1 16 0 0 2 2 1\n"
                              "node sca 1 1 -1 0 0 3 2 2 2\n"
                              "plan deadbeef01234567 3 7\n"
                              "node mat 100 80 -1 16 16 0 2 2 0\n"));
    assert_non_null(strstr(t, "\nplan ffffffffffffffff 1 1\n"));
    assert_non_null(strstr(t, "\nend 3 "));
    free(t);
    opt_wisdom_free(&w);
}

static void test_roundtrip_random(void **state)
{
    (void)state;
    rng_state = UINT64_C(0x9E3779B97F4A7C15);
    for (int it = 0; it < 300; it++) {
        opt_wisdom w;
        rnd_wisdom(&w, 6, 12);
        roundtrip(&w);
        opt_wisdom_free(&w);
    }
}

static void test_roundtrip_empty(void **state)
{
    (void)state;
    opt_wisdom w;
    opt_wisdom_init(&w);
    config_set(&w.config, "0.1.0", 1, 1);
    w.config.calibrated = false;
    w.config.alpha = w.config.beta = w.config.io_beta = 0.0;
    roundtrip(&w);
    char *t;
    size_t n;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_OK);
    assert_string_equal(t, "deso-wisdom 3\n"
                           "config 0.1.0 1 1x1 0 0x0p+0 0x0p+0 0x0p+0\n"
                           COLL_ZEROS "end 0 fea4ea9d\n");
    free(t);
}

/* The hand-made formatter agrees with glibc's %a in the C locale, and the
 * scanner inverts it bit for bit.                                          */
static void test_hex_doubles(void **state)
{
    (void)state;
    static const struct { double x; const char *s; } fixed[] = {
        {0.0, "0x0p+0"}, {-0.0, "-0x0p+0"}, {1.0, "0x1p+0"}, {0.5, "0x1p-1"},
        {1.5, "0x1.8p+0"}, {DBL_MAX, "0x1.fffffffffffffp+1023"},
        {DBL_MIN, "0x1p-1022"}, {DBL_TRUE_MIN, "0x0.0000000000001p-1022"},
    };
    char buf[OPT__HEXDBL_BUF], ref[64];
    double y;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        opt__wisdom_fmt_double(fixed[i].x, buf);
        assert_string_equal(buf, fixed[i].s);
        assert_true(opt__wisdom_scan_double(buf, strlen(buf), &y));
        assert_true(double_bits(y) == double_bits(fixed[i].x));
    }
    rng_state = 12345;
    for (int it = 0; it < 20000; it++) {
        uint64_t u = rnd();
        if (((u >> 52) & 0x7FF) == 0x7FF) continue;
        if (it % 4 == 0) u &= (UINT64_C(1) << 52) - 1;  /* subnormals      */
        double x = bits_to_double(u);
        opt__wisdom_fmt_double(x, buf);
        snprintf(ref, sizeof ref, "%a", x);
        assert_string_equal(buf, ref);
        assert_true(opt__wisdom_scan_double(buf, strlen(buf), &y));
        assert_true(double_bits(y) == u);
    }
    /* Other spellings of valid values are refused.                         */
    static const char *badd[] = {"0x1.0p+0", "0x1p0", "0x1p+00", "0X1p+0",
                                 "0x1.8P+0", "+0x1p+0", "0x0p-0", "0x2p+0",
                                 "0x1p+1024", "0x1p-1023", "0x0.80p-1022",
                                 "0x0.1p-1021", "inf", "nan", "1.5", "0x",
                                 "0x1.p+0", "0x1.Ap+0", "-", "", "0x1p+",
                                 "0x1.00000000000001p+0", "0x1p+99999"};
    for (size_t i = 0; i < sizeof badd / sizeof *badd; i++)
        assert_false(opt__wisdom_scan_double(badd[i], strlen(badd[i]), &y));
}

/* ---- corruption --------------------------------------------------------- */

/* Parsing a changed copy of a valid file: rejected with an empty result,
 * ignored (only a header change to another format version can do that),
 * or exactly the original.  Never OK with other content.                  */
static int check_mutant(const char *t, size_t n, const opt_wisdom *orig,
                        size_t pos)
{
    opt_wisdom r;
    int ign = -1;
    deso_err e = opt_wisdom_parse(t, n, &orig->config, &r, &ign);
    if (e != DESO_OK) {
        assert_int_equal(e, DESO_EWISDOM);
        assert_int_equal(ign, 0);
        assert_zero(&r);
        assert_non_null(strstr(deso_last_error(), "line "));
        return 0;
    }
    if (ign) {
        assert_empty(&r);
        assert_true(pos < strlen("deso-wisdom 3"));
        opt_wisdom_free(&r);
        return 1;
    }
    assert_true(opt_wisdom_equal(orig, &r));
    opt_wisdom_free(&r);
    return 2;
}

static void test_byte_flips(void **state)
{
    (void)state;
    opt_wisdom w;
    sample_wisdom(&w);
    char *t;
    size_t n;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_OK);
    char *m = malloc(n);
    assert_non_null(m);
    static const char repl[] = {' ', '\n', '0', '1', '9', '-', 'x', 'f', 'A',
                                '\0', '\r', '\t', (char)0xFF};
    int outcomes[3] = {0, 0, 0};
    for (size_t pos = 0; pos < n; pos++) {
        for (int v = 0; v < 8 + (int)sizeof repl; v++) {
            memcpy(m, t, n);
            m[pos] = v < 8 ? (char)(t[pos] ^ (1 << v)) : repl[v - 8];
            if (m[pos] == t[pos]) continue;
            outcomes[check_mutant(m, n, &w, pos)]++;
        }
        /* a deleted byte and a doubled byte                                */
        memcpy(m, t, pos);
        memcpy(m + pos, t + pos + 1, n - pos - 1);
        outcomes[check_mutant(m, n - 1, &w, pos)]++;
    }
    print_message("flips: %d rejected, %d ignored, %d unchanged\n",
                  outcomes[0], outcomes[1], outcomes[2]);
    assert_int_equal(outcomes[2], 0);   /* the CRC leaves no blind spot     */
    free(m);
    free(t);
    opt_wisdom_free(&w);
}

static void test_truncations(void **state)
{
    (void)state;
    opt_wisdom w;
    sample_wisdom(&w);
    char *t;
    size_t n;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_OK);
    for (size_t k = 0; k < n; k++) {
        char *c = malloc(k ? k : 1);     /* exact size: ASan sees overreads */
        assert_non_null(c);
        memcpy(c, t, k);
        expect_reject(k ? c : NULL, k, NULL);
        free(c);
    }
    free(t);
    opt_wisdom_free(&w);
}

static void test_line_level(void **state)
{
    (void)state;
    expect_reject(NULL, 0, "empty file");
    expect_reject_str("\n", "line 1: empty field");
    expect_reject_str("deso-wisdom 3", "line 1: truncated");
    expect_reject_str("deso-wisdom 3\n", "line 2: truncated");
    expect_reject_str("deso-wisdom 3 \n", "line 1: empty field");
    expect_reject_str("deso-wisdom  1\n", "line 1: empty field");
    expect_reject_str("deso-wisdom\t1\n", "line 1: byte 0x09");
    expect_reject_str("DESO-WISDOM 1\n", "not a deso wisdom");

    opt_wisdom w;
    sample_wisdom(&w);
    char *t;
    size_t n;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_OK);

    char *m = malloc(2 * n + 600);
    assert_non_null(m);
    memcpy(m, t, n);                    /* a NUL in the middle              */
    m[20] = '\0';
    expect_reject(m, n, "line 2: NUL byte at column 7");

    size_t k = 0;                       /* CRLF line ends                   */
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '\n') m[k++] = '\r';
        m[k++] = t[i];
    }
    expect_reject(m, k, "line 1: byte 0x0d");

    memcpy(m, t, n);                    /* trailing bytes                   */
    m[n] = '\n';
    expect_reject(m, n + 1, "after the end line");
    m[n] = 'x';
    expect_reject(m, n + 1, "after the end line");

    const char *end = strstr(t, "\nend ") + 1;    /* no end line            */
    expect_reject(t, (size_t)(end - t), "line 11: plan claims 1 nodes");

    memcpy(m, t, n);                    /* wrong / upper-case checksum      */
    char *crc = m + n - 9;
    crc[0] = crc[0] == '0' ? '1' : '0';
    expect_reject(m, n, "checksum mismatch");
    memcpy(m, t, n);
    for (int i = 0; i < 8; i++)
        if (crc[i] >= 'a') crc[i] = (char)(crc[i] - 'a' + 'A');
    crc[0] = 'A';                       /* a checksum of digits only too     */
    expect_reject(m, n, "crc must be 8 lower-case hex digits");
    memcpy(m, t, n);
    m[n - 11] = '9';                     /* "end 3" -> "end 9"              */
    expect_reject(m, n, "end line says 9 plans, file holds 3");

    /* Overlong lines: 512 bytes is the limit, whatever follows.           */
    memset(m, 'a', 600);
    m[600] = '\n';
    expect_reject(m, 601, "line 1: line longer than 512 bytes");
    expect_reject(m, 513, "line 1: line longer than 512 bytes");
    expect_reject(m, 512, "line 1: truncated");
    memcpy(m, t, n);
    k = (size_t)(end - t);
    memset(m + k, 'p', 520);
    expect_reject(m, k + 520, "line 13: line longer than 512");

    free(m);
    free(t);
    opt_wisdom_free(&w);
}

/* ---- other versions and configs: ignored, not errors --------------------- */

static void test_other_format_version(void **state)
{
    (void)state;
    opt_wisdom r;
    int ign = 0;
    /* a future format, and the old ones (format 1 had no io_beta, format
     * 2 no collectives line): ignored, not an error                      */
    static const char *const other[] = {
        "deso-wisdom 4\nwhatever a future format holds\n",
        "deso-wisdom 1\nconfig 0.1.0 1 1x1 0 0x0p+0 0x0p+0\nend 0 e77b07f6\n",
        "deso-wisdom 2\nconfig 0.1.0 1 1x1 0 0x0p+0 0x0p+0 0x0p+0\n"
        "end 0 da243a4a\n",
    };
    for (size_t k = 0; k < sizeof other / sizeof *other; k++) {
        ign = 0;
        assert_int_equal(opt_wisdom_parse(other[k], strlen(other[k]), NULL, &r,
                                          &ign),
                         DESO_OK);
        assert_int_equal(ign, 1);
        assert_zero(&r);
    }
    const char *v7 = "deso-wisdom 70000\n";
    assert_int_equal(opt_wisdom_parse(v7, strlen(v7), NULL, &r, NULL), DESO_OK);
    assert_zero(&r);
    expect_reject_str("deso-wisdom 02\n", "not a deso wisdom");
    expect_reject_str("deso-wisdom 0\n", "not a deso wisdom");
    expect_reject_str("deso-wisdom -1\n", "not a deso wisdom");
    expect_reject_str("deso-wisdom 3 x\n", "not a deso wisdom");
    expect_reject_str("deso-wisdom\n", "not a deso wisdom");
}

static void test_other_config(void **state)
{
    (void)state;
    opt_wisdom w;
    sample_wisdom(&w);                  /* 0.1.0, P 4, 2 x 2                */
    char *t;
    size_t n;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_OK);
    struct { const char *v; int pr, pc; } other[] = {
        {"0.1.0", 1, 2}, {"0.1.0", 4, 1}, {"0.1.0", 1, 4}, {"0.1.1", 2, 2},
        {"0.1.0-dev", 2, 2},
    };
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        opt_wisdom_config run;
        config_set(&run, other[i].v, other[i].pr, other[i].pc);
        opt_wisdom r;
        int ign = 0;
        assert_int_equal(opt_wisdom_parse(t, n, &run, &r, &ign), DESO_OK);
        assert_int_equal(ign, 1);
        assert_empty(&r);
        assert_string_equal(r.config.version, "0.1.0");  /* the file's    */
        assert_int_equal(r.config.P, 4);
        opt_wisdom_free(&r);
    }
    /* The cost parameters are data, not a condition.                       */
    opt_wisdom_config run = w.config;
    run.calibrated = false;
    run.alpha = 1.0;
    opt_wisdom r;
    int ign = 1;
    assert_int_equal(opt_wisdom_parse(t, n, &run, &r, &ign), DESO_OK);
    assert_int_equal(ign, 0);
    assert_true(opt_wisdom_equal(&r, &w));
    opt_wisdom_free(&r);
    /* A corrupt file for another config is still corrupt.                  */
    config_set(&run, "0.1.0", 1, 2);
    t[n - 2] = t[n - 2] == '0' ? '1' : '0';
    assert_int_equal(opt_wisdom_parse(t, n, &run, &r, &ign), DESO_EWISDOM);
    assert_int_equal(ign, 0);
    assert_zero(&r);
    free(t);
    opt_wisdom_free(&w);
}

/* ---- hostile counts, keys and fields ------------------------------------- */

static void test_hostile_counts(void **state)
{
    (void)state;
    char body[4096];
    const char *node = "node sca 1 1 -1 0 0 3 2 2 0\n";
    snprintf(body, sizeof body, "%splan 0000000000000001 1000001 0\n%s", HEAD,
             node);
    reject_forged(body, 1, "line 4: field nnodes");
    snprintf(body, sizeof body, "%splan 0000000000000001 999999 0\n%s", HEAD,
             node);
    reject_forged(body, 1, "line 4: plan claims 999999 nodes but only");
    snprintf(body, sizeof body,
             "%splan 0000000000000001 99999999999999999999 0\n", HEAD);
    reject_forged(body, 1, "field nnodes");
    snprintf(body, sizeof body, "%splan 0000000000000001 -1 0\n", HEAD);
    reject_forged(body, 1, "field nnodes");
    snprintf(body, sizeof body, "%splan 0000000000000001 2 0\n%s"
             "plan 0000000000000002 0 0\n", HEAD, node);
    reject_forged(body, 2, "line 6: plan 0000000000000001 ends after 1 of "
                           "its 2 nodes");
    snprintf(body, sizeof body, "%splan 0000000000000001 1 4294967296\n%s",
             HEAD, node);
    reject_forged(body, 1, "field hits");
    snprintf(body, sizeof body, "%splan 0000000000000001 1 0\n%s", HEAD, node);
    reject_forged(body, 100001, "field nplans");
    reject_forged(body, 0, "end line says 0 plans, file holds 1");

    /* 100000 plans are fine, 100001 are not.                               */
    size_t cap = (size_t)(OPT_WISDOM_MAX_PLANS + 1) * 32 + 256;
    char *big = malloc(cap);
    assert_non_null(big);
    size_t n = (size_t)snprintf(big, cap, "%s", HEAD);
    for (int i = 0; i < OPT_WISDOM_MAX_PLANS; i++)
        n += (size_t)snprintf(big + n, cap - n, "plan %016x 0 0\n", i);
    char *ok = with_end(big, OPT_WISDOM_MAX_PLANS);
    opt_wisdom r;
    assert_int_equal(opt_wisdom_parse(ok, strlen(ok), NULL, &r, NULL),
                     DESO_OK);
    assert_int_equal(r.nplans, OPT_WISDOM_MAX_PLANS);
    assert_non_null(opt_wisdom_find(&r, 77777));
    assert_null(opt_wisdom_find(&r, OPT_WISDOM_MAX_PLANS));
    opt_wisdom_free(&r);
    free(ok);
    snprintf(big + n, cap - n, "plan %016x 0 0\n", OPT_WISDOM_MAX_PLANS);
    reject_forged(big, OPT_WISDOM_MAX_PLANS + 1, "more than 100000 plans");
    free(big);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    char body[4096];
    snprintf(body, sizeof body,
             "%splan 00000000000000aa 0 0\nplan 00000000000000aa 0 1\n", HEAD);
    reject_forged(body, 2, "line 5: duplicate key 00000000000000aa");
    snprintf(body, sizeof body,
             "%splan 00000000000000aa 0 0\nplan 00000000000000a9 0 1\n", HEAD);
    reject_forged(body, 2, "line 5: key 00000000000000a9 out of order");
    snprintf(body, sizeof body, "%splan 00000000000000AA 0 0\n", HEAD);
    reject_forged(body, 1, "key must be 16 lower-case hex digits");
    snprintf(body, sizeof body, "%splan 0aa 0 0\n", HEAD);
    reject_forged(body, 1, "key must be 16");

    /* The writer refuses a hand-built wisdom with a repeated key.          */
    opt_wisdom w;
    sample_wisdom(&w);
    w.plans[1].key = w.plans[0].key;
    char *t = (char *)&w;
    size_t n = 1;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_EINVAL);
    assert_null(t);
    assert_int_equal(n, 0);
    assert_non_null(strstr(deso_last_error(), "two plans with key"));
    opt_wisdom_free(&w);
}

static void test_field_ranges(void **state)
{
    (void)state;
    static const struct { const char *line, *needle; } nodes[] = {
        {"node vec 1 -5 0 1 0 0 2 2 0", "field n"},
        {"node vec 1 5 3 1 0 0 2 2 0", "field dist"},
        {"node vec 1 5 2 1 0 0 2 2 0", "vector by partition must have b 0"},
        {"node vec 1 5 2 0 0 1 2 2 0", "vector by partition must have b 0 and rep 0"},
        {"node vec 1 5 0 1 0 4 2 2 0", "field rep"},
        {"node vec 1 5 0 0 0 0 2 2 0", "vector block size"},
        {"node vec 1 5 -1 3 0 0 2 2 0", "vector block size"},
        {"node vec 1 5 0 1 1 0 2 2 0", "vector must have nb 0"},
        {"node vec 2 5 0 1 0 0 2 2 0", "vector must have m 1"},
        {"node mat 4 4 -1 0 2 0 2 2 0", "matrix block size < 1"},
        {"node mat 4 4 -1 2 0 0 2 2 0", "matrix block size < 1"},
        {"node mat 4 4 0 2 2 0 2 2 0", "matrix must have dist -1"},
        {"node mat 4 4 -1 2 2 1 2 2 0", "matrix must have dist -1 and rep 0"},
        {"node mat -4 4 -1 2 2 0 2 2 0", "field m"},
        {"node sca 1 2 -1 0 0 0 2 2 0", "scalar must be 1 x 1"},
        {"node sca 1 1 -1 1 0 0 2 2 0", "scalar must have dist -1"},
        {"node sca 1 1 -1 0 0 3 2 2 -1", "field variant"},
        {"node sca 1 1 -1 0 0 3 2 2 2147483648", "field variant"},
        {"node vec 1 5 0 1 0 0 1 4 0", "grid differs from config"},
        {"node vec 1 5 0 1 0 0 0 2 0", "field pr"},
        {"node foo 1 5 0 1 0 0 2 2 0", "kind must be"},
        {"node VEC 1 5 0 1 0 0 2 2 0", "kind must be"},
        {"node vec 01 5 0 1 0 0 2 2 0", "field m"},
        {"node vec +1 5 0 1 0 0 2 2 0", "field m"},
        {"node vec 1 5 -0 1 0 0 2 2 0", "field dist"},
        {"node vec 1 9223372036854775808 0 1 0 0 2 2 0", "field n"},
        {"node vec 1 5 0 1 0 0 2 2", "expected node"},
        {"node vec 1 5 0 1 0 0 2 2 0 7", "expected node"},
        {"node vec 1 5 0 1 0 0 2 2 0 7 7 7 7 7 7 7 7 7 7", "too many fields"},
        {"nodes vec 1 5 0 1 0 0 2 2 0",
         "plan 0000000000000001 ends after 0 of its 1 nodes"},
        {"end 1 00000000",
         "plan 0000000000000001 ends after 0 of its 1 nodes"},
    };
    char body[4096];
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
        /* a second plan, so that enough bytes follow the first          */
        snprintf(body, sizeof body, "%splan 0000000000000001 1 0\n%s\n"
                 "plan 0000000000000002 0 0\n", HEAD, nodes[i].line);
        char needle[128];
        snprintf(needle, sizeof needle, "line 5: %s", nodes[i].needle);
        reject_forged(body, 2, needle);
    }
    /* The largest sizes are fine.                                          */
    snprintf(body, sizeof body, "%splan 0000000000000001 1 0\nnode mat "
             "9223372036854775807 0 -1 9223372036854775807 1 0 2 2 "
             "2147483647\n", HEAD);
    char *ok = with_end(body, 1);
    opt_wisdom r;
    assert_int_equal(opt_wisdom_parse(ok, strlen(ok), NULL, &r, NULL),
                     DESO_OK);
    assert_true(r.plans[0].nodes[0].lay.m == INT64_MAX);
    opt_wisdom_free(&r);
    free(ok);

    static const struct { const char *line, *needle; } configs[] = {
        {"config 0.1.0 4 2x3 1 0x0p+0 0x0p+0 0x0p+0",
         "grid pr x pc does not make P"},
        {"config 0.1.0 0 1x1 1 0x0p+0 0x0p+0 0x0p+0", "field P"},
        {"config 0.1.0 16777217 1x16777217 1 0x0p+0 0x0p+0 0x0p+0",
         "field P"},
        {"config 0.1.0 4 2x2 2 0x0p+0 0x0p+0 0x0p+0", "field calibrated"},
        {"config 0.1.0 4 2*2 1 0x0p+0 0x0p+0 0x0p+0", "grid must be"},
        {"config 0.1.0 4 2x02 1 0x0p+0 0x0p+0 0x0p+0", "grid must be"},
        {"config 0.1.0 4 x4 1 0x0p+0 0x0p+0 0x0p+0", "grid must be"},
        {"config 0.1.0 4 2x2x1 1 0x0p+0 0x0p+0 0x0p+0", "grid must be"},
        {"config 0.1.0 4 2x2 1 -0x1p+0 0x0p+0 0x0p+0",
         "alpha and beta must be"},
        {"config 0.1.0 4 2x2 1 0x0p+0 0x1.0p+0 0x0p+0", "beta is not"},
        {"config 0.1.0 4 2x2 1 inf 0x0p+0 0x0p+0", "alpha is not"},
        {"config 0.1.0 4 2x2 1 0x0p+0 0x0p+0 nan", "io_beta is not"},
        {"config 0.1.0 4 2x2 1 0x0p+0 0x0p+0 -0x1p-20",
         "io_beta must be"},
        {"config 0.1/0 4 2x2 1 0x0p+0 0x0p+0 0x0p+0", "bad library version"},
        {"config 0123456789012345678901234567890123 4 2x2 1 0x0p+0 0x0p+0 "
         "0x0p+0",
         "bad library version"},
        {"config 0.1.0 4 2x2 1 0x0p+0 0x0p+0", "expected config"},
        {"plan 0000000000000001 0 0", "expected config"},
    };
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
        snprintf(body, sizeof body, "deso-wisdom 3\n%s\n", configs[i].line);
        char needle[128];
        snprintf(needle, sizeof needle, "line 2: %s", configs[i].needle);
        reject_forged(body, 0, needle);
    }
    snprintf(body, sizeof body, "%sflan 0000000000000001 0 0\n", HEAD);
    reject_forged(body, 1, "line 4: expected plan or end");
    /* the collectives line: present, 18 figures, each finite and >= 0     */
    static const struct { const char *line, *needle; } colls[] = {
        {"plan 0000000000000001 0 0", "expected collectives"},
        {"collectives 0x0p+0", "expected collectives"},
        {"collectives 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 "
         "0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 "
         "0x0p+0 1.5",
         "collectives: figure 18 is not"},
        {"collectives 0x0p+0 -0x1p-20 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 "
         "0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 "
         "0x0p+0 0x0p+0",
         "collectives: every figure must be finite and >= 0"},
        {"collectives 0x0p+0 0x0p+0 0x0p+0 0x0p+0 inf 0x0p+0 0x0p+0 0x0p+0 "
         "0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 0x0p+0 "
         "0x0p+0",
         "collectives: figure 5 is not"},
    };
    for (size_t i = 0; i < sizeof colls / sizeof *colls; i++) {
        snprintf(body, sizeof body, "deso-wisdom 3\nconfig 0.1.0 4 2x2 1 "
                 "0x0p+0 0x0p+0 0x0p+0\n%s\n", colls[i].line);
        char needle[128];
        snprintf(needle, sizeof needle, "line 3: %s", colls[i].needle);
        reject_forged(body, 0, needle);
    }
}

/* ---- the writer and the container ---------------------------------------- */

static void test_writer_rejects(void **state)
{
    (void)state;
    opt_wisdom w;
    char *t;
    size_t n;
    assert_int_equal(opt_wisdom_write(NULL, &t, &n), DESO_ENULL);
    assert_null(t);
    sample_wisdom(&w);
    assert_int_equal(opt_wisdom_write(&w, NULL, &n), DESO_ENULL);
    opt_wisdom_config keep = w.config;
    w.config.pr = 3;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_EINVAL);
    assert_null(t);
    assert_non_null(strstr(deso_last_error(), "does not make P"));
    w.config = keep;
    w.config.beta = bits_to_double(UINT64_C(0x7FF8000000000000));
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_EINVAL);
    w.config.beta = -1e-9;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_EINVAL);
    w.config = keep;
    memset(w.config.version, 'v', sizeof w.config.version);  /* no NUL    */
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_EINVAL);
    snprintf(w.config.version, sizeof w.config.version, "a b");
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_EINVAL);
    w.config = keep;
    w.plans[2].nodes[0].lay.rep = 4;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_EINVAL);
    assert_non_null(strstr(deso_last_error(), "node 0: rep > 3"));
    w.plans[2].nodes[0].lay.rep = 3;
    w.plans[2].nodes[0].lay.kind = (blas_kind)7;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_EINVAL);
    w.plans[2].nodes[0].lay.kind = BLAS_SCA;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_OK);
    free(t);

    /* Plans out of order in a hand-built wisdom are written sorted.        */
    opt_wisdom_plan tmp = w.plans[0];
    w.plans[0] = w.plans[2];
    w.plans[2] = tmp;
    assert_int_equal(opt_wisdom_write(&w, &t, &n), DESO_OK);
    opt_wisdom r;
    assert_int_equal(opt_wisdom_parse(t, n, NULL, &r, NULL), DESO_OK);
    assert_true(r.plans[0].key < r.plans[1].key &&
                r.plans[1].key < r.plans[2].key);
    assert_true(r.plans[0].key == w.plans[2].key);
    opt_wisdom_free(&r);
    free(t);
    opt_wisdom_free(&w);
}

static void test_add_find_free(void **state)
{
    (void)state;
    opt_wisdom w;
    opt_wisdom_init(&w);
    config_set(&w.config, "0.1.0", 1, 2);
    rng_state = 777;
    opt_wisdom_node nodes[8];
    uint64_t keys[200];
    for (int i = 0; i < 200; i++) {
        keys[i] = rnd() >> (rnd() % 64);
        for (int k = 0; k < 8; k++) nodes[k] = rnd_node(&w.config);
        int before = w.nplans;
        bool had = opt_wisdom_find(&w, keys[i]) != NULL;
        assert_int_equal(opt_wisdom_add(&w, keys[i], (uint32_t)i, i % 9,
                                        nodes), DESO_OK);
        assert_int_equal(w.nplans, before + (had ? 0 : 1));
        const opt_wisdom_plan *p = opt_wisdom_find(&w, keys[i]);
        assert_non_null(p);
        assert_int_equal(p->hits, (uint32_t)i);
        assert_int_equal(p->nnodes, i % 9);
        if (i % 9) assert_int_equal(p->nodes[0].variant, nodes[0].variant);
    }
    for (int i = 1; i < w.nplans; i++)
        assert_true(w.plans[i - 1].key < w.plans[i].key);
    /* Replace keeps the count and updates the contents.                    */
    int np = w.nplans;
    assert_int_equal(opt_wisdom_add(&w, keys[3], 99, 0, NULL), DESO_OK);
    assert_int_equal(w.nplans, np);
    assert_int_equal(opt_wisdom_find(&w, keys[3])->hits, 99);
    assert_null(opt_wisdom_find(&w, keys[3])->nodes);
    assert_int_equal(opt_wisdom_add(&w, 1, 0, -1, nodes), DESO_ESIZE);
    assert_int_equal(opt_wisdom_add(&w, 1, 0, 1, NULL), DESO_ENULL);
    assert_int_equal(opt_wisdom_add(NULL, 1, 0, 0, NULL), DESO_ENULL);
    assert_int_equal(w.nplans, np);
    roundtrip(&w);
    opt_wisdom_free(&w);
    assert_zero(&w);
    opt_wisdom_free(&w);                /* twice, and NULL: harmless        */
    opt_wisdom_free(NULL);
    assert_null(opt_wisdom_find(&w, 0));
    assert_null(opt_wisdom_find(NULL, 0));

    /* parse's argument errors                                              */
    int ign = 5;
    assert_int_equal(opt_wisdom_parse("x", 1, NULL, NULL, &ign), DESO_ENULL);
    assert_int_equal(ign, 0);
    assert_int_equal(opt_wisdom_parse(NULL, 3, NULL, &w, NULL), DESO_ENULL);
    assert_zero(&w);
}

static void test_crc32(void **state)
{
    (void)state;
    assert_int_equal(opt_wisdom_crc32("", 0), 0);
    assert_int_equal(opt_wisdom_crc32("123456789", 9), 0xCBF43926u);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_hex_doubles),
        cmocka_unit_test(test_roundtrip_sample),
        cmocka_unit_test(test_roundtrip_random),
        cmocka_unit_test(test_roundtrip_empty),
        cmocka_unit_test(test_byte_flips),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_line_level),
        cmocka_unit_test(test_other_format_version),
        cmocka_unit_test(test_other_config),
        cmocka_unit_test(test_hostile_counts),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_field_ranges),
        cmocka_unit_test(test_writer_rejects),
        cmocka_unit_test(test_add_find_free),
    };
    return cmocka_run_group_tests(t, NULL, NULL);
}
