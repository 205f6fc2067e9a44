/*
 * Unit tests of cost and energy as finance sees them (servesim/cluster/finance.h): the
 * arithmetic on a hand-computed case, the same identities on a whole simulated run, and
 * the `cost` map's errors.
 */
#include <math.h>

#include "servesim/cluster/finance.h"
#include "testsim.h"

#define NEAR(a, b) tu_assert_rel((a), (b), 1e-12)

/*
 * Two GPUs up 1800 s each (1 GPU-hour), each busy 900 s at full activity:
 *   GPU energy  = 2 x (75 W x 1800 s + (700 - 75) W x 900 s) = 1,395,000 J
 *   host energy = 1600 W / 8 GPUs = 200 W per GPU x 3600 GPU-s = 720,000 J
 *   wall        = (1,395,000 + 720,000) x 1.25 = 2,643,750 J = 0.734375 kWh
 *   energy cost = 0.734375 kWh x $0.12 = $0.088125
 *   GPUs rented = 1 GPU-hour x $3.50 = $3.50; total $3.588125
 *   2,000,000 output tokens: $1.75 + $0.0440625 = $1.7940625 per million
 */
START_TEST(test_hand_case)
{
    sv_finance_cfg_t c = {.enabled = 1,
                          .host_w_per_server = 1600,
                          .gpus_per_server = 8,
                          .pue = 1.25,
                          .energy_usd_per_kwh = 0.12,
                          .utilisation = 1};
    double gpu_j = 2 * (75.0 * 1800 + 625.0 * 900);
    sv_finance_t x;
    sv_finance_compute(&c, gpu_j, 1.0, 3.5, 2e6, 1800.0, 0.5, &x);
    NEAR(x.gpu_energy_j, 1395000.0);
    NEAR(x.host_energy_j, 720000.0);
    NEAR(x.wall_energy_j, (x.gpu_energy_j + x.host_energy_j) * 1.25);
    NEAR(x.wall_energy_j, 2643750.0);
    NEAR(x.mean_wall_w, 2643750.0 / 1800.0);
    NEAR(x.energy_usd, 0.088125);
    NEAR(x.gpu_usd, 3.5);
    NEAR(x.gpu_usd_per_hour, 3.5);
    NEAR(x.total_usd, 3.588125);
    NEAR(x.gpu_usd_per_mtok, 1.75);
    NEAR(x.energy_usd_per_mtok, 0.0440625);
    NEAR(x.total_usd_per_mtok, 1.7940625);
    NEAR(x.gpu_usd_per_mtok + x.energy_usd_per_mtok, x.total_usd_per_mtok);
    NEAR(x.wall_j_per_tok, 2643750.0 / 2e6);

    /* Bought instead: $25,000 over 5 years in service 80% of the hours:
     * 25000 / (5 x 8760 x 0.8) = 25000 / 35040 $ per GPU-hour. */
    c.purchase = 1;
    c.purchase_usd = 25000;
    c.years = 5;
    c.utilisation = 0.8;
    sv_finance_compute(&c, gpu_j, 1.0, 3.5, 2e6, 1800.0, 0.5, &x);
    NEAR(x.gpu_usd, 25000.0 / 35040.0);
    NEAR(x.total_usd, 25000.0 / 35040.0 + 0.088125);
    NEAR(x.gpu_usd_per_mtok + x.energy_usd_per_mtok, x.total_usd_per_mtok);

    /* A run whose every request failed made no output token: the GPUs are still paid
     * ($0.7134.. + $0.088125) but there is no price per token (NaN, not 0). */
    sv_finance_compute(&c, gpu_j, 1.0, 3.5, 0, 1800.0, 0.5, &x);
    NEAR(x.total_usd, 25000.0 / 35040.0 + 0.088125);
    ck_assert(isnan(x.gpu_usd_per_mtok) && isnan(x.energy_usd_per_mtok));
    ck_assert(isnan(x.total_usd_per_mtok) && isnan(x.wall_j_per_tok));
}
END_TEST

static const char *yaml = "name: fin\n"
                          "seed: 7\n"
                          "model: llama-3.1-8b\n"
                          "hardware: {gpu: h100-sxm, tp: 1, replicas: 2}\n"
                          "workload:\n"
                          "  num_requests: 200\n"
                          "  rate: 4\n"
                          "  input: 512\n"
                          "  output: 64\n"
                          "cost:\n"
                          "  host_w_per_server: 2000\n"
                          "  gpus_per_server: 8\n"
                          "  pue: 1.3\n"
                          "  energy_usd_per_kwh: 0.1\n";

/* On a run: wall = (GPU + host) x PUE, host = 250 W x GPU-seconds, and the breakdown
 * sums to the total, all from the run's own totals. */
START_TEST(test_run)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, NULL, 0, &sc);
    sv_finance_t x;
    sv_finance_of(res, &x);
    ck_assert(sc->finance.enabled);
    double T = res->summary.duration;
    /* Two fixed replicas of one GPU: up the whole duration. */
    NEAR(x.gpu_hours, 2 * T / 3600.0);
    NEAR(x.host_energy_j, 250.0 * 2 * T);
    NEAR(x.gpu_energy_j, res->energy_j);
    NEAR(x.wall_energy_j, (res->energy_j + 250.0 * 2 * T) * 1.3);
    NEAR(x.energy_usd, x.wall_energy_j / 3.6e6 * 0.1);
    NEAR(x.gpu_usd, res->cost_usd);
    NEAR(x.gpu_usd + x.energy_usd, x.total_usd);
    NEAR(x.gpu_usd_per_mtok + x.energy_usd_per_mtok, x.total_usd_per_mtok);
    NEAR(x.total_usd_per_mtok, x.total_usd / (res->summary.total_output / 1e6));
    /* The GPU energy has its idle floor: at least 75 W x 2 GPUs x T, less than 700 W. */
    ck_assert(x.gpu_energy_j >= 75.0 * 2 * T && x.gpu_energy_j <= 700.0 * 2 * T);
    tu_done(sc, res);
    sv_catalog_free(cat);
}
END_TEST

START_TEST(test_errors)
{
    sv_catalog_t *cat = tu_catalog();
    sv_scenario_t *sc = NULL;
    sv_error_t err;
    const char *neg[] = {"cost.pue=-1.2"};
    ck_assert_int_eq(tu_load_yaml(cat, yaml, neg, 1, &sc, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--set cost.pue=-1.2: cost.pue: expected a power usage "
                              "effectiveness in [1, 10] (facility power / IT power), got '-1.2'");
    /* NaN, inf and 1e308 get the same message, not the reader's generic range */
    const char *nan[] = {"cost.pue=.nan"};
    ck_assert_int_eq(tu_load_yaml(cat, yaml, nan, 1, &sc, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--set cost.pue=.nan: cost.pue: expected a power usage "
                              "effectiveness in [1, 10] (facility power / IT power), got '.nan'");
    const char *big[] = {"cost.pue=1e308"};
    ck_assert_int_eq(tu_load_yaml(cat, yaml, big, 1, &sc, &err), SV_EINVAL);
    ck_assert(strstr(err.msg, "[1, 10] (facility power / IT power), got '1e308'"));
    const char *low[] = {"cost.pue=0.9"};
    ck_assert_int_eq(tu_load_yaml(cat, yaml, low, 1, &sc, &err), SV_EINVAL);
    ck_assert(strstr(err.msg, "cost.pue: expected a power usage effectiveness in [1, 10]"));
    const char *nop[] = {"cost.gpu_purchase.years=4"};
    ck_assert_int_ne(tu_load_yaml(cat, yaml, nop, 1, &sc, &err), 0);
    ck_assert(strstr(err.msg, "price_usd"));
    sv_catalog_free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("finance");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_hand_case);
    tcase_add_test(tc, test_run);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
