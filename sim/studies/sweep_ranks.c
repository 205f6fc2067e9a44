/*
 * A sweep spread over the ranks of an MPI job (see include/servesim/studies/sweep.h):
 * under mpirun each rank runs every size-th point as a shard of its own, then rank 0
 * gathers the rows. Built without MPI (the default), it is sv_sweep_run itself.
 */
#include <stdlib.h>

#include "servesim/studies/sweep.h"

#ifdef SERVESIM_HAVE_MPI
#include <mpi.h>
#endif

int sv_sweep_run_ranks(const sv_sweep_t *sw, const sv_catalog_t *cat, const char *outdir, int jobs,
                       int shard, int nshards, sv_row_t *rows, FILE *progress, int *is_root,
                       sv_error_t *err)
{
    *is_root = 1;
#ifdef SERVESIM_HAVE_MPI
    int rank = 0, size = 1, inited = 0;
    MPI_Initialized(&inited);
    if (inited) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    }
    if (size > 1) {
        if (nshards > 1) return sv_errorf(err, SV_EINVAL, "--shard and mpirun cannot be combined");
        shard = rank + 1;
        nshards = size;
        if (rank > 0) progress = NULL;
        *is_root = rank == 0;
    }
    int rc = sv_sweep_run(sw, cat, outdir, jobs, shard, nshards, rows, progress, err);
    if (size <= 1) return rc;
    int any = rc != 0, all = 0;
    MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all) return rc ? rc : sv_errorf(err, SV_EINVAL, "another rank of the sweep failed");
    size_t bytes = (size_t)sw->npoints * sizeof *rows;
    sv_row_t *all_rows = rank == 0 ? malloc(bytes * (size_t)size) : NULL;
    if (rank == 0 && !all_rows) MPI_Abort(MPI_COMM_WORLD, 1);
    /* Rows are plain data of one binary, so bytes travel as they are; only their value
     * pointers are the sending rank's, and are set again below. */
    MPI_Gather(rows, (int)bytes, MPI_BYTE, all_rows, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank > 0) return 0;
    for (long i = 0; i < sw->npoints; i++) {
        rows[i] = all_rows[(size_t)(i % size) * (size_t)sw->npoints + (size_t)i];
        for (int k = 0; k < sw->nvary; k++) /* pointers of another process: point again */
            rows[i].vals[k] = sv_sweep_label(sw, i, k);
    }
    free(all_rows);
    return 0;
#else
    return sv_sweep_run(sw, cat, outdir, jobs, shard, nshards, rows, progress, err);
#endif
}
