/* Internal to optimizer/wisdom*.c: what the reader and the writer share. */
#ifndef DESO_OPTIMIZER_WISDOM_IMPL_H
#define DESO_OPTIMIZER_WISDOM_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "optimizer/wisdom.h"

/* Enough for "-0x1.fffffffffffffp+1023" and its NUL.                       */
#define OPT__HEXDBL_BUF 32

/* The shortest possible node line, "node vec 1 0 -1 0 0 0 1 1 0\n" less
 * its longer fields (4 + 4 + 9 * 2 + 1 bytes), and end line.               */
#define OPT__MIN_NODE_LINE 27
#define OPT__MIN_END_LINE 15

void opt__wisdom_fmt_double(double x, char buf[OPT__HEXDBL_BUF]);
/* Exactly the spelling opt__wisdom_fmt_double produces, else false.        */
bool opt__wisdom_scan_double(const char *s, size_t n, double *out);

bool opt__wisdom_version_ok(const char *s, size_t n);
/* NULL when valid, else the reason.                                        */
const char *opt__wisdom_check_config(const opt_wisdom_config *c);
const char *opt__wisdom_check_node(const opt_wisdom_node *nd,
                                   const opt_wisdom_config *c);
const char *opt__wisdom_kind_name(blas_kind k);

#endif
