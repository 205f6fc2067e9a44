/*
 * Progress lines: rewritten in place on a terminal, throttled full lines elsewhere (see
 * include/servesim/base/progress.h).
 */
#include "servesim/base/progress.h"

#include <stdarg.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sv_progress_start(sv_progress_t *p, FILE *f)
{
    p->f = f;
    p->tty = f && isatty(fileno(f));
    p->interval = SV_PROGRESS_INTERVAL_S;
    p->last = now_s();
    p->width = 0;
    p->pending = 0;
    p->text[0] = '\0';
}

void sv_progress_update(sv_progress_t *p, const char *fmt, ...)
{
    if (!p->f) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->text, sizeof p->text, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n >= (int)sizeof p->text) n = (int)sizeof p->text - 1;
    if (p->tty) {
        /* Blank what a longer earlier line left behind. */
        fprintf(p->f, "\r%s%*s", p->text, p->width > n ? p->width - n : 0, "");
        p->width = n;
        fflush(p->f);
        return;
    }
    double t = now_s();
    if (t - p->last >= p->interval) {
        fprintf(p->f, "%s\n", p->text);
        fflush(p->f);
        p->last = t;
        p->pending = 0;
    } else {
        p->pending = 1;
    }
}

void sv_progress_end(sv_progress_t *p)
{
    if (!p->f) return;
    if (p->tty) {
        if (p->width) fputc('\n', p->f);
    } else if (p->pending) {
        fprintf(p->f, "%s\n", p->text);
    }
    fflush(p->f);
    p->width = 0;
    p->pending = 0;
}
