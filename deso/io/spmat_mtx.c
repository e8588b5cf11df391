/* deso_spmat_from_mtx: a Matrix Market coordinate file into a sparse
 * matrix through the streaming reader (sparse_load.h), so that no rank
 * holds more than its block of rows and nothing is densified.           */
#include "deso/io/api_io.h"
#include "deso/io/sparse_load.h"

deso_err deso__spmat_from_mtx(deso_ctx *ctx, const char *path,
                              deso_spmat **out)
{
    static const char *fn = "deso_spmat_from_mtx";
    DESO_TRY(deso__ctx_check(ctx, fn));
    if (out != NULL) *out = NULL;
    /* a NULL out on one rank must not leave the others in the reader     */
    deso_err err = deso__spmat_begin(0, 0, out, fn);
    DESO_TRY(deso__agree_counted(ctx, fn, err, NULL, 0));
    int64_t m, n;
    pl_csr rows;
    DESO_TRY(deso__sparse_load(ctx->comm, path, &m, &n, &rows));
    deso__spmat_data *sp = NULL;
    err = deso__spmat_alloc(ctx, m, n, &sp);
    if (err == DESO_OK) {
        deso__spmat_blocks(ctx, sp);
        sp->rows = rows;
    } else {
        pl_csr_free(&rows);
    }
    return deso__spmat_publish(ctx, fn, err, 0, sp, out);
}
