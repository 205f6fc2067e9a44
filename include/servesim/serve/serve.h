/*
 * `servesim serve SCENARIO` (docs/serve.md): the scenario's cluster, simulated live,
 * behind the OpenAI-compatible routes vLLM serves:
 *
 *   POST /v1/completions, /v1/chat/completions   streamed (server-sent events) or not
 *   GET  /v1/models, /health, /metrics (vLLM's Prometheus names, live), /version
 *
 * Each HTTP request becomes a request of the cluster the instant it arrives (simulated
 * clock = wall clock since start x speed); each streamed token leaves when the simulation
 * makes it. Prompt tokens: the token ids when sent, else ceil(bytes / 4) of the text (chat:
 * of each message's content, plus 4 a message for the template); reply tokens: max_tokens
 * with ignore_eos, else the smaller of max_tokens and the scenario's reply length (at
 * least min_tokens). The text is deterministic filler. A prompt's tokens (ids, or 4 bytes
 * of text each) give it an identity block by block, so prompts that begin alike share
 * the prefix cache; a client that disconnects aborts its request (it fails as aborted,
 * its KV freed), as vLLM aborts on disconnect.
 *
 * Ownership: sv_serve() borrows everything in its options; it returns when SIGINT or
 * SIGTERM stops the server, after the run's result is written (json).
 */
#ifndef SERVESIM_SERVE_H
#define SERVESIM_SERVE_H

#include <stdio.h>

#include "servesim/base/error.h"
#include "servesim/cluster/scenario.h"

typedef struct sv_serve_opts {
    sv_scenario_t *sc; /* its horizon is ignored: the server runs until stopped */
    const char *host;  /* address to listen on (127.0.0.1) */
    int port;          /* 0: any free port */
    double speed;      /* simulated seconds per wall-clock second (1) */
    int background;    /* the scenario's own workload runs alongside */
    unsigned max_conns, per_client; /* connections answered, in all and per address */
    unsigned deadline_s, idle_s;    /* to receive a request whole; idle while answering */
    size_t max_body;                /* bytes of a request body */
    const char *json;               /* the run's result JSON at the end (with per-request lists), or NULL */
    FILE *log;                      /* a line per request, or NULL */
} sv_serve_opts_t;

/* The defaults of the options above. */
void sv_serve_defaults(sv_serve_opts_t *o);

/* Serve until SIGINT or SIGTERM. Prints "servesim serve: http://HOST:PORT/v1 ..." and then
 * "port PORT" on stdout once listening. 0, or an error (cannot listen, the simulation or
 * the result file failed). */
int sv_serve(const sv_serve_opts_t *o, sv_error_t *err);

#endif
