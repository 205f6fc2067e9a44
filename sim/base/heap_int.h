/*
 * Internal: one d-ary min-heap, written once and instantiated per element type, for every
 * priority queue of the simulator (the event queue, a replica's finish heap, the priority
 * policy's waiting queue). An instance is a growable array (sv__grow, so a runaway fails
 * with SV_ELIMIT instead of exhausting memory) kept in heap order by a strict `less`; a
 * `moved` hook tells the owner where an element landed, for heaps whose elements must be
 * removed from the middle (the finish heap). Among elements equal under `less` the order
 * is the one the sift rules below give, so an owner whose order is not total must keep its
 * arity (2) to keep its outputs.
 *
 *   SV_HEAP_DEFINE(name, htype, type, arity, less, moved)
 *     htype              the heap's struct: { type *v; size_t n, cap; } (SV_HEAP_OF(type))
 *     less(a, b)         a strictly before b, for const type *a, *b
 *     moved(ctx, e, i)   element *e now sits at index i (SV_HEAP_UNTRACKED: no hook)
 *   defines the static functions
 *     name_push(h, ctx, x)   add x: 0, SV_ENOMEM or SV_ELIMIT
 *     name_pop(h, ctx)       remove the least element (h->v[0])
 *     name_remove(h, ctx, i) remove the element at index i
 *     name_up/name_down(h, ctx, i)  restore the order around index i
 *
 * Ownership: the instance owns v; free(h->v) releases it.
 */
#ifndef SERVESIM_HEAP_INT_H
#define SERVESIM_HEAP_INT_H

#include <stddef.h>

#include "base/vec_int.h"

#define SV_HEAP_UNTRACKED(ctx, e, i) ((void)(ctx), (void)(e), (void)(i))

/* The heap's functions: a user need not call them all (clang warns of unused static
 * inline functions defined in a .c file). */
#define SV__HEAP_FUNC static inline __attribute__((unused))

/* The members of a heap of `type` (zero-initialised: empty). */
#define SV_HEAP_OF(type)                                                                       \
    struct {                                                                                   \
        type *v;                                                                               \
        size_t n, cap;                                                                         \
    }

#define SV_HEAP_DEFINE(name, htype, type, arity, less, moved)                                 \
    SV__HEAP_FUNC void name##_up(htype *h, void *ctx, size_t i)                             \
    {                                                                                          \
        type e = h->v[i];                                                                      \
        while (i > 0) {                                                                        \
            size_t p = (i - 1) / (arity);                                                      \
            if (!less(&e, &h->v[p])) break;                                                    \
            h->v[i] = h->v[p];                                                                 \
            moved(ctx, &h->v[i], i);                                                           \
            i = p;                                                                             \
        }                                                                                      \
        h->v[i] = e;                                                                           \
        moved(ctx, &h->v[i], i);                                                               \
    }                                                                                          \
                                                                                               \
    SV__HEAP_FUNC void name##_down(htype *h, void *ctx, size_t i)                           \
    {                                                                                          \
        type e = h->v[i];                                                                      \
        for (;;) {                                                                             \
            size_t c = (arity) * i + 1, first = c;                                             \
            if (c >= h->n) break;                                                              \
            if (c + (arity) <= h->n) { /* all children: a fixed count the compiler unrolls */  \
                for (size_t k = first + 1; k < first + (arity); k++)                           \
                    if (less(&h->v[k], &h->v[c])) c = k;                                       \
            } else {                                                                           \
                for (size_t k = first + 1; k < h->n; k++)                                      \
                    if (less(&h->v[k], &h->v[c])) c = k;                                       \
            }                                                                                  \
            if (!less(&h->v[c], &e)) break;                                                    \
            h->v[i] = h->v[c];                                                                 \
            moved(ctx, &h->v[i], i);                                                           \
            i = c;                                                                             \
        }                                                                                      \
        h->v[i] = e;                                                                           \
        moved(ctx, &h->v[i], i);                                                               \
    }                                                                                          \
                                                                                               \
    SV__HEAP_FUNC int name##_push(htype *h, void *ctx, type x)                              \
    {                                                                                          \
        int rc = SV_GROW(h->v, h->cap, h->n + 1);                                              \
        if (rc) return rc;                                                                     \
        h->v[h->n++] = x;                                                                      \
        name##_up(h, ctx, h->n - 1);                                                           \
        return 0;                                                                              \
    }                                                                                          \
                                                                                               \
    SV__HEAP_FUNC void name##_pop(htype *h, void *ctx)                                        \
    {                                                                                          \
        if (--h->n == 0) return;                                                               \
        h->v[0] = h->v[h->n];                                                                  \
        name##_down(h, ctx, 0);                                                                \
    }                                                                                          \
                                                                                               \
    SV__HEAP_FUNC void name##_remove(htype *h, void *ctx, size_t i)                         \
    {                                                                                          \
        type last = h->v[--h->n];                                                              \
        if (i == h->n) return;                                                                 \
        h->v[i] = last;                                                                        \
        if (i > 0 && less(&last, &h->v[(i - 1) / (arity)]))                                    \
            name##_up(h, ctx, i);                                                              \
        else                                                                                   \
            name##_down(h, ctx, i);                                                            \
    }

#endif
