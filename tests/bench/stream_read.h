/* stream_read.h: the streaming read that read_bw and spmv_bw both time, so
 * that a kernel's bandwidth is set against the same definition of the
 * machine's read bandwidth.  Header-only.                                 */
#ifndef DESO_BENCH_STREAM_READ_H
#define DESO_BENCH_STREAM_READ_H

#include <stddef.h>

/* Sums x as four interleaved streams (quarters of the array), two
 * accumulators each: several streams keep more cache-line fetches in flight
 * than one, which on this machine is worth ~15% of single-core bandwidth. */
static inline double stream_sum(const double *x, size_t len)
{
    size_t q = len / 8 * 2; /* even, 4q <= len */
    const double *x0 = x, *x1 = x + q, *x2 = x + 2 * q, *x3 = x + 3 * q;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    for (size_t i = 0; i < q; i += 2) {
        s0 += x0[i];
        s1 += x1[i];
        s2 += x2[i];
        s3 += x3[i];
        s4 += x0[i + 1];
        s5 += x1[i + 1];
        s6 += x2[i + 1];
        s7 += x3[i + 1];
    }
    for (size_t i = 4 * q; i < len; i++)
        s0 += x[i];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

#endif
