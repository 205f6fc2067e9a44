/*
 * Workloads: when requests arrive and how long their prompts and outputs are.
 *
 * Arrivals follow the real benchmark client (../shared/spec/metrics.md): gamma gaps
 * with shape = burstiness and scale = 1/(rate x burstiness) (burstiness 1 = Poisson,
 * inf = constant gaps), optionally rescaled so the last of N arrivals lands at exactly
 * N/rate as current vLLM does; rate inf sends everything at t = 0. A closed loop
 * (max_concurrency) is the client's semaphore and lives in the simulator, not here.
 * Lengths come from fixed, uniform, normal, lognormal or empirical distributions, or
 * from a replayed trace (Azure LLM inference format or any CSV with a time column).
 * Arrivals, input lengths and output lengths each draw from their own GSL generator,
 * seeded from the scenario seed.
 *
 * A rate profile makes the rate a function of time (piecewise-constant or piecewise-linear
 * tables, a diurnal sinusoid, multiplicative spikes): arrivals are then a non-homogeneous
 * Poisson process generated exactly by thinning (Lewis and Shedler): candidates at the
 * profile's peak rate, each kept with probability rate(t) / peak. A trace can be cut to a
 * window of its own time, rescaled (speedup, or to a target mean rate) and looped.
 *
 * Ownership: sv_trace_load() and sv_empirical_load() return arrays the caller frees
 * with sv_trace_free() / free(); sv_workload_new() returns a generator freed with
 * sv_workload_free(); it borrows the config and trace, which must outlive it.
 */
#ifndef SERVESIM_WORKLOAD_H
#define SERVESIM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "servesim/base/error.h"
#include "servesim/traffic/request.h"

#define SV_MAX_REQUESTS 100000000L
#define SV_MAX_TRACE_ROWS 50000000L

typedef enum {
    SV_LEN_FIXED = 0,
    SV_LEN_UNIFORM,
    SV_LEN_NORMAL,
    SV_LEN_LOGNORMAL,
    SV_LEN_EMPIRICAL
} sv_len_kind_t;

typedef struct sv_lendist {
    sv_len_kind_t kind;
    double value;     /* fixed */
    double mean, std; /* normal and lognormal: of the distribution itself, in tokens */
    long lo, hi;      /* uniform, inclusive */
    long min, max;    /* clamps applied to every draw */
    long *samples;    /* empirical: values drawn uniformly with replacement (not owned) */
    size_t nsamples;
} sv_lendist_t;

typedef struct sv_trace {
    size_t n;
    double *time; /* seconds from the first row, already divided by the speedup */
    int32_t *input, *output;
} sv_trace_t;

typedef struct sv_trace_cfg {
    char path[1024];
    char time_col[64], input_col[64], output_col[64];
    double speedup; /* > 1 replays faster */
    long limit;     /* 0 = all rows */
    /* The window [window_start, window_end) in seconds from the trace's first row (end 0:
     * to the last row), rescaled to mean_rate req/s when > 0 (instead of speedup), and
     * replayed loop times back to back (each pass one mean gap after the last). */
    double window_start, window_end, mean_rate;
    long loop; /* passes; 0 or 1 = once */
} sv_trace_cfg_t;

#define SV_MAX_PROFILE_POINTS 256
#define SV_MAX_SPIKES 32

typedef enum {
    SV_PROFILE_NONE = 0,
    SV_PROFILE_STEPS,  /* piecewise-constant: rate[i] from t[i] until t[i+1] */
    SV_PROFILE_LINEAR, /* piecewise-linear between (t[i], rate[i]); the last rate after */
    SV_PROFILE_DIURNAL /* mean x (1 + a cos(2 pi (t - peak_at) / period)) */
} sv_profile_kind_t;

typedef struct sv_spike {
    double at, duration, factor; /* the rate is multiplied by factor on [at, at + duration) */
} sv_spike_t;

typedef struct sv_rate_profile {
    sv_profile_kind_t kind;
    double t[SV_MAX_PROFILE_POINTS], rate[SV_MAX_PROFILE_POINTS]; /* tables: t[0] = 0 */
    int n;
    double mean, ratio, period, peak_at; /* diurnal: ratio = peak / trough >= 1 */
    sv_spike_t spikes[SV_MAX_SPIKES];
    int nspikes;
} sv_rate_profile_t;

/* The rate (req/s) at time t, the highest rate at any time, and the mean over [t0, t1). */
double sv_profile_rate(const sv_rate_profile_t *p, double t);
double sv_profile_peak(const sv_rate_profile_t *p);
double sv_profile_mean(const sv_rate_profile_t *p, double t0, double t1);

/* Thinning draws candidates at the peak rate until the expected arrivals reach count
 * (count 0: none) or the clock passes duration (0: none): about peak x that time of them,
 * returned here (INFINITY when never). A profile needing more than
 * SV_PROFILE_MAX_CANDIDATES (a few seconds of drawing) is refused with this message
 * (arguments: the candidates, the bound). */
double sv_profile_candidates(const sv_rate_profile_t *p, long count, double duration);
#define SV_PROFILE_MAX_CANDIDATES 1e8
#define SV_PROFILE_TOO_LONG                                                                        \
    "about %.3g candidate arrivals to thin at the peak rate before the requests are sent (at "   \
    "most %.3g); shorten the time at a low rate, or bound it with workload.duration_s"

/* A request class (workload.classes): its share of the arrivals, its own lengths and its
 * scheduling priority. The arrival process is shared: each arrival is of class k with
 * probability share[k], drawn from its own stream (SV_STREAM_CLASS). */
typedef struct sv_class_cfg {
    double share;
    sv_lendist_t input, output;
    int32_t priority; /* lower is served first under engine.scheduling_policy: priority */
} sv_class_cfg_t;

typedef struct sv_workload_cfg {
    long num_requests;    /* 0 = bounded by duration */
    double duration;      /* s; 0 = bounded by num_requests */
    double rate;          /* req/s; INFINITY = all at t = 0 */
    double burstiness;    /* gamma shape; INFINITY = constant gaps */
    long max_concurrency; /* client semaphore; 0 = none */
    int rescale;          /* rescale cumulative delays to end at N/rate (vLLM >= 0.8) */
    sv_lendist_t input, output;
    int has_trace;
    sv_trace_cfg_t trace;
    double timeout;            /* client timeout in s; 0 = none */
    sv_rate_profile_t profile; /* kind SV_PROFILE_NONE: the constant rate above */
    double trace_rate;         /* > 0: replay the trace's arrivals rescaled to this mean rate (its
                                * burstiness kept), as plan's capacity probes do */
    sv_class_cfg_t classes[SV_MAX_CLASSES]; /* nclasses > 0: lengths come from these */
    int nclasses;
} sv_workload_cfg_t;

/* Read a trace CSV. Errors name the file and row ("trace.csv:17: ..."). */
int sv_trace_load(const sv_trace_cfg_t *cfg, sv_trace_t **out, sv_error_t *err);
void sv_trace_free(sv_trace_t *t);

/* Read one column of whole numbers >= 1 from a CSV with a header (empirical lengths). */
int sv_empirical_load(const char *path, const char *column, long **values, size_t *n,
                      sv_error_t *err);

/* Seed of an independent stream derived from the scenario seed (splitmix64). */
uint64_t sv_stream_seed(uint64_t seed, uint64_t stream);

enum { SV_STREAM_ARRIVALS = 1, SV_STREAM_INPUT = 2, SV_STREAM_OUTPUT = 3, SV_STREAM_ROUTER = 4 };
#define SV_STREAM_CLASS 6 /* (5 is the prompt identities') */

typedef struct sv_workload sv_workload_t;

int sv_workload_new(const sv_workload_cfg_t *cfg, const sv_trace_t *trace, uint64_t seed,
                    sv_workload_t **out, sv_error_t *err);
void sv_workload_free(sv_workload_t *w);

/* The next request in arrival order: 1 and its values, or 0 when there are no more. */
int sv_workload_next(sv_workload_t *w, double *arrival, int32_t *input, int32_t *output);

/* The class of the request sv_workload_next() returned last (0 without classes). */
int sv_workload_last_class(const sv_workload_t *w);

#endif
