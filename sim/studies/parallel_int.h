/*
 * Internal: run independent work items in worker processes (fork), as sweep and plan do.
 * Each item's result is a plain struct of `size` bytes that the worker writes into its
 * slot and hands back through a pipe; the parent stores it in results[item]. Items are
 * first, first + stride, ... below n. With jobs <= 1 the items run in this process.
 *
 * Errors: a pipe, fork or wait that fails stops the map (the workers already started are
 * waited for) and returns SV_EIO with the system's reason; an item whose worker dies or
 * hands back a short result is given to `died`, which fills its slot (the map goes on).
 *
 * Ownership: results is caller storage (n slots of size bytes); pointers inside a result
 * come back as the worker's values, so the caller points them again (done()) if needed.
 */
#ifndef SERVESIM_PARALLEL_INT_H
#define SERVESIM_PARALLEL_INT_H

#include <stddef.h>

#include "servesim/base/error.h"

/* Largest result a worker may hand back (it is written before the parent reads it, so it
 * must fit a pipe's buffer: 64 KiB on Linux). */
#define SV_PARALLEL_MAX_RESULT 32768

typedef struct sv__pmap {
    long n, first, stride;
    int jobs;
    size_t size;
    void *results;
    void (*work)(long item, void *out, void *ctx);          /* runs in the worker (or inline) */
    void (*died)(long item, void *out, void *ctx);          /* the worker died: fill out */
    void (*done)(long item, void *out, void *ctx);          /* in the parent, per result; or NULL */
    void (*progress)(long finished, long total, void *ctx); /* or NULL */
    void *ctx;
} sv__pmap_t;

int sv__parallel_map(const sv__pmap_t *m, sv_error_t *err);

#endif
