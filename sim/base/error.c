/*
 * Error records: codes into words, and formatted one-line messages that travel with
 * return codes (see include/servesim/base/error.h).
 */
#include "servesim/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *sv_strerror(int code)
{
    switch (code) {
    case SV_OK:
        return "success";
    case SV_EINVAL:
        return "invalid value";
    case SV_ENOMEM:
        return "out of memory";
    case SV_EIO:
        return "input/output error";
    case SV_EPARSE:
        return "parse error";
    case SV_ENOTFOUND:
        return "not found";
    case SV_ENOKEY:
        return "unknown key";
    case SV_ENOFIT:
        return "does not fit";
    case SV_ELIMIT:
        return "limit exceeded";
    default:
        return "unknown error";
    }
}

int sv_errorf(sv_error_t *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int sv_error_prefix(sv_error_t *err, const char *fmt, ...)
{
    if (!err) return SV_EINVAL;
    char head[SV_ERRMSG_MAX];
    char old[SV_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", head, old);
    return err->code;
}

void sv_error_clear(sv_error_t *err)
{
    if (err) {
        err->code = SV_OK;
        err->msg[0] = '\0';
    }
}
