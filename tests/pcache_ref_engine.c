/*
 * Tests only: the engine's prefix-cache calls (sim/engine/pcache_int.h) answered by the
 * per-block reference cache (tests/pcache_ref.c), ignoring chains: every block is a hashed
 * entry. Linked ahead of the library into servesim_refcache, it stands in for
 * sim/engine/pcache.c, whose object the linker then leaves out of the archive; the
 * pcache_ref test runs that binary and servesim on the same randomised scenarios and
 * requires identical outputs.
 */
#include "../sim/engine/pcache_int.h"
#include "pcache_ref.h"

/* The two caches' states lead with the same counts, which the header's accessors read. */
_Static_assert(sizeof(sv__pcache_counts_t) == sizeof(sv__pcref_counts_t), "counts differ");

#define REF(c) ((sv__pcref_t *)(void *)(c))
#define CREF(c) ((const sv__pcref_t *)(const void *)(c))

sv__pcache_t *sv__pcache_new(long blocks)
{
    return (sv__pcache_t *)(void *)sv__pcref_new(blocks);
}

void sv__pcache_free(sv__pcache_t *c)
{
    sv__pcref_free(REF(c));
}

long sv__pcache_find(const sv__pcache_t *c, uint64_t h)
{
    return sv__pcref_find(CREF(c), h);
}

int32_t sv__pcache_refs(const sv__pcache_t *c, long slot)
{
    return sv__pcref_refs(CREF(c), slot);
}

void sv__pcache_ref(sv__pcache_t *c, long slot)
{
    sv__pcref_ref(REF(c), slot);
}

void sv__pcache_ref_slots(sv__pcache_t *c, const long *slots, long n)
{
    sv__pcref_ref_slots(REF(c), slots, n);
}

void sv__pcache_unref(sv__pcache_t *c, long slot)
{
    sv__pcref_unref(REF(c), slot);
}

long sv__pcache_insert(sv__pcache_t *c, uint64_t h)
{
    return sv__pcref_insert(REF(c), h);
}

void sv__pcache_unref_slots(sv__pcache_t *c, const int32_t *slots, long n)
{
    sv__pcref_unref_slots(REF(c), slots, n);
}

int sv__pcache_insert_run(sv__pcache_t *c, const uint64_t *h, long nchain, long from, long to,
                          int32_t *slots)
{
    (void)nchain;
    return sv__pcref_insert_run(REF(c), h, from, to, slots);
}

long sv__pcache_find_run(const sv__pcache_t *c, const uint64_t *h, long nchain, long max,
                         long *slots, long *touched)
{
    (void)nchain;
    if (slots) return sv__pcref_find_run(CREF(c), h, max, slots, touched);
    long hit = 0, k; /* (the reference wants somewhere to put the slots) */
    *touched = 0;
    for (; hit < max && (k = sv__pcref_find(CREF(c), h[hit])) >= 0; hit++)
        *touched += sv__pcref_refs(CREF(c), k) == 0;
    return hit;
}

int sv__pcache_park(sv__pcache_t *c, long n)
{
    return sv__pcref_park(REF(c), n);
}

int sv__pcache_evict(sv__pcache_t *c)
{
    return sv__pcref_evict(REF(c));
}

long sv__pcache_evict_upto(sv__pcache_t *c, long n)
{
    return sv__pcref_evict_upto(REF(c), n);
}
