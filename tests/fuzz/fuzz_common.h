/*
 * Shared by the libFuzzer targets: the loaders read files, so each input is written
 * to one file in a private temporary directory and loaded from there; the catalog is
 * loaded once.
 */
#ifndef SERVESIM_FUZZ_COMMON_H
#define SERVESIM_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "servesim/cost/catalog.h"

/* Write data to dir/name (the directory made once per process); the path, or NULL. */
static const char *fz_write(const char *name, const uint8_t *data, size_t size)
{
    static char dir[256];
    static char path[512];
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/servesim-fuzz-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) abort();
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f)) abort();
    return path;
}

/* The catalog (models/, or $SERVESIM_CATALOG), loaded once per process; aborts when it
 * does not load, since no input could then be tried. */
static inline const sv_catalog_t *fz_catalog(const char *target)
{
    static sv_catalog_t *cat;
    sv_error_t err;
    if (!cat && sv_catalog_load(sv_catalog_default_dir(), &cat, &err)) {
        fprintf(stderr, "%s: %s\n", target, err.msg);
        abort();
    }
    return cat;
}

#endif
