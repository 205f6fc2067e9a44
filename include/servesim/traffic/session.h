/*
 * Multi-turn sessions and agentic programs (`workload.sessions`): requests that depend on
 * earlier ones ending. A session is k calls (k drawn from `turns`):
 *  - shape chain (a chat, or an agent's sequential steps): call i+1 is created and sent a
 *    think time after call i ends; with history (the default) its prompt is the whole
 *    conversation so far: every earlier prompt's segments, the earlier answer (named with
 *    the id the engine caches its output blocks under, sv_output_segment_id) and a new
 *    message, so it finds in the prefix cache what survived of the earlier turns;
 *  - shape fanout: the k calls are sent together when the task starts, and the task ends
 *    when the last of them ends (the join).
 * Session starts follow the workload's arrival process (rate, burstiness, rate_profile;
 * with rate inf and max_concurrency N, a closed loop of N live sessions);
 * the first call's message and output come from the workload's input and output
 * distributions, later messages from `message` (default: input), later outputs from
 * output, think times (ms) from `think_time_ms`. Each has its own random stream.
 *
 * Ownership: sv_session_gen_new() returns a generator freed with sv_session_gen_free()
 * (NULL-safe); it borrows the configs, which must outlive it.
 */
#ifndef SERVESIM_SESSION_H
#define SERVESIM_SESSION_H

#include <stdint.h>

#include "servesim/base/error.h"
#include "servesim/traffic/request.h"
#include "servesim/traffic/workload.h"

/* Random streams of the session draws (after identity.h's SV_STREAM_PREFIX). */
enum {
    SV_STREAM_TURNS = 6,
    SV_STREAM_THINK = 7,
    SV_STREAM_MESSAGE = 8,
    SV_STREAM_SESSION_OUTPUT = 9
};

typedef enum { SV_SESSION_CHAIN = 0, SV_SESSION_FANOUT } sv_session_shape_t;

typedef struct sv_session_cfg {
    int given;
    long count;            /* sessions (tasks) started */
    sv_lendist_t turns;    /* calls per session, >= 1 */
    sv_lendist_t think_ms; /* ms between a call's end and the next one's start (chain) */
    int has_think;         /* 0: no think time */
    sv_lendist_t message;  /* new message of calls after the first */
    int has_message;       /* 0: the workload's input distribution */
    int shape;             /* sv_session_shape_t */
    int history;           /* chain: each prompt carries the conversation so far */
} sv_session_cfg_t;

/* The id of the new message in request id's prompt (apart from every other kind of
 * segment's ids). */
static inline uint64_t sv_session_message_id(int32_t id)
{
    return 0x5e55100000000000ULL + (uint64_t)(uint32_t)id;
}

typedef struct sv_session_gen sv_session_gen_t;

int sv_session_gen_new(const sv_session_cfg_t *cfg, const sv_workload_cfg_t *wl, uint64_t seed,
                       sv_session_gen_t **out, sv_error_t *err);
void sv_session_gen_free(sv_session_gen_t *g);

/* Calls in the next session (>= 1). */
int32_t sv_session_turns(sv_session_gen_t *g);
/* Think time before the next call, in seconds. */
double sv_session_think(sv_session_gen_t *g);
/* A later call's new message and output lengths. */
void sv_session_lengths(sv_session_gen_t *g, int32_t *message, int32_t *output);

#endif
