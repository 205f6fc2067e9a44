/*
 * The streaming JSON writer (see jsonw_int.h).
 */
#include "base/jsonw_int.h"
#include "base/jsonw_pow10.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ----------------------------------------------------------------------------
 *
 * The text of a double is defined as what this three-step search gives: printf's %.15g,
 * else %.16g, else %.17g, the first that strtod reads back to the same double, with ".0"
 * when that has neither a point nor an exponent. sv__fmt_shortest gives the same bytes in
 * one pass, with the shortest-digits algorithm of R. Giulietti, "The Schubfach way to
 * render doubles" (2020), and leaves to the search the few doubles where the two differ.
 *
 * Why the search is "the shortest decimal that reads back, the closest to v of those"
 * (what Schubfach, Ryu and Python's repr print). Let R be the reals strtod rounds to v:
 * half a gap to the neighbour on either side, ends included iff v's significand is even
 * (strtod rounds ties to even). For a normal double |R| <= 2^-52 |v|, while n-digit
 * decimals lie more than 10^-n |v| apart.
 *  - n <= 15: R (narrower than a quarter of 10^-15 |v|) holds at most one decimal of 15
 *    digits or fewer. %.15g is the 15-digit decimal nearest v; when R holds one, D, the
 *    nearest is D (another as near would be within |R| of D). So %.15g reads back iff the
 *    shortest has 15 digits or fewer, and then it is that shortest, trailing zeros dropped.
 *  - Otherwise the shortest has 16 or 17 digits and R may hold several. When R is
 *    symmetric about v, it holds the nearest n-digit decimal whenever it holds any: the
 *    search's %.16g (or %.17g, which always reads back) is the closest of the shortest.
 *    Ties between two nearest: both printf and this code take the even one.
 *  - Below a power of two (significand 2^52, exponent above the least) the gap below is
 *    half the gap above, so R reaches a quarter of the upper gap below v: the nearest
 *    16-digit decimal can lie below v outside R while one above v is inside. Schubfach then
 *    prints those 16 digits and the search 17, so a power of two whose shortest has 16
 *    digits takes the search (1,035 of the 2,045 powers of two above the least normal).
 *    With 15 digits or fewer the first case holds as it is; with 17 the nearest 17-digit
 *    decimal is within 5e-17 |v|, inside R's lower quarter gap (5.55e-17 |v|), so it is
 *    the closest in R.
 *  - A subnormal has fewer significant bits: its R can hold several 15-digit decimals and
 *    %.15g prints the nearest, not the shortest (5e-324 prints as 4.94065645841247e-324).
 *    Subnormals take the search too (servesim writes none).
 * The digits are laid out as %g lays them out at the precision that read back: 15 for the
 * shortest of up to 15 digits, else their count.
 *
 * Schubfach, as the paper has it: v = c 2^q; k = floor(log10 |R|) (|R| = 2^q, or 3/4 2^q
 * below a power of two), so that R is between 1 and 10 units of 10^k wide; the three
 * numbers 4 v 10^-k and 4 10^-k times R's ends are computed by rounding to odd (the floor,
 * its last bit set when inexact, which keeps every comparison with an even integer exact)
 * the product of 4c - 2 (- 1 below a power of two), 4c, 4c + 2, shifted left by h, with
 * g(k) = 10^-k 2^-r rounded up to 126 bits (sim/base/jsonw_pow10.h, written by
 * tools/gen-pow10-table); the paper proves that this product, its fraction taken to 63
 * bits as rop() takes it, is the round to odd of the exact value for every double.
 * R, less than 10 units wide, holds at most one multiple of 10: when it holds one, that is
 * the shortest (R holds no shorter decimal that is not one); else the shortest has as many
 * digits as s = floor(v 10^-k), and it is s or s + 1, the closer in R (ties to even).
 * tests/test_format.c compares the two on millions of doubles of every kind. */

static const char *fmt_search(double v, char *buf)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    return buf;
}

/* floor(q log10 2), floor(log10(3/4 2^q)) and floor(e log2 10), exact where they are used
 * (|q| <= 1100, |e| <= 400: tests/test_format.c checks every one). */
int sv__flog10_pow2(int q)
{
    return (int)(((int64_t)q * 315653) >> 20);
}

int sv__flog10_3q_pow2(int q)
{
    return (int)(((int64_t)q * 315653 - 130820) >> 20);
}

int sv__flog2_pow10(int e)
{
    return (int)(((int64_t)e * 14267572527LL) >> 32);
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;

/* The round to odd of g x / 2^127 as the paper computes it: g = g1 2^63 + g0 (63-bit
 * halves), the fraction kept to 63 bits (z), the product's lower bits dropped. */
static uint64_t rop(uint64_t g1, uint64_t g0, uint64_t x)
{
    uint64_t x1 = (uint64_t)(((u128)g0 * x) >> 64);
    u128 y = (u128)g1 * x;
    uint64_t z = ((uint64_t)y >> 1) + x1;
    uint64_t ip = (uint64_t)(y >> 64) + (z >> 63);
    return ip | ((z & ~(1ULL << 63)) != 0);
}

/* %.{prec}g's layout at p of the n-digit decimal whose digits are ds[0..n) (no trailing
 * zero, n <= prec, ds readable 17 bytes on) and whose first digit's exponent is x, with
 * ".0" after an integer, as the search adds it; the end. Writes up to 40 bytes from p. */
static char *layout(char *p, const char *ds, int n, int prec, int x)
{
    if (x < -4 || x >= prec) { /* d.ddde+XX */
        p[0] = ds[0];
        p[1] = '.';
        memcpy(p + 2, ds + 1, 16);
        p += n > 1 ? n + 1 : 1;
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100) *p++ = (char)('0' + ax / 100);
        *p++ = (char)('0' + ax / 10 % 10);
        *p++ = (char)('0' + ax % 10);
    } else if (x >= 0) {
        memcpy(p, ds, 17);
        if (n > x + 1) { /* ddd.ddd */
            p[x + 1] = '.';
            memcpy(p + x + 2, ds + x + 1, 16);
            p += n + 1;
        } else { /* ddd000.0: x + 1 integer digits */
            memset(p + n, '0', 17);
            p += x + 1;
            *p++ = '.';
            *p++ = '0';
        }
    } else { /* 0.000ddd */
        memcpy(p, "0.0000", 6);
        p += 1 - x;
        memcpy(p, ds, 17);
        p += n;
    }
    return p;
}

static const char PAIRS[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* The 17 digits of d < 10^17 into dig[0..17): the first, then two groups of 8 with two
 * digits per multiplication. For x < 10^8, t = x (floor(2^57 / 10^6) + 1) is x / 10^6 in
 * units of 2^-57 with an error below 10^8 / 2^57 < 7e-10; the integer part of t / 2^57 is
 * x's first two digits, and each multiplication by 100 of the fraction (exact in 64 bits:
 * below 2^57 times 100) gives the next two with the error grown to at most 7e-4 of one. */
static void digits17(char *dig, uint64_t d)
{
    const uint64_t mask = (1ULL << 57) - 1, m = 144115188076ULL;
    uint64_t hi = d / 100000000;
    dig[0] = (char)('0' + hi / 100000000);
    uint64_t t = (hi % 100000000) * m, u = (d % 100000000) * m;
    for (int i = 1; i < 9; i += 2) {
        memcpy(dig + i, PAIRS + 2 * (t >> 57), 2);
        memcpy(dig + 8 + i, PAIRS + 2 * (u >> 57), 2);
        t = (t & mask) * 100;
        u = (u & mask) * 100;
    }
}

/* The search's answer for finite v at p (48 bytes), or NULL for the doubles left to it
 * (above); the end. */
static char *put_shortest(char *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (bits >> 63) *p++ = '-';
    uint64_t frac = bits & ((1ULL << 52) - 1);
    int bexp = (int)((bits >> 52) & 0x7ff);
    if (bexp == 0) {
        if (frac) return NULL; /* subnormal */
        memcpy(p, "0.0", 3);   /* %.15g of zero is "0" */
        return p + 3;
    }
    uint64_t c = frac | (1ULL << 52);
    int q = bexp - 1075; /* |v| = c 2^q */
    int lopsided = frac == 0 && bexp > 1;
    uint64_t open = c & 1; /* R's ends read back to v iff c is even */
    uint64_t cb = c << 2, cbr = cb + 2, cbl = lopsided ? cb - 1 : cb - 2;
    int k = lopsided ? sv__flog10_3q_pow2(q) : sv__flog10_pow2(q);
    int h = q + sv__flog2_pow10(-k) + 2; /* 2..5: cb << h < 2^61 */
    uint64_t g1 = SV__G[k - SV__G_KMIN][0], g0 = SV__G[k - SV__G_KMIN][1];
    uint64_t vb = rop(g1, g0, cb << h), vbl = rop(g1, g0, cbl << h), vbr = rop(g1, g0, cbr << h);
    uint64_t s = vb >> 2, f;
    /* the multiple of 10 in R, if one is: it or the next below v (s >= 10^15 here) */
    uint64_t sp10 = s / 10 * 10, tp10 = sp10 + 10;
    int upin = vbl + open <= sp10 << 2, wpin = (tp10 << 2) + open <= vbr;
    if (upin != wpin) {
        f = upin ? sp10 : tp10;
    } else { /* s or s + 1, the closer in R (one of them is: R is a unit wide at least) */
        uint64_t t = s + 1;
        int uin = vbl + open <= s << 2, win = (t << 2) + open <= vbr;
        if (uin != win)
            f = uin ? s : t;
        else
            f = vb < 2 * (s + t) || (vb == 2 * (s + t) && !(s & 1)) ? s : t;
    }
    char dig[40]; /* f's 17 digits (a leading zero for 16), zeros after for layout() */
    digits17(dig, f);
    memset(dig + 17, '0', sizeof dig - 17);
    int lead = f < 10000000000000000ULL; /* 10^15 <= f < 10^17: a leading zero of 17 */
    int n = 17 - lead, x = k + n - 1;    /* v ~ f 10^k: its first digit's exponent */
    const char *ds = dig + lead;
    while (ds[n - 1] == '0')
        n--;
    if (n == 16 && lopsided) return NULL;
    return layout(p, ds, n, n < 15 ? 15 : n, x);
}

const char *sv__fmt_shortest(double v, char *buf)
{
    char t[48], *end = put_shortest(t, v);
    if (!end) return NULL;
    memcpy(buf, t, (size_t)(end - t));
    buf[end - t] = '\0';
    return buf;
}
#else
const char *sv__fmt_shortest(double v, char *buf)
{
    (void)v;
    (void)buf;
    return NULL;
}
#endif

void sv__jw_put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void sv__jw_init(sv_jw_t *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->first[0] = 1;
    w->len = 0;
    w->cache = NULL;
}

void sv__jw_flush(sv_jw_t *w)
{
    if (w->len) fwrite(w->buf, 1, w->len, w->f);
    w->len = 0;
}

void sv__jw_key(sv_jw_t *w, const char *key)
{
    sv__jw_flush(w);
    if (w->depth > 0) {
        if (!w->first[w->depth]) fputs(", ", w->f);
        w->first[w->depth] = 0;
    }
    if (key) {
        sv__jw_put_string(w->f, key);
        fputs(": ", w->f);
    }
}

static void open_(sv_jw_t *w, const char *key, char c)
{
    sv__jw_key(w, key);
    fputc(c, w->f);
    if (w->depth < 63) w->depth++;
    w->first[w->depth] = 1;
}

void sv__jw_obj(sv_jw_t *w, const char *key)
{
    open_(w, key, '{');
}

void sv__jw_arr(sv_jw_t *w, const char *key)
{
    open_(w, key, '[');
}

void sv__jw_end_obj(sv_jw_t *w)
{
    sv__jw_flush(w);
    fputc('}', w->f);
    w->depth--;
}

void sv__jw_end_arr(sv_jw_t *w)
{
    sv__jw_flush(w);
    fputc(']', w->f);
    w->depth--;
}

/* Room for an item (64 bytes) at the end of the items' buffer, after its separator (none
 * for the first); where it goes. */
static char *item_at(sv_jw_t *w)
{
    if (w->len > sizeof w->buf - 64) sv__jw_flush(w);
    char *p = w->buf + w->len;
    if (!w->first[w->depth]) {
        *p++ = ',';
        *p++ = ' ';
    }
    w->first[w->depth] = 0;
    return p;
}

/* The text of finite v at p (48 bytes); the end. */
static char *put_double(char *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (!(bits << 1)) { /* zero (most queue times): what put_shortest() writes, sooner */
        if (bits) *p++ = '-';
        memcpy(p, "0.0", 3);
        return p + 3;
    }
#ifdef __SIZEOF_INT128__
    char *end = put_shortest(p, v);
    if (end) return end;
#endif
    fmt_search(v, p);
    return p + strlen(p);
}

const char *sv__fmt_double(double v, char *buf)
{
    if (!isfinite(v)) return fmt_search(v, buf);
    char t[48], *end = put_double(t, v);
    memcpy(buf, t, (size_t)(end - t));
    buf[end - t] = '\0';
    return buf;
}

/* Items of arrays (the per-request lists: most of what a detailed result holds) are laid
 * out in the writer's buffer, written when it fills and before anything else. */
static void num_keyed(sv_jw_t *w, const char *key, double v)
{
    char buf[48];
    sv__jw_key(w, key);
    fputs(isfinite(v) ? sv__fmt_double(v, buf) : "null", w->f);
}

void sv__jw_num(sv_jw_t *w, const char *key, double v)
{
    if (key || w->depth == 0) {
        num_keyed(w, key, v);
        return;
    }
    char *p = item_at(w);
    if (isfinite(v)) {
        p = put_double(p, v);
    } else {
        memcpy(p, "null", 4);
        p += 4;
    }
    w->len = (size_t)(p - w->buf);
}

static size_t slot_of(uint64_t bits)
{
    return (size_t)((bits * 0x9E3779B97F4A7C15ULL) >> (64 - SV__FMTCACHE_BITS));
}

sv_fmtcache_t *sv__fmtcache_new(void)
{
    sv_fmtcache_t *c = malloc(sizeof *c);
    /* empty: bits whose slot is another (zero's slot is 0, the least subnormal's is not),
     * which no lookup compares with */
    for (size_t i = 0; c && i < sizeof c->e / sizeof c->e[0]; i++)
        c->e[i].bits = i == slot_of(0) ? 1 : 0;
    return c;
}

void sv__fmtcache_free(sv_fmtcache_t *c)
{
    free(c);
}

size_t sv__fmtcache_slot(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return slot_of(bits);
}

/* A miss: the text of v (finite or not: "null") at p (48 bytes), entered into e when it
 * is finite and short enough; the end. */
static char *cache_miss(sv_fmtslot_t *e, char *p, double v, uint64_t bits)
{
    if (!isfinite(v)) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    char *end = put_double(p, v);
    size_t len = (size_t)(end - p);
    if (len <= 23) {
        e->bits = bits;
        memcpy(e->text, p, 24); /* p's 48 bytes: the text and what follows */
        e->text[23] = (char)len;
    }
    return end;
}

/* The text of v at p (48 bytes) through c: "null" when v is not finite; the end. */
static char *cached(sv_fmtcache_t *c, char *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    sv_fmtslot_t *e = &c->e[slot_of(bits)];
    if (e->bits != bits) return cache_miss(e, p, v, bits);
    memcpy(p, e->text, 24);
    return p + (unsigned char)e->text[23];
}

char *sv__fmtcache_put(sv_fmtcache_t *c, char *p, double v)
{
    return cached(c, p, v);
}

void sv__jw_nums(sv_jw_t *w, const double *v, size_t n)
{
    if (!n) return;
    sv_fmtcache_t *c = w->cache;
    char *p = item_at(w);
    for (size_t i = 0;;) {
        if (c) {
            p = cached(c, p, v[i]);
        } else if (isfinite(v[i])) {
            p = put_double(p, v[i]);
        } else {
            memcpy(p, "null", 4);
            p += 4;
        }
        if (++i == n) break;
        if ((size_t)(p - w->buf) > sizeof w->buf - 64) { /* as item_at() makes room */
            w->len = (size_t)(p - w->buf);
            sv__jw_flush(w);
            p = w->buf;
        }
        memcpy(p, ", ", 2);
        p += 2;
    }
    w->len = (size_t)(p - w->buf);
}

/* printf's %ld of v into p (>= 21 bytes); the end. */
static char *fmt_long(long v, char *p)
{
    char dig[20];
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    int n = 0;
    do {
        dig[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *p++ = '-';
    while (n)
        *p++ = dig[--n];
    return p;
}

void sv__jw_int(sv_jw_t *w, const char *key, long v)
{
    if (key || w->depth == 0) {
        char buf[32];
        sv__jw_key(w, key);
        fwrite(buf, 1, (size_t)(fmt_long(v, buf) - buf), w->f);
        return;
    }
    w->len = (size_t)(fmt_long(v, item_at(w)) - w->buf);
}

void sv__jw_null(sv_jw_t *w, const char *key)
{
    sv__jw_key(w, key);
    fputs("null", w->f);
}

void sv__jw_str(sv_jw_t *w, const char *key, const char *s)
{
    sv__jw_key(w, key);
    sv__jw_put_string(w->f, s);
}

void sv__jw_items(sv_jw_t *w, const char *items, size_t len)
{
    if (len < 2) return;
    if (w->first[w->depth]) { /* the array's first item: no separator */
        items += 2;
        len -= 2;
        w->first[w->depth] = 0;
    }
    if (w->len + len > sizeof w->buf) {
        sv__jw_flush(w);
        if (len > sizeof w->buf / 2) { /* a long run: straight out, not through the buffer */
            fwrite(items, 1, len, w->f);
            return;
        }
    }
    memcpy(w->buf + w->len, items, len);
    w->len += len;
}
