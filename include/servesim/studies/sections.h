/*
 * The sections of a scenario file that belong to the studies, not to a run: `plan:` (what
 * `servesim plan` may choose from) and `sweep:` (the default --vary specs of `servesim
 * sweep`). The scenario loader only knows these keys exist; each study reads its own
 * section here, from the same file and the same --set overrides, so a run's scenario
 * (sv_scenario_t) holds nothing a run does not use.
 *
 * Ownership: the readers fill caller-owned structs; nothing to free.
 */
#ifndef SERVESIM_STUDIES_SECTIONS_H
#define SERVESIM_STUDIES_SECTIONS_H

#include "servesim/base/error.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cost/catalog.h"

/* Bounds of the plan's lists and of sweep.vary (longer lists are an error, not a cut). */
#define SV_PLAN_MAX_GPUS 16   /* plan.gpus and plan.price_per_hour_usd entries */
#define SV_PLAN_MAX_CHOICES 8 /* plan.tp, plan.max_num_seqs, plan.prefill_decode entries */
#define SV_PLAN_MAX_LAYOUTS 8 /* plan.layouts entries */
#define SV_PLAN_LAYOUT_KEYS 21 /* keys one layout may set: each of sv_plan_layout_keys for
                                  both phases, the prefill one and the decode one */
#define SV_SWEEP_MAX_VARY 6   /* sweep.vary entries (sweep.h's SV_MAX_VARY) */
#define SV_SWEEP_SPEC_MAX 256 /* bytes of one sweep.vary entry */

/*
 * One entry of plan.layouts: hardware keys (the names in sv_plan_layout_keys, values as the
 * scenario's `hardware` map takes them, checked by sv_perf_settings_set) applied to every
 * pool of a candidate, both phases of a disaggregated unit, or (in its `prefill` and
 * `decode` maps, phase[i] 1 or 2) to one phase's pool only; a layout with either (phased)
 * is tried on disaggregated candidates only. name is its compact label for the
 * configuration's name ("EP8 DPA8", "MTP3", "P EP8 / D EP8 DPA8"; "" for the empty layout).
 */
typedef struct sv_plan_layout {
    char key[SV_PLAN_LAYOUT_KEYS][32];
    char value[SV_PLAN_LAYOUT_KEYS][64];
    unsigned char phase[SV_PLAN_LAYOUT_KEYS]; /* 0: both phases, 1: prefill, 2: decode */
    int nkeys;
    int phased; /* some key is for one phase only */
    char name[48];
} sv_plan_layout_t;

/* The hardware keys a layout may set, NULL-terminated: ep, dp_attention,
 * ep_redundant_experts, ep_kernel, speculative, num_speculative_tokens, spec_acceptance. */
extern const char *const sv_plan_layout_keys[];

/* Applies layout l's settings for phase ph (0: a colocated pool, the keys for both phases
 * only; 1 prefill, 2 decode: those keys, then the phase's own) to s. Returns the number of
 * keys applied, or a negative error code with err set (each key was checked as it was
 * read, so only a combination can fail). */
int sv_plan_layout_apply(const sv_plan_layout_t *l, int ph, sv_perf_settings_t *s,
                         sv_error_t *err);

/* What `servesim plan` may choose from (the scenario's `plan:` map). */
typedef struct sv_plan_cfg {
    int given;
    double target_rate; /* req/s */
    char gpus[SV_PLAN_MAX_GPUS][SV_NAME_MAX];
    int ngpus;
    int tps[SV_PLAN_MAX_CHOICES], ntps;
    long max_num_seqs[SV_PLAN_MAX_CHOICES];
    int nmns;
    int colocated, disaggregated; /* serving modes to try */
    int ratios[SV_PLAN_MAX_CHOICES][2],
        nratios; /* prefill:decode replicas per disaggregated unit */
    int max_gpus;
    long probe_requests; /* requests per capacity probe */
    double tolerance;    /* relative precision of the capacity */
    double peak_factor;  /* size for target_rate x this (a peak over the mean); default 1 */
    int profile_peak;    /* plan.size_for: peak: target_rate is the rate profile's peak */
    char price_gpu[SV_PLAN_MAX_GPUS]
                  [SV_NAME_MAX]; /* plan.price_per_hour_usd: per-GPU price overrides */
    double price[SV_PLAN_MAX_GPUS];
    int nprices;
    /* plan.prefill / plan.decode: each phase's own GPU types and TP degrees, searched as
     * a cross product (split = 1); without them a disaggregated unit runs both phases on
     * the same GPU type and TP (split = 0). A phase not given takes plan.gpus / plan.tp. */
    int split;
    char phase_gpus[2][SV_PLAN_MAX_GPUS][SV_NAME_MAX]; /* [0] prefill, [1] decode */
    int nphase_gpus[2];
    int phase_tps[2][SV_PLAN_MAX_CHOICES], nphase_tps[2];
    /* plan.layouts: the parallel and speculative layouts searched per GPU and TP; without
     * the key one empty layout (the scenario's own settings), layouts_given 0. */
    sv_plan_layout_t layouts[SV_PLAN_MAX_LAYOUTS];
    int nlayouts, layouts_given;
} sv_plan_cfg_t;

/* The `sweep:` map. */
typedef struct sv_sweep_cfg {
    char vary[SV_SWEEP_MAX_VARY][SV_SWEEP_SPEC_MAX]; /* "workload.rate=2:30:2" */
    int nvary;
} sv_sweep_cfg_t;

/* Read the `plan:` map of scenario file `path` with overrides `sets` (as the loader
 * applied them to sc, which must be that file's scenario: size_for: peak takes the peak of
 * its rate profile). cfg->given is 0 when there is none. 0, or a located error. */
int sv_plan_cfg_read(const char *path, const char *const *sets, int nsets, const sv_scenario_t *sc,
                     const sv_catalog_t *cat, sv_plan_cfg_t *cfg, sv_error_t *err);

/* Read the `sweep:` map (nvary 0 when there is none). 0, or a located error. */
int sv_sweep_cfg_read(const char *path, const char *const *sets, int nsets, sv_sweep_cfg_t *cfg,
                      sv_error_t *err);

#endif
