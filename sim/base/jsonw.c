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
 * For most doubles R's ends need not be computed: put_normal() decides from 4 v 10^-k and
 * R's width alone where they leave no doubt (below). tests/test_format.c compares the two
 * on millions of doubles of every kind. */

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
 * (|q| <= 1100, |e| <= 400: tests/test_format.c checks every one); FLOG10_POW2_ and
 * FLOG2_POW10_ are integer constant expressions for the table of exponents below. */
#define FLOG10_POW2_(q) ((int)((315653 * (int64_t)(q)) >> 20))
#define FLOG2_POW10_(e) ((int)((14267572527LL * (int64_t)(e)) >> 32))
int sv__flog10_pow2(int q)
{
    return FLOG10_POW2_(q);
}

int sv__flog10_3q_pow2(int q)
{
    return (int)(((int64_t)q * 315653 - 130820) >> 20);
}

int sv__flog2_pow10(int e)
{
    return FLOG2_POW10_(e);
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

/* For each biased exponent b (q = b - 1075), what put_normal() needs of it (it takes no
 * power of two): g(k) for k = floor(q log10 2), k, and h = q + floor(-k log2 10) + 2 (2 to
 * 5), as sv__flog10_pow2() and sv__flog2_pow10() give them, worked out by the compiler;
 * h = 0 for the exponents of zeros and subnormals (0) and of infinities and NaNs (2047),
 * which put_normal() does not take. */
typedef struct expo {
    uint16_t g;  /* k's row of SV__G, k - SV__G_KMIN (an index: a pointer would be one more
                  * relocation for the loader in every run, 4,096 of them) */
    int16_t k16; /* k + 16 */
    uint8_t h;
    uint8_t dsh;  /* 31 - h */
    uint16_t pad; /* to 8 bytes, an index's scale */
} expo_t;
/* clang-format off */
#define EK_(b) FLOG10_POW2_((b) - 1075)
#define E1_(s) EB_((s) & 2047)
#define EB_(b) {EK_(b) - SV__G_KMIN, EK_(b) + 16, \
    (uint8_t)((b) == 0 || (b) == 2047 ? 0 : (b) - 1075 + FLOG2_POW10_(-EK_(b)) + 2), \
    (uint8_t)(31 - ((b) - 1075 + FLOG2_POW10_(-EK_(b)) + 2)), 0}
#define E2_(b) E1_(b), E1_((b) + 1)
#define E4_(b) E2_(b), E2_((b) + 2)
#define E8_(b) E4_(b), E4_((b) + 4)
#define E16_(b) E8_(b), E8_((b) + 8)
#define E32_(b) E16_(b), E16_((b) + 16)
#define E64_(b) E32_(b), E32_((b) + 32)
#define E128_(b) E64_(b), E64_((b) + 64)
#define E256_(b) E128_(b), E128_((b) + 128)
#define E512_(b) E256_(b), E256_((b) + 256)
#define E1024_(b) E512_(b), E512_((b) + 512)
static const expo_t EXPO[4096] = {E1024_(0), E1024_(1024), E1024_(2048), E1024_(3072)};
#undef EK_
#undef E1_
#undef EB_
#undef E2_
#undef E4_
#undef E8_
#undef E16_
#undef E32_
#undef E64_
#undef E128_
#undef E256_
#undef E512_
#undef E1024_
/* clang-format on */

/* The four digits of every number below 10^4, "0000" to "9999", for digits17() (laid out
 * by hand: clang-format would brace each entry's expansion). */
/* clang-format off */
#define D4_(a, b, c, d) {a, b, c, d}
#define D3_(a, b, c) D4_(a, b, c, '0'), D4_(a, b, c, '1'), D4_(a, b, c, '2'), D4_(a, b, c, '3'), \
    D4_(a, b, c, '4'), D4_(a, b, c, '5'), D4_(a, b, c, '6'), D4_(a, b, c, '7'), D4_(a, b, c, '8'), \
    D4_(a, b, c, '9')
#define D2_(a, b) D3_(a, b, '0'), D3_(a, b, '1'), D3_(a, b, '2'), D3_(a, b, '3'), D3_(a, b, '4'), \
    D3_(a, b, '5'), D3_(a, b, '6'), D3_(a, b, '7'), D3_(a, b, '8'), D3_(a, b, '9')
#define D1_(a) D2_(a, '0'), D2_(a, '1'), D2_(a, '2'), D2_(a, '3'), D2_(a, '4'), D2_(a, '5'), \
    D2_(a, '6'), D2_(a, '7'), D2_(a, '8'), D2_(a, '9')
static const char DIGITS4[10000][4] = {D1_('0'), D1_('1'), D1_('2'), D1_('3'), D1_('4'),
                                       D1_('5'), D1_('6'), D1_('7'), D1_('8'), D1_('9')};
#undef D1_
#undef D2_
#undef D3_
#undef D4_
/* clang-format on */

/* The digits of f (10^15 <= f < 10^17) at p: 17, or 16 when lead (f < 10^16); the end.
 * The digits come out of t = f 2^64 / 10^17 in 64-bit fixed point, the first by a
 * multiplication by 10 (the integer part of the 128-bit product), each next four by one by
 * 10^4 of what is left, read from DIGITS4. With t above the exact value by d units of
 * 2^-64, the fraction after i digits is off by d 10^i 2^-64, and the digits read next are
 * right as long as that is below 10^(i - 17), what the exact fraction can lack of 1:
 * d < 2^64 / 10^17 (184.4) suffices. t = floor(f M / 2^56) + 1, M = ceil(2^120 / 10^17)
 * (below 2^64), is above the exact value by at most 1 + f / 2^56 (2.4), and below 2^64;
 * the first digit is 0 exactly when lead (10^16 - 1 is more than 2.4 units below 10^16). */
static uint64_t four_at(char *p, uint64_t t) /* four digits of t at p; what is left */
{
    u128 y = (u128)t * 10000;
    memcpy(p, DIGITS4[(size_t)(y >> 64)], 4);
    return (uint64_t)y;
}

static inline char *digits17(char *p, uint64_t f, int lead)
{
    uint64_t t = (uint64_t)(((u128)f * 0xb877aa3236a4b44aULL) >> 56) + 1;
    u128 y = (u128)t * 10;
    p[0] = (char)('0' + (uint64_t)(y >> 64));
    p += !lead;
    t = four_at(p, (uint64_t)y);
    t = four_at(p + 4, t);
    t = four_at(p + 8, t);
    four_at(p + 12, t);
    return p + 16;
}

/* The zero digits that end the 8 digit bytes at p, read as one word. */
static int zeros8(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    w ^= 0x3030303030303030ULL; /* '0' in every byte: a zero digit is a zero byte */
    if (!w) return 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_ctzll(w) >> 3; /* the last byte is the lowest */
#else
    return __builtin_clzll(w) >> 3; /* the last byte is the highest */
#endif
}

/* The zero digits that end the 16 digit bytes before end. */
static int zeros16(const char *end)
{
    int tz = zeros8(end - 8);
    return tz < 8 ? tz : 8 + zeros8(end - 16);
}

/* The paper's choice, from the ends of R computed as it computes them (4 10^-k times R's
 * ends, cbl 2^h and cbr 2^h its rounds to odd): the multiple of 10 in R if one is (tens),
 * else s or s + 1 (s = floor(vb / 4)), the closer in R. */
typedef struct choice {
    uint64_t f;
    int tens; /* f is the multiple of 10 (else it ends in a digit other than 0) */
} choice_t;
static inline __attribute__((always_inline)) choice_t choose_exact(uint64_t g1, uint64_t g0, int h,
                                                                   uint64_t cbl, uint64_t cbr,
                                                                   uint64_t vb, uint64_t open)
{
    uint64_t vbl = rop(g1, g0, cbl << h), vbr = rop(g1, g0, cbr << h);
    /* the multiple of 10 in R, if one is: it or the next below v (s >= 10^15 here) */
    uint64_t s = vb >> 2, sp10 = s / 10 * 10, tp10 = sp10 + 10;
    int upin = vbl + open <= sp10 << 2, wpin = (tp10 << 2) + open <= vbr;
    if (upin != wpin) return (choice_t){upin ? sp10 : tp10, 1};
    /* s or s + 1, the closer in R (one of them is: R is a unit wide at least); neither is
     * a multiple of 10 (that would be in R) */
    uint64_t t = s + 1;
    int uin = vbl + open <= s << 2, win = (t << 2) + open <= vbr;
    if (uin != win) return (choice_t){uin ? s : t, 0};
    return (choice_t){vb < 2 * (s + t) || (vb == 2 * (s + t) && !(s & 1)) ? s : t, 0};
}

/* %.{prec}g's layout at p of f's n digits without trailing zeros (prec 15 for the shortest
 * of up to 15 digits, else n), v ~ f 10^k, k16 = k + 16, 10^15 <= f < 10^17, with ".0"
 * after an integer as the search adds it: the digits written where they go, then moved for
 * the point; up to 34 bytes from p. f's trailing zeros are counted when tens says it is a multiple
 * of 10, else there are none. NULL for the lopsided whose shortest has 16 digits; the end. */
static inline __attribute__((always_inline)) char *put_digits(char *p, uint64_t f, int k16,
                                                              int tens, int lopsided)
{
    int lead = f < 10000000000000000ULL; /* 10^15 <= f < 10^17: a leading zero of 17 */
    int nd = 17 - lead, x = k16 - lead;  /* its first digit's exponent, k + nd - 1 */
    if (x >= 0 && x < 17) {              /* ddd.ddd or ddd000.0, if %g keeps it fixed at prec */
        char *end = digits17(p, f, lead);
        int n = tens ? nd - zeros16(end) : nd;
        if (n == 16 && lopsided) return NULL;
        if (x < 15 || x < n) {
            if (n <= x + 1) { /* x + 1 integer digits (k <= 0 here: x + 1 <= nd) */
                memcpy(p + x + 1, ".0", 2);
                return p + x + 3;
            }
            char t[16]; /* at most 16 digits after the point, one on */
            memcpy(t, p + x + 1, 16);
            p[x + 1] = '.';
            memcpy(p + x + 2, t, 16);
            return p + n + 1;
        }
        /* exponent form after all: the digits one on, for the point after the first */
        memmove(p + 1, p, 17);
    } else if (x < 0 && x >= -4) { /* 0.000ddd */
        memcpy(p, "0.000000", 8);
        char *end = digits17(p + 1 - x, f, lead);
        int n = tens ? nd - zeros16(end) : nd;
        if (n == 16 && lopsided) return NULL;
        return p + 1 - x + n;
    } else {
        digits17(p + 1, f, lead);
    }
    /* d.ddde+XX */
    int n = tens ? nd - zeros16(p + 1 + nd) : nd;
    if (n == 16 && lopsided) return NULL;
    p[0] = p[1];
    p[1] = '.';
    p += n > 1 ? n + 1 : 1;
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    int ax = x < 0 ? -x : x;
    if (ax >= 100) *p++ = (char)('0' + ax / 100);
    *p++ = (char)('0' + ax / 10 % 10);
    *p++ = (char)('0' + ax % 10);
    return p;
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
    uint64_t cb = c << 2, cbl = lopsided ? cb - 1 : cb - 2;
    int k = lopsided ? sv__flog10_3q_pow2(q) : sv__flog10_pow2(q);
    int h = q + sv__flog2_pow10(-k) + 2; /* 2..5: cb << h < 2^61 */
    uint64_t g1 = SV__G[k - SV__G_KMIN][0], g0 = SV__G[k - SV__G_KMIN][1];
    uint64_t vb = rop(g1, g0, cb << h);
    /* R's ends read back to v iff c is even */
    choice_t ch = choose_exact(g1, g0, h, cbl, cb + 2, vb, c & 1);
    return put_digits(p, ch.f, k + 16, ch.tens, lopsided);
}

/* put_shortest() for a normal double not a power of two (bits its bits): most are decided
 * from vb alone, without R's ends. R is then [V - D, V + D] in exact reals, V = 4 v 10^-k
 * (vb its round to odd: V = vb when vb is even, else within 1 of it) and D = 2^(q+1) 10^-k,
 * 2 to 20; d = g1 >> (31 - h) is D 2^32 less at most 1, more at most 2 (D 2^(126 - h) is
 * g(k) less under 1, and g1 = floor(g(k) / 2^63)). vb is a = vb - 4 floor(s / 10) 10 above
 * the multiple of 10 below it and 40 - a below the next: with m = |a - 20| and o = vb & 1,
 * the nearer is surely in R when 20 - m + o < D, both are surely out when 20 - m - o > D
 * (in units of 2^-32 with d's margins: the tests on u = m 2^32 + d), and then s and s + 1,
 * each within 4 of V, are both in R when D > 4: the closer is s when vb - 4 s < 2, s + 1
 * when above, the even one at the tie (V = vb = 4 s + 2). Else the ends decide as the
 * paper has it. */
static inline __attribute__((always_inline)) char *put_normal(char *p, uint64_t bits)
{
    if (bits >> 63) *p++ = '-';
    uint64_t cb = (bits << 12 >> 10) | (1ULL << 54); /* 4 c, |v| = c 2^q */
    const expo_t *e = &EXPO[bits >> 52];
    int k16 = e->k16, h = e->h;
    uint64_t g1 = SV__G[e->g][0], g0 = SV__G[e->g][1];
    uint64_t vb = rop(g1, g0, cb << h), s = vb >> 2, sp10 = s / 10 * 10;
    int64_t d = (int64_t)(g1 >> e->dsh), z = (int64_t)(vb - (sp10 << 2)) - 20;
    int64_t m = z < 0 ? -z : z, o = (int64_t)((vb & 1) << 32), u = (m << 32) + d;
    if (u > (20LL << 32) + 1 + o) { /* (m - o) 2^32 > 20 2^32 + 1 - d */
        return put_digits(p, z < 0 ? sp10 : sp10 + 10, k16, 1, 0);
    } else if (u + o <= (20LL << 32) - 2 && d > (4LL << 32) + 1) {
        return put_digits(p, (vb + 1 + (s & 1)) >> 2, k16, 0, 0);
    }
    choice_t ch = choose_exact(g1, g0, h, cb - 2, cb + 2, vb, bits & 1);
    return put_digits(p, ch.f, k16, ch.tens, 0);
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

static char *put_normal(char *p, uint64_t bits) /* never called: is_normal() says no */
{
    (void)bits;
    return p;
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

/* The search's text of finite v at p (48 bytes), for the doubles put_shortest() leaves to
 * it and every double without a 128-bit integer type; the end. */
static __attribute__((noinline)) char *put_search(char *p, double v)
{
    fmt_search(v, p);
    return p + strlen(p);
}

/* The item text of the doubles put_normal() does not take: powers of two, subnormals,
 * infinities and NaNs ("null"); the end. */
static __attribute__((noinline)) char *put_rare(char *p, double v)
{
    if (!isfinite(v)) {
        memcpy(p, "null", 4);
        return p + 4;
    }
#ifdef __SIZEOF_INT128__
    char *end = put_shortest(p, v);
    if (end) return end;
#endif
    return put_search(p, v);
}

/* An item's text: of v at p (48 bytes written at most), "null" when v is not finite; the
 * end. A text has 24 bytes at most ("-2.2250738585072014e-308": sign, 17 digits, point,
 * exponent of 3; tests/test_format.c checks the bound). Inlined where the lists' items are
 * written; put_double() elsewhere. */
enum { ITEM_TEXT = 24, ITEM_ROOM = 48 };
/* Whether put_normal() takes the double of these bits: normal (biased exponent 1 to 2046),
 * not a power of two; none without a 128-bit integer type. */
static inline int is_normal(uint64_t bits)
{
#ifdef __SIZEOF_INT128__
    return EXPO[bits >> 52].h && (bits << 12);
#else
    (void)bits;
    return 0;
#endif
}

static inline __attribute__((always_inline)) char *put_item(char *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (!(bits << 1)) { /* zero (most queue times): what put_shortest() writes, sooner */
        if (bits) *p++ = '-';
        memcpy(p, "0.0", 3);
        return p + 3;
    }
    return is_normal(bits) ? put_normal(p, bits) : put_rare(p, v);
}

static __attribute__((noinline)) char *put_double(char *p, double v)
{
    return put_item(p, v);
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
    w->len = (size_t)(put_double(item_at(w), v) - w->buf);
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
    char *end = put_double(p, v);
    size_t len = (size_t)(end - p);
    if (len <= 23 && isfinite(v)) {
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

/* The items go out in runs that surely fit in the buffer: each item is formatted where it
 * starts with ITEM_ROOM bytes of room and ends with its separator ", " (the last one's
 * dropped), ITEM_TEXT + 2 bytes on; so from p, with r bytes of room (r >= ITEM_ROOM), the
 * (r - ITEM_ROOM) / (ITEM_TEXT + 2) + 1 items of a run fit, without a check for each. */
void sv__jw_nums(sv_jw_t *w, const double *v, size_t n)
{
    if (!n) return;
    sv_fmtcache_t *c = w->cache;
    char *p = item_at(w), *end = w->buf + sizeof w->buf;
    for (const double *q = v, *qend = v + n;;) {
        if (end - p < ITEM_ROOM) { /* full: out, what it has ending with a separator */
            w->len = (size_t)(p - w->buf);
            sv__jw_flush(w);
            p = w->buf;
        }
        size_t m = (size_t)(end - p - ITEM_ROOM) / (ITEM_TEXT + 2) + 1;
        const double *run = (size_t)(qend - q) < m ? qend : q + m;
        if (c) {
            for (; q < run; q++) {
                p = cached(c, p, *q);
                memcpy(p, ", ", 2);
                p += 2;
            }
        } else {
            for (; q < run; q++) {
                uint64_t bits;
                memcpy(&bits, q, sizeof bits);
                if (!bits) { /* 0.0 (most queue times) with its separator, in one store */
                    memcpy(p, "0.0, \0\0", 8);
                    p += 5;
                    continue;
                }
                p = is_normal(bits) ? put_normal(p, bits) : put_rare(p, *q);
                memcpy(p, ", ", 2);
                p += 2;
            }
        }
        if (q == qend) break;
    }
    w->len = (size_t)(p - 2 - w->buf);
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
