/* stream_read.h: the streaming read that read_bw and spmv_bw both time, so
 * that a kernel's bandwidth is set against the same definition of the
 * machine's read bandwidth.  Header-only.                                 */
#ifndef DESO_BENCH_STREAM_READ_H
#define DESO_BENCH_STREAM_READ_H

#include <stddef.h>

/* How far each stream's start is moved back from a quarter of the array:
 * an odd number of cache lines.  Streams exactly a quarter apart are a
 * power of two apart whenever the array's size is, and on this machine
 * such streams conflict in memory: over 1 GiB they read at half the rate
 * of one stream, while staggered they keep their lead at every size.     */
#define STREAM_SKEW ((size_t)8 * 1021)

static inline double stream_tail(const double *x, size_t from, size_t to)
{
    double s = 0;
    for (size_t i = from; i < to; i++)
        s += x[i];
    return s;
}

/* Sums x as four interleaved streams (about quarters of the array), two
 * accumulators each: several streams keep more cache-line fetches in
 * flight than one, which on this machine is worth ~15% of single-core
 * bandwidth.  Stream k starts at k (len / 4 - STREAM_SKEW), so the last
 * is the longest; what the first's length leaves over is summed after.  */
static inline double stream_sum(const double *x, size_t len)
{
    if (len < 64 * STREAM_SKEW)
        return stream_tail(x, 0, len);
    size_t step = len / 4 - STREAM_SKEW;
    size_t q = step / 2 * 2; /* the last stream is the longest */
    const double *x0 = x, *x1 = x + step, *x2 = x + 2 * step,
                 *x3 = x + 3 * step;
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
    for (size_t k = 0; k < 3; k++)
        s0 += stream_tail(x, k * step + q, (k + 1) * step);
    s0 += stream_tail(x, 3 * step + q, len);
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

#endif
