/*
 * The finance block of a run's reports (servesim/cluster/finance.h, docs/cost.md): energy
 * at the GPU, the host and the wall, and the cost per million output tokens broken down
 * into the GPUs and energy. Printed and written only when the scenario has a `cost` map,
 * so every other output stays as it was.
 */
#include <math.h>
#include <stdio.h>

#include "report/report_int.h"
#include "servesim/cluster/finance.h"

/* A line with its value in the given format; a per-token figure of a run without output
 * tokens is NaN, printed as such, not as 0. */
static int add(sv__line_t *out, int n, const char *label, const char *fmt, double v)
{
    snprintf(out[n].label, sizeof out[n].label, "%s", label);
    if (isnan(v))
        snprintf(out[n].text, sizeof out[n].text, "n/a (no output tokens)");
    else
        snprintf(out[n].text, sizeof out[n].text, fmt, v);
    return n + 1;
}

int sv__report_finance_lines(const sv_result_t *res, sv__line_t *out)
{
    const sv_finance_cfg_t *c = &res->sc->finance;
    if (!c->enabled) return 0;
    sv_finance_t x;
    char buf[96];
    int n = 0;
    sv_finance_of(res, &x);
    /* dollars to the hundredth of a cent (%.4f): a short run costs cents */
    n = add(out, n, "GPU busy (%)", "%.2f", 100.0 * x.busy_share);
    n = add(out, n, "GPU-hours", "%.2f", x.gpu_hours);
    n = add(out, n, "GPU energy (Wh)", "%.2f", x.gpu_energy_j / 3600.0);
    n = add(out, n, "Host energy (Wh)", "%.2f", x.host_energy_j / 3600.0);
    snprintf(buf, sizeof buf, "Energy at the wall (Wh, PUE %.2f)", c->pue);
    n = add(out, n, buf, "%.2f", x.wall_energy_j / 3600.0);
    n = add(out, n, "Mean power at the wall (W)", "%.2f", x.mean_wall_w);
    n = add(out, n, "Energy at the wall per output token (J)", "%.2f", x.wall_j_per_tok);
    n = add(out, n,
            c->purchase ? "GPU, amortised purchase ($/GPU-hour)" : "GPU rental ($/GPU-hour)",
            "%.4f", x.gpu_usd_per_hour);
    n = add(out, n, "Cost of the GPUs ($)", "%.4f", x.gpu_usd);
    n = add(out, n, "Cost of energy ($)", "%.4f", x.energy_usd);
    n = add(out, n, "Total cost ($)", "%.4f", x.total_usd);
    n = add(out, n, "GPUs per 1M output tokens ($)", "%.4f", x.gpu_usd_per_mtok);
    n = add(out, n, "Energy per 1M output tokens ($)", "%.4f", x.energy_usd_per_mtok);
    n = add(out, n, "Total per 1M output tokens ($)", "%.4f", x.total_usd_per_mtok);
    return n;
}

void sv__report_finance_summary(const sv_result_t *res, FILE *f)
{
    sv__line_t l[SV__MAX_LINES];
    int n = sv__report_finance_lines(res, l);
    if (n == 0) return;
    sv__report_centred(f, " cost and energy (finance) ", '-', 50);
    sv__report_lines_print(f, l, n);
}

void sv__report_finance_json(sv_jw_t *w, const sv_result_t *res)
{
    const sv_finance_cfg_t *c = &res->sc->finance;
    if (!c->enabled) return;
    sv_finance_t x;
    sv_finance_of(res, &x);
    sv__jw_obj(w, "finance");
    sv__jw_num(w, "host_w_per_server", c->host_w_per_server);
    sv__jw_num(w, "gpus_per_server", c->gpus_per_server);
    sv__jw_num(w, "pue", c->pue);
    sv__jw_num(w, "energy_usd_per_kwh", c->energy_usd_per_kwh);
    sv__jw_str(w, "gpu_pricing", c->purchase ? "purchase" : "rental");
    if (c->purchase) {
        sv__jw_num(w, "purchase_usd_per_gpu", c->purchase_usd);
        sv__jw_num(w, "amortisation_years", c->years);
        sv__jw_num(w, "utilisation", c->utilisation);
    }
    sv__jw_num(w, "gpu_busy_share", x.busy_share);
    sv__jw_num(w, "gpu_hours", x.gpu_hours);
    sv__jw_num(w, "output_tokens", x.output_tokens);
    sv__jw_num(w, "gpu_energy_j", x.gpu_energy_j);
    sv__jw_num(w, "host_energy_j", x.host_energy_j);
    sv__jw_num(w, "it_energy_j", x.it_energy_j);
    sv__jw_num(w, "wall_energy_j", x.wall_energy_j);
    sv__jw_num(w, "wall_energy_kwh", x.wall_energy_j / 3.6e6);
    sv__jw_num(w, "mean_wall_power_w", x.mean_wall_w);
    sv__jw_num(w, "wall_energy_per_output_token_j", x.wall_j_per_tok);
    sv__jw_num(w, "gpu_usd_per_gpu_hour", x.gpu_usd_per_hour);
    sv__jw_num(w, "gpu_cost_usd", x.gpu_usd);
    sv__jw_num(w, "energy_cost_usd", x.energy_usd);
    sv__jw_num(w, "total_cost_usd", x.total_usd);
    sv__jw_num(w, "gpu_usd_per_million_output_tokens", x.gpu_usd_per_mtok);
    sv__jw_num(w, "energy_usd_per_million_output_tokens", x.energy_usd_per_mtok);
    sv__jw_num(w, "total_usd_per_million_output_tokens", x.total_usd_per_mtok);
    sv__jw_end_obj(w);
}
