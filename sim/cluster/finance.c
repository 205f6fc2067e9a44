/*
 * Cost and energy as finance sees them (see include/servesim/cluster/finance.h and
 * docs/cost.md): the `cost` map of a scenario, and the arithmetic from a run's totals to
 * energy at the wall and cost per million output tokens, broken down.
 */
#include "servesim/cluster/finance.h"

#include <math.h>
#include <string.h>

#include "servesim/cluster/schema.h"
#include "servesim/cluster/sim.h"

#define HOURS_PER_YEAR 8760.0 /* 365 days: what the amortisation divides by */

int sv_finance_read(sv_ynode_t *root, sv_finance_cfg_t *cfg, sv_error_t *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->gpus_per_server = 8;
    cfg->pue = 1.0;
    cfg->utilisation = 1.0;
    sv_ynode_t *c = sv_ymap_get(root, "cost");
    if (!c || sv_yscalar_is_null(c)) return 0;
    int rc;
    if ((rc = sv_yexpect_map(c, "cost", err))) return rc;
    cfg->enabled = 1;
    long gps = 8;
    /* gpus_per_server is a whole number kept as a double; pue has its own message. */
    const sv_keydef_t *k = sv_scenario_key("cost", "gpus_per_server");
    if ((rc = sv__keys_read(c, "cost", 0, cfg, err)) ||
        (rc = sv_yget_long(c, k->name, 0, (long)k->lo, (long)k->hi, &gps, err)) < 0 ||
        (rc = sv__keys_read(c, "cost", 1, cfg, err)))
        return rc;
    cfg->gpus_per_server = (double)gps;
    /* Any value outside [1, 10] (NaN, inf, text included) gets the one PUE message. */
    sv_ynode_t *pn = sv_ymap_get(c, "pue");
    k = sv_scenario_key("cost", "pue");
    if ((rc = sv_yget_double(c, k->name, 0, k->lo, k->hi, &cfg->pue, err)) < 0 && pn &&
        pn->kind == SV_Y_SCALAR) {
        char w[512];
        return sv_errorf(err, SV_EINVAL,
                         "%s: cost.pue: expected a power usage effectiveness in [1, 10] "
                         "(facility power / IT power), got '%s'",
                         sv_ynode_where(pn, w, sizeof w), pn->scalar);
    }
    if (rc < 0) return rc;
    sv_ynode_t *p = sv_ymap_get(c, "gpu_purchase");
    if (p && !sv_yscalar_is_null(p)) {
        if ((rc = sv_yexpect_map(p, "cost.gpu_purchase", err))) return rc;
        cfg->purchase = 1;
        if ((rc = sv__keys_read(p, "cost.gpu_purchase", 0, cfg, err)) ||
            (rc = sv_ymap_check_unknown(p, err)))
            return rc;
    }
    return sv_ymap_check_unknown(c, err);
}

void sv_finance_compute(const sv_finance_cfg_t *cfg, double gpu_energy_j, double gpu_hours,
                        double rental_usd, double output_tokens, double duration_s,
                        double busy_share, sv_finance_t *out)
{
    memset(out, 0, sizeof *out);
    out->gpu_hours = gpu_hours;
    out->busy_share = busy_share;
    out->duration_s = duration_s;
    out->output_tokens = output_tokens;
    out->gpu_energy_j = gpu_energy_j;
    out->host_energy_j = cfg->host_w_per_server / cfg->gpus_per_server * gpu_hours * 3600.0;
    out->it_energy_j = out->gpu_energy_j + out->host_energy_j;
    out->wall_energy_j = out->it_energy_j * cfg->pue;
    out->mean_wall_w = duration_s > 0 ? out->wall_energy_j / duration_s : 0.0;
    out->energy_usd = out->wall_energy_j / 3.6e6 * cfg->energy_usd_per_kwh;
    out->gpu_usd = cfg->purchase ? gpu_hours * cfg->purchase_usd /
                                       (cfg->years * HOURS_PER_YEAR * cfg->utilisation)
                                 : rental_usd;
    out->gpu_usd_per_hour = gpu_hours > 0 ? out->gpu_usd / gpu_hours : 0.0;
    out->total_usd = out->gpu_usd + out->energy_usd;
    double m = output_tokens / 1e6;
    /* No output token: nothing to divide by, so no price per token (NaN: JSON null). */
    out->gpu_usd_per_mtok = out->energy_usd_per_mtok = out->total_usd_per_mtok = NAN;
    out->wall_j_per_tok = NAN;
    if (m > 0) {
        out->gpu_usd_per_mtok = out->gpu_usd / m;
        out->energy_usd_per_mtok = out->energy_usd / m;
        out->total_usd_per_mtok = out->total_usd / m;
        out->wall_j_per_tok = out->wall_energy_j / output_tokens;
    }
}

void sv_finance_of(const struct sv_result *res, sv_finance_t *out)
{
    sv_finance_compute(&res->sc->finance, res->energy_j, res->gpu_hours, res->cost_usd,
                       (double)res->summary.total_output, res->summary.duration, res->busy_share,
                       out);
}
