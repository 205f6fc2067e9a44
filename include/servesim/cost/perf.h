/*
 * The cost model (v2): how long one engine iteration takes on one replica.
 *
 * A pure function of (GPU and its efficiency curves, engine profile, model, parallelism,
 * dtypes, settings, batch): no events, no requests, no state. Each operator class
 * (linear layers, the small per-layer ops, attention over prefill chunks, attention over
 * decode contexts, LM head) costs max(FLOPs / achieved FLOP/s, bytes / achieved
 * bandwidth) plus its kernels' fixed floors, where the achieved rates depend on the
 * problem size (GEMM efficiency rises with the token count); tensor-parallel all-reduces
 * follow an alpha-beta model; the engine adds a cost per step, per sequence, and per
 * layer launch when the step is not a CUDA graph. docs/cost-model.md gives every
 * equation, its parameters and where each value comes from. --ideal is the pure
 * roofline (efficiencies 1, every fixed cost and the small ops 0).
 *
 * Ownership: sv_perf_t is a plain value (it copies the GPU and model it is built from);
 * nothing here allocates. All quantities are per GPU of the replica unless named
 * otherwise; times in seconds, sizes in bytes, rates in FLOP/s and bytes/s.
 */
#ifndef SERVESIM_PERF_H
#define SERVESIM_PERF_H

#include "servesim/cost/catalog.h"
#include "servesim/base/error.h"

/*
 * Number formats of weights and KV. The FP4 formats carry block scales, counted in their
 * bytes: NVFP4 = E2M1 values in blocks of 16 with one FP8 E4M3 scale each (0.5625 bytes
 * per value) plus one FP32 scale per tensor; MXFP4 (OCP microscaling) = E2M1 in blocks
 * of 32 with one E8M0 scale each (0.53125 bytes per value).
 */
typedef enum {
    SV_DT_BF16 = 0,
    SV_DT_FP16,
    SV_DT_FP8,
    SV_DT_INT4,
    SV_DT_NVFP4,
    SV_DT_MXFP4,
    SV_DT_COUNT
} sv_dtype_t;
#define SV_DT_IS_FP4(t) ((t) == SV_DT_NVFP4 || (t) == SV_DT_MXFP4)

/* "bf16" -> SV_DT_BF16 etc.; SV_EINVAL for an unknown name. */
int sv_dtype_parse(const char *s, sv_dtype_t *out);
const char *sv_dtype_name(sv_dtype_t t);
/* Bytes per weight parameter (INT4 includes one FP16 scale per group of 128; FP4 its
 * block scales, not the per-tensor one). */
double sv_dtype_weight_bytes(sv_dtype_t t);
/* Bytes per KV-cache element (bf16/fp16 2, fp8 1, FP4 with its block scales). */
double sv_dtype_kv_bytes(sv_dtype_t t);
/* KV-cache bytes of one token over a model's full-attention layers, unsharded (TP 1), in
 * dtype t: 2 (K and V) x layers x KV heads x head dim x sv_dtype_kv_bytes(t); MLA: layers x
 * (kv_lora_rank + qk_rope_head_dim) x bytes. Windowed layers of a model whose other layers
 * have none, and linear-attention layers, hold per-sequence state instead (not counted). */
double sv_model_kv_bytes_token(const sv_model_t *m, sv_dtype_t t);

#define SV_SPEC_MAX_K 16 /* most draft tokens per step */
#define SV_PP_MAX 256    /* most pipeline stages */

/*
 * What the user sets about a replica. Fields left negative (the values
 * sv_perf_settings_default() gives) take the GPU's catalog defaults.
 */
typedef struct sv_perf_settings {
    int tp;                    /* tensor-parallel degree, >= 1 */
    int pp;                    /* pipeline stages, 1..SV_PP_MAX (0 = 1) */
    int pp_split_n;            /* pp_layer_partition given: its stage count (0: vLLM's split) */
    unsigned short pp_split[SV_PP_MAX]; /* its layers per stage, first stage first */
    double pp_link_bw;         /* one-direction bytes/s per GPU between stages across nodes */
    sv_dtype_t weight_dtype;   /* bf16 | fp16 | fp8 | int4 | nvfp4 | mxfp4 */
    sv_dtype_t kv_dtype;       /* bf16 | fp16 | fp8 | nvfp4 | mxfp4 */
    double compute_eff;        /* (0, 1]; < 0: GPU default */
    double memory_eff;         /* (0, 1]; < 0: GPU default */
    double iter_overhead_s;    /* >= 0; < 0: GPU default */
    double layer_overhead_s;   /* >= 0; < 0: GPU default */
    double link_bw;            /* bidirectional bytes/s per GPU; < 0: GPU's link */
    double link_latency;       /* s per all-reduce (alpha); < 0: GPU's link */
    double curve[SV_CV_COUNT]; /* hardware curves in their key units; < 0: engine, GPU, built-in */
    double seq_overhead_s;     /* engine cost per sequence per step; < 0: engine profile, else 0 */
    int cuda_graphs;       /* steps up to graph_max_tokens replay a graph; < 0: profile, else 1 */
    int custom_allreduce;  /* the engine's one-/two-shot all-reduce; < 0: profile, else 0 (NCCL) */
    int nccl_nvls;         /* NCCL may run NVLink SHARP where the node has it; < 0: profile, else 1 */
    long graph_max_tokens; /* largest step captured; < 0: profile, else 512 */
    int ideal;             /* pure roofline: no small-op class (set by sv_perf_settings_ideal) */
    double power_limit_w;  /* board power cap, W (sv_perf_power_range); 0 = none, the TDP */
    int sched_steps;       /* vLLM V0's num_scheduler_steps: decode steps per scheduling round
                              (0 or 1: every step is scheduled) */
    char engine[SV_NAME_MAX]; /* name of the engine profile applied ("" = none) */
    int engine_calibration;   /* sv_calibration_t of that profile (SV_CAL_DATASHEET if none) */
    char engine_fitted_to[SV_TEXT_MAX]; /* the profile's fitted_to note */
    /* Memory plan inputs */
    double gpu_memory_utilization; /* share of device memory the engine may use, (0, 1] */
    double activation_reserve;     /* bytes per GPU kept for activations; < 0: estimated */
    int block_size;                /* tokens per KV block */
    long max_batched_tokens;       /* largest batch in tokens (sizes the activation reserve) */
    int weight_dtype_given;        /* weight_dtype was set: it overrides the checkpoint's */
    /* Speculative decoding (docs/cost-model.md, "Speculative decoding"). */
    int spec_method;                 /* sv_spec_method_t */
    int spec_k;                      /* draft tokens per step, 1..SV_SPEC_MAX_K (0: default) */
    int spec_naccept;                /* acceptance rates given (0: the method's default) */
    double spec_accept[SV_SPEC_MAX_K]; /* P(position i accepted | position i-1 accepted) */
    double spec_draft_step_s;        /* engine cost per draft step; < 0: default */
    char spec_model[256];            /* speculative: draft: the draft model (a catalog name or
                                        a config.json), resolved by the caller and attached
                                        with sv_perf_draft_init */
    int spec_expected; /* 1: every sequence emits the expected tokens of a verify step, spread
                          as one token per lockstep step (sv_perf_spec_step); 0 (default):
                          each verify step draws every sequence's accepted drafts (the
                          replica engine, docs/cost-model.md) */
    /* Expert and attention data parallelism (docs/cost-model.md, "Expert parallelism"). The
     * replica's tp GPUs are its whole group, as SGLang's --tp and TensorRT-LLM's tp_size count
     * them (vLLM's -tp 1 -dp 8 --enable-expert-parallel is tp 8, dp_attention 8, ep 8 here). */
    int ep;           /* expert-parallel ranks, dividing tp and the routed experts (0 = 1) */
    int dp_attention; /* attention data-parallel ranks, dividing tp (0 = 1): each holds its own
                         sequences and KV, with attention at TP tp/dp_attention */
    int ep_kernel;    /* sv_ep_kernel_t: the dispatch/combine kernels */
    int ep_redundant; /* ep_redundant_experts: extra copies of routed experts the EP ranks hold
                         (EPLB's, SGLang's --ep-num-redundant-experts): experts + these divide
                         by ep, each rank holding (experts + these) / ep (0 = none) */
} sv_perf_settings_t;

/* The drafters: MTP (the model's own next-n layers, e.g. DeepSeek's), EAGLE (one decoder
 * layer of the target's width, trained on its hidden states), a draft model (a smaller model
 * of the target's tokenizer, run whole: vLLM's --speculative-config '{"model": ...}', SGLang's
 * --speculative-algorithm STANDALONE). */
typedef enum {
    SV_SPEC_NONE = 0,
    SV_SPEC_MTP,
    SV_SPEC_EAGLE,
    SV_SPEC_DRAFT,
    SV_SPEC_COUNT
} sv_spec_method_t;

/* The rules between the speculative settings that no model is needed to check: speculative:
 * draft with a draft model and its acceptance given (no default fits every pair of models),
 * no draft model with mtp or eagle (with none, as every speculative key, it is not used).
 * SV_EINVAL with "speculative...: ..." otherwise. */
int sv_spec_check(const sv_perf_settings_t *s, sv_error_t *err);

/* The acceptance rate of draft position i (0-based) a scenario's settings give: the given
 * list (its last value repeated to k), else the method's published default. */
double sv_spec_accept(const sv_perf_settings_t *s, int i);
/* Expected tokens one verify step emits per sequence: 1 + sum_i prod_{j<=i} a_j over the k
 * draft positions (the bonus token plus the accepted prefix); 1 without spec decoding. */
double sv_spec_accept_len(const sv_perf_settings_t *s);
/* Draft tokens per step (k; the method's default 3 when not given; 0 without spec). */
int sv_spec_k(const sv_perf_settings_t *s);

/* The acceptance counters vLLM exports (vllm:spec_decode_num_drafts_total, _num_draft_tokens_
 * total, _num_accepted_tokens_total, _num_accepted_tokens_per_pos_total) for decode_tokens
 * tokens emitted by decode steps, at their expected values: drafts = decode_tokens / tau
 * (one per sequence per verify step), draft tokens k x drafts, accepted (tau - 1) x drafts,
 * position i accepted drafts x prod_{j<=i} a_j. mean_len = tau = 1 + accepted / drafts
 * (SGLang's accept length). All 0 without spec decoding. */
typedef struct sv_spec_counters {
    int k;
    double drafts, draft_tokens, accepted, mean_len;
    double per_pos[SV_SPEC_MAX_K];
} sv_spec_counters_t;
void sv_spec_counters(const sv_perf_settings_t *s, double decode_tokens, sv_spec_counters_t *out);

/* DeepEP's two kernel families (github.com/deepseek-ai/DeepEP): high-throughput ("normal",
 * deduplicated per rank, for prefill) and low-latency (one copy per expert, for decode); auto
 * takes low-latency for decode-only steps and high-throughput otherwise, as SGLang's
 * --deepep-mode auto does. */
typedef enum { SV_EPK_AUTO = 0, SV_EPK_LOW_LATENCY, SV_EPK_HIGH_THROUGHPUT } sv_ep_kernel_t;

/* TP 1, BF16 weights and KV, GPU defaults, utilisation 0.9, blocks of 16, 8192 tokens. */
sv_perf_settings_t sv_perf_settings_default(void);

/* Make every setting take its ideal value: efficiencies 1, overheads 0. */
void sv_perf_settings_ideal(sv_perf_settings_t *s);

/*
 * Fill every engine and curve setting still at its default (< 0) from an engine profile,
 * and record its name. Settings given before (--set, --ideal) win. SV_EINVAL only for a
 * profile value that does not parse (the catalog loader has checked them already).
 */
int sv_perf_settings_engine(sv_perf_settings_t *s, const sv_engine_profile_t *e, sv_error_t *err);

/*
 * The engine profile a replica uses: name, or "vllm" when name is NULL or empty and the
 * catalog has one (a catalog without engines leaves the settings as they are).
 */
int sv_perf_settings_profile(sv_perf_settings_t *s, const sv_catalog_t *cat, const char *name,
                             sv_error_t *err);

/*
 * Set one setting by name from text, as a scenario's `hardware` map or `--set` gives it:
 * tp, weight_dtype, kv_cache_dtype, compute_efficiency, memory_efficiency,
 * iteration_overhead_ms, layer_overhead_us, link_bandwidth_gb_s, link_latency_us,
 * gpu_memory_utilization, activation_reserve_gb, block_size, max_num_batched_tokens,
 * seq_overhead_us, cuda_graphs, graph_max_tokens, power_limit_w, num_scheduler_steps,
 * and the curve keys (sv_curve_keys).
 * Returns SV_ENOKEY for a name it does not know (so callers can handle their own keys),
 * SV_EINVAL with "key: expected ..., got '...'" for a bad value.
 */
int sv_perf_settings_set(sv_perf_settings_t *s, const char *key, const char *value,
                         sv_error_t *err);

/*
 * GPU power limits (docs/cost-model.md, "Power limits"): under a cap of w watts the
 * tensor-core throughput is the GPU's times sv_perf_power_scale = (w / TDP)^0.736, memory
 * bandwidth is kept. The range a cap may take is a quarter of the TDP to the TDP
 * (sv_perf_power_range fills lo and hi, W).
 */
double sv_perf_power_scale(const sv_gpu_t *gpu, double power_limit_w);
void sv_perf_power_range(const sv_gpu_t *gpu, double *lo, double *hi);

/* Keys sv_perf_settings_set() knows, NULL-terminated (for help and error messages). */
extern const char *const sv_perf_setting_keys[];

/*
 * What a model beyond the dense transformer adds (MLA, MoE with shared experts and dense
 * layers, per-layer windows, linear attention; docs/cost-model.md, "Architectures"), as
 * counts per pipeline stage and per-GPU coefficients of sv_perf_step.
 */
typedef struct sv_perf_arch {
    double full_layers, window_layers, linear_layers; /* attention kinds of one stage */
    double moe_layers;        /* MoE layers of one stage */
    sv_dtype_t expert_dtype;  /* weight format of the routed experts */
    double lin_params;        /* non-expert linear parameters of one stage (routers included) */
    double lin_bytes;         /* their bytes with the norms, routers and scales at their formats */
    double act_tok;           /* GEMM input and output values per token over the stage */
    double pair_flops;        /* prefill: FLOPs per (query, key) pair per layer */
    double q_bytes_tok;       /* prefill: Q read and O written per token per layer */
    double key_act_bytes;     /* prefill: decompressed K and V read per key per layer (MLA) */
    double decomp_flops_key;  /* prefill: FLOPs to decompress one cached key per layer (MLA) */
    double dec_flops_key;     /* decode: FLOPs per cached key per layer (MLA: absorbed form) */
    double dec_q_bytes;       /* decode: Q read and O written per sequence per layer */
    double kv_layer;          /* KV (MLA: latent) bytes of one token in one attention layer */
    double lin_flops_tok;     /* linear attention: state update FLOPs per token per layer */
    double lin_state;         /* linear attention: state bytes per sequence per layer */
    double lin_act_tok;       /* linear attention: activations per token per layer, bytes */
    double window_cap;        /* tokens a windowed layer keeps per sequence */
    double inv_exp_c;         /* s per expert FLOP at full GEMM efficiency */
    double inv_attn_c, inv_attn_mem; /* attention rates with the MLA efficiency applied */
    double inv_attn_pf;              /* prefill attention's: inv_attn_c / mla_prefill_efficiency */
    double grouped_eff, imbalance;   /* grouped-GEMM efficiency, busiest-expert factor */
    double grouped_n_half;           /* touched experts per rank and layer at half grouped_eff */
    double expert_floor_step; /* GEMM floors of the expert GEMMs of one step */
} sv_perf_arch_t;

/*
 * The KV cache groups of a model, as vLLM V1's hybrid KV cache manager forms them
 * (vllm/v1/core/kv_cache_utils.py, _get_kv_cache_groups_uniform_page_size): the layers of
 * each attention kind are cut into groups of group_layers layers (the fewest layers of any
 * kind; the most when every kind is within 1.25x of the fewest), the last group of a kind
 * padded; every group's block is group_layers layers' pages of block_size tokens, all taken
 * from one shared pool (the replica's one ledger). A sequence holds, per group of its kind
 * (vllm/v1/core/single_type_kv_cache_manager.py), with c tokens computed and slots for T:
 *   full attention   ceil(T / bs)                                 (FullAttentionManager)
 *   sliding window   ceil(T / bs) - floor(max(0, c - w + 1) / bs) (SlidingWindowManager:
 *                    blocks wholly before the next token's window are freed,
 *                    remove_skipped_blocks with get_num_skipped_tokens = c - w + 1)
 *   chunked local    ceil(T / bs) - floor(floor(c / w) w / bs)    (ChunkedLocalAttentionManager:
 *                    only the current chunk of w tokens)
 *   linear state     state_blocks from its first token            (MambaManager: one
 *                    block of the state's page size, here in pool blocks)
 * The model's catalog kinds map onto these; a dense model is one full-attention group.
 */
typedef enum { SV_KV_FULL, SV_KV_WINDOW, SV_KV_CHUNK, SV_KV_STATE, SV_KV_KINDS } sv_kv_kind_t;

typedef struct sv_kvspec {
    int groups[SV_KV_KINDS]; /* KV cache groups of each kind */
    int layers[SV_KV_KINDS]; /* the model's layers of each kind */
    int group_layers;        /* layers per group (vLLM's group_size) */
    int block_size;          /* tokens per block */
    long window;             /* the sliding window or the attention chunk, tokens */
    long state_blocks;       /* pool blocks one linear-state group takes per sequence */
    int hybrid;              /* a kind besides full attention: the engine counts blocks by
                                group (sv_kv_blocks) instead of tokens + seq_blocks */
    double page_token;       /* bytes per GPU of one token of one group's block (the page) */
} sv_kvspec_t;

/* Names of the kinds, for explain and reports ("full", "window", "chunk", "state"). */
extern const char *const sv_kv_kind_names[SV_KV_KINDS];

/* Blocks a sequence holds with c tokens computed and slots for tokens >= c: per kind in
 * out[] (NULL: not wanted), summed over the kinds as the result. At rest tokens = c; a step
 * that schedules n new tokens needs sv_kv_blocks(k, c, c + n, NULL). Pure. */
long sv_kv_blocks(const sv_kvspec_t *k, long c, long tokens, long out[SV_KV_KINDS]);
/* The most blocks a sequence of len tokens holds at rest at any length up to len (the
 * window's blocks oscillate, a chunk's fall at its end). Per kind in out[] (NULL: not
 * wanted). Pure. */
long sv_kv_peak_blocks(const sv_kvspec_t *k, long len, long out[SV_KV_KINDS]);

/*
 * The layers of each of the s->pp pipeline stages into out[0..pp): pp_layer_partition as
 * given (its count and sum checked), else vLLM's split (get_pp_indices,
 * vllm/distributed/utils.py; SGLang's is the same): layers / pp each, the remainder one
 * more each to the stages before the last, from the last but one backwards (61 layers over
 * 2 stages: 31, 30; over 4: 15, 15, 16, 15), since the last stage also runs the final norm
 * and the LM head. Returns 0, or SV_EINVAL with err set (more stages than layers, a
 * partition that does not match).
 */
int sv_perf_pp_split(const sv_model_t *m, const sv_perf_settings_t *s, unsigned short *out,
                     sv_error_t *err);

/* The resolved model: GPU and model copied, defaults applied, derived sizes computed. */
typedef struct sv_perf {
    sv_gpu_t gpu;
    sv_model_t model;
    sv_perf_settings_t set; /* with every default resolved */
    double compute_peak;    /* FLOP/s used for linear layers (by weight dtype) */
    double attn_peak;       /* FLOP/s used for attention (BF16 tensor cores) */
    int heads_local;        /* query heads per GPU */
    int kv_heads_local;     /* KV heads per GPU (replicated when TP > KV heads) */
    int ffn_local, moe_ffn_local;
    double weight_bytes_total;   /* all parameters of the model, one copy */
    double weight_bytes_gpu;     /* parameters held by one GPU */
    double embed_bytes_gpu;      /* the input embedding table's share on one GPU */
    double layer_linear_params;  /* dense linear parameters per layer per GPU (no experts) */
    double expert_params;        /* parameters of one expert per GPU */
    double lm_head_params;       /* LM head parameters per GPU */
    double kv_bytes_token_layer; /* K and V of one token in one layer on one GPU */
    double kv_bytes_token;       /* ... over all layers on one GPU */
    double kv_bytes_token_total; /* ... over all GPUs of the replica */
    double kv_bytes_token_window; /* per GPU: the windowed layers' KV of one token (not in the
                                     per-token pool: a sequence holds at most a window of it) */
    double seq_state_bytes;      /* per GPU: what a sequence holds besides its per-token KV:
                                    the windowed layers' window and the linear-attention state */
    int ext;                     /* the model has MLA, MoE, per-layer windows or linear layers */
    sv_perf_arch_t x;            /* their terms (all 0 when ext is 0) */
    sv_kvspec_t kvs;             /* the KV cache groups (sv_kv_blocks) */
    double lm_floor;             /* the LM head's GEMM floor */
    /* Coefficients precomputed for sv_perf_step (resolved settings folded in). */
    double inv_lin_c;        /* s per linear FLOP at full GEMM efficiency */
    double inv_attn_c;       /* s per attention FLOP at full flash efficiency */
    double inv_lm_c;         /* s per LM-head FLOP */
    double inv_mem;          /* s per byte of weights and GEMM activations */
    double inv_attn_mem;     /* s per byte of decode attention */
    double m_half;           /* GEMM tokens at half efficiency */
    double attn_n_half;      /* prefill chunk tokens at half flash efficiency */
    double gemm_floor_step;  /* GEMM floors of one step: layers x GEMMs per layer x floor */
    double small_floor_step; /* small-op floors of one step */
    double small_bytes_tok;  /* small-op bytes per token per step (all layers) */
    double small_s_tok;      /* ... and the seconds they take at their efficiencies */
    double lin_bytes_fixed;  /* dense linear bytes of a step that do not grow with its tokens */
    double lin_act;          /* activations in and out of a layer's matmuls, per token */
    double attn_seq_step;    /* decode attention fixed cost per sequence per step */
    double prefill_slow;     /* 1 / prefill_efficiency - 1: the prompts' extra GPU time, per unit */
    double prefill_request_s; /* engine time per prompt of a step with prompts; 0: none */
    /* The step's invariants of the plain transformer's terms, each as its expression there
     * gives it (the same bits): */
    double q_width;         /* query width per GPU, heads_local x head_dim */
    double hidden_d;        /* model.hidden */
    double window_d;        /* model.sliding_window (0: none) */
    double tp_d;            /* set.tp */
    double graph_max_d;     /* set.graph_max_tokens */
    double pf_flops_pair;   /* prefill attention FLOPs per (query, key) pair: 4 q_width */
    double dec_flops_layer; /* decode attention FLOPs per attended key over the stage:
                               stage_layers x 4 x q_width */
    double lm_vocab;        /* the LM head's rows per GPU: lm_head_params / hidden */
    double lm_w_bytes;      /* its weights' bytes: lm_head_params x 2 */
    int plain;   /* sv_perf_step's one-stage path serves every step: pp 1, no attention data
                    parallelism, no extended architecture, no context-phase terms */
    int memo_ok; /* ... and no speculative decoding: the memo's decode-only steps */
    double ar_alpha;         /* NCCL: one ring all-reduce's latency at this TP */
    double ar_inv_bw;        /* NCCL: s per byte of payload (ring factor included) */
    int ar_custom;           /* the engine's custom all-reduce serves this TP group */
    double ar_custom_alpha;  /* its one-shot latency */
    double ar_two_shot_alpha; /* its two-shot latency (one-shot's + the second pass) */
    double ar_link_inv_bw;   /* s per byte one way over one GPU's link at link_efficiency */
    int ar_nvls;             /* NCCL's NVLink SHARP all-reduce is open to this TP group */
    double ar_nvls_alpha;    /* its latency */
    double ar_nvls_inv_bw;   /* s per byte one way over one GPU's link at NVLS_EFFICIENCY */
    /* Pipeline parallelism (set.pp stages; docs/cost-model.md, "Pipeline parallelism"). */
    double stage_layers; /* layers of the heaviest stage (all layers when pp = 1) */
    double stage_share;  /* its share of the layers, stage_layers / layers (1/pp if even) */
    double stage_equiv;  /* layers / stage_layers: pp when the stages are even */
    int pp_uneven;       /* the stages hold different numbers of layers */
    unsigned short pp_layers[SV_PP_MAX]; /* layers of each stage, first stage first */
    int pp_nvlink;       /* the stages are inside one NVLink domain (tp x pp <= its size) */
    double p2p_alpha;    /* s per stage-to-stage send (fitted p2p_latency_us) */
    double p2p_inv_bw;   /* s per byte of activations sent between stages */
    /* Expert and attention data parallelism (sv_perf_a2a_bytes, docs/cost-model.md). */
    int attn_tp;         /* TP of attention and the dense layers: tp / dp_attention */
    int ep, dp;          /* expert-parallel ranks, attention data-parallel ranks (>= 1) */
    double a2a_alpha[3];   /* s per dispatch or combine, by sv_ep_kernel_t (0 unused) */
    double a2a_inv_bw[3];  /* s per byte a rank sends, by kernel */
    double a2a_bytes[3][2]; /* bytes per rank token per MoE layer: [kernel][dispatch, combine] */
    /* speculative: draft: the draft model's own cost model, borrowed (sv_perf_draft_init):
     * whoever owns p keeps *draft alive and in place while p (or a copy of it) is used. */
    const struct sv_perf *draft;
} sv_perf_t;

/*
 * speculative: draft: build the draft model's cost model into *draft and attach it to p
 * (docs/cost-model.md, "Draft models"). The draft runs on p's GPUs at p's TP with its
 * checkpoint's weight format and p's KV format (vLLM's draft_tensor_parallel_size defaults
 * to the target's; SGLang's draft worker shares the target's TP group); p's memory then
 * holds its weights on every GPU and its KV per token beside the target's (one block table
 * for both, as vLLM's KV cache groups the draft's layers with the target's), and every
 * sequence the KV of its k lookahead slots. Fails when the draft does not share the
 * target's vocabulary, when p has pipeline stages, expert or attention data parallelism,
 * or when p's TP does not fit the draft ("speculative_model: ..."). p borrows *draft.
 */
int sv_perf_draft_init(sv_perf_t *p, sv_perf_t *draft, const sv_model_t *dm, sv_error_t *err);
/* The draft's rules sv_perf_draft_init checks before building it: the target's vocabulary,
 * a layout of TP alone. */
int sv_spec_draft_check(const sv_perf_settings_t *s, const sv_model_t *target,
                        const sv_model_t *dm, sv_error_t *err);

/*
 * The bytes one token of a rank sends per MoE layer in the expert-parallel dispatch (FP8
 * values with one FP32 scale per 128, as DeepEP dispatches) and combine (BF16), for ep ranks
 * holding experts/ep experts each, top-k routing, hidden size d:
 *   high-throughput: once per remote rank holding one of its experts, in expectation
 *     (ep - 1) (1 - C(E - E/ep, k) / C(E, k)) ranks;
 *   low-latency: once per remote expert, k (ep - 1) / ep copies.
 * 0 for ep = 1 or a dense model. Pure.
 */
void sv_perf_a2a_bytes(const sv_model_t *m, int ep, sv_ep_kernel_t kernel, double *dispatch,
                       double *combine);

/*
 * Build the model. Fails with a clear message when TP does not divide the attention
 * heads, the KV heads (or vice versa), or the MLP width; or when FP4 weights or KV are
 * asked of a GPU without FP4 tensor cores of that format.
 */
/* The element-wise kernels of one layer, each once a layer but the residual add (twice):
 * six kernels. The norms are reductions and get their own efficiency. */
typedef enum {
    SV_SMALL_INPUT_NORM,
    SV_SMALL_POST_NORM,
    SV_SMALL_ROPE,
    SV_SMALL_ACT,
    SV_SMALL_ADD,
    SV_SMALL_COUNT
} sv_small_op_t;
/* Activation elements each kernel reads and writes per token, for hidden size d, the
 * GPU's Q and KV widths q and kv and its FFN width f (gated: gate and up): a norm reads and
 * writes d, rotary reads and writes Q and K, the activation reads 2f (gated) or f and
 * writes f, an add reads 2d and writes d. The cost model (sv_perf_init) and the kernel
 * calibration (Vidur's mlp.csv rows) both count bytes with it. */
void sv_small_op_elems(double d, double q, double kv, double f, int gated,
                       double out[SV_SMALL_COUNT]);

/*
 * The TP all-reduce algorithm by message size (docs/cost-model.md, "Collectives"), as
 * vLLM's custom all-reduce picks it (csrc/custom_all_reduce.cuh; SGLang's sgl-kernel and
 * TensorRT-LLM's ONESHOT/TWOSHOT kernels are the same two): one-shot, every rank reads
 * every peer's whole buffer; two-shot, a reduce-scatter then an all-gather; NCCL above
 * the custom kernel's largest message or where it cannot run: its ring, or its NVLink
 * SHARP (NVLS) all-reduce on NVSwitch nodes of NVLink 4 and later where it is faster.
 */
typedef enum {
    SV_AR_ONE_SHOT = 0,
    SV_AR_TWO_SHOT,
    SV_AR_NCCL_RING,
    SV_AR_NCCL_NVLS,
    SV_AR_COUNT
} sv_ar_algo_t;
extern const char *const sv_ar_algo_names[SV_AR_COUNT];

/* One all-reduce of `bytes` payload over p's attention TP group: its time in seconds and,
 * when algo is not NULL, the algorithm chosen. 0 without TP. */
double sv_perf_allreduce(const sv_perf_t *p, double bytes, sv_ar_algo_t *algo);

/* The message size in bytes below which the custom kernel runs one-shot at n GPUs (above
 * 8 MiB at 2 GPUs: every size). */
double sv_perf_one_shot_limit(int n);

int sv_perf_init(sv_perf_t *p, const sv_gpu_t *gpu, const sv_model_t *model,
                 const sv_perf_settings_t *settings, sv_error_t *err);

/* Total parameter count of a model (one copy, all experts). */
double sv_model_param_count(const sv_model_t *m);

/* One prefill chunk: new_tokens computed now, cached_tokens already in the KV cache. */
typedef struct sv_chunk {
    long new_tokens;
    long cached_tokens;
    int last; /* this chunk ends the prompt, so it yields logits for the first token */
} sv_chunk_t;

/*
 * A batch: prefill chunks plus decode sequences. Decode sequences are summarised by
 * their count and the sum of the context each attends to (tokens already in cache,
 * already capped at the sliding window; sv_perf_attended() gives one sequence's), which
 * is all the roofline needs because decode attention is linear in context.
 */
typedef struct sv_batch {
    const sv_chunk_t *chunks;
    int n_chunks;
    long n_decode;
    double decode_ctx_sum;
    int verify; /* tokens each decode sequence runs (k + 1 in a verify step; 0 or 1: one) */
} sv_batch_t;

/* Context a decode token attends to when ctx tokens are cached (the window applied when
 * every layer has it; with windows on some layers, ctx: sv_perf_step caps those). */
double sv_perf_attended(const sv_perf_t *p, double ctx);

enum {
    SV_OP_LINEAR = 0,
    SV_OP_ATTN_PREFILL,
    SV_OP_ATTN_DECODE,
    SV_OP_LM_HEAD,
    SV_OP_SMALL, /* norms, rotary, activation, residual adds */
    SV_OP_COUNT
};
const char *sv_op_name(int op);

typedef struct sv_op_cost {
    double flops;     /* per GPU */
    double bytes;     /* HBM bytes moved per GPU */
    double t_compute; /* flops / achieved FLOP/s (efficiency at this size) */
    double t_memory;  /* bytes / achieved bandwidth */
    double t_fixed;   /* kernel floors and per-sequence fixed costs */
    double time;      /* max(t_compute, t_memory) + t_fixed */
} sv_op_cost_t;

typedef struct sv_step_cost {
    sv_op_cost_t op[SV_OP_COUNT];
    double comm;       /* tensor-parallel all-reduces */
    double a2a;        /* expert-parallel dispatch and combine (in comm too) */
    int a2a_kernel;    /* sv_ep_kernel_t used this step (0 without all-to-all) */
    int ar_algo;       /* sv_ar_algo_t of this step's TP all-reduces (0 without TP) */
    long rank_seqs;    /* dp_attention: sequences of the slowest rank (else the batch's) */
    double eng_step;   /* engine: fixed cost per step */
    double eng_seq;    /* engine: cost per sequence in the batch */
    double eng_launch; /* engine: per-layer launches (0 when the step is a CUDA graph) */
    double overhead;   /* eng_step + eng_seq + eng_launch */
    double pp_send;    /* pipeline: stage-to-stage sends on the critical path */
    double pp_bubble;  /* pipeline: stage idle time (step - stage busy time - sends) */
    double total;      /* sum of op times + comm + overhead; 0 for an empty batch */
    long tokens;       /* tokens processed (prefill new tokens + decode sequences) */
    /* Speculative decoding (sv_perf_spec_step; all 0 without it): */
    double spec_verify; /* the target's pass over k + 1 tokens per decode sequence */
    double spec_draft;  /* the drafter's k steps, its pass over the verified tokens and over
                           the prefill chunks (a draft model: its first pass over the verified
                           tokens and the chunks, then k - 1 one-token steps) */
    double spec_len;    /* expected tokens emitted per sequence per verify step */
    double spec_cpu;    /* the verify step's engine CPU cost (eng_step + eng_seq above are
                           the lockstep's share of it, 1/spec_len of the decodes' part) */
    int micro_batches;  /* pipeline micro-batches in this step (1 without PP) */
    int compute_bound; /* the op times are dominated by compute rather than memory */
    /* (the two ints together at the end: the struct has no padding, so assigning every
     * field writes every byte, as the memo's callers compare them) */
} sv_step_cost_t;

/*
 * The time of one iteration for this batch. Pure; never fails. With pp stages the batch's
 * sequences are dealt round-robin into m = min(pp, sequences) micro-batches; the heaviest
 * stage holds stage_layers layers and step = max(sum_j (t_s,j + t_x,j),
 * stage_equiv max t_s + (pp-1) max t_x) + the engine's per-step costs, t_s,j the heaviest
 * stage's time for micro-batch j (with the LM head) and t_x,j its send to the next stage
 * (stage_equiv = layers / stage_layers, pp for even stages; docs/cost-model.md). The op[]
 * and comm of out then hold one stage's work over all micro-batches.
 */
void sv_perf_step(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out);

/*
 * One micro-batch of a pipeline, b's sequences all in it: out->total is its time on the
 * first stage, the stage time t_s (the heaviest stage's stage_layers layers and the LM
 * head; uneven stages scale it by their layers) plus the engine's per-step and
 * per-sequence costs, and out->pp_send its
 * activations' send to the next stage (0 without pp). The replica runs each micro-batch
 * through the stages itself (sv_replica_start_step, docs/cost-model.md). Pure.
 */
void sv_perf_micro_batch(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out);

/*
 * A step of an engine with speculative decoding, in the engine's lockstep of one token per
 * decode sequence per step: the verify pass (every decode sequence runs k + 1 tokens) plus
 * the drafter's cost, with the decode sequences' share of that time spread over the
 * expected accepted length: total = T(b, verify) + D - (1 - 1/tau) (T(decodes, verify) + D),
 * D the draft cost, tau = sv_spec_accept_len; the drafter's pass over the step's prefill
 * chunks (1/L of their layer work) is added in full. spec_verify, spec_draft, spec_len hold
 * the real step's terms. Without spec decoding: sv_perf_step.
 */
void sv_perf_spec_step(const sv_perf_t *p, const sv_batch_t *b, sv_step_cost_t *out);

/* The last decode-only steps' costs, for sv_perf_spec_step_memo (zero-initialised:
 * empty): one slot for each batch size modulo SV_PERF_MEMO_SLOTS, holding the last step of
 * the size it is tagged with (n_decode 0: none), so that a batch whose size moves back and
 * forth within that many sequences finds its size's step, with the partial results of its
 * sums that do not see the context. One per caller (a replica's engine), which owns it
 * (about 28 KiB). */
#define SV_PERF_MEMO_SLOTS 64
typedef struct sv_perf_memo_slot {
    long n_decode;
    double dec_flops_ctx; /* decode attention: its FLOPs per (ctx_sum + n_decode) */
    double dec_bytes_seq; /* its bytes' terms of the sequences: their new KV, */
    double dec_bytes_act; /* their queries and outputs */
    double time01, compute01, memory01; /* 0 + the first two operators' time, t_compute, t_memory */
    double comm_overhead;               /* cost.comm + cost.overhead */
    sv_step_cost_t cost;
} sv_perf_memo_slot_t;
typedef struct sv_perf_memo {
    sv_perf_memo_slot_t slot[SV_PERF_MEMO_SLOTS];
    sv_step_cost_t scratch; /* any other step's */
} sv_perf_memo_t;

/*
 * sv_perf_spec_step's result for b, the same bits, in memo (valid until the next call): a
 * decode-only step of as many sequences as a decode-only step in its size's slot differs
 * from that one only in the context they attend to, so only the decode attention and the sums
 * over the operators are computed again (without speculative decoding, pipeline stages,
 * attention data parallelism or the extended architectures' terms; every other step in
 * full). An engine steps its decode batch unchanged most of the time, so most steps take
 * the short way, and nothing is copied.
 */
const sv_step_cost_t *sv_perf_spec_step_memo(const sv_perf_t *p, sv_perf_memo_t *memo,
                                             const sv_batch_t *b);

/* Shorthands: one prompt of n tokens alone, and a decode step of batch seqs at ctx each
 * (through sv_perf_spec_step: with spec decoding, the drafter's prefill pass included and
 * the decode step's time per emitted token). */
double sv_perf_prefill_time(const sv_perf_t *p, long n, sv_step_cost_t *out);
double sv_perf_decode_time(const sv_perf_t *p, long batch, double ctx, sv_step_cost_t *out);

/*
 * A prompt's KV handed from a prefill worker to a decode worker of another layout, rank by
 * rank (docs/disaggregation.md, "Workers of their own layout"): each of the prefill
 * worker's tp x pp GPUs sends the shard of every token it holds (its kv_bytes_token), and
 * the request lands on one attention rank of the decode worker (with dp_attention, one of
 * its dp_attention ranks; else the whole worker), whose tp / dp_attention GPUs of each
 * stage each receive the shard they will hold (the decode layout's kv_bytes_token). Every
 * GPU has its own NIC, so the transfer takes as long as the busier side's per-GPU bytes:
 * per token, link_gpu = max(pp_prefill x send_gpu, recv_gpu) at one GPU's bandwidth (the
 * prefill stages' sends taking turns, as the link model has always counted them).
 */
typedef struct sv_kv_handoff {
    int senders;     /* prefill GPUs that send: tp x pp */
    int receivers;   /* decode GPUs that receive: (tp / dp_attention) x pp */
    double send_gpu; /* bytes per token each sender sends */
    double recv_gpu; /* bytes per token each receiver takes */
    double link_gpu; /* bytes per token the busier side moves through one GPU's NIC */
    double link_tok; /* bytes per token on the prefill worker's link of tp GPUs: tp x link_gpu
                        (the prefill's kv_bytes_token_total itself when the senders are the
                        busier side) */
} sv_kv_handoff_t;
void sv_perf_kv_handoff(const sv_perf_t *prefill, const sv_perf_t *decode, sv_kv_handoff_t *out);

/* How a replica's device memory is spent. All per GPU except where named. */
typedef struct sv_memplan {
    double device_bytes;     /* memory of one GPU */
    double budget_bytes;     /* device_bytes x gpu_memory_utilization */
    double weight_bytes;     /* weights on one GPU */
    double activation_bytes; /* reserve for activations and runtime buffers */
    double kv_bytes;         /* left for the KV cache */
    double kv_bytes_token;   /* KV of one token on one GPU */
    long kv_tokens;          /* tokens the cache holds (whole blocks) */
    long kv_blocks;          /* blocks of block_size tokens */
    int block_size;
    long seq_blocks;         /* blocks each sequence holds besides its tokens' (windows, state) */
    int dp_ranks;            /* attention data-parallel ranks: kv_tokens = dp_ranks x rank_kv_tokens */
    long rank_kv_tokens;     /* tokens one rank's cache holds (a sequence lives on one rank) */
} sv_memplan_t;

/*
 * Blocks of block_size tokens' KV that one sequence holds whatever its length: its windowed
 * layers' window and its linear-attention state, in units of the per-token pool's blocks
 * (0 for a model with neither). The engine adds them to every sequence's blocks.
 */
long sv_perf_seq_blocks(const sv_perf_t *p, int block_size);

/*
 * Plan memory. SV_ENOFIT with the numbers when the weights and the activation
 * reserve leave no room for a single KV block.
 */
int sv_perf_memplan(const sv_perf_t *p, sv_memplan_t *out, sv_error_t *err);

#endif
