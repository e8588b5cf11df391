/* PMPI interposer that counts what the process hands to MPI (see
 * pmpi_count.h).  Each MPI_X here records and then calls PMPI_X, so the
 * program's behaviour is unchanged.  Single-threaded use only (deso is). */
#define PMPI_COUNT_SELF
#include "pmpi_count.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static pc_p2p p2p;
static pc_coll *log_;
static size_t nlog, caplog;
static long long lost;          /* records dropped when the log could not grow */

#define EXPORT __attribute__((visibility("default")))

EXPORT void pc_reset(void)
{
    p2p = (pc_p2p){0};
    nlog = 0;
    lost = 0;
}

EXPORT void pc_get_p2p(pc_p2p *out) { *out = p2p; }

EXPORT size_t pc_get_colls(const pc_coll **out)
{
    *out = log_;
    /* a dropped record must not pass for a clean count                     */
    return lost ? (size_t)-1 : nlog;
}

static long long payload(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    PMPI_Type_size(type, &size);
    return (long long)count * size;
}

static void record(int kind, MPI_Comm comm, long long bytes)
{
    if (nlog == caplog) {
        size_t cap = caplog ? 2 * caplog : 1024;
        pc_coll *p = realloc(log_, cap * sizeof *p);
        if (!p) {
            lost++;
            return;
        }
        log_ = p;
        caplog = cap;
    }
    pc_coll *c = &log_[nlog++];
    c->kind = kind;
    c->bytes = bytes;
    PMPI_Comm_size(comm, &c->size);
    PMPI_Comm_rank(comm, &c->rank);
}

static void sent(int count, MPI_Datatype type)
{
    p2p.sends++;
    p2p.send_bytes += payload(count, type);
}

static void posted(int count, MPI_Datatype type)
{
    p2p.recvs++;
    p2p.recv_bytes += payload(count, type);
}

/* point-to-point ----------------------------------------------------------- */

int MPI_Send(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c)
{
    sent(n, t);
    return PMPI_Send(b, n, t, dst, tag, c);
}

int MPI_Ssend(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c)
{
    sent(n, t);
    return PMPI_Ssend(b, n, t, dst, tag, c);
}

int MPI_Rsend(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c)
{
    sent(n, t);
    return PMPI_Rsend(b, n, t, dst, tag, c);
}

int MPI_Isend(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c,
              MPI_Request *r)
{
    sent(n, t);
    return PMPI_Isend(b, n, t, dst, tag, c, r);
}

int MPI_Issend(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c,
               MPI_Request *r)
{
    sent(n, t);
    return PMPI_Issend(b, n, t, dst, tag, c, r);
}

int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st, int dst, int stag,
                 void *rb, int rn, MPI_Datatype rt, int src, int rtag,
                 MPI_Comm c, MPI_Status *s)
{
    sent(sn, st);
    posted(rn, rt);
    return PMPI_Sendrecv(sb, sn, st, dst, stag, rb, rn, rt, src, rtag, c, s);
}

int MPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c,
             MPI_Status *s)
{
    posted(n, t);
    return PMPI_Recv(b, n, t, src, tag, c, s);
}

int MPI_Irecv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c,
              MPI_Request *r)
{
    posted(n, t);
    return PMPI_Irecv(b, n, t, src, tag, c, r);
}

/* Persistent requests carry no payload at the start: count them apart, so
 * that a program using them cannot pass for one that sends nothing.       */
int MPI_Start(MPI_Request *r)
{
    p2p.persistent++;
    return PMPI_Start(r);
}

int MPI_Startall(int n, MPI_Request r[])
{
    p2p.persistent += n;
    return PMPI_Startall(n, r);
}

/* collectives -------------------------------------------------------------- */

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    record(PC_BCAST, c, payload(n, t));
    return PMPI_Bcast(b, n, t, root, c);
}

int MPI_Reduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
               int root, MPI_Comm c)
{
    record(PC_REDUCE, c, payload(n, t));
    return PMPI_Reduce(sb, rb, n, t, op, root, c);
}

int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                  MPI_Comm c)
{
    record(PC_ALLREDUCE, c, payload(n, t));
    return PMPI_Allreduce(sb, rb, n, t, op, c);
}

int MPI_Iallreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                   MPI_Comm c, MPI_Request *r)
{
    record(PC_ALLREDUCE, c, payload(n, t));
    return PMPI_Iallreduce(sb, rb, n, t, op, c, r);
}

int MPI_Ireduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                int root, MPI_Comm c, MPI_Request *r)
{
    record(PC_REDUCE, c, payload(n, t));
    return PMPI_Ireduce(sb, rb, n, t, op, root, c, r);
}

int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c,
               MPI_Request *r)
{
    record(PC_BCAST, c, payload(n, t));
    return PMPI_Ibcast(b, n, t, root, c, r);
}

int MPI_Gather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn,
               MPI_Datatype rt, int root, MPI_Comm c)
{
    record(PC_GATHER, c, payload(sn, st));
    return PMPI_Gather(sb, sn, st, rb, rn, rt, root, c);
}

int MPI_Allgather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn,
                  MPI_Datatype rt, MPI_Comm c)
{
    record(PC_ALLGATHER, c, sb == MPI_IN_PLACE ? payload(rn, rt) : payload(sn, st));
    return PMPI_Allgather(sb, sn, st, rb, rn, rt, c);
}

int MPI_Scatter(const void *sb, int sn, MPI_Datatype st, void *rb, int rn,
                MPI_Datatype rt, int root, MPI_Comm c)
{
    record(PC_SCATTER, c, payload(rn, rt));
    return PMPI_Scatter(sb, sn, st, rb, rn, rt, root, c);
}

int MPI_Alltoall(const void *sb, int sn, MPI_Datatype st, void *rb, int rn,
                 MPI_Datatype rt, MPI_Comm c)
{
    record(PC_ALLTOALL, c, payload(sn, st));
    return PMPI_Alltoall(sb, sn, st, rb, rn, rt, c);
}

int MPI_Alltoallv(const void *sb, const int sn[], const int sd[],
                  MPI_Datatype st, void *rb, const int rn[], const int rd[],
                  MPI_Datatype rt, MPI_Comm c)
{
    int size = 0;
    long long total = 0;
    PMPI_Comm_size(c, &size);
    for (int i = 0; i < size; i++) total += payload(sn[i], st);
    record(PC_ALLTOALL, c, total);
    return PMPI_Alltoallv(sb, sn, sd, st, rb, rn, rd, rt, c);
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int n, MPI_Datatype t,
                             MPI_Op op, MPI_Comm c)
{
    record(PC_OTHER, c, payload(n, t));
    return PMPI_Reduce_scatter_block(sb, rb, n, t, op, c);
}

int MPI_Scan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
             MPI_Comm c)
{
    record(PC_OTHER, c, payload(n, t));
    return PMPI_Scan(sb, rb, n, t, op, c);
}

int MPI_Barrier(MPI_Comm c)
{
    record(PC_BARRIER, c, 0);
    return PMPI_Barrier(c);
}

/* set-up that synchronises the ranks of a communicator -------------------- */

int MPI_Comm_dup(MPI_Comm c, MPI_Comm *out)
{
    record(PC_SETUP, c, 0);
    return PMPI_Comm_dup(c, out);
}

int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out)
{
    record(PC_SETUP, c, 0);
    return PMPI_Comm_split(c, color, key, out);
}

int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info,
                        MPI_Comm *out)
{
    record(PC_SETUP, c, 0);
    return PMPI_Comm_split_type(c, type, key, info, out);
}

int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *out)
{
    record(PC_SETUP, c, 0);
    return PMPI_Comm_create(c, g, out);
}

int MPI_Win_allocate_shared(MPI_Aint size, int unit, MPI_Info info, MPI_Comm c,
                            void *base, MPI_Win *win)
{
    record(PC_SETUP, c, 0);
    return PMPI_Win_allocate_shared(size, unit, info, c, base, win);
}

/* totals at exit ------------------------------------------------------------ */

int MPI_Finalize(void)
{
    const char *path = getenv("PMPI_COUNT_OUT");
    if (path && *path) {
        static const char *names[] = PC_NAMES;
        long long calls[PC_NKINDS] = {0}, bytes[PC_NKINDS] = {0};
        for (size_t i = 0; i < nlog; i++) {
            calls[log_[i].kind]++;
            bytes[log_[i].kind] += log_[i].bytes;
        }
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        FILE *f = fopen(path, "a");
        if (f) {
            fprintf(f, "{\"rank\":%d,\"sends\":%lld,\"send_bytes\":%lld,"
                       "\"recvs\":%lld,\"persistent\":%lld,\"lost\":%lld",
                    rank, p2p.sends, p2p.send_bytes, p2p.recvs, p2p.persistent,
                    lost);
            for (int k = 0; k < PC_NKINDS; k++)
                fprintf(f, ",\"%s_calls\":%lld,\"%s_bytes\":%lld", names[k],
                        calls[k], names[k], bytes[k]);
            fprintf(f, "}\n");
            fclose(f);
        } else {
            fprintf(stderr, "pmpi_count: cannot append to %s\n", path);
        }
    }
    free(log_);
    log_ = NULL;
    nlog = caplog = 0;
    return PMPI_Finalize();
}
