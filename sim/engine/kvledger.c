/*
 * The KV block ledger of a replica (see sim/engine/kvledger_int.h): its pools of blocks,
 * the reservations and pins of disaggregation, the prefix cache (sim/engine/pcache.c)
 * over a pool's full blocks, and the one check that every block is accounted for.
 */
#include "engine/kvledger_int.h"

#include <stdio.h>
#include <string.h>

#include "servesim/base/error.h"

void sv__kv_init(sv__kvledger_t *l)
{
    memset(l, 0, sizeof *l);
}

void sv__kv_fini(sv__kvledger_t *l)
{
    for (int i = 0; i < l->npools; i++) {
        sv__pcache_free(l->pool[i].pc);
        l->pool[i].pc = NULL;
    }
    l->npools = 0;
}

int sv__kv_add_pool(sv__kvledger_t *l, long blocks, int block_size, int caching)
{
    if (l->npools >= SV__KV_MAX_POOLS) return -1;
    l->pool[l->npools] = (sv__kvpool_t){
        .block_size = block_size, .caching = caching, .total = blocks, .free = blocks};
    return l->npools++;
}

void sv__kv_reserve(sv__kvpool_t *p, long n)
{
    sv__kv_take(p, n);
    p->reserved += n;
}

void sv__kv_unreserve(sv__kvpool_t *p, long n)
{
    p->free += n;
    p->reserved -= n;
}

void sv__kv_claim(sv__kvpool_t *p, long n)
{
    p->reserved -= n;
}

void sv__kv_pin(sv__kvpool_t *p, long n)
{
    p->pinned += n;
}

void sv__kv_unpin(sv__kvpool_t *p, long n)
{
    p->free += n;
    p->pinned -= n;
}

int sv__kv_cache(sv__kvpool_t *p, const uint64_t *h, long nchain, long from, long to,
                 int32_t *slots)
{
    if (!p->pc && !(p->pc = sv__pcache_new(p->total))) return SV_ENOMEM;
    /* Full cannot happen: entries never outnumber blocks. */
    return sv__pcache_insert_run(p->pc, h, nchain, from, to, slots) ? SV_ENOMEM : 0;
}

int sv__kv_park(sv__kvpool_t *p, long n)
{
    if (n <= 0) return 0;
    if (!p->pc && !(p->pc = sv__pcache_new(p->total))) return SV_ENOMEM;
    return sv__pcache_park(p->pc, n) < 0 ? SV_ENOMEM : 0;
}

void sv__kv_uncache(sv__kvpool_t *p, const int32_t *slots, long n)
{
    sv__pcache_unref_slots(p->pc, slots, n);
}

long sv__kv_hits(const sv__kvpool_t *p, const uint64_t *h, long nchain, long max, long *slots,
                 long *touched)
{
    return sv__pcache_find_run(p->pc, h, nchain, max, slots, touched);
}

long sv__kv_prefix(const sv__kvpool_t *p, const uint64_t *h, long nchain, long max)
{
    long touched;
    return sv__pcache_find_run(p->pc, h, nchain, max, NULL, &touched);
}

void sv__kv_ref(sv__kvpool_t *p, const long *slots, long n)
{
    if (n > 0) sv__pcache_ref_slots(p->pc, slots, n);
}

int sv__kv_check(const sv__kvpool_t *p, long held, char *msg, size_t size)
{
    long cached = p->pc ? sv__pcache_in_use(p->pc) : 0, idle = sv__kv_avail(p) - p->free;
    long used = held + p->pinned + p->reserved + cached;
    const char *what = NULL;
    if (p->free < 0 || p->free > p->total)
        what = "free blocks out of range";
    else if (used + p->free + idle != p->total)
        what = "blocks held by requests + free blocks + idle cached blocks != all blocks";
    else if (p->reserved < 0 || p->pinned < 0)
        what = "a negative reservation";
    if (!what) return 0;
    snprintf(msg, size,
             "%s (held %ld = running %ld + pinned %ld + reserved %ld + cached %ld; free %ld; "
             "idle cached %ld; total %ld)",
             what, used, held, p->pinned, p->reserved, cached, p->free, idle, p->total);
    return -1;
}
