/*
 * How far to trust an answer: the calibration status of the GPU and of the engine profile
 * behind a prediction (measured, transferred, datasheet: see sv_calibration_t) and the
 * error band that status earned in `servesim validate`. `run`, `explain`, `sweep` and
 * `plan` print it and write it in their JSON, so a reader sees which numbers stand on
 * measurements and which on a datasheet alone.
 *
 * The bands are compiled in (sv_band_*_pct) and derived from the validation suite by
 * sv_confidence_derive(): per status, the largest MAPE of any validation family whose
 * weaker figure (GPU or engine) has that status, in two groups of metrics: throughput
 * (throughput, tpot, step, e2e) and latency (ttft, prefill), rounded up to a whole
 * percent. Datasheet-only figures have no validation family by definition; their band is
 * a stated round figure (docs/cost-model.md, "Calibration status and error bands"). The
 * confidence_bands test keeps the compiled-in bands at or above what the suite shows.
 *
 * Ownership: sv_confidence_t is a plain value; sv_confidence_json() returns a cJSON tree
 * the caller frees with cJSON_Delete().
 */
#ifndef SERVESIM_CONFIDENCE_H
#define SERVESIM_CONFIDENCE_H

#include <stdio.h>

#include "servesim/cost/catalog.h"
#include "servesim/base/error.h"
#include "servesim/cost/perf.h"
#include "servesim/studies/validate.h"

/* Expected error (percent, +-) of throughput-like and latency-like answers per status. */
extern const double sv_band_throughput_pct[SV_CAL_COUNT];
extern const double sv_band_latency_pct[SV_CAL_COUNT];

typedef struct sv_confidence {
    char gpu[SV_NAME_MAX];
    sv_calibration_t gpu_cal;
    char gpu_note[SV_TEXT_MAX]; /* calibrated_from of the GPU */
    char engine[SV_NAME_MAX];   /* "" when no engine profile was applied */
    sv_calibration_t engine_cal;
    char engine_note[SV_TEXT_MAX]; /* fitted_to of the profile */
    sv_calibration_t status;       /* the weaker of the two */
    double throughput_pct, latency_pct;
} sv_confidence_t;

/* The confidence of a built cost model (GPU and engine profile it was built with). */
void sv_confidence_of(const sv_perf_t *p, sv_confidence_t *out);

/* "measured" -> "measured", ... with the band: "transferred: +-14% throughput, +-27% latency". */
const char *sv_confidence_label(const sv_confidence_t *c, char *buf, size_t n);

/* Two lines: the status of the GPU and of the profile with their notes, then the band. */
void sv_confidence_print(const sv_confidence_t *c, FILE *f);

struct cJSON *sv_confidence_json(const sv_confidence_t *c);

/*
 * Derive the bands from a validation run (sv_validation_run done): per status the largest
 * family MAPE of each group, into thr[] and lat[] (NAN where no family has the status).
 * Prints the derivation to f when not NULL. SV_ENOTFOUND when a row's GPU or profile is
 * not in the catalog.
 */
int sv_confidence_derive(const sv_validation_t *v, const sv_catalog_t *cat,
                         double thr[SV_CAL_COUNT], double lat[SV_CAL_COUNT], FILE *f,
                         sv_error_t *err);

#endif
