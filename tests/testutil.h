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

#endif
