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

/* A per-token figure of a run without output tokens is NaN: printed as such, not 0. */
static int line_none(FILE *f, const char *label, double v)
{
    if (!isnan(v)) return 0;
    fprintf(f, "%-40s %s\n", label, "n/a (no output tokens)");
    return 1;
}

static void line_num(FILE *f, const char *label, double v)
{
    if (!line_none(f, label, v)) fprintf(f, "%-40s %-10.2f\n", label, v);
}

/* Dollars to the hundredth of a cent: a short run costs cents. */
static void line_usd(FILE *f, const char *label, double v)
{
    if (!line_none(f, label, v)) fprintf(f, "%-40s %-10.4f\n", label, v);
}

void sv__report_finance_summary(const sv_result_t *res, FILE *f)
{
    const sv_finance_cfg_t *c = &res->sc->finance;
    if (!c->enabled) return;
    sv_finance_t x;
    char buf[96];
    sv_finance_of(res, &x);
    sv__report_centred(f, " cost and energy (finance) ", '-', 50);
    line_num(f, "GPU busy (%):", 100.0 * x.busy_share);
    line_num(f, "GPU-hours:", x.gpu_hours);
    line_num(f, "GPU energy (Wh):", x.gpu_energy_j / 3600.0);
    line_num(f, "Host energy (Wh):", x.host_energy_j / 3600.0);
    snprintf(buf, sizeof buf, "Energy at the wall (Wh, PUE %.2f):", c->pue);
    line_num(f, buf, x.wall_energy_j / 3600.0);
    line_num(f, "Mean power at the wall (W):", x.mean_wall_w);
    line_num(f, "Energy at the wall per output token (J):", x.wall_j_per_tok);
    line_usd(f, c->purchase ? "GPU, amortised purchase ($/GPU-hour):" : "GPU rental ($/GPU-hour):",
             x.gpu_usd_per_hour);
    line_usd(f, "Cost of the GPUs ($):", x.gpu_usd);
    line_usd(f, "Cost of energy ($):", x.energy_usd);
    line_usd(f, "Total cost ($):", x.total_usd);
    line_usd(f, "GPUs per 1M output tokens ($):", x.gpu_usd_per_mtok);
    line_usd(f, "Energy per 1M output tokens ($):", x.energy_usd_per_mtok);
    line_usd(f, "Total per 1M output tokens ($):", x.total_usd_per_mtok);
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
