/*
 * Scenario files: everything one simulated run needs, read from YAML with strict
 * validation (unknown keys, wrong types and out-of-range values are errors naming
 * file:line:column and the dotted key), with `--set dotted.key=value` overrides applied
 * to the tree before it is read. Every key is a row of the settings schema
 * (servesim/cluster/schema.h), which docs/scenarios.md's tables are generated from.
 *
 * Ownership: sv_scenario_load() returns a scenario freed with sv_scenario_free()
 * (NULL-safe); it owns its trace and empirical samples. It copies what it needs from the
 * catalog, which may be freed afterwards.
 */
#ifndef SERVESIM_SCENARIO_H
#define SERVESIM_SCENARIO_H

#include <stdint.h>

#include "servesim/cost/catalog.h"
#include "servesim/base/error.h"
#include "servesim/traffic/identity.h"
#include "servesim/metrics/metrics.h"
#include "servesim/cost/perf.h"
#include "servesim/cluster/finance.h"
#include "servesim/cluster/network.h"
#include "servesim/engine/replica.h"
#include "servesim/cluster/router.h"
#include "servesim/traffic/session.h"
#include "servesim/traffic/workload.h"

#define SV_MAX_POOLS 16
#define SV_MAX_INPUTS 4

typedef enum { SV_ROLE_COLOCATED = 0, SV_ROLE_PREFILL, SV_ROLE_DECODE } sv_role_t;
const char *sv_role_name(sv_role_t r);

/* The autoscaler of one pool (docs/autoscaling.md): every `interval` seconds it measures
 * the pool's active replicas and asks for ceil(replicas x measured / target) of them (as
 * Kubernetes' HPA), within [min, max]; up at once (each new replica serves after its cold
 * start), down only when every evaluation over `scale_down_delay` asked for fewer (and
 * then to the most they asked for). A replica scaled down drains: the router stops sending
 * to it and it is switched off once it holds nothing. */
typedef enum {
    SV_SCALE_QUEUE = 0, /* requests waiting (not yet running) per replica */
    SV_SCALE_INFLIGHT,  /* requests held (waiting + running) per replica */
    SV_SCALE_KV,        /* mean KV cache usage, 0..1 */
    SV_SCALE_TTFT       /* p90 TTFT (ms) of the requests that ended over the last window */
} sv_scale_policy_t;

typedef struct sv_autoscale_cfg {
    int enabled;
    sv_scale_policy_t policy;
    double target;
    int min, max, initial;
    double interval;         /* s between evaluations */
    double cold_start;       /* s from the decision to serving; < 0: weights / load_bw */
    double load_bw;          /* bytes/s each GPU reads its weights at */
    double scale_down_delay; /* s */
    double window;           /* s: the TTFT policy's window */
} sv_autoscale_cfg_t;

/* One pool of identical replicas: its GPU, parallelism, dtypes, engine settings. */
typedef struct sv_pool_cfg {
    char name[SV_NAME_MAX];
    sv_role_t role;
    sv_gpu_t gpu; /* price override applied */
    sv_perf_settings_t perf;
    sv_model_t draft_model; /* speculative: draft: perf.spec_model resolved */
    sv_engine_cfg_t engine;
    int replicas; /* with an autoscaler: its max (the replicas the simulator allocates) */
    sv_autoscale_cfg_t autoscale;
    int defaulted;         /* SV_DEFAULT_* bits: settings taken from vLLM's per-GPU defaults */
    int profile_defaulted; /* SV_PROFILE_* bits: settings taken from the engine profile's
                            * defaults for this pool's scheduler (models/engines.yaml) */
    int overlap_defaulted;         /* engine.overlap_schedule was not given (its default
                                    * follows the scheduler and speculative decoding) */
    char engine_name[SV_NAME_MAX]; /* `engine: NAME` or `engine.name` ("" = not named) */
    char engine_note[256];         /* scheduler and profile of different engines ("" = none) */
} sv_pool_cfg_t;

enum { SV_DEFAULT_MAX_NUM_SEQS = 1, SV_DEFAULT_MAX_BATCHED = 2 };
enum { SV_PROFILE_ASYNC = 1, SV_PROFILE_API_SERVER = 2 };

/* The link that carries KV caches from prefill to decode replicas (one per prefill
 * replica: its GPUs' share of the fabric). */
typedef struct sv_kvlink_cfg {
    char kind[32];     /* nvlink | infiniband | roce | ethernet | pcie */
    double bw_per_gpu; /* bytes/s one GPU sends at; a replica's link is tp times that */
    double latency;    /* s per transfer */
    int fifo;          /* 0 fair share, 1 one at a time */
    int overlap;       /* send layer by layer during the prefill */
} sv_kvlink_cfg_t;

typedef struct sv_scenario {
    char name[SV_NAME_MAX];
    char path[1024];
    uint64_t seed;
    sv_model_t model;
    sv_pool_cfg_t pools[SV_MAX_POOLS];
    int npools;
    int disaggregated;         /* prefill and decode pools */
    int first_token_at_decode; /* TTFT after the transfer and first decode step */
    int route;                 /* sv_route_t: requests to colocated or prefill replicas */
    int decode_route;          /* sv_route_t: prefilled requests to decode replicas */
    double router_latency;     /* s a request spends at the router */
    double handoff;            /* s: disaggregation.handoff_ms, added to every KV transfer */
    sv_kvlink_cfg_t link;
    int pools_listed;         /* the pools came from a `pools:` list (keys pools.N.*) */
    int disaggregation_given; /* a `disaggregation:` map was read */
    sv_workload_cfg_t workload;
    sv_shared_prefix_cfg_t shared_prefix; /* workload.shared_prefix */
    sv_mooncake_cfg_t mooncake;           /* workload.mooncake */
    sv_session_cfg_t sessions;            /* workload.sessions */
    long *emp_session[3];                 /* its empirical turns, think times, messages */
    sv_prompts_t *prompts;                /* a Mooncake trace's prompts (owned) */
    sv_trace_t *trace;
    int trace_borrowed; /* trace belongs to the sv_scenario_src_t this came from */
    long *emp_input, *emp_output;
    long *emp_class[SV_MAX_CLASSES][2]; /* empirical lengths of each class (input, output) */
    sv_metrics_cfg_t metrics;
    double horizon;           /* s; 0 = run until every request has ended */
    long cluster_gpus;        /* cluster_gpus: GPUs the workers may take; 0 = unbounded */
    int check;                /* --check: recount KV blocks and client slots at every step (slow) */
    sv_finance_cfg_t finance; /* `cost`: host power, PUE, energy price, GPU purchase */
    sv_network_cfg_t network; /* `network`: the client-server round trip */
    /* workload.classes[i].rtt_ms: class i's own round trip (enabled 0: network's, if any) */
    sv_network_cfg_t class_rtt[SV_MAX_CLASSES];
    int has_class_rtt; /* some class has its own rtt_ms */
    /* Files read besides the scenario itself (a model's config.json, the trace, empirical
     * length files), so that commands can refuse outputs that would overwrite them. */
    char inputs[SV_MAX_INPUTS][1024];
    int ninputs;
} sv_scenario_t;

int sv_scenario_load(const char *path, const char *const *sets, int nsets, const sv_catalog_t *cat,
                     sv_scenario_t **out, sv_error_t *err);
void sv_scenario_free(sv_scenario_t *sc);

/*
 * One scenario file parsed once, with base overrides, from which variants are built (a
 * sweep's points): each variant copies the parsed document, applies its own overrides to
 * the copy and reads it, exactly as sv_scenario_load() with the base and the variant's
 * overrides would; a trace the variants share is read once and lent to them.
 * Ownership: sv_scenario_src_free() releases the source and the traces it lent, so every
 * variant must be freed first.
 */
typedef struct sv_scenario_src sv_scenario_src_t;
int sv_scenario_src_open(const char *path, const char *const *sets, int nsets,
                         sv_scenario_src_t **out, sv_error_t *err);
int sv_scenario_src_load(sv_scenario_src_t *src, const char *const *sets, int nsets,
                         const sv_catalog_t *cat, sv_scenario_t **out, sv_error_t *err);
void sv_scenario_src_free(sv_scenario_src_t *src);

/* The rules that tie values of different sections together (pool roles and the split, the
 * KV link of a split, engine batch limits). The loader runs them on every
 * scenario it reads; code that edits a scenario (plan's candidates) runs them again.
 * 0, or SV_EINVAL with "KEY: what is wrong". */
int sv_scenario_validate(const sv_scenario_t *sc, sv_error_t *err);

/* After a loaded pool's hardware settings changed (servesim plan's layouts): the engine
 * defaults that follow them taken again (SGLang's overlap loop, off with MTP or EAGLE),
 * where the scenario left them unset. */
void sv_pool_hardware_changed(sv_pool_cfg_t *pool);

/* The defaults of a KV link kind (nvlink, infiniband, roce, ethernet, pcie) for a prefill
 * GPU: bandwidth per GPU and latency, fair sharing, no overlap. SV_EINVAL for another kind. */
int sv_kvlink_defaults(const char *kind, const sv_gpu_t *gpu, sv_kvlink_cfg_t *out);

#endif
