/*
 * The session generator (see include/servesim/traffic/session.h): per-session draws of
 * the number of calls, and per-call draws of think times, new messages and outputs, each
 * from its own stream seeded from the scenario seed. The simulator (sim/cluster/sim.c)
 * decides when calls are made and what their prompts hold.
 */
#include "servesim/traffic/session.h"

#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "traffic/workload_int.h"

struct sv_session_gen {
    const sv_session_cfg_t *cfg;
    const sv_workload_cfg_t *wl;
    gsl_rng *turns, *think, *msg, *out;
};

static gsl_rng *stream(uint64_t seed, uint64_t k)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r) gsl_rng_set(r, (unsigned long)sv_stream_seed(seed, k));
    return r;
}

int sv_session_gen_new(const sv_session_cfg_t *cfg, const sv_workload_cfg_t *wl, uint64_t seed,
                       sv_session_gen_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_session_gen_t *g = calloc(1, sizeof *g);
    if (!g) return sv_errorf(err, SV_ENOMEM, "out of memory");
    g->cfg = cfg;
    g->wl = wl;
    g->turns = stream(seed, SV_STREAM_TURNS);
    g->think = stream(seed, SV_STREAM_THINK);
    g->msg = stream(seed, SV_STREAM_MESSAGE);
    g->out = stream(seed, SV_STREAM_SESSION_OUTPUT);
    if (!g->turns || !g->think || !g->msg || !g->out) {
        sv_session_gen_free(g);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    *out = g;
    return 0;
}

void sv_session_gen_free(sv_session_gen_t *g)
{
    if (!g) return;
    gsl_rng_free(g->turns);
    gsl_rng_free(g->think);
    gsl_rng_free(g->msg);
    gsl_rng_free(g->out);
    free(g);
}

int32_t sv_session_turns(sv_session_gen_t *g)
{
    return sv__draw_len(&g->cfg->turns, g->turns);
}

double sv_session_think(sv_session_gen_t *g)
{
    return g->cfg->has_think ? sv__draw_len(&g->cfg->think_ms, g->think) / 1000.0 : 0.0;
}

void sv_session_lengths(sv_session_gen_t *g, int32_t *message, int32_t *output)
{
    *message = sv__draw_len(g->cfg->has_message ? &g->cfg->message : &g->wl->input, g->msg);
    *output = sv__draw_len(&g->wl->output, g->out);
}
