/*
 * Shared by the libFuzzer targets: the loaders read files, so each input is written
 * to one file in a private temporary directory and loaded from there.
 */
#ifndef SERVESIM_FUZZ_COMMON_H
#define SERVESIM_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#endif
