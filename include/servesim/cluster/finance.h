/*
 * Cost and energy as finance sees them (docs/cost.md): energy at the GPU and at the wall,
 * what it costs, and what the GPUs cost, rented or bought, per million output tokens, at
 * the utilisation the run really had (idle time included).
 *
 *   GPU energy   = the simulator's: idle power x time up + (TDP - idle) x time busy, per GPU
 *   host energy  = host_w_per_server / gpus_per_server x GPU-seconds up (CPUs, memory,
 *                  NICs, fans: constant while the server is up, shared by its GPUs)
 *   wall energy  = (GPU energy + host energy) x PUE
 *   energy cost  = wall energy in kWh x energy_usd_per_kwh
 *   GPU cost     = GPU-hours up x the hourly price: the rental price (hardware's
 *                  price_per_hour_usd, the catalog's by default), or with gpu_purchase
 *                  price_usd / (years x 8760 h x utilisation), the purchase amortised over
 *                  the hours it is in paid service
 *   total        = GPU cost + energy cost; each also per million output tokens
 *
 * Nothing of this runs during the simulation: it is arithmetic on the run's totals
 * (energy, GPU-hours), done when a report asks. Off unless the scenario has a `cost` map.
 *
 * Ownership: the config lives in the scenario; results go into caller storage.
 */
#ifndef SERVESIM_FINANCE_H
#define SERVESIM_FINANCE_H

#include "servesim/base/error.h"
#include "servesim/base/yaml.h"

typedef struct sv_finance_cfg {
    int enabled;                /* the scenario has a `cost` map */
    double host_w_per_server;   /* W, default 0 */
    double gpus_per_server;     /* default 8 */
    double pue;                 /* facility power / IT power, >= 1, default 1 */
    double energy_usd_per_kwh;  /* default 0 */
    int purchase;               /* gpu_purchase given: amortise instead of renting */
    double purchase_usd, years; /* per GPU; amortisation period */
    double utilisation;         /* share of those years the GPU is in paid service (0, 1] */
} sv_finance_cfg_t;

/* Read the scenario's `cost` map (absent or null: disabled). Errors name file:line:col
 * and the key; a PUE below 1 is one. */
int sv_finance_read(sv_ynode_t *root, sv_finance_cfg_t *cfg, sv_error_t *err);

typedef struct sv_finance {
    double gpu_hours, busy_share, duration_s, output_tokens;
    double gpu_energy_j, host_energy_j, it_energy_j, wall_energy_j;
    double mean_wall_w;      /* wall energy / duration */
    double gpu_usd_per_hour; /* GPU cost / GPU-hours: the rental or amortised hourly price */
    double gpu_usd, energy_usd, total_usd;
    double gpu_usd_per_mtok, energy_usd_per_mtok, total_usd_per_mtok;
    double wall_j_per_tok;
} sv_finance_t;

/* The arithmetic above on totals: GPU energy (J), GPU-hours up, the rental cost of those
 * hours (USD, used unless cfg->purchase), output tokens, the run's duration (s) and GPU
 * busy share (reported as is). */
void sv_finance_compute(const sv_finance_cfg_t *cfg, double gpu_energy_j, double gpu_hours,
                        double rental_usd, double output_tokens, double duration_s,
                        double busy_share, sv_finance_t *out);

/* The same on a finished run (its scenario's cfg, energy, GPU-hours and cost). */
struct sv_result;
void sv_finance_of(const struct sv_result *res, sv_finance_t *out);

#endif
