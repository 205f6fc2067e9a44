/*
 * Session and task metrics (see include/servesim/metrics/sessions.h): the log the
 * simulator keeps, and its summary, with the same percentile definition as every other
 * metric (sv_percentile_sorted).
 */
#include "servesim/metrics/sessions.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec_int.h"
#include "servesim/metrics/metrics.h"

long sv_session_log_open(sv_session_log_t *log)
{
    if (SV_GROW(log->s, log->cap, log->n + 1)) return -1;
    sv_session_rec_t *r = &log->s[log->n];
    memset(r, 0, sizeof *r);
    r->end = -1.0;
    r->last = -1;
    return (long)log->n++;
}

int sv_session_log_request(sv_session_log_t *log, int32_t id, int32_t session, int32_t turn)
{
    if ((size_t)id != log->nreq) return SV_EINVAL;
    if (SV_GROW(log->session, log->capreq, log->nreq + 1) ||
        SV_GROW(log->turn, log->capturn, log->nreq + 1))
        return SV_ENOMEM;
    log->session[log->nreq] = session;
    log->turn[log->nreq] = turn;
    log->nreq++;
    return 0;
}

void sv_session_log_free(sv_session_log_t *log)
{
    if (!log) return;
    free(log->s);
    free(log->session);
    free(log->turn);
    memset(log, 0, sizeof *log);
}

static const double P4[4] = {50, 90, 95, 99};

int sv_sessions_summarize(const sv_session_log_t *log, const sv_reqpool_t *pool,
                          sv_session_summary_t *out, sv_error_t *err)
{
    memset(out, 0, sizeof *out);
    size_t nreq = pool->n < log->nreq ? pool->n : log->nreq;
    double *v = malloc((nreq + log->n + 1) * sizeof *v);
    double *w = malloc((nreq + 1) * sizeof *w);
    if (!v || !w) {
        free(v);
        free(w);
        return sv_errorf(err, SV_ENOMEM, "out of memory summarizing %zu sessions", log->n);
    }
    /* Per session. */
    size_t k = 0;
    double sum = 0.0;
    for (size_t i = 0; i < log->n; i++) {
        const sv_session_rec_t *s = &log->s[i];
        out->sessions++;
        out->calls_planned += s->planned;
        out->calls_sent += s->sent;
        out->calls_done += s->done;
        out->calls_failed += s->failed;
        if (s->done == s->planned) {
            out->complete++;
            v[k++] = s->end - s->start;
            sum += s->end - s->start;
        } else if (s->failed) {
            out->failed++;
        } else {
            out->cut++;
        }
    }
    out->calls_not_sent = out->calls_planned - out->calls_sent;
    out->calls_done_mean = out->sessions ? (double)out->calls_done / (double)out->sessions : 0.0;
    double p[4];
    out->duration_mean = k ? sum / (double)k : 0.0;
    sv_percentiles_select(v, k, P4, 4, p);
    out->duration_p50 = p[0];
    out->duration_p90 = p[1];
    out->duration_p95 = p[2];
    out->duration_p99 = p[3];
    k = 0;
    for (size_t i = 0; i < nreq; i++)
        if (pool->r[i].state == SV_RQ_DONE) v[k++] = sv_req_e2el(&pool->r[i]);
    sv_percentiles_select(v, k, P4, 4, p);
    out->call_p50 = p[0];
    out->call_p90 = p[1];
    out->call_p95 = p[2];
    out->call_p99 = p[3];
    /* Per call index: one pass per row keeps memory at one array. */
    int rows = 0;
    for (size_t i = 0; i < nreq; i++) {
        int row = log->turn[i] < SV_MAX_TURN_ROWS - 1 ? log->turn[i] : SV_MAX_TURN_ROWS - 1;
        if (row + 1 > rows) rows = row + 1;
    }
    out->nturn = rows;
    for (int row = 0; row < rows; row++) {
        sv_turn_row_t *t = &out->turn[row];
        size_t nt = 0, ne = 0;
        double in = 0.0, q = 0.0, hit = 0.0;
        for (size_t i = 0; i < nreq; i++) {
            int ri = log->turn[i] < SV_MAX_TURN_ROWS - 1 ? log->turn[i] : SV_MAX_TURN_ROWS - 1;
            if (ri != row) continue;
            const sv_req_t *r = &pool->r[i];
            t->requests++;
            in += r->input;
            if (r->scheduled >= 0) {
                q += r->input;
                hit += r->cached;
            }
            if (r->state == SV_RQ_DONE) {
                t->completed++;
                v[nt++] = sv_req_ttft(r) * 1e3;
                w[ne++] = sv_req_e2el(r) * 1e3;
            } else {
                t->failed++;
            }
        }
        const double p2[2] = {50, 99};
        sv_percentiles_select(v, nt, p2, 2, p);
        t->ttft_p50_ms = p[0];
        t->ttft_p99_ms = p[1];
        sv_percentiles_select(w, ne, p2, 1, p);
        t->e2el_p50_ms = p[0];
        t->input_mean = t->requests ? in / (double)t->requests : 0.0;
        t->hit_rate = q > 0 ? hit / q : 0.0;
    }
    free(v);
    free(w);
    return 0;
}
