/*
 * Tests only: the per-block prefix cache (see tests/pcache_ref.h), full KV blocks by
 * chained hash, reference counts, and the LRU list of unreferenced blocks that eviction
 * takes from, one entry per block: the reference for the engine's run-length cache.
 */
#include "pcache_ref.h"

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

struct sv__pcref {
    sv__pcref_counts_t n; /* first, read inline by the header's accessors */
    slot_t *s;
    long nslots, nfree; /* slots, and the free ones (a stack in `freelist`) */
    int32_t *freelist;
    int32_t *table; /* hash table of slot indices, -1 empty; size a power of two; NULL
                       until the first hashed block (table_new()) */
    long mask;
    int32_t head, tail; /* LRU: head is evicted first */
};

/* A hash's place in the table: its low bits (the chains' hashes are splitmix64 outputs,
 * uniform in every bit). Which place does not change what the cache answers: entries of
 * one hash keep their order of insertion along the probe run, as deletions shift back. */
static long home(const sv__pcref_t *c, uint64_t h)
{
    return (long)(h & (uint64_t)c->mask);
}

sv__pcref_t *sv__pcref_new(long blocks)
{
    sv__pcref_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->nslots = blocks;
    c->s = calloc((size_t)blocks + 1, sizeof *c->s);
    c->freelist = malloc(((size_t)blocks + 1) * sizeof *c->freelist);
    if (!c->s || !c->freelist) {
        sv__pcref_free(c);
        return NULL;
    }
    for (long i = 0; i < blocks; i++)
        c->freelist[i] = (int32_t)(blocks - 1 - i);
    c->nfree = blocks;
    c->head = c->tail = -1;
    return c;
}

void sv__pcref_free(sv__pcref_t *c)
{
    if (!c) return;
    free(c->s);
    free(c->freelist);
    free(c->table);
    free(c);
}

/* The hash table, from the first hashed block on (blocks that are only parked need none):
 * 8 entries per block at least, so that probe runs stay short; 0, or -1 without memory. */
static int table_new(sv__pcref_t *c)
{
    long size = 16;
    while (size < 8 * c->nslots)
        size *= 2;
    if (!(c->table = malloc((size_t)size * sizeof *c->table))) return -1;
    memset(c->table, 0xff, (size_t)size * sizeof *c->table); /* every entry -1 */
    c->mask = size - 1;
    return 0;
}

static long find(const sv__pcref_t *c, uint64_t h)
{
    for (long i = home(c, h);; i = (i + 1) & c->mask) {
        int32_t k = c->table[i];
        if (k < 0) return -1;
        if (c->s[k].hash == h) return k;
    }
}

long sv__pcref_find(const sv__pcref_t *c, uint64_t h)
{
    return c->table ? find(c, h) : -1;
}

int32_t sv__pcref_refs(const sv__pcref_t *c, long slot)
{
    return c->s[slot].refs;
}

static void lru_remove(sv__pcref_t *c, long k)
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

void sv__pcref_ref(sv__pcref_t *c, long slot)
{
    slot_t *s = &c->s[slot];
    if (s->refs++ == 0) {
        lru_remove(c, slot);
        c->n.evictable--;
        c->n.in_use++;
    }
}

void sv__pcref_ref_slots(sv__pcref_t *c, const long *slots, long n)
{
    slot_t *S = c->s;
    long taken = 0;
    for (long j = 0; j < n; j++) { /* sv__pcref_ref() for each, its counts summed */
        slot_t *s = &S[slots[j]];
        if (s->refs++ > 0) continue;
        if (s->prev >= 0)
            S[s->prev].next = s->next;
        else
            c->head = s->next;
        if (s->next >= 0)
            S[s->next].prev = s->prev;
        else
            c->tail = s->prev;
        s->prev = s->next = -1;
        taken++;
    }
    c->n.evictable -= taken;
    c->n.in_use += taken;
}

void sv__pcref_unref(sv__pcref_t *c, long slot)
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

void sv__pcref_unref_slots(sv__pcref_t *c, const int32_t *slots, long n)
{
    slot_t *S = c->s;
    int32_t tail = c->tail;
    long idle = 0;
    for (long j = n - 1; j >= 0; j--) {
        int32_t k = slots[j];
        if (k < 0 || --S[k].refs > 0) continue;
        S[k].prev = tail;
        S[k].next = -1;
        if (tail >= 0)
            S[tail].next = k;
        else
            c->head = k;
        tail = k;
        idle++;
    }
    c->tail = tail;
    c->n.in_use -= idle;
    c->n.evictable += idle;
}

/* Insert into a cache that has its table. */
static long insert(sv__pcref_t *c, uint64_t h)
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

long sv__pcref_insert(sv__pcref_t *c, uint64_t h)
{
    return !c->table && table_new(c) ? -1 : insert(c, h);
}

int sv__pcref_insert_run(sv__pcref_t *c, const uint64_t *h, long from, long to, int32_t *slots)
{
    if (from >= to) return 0;
    if (!c->table && table_new(c)) {
        for (long j = from; j < to; j++)
            slots[j] = -1;
        return -1;
    }
    /* insert() for each, its state kept in locals */
    slot_t *S = c->s;
    int32_t *T = c->table;
    long mask = c->mask, nfree = c->nfree, j = from;
    for (; j < to && nfree > 0; j++) {
        int32_t k = c->freelist[--nfree];
        long i = (long)(h[j] & (uint64_t)mask);
        S[k] = (slot_t){.hash = h[j],
                        .refs = 1,
                        .prev = -1,
                        .next = -1,
                        .used = SLOT_HASHED,
                        .home = (int32_t)i};
        while (T[i] >= 0)
            i = (i + 1) & mask;
        T[i] = k;
        slots[j] = k;
    }
    c->n.in_use += j - from;
    c->nfree = nfree;
    if (j == to) return 0;
    for (; j < to; j++) /* full */
        slots[j] = -1;
    return -1;
}

long sv__pcref_find_run(const sv__pcref_t *c, const uint64_t *h, long max, long *slots,
                        long *touched)
{
    long hit = 0, t = 0;
    if (c->table) {
        const slot_t *S = c->s;
        const int32_t *T = c->table;
        long mask = c->mask;
        for (; hit < max; hit++) { /* find() for each */
            long i = (long)(h[hit] & (uint64_t)mask);
            int32_t k;
            while ((k = T[i]) >= 0 && S[k].hash != h[hit])
                i = (i + 1) & mask;
            if (k < 0) break;
            slots[hit] = k;
            t += S[k].refs == 0;
        }
    }
    *touched = t;
    return hit;
}

/* Remove slot k's hash from the table, shifting later entries of its run back. */
static void table_delete(sv__pcref_t *c, long k)
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

int sv__pcref_park(sv__pcref_t *c, long n)
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

int sv__pcref_evict(sv__pcref_t *c)
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

/* In bulk: the dropped entries leave the head of the LRU list in one cut, their hashes the
 * table as table_delete() takes them out, inline. */
long sv__pcref_evict_upto(sv__pcref_t *c, long n)
{
    long got = 0, mask = c->mask;
    slot_t *S = c->s;
    int32_t *T = c->table, k = c->head;
    while (got < n && k >= 0) {
        slot_t *s = &S[k];
        if (s->used == SLOT_PARKED && s->count > 1) {
            long take = n - got < s->count - 1 ? n - got : s->count - 1;
            s->count -= (int32_t)take;
            got += take;
            continue;
        }
        int32_t next = s->next;
        if (s->used == SLOT_HASHED) {
            long i = s->home;
            while (T[i] != k)
                i = (i + 1) & mask;
            for (long j = (i + 1) & mask;; j = (j + 1) & mask) {
                int32_t m = T[j];
                if (m < 0) break;
                long h = S[m].home;
                if (i <= j ? (h > i && h <= j) : (h > i || h <= j)) continue;
                T[i] = m;
                i = j;
            }
            T[i] = -1;
        }
        s->used = SLOT_EMPTY;
        c->freelist[c->nfree++] = k;
        got++;
        k = next;
    }
    c->head = k;
    if (k >= 0)
        S[k].prev = -1;
    else
        c->tail = -1;
    c->n.evictable -= got;
    return got;
}
