/*
 * Scenario files: everything one simulated run needs, read from YAML with strict
 * validation (unknown keys, wrong types and out-of-range values are errors naming
 * file:line:column and the dotted key), with `--set dotted.key=value` overrides applied
 * to the tree before it is read. docs/scenarios.md lists every key, its unit and default.
 *
 * Ownership: sv_scenario_load() returns a scenario freed with sv_scenario_free()
 * (NULL-safe); it owns its trace and empirical samples. It copies what it needs from the
 * catalog, which may be freed afterwards.
 */
#ifndef SERVESIM_SCENARIO_H
#define SERVESIM_SCENARIO_H

#include <stdint.h>

#include "servesim/catalog.h"
#include "servesim/error.h"
#include "servesim/metrics.h"
#include "servesim/perf.h"
#include "servesim/replica.h"
#include "servesim/workload.h"

typedef struct sv_scenario {
    char name[SV_NAME_MAX];
    char path[1024];
    uint64_t seed;
    sv_model_t model;
    sv_gpu_t gpu;
    sv_perf_settings_t perf;
    int replicas;
    char router[32];
    sv_engine_cfg_t engine;
    sv_workload_cfg_t workload;
    sv_trace_t *trace;
    long *emp_input, *emp_output;
    sv_metrics_cfg_t metrics;
    double horizon; /* s; 0 = run until every request has ended */
} sv_scenario_t;

/* Routing policies the simulator knows (NULL-terminated). */
extern const char *const sv_router_names[];

int sv_scenario_load(const char *path, const char *const *sets, int nsets,
                     const sv_catalog_t *cat, sv_scenario_t **out, sv_error_t *err);
void sv_scenario_free(sv_scenario_t *sc);

#endif
