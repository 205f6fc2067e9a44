/*
 * Replaying a result's requests as a trace (see include/servesim/studies/replay.h).
 */
#include "servesim/studies/replay.h"

#include "servesim/traffic/identity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct item {
    double t;
    size_t i; /* position in the file: ties keep it */
} item_t;

static int cmp_item(const void *a, const void *b)
{
    const item_t *x = a, *y = b;
    if (x->t != y->t) return (x->t > y->t) - (x->t < y->t);
    return (x->i > y->i) - (x->i < y->i);
}

static int whole(const sv_bench_t *b, const char *key, size_t i, double v, long lo, sv_error_t *err)
{
    if (!(v >= (double)lo) || v != floor(v) || v > 2147483647.0)
        return sv_errorf(err, SV_EINVAL,
                         "%s: key '%s'[%zu]: expected a whole number >= %ld, got %g", b->path, key,
                         i, lo, v);
    return 0;
}

int sv_replay_trace(const sv_bench_t *b, sv_trace_t **out, long *skipped, sv_error_t *err)
{
    *out = NULL;
    *skipped = 0;
    if (b->format != SV_BENCH_VLLM)
        return sv_errorf(err, SV_EINVAL,
                         "%s: a %s holds no per-request data; replay needs vLLM's result JSON "
                         "with input_lens, output_lens and start_times",
                         b->path, sv_bench_format_name(b->format));
    const char *missing = !b->input_lens    ? "input_lens"
                          : !b->output_lens ? "output_lens"
                          : !b->start_times ? "start_times"
                                            : NULL;
    if (missing)
        return sv_errorf(err, SV_EINVAL,
                         "%s: no key '%s': replay needs per-request data (vllm bench serve "
                         "--save-result --save-detailed, or servesim --json FILE --detailed)",
                         b->path, missing);
    item_t *it = malloc((b->n ? b->n : 1) * sizeof *it);
    if (!it) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", b->path);
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < b->n && !rc; i++) {
        /* failed: a non-empty error, or without `errors` no output (as compare counts) */
        int failed = b->failed ? b->failed[i] : b->output_lens[i] == 0;
        if (!isfinite(b->start_times[i]) || b->start_times[i] < 0)
            rc = sv_errorf(err, SV_EINVAL,
                           "%s: key 'start_times'[%zu]: expected seconds >= 0, got %g", b->path, i,
                           b->start_times[i]);
        else if (!(rc = whole(b, "input_lens", i, b->input_lens[i], 1, err)) && !failed)
            rc = whole(b, "output_lens", i, b->output_lens[i], 1, err);
        if (rc) break;
        if (failed) {
            (*skipped)++;
            continue;
        }
        it[n++] = (item_t){b->start_times[i], i};
    }
    if (!rc && n == 0)
        rc = sv_errorf(err, SV_EINVAL, "%s: no successful request to replay (%ld failed)", b->path,
                       *skipped);
    sv_trace_t *t = rc ? NULL : calloc(1, sizeof *t);
    if (!rc && t) {
        t->time = malloc(n * sizeof *t->time);
        t->input = malloc(n * sizeof *t->input);
        t->output = malloc(n * sizeof *t->output);
    }
    if (!rc && (!t || !t->time || !t->input || !t->output))
        rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", b->path);
    if (rc) {
        free(it);
        sv_trace_free(t);
        return rc;
    }
    qsort(it, n, sizeof *it, cmp_item);
    /* A relative clock starts near the first send; an absolute one (epoch or
     * perf_counter) reads far more than the whole run lasted. servesim's own clock is
     * relative whatever the first gap, and kept as is so a replay repeats the run. */
    double t0 = it[0].t;
    int own = strcmp(b->backend, "servesim") == 0;
    double base = !own && isfinite(b->duration) && t0 > b->duration ? t0 : 0.0;
    if (base > 0 && b->latencies) {
        /* The benchmark's own start is not in the file, but its duration runs from that
         * start to the last completion: recover it, so the wait before the first send (one
         * arrival gap in vLLM >= 0.8) counts as it did in the real run. */
        double last = -INFINITY;
        for (size_t i = 0; i < b->n; i++)
            if (b->start_times[i] + b->latencies[i] > last)
                last = b->start_times[i] + b->latencies[i];
        double origin = last - b->duration;
        if (origin < t0 && origin > t0 - b->duration) base = origin;
    }
    for (size_t k = 0; k < n; k++) {
        t->time[k] = it[k].t - base;
        t->input[k] = (int32_t)b->input_lens[it[k].i];
        t->output[k] = (int32_t)b->output_lens[it[k].i];
    }
    t->n = n;
    free(it);
    *out = t;
    return 0;
}

int sv_replay_apply(sv_scenario_t *sc, const sv_bench_t *b, long *skipped, sv_error_t *err)
{
    sv_trace_t *t;
    int rc = sv_replay_trace(b, &t, skipped, err);
    if (rc) return rc;
    sv_workload_cfg_t *w = &sc->workload;
    sv_trace_free(sc->trace);
    sc->trace = t;
    /* The file's input_lens are whole prompts and it does not say which of them began
     * alike: the workload's prompt identities (a shared system prompt, which would add its
     * tokens again, or a Mooncake trace's hash ids, which describe other prompts) go with
     * the rest of the workload, and the prefix cache finds no hits. */
    sc->shared_prefix.given = 0;
    sc->sessions.given = 0; /* each call becomes a request at its own time */
    sv_prompts_free(sc->prompts);
    sc->prompts = NULL;
    w->has_trace = 1;
    w->num_requests = 0;
    w->duration = 0;
    w->max_concurrency = b->max_concurrency;
    memset(&w->trace, 0, sizeof w->trace);
    snprintf(w->trace.path, sizeof w->trace.path, "%s", b->path);
    snprintf(w->trace.time_col, sizeof w->trace.time_col, "start_times");
    snprintf(w->trace.input_col, sizeof w->trace.input_col, "input_lens");
    snprintf(w->trace.output_col, sizeof w->trace.output_col, "output_lens");
    w->trace.speedup = 1.0;
    return 0;
}
