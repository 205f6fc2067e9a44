/*
 * Progress lines for long commands (sweep, plan): on a terminal one line rewritten in
 * place with '\r'; elsewhere (a log file, a pipe) a full line at most every
 * SV_PROGRESS_INTERVAL_S seconds and a final line, so a log gets a few readable lines
 * instead of one giant one. Progress goes to stderr and never into results.
 *
 * Ownership: the caller owns the sv_progress_t (plain storage, nothing allocated) and the
 * FILE it writes to. A NULL FILE makes every call a no-op.
 */
#ifndef SERVESIM_PROGRESS_H
#define SERVESIM_PROGRESS_H

#include <stdio.h>

#define SV_PROGRESS_INTERVAL_S 5.0
#define SV_PROGRESS_TEXT_MAX 160

typedef struct sv_progress {
    FILE *f;         /* NULL: silent */
    int tty;         /* 1: rewrite one line in place */
    double interval; /* seconds between lines when not a terminal */
    double last;     /* when the last full line was written (monotonic seconds) */
    int width;       /* characters of the line now on the terminal */
    int pending;     /* text holds a state not written yet (not a terminal) */
    char text[SV_PROGRESS_TEXT_MAX];
} sv_progress_t;

/* Start: tty from isatty(f), interval SV_PROGRESS_INTERVAL_S; both may be changed after. */
void sv_progress_start(sv_progress_t *p, FILE *f);

/* The current state, printf-style, one line without '\n' ("servesim sweep: 3/40 points"). */
void sv_progress_update(sv_progress_t *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Done: end the terminal line, or write the last state if it was not written yet. */
void sv_progress_end(sv_progress_t *p);

#endif
