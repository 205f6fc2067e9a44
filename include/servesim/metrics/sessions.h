/*
 * Session and task metrics (`workload.sessions`, include/servesim/traffic/session.h): the
 * simulator logs which session and call each request is, and how each session went; this
 * turns the log into per-call-index rows (how the Nth turn of a chat fares: TTFT, latency,
 * prefix cache hits) and per-session figures (duration, calls completed, the task latency
 * percentiles next to the per-call ones).
 *
 * Ownership: the log owns its arrays (sv_session_log_free); sv_sessions_summarize() fills
 * caller storage.
 */
#ifndef SERVESIM_SESSIONS_H
#define SERVESIM_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "servesim/base/error.h"
#include "servesim/traffic/request.h"

typedef struct sv_session_rec {
    double start;    /* its first call was sent */
    double end;      /* its last call ended (-1 until the session is over) */
    double think_s;  /* think time spent between calls (chain) */
    int32_t planned; /* calls drawn for it */
    int32_t sent;    /* calls created and sent; planned - sent were never sent */
    int32_t done;    /* calls completed */
    int32_t failed;  /* calls failed: a chain stops at its first failure */
    int32_t last;    /* its newest call's request id */
    uint8_t over;    /* no more calls will be sent */
    uint8_t cut;     /* the horizon ended the run before its next call was due */
} sv_session_rec_t;

typedef struct sv_session_log {
    sv_session_rec_t *s;
    size_t n, cap;
    int32_t *session, *turn; /* per request id: its session and call index (0-based) */
    size_t nreq, capreq, capturn;
} sv_session_log_t;

/* A new session record (zeroed, end -1); its index, or -1 without memory. */
long sv_session_log_open(sv_session_log_t *log);
/* Request id is call `turn` of session `session` (ids come in order: id == nreq). 0 or
 * SV_ENOMEM. */
int sv_session_log_request(sv_session_log_t *log, int32_t id, int32_t session, int32_t turn);
void sv_session_log_free(sv_session_log_t *log);

/* Rows per call index: 1 .. SV_MAX_TURN_ROWS - 1, and one for every later call. */
#define SV_MAX_TURN_ROWS 16

typedef struct sv_turn_row {
    long requests, completed, failed;
    double ttft_p50_ms, ttft_p99_ms, e2el_p50_ms; /* completed calls */
    double input_mean;                            /* prompt tokens */
    double hit_rate; /* prefix cache hits / prompt tokens, over calls admitted */
} sv_turn_row_t;

typedef struct sv_session_summary {
    long sessions, complete, failed, cut; /* complete: every call done */
    long calls_planned, calls_sent, calls_not_sent, calls_done, calls_failed;
    double calls_done_mean; /* per session */
    /* Task latency (s): first call sent to last call ended, complete sessions only; and the
     * per-call latency (E2EL, s) of the completed calls, for comparison. */
    double duration_mean, duration_p50, duration_p90, duration_p99;
    double call_p50, call_p90, call_p99;
    double duration_p95, call_p95; /* reported when metrics.percentiles lists 95 */
    sv_turn_row_t turn[SV_MAX_TURN_ROWS];
    int nturn; /* rows used */
} sv_session_summary_t;

int sv_sessions_summarize(const sv_session_log_t *log, const sv_reqpool_t *pool,
                          sv_session_summary_t *out, sv_error_t *err);

#endif
