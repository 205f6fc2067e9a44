/*
 * Token identity without tokens: what each request's prompt is made of, so that the
 * prefix cache can tell when two prompts begin alike. Two sources:
 *  - `workload.shared_prefix`, generated: a system prompt of N tokens (one of K distinct
 *    ones, chosen uniformly) that a share of the requests carries before its own message;
 *  - `workload.mooncake`, a Mooncake-format trace (JSON lines with `timestamp` in ms,
 *    `input_length`, `output_length` and `hash_ids`, one id per block of `block_tokens`
 *    prompt tokens, equal ids meaning equal blocks), whose hash ids become the segments.
 *
 * Ownership: sv_identity_new() returns a generator freed with sv_identity_free()
 * (NULL-safe); it draws from its own GSL stream, seeded from the scenario seed, and
 * borrows the prompt table, which must outlive it. sv_mooncake_load() returns a trace and
 * a prompt table the caller frees with sv_trace_free() and sv_prompts_free().
 */
#ifndef SERVESIM_IDENTITY_H
#define SERVESIM_IDENTITY_H

#include <stdint.h>

#include "servesim/base/error.h"
#include "servesim/traffic/request.h"

/* The random stream of the shared-prefix draws (after workload.h's four). */
#define SV_STREAM_PREFIX 5

typedef struct sv_shared_prefix_cfg {
    int given;
    long tokens;  /* system prompt length */
    long prompts; /* distinct system prompts, >= 1 */
    double share; /* of requests that carry one, (0, 1] */
} sv_shared_prefix_cfg_t;

/* The prompts of a replayed trace, row by row. */
typedef struct sv_prompts {
    size_t n;
    int64_t *off;  /* row i's segments start at seg[off[i]] */
    int32_t *nseg; /* ... and there are nseg[i] of them */
    sv_segment_t *seg;
} sv_prompts_t;
void sv_prompts_free(sv_prompts_t *p);

typedef struct sv_mooncake_cfg {
    int given;
    char path[1024];
    long block_tokens; /* prompt tokens per hash id (512 in Mooncake's traces) */
    double speedup;    /* > 1 replays faster */
    long limit;        /* 0 = all lines */
} sv_mooncake_cfg_t;

/* Read a Mooncake trace: every line one request; errors name the file and line (a missing
 * or mistyped field, a timestamp earlier than the line before, a hash list that does not
 * cover the prompt). */
#include "servesim/traffic/workload.h"
int sv_mooncake_load(const sv_mooncake_cfg_t *cfg, sv_trace_t **trace, sv_prompts_t **prompts,
                     sv_error_t *err);

typedef struct sv_identity sv_identity_t;

/* From a shared-prefix description (cfg) or a trace's prompts (prompts, not owned). */
int sv_identity_new(const sv_shared_prefix_cfg_t *cfg, const sv_prompts_t *prompts, uint64_t seed,
                    sv_identity_t **out, sv_error_t *err);
void sv_identity_free(sv_identity_t *g);

/*
 * The prompt of request `req`, whose own message has *input tokens: points *seg at its
 * segments (valid until the next call) and returns how many. A shared system prompt's
 * tokens are added to *input; a trace's row (req, wrapping) is taken as it is. Draws come
 * from the generator's stream, in request order.
 */
int sv_identity_next(sv_identity_t *g, int32_t req, int32_t *input, const sv_segment_t **seg);
/* 1 when every prompt's last segment is a message of its own, which no other prompt of
 * the workload repeats (shared prefixes are generated); 0 for a trace's rows, which may
 * repeat anything. */
int sv_identity_own_messages(const sv_identity_t *g);

#endif
