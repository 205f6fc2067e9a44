/*
 * Internal: what the lab's files share (sim/lab/lab.c serves, sim/lab/lessons.c holds the
 * lesson tabs): running one allow-listed lab scenario with overrides under the request
 * budget, and the page embedded at build time.
 */
#ifndef SERVESIM_LAB_INT_H
#define SERVESIM_LAB_INT_H

#include <cJSON.h>

#include "servesim/cluster/sim.h"
#include "servesim/lab/lab.h"

#define SV_LAB_MAX_SETS 16

/* One lab request in progress: what it may still simulate, and the runs it reports. */
typedef struct sv__lab_req {
    const sv_lab_t *lab;
    long budget; /* simulated requests left */
    long simulated;
    cJSON *runs; /* the runs shown as "copy as scenario": {scenario, sets, command, yaml} */
} sv__lab_req_t;

/* One finished run; free with sv__lab_run_free(). json is text parsed (both owned). */
typedef struct sv__lab_run {
    sv_scenario_t *sc;
    sv_result_t *res;
    char *text; /* the JSON as `servesim run --json` writes it */
    cJSON *json;
} sv__lab_run_t;

/* A number for an answer, written as the run JSON writes numbers (the shortest text that
 * reads back to the same double; cJSON's own printing rounds to 15 digits); NAN is null. */
cJSON *sv__lab_number(double v);

/* Run scenario `name` (an allow-listed lab scenario) with sets; `show` adds it to
 * req->runs. 0, or an error (its message in err) that the answer turns into a 400. */
int sv__lab_run(sv__lab_req_t *req, const char *name, const char *const *sets, int nsets, int show,
                sv__lab_run_t *out, sv_error_t *err);
void sv__lab_run_free(sv__lab_run_t *r);

/* Several runs at once (each in its own thread, at most SV_LAB_MAX_THREADS together):
 * out[i] for specs[i]; on an error every out[i] is freed. */
#define SV_LAB_MAX_THREADS 8
typedef struct sv__lab_spec {
    const char *name;
    const char *const *sets;
    int nsets;
    int show;
} sv__lab_spec_t;
int sv__lab_run_many(sv__lab_req_t *req, int n, const sv__lab_spec_t *specs, sv__lab_run_t *out,
                     sv_error_t *err);

/* A number of the run's JSON by dotted path ("mean_ttft_ms", "servesim.cost_usd"); NAN
 * when absent or not a number (keys may come and go: readers stay defensive). */
double sv__lab_num(const sv__lab_run_t *r, const char *path);

/* Answer /api/lesson: fills resp or returns an error (400) with its message. */
int sv__lab_lesson(sv__lab_req_t *req, const sv_lab_arg_t *args, int nargs, cJSON *resp,
                   sv_error_t *err);

/* The page (sim/lab/lab.html, embedded by CMake). */
extern const unsigned char sv__lab_html[];
extern const size_t sv__lab_html_len;

#endif
