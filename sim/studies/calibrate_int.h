/*
 * Internal: the coordinate search that `calibrate runs` and `calibrate result` share
 * (sim/studies/calibrate.c): whole simulated runs are not smooth enough in their
 * parameters for finite-difference Jacobians, so each key in turn gets a golden-section
 * search over its range, the others held at their best values so far.
 */
#ifndef SERVESIM_CALIBRATE_INT_H
#define SERVESIM_CALIBRATE_INT_H

/* Minimise cost(ctx, x) over x[k] in [lo[k], hi[k]] (nkeys <= SV_FIT_MAX_PARAMS), starting
 * from x and leaving the best point found in x; at most sweeps passes over the keys, fewer
 * once a pass gains under 1e-6 of the cost. cost returns NAN to stop (an error the caller
 * keeps). Returns the passes made, or -1 when cost stopped it. */
int sv__golden_descent(double (*cost)(void *, const double *), void *ctx, int nkeys,
                       const double *lo, const double *hi, double *x, int sweeps);

#endif
