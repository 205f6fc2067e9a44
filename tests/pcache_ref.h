/*
 * Tests only: the per-block prefix cache the engine used before its run-length one
 * (sim/engine/pcache.c), kept as the reference that tests/test_prefix.c runs it against,
 * call for call, on randomised workloads. Same calls as sim/engine/pcache_int.h, named
 * sv__pcref_, with no chains: every block has its own entry.
 *
 * The prefix cache of one replica, as vLLM V1's block pool keeps it. Each entry
 * is one full KV block known by the hash of its tokens chained over its predecessors'; it
 * has a reference count (requests using it) and, when nobody references it, a place in
 * an LRU list of blocks that may be evicted to make room. Entries live in a stable slot
 * array; an open-addressing table (linear probing, backward-shift deletion) maps a hash
 * to its slot.
 *
 * Ownership: sv__pcref_new() returns a cache freed with sv__pcref_free() (NULL-safe).
 */
#ifndef SERVESIM_PCACHE_REF_H
#define SERVESIM_PCACHE_REF_H

#include <stdint.h>

typedef struct sv__pcref sv__pcref_t;

/* A cache of at most `blocks` entries (the replica's KV blocks); NULL without memory. */
sv__pcref_t *sv__pcref_new(long blocks);
void sv__pcref_free(sv__pcref_t *c);

/* The slot of the block with hash h, or -1. */
long sv__pcref_find(const sv__pcref_t *c, uint64_t h);
int32_t sv__pcref_refs(const sv__pcref_t *c, long slot);
/* One more request uses the block (it leaves the LRU list if it was there). */
void sv__pcref_ref(sv__pcref_t *c, long slot);
/* ... each of slots[0..n), in order, as one call. */
void sv__pcref_ref_slots(sv__pcref_t *c, const long *slots, long n);
/* One fewer: at zero it becomes evictable, appended as the most recently used. */
void sv__pcref_unref(sv__pcref_t *c, long slot);
/* A new block with hash h, referenced once; its slot, or -1 when full. The hash may be
 * present already: both entries stay, and sv__pcref_find returns the first inserted. */
long sv__pcref_insert(sv__pcref_t *c, uint64_t h);
/* In a run, as one call: unref the slots[0..n) that are not -1, last first (as a request
 * frees its blocks); insert h[from..to) into slots[from..to) (-1 where full, then -1
 * returned, else 0); find the longest run of h[0..max) present, their slots in slots and,
 * in *touched, how many of them nobody references. */
void sv__pcref_unref_slots(sv__pcref_t *c, const int32_t *slots, long n);
int sv__pcref_insert_run(sv__pcref_t *c, const uint64_t *h, long from, long to, int32_t *slots);
long sv__pcref_find_run(const sv__pcref_t *c, const uint64_t *h, long max, long *slots,
                        long *touched);
/* n idle blocks whose content nobody will look up, appended to the LRU list as the most
 * recently used: they wait there like freed cached blocks and are evicted in their turn,
 * but have no hash in the table. Being interchangeable they are kept as runs, one slot
 * for a run. 0, or -1 when no slot is left (cannot happen: a slot per block at most). */
int sv__pcref_park(sv__pcref_t *c, long n);
/* Drop the least recently used unreferenced block; 1 if one was dropped, 0 if none. */
int sv__pcref_evict(sv__pcref_t *c);

/* Drop up to n of them, least recently used first; how many were dropped. */
long sv__pcref_evict_upto(sv__pcref_t *c, long n);

/* The counts lead the cache's state, so that these read inline (every allocation asks). */
typedef struct sv__pcref_counts {
    long evictable; /* blocks nobody references */
    long in_use;    /* entries somebody references */
} sv__pcref_counts_t;

static inline long sv__pcref_evictable(const sv__pcref_t *c)
{
    return ((const sv__pcref_counts_t *)(const void *)c)->evictable;
}

static inline long sv__pcref_in_use(const sv__pcref_t *c)
{
    return ((const sv__pcref_counts_t *)(const void *)c)->in_use;
}

#endif
