/*
 * Progress of a long run (see include/servesim/studies/runprogress.h): a step hook that
 * looks at the wall clock every few thousand steps.
 */
#include "servesim/studies/runprogress.h"

#include <string.h>
#include <time.h>

#define CHECK_EVERY 4096 /* steps between looks at the wall clock */

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void on_step(void *ctx, const sv_step_event_t *ev)
{
    sv_run_progress_t *rp = ctx;
    if (rp->next && rp->next->step) rp->next->step(rp->next->ctx, ev);
    if (++rp->steps % CHECK_EVERY) return;
    double now = wall_s(), el = now - rp->t0;
    if (el < SV_RUN_PROGRESS_AFTER_S || now - rp->last < 0.5) return;
    rp->last = now;
    rp->shown = 1;
    double t = ev->start;
    if (rp->expect_s > 0 && t > 0) {
        double frac = t / rp->expect_s, left = frac < 1 ? el * (1 - frac) / frac : 0;
        sv_progress_update(&rp->p,
                           "servesim run: %.0f of %.0f simulated s (%.0f%%), about %.0f s left", t,
                           rp->expect_s, 100.0 * (frac < 1 ? frac : 1), left);
    } else {
        sv_progress_update(&rp->p, "servesim run: %.0f simulated s, %.0f s wall", t, el);
    }
}

static void on_xfer(void *ctx, int32_t id, int from, int to, double bytes)
{
    sv_run_progress_t *rp = ctx;
    if (rp->next && rp->next->xfer) rp->next->xfer(rp->next->ctx, id, from, to, bytes);
}

void sv_run_progress_start(sv_run_progress_t *rp, const sv_scenario_t *sc,
                           const sv_sim_hooks_t *next, FILE *f)
{
    memset(rp, 0, sizeof *rp);
    sv_progress_start(&rp->p, f);
    rp->next = next;
    rp->hooks.ctx = rp;
    rp->hooks.step = on_step;
    rp->hooks.xfer = next && next->xfer ? on_xfer : NULL;
    rp->t0 = rp->last = wall_s();
    const sv_workload_cfg_t *w = &sc->workload;
    if (sc->horizon > 0)
        rp->expect_s = sc->horizon;
    else if (w->duration > 0)
        rp->expect_s = w->duration;
    else if (w->num_requests > 0 && w->rate > 0 && !w->has_trace)
        rp->expect_s = (double)w->num_requests / w->rate;
}

void sv_run_progress_end(sv_run_progress_t *rp)
{
    if (rp->shown) sv_progress_end(&rp->p);
}
