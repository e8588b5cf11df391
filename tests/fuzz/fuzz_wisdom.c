/* libFuzzer target: the wisdom reader must never crash, leak or read out
 * of bounds; whatever it rejects must leave its output empty, and whatever
 * it accepts must re-serialise to the same bytes (the format has one
 * spelling per wisdom) and parse again to the same wisdom.
 * deso-fuzz-sources: optimizer/wisdom.c optimizer/wisdom_read.c optimizer/wisdom_write.c placement/errors.c placement/alloc.c */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/wisdom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_empty(const opt_wisdom *w, int config_too)
{
    if (w->nplans != 0 || w->plans != NULL) return 0;
    if (!config_too) return 1;
    const opt_wisdom_config *c = &w->config;
    return c->version[0] == 0 && c->P == 0 && c->pr == 0 && c->pc == 0 &&
           !c->calibrated && c->alpha == 0 && c->beta == 0 &&
           c->io_beta == 0;
}

static void check(char *text, size_t size)
{
    opt_wisdom w;
    int ignored = -1;
    deso_err e = opt_wisdom_parse(text, size, NULL, &w, &ignored);
    if (e != DESO_OK) {
        if (e != DESO_EWISDOM || ignored != 0 || !is_empty(&w, 1)) abort();
        return;
    }
    if (ignored) {
        if (!is_empty(&w, 1)) abort();     /* expect NULL: only a format    */
        return;                            /* version can be ignored        */
    }
    char *out = NULL;
    size_t len = 0;
    if (opt_wisdom_write(&w, &out, &len) != DESO_OK) abort();
    if (len != size || memcmp(out, text, size) != 0) abort();
    opt_wisdom again;
    if (opt_wisdom_parse(out, len, &w.config, &again, &ignored) != DESO_OK ||
        ignored || !opt_wisdom_equal(&w, &again))
        abort();
    /* Every plan is found by its key.                                      */
    for (int i = 0; i < w.nplans; i++)
        if (opt_wisdom_find(&w, w.plans[i].key) != &w.plans[i]) abort();
    opt_wisdom_free(&again);
    opt_wisdom_free(&w);
    free(out);
}

/* Mutations almost never keep the CRC right, so the input is checked a
 * second time with the checksum of its last "end" line recomputed: that
 * lets the fuzzer reach the field rules behind the CRC.                   */
static bool fix_crc(char *t, size_t n)
{
    if (n < 10 || t[n - 1] != '\n' || t[n - 10] != ' ') return false;
    size_t s = n - 10;
    while (s > 0 && t[s - 1] != '\n') s--;
    if (n - s < 4 || memcmp(t + s, "end ", 4) != 0) return false;
    char hex[9];
    snprintf(hex, sizeof hex, "%08" PRIx32, opt_wisdom_crc32(t, s));
    if (memcmp(t + n - 9, hex, 8) == 0) return false;
    memcpy(t + n - 9, hex, 8);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly `size` bytes, so ASan catches any overread.        */
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    memcpy(text, data, size);
    check(size ? text : NULL, size);
    if (fix_crc(text, size)) check(text, size);
    free(text);
    return 0;
}
