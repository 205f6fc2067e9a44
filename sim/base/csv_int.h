/*
 * Internal: a small strict reader for the plain CSV tables that calibrate and validate
 * read (Vidur's and Splitwise's profiles, servesim's measurement table): a header row of
 * names, then rows of the same width; no quoting; lines starting with '#' and blank lines
 * are skipped. Every error names file:line and, for cells, the column.
 *
 * Ownership: sv__csv_read() returns a table freed with sv__csv_free() (NULL-safe); the
 * cell strings point into it.
 */
#ifndef SERVESIM_CSV_INT_H
#define SERVESIM_CSV_INT_H

#include "servesim/base/error.h"

typedef struct sv__csv {
    char path[512];
    char *buf;    /* the file, cut into cells in place */
    char **names; /* ncols header names */
    int ncols;
    char **cells; /* nrows x ncols */
    long *lines;  /* file line of each row */
    long nrows;
} sv__csv_t;

/* SV_EIO, SV_EPARSE ("file:line: expected N cells, got M"), SV_ENOMEM. */
int sv__csv_read(const char *path, sv__csv_t **out, sv_error_t *err);
void sv__csv_free(sv__csv_t *t);

/* Index of a column; -1 when absent. */
int sv__csv_col(const sv__csv_t *t, const char *name);
/* Every name must exist: SV_EPARSE "file: missing column 'x'" naming the first missing. */
int sv__csv_need(const sv__csv_t *t, const char *const *names, int *idx, int n, sv_error_t *err);
const char *sv__csv_cell(const sv__csv_t *t, long row, int col);
/* A numeric cell: SV_EPARSE "file:line: column 'x': expected a number, got '...'". */
int sv__csv_num(const sv__csv_t *t, long row, int col, double *out, sv_error_t *err);

#endif
