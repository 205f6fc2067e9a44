/*
 * Live runs (see include/servesim/cluster/live.h): the simulator of sim/cluster/sim.c
 * driven from outside (sv_sim_open with requests injected past the client's semaphore),
 * with the tokens of each request read from the replica it is on.
 */
#include "servesim/cluster/live.h"

#include <math.h>
#include <stdlib.h>
struct sv_live {
    sv_sim_t *sim;
    sv_error_t err; /* the simulator's messages */
    int replicas;
    long max_len;
    int block_tokens;
};

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int sv_live_open(const sv_scenario_t *sc, int background, sv_live_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_live_t *l = calloc(1, sizeof *l);
    if (!l) return sv_errorf(err, SV_ENOMEM, "out of memory");
    sv_error_clear(&l->err);
    int flags = SV_SIM_EXTERNAL | SV_SIM_UNHELD | (background ? 0 : SV_SIM_ONLY_EXTERNAL);
    int rc = sv_sim_open(sc, NULL, flags, &l->sim, &l->err);
    if (rc) {
        if (err) *err = l->err;
        free(l);
        return rc;
    }
    const sv_result_t *res = sv_sim_result(l->sim);
    l->replicas = res->replicas;
    for (int p = 0; p < res->npools; p++) {
        if (l->max_len == 0 || res->pools[p].max_model_len < l->max_len)
            l->max_len = res->pools[p].max_model_len;
        l->block_tokens = gcd(l->block_tokens, res->pools[p].mem.block_size);
    }
    if (l->block_tokens < 1) l->block_tokens = 16;
    *out = l;
    return 0;
}

int sv_live_advance(sv_live_t *l, double t)
{
    return sv_sim_advance(l->sim, t);
}

double sv_live_next(sv_live_t *l)
{
    return sv_sim_next(l->sim);
}

double sv_live_now(const sv_live_t *l)
{
    return sv_sim_now(l->sim);
}

int32_t sv_live_submit(sv_live_t *l, int32_t input, int32_t output)
{
    int32_t id;
    return sv_sim_inject(l->sim, input, output, &id) ? -1 : id;
}

int32_t sv_live_submit_prompt(sv_live_t *l, int32_t input, int32_t output,
                              const sv_segment_t *seg, int nseg)
{
    int32_t id;
    return sv_sim_inject_prompt(l->sim, input, output, seg, nseg, &id) ? -1 : id;
}

int sv_live_abort(sv_live_t *l, int32_t id)
{
    return sv_sim_abort(l->sim, id);
}

int sv_live_block_tokens(const sv_live_t *l)
{
    return l->block_tokens;
}

const sv_replica_stats_t *sv_live_replica_stats(sv_live_t *l, int i)
{
    return sv_replica_stats(sv_sim_replica(l->sim, i));
}

const char *sv_live_error(const sv_live_t *l)
{
    return l->err.msg;
}

const sv_req_t *sv_live_req(sv_live_t *l, int32_t id)
{
    return sv_reqpool_req(&sv_sim_result(l->sim)->pool, id);
}

long sv_live_tokens(sv_live_t *l, int32_t id)
{
    const sv_req_t *r = sv_live_req(l, id);
    if (r->state == SV_RQ_DONE) return r->output;
    if (r->replica < 0) return 0;
    return sv_replica_generated(sv_sim_replica(l->sim, r->replica), id);
}

double sv_live_progress(const sv_live_t *l)
{
    double p = (double)sv_sim_ended(l->sim);
    for (int i = 0; i < l->replicas; i++) {
        const sv_replica_stats_t *st = sv_replica_stats(sv_sim_replica(l->sim, i));
        p += (double)st->decode_steps + st->prefill_tokens + st->decode_tokens;
    }
    return p;
}

void sv_live_replica(sv_live_t *l, int i, long *running, long *waiting, double *kv)
{
    const sv_replica_t *r = sv_sim_replica(l->sim, i);
    *running = sv_replica_running(r);
    *waiting = sv_replica_waiting(r);
    *kv = sv_replica_kv_usage(r);
}

void sv_live_gauges(sv_live_t *l, sv_live_gauges_t *g)
{
    *g = (sv_live_gauges_t){0};
    for (int i = 0; i < l->replicas; i++) {
        long run, wait;
        double kv;
        sv_live_replica(l, i, &run, &wait, &kv);
        g->running += run;
        g->waiting += wait;
        g->kv_usage += kv / l->replicas;
        g->preemptions += sv_replica_stats(sv_sim_replica(l->sim, i))->preemptions;
    }
}

int sv_live_replicas(const sv_live_t *l)
{
    return l->replicas;
}

long sv_live_max_model_len(const sv_live_t *l)
{
    return l->max_len;
}

int sv_live_close(sv_live_t *l, sv_result_t **out, sv_error_t *err)
{
    *out = NULL;
    if (!l) return 0;
    int rc = sv_sim_close(l->sim, out, &l->err);
    if (rc && err) *err = l->err;
    free(l);
    return rc;
}
