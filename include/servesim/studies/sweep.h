/*
 * Sweeps: one scenario run over a grid of values of any keys (`--vary KEY=SPEC`), each
 * point a full simulation with the same seed (common random numbers), and the knee of
 * the load curve.
 *
 * A SPEC is a list "1,2,4", a linear range "2:20:2" (start:stop:step, inclusive) or a
 * geometric range "1:64:x2". Several keys form their cartesian product; the first key is
 * the load axis and varies fastest. For each combination of the other keys the sweep
 * reports the knee: the highest load before the first point whose SLO attainment (share
 * of requests meeting every SLO) falls below the scenario's `slo.attainment` target, and
 * the load of maximum goodput.
 *
 * Outputs in a directory: points/point-NNNNNN.json (vLLM's result JSON of each point),
 * sweep.csv (one row per point, numbers written to round-trip exactly) and sweep.json
 * (the rows, knees and maxima). Points can run in parallel processes (jobs) and be split
 * into shards (every N-th point) whose directories sv_sweep_merge() joins into exactly the
 * files the unsharded sweep writes.
 *
 * Ownership: plain caller-owned structs; rows arrays are caller storage.
 */
#ifndef SERVESIM_SWEEP_H
#define SERVESIM_SWEEP_H

#include <stdio.h>

#include "servesim/cost/catalog.h"
#include "servesim/base/error.h"

#define SV_MAX_VARY 6
#define SV_MAX_VALUES 512
#define SV_MAX_POINTS 100000
#define SV_VALUE_MAX 96

typedef struct sv_vary {
    char key[128];
    int n;
    char vals[SV_MAX_VALUES][SV_VALUE_MAX];
} sv_vary_t;

/* "workload.rate=1,2,4" / "workload.rate=2:20:2" / "hardware.replicas=1:64:x2". */
int sv_vary_parse(const char *arg, sv_vary_t *v, sv_error_t *err);

/* The metrics kept per point, in sweep.csv column order after index and the keys. */
enum {
    SV_COL_COMPLETED = 0,
    SV_COL_FAILED,
    SV_COL_DURATION,
    SV_COL_REQ_TPUT,
    SV_COL_GOODPUT,
    SV_COL_OUT_TPUT,
    SV_COL_ATTAIN,
    SV_COL_ATTAIN_TARGET,
    SV_COL_TTFT_MEAN,
    SV_COL_TTFT_P50,
    SV_COL_TTFT_P90,
    SV_COL_TTFT_P99,
    SV_COL_TPOT_MEAN,
    SV_COL_TPOT_P50,
    SV_COL_TPOT_P90,
    SV_COL_TPOT_P99,
    SV_COL_ITL_MEAN,
    SV_COL_ITL_P99,
    SV_COL_E2EL_MEAN,
    SV_COL_E2EL_P99,
    SV_COL_GPUS,
    SV_COL_COST_HOUR,
    SV_COL_COST_MTOK,
    SV_COL_ENERGY_TOK,
    SV_COL_GOODPUT_GPU,
    SV_COL_KV_P99,
    SV_COL_PREEMPT,
    SV_COL_SLO_TTFT,
    SV_COL_SLO_TPOT,
    SV_COL_BAND_TPUT, /* expected throughput error (+-%) of the weakest-calibrated pool */
    SV_COL_BAND_LAT,  /* ... and of latency (servesim/confidence.h) */
    SV_NCOLS
};
extern const char *const sv_col_names[SV_NCOLS];

typedef struct sv_row {
    long index;
    int ok; /* 0: the point could not run; error says why */
    char vals[SV_MAX_VARY][SV_VALUE_MAX];
    double m[SV_NCOLS];
    char error[256];
    /* Layered contracts (percentile budgets or classes, docs/contracts.md): "-" when the
     * contract holds, else the budget that broke ("ttft p99", "chat: ttft p99"); "" for a
     * plain per-request SLO, whose knee is read from the attainment alone. */
    char broke[64];
} sv_row_t;

struct sv_result;

typedef struct sv_sweep {
    const char *scenario;
    /* Writes one point's result file (points/point-NNNNNN.json); NULL writes none. The
     * caller supplies the report writer, so this layer stays below the report layer. */
    int (*write_point)(const struct sv_result *res, const char *path, sv_error_t *err);
    const char *const *sets; /* base overrides applied to every point */
    int nsets;
    sv_vary_t vary[SV_MAX_VARY];
    int nvary;
    long npoints;
} sv_sweep_t;

/* Count points; SV_ELIMIT past SV_MAX_POINTS, SV_EINVAL when a key is varied twice. */
int sv_sweep_init(sv_sweep_t *sw, sv_error_t *err);

/* Load the scenario of the first point: SV_ENOKEY with "--vary KEY: unknown key ..." when
 * a varied key is not a scenario key (which would fail every point). Other errors are
 * left to the points (a value that does not fit is a result); 0 then. */
int sv_sweep_check_keys(const sv_sweep_t *sw, const sv_catalog_t *cat, sv_error_t *err);

/* The value of vary key k at point index. */
const char *sv_sweep_value(const sv_sweep_t *sw, long index, int k);

/*
 * Run the points of shard `shard` of `nshards` (1-based; 1 of 1 = all) with up to `jobs`
 * processes at once, writing into outdir, and fill rows (npoints entries; rows of other
 * shards are left with ok = -1). A point that fails (a configuration that does not fit,
 * say) gets ok = 0 and its message; the sweep goes on.
 */
int sv_sweep_run(const sv_sweep_t *sw, const sv_catalog_t *cat, const char *outdir, int jobs,
                 int shard, int nshards, sv_row_t *rows, FILE *progress, sv_error_t *err);

/* Write sweep.csv and sweep.json for the rows that ran, and print the table and knees. */
int sv_sweep_write(const char *outdir, char keys[][128], int nkeys, const sv_row_t *rows,
                   long nrows, FILE *table, sv_error_t *err);

/* Join shard directories into outdir: the same files an unsharded sweep writes. */
int sv_sweep_merge(const char *outdir, const char *const *dirs, int ndirs, FILE *table,
                   sv_error_t *err);

/* The knee along the load axis of one curve: index into loads of the highest load before
 * attainment first drops under target (-1: none holds), and of the maximum goodput. */
void sv_knee(const double *attain, const double *goodput, int n, double target, int *knee,
             int *best);

#endif
