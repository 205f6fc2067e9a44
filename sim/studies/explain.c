/*
 * `servesim explain`: the cost model's answers for one setup, as a table a teacher or a
 * capacity planner can read (see include/servesim/studies/explain.h).
 */
#include "servesim/studies/explain.h"

#include "servesim/studies/confidence.h"

#include <math.h>
#include <string.h>

#include <cJSON.h>

int sv_explain_compute(const sv_perf_t *p, long input, long output, const long *batches,
                       int nbatches, sv_explain_t *out, sv_error_t *err)
{
    memset(out, 0, sizeof *out);
    if (input < 1 || output < 1)
        return sv_errorf(err, SV_EINVAL, "--input and --output must be >= 1 (got %ld and %ld)",
                         input, output);
    if (output > 10000000 || input > 100000000)
        return sv_errorf(err, SV_EINVAL, "--input/--output are implausibly large (%ld, %ld)", input,
                         output);
    if (nbatches < 1 || nbatches > SV_EXPLAIN_MAX_BATCHES)
        return sv_errorf(err, SV_EINVAL, "--batch takes 1 to %d sizes", SV_EXPLAIN_MAX_BATCHES);
    out->perf = *p;
    out->input = input;
    out->output = output;
    int rc = sv_perf_memplan(p, &out->mem, err);
    if (rc) return rc;
    long len = input + output;
    /* A hybrid model's groups hold what vLLM's hybrid allocator keeps at rest, at most
     * (sv_kv_peak_blocks); others their tokens' blocks and the fixed per-sequence state. */
    if (p->kvs.hybrid) {
        out->seq_blocks = sv_kv_peak_blocks(&p->kvs, len, out->seq_blocks_kind);
    } else {
        out->seq_blocks_kind[SV_KV_FULL] = (len + out->mem.block_size - 1) / out->mem.block_size;
        out->seq_blocks = out->seq_blocks_kind[SV_KV_FULL] + out->mem.seq_blocks;
    }
    out->max_seqs = out->mem.kv_blocks / out->seq_blocks;
    out->exceeds_context = p->model.max_context > 0 && len > p->model.max_context;

    sv_perf_prefill_time(p, input, &out->prefill);
    out->decode_ctx = (double)input + (double)output / 2.0;
    out->nrows = nbatches;
    for (int i = 0; i < nbatches; i++) {
        sv_explain_row_t *r = &out->rows[i];
        if (batches[i] < 1)
            return sv_errorf(err, SV_EINVAL, "--batch sizes must be >= 1 (got %ld)", batches[i]);
        r->batch = batches[i];
        r->step_s = sv_perf_decode_time(p, r->batch, out->decode_ctx, &r->cost);
        r->compute_bound = r->cost.compute_bound;
        r->tok_s_user = 1.0 / r->step_s;
        r->tok_s_gpu = (double)r->batch / r->step_s / p->set.tp / (p->set.pp > 1 ? p->set.pp : 1);
        r->fits = r->batch <= out->max_seqs;
    }

    /* One request alone: the prefill yields token 1; decode step k reads input + k - 1
     * cached tokens. Summed exactly, step by step. */
    out->ttft_s = out->prefill.total;
    double decode = 0.0;
    for (long k = 1; k < output; k++)
        decode += sv_perf_decode_time(p, 1, (double)(input + k - 1), NULL);
    out->tpot_s = output > 1 ? decode / (double)(output - 1) : 0.0;
    out->e2e_s = out->ttft_s + decode;
    return 0;
}

static const char *bound_word(int compute_bound)
{
    return compute_bound ? "compute" : "memory";
}

/* Speculative decoding: each batch's verify pass, drafter and real step, and the time per
 * emitted token the decode table above shows (sv_perf_spec_step). */
static void print_spec(FILE *f, const sv_explain_t *e)
{
    const sv_perf_settings_t *set = &e->perf.set;
    int k = sv_spec_k(set);
    if (k == 0) return;
    const sv_perf_t *d = e->perf.draft;
    char what[192];
    if (d)
        snprintf(what, sizeof what,
                 "draft model '%s' (tp %d, %.2f GB weights and %.0f bytes of KV per token per "
                 "GPU)",
                 d->model.name, d->set.tp, d->weight_bytes_gpu / 1e9, d->kv_bytes_token);
    else
        snprintf(what, sizeof what, "%s",
                 set->spec_method == SV_SPEC_MTP ? "mtp (the model's next-n layer, loaded)"
                                                 : "eagle");
    fprintf(f, "\nSpeculative decoding: %s, %d draft tokens, acceptance", what, k);
    for (int i = 0; i < k; i++)
        fprintf(f, " %.3g", sv_spec_accept(set, i));
    fprintf(f, ": %.4f tokens per verify step\n", sv_spec_accept_len(set));
    fprintf(f, "  %6s %10s %10s %10s %12s\n", "batch", "verify ms", "draft ms", "step ms",
            "ms / token");
    for (int i = 0; i < e->nrows; i++) {
        const sv_step_cost_t *c = &e->rows[i].cost;
        fprintf(f, "  %6ld %10.3f %10.3f %10.3f %12.3f\n", e->rows[i].batch, c->spec_verify * 1e3,
                c->spec_draft * 1e3, (c->spec_verify + c->spec_draft) * 1e3, c->total * 1e3);
    }
    if (d)
        fprintf(f, "  (verify: the target over k + 1 tokens per sequence, the columns above; "
                   "draft: the draft model's pass over the k + 2 verified and sampled tokens, "
                   "then k - 1 steps of one token)\n");
    else
        fprintf(f, "  (verify: the target over k + 1 tokens per sequence, the columns above; "
                   "draft: k draft steps and the pass over the verified tokens)\n");
}

/* The expert-parallel and attention data-parallel layout and its all-to-all terms. */
static void print_layout(const sv_perf_t *p, FILE *f)
{
    fprintf(f,
            "layout: %d GPUs; attention and dense layers at TP %d on each of %d attention "
            "data-parallel ranks (weights replicated per rank, KV per rank); %d routed experts",
            p->set.tp, p->attn_tp, p->dp, p->model.experts);
    int red = p->ep > 1 ? p->set.ep_redundant : 0;
    if (red) fprintf(f, " and %d redundant copies", red);
    fprintf(f, " over EP %d (%d per rank, expert TP %d)\n", p->ep, (p->model.experts + red) / p->ep,
            p->set.tp / p->ep);
    if (p->ep > 1 && p->dp > 1)
        fprintf(f,
                "expert parallel: dispatch (FP8) + combine (BF16) per rank token per MoE layer: "
                "high-throughput %.0f + %.0f B at %.0f GB/s + %.0f us, low-latency %.0f + %.0f B "
                "at %.0f GB/s + %.0f us (DeepEP; auto: low-latency for decode-only steps)\n",
                p->a2a_bytes[SV_EPK_HIGH_THROUGHPUT][0], p->a2a_bytes[SV_EPK_HIGH_THROUGHPUT][1],
                1e-9 / p->a2a_inv_bw[SV_EPK_HIGH_THROUGHPUT], p->a2a_alpha[SV_EPK_HIGH_THROUGHPUT] * 1e6,
                p->a2a_bytes[SV_EPK_LOW_LATENCY][0], p->a2a_bytes[SV_EPK_LOW_LATENCY][1],
                1e-9 / p->a2a_inv_bw[SV_EPK_LOW_LATENCY], p->a2a_alpha[SV_EPK_LOW_LATENCY] * 1e6);
    else
        fprintf(f, "expert parallel: every rank holds every token (attention TP), so the MoE "
                   "output is all-reduced as with TP: no all-to-all\n");
}

/* One step's cost, operator by operator, then communication and the engine's terms. */
static void print_breakdown(FILE *f, const sv_step_cost_t *c, int tp)
{
    fprintf(f, "  %-20s %12s %12s %10s %10s %8s\n", "operator", "GFLOP", "MB moved", "fixed ms",
            "ms", "bound");
    for (int i = 0; i < SV_OP_COUNT; i++) {
        const sv_op_cost_t *o = &c->op[i];
        fprintf(f, "  %-20s %12.1f %12.1f %10.3f %10.3f %8s\n", sv_op_name(i), o->flops / 1e9,
                o->bytes / 1e6, o->t_fixed * 1e3, o->time * 1e3,
                bound_word(o->t_compute > o->t_memory));
    }
    if (tp > 1)
        fprintf(f, "  %-20s %36s %10.3f  (%s)\n", "tp all-reduce", "", (c->comm - c->a2a) * 1e3,
                sv_ar_algo_names[c->ar_algo]);
    if (c->a2a > 0)
        fprintf(f, "  %-20s %36s %10.3f  (%s kernels)\n", "ep all-to-all", "", c->a2a * 1e3,
                c->a2a_kernel == SV_EPK_LOW_LATENCY ? "low-latency" : "high-throughput");
    fprintf(f, "  %-20s %36s %10.3f\n", "engine per step", "", c->eng_step * 1e3);
    fprintf(f, "  %-20s %36s %10.3f\n", "engine per sequence", "", c->eng_seq * 1e3);
    fprintf(f, "  %-20s %36s %10.3f\n", "engine launches", "", c->eng_launch * 1e3);
    if (c->micro_batches > 1 || c->pp_send > 0) {
        fprintf(f, "  %-20s %36s %10.3f\n", "pipeline sends", "", c->pp_send * 1e3);
        fprintf(f, "  %-20s %36s %10.3f  (%d micro-batches)\n", "pipeline bubble", "",
                c->pp_bubble * 1e3, c->micro_batches);
    }
}

/* Expected distinct experts a MoE layer touches for T tokens: E (1 - (1 - k/E)^T). */
static double experts_touched(const sv_model_t *m, double tokens)
{
    double E = m->experts, k = m->experts_per_tok;
    return E * (1.0 - pow(1.0 - k / E, tokens));
}

/* What a model beyond the dense transformer adds: its layers, what its KV holds, the
 * approximations taken in reading it. */
static void print_arch(const sv_explain_t *e, FILE *f)
{
    const sv_perf_t *p = &e->perf;
    const sv_model_t *m = &p->model;
    const sv_perf_arch_t *x = &p->x;
    const double *cv = p->set.curve;
    int pp = p->set.pp > 1 ? p->set.pp : 1;
    fprintf(f, "architecture:");
    if (m->mla)
        fprintf(f,
                " MLA (%d heads; KV = latent %d + rotary key %d per token per layer, the same on "
                "every TP rank; prefill with decompressed heads, decode absorbed over the latent; "
                "efficiency x %.2f)",
                m->heads, m->kv_lora_rank, m->qk_rope_head_dim, cv[SV_CV_MLA_EFF]);
    else
        fprintf(f, " GQA (%d query heads, %d KV heads of %d)", m->heads, m->kv_heads, m->head_dim);
    if (m->experts) {
        fprintf(f, "; MoE in %d of %d layers: %d routed experts top-%d of width %d", sv_model_moe_layers(m),
                m->layers, m->experts, m->experts_per_tok, m->moe_ffn);
        if (m->shared_experts) fprintf(f, " + shared %d wide", m->shared_ffn);
        if (m->dense_layers) fprintf(f, ", %d dense layers of width %d", m->dense_layers, m->ffn);
        fprintf(f, "; experts in %s, grouped-GEMM efficiency x %.2f, imbalance x %.2f",
                sv_dtype_name(x->expert_dtype), cv[SV_CV_GROUPED_EFF], cv[SV_CV_MOE_IMBALANCE]);
    }
    if (x->window_layers > 0)
        fprintf(f, "; %d layers with a %s of %d tokens", sv_model_window_layers(m),
                m->chunked_window ? "chunked window" : "sliding window", m->sliding_window);
    if (m->linear_layers)
        fprintf(f, "; %d linear-attention layers (Gated DeltaNet, %d value heads of %dx%d state)",
                m->linear_layers, m->lin_v_heads, m->lin_k_dim, m->lin_v_dim);
    fputc('\n', f);
    fprintf(f,
            "  KV per GPU: %.0f B per token (%.0f full-attention layers per stage%s)",
            p->kv_bytes_token, x->full_layers, p->pp_uneven ? ", the heaviest" : "");
    if (x->window_layers > 0)
        fprintf(f, "; windowed layers %.0f B per token, at most %.0f tokens each", p->kv_bytes_token_window,
                x->window_cap);
    if (x->linear_layers > 0)
        fprintf(f, "; linear-attention state %.0f B per sequence", x->linear_layers * x->lin_state);
    if (p->seq_state_bytes > 0 && !p->kvs.hybrid)
        fprintf(f, "; a sequence holds %.2f MB besides its tokens (%ld blocks)", p->seq_state_bytes / 1e6,
                e->mem.seq_blocks);
    fputc('\n', f);
    if (m->experts) {
        fprintf(f, "  experts touched per MoE layer (of %d):", m->experts);
        fprintf(f, " prefill of %ld tokens %.1f", e->input, experts_touched(m, (double)e->input));
        for (int i = 0; i < e->nrows; i++)
            fprintf(f, ", batch %ld %.1f", e->rows[i].batch, experts_touched(m, (double)e->rows[i].batch));
        fputc('\n', f);
    }
    (void)pp;
    for (const char *n = m->notes; *n;) {
        const char *end = strstr(n, "; ");
        int len = end ? (int)(end - n) : (int)strlen(n);
        /* With MTP on, the next-n layer is loaded (the speculative decoding section). */
        if (e->perf.set.spec_method != SV_SPEC_MTP || strncmp(n, "num_nextn_predict_layers", 24))
            fprintf(f, "  note: %.*s\n", len, n);
        n += len + (end ? 2 : 0);
    }
}

/* The title line and the settings of the cost model: engine profile, confidence,
 * efficiencies and curves, and the tensor, expert and pipeline parallel collectives. */
static void print_settings(const sv_explain_t *e, FILE *f)
{
    const sv_perf_t *p = &e->perf;
    int tp = p->set.tp;
    int pp = p->set.pp > 1 ? p->set.pp : 1;
    if (pp > 1)
        fprintf(f, "servesim explain: %s on %d x %s (TP %d x PP %d), weights %s, KV cache %s\n",
                p->model.name, tp * pp, p->gpu.name, tp, pp, sv_dtype_name(p->set.weight_dtype),
                sv_dtype_name(p->set.kv_dtype));
    else
        fprintf(f, "servesim explain: %s on %d x %s (TP %d), weights %s%s%s%s, KV cache %s\n",
                p->model.name, tp, p->gpu.name, tp, sv_dtype_name(p->set.weight_dtype),
                p->x.expert_dtype != p->set.weight_dtype && p->model.experts ? " (experts " : "",
                p->x.expert_dtype != p->set.weight_dtype && p->model.experts
                    ? sv_dtype_name(p->x.expert_dtype)
                    : "",
                p->x.expert_dtype != p->set.weight_dtype && p->model.experts ? ")" : "",
                sv_dtype_name(p->set.kv_dtype));
    const double *cv = p->set.curve;
    fprintf(f, "engine profile: %s%s\n", p->set.engine[0] ? p->set.engine : "none",
            p->set.ideal ? " (ideal: pure roofline)" : "");
    sv_confidence_t conf;
    sv_confidence_of(p, &conf);
    sv_confidence_print(&conf, f);
    fprintf(f,
            "cost model: compute efficiency %.2f, memory efficiency %.2f, overhead %.3f ms "
            "per step + %.1f us per layer\n",
            p->set.compute_eff, p->set.memory_eff, p->set.iter_overhead_s * 1e3,
            p->set.layer_overhead_s * 1e6);
    fprintf(f,
            "  GEMM efficiency x T/(T + %.0f), floor %.1f us; small ops %.2f of HBM (norms %.2f), "
            "%.1f us "
            "each; attention %.2f of peak x n/(n + %.0f) (prefill), %.2f of HBM + %.2f us per "
            "sequence per layer (decode); engine %.1f us per sequence, CUDA graphs %s (up to "
            "%ld tokens)\n",
            cv[SV_CV_GEMM_M_HALF], cv[SV_CV_GEMM_FLOOR], cv[SV_CV_SMALL_EFF], cv[SV_CV_NORM_EFF],
            cv[SV_CV_SMALL_FLOOR], cv[SV_CV_ATTN_EFF], cv[SV_CV_ATTN_N_HALF],
            cv[SV_CV_ATTN_MEM_EFF], cv[SV_CV_ATTN_SEQ], p->set.seq_overhead_s * 1e6,
            p->set.cuda_graphs ? "on" : "off", p->set.graph_max_tokens);
    if (cv[SV_CV_PREFILL_EFF] < 1.0 || cv[SV_CV_PREFILL_REQUEST] > 0)
        fprintf(f,
                "  context phase: what a step's prompts add to its GPU time at 1/%.3f; %.2f ms "
                "per prompt in a step (run eagerly, prepared on the host)\n",
                cv[SV_CV_PREFILL_EFF], cv[SV_CV_PREFILL_REQUEST]);
    int pairs = p->gpu.topology == SV_TOPO_NVLINK_PAIRS && p->attn_tp > 2 &&
                p->set.link_bw == p->gpu.pcie_bw;
    if (p->attn_tp > 1)
        fprintf(f,
                "tensor parallel: 2 all-reduces per layer over %s, %.0f GB/s per GPU "
                "(bidirectional) at %.2f efficiency, NCCL's latency %.1f us each at TP %d\n",
                tp > (p->gpu.nvlink_domain > 0 ? p->gpu.nvlink_domain : 8)
                    ? "the scale-out network (TP exceeds one NVLink domain)"
                : pairs ? "PCIe between NVLink pairs (topology nvlink-pairs)"
                        : p->gpu.link,
                p->set.link_bw / 1e9,
                pairs ? 2.0 * (p->attn_tp - 1.0) / p->attn_tp / (p->set.link_bw / 2.0 * p->ar_inv_bw)
                      : cv[SV_CV_LINK_EFF],
                p->ar_alpha * 1e6, p->attn_tp);
    if (p->attn_tp > 1 && p->ar_custom)
        fprintf(f,
                "all-reduce algorithm by message size: the engine's one-shot (%.1f us + TP-1 "
                "payloads one way) below %.0f KiB, two-shot (%.1f us + 2 (TP-1)/TP payloads) up "
                "to 8 MiB, then NCCL's ring (%.1f us)%s\n",
                p->ar_custom_alpha * 1e6, sv_perf_one_shot_limit(p->attn_tp) / 1024.0,
                p->ar_two_shot_alpha * 1e6, p->ar_alpha * 1e6,
                p->ar_nvls ? " or NVLink SHARP where faster" : "");
    else if (p->attn_tp > 1)
        fprintf(f, "all-reduce algorithm: NCCL's ring%s at every size (%s)\n",
                p->ar_nvls ? " or NVLink SHARP, the faster," : "",
                !p->set.custom_allreduce ? "the engine profile has no custom all-reduce"
                                         : "the engines' custom kernel needs every GPU pair on "
                                           "NVLink and 2, 4, 6 or 8 GPUs");
    if (p->ep > 1 || p->dp > 1) print_layout(p, f);
    if (pp > 1) {
        /* Uneven stages: each stage's layers, the heaviest's time scaled by theirs. */
        fprintf(f, "pipeline parallel: %d stages of ", pp);
        if (p->pp_uneven)
            for (int i = 0; i < pp; i++)
                fprintf(f, "%s%d", i ? "+" : "", p->pp_layers[i]);
        else
            fprintf(f, "%.0f", p->stage_layers);
        fprintf(f, " layers%s, sends over %s at %.0f GB/s one way (x %.2f) + %.1f us each; ",
                !p->pp_uneven ? "" : p->set.pp_split_n ? " (pp_layer_partition)" : " (vLLM's split)",
                p->pp_nvlink ? "NVLink" : "the scale-out network",
                (p->pp_nvlink ? p->set.link_bw / 2.0 : p->set.pp_link_bw) / 1e9, 0.95,
                p->p2p_alpha * 1e6);
        if (p->pp_uneven)
            fprintf(f,
                    "stage = the heaviest stage's (%.0f layers), the others in proportion to "
                    "their layers; step = max(sum over micro-batches of stage + send, %.3f x stage",
                    p->stage_layers, p->stage_equiv);
        else
            fprintf(f, "step = max(sum over micro-batches of stage + send, %d x stage", pp);
        fprintf(f,
                " + %d x send) + engine; a run keeps up to %d micro-batches in flight, each "
                "formed when the first stage frees (docs/cost-model.md)\n",
                pp - 1, pp);
    }
}

/* The memory plan per GPU: weights, KV bytes per token, budget, KV capacity and the
 * sequences that fit. */
static void print_memory(const sv_explain_t *e, FILE *f)
{
    const sv_perf_t *p = &e->perf;
    const sv_memplan_t *m = &e->mem;
    fprintf(f, "\nMemory per GPU\n");
    fprintf(f, "  %-38s %10.2f GB  (%.2f GB for the whole model)\n", "weights",
            m->weight_bytes / 1e9, p->weight_bytes_total / 1e9);
    fprintf(f, "  %-38s %10.0f B   (%.0f B per token per GPU)\n", "KV cache per token",
            p->kv_bytes_token_total, p->kv_bytes_token);
    fprintf(f, "  %-38s %10.2f GB  (%.2f x %.2f GB)\n", "usable", m->budget_bytes / 1e9,
            p->set.gpu_memory_utilization, m->device_bytes / 1e9);
    fprintf(f, "  %-38s %10.2f GB\n", "activation reserve", m->activation_bytes / 1e9);
    fprintf(f, "  %-38s %10.2f GB\n", "KV cache", m->kv_bytes / 1e9);
    fprintf(f, "  %-38s %10ld tokens = %ld blocks of %d\n", "KV capacity", m->kv_tokens,
            m->kv_blocks, m->block_size);
    if (m->dp_ranks > 1)
        fprintf(f, "  %-38s %10ld tokens (x %d ranks; one sequence stays on one rank)\n",
                "KV capacity per attention rank", m->rank_kv_tokens, m->dp_ranks);
    if (p->kvs.hybrid) {
        const sv_kvspec_t *k = &p->kvs;
        fprintf(f, "  %-38s %10d layers a group, one pool of %.0f B blocks:", "KV cache groups",
                k->group_layers, k->page_token * m->block_size);
        for (int i = 0; i < SV_KV_KINDS; i++)
            if (k->groups[i]) fprintf(f, " %d %s", k->groups[i], sv_kv_kind_names[i]);
        fputc('\n', f);
        fprintf(f, "  %-38s %10ld at most at %ld tokens:", "blocks a sequence holds", e->seq_blocks,
                e->input + e->output);
        for (int i = 0; i < SV_KV_KINDS; i++)
            if (k->groups[i]) fprintf(f, " %s %ld", sv_kv_kind_names[i], e->seq_blocks_kind[i]);
        fputc('\n', f);
    }
    fprintf(f, "  %-38s %10ld at %ld tokens (%ld in + %ld out)\n", "max concurrent sequences",
            e->max_seqs, e->input + e->output, e->input, e->output);
    if (e->exceeds_context)
        fprintf(f, "  note: %ld tokens exceed the model's context of %ld\n", e->input + e->output,
                p->model.max_context);
}

/* The decode step per batch size: the time of each kind of op, then the step, its bound,
 * the throughputs and whether the batch fits the KV cache. */
static void print_decode(const sv_explain_t *e, FILE *f)
{
    const sv_perf_t *p = &e->perf;
    fprintf(f, "\nDecode step at context %.0f tokens (input + output/2)\n", e->decode_ctx);
    int a2a = p->ep > 1 && p->dp > 1;
    fprintf(f, "  %6s %9s %9s %9s %9s %9s %9s %9s", "batch", "linear", "small", "attn", "lm_head",
            "allreduce", "engine", "fixed*");
    fprintf(f, a2a ? " %9s %9s\n" : "\n", "all2all", "rank seqs");
    for (int i = 0; i < e->nrows; i++) {
        const sv_step_cost_t *c = &e->rows[i].cost;
        double fixed = 0.0;
        for (int k = 0; k < SV_OP_COUNT; k++)
            fixed += c->op[k].t_fixed;
        fprintf(f, "  %6ld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f", e->rows[i].batch,
                c->op[SV_OP_LINEAR].time * 1e3, c->op[SV_OP_SMALL].time * 1e3,
                c->op[SV_OP_ATTN_DECODE].time * 1e3, c->op[SV_OP_LM_HEAD].time * 1e3,
                (c->comm - c->a2a) * 1e3, c->overhead * 1e3, fixed * 1e3);
        if (a2a)
            fprintf(f, " %9.3f %9ld\n", c->a2a * 1e3, c->rank_seqs);
        else
            fprintf(f, "\n");
    }
    fprintf(f, "  (ms; * kernel floors and per-sequence attention cost, inside the columns)\n");
    if (p->attn_tp > 1) {
        fprintf(f, "  all-reduce per batch:");
        for (int i = 0; i < e->nrows; i++)
            fprintf(f, "%s %ld %s (%.0f KiB)", i ? "," : "", e->rows[i].batch,
                    sv_ar_algo_names[e->rows[i].cost.ar_algo],
                    (double)e->rows[i].cost.tokens * p->model.hidden * 2.0 / 1024.0);
        fprintf(f, "\n");
    }
    fprintf(f, "  %6s %10s %8s %14s %14s %8s\n", "batch", "step ms", "bound", "tok/s/user",
            "tok/s/GPU", "fits KV");
    for (int i = 0; i < e->nrows; i++) {
        const sv_explain_row_t *r = &e->rows[i];
        fprintf(f, "  %6ld %10.3f %8s %14.1f %14.1f %8s\n", r->batch, r->step_s * 1e3,
                bound_word(r->compute_bound), r->tok_s_user, r->tok_s_gpu, r->fits ? "yes" : "no");
    }
}

void sv_explain_print(const sv_explain_t *e, FILE *f)
{
    const sv_perf_t *p = &e->perf;
    print_settings(e, f);

    if (p->ext || p->model.notes[0]) print_arch(e, f);

    print_memory(e, f);

    const sv_step_cost_t *pc = &e->prefill;
    fprintf(f, "\nPrefill of %ld tokens: %.2f ms, %s-bound\n", e->input, pc->total * 1e3,
            bound_word(pc->compute_bound));
    print_breakdown(f, pc, p->attn_tp);

    print_decode(e, f);
    print_spec(f, e);
    fprintf(f,
            "\nOne request alone (%ld in, %ld out): TTFT %.2f ms + TPOT %.3f ms x %ld = "
            "E2E %.2f ms\n",
            e->input, e->output, e->ttft_s * 1e3, e->tpot_s * 1e3, e->output - 1, e->e2e_s * 1e3);
}

static cJSON *op_json(const sv_op_cost_t *o)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "flops", o->flops);
    cJSON_AddNumberToObject(j, "bytes", o->bytes);
    cJSON_AddNumberToObject(j, "time_ms", o->time * 1e3);
    cJSON_AddNumberToObject(j, "fixed_ms", o->t_fixed * 1e3);
    cJSON_AddStringToObject(j, "bound", bound_word(o->t_compute > o->t_memory));
    return j;
}

static cJSON *step_json(const sv_step_cost_t *c)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "time_ms", c->total * 1e3);
    cJSON_AddStringToObject(j, "bound", bound_word(c->compute_bound));
    cJSON *ops = cJSON_AddObjectToObject(j, "operators");
    for (int i = 0; i < SV_OP_COUNT; i++)
        cJSON_AddItemToObject(ops, sv_op_name(i), op_json(&c->op[i]));
    cJSON_AddNumberToObject(j, "tp_comm_ms", (c->comm - c->a2a) * 1e3);
    if (c->comm - c->a2a > 0)
        cJSON_AddStringToObject(j, "tp_allreduce", sv_ar_algo_names[c->ar_algo]);
    if (c->a2a > 0) cJSON_AddNumberToObject(j, "ep_all_to_all_ms", c->a2a * 1e3);
    cJSON_AddNumberToObject(j, "overhead_ms", c->overhead * 1e3);
    cJSON_AddNumberToObject(j, "engine_step_ms", c->eng_step * 1e3);
    cJSON_AddNumberToObject(j, "engine_seq_ms", c->eng_seq * 1e3);
    cJSON_AddNumberToObject(j, "engine_launch_ms", c->eng_launch * 1e3);
    cJSON_AddNumberToObject(j, "pipeline_send_ms", c->pp_send * 1e3);
    cJSON_AddNumberToObject(j, "pipeline_bubble_ms", c->pp_bubble * 1e3);
    cJSON_AddNumberToObject(j, "micro_batches", c->micro_batches);
    if (c->spec_len > 0) {
        cJSON_AddNumberToObject(j, "spec_verify_ms", c->spec_verify * 1e3);
        cJSON_AddNumberToObject(j, "spec_draft_ms", c->spec_draft * 1e3);
        cJSON_AddNumberToObject(j, "spec_tokens_per_step", c->spec_len);
    }
    return j;
}

cJSON *sv_explain_json(const sv_explain_t *e)
{
    const sv_perf_t *p = &e->perf;
    const sv_memplan_t *m = &e->mem;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", p->model.name);
    cJSON_AddStringToObject(j, "gpu", p->gpu.name);
    cJSON_AddNumberToObject(j, "tp", p->set.tp);
    if (p->ep > 1 || p->dp > 1) {
        cJSON_AddNumberToObject(j, "ep", p->ep);
        cJSON_AddNumberToObject(j, "dp_attention", p->dp);
        cJSON_AddNumberToObject(j, "attention_tp", p->attn_tp);
        cJSON_AddNumberToObject(j, "kv_tokens_per_rank", m->rank_kv_tokens);
    }
    cJSON_AddNumberToObject(j, "pp", p->set.pp > 1 ? p->set.pp : 1);
    cJSON_AddStringToObject(j, "weight_dtype", sv_dtype_name(p->set.weight_dtype));
    cJSON_AddStringToObject(j, "kv_cache_dtype", sv_dtype_name(p->set.kv_dtype));
    cJSON_AddStringToObject(j, "engine_profile", p->set.engine);
    sv_confidence_t conf;
    sv_confidence_of(p, &conf);
    cJSON_AddItemToObject(j, "confidence", sv_confidence_json(&conf));
    cJSON *s = cJSON_AddObjectToObject(j, "settings");
    for (int k = 0; k < SV_CV_COUNT; k++)
        cJSON_AddNumberToObject(s, sv_curve_keys[k], p->set.curve[k]);
    cJSON_AddNumberToObject(s, "seq_overhead_us", p->set.seq_overhead_s * 1e6);
    cJSON_AddBoolToObject(s, "cuda_graphs", p->set.cuda_graphs);
    cJSON_AddNumberToObject(s, "compute_efficiency", p->set.compute_eff);
    cJSON_AddNumberToObject(s, "memory_efficiency", p->set.memory_eff);
    cJSON_AddNumberToObject(s, "iteration_overhead_ms", p->set.iter_overhead_s * 1e3);
    cJSON_AddNumberToObject(s, "layer_overhead_us", p->set.layer_overhead_s * 1e6);
    cJSON_AddNumberToObject(s, "link_bandwidth_gb_s", p->set.link_bw / 1e9);
    cJSON_AddNumberToObject(s, "link_latency_us", p->set.link_latency * 1e6);
    cJSON_AddBoolToObject(s, "custom_allreduce", p->set.custom_allreduce);
    cJSON_AddBoolToObject(s, "nccl_nvls", p->ar_nvls);
    cJSON_AddNumberToObject(s, "gpu_memory_utilization", p->set.gpu_memory_utilization);

    cJSON *mem = cJSON_AddObjectToObject(j, "memory");
    cJSON_AddNumberToObject(mem, "device_gb", m->device_bytes / 1e9);
    cJSON_AddNumberToObject(mem, "usable_gb", m->budget_bytes / 1e9);
    cJSON_AddNumberToObject(mem, "weights_gb_per_gpu", m->weight_bytes / 1e9);
    cJSON_AddNumberToObject(mem, "weights_gb_total", p->weight_bytes_total / 1e9);
    cJSON_AddNumberToObject(mem, "activation_reserve_gb", m->activation_bytes / 1e9);
    cJSON_AddNumberToObject(mem, "kv_cache_gb", m->kv_bytes / 1e9);
    cJSON_AddNumberToObject(mem, "kv_bytes_per_token", p->kv_bytes_token_total);
    cJSON_AddNumberToObject(mem, "kv_bytes_per_token_per_gpu", p->kv_bytes_token);
    cJSON_AddNumberToObject(mem, "kv_capacity_tokens", (double)m->kv_tokens);
    cJSON_AddNumberToObject(mem, "kv_blocks", (double)m->kv_blocks);
    cJSON_AddNumberToObject(mem, "block_size", m->block_size);
    cJSON_AddNumberToObject(mem, "max_concurrent_seqs", (double)e->max_seqs);
    if (p->ext) {
        cJSON_AddNumberToObject(mem, "kv_window_bytes_per_token_per_gpu", p->kv_bytes_token_window);
        cJSON_AddNumberToObject(mem, "sequence_state_bytes_per_gpu", p->seq_state_bytes);
        cJSON_AddNumberToObject(mem, "sequence_state_blocks", (double)m->seq_blocks);
        if (p->kvs.hybrid) {
            cJSON *g = cJSON_AddObjectToObject(mem, "kv_cache_groups");
            cJSON *b = cJSON_AddObjectToObject(mem, "sequence_blocks");
            cJSON_AddNumberToObject(mem, "kv_group_layers", p->kvs.group_layers);
            for (int i = 0; i < SV_KV_KINDS; i++) {
                if (!p->kvs.groups[i]) continue;
                cJSON_AddNumberToObject(g, sv_kv_kind_names[i], p->kvs.groups[i]);
                cJSON_AddNumberToObject(b, sv_kv_kind_names[i], (double)e->seq_blocks_kind[i]);
            }
        }
        cJSON_AddStringToObject(j, "expert_weight_dtype", sv_dtype_name(p->x.expert_dtype));
    }
    if (p->model.notes[0]) cJSON_AddStringToObject(j, "notes", p->model.notes);
    if (p->draft) { /* speculative: draft: what the draft model holds per GPU */
        cJSON *d = cJSON_AddObjectToObject(j, "draft_model");
        cJSON_AddStringToObject(d, "name", p->draft->model.name);
        cJSON_AddNumberToObject(d, "tp", p->draft->set.tp);
        cJSON_AddNumberToObject(d, "weight_bytes_per_gpu", p->draft->weight_bytes_gpu);
        cJSON_AddNumberToObject(d, "kv_bytes_per_token_per_gpu", p->draft->kv_bytes_token);
    }

    cJSON *pre = step_json(&e->prefill);
    cJSON_AddNumberToObject(pre, "tokens", (double)e->input);
    cJSON_AddItemToObject(j, "prefill", pre);

    cJSON *dec = cJSON_AddObjectToObject(j, "decode");
    cJSON_AddNumberToObject(dec, "context", e->decode_ctx);
    cJSON *rows = cJSON_AddArrayToObject(dec, "batches");
    for (int i = 0; i < e->nrows; i++) {
        const sv_explain_row_t *r = &e->rows[i];
        cJSON *row = step_json(&r->cost);
        cJSON_AddNumberToObject(row, "batch", (double)r->batch);
        cJSON_AddNumberToObject(row, "tokens_per_s_per_user", r->tok_s_user);
        cJSON_AddNumberToObject(row, "tokens_per_s_per_gpu", r->tok_s_gpu);
        cJSON_AddBoolToObject(row, "fits_kv_cache", r->fits);
        cJSON_AddItemToArray(rows, row);
    }

    cJSON *one = cJSON_AddObjectToObject(j, "single_request");
    cJSON_AddNumberToObject(one, "input_tokens", (double)e->input);
    cJSON_AddNumberToObject(one, "output_tokens", (double)e->output);
    cJSON_AddNumberToObject(one, "ttft_ms", e->ttft_s * 1e3);
    cJSON_AddNumberToObject(one, "tpot_ms", e->tpot_s * 1e3);
    cJSON_AddNumberToObject(one, "e2e_ms", e->e2e_s * 1e3);
    return j;
}
