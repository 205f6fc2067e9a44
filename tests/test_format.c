/*
 * The number text of every JSON, CSV and Prometheus writer (sv__fmt_double): the one-pass
 * shortest-digits formatter must give, byte for byte, what its definition gives (printf
 * %.15g, else %.16g, else %.17g, the first that strtod reads back, with ".0" after an
 * integer). The definition is restated below as the reference, the routine the writers
 * ran before, and both run on doubles of every kind: random bit patterns (every exponent,
 * subnormals), the range servesim writes, short decimals and what arithmetic makes of
 * them, integers, ties of the roundings, every power of two and of ten with neighbours,
 * the ends of the range and the values around %g's switches to exponent form. The
 * one-pass part (sv__fmt_shortest) must answer for every double but the ones its header
 * comment leaves to the search. The writer's cache of number texts (sv__fmtcache_put) gives
 * the formatter's bytes on a hit and a miss, and a double whose slot is taken replaces it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw_int.h"
#include "testutil.h"

static const char *reference(double v, char *buf)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    return buf;
}

static long checked, deferred;

static int digits(const char *t) /* significant digits of a %g text */
{
    int n = 0, lead = 1;
    for (; *t && *t != 'e'; t++) {
        if (*t < '0' || *t > '9') continue;
        if (*t == '0' && lead) continue;
        lead = 0;
        n++;
    }
    return n;
}

static void check(double v)
{
    char a[32], b[32], c[32];
    sv__fmt_double(v, a);
    reference(v, b);
    ck_assert_msg(strcmp(a, b) == 0, "%a: got %s, want %s", v, a, b);
    ck_assert_int_le((int)strlen(a), 24); /* the list writer's bound on an item's text */
    checked++;
    if (!sv__fmt_shortest(v, c)) {
        /* only subnormals and the powers of two whose shortest has 16 digits (the search
         * gives 16 or 17 for them) are left to the search */
        uint64_t u;
        memcpy(&u, &v, sizeof u);
        int bexp = (int)((u >> 52) & 0x7ff);
        uint64_t frac = u & ((1ULL << 52) - 1);
        ck_assert_msg(bexp == 0 || (frac == 0 && digits(b) >= 16), "%a (%s) left to the search", v,
                      b);
        deferred++;
    } else {
        ck_assert_str_eq(c, a);
    }
}

static void check_around(double v, int ulps) /* v and its ulps neighbours either side */
{
    check(v);
    double lo = v, hi = v;
    for (int i = 0; i < ulps; i++) {
        lo = nextafter(lo, -INFINITY);
        hi = nextafter(hi, INFINITY);
        if (isfinite(lo)) check(lo);
        if (isfinite(hi)) check(hi);
    }
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

START_TEST(test_hand_cases)
{
    /* Worked out by hand from the definition. */
    char buf[32];
    ck_assert_str_eq(sv__fmt_double(2.0, buf), "2.0");
    ck_assert_str_eq(sv__fmt_double(0.1, buf), "0.1");
    ck_assert_str_eq(sv__fmt_double(-0.0, buf), "-0.0");
    ck_assert_str_eq(sv__fmt_double(0.0, buf), "0.0");
    ck_assert_str_eq(sv__fmt_double(1e15, buf), "1e+15");            /* %.15g switches at 15 */
    ck_assert_str_eq(sv__fmt_double(123456789012345.0, buf), "123456789012345.0");
    ck_assert_str_eq(sv__fmt_double(0.0001, buf), "0.0001");
    ck_assert_str_eq(sv__fmt_double(0.00001234, buf), "1.234e-05");
    ck_assert_str_eq(sv__fmt_double(0.1 + 0.2, buf), "0.30000000000000004"); /* 17 digits */
    ck_assert_str_eq(sv__fmt_double(1.0 / 3.0, buf), "0.3333333333333333");  /* 16 digits */
    /* 123456789012345.5: %.15g rounds the tie to even (...346), which does not read back */
    ck_assert_str_eq(sv__fmt_double(123456789012345.5, buf), "123456789012345.5");
    ck_assert_str_eq(sv__fmt_double(1234567890123456.5, buf), "1234567890123456.5");
    ck_assert_str_eq(sv__fmt_double(100.0, buf), "100.0");
    ck_assert_str_eq(sv__fmt_double(1e16, buf), "1e+16");
    ck_assert_str_eq(sv__fmt_double(5e-324, buf), "4.94065645841247e-324"); /* subnormal */
    ck_assert_str_eq(sv__fmt_double(1e-5, buf), "1e-05"); /* %g: exponent below -4 */
    ck_assert_str_eq(sv__fmt_double(123456.0, buf), "123456.0");
    ck_assert_str_eq(sv__fmt_double(1e300, buf), "1e+300");
    ck_assert_str_eq(sv__fmt_double(1.7976931348623157e308, buf), "1.7976931348623157e+308");
    ck_assert_str_eq(sv__fmt_double(2.2250738585072014e-308, buf), "2.2250738585072014e-308");
    /* 2^-44 = 5.684341886080801486968994140625e-14, a power of two: the nearest 16-digit
     * decimal, ...801e-14, lies below it outside its lopsided interval, so %.16g does not
     * read back and the search prints 17 digits; Python's repr prints ...802e-14 */
    ck_assert_str_eq(sv__fmt_double(ldexp(1.0, -44), buf), "5.6843418860808015e-14");
    ck_assert_ptr_null(sv__fmt_shortest(ldexp(1.0, -44), buf));
}
END_TEST

/* The exponent estimates at every argument the formatter passes them, against floor of
 * the logarithm in long double, where no argument comes within 1e-9 of an integer. */
START_TEST(test_exponent_estimates)
{
    for (int q = -1100; q <= 1100; q++) {
        long double a = q * log10l(2.0L), b = a + log10l(0.75L);
        ck_assert(fabsl(a - roundl(a)) > 1e-9L || q == 0);
        ck_assert(fabsl(b - roundl(b)) > 1e-9L);
        ck_assert_int_eq(sv__flog10_pow2(q), (int)floorl(a));
        ck_assert_int_eq(sv__flog10_3q_pow2(q), (int)floorl(b));
    }
    for (int e = -400; e <= 400; e++) {
        long double a = e * log2l(10.0L);
        ck_assert(fabsl(a - roundl(a)) > 1e-9L || e == 0);
        ck_assert_int_eq(sv__flog2_pow10(e), (int)floorl(a));
    }
}
END_TEST

START_TEST(test_equals_definition)
{
    long n = getenv("SV_FORMAT_CASES") ? atol(getenv("SV_FORMAT_CASES")) : 50000;
    for (long i = 0; i < n; i++) {
        uint64_t u = next();
        double v;
        memcpy(&v, &u, sizeof v); /* any bit pattern: every exponent, subnormals */
        if (isfinite(v)) check(v);
        /* the fast range, uniformly in the exponent */
        int ex = (int)(next() % 80) - 22;
        check(ldexp((double)(next() >> 11), ex - 53 + 1) * ((next() & 1) ? 1 : -1));
        /* short decimals and what arithmetic makes of them (sums, products, quotients) */
        double d = (double)(next() % 100000000) / pow(10, (double)(next() % 12));
        check(d);
        check(d * 1e3);
        check(d / 7.0);
        check(d + 0.1);
        /* ties of the 15-, 16- and 17-digit roundings: integers and halves near 1e14-1e17 */
        double big = floor(ldexp(1.0, 46 + (int)(next() % 11)) * (1.0 + (double)(next() % 1000) / 1000));
        check(big + 0.5);
        check(big + 0.25);
        check(big);
        /* integers: small ones, and any up to 2^53 and past it */
        check((double)(next() % 1000000));
        check((double)(next() >> (11 + next() % 40)));
        check((double)(next() >> (next() % 11)));
        /* subnormals, and the top and bottom of the normal range */
        uint64_t sub = next() >> 12;
        memcpy(&v, &sub, sizeof v);
        check(v);
        check(ldexp(1.0 + (double)(next() >> 12) / 0x1p52, 1023 - (int)(next() % 8)));
        check(ldexp(1.0 + (double)(next() >> 12) / 0x1p52, -1022 + (int)(next() % 8)));
        /* around %g's switch to exponent form: 1e-5 and 1e15, 1e16, 1e17 (digits 15-17) */
        static const double SWITCH[] = {1e-5, 1e-4, 1e14, 1e15, 1e16, 1e17};
        double sw = SWITCH[next() % 6];
        check(sw * (1.0 + ((double)(next() % 2000000) - 1e6) * 1e-12));
        check(sw * (1.0 - (double)(next() % 1000) * 0x1p-52));
    }
    /* powers of two (lopsided rounding intervals) and their neighbours */
    for (int e = -1074; e <= 1023; e++)
        check_around(ldexp(1.0, e), 3);
    /* powers of ten (as strtod reads 1eN) and their neighbours, where the digit count changes */
    char t[32];
    for (int e = -323; e <= 308; e++) {
        snprintf(t, sizeof t, "1e%d", e);
        check_around(strtod(t, NULL), 2);
    }
    /* the ends: least subnormal, greatest subnormal, least normal, greatest double; the
     * integers around 2^53 and %.15g's last integers */
    check_around(0x1p-1074, 3);
    check_around(0x1.ffffffffffffep-1023, 3);
    check_around(0x1p-1022, 3);
    check_around(0x1.fffffffffffffp1023, 3);
    check_around(0x1p53, 4);
    check_around(999999999999999.0, 4);
    check_around(9999999999999999.0, 4);
    for (int i = 0; i <= 4096; i++)
        check((double)i / 64);
    /* runs of consecutive doubles in the binades of latencies and times (and a few far
     * off): they take v through every place between two multiples of 10 units of 10^k, of
     * either parity, where the one-pass part decides from v alone, near R's ends, where it
     * computes them, and between */
    static const double RUNS[] = {0.0625, 0.1, 0.125, 0.3, 0.5,  0.7,   1.0,  1.5, 2.0,  3.0,
                                  4.0,    5.0, 8.0,   9.9, 16.0, 100.0, 1e-3, 7e5, 3e22, 2e-200};
    for (size_t r = 0; r < sizeof RUNS / sizeof RUNS[0]; r++) {
        double v = RUNS[r];
        for (int i = 0; i < 2000; i++, v = nextafter(v, INFINITY))
            check(v);
    }
    /* the digits' edges (runs of 9s and 0s: where digits read from a fixed-point fraction
     * too low or too high would carry or borrow), in every layout */
    static const int EXP[] = {-330, -300, -22, -21, -20, -18, -17, -16, -15, -10, 0, 10, 290};
    for (int a = 1; a <= 9; a++)
        for (int j = 1; j <= 16; j++)
            for (int fill = 0; fill < 4; fill++)
                for (size_t e = 0; e < sizeof EXP / sizeof EXP[0]; e++) {
                    char ds[18];
                    ds[0] = (char)('0' + a);
                    for (int i = 1; i < 17; i++)
                        ds[i] = i < j ? "9090"[fill] : "0999"[fill];
                    if (fill == 2) ds[16] = '1';
                    ds[17] = '\0';
                    snprintf(t, sizeof t, "%se%d", ds, EXP[e]);
                    check_around(strtod(t, NULL), 1);
                }
    ck_assert(checked > 16 * n);
    /* left to the search: the subnormals (one in 17 here) and some powers of two */
    ck_assert(deferred > 0 && deferred < checked / 10);
    printf("format: %ld doubles checked, %ld of them left to the search\n", checked, deferred);
}
END_TEST

/* The text of v through c, checked against the formatter; the slot's bits after. */
static uint64_t through_cache(sv_fmtcache_t *c, double v)
{
    char want[48], got[64];
    sv__fmt_double(v, want);
    memset(got, 'Z', sizeof got);
    char *end = sv__fmtcache_put(c, got, v);
    ck_assert_int_eq((int)(end - got), (int)strlen(want));
    *end = '\0';
    ck_assert_str_eq(got, want);
    return c->e[sv__fmtcache_slot(v)].bits;
}

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

START_TEST(test_number_cache)
{
    sv_fmtcache_t *c = sv__fmtcache_new();
    ck_assert_ptr_nonnull(c);
    double v = 0.012345678901234567; /* an ITL's 17 digits */
    size_t s = sv__fmtcache_slot(v);
    double held; /* empty: what the slot holds belongs to another, so no lookup matches it */
    memcpy(&held, &c->e[s].bits, sizeof held);
    ck_assert_uint_ne(sv__fmtcache_slot(held), s);
    ck_assert_uint_eq(through_cache(c, v), bits_of(v)); /* a miss enters v */
    ck_assert_int_eq(c->e[s].text[23], 20);
    ck_assert_uint_eq(through_cache(c, v), bits_of(v)); /* a hit: the same bytes */
    /* and a hit is the slot's text, not a second formatting */
    char got[64];
    c->e[s].text[0] = '7';
    ck_assert_int_eq(sv__fmtcache_put(c, got, v) - got, 20);
    ck_assert_int_eq(memcmp(got, "7.012345678901234567", 20), 0);
    c->e[s].text[0] = '0';
    /* a collision: the next double up sharing v's slot replaces it, and v is a miss again */
    double u = v;
    do
        u = nextafter(u, 1.0);
    while (sv__fmtcache_slot(u) != s);
    ck_assert_uint_eq(through_cache(c, u), bits_of(u));
    ck_assert_uint_eq(through_cache(c, v), bits_of(v));
    /* zeros, integers; a 24-byte text is formatted but not entered */
    ck_assert_uint_eq(through_cache(c, 0.0), 0);
    ck_assert_uint_eq(through_cache(c, -0.0), bits_of(-0.0));
    ck_assert_uint_eq(through_cache(c, 100.0), bits_of(100.0));
    double lng = -2.2250738585072014e-308;
    uint64_t before = c->e[sv__fmtcache_slot(lng)].bits;
    ck_assert_uint_eq(through_cache(c, lng), before);
    ck_assert_uint_ne(before, bits_of(lng));
    /* an array's items through the writer: the same file with and without the cache */
    const double items[] = {v, u, v, 0.25, NAN, -0.0, v, 1e300, u};
    char text[2][512];
    for (int k = 0; k < 2; k++) {
        FILE *f = tmpfile();
        ck_assert_ptr_nonnull(f);
        sv_jw_t w;
        sv__jw_init(&w, f);
        w.cache = k ? c : NULL;
        sv__jw_arr(&w, NULL);
        sv__jw_nums(&w, items, 3);
        sv__jw_nums(&w, items + 3, sizeof items / sizeof items[0] - 3);
        sv__jw_end_arr(&w);
        rewind(f);
        size_t n = fread(text[k], 1, sizeof text[k] - 1, f);
        text[k][n] = '\0';
        fclose(f);
    }
    char us[48], want[512];
    sv__fmt_double(u, us);
    snprintf(want, sizeof want, "[%s, %s, %s, 0.25, null, -0.0, %s, 1e+300, %s]",
             "0.012345678901234567", us, "0.012345678901234567", "0.012345678901234567", us);
    ck_assert_str_eq(text[0], want);
    ck_assert_str_eq(text[1], text[0]);
    sv__fmtcache_free(c);
}
END_TEST

/* The list writer's runs of items across its buffer's flushes: 3,000 items of every length
 * (zeros, null, the 24-byte texts, 17 digits, short ones) in calls of up to 256, with and
 * without the cache, against the formatter's texts joined by hand. */
START_TEST(test_list_items)
{
    enum { N = 3000 };
    static double items[N];
    static char want[N * 26 + 3], got[2][N * 26 + 3];
    for (int i = 0; i < N; i++) {
        uint64_t u = next();
        double v;
        memcpy(&v, &u, sizeof v);
        switch (i % 7) {
        case 0: items[i] = 0.0; break;
        case 1: items[i] = isfinite(v) ? v : NAN; break;
        case 2: items[i] = -2.2250738585072014e-308 * (1 + (double)(i % 5)); break;
        case 3: items[i] = (double)(u >> 11) * 0x1p-53 * 4; break;
        case 4: items[i] = i % 2 ? (double)(u % 1000) / 8 : -0.00012345678901234567 * (1 + (double)(u % 7) / 9); break;
        case 5: items[i] = -0x1p-1074 * (double)(u % 3 + 1); break;
        default: items[i] = 1e300 * (double)(u % 9); break;
        }
    }
    char *p = want, num[48];
    *p++ = '[';
    for (int i = 0; i < N; i++) {
        const char *s = isfinite(items[i]) ? sv__fmt_double(items[i], num) : "null";
        ck_assert_int_le((int)strlen(s), 24);
        p += sprintf(p, "%s%s", i ? ", " : "", s);
    }
    strcpy(p, "]");
    sv_fmtcache_t *c = sv__fmtcache_new();
    ck_assert_ptr_nonnull(c);
    for (int k = 0; k < 2; k++) {
        FILE *f = tmpfile();
        ck_assert_ptr_nonnull(f);
        struct {
            sv_jw_t w;
            char guard[1024]; /* what follows the buffer: untouched */
        } g;
        memset(g.guard, 'G', sizeof g.guard);
        sv_jw_t *wp = &g.w;
        sv__jw_init(wp, f);
        wp->cache = k ? c : NULL;
        sv__jw_arr(wp, NULL);
        for (int i = 0, m = 1; i < N; i += m, m = m * 2 % 257) /* calls of 1, 2, 4, ... 256, 255, ... */
            sv__jw_nums(wp, items + i, (size_t)(N - i < m ? N - i : m));
        sv__jw_end_arr(wp);
        for (size_t i = 0; i < sizeof g.guard; i++)
            ck_assert_int_eq(g.guard[i], 'G');
        rewind(f);
        size_t n = fread(got[k], 1, sizeof got[k] - 1, f);
        got[k][n] = '\0';
        fclose(f);
        ck_assert_str_eq(got[k], want);
    }
    sv__fmtcache_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("doubles");
    tcase_set_timeout(tc, getenv("SV_FORMAT_CASES") ? 3600 : 60);
    tcase_add_test(tc, test_hand_cases);
    tcase_add_test(tc, test_exponent_estimates);
    tcase_add_test(tc, test_equals_definition);
    tcase_add_test(tc, test_number_cache);
    tcase_add_test(tc, test_list_items);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
