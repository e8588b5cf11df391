/* Internal: the implementations of the I/O layer's public functions, which
 * api_io.c wraps with the context's error handler (deso/runtime/api.h
 * says why).  Included by the files that define them, so that each
 * definition is checked against the prototype its wrapper calls.         */
#ifndef DESO_IO_API_IO_H
#define DESO_IO_API_IO_H

#include "deso/runtime/runtime.h"

deso_err deso__log_view(deso_ctx *ctx, FILE *f);
deso_err deso__wisdom_export(deso_ctx *ctx, const char *path);
deso_err deso__wisdom_import(deso_ctx *ctx, const char *path);
deso_err deso__mat_from_mtx(deso_ctx *ctx, const char *path, deso_mat **out);
deso_err deso__mat_diag(const deso_mat *a, deso_vec *d);
deso_err deso__spmat_from_mtx(deso_ctx *ctx, const char *path,
                              deso_spmat **out);
deso_err deso__blacs_context(deso_ctx *ctx, int *ctxt);
deso_err deso__mat_from_scalapack(deso_ctx *ctx, double *local,
                                  const int desc[9], deso_copy_mode mode,
                                  deso_mat **out);
deso_err deso__vec_from_scalapack(deso_ctx *ctx, double *local,
                                  const int desc[9], deso_copy_mode mode,
                                  deso_vec **out);
deso_err deso__mat_to_scalapack(const deso_mat *a, int ctxt, int64_t mb,
                                int64_t nb, deso_copy_mode mode, int desc[9],
                                double **local);
deso_err deso__vec_to_scalapack(const deso_vec *x, int ctxt, int64_t mb,
                                deso_copy_mode mode, int desc[9],
                                double **local);

deso_err deso__mat_to_file(const deso_mat *a, const char *path);
deso_err deso__mat_from_file(deso_ctx *ctx, const char *path, deso_mat **out);

#endif
