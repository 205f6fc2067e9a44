/*
 * Unit tests of the located YAML tree: values, places in error messages, strictness
 * (unknown and duplicate keys, aliases) and --set overrides.
 */
#include <math.h>

#include "servesim/base/yaml.h"
#include "testutil.h"

static const char *doc_text = "seed: 7\n"
                              "hardware:\n"
                              "  gpu: h100-sxm\n"
                              "  tp: 2\n"
                              "  tpp: 3\n"
                              "workload:\n"
                              "  rate: inf\n"
                              "  lengths: [10, 20]\n"
                              "  quoted: \"null\"\n"
                              "  empty:\n";

static sv_ydoc_t *parse(const char *text)
{
    sv_ydoc_t *doc = NULL;
    sv_error_t err;
    int rc = sv_ydoc_parse("s.yaml", text, strlen(text), &doc, &err);
    ck_assert_msg(rc == 0, "parse: %s", err.msg);
    return doc;
}

START_TEST(test_values_and_places)
{
    sv_ydoc_t *doc = parse(doc_text);
    sv_error_t err;
    long seed, tp;
    double rate;
    const char *gpu, *q;
    ck_assert_int_eq(sv_yget_long(doc->root, "seed", 1, 0, 100, &seed, &err), 0);
    ck_assert_int_eq(seed, 7);
    sv_ynode_t *hw = sv_ymap_get(doc->root, "hardware");
    ck_assert_ptr_nonnull(hw);
    ck_assert_int_eq(hw->line, 3);
    ck_assert_str_eq(hw->path, "hardware");
    ck_assert_int_eq(sv_yget_str(hw, "gpu", 1, &gpu, &err), 0);
    ck_assert_str_eq(gpu, "h100-sxm");
    ck_assert_int_eq(sv_yget_long(hw, "tp", 1, 1, 8, &tp, &err), 0);
    ck_assert_int_eq(tp, 2);
    /* tpp was never asked for: a typo, reported at its line with the nearest key asked for
     * (one edit from tp). */
    ck_assert_int_eq(sv_ymap_check_unknown(hw, &err), SV_ENOKEY);
    ck_assert_msg(strstr(err.msg, "s.yaml:5:8: unknown key 'hardware.tpp' (did you mean "
                                  "'hardware.tp'?)") != NULL,
                  "%s", err.msg);

    sv_ynode_t *wl = sv_ymap_get(doc->root, "workload");
    ck_assert_int_eq(sv_yget_double(wl, "rate", 1, 0, INFINITY, &rate, &err), 0);
    ck_assert(isinf(rate));
    sv_ynode_t *lens = sv_ymap_get(wl, "lengths");
    ck_assert_int_eq(lens->kind, SV_Y_SEQ);
    ck_assert_int_eq((int)lens->n, 2);
    ck_assert_str_eq(lens->seq[1]->path, "workload.lengths[1]");
    /* A quoted "null" is text; an empty value is "not given". */
    ck_assert_int_eq(sv_yget_str(wl, "quoted", 1, &q, &err), 0);
    ck_assert_str_eq(q, "null");
    double x = -1;
    ck_assert_int_eq(sv_yget_double(wl, "empty", 0, 0, 1, &x, &err), 1);
    ck_assert(x == -1);
    ck_assert_int_eq(sv_yget_double(wl, "empty", 1, 0, 1, &x, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "missing required key 'empty'") != NULL, "%s", err.msg);
    sv_ydoc_free(doc);
}
END_TEST

START_TEST(test_bad_values_are_located)
{
    sv_ydoc_t *doc = parse("engine:\n  max_num_seqs: -4\n  rate: fast\n  flag: maybe\n");
    sv_error_t err;
    long l;
    double d;
    int b;
    sv_ynode_t *e = sv_ymap_get(doc->root, "engine");
    ck_assert_int_eq(sv_yget_long(e, "max_num_seqs", 1, 1, 1024, &l, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "s.yaml:2:17: engine.max_num_seqs: expected a whole number in "
                              "[1, 1024], got '-4'");
    ck_assert_int_eq(sv_yget_double(e, "rate", 1, 0, INFINITY, &d, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "s.yaml:3:9: engine.rate: expected a number >= 0, got 'fast'");
    ck_assert_int_eq(sv_yget_bool(e, "flag", 1, &b, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "expected true or false") != NULL, "%s", err.msg);
    sv_ydoc_free(doc);
}
END_TEST

/* An enumerated key reads through its table; the error lists the table in its order. */
START_TEST(test_enum_from_table)
{
    static const sv_yenum_t modes[] = {{"fair", 10}, {"fifo", 20}, {"lifo", 30}};
    sv_ydoc_t *doc = parse("link:\n  sharing: fifo\n  other: lifo\n  bad: random\n  seq: [x]\n");
    sv_error_t err;
    int v = -1;
    sv_ynode_t *l = sv_ymap_get(doc->root, "link");
    ck_assert_int_eq(sv_yget_enum(l, "sharing", 1, modes, 3, &v, &err), 0);
    ck_assert_int_eq(v, 20);
    ck_assert_int_eq(sv_yget_enum(l, "other", 1, modes, 3, &v, &err), 0);
    ck_assert_int_eq(v, 30);
    v = -1;
    ck_assert_int_eq(sv_yget_enum(l, "absent", 0, modes, 3, &v, &err), 1);
    ck_assert_int_eq(v, -1);
    ck_assert_int_eq(sv_yget_enum(l, "bad", 1, modes, 3, &v, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "s.yaml:4:8: link.bad: expected fair, fifo or lifo, got 'random'");
    ck_assert_int_eq(sv_yget_enum(l, "seq", 1, modes, 2, &v, &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "link.seq: expected fair or fifo, got a") != NULL, "%s", err.msg);
    char buf[8];
    ck_assert_str_eq(sv_yenum_list(modes, 1, buf, sizeof buf), "fair");
    sv_ydoc_free(doc);
}
END_TEST

/* A copy keeps every place, reads afresh (no key marked), and is changed alone. */
START_TEST(test_copy_is_independent)
{
    sv_ydoc_t *doc = parse("engine:\n  max_num_seqs: 4\n  rate: fast\n");
    sv_error_t err;
    ck_assert_int_eq(sv_ydoc_set(doc, "engine.block_size=32", &err), 0);
    sv_ynode_t *e0 = sv_ymap_get(doc->root, "engine");
    (void)sv_ymap_get(e0, "max_num_seqs"); /* marks in the source are not copied */
    sv_ydoc_t *cp;
    ck_assert_int_eq(sv_ydoc_copy(doc, &cp, &err), 0);
    ck_assert_int_eq(sv_ydoc_set(cp, "engine.max_num_seqs=9", &err), 0);
    long l;
    double d;
    sv_ynode_t *e = sv_ymap_get(cp->root, "engine");
    ck_assert_int_eq(sv_yget_long(e, "max_num_seqs", 1, 1, 100, &l, &err), 0);
    ck_assert_int_eq(l, 9);
    ck_assert_int_eq(sv_yget_long(e0, "max_num_seqs", 1, 1, 100, &l, &err), 0);
    ck_assert_int_eq(l, 4);
    ck_assert_int_eq(sv_yget_long(e, "block_size", 1, 1, 100, &l, &err), 0);
    ck_assert_int_eq(l, 32);
    ck_assert_int_eq(sv_yget_double(e, "rate", 1, 0, 1, &d, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "s.yaml:3:9: engine.rate: expected a number in [0, 1], got 'fast'");
    ck_assert_int_eq(sv_ymap_check_unknown(e, &err), 0);
    sv_ydoc_free(doc); /* the copy owns its own strings */
    ck_assert_int_eq(sv_ymap_check_unknown(cp->root, &err), 0);
    sv_ydoc_free(cp);
}
END_TEST

START_TEST(test_malformed_and_strict)
{
    sv_ydoc_t *doc = NULL;
    sv_error_t err;
    const char *bad = "a: 1\nb: [1, 2\nc: 3\n";
    ck_assert_int_eq(sv_ydoc_parse("bad.yaml", bad, strlen(bad), &doc, &err), SV_EPARSE);
    ck_assert_ptr_null(doc);
    ck_assert_msg(strncmp(err.msg, "bad.yaml:", 9) == 0 && strstr(err.msg, "malformed YAML"), "%s",
                  err.msg);
    const char *dup = "a: 1\nb: 2\na: 3\n";
    ck_assert_int_eq(sv_ydoc_parse("dup.yaml", dup, strlen(dup), &doc, &err), SV_EPARSE);
    ck_assert_str_eq(err.msg, "dup.yaml:3:1: duplicate key 'a'");
    const char *alias = "a: &x 1\nb: *x\n";
    ck_assert_int_eq(sv_ydoc_parse("al.yaml", alias, strlen(alias), &doc, &err), SV_EPARSE);
    ck_assert_msg(strstr(err.msg, "al.yaml:2:4: YAML aliases") != NULL, "%s", err.msg);
    const char *two = "a: 1\n---\nb: 2\n";
    ck_assert_int_eq(sv_ydoc_parse("two.yaml", two, strlen(two), &doc, &err), SV_EPARSE);
    ck_assert_int_eq(sv_ydoc_load("/nonexistent/x.yaml", &doc, &err), SV_EIO);
    ck_assert_msg(strstr(err.msg, "/nonexistent/x.yaml: cannot open") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(test_overrides)
{
    sv_ydoc_t *doc = parse(doc_text);
    sv_error_t err;
    long tp;
    ck_assert_int_eq(sv_ydoc_set(doc, "hardware.tp=4", &err), 0);
    ck_assert_int_eq(sv_ydoc_set(doc, "slo.ttft_ms=200", &err), 0); /* a new map */
    ck_assert_int_eq(sv_ydoc_set(doc, "workload.lengths.1=25", &err), 0);
    ck_assert_int_eq(sv_ydoc_set(doc, "workload.empty.x=1", &err), 0); /* null -> map */
    ck_assert_int_eq(sv_ydoc_set(doc, "workload.list=[1, 2, 3]", &err), 0);
    sv_ynode_t *hw = sv_ymap_get(doc->root, "hardware");
    ck_assert_int_eq(sv_yget_long(hw, "tp", 1, 1, 8, &tp, &err), 0);
    ck_assert_int_eq(tp, 4);
    sv_ynode_t *slo = sv_ymap_get(doc->root, "slo");
    double ttft;
    ck_assert_int_eq(sv_yget_double(slo, "ttft_ms", 1, 0, 1e9, &ttft, &err), 0);
    ck_assert(ttft == 200.0);
    sv_ynode_t *wl = sv_ymap_get(doc->root, "workload");
    ck_assert_str_eq(sv_ymap_get(wl, "lengths")->seq[1]->scalar, "25");
    ck_assert_int_eq((int)sv_ymap_get(wl, "list")->n, 3);
    /* An explicit null removes the key (a rate given up for a rate profile); an empty
     * value keeps the key with a null value; removing an absent key changes nothing. */
    ck_assert_int_eq(sv_ydoc_set(doc, "slo.ttft_ms=null", &err), 0);
    ck_assert_int_eq((int)slo->n, 0);
    ck_assert_ptr_null(sv_ymap_get(slo, "ttft_ms"));
    ck_assert_int_eq(sv_ydoc_set(doc, "slo.tpot_ms=~", &err), 0);
    ck_assert_int_eq((int)slo->n, 0);
    ck_assert_int_eq(sv_ydoc_set(doc, "slo.tpot_ms=", &err), 0);
    ck_assert_int_eq((int)slo->n, 1);
    ck_assert(sv_yscalar_is_null(sv_ymap_get(slo, "tpot_ms")));
    ck_assert_int_eq(sv_ydoc_set(doc, "slo.tpot_ms='null'", &err), 0); /* quoted: a string */
    ck_assert_str_eq(sv_ymap_get(slo, "tpot_ms")->scalar, "null");
    /* A bad override value is reported as coming from --set. */
    sv_ynode_t *tpn = sv_ymap_get(hw, "tp");
    ck_assert_int_eq(sv_ydoc_set(doc, "hardware.tp=two", &err), 0);
    tpn = sv_ymap_get(hw, "tp");
    ck_assert_int_eq(sv_yscalar_long(tpn, 1, 8, &tp, &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--set hardware.tp=two: hardware.tp: expected a whole number in "
                              "[1, 8], got 'two'");
    /* Paths that cannot be followed. */
    ck_assert_int_eq(sv_ydoc_set(doc, "seed.x=1", &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "'seed' is a single value") != NULL, "%s", err.msg);
    ck_assert_int_eq(sv_ydoc_set(doc, "workload.lengths.5=1", &err), SV_EINVAL);
    ck_assert_msg(strstr(err.msg, "index 5 is out of range") != NULL, "%s", err.msg);
    ck_assert_int_eq(sv_ydoc_set(doc, "novalue", &err), SV_EINVAL);
    sv_ydoc_free(doc);
}
END_TEST

START_TEST(test_number_parsing)
{
    double d;
    long l;
    ck_assert_int_eq(sv_parse_double("1e3", &d), 0);
    ck_assert(d == 1000.0);
    ck_assert_int_eq(sv_parse_double(".inf", &d), 0);
    ck_assert(isinf(d) && d > 0);
    ck_assert_int_eq(sv_parse_double("-Infinity", &d), 0);
    ck_assert(isinf(d) && d < 0);
    ck_assert_int_eq(sv_parse_double("nan", &d), SV_EINVAL);
    ck_assert_int_eq(sv_parse_double("12abc", &d), SV_EINVAL);
    ck_assert_int_eq(sv_parse_long("1e6", &l), 0);
    ck_assert_int_eq(l, 1000000);
    ck_assert_int_eq(sv_parse_long("2.5", &l), SV_EINVAL);
    ck_assert_int_eq(sv_parse_long("", &l), SV_EINVAL);
}
END_TEST

/* Comments are cut before libyaml reads the text (yaml.c, trim_comments); what a '#' after a
 * blank is stays libyaml's to say: inside quotes or a block scalar it is text, and errors and
 * places are the file's own. */
START_TEST(test_comments_cut)
{
    sv_ydoc_t *doc = parse("a: 'x # y'  # c\nb: \"p # q\"   # d\n");
    sv_ynode_t *a = sv_ymap_get(doc->root, "a"), *b = sv_ymap_get(doc->root, "b");
    ck_assert_str_eq(a->scalar, "x # y");
    ck_assert_str_eq(b->scalar, "p # q");
    ck_assert_int_eq(b->line, 2);
    ck_assert_int_eq(b->col, 4);
    sv_ydoc_free(doc);

    doc = parse("a: \"foo\n  # bar\"\nb: 1  # c\n"); /* a quoted scalar's second line */
    ck_assert_str_eq(sv_ymap_get(doc->root, "a")->scalar, "foo # bar");
    ck_assert_int_eq(sv_ymap_get(doc->root, "b")->line, 3);
    sv_ydoc_free(doc);

    doc = parse("a: |\n  x\n  # not a comment\nb: 2  # c\n"); /* a block scalar's line */
    ck_assert_str_eq(sv_ymap_get(doc->root, "a")->scalar, "x\n# not a comment\n");
    sv_ydoc_free(doc);

    doc = parse("# head\n    # indented\nx: 1   # c\nyy: 2 # d\n");
    sv_error_t err;
    ck_assert_int_eq(sv_ymap_get(doc->root, "x")->col, 4);
    ck_assert_int_eq(sv_ymap_check_unknown(doc->root, &err), SV_ENOKEY);
    ck_assert_str_eq(err.msg, "s.yaml:4:5: unknown key 'yy' (expected one of: x)");
    sv_ydoc_free(doc);

    const char *flow = "a: 1    # c\n  # d\nb: [1, 2   # e\nc: 3\n";
    ck_assert_int_eq(sv_ydoc_parse("f.yaml", flow, strlen(flow), &doc, &err), SV_EPARSE);
    ck_assert_str_eq(err.msg, "f.yaml:4:1: malformed YAML: did not find expected ',' or ']' "
                              "while parsing a flow sequence");
    const char *tab = "a: 1\n\t# c\n";
    ck_assert_int_eq(sv_ydoc_parse("t.yaml", tab, strlen(tab), &doc, &err), SV_EPARSE);
    ck_assert_str_eq(err.msg, "t.yaml:2:1: malformed YAML: found a tab character that violates "
                              "indentation while scanning a plain scalar");
}
END_TEST

/* Issue 8 item 7: 100k keys in one map load (the duplicate check is a hash set, not a
 * scan per key), and a duplicate at the end is still found at its place. */
START_TEST(test_many_keys)
{
    enum { N = 100000 };
    size_t cap = (size_t)N * 24 + 64, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text + len, cap - len, "m:\n");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, "  k%d: %d\n", i, i);
    sv_ydoc_t *doc = NULL;
    sv_error_t err;
    ck_assert_int_eq(sv_ydoc_parse("big.yaml", text, len, &doc, &err), 0);
    sv_ynode_t *m = sv_ymap_get(doc->root, "m");
    ck_assert_int_eq((long)m->n, N);
    ck_assert_str_eq(m->map[N - 1].key, "k99999");
    ck_assert_str_eq(m->map[N - 1].val->scalar, "99999");
    sv_ydoc_free(doc);
    len += (size_t)snprintf(text + len, cap - len, "  k77777: 1\n");
    ck_assert_int_eq(sv_ydoc_parse("big.yaml", text, len, &doc, &err), SV_EPARSE);
    ck_assert_ptr_null(doc);
    ck_assert_str_eq(err.msg, "big.yaml:100002:3: duplicate key 'k77777'");
    free(text);
}
END_TEST

/* Issue 8 item 11: an error inside a list item frees the half-built item (ASan's leak
 * checker fails this test otherwise). */
START_TEST(test_error_in_list_item)
{
    sv_ydoc_t *doc = NULL;
    sv_error_t err;
    const char *t = "a: &x 1\nb: [1, {c: 2, d: *x}]\n";
    ck_assert_int_eq(sv_ydoc_parse("l.yaml", t, strlen(t), &doc, &err), SV_EPARSE);
    ck_assert_str_eq(err.msg,
                     "l.yaml:2:18: YAML aliases (*name) are not supported; write the value out");
    const char *t2 = "b: [[1, [2, {e: 1, e: 2}]]]\n";
    ck_assert_int_eq(sv_ydoc_parse("l.yaml", t2, strlen(t2), &doc, &err), SV_EPARSE);
    ck_assert_str_eq(err.msg, "l.yaml:1:20: duplicate key 'e'");
}
END_TEST

/* Paths of list items past index 9 (joined by hand, digit by digit), and lookups in any
 * order: sv_ymap_get starts after its last find and wraps, and must still find every key,
 * miss an absent one, and survive an override that removes keys. */
START_TEST(test_paths_and_lookup_order)
{
    sv_ydoc_t *doc = parse("l: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n"
                           "m: {a: 1, b: 2, c: 3, d: 4}\n");
    sv_ynode_t *l = sv_ymap_get(doc->root, "l");
    ck_assert_str_eq(l->seq[0]->path, "l[0]");
    ck_assert_str_eq(l->seq[12]->path, "l[12]");
    sv_ynode_t *m = sv_ymap_get(doc->root, "m");
    const char *order[] = {"d", "c", "a", "b", "b", "d", "a"};
    const char *want[] = {"4", "3", "1", "2", "2", "4", "1"};
    for (int i = 0; i < 7; i++)
        ck_assert_str_eq(sv_ymap_get(m, order[i])->scalar, want[i]);
    ck_assert_ptr_null(sv_ymap_get(m, "e"));
    ck_assert_ptr_null(sv_ymap_get(m, ""));
    ck_assert_str_eq(m->map[3].val->path, "m.d");
    sv_error_t err;
    ck_assert_int_eq(sv_ymap_check_unknown(m, &err), 0);
    /* the last find was at the end; an override drops keys under it */
    sv_ymap_get(m, "d");
    ck_assert_int_eq(sv_ydoc_set(doc, "m={a: 9}", &err), 0);
    m = sv_ymap_get(doc->root, "m");
    ck_assert_str_eq(sv_ymap_get(m, "a")->scalar, "9");
    ck_assert_ptr_null(sv_ymap_get(m, "d"));
    sv_ydoc_free(doc);
}
END_TEST

START_TEST(test_override_paths)
{
    const char *t = "pools:\n  - {name: prefill, replicas: 1}\n  - {name: decode, replicas: 2}\n";
    sv_ydoc_t *doc = parse(t);
    sv_error_t err;
    /* Items of a list of named maps are found by name as well as by number. */
    ck_assert_int_eq(sv_ydoc_set(doc, "pools.decode.replicas=5", &err), 0);
    ck_assert_int_eq(sv_ydoc_set(doc, "pools.0.replicas=3", &err), 0);
    sv_ynode_t *pools = sv_ymap_get(doc->root, "pools");
    ck_assert_str_eq(sv_ymap_get(pools->seq[1], "replicas")->scalar, "5");
    ck_assert_str_eq(sv_ymap_get(pools->seq[0], "replicas")->scalar, "3");
    ck_assert_int_eq(sv_ydoc_set(doc, "pools.x.gpu=h100-sxm", &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--set pools.x.gpu=h100-sxm: 'pools' is a list of 2 items: index "
                              "it by number (0 to 1) or by an item's name (prefill, decode), not "
                              "'x'");
    /* A key with an empty part is an error, not silently nothing. */
    ck_assert_int_eq(sv_ydoc_set(doc, ".=5", &err), SV_EINVAL);
    ck_assert_str_eq(err.msg, "--set .=5: expected a dotted key like hardware.tp or pools.0.gpu "
                              "before '=', got '.'");
    ck_assert_int_eq(sv_ydoc_set(doc, "a..b=5", &err), SV_EINVAL);
    ck_assert_int_eq(sv_ydoc_set(doc, "a.=5", &err), SV_EINVAL);
    ck_assert_int_eq(sv_ydoc_set(doc, ".a=5", &err), SV_EINVAL);
    ck_assert_ptr_null(sv_ymap_get(doc->root, "a"));
    sv_ydoc_free(doc);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_values_and_places);
    tcase_add_test(tc, test_bad_values_are_located);
    tcase_add_test(tc, test_malformed_and_strict);
    tcase_add_test(tc, test_overrides);
    tcase_add_test(tc, test_number_parsing);
    tcase_add_test(tc, test_many_keys);
    tcase_add_test(tc, test_comments_cut);
    tcase_add_test(tc, test_error_in_list_item);
    tcase_add_test(tc, test_override_paths);
    tcase_add_test(tc, test_paths_and_lookup_order);
    tcase_add_test(tc, test_enum_from_table);
    tcase_add_test(tc, test_copy_is_independent);
    suite_add_tcase(s, tc);
    return s;
}

TU_MAIN(suite)
