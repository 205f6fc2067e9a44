/*
 * Internal to the traffic layer: one draw of a length distribution, shared by the
 * workload generator and the session generator.
 */
#ifndef SERVESIM_WORKLOAD_INT_H
#define SERVESIM_WORKLOAD_INT_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "servesim/traffic/workload.h"

/* GSL's mt19937 (the same words from the same seed) as a generator type of the workload's
 * own, whose uniforms the workload draws inline (sim/traffic/workload.c). */
extern const gsl_rng_type *const sv__mt19937;
/* gsl_ran_lognormal(r, zeta, sigma) and gsl_ran_exponential(r, mu), the same doubles from
 * the same generator state; inline for an sv__mt19937 generator, GSL's call for another. */
double sv__lognormal(gsl_rng *r, double zeta, double sigma);
double sv__exponential(gsl_rng *r, double mu);

/* A whole number drawn from d (rounded, then clamped to [min, max]). */
int32_t sv__draw_len(const sv_lendist_t *d, gsl_rng *r);

/* A length distribution with what every draw of it needs worked out once (a lognormal's
 * mu and sigma: a log1p and a log a draw otherwise); it points at d, which it does not
 * own. */
typedef struct sv__lenp {
    const sv_lendist_t *d;
    double mu, sigma;
    double min, max;  /* d's clamps as doubles */
    int mt_lognormal; /* d is a lognormal: drawn inline from the workload's generator */
} sv__lenp_t;

void sv__lenp_init(sv__lenp_t *p, const sv_lendist_t *d);

/* The draw of sv__draw_len(p->d, r), the same bits. */
int32_t sv__draw_lenp(const sv__lenp_t *p, gsl_rng *r);

#endif
