/* deso error codes: the one list every layer returns, and its messages.
 *
 * This header sits in the lowest layer (placement/) because every folder
 * returns these codes; deso/deso.h includes it and it is installed beside
 * deso.h. It is pure C: no MPI.                                             */
#ifndef DESO_ERRORS_H
#define DESO_ERRORS_H

/* The library is built with hidden visibility: what is declared here is
 * its interface, and the only names it exports.                          */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* X(name, value, message): one row per error, generating the enum, the
 * names and the messages from a single table.                              */
#define DESO_ERROR_MAP(X)                                                    \
    X(DESO_OK,        0,  "success")                                          \
    X(DESO_EINVAL,   -1,  "invalid argument")                                 \
    X(DESO_ENULL,    -2,  "NULL pointer argument")                            \
    X(DESO_ESIZE,    -3,  "invalid or mismatched size")                       \
    X(DESO_ESINGULAR,-4,  "alignment matrix is singular or not unimodular")  \
    X(DESO_EGRID,    -5,  "process grid does not match the ranks")           \
    X(DESO_ENOMEM,   -6,  "out of memory")                                    \
    X(DESO_EOVERFLOW,-7,  "integer overflow")                                 \
    X(DESO_EMPI,     -8,  "MPI call failed")                                  \
    X(DESO_EMISMATCH,-9,  "ranks recorded different call sequences")         \
    X(DESO_ESTALE,   -10, "handle used after it was freed")                  \
    X(DESO_ECONTEXT, -11, "handle belongs to another context")               \
    X(DESO_ENOTSUP,  -12, "not supported")                                    \
    X(DESO_EWISDOM,  -13, "wisdom file rejected")                             \
    X(DESO_EIO,      -14, "input/output error")                               \
    X(DESO_ESTATE,   -15, "call not allowed in the current state")           \
    X(DESO_EINTERNAL,-16, "internal error (a bug in deso)")                 \
    X(DESO_EUSER,    -17, "a user callback failed")

typedef enum deso_err {
#define DESO__ENUM(name, value, msg) name = value,
    DESO_ERROR_MAP(DESO__ENUM)
#undef DESO__ENUM
} deso_err;

/* The fixed message of a code ("invalid argument"); never NULL.  Local.   */
const char *deso_strerror(deso_err err);

/* The code's name ("DESO_EINVAL"); never NULL.  Local.                     */
const char *deso_errname(deso_err err);

/* The detailed message of the most recent error raised on this rank, e.g.
 * "deso_daxpy: x has length 5 but y has length 7"; "" when none.  Local.  */
const char *deso_last_error(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
