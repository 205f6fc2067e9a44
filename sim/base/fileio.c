/*
 * Whole-file reads with a size bound, and finishing outputs so that a failed write is
 * an error (see fileio_int.h).
 */
#include "base/fileio_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int sv__read_file(const char *path, size_t max_bytes, char **buf, size_t *len, sv_error_t *err)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return sv_errorf(err, SV_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return sv_errorf(err, SV_EIO, "%s: is a directory (expected a file)", path);
    }
    size_t cap = 1 << 16, n = 0, got;
    char *b = malloc(cap + 1);
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n < cap) continue;
        if (cap >= max_bytes) {
            free(b);
            fclose(f);
            return sv_errorf(err, SV_ELIMIT, "%s: larger than the limit of %zu bytes", path,
                             max_bytes);
        }
        char *nb = realloc(b, cap * 2 + 1);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int ioerr = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (!b) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
    if (ioerr) {
        free(b);
        return sv_errorf(err, SV_EIO, "%s: read error: %s", path, strerror(ioerr));
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

int sv__close_out(FILE *f, const char *path, sv_error_t *err)
{
    int bad = fflush(f) != 0;
    if (ferror(f)) bad = 1;
    if (f != stdout && fclose(f)) bad = 1;
    return bad ? sv_errorf(err, SV_EIO, "%s: write error", path) : 0;
}
