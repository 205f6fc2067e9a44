/*
 * How far to trust an answer: the calibration status of the GPU and of the engine profile
 * behind a prediction (measured, transferred, datasheet: see sv_calibration_t) and the
 * error band that status earned in `servesim validate`. `run`, `explain`, `sweep` and
 * `plan` print it and write it in their JSON, so a reader sees which numbers stand on
 * measurements and which on a datasheet alone.
 *
 * The bands are compiled in (sv_band_cells) and come from evidence: the leave-one-family-out
 * residuals of the validation suite (sv_confidence_lofo: each family rerun on a catalog whose
 * fitted values were refitted without it, so every residual is one of data the model never
 * saw). Per status and group of metrics, throughput-like (throughput, tpot, step, e2e) and
 * latency-like (ttft, prefill), and per model class (dense; MoE/MLA, whose only evidence is
 * DeepSeek-R1 on InferenceX), the band is the smallest whole percent holding
 * sv_band_coverage_pct (80%) of the absolute residuals, each family weighing the same
 * (sv_confidence_derive). Datasheet-only figures have no validation family by definition;
 * their band is a stated round figure, not a measurement (docs/cost-model.md). The
 * validate_bands tests rerun the leave-one-out of both tables and fail when a compiled-in
 * band's coverage of the left-out families is more than 10 points from the nominal 80%, or
 * when it is more than 2 points from the band the residuals give (tools/band-table
 * regenerates the cells).
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

/* The share of left-out validation points a band holds (percent). */
extern const double sv_band_coverage_pct;

/* The two groups of metrics a band covers. */
enum { SV_BAND_THROUGHPUT = 0, SV_BAND_LATENCY, SV_BAND_GROUPS };

/* The model classes a band is derived for: dense models (the validation suite,
 * measurements.csv) and models with MoE layers or MLA (DeepSeek-R1 on InferenceX,
 * inferencex.csv); the evidence of one does not cover the other. */
enum { SV_BAND_DENSE = 0, SV_BAND_MOE_MLA, SV_BAND_CLASSES };

/* "dense", "moe-mla". */
const char *sv_band_class_name(int cls);

/* SV_BAND_MOE_MLA for a model with routed experts or MLA, else SV_BAND_DENSE. */
int sv_band_class_of(const sv_model_t *m);

/* The band datasheet-only figures get (assumed, no family by definition); no narrower than
 * the class's widest derived band of the group. */
#define SV_BAND_ASSUMED_PCT 50.0

/*
 * One derived band: the smallest whole percent holding sv_band_coverage_pct of the left-out
 * residuals of `families` families (`points` points) of class cls and status st, from the
 * table `evidence` (its file name). The compiled-in cells (sim/studies/bands.c) are written
 * by tools/band-table from `servesim validate --band-table`.
 */
typedef struct sv_band_cell {
    int cls, status, group;
    double pct;
    int families;
    long points;
    const char *evidence;
} sv_band_cell_t;

extern const sv_band_cell_t sv_band_cells[];
extern const int sv_band_ncells;

/*
 * The band printed for class cls, status st and group g (+-%): the derived cell; without one,
 * a measured answer takes the transferred cell of its class, and a datasheet answer (or one
 * with no cell of its class) SV_BAND_ASSUMED_PCT widened to the class's widest derived band.
 * *from (may be NULL) gets the cell the band was taken from, NULL when assumed.
 */
double sv_band_pct(int cls, int st, int g, const sv_band_cell_t **from);

typedef struct sv_confidence {
    char gpu[SV_NAME_MAX];
    sv_calibration_t gpu_cal;
    char gpu_note[SV_TEXT_MAX]; /* calibrated_from of the GPU */
    char engine[SV_NAME_MAX];   /* "" when no engine profile was applied */
    sv_calibration_t engine_cal;
    char engine_note[SV_TEXT_MAX]; /* fitted_to of the profile */
    sv_calibration_t status;       /* the weaker of the two */
    int band_class;                /* SV_BAND_DENSE or SV_BAND_MOE_MLA: the model's */
    double throughput_pct, latency_pct;
    char evidence[128]; /* what the bands come from: "assumed", or
                                   "inferencex.csv: 10 transferred families left out" */
} sv_confidence_t;

/* The confidence of a built cost model (GPU and engine profile it was built with). */
void sv_confidence_of(const sv_perf_t *p, sv_confidence_t *out);

/* The band's line: "transferred: +-7% throughput, +-25% latency (80% coverage)" for a dense
 * model; for a MoE/MLA one the class and the evidence too: "transferred, moe-mla: +-27%
 * throughput, +-68% latency (80% coverage; inferencex.csv: 10 transferred families left
 * out)". */
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

/* What the leave-one-out residuals say of each class's and status's band (NAN where no
 * family). */
#define SV_BAND_DIMS [SV_BAND_CLASSES][SV_CAL_COUNT][SV_BAND_GROUPS]
typedef struct sv_band_evidence {
    int families SV_BAND_DIMS;
    long points SV_BAND_DIMS;
    double derived_pct SV_BAND_DIMS;      /* the band the residuals give */
    double coverage_pct SV_BAND_DIMS;     /* of the compiled-in band, families weighing the
                                             same */
    double row_coverage_pct SV_BAND_DIMS; /* the same, points pooled */
    double cv_coverage_pct SV_BAND_DIMS;  /* each family against the band the other families
                                             give */
} sv_band_evidence_t;

/*
 * The smallest whole percent (1..1000) that holds coverage_pct of the absolute percentage
 * errors ape[i][0..n[i]) of nfam families, each family weighing the same (the mean over
 * families of the share within the band); NAN when no family has a point. E.g. one family
 * erring 1..10% at 80%: 8; families {1,2,3,4,5} and {10,20} at 80%: 20 (at 10 the shares
 * are 1 and 1/2).
 */
double sv_band_from_residuals(const double *const *ape, const long *n, int nfam,
                              double coverage_pct);

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

/* The number of bands with evidence whose printed value (sv_band_pct) is more than tolerance
 * points from the one the residuals give; one line per band to f when not NULL. */
int sv_confidence_check_derived(const sv_band_evidence_t *ev, double tolerance, FILE *f);

/* The cells of sim/studies/bands.c the residuals give (`servesim validate --band-table`):
 * one C initializer line per class, status and group with a family, naming evidence (the
 * table's file name). */
void sv_confidence_band_table(const sv_band_evidence_t *ev, const char *evidence, FILE *f);

/* The tables docs/validation.md carries (`servesim validate --markdown`): MAPE per family
 * and kind in sample and left out, side by side, then the derivation of the bands. */
int sv_confidence_markdown(const sv_validation_t *v, const double *lofo, const sv_catalog_t *cat,
                           FILE *f, sv_error_t *err);

#endif
