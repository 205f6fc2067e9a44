/*
 * `servesim explain`: what the cost model says about one model on one GPU setup,
 * without simulating traffic: memory plan, prefill time, decode step time across batch
 * sizes (the batch-size trade-off table), and the latency of one request alone.
 *
 * Ownership: sv_explain_t is caller storage filled by sv_explain_compute(); it holds no
 * pointers. sv_explain_json() returns a cJSON tree the caller frees with cJSON_Delete().
 */
#ifndef SERVESIM_EXPLAIN_H
#define SERVESIM_EXPLAIN_H

#include <stdio.h>

#include "servesim/base/error.h"
#include "servesim/cost/perf.h"

#define SV_EXPLAIN_MAX_BATCHES 32

typedef struct sv_explain_row {
    long batch;
    double step_s;
    int compute_bound;
    double tok_s_user; /* 1 / step */
    double tok_s_gpu;  /* batch / step / tp */
    int fits;          /* batch sequences of input+output tokens fit the KV cache */
    sv_step_cost_t cost;
} sv_explain_row_t;

typedef struct sv_explain {
    sv_perf_t perf;
    sv_memplan_t mem;
    long input, output;
    long max_seqs; /* sequences of input+output tokens the KV cache holds at once */
    long seq_blocks; /* blocks one such sequence holds at most (every KV cache group) */
    long seq_blocks_kind[SV_KV_KINDS]; /* ... by kind (sv_kvspec_t; the tokens' in full) */
    sv_step_cost_t prefill;
    double decode_ctx; /* context used for the table: input + output / 2 */
    int nrows;
    sv_explain_row_t rows[SV_EXPLAIN_MAX_BATCHES];
    double ttft_s, tpot_s, e2e_s; /* one request alone */
    int exceeds_context;          /* input + output > the model's max_position_embeddings */
} sv_explain_t;

/* Fill out from a built cost model. Fails when the model does not fit (SV_ENOFIT) or
 * on bad lengths. */
int sv_explain_compute(const sv_perf_t *p, long input, long output, const long *batches,
                       int nbatches, sv_explain_t *out, sv_error_t *err);

void sv_explain_print(const sv_explain_t *e, FILE *f);

struct cJSON *sv_explain_json(const sv_explain_t *e);

#endif
