/*
 * The reach of a run report's charts (see include/servesim/report/axes.h): computed from
 * the result as the charts of sv_html_run() draw it, and read back from a result JSON.
 */
#include "servesim/report/axes.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio_int.h"

static void widen(double *a, double v)
{
    if (isfinite(v) && v > *a) *a = v;
}

void sv_run_axes_of(const sv_result_t *res, sv_run_axes_t *out)
{
    memset(out, 0, sizeof *out);
    const sv_scenario_t *sc = res->sc;
    const sv_summary_t *s = &res->summary;
    widen(&out->ttft_ms, s->max_ttft_ms); /* (the summary's, of every completed request) */
    widen(&out->tpot_ms, s->max_tpot_ms);
    widen(&out->ttft_ms, sc->metrics.slo_ttft_ms);
    widen(&out->tpot_ms, sc->metrics.slo_tpot_ms);
    const sv_stat_t *ph[] = {&s->queue, &s->prefill,      &s->xfer_wait,
                             &s->xfer,  &s->decode_queue, &s->decode};
    for (int i = 0; i < 6; i++)
        widen(&out->phase_ms, ph[i]->mean);
    size_t ns;
    const sv_sample_t *sm = sv_metrics_samples(res->metrics, &ns);
    int R = res->replicas, P = res->npools;
    size_t T = R > 0 ? ns / (size_t)R : 0;
    for (size_t t = 0; t < T; t++) {
        const sv_sample_t *row = &sm[t * (size_t)R];
        double wq[SV_MAX_POOLS] = {0}, run[SV_MAX_POOLS] = {0}, kv[SV_MAX_POOLS] = {0};
        int up[SV_MAX_POOLS] = {0};
        widen(&out->time_s, row[0].t);
        for (int i = 0; i < R; i++) {
            int q = res->rpool[i];
            wq[q] += row[i].waiting;
            run[q] += row[i].running;
            up[q] += row[i].up;
            kv[q] += row[i].up ? 100.0 * row[i].kv_usage : 0.0;
        }
        for (int q = 0; q < P; q++) {
            widen(&out->requests, wq[q]);
            widen(&out->requests, run[q]);
            if (up[q]) widen(&out->kv_pct, kv[q] / up[q]);
        }
    }
}

int sv_run_axes_read(const char *path, sv_run_axes_t *io, sv_error_t *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = sv__read_file(path, 1L << 30, &text, &len, err);
    if (rc) return rc;
    cJSON *j = cJSON_Parse(text);
    free(text);
    if (!j) return sv_errorf(err, SV_EPARSE, "%s: --axes-from: not valid JSON", path);
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(j, "servesim");
    const cJSON *ax = ss ? cJSON_GetObjectItemCaseSensitive(ss, "axes") : NULL;
    if (!cJSON_IsObject(ax)) {
        cJSON_Delete(j);
        return sv_errorf(err, SV_EINVAL,
                         "%s: --axes-from: no servesim.axes object (expected the --json of a "
                         "servesim run, with keys " SV_RUN_AXES_KEYS ")",
                         path);
    }
    static const char *const keys[] = {"ttft_ms", "tpot_ms",  "phase_ms",
                                       "time_s",  "requests", "kv_pct"};
    double *dst[] = {&io->ttft_ms, &io->tpot_ms,  &io->phase_ms,
                     &io->time_s,  &io->requests, &io->kv_pct};
    for (int i = 0; i < 6; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(ax, keys[i]);
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble)) {
            cJSON_Delete(j);
            return sv_errorf(err, SV_EINVAL,
                             "%s: --axes-from: servesim.axes.%s: expected a finite number >= 0",
                             path, keys[i]);
        }
        widen(dst[i], v->valuedouble);
    }
    cJSON_Delete(j);
    return 0;
}

void sv_run_axes_widen(sv_run_axes_t *io, const sv_run_axes_t *by)
{
    const double *g = &by->ttft_ms;
    double *d = &io->ttft_ms;
    for (size_t k = 0; k < sizeof *io / sizeof(double); k++)
        if (g[k] > d[k]) d[k] = g[k];
}
