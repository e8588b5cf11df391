/* Executing one node: bring every operand into the placement the node's
 * constraints ask for (the optimiser decides; in mode none its defaults),
 * run the local kernel, reduce, finish.  Placement-driven: nothing here
 * assumes mode none's layouts.                                            */
#include <stdlib.h>
#include <string.h>

#include "deso/runtime/runtime.h"
#include "deso/runtime/log.h"
#include "deso/runtime/ooc.h"
#include "placement/alloc.h"

static blas_local local_of(const deso_ctx *ctx, const deso__view *w)
{
    blas_local l = {.data = w->data, .rows = w->rows, .cols = w->cols,
                    .lay = &w->lay, .r = ctx->coord[0], .c = ctx->coord[1]};
    return l;
}

double deso__kernel_start(const deso_ctx *ctx)
{
    return ctx->weight > 0 ? deso__now() : 0.0;
}

void deso__kernel_time(const deso_ctx *ctx, blas_op op, double t0)
{
    if (ctx->weight == 0) return;
    double dt = (deso__now() - t0) * ctx->weight;
    deso__stats_time(DESO_T_COMPUTE, dt);
    deso__log_op(op, dt);
}

/* The communicator of a reduction over grid dimension rd: a grid column
 * or row, or every rank (BLAS_RED_ALL, a vector by partition).          */
static MPI_Comm red_comm(const deso_ctx *ctx, int rd)
{
    return rd == BLAS_RED_ALL ? ctx->comm : ctx->dimcomm[rd];
}

/* Reductions produce their result reduced to coordinate 0 along the grid
 * dimension they sum over; replicating it there is a separate broadcast
 * step.  When the result's placement is replicated along that dimension
 * (mode none: always) the two steps run fused as one all-reduce; otherwise
 * it stays a plain reduce and the optimiser places any broadcast on an
 * edge.                                                                    */
static bool red_all(int rd, const blas_layout *res)
{
    return (res->rep & blas_red_bits(rd, res->pr, res->pc)) != 0;
}

static deso_err reduce_step(deso_ctx *ctx, const blas_op_info *info, int rd,
                            bool all, double *red, int64_t len)
{
    if (rd < 0) return DESO_OK;
    /* (only ranks holding the operand vector get here: see the caller)    */
    deso__redop op = info->red == BLAS_RED_MAXLOC ? DESO__MAXLOC : DESO__SUM;
    MPI_Comm comm = red_comm(ctx, rd);
    if (all) return deso__allreduce(ctx, comm, red, len, op);
    return deso__reduce(ctx, comm, red, len, op, 0);
}

bool deso__exec_posts(const deso__node *nd, const opt_place *pl)
{
    const blas_op_info *info = blas_op_get(nd->d.op);
    if (info->distributed || info->kernel == NULL ||
        info->red == BLAS_RED_NONE || nd->res->ooc)
        return false;
    for (int k = 0; k < nd->d.nops; k++)
        if (nd->ops[k]->ooc) return false;
    return blas_red_dim(&nd->d, pl->req) >= 0;
}

/* Whether this rank takes part in node nd's work under placement req/rl:
 * vector reductions run only on the ranks holding the vector (its grid
 * row or column when it is not replicated: the optimiser's
 * reduce_holders_only model); other nodes wherever the result lives or a
 * reduction needs a contribution.                                          */
static bool takes_part(const deso_ctx *ctx, const blas_op_info *info,
                       const blas_desc *d, const blas_layout *req,
                       const blas_layout *rl)
{
    int r = ctx->coord[0], c = ctx->coord[1];
    if (info->distributed) return true;
    if (info->red == BLAS_RED_NONE) return blas_layout_holds(rl, r, c);
    if (d->op == BLAS_OP_GEMV) return true;   /* A lives everywhere         */
    return blas_layout_holds(&req[0], r, c);
}

/* Whether node nd streams an out-of-core matrix (its operand or its
 * result: the same everywhere, since where a matrix lives is agreed).  */
static bool streams(const deso__node *nd, deso__view *const *v,
                    const deso__view *rv)
{
    for (int k = 0; k < nd->d.nops; k++)
        if (v[k]->ooc != NULL) return true;
    return rv->ooc != NULL;
}

/* Whether this rank runs node nd's direct kernel (blas_op_info.direct):
 * the node needs no reduction across ranks (rd < 0: a dgemv on a grid of
 * one column, or of one row for the transpose) and the result's local
 * piece is the kernel's whole output here, so the kernel writes it, alpha
 * and beta included, with no partial-sum buffer to zero and no finish.  */
static bool runs_direct(const deso_ctx *ctx, const blas_op_info *info,
                        const deso__node *nd, int rd, const blas_layout *rl,
                        const blas_local *L, const blas_local *R)
{
    return info->direct != NULL && rd < 0 &&
           blas_layout_holds(rl, ctx->coord[0], ctx->coord[1]) &&
           R->rows == blas_red_len(&nd->d, L);
}

/* The node's local kernel (its direct kernel when `direct`), streamed
 * when it has an out-of-core matrix: then always timed (a slab costs far
 * more than a clock reading), the waits for the file as I/O, the rest as
 * compute.                                                              */
static deso_err run_kernel(deso_ctx *ctx, const deso__node *nd,
                           const blas_op_info *info, blas_local *L,
                           deso__view *const *v, deso__view *rv,
                           blas_local *R, double *red, bool streamed,
                           bool direct)
{
    if (!streamed) {
        double t0 = deso__kernel_start(ctx);
        (direct ? info->direct : info->kernel)(&nd->d, L, R, red);
        deso__kernel_time(ctx, nd->d.op, t0);
        return DESO_OK;
    }
    blas_gemv_into y = {red, 1.0, 0.0};
    if (direct) y = blas_gemv_direct_into(&nd->d, L, R);
    double t0 = deso__now(), io0 = deso__stats_io_time();
    deso_err err = deso__ooc_kernel(ctx, nd, L, v, rv, y);
    double dt = deso__now() - t0;
    deso__stats_time(DESO_T_COMPUTE, dt - (deso__stats_io_time() - io0));
    deso__log_op(nd->d.op, dt);
    return err;
}

/* The node's result view: it takes over the updated operand's buffer when
 * this node is its last reader (y <- a x + y in place; the preparation
 * then made no result view), else starts from a copy.  (The force charges
 * what is not timed here to the overhead.)                              */
static deso_err result_view(deso_ctx *ctx, const deso__node *nd,
                            const blas_op_info *info, deso__view *const *v,
                            const blas_layout *rl, deso__view **rv)
{
    int nops = nd->d.nops;
    int io = info->inout < nops ? info->inout : -1;
    if (*rv == NULL && io >= 0 && nd->ops[io]->refs == 1 &&
        blas_layout_equal(&v[io]->lay, rl)) {
        deso__view **pp = &nd->ops[io]->views;
        while (*pp != v[io]) pp = &(*pp)->next;
        *pp = v[io]->next;
        *rv = v[io];
        (*rv)->next = NULL;
        return DESO_OK;
    }
    if (*rv == NULL) DESO_TRY(deso__view_alloc(ctx, rl, rv));
    /* (an out-of-core result is written slab by slab as it streams)      */
    deso__view *r = *rv;
    if (io >= 0 && r->rows * r->cols > 0 && r->ooc == NULL)
        memcpy(r->data, v[io]->data,
               (size_t)(r->rows * r->cols) * sizeof(double));
    return DESO_OK;
}

/* A node's result view when the node's own preparation made it (it is
 * freed on failure); a compiled program's views are its slots, kept
 * whatever happens (nd->res NULL: deso__exec_views).                   */
static void drop_view(const deso__node *nd, deso__view *rv)
{
    if (nd->res != NULL) deso__view_free(rv);
}

/* A fused group's member (ctx->defer): its kernel only, into the group's
 * slot; deso__exec_fused runs the group's one collective and finishes.  */
static deso_err defer_member(deso_ctx *ctx, deso__node *nd,
                             const deso__kfacts *f, const opt_place *pl,
                             const blas_local *L, blas_local *R,
                             deso__view *rv)
{
    const blas_op_info *info = f->info;
    deso__fz *fz = ctx->defer;
    if (info->distributed || f->len < 1 || f->len > BLAS_RED_WIDTH_MAX) {
        drop_view(nd, rv);
        return deso__fail(DESO_EINTERNAL, "%s: cannot fuse its reduction",
                          info->name);
    }
    fz->nd = nd;
    fz->rv = rv;
    fz->rl = pl->res;
    fz->rd = f->rd;
    for (int j = 0; j < BLAS_RED_WIDTH_MAX; j++) fz->red[j] = 0.0;
    fz->part = f->part;
    if (fz->part) {
        double t0 = deso__kernel_start(ctx);
        info->kernel(&nd->d, L, R, fz->red);
        deso__kernel_time(ctx, nd->d.op, t0);
    }
    return DESO_OK;
}

/* A posted node (ctx->post, deso__exec_posts): its reduction started in
 * its own region of the scratch, and what its finish needs kept in pd. */
static deso_err post_local(deso_ctx *ctx, const deso__node *nd,
                           const deso__kfacts *f, const blas_local *L,
                           blas_local *R)
{
    deso__pend *pd = ctx->post;
    const blas_op_info *info = f->info;
    DESO_CHECK(f->len <= ctx->scratch_len, DESO_EINTERNAL,
               "%s: a reduction of %lld elements was not prepared",
               info->name, (long long)f->len);
    double t0 = deso__kernel_start(ctx);
    info->kernel(&nd->d, L, R, pd->red);
    deso__kernel_time(ctx, nd->d.op, t0);
    for (int k = 0; k < nd->d.nops; k++) pd->L[k] = L[k];
    pd->R = *R;
    pd->weight = ctx->weight;
    /* a posted node takes the partial-sum path, so the finish runs where
     * a direct kernel would have run instead                             */
    pd->finish = f->finish || f->direct;
    deso__redop op = info->red == BLAS_RED_MAXLOC ? DESO__MAXLOC : DESO__SUM;
    return deso__coll_start(ctx, red_comm(ctx, f->rd), pd->red, f->len, op,
                            f->all, &pd->coll);
}

/* A node on the local-kernel path, on a rank taking part: the kernel, the
 * reduction, an I/O error agreed, the finish where the result lives.    */
static deso_err run_local(deso_ctx *ctx, const deso__node *nd,
                          const deso__kfacts *f, blas_local *L,
                          deso__view *const *v, deso__view *rv, blas_local *R)
{
    if (ctx->post != NULL) return post_local(ctx, nd, f, L, R);
    const blas_op_info *info = f->info;
    int64_t len = f->len;
    double small[2], *red = small;
    if (len > 2) red = ctx->scratch;    /* sized by the preparation        */
    DESO_CHECK(len <= ctx->scratch_len || len <= 2, DESO_EINTERNAL,
               "%s: a reduction of %lld elements was not prepared",
               info->name, (long long)len);
    deso_err err = DESO_OK;
    deso_err kerr = run_kernel(ctx, nd, info, L, v, rv, R, red, f->streamed,
                               f->direct);
    if (info->red != BLAS_RED_NONE)
        err = reduce_step(ctx, info, f->rd, f->all, red, len);
    if (f->streamed)                   /* an I/O error is every rank's      */
        kerr = deso__agree_counted(ctx, info->name, kerr, NULL, 0);
    if (err == DESO_OK) err = kerr;
    if (err == DESO_OK && f->finish) {
        double t0 = deso__kernel_start(ctx);
        info->finish(&nd->d, L, R, red);
        deso__kernel_time(ctx, nd->d.op, t0);
    }
    return err;
}

/* Whether node nd runs on the local-kernel path (not a view node, a user
 * operator, a sparse product or a distributed kernel).                 */
static bool local_path(const deso__node *nd, const blas_op_info *info)
{
    blas_op op = nd->d.op;
    return op != BLAS_OP_VGET && op != BLAS_OP_VPUT && op != BLAS_OP_USER &&
           op != BLAS_OP_USMV && !info->distributed;
}

/* Node nd's facts (deso__kfacts) from its operands' local pieces L and
 * its result's R.                                                       */
/* (inlined: a call per node cost the recording path about 90
 * instructions a node, more than the work itself)                       */
__attribute__((always_inline))
static inline void facts_of(const deso_ctx *ctx, const deso__node *nd,
                     const opt_place *pl, const blas_local *L,
                     const blas_local *R, deso__view *const *v,
                     const deso__view *rv, deso__kfacts *f)
{
    const blas_op_info *info = blas_op_get(nd->d.op);
    f->info = info;
    f->len = 0;
    f->rd = -1;
    f->part = f->all = f->finish = f->streamed = f->direct = false;
    if (!local_path(nd, info)) return;
    f->part = takes_part(ctx, info, &nd->d, pl->req, &pl->res);
    f->len = blas_red_len(&nd->d, L);
    if (info->red != BLAS_RED_NONE) f->rd = blas_red_dim(&nd->d, pl->req);
    f->all = f->rd >= 0 && red_all(f->rd, &pl->res);
    f->direct = runs_direct(ctx, info, nd, f->rd, &pl->res, L, R);
    f->finish = !f->direct && info->finish != NULL &&
                blas_layout_holds(&pl->res, ctx->coord[0], ctx->coord[1]);
    f->streamed = streams(nd, v, rv);
}

deso_err deso__exec_node(deso_ctx *ctx, deso__node *nd, const opt_place *pl,
                         deso__view *rv)
{
    const blas_op_info *info = blas_op_get(nd->d.op);
    int nops = nd->d.nops;
    /* the plan covers every node of a force (deso__force_prepare checks) */
    DESO_CHECK(pl != NULL, DESO_EINTERNAL, "%s: no placement", info->name);
    deso__view *v[BLAS_MAXOPS];
    for (int k = 0; k < nops; k++) {
        DESO_CHECK(nd->ops[k]->ready && nd->ops[k]->views != NULL,
                   DESO_EINTERNAL, "%s: operand %d not computed", info->name,
                   k);
        DESO_TRY(deso__value_view(ctx, nd->ops[k], &pl->req[k], &v[k]));
    }
    DESO_TRY(result_view(ctx, nd, info, v, &pl->res, &rv));
    return deso__exec_views(ctx, nd, pl, v, rv);
}

void deso__exec_facts(const deso_ctx *ctx, const deso__node *nd,
                      const opt_place *pl, deso__view *const *v,
                      const deso__view *rv, deso__kfacts *f, blas_local *L,
                      blas_local *R)
{
    for (int k = 0; k < nd->d.nops; k++) L[k] = local_of(ctx, v[k]);
    *R = local_of(ctx, rv);
    facts_of(ctx, nd, pl, L, R, v, rv, f);
}

/* The node's run once its facts are known (deso__exec_known).           */
static deso_err exec_with(deso_ctx *ctx, deso__node *nd, const opt_place *pl,
                          const deso__kfacts *f, blas_local *L, blas_local *R,
                          deso__view *const *v, deso__view *rv)
{
    if (ctx->defer != NULL) return defer_member(ctx, nd, f, pl, L, R, rv);

    deso__pend *pd = ctx->post;
    if (pd != NULL) {             /* a rank not taking part posts nothing */
        pd->nd = nd;
        pd->finish = false;
        pd->coll.req = MPI_REQUEST_NULL;
        pd->coll.size = 1;
    }
    deso_err err = DESO_OK;
    if (nd->d.op == BLAS_OP_VGET || nd->d.op == BLAS_OP_VPUT) {
        err = deso__exec_view(ctx, nd, v, rv);
    } else if (nd->d.op == BLAS_OP_USER) {
        double t0 = deso__kernel_start(ctx);
        deso_err kerr = deso__exec_user(ctx, nd, v[0], rv);
        deso__kernel_time(ctx, nd->d.op, t0);
        /* a callback failing on one rank fails every rank here, before
         * the next collective                                            */
        err = deso__agree_counted(ctx, "deso_op_apply", kerr, NULL, 0);
    } else if (nd->d.op == BLAS_OP_USMV) {
        err = deso__exec_usmv(ctx, nd, v, rv);
    } else if (f->info->distributed) {
        err = deso__exec_trsv(ctx, &nd->d, v[0], v[1], rv);
    } else if (f->part) {
        err = run_local(ctx, nd, f, L, v, rv, R);
    }
    if (err != DESO_OK) {
        drop_view(nd, rv);
        return err;
    }
    if (pd != NULL) pd->rv = rv;        /* ready once waited for          */
    else if (nd->res != NULL) deso__value_computed(nd->res, rv);
    return DESO_OK;
}

deso_err deso__exec_known(deso_ctx *ctx, deso__node *nd, const opt_place *pl,
                          const deso__kfacts *f, deso__view *const *v,
                          deso__view *rv, blas_local *L, blas_local *R)
{
    return exec_with(ctx, nd, pl, f, L, R, v, rv);
}

deso_err deso__exec_views(deso_ctx *ctx, deso__node *nd, const opt_place *pl,
                          deso__view *const *v, deso__view *rv)
{
    blas_local L[BLAS_MAXOPS];
    for (int k = 0; k < nd->d.nops; k++) L[k] = local_of(ctx, v[k]);
    blas_local R = local_of(ctx, rv);
    deso__kfacts f;
    facts_of(ctx, nd, pl, L, &R, v, rv, &f);
    return exec_with(ctx, nd, pl, &f, L, &R, v, rv);
}

/* A fused group's collective carries its members' partials one after the
 * other (as opt_cost.c models it): copies them into buf (to_buf) or back
 * out of it (buf NULL: neither); returns their total length.             */
static int64_t fused_copy(deso__fz *const *m, int k, double *buf, bool to_buf)
{
    int64_t o = 0;
    for (int j = 0; j < k; j++) {
        int w = blas_red_width(m[j]->nd->d.op);
        size_t bytes = (size_t)w * sizeof(double);
        if (buf != NULL && to_buf) memcpy(buf + o, m[j]->red, bytes);
        if (buf != NULL && !to_buf) memcpy(m[j]->red, buf + o, bytes);
        o += w;
    }
    return o;
}

/* The group's one collective on buf (its members' partials one after the
 * other; every member shares rd and the ranks taking part, opt_fuse_groups'
 * key, so member 0 speaks for the group): an all-reduce when any member's
 * result is replicated along rd.  pd: started into it, not waited for.  */
static deso_err fused_coll(deso_ctx *ctx, deso__fz *const *m, int k,
                           double *buf, int64_t len, deso__pend *pd)
{
    int rd = m[0]->rd;
    if (rd < 0) return DESO_OK;
    MPI_Comm comm = red_comm(ctx, rd);
    bool all = false;
    for (int j = 0; j < k; j++)
        all = all || (m[j]->rl.rep & blas_red_bits(rd, ctx->df.pr,
                                                   ctx->df.pc)) != 0;
    if (pd != NULL)
        return deso__coll_start(ctx, comm, buf, len, DESO__SUM, all,
                                &pd->coll);
    return all ? deso__allreduce(ctx, comm, buf, len, DESO__SUM)
               : deso__reduce(ctx, comm, buf, len, DESO__SUM, 0);
}

/* After the group's collective: its reduced partials back from buf into
 * the members, every member's finish, their results ready.             */
static deso_err fused_finish(deso_ctx *ctx, deso__fz *const *m, int k,
                             const double *buf)
{
    if (m[0]->part) fused_copy(m, k, (double *)buf, false);
    for (int j = 0; j < k; j++) {
        deso__fz *f = m[j];
        deso__node *nd = f->nd;
        const blas_op_info *info = blas_op_get(nd->d.op);
        if (f->part && info->finish != NULL &&
            blas_layout_holds(&f->rl, ctx->coord[0], ctx->coord[1])) {
            blas_local R = local_of(ctx, f->rv);
            double t0 = deso__kernel_start(ctx);
            info->finish(&nd->d, NULL, &R, f->red);
            deso__kernel_time(ctx, nd->d.op, t0);
        }
    }
    for (int j = 0; j < k; j++) {
        deso__fz *f = m[j];
        if (f->nd->res != NULL) deso__value_computed(f->nd->res, f->rv);
        f->rv = NULL;
    }
    return DESO_OK;
}

/* The group's partials into buf (the scratch when they outgrow small,
 * or pd's region), then its collective.                                */
static deso_err fused_start(deso_ctx *ctx, deso__fz *const *m, int k,
                            double *small, double **buf, deso__pend *pd)
{
    DESO_CHECK(k > 0, DESO_EINTERNAL, "fused reduction: empty group");
    *buf = small;
    if (pd != NULL) {
        *buf = pd->red;
        pd->coll.req = MPI_REQUEST_NULL;
        pd->coll.size = 1;
    }
    if (!m[0]->part) return DESO_OK;
    int64_t len = fused_copy(m, k, NULL, true);
    if (len > 8 && pd == NULL) *buf = ctx->scratch;  /* prepared           */
    DESO_CHECK(len <= 8 || len <= ctx->scratch_len, DESO_EINTERNAL,
               "fused reduction: %d members were not prepared", k);
    fused_copy(m, k, *buf, true);
    return fused_coll(ctx, m, k, *buf, len, pd);
}

deso_err deso__exec_fused(deso_ctx *ctx, deso__fz *const *m, int k)
{
    double small[8], *buf;
    DESO_TRY(fused_start(ctx, m, k, small, &buf, NULL));
    return fused_finish(ctx, m, k, buf);
}

deso_err deso__exec_fused_post(deso_ctx *ctx, deso__fz *const *m, int k,
                               deso__pend *pd)
{
    double small[8], *buf;
    return fused_start(ctx, m, k, small, &buf, pd);
}

deso_err deso__exec_wait(deso_ctx *ctx, deso__pend *pd, deso__fz *const *m,
                         int k)
{
    deso_err err = deso__coll_wait(&pd->coll);
    if (err != DESO_OK) return err;
    if (k > 0) return fused_finish(ctx, m, k, pd->red);
    deso__node *nd = pd->nd;
    if (pd->finish) {
        ctx->weight = pd->weight;
        double t0 = deso__kernel_start(ctx);
        blas_op_get(nd->d.op)->finish(&nd->d, pd->L, &pd->R, pd->red);
        deso__kernel_time(ctx, nd->d.op, t0);
    }
    if (nd->res != NULL) deso__value_computed(nd->res, pd->rv);
    pd->rv = NULL;
    return DESO_OK;
}
