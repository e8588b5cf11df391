/* Shared helpers of the out-of-core tests (header only): the matrices
 * they stream and what they look for in the directory of the local
 * array files.                                                           */
#ifndef DESO_TESTS_OOC_TEST_H
#define DESO_TESTS_OOC_TEST_H

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "blas/blas.h"

/* The out-of-core tests' setup (TU_MAIN_SETUP): dgemv's chunks by the
 * column block (at most 64 columns) instead of by bytes, so that their
 * small matrices stream in several slabs as large ones do with the
 * default chunk (blas_gemv_chunk); test_ooc's test_chunk_bytes covers
 * chunks by bytes.                                                       */
static inline int tu_ooc_setup(void **state)
{
    (void)state;
    blas_gemv_chunk_bytes(0);
    return 0;
}

/* A general matrix with full mantissas, so that adding in another order
 * changes the bits.                                                      */
static inline double tu_ooc_gen(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    return sin(0.37 * (double)i + 1.3 * (double)j) + 1e-3 * (double)i;
}

/* The vector the products multiply.                                      */
static inline double tu_ooc_vgen(int64_t i, void *arg)
{
    (void)arg;
    return 0.5 + cos(0.71 * (double)i);
}

/* y = A x (m) with x from tu_ooc_vgen (n), gathered into y_out; then A
 * is destroyed.                                                          */
static inline void tu_ooc_product(deso_ctx *ctx, deso_mat *A, int64_t m,
                                  int64_t n, double *y_out)
{
    deso_vec *x = NULL, *y = NULL;
    TU_CALL(deso_vec_from_fn(ctx, n, tu_ooc_vgen, NULL, &x));
    TU_CALL(deso_vec_create(ctx, m, &y));
    TU_CALL(deso_dgemv(DESO_COL_MAJOR, DESO_NO_TRANS, m, n, 1.0, A, m, x, 1,
                       0.0, y, 1));
    tu_fetch(y, y_out);
    TU_CALL(deso_vec_destroy(&x));
    TU_CALL(deso_vec_destroy(&y));
    TU_CALL(deso_mat_destroy(&A));
}

/* A symmetric, diagonally dominant matrix (CG converges on it).          */
static inline double tu_ooc_sym(int64_t i, int64_t j, void *arg)
{
    (void)arg;
    int64_t a = i < j ? i : j, b = i < j ? j : i;
    return (double)((a * 5 + b * 3) % 11) / 4.0 + (i == j ? 10.0 : 0.0);
}

/* Whether dir exists and holds nothing.                                  */
static inline int tu_dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n == 0;
}

/* Whether one of this process's descriptors names a file whose path
 * starts with `prefix` and (unless NULL) contains `also`: an unnamed file
 * shows as "dir/#inode (deleted)", a named one unlinked as
 * "dir/deso-ooc-... (deleted)".                                         */
static inline int tu_fd_named(const char *prefix, const char *also)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) return 0;
    int found = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[300], link[1024];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, link, sizeof link - 1);
        if (len <= 0) continue;
        link[len] = '\0';
        if (strncmp(link, prefix, strlen(prefix)) == 0 &&
            (also == NULL || strstr(link, also) != NULL))
            found = 1;
    }
    closedir(d);
    return found;
}

#endif
