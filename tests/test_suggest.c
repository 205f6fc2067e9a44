/*
 * Unit tests of the base layer's command-line helpers: the edit distance and "did you
 * mean" (suggest.h), and progress lines rewritten on a terminal and throttled elsewhere
 * (progress.h). Distances are worked by hand.
 */
#include "servesim/base/progress.h"
#include "servesim/base/suggest.h"
#include "testutil.h"

START_TEST(test_edit_distance)
{
    ck_assert_int_eq(sv_edit_distance("", ""), 0);
    ck_assert_int_eq(sv_edit_distance("abc", ""), 3);
    ck_assert_int_eq(sv_edit_distance("", "ab"), 2);
    ck_assert_int_eq(sv_edit_distance("rate", "rate"), 0);
    /* kitten -> sitten -> sittin -> sitting */
    ck_assert_int_eq(sv_edit_distance("kitten", "sitting"), 3);
    /* a swap of neighbours is one edit (Damerau), not two substitutions */
    ck_assert_int_eq(sv_edit_distance("ca", "ac"), 1);
    ck_assert_int_eq(sv_edit_distance("max_nmu_seqs", "max_num_seqs"), 1);
    ck_assert_int_eq(sv_edit_distance("max_num_seq", "max_num_seqs"), 1);
    ck_assert_int_eq(sv_edit_distance("--jsn", "--json"), 1);
    /* optimal string alignment: a swapped pair is not edited again, so ca -> abc is 3
     * (unrestricted Damerau-Levenshtein would say 2) */
    ck_assert_int_eq(sv_edit_distance("ca", "abc"), 3);
    ck_assert_int_eq(sv_edit_distance("sweep", "swep"), 1);
    ck_assert_int_eq(sv_edit_distance("plan", "run"), 3);
    char longs[200];
    memset(longs, 'a', sizeof longs - 1);
    longs[sizeof longs - 1] = '\0';
    ck_assert_int_eq(sv_edit_distance(longs, "a"), SV_SUGGEST_FAR);
}
END_TEST

START_TEST(test_suggest)
{
    const char *wl[] = {"trace", "num_requests", "duration_s", "rate", "input", "output"};
    ck_assert_str_eq(sv_suggest("ratee", wl, 6), "rate");
    ck_assert_str_eq(sv_suggest("ouput", wl, 6), "output");
    ck_assert_ptr_null(sv_suggest("colour", wl, 6));
    /* limit max(1, len / 3): 9 characters allow 3 edits, not 4 */
    const char *far[] = {"abcdeWXYZ"}, *near[] = {"abcdefXYZ"};
    ck_assert_ptr_null(sv_suggest("abcdefghi", far, 1));
    ck_assert_str_eq(sv_suggest("abcdefghi", near, 1), "abcdefXYZ");
    /* short words still get one edit */
    const char *hw[] = {"gpu", "tp"};
    ck_assert_str_eq(sv_suggest("tpp", hw, 2), "tp");
    ck_assert_str_eq(sv_suggest("t", hw, 2), "tp");
    /* ties go to the first; NULL entries are skipped; nothing to choose from: NULL */
    const char *tie[] = {NULL, "ab1", "ab2"};
    ck_assert_str_eq(sv_suggest("ab", tie, 3), "ab1");
    ck_assert_ptr_null(sv_suggest("ab", tie, 0));
}
END_TEST

/* What a progress sequence wrote. */
static const char *written(FILE *f, char *buf, size_t n)
{
    fflush(f);
    rewind(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    return buf;
}

START_TEST(test_progress_log)
{
    char buf[256];
    sv_progress_t p;
    /* Not a terminal, long interval: only the final state, as one full line. */
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    sv_progress_start(&p, f);
    ck_assert_int_eq(p.tty, 0);
    p.interval = 1e9;
    for (int i = 1; i <= 3; i++)
        sv_progress_update(&p, "servesim sweep: %d/3 points", i);
    sv_progress_end(&p);
    ck_assert_str_eq(written(f, buf, sizeof buf), "servesim sweep: 3/3 points\n");
    fclose(f);
    /* Interval 0: every state a line, and the end adds nothing already written. */
    f = tmpfile();
    sv_progress_start(&p, f);
    p.interval = 0;
    sv_progress_update(&p, "x %d", 1);
    sv_progress_update(&p, "x %d", 2);
    sv_progress_end(&p);
    ck_assert_str_eq(written(f, buf, sizeof buf), "x 1\nx 2\n");
    fclose(f);
}
END_TEST

START_TEST(test_progress_terminal)
{
    char buf[256];
    sv_progress_t p;
    FILE *f = tmpfile();
    sv_progress_start(&p, f);
    p.tty = 1;
    sv_progress_update(&p, "abcd %d", 10);
    sv_progress_update(&p, "ab %d", 9); /* shorter: three blanks cover the rest */
    sv_progress_end(&p);
    ck_assert_str_eq(written(f, buf, sizeof buf), "\rabcd 10\rab 9   \n");
    fclose(f);
    /* No file: nothing happens. */
    sv_progress_start(&p, NULL);
    sv_progress_update(&p, "x");
    sv_progress_end(&p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("suggest");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_edit_distance);
    tcase_add_test(tc, test_suggest);
    tcase_add_test(tc, test_progress_log);
    tcase_add_test(tc, test_progress_terminal);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
