/*
 * Internal: growing arrays by doubling, with a hard bound so a runaway input fails
 * with an error instead of exhausting memory.
 */
#ifndef SERVESIM_VEC_INT_H
#define SERVESIM_VEC_INT_H

#include <stdlib.h>

#include "servesim/base/error.h"

/* Make *arr hold at least need elements of elem bytes. 0, SV_ENOMEM or SV_ELIMIT. */
static inline int sv__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    if (need > ((size_t)1 << 34) / elem) return SV_ELIMIT;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*arr, nc * elem);
    if (!p) return SV_ENOMEM;
    *arr = p;
    *cap = nc;
    return 0;
}

#define SV_GROW(arr, cap, need) sv__grow((void **)&(arr), &(cap), (need), sizeof *(arr))

#endif
