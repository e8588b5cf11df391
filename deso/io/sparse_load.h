/* Internal: a sparse Matrix Market file read into each rank's own rows, as
 * compressed sparse rows, without any rank holding the whole matrix.    */
#ifndef DESO_IO_SPARSE_LOAD_H
#define DESO_IO_SPARSE_LOAD_H

#include <stdint.h>

#include <mpi.h>

#include "placement/csr.h"

/* Every rank opens `path`, scans it and keeps its block of rows: the
 * contiguous blocks of pl_blocks_range (placement/halo.h), the first m % P
 * ranks one row more than the others, an empty block when m < P
 * (rows->row0 = the block's first row; columns global).  *m and *n receive the shape.  The
 * outcome is agreed: on failure every rank returns the same code and
 * message (the lowest failing rank's), with *rows empty.  A file that
 * reads differently on different ranks (another shape or other entries:
 * not the same file everywhere) is DESO_EMISMATCH; one that changes while
 * the ranks read it, DESO_EIO.  The file is read twice (a count, then the
 * fill in place), so it must be a regular file.  Collective over comm.   */
deso_err deso__sparse_load(MPI_Comm comm, const char *path, int64_t *m,
                           int64_t *n, pl_csr *rows);

#endif
