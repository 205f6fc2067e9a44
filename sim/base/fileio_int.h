/*
 * Internal file helpers shared by the loaders (YAML, JSON, CSV): read a whole file
 * into memory with a size bound, so a runaway input fails loudly.
 */
#ifndef SERVESIM_FILEIO_INT_H
#define SERVESIM_FILEIO_INT_H

#include <stddef.h>
#include <stdio.h>

#include "servesim/base/error.h"

/* Read path into a NUL-terminated buffer the caller frees. SV_EIO / SV_ELIMIT on failure. */
int sv__read_file(const char *path, size_t max_bytes, char **buf, size_t *len, sv_error_t *err);

/* Finish an output: flush and close f (only flush stdout), 0 or SV_EIO with
 * "path: write error" when any write to it failed (a full disk, /dev/full). glibc drops a
 * buffer it failed to write, so fclose alone can succeed after a failed write; the
 * stream's error flag is what tells. */
int sv__close_out(FILE *f, const char *path, sv_error_t *err);

#endif
