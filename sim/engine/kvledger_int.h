/*
 * Internal: the KV block ledger of one replica. It owns every KV block the replica has and
 * is the only code that moves one: a block is free, held by a request as its own (which
 * includes blocks set aside for a transfer on its way and blocks pinned for a hand-off),
 * or in the prefix cache (referenced by requests that share it, or idle and evictable).
 * Allocating takes free blocks first, then evicts idle cached ones (least recently used
 * first); releasing gives a request's own blocks back; caching turns a request's full
 * block into a cache entry others may share (a second copy of content cached already
 * stays a second entry, as in vLLM). One invariant ties the counts together and is checked in one
 * place (sv__kv_check):
 *
 *     held by requests (recounted) + pinned + reserved + cached + free = total
 *
 * The blocks are grouped in pools, each with its own block size, count and (optionally)
 * prefix cache, so that a replica can later keep apart the kinds of state a model has
 * (MLA's latent cache, sliding-window layers, linear-attention state, a draft model's
 * KV). Every operation names its pool; a replica has one, SV__KV_FULL, shared by every KV
 * cache group of its model as vLLM V1's one BlockPool is (vllm/v1/core/block_pool.py; the
 * groups' pages are unified, vllm/v1/core/kv_cache_utils.py): a model with windowed,
 * chunked or linear-attention layers takes its groups' blocks from it (sv_kv_blocks in
 * servesim/cost/perf.h). The rules for what a request holds live with the request's state
 * in sim/engine/replica.c (its own_blocks()); the ledger works in blocks.
 *
 * Ownership: sv__kv_init() sets up caller-owned storage; sv__kv_fini() frees the pools'
 * prefix caches (NULL-safe on a zeroed ledger).
 */
#ifndef SERVESIM_KVLEDGER_INT_H
#define SERVESIM_KVLEDGER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/pcache_int.h"

/* The pools a replica can have; only SV__KV_FULL is used so far. */
enum { SV__KV_FULL = 0, SV__KV_MAX_POOLS = 4 };

typedef struct sv__kvpool {
    int block_size;   /* tokens per block */
    int caching;      /* full blocks may be shared through a prefix cache */
    long total, free; /* every block of the pool; the free ones */
    long reserved;    /* held for transfers on their way (decode role) */
    long pinned;      /* held for handed-off requests until their KV leaves (prefill role) */
    sv__pcache_t *pc; /* the prefix cache, from the first block cached on; NULL before */
} sv__kvpool_t;

typedef struct sv__kvledger {
    sv__kvpool_t pool[SV__KV_MAX_POOLS];
    int npools;
} sv__kvledger_t;

void sv__kv_init(sv__kvledger_t *l);
void sv__kv_fini(sv__kvledger_t *l);
/* A new pool of `blocks` blocks of block_size tokens, all free; its id, or -1 past
 * SV__KV_MAX_POOLS. */
int sv__kv_add_pool(sv__kvledger_t *l, long blocks, int block_size, int caching);

/* Blocks for `tokens` tokens. */
static inline long sv__kv_blocks(const sv__kvpool_t *p, long tokens)
{
    return (tokens + p->block_size - 1) / p->block_size;
}

/* Blocks that can be given out: free ones, and cached ones nobody references. */
static inline long sv__kv_avail(const sv__kvpool_t *p)
{
    return p->free + (p->pc ? sv__pcache_evictable(p->pc) : 0);
}

/* Blocks in use (held by requests or referenced in the cache): total - available. */
static inline long sv__kv_used(const sv__kvpool_t *p)
{
    return p->total - sv__kv_avail(p);
}

/* Allocate n blocks (the caller made sure they are available): free ones first, then the
 * least recently used idle cached ones, which leave the cache. */
static inline void sv__kv_take(sv__kvpool_t *p, long n)
{
    if (p->free < n && p->pc) p->free += sv__pcache_evict_upto(p->pc, n - p->free);
    p->free -= n;
}

/* A request's own n blocks go back to the free pool. */
static inline void sv__kv_give(sv__kvpool_t *p, long n)
{
    p->free += n;
}

/* Reservations for an incoming transfer: n blocks allocated and set aside; handed back
 * (the transfer was cancelled); or claimed by the request that landed (its own now). */
void sv__kv_reserve(sv__kvpool_t *p, long n);
void sv__kv_unreserve(sv__kvpool_t *p, long n);
void sv__kv_claim(sv__kvpool_t *p, long n);
/* A handed-off request's n own blocks are pinned until its KV leaves; then freed. */
void sv__kv_pin(sv__kvpool_t *p, long n);
void sv__kv_unpin(sv__kvpool_t *p, long n);

/* ---- the prefix cache over a pool (blocks known by chained hashes h[0..]) -------------- */

/* h[0..nchain) are the blocks inside a prompt's first segment, a chain the cache keeps a
 * run at a time (sim/engine/pcache_int.h); 0 where the prompt has none. */

/* A request's own full blocks h[from..to) join the cache: each becomes a cache entry the
 * request references, its slot in slots[from..to), even where the cache holds the same
 * content already (vLLM's BlockPool.cache_full_blocks keeps both blocks under one hash;
 * a lookup finds the first cached). 0, or SV_ENOMEM when the cache cannot be made. */
int sv__kv_cache(sv__kvpool_t *p, const uint64_t *h, long nchain, long from, long to,
                 int32_t *slots);
/* A request's own n full blocks, whose content nobody will look up, go idle into the
 * cache's LRU list instead of the free pool (as vLLM's free queue keeps every freed full
 * block, evicted oldest first). 0, or SV_ENOMEM when the cache cannot be made. */
int sv__kv_park(sv__kvpool_t *p, long n);
/* The request no longer uses its first n cached blocks, held in slots[0..n) (released in
 * reverse, as vLLM frees a request's blocks: the end of a chain is evicted before its
 * start). */
void sv__kv_uncache(sv__kvpool_t *p, const int32_t *slots, long n);
/* The longest run of h[0..max) in the cache: how many, their slots in slots[] (room for
 * max) and, in *touched, how many of them nobody references (referencing them uses up
 * available blocks). */
long sv__kv_hits(const sv__kvpool_t *p, const uint64_t *h, long nchain, long max, long *slots,
                 long *touched);
/* The same count alone. */
long sv__kv_prefix(const sv__kvpool_t *p, const uint64_t *h, long nchain, long max);
/* The request shares the n cached blocks slots[0..n) (found by sv__kv_hits). */
void sv__kv_ref(sv__kvpool_t *p, const long *slots, long n);

/* The invariant: `held` (blocks requests hold as their own, recounted by the caller) +
 * pinned + reserved + cached + free = total, and no count out of range. 0, or -1 with
 * what differs in msg. */
int sv__kv_check(const sv__kvpool_t *p, long held, char *msg, size_t size);

#endif
