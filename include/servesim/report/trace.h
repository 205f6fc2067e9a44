/*
 * A run as a timeline: a Chrome / Perfetto trace (Trace Event Format, the JSON object
 * form {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}) that
 * ui.perfetto.dev or chrome://tracing opens (docs/timeline.md). Simulated time, in
 * microseconds. Tracks:
 *   - one process per pool, one thread per replica: each engine step a complete ("X")
 *     event named prefill, decode or mixed, its batch in args (prefill sequences and
 *     tokens, decode sequences and their mean context, running, waiting, KV usage), and
 *     the replica's KV usage, running and waiting as counters at every time-series sample;
 *   - "KV links" (disaggregated runs): one thread per lane of each prefill replica's link
 *     (concurrent transfers share a link, so they are stacked on lanes), one event per
 *     transfer with the request, the decode replica and the bytes;
 *   - "requests": one thread per request, a slice over its whole life (input, output,
 *     TTFT, TPOT, E2EL, where it ran) holding its phases: client wait, queue, prefill,
 *     then decode, or KV wait, KV transfer, decode queue and decode when disaggregated;
 *     a failed request ends with an instant event naming the reason;
 *   - flows (category "flow", id = the request's id): arrows from a request's track to
 *     the step that first scheduled it, the step its prompt finished in, its KV transfer
 *     and the decode replica's step its decoding started in (disaggregated), and the step
 *     that made its last token. The steps are found from the request's record (the step
 *     running at `scheduled` or `decode_start`, the one ending at `prefill_end` or at the
 *     server's last token), each point in the middle of the slice it binds to.
 * Size limit: the trace holds at most SV_TRACE_MAX_STEPS engine steps and
 * SV_TRACE_MAX_REQUESTS requests. A longer run is cut at the first instant either limit is
 * reached: what starts before it is written (requests arriving before it in full), the
 * rest is left out, and otherData and sv_tracer_write()'s *cut say so.
 *
 * Use: sv_tracer_new(), pass sv_tracer_hooks() to sv_sim_run_hooked(), then
 * sv_tracer_write() with the result. Ownership: the tracer owns what it recorded;
 * sv_tracer_free() releases it (NULL-safe).
 */
#ifndef SERVESIM_REPORT_TRACE_H
#define SERVESIM_REPORT_TRACE_H

#include "servesim/base/error.h"
#include "servesim/cluster/sim.h"

#define SV_TRACE_MAX_STEPS 100000L
#define SV_TRACE_MAX_REQUESTS 20000L

typedef struct sv_tracer sv_tracer_t;

/* max_steps, max_requests: the limits (<= 0: the defaults above). 0 or SV_ENOMEM. */
int sv_tracer_new(long max_steps, long max_requests, sv_tracer_t **out, sv_error_t *err);
void sv_tracer_free(sv_tracer_t *t);
void sv_tracer_hooks(sv_tracer_t *t, sv_sim_hooks_t *hooks);

/* What a cut trace holds (all zero when nothing was cut). */
typedef struct sv_trace_cut {
    int cut;
    double until_s;        /* simulated time the trace stops at */
    long steps, steps_all; /* steps written, steps the run made */
    long requests, requests_all;
} sv_trace_cut_t;

/* Write the trace of res (the run the tracer watched) to path. 0, SV_EIO or SV_ENOMEM. */
int sv_tracer_write(const sv_tracer_t *t, const sv_result_t *res, const char *path,
                    sv_trace_cut_t *cut, sv_error_t *err);

#endif
