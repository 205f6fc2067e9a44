/*
 * libFuzzer target: a scenario YAML through the loader and, when it loads, a short
 * simulation. The run is bounded inside the target (at most 50 requests, 600 simulated
 * seconds) so that a large but valid scenario is not mistaken for a hang.
 */
#include <math.h>

#include "fuzz_common.h"
#include "servesim/cost/catalog.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const sv_catalog_t *cat = fz_catalog("fuzz_scenario");
    sv_error_t err;
    const char *path = fz_write("scenario.yaml", data, size);
    sv_scenario_t *sc = NULL;
    if (sv_scenario_load(path, NULL, 0, cat, &sc, &err) == 0) {
        sv_workload_cfg_t *w = &sc->workload;
        if (w->num_requests == 0 || w->num_requests > 50) w->num_requests = 50;
        w->duration = 0;
        if (sc->horizon <= 0 || sc->horizon > 600) sc->horizon = 600;
        sv_result_t *res = NULL;
        if (sv_sim_run(sc, &res, &err) == 0) sv_result_free(res);
        sv_scenario_free(sc);
    }
    return 0;
}
