/*
 * Sweeps: one scenario run over a grid of values of any keys (`--vary KEY=SPEC`), each
 * point a full simulation with the same seed (common random numbers), and the knee of
 * the load curve.
 *
 * A SPEC is a list "1,2,4", a linear range "2:20:2" (start:stop:step, inclusive) or a
 * geometric range "1:64:x2". Values may be of any length (YAML flow maps and lists are kept
 * whole). Zipped keys move together instead of forming a product:
 * "pools.0.replicas,pools.1.replicas=1,3;2,2;3,1" is three points (1:3, 2:2, 3:1), a
 * prefill:decode split at a fixed GPU count. Several --vary form their cartesian product.
 *
 * The load axis is a key (`load`, default workload.rate). When it is varied, its group
 * comes first and varies fastest, and every combination of the other keys is a curve whose
 * knee is the highest load before the first point whose SLO attainment (share of requests
 * meeting every SLO) falls below the scenario's `slo.attainment` target; the load of maximum
 * goodput is reported too. When it is not varied, the first --vary group is the x axis and
 * each curve says where along it the SLOs are first met ("SLOs met from
 * kv_link.bandwidth_gb_s=5"). Both warn when the answer sits at an edge of the grid.
 *
 * Outputs in a directory: points/point-NNNNNN.json (vLLM's result JSON of each point),
 * sweep.csv (one row per point, numbers written to round-trip exactly) and sweep.json
 * (the rows, knees and maxima). Points can run in parallel processes (jobs) and be split
 * into shards (every N-th point) whose directories sv_sweep_merge() joins into exactly the
 * files the unsharded sweep writes.
 *
 * Ownership: an sv_vary_t owns its value strings (sv_vary_free; sv_sweep_free frees every
 * vary of a sweep). Rows are caller storage; their vals point into the sweep's vary lists
 * (rows of sv_sweep_run) or into strings the caller owns. sv_curves_t owns its arrays
 * (sv_curves_free).
 */
#ifndef SERVESIM_SWEEP_H
#define SERVESIM_SWEEP_H

#include <stdio.h>

#include "servesim/cost/catalog.h"
#include "servesim/base/error.h"

#define SV_MAX_VARY 6
#define SV_MAX_VALUES 512
#define SV_MAX_POINTS 100000
#define SV_DEFAULT_LOAD "workload.rate"

typedef struct sv_vary {
    char key[128];
    int n;
    int zip;                   /* 1: moves with the previous key (same n, same position) */
    char *vals[SV_MAX_VALUES]; /* owned */
    /* owned; NULL: the value is its own label. A value given as NAME=VALUE (NAME a word of
     * letters, digits, '_' or '-', starting with a letter or '_') is set as VALUE and shown
     * as NAME in tables, legends, sweep.csv and sweep.json; in zipped keys a tuple's first
     * value names the whole tuple. */
    char *labels[SV_MAX_VALUES];
} sv_vary_t;

/* One key: "workload.rate=1,2,4" / "workload.rate=2:20:2" / "hardware.replicas=1:64:x2". */
int sv_vary_parse(const char *arg, sv_vary_t *v, sv_error_t *err);

/* One --vary argument, a single key or zipped keys "K1,K2=a1,b1;a2,b2" (lists only, every
 * tuple as many values as keys), into v[0..*nkeys-1] (room entries); v[j].zip = 1 for
 * j > 0. On error nothing is left allocated. */
int sv_vary_parse_all(const char *arg, sv_vary_t *v, int room, int *nkeys, sv_error_t *err);
void sv_vary_free(sv_vary_t *v);

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
    int ok;                        /* 0: the point could not run; error says why */
    const char *vals[SV_MAX_VARY]; /* not owned: see Ownership above */
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
    const char *load; /* the load axis key; NULL: SV_DEFAULT_LOAD */
    sv_vary_t vary[SV_MAX_VARY];
    int nvary;
    long npoints;
} sv_sweep_t;

/* Move the load key's group first and count points; SV_ELIMIT past SV_MAX_POINTS, SV_EINVAL
 * when a key is varied twice or an explicit `load` is not varied. */
int sv_sweep_init(sv_sweep_t *sw, sv_error_t *err);
void sv_sweep_free(sv_sweep_t *sw);

/* Load the scenario of the first point: SV_ENOKEY with "--vary KEY: unknown key ..." when
 * a varied key is not a scenario key (which would fail every point). Other errors are
 * left to the points (a value that does not fit is a result); 0 then. */
int sv_sweep_check_keys(const sv_sweep_t *sw, const sv_catalog_t *cat, sv_error_t *err);

/* The value of vary key k at point index. */
const char *sv_sweep_value(const sv_sweep_t *sw, long index, int k);
/* Its label (the value itself when it has none): what rows show (sv_row_t.vals). */
const char *sv_sweep_label(const sv_sweep_t *sw, long index, int k);

/*
 * Run the points of shard `shard` of `nshards` (1-based; 1 of 1 = all) with up to `jobs`
 * processes at once, writing into outdir, and fill rows (npoints entries; rows of other
 * shards are left with ok = -1). A point that fails (a configuration that does not fit,
 * say) gets ok = 0 and its message; the sweep goes on.
 */
int sv_sweep_run(const sv_sweep_t *sw, const sv_catalog_t *cat, const char *outdir, int jobs,
                 int shard, int nshards, sv_row_t *rows, FILE *progress, sv_error_t *err);

/* sv_sweep_run spread over the ranks of an MPI job when built with SERVESIM_MPI and run
 * under mpirun (each rank a shard; rank 0 gathers every row); otherwise sv_sweep_run.
 * *is_root is 0 on the ranks that must not write the sweep's files. */
int sv_sweep_run_ranks(const sv_sweep_t *sw, const sv_catalog_t *cat, const char *outdir, int jobs,
                       int shard, int nshards, sv_row_t *rows, FILE *progress, int *is_root,
                       sv_error_t *err);

/* The configuration block (`servesim.config`: model, GPUs, engine, SLOs, seed, ...) of
 * the first point that ran, read from its points/point-NNNNNN.json in outdir, as JSON text
 * the caller frees; NULL when there is none. The swept keys hold that point's values. */
char *sv_sweep_config_json(const char *outdir, const sv_row_t *rows, long nrows);

/* Write sweep.csv and sweep.json (with the configuration block above as "config") for the
 * rows that ran, and print the table and the
 * summary of each curve. load: the load key (NULL: SV_DEFAULT_LOAD). */
int sv_sweep_write(const char *outdir, char keys[][128], int nkeys, const sv_row_t *rows,
                   long nrows, const char *load, FILE *table, sv_error_t *err);

/* Join shard directories into outdir: the same files an unsharded sweep writes. */
int sv_sweep_merge(const char *outdir, const char *const *dirs, int ndirs, const char *load,
                   FILE *table, sv_error_t *err);

/* The curves of a sweep's rows: the leading keys that move in lockstep with the first (the
 * x group: the first key and any zipped with it) are the x axis; rows with the same values
 * of the other keys form a curve, its members in row order. */
typedef struct sv_curve {
    long first;    /* index into rows of its first point */
    int n;         /* points on the curve */
    long *members; /* indexes into rows, along the x axis */
    int knee;      /* load axis: member index of the knee; -1 none */
    int best;      /* member index of the maximum goodput; -1 none */
    int met;       /* other axes: member index where the SLOs are first met; -1 never */
    int met_after; /* ... and every later point meets them too */
    int edge;      /* the knee or the first-met point sits at an edge of the grid */
} sv_curve_t;

typedef struct sv_curves {
    sv_curve_t *c;
    int n;
    int nx;      /* keys on the x axis (1 unless zipped) */
    int is_load; /* keys[0] is the load key: knees; else "SLOs met from" */
    int slo;     /* the scenario has SLOs (attainment is a number) */
    long *mem;
} sv_curves_t;

int sv_sweep_curves(char keys[][128], int nkeys, const sv_row_t *rows, long nrows, const char *load,
                    sv_curves_t *out, sv_error_t *err);
void sv_curves_free(sv_curves_t *cv);

/* The lines that sum up curve c (knee or first-met point, max goodput, edge warnings),
 * each ending in a newline, into buf (truncated to n). */
void sv_curve_summary(const sv_curves_t *cv, int c, char keys[][128], int nkeys,
                      const sv_row_t *rows, char *buf, size_t n);

/* A number in a table: three significant digits (more for 100 and up, whole), no exponent
 * from 1e-4 to 1e9 (56.843418860808015 -> "56.8", 1234.6 -> "1235", 0.66 -> "0.660",
 * 0.012345 -> "0.0123"); "-" for NaN. */
const char *sv_fmt_num(double v, char buf[32]);

/* The knee along the load axis of one curve: index into loads of the highest load before
 * attainment first drops under target (-1: none holds), and of the maximum goodput. */
void sv_knee(const double *attain, const double *goodput, int n, double target, int *knee,
             int *best);

#endif
