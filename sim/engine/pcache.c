/*
 * The prefix cache of a replica (see sim/engine/pcache_int.h): full KV blocks by chained hash,
 * reference counts, and the LRU list of unreferenced blocks that eviction takes from.
 *
 * Three kinds of node sit in the LRU list and share one slot array: a hashed block (one
 * entry of the hash table), a parked run (idle blocks nobody can find), and a chain run:
 * the copies of positions [lo, lo + count) of one chain (the blocks inside a prompt's
 * first segment, known by their position rather than their hash) with one reference
 * count. An idle chain run stands for its blocks in the LRU list highest position first,
 * as a request frees its blocks last first: eviction takes them from its top, a hit from
 * its bottom. Where a chain position is cached twice (two requests computed it at once)
 * the later copy is a hashed block, so the first inserted is still the one found.
 */
#include "engine/pcache_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot {
    union {
        uint64_t hash; /* SLOT_HASHED, SLOT_COPY */
        struct {
            int32_t left, right; /* a chain run: the chain's runs by position, -1 at the ends */
        };
    };
    int32_t refs;
    int32_t prev, next; /* LRU list while refs == 0; -1 terminated */
    int32_t used;       /* the slot holds a node: SLOT_HASHED, SLOT_COPY (a hashed block
                           copying a chain's position), SLOT_PARKED, or SLOT_RUN + chain
                           (a chain run) */
    int32_t count;      /* SLOT_PARKED, a chain run: the blocks it stands for; SLOT_COPY: the
                           chain whose position it copies a second time */
    int32_t home;       /* SLOT_HASHED, SLOT_COPY: home(hash), kept for deletion; a chain
                           run: its lowest position */
} slot_t;               /* (32 bytes: an index is one shift) */

enum { SLOT_EMPTY = 0, SLOT_HASHED, SLOT_COPY, SLOT_PARKED, SLOT_RUN };

/* A chain run's chain. */
static inline int32_t run_chain(const slot_t *s)
{
    return s->used - SLOT_RUN;
}

/* A chain: the cached positions of one first segment, by the hash of its first block. */
typedef struct chain {
    uint64_t key;
    int32_t first; /* its lowest run, -1 when none */
    int32_t ndup;  /* hashed blocks copying one of its positions */
} chain_t;

struct sv__pcache {
    sv__pcache_counts_t n; /* first, read inline by the header's accessors */
    slot_t *s;             /* s[1..nslots]: slot 0 is never used, so that 0 in `table` is
                              empty and a fresh table needs no fill */
    long nslots, nfree;    /* slots, and the free ones (a stack in `freelist`) */
    int32_t *freelist;
    int32_t *table; /* hash table of slot indices, 0 empty; size a power of two; NULL
                       until the first hashed block (table_new()) */
    long mask;
    int32_t head, tail; /* LRU: head is evicted first */
    chain_t *ch;        /* chains, never dropped (one per first segment seen) */
    long nch, capch;
    int32_t *cmap; /* open addressing by key: chain indices, -1 empty; size cmask + 1 */
    long cmask;
};

/* A chain position's slot value in a request's slots (sv__pcache_find_run). */
static inline long chain_mark(long chain)
{
    return SV__PCACHE_CHAIN - chain;
}

static inline long mark_chain(long v)
{
    return SV__PCACHE_CHAIN - v;
}

/* A hash's place in the table: its low bits (the chains' hashes are splitmix64 outputs,
 * uniform in every bit). Which place does not change what the cache answers: entries of
 * one hash keep their order of insertion along the probe run, as deletions shift back. */
static long home(const sv__pcache_t *c, uint64_t h)
{
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
    for (long i = 0; i < blocks; i++) /* slot 1 is given out first */
        c->freelist[i] = (int32_t)(blocks - i);
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
    free(c->ch);
    free(c->cmap);
    free(c);
}

/* The hash table, from the first hashed block on (blocks that are only parked need none):
 * 4 entries per block at least (at most a quarter full), so that probe runs stay short;
 * zeroed, every entry empty (calloc: a large table comes as fresh pages, not written);
 * 0, or -1 without memory. */
static int table_new(sv__pcache_t *c)
{
    long size = 16;
    while (size < 4 * c->nslots)
        size *= 2;
    if (!(c->table = calloc((size_t)size, sizeof *c->table))) return -1;
    c->mask = size - 1;
    return 0;
}

static long find(const sv__pcache_t *c, uint64_t h)
{
    for (long i = home(c, h);; i = (i + 1) & c->mask) {
        int32_t k = c->table[i];
        if (!k) return -1;
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

/* ---- the LRU list ------------------------------------------------------------------------ */

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

static void lru_append(sv__pcache_t *c, int32_t k)
{
    c->s[k].prev = c->tail;
    c->s[k].next = -1;
    if (c->tail >= 0)
        c->s[c->tail].next = k;
    else
        c->head = k;
    c->tail = k;
}

/* Node m goes into the LRU list right after node k. */
static void lru_insert_after(sv__pcache_t *c, int32_t k, int32_t m)
{
    slot_t *s = c->s;
    s[m].prev = k;
    s[m].next = s[k].next;
    if (s[k].next >= 0)
        s[s[k].next].prev = m;
    else
        c->tail = m;
    s[k].next = m;
}

/* ---- the chains -------------------------------------------------------------------------- */

static long cmap_home(const sv__pcache_t *c, uint64_t key)
{
    return (long)((key >> 20) & (uint64_t)c->cmask);
}

/* The chain of first-block hash key, or -1 when the cache has none. */
static long chain_find(const sv__pcache_t *c, uint64_t key)
{
    if (!c->cmap) return -1;
    for (long i = cmap_home(c, key);; i = (i + 1) & c->cmask) {
        int32_t k = c->cmap[i];
        if (k < 0) return -1;
        if (c->ch[k].key == key) return k;
    }
}

/* ... made when missing; -1 without memory. */
static long chain_get(sv__pcache_t *c, uint64_t key)
{
    long k = chain_find(c, key);
    if (k >= 0) return k;
    if (c->nch == c->capch) {
        long cap = c->capch ? 2 * c->capch : 64;
        chain_t *v = realloc(c->ch, (size_t)cap * sizeof *v);
        if (!v) return -1;
        c->ch = v;
        c->capch = cap;
    }
    if (2 * (c->nch + 1) > c->cmask + 1) { /* at most half full: rebuild twice as large */
        long size = c->cmap ? 2 * (c->cmask + 1) : 128;
        int32_t *m = malloc((size_t)size * sizeof *m);
        if (!m) return -1;
        memset(m, 0xff, (size_t)size * sizeof *m);
        free(c->cmap);
        c->cmap = m;
        c->cmask = size - 1;
        for (long j = 0; j < c->nch; j++) {
            long i = cmap_home(c, c->ch[j].key);
            while (m[i] >= 0)
                i = (i + 1) & c->cmask;
            m[i] = (int32_t)j;
        }
    }
    k = c->nch++;
    c->ch[k] = (chain_t){.key = key, .first = -1};
    long i = cmap_home(c, key);
    while (c->cmap[i] >= 0)
        i = (i + 1) & c->cmask;
    c->cmap[i] = (int32_t)k;
    return k;
}

static inline long run_hi(const slot_t *s)
{
    return (long)s->home + s->count;
}

/* The chain's first run that ends past position p, or -1. */
static int32_t run_at(const sv__pcache_t *c, long chain, long p)
{
    int32_t k = c->ch[chain].first;
    while (k >= 0 && run_hi(&c->s[k]) <= p)
        k = c->s[k].right;
    return k;
}

/* A new chain run of positions [lo, lo + count), referenced refs times, placed in the
 * chain's list after run `left` (-1: first); not in the LRU list. Its slot (there is one:
 * nodes never outnumber blocks). */
static int32_t run_new(sv__pcache_t *c, long chain, long left, long lo, long count, int32_t refs)
{
    int32_t k = c->freelist[--c->nfree];
    int32_t right = left >= 0 ? c->s[left].right : c->ch[chain].first;
    c->s[k] = (slot_t){.refs = refs,
                       .prev = -1,
                       .next = -1,
                       .used = SLOT_RUN + (int32_t)chain,
                       .count = (int32_t)count,
                       .home = (int32_t)lo,
                       .left = (int32_t)left,
                       .right = right};
    if (left >= 0)
        c->s[left].right = k;
    else
        c->ch[chain].first = k;
    if (right >= 0) c->s[right].left = k;
    return k;
}

/* Run k leaves its chain's list (and the slot array). */
static void run_drop(sv__pcache_t *c, int32_t k)
{
    slot_t *s = &c->s[k];
    if (s->left >= 0)
        c->s[s->left].right = s->right;
    else
        c->ch[run_chain(s)].first = s->right;
    if (s->right >= 0) c->s[s->right].left = s->left;
    s->used = SLOT_EMPTY;
    c->freelist[c->nfree++] = k;
}

/* Split run k at position p (inside it): k keeps [p, hi), the new run returned takes
 * [lo, p); idle, it follows k in the LRU list (its blocks are freed after k's). */
static int32_t run_split(sv__pcache_t *c, int32_t k, long p)
{
    slot_t *s = &c->s[k];
    long lo = s->home;
    int32_t m = run_new(c, run_chain(s), s->left, lo, p - lo, s->refs);
    s = &c->s[k];
    s->home = (int32_t)p;
    s->count -= (int32_t)(p - lo);
    if (s->refs == 0) lru_insert_after(c, k, m);
    return m;
}

/* Merge run k into its left neighbour when they are one run: adjacent positions, one
 * reference count and, idle, adjacent in the LRU list (k just before it). The run that
 * stays. */
static int32_t run_merge_left(sv__pcache_t *c, int32_t k)
{
    slot_t *s = &c->s[k];
    int32_t l = s->left;
    if (l < 0) return k;
    slot_t *t = &c->s[l];
    if (run_hi(t) != s->home || t->refs != s->refs || (s->refs == 0 && s->next != l)) return k;
    t->count += s->count;
    if (s->refs == 0) lru_remove(c, k);
    run_drop(c, k);
    return l;
}

/* ---- references -------------------------------------------------------------------------- */

/* One more request uses the chain's positions [a, b), every one cached as a chain run. */
static void chain_ref(sv__pcache_t *c, long chain, long a, long b)
{
    int32_t k = run_at(c, chain, a);
    if (c->s[k].home < a) run_split(c, k, a); /* k keeps [a, hi) */
    long taken = 0;
    while (k >= 0 && c->s[k].home < b) {
        int32_t cur = k;
        if (run_hi(&c->s[k]) > b) cur = run_split(c, k, b); /* [lo, b); k keeps [b, hi) */
        slot_t *s = &c->s[cur];
        if (s->refs++ == 0) {
            lru_remove(c, cur);
            taken += s->count;
        }
        k = s->right;
        run_merge_left(c, cur);
    }
    c->n.evictable -= taken;
    c->n.in_use += taken;
}

/* One fewer request uses the chain's positions [a, b), freed highest first: those no
 * longer referenced go to the LRU list's tail. */
static void chain_unref(sv__pcache_t *c, long chain, long a, long b)
{
    int32_t k = run_at(c, chain, b - 1);
    if (run_hi(&c->s[k]) > b) run_split(c, k, b);
    /* run_split keeps [b, hi) in k, the lower part is its left neighbour */
    if (c->s[k].home >= b) k = c->s[k].left;
    long idle = 0;
    while (k >= 0 && run_hi(&c->s[k]) > a) {
        if (c->s[k].home < a) {
            run_split(c, k, a); /* k keeps [a, hi) */
        }
        slot_t *s = &c->s[k];
        int32_t left = s->left;
        if (--s->refs == 0) {
            lru_append(c, k);
            idle += s->count;
        }
        /* merge with the run above when they became one (it went idle just before) */
        int32_t r = s->right;
        if (r >= 0) run_merge_left(c, r);
        k = left;
    }
    c->n.in_use -= idle;
    c->n.evictable += idle;
}

/* The end of the range of chain marks equal to slots[j] that starts at j. Without second
 * copies of the chain's positions anywhere a request's positions of it are all marks, from
 * 0 to where its hashed blocks begin: found by bisection. */
static long range_end(const sv__pcache_t *c, const long *slots, long j, long n)
{
    long v = slots[j];
    if (c->ch[mark_chain(v)].ndup > 0) {
        while (j + 1 < n && slots[j + 1] == v)
            j++;
        return j + 1;
    }
    long lo = j + 1, hi = n; /* slots[lo - 1] == v; the end lies in [lo, hi] */
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (slots[mid] == v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
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

/* The chain positions among slots[j..n) that start at j, as one range, referenced; where
 * the range ends. */
static __attribute__((noinline)) long ref_chain_range(sv__pcache_t *c, const long *slots, long j,
                                                      long n)
{
    long e = range_end(c, slots, j, n);
    chain_ref(c, mark_chain(slots[j]), j, e);
    return e;
}

void sv__pcache_ref_slots(sv__pcache_t *c, const long *slots, long n)
{
    slot_t *S = c->s;
    long taken = 0;
    for (long j = 0; j < n; j++) { /* sv__pcache_ref() for each, its counts summed */
        if (slots[j] < 0) {        /* a chain's positions */
            j = ref_chain_range(c, slots, j, n) - 1;
            continue;
        }
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

void sv__pcache_unref(sv__pcache_t *c, long slot)
{
    slot_t *s = &c->s[slot];
    if (--s->refs > 0) return;
    lru_append(c, (int32_t)slot);
    c->n.in_use--;
    c->n.evictable++;
}

/* The chain positions among slots[0..j] that end at j, as one range, dereferenced; where
 * the range starts. Apart from the loop over hashed blocks, which it leaves tight. */
static __attribute__((noinline)) long unref_chain_range(sv__pcache_t *c, const int32_t *slots,
                                                        long j)
{
    int32_t k = slots[j];
    long b = j + 1;
    if (c->ch[mark_chain(k)].ndup == 0)
        j = 0; /* all of them: no second copy is held anywhere */
    else
        while (j > 0 && slots[j - 1] == k)
            j--;
    chain_unref(c, mark_chain(k), j, b);
    return j;
}

void sv__pcache_unref_slots(sv__pcache_t *c, const int32_t *slots, long n)
{
    slot_t *S = c->s;
    for (long j = n - 1; j >= 0; j--) {
        int32_t tail = c->tail;
        long idle = 0;
        for (; j >= 0; j--) { /* hashed blocks up to a chain's positions */
            int32_t k = slots[j];
            if (k < 0) {
                if (k == -1) continue;
                break;
            }
            if (--S[k].refs > 0) continue;
            S[k].prev = tail; /* lru_append(), the tail kept in a local */
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
        if (j >= 0) j = unref_chain_range(c, slots, j);
    }
}

/* ---- inserting --------------------------------------------------------------------------- */

/* Insert into a cache that has its table: a hashed block (a second copy of position `dup`
 * of a chain, or -1). */
static long insert(sv__pcache_t *c, uint64_t h, int32_t dup)
{
    if (c->nfree == 0) return -1;
    int32_t k = c->freelist[--c->nfree];
    long i = home(c, h);
    c->s[k] = (slot_t){.hash = h,
                       .refs = 1,
                       .prev = -1,
                       .next = -1,
                       .used = dup >= 0 ? SLOT_COPY : SLOT_HASHED,
                       .home = (int32_t)i,
                       .count = dup};
    while (c->table[i])
        i = (i + 1) & c->mask;
    c->table[i] = k;
    c->n.in_use++;
    if (dup >= 0) c->ch[dup].ndup++;
    return k;
}

long sv__pcache_insert(sv__pcache_t *c, uint64_t h)
{
    return !c->table && table_new(c) ? -1 : insert(c, h, -1);
}

/* The chain's positions [from, to) join the cache, referenced once: where the position
 * is cached already (a chain run, or a hashed copy) as a hashed block, else in a chain
 * run. 0, or -1 when no slot is left (cannot happen: nodes never outnumber blocks), the
 * positions not inserted then without a slot (-1). */
static int chain_insert(sv__pcache_t *c, long chain, const uint64_t *h, long from, long to,
                        int32_t *slots)
{
    slot_t *S = c->s;
    int32_t left = -1, k = c->ch[chain].first; /* the runs before and after from */
    while (k >= 0 && run_hi(&S[k]) <= from) {
        left = k;
        k = S[k].right;
    }
    long p = from;
    while (p < to) {
        if (k >= 0 && S[k].home <= p) { /* cached in a chain run: a second copy each */
            long e = run_hi(&S[k]) < to ? run_hi(&S[k]) : to;
            for (; p < e; p++) {
                long s = insert(c, h[p], (int32_t)chain);
                if (s < 0) goto full;
                slots[p] = (int32_t)s;
            }
            left = k;
            k = S[k].right;
            continue;
        }
        long e = k >= 0 && S[k].home < to ? S[k].home : to; /* a gap up to the next run */
        while (p < e) {
            if (c->ch[chain].ndup > 0 && find(c, h[p]) >= 0) { /* a hashed copy: another */
                long s = insert(c, h[p], (int32_t)chain);
                if (s < 0) goto full;
                slots[p++] = (int32_t)s;
                continue;
            }
            long q = p + 1; /* positions cached nowhere: one run */
            if (c->ch[chain].ndup == 0)
                q = e;
            else
                while (q < e && find(c, h[q]) < 0)
                    q++;
            if (c->nfree == 0) goto full;
            int32_t m = run_new(c, chain, left, p, q - p, 1);
            c->n.in_use += q - p;
            for (; p < q; p++)
                slots[p] = (int32_t)chain_mark(chain);
            left = run_merge_left(c, m);
        }
    }
    return 0;
full:
    for (; p < to; p++)
        slots[p] = -1;
    return -1;
}

int sv__pcache_insert_run(sv__pcache_t *c, const uint64_t *h, long nchain, long from, long to,
                          int32_t *slots)
{
    if (from >= to) return 0;
    if (!c->table && table_new(c)) {
        for (long j = from; j < to; j++)
            slots[j] = -1;
        return -1;
    }
    long j = from;
    if (from < nchain) { /* the chain's positions */
        long e = to < nchain ? to : nchain, ch = chain_get(c, h[0]);
        int bad = ch < 0 ? -1 : chain_insert(c, ch, h, from, e, slots);
        for (j = ch < 0 ? from : e; bad && j < to; j++) /* what is left gets no slot */
            slots[j] = -1;
        if (bad) return -1;
        j = e;
    }
    /* insert() for each, its state kept in locals */
    slot_t *S = c->s;
    int32_t *T = c->table;
    long mask = c->mask, nfree = c->nfree, start = j;
    for (; j < to && nfree > 0; j++) {
        int32_t k = c->freelist[--nfree];
        long i = (long)(h[j] & (uint64_t)mask);
        slot_t *s = &S[k]; /* (the fields a hashed block reads) */
        s->hash = h[j];
        s->refs = 1;
        s->prev = s->next = -1;
        s->used = SLOT_HASHED;
        s->home = (int32_t)i;
        while (T[i])
            i = (i + 1) & mask;
        T[i] = k;
        slots[j] = k;
    }
    c->n.in_use += j - start;
    c->nfree = nfree;
    if (j == to) return 0;
    for (; j < to; j++) /* full */
        slots[j] = -1;
    return -1;
}

/* ---- looking up -------------------------------------------------------------------------- */

/* The longest run of h[hit..max) in the table, from hit on: where it ends; *t counts the
 * blocks found that nobody references (inline twice, with and without slots). */
static inline __attribute__((always_inline)) long
table_run(const sv__pcache_t *c, const uint64_t *h, long hit, long max, long *slots, long *t)
{
    const slot_t *S = c->s;
    const int32_t *T = c->table;
    long mask = c->mask, u = 0;
    for (; hit < max; hit++) { /* find() for each */
        long i = (long)(h[hit] & (uint64_t)mask);
        int32_t k;
        while ((k = T[i]) && S[k].hash != h[hit])
            i = (i + 1) & mask;
        if (!k) break;
        if (slots) slots[hit] = k;
        u += S[k].refs == 0;
    }
    *t += u;
    return hit;
}

/* The chain's part of sv__pcache_find_run: the longest run of its positions [0, n) cached,
 * by run and (where the chain has second copies) hashed copy; *t as above. */
static __attribute__((noinline)) long chain_run(const sv__pcache_t *c, const uint64_t *h, long n,
                                                long *slots, long *t)
{
    const slot_t *S = c->s;
    long hit = 0, ch = chain_find(c, h[0]);
    int32_t k = ch >= 0 ? c->ch[ch].first : -1;
    int dups = ch >= 0 && c->ch[ch].ndup > 0;
    while (hit < n) {
        while (k >= 0 && run_hi(&S[k]) <= hit)
            k = S[k].right;
        if (k >= 0 && S[k].home <= hit) {
            long e = run_hi(&S[k]) < n ? run_hi(&S[k]) : n;
            if (S[k].refs == 0) *t += e - hit;
            if (slots)
                for (long j = hit; j < e; j++)
                    slots[j] = chain_mark(ch);
            hit = e;
            continue;
        }
        long s = dups ? find(c, h[hit]) : -1;
        if (s < 0) break;
        if (slots) slots[hit] = s;
        *t += S[s].refs == 0;
        hit++;
    }
    return hit;
}

long sv__pcache_find_run(const sv__pcache_t *c, const uint64_t *h, long nchain, long max,
                         long *slots, long *touched)
{
    long hit = 0;
    *touched = 0;
    if (!c->table) return 0;
    if (nchain > 0 && max > 0) { /* the chain's positions first */
        hit = chain_run(c, h, nchain < max ? nchain : max, slots, touched);
        if (hit < nchain) return hit;
    }
    return slots ? table_run(c, h, hit, max, slots, touched)
                 : table_run(c, h, hit, max, NULL, touched);
}

/* ---- parking and evicting ---------------------------------------------------------------- */

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
    c->s[k] = (slot_t){.next = -1, .used = SLOT_PARKED, .count = (int32_t)n};
    lru_append(c, k);
    return 0;
}

int sv__pcache_evict(sv__pcache_t *c)
{
    return (int)sv__pcache_evict_upto(c, 1);
}

/* In bulk: the dropped entries leave the head of the LRU list in one cut, their hashes the
 * table as they go (backward-shift deletion, inline); runs lose blocks from their top. */
static __attribute__((noinline)) long evict_walk(sv__pcache_t *c, long n)
{
    long got = 0, mask = c->mask, nfree = c->nfree;
    slot_t *S = c->s;
    int32_t *T = c->table, k = c->head, *freelist = c->freelist;
    while (got < n && k >= 0) {
        slot_t *s = &S[k];
        int32_t next = s->next, used = s->used;
        if (used <= SLOT_COPY) { /* SLOT_HASHED or SLOT_COPY */
            long i = s->home;
            while (T[i] != k)
                i = (i + 1) & mask;
            for (long j = (i + 1) & mask;; j = (j + 1) & mask) {
                int32_t m = T[j];
                if (!m) break;
                long h = S[m].home;
                if (i <= j ? (h > i && h <= j) : (h > i || h <= j)) continue;
                T[i] = m;
                i = j;
            }
            T[i] = 0;
            if (used == SLOT_COPY) c->ch[s->count].ndup--;
            got++;
        } else if (s->count > n - got) {
            s->count -= (int32_t)(n - got); /* a run's top (a parked run: any blocks) */
            got = n;
            break;
        } else {
            got += s->count;
            if (used >= SLOT_RUN) { /* out of its chain's list, its slot given back */
                c->nfree = nfree;
                run_drop(c, k);
                nfree = c->nfree;
                k = next;
                continue;
            }
        }
        s->used = SLOT_EMPTY;
        freelist[nfree++] = k;
        k = next;
    }
    c->nfree = nfree;
    c->head = k;
    if (k >= 0)
        S[k].prev = -1;
    else
        c->tail = -1;
    c->n.evictable -= got;
    return got;
}

/* The common case first, without evict_walk's frame: the head of the LRU list is a run (a
 * parked one, or a chain's) with more than n blocks, which loses n from its top (what
 * evict_walk's first turn would do; the head keeps its place). */
long sv__pcache_evict_upto(sv__pcache_t *c, long n)
{
    int32_t k = c->head;
    if (k >= 0 && c->s[k].used > SLOT_COPY && c->s[k].count > n) {
        c->s[k].count -= (int32_t)n;
        c->n.evictable -= n;
        return n;
    }
    return evict_walk(c, n);
}
