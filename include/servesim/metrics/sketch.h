/*
 * Quantile sketch: the percentiles of a stream of values in memory that does not grow
 * with the stream, with a stated relative-error guarantee, mergeable across shards.
 *
 * It is DDSketch (Masson, Rim and Lee, "DDSketch: a fast and fully-mergeable quantile
 * sketch with relative-error guarantees", VLDB 2019), with its unbounded dense store:
 * with relative accuracy alpha and gamma = (1 + alpha) / (1 - alpha), a positive value x
 * counts in bucket i = ceil(log_gamma x), which holds (gamma^(i-1), gamma^i], and the
 * value of a rank is read as 2 gamma^i / (gamma + 1), within alpha of every value of the
 * bucket. Zero counts apart (exactly), negative values in a mirrored store. A percentile
 * is numpy's linear interpolation between the two ranks it falls between, each read
 * from the sketch, so it is within alpha (relative) of the exact percentile of the same
 * values of one sign: the interpolation of two estimates each within alpha of its rank's
 * value. (Up to the rounding of the logarithm that picks a bucket: 1e-12 or so.)
 * Buckets span the values' range: about ln(max / min) / (2 alpha) of them (for
 * alpha = 0.01, 1e-9 s to 1e7 s takes 1,842 buckets of 8 bytes). Counts add, so two
 * sketches of the same alpha merge into the sketch of both streams, in any order.
 * Mean and population standard deviation are computed from every value as it comes
 * (Welford's update, Chan's merge), not estimated from the buckets.
 *
 * Ownership: sv_sketch_new() returns a sketch freed with sv_sketch_free() (NULL-safe).
 */
#ifndef SERVESIM_SKETCH_H
#define SERVESIM_SKETCH_H

#include <stddef.h>

#include "servesim/metrics/metrics.h"

typedef struct sv_sketch sv_sketch_t;

/* The default relative accuracy of the summary's sketch mode (1%). */
#define SV_SKETCH_ALPHA 0.01

/* alpha in (0, 0.5]; NULL when out of memory or alpha is out of range. */
sv_sketch_t *sv_sketch_new(double alpha);
void sv_sketch_free(sv_sketch_t *s);
/* Count x w times (w >= 0, a whole number). 0, SV_ENOMEM, or SV_EINVAL for a NaN. */
int sv_sketch_add(sv_sketch_t *s, double x, double w);
/* Add everything counted in from to into (same alpha, else SV_EINVAL). */
int sv_sketch_merge(sv_sketch_t *into, const sv_sketch_t *from);
/* A sketch as a flat array of doubles, to send between processes (MPI ranks, shards):
 * writes it into buf when cap is enough and returns the number of doubles it takes. */
size_t sv_sketch_export(const sv_sketch_t *s, double *buf, size_t cap);
/* Merge an exported sketch of n doubles into into: 0, SV_EINVAL (malformed, or another
 * alpha) or SV_ENOMEM. */
int sv_sketch_merge_exported(sv_sketch_t *into, const double *buf, size_t n);
double sv_sketch_alpha(const sv_sketch_t *s);
double sv_sketch_count(const sv_sketch_t *s); /* total weight */
/* The value of 0-based rank r (0 <= r < count) within alpha; 0 when empty. */
double sv_sketch_rank(const sv_sketch_t *s, double r);
/* numpy.percentile (linear) of the counted values, within alpha (relative). */
double sv_sketch_percentile(const sv_sketch_t *s, double p);
/* sv_stat_compute's statistics, times scale: n, mean and std from the running moments,
 * the median and percentiles within alpha. */
void sv_sketch_stat(const sv_sketch_t *s, const double *pcts, int npcts, double scale,
                    sv_stat_t *out);

#endif
