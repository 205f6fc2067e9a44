/*
 * `servesim validate`: run the simulator under the conditions of every measurement in a
 * table of real runs (tests/data/validation/measurements.csv: published benchmarks and
 * profiled iteration times, each row naming its source) and report, per family of rows,
 * measured against simulated, the signed error, and the mean absolute percentage error
 * (MAPE) per kind of metric. Rows of kind prefill, step and e2e are one batch costed by
 * the cost model alone; throughput, ttft and tpot rows are simulated runs. A simulated row
 * may name a disaggregated deployment in its optional `layout` column (a prefill and a
 * decode pool of workers, each with its own tp, ep and attention data parallelism; the
 * KV over InfiniBand): the row then runs on those pools, and its per-GPU throughput is
 * divided by every GPU of both (docs/validation.md, "Disaggregated rows").
 *
 * Ownership: sv_validation_load() returns a table freed with sv_validation_free()
 * (NULL-safe). It holds copies of every string; the catalog passed to run is only read.
 */
#ifndef SERVESIM_VALIDATE_H
#define SERVESIM_VALIDATE_H

#include <stdio.h>

#include "servesim/cluster/scenario.h"
#include "servesim/cost/catalog.h"
#include "servesim/base/error.h"

enum {
    SV_VK_THROUGHPUT = 0,
    SV_VK_TTFT,
    SV_VK_TPOT,
    SV_VK_PREFILL,
    SV_VK_STEP,
    SV_VK_E2E,
    SV_VK_COUNT
};
const char *sv_vkind_name(int kind);

/* One pool of a disaggregated row's layout: `workers` workers of `tp` GPUs each. */
typedef struct sv_vpool {
    int decode; /* 0: the prefill pool, 1: the decode pool */
    int workers, tp, ep, dp_attention;
} sv_vpool_t;

typedef struct sv_vrow {
    char family[SV_NAME_MAX];
    int kind; /* SV_VK_* */
    char model[SV_NAME_MAX], gpu[SV_NAME_MAX], profile[SV_NAME_MAX];
    char weight_dtype[16], kv_dtype[16], unit[16];
    int tp; /* 0 for a row with a layout: its pools give theirs */
    int npools; /* 0: one aggregated replica of tp GPUs; 2: pools[0] prefill, [1] decode */
    sv_vpool_t pools[2];
    long input, output, batch, concurrency, requests;
    double measured, simulated; /* simulated is NAN until run */
    int fitted;                 /* the row was used to fit a parameter */
    char sets[1024];            /* extra scenario settings, "key=value;key=value" */
    char source[384];
    long line; /* in the table file */
} sv_vrow_t;

typedef struct sv_validation {
    char path[512];
    sv_vrow_t *rows;
    long nrows;
} sv_validation_t;

/* The table of the source tree (tests/data/validation/measurements.csv), compiled in. */
const char *sv_validation_default_path(void);

/* The GPUs a row's run used: tp, or every worker of its layout's pools. */
long sv_vrow_gpus(const sv_vrow_t *w);

/*
 * Parse a layout, e.g. "prefill workers=1 tp=8 ep=8 dp_attention=8 + decode workers=9 tp=8":
 * a prefill then a decode pool joined by '+', each its role, then key=value words (workers
 * and tp required, ep and dp_attention default 1). Fills w->pools and w->npools; an error
 * (SV_EINVAL) names the key. An empty text is no layout (npools 0).
 */
int sv_vrow_layout(sv_vrow_t *w, const char *text, sv_error_t *err);

/* Read the table. Errors name file:line and column. */
int sv_validation_load(const char *path, sv_validation_t **out, sv_error_t *err);
void sv_validation_free(sv_validation_t *v);

/* Simulate every row (or only those whose family starts with prefix, when not NULL).
 * A row the catalog cannot build fails the whole run with its line named. */
int sv_validation_run(sv_validation_t *v, const sv_catalog_t *cat, const char *prefix,
                      sv_error_t *err);

/* The scenario a simulated row runs (its layout's pools, its sets applied), for the caller
 * to free with sv_scenario_free(). */
int sv_validation_scenario(const sv_vrow_t *w, const sv_catalog_t *cat, sv_scenario_t **out,
                           sv_error_t *err);

/* MAPE (percent) of one family's rows of one kind; NAN when it has none. */
double sv_validation_mape(const sv_validation_t *v, const char *family, int kind);

/* The same of other simulated values: sim[r] for row r (NULL: the rows' own). */
double sv_validation_mape_of(const sv_validation_t *v, const double *sim, const char *family,
                             int kind);

/* The per-row table, then MAPE per family and kind. */
void sv_validation_print(const sv_validation_t *v, FILE *f);

/* MAPE per family and kind, then of all rows, of sim (NULL: the rows' own values), under a
 * title line. Families without a simulated row are left out. */
void sv_validation_print_mape(const sv_validation_t *v, const double *sim, const char *title,
                              FILE *f);

/*
 * Compare MAPEs with the bounds in a CSV of family,kind,max_mape_pct. Prints one line per
 * bound and returns the number exceeded (0 when all hold), or a negative SV_E* code.
 */
int sv_validation_check(const sv_validation_t *v, const char *bounds_path, FILE *f,
                        sv_error_t *err);

#endif
