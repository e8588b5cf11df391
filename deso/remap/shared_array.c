/* deso/remap/shared_array.c: deso_redist_array_alloc / _free and the registry
 * behind single-copy remaps (shared_array.h).
 *
 * A remap whose source arrays come from here can skip the ring: each
 * receiver reads its senders' sources where they lie and writes its
 * target once, in order.  The arrays are MPI-3 shared windows (one per
 * allocation, alloc_shared_noncontig so each rank's part is its own
 * pages); on several nodes they are plain memory and remaps use the
 * ordinary transports.  The registry is a list, searched by address: a
 * program holds a few such arrays.                                       */
#include "deso/deso_redist.h"
#include "deso/core/agree.h"
#include "deso/core/mpi.h"
#include "deso/core/node.h"
#include "deso/remap/shared_array.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "placement/alloc.h"
#include "placement/errors.h"

typedef struct seg {
    struct seg *next;
    MPI_Win win;            /* MPI_WIN_NULL: plain memory                  */
    double *mine;
    int64_t count;          /* doubles in this rank's part                 */
    int n;                  /* ranks of the allocating communicator        */
    int *world;             /* their world ranks                           */
    uint64_t *addr;         /* their parts as they see them                */
    int64_t *len;           /* their lengths                               */
    const double **map;     /* their parts as this process sees them       */
} seg;

static seg *segs;

static void seg_free(seg *s)
{
    if (s == NULL) return;
    if (s->win != MPI_WIN_NULL) MPI_Win_free(&s->win);
    else free(s->mine);
    free(s->world);
    free(s->addr);
    free(s->len);
    free(s->map);
    free(s);
}

/* Maps every rank's part (collective over comm): their world ranks, their
 * addresses and lengths as they see them, and where they are here.      */
static deso_err share(MPI_Comm comm, seg *s)
{
    int n = s->n;
    s->world = deso__malloc((size_t)n * sizeof *s->world);
    s->addr = deso__malloc((size_t)n * sizeof *s->addr);
    s->len = deso__malloc((size_t)n * sizeof *s->len);
    s->map = deso__malloc((size_t)n * sizeof *s->map);
    int64_t *mine = deso__malloc(3 * sizeof *mine), *all =
        deso__malloc((size_t)n * 3 * sizeof *all);
    deso_err e = DESO_OK;
    if (!(s->world && s->addr && s->len && s->map && mine && all))
        e = deso__fail(DESO_ENOMEM, "out of memory");
    e = deso__agree(comm, "deso_redist_array_alloc", e, NULL, 0);
    int rc = MPI_SUCCESS;
    if (e == DESO_OK) {
        int wr = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &wr);
        mine[0] = wr;
        mine[1] = (int64_t)(uintptr_t)s->mine;
        mine[2] = s->count;
        rc = MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, comm);
        if (rc != MPI_SUCCESS)
            e = deso__mpi_at(rc, "deso_redist_array_alloc", "MPI_Allgather");
    }
    for (int q = 0; q < n && e == DESO_OK; q++) {
        s->world[q] = (int)all[3 * q];
        s->addr[q] = (uint64_t)all[3 * q + 1];
        s->len[q] = all[3 * q + 2];
        MPI_Aint sz;
        int du;
        double *qb = NULL;
        rc = MPI_Win_shared_query(s->win, q, &sz, &du, &qb);
        if (rc != MPI_SUCCESS)
            e = deso__mpi_at(rc, "deso_redist_array_alloc",
                             "MPI_Win_shared_query");
        s->map[q] = qb;
    }
    free(mine);
    free(all);
    return e;
}

/* This rank's view of the arguments (the caller agrees on it).          */
static deso_err check_args(int64_t count, double **array, const char *fn)
{
    DESO_CHECK(array != NULL, DESO_ENULL, "%s: array is NULL", fn);
    *array = NULL;
    DESO_CHECK(count >= 0 && count <= INT64_MAX / 16, DESO_EINVAL,
               "%s: count = %lld is negative or too large", fn,
               (long long)count);
    /* More than the machine's memory would only fail (or be killed)
     * inside the collective: refuse it here, where all ranks agree.     */
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    DESO_CHECK(pages <= 0 || psize <= 0 ||
                   count <= (int64_t)pages / 8 * (int64_t)psize,
               DESO_ENOMEM, "%s: %lld doubles are more than this machine's "
               "memory", fn, (long long)count);
    return DESO_OK;
}

/* s's part in a shared-memory window of the node's ranks, mapped on every
 * rank (share).  Collective.                                             */
static deso_err alloc_shared(MPI_Comm comm, seg *s, size_t bytes,
                             const char *fn)
{
    /* On a duplicate that returns errors: the window does not need it
     * afterwards, and the caller's error handler stays out of it.        */
    MPI_Comm dup = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(comm, &dup);
    if (rc == MPI_SUCCESS) MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    MPI_Comm_size(comm, &s->n);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_allocate_shared((MPI_Aint)bytes, sizeof(double), info,
                                     dup, &s->mine, &s->win);
    MPI_Info_free(&info);
    deso_err e = DESO_OK;
    if (rc == MPI_SUCCESS) e = share(dup, s);
    if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
    /* assumed collective: MPICH sizes the segment together before mapping
     * it                                                                  */
    if (rc != MPI_SUCCESS)
        return deso__mpi_at(rc, fn, "MPI_Win_allocate_shared");
    return e;
}

deso_err deso_redist_array_alloc(MPI_Comm comm, int64_t count,
                                 double **array)
{
    static const char *fn = "deso_redist_array_alloc";
    DESO_CHECK(comm != MPI_COMM_NULL, DESO_EINVAL, "%s: comm is "
               "MPI_COMM_NULL", fn);
    /* Agree on the arguments and this rank's record before the
     * collective allocation.                                            */
    deso_err e = check_args(count, array, fn);
    seg *s = e == DESO_OK ? deso__calloc(1, sizeof *s) : NULL;
    if (e == DESO_OK && s == NULL)
        e = deso__fail(DESO_ENOMEM, "%s: out of memory", fn);
    e = deso__agree(comm, fn, e, NULL, 0);
    if (e != DESO_OK) {
        free(s);
        return e;
    }
    s->win = MPI_WIN_NULL;
    s->count = count;
    size_t bytes = (size_t)(count > 0 ? count : 1) * sizeof(double);
    if (deso__one_node(comm)) {
        e = alloc_shared(comm, s, bytes, fn);
        if (s->win == MPI_WIN_NULL) {      /* nothing collective to undo  */
            free(s);
            return e;
        }
    } else {
        s->mine = deso__malloc(bytes);
        if (s->mine == NULL)
            e = deso__fail(DESO_ENOMEM, "%s: out of memory", fn);
    }
    /* Every rank agrees, or all free what they made (MPI_Win_free is
     * collective).                                                       */
    e = deso__agree(comm, fn, e, NULL, 0);
    if (e != DESO_OK) {
        seg_free(s);
        return e;
    }
    memset(s->mine, 0, bytes);
    s->next = segs;
    segs = s;
    *array = s->mine;
    return DESO_OK;
}

deso_err deso_redist_array_free(double *array)
{
    if (array == NULL) return DESO_OK;
    for (seg **p = &segs; *p != NULL; p = &(*p)->next)
        if ((*p)->mine == array) {
            seg *s = *p;
            *p = s->next;
            seg_free(s);
            return DESO_OK;
        }
    return deso__fail(DESO_EINVAL, "deso_redist_array_free: %p is not an "
                      "array from deso_redist_array_alloc", (void *)array);
}

/* Whether [p, p + n) lies inside [base, base + len).                     */
static bool inside(uintptr_t p, int64_t n, uintptr_t base, int64_t len)
{
    return p >= base && n >= 0 && n <= len &&
           (p - base) / sizeof(double) <= (uint64_t)(len - n);
}

bool deso__shared_readable(const double *p, int64_t n, int peer)
{
    for (const seg *s = segs; s != NULL; s = s->next) {
        if (s->win == MPI_WIN_NULL ||
            !inside((uintptr_t)p, n, (uintptr_t)s->mine, s->count))
            continue;
        for (int q = 0; q < s->n; q++)
            if (s->world[q] == peer) return true;
    }
    return false;
}

static int64_t map_failures;       /* deso__shared_map_fail            */

void deso__shared_map_fail(int64_t n)
{
    map_failures = n;
}

const double *deso__shared_map(int owner, uint64_t addr, int64_t n)
{
    if (map_failures > 0) {
        map_failures--;
        return NULL;
    }
    for (const seg *s = segs; s != NULL; s = s->next) {
        if (s->win == MPI_WIN_NULL) continue;
        for (int q = 0; q < s->n; q++)
            if (s->world[q] == owner && (addr - s->addr[q]) % 8 == 0 &&
                inside((uintptr_t)addr, n, (uintptr_t)s->addr[q], s->len[q]))
                return s->map[q] + (addr - s->addr[q]) / sizeof(double);
    }
    return NULL;
}
