/*
 * How far to trust an answer: the calibration status of the GPU and of the engine profile
 * behind a prediction (measured, transferred, datasheet: see sv_calibration_t) and the
 * error band that status earned in `servesim validate`. `run`, `explain`, `sweep` and
 * `plan` print it and write it in their JSON, so a reader sees which numbers stand on
 * measurements and which on a datasheet alone.
 *
 * The bands are compiled in (sv_band_*_pct) and come from evidence: the leave-one-family-out
 * residuals of the validation suite (sv_confidence_lofo: each family rerun on a catalog whose
 * fitted values were refitted without it, so every residual is one of data the model never
 * saw). Per status and group of metrics, throughput-like (throughput, tpot, step, e2e) and
 * latency-like (ttft, prefill), the band is the smallest whole percent holding
 * sv_band_coverage_pct (80%) of the absolute residuals, each family weighing the same
 * (sv_confidence_derive). Datasheet-only figures have no validation family by definition;
 * their band is a stated round figure, not a measurement (docs/cost-model.md). The
 * validate_bands test reruns the leave-one-out and fails when a compiled-in band's
 * coverage of the left-out families is more than 10 points from the nominal 80%.
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

/* Expected error (percent, +-) of throughput-like and latency-like answers per status, and
 * the share of left-out validation points those bands hold (percent). */
extern const double sv_band_throughput_pct[SV_CAL_COUNT];
extern const double sv_band_latency_pct[SV_CAL_COUNT];
extern const double sv_band_coverage_pct;

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

/* "measured" -> "measured", ... with the band and its coverage:
 * "transferred: +-14% throughput, +-27% latency (80% coverage)". */
const char *sv_confidence_label(const sv_confidence_t *c, char *buf, size_t n);

/* The band and its coverage with the status of the GPU and of the profile, then the GPU's
 * note on a second line. */
void sv_confidence_print(const sv_confidence_t *c, FILE *f);

struct cJSON *sv_confidence_json(const sv_confidence_t *c);

/*
 * Leave-one-family-out (v run with sv_validation_run): for each family of v, rerun its rows
 * on a copy of the catalog whose fitted values (the table FITS in confidence.c: which
 * catalog values were fitted to which families) were refitted without it, or set back to
 * what they were before the fit when no other family took part. lofo[r] gets row r's
 * simulated value (NAN where v's is); a family no fit used keeps v's value. v is not
 * changed. SV_EINVAL when a family has fitted rows that no fit names.
 */
int sv_confidence_lofo(const sv_validation_t *v, const sv_catalog_t *cat, double *lofo,
                       sv_error_t *err);

/* The two groups of metrics a band covers. */
enum { SV_BAND_THROUGHPUT = 0, SV_BAND_LATENCY, SV_BAND_GROUPS };

/* What the leave-one-out residuals say of each status's band (NAN where no family). */
typedef struct sv_band_evidence {
    int families[SV_CAL_COUNT][SV_BAND_GROUPS];
    long points[SV_CAL_COUNT][SV_BAND_GROUPS];
    double derived_pct[SV_CAL_COUNT][SV_BAND_GROUPS];  /* the band the residuals give */
    double coverage_pct[SV_CAL_COUNT][SV_BAND_GROUPS]; /* of the compiled-in band, families
                                                          weighing the same */
    double row_coverage_pct[SV_CAL_COUNT][SV_BAND_GROUPS]; /* the same, points pooled */
    double cv_coverage_pct[SV_CAL_COUNT][SV_BAND_GROUPS];  /* each family against the band
                                                              the other families give */
} sv_band_evidence_t;

/*
 * The bands from the leave-one-out residuals (lofo from sv_confidence_lofo): per family its
 * status and in-sample and left-out MAPE, then per status and group the derived band and
 * the coverage of the compiled-in one, printed to f when not NULL. SV_ENOTFOUND when a
 * row's GPU or profile is not in the catalog.
 */
int sv_confidence_derive(const sv_validation_t *v, const double *lofo, const sv_catalog_t *cat,
                         sv_band_evidence_t *out, FILE *f, sv_error_t *err);

/* The number of bands with evidence whose coverage (families weighing the same) is more
 * than tolerance points from sv_band_coverage_pct; one line per band to f when not NULL. */
int sv_confidence_check(const sv_band_evidence_t *ev, double tolerance, FILE *f);

/* The tables docs/validation.md carries (`servesim validate --markdown`): MAPE per family
 * and kind in sample and left out, side by side, then the derivation of the bands. */
int sv_confidence_markdown(const sv_validation_t *v, const double *lofo, const sv_catalog_t *cat,
                           FILE *f, sv_error_t *err);

#endif
