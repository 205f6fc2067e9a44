/*
 * Sketches merged across MPI ranks (mpirun -n N): each rank sketches its share of one
 * deterministic list of latencies (every N-th value), rank 0 gathers the exported
 * sketches and merges them. The merged percentiles must equal those of one sketch of the
 * whole list and lie within alpha of the exact ones (numpy's linear interpolation).
 * Prints "1 passed, 0 failed" (or the failure) on rank 0; exit status 0 on success.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "servesim/metrics/sketch.h"

static double value(size_t i) /* a lognormal-ish latency over five decades, with zeros */
{
    unsigned long long r = (i + 1) * 0x9E3779B97F4A7C15ULL;
    r ^= r >> 31;
    r *= 0xBF58476D1CE4E5B9ULL;
    r ^= r >> 29;
    double u = ((r >> 11) + 0.5) / 9007199254740992.0;
    return i % 101 == 0 ? 0.0 : 0.02 * exp(4.0 * (u - 0.5) * (u < 0.9 ? 1.0 : 2.5));
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const size_t n = 300000;
    const double alpha = 0.01;
    sv_sketch_t *mine = sv_sketch_new(alpha);
    for (size_t i = (size_t)rank; i < n; i += (size_t)size)
        sv_sketch_add(mine, value(i), 1);
    int len = (int)sv_sketch_export(mine, NULL, 0);
    double *buf = malloc((size_t)len * sizeof *buf);
    sv_sketch_export(mine, buf, (size_t)len);
    int failed = 0;
    if (rank != 0) {
        MPI_Send(&len, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        MPI_Send(buf, len, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    } else {
        for (int r = 1; r < size; r++) {
            int k;
            MPI_Recv(&k, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double *b = malloc((size_t)k * sizeof *b);
            MPI_Recv(b, k, MPI_DOUBLE, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (sv_sketch_merge_exported(mine, b, (size_t)k)) failed = 1;
            free(b);
        }
        sv_sketch_t *whole = sv_sketch_new(alpha);
        double *x = malloc(n * sizeof *x);
        for (size_t i = 0; i < n; i++) {
            x[i] = value(i);
            sv_sketch_add(whole, x[i], 1);
        }
        qsort(x, n, sizeof *x, cmp_d);
        const double ps[] = {1, 10, 50, 90, 95, 99, 99.9, 100};
        for (int k = 0; k < 8; k++) {
            double exact = sv_percentile_sorted(x, n, ps[k]);
            double got = sv_sketch_percentile(mine, ps[k]);
            if (got != sv_sketch_percentile(whole, ps[k]) ||
                fabs(got - exact) > alpha * exact * (1 + 1e-9)) {
                printf("p%g: merged %.17g, one sketch %.17g, exact %.17g (alpha %g)\n", ps[k],
                       got, sv_sketch_percentile(whole, ps[k]), exact, alpha);
                failed = 1;
            }
        }
        if (sv_sketch_count(mine) != (double)n) failed = 1;
        printf("%d ranks: %s\n", size, failed ? "0 passed, 1 failed" : "1 passed, 0 failed");
        sv_sketch_free(whole);
        free(x);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(buf);
    sv_sketch_free(mine);
    MPI_Finalize();
    return failed ? 1 : 0;
}
