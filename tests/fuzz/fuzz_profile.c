/*
 * libFuzzer target: a rate profile (the value of `workload.rate_profile`: a table of
 * [time_s, req/s] points or a diurnal sinusoid, with spikes) inside a fixed scenario,
 * through the loader and, when it loads, the arrival generator for up to 200 arrivals.
 * The input is the YAML text after "rate_profile: " (a flow map, or a block map on the
 * lines below, indented four spaces).
 */
#include "fuzz_common.h"
#include "servesim/cost/catalog.h"
#include "servesim/cluster/scenario.h"
#include "servesim/traffic/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const sv_catalog_t *cat = fz_catalog("fuzz_profile");
    sv_error_t err;
    static const char head[] = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                               "workload:\n  num_requests: 200\n  rate_profile: ";
    if (size > 65536) return 0;
    uint8_t *buf = malloc(sizeof head - 1 + size + 1);
    if (!buf) abort();
    memcpy(buf, head, sizeof head - 1);
    memcpy(buf + sizeof head - 1, data, size);
    buf[sizeof head - 1 + size] = '\n';
    const char *path = fz_write("scenario.yaml", buf, sizeof head - 1 + size + 1);
    free(buf);
    sv_scenario_t *sc = NULL;
    if (sv_scenario_load(path, NULL, 0, cat, &sc, &err)) return 0;
    sv_workload_t *w = NULL;
    if (sv_workload_new(&sc->workload, NULL, 1, &w, &err) == 0) {
        double t;
        int32_t in, out;
        for (int i = 0; i < 200 && sv_workload_next(w, &t, &in, &out) == 1; i++)
            ;
        sv_workload_free(w);
    }
    sv_scenario_free(sc);
    return 0;
}
