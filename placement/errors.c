#include "placement/errors.h"

#include <stdarg.h>
#include <stdio.h>

/* One message per rank; deso is not thread-safe (MPI_THREAD_FUNNELED).     */
static char last_message[512];

const char *deso_strerror(deso_err err)
{
    switch (err) {
#define DESO__MSG(name, value, msg) case name: return msg;
        DESO_ERROR_MAP(DESO__MSG)
#undef DESO__MSG
    }
    return "unknown deso error code";
}

const char *deso_errname(deso_err err)
{
    switch (err) {
#define DESO__NAME(name, value, msg) case name: return #name;
        DESO_ERROR_MAP(DESO__NAME)
#undef DESO__NAME
    }
    return "DESO_E?";
}

const char *deso_last_error(void) { return last_message; }

deso_err deso__fail(deso_err err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return err;
}
