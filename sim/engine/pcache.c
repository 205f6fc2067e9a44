/*
 * The prefix cache of a replica (see sim/engine/pcache_int.h): full KV blocks by chained hash,
 * reference counts, and the LRU list of unreferenced blocks that eviction takes from.
 */
#include "engine/pcache_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot {
    uint64_t hash;
    int32_t refs;
    int32_t prev, next; /* LRU list while refs == 0; -1 terminated */
    int32_t used;       /* the slot holds a block: SLOT_HASHED (in the table) or SLOT_PARKED */
    int32_t count;      /* SLOT_PARKED: the run of idle blocks it stands for */
    int32_t home;       /* SLOT_HASHED: home(hash), kept for deletion */
} slot_t;

enum { SLOT_EMPTY = 0, SLOT_HASHED, SLOT_PARKED };

struct sv__pcache {
    sv__pcache_counts_t n; /* first, read inline by the header's accessors */
    slot_t *s;
    long nslots, nfree; /* slots, and the free ones (a stack in `freelist`) */
    int32_t *freelist;
    int32_t *table; /* hash table of slot indices, -1 empty; size a power of two; NULL
                       until the first hashed block (table_new()) */
    long mask;
    int32_t head, tail; /* LRU: head is evicted first */
};

static long home(const sv__pcache_t *c, uint64_t h)
{
    h ^= h >> 31;
    h *= 0x7fb5d329728ea185ULL;
    h ^= h >> 27;
    return (long)(h & (uint64_t)c->mask);
}

sv__pcache_t *sv__pcache_new(long blocks)
{
    sv__pcache_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->nslots = blocks;
    c->s = calloc((size_t)blocks + 1, sizeof *c->s);
    c->freelist = malloc(((size_t)blocks + 1) * sizeof *c->freelist);
    if (!c->s || !c->freelist) {
        sv__pcache_free(c);
        return NULL;
    }
    for (long i = 0; i < blocks; i++)
        c->freelist[i] = (int32_t)(blocks - 1 - i);
    c->nfree = blocks;
    c->head = c->tail = -1;
    return c;
}

void sv__pcache_free(sv__pcache_t *c)
{
    if (!c) return;
    free(c->s);
    free(c->freelist);
    free(c->table);
    free(c);
}

/* The hash table, from the first hashed block on (blocks that are only parked need none):
 * 8 entries per block at least, so that probe runs stay short; 0, or -1 without memory. */
static int table_new(sv__pcache_t *c)
{
    long size = 16;
    while (size < 8 * c->nslots)
        size *= 2;
    if (!(c->table = malloc((size_t)size * sizeof *c->table))) return -1;
    memset(c->table, 0xff, (size_t)size * sizeof *c->table); /* every entry -1 */
    c->mask = size - 1;
    return 0;
}

static long find(const sv__pcache_t *c, uint64_t h)
{
    for (long i = home(c, h);; i = (i + 1) & c->mask) {
        int32_t k = c->table[i];
        if (k < 0) return -1;
        if (c->s[k].hash == h) return k;
    }
}

long sv__pcache_find(const sv__pcache_t *c, uint64_t h)
{
    return c->table ? find(c, h) : -1;
}

int32_t sv__pcache_refs(const sv__pcache_t *c, long slot)
{
    return c->s[slot].refs;
}

static void lru_remove(sv__pcache_t *c, long k)
{
    slot_t *s = &c->s[k];
    if (s->prev >= 0)
        c->s[s->prev].next = s->next;
    else
        c->head = s->next;
    if (s->next >= 0)
        c->s[s->next].prev = s->prev;
    else
        c->tail = s->prev;
    s->prev = s->next = -1;
}

void sv__pcache_ref(sv__pcache_t *c, long slot)
{
    slot_t *s = &c->s[slot];
    if (s->refs++ == 0) {
        lru_remove(c, slot);
        c->n.evictable--;
        c->n.in_use++;
    }
}

void sv__pcache_unref(sv__pcache_t *c, long slot)
{
    slot_t *s = &c->s[slot];
    if (--s->refs > 0) return;
    s->prev = c->tail;
    s->next = -1;
    if (c->tail >= 0)
        c->s[c->tail].next = (int32_t)slot;
    else
        c->head = (int32_t)slot;
    c->tail = (int32_t)slot;
    c->n.in_use--;
    c->n.evictable++;
}

void sv__pcache_unref_slots(sv__pcache_t *c, const int32_t *slots, long n)
{
    for (long j = n - 1; j >= 0; j--)
        if (slots[j] >= 0) sv__pcache_unref(c, slots[j]);
}

/* Insert into a cache that has its table. */
static long insert(sv__pcache_t *c, uint64_t h)
{
    if (c->nfree == 0) return -1;
    int32_t k = c->freelist[--c->nfree];
    long i = home(c, h);
    c->s[k] = (slot_t){
        .hash = h, .refs = 1, .prev = -1, .next = -1, .used = SLOT_HASHED, .home = (int32_t)i};
    while (c->table[i] >= 0)
        i = (i + 1) & c->mask;
    c->table[i] = k;
    c->n.in_use++;
    return k;
}

long sv__pcache_insert(sv__pcache_t *c, uint64_t h)
{
    return !c->table && table_new(c) ? -1 : insert(c, h);
}

int sv__pcache_insert_run(sv__pcache_t *c, const uint64_t *h, long from, long to,
                          int32_t *slots)
{
    int rc = 0;
    if (from < to && !c->table && table_new(c)) {
        for (long j = from; j < to; j++)
            slots[j] = -1;
        return -1;
    }
    for (long j = from; j < to; j++) {
        long slot = insert(c, h[j]);
        if (slot < 0) rc = -1;
        slots[j] = (int32_t)slot;
    }
    return rc;
}

long sv__pcache_find_run(const sv__pcache_t *c, const uint64_t *h, long max, long *slots,
                         long *touched)
{
    long hit = 0, t = 0;
    for (; c->table && hit < max; hit++) {
        long slot = find(c, h[hit]);
        if (slot < 0) break;
        slots[hit] = slot;
        t += c->s[slot].refs == 0;
    }
    *touched = t;
    return hit;
}

/* Remove slot k's hash from the table, shifting later entries of its run back. */
static void table_delete(sv__pcache_t *c, long k)
{
    long i = c->s[k].home;
    while (c->table[i] != k)
        i = (i + 1) & c->mask;
    for (long j = (i + 1) & c->mask;; j = (j + 1) & c->mask) {
        int32_t m = c->table[j];
        if (m < 0) break;
        long h = c->s[m].home;
        /* m may move into the hole at i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (stays) continue;
        c->table[i] = m;
        i = j;
    }
    c->table[i] = -1;
}

int sv__pcache_park(sv__pcache_t *c, long n)
{
    if (n <= 0) return 0;
    c->n.evictable += n;
    /* Blocks nobody can find are interchangeable: a run at the tail grows. */
    if (c->tail >= 0 && c->s[c->tail].used == SLOT_PARKED) {
        c->s[c->tail].count += (int32_t)n;
        return 0;
    }
    if (c->nfree == 0) return -1; /* cannot happen: a run holds at least one block */
    int32_t k = c->freelist[--c->nfree];
    c->s[k] = (slot_t){.prev = c->tail, .next = -1, .used = SLOT_PARKED, .count = (int32_t)n};
    if (c->tail >= 0)
        c->s[c->tail].next = k;
    else
        c->head = k;
    c->tail = k;
    return 0;
}

int sv__pcache_evict(sv__pcache_t *c)
{
    long k = c->head;
    if (k < 0) return 0;
    if (c->s[k].used == SLOT_PARKED && c->s[k].count > 1) {
        c->s[k].count--;
        c->n.evictable--;
        return 1;
    }
    lru_remove(c, k);
    if (c->s[k].used == SLOT_HASHED) table_delete(c, k);
    c->s[k].used = SLOT_EMPTY;
    c->freelist[c->nfree++] = (int32_t)k;
    c->n.evictable--;
    return 1;
}

/* In bulk: the dropped entries leave the head of the LRU list in one cut. */
long sv__pcache_evict_upto(sv__pcache_t *c, long n)
{
    long got = 0;
    int32_t k = c->head;
    while (got < n && k >= 0) {
        slot_t *s = &c->s[k];
        if (s->used == SLOT_PARKED && s->count > 1) {
            long take = n - got < s->count - 1 ? n - got : s->count - 1;
            s->count -= (int32_t)take;
            got += take;
            continue;
        }
        int32_t next = s->next;
        if (s->used == SLOT_HASHED) table_delete(c, k);
        s->used = SLOT_EMPTY;
        c->freelist[c->nfree++] = k;
        got++;
        k = next;
    }
    c->head = k;
    if (k >= 0)
        c->s[k].prev = -1;
    else
        c->tail = -1;
    c->n.evictable -= got;
    return got;
}
