/*
 * The router in front of a set of replicas: picks one replica for each request.
 *
 * Policies (by name):
 *   round-robin        the candidates in turn;
 *   random             uniformly at random (the router's own seeded stream);
 *   least-outstanding  fewest requests in flight (running + waiting);
 *   least-tokens       fewest tokens of work owed (prompt tokens not yet prefilled plus
 *                      output tokens not yet generated);
 *   kv-aware           most free KV blocks;
 *   prefix-affinity    the replica whose prefix cache holds the longest start of the
 *                      request's prompt, unless the load is out of balance (the busiest
 *                      candidate has more than 8 requests more than the least busy, and
 *                      over 1.5 times as many), then least-outstanding; ties by load (as
 *                      SGLang's cache-aware router and llm-d's prefix scorer do).
 * Ties go to the lowest candidate index, so every policy is deterministic under a seed.
 *
 * Ownership: sv_router_init() fills caller storage and allocates a generator released
 * by sv_router_free(). The router only reads the replicas it is shown.
 */
#ifndef SERVESIM_ROUTER_H
#define SERVESIM_ROUTER_H

#include <stdint.h>

#include "servesim/engine/replica.h"

typedef enum {
    SV_ROUTE_ROUND_ROBIN = 0,
    SV_ROUTE_RANDOM,
    SV_ROUTE_LEAST_OUTSTANDING,
    SV_ROUTE_LEAST_TOKENS,
    SV_ROUTE_KV_AWARE,
    SV_ROUTE_PREFIX_AFFINITY,
    SV_ROUTE_COUNT
} sv_route_t;

/* NULL-terminated policy names, in sv_route_t order. */
extern const char *const sv_route_names[];
int sv_route_parse(const char *s, sv_route_t *out);

typedef struct sv_router {
    sv_route_t policy;
    uint64_t turn;
    void *rng; /* gsl_rng for the random policy */
} sv_router_t;

int sv_router_init(sv_router_t *rt, sv_route_t policy, uint64_t seed);
void sv_router_free(sv_router_t *rt);

/* Index into cand[] of the chosen replica for request req (0 <= result < ncand); ncand
 * must be > 0. */
int sv_router_pick(sv_router_t *rt, sv_replica_t *const *reps, const int *cand, int ncand,
                   int32_t req);

#endif
