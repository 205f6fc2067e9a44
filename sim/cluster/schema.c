/*
 * The settings schema (see include/servesim/cluster/schema.h): the one table of scenario
 * keys, its reader, the printers of `servesim help keys` and of docs/scenarios.md's key
 * tables, and vLLM's per-GPU batch defaults as a table.
 */
#include "servesim/cluster/schema.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "servesim/cluster/scenario.h"
#include "servesim/engine/replica.h"

/* The names each enumerated key accepts, and what they stand for. */
static const sv_yenum_t preemption_names[] = {{"recompute", 0}, {"swap", 1}};
static const sv_yenum_t policy_names[] = {{"fcfs", 0}, {"priority", 1}};
static const sv_yenum_t shape_names[] = {{"chain", SV_SESSION_CHAIN},
                                         {"fanout", SV_SESSION_FANOUT}};
static const sv_yenum_t role_names[] = {
    {"colocated", SV_ROLE_COLOCATED}, {"prefill", SV_ROLE_PREFILL}, {"decode", SV_ROLE_DECODE}};
static const sv_yenum_t first_token_names[] = {{"prefill", 0}, {"decode", 1}};
static const sv_yenum_t sharing_names[] = {{"fair", 0}, {"fifo", 1}};
static const sv_yenum_t dist_names[] = {{"fixed", SV_LEN_FIXED},
                                        {"uniform", SV_LEN_UNIFORM},
                                        {"normal", SV_LEN_NORMAL},
                                        {"lognormal", SV_LEN_LOGNORMAL},
                                        {"empirical", SV_LEN_EMPIRICAL}};
static const sv_yenum_t profile_names[] = {
    {"steps", SV_PROFILE_STEPS}, {"linear", SV_PROFILE_LINEAR}, {"diurnal", SV_PROFILE_DIURNAL}};
static const sv_yenum_t scale_policy_names[] = {{"queue", SV_SCALE_QUEUE},
                                                {"inflight", SV_SCALE_INFLIGHT},
                                                {"kv", SV_SCALE_KV},
                                                {"ttft_p90", SV_SCALE_TTFT}};

/* The schedulers' names ("vllm, vllm-v0, ... or trtllm"), from the engine's table. */
static const char *sched_list(char *buf, size_t n)
{
    sv_yenum_t names[SV_SCHED_COUNT];
    for (int i = 0; i < SV_SCHED_COUNT; i++)
        names[i] = (sv_yenum_t){sv_sched_name((sv_sched_t)i), i};
    return sv_yenum_list(names, SV_SCHED_COUNT, buf, n);
}

/* The engines' names ("vllm, vllm-v1, ... or trtllm"), from sv_engine_choices. */
static const char *engine_list(char *buf, size_t n)
{
    sv_yenum_t names[16];
    int k = 0;
    for (const sv_engine_choice_t *c = sv_engine_choices; c->name && k < 16; c++) {
        names[k] = (sv_yenum_t){c->name, k};
        k++;
    }
    return sv_yenum_list(names, k, buf, n);
}

#define NAMES(t) .names = t, .nnames = (int)(sizeof t / sizeof t[0])
/* The field a row fills, as a member of the struct its section's reader passes. */
#define FIELD(type, m) .offset = offsetof(type, m), .size = sizeof(((type *)0)->m)
#define POOL(m) FIELD(sv_pool_cfg_t, m)
#define SC(m) FIELD(sv_scenario_t, m)
#define RANGE(a, b) .lo = (a), .hi = (b)
#define INT SV_KEY_INT
#define NUM SV_KEY_NUM
#define BOOL SV_KEY_BOOL
#define TEXT SV_KEY_TEXT
#define ENUM SV_KEY_ENUM
#define COST SV_KEY_COST
#define CUSTOM SV_KEY_CUSTOM

/*
 * Sections and the struct their reader passes to sv__keys_read: "cost" and
 * "cost.gpu_purchase": sv_finance_cfg_t (sim/cluster/finance.c); "" and "router":
 * sv_scenario_t; "hardware" and "engine": sv_pool_cfg_t; "autoscaler": sv_autoscale_cfg_t;
 * "workload": sv_workload_cfg_t; "workload.trace": sv_trace_cfg_t; "workload.mooncake":
 * sv_mooncake_cfg_t; "workload.shared_prefix": sv_shared_prefix_cfg_t; "workload.sessions":
 * sv_session_cfg_t; "workload.rate_profile": sv_rate_profile_t; "workload.rate_profile.spikes":
 * sv_spike_t; "length": sv_lendist_t; "disaggregation.kv_link": sv_kvlink_cfg_t; "metrics":
 * sv_metrics_cfg_t. The order of a section's rows is the order its keys are read in, which
 * is also the order an unknown-key message lists them.
 */
const sv_keydef_t sv_scenario_keys[] = {
    /* The top level. */
    {"", "name", TEXT, SC(name), .unit = "text", .def = "file name",
     .help = "label of the run (`label` in the JSON)"},
    {"", "seed", CUSTOM, .unit = "integer >= 0", .def = "0",
     .help = "the scenario seed; each random stream (arrivals, input lengths, output lengths) "
             "gets its own generator seeded from it"},
    {"", "model", CUSTOM, .required = 1, .unit = "text",
     .help = "a catalog name (`servesim list models`) or a path to a Hugging Face `config.json`"},
    {"", "pools", CUSTOM, .unit = "list of maps",
     .help = "instead of `hardware`/`engine`: several pools, each with its own GPU, TP, dtypes, "
             "engine and price (below)"},
    {"", "hardware", CUSTOM, .unit = "map", .def = "required unless `pools`",
     .help = "one pool of identical replicas (below)"},
    {"", "engine", CUSTOM, .unit = "map", .def = "defaults below",
     .help = "that pool's engine settings (below)"},
    {"", "router", CUSTOM, .unit = "policy name, or map", .def = "`round-robin`",
     .help = "how requests are spread over replicas (below)"},
    {"", "disaggregation", CUSTOM, .unit = "map", .def = "defaults below",
     .help = "with prefill and decode pools: the hand-off and the KV link (below)"},
    {"", "workload", CUSTOM, .required = 1, .unit = "map", .help = "below"},
    {"", "slo", CUSTOM, .unit = "map", .def = "none", .help = "below"},
    {"", "metrics", CUSTOM, .unit = "map", .def = "defaults below", .help = "below"},
    {"", "cost", CUSTOM, .unit = "map", .def = "none",
     .help = "cost and energy as finance sees them: host power, PUE, energy price, GPU purchase "
             "(below, docs/cost.md)"},
    {"", "network", CUSTOM, .unit = "map", .def = "none",
     .help = "`rtt_ms`: the client-server round trip, ms (a number or a distribution map as the "
             "lengths take: `dist: fixed\\|uniform\\|normal\\|lognormal`, `value`, `min`, `max`, "
             "`mean`, `std`); TTFT and E2EL grow by it, TPOT and ITL do not (docs/simulator.md, "
             "\"Client and network\"); a request class may give its own "
             "(`workload.classes[i].rtt_ms`, docs/contracts.md)"},
    {"", "horizon_s", NUM, .group = 1, RANGE(1e-9, 1e12), SC(horizon), .unit = "seconds",
     .def = "none",
     .help = "stop the run at this simulated time; requests still in flight fail as "
             "`unfinished`"},
    {"", "cluster_gpus", INT, .group = 1, RANGE(1, 1L << 24), SC(cluster_gpus), .unit = "GPUs",
     .def = "unbounded",
     .help = "GPUs the cluster has (a GB200 NVL72 rack: 72): every pool's workers (replicas, "
             "an autoscaled pool's max_replicas, x tp x pp GPUs each) must fit in them "
             "(docs/disaggregation.md)"},
    {"", "autoscaler", CUSTOM, .unit = "map", .def = "none",
     .help = "scale every pool's replicas with the load (below)"},
    {"", "plan", CUSTOM, .unit = "map", .def = "none",
     .help = "search space of `servesim plan` (below)"},
    {"", "sweep", CUSTOM, .unit = "map", .def = "none",
     .help = "default grid of `servesim sweep` (below)"},

    /* hardware (and every pool): the GPU, then the cost-model settings, then the rest. */
    {"hardware", "gpu", CUSTOM, .required = 1, .unit = "name",
     .help = "a catalog GPU (`servesim list gpus`)"},
    {"hardware", "replicas", INT, RANGE(1, 100000), POOL(replicas), .unit = "integer", .def = "1",
     .help = "identical replicas of this pool"},
    {"hardware", "tp", COST, POOL(perf), .unit = "integer", .def = "1",
     .help = "tensor-parallel degree of one replica"},
    {"hardware", "pp", COST, POOL(perf), .unit = "integer", .def = "1",
     .help = "pipeline-parallel stages of one replica (docs/cost-model.md)"},
    {"hardware", "pp_layer_partition", COST, POOL(perf), .unit = "list",
     .def = "vLLM's split",
     .help = "the layers of each pipeline stage, first stage first, as vLLM's "
             "VLLM_PP_LAYER_PARTITION takes them ('31,30'); unset, layers/pp each and the "
             "remainder one each to the stages before the last (docs/cost-model.md)"},
    {"hardware", "power_limit_w", COST, POOL(perf), .unit = "W", .def = "none (the TDP)",
     .help = "the GPUs' board power cap (`nvidia-smi -pl`), from a quarter of the catalog's "
             "`tdp_w` to it: tensor-core throughput scales by (cap / TDP)^0.736, memory "
             "bandwidth is kept (docs/cost-model.md, \"Power limits\")"},
    {"hardware", "ep", COST, POOL(perf), .unit = "integer", .def = "1",
     .help = "expert-parallel ranks among the tp GPUs, dividing the routed experts "
             "(docs/cost-model.md)"},
    {"hardware", "dp_attention", COST, POOL(perf), .unit = "integer", .def = "1",
     .help = "attention data-parallel ranks among the tp GPUs: each holds its own sequences and "
             "KV, attention at TP tp/dp_attention"},
    {"hardware", "ep_redundant_experts", COST, POOL(perf), .unit = "integer", .def = "0",
     .help = "extra copies of routed experts over the EP ranks (EPLB; SGLang's "
             "--ep-num-redundant-experts): experts + copies divide by ep, each rank holds "
             "(experts + copies) / ep of them (docs/cost-model.md)"},
    {"hardware", "ep_kernel", COST, POOL(perf), .unit = "auto \\| low_latency \\| high_throughput",
     .def = "auto", .help = "DeepEP dispatch/combine kernels (auto: low-latency for decode steps)"},
    {"hardware", "pp_link_bandwidth_gb_s", COST, POOL(perf), .unit = "GB/s",
     .def = "50 (off the NVLink domain)",
     .help = "the link between pipeline stages that are not in one NVLink domain"},
    {"hardware", "weight_dtype", COST, POOL(perf),
     .unit = "bf16 \\| fp16 \\| fp8 \\| int4 \\| nvfp4 \\| mxfp4", .def = "bf16",
     .help = "weight precision"},
    {"hardware", "kv_cache_dtype", COST, POOL(perf),
     .unit = "bf16 \\| fp16 \\| fp8 \\| nvfp4 \\| mxfp4", .def = "bf16",
     .help = "KV cache precision"},
    {"hardware", "compute_efficiency", COST, POOL(perf), .unit = "0..1",
     .def = "GPU catalog (0.7435, fitted)", .help = "large-GEMM achieved / peak FLOP/s"},
    {"hardware", "memory_efficiency", COST, POOL(perf), .unit = "0..1",
     .def = "GPU catalog (0.8035, fitted)", .help = "weight reads: achieved / peak HBM bandwidth"},
    {"hardware", "iteration_overhead_ms", COST, POOL(perf), .unit = "ms",
     .def = "engine profile (vllm 1.5)", .help = "fixed cost per engine step"},
    {"hardware", "layer_overhead_us", COST, POOL(perf), .unit = "us",
     .def = "engine profile (vllm 8)",
     .help = "launch cost per layer in a step that is not a CUDA graph"},
    {"hardware", "link_bandwidth_gb_s", COST, POOL(perf), .unit = "GB/s", .def = "GPU catalog",
     .help = "scale-up link, bidirectional per GPU (TP all-reduces)"},
    {"hardware", "link_latency_us", COST, POOL(perf), .unit = "us",
     .def = "engine profile (vllm 15) or GPU catalog",
     .help = "latency of the custom one-shot all-reduce (of NCCL's ring without one)"},
    {"hardware", "gpu_memory_utilization", COST, POOL(perf), .unit = "0..1", .def = "0.9",
     .help = "share of device memory the engine may use (vLLM's flag)"},
    {"hardware", "activation_reserve_gb", COST, POOL(perf), .unit = "GB", .def = "estimated",
     .help = "memory kept for activations (docs/cost-model.md)"},
    {"hardware", "seq_overhead_us", COST, POOL(perf), .unit = "us",
     .def = "engine profile (vllm 20)", .help = "engine cost per sequence per step"},
    {"hardware", "cuda_graphs", COST, POOL(perf), .unit = "bool",
     .def = "engine profile (vllm true)",
     .help = "steps up to `graph_max_tokens` tokens replay a CUDA graph"},
    {"hardware", "custom_allreduce", COST, POOL(perf), .unit = "bool",
     .def = "engine profile (vllm true)",
     .help = "TP all-reduces run the engine's one-/two-shot kernel up to 8 MiB, else NCCL"},
    {"hardware", "nccl_nvls", COST, POOL(perf), .unit = "bool",
     .def = "engine profile (vllm true)",
     .help = "NCCL may run its NVLink SHARP all-reduce on NVSwitch nodes of NVLink 4 and later"},
    {"hardware", "graph_max_tokens", COST, POOL(perf), .unit = "tokens",
     .def = "engine profile (vllm 512)", .help = "the largest step a CUDA graph covers"},
    {"hardware", "speculative", COST, POOL(perf), .unit = "none \\| mtp \\| eagle \\| draft",
     .def = "none",
     .help = "speculative decoding: MTP (the model's next-n layers), an EAGLE head or a draft "
             "model (`speculative_model`; docs/simulator.md)"},
    {"hardware", "speculative_model", COST, POOL(perf), .unit = "model name or config.json",
     .def = "none",
     .help = "speculative: draft: the draft model, run whole on the pool's GPUs at its TP "
             "(vLLM's speculative-config `model`, SGLang's STANDALONE draft; docs/cost-model.md)"},
    {"hardware", "num_speculative_tokens", COST, POOL(perf), .unit = "1..16", .def = "3",
     .help = "draft tokens per step (k); each verify step runs k + 1 tokens per sequence"},
    {"hardware", "spec_acceptance", COST, POOL(perf), .unit = "rates in [0, 1], comma-separated",
     .def = "mtp 0.85 then 0.62; eagle 0.8; draft: required",
     .help = "acceptance per draft position given the one before accepted (one rate: every "
             "position; docs/cost-model.md)"},
    {"hardware", "spec_draft_step_us", COST, POOL(perf), .unit = "us", .def = "0",
     .help = "engine cost per draft step besides its layer and LM head"},
    {"hardware", "spec_sampling", COST, POOL(perf), .unit = "sampled \\| expected",
     .def = "sampled",
     .help = "sampled: each verify step draws every sequence's accepted drafts from its own "
             "stream; expected: every sequence emits tau tokens a verify step "
             "(docs/cost-model.md)"},
    {"hardware", "gemm_m_half_tokens", COST, POOL(perf), .def = "GPU catalog",
     .help = "GEMM efficiency curve: tokens at half efficiency (docs/cost-model.md)"},
    {"hardware", "gemm_floor_us", COST, POOL(perf), .unit = "us", .def = "GPU catalog",
     .help = "shortest GEMM (docs/cost-model.md)"},
    {"hardware", "small_op_efficiency", COST, POOL(perf), .unit = "0..1", .def = "GPU catalog",
     .help = "element-wise operations: achieved / peak HBM bandwidth (docs/cost-model.md)"},
    {"hardware", "small_op_floor_us", COST, POOL(perf), .unit = "us", .def = "GPU catalog",
     .help = "shortest element-wise operation (docs/cost-model.md)"},
    {"hardware", "attention_efficiency", COST, POOL(perf), .unit = "0..1", .def = "GPU catalog",
     .help = "prefill attention: achieved / peak FLOP/s (docs/cost-model.md)"},
    {"hardware", "attention_n_half_tokens", COST, POOL(perf), .def = "GPU catalog",
     .help = "attention efficiency curve: tokens at half efficiency (docs/cost-model.md)"},
    {"hardware", "attention_memory_efficiency", COST, POOL(perf), .unit = "0..1",
     .def = "GPU catalog",
     .help = "decode attention: achieved / peak HBM bandwidth (docs/cost-model.md)"},
    {"hardware", "attention_seq_us", COST, POOL(perf), .unit = "us", .def = "GPU catalog",
     .help = "attention cost per sequence in a step (docs/cost-model.md)"},
    {"hardware", "link_efficiency", COST, POOL(perf), .unit = "0..1", .def = "GPU catalog",
     .help = "all-reduce: achieved / peak link bandwidth (docs/cost-model.md)"},
    {"hardware", "link_latency_per_rank_us", COST, POOL(perf), .unit = "us", .def = "GPU catalog",
     .help = "all-reduce latency added per rank (docs/cost-model.md)"},
    {"hardware", "p2p_latency_us", COST, POOL(perf), .unit = "us", .def = "GPU catalog",
     .help = "latency of one point-to-point transfer between stages (docs/cost-model.md)"},
    {"hardware", "norm_efficiency", COST, POOL(perf), .unit = "0..1", .def = "GPU catalog",
     .help = "normalisation layers: achieved / peak HBM bandwidth (docs/cost-model.md)"},
    {"hardware", "grouped_gemm_efficiency", COST, POOL(perf), .unit = "0..1",
     .def = "GPU catalog",
     .help = "MoE expert GEMMs: achieved / a dense GEMM's rate and weight bandwidth "
             "(docs/cost-model.md)"},
    {"hardware", "mla_attention_efficiency", COST, POOL(perf), .unit = "0..1",
     .def = "GPU catalog",
     .help = "MLA attention kernels: achieved / flash and paged attention's (docs/cost-model.md)"},
    {"hardware", "mla_prefill_efficiency", COST, POOL(perf), .unit = "0..1",
     .def = "GPU catalog",
     .help = "MLA context-phase (prefill) attention: achieved / the decode MLA kernels' rate "
             "(docs/cost-model.md)"},
    {"hardware", "prefill_efficiency", COST, POOL(perf), .unit = "0..1",
     .def = "engine profile, else 1",
     .help = "the engine's context phase: what a step's prompt tokens add to its GPU time, "
             "over its decodes alone, takes 1 / this as long (docs/cost-model.md)"},
    {"hardware", "prefill_request_overhead_ms", COST, POOL(perf), .unit = "ms",
     .def = "engine profile, else 0",
     .help = "engine time per prompt in a step, for engines that run steps with prompts "
             "eagerly (CUDA graphs for decode batches only); 0: the step follows cuda_graphs "
             "and graph_max_tokens (docs/cost-model.md)"},
    {"hardware", "moe_imbalance", COST, POOL(perf), .unit = ">= 1", .def = "GPU catalog",
     .help = "MoE: the busiest expert's tokens / the mean (scales the expert GEMMs' compute; "
             "docs/cost-model.md)"},
    {"hardware", "grouped_gemm_n_half_experts", COST, POOL(perf), .unit = ">= 0",
     .def = "GPU catalog",
     .help = "MoE: routed experts a rank's grouped GEMM touches per layer at half of "
             "grouped_gemm_efficiency (0 = flat; docs/cost-model.md)"},
    {"hardware", "price_per_hour_usd", NUM, .group = 1, RANGE(0, 1e6), POOL(gpu.price_per_hour),
     .unit = "USD", .def = "GPU catalog", .help = "rental price per GPU-hour, for cost per token"},

    /* pools: each item takes every hardware key too. */
    {"pools", "name", CUSTOM, .unit = "text", .def = "`pool<i>`",
     .help = "unique name, used in reports and errors"},
    {"pools", "role", ENUM, NAMES(role_names), POOL(role), .def = "colocated",
     .help = "`colocated` (prefill and decode on the same replicas), `prefill` or `decode`"},
    {"pools", "engine", CUSTOM, .unit = "map", .def = "defaults",
     .help = "this pool's `engine` map (below)"},
    {"pools", "autoscaler", CUSTOM, .unit = "map", .def = "the top-level one",
     .help = "this pool's own `autoscaler` map (below)"},

    /* router (when a map). */
    {"router", "policy", CUSTOM, .unit = "policy name", .def = "`round-robin`",
     .help = "`round-robin`; `random` (its own seeded stream); `least-outstanding` (fewest "
             "running + waiting + arriving requests); `least-tokens` (fewest tokens owed: prompt "
             "tokens not yet prefilled plus output tokens not yet generated); `kv-aware` (most "
             "free KV blocks); `prefix-affinity` (the replica caching the longest start of the "
             "prompt, by load when out of balance; docs/prefix-caching.md). Ties go to the "
             "lowest replica index"},
    {"router", "latency_ms", NUM, RANGE(0, 1e6), .scale = 1e-3, SC(router_latency), .unit = "ms",
     .def = "0",
     .help = "time a request spends at the router before it reaches a replica; it is part of "
             "TTFT and of queue time"},

    /* disaggregation */
    {"disaggregation", "first_token", ENUM, NAMES(first_token_names), SC(first_token_at_decode),
     .def = "prefill",
     .help = "`prefill`: TTFT ends with the prefill (DistServe's definition); `decode`: the "
             "first token is streamed by the decode replica, after the KV transfer and its first "
             "decode step"},
    {"disaggregation", "decode_router", CUSTOM, .unit = "policy name", .def = "`least-outstanding`",
     .help = "policy choosing the decode replica for each prefilled request, among those with "
             "room"},
    {"disaggregation", "handoff_ms", NUM, RANGE(0, 1e6), .scale = 1e-3, SC(handoff), .unit = "ms",
     .def = "0",
     .help = "fixed time of each request's hand-off beyond the bytes: the engines' and the "
             "framework's exchange between the two sides (bootstrap, pre-allocation, the "
             "transfer's completion seen by the decode loop); added to the KV transfer's "
             "latency, with the KV held on the prefill replica and the room reserved on the "
             "decode replica meanwhile (docs/disaggregation.md, \"The hand-off's fixed cost\")"},
    {"disaggregation", "kv_link", CUSTOM, .unit = "map", .def = "infiniband", .help = "below"},
    {"disaggregation.kv_link", "kind", CUSTOM, .unit = "name", .def = "`infiniband`",
     .help = "`nvlink` (same node: half the GPU's NVLink figure, 5 us), `infiniband` (NDR 400 "
             "Gb/s: 50 GB/s per GPU, 10 us), `roce` (400 GbE: 50 GB/s, 20 us), `ethernet` (100 "
             "GbE: 12.5 GB/s, 50 us), `pcie` (through host memory: 50 GB/s, 10 us)"},
    {"disaggregation.kv_link", "bandwidth_gb_s", CUSTOM, .unit = "GB/s > 0", .def = "by kind",
     .help = "bandwidth per GPU"},
    {"disaggregation.kv_link", "latency_us", CUSTOM, .unit = "us", .def = "by kind",
     .help = "fixed latency of each transfer"},
    {"disaggregation.kv_link", "sharing", ENUM, NAMES(sharing_names), FIELD(sv_kvlink_cfg_t, fifo),
     .def = "fair",
     .help = "concurrent transfers on one link: `fair` (each gets bandwidth / n) or `fifo` (one "
             "at a time)"},
    {"disaggregation.kv_link", "overlap", BOOL, FIELD(sv_kvlink_cfg_t, overlap), .def = "false",
     .help = "send layer by layer during the prefill: after it, only the last layer's share (or "
             "what the link could not move in time) remains"},

    /* engine: its name, the scheduler, then every other key in one group. */
    {"engine", "name", CUSTOM, .list = engine_list, .def = "vllm",
     .help = "the serving engine: sets `scheduler` and `profile` together (`engine: NAME` "
             "alone says the same); keys given beside it override it, and a scheduler and a "
             "profile of different engines are run as given, with a note in the summary and "
             "the JSON (docs/scenarios.md, \"Engines\")"},
    {"engine", "scheduler", CUSTOM, .list = sched_list, .def = "the engine's (vllm)",
     .help = "docs/simulator.md describes each"},
    {"engine", "max_num_seqs", INT, RANGE(1, 1 << 20), POOL(engine.max_num_seqs), .unit = "integer",
     .def = "vLLM's per GPU (below)", .help = "most sequences in one step"},
    {"engine", "max_num_batched_tokens", COST, POOL(perf), .unit = "tokens",
     .def = "vLLM's per GPU (below)",
     .help = "token budget of one step; for vllm it must be >= max_num_seqs"},
    {"engine", "block_size", COST, POOL(perf), .unit = "tokens", .def = "16",
     .help = "KV cache block (page) size"},
    {"engine", "preemption", ENUM, NAMES(preemption_names), POOL(engine.preempt_swap),
     .def = "recompute",
     .help = "what happens to a preempted sequence's KV; `swap` is vLLM V0's option (not with "
             "`vllm`: V1 only recomputes)"},
    {"engine", "profile", TEXT, POOL(perf.engine), .unit = "name", .def = "the engine's (vllm)",
     .help = "engine profile from `models/engines.yaml` (`vllm`, `trtllm`, `trtllm-pytorch`, "
             "`sglang`, `eager`): what the engine adds to each step (docs/cost-model.md); the "
             "`hardware` keys above override its values"},
    {"engine", "scheduling_policy", ENUM, NAMES(policy_names), POOL(engine.priority_policy),
     .def = "fcfs",
     .help = "vLLM's `--scheduling-policy`: `priority` admits waiting requests by (priority, "
             "arrival) and preempts the running request with the largest (priority, arrival) "
             "instead of the last admitted (among requests sent together, the latest to arrive); "
             "priorities come from `workload.classes` (docs/contracts.md)"},
    {"engine", "swap_bandwidth_gb_s", NUM, RANGE(1e-3, 1e5), .scale = 1e9, POOL(engine.swap_bw),
     .unit = "GB/s", .def = "25", .help = "device-host bandwidth per GPU for swapping"},
    {"engine", "watermark", NUM, RANGE(0, 0.5), POOL(engine.watermark),
     .def = "0 for vllm, 0.01 otherwise",
     .help = "share of KV blocks kept free when admitting a request (V0's block manager; the V1 "
             "scheduler keeps none)"},
    {"engine", "max_model_len", INT, RANGE(1, 1L << 30), POOL(engine.max_model_len),
     .unit = "tokens", .def = "min(model context, KV capacity)",
     .help = "longest input + output accepted; longer requests fail at once (`too_long`)"},
    {"engine", "max_queue", INT, RANGE(1, 1L << 30), POOL(engine.max_queue), .unit = "integer",
     .def = "unbounded",
     .help = "waiting requests per replica beyond which an arrival fails at once (`queue_full`, "
             "like HTTP 429)"},
    {"engine", "long_prefill_token_threshold", INT, RANGE(0, 1L << 30),
     POOL(engine.long_prefill_threshold), .unit = "tokens", .def = "0 (none)",
     .help = "vllm and trtllm only: most prompt tokens of one request in one step (vLLM's flag "
             "of the same name)"},
    {"engine", "max_num_partial_prefills", INT, RANGE(1, 1L << 20),
     POOL(engine.max_partial_prefills), .unit = "integer", .def = "no limit",
     .help = "vllm: only 1, V1's default, which its scheduler never reads (vLLM V1 refuses "
             "other values); trtllm: most prompts being prefilled at once (vLLM V0's meaning), "
             "and above 1 with no threshold the threshold becomes 4% of `max_model_len`, as vLLM "
             "sets it"},
    {"engine", "enable_prefix_caching", BOOL, POOL(engine.prefix_caching),
     .def = "true for vllm, false otherwise",
     .help = "automatic prefix caching (docs/prefix-caching.md); it acts only when prompts have "
             "identity (`shared_prefix`, `mooncake`, `sessions`)"},
    {"engine", "num_scheduler_steps", COST, POOL(perf), .unit = "integer", .def = "1",
     .help = "vllm-v0 only (vLLM 0.6-0.7's `--num-scheduler-steps`): decode steps per "
             "scheduling round; a round pays the profile's per-step and per-sequence cost "
             "once, hands out its up to n tokens a sequence as one chunk at its end, and new "
             "requests are admitted only between rounds (docs/cost-model.md, \"Multi-step "
             "scheduling\")"},
    {"engine", "async_scheduling", BOOL, POOL(engine.async_scheduling),
     .def = "true with scheduler and profile vllm (current vLLM) and pp 1, else false",
     .help = "the CPU schedules step n+1 while the GPU runs step n (vLLM's "
             "`--async-scheduling`, `EngineCore.step_with_batch_queue`): a step takes max(GPU "
             "work, the engine profile's per-step and per-sequence CPU cost) instead of their "
             "sum, and step n+1 is built before step n's outputs are back, so a request arriving "
             "during step n waits for step n+2 and one finishing in step n keeps its slot and KV "
             "blocks while step n+1 is built; the default is the engine profile's "
             "`scheduler_defaults` (docs/simulator.md)"},
    {"engine", "overlap_schedule", BOOL, POOL(engine.overlap_schedule),
     .def = "true for sglang without speculative decoding at pp 1, false otherwise",
     .help = "the engine launches step n+1 before it reads step n's outputs (SGLang's default "
             "overlap loop, `--disable-overlap-schedule` to turn it off, off with MTP or EAGLE "
             "unless SGLANG_ENABLE_SPEC_V2 is set; TensorRT-LLM's PyTorch "
             "overlap scheduler, on by default there, `disable_overlap_scheduler`): the one-step "
             "lag of `async_scheduling` (a request arriving during step n waits for step n+2, a "
             "finished one's slot and blocks are freed a step late) with the profile's step "
             "costs left whole (docs/simulator.md)"},
    {"engine", "chunked_prefill", BOOL, POOL(engine.chunked_prefill), .def = "true",
     .help = "trtllm only: TensorRT-LLM's chunked context (`enable_chunked_context`; false by "
             "default in its C++ executor and its LLM API, `enable_chunked_prefill`): with "
             "`false` a prompt goes whole into one step, and only when it fits what the step's "
             "token budget has left; a prompt longer than the budget fails (`prompt_budget`) "
             "(docs/simulator.md)"},
    {"engine", "ignore_eos", BOOL, POOL(engine.ignore_eos), .def = "false",
     .help = "the clients send `ignore_eos` (vLLM's benchmark `--ignore-eos`), so every request "
             "is known to generate exactly its output: the `sglang` scheduler's admission then "
             "checks that the running and admitted requests can all finish in the KV left "
             "(SGLang's `add_one_req_ignore_eos`, taken when the radix cache is off) instead "
             "of reserving the new-token ratio of their remaining output (docs/simulator.md)"},
    {"engine", "api_server_ms", NUM, RANGE(0, 1e6), .scale = 1e-3, POOL(engine.api_server),
     .unit = "ms", .def = "12 with scheduler and profile vllm, else 0",
     .help = "time from a request reaching the replica's server to its engine core's input "
             "queue (vLLM's API server: HTTP, tokenisation, the hand-over to EngineCore); part "
             "of TTFT, and in a closed loop the gap before a replacement can join a step; the "
             "default is the engine profile's `scheduler_defaults` (docs/simulator.md)"},

    {"engine", "attention_dp_balance", BOOL, POOL(engine.adp_balance), .def = "false",
     .help = "trtllm with `hardware.dp_attention` > 1 only: TensorRT-LLM's attention-DP "
             "balancing (`attention_dp_config.enable_balance`, off by default there): a step "
             "schedules context requests only when every rank can take one, else holds them "
             "until `attention_dp_timeout_iters` steps pass or some rank has no decode "
             "(docs/simulator.md)"},
    {"engine", "attention_dp_timeout_iters", INT, RANGE(0, 1L << 30),
     POOL(engine.adp_timeout_iters), .unit = "steps", .def = "50",
     .help = "with `attention_dp_balance`: most steps context requests are held for want of "
             "a context on every rank (TensorRT-LLM's `attention_dp_config.timeout_iters`)"},
    {"engine", "attention_dp_batching_wait_iters", INT, RANGE(0, 1L << 30),
     POOL(engine.adp_batching_wait_iters), .unit = "steps", .def = "10",
     .help = "with `attention_dp_balance`: steps context requests wait once every rank has "
             "one and every rank decodes (TensorRT-LLM's "
             "`attention_dp_config.batching_wait_iters`)"},

    /* workload: group 0 first, then the maps, each read by its own code. */
    {"workload", "num_requests", INT, RANGE(1, SV_MAX_REQUESTS),
     FIELD(sv_workload_cfg_t, num_requests), .unit = "integer", .def = "-",
     .help = "how many requests (give this or `duration_s`, or a trace)"},
    {"workload", "duration_s", NUM, RANGE(1e-9, 1e9), FIELD(sv_workload_cfg_t, duration),
     .unit = "seconds", .def = "-", .help = "generate arrivals until this time instead"},
    {"workload", "burstiness", NUM, RANGE(1e-6, INFINITY), FIELD(sv_workload_cfg_t, burstiness),
     .unit = "> 0 or `inf`", .def = "1",
     .help = "1 = Poisson, < 1 burstier, `inf` = constant gaps"},
    {"workload", "max_concurrency", INT, RANGE(1, 10000000),
     FIELD(sv_workload_cfg_t, max_concurrency), .unit = "integer", .def = "none",
     .help = "the client's semaphore: at most this many requests in flight; with `rate: inf` a "
             "closed loop (the next request is sent when one ends)"},
    {"workload", "rescale_arrivals", BOOL, FIELD(sv_workload_cfg_t, rescale), .def = "true",
     .help = "as current vLLM: scale the cumulative delays so the last of N requests is sent at "
             "exactly N/rate (only with `num_requests` and a finite rate)"},
    {"workload", "timeout_s", NUM, RANGE(1e-9, 1e9), FIELD(sv_workload_cfg_t, timeout),
     .unit = "seconds", .def = "none",
     .help = "the client gives up this long after sending; the request fails (`timeout`) and "
             "its KV is freed"},
    {"workload", "rate", CUSTOM, .unit = "req/s or `inf`", .def = "inf",
     .help = "mean arrival rate; `inf` sends all at t = 0"},
    {"workload", "input", CUSTOM, .unit = "tokens or map", .def = "required (without a trace)",
     .help = "prompt length distribution (below)"},
    {"workload", "output", CUSTOM, .unit = "tokens or map", .def = "required (without a trace)",
     .help = "output length distribution (below)"},
    {"workload", "shared_prefix", CUSTOM, .unit = "map", .def = "none",
     .help = "prompts begin with a shared system prompt (below; docs/prefix-caching.md)"},
    {"workload", "mooncake", CUSTOM, .unit = "map", .def = "none",
     .help = "replay a Mooncake-format trace with prompt identity (below); replaces `rate`, "
             "`input`, `output` and `trace`"},
    {"workload", "sessions", CUSTOM, .unit = "map", .def = "none",
     .help = "multi-turn chats and agentic programs (below); `num_requests` then bounds the "
             "calls, and `rate: inf` with `max_concurrency: N` is a closed loop of N sessions"},
    {"workload", "trace", CUSTOM, .unit = "map", .def = "none",
     .help = "replay a trace instead of `rate`, `burstiness`, `input`, `output` and "
             "`duration_s` (below)"},
    {"workload", "rate_profile", CUSTOM, .unit = "map", .def = "none",
     .help = "a rate that changes over time instead of `rate` (below)"},
    {"workload", "classes", CUSTOM, .unit = "list of maps", .def = "none",
     .help = "request classes sharing the arrivals, each with its own lengths, priority, SLO "
             "and client round trip, instead of `input` and `output` (below, "
             "docs/contracts.md)"},

    {"workload.shared_prefix", "tokens", INT, .required = 1, RANGE(1, 1L << 24),
     FIELD(sv_shared_prefix_cfg_t, tokens), .unit = "tokens",
     .help = "length of the shared system prompt"},
    {"workload.shared_prefix", "prompts", INT, RANGE(1, 1L << 30),
     FIELD(sv_shared_prefix_cfg_t, prompts), .unit = "integer", .def = "1",
     .help = "distinct system prompts"},
    {"workload.shared_prefix", "share", NUM, RANGE(1e-9, 1.0), FIELD(sv_shared_prefix_cfg_t, share),
     .unit = "(0, 1]", .def = "1", .help = "share of requests that begin with one"},

    {"workload.mooncake", "file", CUSTOM, .required = 1, .unit = "path",
     .help = "a Mooncake trace (JSON lines: timestamp, input_length, output_length, hash_ids)"},
    {"workload.mooncake", "block_tokens", INT, RANGE(1, 1L << 20),
     FIELD(sv_mooncake_cfg_t, block_tokens), .unit = "tokens", .def = "512",
     .help = "prompt tokens per hash id"},
    {"workload.mooncake", "speedup", NUM, RANGE(1e-6, 1e6), FIELD(sv_mooncake_cfg_t, speedup),
     .def = "1", .help = "divide inter-arrival times by this"},
    {"workload.mooncake", "limit", INT, RANGE(1, SV_MAX_TRACE_ROWS),
     FIELD(sv_mooncake_cfg_t, limit), .unit = "integer", .def = "all lines",
     .help = "replay only the first lines (`num_requests` does the same)"},

    {"workload.sessions", "count", INT, .required = 1, RANGE(1, SV_MAX_REQUESTS),
     FIELD(sv_session_cfg_t, count), .unit = "integer",
     .help = "sessions, started at the workload's arrivals"},
    {"workload.sessions", "shape", ENUM, NAMES(shape_names), FIELD(sv_session_cfg_t, shape),
     .def = "chain",
     .help = "`chain` (each call after the one before) or `fanout` (all calls at once)"},
    {"workload.sessions", "history", BOOL, FIELD(sv_session_cfg_t, history), .def = "true (chain)",
     .help = "chain: each prompt carries the conversation so far"},
    {"workload.sessions", "turns", CUSTOM, .required = 1, .unit = "length",
     .help = "calls per session, a length distribution (at most 100000)"},
    {"workload.sessions", "think_time_ms", CUSTOM, .unit = "length (ms)", .def = "none",
     .help = "chain: time between a call's end and the next one's start"},
    {"workload.sessions", "message", CUSTOM, .unit = "length", .def = "`input`",
     .help = "the new message of the calls after the first"},

    {"workload.classes", "name", CUSTOM, .required = 1, .unit = "text",
     .help = "letters, digits, '_', '.' or '-'; unique"},
    {"workload.classes", "share", CUSTOM, .required = 1, .unit = "0..1",
     .help = "share of the arrivals; the shares add up to 1"},
    {"workload.classes", "priority", CUSTOM, .unit = "integer", .def = "0",
     .help = "with `engine.scheduling_policy: priority`, lower is served first"},
    {"workload.classes", "input", CUSTOM, .required = 1, .unit = "length",
     .help = "this class's prompt lengths"},
    {"workload.classes", "output", CUSTOM, .required = 1, .unit = "length",
     .help = "this class's output lengths"},
    {"workload.classes", "slo", CUSTOM, .unit = "map", .def = "the top-level one",
     .help = "this class's SLO (as `slo`)"},
    {"workload.classes", "rtt_ms", CUSTOM, .unit = "ms or map", .def = "`network`'s",
     .help = "this class's client round trip (as `network.rtt_ms`)"},

    {"workload.rate_profile", "kind", ENUM, .required = 1, NAMES(profile_names),
     FIELD(sv_rate_profile_t, kind),
     .help = "`steps` (piecewise-constant), `linear` (piecewise-linear) or `diurnal`"},
    {"workload.rate_profile", "mean_rate", NUM, .group = 1, .required = 1, RANGE(1e-9, 1e9),
     FIELD(sv_rate_profile_t, mean), .unit = "req/s", .def = "required for diurnal",
     .help = "req/s averaged over a period"},
    {"workload.rate_profile", "peak_to_trough", NUM, .group = 1, RANGE(1, 1e6),
     FIELD(sv_rate_profile_t, ratio), .def = "1",
     .help = "diurnal: highest rate / lowest rate (>= 1)"},
    {"workload.rate_profile", "period_s", NUM, .group = 1, RANGE(1e-6, 1e9),
     FIELD(sv_rate_profile_t, period), .unit = "seconds", .def = "86400",
     .help = "diurnal: one cycle"},
    {"workload.rate_profile", "peak_at_s", NUM, .group = 2, RANGE(0, 1e9),
     FIELD(sv_rate_profile_t, peak_at), .unit = "seconds", .def = "period / 2",
     .help = "diurnal: when the rate peaks; rate(t) = mean x (1 + a cos(2 pi (t - peak_at) / "
             "period)), a = (r - 1)/(r + 1)"},
    {"workload.rate_profile", "points", CUSTOM, .unit = "list", .def = "required for steps/linear",
     .help = "`[[time_s, req/s], ...]`: the first at 0, times increasing, rates >= 0; the last "
             "rate holds after the last point"},
    {"workload.rate_profile", "spikes", CUSTOM, .unit = "list of maps", .def = "none",
     .help = "`[{at_s, duration_s, factor}, ...]`: the rate is multiplied by `factor` on [at_s, "
             "at_s + duration_s)"},
    {"workload.rate_profile.spikes", "at_s", NUM, .required = 1, RANGE(0, 1e9),
     FIELD(sv_spike_t, at), .unit = "seconds", .help = "when the spike starts"},
    {"workload.rate_profile.spikes", "duration_s", NUM, .required = 1, RANGE(1e-9, 1e9),
     FIELD(sv_spike_t, duration), .unit = "seconds", .help = "how long it lasts"},
    {"workload.rate_profile.spikes", "factor", NUM, .required = 1, RANGE(0, 1e6),
     FIELD(sv_spike_t, factor), .help = "the rate's multiplier during the spike"},

    /* A length distribution (workload.input, .output, a class's, a session's). */
    {"length", "dist", ENUM, .required = 1, NAMES(dist_names), FIELD(sv_lendist_t, kind),
     .help = "`fixed` (`value`), `uniform` (`min`, `max`: a uniform integer in [min, max]), "
             "`normal` (`mean`, `std`, rounded), `lognormal` (`mean`, `std` of the lengths "
             "themselves, not of their log) or `empirical` (`file`, `column`: uniform draws from "
             "the whole numbers in that CSV column)"},
    {"length", "min", INT, RANGE(1, 10000000), FIELD(sv_lendist_t, min), .def = "1",
     .help = "every draw is clamped to at least this"},
    {"length", "max", INT, RANGE(1, 10000000), FIELD(sv_lendist_t, max), .def = "10000000",
     .help = "every draw is clamped to at most this"},
    {"length", "value", CUSTOM, .required = 1, RANGE(1, 10000000), .unit = "integer",
     .def = "fixed: required", .help = "the length of `fixed`"},
    {"length", "mean", NUM, .group = 1, .required = 1, RANGE(1, 1e7), FIELD(sv_lendist_t, mean),
     .def = "normal, lognormal: required", .help = "the mean length"},
    {"length", "std", NUM, .group = 1, .required = 1, RANGE(0, 1e7), FIELD(sv_lendist_t, std),
     .def = "normal, lognormal: required", .help = "the standard deviation of the lengths"},
    {"length", "file", CUSTOM, .required = 1, .unit = "path", .def = "empirical: required",
     .help = "a CSV with a header row"},
    {"length", "column", CUSTOM, .required = 1, .unit = "text", .def = "empirical: required",
     .help = "the column of whole numbers >= 1 drawn from"},

    /* workload.trace: the file first, then group 1. */
    {"workload.trace", "file", CUSTOM, .required = 1, .unit = "path",
     .help = "a CSV with a header row"},
    {"workload.trace", "time_column", TEXT, .group = 1, FIELD(sv_trace_cfg_t, time_col),
     .unit = "text", .def = "TIMESTAMP",
     .help = "seconds, or a date-time like `2023-11-16 18:15:46.6805900`; rows must be in time "
             "order; times are taken relative to the first row"},
    {"workload.trace", "input_column", TEXT, .group = 1, FIELD(sv_trace_cfg_t, input_col),
     .unit = "text", .def = "ContextTokens", .help = "prompt tokens"},
    {"workload.trace", "output_column", TEXT, .group = 1, FIELD(sv_trace_cfg_t, output_col),
     .unit = "text", .def = "GeneratedTokens", .help = "output tokens"},
    {"workload.trace", "speedup", NUM, .group = 1, RANGE(1e-6, 1e6), FIELD(sv_trace_cfg_t, speedup),
     .def = "1", .help = "divide inter-arrival times by this (2 replays twice as fast)"},
    {"workload.trace", "limit", INT, .group = 1, RANGE(1, SV_MAX_TRACE_ROWS),
     FIELD(sv_trace_cfg_t, limit), .unit = "integer", .def = "all rows",
     .help = "replay only the first rows (`num_requests` does the same)"},
    {"workload.trace", "window_start_s", NUM, .group = 1, RANGE(0, 1e12),
     FIELD(sv_trace_cfg_t, window_start), .unit = "seconds", .def = "0",
     .help = "replay only rows at least this many seconds after the first row; times restart "
             "at 0"},
    {"workload.trace", "window_end_s", NUM, .group = 1, RANGE(1e-9, 1e12),
     FIELD(sv_trace_cfg_t, window_end), .unit = "seconds", .def = "the whole trace",
     .help = "replay only rows before this many seconds after the first row"},
    {"workload.trace", "mean_rate", NUM, .group = 1, RANGE(1e-9, 1e9),
     FIELD(sv_trace_cfg_t, mean_rate), .unit = "req/s", .def = "the trace's own",
     .help = "rescale the times so the mean rate, (rows - 1) / span, is this (instead of "
             "`speedup`); the burstiness of the trace is kept"},
    {"workload.trace", "loop", INT, .group = 1, RANGE(1, 1000000), FIELD(sv_trace_cfg_t, loop),
     .unit = "integer", .def = "once",
     .help = "replay the (windowed, rescaled) trace this many times back to back, each pass one "
             "mean gap after the last row of the one before"},

    /* autoscaler (top level or a pool's). */
    {"autoscaler", "policy", ENUM, .required = 1, NAMES(scale_policy_names),
     FIELD(sv_autoscale_cfg_t, policy),
     .help = "`queue` (waiting per replica), `inflight` (waiting + running per replica), `kv` "
             "(mean KV usage), `ttft_p90` (p90 TTFT over `window_s`)"},
    {"autoscaler", "target", NUM, .required = 1, RANGE(1e-9, 1e12),
     FIELD(sv_autoscale_cfg_t, target), .unit = "per policy",
     .help = "the value per active replica to hold: requests, a KV fraction in (0, 1], or ms"},
    {"autoscaler", "min_replicas", INT, RANGE(1, 100000), FIELD(sv_autoscale_cfg_t, min),
     .unit = "integer", .def = "1", .help = "the fewest replicas (<= `max_replicas`)"},
    {"autoscaler", "max_replicas", INT, .required = 1, RANGE(1, 100000),
     FIELD(sv_autoscale_cfg_t, max), .unit = "integer",
     .help = "the most replicas; the pool allocates this many (its `replicas` is ignored)"},
    {"autoscaler", "initial_replicas", INT, RANGE(1, 100000), FIELD(sv_autoscale_cfg_t, initial),
     .unit = "integer", .def = "`min_replicas`", .help = "replicas serving at t = 0"},
    {"autoscaler", "interval_s", NUM, RANGE(1e-6, 1e9), FIELD(sv_autoscale_cfg_t, interval),
     .unit = "seconds", .def = "10", .help = "between evaluations"},
    {"autoscaler", "cold_start_s", NUM, RANGE(0, 1e9), FIELD(sv_autoscale_cfg_t, cold_start),
     .unit = "seconds", .def = "weights / bandwidth",
     .help = "from the decision to serving; must be shorter than `horizon_s`"},
    {"autoscaler", "load_bandwidth_gb_s", NUM, RANGE(1e-6, 1e6), .scale = 1e9,
     FIELD(sv_autoscale_cfg_t, load_bw), .unit = "GB/s", .def = "2",
     .help = "each GPU reads its share of the weights at this rate (used without "
             "`cold_start_s`)"},
    {"autoscaler", "scale_down_delay_s", NUM, RANGE(0, 1e9),
     FIELD(sv_autoscale_cfg_t, scale_down_delay), .unit = "seconds", .def = "60",
     .help = "scale down only when every evaluation over this window asked for fewer"},
    {"autoscaler", "window_s", NUM, RANGE(1e-6, 1e9), FIELD(sv_autoscale_cfg_t, window),
     .unit = "seconds", .def = "60", .help = "the `ttft_p90` policy's window"},

    /* slo (the top level's or a class's) */
    {"slo", "ttft_ms", CUSTOM, .unit = "ms or map", .def = "none",
     .help = "per-request TTFT threshold (vLLM's `--goodput`), or percentile budgets `{p50: "
             "200, p99: 4000}`, optionally with `per_request`"},
    {"slo", "tpot_ms", CUSTOM, .unit = "ms or map", .def = "none", .help = "the same for TPOT"},
    {"slo", "itl_ms", CUSTOM, .unit = "map", .def = "none",
     .help = "percentile budgets only (vLLM's goodput has no per-request ITL threshold)"},
    {"slo", "e2el_ms", CUSTOM, .unit = "ms or map", .def = "none",
     .help = "the same for end-to-end latency"},
    {"slo", "interactivity_tok_s", CUSTOM, .unit = "tokens/s per user", .def = "none",
     .help = "the per-request TPOT threshold as InferenceX's interactivity axis reads it: "
             "TPOT <= 1000 / this ms (40: 25 ms); not with a per-request `tpot_ms`"},
    {"slo", "attainment", CUSTOM, .unit = "(0, 1]", .def = "0.9",
     .help = "the share of requests that must be good for the contract to hold"},

    /* metrics */
    {"metrics", "percentiles", CUSTOM, .unit = "list", .def = "[99]",
     .help = "percentiles printed (vLLM's `--metric-percentiles`); the JSON always also has 50, "
             "90, 95 and 99; with 95 listed the sessions block (`workload.sessions`) adds the "
             "task and call P95"},
    {"metrics", "percentile_metrics", CUSTOM, .unit = "list", .def = "[ttft, tpot, itl]",
     .help = "sections printed (vLLM's `--percentile-metrics`): `ttft`, `tpot`, `itl`, `e2el`, "
             "`client_queue_time`, `e2el_including_client_queue`"},
    {"metrics", "sample_interval_s", NUM, RANGE(1e-6, 1e9),
     FIELD(sv_metrics_cfg_t, sample_interval), .unit = "seconds", .def = "1",
     .help = "simulated seconds between time-series samples (running, waiting, KV usage, batch "
             "tokens)"},
    {"metrics", "sketch", BOOL, FIELD(sv_metrics_cfg_t, sketch), .def = "false",
     .help = "percentiles from quantile sketches within 1% (`run --sketch`, which sets it too), "
             "the summary streamed as requests end, so that memory follows the requests in "
             "flight (docs/performance.md); `--set metrics.sketch=false` for exact ones"},

    /* cost (sim/cluster/finance.c reads it) */
    {"cost", "host_w_per_server", NUM, RANGE(0, 1e6), FIELD(sv_finance_cfg_t, host_w_per_server),
     .unit = "W", .def = "0",
     .help = "the server's own power besides its GPUs (CPUs, memory, NICs, fans), drawn while "
             "it is up"},
    {"cost", "gpus_per_server", CUSTOM, RANGE(1, 1024), .unit = "whole number", .def = "8",
     .help = "GPUs that share that host power (a run is charged its GPUs' share)"},
    {"cost", "energy_usd_per_kwh", NUM, .group = 1, RANGE(0, 1e3),
     FIELD(sv_finance_cfg_t, energy_usd_per_kwh), .unit = "USD", .def = "0",
     .help = "price of energy at the wall"},
    {"cost", "pue", CUSTOM, RANGE(1, 10), .unit = "1 to 10", .def = "1",
     .help = "the facility's power usage effectiveness: energy at the wall = (GPU + host) x PUE"},
    {"cost", "gpu_purchase", CUSTOM, .unit = "map", .def = "none (rent)",
     .help = "the GPUs are bought (below): they cost price / (years x 8760 h x utilisation) "
             "per GPU-hour instead of the rental `price_per_hour_usd`"},
    {"cost.gpu_purchase", "price_usd", NUM, .required = 1, RANGE(1e-9, 1e9),
     FIELD(sv_finance_cfg_t, purchase_usd), .unit = "USD", .help = "price of one GPU"},
    {"cost.gpu_purchase", "years", NUM, .required = 1, RANGE(1e-3, 100),
     FIELD(sv_finance_cfg_t, years), .unit = "years", .help = "the amortisation period"},
    {"cost.gpu_purchase", "utilisation", NUM, RANGE(1e-3, 1), FIELD(sv_finance_cfg_t, utilisation),
     .unit = "(0, 1]", .def = "1", .help = "share of those years the GPU is in paid service"},

    {.name = NULL},
};

const sv_keydef_t *sv_scenario_key(const char *section, const char *name)
{
    for (const sv_keydef_t *k = sv_scenario_keys; k->name; k++)
        if (strcmp(k->section, section) == 0 && strcmp(k->name, name) == 0) return k;
    return NULL;
}

const char *sv_scenario_enum_name(const char *section, const char *name, int value)
{
    const sv_keydef_t *k = sv_scenario_key(section, name);
    for (int i = 0; k && i < k->nnames; i++)
        if (k->names[i].value == value) return k->names[i].name;
    return NULL;
}

/* One row into its field: 0, 1 when absent (its numeric default, if any, applied), or < 0. */
static int read_key(sv_ynode_t *map, const sv_keydef_t *k, void *base, sv_error_t *err)
{
    char *field = (char *)base + k->offset;
    double d;
    long l;
    int i, rc = 1;
    const char *s;
    switch (k->type) {
    case SV_KEY_INT:
        if ((rc = sv_yget_long(map, k->name, k->required, (long)k->lo, (long)k->hi, &l, err)) ==
                1 &&
            k->def && sv_parse_long(k->def, &l) == 0)
            rc = 2;
        if (rc == 0 || rc == 2) {
            if (k->size == sizeof(int))
                *(int *)field = (int)l;
            else
                *(long *)field = l;
        }
        break;
    case SV_KEY_NUM:
        if ((rc = sv_yget_double(map, k->name, k->required, k->lo, k->hi, &d, err)) == 1 &&
            k->def && sv_parse_double(k->def, &d) == 0)
            rc = 2;
        if (rc == 0 || rc == 2) *(double *)field = k->scale != 0 ? d * k->scale : d;
        break;
    case SV_KEY_BOOL:
        if ((rc = sv_yget_bool(map, k->name, k->required, &i, err)) == 0) *(int *)field = i;
        break;
    case SV_KEY_ENUM:
        if ((rc = sv_yget_enum(map, k->name, k->required, k->names, k->nnames, &i, err)) == 0)
            *(int *)field = i;
        break;
    case SV_KEY_TEXT:
        if ((rc = sv_yget_str(map, k->name, k->required, &s, err)) == 0) {
            if (strlen(s) >= k->size) {
                char w[512];
                return sv_errorf(err, SV_EINVAL, "%s: %s%s%s: longer than %zu characters",
                                 sv_ynode_where(sv_ymap_get(map, k->name), w, sizeof w), map->path,
                                 map->path[0] ? "." : "", k->name, k->size - 1);
            }
            memcpy(field, s, strlen(s) + 1);
        }
        break;
    case SV_KEY_COST: {
        sv_ynode_t *n = sv_ymap_get(map, k->name);
        if (!n || sv_yscalar_is_null(n)) return 1;
        char w[512], list[1024];
        const char *value = n->scalar;
        if (n->kind == SV_Y_SEQ && strcmp(k->unit, "list") == 0) {
            /* A list key ([31, 30]) is read as its comma-separated text ('31,30'). */
            size_t len = 0;
            list[0] = '\0';
            for (size_t j = 0; j < n->n; j++) {
                const sv_ynode_t *it = n->seq[j];
                if (it->kind != SV_Y_SCALAR || len + strlen(it->scalar) + 2 > sizeof list)
                    return sv_errorf(err, SV_EINVAL, "%s: %s: expected a list of numbers",
                                     sv_ynode_where(it, w, sizeof w), n->path);
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", j ? "," : "",
                                        it->scalar);
            }
            value = list;
        } else if (n->kind != SV_Y_SCALAR) {
            return sv_errorf(err, SV_EINVAL, "%s: %s: expected a single value",
                             sv_ynode_where(n, w, sizeof w), n->path);
        }
        if ((rc = sv_perf_settings_set((sv_perf_settings_t *)field, k->name, value, err))) {
            char msg[SV_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            sv_errorf(err, rc, "%s: %s.%s", sv_ynode_where(n, w, sizeof w), map->path, msg);
        }
        return rc;
    }
    case SV_KEY_CUSTOM:
        return 1;
    }
    return rc == 2 ? 1 : rc;
}

int sv__keys_read(sv_ynode_t *map, const char *section, int group, void *base, sv_error_t *err)
{
    for (const sv_keydef_t *k = sv_scenario_keys; k->name; k++) {
        if (k->type == SV_KEY_CUSTOM || k->group != group || strcmp(k->section, section) != 0)
            continue;
        int rc = read_key(map, k, base, err);
        if (rc < 0) return rc;
    }
    return 0;
}

/*
 * vLLM's batch defaults for `vllm serve` (vllm/engine/arg_utils.py,
 * EngineArgs.get_batch_defaults, OpenAI API server context): 1024 sequences and 8192
 * batched tokens on GPUs with at least 70 GiB whose device name does not contain "a100",
 * else 256 and 2048. The other schedulers keep 256 and 8192. First matching row wins.
 */
const sv_batch_default_t sv_batch_defaults[] = {
    {1, 70.0, "a100", 1024, 8192,
     "GPUs with at least 70 GiB that are not A100s (H100, H200, B200, MI300X)"},
    {1, 0.0, NULL, 256, 2048, "the others (A100, L40S, L4)"},
    {0, 0.0, NULL, 256, 8192,
     "every GPU, with the `vllm-v0`, `orca`, `static` and `trtllm` schedulers"},
    {.max_num_seqs = 0},
};

const sv_batch_default_t *sv_batch_default(int v1, double mem_gib, const char *name)
{
    const sv_batch_default_t *b = sv_batch_defaults;
    for (; b->max_num_seqs; b++)
        if (b->v1 == v1 && mem_gib >= b->min_gib && !(b->not_named && strstr(name, b->not_named)))
            return b;
    return b - 1;
}

/*
 * The engines a scenario may name, and what each sets. vLLM 0.6 and 0.7 run the V0 engine
 * (vllm/engine/llm_engine.py; V1 became the default in 0.8), hence `vllm-v0` and
 * `vllm-0.6`; every vLLM version shares the `vllm` profile. First row of a name wins.
 */
const sv_engine_choice_t sv_engine_choices[] = {
    {"vllm", SV_SCHED_VLLM, "vllm", "vLLM V1 (0.8 and later)"},
    {"vllm-v1", SV_SCHED_VLLM, "vllm", "the same"},
    {"vllm-v0", SV_SCHED_VLLM_V0, "vllm", "vLLM's V0 engine (0.6, 0.7, or VLLM_USE_V1=0)"},
    {"vllm-0.6", SV_SCHED_VLLM_V0, "vllm", "the same"},
    {"sglang", SV_SCHED_SGLANG, "sglang", "SGLang 0.5"},
    {"sglang-0.5.9-rocm", SV_SCHED_SGLANG, "sglang-0.5.9-rocm",
     "SGLang 0.5.9's ROCm build (lmsysorg/sglang:v0.5.9-rocm700-mi30x)"},
    {"trtllm", SV_SCHED_TRTLLM, "trtllm", "TensorRT-LLM 1.0 (C++ runtime, in-flight batching)"},
    {NULL, 0, NULL, NULL},
};

const sv_engine_choice_t *sv_engine_choice(const char *name)
{
    for (const sv_engine_choice_t *c = sv_engine_choices; c->name; c++)
        if (strcmp(c->name, name) == 0) return c;
    return NULL;
}

const char *sv_engine_of_scheduler(int scheduler)
{
    switch (scheduler) {
    case SV_SCHED_VLLM:
    case SV_SCHED_VLLM_V0:
        return "vllm";
    case SV_SCHED_TRTLLM:
        return "trtllm";
    case SV_SCHED_SGLANG:
        return "sglang";
    default:
        return NULL;
    }
}

const char *sv_engine_of_profile(const char *profile)
{
    static const char *const own[] = {"vllm", "trtllm", "sglang"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        size_t n = strlen(own[i]); /* "sglang" and its versions, "sglang-0.5.9-rocm" */
        if (strncmp(profile, own[i], n) == 0 && (profile[n] == '\0' || profile[n] == '-'))
            return own[i];
    }
    return NULL;
}

/* ---- Printing the table ---- */

/* The type column: the row's unit, else what its type and range say. */
static const char *type_text(const sv_keydef_t *k, char *buf, size_t n)
{
    if (k->unit) return k->unit;
    if (k->list) return k->list(buf, n);
    switch (k->type) {
    case SV_KEY_BOOL:
        return "bool";
    case SV_KEY_ENUM: {
        size_t off = 0;
        buf[0] = '\0';
        for (int i = 0; i < k->nnames && off < n; i++)
            off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? " \\| " : "", k->names[i].name);
        return buf;
    }
    case SV_KEY_INT:
        return "integer";
    case SV_KEY_TEXT:
        return "text";
    default:
        return "number";
    }
}

static const char *def_text(const sv_keydef_t *k)
{
    if (k->required && !k->def) return "required";
    return k->def ? k->def : "-";
}

/* The sections docs/scenarios.md has a key table for, in its order. */
static const char *const DOC_SECTIONS[] = {"",
                                           "hardware",
                                           "pools",
                                           "router",
                                           "disaggregation",
                                           "disaggregation.kv_link",
                                           "engine",
                                           "workload",
                                           "workload.shared_prefix",
                                           "workload.mooncake",
                                           "workload.sessions",
                                           "workload.classes",
                                           "workload.rate_profile",
                                           "workload.rate_profile.spikes",
                                           "length",
                                           "workload.trace",
                                           "autoscaler",
                                           "slo",
                                           "cost",
                                           "cost.gpu_purchase",
                                           "metrics",
                                           NULL};

/* "[lo, hi]" of a number the loader checks, else "". */
static const char *range_text(const sv_keydef_t *k, char *buf, size_t n)
{
    buf[0] = '\0';
    if (k->type == SV_KEY_INT)
        snprintf(buf, n, "[%ld, %ld]", (long)k->lo, (long)k->hi);
    else if (k->type == SV_KEY_NUM || (k->type == SV_KEY_CUSTOM && k->hi > k->lo))
        snprintf(buf, n, isinf(k->hi) ? "[%g, inf]" : "[%g, %g]", k->lo, k->hi);
    return buf;
}

static void markdown_section(FILE *f, const char *section)
{
    char buf[256], range[64];
    fprintf(f, "<!-- keys %s -->\n", section[0] ? section : "top");
    fprintf(f, "| key | type / unit | range | default | meaning |\n|---|---|---|---|---|\n");
    for (const sv_keydef_t *k = sv_scenario_keys; k->name; k++)
        if (strcmp(k->section, section) == 0)
            fprintf(f, "| `%s` | %s | %s | %s | %s |\n", k->name, type_text(k, buf, sizeof buf),
                    range_text(k, range, sizeof range), def_text(k), k->help);
    fprintf(f, "<!-- end keys -->\n");
}

static void markdown_batch_defaults(FILE *f)
{
    fprintf(f, "<!-- keys batch-defaults -->\n| scheduler | GPUs | `max_num_seqs` | "
               "`max_num_batched_tokens` |\n|---|---|---|---|\n");
    for (const sv_batch_default_t *b = sv_batch_defaults; b->max_num_seqs; b++)
        fprintf(f, "| %s | %s | %ld | %ld |\n", b->v1 ? "vllm" : "the others", b->gpus,
                b->max_num_seqs, b->max_num_batched_tokens);
    fprintf(f, "<!-- end keys -->\n");
}

void sv_keys_markdown(FILE *f, const char *section)
{
    if (section && strcmp(section, "batch-defaults") == 0)
        markdown_batch_defaults(f);
    else if (section)
        markdown_section(f, strcmp(section, "top") == 0 ? "" : section);
    if (section) return;
    for (int i = 0; DOC_SECTIONS[i]; i++)
        markdown_section(f, DOC_SECTIONS[i]);
    markdown_batch_defaults(f);
}

void sv_keys_text(FILE *f)
{
    char buf[256], key[96], range[64];
    for (const sv_keydef_t *k = sv_scenario_keys; k->name; k++) {
        snprintf(key, sizeof key, "%s%s%s", k->section, k->section[0] ? "." : "", k->name);
        const char *t = type_text(k, buf, sizeof buf);
        fprintf(f, "  %-42s ", key);
        for (; *t; t++) /* the table's "\|" is markdown's */
            if (!(t[0] == '\\' && t[1] == '|')) fputc(*t, f);
        fprintf(f, "%s%s; default %s\n", range_text(k, range, sizeof range)[0] ? " " : "", range,
                def_text(k));
    }
}
