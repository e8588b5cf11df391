/* Helpers shared by the serial tests and the MPI tests (header-only, no
 * MPI): tests of pure code include this alone, so they run as one plain
 * process; tests/deso/test_util.h includes it for the MPI tests.          */
#ifndef DESO_TESTS_SERIAL_UTIL_H
#define DESO_TESTS_SERIAL_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A reproducible generator: the same seed draws the same numbers on every
 * rank and every run, so a failure reproduces.                            */
typedef struct { uint64_t s; } tu_rng;
static inline double tu_rand(tu_rng *r)   /* uniform in [-1, 1)           */
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(r->s >> 11) / 4503599627370496.0 - 1.0;
}
static inline int64_t tu_below(tu_rng *r, int64_t n)   /* in [0, n)     */
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (int64_t)((r->s >> 33) % (uint64_t)n);
}
static inline void tu_fill(tu_rng *r, double *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++) a[i] = tu_rand(r);
}

/* A template for mkstemp / mkdtemp: "$TMPDIR/deso-NAME-" (TMPDIR unset or
 * empty: /tmp) followed by the six characters they replace.  0, or -1 when
 * it does not fit in len bytes (buf is then "").                         */
static inline int tu_temp_template(const char *name, char *buf, size_t len)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0') dir = "/tmp";
    int k = snprintf(buf, len, "%s/deso-%s-", dir, name);
    if (k < 0 || (size_t)k + 7 > len) {
        if (len > 0) buf[0] = '\0';
        return -1;
    }
    memset(buf + k, 'X', 6);
    buf[k + 6] = '\0';
    return 0;
}

/* A new empty file holding text (len bytes), its name in path; 0, or -1
 * when it could not be made or written.                                   */
static inline int tu_temp_file(const char *name, const char *text, size_t len,
                               char *path, size_t pathlen)
{
    if (tu_temp_template(name, path, pathlen) != 0) return -1;
    FILE *f = NULL;
    int fd = mkstemp(path);
    if (fd >= 0) f = fdopen(fd, "wb");
    int ok = f != NULL && fwrite(text, 1, len, f) == len;
    if (f != NULL) ok = (fclose(f) == 0) && ok;
    else if (fd >= 0) close(fd);
    return ok ? 0 : -1;
}

#endif
