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

#endif
