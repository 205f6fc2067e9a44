/*
 * Internal: a streaming JSON writer for results too large to build as a tree (a detailed
 * run of a million requests). Writes Python json.dump's layout (", " and ": "), numbers
 * as the shortest text that reads back to the same double, non-finite numbers as null.
 */
#ifndef SERVESIM_JSONW_INT_H
#define SERVESIM_JSONW_INT_H

#include <stdint.h>
#include <stdio.h>

/* A direct-mapped cache of number texts: the slot of a double is a hash of its bits, and a
 * slot holds the last double formatted there with its text (texts of up to 23 bytes; the
 * longer are formatted every time). The per-request ITL lists repeat the same gaps (every
 * sequence of one decode step gets the same difference of two step ends), so most of
 * their items are a copy. The bytes are the formatter's, hit or miss. */
#define SV__FMTCACHE_BITS 17
typedef struct sv_fmtslot {
    uint64_t bits; /* the double's bits; when empty, bits of another slot */
    char text[24]; /* its text, the length in text[23] */
} sv_fmtslot_t;
typedef struct sv_fmtcache {
    sv_fmtslot_t e[1 << SV__FMTCACHE_BITS];
} sv_fmtcache_t;

/* An empty cache, owned by the caller (sv__fmtcache_free); NULL when out of memory. */
sv_fmtcache_t *sv__fmtcache_new(void);
void sv__fmtcache_free(sv_fmtcache_t *c);
/* The slot of v (exposed for tests/test_format.c). */
size_t sv__fmtcache_slot(double v);
/* sv__fmt_double's text of finite v at p (room for 48 bytes; not NUL-terminated), from
 * the cache or formatted and entered into v's slot in place of what it held; the end. */
char *sv__fmtcache_put(sv_fmtcache_t *c, char *p, double v);

/* Array items (numbers) wait in buf, written out when it fills and before anything else
 * the writer writes: code that writes to f itself does so after sv__jw_key() or
 * sv__jw_flush(), and a writer whose last words are array items ends with
 * sv__jw_flush(). */
typedef struct sv_jw {
    FILE *f;
    int depth;
    int first[64];
    size_t len;
    sv_fmtcache_t *cache; /* NULL, or the cache sv__jw_nums uses (not owned) */
    char buf[4096];
} sv_jw_t;

/* s as a JSON string, quoted and escaped, onto f (for writers that lay out JSON themselves). */
void sv__jw_put_string(FILE *f, const char *s);
void sv__jw_init(sv_jw_t *w, FILE *f);
void sv__jw_key(sv_jw_t *w, const char *key); /* NULL inside arrays */
void sv__jw_flush(sv_jw_t *w);                /* the waiting items out to f */
void sv__jw_obj(sv_jw_t *w, const char *key);
void sv__jw_arr(sv_jw_t *w, const char *key);
void sv__jw_end_obj(sv_jw_t *w);
void sv__jw_end_arr(sv_jw_t *w);
void sv__jw_num(sv_jw_t *w, const char *key, double v);
void sv__jw_int(sv_jw_t *w, const char *key, long v);
/* The n items v[0..n) of the array open, through w->cache when it is set. */
void sv__jw_nums(sv_jw_t *w, const double *v, size_t n);
/* Items laid out already, len bytes at items, each led by its ", " separator, into the
 * array open (its first item loses the separator): the bytes sv__jw_nums would write. */
void sv__jw_items(sv_jw_t *w, const char *items, size_t len);
void sv__jw_str(sv_jw_t *w, const char *key, const char *s);
void sv__jw_null(sv_jw_t *w, const char *key);
/* Shortest round-trip text of v, Python-style ("2.0", "0.1"), into buf (>= 32 bytes). */
const char *sv__fmt_double(double v, char *buf);
/* Its one-pass part: the same text for finite v, or NULL for the doubles it leaves to
 * the definition's search (subnormals, and powers of two whose shortest text has 16
 * digits; every double without a 128-bit integer type). */
const char *sv__fmt_shortest(double v, char *buf);
/* Its exponent estimates, exposed for tests/test_format.c: floor(q log10 2),
 * floor(log10(3/4 2^q)), floor(e log2 10). */
int sv__flog10_pow2(int q);
int sv__flog10_3q_pow2(int q);
int sv__flog2_pow10(int e);

#endif
