/*
 * Helpers shared by the unit tests: where the catalog and test data live (from the
 * environment ctest sets), and a loaded catalog.
 */
#ifndef SERVESIM_TESTUTIL_H
#define SERVESIM_TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "servesim/cost/catalog.h"
#include "servesim/cost/perf.h"

static inline const char *tu_data(const char *name)
{
    static char buf[4][1024];
    static int k;
    const char *dir = getenv("SV_TEST_DATA");
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir ? dir : "tests/data", name);
    return buf[k];
}

static inline sv_catalog_t *tu_catalog(void)
{
    sv_catalog_t *cat = NULL;
    sv_error_t err;
    int rc = sv_catalog_load(sv_catalog_default_dir(), &cat, &err);
    ck_assert_msg(rc == 0, "catalog: %s", err.msg);
    return cat;
}

/* A shallow copy of cat whose GPU array is its own (the caller frees copy.gpus), with GPU
 * gpu's curve key `curve` set to GPU from's: a fit taken back. */
static inline sv_catalog_t tu_curve_from(const sv_catalog_t *cat, const char *gpu,
                                         const char *from, int curve)
{
    sv_error_t err;
    const sv_gpu_t *g, *f;
    ck_assert_int_eq(sv_catalog_gpu(cat, gpu, &g, &err), 0);
    ck_assert_int_eq(sv_catalog_gpu(cat, from, &f, &err), 0);
    sv_catalog_t copy = *cat;
    copy.gpus = malloc(cat->ngpus * sizeof *cat->gpus);
    ck_assert(copy.gpus != NULL);
    memcpy(copy.gpus, cat->gpus, cat->ngpus * sizeof *cat->gpus);
    copy.gpus[g - cat->gpus].curve[curve] = f->curve[curve];
    return copy;
}

/* Relative closeness: |a - b| <= tol * |b|. */
#define tu_assert_rel(a, b, tol)                                                                   \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        ck_assert_msg(fabs(a_ - b_) <= (tol)*fabs(b_), "%s = %.10g, expected %.10g (rel %g)", #a,  \
                      a_, b_, (double)(tol));                                                      \
    } while (0)

#define TU_MAIN(suite_fn)                                                                          \
    int main(void)                                                                                 \
    {                                                                                              \
        SRunner *sr = srunner_create(suite_fn());                                                  \
        srunner_run_all(sr, CK_NORMAL);                                                            \
        int failed = srunner_ntests_failed(sr);                                                    \
        srunner_free(sr);                                                                          \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;                                               \
    }

/* Llama-3.1-8B on H100s at tp (ideal: pure roofline) drafted by Llama-3.2-1B (speculative:
 * draft), k draft tokens at acceptance accept: *p borrows *draft, which must outlive it. */
static inline void tu_draft_pair(sv_catalog_t *cat, int tp, int ideal, const char *k,
                                 const char *accept, sv_perf_t *p, sv_perf_t *draft)
{
    sv_error_t err;
    const sv_gpu_t *g;
    const sv_model_t *m, *dm;
    ck_assert_int_eq(sv_catalog_gpu(cat, "h100-sxm", &g, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.1-8b", &m, &err), 0);
    ck_assert_int_eq(sv_catalog_model(cat, "llama-3.2-1b", &dm, &err), 0);
    sv_perf_settings_t s = sv_perf_settings_default();
    s.tp = tp;
    if (ideal) sv_perf_settings_ideal(&s);
    ck_assert_int_eq(sv_perf_settings_set(&s, "speculative", "draft", &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "speculative_model", "llama-3.2-1b", &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "num_speculative_tokens", k, &err), 0);
    ck_assert_int_eq(sv_perf_settings_set(&s, "spec_acceptance", accept, &err), 0);
    ck_assert_msg(sv_perf_init(p, g, m, &s, &err) == 0, "%s", err.msg);
    ck_assert_msg(sv_perf_draft_init(p, draft, dm, &err) == 0, "%s", err.msg);
}

#endif
