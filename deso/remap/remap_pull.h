/* deso/remap/remap_pull.h: programs of single-copy remaps (internal; see
 * remap_pull.c).                                                         */
#ifndef DESO_REMAP_PULL_H
#define DESO_REMAP_PULL_H

#include "deso/remap/remap.h"

typedef struct deso__pull {
    deso__copy *direct;    /* per receive j: sender's source -> target     */
    int64_t *peer_rows;    /* per receive j: the sender's local rows       */
    deso__copy assembly;   /* the whole target, arrays numbered            */
    deso__copy resolved;   /* assembly over one base (deso__cp_resolve)    */
    bool has_assembly;     /* false: the direct programs one by one        */
} deso__pull;

/* Builds r's single-copy programs from its kept plan (r->plan,
 * deso__remap_init_keep; its messages carry the senders' local rows), in
 * O(one period): each receive's description read as the sender's source
 * offsets -> this rank's target.  Errors: DESO_ENOMEM,
 * DESO_EINTERNAL (no kept plan, or one that disagrees with r); *out is
 * then empty.                                                            */
deso_err deso__pull_build(const deso__remap *r, deso__pull *out);

/* Frees what deso__pull_build made (nrecv: r->nrecv); leaves *p empty.  */
void deso__pull_free(deso__pull *p, int nrecv);

#endif
