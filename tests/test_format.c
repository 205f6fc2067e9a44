/*
 * The number text of every JSON, CSV and Prometheus writer (sv__fmt_double): the one-pass
 * exact formatter must give, byte for byte, what its definition gives (printf %.15g, else
 * %.16g, else %.17g, the first that strtod reads back, with ".0" after an integer). The
 * definition is restated below as the reference and both run on doubles of every kind.
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

static long checked;

static void check(double v)
{
    char a[32], b[32];
    sv__fmt_double(v, a);
    reference(v, b);
    ck_assert_msg(strcmp(a, b) == 0, "%a: got %s, want %s", v, a, b);
    checked++;
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
}
END_TEST

START_TEST(test_equals_definition)
{
    long n = getenv("SV_FORMAT_CASES") ? atol(getenv("SV_FORMAT_CASES")) : 60000;
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
    }
    /* powers of two (lopsided rounding intervals) and their neighbours */
    for (int e = -1074; e <= 1023; e++) {
        double p = ldexp(1.0, e);
        check(p);
        check(nextafter(p, 0));
        check(nextafter(p, INFINITY));
    }
    /* powers of ten and their neighbours, where the digit count changes */
    for (int e = -30; e <= 30; e++) {
        double p = pow(10, e);
        check(p);
        check(nextafter(p, 0));
        check(nextafter(p, INFINITY));
    }
    ck_assert(checked > 9 * n);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("doubles");
    tcase_add_test(tc, test_hand_cases);
    tcase_add_test(tc, test_equals_definition);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
