/*
 * Internal file helpers shared by the loaders (YAML, JSON, CSV): read a whole file
 * into memory with a size bound, so a runaway input fails loudly.
 */
#ifndef SERVESIM_FILEIO_INT_H
#define SERVESIM_FILEIO_INT_H

#include <stddef.h>

#include "servesim/error.h"

/* Read path into a NUL-terminated buffer the caller frees. SV_EIO / SV_ELIMIT on failure. */
int sv__read_file(const char *path, size_t max_bytes, char **buf, size_t *len, sv_error_t *err);

#endif
