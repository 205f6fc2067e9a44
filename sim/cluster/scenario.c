/*
 * The scenario loader (see include/servesim/cluster/scenario.h): YAML tree, overrides, then a
 * strict walk over the sections that fills sv_scenario_t, naming the place of any error. The
 * scalar keys of each section are read through the settings schema (schema.c: their ranges,
 * defaults and fields); what is left here is the sections' structure and their rules.
 */
#include "servesim/cluster/scenario.h"

#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "servesim/base/suggest.h"
#include "servesim/base/yaml.h"
#include "servesim/cluster/schema.h"

void sv_scenario_free(sv_scenario_t *sc)
{
    if (!sc) return;
    if (!sc->trace_borrowed) sv_trace_free(sc->trace);
    sv_prompts_free(sc->prompts);
    free(sc->emp_input);
    free(sc->emp_output);
    for (int k = 0; k < SV_MAX_CLASSES; k++) {
        free(sc->emp_class[k][0]);
        free(sc->emp_class[k][1]);
    }
    for (int i = 0; i < 3; i++)
        free(sc->emp_session[i]);
    free(sc);
}

static const sv_yenum_t METRIC_NAMES[] = {
    {"ttft", SV_M_TTFT}, {"tpot", SV_M_TPOT}, {"itl", SV_M_ITL}, {"e2el", SV_M_E2EL},
    {"client_queue_time", SV_M_CLIENT_QUEUE}, {"e2el_including_client_queue", SV_M_E2EL_QUEUE}};

static const char *at(const sv_ynode_t *n, char *buf, size_t len)
{
    return sv_ynode_where(n, buf, len);
}

/* A path relative to the scenario file's folder (absolute paths pass through). */
static void resolve_path(const char *scenario, const char *p, char *out, size_t n)
{
    if (p[0] == '/' || strcmp(scenario, "-") == 0) {
        snprintf(out, n, "%s", p);
        return;
    }
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", scenario);
    snprintf(out, n, "%s/%s", dirname(tmp), p);
}

/* Remember a file the scenario reads, so that no output overwrites it. */
static void note_input(sv_scenario_t *sc, const char *path)
{
    if (sc->ninputs < SV_MAX_INPUTS)
        snprintf(sc->inputs[sc->ninputs++], sizeof sc->inputs[0], "%s", path);
}

static int get_text(sv_ynode_t *map, const char *key, int required, char *dst, size_t n,
                    sv_error_t *err)
{
    const char *s;
    int rc = sv_yget_str(map, key, required, &s, err);
    if (rc) return rc;
    if (strlen(s) >= n) {
        char w[512];
        return sv_errorf(err, SV_EINVAL, "%s: %s%s%s: longer than %zu characters",
                         at(sv_ymap_get(map, key), w, sizeof w), map->path, map->path[0] ? "." : "",
                         key, n - 1);
    }
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

const char *sv_role_name(sv_role_t r)
{
    static const char *const names[] = {"colocated", "prefill", "decode"};
    return (r >= SV_ROLE_COLOCATED && r <= SV_ROLE_DECODE) ? names[r] : "?";
}

/* The hardware keys of a pool (or of the top-level `hardware` map). The caller checks
 * for unknown keys once it has read its own. */
/*
 * speculative: draft: the rules between the speculative keys (sv_spec_check), then the draft
 * model, a catalog name or a config.json relative to the scenario, as `model` is resolved.
 */
static int read_draft(sv_ynode_t *hw, const sv_scenario_t *sc, const sv_catalog_t *cat,
                      sv_pool_cfg_t *pool, sv_error_t *err)
{
    char w[512], msg[SV_ERRMSG_MAX], full[1024];
    int rc = sv_spec_check(&pool->perf, err);
    const char *key = "speculative";
    if (rc && strncmp(err->msg, "speculative_model", 17) == 0) key = "speculative_model";
    if (!rc && pool->perf.spec_method != SV_SPEC_DRAFT) return 0;
    if (!rc) {
        key = "speculative_model";
        const char *m = pool->perf.spec_model;
        size_t ml = strlen(m);
        if (ml > 5 && strcmp(m + ml - 5, ".json") == 0) resolve_path(sc->path, m, full, sizeof full);
        else snprintf(full, sizeof full, "%s", m);
        if (!(rc = sv_catalog_resolve_model(cat, full, &pool->draft_model, err)) &&
            !(rc = sv_spec_draft_check(&pool->perf, &sc->model, &pool->draft_model, err)))
            return 0;
    }
    sv_ynode_t *node = sv_ymap_get(hw, key);
    snprintf(msg, sizeof msg, "%s", err->msg);
    if (strncmp(msg, key, strlen(key)) == 0 && msg[strlen(key)] == ':')
        memmove(msg, msg + strlen(key) + 2, strlen(msg + strlen(key) + 2) + 1);
    return sv_errorf(err, rc, "%s: %s%s%s: %s", at(node ? node : hw, w, sizeof w), hw->path,
                     hw->path[0] ? "." : "", key, msg);
}

static int read_hardware(sv_ynode_t *hw, const sv_scenario_t *sc, const sv_catalog_t *cat,
                         sv_pool_cfg_t *pool, sv_error_t *err)
{
    char w[512], gpu[SV_NAME_MAX];
    int rc;
    if ((rc = get_text(hw, "gpu", 1, gpu, sizeof gpu, err))) return rc;
    const sv_gpu_t *g;
    if ((rc = sv_catalog_gpu(cat, gpu, &g, err))) {
        char msg[SV_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return sv_errorf(err, rc, "%s: %s%sgpu: %s", at(sv_ymap_get(hw, "gpu"), w, sizeof w),
                         hw->path, hw->path[0] ? "." : "", msg);
    }
    pool->gpu = *g;
    /* The replicas and the cost-model settings, then the price (which overrides the GPU's). */
    if ((rc = sv__keys_read(hw, "hardware", 0, pool, err)) ||
        (rc = sv__keys_read(hw, "hardware", 1, pool, err)))
        return rc;
    double lo, hi, cap = pool->perf.power_limit_w;
    sv_perf_power_range(g, &lo, &hi);
    if (cap > 0 && (cap < lo || cap > hi))
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s%spower_limit_w: %g W is outside the %s's range of %g to %g W (a "
                         "quarter of its TDP to its TDP)",
                         at(sv_ymap_get(hw, "power_limit_w"), w, sizeof w), hw->path,
                         hw->path[0] ? "." : "", cap, g->name, lo, hi);
    return read_draft(hw, sc, cat, pool, err);
}

/*
 * `engine: NAME` or `engine.name`: the scheduler and profile of that engine
 * (sv_engine_choices in schema.c), which the map's own `scheduler` and `profile` override.
 */
static int read_engine_name(sv_ynode_t *node, const char *path, const char *name,
                            sv_pool_cfg_t *pool, sv_error_t *err)
{
    char w[512];
    const sv_engine_choice_t *c = sv_engine_choice(name);
    if (!c) {
        const char *names[16];
        size_t n = 0;
        for (const sv_engine_choice_t *k = sv_engine_choices; k->name && n < 16; k++)
            names[n++] = k->name;
        char list[256], near[96] = "";
        const char *s = sv_suggest(name, names, n);
        if (s) snprintf(near, sizeof near, " (did you mean '%s'?)", s);
        return sv_errorf(err, SV_EINVAL, "%s: %s: unknown engine '%s'%s; expected %s",
                         at(node, w, sizeof w), path, name, near,
                         sv_scenario_key("engine", "name")->list(list, sizeof list));
    }
    snprintf(pool->engine_name, sizeof pool->engine_name, "%s", c->name);
    pool->engine.scheduler = (sv_sched_t)c->scheduler;
    snprintf(pool->perf.engine, sizeof pool->perf.engine, "%s", c->profile);
    return 0;
}

/* A scheduler and a profile of two different engines run as given, with this note. */
static void engine_note(sv_pool_cfg_t *pool)
{
    const char *se = sv_engine_of_scheduler(pool->engine.scheduler);
    const char *prof = pool->perf.engine[0] ? pool->perf.engine : "vllm";
    const char *pe = sv_engine_of_profile(prof);
    pool->engine_note[0] = '\0';
    if (se && pe && strcmp(se, pe) != 0)
        snprintf(pool->engine_note, sizeof pool->engine_note,
                 "scheduler %s (%s's) with engine profile %s (%s's): mixed as given",
                 sv_sched_name(pool->engine.scheduler), se, prof, pe);
}

static int read_engine(sv_ynode_t *en, sv_pool_cfg_t *pool, sv_error_t *err)
{
    char w[512], sched[32], name[SV_NAME_MAX];
    int rc;
    sv_engine_cfg_t *e = &pool->engine;
    if (en->kind == SV_Y_SCALAR) return read_engine_name(en, en->path, en->scalar, pool, err);
    if ((rc = sv_yexpect_map(en, "engine", err))) return rc;
    if ((rc = get_text(en, "name", 0, name, sizeof name, err)) < 0) return rc;
    if (rc == 0 && (rc = read_engine_name(sv_ymap_get(en, "name"), sv_ymap_get(en, "name")->path,
                                          name, pool, err)))
        return rc;
    snprintf(sched, sizeof sched, "%s", sv_sched_name(e->scheduler));
    if ((rc = get_text(en, "scheduler", 0, sched, sizeof sched, err)) < 0) return rc;
    if (sv_sched_parse(sched, &e->scheduler)) {
        char list[256];
        return sv_errorf(err, SV_EINVAL, "%s: %s.scheduler: expected %s, got '%s'",
                         at(sv_ymap_get(en, "scheduler"), w, sizeof w), en->path,
                         sv_scenario_key("engine", "scheduler")->list(list, sizeof list), sched);
    }
    if ((rc = sv__keys_read(en, "engine", 0, pool, err))) return rc;
    /* vLLM (V0 and V1), SGLang and TensorRT-LLM draft and verify; the research schedulers
     * (Orca's iteration batching, static batching) do not. */
    if (sv_spec_k(&pool->perf) > 0 &&
        (e->scheduler == SV_SCHED_ORCA || e->scheduler == SV_SCHED_STATIC))
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.scheduler: the %s scheduler does not run speculative decoding "
                         "(hardware.speculative); use vllm, vllm-v0, sglang or trtllm",
                         at(sv_ymap_get(en, "scheduler"), w, sizeof w), en->path,
                         sv_sched_name(e->scheduler));
    if (e->prefix_caching == 1 &&
        (e->scheduler == SV_SCHED_ORCA || e->scheduler == SV_SCHED_STATIC ||
         e->scheduler == SV_SCHED_TRTLLM))
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.enable_prefix_caching: the %s scheduler reserves whole sequences "
                         "and shares no blocks; use vllm or vllm-v0",
                         at(sv_ymap_get(en, "enable_prefix_caching"), w, sizeof w), en->path,
                         sv_sched_name(e->scheduler));
    /* TensorRT-LLM's attention-DP balancing: its executor's, and only with attention DP
     * (PyExecutor._schedule reads it when enable_attention_dp is on). */
    if (e->adp_balance && (e->scheduler != SV_SCHED_TRTLLM || pool->perf.dp_attention < 2))
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.attention_dp_balance: TensorRT-LLM's attention-DP balancing "
                         "needs the trtllm scheduler and hardware.dp_attention > 1 (this pool: "
                         "scheduler %s, dp_attention %d)",
                         at(sv_ymap_get(en, "attention_dp_balance"), w, sizeof w), en->path,
                         sv_sched_name(e->scheduler),
                         pool->perf.dp_attention > 1 ? pool->perf.dp_attention : 1);
    /* TensorRT-LLM's enable_chunked_context: the other schedulers' chunking is theirs (vLLM
     * V1 always chunks, V0, Orca and static batching never do, SGLang by its budget). */
    if (e->chunked_prefill >= 0 && e->scheduler != SV_SCHED_TRTLLM)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.chunked_prefill: only the trtllm scheduler turns its chunked "
                         "prefill on or off (this pool's is %s)",
                         at(sv_ymap_get(en, "chunked_prefill"), w, sizeof w), en->path,
                         sv_sched_name(e->scheduler));
    if (e->scheduler != SV_SCHED_VLLM && e->scheduler != SV_SCHED_TRTLLM) {
        const char *k = sv_ymap_get(en, "long_prefill_token_threshold")
                            ? "long_prefill_token_threshold"
                        : sv_ymap_get(en, "max_num_partial_prefills") ? "max_num_partial_prefills"
                                                                      : NULL;
        if (k)
            return sv_errorf(
                err, SV_EINVAL,
                "%s: %s.%s: only the vllm and trtllm schedulers cut prompts into chunks "
                "(this pool's is %s)",
                at(sv_ymap_get(en, k), w, sizeof w), en->path, k, sv_sched_name(e->scheduler));
    }
    /* vLLM V1 refuses concurrent partial prefills: any value but the default, 1
     * (EngineArgs._check_feature_supported, vllm/engine/arg_utils.py); its scheduler never
     * reads the setting. */
    if (e->scheduler == SV_SCHED_VLLM && e->max_partial_prefills > 1)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.max_num_partial_prefills: vLLM V1 (the vllm scheduler) supports "
                         "only 1, its default (concurrent partial prefills are refused); got %ld",
                         at(sv_ymap_get(en, "max_num_partial_prefills"), w, sizeof w), en->path,
                         e->max_partial_prefills);
    if (e->scheduler == SV_SCHED_VLLM) e->max_partial_prefills = 0; /* no limit, as V1 */
    if (pool->perf.sched_steps > 1 && e->scheduler != SV_SCHED_VLLM_V0)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.num_scheduler_steps: multi-step scheduling is vLLM V0's (0.6 "
                         "and 0.7); this pool's scheduler is %s (use engine vllm-0.6)",
                         at(sv_ymap_get(en, "num_scheduler_steps"), w, sizeof w), en->path,
                         sv_sched_name(e->scheduler));
    /* vLLM 0.6-0.7 refuse the two together (EngineArgs.create_engine_config,
     * vllm/engine/arg_utils.py). */
    if (pool->perf.sched_steps > 1 && sv_spec_k(&pool->perf) > 0)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.num_scheduler_steps: vLLM does not run speculative decoding "
                         "with multi-step scheduling (hardware.speculative); use one or the other",
                         at(sv_ymap_get(en, "num_scheduler_steps"), w, sizeof w), en->path);
    if (e->scheduler == SV_SCHED_VLLM && e->preempt_swap)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.preemption: the vllm (V1) scheduler only recomputes preempted "
                         "requests; use recompute, or scheduler vllm-v0 to swap",
                         at(sv_ymap_get(en, "preemption"), w, sizeof w), en->path);
    return sv_ymap_check_unknown(en, err);
}

/*
 * What a scenario leaves unset takes vLLM's defaults for `vllm serve` on that GPU (the
 * table sv_batch_defaults in schema.c). The admission watermark is V0's 1%; the V1
 * scheduler (`vllm`) keeps none. (The V1 scheduler's rule tying the two is
 * sv_scenario_validate's.)
 */
static void engine_defaults(sv_pool_cfg_t *pool)
{
    sv_engine_cfg_t *e = &pool->engine;
    /* SGLang's defaults are taken as V1's: a large budget, no watermark, the radix cache on. */
    int v1 = e->scheduler == SV_SCHED_VLLM || e->scheduler == SV_SCHED_SGLANG;
    double gib = pool->gpu.mem_bytes / (1024.0 * 1024 * 1024);
    const sv_batch_default_t *b = sv_batch_default(v1, gib, pool->gpu.name);
    if (e->max_num_seqs == 0) {
        e->max_num_seqs = b->max_num_seqs;
        pool->defaulted |= SV_DEFAULT_MAX_NUM_SEQS;
    }
    if (pool->perf.max_batched_tokens == 0) {
        pool->perf.max_batched_tokens = b->max_num_batched_tokens;
        pool->defaulted |= SV_DEFAULT_MAX_BATCHED;
    }
    /* A defaulted sequence limit is capped at the token budget, as vLLM's EngineArgs does
     * (`self.max_num_seqs = min(self.max_num_seqs, self.max_num_batched_tokens)`). */
    if ((pool->defaulted & SV_DEFAULT_MAX_NUM_SEQS) &&
        e->max_num_seqs > pool->perf.max_batched_tokens)
        e->max_num_seqs = pool->perf.max_batched_tokens;
    if (e->watermark < 0) e->watermark = v1 ? 0.0 : 0.01;
    /* Automatic prefix caching: on by default in V1, off in V0 (as vLLM's defaults). */
    if (e->prefix_caching < 0) e->prefix_caching = v1;
    /* SGLang's overlap loop is its default (Scheduler.event_loop_overlap), except with
     * EAGLE-style speculative decoding (MTP and EAGLE), where SGLang turns it off unless
     * SGLANG_ENABLE_SPEC_V2 is set (SGLang's docs, advanced_features/speculative_decoding:
     * "Speculative Decoding V2 (Overlap Scheduler)"). */
    pool->overlap_defaulted = e->overlap_schedule < 0;
    sv_pool_hardware_changed(pool);
    e->no_chunked_prefill = e->chunked_prefill == 0;
    e->max_num_batched_tokens = pool->perf.max_batched_tokens;
    e->block_size = pool->perf.block_size;
}

void sv_pool_hardware_changed(sv_pool_cfg_t *pool)
{
    sv_engine_cfg_t *e = &pool->engine;
    if (pool->overlap_defaulted)
        e->overlap_schedule = e->scheduler == SV_SCHED_SGLANG &&
                              pool->perf.spec_method == SV_SPEC_NONE && pool->perf.pp <= 1;
}

static void pool_defaults(sv_pool_cfg_t *p)
{
    memset(p, 0, sizeof *p);
    p->replicas = 1;
    p->perf = sv_perf_settings_default();
    p->perf.max_batched_tokens = 0; /* unset: engine_defaults() decides */
    p->engine = (sv_engine_cfg_t){.scheduler = SV_SCHED_VLLM,
                                  .max_num_seqs = 0,
                                  .block_size = 16,
                                  .swap_bw = 25e9,
                                  .watermark = -1,
                                  .prefix_caching = -1,
                                  .overlap_schedule = -1,
                                  .chunked_prefill = -1,
                                  /* AttentionDpConfig's defaults (TensorRT-LLM,
                                   * tensorrt_llm/llmapi/llm_args.py) */
                                  .adp_timeout_iters = 50,
                                  .adp_batching_wait_iters = 10,
                                  .async_scheduling = -1, /* unset: profile_defaults() */
                                  .api_server = -1};
}

/*
 * What the pool's engine profile says its engine does by default with the pool's
 * scheduler (`scheduler_defaults` in models/engines.yaml: the vllm profile turns async
 * scheduling on and sets the API server's path for the vllm scheduler, as current vLLM
 * does), for the settings the scenario left unset; servesim's own defaults (no async
 * scheduling, no API-server path) for the rest. A profile naming a scheduler servesim
 * does not have is an error, named at its place in the catalog.
 */
static int profile_defaults(sv_pool_cfg_t *pool, const sv_catalog_t *cat, sv_error_t *err)
{
    sv_engine_cfg_t *e = &pool->engine;
    const sv_engine_profile_t *prof = NULL;
    const sv_engine_sched_defaults_t *d = NULL;
    if (pool->perf.engine[0] && sv_catalog_engine(cat, pool->perf.engine, &prof, NULL)) prof = NULL;
    for (int i = 0; prof && i < prof->nscheds; i++) {
        sv_sched_t s;
        if (sv_sched_parse(prof->scheds[i].scheduler, &s)) {
            char list[256];
            return sv_errorf(err, SV_EINVAL,
                             "%s: engine profile '%s' gives defaults for an unknown scheduler "
                             "'%s' (expected %s)",
                             prof->scheds[i].where, prof->name, prof->scheds[i].scheduler,
                             sv_scenario_key("engine", "scheduler")->list(list, sizeof list));
        }
        if (s == e->scheduler) d = &prof->scheds[i];
    }
    pool->profile_defaulted = 0;
    if (e->async_scheduling < 0) {
        /* With pipeline stages the engine's batch queue keeps pp micro-batches in flight
         * instead (sv_scenario_validate refuses the two together). */
        int from = d && d->async_scheduling >= 0 && pool->perf.pp <= 1;
        e->async_scheduling = from ? d->async_scheduling : 0;
        if (from) pool->profile_defaulted |= SV_PROFILE_ASYNC;
    }
    if (e->api_server < 0) {
        int from = d && !isnan(d->api_server_ms);
        e->api_server = from ? d->api_server_ms * 1e-3 : 0.0;
        if (from) pool->profile_defaulted |= SV_PROFILE_API_SERVER;
    }
    return 0;
}

/* A pool's engine map (or none), then the defaults for what it leaves unset. */
static int read_pool_engine(sv_ynode_t *en, sv_pool_cfg_t *pool, sv_error_t *err)
{
    int rc;
    if (en && !sv_yscalar_is_null(en) && (rc = read_engine(en, pool, err))) return rc;
    engine_defaults(pool);
    engine_note(pool);
    return 0;
}

static int read_pools(sv_ynode_t *root, const sv_catalog_t *cat, sv_scenario_t *sc, sv_error_t *err)
{
    char w[512];
    int rc;
    sv_ynode_t *pools = sv_ymap_get(root, "pools");
    sv_ynode_t *hwmap = sv_ymap_get(root, "hardware");
    sv_ynode_t *en = sv_ymap_get(root, "engine");
    if (pools && (hwmap || en))
        return sv_errorf(err, SV_EINVAL,
                         "%s: give either pools or hardware/engine, not both (a pool holds its "
                         "own hardware keys and engine map)",
                         at(pools, w, sizeof w));
    if (!pools) {
        if (!hwmap)
            return sv_errorf(err, SV_EINVAL, "%s: missing required key 'hardware' (or 'pools')",
                             at(root, w, sizeof w));
        if ((rc = sv_yexpect_map(hwmap, "hardware", err))) return rc;
        sv_pool_cfg_t *p = &sc->pools[0];
        pool_defaults(p);
        snprintf(p->name, sizeof p->name, "default");
        sc->npools = 1;
        if ((rc = read_hardware(hwmap, sc, cat, p, err)) || (rc = sv_ymap_check_unknown(hwmap, err)))
            return rc;
        return read_pool_engine(en, p, err);
    }
    if ((rc = sv_yexpect_seq(pools, "pools", err))) return rc;
    if (pools->n < 1 || pools->n > SV_MAX_POOLS)
        return sv_errorf(err, SV_EINVAL, "%s: pools: give 1 to %d pools", at(pools, w, sizeof w),
                         SV_MAX_POOLS);
    int roles[3] = {0, 0, 0};
    for (size_t i = 0; i < pools->n; i++) {
        sv_ynode_t *pm = pools->seq[i];
        sv_pool_cfg_t *p = &sc->pools[i];
        pool_defaults(p);
        if ((rc = sv_yexpect_map(pm, "a pool", err))) return rc;
        snprintf(p->name, sizeof p->name, "pool%zu", i);
        if ((rc = get_text(pm, "name", 0, p->name, sizeof p->name, err)) < 0 ||
            (rc = sv__keys_read(pm, "pools", 0, p, err)))
            return rc;
        roles[p->role]++;
        for (size_t k = 0; k < i; k++)
            if (strcmp(sc->pools[k].name, p->name) == 0)
                return sv_errorf(err, SV_EINVAL, "%s: %s.name: pool '%s' is named twice",
                                 at(pm, w, sizeof w), pm->path, p->name);
        (void)sv_ymap_get(pm, "autoscaler"); /* read once the horizon is known */
        if ((rc = read_hardware(pm, sc, cat, p, err)) ||
            (rc = read_pool_engine(sv_ymap_get(pm, "engine"), p, err)) ||
            (rc = sv_ymap_check_unknown(pm, err)))
            return rc;
    }
    sc->npools = (int)pools->n;
    sc->pools_listed = 1;
    /* Whether the roles make a valid split is sv_scenario_validate's rule. */
    sc->disaggregated = roles[SV_ROLE_PREFILL] || roles[SV_ROLE_DECODE];
    return 0;
}

static int read_policy(sv_ynode_t *map, const char *key, int *out, sv_error_t *err)
{
    char w[512], name[32];
    int rc = get_text(map, key, 0, name, sizeof name, err);
    if (rc) return rc < 0 ? rc : 0;
    sv_route_t r;
    if (sv_route_parse(name, &r))
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s%s%s: expected round-robin, random, least-outstanding, "
                         "least-tokens or kv-aware, got '%s'",
                         at(sv_ymap_get(map, key), w, sizeof w), map->path, map->path[0] ? "." : "",
                         key, name);
    *out = (int)r;
    return 0;
}

static int read_router(sv_ynode_t *root, sv_scenario_t *sc, sv_error_t *err)
{
    int rc;
    sc->route = SV_ROUTE_ROUND_ROBIN;
    sv_ynode_t *rt = sv_ymap_get(root, "router");
    if (!rt || sv_yscalar_is_null(rt)) return 0;
    if (rt->kind == SV_Y_SCALAR) return read_policy(root, "router", &sc->route, err);
    if ((rc = sv_yexpect_map(rt, "router", err))) return rc;
    if ((rc = read_policy(rt, "policy", &sc->route, err)) ||
        (rc = sv__keys_read(rt, "router", 0, sc, err)))
        return rc;
    return sv_ymap_check_unknown(rt, err);
}

/* Per-GPU bandwidth (GB/s) and latency (us) of each link kind, as commonly deployed. */
/* KV link kinds: per-GPU bandwidth (GB/s; 0: half the GPU's own bidirectional NVLink
 * figure) and latency per transfer (us). */
static const struct {
    const char *kind, *why;
    double gb_s, us;
} LINKS[] = {
    {"nvlink", "inside one node: half the bidirectional figure", 0, 5},
    {"infiniband", "NDR 400 Gb/s per GPU", 50, 10},
    {"roce", "400 GbE per GPU", 50, 20},
    {"ethernet", "100 GbE per GPU", 12.5, 50},
    {"pcie", "through host memory, PCIe Gen5 x16", 50, 10},
};
#define NLINKS ((int)(sizeof LINKS / sizeof LINKS[0]))

int sv_kvlink_defaults(const char *kind, const sv_gpu_t *gpu, sv_kvlink_cfg_t *out)
{
    for (int i = 0; i < NLINKS; i++)
        if (strcmp(kind, LINKS[i].kind) == 0) {
            memset(out, 0, sizeof *out);
            snprintf(out->kind, sizeof out->kind, "%s", kind);
            out->bw_per_gpu = LINKS[i].gb_s > 0 ? LINKS[i].gb_s * 1e9 : gpu->link_bw / 2;
            out->latency = LINKS[i].us * 1e-6;
            return 0;
        }
    return SV_EINVAL;
}

static int link_defaults(const char *kind, const sv_gpu_t *gpu, double *gb_s, double *us)
{
    sv_kvlink_cfg_t l;
    if (sv_kvlink_defaults(kind, gpu, &l)) return SV_EINVAL;
    *gb_s = l.bw_per_gpu / 1e9;
    *us = l.latency * 1e6;
    return 0;
}

static int read_disagg(sv_ynode_t *root, sv_scenario_t *sc, sv_error_t *err)
{
    char w[512];
    int rc;
    sv_ynode_t *d = sv_ymap_get(root, "disaggregation");
    sc->decode_route = SV_ROUTE_LEAST_OUTSTANDING;
    snprintf(sc->link.kind, sizeof sc->link.kind, "infiniband");
    const sv_gpu_t *pg = &sc->pools[0].gpu;
    for (int i = 0; i < sc->npools; i++)
        if (sc->pools[i].role == SV_ROLE_PREFILL) pg = &sc->pools[i].gpu;
    double gb_s = 0, us = 0;
    if (d && !sv_yscalar_is_null(d)) {
        sc->disaggregation_given = 1;
        if ((rc = sv_yexpect_map(d, "disaggregation", err))) return rc;
        sc->first_token_at_decode = 0;
        if ((rc = sv__keys_read(d, "disaggregation", 0, sc, err))) return rc;
        if ((rc = read_policy(d, "decode_router", &sc->decode_route, err))) return rc;
        sv_ynode_t *l = sv_ymap_get(d, "kv_link");
        if (l && !sv_yscalar_is_null(l)) {
            if ((rc = sv_yexpect_map(l, "disaggregation.kv_link", err))) return rc;
            if ((rc = get_text(l, "kind", 0, sc->link.kind, sizeof sc->link.kind, err)) < 0)
                return rc;
            if (link_defaults(sc->link.kind, pg, &gb_s, &us)) {
                sv_yenum_t names[NLINKS];
                char list[256];
                for (int i = 0; i < NLINKS; i++)
                    names[i] = (sv_yenum_t){LINKS[i].kind, i};
                return sv_errorf(err, SV_EINVAL,
                                 "%s: disaggregation.kv_link.kind: expected %s, got '%s'",
                                 at(sv_ymap_get(l, "kind"), w, sizeof w),
                                 sv_yenum_list(names, NLINKS, list, sizeof list), sc->link.kind);
            }
            sc->link.fifo = 0;
            if ((rc = sv_yget_double(l, "bandwidth_gb_s", 0, 1e-9, 1e6, &gb_s, err)) < 0 ||
                (rc = sv_yget_double(l, "latency_us", 0, 0, 1e9, &us, err)) < 0 ||
                (rc = sv__keys_read(l, "disaggregation.kv_link", 0, &sc->link, err)))
                return rc;
            if ((rc = sv_ymap_check_unknown(l, err))) return rc;
        }
        if ((rc = sv_ymap_check_unknown(d, err))) return rc;
    }
    if (gb_s == 0 && link_defaults(sc->link.kind, pg, &gb_s, &us)) return SV_EINVAL;
    sc->link.bw_per_gpu = gb_s * 1e9;
    sc->link.latency = us * 1e-6;
    return 0;
}

static int read_lengths(sv_ynode_t *wl, const char *key, sv_scenario_t *sc, sv_lendist_t *d,
                        long **samples, sv_error_t *err)
{
    const char *scenario = sc->path;
    char w[512];
    int rc;
    sv_ynode_t *n = sv_ymap_get(wl, key);
    if (!n || sv_yscalar_is_null(n))
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload: missing required key '%s' (a token count "
                         "or a map with dist: fixed|uniform|normal|lognormal|empirical)",
                         at(wl, w, sizeof w), key);
    d->min = 1;
    d->max = 10000000;
    if (n->kind == SV_Y_SCALAR) { /* a plain number: fixed */
        long v;
        if ((rc = sv_yscalar_long(n, 1, 10000000, &v, err))) return rc;
        d->kind = SV_LEN_FIXED;
        d->value = (double)v;
        return 0;
    }
    if ((rc = sv_yexpect_map(n, key, err)) || (rc = sv__keys_read(n, "length", 0, d, err)))
        return rc;
    if (d->min > d->max)
        return sv_errorf(err, SV_EINVAL, "%s: %s: min (%ld) is greater than max (%ld)",
                         at(n, w, sizeof w), n->path, d->min, d->max);
    if (d->kind == SV_LEN_FIXED) {
        long v;
        const sv_keydef_t *k = sv_scenario_key("length", "value"); /* read as a long */
        if ((rc = sv_yget_long(n, k->name, 1, (long)k->lo, (long)k->hi, &v, err))) return rc;
        d->value = (double)v;
    } else if (d->kind == SV_LEN_UNIFORM) {
        d->lo = d->min;
        d->hi = d->max;
        if (!sv_ymap_get(n, "min") || !sv_ymap_get(n, "max"))
            return sv_errorf(err, SV_EINVAL, "%s: %s: uniform needs min and max",
                             at(n, w, sizeof w), n->path);
    } else if (d->kind == SV_LEN_NORMAL || d->kind == SV_LEN_LOGNORMAL) {
        if ((rc = sv__keys_read(n, "length", 1, d, err))) return rc;
    } else { /* SV_LEN_EMPIRICAL */
        char file[1024], col[64], full[2048];
        if ((rc = get_text(n, "file", 1, file, sizeof file, err)) ||
            (rc = get_text(n, "column", 1, col, sizeof col, err)))
            return rc;
        resolve_path(scenario, file, full, sizeof full);
        note_input(sc, full);
        if ((rc = sv_empirical_load(full, col, samples, &d->nsamples, err))) return rc;
        d->samples = *samples;
    }
    return sv_ymap_check_unknown(n, err);
}

static int read_trace(sv_ynode_t *tr, const char *scenario, sv_trace_cfg_t *t, sv_error_t *err)
{
    int rc;
    char w[512];
    char file[1024];
    if ((rc = sv_yexpect_map(tr, "workload.trace", err))) return rc;
    snprintf(t->time_col, sizeof t->time_col, "TIMESTAMP");
    snprintf(t->input_col, sizeof t->input_col, "ContextTokens");
    snprintf(t->output_col, sizeof t->output_col, "GeneratedTokens");
    t->speedup = 1.0;
    if ((rc = get_text(tr, "file", 1, file, sizeof file, err)) ||
        (rc = sv__keys_read(tr, "workload.trace", 1, t, err)))
        return rc;
    if (t->window_end > 0 && !(t->window_end > t->window_start))
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.trace.window_end_s (%g) must be after window_start_s (%g)",
                         at(sv_ymap_get(tr, "window_end_s"), w, sizeof w), t->window_end,
                         t->window_start);
    if (t->mean_rate > 0 && sv_ymap_get(tr, "speedup"))
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.trace: give speedup or mean_rate, not both (mean_rate "
                         "chooses the speedup)",
                         at(sv_ymap_get(tr, "mean_rate"), w, sizeof w));
    resolve_path(scenario, file, t->path, sizeof t->path);
    return sv_ymap_check_unknown(tr, err);
}

/* workload.rate_profile: a table of [time_s, req/s] points or a diurnal sinusoid, with
 * optional spikes. Times start at 0 and increase; rates are >= 0. */
static int read_profile(sv_ynode_t *pm, sv_rate_profile_t *p, sv_error_t *err)
{
    char w[512];
    int rc;
    if ((rc = sv_yexpect_map(pm, "workload.rate_profile", err))) return rc;
    if ((rc = sv__keys_read(pm, "workload.rate_profile", 0, p, err))) return rc;
    if (p->kind == SV_PROFILE_DIURNAL) {
        if ((rc = sv__keys_read(pm, "workload.rate_profile", 1, p, err))) return rc;
        p->peak_at = p->period / 2;
        if ((rc = sv__keys_read(pm, "workload.rate_profile", 2, p, err))) return rc;
    } else {
        sv_ynode_t *pts = sv_ymap_get(pm, "points");
        if (!pts)
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.rate_profile: missing required key 'points' (a list of "
                             "[time_s, req/s] pairs, the first at time 0)",
                             at(pm, w, sizeof w));
        if ((rc = sv_yexpect_seq(pts, "workload.rate_profile.points", err))) return rc;
        if (pts->n < 1 || pts->n > SV_MAX_PROFILE_POINTS)
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.rate_profile.points: give 1 to %d points",
                             at(pts, w, sizeof w), SV_MAX_PROFILE_POINTS);
        for (size_t i = 0; i < pts->n; i++) {
            sv_ynode_t *pt = pts->seq[i];
            double tv, rv;
            if (pt->kind != SV_Y_SEQ || pt->n != 2 || pt->seq[0]->kind != SV_Y_SCALAR ||
                pt->seq[1]->kind != SV_Y_SCALAR || sv_parse_double(pt->seq[0]->scalar, &tv) ||
                sv_parse_double(pt->seq[1]->scalar, &rv) || !isfinite(tv) || !isfinite(rv))
                return sv_errorf(err, SV_EINVAL,
                                 "%s: workload.rate_profile.points[%zu]: expected a pair "
                                 "[time_s, req/s] of numbers",
                                 at(pt, w, sizeof w), i);
            if (rv < 0)
                return sv_errorf(err, SV_EINVAL,
                                 "%s: workload.rate_profile.points[%zu]: rate %g is negative "
                                 "(expected req/s >= 0)",
                                 at(pt, w, sizeof w), i, rv);
            if (i == 0 && tv != 0)
                return sv_errorf(err, SV_EINVAL,
                                 "%s: workload.rate_profile.points[0]: the first point must be at "
                                 "time 0, got %g",
                                 at(pt, w, sizeof w), tv);
            if (i > 0 && !(tv > p->t[i - 1]))
                return sv_errorf(err, SV_EINVAL,
                                 "%s: workload.rate_profile.points[%zu]: time %g is not after the "
                                 "point before (%g); times must increase",
                                 at(pt, w, sizeof w), i, tv, p->t[i - 1]);
            p->t[i] = tv;
            p->rate[i] = rv;
        }
        p->n = (int)pts->n;
    }
    sv_ynode_t *sp = sv_ymap_get(pm, "spikes");
    if (sp && !sv_yscalar_is_null(sp)) {
        if ((rc = sv_yexpect_seq(sp, "workload.rate_profile.spikes", err))) return rc;
        if (sp->n > SV_MAX_SPIKES)
            return sv_errorf(err, SV_EINVAL, "%s: workload.rate_profile.spikes: at most %d spikes",
                             at(sp, w, sizeof w), SV_MAX_SPIKES);
        for (size_t i = 0; i < sp->n; i++) {
            sv_ynode_t *m = sp->seq[i];
            sv_spike_t *k = &p->spikes[i];
            if ((rc = sv_yexpect_map(m, "workload.rate_profile.spikes[]", err)) ||
                (rc = sv__keys_read(m, "workload.rate_profile.spikes", 0, k, err)) ||
                (rc = sv_ymap_check_unknown(m, err)))
                return rc;
        }
        p->nspikes = (int)sp->n;
    }
    return sv_ymap_check_unknown(pm, err);
}

/* workload.classes: a list of {name, share, input, output, priority, slo, rtt_ms}; the shares add
 * up to 1. Each class's slo is read with the top-level one (read_slo_metrics). */
static int read_classes(sv_ynode_t *wl, sv_scenario_t *sc, sv_error_t *err)
{
    char w[512];
    int rc;
    sv_workload_cfg_t *c = &sc->workload;
    sv_ynode_t *cl = sv_ymap_get(wl, "classes");
    if ((rc = sv_yexpect_seq(cl, "workload.classes", err))) return rc;
    if (cl->n < 1 || cl->n > SV_MAX_CLASSES)
        return sv_errorf(err, SV_ELIMIT, "%s: workload.classes: give 1 to %d classes, got %zu",
                         at(cl, w, sizeof w), SV_MAX_CLASSES, cl->n);
    const char *clash[] = {"input", "output"};
    for (int i = 0; i < 2; i++)
        if (sv_ymap_get(wl, clash[i]) && !sv_yscalar_is_null(sv_ymap_get(wl, clash[i])))
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.%s cannot be combined with workload.classes (each "
                             "class gives its own %s)",
                             at(sv_ymap_get(wl, clash[i]), w, sizeof w), clash[i], clash[i]);
    double sum = 0.0;
    c->nclasses = (int)cl->n;
    sc->metrics.nclasses = (int)cl->n;
    for (size_t i = 0; i < cl->n; i++) {
        sv_ynode_t *it = cl->seq[i];
        sv_class_cfg_t *k = &c->classes[i];
        long prio = 0;
        char *name = sc->metrics.class_name[i];
        if ((rc = sv_yexpect_map(it, it->path, err)) ||
            (rc = get_text(it, "name", 1, name, SV_CLASS_NAME, err)) ||
            (rc = sv_yget_double(it, "share", 1, 0, 1, &k->share, err)) ||
            (rc = sv_yget_long(it, "priority", 0, INT32_MIN, INT32_MAX, &prio, err)) < 0 ||
            (rc = read_lengths(it, "input", sc, &k->input, &sc->emp_class[i][0], err)) ||
            (rc = read_lengths(it, "output", sc, &k->output, &sc->emp_class[i][1], err)))
            return rc;
        if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
                strlen(name) ||
            !name[0])
            return sv_errorf(err, SV_EINVAL,
                             "%s: %s.name: expected letters, digits, '_', '.' or '-', got '%s'",
                             at(sv_ymap_get(it, "name"), w, sizeof w), it->path, name);
        (void)sv_ymap_get(it, "slo"); /* read with the top-level slo */
        char rp[160];
        snprintf(rp, sizeof rp, "%s.rtt_ms", it->path);
        if ((rc = sv_network_read_rtt(it, rp, &sc->class_rtt[i], err))) return rc;
        sc->has_class_rtt |= sc->class_rtt[i].enabled;
        if ((rc = sv_ymap_check_unknown(it, err))) return rc;
        k->priority = (int32_t)prio;
        for (size_t j = 0; j < i; j++)
            if (strcmp(sc->metrics.class_name[j], name) == 0)
                return sv_errorf(err, SV_EINVAL, "%s: %s.name: '%s' names two classes",
                                 at(sv_ymap_get(it, "name"), w, sizeof w), it->path, name);
        sum += k->share;
    }
    if (fabs(sum - 1.0) > 1e-9)
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.classes: the shares add up to %.10g, expected 1 (within "
                         "1e-9)",
                         at(cl, w, sizeof w), sum);
    return 0;
}

/* workload.sessions: multi-turn chats and agentic programs (include/servesim/traffic/session.h). */
static int read_sessions(sv_ynode_t *wl, sv_ynode_t *sn, sv_scenario_t *sc, sv_error_t *err)
{
    char w[512];
    int rc;
    sv_session_cfg_t *s = &sc->sessions;
    s->given = 1;
    s->history = 1;
    s->shape = SV_SESSION_CHAIN;
    if ((rc = sv_yexpect_map(sn, "workload.sessions", err)) ||
        (rc = sv__keys_read(sn, "workload.sessions", 0, s, err)))
        return rc;
    if (s->shape == SV_SESSION_FANOUT) {
        sv_ynode_t *h = sv_ymap_get(sn, "history");
        if (h && s->history)
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.sessions.history: a fanout's calls start together, so "
                             "none can carry another's answer; use shape: chain",
                             at(h, w, sizeof w));
        s->history = 0;
    }
    if (!sv_ymap_get(sn, "turns"))
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.sessions: missing required key 'turns' (calls per "
                         "session: a number or a map with dist: fixed|uniform|normal|lognormal|"
                         "empirical)",
                         at(sn, w, sizeof w));
    if ((rc = read_lengths(sn, "turns", sc, &s->turns, &sc->emp_session[0], err))) return rc;
    /* Calls per session are at most 100000: the default bound of a distribution's draws. */
    sv_ynode_t *tn = sv_ymap_get(sn, "turns");
    if ((tn->kind == SV_Y_SCALAR || !sv_ymap_get(tn, "max")) && s->turns.max > 100000)
        s->turns.max = 100000;
    if (s->turns.max > 100000 || (s->turns.kind == SV_LEN_FIXED && s->turns.value > 100000))
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.sessions.turns: at most 100000 calls per session",
                         at(tn, w, sizeof w));
    if (sv_ymap_get(sn, "think_time_ms")) {
        if (s->shape == SV_SESSION_FANOUT)
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.sessions.think_time_ms: a fanout's calls start "
                             "together; think times are for shape: chain",
                             at(sv_ymap_get(sn, "think_time_ms"), w, sizeof w));
        s->has_think = 1;
        if ((rc = read_lengths(sn, "think_time_ms", sc, &s->think_ms, &sc->emp_session[1], err)))
            return rc;
    }
    if (sv_ymap_get(sn, "message")) {
        s->has_message = 1;
        if ((rc = read_lengths(sn, "message", sc, &s->message, &sc->emp_session[2], err)))
            return rc;
    }
    if ((rc = sv_ymap_check_unknown(sn, err))) return rc;
    const char *clash[] = {"duration_s", "trace", "mooncake"};
    for (int i = 0; i < 3; i++)
        if (sv_ymap_get(wl, clash[i]))
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.%s cannot be combined with workload.sessions (sessions."
                             "count and the calls each makes give the requests; num_requests "
                             "may bound them)",
                             at(sv_ymap_get(wl, clash[i]), w, sizeof w), clash[i]);
    return 0;
}

/* workload.mooncake: a Mooncake trace file, which gives arrivals, lengths and prompts (so no
 * other arrival or length key may come with it). */
static int read_mooncake(sv_ynode_t *wl, sv_ynode_t *mc, sv_scenario_t *sc, sv_error_t *err)
{
    char w[512];
    int rc;
    sv_workload_cfg_t *c = &sc->workload;
    sv_mooncake_cfg_t *m = &sc->mooncake;
    char file[1024];
    m->given = 1;
    m->block_tokens = 512;
    m->speedup = 1.0;
    if ((rc = sv_yexpect_map(mc, "workload.mooncake", err)) ||
        (rc = get_text(mc, "file", 1, file, sizeof file, err)) ||
        (rc = sv__keys_read(mc, "workload.mooncake", 0, m, err)) ||
        (rc = sv_ymap_check_unknown(mc, err)))
        return rc;
    resolve_path(sc->path, file, m->path, sizeof m->path);
    const char *clash[] = {"trace",  "rate",       "burstiness",    "input",
                           "output", "duration_s", "shared_prefix", "rate_profile"};
    for (int i = 0; i < 8; i++)
        if (sv_ymap_get(wl, clash[i]))
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.%s cannot be combined with workload.mooncake (the "
                             "trace gives arrivals, lengths and prompts)",
                             at(sv_ymap_get(wl, clash[i]), w, sizeof w), clash[i]);
    note_input(sc, m->path);
    if (c->num_requests > 0) m->limit = c->num_requests;
    c->has_trace = 1;
    return 0;
}

/* workload.rate_profile: the rate over time (no rate, trace or burstiness beside it); sets the
 * workload's mean rate from it. */
static int read_rate_profile(sv_ynode_t *wl, sv_ynode_t *prof, sv_workload_cfg_t *c,
                             sv_error_t *err)
{
    char w[512];
    int rc;
    const char *clash[] = {"rate", "trace"};
    for (int i = 0; i < 2; i++)
        if (sv_ymap_get(wl, clash[i]) && !sv_yscalar_is_null(sv_ymap_get(wl, clash[i])))
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.%s cannot be combined with workload.rate_profile "
                             "(the profile gives the rate at each time)",
                             at(sv_ymap_get(wl, clash[i]), w, sizeof w), clash[i]);
    if (c->burstiness != 1.0)
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.burstiness: a rate_profile generates Poisson arrivals "
                         "by thinning, so burstiness must be 1 (got %g)",
                         at(sv_ymap_get(wl, "burstiness"), w, sizeof w), c->burstiness);
    if ((rc = read_profile(prof, &c->profile, err))) return rc;
    const sv_rate_profile_t *p = &c->profile;
    if (sv_profile_peak(p) <= 0)
        return sv_errorf(err, SV_EINVAL, "%s: workload.rate_profile: the rate is 0 at all times",
                         at(prof, w, sizeof w));
    if (c->duration == 0 && p->kind != SV_PROFILE_DIURNAL && p->rate[p->n - 1] <= 0)
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.rate_profile: the last point's rate is 0, so "
                         "num_requests may never be reached; give workload.duration_s",
                         at(prof, w, sizeof w));
    double cand = sv_profile_candidates(p, c->num_requests, c->duration);
    if (!(cand <= SV_PROFILE_MAX_CANDIDATES))
        return sv_errorf(err, SV_ELIMIT, "%s: workload.rate_profile: " SV_PROFILE_TOO_LONG,
                         at(prof, w, sizeof w), cand, SV_PROFILE_MAX_CANDIDATES);
    c->rate = sv_profile_mean(p, 0,
                              c->duration > 0                 ? c->duration
                              : p->kind == SV_PROFILE_DIURNAL ? p->period
                              : p->t[p->n - 1] > 0            ? p->t[p->n - 1]
                                                              : 1.0);
    return 0;
}

static int read_workload(sv_ynode_t *wl, sv_scenario_t *sc, sv_error_t *err)
{
    char w[512];
    int rc;
    sv_workload_cfg_t *c = &sc->workload;
    if ((rc = sv_yexpect_map(wl, "workload", err))) return rc;
    c->rate = INFINITY;
    c->burstiness = 1.0;
    c->rescale = 1;
    sv_ynode_t *tr = sv_ymap_get(wl, "trace");
    if ((rc = sv__keys_read(wl, "workload", 0, c, err))) return rc;
    sv_ynode_t *sp = sv_ymap_get(wl, "shared_prefix");
    if (sp && !sv_yscalar_is_null(sp)) {
        sv_shared_prefix_cfg_t *p = &sc->shared_prefix;
        p->given = 1;
        p->prompts = 1;
        p->share = 1.0;
        if ((rc = sv_yexpect_map(sp, "workload.shared_prefix", err)) ||
            (rc = sv__keys_read(sp, "workload.shared_prefix", 0, p, err)) ||
            (rc = sv_ymap_check_unknown(sp, err)))
            return rc;
    }
    sv_ynode_t *mc = sv_ymap_get(wl, "mooncake");
    if (mc && !sv_yscalar_is_null(mc)) {
        if ((rc = read_mooncake(wl, mc, sc, err))) return rc;
    }
    sv_ynode_t *rate = sv_ymap_get(wl, "rate");
    if (rate && !sv_yscalar_is_null(rate)) {
        double v;
        if (rate->kind != SV_Y_SCALAR || sv_parse_double(rate->scalar, &v) || !(v > 0))
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload.rate: expected requests per second > 0 or inf, got "
                             "'%s'",
                             at(rate, w, sizeof w), rate->kind == SV_Y_SCALAR ? rate->scalar : "?");
        c->rate = v;
    }
    sv_ynode_t *prof = sv_ymap_get(wl, "rate_profile");
    if (prof && !sv_yscalar_is_null(prof)) {
        if ((rc = read_rate_profile(wl, prof, c, err))) return rc;
    }
    sv_ynode_t *cls = sv_ymap_get(wl, "classes");
    if ((tr || sc->mooncake.given) && cls && !sv_yscalar_is_null(cls))
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.classes cannot be combined with a trace (the trace gives "
                         "the lengths)",
                         at(sv_ymap_get(wl, "classes"), w, sizeof w));
    sv_ynode_t *sn = sv_ymap_get(wl, "sessions");
    if (sn && !sv_yscalar_is_null(sn) && (rc = read_sessions(wl, sn, sc, err))) return rc;
    if (sn && !sv_yscalar_is_null(sn) && cls && !sv_yscalar_is_null(cls))
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload.classes cannot be combined with workload.sessions (a "
                         "session's calls take the workload's own lengths)",
                         at(cls, w, sizeof w));
    if (tr) {
        const char *clash[] = {"rate", "burstiness", "input", "output", "duration_s"};
        for (int i = 0; i < 5; i++)
            if (sv_ymap_get(wl, clash[i]))
                return sv_errorf(err, SV_EINVAL,
                                 "%s: workload.%s cannot be combined with workload.trace (the "
                                 "trace gives arrivals and lengths)",
                                 at(sv_ymap_get(wl, clash[i]), w, sizeof w), clash[i]);
        c->has_trace = 1;
        if ((rc = read_trace(tr, sc->path, &c->trace, err))) return rc;
        note_input(sc, c->trace.path);
        if (c->num_requests > 0) c->trace.limit = c->num_requests;
    } else if (sv_ymap_get(wl, "classes") && !sv_yscalar_is_null(sv_ymap_get(wl, "classes"))) {
        if ((rc = read_classes(wl, sc, err))) return rc;
        if (c->num_requests == 0 && c->duration == 0)
            return sv_errorf(err, SV_EINVAL, "%s: workload: give num_requests or duration_s",
                             at(wl, w, sizeof w));
    } else if (!sc->mooncake.given) {
        if ((rc = read_lengths(wl, "input", sc, &c->input, &sc->emp_input, err)) ||
            (rc = read_lengths(wl, "output", sc, &c->output, &sc->emp_output, err)))
            return rc;
        if (sc->sessions.given) return sv_ymap_check_unknown(wl, err);
        if (c->num_requests == 0 && c->duration == 0)
            return sv_errorf(err, SV_EINVAL,
                             "%s: workload: give num_requests or duration_s (or a trace)",
                             at(wl, w, sizeof w));
    }
    /* generated arrivals (lengths or classes) at rate inf over a duration: unbounded */
    if (!tr && !sc->mooncake.given && isinf(c->rate) && c->num_requests == 0 &&
        c->max_concurrency == 0)
        return sv_errorf(err, SV_EINVAL,
                         "%s: workload: rate inf sends every request at once, so it needs "
                         "num_requests (or max_concurrency for a closed loop)",
                         at(wl, w, sizeof w));
    return sv_ymap_check_unknown(wl, err);
}

/* A budget key: pNN or pNN.N (up to three decimals) with 0 < NN < 100. */
static int budget_pct(const char *k, double *pct)
{
    const char *s = k + 1;
    int digits = 0, decimals = 0;
    if (k[0] != 'p') return -1;
    while (*s >= '0' && *s <= '9' && digits < 3)
        s++, digits++;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            decimals++;
    if (*s || digits < 1 || digits > 2 || (strchr(k, '.') && (decimals < 1 || decimals > 3)))
        return -1;
    if (sv_parse_double(k + 1, pct) || !(*pct > 0 && *pct < 100)) return -1;
    return 0;
}

/*
 * An slo map (the top level's or a class's) into out, which holds the defaults (the
 * attainment target). Each of ttft_ms, tpot_ms, e2el_ms is a number (a per-request
 * threshold, vLLM's --goodput) or a map of percentile budgets {p50: 200, p99: 4000},
 * optionally with per_request: N as well; itl_ms takes budgets only (vLLM's goodput has
 * no per-request ITL threshold).
 */
static int read_slo(sv_ynode_t *slo, sv_slo_t *out, sv_error_t *err)
{
    static const char *const keys[SV_K_COUNT] = {"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"};
    char w[512];
    int rc;
    double per[SV_K_COUNT] = {NAN, NAN, NAN, NAN};
    out->nbudgets = 0;
    if (slo && !sv_yscalar_is_null(slo)) {
        if ((rc = sv_yexpect_map(slo, slo->path, err))) return rc;
        for (int k = 0; k < SV_K_COUNT; k++) {
            sv_ynode_t *n = sv_ymap_get(slo, keys[k]);
            if (!n || sv_yscalar_is_null(n)) continue;
            if (n->kind == SV_Y_SCALAR && k != SV_K_ITL) {
                if ((rc = sv_yget_double(slo, keys[k], 0, 0, 1e12, &per[k], err)) < 0) return rc;
                continue;
            }
            if (n->kind != SV_Y_MAP)
                return sv_errorf(err, SV_EINVAL,
                                 "%s: %s: expected %s{p50: 200, p99: 4000} (percentile budgets "
                                 "in ms)%s",
                                 at(n, w, sizeof w), n->path,
                                 k == SV_K_ITL ? "" : "a number of ms per request or ",
                                 k == SV_K_ITL ? "; vLLM's goodput has no per-request ITL "
                                                 "threshold"
                                               : "");
            if (n->n == 0)
                return sv_errorf(err, SV_EINVAL,
                                 "%s: %s: expected %spercentile budgets {p50: 200, p99: 4000}, "
                                 "got an empty map",
                                 at(n, w, sizeof w), n->path,
                                 k == SV_K_ITL ? "" : "per_request and/or ");
            for (size_t i = 0; i < n->n; i++) {
                sv_yentry_t *e = &n->map[i];
                e->used = 1;
                double pct = 0, ms;
                if (strcmp(e->key, "per_request") == 0 && k != SV_K_ITL) {
                    if ((rc = sv_yscalar_double(e->val, 0, 1e12, &per[k], err))) return rc;
                    continue;
                }
                if (budget_pct(e->key, &pct))
                    return sv_errorf(err, SV_EINVAL,
                                     "%s: %s.%s: expected a percentile budget key pNN or pNN.N "
                                     "with 0 < NN < 100 (p50, p99.9)%s",
                                     at(e->val, w, sizeof w), n->path, e->key,
                                     k == SV_K_ITL ? "" : " or per_request");
                for (int j = 0; j < out->nbudgets; j++)
                    if (out->budget[j].metric == k && out->budget[j].pct == pct)
                        return sv_errorf(err, SV_EINVAL,
                                         "%s: %s.%s: percentile %g already has a budget "
                                         "(one budget per percentile)",
                                         at(e->val, w, sizeof w), n->path, e->key, pct);
                if ((rc = sv_yscalar_double(e->val, 0, 1e12, &ms, err))) return rc;
                if (out->nbudgets >= SV_MAX_BUDGETS)
                    return sv_errorf(err, SV_ELIMIT, "%s: %s.%s: more than %d percentile budgets",
                                     at(e->val, w, sizeof w), n->path, e->key, SV_MAX_BUDGETS);
                out->budget[out->nbudgets++] = (sv_budget_t){k, pct, ms};
            }
        }
        /* An interactivity of X tokens per second per user (InferenceX's axis) is the
         * per-request TPOT threshold 1000 / X ms. */
        double tok_s;
        if ((rc = sv_yget_double(slo, "interactivity_tok_s", 0, 1e-6, 1e9, &tok_s, err)) < 0)
            return rc;
        if (rc == 0 && !isnan(per[SV_K_TPOT]))
            return sv_errorf(err, SV_EINVAL,
                             "%s: %s.interactivity_tok_s: sets the per-request TPOT threshold "
                             "(1000 / tok_s ms); give it or a per-request tpot_ms, not both",
                             at(sv_ymap_get(slo, "interactivity_tok_s"), w, sizeof w),
                             slo->path);
        if (rc == 0) per[SV_K_TPOT] = 1000.0 / tok_s;
        /* 0 would call any latency a success: plan's capacity becomes unbounded */
        if ((rc = sv_yget_double(slo, "attainment", 0, 1e-9, 1, &out->attainment, err)) < 0 ||
            (rc = sv_ymap_check_unknown(slo, err)))
            return rc;
    }
    out->ttft_ms = per[SV_K_TTFT];
    out->tpot_ms = per[SV_K_TPOT];
    out->e2el_ms = per[SV_K_E2EL];
    return 0;
}

static int read_slo_metrics(sv_ynode_t *root, sv_scenario_t *sc, sv_error_t *err)
{
    char w[512];
    int rc;
    sv_metrics_cfg_t *m = &sc->metrics;
    m->percentiles[0] = 99.0;
    m->npercentiles = 1;
    m->selected = SV_M_TTFT | SV_M_TPOT | SV_M_ITL;
    m->sample_interval = 1.0;
    sv_ynode_t *slo = sv_ymap_get(root, "slo");
    sv_slo_t top;
    top.attainment = 0.9;
    if ((rc = read_slo(slo, &top, err))) return rc;
    m->slo_ttft_ms = top.ttft_ms;
    m->slo_tpot_ms = top.tpot_ms;
    m->slo_e2el_ms = top.e2el_ms;
    m->attainment = top.attainment;
    m->nbudgets = top.nbudgets;
    memcpy(m->budgets, top.budget, sizeof top.budget);
    /* Each class's own slo replaces the top-level one for that class. */
    sv_ynode_t *cl = sv_ymap_get(sv_ymap_get(root, "workload"), "classes");
    for (int i = 0; i < m->nclasses && cl && cl->kind == SV_Y_SEQ; i++) {
        sv_ynode_t *own = sv_ymap_get(cl->seq[i], "slo");
        m->class_slo[i] = top;
        if (own && !sv_yscalar_is_null(own)) {
            m->class_slo[i].attainment = top.attainment;
            if ((rc = read_slo(own, &m->class_slo[i], err))) return rc;
        }
    }
    sv_ynode_t *mc = sv_ymap_get(root, "metrics");
    if (!mc || sv_yscalar_is_null(mc)) return 0;
    if ((rc = sv_yexpect_map(mc, "metrics", err))) return rc;
    sv_ynode_t *p = sv_ymap_get(mc, "percentiles");
    if (p) {
        if ((rc = sv_yexpect_seq(p, "metrics.percentiles", err))) return rc;
        if (p->n < 1 || p->n > SV_MAX_PCT - 4)
            return sv_errorf(err, SV_EINVAL, "%s: metrics.percentiles: give 1 to %d values",
                             at(p, w, sizeof w), SV_MAX_PCT - 4);
        m->npercentiles = 0;
        for (size_t i = 0; i < p->n; i++)
            if ((rc =
                     sv_yscalar_double(p->seq[i], 0, 100, &m->percentiles[m->npercentiles++], err)))
                return rc;
    }
    sv_ynode_t *sel = sv_ymap_get(mc, "percentile_metrics");
    if (sel) {
        if ((rc = sv_yexpect_seq(sel, "metrics.percentile_metrics", err))) return rc;
        m->selected = 0;
        for (size_t i = 0; i < sel->n; i++) {
            int bit;
            if ((rc = sv_yscalar_enum(sel->seq[i], METRIC_NAMES, (int)(sizeof METRIC_NAMES / sizeof *METRIC_NAMES), &bit, err))) return rc;
            m->selected |= bit;
        }
    }
    if ((rc = sv__keys_read(mc, "metrics", 0, m, err))) return rc;
    return sv_ymap_check_unknown(mc, err);
}

/* An `autoscaler` map (top level: every pool; a pool's own: that pool). */
static int read_autoscaler(sv_ynode_t *am, const sv_scenario_t *sc, sv_pool_cfg_t *pool,
                           sv_error_t *err)
{
    char w[512];
    int rc;
    sv_autoscale_cfg_t *a = &pool->autoscale;
    if ((rc = sv_yexpect_map(am, "autoscaler", err))) return rc;
    *a = (sv_autoscale_cfg_t){.enabled = 1, .initial = 0, .cold_start = -1};
    if ((rc = sv__keys_read(am, "autoscaler", 0, a, err))) return rc;
    long mn = a->min, mx = a->max, init = a->initial;
    double cold = a->cold_start;
    if (a->policy == SV_SCALE_KV && a->target > 1)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.target: the kv policy's target is a KV usage in (0, 1], got %g",
                         at(sv_ymap_get(am, "target"), w, sizeof w), am->path, a->target);
    if (mn > mx)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s: min_replicas (%ld) is greater than max_replicas (%ld)",
                         at(am, w, sizeof w), am->path, mn, mx);
    if (init == 0) init = mn;
    if (init < mn || init > mx)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.initial_replicas: %ld is outside [min_replicas, max_replicas] = "
                         "[%ld, %ld]",
                         at(sv_ymap_get(am, "initial_replicas"), w, sizeof w), am->path, init, mn,
                         mx);
    if (cold >= 0 && sc->horizon > 0 && cold >= sc->horizon)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s.cold_start_s: %g s is not shorter than horizon_s (%g s), so no "
                         "replica started by the autoscaler could ever serve",
                         at(sv_ymap_get(am, "cold_start_s"), w, sizeof w), am->path, cold,
                         sc->horizon);
    a->min = (int)mn;
    a->max = (int)mx;
    a->initial = (int)init;
    pool->replicas = a->max;
    return sv_ymap_check_unknown(am, err);
}

/*
 * The rules that tie values of different sections together. Rules about which keys may
 * appear together in one section stay with the reader of that section (they are about the
 * text); these are about values, so a programmatic edit (plan's candidates) can break them
 * too. Each message starts with the key it is about, which the loader locates in the file.
 */
/* cluster_gpus: every pool's workers (replicas of tp x pp GPUs) fit in the cluster. */
static int workers_fit(const sv_scenario_t *sc, sv_error_t *err)
{
    if (sc->cluster_gpus <= 0) return 0;
    long total = 0;
    char parts[512] = "";
    size_t off = 0;
    for (int i = 0; i < sc->npools; i++) {
        const sv_pool_cfg_t *pc = &sc->pools[i];
        long per = (long)pc->perf.tp * (pc->perf.pp > 1 ? pc->perf.pp : 1);
        total += pc->replicas * per;
        if (off < sizeof parts)
            off += (size_t)snprintf(parts + off, sizeof parts - off, "%s'%s' %d x %ld",
                                    i ? " + " : "", pc->name, pc->replicas, per);
    }
    if (total <= sc->cluster_gpus) return 0;
    return sv_errorf(err, SV_EINVAL,
                     "cluster_gpus: the workers exceed the cluster: they need %ld GPUs (%s), "
                     "but the cluster has %ld (fewer replicas, or a smaller tp or pp)",
                     total, parts, sc->cluster_gpus);
}

/*
 * A pool with pipeline stages: each replica keeps pp micro-batches in flight (the replica's
 * lanes, docs/cost-model.md), which servesim does not combine with speculative decoding
 * (vLLM V1 refuses it with pipeline parallelism), vLLM V0's multi-step rounds, or a
 * one-step lag of async scheduling or an overlap loop (SGLang runs pipeline parallelism in
 * its own loop, Scheduler.event_loop_pp, python/sglang/srt/managers/scheduler_pp_mixin.py;
 * the engine defaults resolve both off with pp > 1).
 */
static int pipeline_check(const sv_scenario_t *sc, int i, sv_error_t *err)
{
    const sv_pool_cfg_t *pc = &sc->pools[i];
    char hw[48], en[48];
    if (sc->pools_listed) {
        snprintf(hw, sizeof hw, "pools.%d.hardware", i);
        snprintf(en, sizeof en, "pools.%d.engine", i);
    } else {
        snprintf(hw, sizeof hw, "hardware");
        snprintf(en, sizeof en, "engine");
    }
    int pp = pc->perf.pp;
    unsigned short split[SV_PP_MAX];
    sv_error_t e2;
    if (sv_perf_pp_split(&sc->model, &pc->perf, split, &e2))
        return sv_errorf(err, SV_EINVAL, "%s: %s", hw, e2.msg);
    char steps[48];
    snprintf(steps, sizeof steps, "num_scheduler_steps=%d", pc->perf.sched_steps);
    const struct {
        int on;
        const char *key, *what, *why;
    } rules[] = {
        {sv_spec_k(&pc->perf) > 0, hw, "speculative decoding",
         "vLLM V1 refuses speculative decoding with pipeline parallelism); use pp 1 or no "
         "speculative"},
        {pc->perf.sched_steps > 1, en, steps,
         "a replica with pipeline stages schedules one micro-batch at a time)"},
        {pc->engine.async_scheduling > 0, en, "async_scheduling",
         "the micro-batches in flight are the pipeline's overlap: docs/cost-model.md); leave "
         "it unset or false"},
        {pc->engine.overlap_schedule > 0, en, "overlap_schedule",
         "SGLang runs pipeline parallelism in its own loop, not the overlap one); leave it "
         "unset or false"},
    };
    for (size_t k = 0; k < sizeof rules / sizeof *rules; k++)
        if (rules[k].on)
            return sv_errorf(err, SV_EINVAL, "%s: %s with pp=%d is not modelled (%s",
                             rules[k].key, rules[k].what, pp, rules[k].why);
    return 0;
}

int sv_scenario_validate(const sv_scenario_t *sc, sv_error_t *err)
{
    int rc, roles[3] = {0, 0, 0};
    for (int i = 0; i < sc->npools; i++)
        roles[sc->pools[i].role]++;
    if (sc->npools < 1) return sv_errorf(err, SV_EINVAL, "pools: no pool to serve with");
    if (roles[SV_ROLE_PREFILL] || roles[SV_ROLE_DECODE]) {
        if (roles[SV_ROLE_COLOCATED])
            return sv_errorf(err, SV_EINVAL,
                             "pools: colocated pools cannot be mixed with a prefill/decode split");
        if (!roles[SV_ROLE_DECODE])
            return sv_errorf(err, SV_EINVAL,
                             "pools: a disaggregated scenario needs a decode pool (role: decode) "
                             "to take the prefilled requests");
        if (!roles[SV_ROLE_PREFILL])
            return sv_errorf(
                err, SV_EINVAL,
                "pools: a disaggregated scenario needs a prefill pool (role: prefill)");
        if (!sc->disaggregated)
            return sv_errorf(err, SV_EINVAL, "pools: prefill and decode pools, but no split");
    } else if (sc->disaggregated || sc->disaggregation_given) {
        return sv_errorf(err, SV_EINVAL,
                         "disaggregation: needs pools with role prefill and role decode");
    }
    if (sc->disaggregated && !(sc->link.bw_per_gpu > 0))
        return sv_errorf(err, SV_EINVAL, "disaggregation.kv_link: no bandwidth");
    if (sc->sessions.given && sc->network.enabled)
        return sv_errorf(err, SV_EINVAL,
                         "network: a client round trip together with workload.sessions is not "
                         "modelled (a session's next call would leave when the server, not the "
                         "client, has the answer)");
    if ((rc = workers_fit(sc, err))) return rc;
    for (int i = 0; i < sc->npools; i++) {
        const sv_engine_cfg_t *e = &sc->pools[i].engine;
        if (sc->pools[i].perf.pp > 1 && (rc = pipeline_check(sc, i, err))) return rc;
        if (e->scheduler == SV_SCHED_VLLM && e->max_num_batched_tokens < e->max_num_seqs) {
            char key[48];
            if (sc->pools_listed)
                snprintf(key, sizeof key, "pools.%d.engine", i);
            else
                snprintf(key, sizeof key, "engine");
            return sv_errorf(err, SV_EINVAL,
                             "%s: max_num_batched_tokens (%ld) must be >= max_num_seqs (%ld) so "
                             "every running sequence can decode each step",
                             key, e->max_num_batched_tokens, e->max_num_seqs);
        }
    }
    return 0;
}

/* The node a dotted key path names ("pools.1.engine"), or the deepest one that exists. */
static sv_ynode_t *node_at(sv_ynode_t *root, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    sv_ynode_t *n = root;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && n;
         k = strtok_r(NULL, ".", &save)) {
        sv_ynode_t *next = NULL;
        if (n->kind == SV_Y_MAP) {
            next = sv_ymap_get(n, k);
        } else if (n->kind == SV_Y_SEQ) {
            char *end;
            long i = strtol(k, &end, 10);
            if (*end == '\0' && i >= 0 && (size_t)i < n->n) next = n->seq[i];
        }
        if (!next) break;
        n = next;
    }
    return n;
}

/* sv_scenario_validate on a freshly read scenario: its message gets the file location of
 * the key it names. */
static int validate_located(const sv_scenario_t *sc, sv_ynode_t *root, sv_error_t *err)
{
    int rc = sv_scenario_validate(sc, err);
    if (!rc) return 0;
    char key[256], w[512];
    size_t k = strcspn(err->msg, ":");
    snprintf(key, sizeof key, "%.*s", (int)(k < sizeof key ? k : sizeof key - 1), err->msg);
    return sv_error_prefix(err, "%s", at(node_at(root, key), w, sizeof w));
}

static int read_scenario(sv_ydoc_t *doc, const sv_catalog_t *cat, sv_scenario_t *sc,
                         sv_error_t *err)
{
    char w[512];
    int rc;
    sv_ynode_t *root = doc->root;
    if (!root) return sv_errorf(err, SV_EINVAL, "%s: the scenario is empty", sc->path);
    if ((rc = sv_yexpect_map(root, sc->path, err))) return rc;
    const char *base = strrchr(sc->path, '/');
    snprintf(sc->name, sizeof sc->name, "%s", base ? base + 1 : sc->path);
    char *dot = strrchr(sc->name, '.');
    if (dot) *dot = '\0';
    if ((rc = sv__keys_read(root, "", 0, sc, err))) return rc;
    long seed = 0;
    if ((rc = sv_yget_long(root, "seed", 0, 0, LONG_MAX, &seed, err)) < 0) return rc;
    sc->seed = (uint64_t)seed;
    char model[1024], full[2048];
    if ((rc = get_text(root, "model", 1, model, sizeof model, err))) return rc;
    size_t ml = strlen(model);
    if (ml > 5 && strcmp(model + ml - 5, ".json") == 0)
        resolve_path(sc->path, model, full, sizeof full);
    else
        snprintf(full, sizeof full, "%s", model);
    struct stat st;
    if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) note_input(sc, full); /* a config.json */
    if ((rc = sv_catalog_resolve_model(cat, full, &sc->model, err))) {
        char msg[SV_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return sv_errorf(err, rc, "%s: model: %s", at(sv_ymap_get(root, "model"), w, sizeof w),
                         msg);
    }
    if ((rc = read_pools(root, cat, sc, err)) || (rc = read_router(root, sc, err)) ||
        (rc = read_disagg(root, sc, err)))
        return rc;
    for (int i = 0; i < sc->npools; i++) { /* engine.profile, or the catalog's "vllm" */
        if ((rc = sv_perf_settings_profile(&sc->pools[i].perf, cat, sc->pools[i].perf.engine, err)))
            return sv_error_prefix(err, "%s: engine.profile", sc->path);
        if ((rc = profile_defaults(&sc->pools[i], cat, err))) return rc;
    }
    sv_ynode_t *wl = sv_ymap_get(root, "workload");
    if (!wl)
        return sv_errorf(err, SV_EINVAL, "%s: missing required key 'workload'",
                         at(root, w, sizeof w));
    if ((rc = read_workload(wl, sc, err))) return rc;
    if ((rc = read_slo_metrics(root, sc, err))) return rc;
    if ((rc = sv_finance_read(root, &sc->finance, err))) return rc;
    if ((rc = sv_network_read(root, &sc->network, err))) return rc;
    if ((rc = sv__keys_read(root, "", 1, sc, err))) return rc;
    /* Autoscalers: a pool's own `autoscaler`, else the top-level one for every pool. */
    sv_ynode_t *as = sv_ymap_get(root, "autoscaler"), *pl = sv_ymap_get(root, "pools");
    for (int i = 0; i < sc->npools; i++) {
        sv_ynode_t *own = pl && pl->kind == SV_Y_SEQ ? sv_ymap_get(pl->seq[i], "autoscaler") : NULL;
        sv_ynode_t *use = own && !sv_yscalar_is_null(own) ? own : as;
        if (use && !sv_yscalar_is_null(use) && (rc = read_autoscaler(use, sc, &sc->pools[i], err)))
            return rc;
    }
    /* plan: and sweep: belong to those commands, which read them themselves
     * (include/servesim/studies/sections.h); here they are only known keys. */
    sv_ymap_get(root, "plan");
    sv_ymap_get(root, "sweep");
    if ((rc = sv_ymap_check_unknown(root, err))) return rc;
    if ((rc = validate_located(sc, root, err))) return rc;
    return 0;
}

/* A trace read once for every variant of one source (sv_scenario_src_t). */
typedef struct trace_cache {
    sv_trace_cfg_t cfg;
    sv_trace_t *trace; /* owned; NULL until a variant read one */
} trace_cache_t;

/* The files the scenario names: a Mooncake trace, or a trace (shared through cache when a
 * variant before read the same one). */
static int load_traces(sv_scenario_t *sc, trace_cache_t *cache, sv_error_t *err)
{
    if (sc->mooncake.given) return sv_mooncake_load(&sc->mooncake, &sc->trace, &sc->prompts, err);
    if (!sc->workload.has_trace) return 0;
    if (cache && cache->trace && memcmp(&cache->cfg, &sc->workload.trace, sizeof cache->cfg) == 0) {
        sc->trace = cache->trace;
        sc->trace_borrowed = 1;
        return 0;
    }
    int rc = sv_trace_load(&sc->workload.trace, &sc->trace, err);
    if (!rc && cache && !cache->trace) {
        cache->cfg = sc->workload.trace;
        cache->trace = sc->trace;
        sc->trace_borrowed = 1;
    }
    return rc;
}

/* The scenario of a document (freed here) with its overrides applied. */
static int scenario_of_doc(const char *path, sv_ydoc_t *doc, const sv_catalog_t *cat,
                           trace_cache_t *cache, sv_scenario_t **out, sv_error_t *err)
{
    sv_scenario_t *sc = calloc(1, sizeof *sc);
    int rc = sc ? 0 : sv_errorf(err, SV_ENOMEM, "out of memory");
    if (!rc) {
        snprintf(sc->path, sizeof sc->path, "%s", path);
        rc = read_scenario(doc, cat, sc, err);
    }
    sv_ydoc_free(doc);
    if (!rc) rc = load_traces(sc, cache, err);
    if (rc) {
        sv_scenario_free(sc);
        return rc;
    }
    *out = sc;
    return 0;
}

struct sv_scenario_src {
    char path[1024];
    sv_ydoc_t *doc; /* the file with the base overrides applied, never read by getters */
    trace_cache_t cache;
};

int sv_scenario_src_open(const char *path, const char *const *sets, int nsets,
                         sv_scenario_src_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_scenario_src_t *s = calloc(1, sizeof *s);
    if (!s) return sv_errorf(err, SV_ENOMEM, "out of memory");
    snprintf(s->path, sizeof s->path, "%s", path);
    int rc = sv_ydoc_load(path, &s->doc, err);
    for (int i = 0; i < nsets && !rc; i++)
        rc = sv_ydoc_set(s->doc, sets[i], err);
    if (rc) {
        sv_scenario_src_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int sv_scenario_src_load(sv_scenario_src_t *src, const char *const *sets, int nsets,
                         const sv_catalog_t *cat, sv_scenario_t **out, sv_error_t *err)
{
    sv_error_t scratch;
    if (!err) err = &scratch;
    *out = NULL;
    sv_ydoc_t *doc;
    int rc = sv_ydoc_copy(src->doc, &doc, err);
    if (rc) return rc;
    for (int i = 0; i < nsets && !rc; i++)
        rc = sv_ydoc_set(doc, sets[i], err);
    if (rc) {
        sv_ydoc_free(doc);
        return rc;
    }
    return scenario_of_doc(src->path, doc, cat, &src->cache, out, err);
}

void sv_scenario_src_free(sv_scenario_src_t *src)
{
    if (!src) return;
    sv_ydoc_free(src->doc);
    sv_trace_free(src->cache.trace);
    free(src);
}

int sv_scenario_load(const char *path, const char *const *sets, int nsets, const sv_catalog_t *cat,
                     sv_scenario_t **out, sv_error_t *err)
{
    sv_error_t scratch; /* err may be NULL (error.h); the loader still reads its own messages */
    if (!err) err = &scratch;
    *out = NULL;
    sv_ydoc_t *doc;
    int rc = sv_ydoc_load(path, &doc, err);
    for (int i = 0; i < nsets && !rc; i++)
        rc = sv_ydoc_set(doc, sets[i], err);
    if (rc) {
        sv_ydoc_free(doc);
        return rc;
    }
    return scenario_of_doc(path, doc, cat, NULL, out, err);
}
