/* The plan explains itself: every value's placement, every edge's
 * exchange with its modelled cost, as text or as Graphviz DOT.     */
#include "optimizer/opt_impl.h"

#include <string.h>

#include "placement/errors.h"

const char *opt_layout_str(const blas_layout *l, char *buf, size_t len)
{
    switch (l->kind) {
    case BLAS_MAT:
        snprintf(buf, len, "mat %lldx%lld cyclic(%lld,%lld)", (long long)l->m,
                 (long long)l->n, (long long)l->b, (long long)l->nb);
        break;
    case BLAS_SCA:
        snprintf(buf, len, "sca rep=%u", l->rep);
        break;
    default:
        if (l->dist < 0)
            snprintf(buf, len, "vec n=%lld whole rep=%u", (long long)l->n,
                     l->rep);
        else if (l->dist == BLAS_DIST_PART)
            snprintf(buf, len, "vec n=%lld by partition", (long long)l->n);
        else
            snprintf(buf, len, "vec n=%lld %s b=%lld rep=%u", (long long)l->n,
                     l->dist == 0 ? "col(dist=0)" : "row(dist=1)",
                     (long long)l->b, l->rep);
        break;
    }
    return buf;
}

static const char *move_name(opt_move m)
{
    switch (m) {
    case OPT_MV_NONE: return "in place";
    case OPT_MV_CACHED: return "cached view";
    case OPT_MV_COLLAPSE: return "collapse (free)";
    case OPT_MV_BCAST: return "broadcast";
    case OPT_MV_EXCHANGE: return "p2p exchange";
    case OPT_MV_REMAP: return "matrix remap";
    }
    return "?";
}

static void cost_str(const opt_counts *c, char *buf, size_t len)
{
    snprintf(buf, len, "%.3g s; p2p %lld B/%lld msg; coll %lld B/%lld op",
             c->time, (long long)c->bytes_p2p, (long long)c->msgs_p2p,
             (long long)c->bytes_coll, (long long)c->msgs_coll);
}

static deso_err eval_all(const opt_graph *g, const opt_plan *p,
                         const opt_params *pp, opt_eval *ev, opt_counts *tot)
{
    DESO_TRY(opt_eval_init(ev, g));
    deso_err err = opt_plan_cost(g, p, pp, NULL, ev, tot);
    if (err != DESO_OK) opt_eval_free(ev);
    return err;
}

/* Node i's line: its operation and result, its reduction and its work. */
static void node_head(FILE *f, const opt_graph *g, const opt_plan *p,
                      const opt_params *pp, const opt_eval *ev, int i)
{
    const opt_node *nd = &g->nodes[i];
    const blas_op_info *info = blas_op_get(nd->d.op);
    char c[160];
    double work = opt__node_work(nd, &p->node[i], pp);
    fprintf(f, "  n%d %s -> v%d", i, info ? info->name : "?", nd->res);
    if (ev->node_cost[i].msgs_coll > 0) {
        opt_counts red = ev->node_cost[i];   /* its work shown apart     */
        red.time -= work;
        cost_str(&red, c, sizeof c);
        fprintf(f, "  reduction: %s (%s)", c,
                (p->node[i].res.rep &
                 blas_red_bits(blas_red_dim(&nd->d, p->node[i].req),
                               g->df.pr, g->df.pc))
                    ? "all-reduce"
                    : "reduce to one place");
    }
    if (work > 0.0) fprintf(f, "  work: %.3g s", work);
    fprintf(f, "\n");
}

deso_err opt_plan_explain(FILE *f, const opt_graph *g, const opt_plan *p,
                          const opt_params *pp)
{
    DESO_CHECK(f && g && p && pp, DESO_ENULL, "opt_plan_explain: NULL");
    opt_eval ev;
    opt_counts tot;
    DESO_TRY(eval_all(g, p, pp, &ev, &tot));
    char a[128], b[128], c[160];
    cost_str(&tot, c, sizeof c);
    fprintf(f, "plan (mode %s, %dx%d grid, %d nodes, %d greedy iterations): "
               "%s\n", opt_mode_name(p->mode), g->df.pr, g->df.pc, g->nnodes,
            p->iters, c);
    fprintf(f, "values:\n");
    for (int v = 0; v < g->nvals; v++) {
        const opt_value *val = &g->vals[v];
        if (val->producer < 0) {
            fprintf(f, "  v%d live-in: %s", v,
                    opt_layout_str(&val->views[0], a, sizeof a));
            for (int k = 1; k < val->nviews; k++)
                fprintf(f, " (+ view %s)",
                        opt_layout_str(&val->views[k], a, sizeof a));
        } else {
            fprintf(f, "  v%d = n%d: %s", v, val->producer,
                    opt_layout_str(&p->node[val->producer].res, a, sizeof a));
        }
        fprintf(f, "%s\n", val->live_out ? " [live-out]" : "");
    }
    fprintf(f, "nodes:\n");
    for (int i = 0; i < g->nnodes; i++) {
        const opt_node *nd = &g->nodes[i];
        node_head(f, g, p, pp, &ev, i);
        for (int k = 0; k < nd->d.nops; k++) {
            const opt_edge *e = &ev.edge[i * BLAS_MAXOPS + k];
            fprintf(f, "    op%d v%d: %s", k, nd->ops[k],
                    opt_layout_str(&e->to, a, sizeof a));
            if (e->move == OPT_MV_NONE || e->move == OPT_MV_CACHED) {
                fprintf(f, "  [%s]\n", move_name(e->move));
                continue;
            }
            cost_str(&e->cost, c, sizeof c);
            fprintf(f, "  <- %s from %s: %s\n", move_name(e->move),
                    opt_layout_str(&e->from, b, sizeof b), c);
        }
    }
    for (int v = 0; v < g->nvals; v++) {
        if (!g->vals[v].has_want) continue;
        const opt_edge *e = &ev.edge[g->nnodes * BLAS_MAXOPS + v];
        cost_str(&e->cost, c, sizeof c);
        fprintf(f, "  read v%d as %s: %s from %s: %s\n", v,
                opt_layout_str(&e->to, a, sizeof a), move_name(e->move),
                opt_layout_str(&e->from, b, sizeof b), c);
    }
    opt_eval_free(&ev);
    return ferror(f) ? deso__fail(DESO_EIO, "opt_plan_explain: write error")
                     : DESO_OK;
}

/* green (cheap) .. red (the costliest edge); grey: free                   */
static void colour(double t, double mx, char *buf, size_t len)
{
    if (t <= 0.0 || mx <= 0.0) {
        snprintf(buf, len, "#9e9e9e");
        return;
    }
    double x = t / mx;
    int r = (int)(40 + 215 * x), gr = (int)(180 * (1.0 - x));
    snprintf(buf, len, "#%02x%02x20", r, gr);
}

static void src_name(const opt_graph *g, int v, char *buf, size_t len)
{
    if (g->vals[v].producer >= 0) snprintf(buf, len, "n%d", g->vals[v].producer);
    else snprintf(buf, len, "v%d", v);
}

deso_err opt_plan_dot(FILE *f, const opt_graph *g, const opt_plan *p,
                      const opt_params *pp)
{
    DESO_CHECK(f && g && p && pp, DESO_ENULL, "opt_plan_dot: NULL");
    opt_eval ev;
    opt_counts tot;
    DESO_TRY(eval_all(g, p, pp, &ev, &tot));
    double mx = 0.0;
    for (int e = 0; e < ev.nedges; e++)
        if (ev.edge[e].cost.time > mx) mx = ev.edge[e].cost.time;
    char a[128], c[160], col[16], sn[32];
    cost_str(&tot, c, sizeof c);
    fprintf(f, "digraph deso_plan {\n");
    fprintf(f, "  label=\"mode %s, %dx%d: %s\";\n", opt_mode_name(p->mode),
            g->df.pr, g->df.pc, c);
    fprintf(f, "  node [fontname=\"monospace\", fontsize=10];\n");
    fprintf(f, "  edge [fontname=\"monospace\", fontsize=9];\n");
    for (int v = 0; v < g->nvals; v++) {
        if (g->vals[v].producer >= 0) continue;
        fprintf(f, "  v%d [shape=box, label=\"v%d live-in\\n%s\"];\n", v, v,
                opt_layout_str(&g->vals[v].views[0], a, sizeof a));
    }
    for (int i = 0; i < g->nnodes; i++) {
        const blas_op_info *info = blas_op_get(g->nodes[i].d.op);
        colour(ev.node_cost[i].time, mx, col, sizeof col);
        fprintf(f, "  n%d [shape=ellipse, color=\"%s\", label=\"v%d = n%d %s"
                   "\\n%s\\nreduction %.3g s\"];\n",
                i, col, g->nodes[i].res, i, info ? info->name : "?",
                opt_layout_str(&p->node[i].res, a, sizeof a),
                ev.node_cost[i].time);
    }
    for (int i = 0; i < g->nnodes; i++) {
        const opt_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->d.nops; k++) {
            const opt_edge *e = &ev.edge[i * BLAS_MAXOPS + k];
            src_name(g, nd->ops[k], sn, sizeof sn);
            colour(e->cost.time, mx, col, sizeof col);
            fprintf(f, "  %s -> n%d [color=\"%s\", label=\"op%d: %s %.3g s "
                       "(%lld B p2p, %lld B coll)\"];\n",
                    sn, i, col, k, move_name(e->move), e->cost.time,
                    (long long)e->cost.bytes_p2p,
                    (long long)e->cost.bytes_coll);
        }
    }
    for (int v = 0; v < g->nvals; v++) {
        if (!g->vals[v].has_want) continue;
        const opt_edge *e = &ev.edge[g->nnodes * BLAS_MAXOPS + v];
        src_name(g, v, sn, sizeof sn);
        colour(e->cost.time, mx, col, sizeof col);
        fprintf(f, "  out%d [shape=box, style=dashed, label=\"read v%d\\n%s\"];"
                   "\n", v, v, opt_layout_str(&e->to, a, sizeof a));
        fprintf(f, "  %s -> out%d [color=\"%s\", label=\"%s %.3g s (%lld B "
                   "p2p, %lld B coll)\"];\n",
                sn, v, col, move_name(e->move), e->cost.time,
                (long long)e->cost.bytes_p2p, (long long)e->cost.bytes_coll);
    }
    fprintf(f, "}\n");
    opt_eval_free(&ev);
    return ferror(f) ? deso__fail(DESO_EIO, "opt_plan_dot: write error")
                     : DESO_OK;
}
