/* deso-mtx2bin: converts a Matrix Market file into deso's global matrix
 * file (the format of deso_mat_to_file, in deso.h), which
 * deso_mat_from_file reads back with MPI-IO on any number of ranks.
 *
 *   mpiexec.mpich -n P deso-mtx2bin IN.mtx OUT.bin
 *
 * The matrix passes through the ranks (deso_mat_from_mtx, then
 * deso_mat_to_file), any P; rank 0 streams the file, so that with a memory
 * budget (DESO_MEM_LIMIT, DESO_OOC_DIR) a matrix larger than memory
 * converts through the ranks' local array files, no rank holding it.
 * Prints "deso-mtx2bin: OUT.bin: M x N" on rank 0 and exits 0; a library
 * error (unreadable or malformed input, unwritable output): one line on
 * stderr from rank 0, exit 1; bad arguments: a usage line, exit 2.       */
#include <stdio.h>
#include <string.h>

#include "deso.h"

static int fail(deso_ctx **ctx, int rank, const char *what, deso_err e)
{
    if (rank == 0)
        fprintf(stderr, "deso-mtx2bin: %s: %s (%s)\n", what,
                deso_last_error(), deso_errname(e));
    if (*ctx) deso_finalize(ctx);
    MPI_Finalize();
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int help = argc == 2 && strcmp(argv[1], "--help") == 0;
    if (argc != 3) {
        if (rank == 0)
            fprintf(help ? stdout : stderr, "deso-mtx2bin: usage: "
                    "mpiexec.mpich -n P deso-mtx2bin IN.mtx OUT.bin\n");
        MPI_Finalize();
        return help ? 0 : 2;
    }
    deso_ctx *ctx = NULL;
    deso_mat *a = NULL;
    deso_err e = deso_init(MPI_COMM_WORLD, NULL, &ctx);
    if (e != DESO_OK) return fail(&ctx, rank, "deso_init", e);
    e = deso_mat_from_mtx(ctx, argv[1], &a);
    if (e != DESO_OK) return fail(&ctx, rank, argv[1], e);
    e = deso_mat_to_file(a, argv[2]);
    if (e != DESO_OK) return fail(&ctx, rank, argv[2], e);
    int64_t m, n;
    deso_mat_shape(a, &m, &n);
    if (rank == 0)
        printf("deso-mtx2bin: %s: %lld x %lld\n", argv[2], (long long)m,
               (long long)n);
    deso_mat_destroy(&a);
    deso_finalize(&ctx);
    MPI_Finalize();
    return 0;
}
