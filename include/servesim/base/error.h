/*
 * servesim error codes and the error record every loader and validator fills.
 *
 * Functions in servesim return int: 0 on success, a negative SV_E* code on failure.
 * Those that can fail on user input also take an sv_error_t* and write a one-line,
 * human-readable message into it that names the place (file:line:col and key, or
 * trace row) and what was expected. The record is caller-owned storage; no
 * allocation happens here. Passing NULL for the record is allowed and drops the text.
 */
#ifndef SERVESIM_ERROR_H
#define SERVESIM_ERROR_H

#include <stddef.h>

enum {
    SV_OK = 0,
    SV_EINVAL = -1,    /* a value is out of range or of the wrong type */
    SV_ENOMEM = -2,    /* allocation failed or a growable bound was hit */
    SV_EIO = -3,       /* a file could not be opened or read */
    SV_EPARSE = -4,    /* malformed YAML, JSON or CSV */
    SV_ENOTFOUND = -5, /* an unknown name (GPU, model, policy) */
    SV_ENOKEY = -6,    /* an unknown key (typo) */
    SV_ENOFIT = -7,    /* the model does not fit the GPU memory */
    SV_ELIMIT = -8,    /* a configured bound was exceeded */
};

#define SV_ERRMSG_MAX 2048

typedef struct sv_error {
    int code;
    char msg[SV_ERRMSG_MAX];
} sv_error_t;

/* Words for a code ("invalid value", ...). Never NULL. */
const char *sv_strerror(int code);

/* Fill err (if not NULL) with code and a printf-style message; returns code. */
int sv_errorf(sv_error_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the existing message with "prefix: " (for adding a file or row). Returns err->code. */
int sv_error_prefix(sv_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear a record. */
void sv_error_clear(sv_error_t *err);

#endif
