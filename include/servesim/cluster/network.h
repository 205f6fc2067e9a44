/*
 * The network between the benchmark client and the server: a round trip (RTT) per
 * request, fixed or drawn from a distribution, which the client sees and the server does
 * not (docs/simulator.md, "Client and network").
 *
 * Half the RTT each way: a request sent at client time `start` reaches the router RTT/2
 * later (then router.latency_ms as before); every token the server makes reaches the
 * client RTT/2 after it was made. So TTFT and E2EL, measured at the client, grow by exactly
 * one RTT; TPOT and ITL (differences of token times) do not change. The client's
 * max_concurrency slot is freed when the last token arrives, RTT/2 after the server
 * finished. One RTT is drawn per request from the network's own random stream.
 *
 * A request class may have its own round trip (workload.classes[i].rtt_ms, a far client
 * in a region study): its requests draw from it instead of network.rtt_ms, on the same
 * stream; a class without one uses network.rtt_ms, or no RTT when there is none.
 *
 * Off unless the scenario has `network: {rtt_ms: ...}` or a class has rtt_ms; off,
 * nothing of this runs.
 *
 * Ownership: sv_network_new() returns a sampler freed with sv_network_free().
 */
#ifndef SERVESIM_NETWORK_H
#define SERVESIM_NETWORK_H

#include <stdint.h>

#include "servesim/base/error.h"
#include "servesim/base/yaml.h"

typedef enum { SV_NET_FIXED = 0, SV_NET_UNIFORM, SV_NET_NORMAL, SV_NET_LOGNORMAL } sv_net_kind_t;

typedef struct sv_network_cfg {
    int enabled;        /* the scenario has network.rtt_ms */
    sv_net_kind_t kind; /* rtt_ms: a number (fixed) or a map with dist */
    double value;       /* fixed, s */
    double mean, std;   /* normal, lognormal: of the RTT itself, s */
    double min, max;    /* uniform bounds; clamps of every draw (s; max INFINITY: none) */
} sv_network_cfg_t;

/* Read `network` (absent or null: disabled). rtt_ms is a number of ms >= 0, or a map
 * {dist: fixed|uniform|normal|lognormal, value, min, max, mean, std} in ms. */
int sv_network_read(sv_ynode_t *root, sv_network_cfg_t *cfg, sv_error_t *err);
/* Read key rtt_ms of map (a request class's own round trip, workload.classes[i].rtt_ms):
 * absent or null leaves cfg disabled; else as network.rtt_ms, errors naming `path`. */
int sv_network_read_rtt(sv_ynode_t *map, const char *path, sv_network_cfg_t *cfg, sv_error_t *err);

typedef struct sv_network sv_network_t;

/* A sampler on its own stream of the scenario seed. NULL when out of memory. */
sv_network_t *sv_network_new(const sv_network_cfg_t *cfg, uint64_t seed);
void sv_network_free(sv_network_t *n);
/* The next round trip drawn from cfg (a class's own rtt_ms) on n's stream, s (>= 0). */
double sv_network_rtt_of(sv_network_t *n, const sv_network_cfg_t *cfg);

/* The network's random stream (sv_stream_seed): apart from the workload's and router's. */
#define SV_STREAM_NETWORK 101

#endif
