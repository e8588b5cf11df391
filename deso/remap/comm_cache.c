/* deso/remap/comm_cache.c: the remaps' per-communicator cache
 * (comm_cache.h).
 *
 * The cache hangs on the user's communicator as an attribute whose delete
 * callback (run by MPI_Comm_free, and by MPI_Finalize for
 * MPI_COMM_WORLD) drops the attribute's reference; each remap holds one
 * more.  The rings live in MPI-3 shared windows on the duplicate, each
 * rank's part cut into slots of one size; a remap takes slots for its
 * sends and gives them back when destroyed, and a new window is added
 * (collectively) only when some rank has too few free slots.  A slot is
 * reused only by a remap created after the one that gave it back, and
 * creating a remap agrees over the communicator before it touches its
 * rings, so no rank still reads a slot's old contents.
 *
 * The MPI transport's message buffers are kept the same way, but locally:
 * a destroyed remap leaves its send and receive buffers here and the next
 * remap takes them, so that only the first remap on a communicator maps
 * their pages.  A taken buffer leaves the cache, so two live remaps never
 * share one.                                                             */
#include "deso/remap/comm_cache.h"

#include <stdlib.h>
#include <string.h>

#include "deso/core/agree.h"
#include "deso/core/mpi.h"
#include "deso/core/stats.h"
#include "placement/alloc.h"
#include "placement/errors.h"

/* Fewest slots a rank adds at once: a few remaps' worth.                 */
#define GROW_MIN 8

/* Most windows per communicator (every rank adds one at the same time, so
 * all reach the limit together; remaps then stay on MPI).               */
#define MAX_WIN 64

typedef struct pool_win {
    MPI_Win win;
    char *base;              /* this rank's part                          */
    int64_t cap;             /* its slots                                 */
    unsigned char *used;     /* per slot                                  */
} pool_win;

struct deso__comm_cache {
    MPI_Comm dup;
    int refs;                /* the attribute's, and one per remap        */
    int64_t bytes;           /* one slot (0 until the first window)       */
    int nwin;
    pool_win win[MAX_WIN];
    double *buf[2];          /* kept buffers, per deso__buf_kind          */
    int64_t buf_len[2];      /* their lengths (doubles)                   */
};

static int live;             /* caches in this process                    */
static int key = MPI_KEYVAL_INVALID;

int deso__comm_cache_count(void) { return live; }

MPI_Comm deso__comm_cache_comm(const deso__comm_cache *c) { return c->dup; }

void deso__comm_cache_release(deso__comm_cache *c)
{
    if (c == NULL || --c->refs > 0) return;
    free(c->buf[DESO__BUF_SEND]);
    free(c->buf[DESO__BUF_RECV]);
    for (int w = 0; w < c->nwin; w++) {
        MPI_Win_free(&c->win[w].win);
        free(c->win[w].used);
    }
    MPI_Comm_free(&c->dup);
    free(c);
    live--;
}

static int on_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    deso__comm_cache_release(val);
    return MPI_SUCCESS;
}

deso_err deso__comm_cache_get(MPI_Comm comm, deso__comm_cache **out)
{
    *out = NULL;
    int rc = MPI_SUCCESS;
    if (key == MPI_KEYVAL_INVALID)
        rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key,
                                    NULL);
    if (rc != MPI_SUCCESS)
        return deso__mpi_at(rc, "deso remap", "MPI_Comm_create_keyval");
    void *val = NULL;
    int found = 0;
    rc = MPI_Comm_get_attr(comm, key, &val, &found);
    if (rc != MPI_SUCCESS)
        return deso__mpi_at(rc, "deso remap", "MPI_Comm_get_attr");
    if (found) {
        *out = val;
        (*out)->refs++;
        return DESO_OK;
    }
    deso__comm_cache *c = deso__calloc(1, sizeof *c);
    MPI_Comm dup = MPI_COMM_NULL;
    rc = MPI_Comm_dup(comm, &dup);       /* collective: before any exit  */
    if (rc != MPI_SUCCESS) {
        free(c);
        return deso__mpi_at(rc, "deso remap", "MPI_Comm_dup");
    }
    /* A rank that failed here must not leave the others alone in the
     * remap's next collective: they all fail together, or none does.   */
    deso_err e = DESO_OK;
    if (c == NULL) e = deso__fail(DESO_ENOMEM, "deso remap: out of memory");
    rc = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    if (e == DESO_OK && rc != MPI_SUCCESS)
        e = deso__mpi_at(rc, "deso remap", "MPI_Comm_set_errhandler");
    int me = 0, size = 1;
    MPI_Comm_rank(dup, &me);
    MPI_Comm_size(dup, &size);
    e = deso__agree(dup, "deso remap", e, NULL, 0);
    deso__stats_collective((int64_t)sizeof(int64_t), size, me, 2);
    if (e != DESO_OK) {
        free(c);
        MPI_Comm_free(&dup);
        return e;
    }
    c->dup = dup;
    c->refs = 2;                         /* the attribute's and ours     */
    live++;
    rc = MPI_Comm_set_attr(comm, key, c);
    if (rc != MPI_SUCCESS) {
        c->refs = 1;
        deso__comm_cache_release(c);
        return deso__mpi_at(rc, "deso remap", "MPI_Comm_set_attr");
    }
    *out = c;
    return DESO_OK;
}

int64_t deso__ring_short(const deso__comm_cache *c, int64_t n, int64_t bytes)
{
    if (c->bytes != 0 && c->bytes != bytes) return n;   /* cannot happen */
    for (int w = 0; w < c->nwin && n > 0; w++)
        for (int64_t s = 0; s < c->win[w].cap && n > 0; s++)
            n -= !c->win[w].used[s];
    return n;
}

deso_err deso__ring_grow(deso__comm_cache *c, int64_t need, int64_t bytes)
{
    if (c->nwin == MAX_WIN)              /* the same on every rank       */
        return deso__fail(DESO_ENOMEM, "deso remap (shared memory): %d "
                          "ring windows on one communicator already",
                          MAX_WIN);
    int64_t cap = need > 0 ? (need > GROW_MIN ? need : GROW_MIN) : 0;
    unsigned char *used = deso__calloc((size_t)(cap ? cap : 1), 1);
    if (used == NULL) cap = 0;   /* still collective: nobody may wait     */
    MPI_Info info = MPI_INFO_NULL;
    if (MPI_Info_create(&info) == MPI_SUCCESS)
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    else
        info = MPI_INFO_NULL;
    char *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)(cap * bytes), 1, info,
                                     c->dup, &base, &win);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        free(used);
        return deso__mpi_at(rc, "deso remap (shared memory)",
                            "MPI_Win_allocate_shared");
    }
    /* Kept even when unusable here (cap 0), so that window numbers stay
     * the same on every rank.                                            */
    c->win[c->nwin++] = (pool_win){ win, base, cap, used };
    c->bytes = bytes;
    if (used == NULL)
        return deso__fail(DESO_ENOMEM, "deso remap: out of memory");
    return DESO_OK;
}

bool deso__ring_take(deso__comm_cache *c, int64_t n, deso__ring *out)
{
    if (deso__ring_short(c, n, c->bytes) > 0) return false;
    int64_t k = 0;
    for (int w = 0; w < c->nwin && k < n; w++)
        for (int64_t s = 0; s < c->win[w].cap && k < n; s++)
            if (!c->win[w].used[s]) {
                c->win[w].used[s] = 1;
                out[k++] = (deso__ring){ w, s,
                                         c->win[w].base + s * c->bytes };
            }
    return true;
}

void deso__ring_give(deso__comm_cache *c, const deso__ring *r, int64_t n)
{
    for (int64_t k = 0; k < n; k++) c->win[r[k].win].used[r[k].slot] = 0;
}

char *deso__ring_peer(const deso__comm_cache *c, int win, int rank,
                      int64_t slot, deso_err *e)
{
    MPI_Aint sz;
    int du;
    char *qb = NULL;
    if (win < 0 || win >= c->nwin) {
        *e = deso__fail(DESO_EINTERNAL, "deso remap (shared memory): rank "
                        "%d names ring window %d of %d", rank, win, c->nwin);
        return NULL;
    }
    int rc = MPI_Win_shared_query(c->win[win].win, rank, &sz, &du, &qb);
    if (rc != MPI_SUCCESS) {
        *e = deso__mpi_at(rc, "deso remap (shared memory)",
                          "MPI_Win_shared_query");
        return NULL;
    }
    if ((slot + 1) * c->bytes > (int64_t)sz) {
        *e = deso__fail(DESO_EINTERNAL, "deso remap (shared memory): rank "
                        "%d's ring %lld is outside its window", rank,
                        (long long)slot);
        return NULL;
    }
    return qb + slot * c->bytes;
}

double *deso__buf_take(deso__comm_cache *c, deso__buf_kind kind,
                       int64_t need, int64_t *len)
{
    if (c == NULL || need <= 0 || c->buf[kind] == NULL) return NULL;
    double *b = c->buf[kind];
    *len = c->buf_len[kind];
    c->buf[kind] = NULL;
    c->buf_len[kind] = 0;
    if (*len >= need) return b;
    /* Too small: freed now rather than held beside the new one.          */
    free(b);
    return NULL;
}

void deso__buf_keep(deso__comm_cache *c, deso__buf_kind kind, double *buf,
                    int64_t len)
{
    if (buf == NULL) return;
    if (c == NULL || len <= 0 || len < c->buf_len[kind]) {
        free(buf);
        return;
    }
    free(c->buf[kind]);
    c->buf[kind] = buf;
    c->buf_len[kind] = len;
}
