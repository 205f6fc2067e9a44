/*
 * The client-server network (see include/servesim/cluster/network.h): the `network` map
 * of a scenario, a request class's own `rtt_ms`, and the RTT of each request.
 */
#include "servesim/cluster/network.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/traffic/workload.h"

struct sv_network {
    sv_network_cfg_t cfg;
    gsl_rng *rng;
};

static const sv_yenum_t KINDS[] = {{"fixed", SV_NET_FIXED},
                                   {"uniform", SV_NET_UNIFORM},
                                   {"normal", SV_NET_NORMAL},
                                   {"lognormal", SV_NET_LOGNORMAL}};

/* rtt_ms of map n (present, not null) into cfg, its errors naming `path` (the key's
 * dotted path, e.g. network.rtt_ms). */
static int read_rtt(sv_ynode_t *n, const char *path, sv_network_cfg_t *cfg, sv_error_t *err)
{
    int rc;
    char w[512];
    sv_ynode_t *r = sv_ymap_get(n, "rtt_ms");
    cfg->enabled = 1;
    if (r->kind == SV_Y_SCALAR) {
        if ((rc = sv_yget_double(n, "rtt_ms", 1, 0, 1e7, &cfg->value, err)) < 0) return rc;
        cfg->value *= 1e-3;
        return 0;
    }
    if ((rc = sv_yexpect_map(r, path, err))) return rc;
    int k;
    if ((rc = sv_yget_enum(r, "dist", 1, KINDS, 4, &k, err))) return rc;
    cfg->kind = (sv_net_kind_t)k;
    double lo = 0, hi = INFINITY;
    if ((rc = sv_yget_double(r, "value", k == SV_NET_FIXED, 0, 1e7, &cfg->value, err)) < 0 ||
        (rc = sv_yget_double(r, "mean", k >= SV_NET_NORMAL, 0, 1e7, &cfg->mean, err)) < 0 ||
        (rc = sv_yget_double(r, "std", k >= SV_NET_NORMAL, 0, 1e7, &cfg->std, err)) < 0 ||
        (rc = sv_yget_double(r, "min", k == SV_NET_UNIFORM, 0, 1e7, &lo, err)) < 0 ||
        (rc = sv_yget_double(r, "max", k == SV_NET_UNIFORM, 0, 1e7, &hi, err)) < 0)
        return rc;
    if (lo > hi)
        return sv_errorf(err, SV_EINVAL, "%s: %s: min (%g) is greater than max (%g)",
                         sv_ynode_where(r, w, sizeof w), path, lo, hi);
    if (k == SV_NET_LOGNORMAL && cfg->mean <= 0)
        return sv_errorf(err, SV_EINVAL, "%s: %s: a lognormal needs mean > 0",
                         sv_ynode_where(r, w, sizeof w), path);
    cfg->value *= 1e-3;
    cfg->mean *= 1e-3;
    cfg->std *= 1e-3;
    cfg->min = lo * 1e-3;
    cfg->max = hi * 1e-3;
    return sv_ymap_check_unknown(r, err);
}

int sv_network_read(sv_ynode_t *root, sv_network_cfg_t *cfg, sv_error_t *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max = INFINITY;
    sv_ynode_t *n = sv_ymap_get(root, "network");
    if (!n || sv_yscalar_is_null(n)) return 0;
    int rc;
    char w[512];
    if ((rc = sv_yexpect_map(n, "network", err))) return rc;
    sv_ynode_t *r = sv_ymap_get(n, "rtt_ms");
    if ((!r || sv_yscalar_is_null(r)) && (rc = sv_ymap_check_unknown(n, err))) return rc;
    if (!r || sv_yscalar_is_null(r))
        return sv_errorf(err, SV_EINVAL, "%s: network: missing required key 'rtt_ms' (ms)",
                         sv_ynode_where(n, w, sizeof w));
    if ((rc = read_rtt(n, "network.rtt_ms", cfg, err))) return rc;
    return sv_ymap_check_unknown(n, err);
}

int sv_network_read_rtt(sv_ynode_t *map, const char *path, sv_network_cfg_t *cfg, sv_error_t *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max = INFINITY;
    sv_ynode_t *r = sv_ymap_get(map, "rtt_ms");
    if (!r || sv_yscalar_is_null(r)) return 0;
    return read_rtt(map, path, cfg, err);
}

sv_network_t *sv_network_new(const sv_network_cfg_t *cfg, uint64_t seed)
{
    sv_network_t *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->cfg = *cfg;
    n->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!n->rng) {
        free(n);
        return NULL;
    }
    gsl_rng_set(n->rng, (unsigned long)sv_stream_seed(seed, SV_STREAM_NETWORK));
    return n;
}

void sv_network_free(sv_network_t *n)
{
    if (!n) return;
    gsl_rng_free(n->rng);
    free(n);
}

double sv_network_rtt_of(sv_network_t *n, const sv_network_cfg_t *c)
{
    double x;
    switch (c->kind) {
    case SV_NET_UNIFORM:
        return c->min + (c->max - c->min) * gsl_rng_uniform(n->rng);
    case SV_NET_NORMAL:
        x = c->mean + gsl_ran_gaussian(n->rng, c->std);
        break;
    case SV_NET_LOGNORMAL: {
        /* mean and std of the RTT itself: sigma^2 = ln(1 + s^2/m^2), mu = ln m - sigma^2/2 */
        double s2 = log(1.0 + (c->std * c->std) / (c->mean * c->mean));
        x = gsl_ran_lognormal(n->rng, log(c->mean) - s2 / 2.0, sqrt(s2));
        break;
    }
    default:
        return c->value;
    }
    return fmin(fmax(x, c->min), c->max);
}
