/*
 * The streaming JSON writer (see jsonw_int.h).
 */
#include "base/jsonw_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ----------------------------------------------------------------------------
 *
 * The text of a double is defined as what this three-step search gives: printf's %.15g,
 * else %.16g, else %.17g, the first that strtod reads back to the same double, with ".0"
 * when that has neither a point nor an exponent. Up to 15 digits this is the shortest
 * text that reads back (there is at most one 15-digit decimal in a double's rounding
 * interval, and %.15g finds it); past 15 it is the correctly rounded 16-digit decimal
 * when that reads back, else 17 digits: the shortest except for powers of two whose
 * rounding interval is lopsided, where Ryu or Python's repr may pick another 16-digit
 * decimal. So the search is the spec, and fmt_exact below computes its answer in one
 * pass of exact integer arithmetic instead of up to three printf and strtod calls:
 *
 *   v = m 2^e, scaled by 10^k so that q = floor(v 10^k) has 17 digits, v 10^k = q + r/2^s;
 *   the correctly rounded N-digit decimal (printf: ties to even) is q / 10^(17-N), rounded
 *   by comparing the dropped part with one half, exactly;
 *   it reads back iff its distance to v is below half an ulp (a quarter below a power of
 *   two), or equal to it with m even (strtod: ties to even);
 *   the digits are laid out as %g lays them out at precision N.
 *
 * Everything fits in 128-bit integers for 1e-6 <= |v| < 1e17 (k <= 22, s <= 72), which
 * covers the times, latencies, rates and ratios servesim writes; other values (and
 * compilers without 128-bit integers) take the three-step search itself. Debian packages
 * no C implementation of Ryu or its successors (only Rust crates and C++ libraries), and
 * a shortest-digits algorithm would not give these bytes anyway; tests/test_format.c
 * checks fmt_exact against the search on millions of doubles. */

static const char *fmt_search(double v, char *buf)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    return buf;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;

static const uint64_t POW10[20] = {1ULL,
                                   10ULL,
                                   100ULL,
                                   1000ULL,
                                   10000ULL,
                                   100000ULL,
                                   1000000ULL,
                                   10000000ULL,
                                   100000000ULL,
                                   1000000000ULL,
                                   10000000000ULL,
                                   100000000000ULL,
                                   1000000000000ULL,
                                   10000000000000ULL,
                                   100000000000000ULL,
                                   1000000000000000ULL,
                                   10000000000000000ULL,
                                   100000000000000000ULL,
                                   1000000000000000000ULL,
                                   10000000000000000000ULL};

static u128 pow10_128(int k) /* 0 <= k <= 38 */
{
    return k <= 19 ? (u128)POW10[k] : (u128)POW10[19] * POW10[k - 19];
}

/* %.{n}g's layout of the n-digit decimal d x 10^x / 10^(n-1) (10^(n-1) <= d < 10^n) into p,
 * with ".0" after an integer, as the search adds it. */
static void layout(char *p, uint64_t d, int n, int x)
{
    static const char PAIRS[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char dig[20];
    int k = n;
    for (; k >= 2; k -= 2) { /* two digits per division */
        memcpy(dig + k - 2, PAIRS + 2 * (d % 100), 2);
        d /= 100;
    }
    if (k) dig[0] = (char)('0' + d);
    int nd = n;
    while (nd > 1 && dig[nd - 1] == '0') /* %g drops trailing zeros */
        nd--;
    if (x < -4 || x >= n) { /* d.ddde+XX */
        *p++ = dig[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, dig + 1, (size_t)nd - 1);
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100) *p++ = (char)('0' + ax / 100);
        *p++ = (char)('0' + ax / 10 % 10);
        *p++ = (char)('0' + ax % 10);
    } else if (x >= 0) { /* ddd[.ddd]: x + 1 integer digits, padded with zeros */
        for (int i = 0; i <= x; i++)
            *p++ = i < nd ? dig[i] : '0';
        *p++ = '.';
        if (nd > x + 1) {
            memcpy(p, dig + x + 1, (size_t)(nd - x - 1));
            p += nd - x - 1;
        } else {
            *p++ = '0';
        }
    } else { /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -x - 1; i++)
            *p++ = '0';
        memcpy(p, dig, (size_t)nd);
        p += nd;
    }
    *p = '\0';
}

/* The search's answer for finite v, or NULL when v is outside the fast range. */
static const char *fmt_exact(double v, char *buf)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    char *p = buf;
    if (bits >> 63) *p++ = '-';
    uint64_t frac = bits & ((1ULL << 52) - 1);
    int bexp = (int)((bits >> 52) & 0x7ff);
    if (bexp == 0) {
        if (frac) return NULL; /* subnormal */
        memcpy(p, "0.0", 4);   /* %.15g of zero is "0" */
        return buf;
    }
    uint64_t m = frac | (1ULL << 52);
    int e = bexp - 1075; /* |v| = m 2^e */
    int E = e + 52;      /* 2^E <= |v| < 2^(E+1) */
    if (E < -20 || E > 56) return NULL;
    /* floor(E log10 2), exact for |E| < 2620: 10^x <= |v| < 10^(x+2) */
    int x = (int)(((int64_t)E * 315653) >> 20);
    int s = e < 0 ? -e : 0;
    uint64_t q = 0;
    u128 r = 0;
    for (int pass = 0; pass < 2; pass++) {
        int k = 16 - x;
        if (k < 0 || k > 22) return NULL;
        u128 P = e < 0 ? (u128)m * pow10_128(k) : ((u128)m << e) * pow10_128(k);
        u128 Q = P >> s;
        r = P - (Q << s);
        if (Q >= POW10[17]) { /* 10^(x+1) <= |v|: one digit too many */
            x++;
            continue;
        }
        q = (uint64_t)Q;
        break;
    }
    if (q < POW10[16] || q >= POW10[17]) return NULL;
    /* Half an ulp above and below, in units of 10^-k 2^-s, times 4. */
    int k = 16 - x;
    u128 ulp = pow10_128(k) << (e < 0 ? 0 : e);
    u128 up4 = 2 * ulp, down4 = (m == 1ULL << 52 && bexp > 1) ? ulp : 2 * ulp;
    int even = !(m & 1);
    for (int n = 15; n <= 17; n++) {
        uint64_t pw = POW10[17 - n];
        uint64_t d = q / pw, rem = q % pw;
        /* the dropped part (rem + r/2^s) / pw against one half */
        u128 twice = ((u128)rem << (s + 1)) + 2 * r, whole = (u128)pw << s;
        if (twice > whole || (twice == whole && (d & 1))) d++;
        /* distance to v: (d pw - q) 2^s - r */
        u128 dp = (u128)d * pw, dist;
        int above = 1;
        if (dp >= q) {
            u128 hi = (dp - q) << s;
            above = hi >= r;
            dist = above ? hi - r : r - hi;
        } else {
            dist = (((u128)q - dp) << s) + r;
            above = 0;
        }
        u128 d4 = 4 * dist, lim = above ? up4 : down4;
        if (d4 < lim || (d4 == lim && even)) {
            int xn = x;
            if (d == POW10[n]) { /* rounded up to 10^n */
                d = POW10[n - 1];
                xn++;
            }
            layout(p, d, n, xn);
            return buf;
        }
    }
    return NULL;
}
#endif

const char *sv__fmt_double(double v, char *buf)
{
#ifdef __SIZEOF_INT128__
    if (isfinite(v) && fmt_exact(v, buf)) return buf;
#endif
    return fmt_search(v, buf);
}

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
}

void sv__jw_key(sv_jw_t *w, const char *key)
{
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
    fputc('}', w->f);
    w->depth--;
}

void sv__jw_end_arr(sv_jw_t *w)
{
    fputc(']', w->f);
    w->depth--;
}

/* The separator an item inside an array takes into p (none for the first); the end. */
static char *item_sep(sv_jw_t *w, char *p)
{
    if (!w->first[w->depth]) {
        *p++ = ',';
        *p++ = ' ';
    }
    w->first[w->depth] = 0;
    return p;
}

/* Items of arrays (the per-request lists: most of what a detailed result holds) are laid
 * out with their separator in one buffer and written with one fwrite. */
void sv__jw_num(sv_jw_t *w, const char *key, double v)
{
    char buf[40];
    if (key || w->depth == 0) {
        sv__jw_key(w, key);
        fputs(isfinite(v) ? sv__fmt_double(v, buf) : "null", w->f);
        return;
    }
    char *p = item_sep(w, buf);
    if (isfinite(v))
        sv__fmt_double(v, p);
    else
        memcpy(p, "null", 5);
    fwrite(buf, 1, strlen(buf), w->f);
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
    char buf[32];
    char *p = buf;
    if (key || w->depth == 0)
        sv__jw_key(w, key);
    else
        p = item_sep(w, p);
    p = fmt_long(v, p);
    fwrite(buf, 1, (size_t)(p - buf), w->f);
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
