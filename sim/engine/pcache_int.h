/*
 * Internal: the prefix cache of one replica, as vLLM V1's block pool keeps it. Each entry
 * is one full KV block known by the hash of its tokens chained over its predecessors'; it
 * has a reference count (requests using it) and, when nobody references it, a place in
 * an LRU list of blocks that may be evicted to make room. Entries live in a stable slot
 * array; an open-addressing table (linear probing, backward-shift deletion) maps a hash
 * to its slot. The blocks that lie wholly inside a prompt's first segment (a shared system
 * prompt: a chain, known by the hash of its first block) are kept a run at a time instead:
 * for each chain, runs of cached positions with one reference count and, idle, one place
 * in the LRU list. What the cache answers is the same block for block as one entry per
 * block would (tests/pcache_ref.c is that cache, and tests/test_prefix.c runs both).
 *
 * A slot value (what a request keeps for each of its cached blocks) is a slot index (>= 0),
 * -1 for none, or, for a chain's position, a mark <= SV__PCACHE_CHAIN naming the chain:
 * the position is the value's index in the caller's array, which always runs from a
 * chain's position 0.
 *
 * Ownership: sv__pcache_new() returns a cache freed with sv__pcache_free() (NULL-safe).
 */
#ifndef SERVESIM_PCACHE_INT_H
#define SERVESIM_PCACHE_INT_H

#include <stdint.h>

typedef struct sv__pcache sv__pcache_t;

enum { SV__PCACHE_CHAIN = -2 };

/* A cache of at most `blocks` entries (the replica's KV blocks); NULL without memory. */
sv__pcache_t *sv__pcache_new(long blocks);
void sv__pcache_free(sv__pcache_t *c);

/* The slot of the hashed block with hash h, or -1 (a chain's positions are not found so). */
long sv__pcache_find(const sv__pcache_t *c, uint64_t h);
int32_t sv__pcache_refs(const sv__pcache_t *c, long slot);
/* One more request uses the hashed block (it leaves the LRU list if it was there). */
void sv__pcache_ref(sv__pcache_t *c, long slot);
/* ... each of slots[0..n) (slot values, chain marks included), as one call. */
void sv__pcache_ref_slots(sv__pcache_t *c, const long *slots, long n);
/* One fewer: at zero it becomes evictable, appended as the most recently used. */
void sv__pcache_unref(sv__pcache_t *c, long slot);
/* A new block with hash h, referenced once; its slot, or -1 when full. The hash may be
 * present already: both entries stay, and sv__pcache_find returns the first inserted. */
long sv__pcache_insert(sv__pcache_t *c, uint64_t h);
/* In a run, as one call: unref the slots[0..n) that are not -1, last first (as a request
 * frees its blocks); insert h[from..to) into slots[from..to) (-1 where full, then -1
 * returned, else 0); find the longest run of h[0..max) present, their slots in slots (NULL:
 * not wanted) and, in *touched, how many of them nobody references. h[0..nchain) are the
 * positions of the chain whose first block's hash is h[0] (0: none). */
void sv__pcache_unref_slots(sv__pcache_t *c, const int32_t *slots, long n);
int sv__pcache_insert_run(sv__pcache_t *c, const uint64_t *h, long nchain, long from, long to,
                          int32_t *slots);
long sv__pcache_find_run(const sv__pcache_t *c, const uint64_t *h, long nchain, long max,
                         long *slots, long *touched);
/* n idle blocks whose content nobody will look up, appended to the LRU list as the most
 * recently used: they wait there like freed cached blocks and are evicted in their turn,
 * but have no hash in the table. Being interchangeable they are kept as runs, one slot
 * for a run. 0, or -1 when no slot is left (cannot happen: a slot per block at most). */
int sv__pcache_park(sv__pcache_t *c, long n);
/* Drop the least recently used unreferenced block; 1 if one was dropped, 0 if none. */
int sv__pcache_evict(sv__pcache_t *c);

/* Drop up to n of them, least recently used first; how many were dropped. */
long sv__pcache_evict_upto(sv__pcache_t *c, long n);

/* The counts lead the cache's state, so that these read inline (every allocation asks). */
typedef struct sv__pcache_counts {
    long evictable; /* blocks nobody references */
    long in_use;    /* entries somebody references */
} sv__pcache_counts_t;

static inline long sv__pcache_evictable(const sv__pcache_t *c)
{
    return ((const sv__pcache_counts_t *)(const void *)c)->evictable;
}

static inline long sv__pcache_in_use(const sv__pcache_t *c)
{
    return ((const sv__pcache_counts_t *)(const void *)c)->in_use;
}

#endif
