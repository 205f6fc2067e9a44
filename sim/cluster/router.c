/*
 * Routing policies (see include/servesim/cluster/router.h).
 */
#include "servesim/cluster/router.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "servesim/base/error.h"

const char *const sv_route_names[] = {
    "round-robin",     "random", "least-outstanding", "least-tokens", "kv-aware",
    "prefix-affinity", NULL};

int sv_route_parse(const char *s, sv_route_t *out)
{
    for (int i = 0; sv_route_names[i]; i++) {
        if (strcmp(s, sv_route_names[i]) == 0) {
            *out = (sv_route_t)i;
            return 0;
        }
    }
    return SV_ENOTFOUND;
}

int sv_router_init(sv_router_t *rt, sv_route_t policy, uint64_t seed)
{
    rt->policy = policy;
    rt->turn = 0;
    rt->rng = NULL;
    if (policy == SV_ROUTE_RANDOM) {
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        if (!r) return SV_ENOMEM;
        gsl_rng_set(r, (unsigned long)seed);
        rt->rng = r;
    }
    return 0;
}

void sv_router_free(sv_router_t *rt)
{
    if (rt->rng) gsl_rng_free(rt->rng);
    rt->rng = NULL;
}

/* The score each policy minimises. */
static double score(sv_route_t p, const sv_replica_t *r)
{
    switch (p) {
    case SV_ROUTE_LEAST_OUTSTANDING:
    case SV_ROUTE_PREFIX_AFFINITY:
        return (double)sv_replica_outstanding(r);
    case SV_ROUTE_LEAST_TOKENS:
        return (double)sv_replica_tokens_owed(r);
    case SV_ROUTE_KV_AWARE:
        return -(double)sv_replica_free_blocks(r);
    default:
        return 0.0;
    }
}

/* The load balance SGLang's cache-aware router keeps by default: past both, route by
 * load alone. */
#define BALANCE_ABS 8.0
#define BALANCE_REL 1.5

/* prefix-affinity: most cached prompt tokens, ties (and imbalance) by load. */
static int pick_affinity(sv_replica_t *const *reps, const int *cand, int ncand, int32_t req)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < ncand; i++) {
        double l = score(SV_ROUTE_LEAST_OUTSTANDING, reps[cand[i]]);
        lo = l < lo ? l : lo;
        hi = l > hi ? l : hi;
    }
    int balanced = !(hi - lo > BALANCE_ABS && hi > BALANCE_REL * lo);
    int best = 0;
    long best_hit = -1;
    double best_load = INFINITY;
    for (int i = 0; i < ncand; i++) {
        long hit = balanced && req >= 0 ? sv_replica_cached_prefix(reps[cand[i]], req) : 0;
        double l = score(SV_ROUTE_LEAST_OUTSTANDING, reps[cand[i]]);
        if (hit > best_hit || (hit == best_hit && l < best_load)) {
            best = i;
            best_hit = hit;
            best_load = l;
        }
    }
    return best;
}

int sv_router_pick(sv_router_t *rt, sv_replica_t *const *reps, const int *cand, int ncand,
                   int32_t req)
{
    if (ncand <= 1) return 0;
    if (rt->policy == SV_ROUTE_PREFIX_AFFINITY) return pick_affinity(reps, cand, ncand, req);
    switch (rt->policy) {
    case SV_ROUTE_ROUND_ROBIN:
        return (int)(rt->turn++ % (uint64_t)ncand);
    case SV_ROUTE_RANDOM:
        return (int)gsl_rng_uniform_int(rt->rng, (unsigned long)ncand);
    default:
        break;
    }
    int best = 0;
    if (rt->policy == SV_ROUTE_LEAST_OUTSTANDING) { /* (the common case, its loop unswitched) */
        long bl = sv_replica_outstanding(reps[cand[0]]);
        for (int i = 1; i < ncand; i++) {
            long l = sv_replica_outstanding(reps[cand[i]]);
            if (l < bl) {
                bl = l;
                best = i;
            }
        }
        return best;
    }
    double bs = score(rt->policy, reps[cand[0]]);
    for (int i = 1; i < ncand; i++) {
        double s = score(rt->policy, reps[cand[i]]);
        if (s < bs) {
            bs = s;
            best = i;
        }
    }
    return best;
}
