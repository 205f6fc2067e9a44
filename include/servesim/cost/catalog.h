/*
 * The catalog of accelerators and model architectures that the cost model reads.
 *
 * The catalog is a directory of YAML files (every .yaml file of models/ in the source tree), read
 * in file-name order; each file may hold a `defaults:` map (engine-efficiency defaults for the GPUs
 * of that file), a `gpus:` list, a `models:` list and an `engines:` list (engine profiles). Units
 * are in the key names (bf16_tflops, hbm_bandwidth_gb_s, memory_mib, ...). A model can also come
 * from a Hugging Face config.json instead of a catalog name.
 *
 * Ownership: sv_catalog_load() returns a catalog the caller frees with
 * sv_catalog_free() (NULL-safe). Lookup functions return pointers into it, valid until
 * it is freed. sv_gpu_t and sv_model_t are plain values and may be copied freely.
 */
#ifndef SERVESIM_CATALOG_H
#define SERVESIM_CATALOG_H

#include <stddef.h>

#include "servesim/base/error.h"

#define SV_NAME_MAX 64
#define SV_TEXT_MAX 512

/*
 * Hardware efficiency curves of a GPU (cost model v2, docs/cost-model.md): how close its
 * kernels come to the datasheet as a function of problem size, and what its collectives
 * cost. Indexes of sv_gpu_t.curve, in the units of their YAML keys (sv_curve_keys);
 * NAN in a GPU entry means "the built-in default" (sv_curve_default).
 */
enum {
    SV_CV_GEMM_M_HALF =
        0, /* gemm_m_half_tokens: tokens at which GEMMs reach half their peak efficiency */
    SV_CV_GEMM_FLOOR,   /* gemm_floor_us: shortest GEMM kernel */
    SV_CV_SMALL_EFF,    /* small_op_efficiency: rotary, activation, residual add vs HBM */
    SV_CV_SMALL_FLOOR,  /* small_op_floor_us: shortest small-op kernel */
    SV_CV_ATTN_EFF,     /* attention_efficiency: flash-attention prefill vs BF16 peak */
    SV_CV_ATTN_N_HALF,  /* attention_n_half_tokens: chunk length at half that efficiency */
    SV_CV_ATTN_MEM_EFF, /* attention_memory_efficiency: paged decode attention vs HBM */
    SV_CV_ATTN_SEQ,     /* attention_seq_us: decode attention, fixed cost per sequence per layer */
    SV_CV_LINK_EFF,     /* link_efficiency: collective bus bandwidth vs one direction of the link */
    SV_CV_LINK_RANK,    /* link_latency_per_rank_us: all-reduce latency per rank beyond 2 */
    SV_CV_P2P_LAT,      /* p2p_latency_us: send/recv latency */
    SV_CV_NORM_EFF,     /* norm_efficiency: the RMSNorms (reductions) vs HBM */
    SV_CV_GROUPED_EFF,  /* grouped_gemm_efficiency: MoE expert GEMMs vs a dense GEMM's */
    SV_CV_MLA_EFF,      /* mla_attention_efficiency: MLA attention kernels vs flash/paged */
    SV_CV_MOE_IMBALANCE, /* moe_imbalance: the busiest expert's tokens / the mean (>= 1) */
    SV_CV_GROUPED_N_HALF, /* grouped_gemm_n_half_experts: experts per rank and layer at half g */
    SV_CV_MLA_PREFILL_EFF, /* mla_prefill_efficiency: MLA context-phase attention vs its decode rate */
    SV_CV_PREFILL_EFF,     /* prefill_efficiency: a step's prompts' added GPU time takes 1 / e */
    SV_CV_PREFILL_REQUEST, /* prefill_request_overhead_ms: engine time per prompt in a step */
    SV_CV_COUNT
};
extern const char *const sv_curve_keys[SV_CV_COUNT];
/* Built-in value of each curve parameter and its allowed range (inclusive). */
extern const double sv_curve_default[SV_CV_COUNT], sv_curve_lo[SV_CV_COUNT],
    sv_curve_hi[SV_CV_COUNT];

/*
 * Where a GPU's (or an engine profile's) efficiency and overhead figures come from
 * (docs/cost-model.md, "Calibration status"): fitted to named measurements, taken from a
 * similar GPU, or the datasheet alone. sv_confidence (confidence.h) maps each to an
 * expected error band.
 */
typedef enum {
    SV_CAL_MEASURED = 0, /* fitted to named measurements (the note gives them and the error) */
    SV_CAL_TRANSFERRED,  /* taken from a similar GPU or engine (the note says which and why) */
    SV_CAL_DATASHEET,    /* no measurement: datasheet peaks with another GPU's curves */
    SV_CAL_COUNT
} sv_calibration_t;
/* "measured" | "transferred" | "datasheet"; SV_EINVAL for anything else. */
int sv_calibration_parse(const char *s, sv_calibration_t *out);
const char *sv_calibration_name(sv_calibration_t c);

/*
 * How a node's GPUs are wired (sv_gpu_t.topology, the catalog's `topology`): every GPU to
 * every other through NVSwitch (HGX/DGX), NVLink bridges between pairs with PCIe between the
 * pairs (PCIe cards), PCIe only, one NVLink Switch domain over a 72-GPU rack (GB200/GB300
 * NVL72), or a full mesh of point-to-point links (AMD Infinity Fabric). Names in
 * sv_topology_names.
 */
typedef enum {
    SV_TOPO_NVSWITCH = 0,
    SV_TOPO_NVLINK_PAIRS,
    SV_TOPO_PCIE,
    SV_TOPO_NVL72,
    SV_TOPO_MESH,
    SV_TOPO_COUNT
} sv_topology_t;
extern const char *const sv_topology_names[SV_TOPO_COUNT];

/* FP4 formats a GPU's tensor cores take (bits of sv_gpu_t.fp4_formats). */
enum { SV_FP4_NVFP4 = 1, SV_FP4_MXFP4 = 2 };

typedef struct sv_gpu {
    char name[SV_NAME_MAX]; /* catalog key, e.g. "h100-sxm" */
    char description[128];
    double bf16_flops;     /* dense peak, FLOP/s */
    double fp8_flops;      /* dense peak, FLOP/s; 0 when the GPU has no FP8 tensor cores */
    double fp4_flops;      /* dense peak, FLOP/s; 0 when the GPU has no FP4 tensor cores */
    int fp4_formats;       /* SV_FP4_* bits: the FP4 formats of those tensor cores */
    int nvlink_domain;     /* GPUs in one scale-up (NVLink) domain: 8 in a node, 72 in NVL72 */
    double mem_bytes;      /* device memory the driver reports, bytes */
    double hbm_bw;         /* memory bandwidth, bytes/s */
    char link[32];         /* scale-up link kind: "nvlink", "pcie", "infinity-fabric" */
    double link_bw;        /* scale-up bandwidth per GPU, bidirectional total, bytes/s */
    double link_latency;   /* fixed latency of one collective, s */
    int topology;          /* sv_topology_t of the node (default from link and domain) */
    double pcie_bw;        /* PCIe bandwidth per GPU, bidirectional, bytes/s (between NVLink
                              pairs); 0 when not given */
    double tdp_w, idle_w;  /* board power at full load and idle, W */
    double price_per_hour; /* default rental price, USD per GPU-hour (used for costs) */
    double price_low, price_high;      /* public price range, USD per GPU-hour; 0 when not given */
    char price_date[16];               /* when the range was seen (YYYY-MM) */
    sv_calibration_t calibration;      /* where the efficiency curves come from */
    char calibrated_from[SV_TEXT_MAX]; /* the measurements, or the GPU they come from and why */
    double compute_eff;                /* achieved / peak FLOP/s (0..1] */
    double memory_eff;                 /* achieved / peak bandwidth (0..1] */
    double iter_overhead_s;            /* fixed cost per engine iteration, s */
    double layer_overhead_s;           /* fixed cost per layer per iteration, s */
    double curve[SV_CV_COUNT];         /* efficiency curves (see above); NAN = built-in default */
    char source[SV_TEXT_MAX];          /* where the figures come from */
} sv_gpu_t;

/*
 * A named engine profile (models/engines.yaml): what a serving engine adds to the
 * hardware's kernel times: a fixed cost per step, a cost per sequence per step, a launch
 * cost per layer when the step is not replayed from a CUDA graph, and optionally its own
 * values of the hardware curves (an eager engine's attention is not a paged kernel's).
 * Values are kept as the text of their --set keys and applied by sv_perf_settings_engine().
 */
#define SV_ENGINE_MAX_KEYS 24
/*
 * What the engine a profile models does by default with one scheduler, beyond the cost of
 * a step (the profile's `scheduler_defaults`): settings a pool running this profile with
 * that scheduler takes where its scenario leaves them unset (the scenario loader applies
 * them, matches the scheduler's name and refuses an unknown one). Any profile may give
 * them, for any scheduler; a pool with another scheduler keeps servesim's own defaults.
 */
#define SV_ENGINE_MAX_SCHEDS 8
typedef struct sv_engine_sched_defaults {
    char scheduler[SV_NAME_MAX]; /* the scheduler's name, as the YAML gives it */
    char where[160];             /* "FILE:LINE:COL: KEY.PATH" of that entry, for messages */
    int async_scheduling;        /* engine.async_scheduling: 0 or 1; -1 = not given */
    double api_server_ms;        /* engine.api_server_ms, >= 0; NAN = not given */
} sv_engine_sched_defaults_t;

typedef struct sv_engine_profile {
    char name[SV_NAME_MAX];
    char description[128];
    char fitted_to[SV_TEXT_MAX];  /* the measurements its numbers come from */
    sv_calibration_t calibration; /* measured (fitted), transferred (set by hand, checked) */
    int nkeys;
    char keys[SV_ENGINE_MAX_KEYS][40];
    char values[SV_ENGINE_MAX_KEYS][32];
    int nscheds;
    sv_engine_sched_defaults_t scheds[SV_ENGINE_MAX_SCHEDS];
} sv_engine_profile_t;

/* The defaults a profile gives for the scheduler named (case-sensitive), or NULL. */
const sv_engine_sched_defaults_t *sv_engine_sched_defaults(const sv_engine_profile_t *e,
                                                           const char *scheduler);

/* d's settings as text ("async_scheduling true, api_server_ms 12"; "none" when it gives
 * none) into buf; returns buf. */
const char *sv_engine_sched_defaults_text(const sv_engine_sched_defaults_t *d, char *buf, size_t n);

typedef struct sv_model {
    char name[SV_NAME_MAX]; /* catalog key, or derived from a config.json path */
    char hf_id[128];        /* Hugging Face repository id, if known */
    int layers;             /* num_hidden_layers */
    int hidden;             /* hidden_size */
    int heads;              /* num_attention_heads */
    int kv_heads;           /* num_key_value_heads */
    int head_dim;           /* per-head dimension */
    int ffn;                /* intermediate_size of a dense MLP */
    int vocab;              /* vocab_size */
    int tied_embeddings;    /* the LM head shares the input embedding matrix */
    int gated_mlp;          /* 1: gate+up+down (SwiGLU), 0: up+down (ReLU/GELU) */
    int qkv_bias;           /* Q, K and V projections carry a bias */
    int experts;            /* routed experts per layer; 0 for a dense model */
    int experts_per_tok;    /* top-k */
    int moe_ffn;            /* intermediate size of one expert */
    int sliding_window;     /* attention window in tokens; 0 = full attention */
    long max_context;       /* max_position_embeddings */
    /* Beyond the dense transformer (all 0 for one; docs/cost-model.md, "Architectures"). */
    int mla;                /* multi-head latent attention (DeepSeek-V2/V3/R1, Kimi-K2) */
    int q_lora_rank;        /* MLA: rank of the Q down-projection; 0 = a full Q projection */
    int kv_lora_rank;       /* MLA: the compressed latent c_KV cached per token */
    int qk_nope_head_dim;   /* MLA: per-head query/key dims without rotary ... */
    int qk_rope_head_dim;   /* ... and with it (one rotary key shared by all heads, cached) */
    int v_head_dim;         /* MLA: per-head value dim */
    int shared_experts;     /* experts every token of a MoE layer goes through */
    int shared_ffn;         /* their intermediate size, all of them together */
    int dense_layers;       /* MoE model: layers with a dense MLP of width ffn instead */
    int window_layers;      /* layers with the window; 0 with sliding_window > 0 = every layer */
    int chunked_window;     /* the window is Llama-4's chunked attention (attention_chunk_size) */
    int linear_layers;      /* linear-attention layers (Gated DeltaNet): a state, no KV */
    int lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, lin_conv; /* their shapes */
    int attn_output_gate;   /* Qwen3-Next: the Q projection also yields an output gate */
    int attention_sinks;    /* gpt-oss: a learned sink logit per head (negligible cost) */
    int mtp_layers;         /* num_nextn_predict_layers: MTP draft modules (not loaded) */
    char ckpt_dtype[8];     /* weight format of the checkpoint (quantization_config); "" = 16-bit */
    int ckpt_experts_only;  /* that format covers the routed experts only (gpt-oss's MXFP4) */
    int ckpt_scale_block;   /* weights per FP32 scale (FP8 block quantisation 128x128 = 16384) */
    char notes[SV_TEXT_MAX]; /* approximations made in reading it ("; "-separated) */
    char source[SV_TEXT_MAX];
} sv_model_t;

/* Layers of each attention kind: full (MLA or GQA), windowed, linear. */
int sv_model_window_layers(const sv_model_t *m);
/* Layers whose MLP is a MoE block (0 for a dense model). */
int sv_model_moe_layers(const sv_model_t *m);

typedef struct sv_catalog {
    sv_gpu_t *gpus;
    size_t ngpus;
    sv_model_t *models;
    size_t nmodels;
    sv_engine_profile_t *engines;
    size_t nengines;
} sv_catalog_t;

/* The catalog directory: $SERVESIM_CATALOG if set, else the one compiled in. */
const char *sv_catalog_default_dir(void);

/* Load every *.yaml in dir. Errors name file:line:col and key. */
int sv_catalog_load(const char *dir, sv_catalog_t **out, sv_error_t *err);
void sv_catalog_free(sv_catalog_t *cat);

/* Case-insensitive lookup; SV_ENOTFOUND with the list of known names on failure. */
int sv_catalog_gpu(const sv_catalog_t *cat, const char *name, const sv_gpu_t **out,
                   sv_error_t *err);
int sv_catalog_model(const sv_catalog_t *cat, const char *name, const sv_model_t **out,
                     sv_error_t *err);

/* An engine profile by name; SV_ENOTFOUND listing the known ones. */
int sv_catalog_engine(const sv_catalog_t *cat, const char *name, const sv_engine_profile_t **out,
                      sv_error_t *err);

/*
 * A model by catalog name, or, when spec names an existing file or ends in ".json",
 * read from that Hugging Face config.json. The result is copied into *out.
 */
int sv_catalog_resolve_model(const sv_catalog_t *cat, const char *spec, sv_model_t *out,
                             sv_error_t *err);

/* Read a Hugging Face config.json (see docs/cost-model.md for the keys used). */
int sv_model_from_hf_config(const char *path, sv_model_t *out, sv_error_t *err);

/* Check that a model's numbers are consistent (positive sizes, heads divide, ...). */
int sv_model_check(const sv_model_t *m, const char *where, sv_error_t *err);

#endif
