/*
 * Internal to the traffic layer: one draw of a length distribution, shared by the
 * workload generator and the session generator.
 */
#ifndef SERVESIM_WORKLOAD_INT_H
#define SERVESIM_WORKLOAD_INT_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "servesim/traffic/workload.h"

/* A whole number drawn from d (rounded, then clamped to [min, max]). */
int32_t sv__draw_len(const sv_lendist_t *d, gsl_rng *r);

/* A length distribution with what every draw of it needs worked out once (a lognormal's
 * mu and sigma: a log1p and a log a draw otherwise); it points at d, which it does not
 * own. */
typedef struct sv__lenp {
    const sv_lendist_t *d;
    double mu, sigma;
} sv__lenp_t;

void sv__lenp_init(sv__lenp_t *p, const sv_lendist_t *d);

/* The draw of sv__draw_len(p->d, r), the same bits. */
int32_t sv__draw_lenp(const sv__lenp_t *p, gsl_rng *r);

#endif
