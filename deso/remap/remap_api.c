/* deso/remap/remap_api.c: the public deso_redist_* functions (deso_redist.h) on
 * top of the internal engine (remap.c).  Validation with detailed
 * messages, argument agreement across ranks, a private communicator and
 * shared-memory rings cached per user communicator (comm_cache.h).      */
#include "deso/deso_redist.h"
#include "deso/core/agree.h"
#include "deso/core/mpi.h"

#include <stdlib.h>
#include <string.h>

#include "placement/alloc.h"
#include "placement/errors.h"
#include "deso/remap/comm_cache.h"
#include "deso/remap/remap.h"
#include "deso/remap/remap_pick.h"
#include "deso/core/stats.h"

/* BLACS (part of ScaLAPACK), C interface.                                  */
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow,
                     int *mycol);
int Cblacs_pnum(int ctxt, int prow, int pcol);

struct deso_redist {
    MPI_Comm comm;           /* the cache's duplicate; the engine borrows it */
    deso__comm_cache *cache; /* a reference, dropped by destroy            */
    int me, size;
    int talks;               /* some rank sends a message (all agree)      */
    deso__remap r;
    int *src_ranks, *dst_ranks;
    int64_t src_ext[DESO_ND_MAX], dst_ext[DESO_ND_MAX];  /* local extents */
    double t_plan, t_setup;  /* deso_redist_times                          */
};

/* What a create was asked: a matrix pair (deso_redist_create) or a
 * d-dimensional pair (deso_redist_create_nd).                            */
typedef struct create_args {
    const char *fn;
    bool nd;
    const deso_layout *src, *dst;
    const deso_layout_nd *src_nd, *dst_nd;
    deso_schedule sched;
} create_args;

/* ---- validation ----------------------------------------------------------- */

/* n distinct ranks of a communicator of `size` (none: NULL).            */
static deso_err check_ranks(const char *fn, const char *name,
                            const int *ranks, int n, int size)
{
    for (int i = 0; ranks != NULL && i < n; i++) {
        int k = ranks[i];
        DESO_CHECK(k >= 0 && k < size, DESO_EINVAL,
                   "%s: %s ranks[%d] = %d is outside the communicator "
                   "(size %d)", fn, name, i, k, size);
        for (int j = 0; j < i; j++)
            DESO_CHECK(ranks[j] != k, DESO_EINVAL,
                       "%s: %s ranks[%d] and ranks[%d] are both %d", fn,
                       name, j, i, k);
    }
    return DESO_OK;
}

static deso_err check_layout(const char *fn, const char *name,
                             const deso_layout *l, int size)
{
    DESO_CHECK(l != NULL, DESO_ENULL, "%s: %s is NULL", fn, name);
    DESO_CHECK(l->m >= 0 && l->n >= 0, DESO_ESIZE,
               "%s: %s has negative extents %lld x %lld", fn, name,
               (long long)l->m, (long long)l->n);
    DESO_CHECK(l->mb >= 1 && l->nb >= 1, DESO_EINVAL,
               "%s: %s has block sizes mb = %lld, nb = %lld (must be >= 1)",
               fn, name, (long long)l->mb, (long long)l->nb);
    DESO_CHECK(l->pr >= 1 && l->pc >= 1, DESO_EINVAL,
               "%s: %s has grid %d x %d (extents must be >= 1)", fn, name,
               l->pr, l->pc);
    DESO_CHECK((int64_t)l->pr * l->pc <= size, DESO_EINVAL,
               "%s: %s has a %d x %d grid but the communicator has %d "
               "ranks", fn, name, l->pr, l->pc, size);
    return check_ranks(fn, name, l->ranks, l->pr * l->pc, size);
}

static deso_err check_layout_nd(const char *fn, const char *name,
                                const deso_layout_nd *l, int size)
{
    DESO_CHECK(l != NULL, DESO_ENULL, "%s: %s is NULL", fn, name);
    DESO_CHECK(l->d >= 1 && l->d <= DESO_ND_MAX, DESO_EINVAL,
               "%s: %s has d = %d dimensions (must be 1 .. %d)", fn, name,
               l->d, DESO_ND_MAX);
    int64_t np = 1;
    for (int k = 0; k < l->d; k++) {
        DESO_CHECK(l->n[k] >= 0, DESO_ESIZE, "%s: %s has a negative extent "
                   "n[%d] = %lld", fn, name, k, (long long)l->n[k]);
        DESO_CHECK(l->b[k] >= 1, DESO_EINVAL, "%s: %s has block size "
                   "b[%d] = %lld (must be >= 1)", fn, name, k,
                   (long long)l->b[k]);
        DESO_CHECK(l->p[k] >= 1, DESO_EINVAL, "%s: %s has grid extent "
                   "p[%d] = %d (must be >= 1)", fn, name, k, l->p[k]);
        np *= l->p[k];
        DESO_CHECK(np <= size, DESO_EINVAL, "%s: %s has a grid of more "
                   "positions than the %d ranks of the communicator", fn,
                   name, size);
    }
    return check_ranks(fn, name, l->ranks, (int)np, size);
}

/* The same d and extents on both sides, and a count that fits int64.   */
static deso_err check_extents_nd(const char *fn, const deso_layout_nd *src,
                                 const deso_layout_nd *dst)
{
    DESO_CHECK(src->d == dst->d, DESO_ESIZE, "%s: src has d = %d but dst "
               "d = %d", fn, src->d, dst->d);
    int64_t all = 1;
    for (int k = 0; k < src->d; k++) {
        DESO_CHECK(src->n[k] == dst->n[k], DESO_ESIZE, "%s: src has n[%d] "
                   "= %lld but dst n[%d] = %lld", fn, k,
                   (long long)src->n[k], k, (long long)dst->n[k]);
        DESO_CHECK(src->n[k] == 0 || all <= INT64_MAX / src->n[k],
                   DESO_ESIZE, "%s: the extents' product overflows int64",
                   fn);
        all *= src->n[k];
    }
    return DESO_OK;
}

/* Both layouts, their extents and the schedule, checked on this rank.  */
static deso_err check_args(const create_args *a, int size)
{
    const char *fn = a->fn;
    if (a->nd) {
        DESO_TRY(check_layout_nd(fn, "src", a->src_nd, size));
        DESO_TRY(check_layout_nd(fn, "dst", a->dst_nd, size));
        DESO_TRY(check_extents_nd(fn, a->src_nd, a->dst_nd));
    } else {
        DESO_TRY(check_layout(fn, "src", a->src, size));
        DESO_TRY(check_layout(fn, "dst", a->dst, size));
        DESO_CHECK(a->src->m == a->dst->m && a->src->n == a->dst->n,
                   DESO_ESIZE, "%s: src is %lld x %lld but dst is %lld x "
                   "%lld", fn, (long long)a->src->m, (long long)a->src->n,
                   (long long)a->dst->m, (long long)a->dst->n);
    }
    DESO_CHECK(a->sched >= DESO_SCHED_CATERPILLAR &&
               a->sched <= DESO_SCHED_GREEDY, DESO_EINVAL,
               "%s: unknown schedule %d", fn, (int)a->sched);
    return DESO_OK;
}

/* A copy of n ranks (NULL stays NULL), owned by the handle.             */
static deso_err copy_ranks(const int *ranks, int64_t n, int **out)
{
    *out = NULL;
    if (ranks == NULL) return DESO_OK;
    *out = deso__malloc((size_t)n * sizeof **out);
    if (*out == NULL)
        return deso__fail(DESO_ENOMEM, "deso_redist_create: out of memory");
    memcpy(*out, ranks, (size_t)n * sizeof **out);
    return DESO_OK;
}

static deso_err to_pl(const deso_layout *l, int **ranks, pl_bc_layout *out)
{
    memset(out, 0, sizeof *out);
    out->m = l->m;
    out->n = l->n;
    out->mb = l->mb;
    out->nb = l->nb;
    out->pr = l->pr;
    out->pc = l->pc;
    out->replicated = l->replicated != 0;
    DESO_TRY(copy_ranks(l->ranks, (int64_t)l->pr * l->pc, ranks));
    out->ranks = *ranks;
    return DESO_OK;
}

static deso_err to_pl_nd(const deso_layout_nd *l, int **ranks,
                         pl_nd_layout *out)
{
    memset(out, 0, sizeof *out);
    out->d = l->d;
    int64_t np = 1;
    for (int k = 0; k < l->d; k++) {
        out->n[k] = l->n[k];
        out->b[k] = l->b[k];
        out->p[k] = l->p[k];
        np *= l->p[k];
    }
    DESO_TRY(copy_ranks(l->ranks, np, ranks));
    out->ranks = *ranks;
    return DESO_OK;
}

/* FNV-1a over the effective parameters of both layouts and the schedule.  */
static uint64_t mix(uint64_t h, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++) {
        h ^= (u >> (8 * i)) & 0xffu;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t hash_ranks(uint64_t h, const int *ranks, int64_t n)
{
    for (int64_t i = 0; i < n && i < (1 << 24); i++)
        h = mix(h, ranks ? ranks[i] : i);
    return h;
}

/* ranks: hash the ranks too (only once the layout is checked: an invalid
 * one may have fewer than its grid says).                               */
static uint64_t hash_layout(uint64_t h, const deso_layout *l, bool ranks)
{
    h = mix(h, l->m);
    h = mix(h, l->n);
    h = mix(h, l->mb);
    h = mix(h, l->nb);
    h = mix(h, l->pr);
    h = mix(h, l->pc);
    h = mix(h, l->replicated != 0);
    if (ranks) h = hash_ranks(h, l->ranks, (int64_t)l->pr * l->pc);
    return h;
}

/* Only the first d entries count (the others are ignored).               */
static uint64_t hash_layout_nd(uint64_t h, const deso_layout_nd *l,
                               bool ranks)
{
    h = mix(h, l->d);
    int64_t np = 1;
    for (int k = 0; k < l->d && k < DESO_ND_MAX; k++) {
        h = mix(mix(mix(h, l->n[k]), l->b[k]), l->p[k]);
        np *= ranks ? l->p[k] : 0;
    }
    return hash_ranks(h, l->ranks, np);
}

/* The hash every rank must agree on (a NULL layout hashes as nothing;
 * ranks: the layouts passed check_args).                                */
static uint64_t hash_args(const create_args *a, bool ranks)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    hash = mix(hash, a->nd);
    if (a->nd && a->src_nd != NULL)
        hash = hash_layout_nd(hash, a->src_nd, ranks);
    if (!a->nd && a->src != NULL) hash = hash_layout(hash, a->src, ranks);
    hash = mix(hash, -1);
    if (a->nd && a->dst_nd != NULL)
        hash = hash_layout_nd(hash, a->dst_nd, ranks);
    if (!a->nd && a->dst != NULL) hash = hash_layout(hash, a->dst, ranks);
    return mix(hash, (int64_t)a->sched);
}

static void free_handle(deso_redist *h)
{
    if (h == NULL) return;
    /* Warm buffers for the next remap on the communicator.               */
    deso__remap_keep_buffers(&h->r, h->cache);
    deso__remap_free(&h->r);
    free(h->src_ranks);
    free(h->dst_ranks);
    deso__comm_cache_release(h->cache);
    free(h);
}

/* Plans h's remap (checked arguments) on dup, keeping the plan for the
 * shared-memory transport, and records this rank's local extents.       */
static deso_err plan_args(const create_args *a, MPI_Comm dup, deso_redist *h)
{
    pl_sched_kind kind = (pl_sched_kind)a->sched;
    if (a->nd) {
        pl_nd_layout ps, pd;
        DESO_TRY(to_pl_nd(a->src_nd, &h->src_ranks, &ps));
        DESO_TRY(to_pl_nd(a->dst_nd, &h->dst_ranks, &pd));
        pl_nd_local_extents(&ps, h->me, h->src_ext);
        pl_nd_local_extents(&pd, h->me, h->dst_ext);
        return deso__remap_init_nd_keep(dup, h->cache, &ps, &pd, kind,
                                        &h->r);
    }
    pl_bc_layout ps, pd;
    DESO_TRY(to_pl(a->src, &h->src_ranks, &ps));
    DESO_TRY(to_pl(a->dst, &h->dst_ranks, &pd));
    DESO_TRY(deso__remap_init_keep(dup, h->cache, &ps, &pd, kind, &h->r));
    int64_t ext[2][DESO_ND_MAX] = {
        { h->r.src_rows, h->r.src_cols, 1, 1 },
        { h->r.dst_rows, h->r.dst_cols, 1, 1 } };
    memcpy(h->src_ext, ext[0], sizeof ext[0]);
    memcpy(h->dst_ext, ext[1], sizeof ext[1]);
    return DESO_OK;
}

/* A new handle of a remap on dup, the duplicate cache holds; NULL when
 * out of memory.                                                       */
static deso_redist *handle_new(MPI_Comm dup, deso__comm_cache *cache)
{
    deso_redist *h = deso__calloc(1, sizeof *h);
    if (h == NULL) return NULL;
    h->comm = dup;
    h->cache = cache;
    MPI_Comm_rank(dup, &h->me);
    MPI_Comm_size(dup, &h->size);
    h->r.comm = MPI_COMM_NULL;
    return h;
}

/* This rank's part of create: the checks, the hash of the arguments and
 * the plan.  Its error is shared by the caller's agreement, never
 * returned early, so that no rank is left alone in the Allreduce.       */
static deso_err create_local(const create_args *a, bool has_out,
                             MPI_Comm dup, int size, deso_redist *h,
                             uint64_t *hash)
{
    deso_err e = DESO_OK;
    if (!has_out)
        e = deso__fail(DESO_ENULL, "%s: out is NULL", a->fn);
    if (e == DESO_OK) e = check_args(a, size);
    *hash = hash_args(a, e == DESO_OK);
    if (e == DESO_OK && h == NULL)
        e = deso__fail(DESO_ENOMEM, "%s: out of memory", a->fn);
    if (e == DESO_OK) e = plan_args(a, dup, h);
    return e;
}

/* deso_redist_create and _nd: local checks and planning, then one
 * agreement, then the shared-memory transport's rings.                  */
static deso_err create(MPI_Comm comm, const create_args *a,
                       deso_redist **out)
{
    const char *fn = a->fn;
    if (out != NULL) *out = NULL;
    DESO_CHECK(comm != MPI_COMM_NULL, DESO_EINVAL,
               "%s: comm is MPI_COMM_NULL", fn);

    double t0 = MPI_Wtime();
    /* The duplicate (and rings) of comm: made by the first remap on it. */
    deso__comm_cache *cache = NULL;
    DESO_TRY(deso__comm_cache_get(comm, &cache));
    MPI_Comm dup = deso__comm_cache_comm(cache);
    deso_redist *h = handle_new(dup, cache);
    int me = 0, size = 1;
    MPI_Comm_rank(dup, &me);
    MPI_Comm_size(dup, &size);
    uint64_t hash;
    deso_err e = create_local(a, out != NULL, dup, size, h, &hash);

    int shm_ok = 0, grow = 0;
    deso__remap_shm_prepare(comm, cache, e == DESO_OK ? &h->r : NULL,
                            &shm_ok, &grow);

    /* One agreement: the lowest failing rank's error, max(h) and max(~h)
     * (the same everywhere iff h is), whether anyone sends, whether
     * anyone cannot use shared memory, and whether anyone lacks rings.   */
    int64_t v[5] = { (int64_t)hash, (int64_t)~hash,
                     e == DESO_OK && h != NULL && h->r.nsend > 0,
                     !shm_ok, grow };
    deso_err verdict = deso__agree(dup, fn, e, v, 5);
    deso__stats_collective(6 * (int64_t)sizeof(int64_t), size, me, 2);
    if (verdict == DESO_OK && v[0] != ~v[1])
        verdict = deso__fail(DESO_EMISMATCH, "%s: the layouts or schedule "
                             "differ between ranks (rank %d: hash %016llx)",
                             fn, me, (unsigned long long)hash);
    if (verdict != DESO_OK) {
        if (h == NULL) deso__comm_cache_release(cache);
        free_handle(h);
        return verdict;
    }
    h->talks = v[2] != 0;
    /* Every rank reaches this point together (the verdict is shared).    */
    verdict = deso__remap_shm_finish(&h->r, h->talks && v[3] == 0,
                                     v[4] != 0);
    if (verdict != DESO_OK) {
        free_handle(h);
        return verdict;
    }
    /* Set-up the communicator's next remaps take over (comm_cache.h).   */
    if (h->r.shm == NULL) deso__remap_warm_buffers(&h->r);
    h->t_plan = h->r.t_plan;
    h->t_setup = MPI_Wtime() - t0 - h->t_plan;
    *out = h;
    return DESO_OK;
}

/* ---- public functions ----------------------------------------------------- */

deso_err deso_redist_create(MPI_Comm comm, const deso_layout *src,
                            const deso_layout *dst, deso_schedule sched,
                            deso_redist **out)
{
    create_args a = { .fn = "deso_redist_create", .src = src, .dst = dst,
                      .sched = sched };
    return create(comm, &a, out);
}

deso_err deso_redist_create_nd(MPI_Comm comm, const deso_layout_nd *src,
                               const deso_layout_nd *dst,
                               deso_schedule sched, deso_redist **out)
{
    create_args a = { .fn = "deso_redist_create_nd", .nd = true,
                      .src_nd = src, .dst_nd = dst, .sched = sched };
    return create(comm, &a, out);
}

deso_err deso_redist_times(const deso_redist *r, double *plan,
                           double *setup)
{
    DESO_CHECK(r != NULL, DESO_ENULL, "deso_redist_times: r is NULL");
    if (plan != NULL) *plan = r->t_plan;
    if (setup != NULL) *setup = r->t_setup;
    return DESO_OK;
}

/* deso_redist_execute's agreement on the arguments (local outcome e).
 * Until the shared-memory transport's single-copy programs are on, it
 * also asks whether some rank's source could be read in place; the first
 * time one could, every rank compiles them (an allocation that may fail
 * on one rank alone) and a second agreement settles the outcome, so that
 * its DESO_ENOMEM is every rank's before any data moves.                */
static deso_err agree_execute(deso_redist *r, deso_err e, const double *src,
                              int64_t src_lld)
{
    static const char *fn = "deso_redist_execute";
    /* flags: whether some source could be read in place (until the
     * single-copy programs are on), or the two times to choose by.     */
    int64_t flags[2] = { 0, 0 };
    bool pending = deso__remap_shm_pull_pending(&r->r);
    bool due = !pending && deso__remap_shm_pick_due(&r->r, flags);
    int nflags = pending ? 1 : due ? 2 : 0;
    flags[0] = pending ? e == DESO_OK &&
               deso__remap_shm_pull_wanted(&r->r, src, src_lld) : flags[0];
    e = deso__agree(r->comm, fn, e, flags, nflags);
    deso__stats_collective((int64_t)sizeof(int64_t) * (1 + nflags), r->size,
                           r->me, 2);
    if (e == DESO_OK && due) deso__remap_shm_pick_decide(&r->r, flags);
    if (e != DESO_OK || !pending || !flags[0]) return e;
    /* Compiled on every rank, with the override of the choice.          */
    int64_t mode = deso__pick_env();
    e = deso__agree(r->comm, fn, deso__remap_shm_pull_build(&r->r), &mode, 1);
    deso__stats_collective((int64_t)sizeof(int64_t) * 2, r->size, r->me, 2);
    if (e == DESO_OK) deso__remap_shm_pull_on(&r->r, (int)mode);
    return e;
}

deso_err deso_redist_execute(deso_redist *r, const double *src,
                             int64_t src_lld, double *dst, int64_t dst_lld)
{
    static const char *fn = "deso_redist_execute";
    DESO_CHECK(r != NULL, DESO_ENULL, "%s: r is NULL", fn);
    deso_err e = DESO_OK;
    int64_t sr = r->r.src_rows, dr = r->r.dst_rows;
    if (r->r.src_elems > 0 && src == NULL)
        e = deso__fail(DESO_ENULL, "%s: rank %d holds a %lld x %lld part "
                       "of the source but src is NULL", fn, r->me,
                       (long long)sr, (long long)r->r.src_cols);
    else if (r->r.src_elems > 0 && src_lld < (sr > 1 ? sr : 1))
        e = deso__fail(DESO_EINVAL, "%s: src_lld = %lld is less than the "
                       "%lld local rows of rank %d", fn, (long long)src_lld,
                       (long long)sr, r->me);
    else if (r->r.dst_elems > 0 && dst == NULL)
        e = deso__fail(DESO_ENULL, "%s: rank %d holds a %lld x %lld part "
                       "of the target but dst is NULL", fn, r->me,
                       (long long)dr, (long long)r->r.dst_cols);
    else if (r->r.dst_elems > 0 && dst_lld < (dr > 1 ? dr : 1))
        e = deso__fail(DESO_EINVAL, "%s: dst_lld = %lld is less than the "
                       "%lld local rows of rank %d", fn, (long long)dst_lld,
                       (long long)dr, r->me);

    /* With no message anywhere (identical layouts, say) no rank can wait
     * for another, so a local error needs no agreement.                 */
    if (!r->talks) {
        if (e != DESO_OK) return e;
        return deso__remap_exec(&r->r, src, src_lld, dst, dst_lld);
    }
    /* The shared-memory transport's descriptions come first, so that a
     * receiver that cannot map a source it is to read in place fails
     * every rank in the agreement, before any data moves.               */
    deso_err d = deso__remap_shm_describe(&r->r, src, src_lld,
                                          e == DESO_OK);
    e = agree_execute(r, e != DESO_OK ? e : d, src, src_lld);
    if (e != DESO_OK) return e;
    return deso__remap_exec(&r->r, src, src_lld, dst, dst_lld);
}

const char *deso_redist_transport(const deso_redist *r)
{
    if (r == NULL || !r->talks) return "none";
    if (r->r.shm == NULL) return "mpi";
    return deso__remap_shm_single_copy(&r->r) ? "shared memory, single copy"
                                              : "shared memory";
}

deso_err deso_redist_local_shape(const deso_redist *r, int64_t *src_rows,
                                 int64_t *src_cols, int64_t *dst_rows,
                                 int64_t *dst_cols)
{
    DESO_CHECK(r != NULL, DESO_ENULL, "deso_redist_local_shape: r is NULL");
    if (src_rows) *src_rows = r->r.src_rows;
    if (src_cols) *src_cols = r->r.src_cols;
    if (dst_rows) *dst_rows = r->r.dst_rows;
    if (dst_cols) *dst_cols = r->r.dst_cols;
    return DESO_OK;
}

deso_err deso_redist_local_extents(const deso_redist *r,
                                   int64_t src[DESO_ND_MAX],
                                   int64_t dst[DESO_ND_MAX])
{
    DESO_CHECK(r != NULL, DESO_ENULL, "deso_redist_local_extents: r is NULL");
    for (int k = 0; k < DESO_ND_MAX; k++) {
        if (src) src[k] = r->src_ext[k];
        if (dst) dst[k] = r->dst_ext[k];
    }
    return DESO_OK;
}

void deso_redist_destroy(deso_redist **r)
{
    if (r == NULL || *r == NULL) return;
    free_handle(*r);
    *r = NULL;
}

/* ---- ScaLAPACK descriptors ---------------------------------------------- */

deso_err deso_layout_from_scalapack(const int desc[9], deso_layout *out)
{
    static const char *fn = "deso_layout_from_scalapack";
    DESO_CHECK(desc != NULL && out != NULL, DESO_ENULL,
               "%s: desc or out is NULL", fn);
    memset(out, 0, sizeof *out);
    DESO_CHECK(desc[1] >= 0, DESO_EGRID,
               "%s: context %d: this rank is not in the grid", fn, desc[1]);
    int pr = -1, pc = -1, myr = -1, myc = -1;
    Cblacs_gridinfo(desc[1], &pr, &pc, &myr, &myc);
    DESO_CHECK(pr >= 1 && pc >= 1 && myr >= 0 && myc >= 0, DESO_EGRID,
               "%s: context %d is invalid or does not contain this rank "
               "(grid %d x %d)", fn, desc[1], pr, pc);
    DESO_CHECK(desc[2] >= 0 && desc[3] >= 0, DESO_ESIZE,
               "%s: negative extents %d x %d", fn, desc[2], desc[3]);
    DESO_CHECK(desc[4] >= 1 && desc[5] >= 1, DESO_EINVAL,
               "%s: block sizes %d x %d (must be >= 1)", fn, desc[4],
               desc[5]);
    DESO_CHECK(desc[6] == 0 && desc[7] == 0, DESO_ENOTSUP,
               "%s: rsrc = %d, csrc = %d; only 0, 0 is supported", fn,
               desc[6], desc[7]);
    out->m = desc[2];
    out->n = desc[3];
    out->mb = desc[4];
    out->nb = desc[5];
    out->pr = pr;
    out->pc = pc;
    size_t n = (size_t)pr * (size_t)pc;
    int *ranks = deso__malloc(n * sizeof *ranks);
    DESO_CHECK(ranks != NULL, DESO_ENOMEM, "%s: out of memory", fn);
    /* Cblacs_pnum numbers the context's own processes row-major; these are
     * MPI_COMM_WORLD ranks only for a "Row" grid made by Cblacs_gridinit
     * on the default system context.  This rank can check its own.      */
    int world = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    if (Cblacs_pnum(desc[1], myr, myc) != world) {
        free(ranks);
        return deso__fail(DESO_ENOTSUP, "%s: context %d numbers this rank "
                          "%d but it is rank %d of MPI_COMM_WORLD (a "
                          "column-major or Cblacs_gridmap grid); give the "
                          "ranks explicitly", fn, desc[1],
                          Cblacs_pnum(desc[1], myr, myc), world);
    }
    int identity = 1;
    for (int i = 0; i < pr; i++)
        for (int j = 0; j < pc; j++) {
            ranks[i * pc + j] = Cblacs_pnum(desc[1], i, j);
            if (ranks[i * pc + j] != i * pc + j) identity = 0;
        }
    if (identity) {
        free(ranks);
        ranks = NULL;
    }
    out->ranks = ranks;
    return DESO_OK;
}

void deso_layout_release(deso_layout *l)
{
    if (l == NULL) return;
    free((void *)(uintptr_t)l->ranks);
    l->ranks = NULL;
}

/* ---- schedules and the slice plan ---------------------------------------- */

const char *deso_schedule_name(deso_schedule s)
{
    return pl_sched_name((pl_sched_kind)s);
}

deso_err deso_schedule_parse(const char *name, deso_schedule *out)
{
    DESO_CHECK(name != NULL && out != NULL, DESO_ENULL,
               "deso_schedule_parse: name or out is NULL");
    pl_sched_kind k;
    deso_err e = pl_sched_parse(name, &k);
    if (e != DESO_OK)
        return deso__fail(e, "unknown schedule '%s' (caterpillar, stepwise "
                          "or greedy)", name);
    *out = (deso_schedule)k;
    return DESO_OK;
}

void deso_slice_plan_free(deso_slice_plan *p)
{
    if (p == NULL) return;
    free(p->grid);
    free(p->recv_of);
    free(p->step_cost);
    memset(p, 0, sizeof *p);
}

deso_err deso_redist_slice_plan(int P, int64_t r, int Q, int64_t s,
                                deso_schedule sched, deso_slice_plan *out)
{
    static const char *fn = "deso_redist_slice_plan";
    DESO_CHECK(out != NULL, DESO_ENULL, "%s: out is NULL", fn);
    memset(out, 0, sizeof *out);
    DESO_CHECK(P >= 1 && Q >= 1, DESO_EINVAL,
               "%s: P = %d and Q = %d must be >= 1", fn, P, Q);
    DESO_CHECK(r >= 1 && s >= 1, DESO_EINVAL,
               "%s: r = %lld and s = %lld must be >= 1", fn, (long long)r,
               (long long)s);
    DESO_CHECK(sched >= DESO_SCHED_CATERPILLAR && sched <= DESO_SCHED_GREEDY,
               DESO_EINVAL, "%s: unknown schedule %d", fn, (int)sched);
    DESO_CHECK((int64_t)P * Q <= (int64_t)1 << 26, DESO_EINVAL,
               "%s: P x Q = %d x %d is too large for a slice grid", fn, P, Q);
    out->P = P;
    out->Q = Q;
    out->r = r;
    out->s = s;
    out->sched = sched;
    out->grid = deso__calloc((size_t)P * (size_t)Q, sizeof *out->grid);
    DESO_CHECK(out->grid != NULL, DESO_ENOMEM, "%s: out of memory", fn);
    deso_err e = pl_remap_slice(P, r, Q, s, out->grid, &out->slice);
    if (e != DESO_OK) {
        deso_slice_plan_free(out);
        return e;
    }
    pl_schedule sc;
    memset(&sc, 0, sizeof sc);
    e = pl_schedule_build((pl_sched_kind)sched, P, Q, out->grid, &sc);
    if (e != DESO_OK) {
        deso_slice_plan_free(out);
        return e;
    }
    out->steps = sc.nsteps;
    out->total_cost = sc.total_cost;
    out->messages = sc.messages;
    out->recv_of = sc.recv_of;       /* take ownership of the arrays      */
    out->step_cost = sc.step_cost;
    sc.recv_of = NULL;
    sc.step_cost = NULL;
    pl_schedule_free(&sc);
    return DESO_OK;
}
