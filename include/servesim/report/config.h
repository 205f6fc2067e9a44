/*
 * What was run, as data: the configuration block every report of a run starts with (the
 * model, the pools with their GPU, parallelism, dtypes, engine profile and scheduler
 * settings, the KV link, the workload, the SLOs, the seed and servesim's version). One
 * function builds it as rows (a section, a key, a value); three writers render the same
 * rows: the HTML run report's table, the JSON's "servesim.config" object (sections become
 * nested objects: "pools.prefill" -> {"pools": {"prefill": {...}}}) and the terminal block
 * `servesim run --verbose` prints.
 *
 * Ownership: sv_run_config() fills caller storage with rows it allocates, released by
 * sv_run_config_free() (NULL-safe on a zeroed struct).
 */
#ifndef SERVESIM_REPORT_CONFIG_H
#define SERVESIM_REPORT_CONFIG_H

#include <stdio.h>

#include "servesim/base/error.h"
#include "servesim/cluster/sim.h"

typedef enum { SV_CFGV_TEXT = 0, SV_CFGV_NUM, SV_CFGV_INT, SV_CFGV_BOOL } sv_cfgv_kind_t;

typedef struct sv_cfg_row {
    char section[80]; /* dotted path under servesim.config ("" = top level), e.g. "pools.decode" */
    char key[48];     /* the JSON key */
    char label[64];   /* what people read */
    char text[256];   /* the value as people read it, with its unit */
    sv_cfgv_kind_t kind;
    double num; /* NUM, INT and BOOL: the value written to the JSON */
} sv_cfg_row_t;

typedef struct sv_run_config {
    sv_cfg_row_t *rows;
    int n;
    size_t cap;
} sv_run_config_t;

/* The rows of res's run, sections in a fixed order (run, model, serving, pools.NAME...,
 * kv_link, workload, slo, metrics). 0 or SV_ENOMEM. */
int sv_run_config(const sv_result_t *res, sv_run_config_t *out, sv_error_t *err);
void sv_run_config_free(sv_run_config_t *c);

/* The terminal block: "==== servesim: configuration ====", then each section's rows. */
void sv_run_config_print(const sv_run_config_t *c, FILE *f);

#endif
