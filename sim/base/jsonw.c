/*
 * The streaming JSON writer (see jsonw_int.h).
 */
#include "base/jsonw_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *sv__fmt_double(double v, char *buf)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    return buf;
}

void sv__jw_put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void sv__jw_init(sv_jw_t *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->first[0] = 1;
}

void sv__jw_key(sv_jw_t *w, const char *key)
{
    if (w->depth > 0) {
        if (!w->first[w->depth]) fputs(", ", w->f);
        w->first[w->depth] = 0;
    }
    if (key) {
        sv__jw_put_string(w->f, key);
        fputs(": ", w->f);
    }
}

static void open_(sv_jw_t *w, const char *key, char c)
{
    sv__jw_key(w, key);
    fputc(c, w->f);
    if (w->depth < 63) w->depth++;
    w->first[w->depth] = 1;
}

void sv__jw_obj(sv_jw_t *w, const char *key)
{
    open_(w, key, '{');
}

void sv__jw_arr(sv_jw_t *w, const char *key)
{
    open_(w, key, '[');
}

void sv__jw_end_obj(sv_jw_t *w)
{
    fputc('}', w->f);
    w->depth--;
}

void sv__jw_end_arr(sv_jw_t *w)
{
    fputc(']', w->f);
    w->depth--;
}

void sv__jw_num(sv_jw_t *w, const char *key, double v)
{
    char buf[32];
    sv__jw_key(w, key);
    fputs(isfinite(v) ? sv__fmt_double(v, buf) : "null", w->f);
}

void sv__jw_int(sv_jw_t *w, const char *key, long v)
{
    sv__jw_key(w, key);
    fprintf(w->f, "%ld", v);
}

void sv__jw_null(sv_jw_t *w, const char *key)
{
    sv__jw_key(w, key);
    fputs("null", w->f);
}

void sv__jw_str(sv_jw_t *w, const char *key, const char *s)
{
    sv__jw_key(w, key);
    sv__jw_put_string(w->f, s);
}
