/*
 * Tests of automatic prefix caching (issue 12): the block pool's LRU and reference
 * counts by hand, a first segment's blocks kept as runs by hand, the run-length cache
 * against the per-block one (tests/pcache_ref.c) on randomised workloads, the exact hit
 * of a second prompt that shares the first's prefix and its TTFT, shared system prompts
 * hitting under --check's per-step recount (every block free or cached at the end), that
 * with prefix caching off a run is the same as one without identity, a disaggregated
 * decode replica receiving only the blocks it lacks, replicas of two block sizes sharing
 * one memo of first-segment chains, and bad input.
 */
#include <math.h>
#include <unistd.h>

#include "../sim/engine/pcache_int.h"
#include "pcache_ref.h"
#include "servesim/base/numeric.h"
#include "servesim/cluster/scenario.h"
#include "servesim/cluster/sim.h"
#include "servesim/engine/replica.h"
#include "testsim.h"

static sv_catalog_t *cat;

static void setup(void)
{
    cat = tu_catalog();
}

static void teardown(void)
{
    sv_catalog_free(cat);
}

/* Blocks nobody references are evicted least recently freed first; a referenced block
 * is never evicted; a hit on an idle block takes it out of the LRU list. */
START_TEST(test_lru_order)
{
    sv__pcache_t *c = sv__pcache_new(4);
    long a = sv__pcache_insert(c, 101), b = sv__pcache_insert(c, 102),
         d = sv__pcache_insert(c, 103);
    ck_assert(a >= 0 && b >= 0 && d >= 0);
    ck_assert_int_eq(sv__pcache_in_use(c), 3);
    /* A request frees its chain 101 -> 102 in reverse (102 first), then 103 goes. */
    sv__pcache_unref(c, b);
    sv__pcache_unref(c, a);
    sv__pcache_unref(c, d);
    ck_assert_int_eq(sv__pcache_evictable(c), 3);
    /* A hit on 101 keeps it: the next two evictions drop 102, then 103. */
    sv__pcache_ref(c, sv__pcache_find(c, 101));
    ck_assert_int_eq(sv__pcache_evict(c), 1);
    ck_assert_int_eq(sv__pcache_find(c, 102), -1);
    ck_assert(sv__pcache_find(c, 103) >= 0);
    ck_assert_int_eq(sv__pcache_evict(c), 1);
    ck_assert_int_eq(sv__pcache_find(c, 103), -1);
    ck_assert_int_eq(sv__pcache_evict(c), 0); /* 101 is referenced */
    ck_assert(sv__pcache_find(c, 101) >= 0);
    /* Freed slots are reused; the table finds every live hash after deletions. */
    for (uint64_t h = 200; h < 203; h++)
        ck_assert(sv__pcache_insert(c, h) >= 0);
    ck_assert_int_eq(sv__pcache_insert(c, 999), -1); /* 4 blocks, 4 entries */
    for (uint64_t h = 200; h < 203; h++)
        ck_assert(sv__pcache_find(c, h) >= 0);
    ck_assert(sv__pcache_find(c, 101) >= 0);
    sv__pcache_free(c);
}
END_TEST

/* Entries of one hash, and hashes sharing a place in the table (5, 37 and 69 in a table
 * of 32), are found first inserted first, before and after deletions shift a probe run
 * back; a run of inserts, unrefs and finds does what the single calls do. */
START_TEST(test_duplicates_and_collisions)
{
    sv__pcache_t *c = sv__pcache_new(4); /* a table of 32 entries */
    uint64_t h[4] = {5, 37, 5, 69};
    int32_t slots[4];
    ck_assert_int_eq(sv__pcache_insert_run(c, h, 0, 0, 4, slots), 0);
    ck_assert_int_eq(sv__pcache_in_use(c), 4);
    ck_assert_int_eq(sv__pcache_find(c, 5), slots[0]);
    ck_assert_int_eq(sv__pcache_find(c, 37), slots[1]);
    ck_assert_int_eq(sv__pcache_find(c, 69), slots[3]);
    /* the first 5 freed and evicted: the second is found, the run's others still are */
    sv__pcache_unref_slots(c, slots, 1);
    ck_assert_int_eq(sv__pcache_evictable(c), 1);
    ck_assert_int_eq(sv__pcache_evict_upto(c, 9), 1);
    ck_assert_int_eq(sv__pcache_find(c, 5), slots[2]);
    ck_assert_int_eq(sv__pcache_find(c, 37), slots[1]);
    ck_assert_int_eq(sv__pcache_find(c, 69), slots[3]);
    /* the longest run present: 37, then 5 (the second entry), then 69; 1 is absent */
    uint64_t q[4] = {37, 5, 69, 1};
    long got[4], touched;
    ck_assert_int_eq(sv__pcache_find_run(c, q, 0, 4, got, &touched), 3);
    ck_assert_int_eq(got[0], slots[1]);
    ck_assert_int_eq(got[1], slots[2]);
    ck_assert_int_eq(got[2], slots[3]);
    ck_assert_int_eq(touched, 0);
    /* freed last first: 69 is evicted before 5, 5 before 37 */
    sv__pcache_unref_slots(c, slots + 1, 3);
    ck_assert_int_eq(sv__pcache_evictable(c), 3);
    ck_assert_int_eq(sv__pcache_evict_upto(c, 1), 1);
    ck_assert_int_eq(sv__pcache_find(c, 69), -1);
    ck_assert_int_eq(sv__pcache_find(c, 5), slots[2]);
    ck_assert_int_eq(sv__pcache_evict_upto(c, 1), 1);
    ck_assert_int_eq(sv__pcache_find(c, 5), -1);
    ck_assert_int_eq(sv__pcache_find(c, 37), slots[1]);
    /* a full cache: the run's last entries get no slot */
    uint64_t more[4] = {100, 132, 164, 196};
    int32_t ms[4];
    ck_assert_int_eq(sv__pcache_insert_run(c, more, 0, 0, 4, ms), -1);
    ck_assert(ms[0] >= 0 && ms[1] >= 0 && ms[2] >= 0);
    ck_assert_int_eq(ms[3], -1);
    ck_assert_int_eq(sv__pcache_in_use(c), 3);
    sv__pcache_free(c);
}
END_TEST

/* A chain (the 6 blocks of a first segment, by their position) kept a run at a time:
 * two requests share its first 4 positions; freed last first, the idle positions are
 * evicted from the chain's end, a later hit takes them from its start; a position cached
 * twice (two requests computing it at once) is found in its first copy, then, that one
 * evicted, in its second. */
START_TEST(test_chain_runs)
{
    sv__pcache_t *c = sv__pcache_new(16);
    uint64_t h[6] = {11, 12, 13, 14, 15, 16}; /* the chain of first-block hash 11 */
    int32_t a[6], b[6];
    long got[6], touched;
    ck_assert_int_eq(sv__pcache_find_run(c, h, 6, 6, got, &touched), 0);
    ck_assert_int_eq(sv__pcache_insert_run(c, h, 6, 0, 6, a), 0);
    ck_assert_int_eq(a[0], SV__PCACHE_CHAIN); /* the cache's first chain */
    ck_assert_int_eq(a[5], SV__PCACHE_CHAIN);
    ck_assert_int_eq(sv__pcache_in_use(c), 6);
    /* B hits the first 4 (all referenced: none touched) and computes 4..5 itself while A
     * still holds them: its copies are hashed blocks */
    ck_assert_int_eq(sv__pcache_find_run(c, h, 6, 4, got, &touched), 4);
    ck_assert_int_eq(touched, 0);
    sv__pcache_ref_slots(c, got, 4);
    for (int j = 0; j < 4; j++)
        b[j] = (int32_t)got[j];
    ck_assert_int_eq(sv__pcache_insert_run(c, h, 6, 4, 6, b), 0);
    ck_assert(b[4] >= 0 && b[5] >= 0);
    ck_assert_int_eq(sv__pcache_in_use(c), 8);
    /* A ends: positions 5 and 4 of the chain go idle (5 first); 0..3 stay B's */
    sv__pcache_unref_slots(c, a, 6);
    ck_assert_int_eq(sv__pcache_evictable(c), 2);
    ck_assert_int_eq(sv__pcache_in_use(c), 6);
    /* the lookup still finds the whole chain, its first copies: 2 of them idle */
    ck_assert_int_eq(sv__pcache_find_run(c, h, 6, 6, got, &touched), 6);
    ck_assert_int_eq(touched, 2);
    ck_assert_int_eq(got[4], SV__PCACHE_CHAIN);
    /* evicting one drops position 5's first copy: B's copy is found there now */
    ck_assert_int_eq(sv__pcache_evict_upto(c, 1), 1);
    ck_assert_int_eq(sv__pcache_find_run(c, h, 6, 6, got, &touched), 6);
    ck_assert_int_eq(got[5], b[5]);
    ck_assert_int_eq(touched, 1);
    /* B ends: its 4 chain positions, then its copies 5 and 4 go idle, last first:
     * LRU = chain 4, copy 5, copy 4, chain 3, 2, 1, 0 */
    sv__pcache_unref_slots(c, b, 6);
    ck_assert_int_eq(sv__pcache_evictable(c), 7);
    ck_assert_int_eq(sv__pcache_in_use(c), 0);
    /* a hit on 0..1 takes them from the idle run's start */
    ck_assert_int_eq(sv__pcache_find_run(c, h, 6, 2, got, &touched), 2);
    ck_assert_int_eq(touched, 2);
    sv__pcache_ref_slots(c, got, 2);
    ck_assert_int_eq(sv__pcache_evictable(c), 5);
    /* three evictions: chain 4, then copy 5, then copy 4; 0..3 are still found */
    ck_assert_int_eq(sv__pcache_evict_upto(c, 3), 3);
    ck_assert_int_eq(sv__pcache_find_run(c, h, 6, 6, got, &touched), 4);
    ck_assert_int_eq(touched, 2);
    /* the rest of the idle run (3, then 2) goes; 0..1 are referenced */
    ck_assert_int_eq(sv__pcache_evict_upto(c, 9), 2);
    ck_assert_int_eq(sv__pcache_find_run(c, h, 6, 6, got, &touched), 2);
    ck_assert_int_eq(sv__pcache_evictable(c), 0);
    ck_assert_int_eq(sv__pcache_in_use(c), 2);
    sv__pcache_free(c);
}
END_TEST

/* ---- the run-length cache against the per-block one (tests/pcache_ref.c) ---------------- */

static uint64_t rnd_state;
static uint64_t rnd(void)
{
    rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t z = rnd_state ^ (rnd_state >> 29);
    return z * 0xbf58476d1ce4e5b9ULL ^ (z >> 32);
}
static long rnd_below(long n)
{
    return (long)(rnd() % (uint64_t)n);
}

enum { D_IDENTS = 24, D_LEN = 40, D_LIVE = 12 };

/* A prompt identity: a chain of nchain positions (one of a few first segments, or none),
 * then hashes of its own (a session's history, or a preempted request's own blocks,
 * which only prompts of this identity share). */
typedef struct dident {
    uint64_t h[D_LEN];
    long nchain, len;
} dident_t;

typedef struct dreq {
    int live, ident;
    long cached, target, own;     /* blocks cached; to cache in all; own blocks uncached */
    int32_t sn[D_LEN], so[D_LEN]; /* slot values: run-length cache, per-block cache */
    long xn;                      /* a decode-side hit held (xsn, xso), or 0 */
    int32_t xsn[D_LEN], xso[D_LEN];
} dreq_t;

typedef struct drig {
    sv__pcache_t *n;
    sv__pcref_t *o;
    long total, free; /* blocks; free ones */
    dident_t id[D_IDENTS];
    dreq_t q[D_LIVE];
    long hits, evicted, dups;
} drig_t;

static void d_same_counts(const drig_t *d)
{
    ck_assert_int_eq(sv__pcache_in_use(d->n), sv__pcref_in_use(d->o));
    ck_assert_int_eq(sv__pcache_evictable(d->n), sv__pcref_evictable(d->o));
}

/* Both caches find the same run, touching the same blocks: their slots in sn / so. */
static long d_find(drig_t *d, int ident, long max, long *sn, long *so, long *touched)
{
    const dident_t *I = &d->id[ident];
    long tn, to;
    long a = sv__pcache_find_run(d->n, I->h, I->nchain, max, sn, &tn);
    long b = sv__pcref_find_run(d->o, I->h, max, so, &to);
    ck_assert_int_eq(a, b);
    ck_assert_int_eq(tn, to);
    *touched = tn;
    return a;
}

/* n blocks for a request: free ones first, then evicted ones (the same in both). */
static int d_take(drig_t *d, long n)
{
    if (d->free + sv__pcache_evictable(d->n) < n) return 0;
    if (d->free < n) {
        long a = sv__pcache_evict_upto(d->n, n - d->free);
        long b = sv__pcref_evict_upto(d->o, n - d->free);
        ck_assert_int_eq(a, b);
        d->evicted += a;
        d->free += a;
    }
    d->free -= n;
    return 1;
}

static void d_admit(drig_t *d, dreq_t *q)
{
    int ident = (int)rnd_below(D_IDENTS);
    const dident_t *I = &d->id[ident];
    long max = 1 + rnd_below(I->len), sn[D_LEN], so[D_LEN], touched;
    long hit = d_find(d, ident, max, sn, so, &touched);
    long target = hit + rnd_below(I->len - hit + 1), own = target - hit + rnd_below(3);
    if (d->free + sv__pcache_evictable(d->n) - touched < own) return;
    /* the hits first: taking blocks must not evict them */
    sv__pcache_ref_slots(d->n, sn, hit);
    sv__pcref_ref_slots(d->o, so, hit);
    ck_assert(d_take(d, own));
    *q = (dreq_t){.live = 1, .ident = ident, .cached = hit, .target = target, .own = own};
    for (long j = 0; j < hit; j++) {
        q->sn[j] = (int32_t)sn[j];
        q->so[j] = (int32_t)so[j];
    }
    d->hits += hit;
    d_same_counts(d);
}

/* A chunk of the request's blocks is scheduled: they join the cache. */
static void d_chunk(drig_t *d, dreq_t *q)
{
    if (q->cached >= q->target) return;
    const dident_t *I = &d->id[q->ident];
    long to = q->cached + 1 + rnd_below(q->target - q->cached);
    for (long j = q->cached; j < to; j++)
        if (sv__pcref_find(d->o, I->h[j]) >= 0) d->dups++;
    ck_assert_int_eq(sv__pcache_insert_run(d->n, I->h, I->nchain, q->cached, to, q->sn), 0);
    ck_assert_int_eq(sv__pcref_insert_run(d->o, I->h, q->cached, to, q->so), 0);
    q->own -= to - q->cached;
    q->cached = to;
    d_same_counts(d);
}

/* The request ends (or is preempted): its cached blocks go back last first, some of its
 * own full ones are parked, the rest freed. */
static void d_end(drig_t *d, dreq_t *q)
{
    sv__pcache_unref_slots(d->n, q->sn, q->cached);
    sv__pcref_unref_slots(d->o, q->so, q->cached);
    long park = q->own > 0 ? rnd_below(q->own + 1) : 0;
    ck_assert_int_eq(sv__pcache_park(d->n, park), 0);
    ck_assert_int_eq(sv__pcref_park(d->o, park), 0);
    d->free += q->own - park;
    if (q->xn) {
        sv__pcache_unref_slots(d->n, q->xsn, q->xn);
        sv__pcref_unref_slots(d->o, q->xso, q->xn);
    }
    q->live = 0;
    d_same_counts(d);
}

/* A decode replica references the leading blocks of an incoming request it holds. */
static void d_xfer(drig_t *d, dreq_t *q)
{
    if (q->xn) {
        sv__pcache_unref_slots(d->n, q->xsn, q->xn);
        sv__pcref_unref_slots(d->o, q->xso, q->xn);
        q->xn = 0;
        return;
    }
    long sn[D_LEN], so[D_LEN], touched, max = 1 + rnd_below(d->id[q->ident].len);
    long hit = d_find(d, q->ident, max, sn, so, &touched);
    sv__pcache_ref_slots(d->n, sn, hit);
    sv__pcref_ref_slots(d->o, so, hit);
    for (long j = 0; j < hit; j++) {
        q->xsn[j] = (int32_t)sn[j];
        q->xso[j] = (int32_t)so[j];
    }
    q->xn = hit;
    d_same_counts(d);
}

/* One randomised workload: `total` blocks, chains of `chain` positions. */
static void d_run(uint64_t seed, long total, long chain, int steps, drig_t *d)
{
    rnd_state = seed;
    *d = (drig_t){
        .n = sv__pcache_new(total), .o = sv__pcref_new(total), .total = total, .free = total};
    for (int i = 0; i < D_IDENTS; i++) { /* 4 first segments (or none), 3 tails each */
        dident_t *I = &d->id[i];
        int seg = i % 5, tail = i / 5;
        I->nchain = seg == 4 ? 0 : chain;
        I->len = I->nchain + 1 + (long)(rnd() % (uint64_t)(D_LEN - I->nchain));
        uint64_t h = 0x51ed5eedULL;
        for (long b = 0; b < I->len; b++)
            I->h[b] = h = sv_splitmix64(
                h ^ (b < I->nchain ? (uint64_t)seg * 977 + 1 : (uint64_t)tail * 131 + 7));
    }
    for (int s = 0; s < steps; s++) {
        dreq_t *q = &d->q[rnd_below(D_LIVE)];
        long op = rnd_below(10);
        if (!q->live)
            d_admit(d, q);
        else if (op < 5)
            d_chunk(d, q);
        else if (op < 8)
            d_end(d, q);
        else if (op < 9)
            d_xfer(d, q);
        else { /* blocks taken for something else: evicted in turn */
            long n = rnd_below(total / 4 + 1);
            if (d_take(d, n)) d->free += n;
        }
        /* every identity is found alike, touching the same blocks */
        for (int i = 0; i < D_IDENTS; i++) {
            long sn[D_LEN], so[D_LEN], t;
            d_find(d, i, d->id[i].len, sn, so, &t);
        }
    }
    for (int i = 0; i < D_LIVE; i++)
        if (d->q[i].live) d_end(d, &d->q[i]);
    ck_assert_int_eq(sv__pcache_in_use(d->n), 0);
    ck_assert_int_eq(sv__pcache_evict_upto(d->n, total), sv__pcref_evict_upto(d->o, total));
    d_same_counts(d);
    sv__pcache_free(d->n);
    sv__pcref_free(d->o);
}

/* Randomised workloads of shared first segments, sessions' tails, chunks computed at once
 * by two requests (second copies), preemption (own blocks parked), decode-side hits held
 * for a transfer and eviction under pressure: the run-length cache answers every lookup
 * and eviction as the per-block cache does. The workloads do reach what they are for. */
START_TEST(test_runs_match_per_block)
{
    static const long totals[] = {24, 48, 96, 400}, chains[] = {8, 20, 30, 1};
    long hits = 0, evicted = 0, dups = 0;
    for (int k = 0; k < 16; k++) {
        drig_t d;
        d_run(0x9e3779b97f4a7c15ULL * (uint64_t)(k + 1), totals[k % 4], chains[k / 4], 4000, &d);
        hits += d.hits;
        evicted += d.evicted;
        dups += d.dups;
    }
    ck_assert(hits > 10000);
    ck_assert(evicted > 10000);
    ck_assert(dups > 1000);
}
END_TEST

static const char *two = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                         "workload:\n  num_requests: 2\n  rate: 0.5\n  burstiness: inf\n"
                         "  rescale_arrivals: false\n  input: 1\n  output: 10\n"
                         "  shared_prefix: {tokens: 999}\n";

/* Two 1,000-token prompts sharing a 999-token system prompt, the second sent after the
 * first ended: it finds floor(999 / 16) = 62 blocks (992 tokens) and prefills only the
 * last 8 (the partial block). Queries count both prompts' tokens, hits the 992. */
START_TEST(test_second_prompt_hits)
{
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, two, NULL, 0, &sc);
    ck_assert_double_eq(res->prefix_queries, 2000.0);
    ck_assert_double_eq(res->prefix_hits, 992.0);
    ck_assert_double_eq(res->rstats[0].prefill_tokens, 1000.0 + 8.0);
    /* Its TTFT is the vllm profile's 12 ms API-server path, then the prefill of 8 new
     * tokens over 992 cached ones, timed as async scheduling does (on by default): the
     * step alone, max(GPU part, CPU part). */
    sv_chunk_t ch = {.new_tokens = 8, .cached_tokens = 992, .last = 1};
    sv_batch_t b = {.chunks = &ch, .n_chunks = 1};
    sv_step_cost_t cost;
    sv_perf_step(&res->pools[0].perf, &b, &cost);
    const sv_req_t *r = &res->pool.r[1];
    tu_assert_rel(r->first_token - r->start, 12e-3 + tu_step_s(&cost, 1), 1e-12);
    tu_check_accounting(res);
    tu_done(sc, res);
    /* Off: nothing is looked up and the second prompt is prefilled whole. */
    const char *off[] = {"engine.enable_prefix_caching=false"};
    res = tu_run_yaml(cat, two, off, 1, &sc);
    ck_assert_double_eq(res->prefix_queries, 0.0);
    ck_assert_double_eq(res->rstats[0].prefill_tokens, 2000.0);
    tu_done(sc, res);
}
END_TEST

/* Three system prompts shared by 80% of the traffic: a roomy cache keeps them, so every
 * user after the first of each prompt hits its 1024 tokens whole. Accounting stays exact
 * under --check's per-step recount. */
START_TEST(test_shared_prompts_hit)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                       "workload:\n  num_requests: 400\n  rate: 20\n"
                       "  input: {dist: uniform, min: 50, max: 800}\n  output: 50\n"
                       "  shared_prefix: {tokens: 1024, prompts: 3, share: 0.8}\n";
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err), 0);
    sc->check = 1;
    sv_result_t *res;
    ck_assert_int_eq(sv_sim_run(sc, &res, &err), 0);
    /* 80% of prompts carry 1024 shared tokens (64 blocks); all but the first of each of
     * the three prompts' users hit them whole. */
    double shared = 0;
    for (size_t i = 0; i < res->pool.n; i++)
        shared += res->pool.r[i].nseg == 2 ? 1024 : 0;
    ck_assert(res->prefix_hits >= shared - 3 * 1024);
    ck_assert(res->prefix_hits <= res->prefix_queries);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/* A generated system prompt's users: their own message and output are theirs alone
 * (own_tail), so they are hashed only when the request is preempted; a preempted request
 * re-admitted then finds more of its prompt than the system prompt's 256 tokens (its own
 * message's blocks, and the blocks of what it had generated, cached as it was preempted),
 * which no request can find otherwise. */
START_TEST(test_own_message_found_after_preemption)
{
    const char *yaml =
        "model: llama-3.1-8b\nhardware: {gpu: h100-sxm, gpu_memory_utilization: 0.3}\n"
        "workload:\n  num_requests: 300\n  rate: inf\n  max_concurrency: 256\n"
        "  input: 128\n  output: 1000\n  shared_prefix: {tokens: 256}\n";
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_checked(cat, yaml, &sc);
    ck_assert(res->preemptions > 0);
    long own = 0, beyond = 0, unpreempted_beyond = 0;
    for (size_t i = 0; i < res->pool.n; i++) {
        const sv_req_t *q = &res->pool.r[i];
        own += q->own_tail;
        beyond += q->preemptions > 0 && q->cached > 256;
        unpreempted_beyond += q->preemptions == 0 && q->cached > 256;
    }
    ck_assert_int_eq(own, 300);
    ck_assert(beyond > 0);
    ck_assert_int_eq(unpreempted_beyond, 0);
    /* every new request's lookup: 384 prompt tokens queried, at most its 256 shared hit */
    ck_assert_double_eq(res->prefix_queries, 300.0 * 384.0);
    ck_assert(res->prefix_hits <= 300.0 * 256.0);
    tu_check_accounting(res);
    tu_done(sc, res);
}
END_TEST

/* With prefix caching off, identity changes nothing: the same run as without it, but
 * for the system prompt's tokens counted in the input. */
START_TEST(test_off_is_plain)
{
    const char *a = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                    "engine: {enable_prefix_caching: false}\n"
                    "workload: {num_requests: 200, rate: 10, input: 600, output: 40, "
                    "shared_prefix: {tokens: 400}}\n";
    const char *b = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                    "workload: {num_requests: 200, rate: 10, input: 1000, output: 40}\n";
    sv_scenario_t *sa, *sb;
    sv_result_t *ra = tu_run_yaml(cat, a, NULL, 0, &sa), *rb = tu_run_yaml(cat, b, NULL, 0, &sb);
    ck_assert_double_eq(ra->summary.ttft.mean, rb->summary.ttft.mean);
    ck_assert_double_eq(ra->summary.duration, rb->summary.duration);
    tu_done(sa, ra);
    tu_done(sb, rb);
}
END_TEST

/* Two replicas, two 1600-token system prompts (100 blocks exactly) on every request at
 * a light load: prefix-affinity sends each prompt where it is cached, so only the first
 * request of each misses and every other one hits all 1600 tokens; least-outstanding
 * spreads both prompts over both replicas and misses once per prompt per replica. */
START_TEST(test_prefix_affinity_routing)
{
    const char *yaml = "model: llama-3.1-8b\nhardware: {gpu: h100-sxm, replicas: 2}\n"
                       "workload:\n  num_requests: 200\n  rate: 4\n"
                       "  input: {dist: uniform, min: 1, max: 300}\n  output: 20\n"
                       "  shared_prefix: {tokens: 1600, prompts: 2}\n";
    const char *aff[] = {"router=prefix-affinity"}, *lo[] = {"router=least-outstanding"};
    sv_scenario_t *sc;
    sv_result_t *res = tu_run_yaml(cat, yaml, aff, 1, &sc);
    ck_assert_double_eq(res->prefix_hits, 1600.0 * (200 - 2));
    tu_check_accounting(res);
    tu_done(sc, res);
    res = tu_run_yaml(cat, yaml, lo, 1, &sc);
    ck_assert_double_eq(res->prefix_hits, 1600.0 * (200 - 4));
    tu_done(sc, res);
}
END_TEST

/* Disaggregated: 1 prefill and 1 decode replica, 20 prompts beginning with the same 1600
 * tokens (100 blocks exactly), one a second. The prefill replica caches: 19 x 1600 tokens
 * hit. A decode replica with prefix caching keeps the blocks of the requests it decoded,
 * so from the second request on the transfer leaves out the 100 blocks it holds: the
 * link carries 19 x 1600 tokens of KV (131,072 bytes each for Llama-3.1-8B) less than
 * with the decode pool's cache off, and every block is free or cached at the end. */
START_TEST(test_disagg_sends_missing_blocks)
{
    const char *fmt = "model: llama-3.1-8b\npools:\n"
                      "  - {name: prefill, role: prefill, gpu: h100-sxm, replicas: 1}\n"
                      "  - {name: decode, role: decode, gpu: h100-sxm, replicas: 1, "
                      "engine: {enable_prefix_caching: %s}}\n"
                      "disaggregation: {kv_link: {kind: infiniband}}\n"
                      "workload:\n  num_requests: 20\n  rate: 1\n"
                      "  input: {dist: uniform, min: 1, max: 300}\n  output: 20\n"
                      "  shared_prefix: {tokens: 1600}\n";
    double bytes[2], tokens = 0;
    for (int on = 0; on < 2; on++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml, fmt, on ? "true" : "false");
        sv_scenario_t *sc;
        sv_error_t err;
        ck_assert_int_eq(tu_load_yaml(cat, yaml, NULL, 0, &sc, &err), 0);
        sc->check = 1;
        sv_result_t *res;
        ck_assert_msg(sv_sim_run(sc, &res, &err) == 0, "%s", err.msg);
        ck_assert_int_eq(res->summary.completed, 20);
        ck_assert_double_eq(res->prefix_hits, 19 * 1600.0); /* the prefill pool's */
        ck_assert_double_eq(res->pools[0].perf.kv_bytes_token_total, 131072.0);
        bytes[on] = res->pools[0].link_bytes;
        if (!on)
            for (size_t i = 0; i < res->pool.n; i++)
                tokens += res->pool.r[i].input;
        tu_check_accounting(res);
        tu_done(sc, res);
    }
    ck_assert_double_eq(bytes[0], tokens * 131072.0); /* every prompt's KV crosses */
    ck_assert_double_eq(bytes[0] - bytes[1], 19 * 1600 * 131072.0);
}
END_TEST

/* Runs replica r alone from t until it is idle; the time then. */
static double run_alone(sv_replica_t *r, double t)
{
    for (int k = 0; k < 100000; k++) {
        double d = sv_replica_start_step(r, t);
        if (d <= 0) return t;
        t += d;
        ck_assert_int_eq(sv_replica_end_step(r, t), 0);
    }
    ck_abort_msg("replica %p never went idle", (void *)r);
    return t;
}

/* One memo of first-segment chains shared by three replicas, two with 16-token blocks
 * (A, C) and one with 32-token blocks (B), their requests all beginning with one
 * 1,010-token system prompt and a 100-token message of their own: A hashes the prompt's
 * 63 blocks of 16 (1,008 tokens), B its 31 blocks of 32 (992 tokens) beside them, and C
 * finds A's chain: two chains hashed, none mixed up (each replica's second request hits
 * exactly its own block size's prefix). Back on its own memo C hashes the chain again
 * and still finds its blocks. A's last request, with a 2,000-token message, is given the
 * slot array an ended request left (room for 70 blocks), grown to the 189 it may fill,
 * and finds the system prompt as the others did. */
START_TEST(test_shared_chain_memo)
{
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {async_scheduling: false, api_server_ms: 0}\n"
                                  "workload: {num_requests: 1, input: 100, output: 10}\n",
                                  NULL, 0, &sc, &err),
                     0);
    sv_perf_t perf;
    ck_assert_int_eq(sv_perf_init(&perf, &sc->pools[0].gpu, &sc->model, &sc->pools[0].perf, &err),
                     0);
    sv_metrics_t *m = sv_metrics_new(&sc->metrics, 3);
    sv_reqpool_t pool = {0};
    for (int i = 0; i < 8; i++) {
        int own = i == 7 ? 2000 : 100;
        ck_assert_int_eq(sv_reqpool_add(&pool), i);
        sv_segment_t seg[2] = {{0x5157e3ULL, 1010}, {0x0e55a9e0ULL + (uint64_t)i, own}};
        ck_assert_int_eq(sv_reqpool_set_segments(&pool, i, seg, 2), 0);
        pool.r[i].input = 1010 + own;
        pool.r[i].output = 4;
        pool.r[i].own_tail = 1;
    }
    sv_chain_memo_t *memo = sv_chain_memo_new();
    ck_assert_ptr_nonnull(memo);
    sv_replica_t *rep[3];
    const int bs[3] = {16, 32, 16};
    for (int k = 0; k < 3; k++) {
        sv_engine_cfg_t e = sc->pools[0].engine;
        e.max_model_len = 4096;
        e.prefix_caching = 1;
        e.block_size = bs[k];
        ck_assert_int_eq(sv_replica_new(k, &perf, 1000, &e, &pool, m, &rep[k], &err), 0);
        sv_replica_share_memo(rep[k], memo);
    }
    const long hit[3] = {63 * 16, 31 * 32, 63 * 16}, hashed[3] = {1, 2, 2};
    double t = 0.0;
    for (int k = 0; k < 3; k++) {
        /* request 2k first (nothing cached here yet), then 2k + 1 */
        ck_assert_int_eq(sv_replica_submit(rep[k], 2 * k, t), SV_FAIL_NONE);
        t = run_alone(rep[k], t);
        ck_assert_int_eq(pool.r[2 * k].state, SV_RQ_DONE);
        ck_assert_int_eq(pool.r[2 * k].cached, 0);
        ck_assert_int_eq(sv_chain_memo_hashed(memo), hashed[k]);
        ck_assert_int_eq(sv_replica_cached_prefix(rep[k], 2 * k + 1), hit[k]);
        ck_assert_int_eq(sv_replica_submit(rep[k], 2 * k + 1, t), SV_FAIL_NONE);
        t = run_alone(rep[k], t);
        ck_assert_int_eq(pool.r[2 * k + 1].state, SV_RQ_DONE);
        ck_assert_int_eq(pool.r[2 * k + 1].cached, hit[k]);
    }
    /* A still finds its 16-token chain beside B's and C's lookups */
    ck_assert_int_eq(sv_replica_cached_prefix(rep[0], 6), 63 * 16);
    ck_assert_int_eq(sv_replica_cached_prefix(rep[1], 6), 31 * 32);
    ck_assert_int_eq(sv_chain_memo_hashed(memo), 2);
    /* C on its own memo: the shared one is not asked, the same blocks are found */
    sv_replica_share_memo(rep[2], NULL);
    ck_assert_int_eq(sv_replica_cached_prefix(rep[2], 6), 63 * 16);
    ck_assert_int_eq(sv_chain_memo_hashed(memo), 2);
    /* (room for 3,014 / 16 + 1 = 189 blocks; the kept array had 1,114 / 16 + 1 = 70) */
    ck_assert_int_eq(sv_replica_submit(rep[0], 7, t), SV_FAIL_NONE);
    t = run_alone(rep[0], t);
    ck_assert_int_eq(pool.r[7].state, SV_RQ_DONE);
    ck_assert_int_eq(pool.r[7].cached, 63 * 16);
    for (int k = 0; k < 3; k++) {
        char msg[SV_ERRMSG_MAX];
        ck_assert_msg(sv_replica_check(rep[k], msg, sizeof msg) == 0, "%s", msg);
        sv_replica_free(rep[k]);
    }
    sv_chain_memo_free(memo); /* after the replicas that borrowed it */
    sv_metrics_free(m);
    sv_reqpool_free(&pool);
    sv_scenario_free(sc);
}
END_TEST

/* Bad input: a shared prefix without its length, and prefix caching asked of a scheduler
 * that reserves whole sequences. */
START_TEST(test_bad_input)
{
    sv_scenario_t *sc;
    sv_error_t err;
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "workload: {num_requests: 2, input: 8, output: 8, "
                                  "shared_prefix: {prompts: 2}}\n",
                                  NULL, 0, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "missing required key 'tokens'"), "%s", err.msg);
    ck_assert_int_eq(tu_load_yaml(cat,
                                  "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\n"
                                  "engine: {scheduler: orca, enable_prefix_caching: true}\n"
                                  "workload: {num_requests: 2, input: 8, output: 8}\n",
                                  NULL, 0, &sc, &err),
                     SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "engine.enable_prefix_caching: the orca scheduler reserves"),
                  "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("prefix");
    TCase *tc = tcase_create("cache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_lru_order);
    tcase_add_test(tc, test_duplicates_and_collisions);
    tcase_add_test(tc, test_chain_runs);
    tcase_add_test(tc, test_runs_match_per_block);
    tcase_add_test(tc, test_second_prompt_hits);
    tcase_add_test(tc, test_shared_prompts_hit);
    tcase_add_test(tc, test_own_message_found_after_preemption);
    tcase_add_test(tc, test_off_is_plain);
    tcase_add_test(tc, test_prefix_affinity_routing);
    tcase_add_test(tc, test_disagg_sends_missing_blocks);
    tcase_add_test(tc, test_shared_chain_memo);
    tcase_add_test(tc, test_bad_input);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
