/*
 * Shared scales for run reports that are meant to be compared. The HTML run report's
 * charts reach as far as their data; a run's reach is recorded in its JSON as
 * "servesim.axes" (this run's own data, SLO lines included), and `servesim run --report
 * R.html --axes-from OTHER.json ...` draws the charts to the union of this run's reach and
 * the other runs' (docs/reports.md). Give each run the others' JSON files and every report
 * gets the same axes, whatever order they were made in.
 *
 * Ownership: plain values in caller storage.
 */
#ifndef SERVESIM_REPORT_AXES_H
#define SERVESIM_REPORT_AXES_H

#include "servesim/base/error.h"
#include "servesim/cluster/sim.h"

typedef struct sv_run_axes {
    double ttft_ms;  /* TTFT CDF: x reach (the largest TTFT, or the TTFT SLO if larger) */
    double tpot_ms;  /* TPOT CDF: x reach */
    double phase_ms; /* the breakdown's y reach: the largest mean phase */
    double time_s;   /* every chart over time: x reach (the last time-series sample) */
    double requests; /* requests waiting or running: y reach (per pool with pools, else all) */
    double kv_pct;   /* KV cache usage: y reach (the largest pool mean, %) */
} sv_run_axes_t;

#define SV_RUN_AXES_KEYS "ttft_ms, tpot_ms, phase_ms, time_s, requests, kv_pct"

/* This run's own reach. */
void sv_run_axes_of(const sv_result_t *res, sv_run_axes_t *out);
/* Widen *io to the reach recorded in a result JSON's servesim.axes. Errors name the file
 * and what is missing (a result without servesim.axes: written by another tool or an
 * older servesim). */
int sv_run_axes_read(const char *path, sv_run_axes_t *io, sv_error_t *err);
/* Widen *io to reach at least as far as *by on every axis. */
void sv_run_axes_widen(sv_run_axes_t *io, const sv_run_axes_t *by);

#endif
