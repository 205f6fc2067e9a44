/*
 * The strict CSV reader of sim/base/csv_int.h: the whole file in one buffer, cut in place.
 */
#include "base/csv_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio_int.h"
#include "servesim/base/yaml.h"
#include "base/vec_int.h"

#define CSV_MAX_BYTES ((size_t)256 << 20)
#define CSV_MAX_COLS 512

void sv__csv_free(sv__csv_t *t)
{
    if (!t) return;
    free(t->buf);
    free(t->names);
    free(t->cells);
    free(t->lines);
    free(t);
}

/* Cut one line into cells at commas; returns the count (up to max) or -1 when over. */
static int split(char *line, char **cells, int max)
{
    int n = 0;
    char *s = line;
    for (;;) {
        if (n == max) return -1;
        cells[n++] = s;
        char *c = strchr(s, ',');
        if (!c) break;
        *c = '\0';
        s = c + 1;
    }
    for (int i = 0; i < n; i++) { /* trim blanks and a trailing CR */
        char *c = cells[i];
        while (*c == ' ' || *c == '\t')
            c++;
        cells[i] = c;
        size_t k = strlen(c);
        while (k && (c[k - 1] == ' ' || c[k - 1] == '\t' || c[k - 1] == '\r'))
            c[--k] = '\0';
    }
    return n;
}

int sv__csv_read(const char *path, sv__csv_t **out, sv_error_t *err)
{
    *out = NULL;
    sv__csv_t *t = calloc(1, sizeof *t);
    if (!t) return sv_errorf(err, SV_ENOMEM, "%s: out of memory", path);
    snprintf(t->path, sizeof t->path, "%s", path);
    size_t len, cap = 0, lcap = 0;
    int rc = sv__read_file(path, CSV_MAX_BYTES, &t->buf, &len, err);
    if (rc) {
        free(t);
        return rc;
    }
    char *tmp[CSV_MAX_COLS];
    char *s = t->buf;
    long line = 0;
    while (*s) {
        line++;
        char *e = strchr(s, '\n');
        char *next = e ? e + 1 : s + strlen(s);
        if (e) *e = '\0';
        char *p = s;
        s = next;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p == '\0' || *p == '#') continue;
        int n = split(p, tmp, CSV_MAX_COLS);
        if (n < 0) {
            rc =
                sv_errorf(err, SV_EPARSE, "%s:%ld: more than %d columns", path, line, CSV_MAX_COLS);
            goto fail;
        }
        if (!t->names) {
            t->names = malloc((size_t)n * sizeof *t->names);
            if (!t->names) goto oom;
            memcpy(t->names, tmp, (size_t)n * sizeof *tmp);
            t->ncols = n;
            continue;
        }
        if (n != t->ncols) {
            rc = sv_errorf(err, SV_EPARSE, "%s:%ld: expected %d cells as in the header, got %d",
                           path, line, t->ncols, n);
            goto fail;
        }
        if (SV_GROW(t->cells, cap, (size_t)(t->nrows + 1) * (size_t)n) ||
            SV_GROW(t->lines, lcap, (size_t)t->nrows + 1))
            goto oom;
        memcpy(t->cells + t->nrows * n, tmp, (size_t)n * sizeof *tmp);
        t->lines[t->nrows++] = line;
    }
    if (!t->names) {
        rc = sv_errorf(err, SV_EPARSE, "%s: empty file (no header row)", path);
        goto fail;
    }
    *out = t;
    return 0;
oom:
    rc = sv_errorf(err, SV_ENOMEM, "%s:%ld: out of memory", path, line);
fail:
    sv__csv_free(t);
    return rc;
}

int sv__csv_col(const sv__csv_t *t, const char *name)
{
    for (int i = 0; i < t->ncols; i++)
        if (strcmp(t->names[i], name) == 0) return i;
    return -1;
}

int sv__csv_need(const sv__csv_t *t, const char *const *names, int *idx, int n, sv_error_t *err)
{
    for (int i = 0; i < n; i++) {
        idx[i] = sv__csv_col(t, names[i]);
        if (idx[i] < 0)
            return sv_errorf(err, SV_EPARSE, "%s:1: missing column '%s'", t->path, names[i]);
    }
    return 0;
}

const char *sv__csv_cell(const sv__csv_t *t, long row, int col)
{
    return t->cells[row * t->ncols + col];
}

int sv__csv_num(const sv__csv_t *t, long row, int col, double *out, sv_error_t *err)
{
    const char *c = sv__csv_cell(t, row, col);
    if (sv_parse_double(c, out) || !isfinite(*out))
        return sv_errorf(err, SV_EPARSE, "%s:%ld: column '%s': expected a number, got '%s'",
                         t->path, t->lines[row], t->names[col], c);
    return 0;
}
