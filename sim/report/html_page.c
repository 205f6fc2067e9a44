/*
 * The page every HTML report is written on (see sim/report/html_int.h).
 */
#include "report/html_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio_int.h"
#include "base/svg_int.h"

#include <math.h>

int sv__page_open(sv__page_t *p, const char *path, const char *title, const char *extra_css,
                  sv_error_t *err)
{
    memset(p, 0, sizeof p[0]);
    p->err = err;
    snprintf(p->path, sizeof p->path, "%s", path);
    snprintf(p->base, sizeof p->base, "%s", path);
    size_t l = strlen(p->base);
    if (l > 5 && strcmp(p->base + l - 5, ".html") == 0) p->base[l - 5] = '\0';
    p->html = fopen(path, "w");
    if (!p->html) return sv_errorf(err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", p->html);
    sv__xml_escape(p->html, title);
    fputs("</title>\n<style>\n"
          "body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
          "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
          "table{border-collapse:collapse;font-size:13px}\n"
          "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\n"
          "th{background:#f3f3f3}td.l,th.l{text-align:left}\n"
          ".charts{display:flex;flex-wrap:wrap;gap:16px}\n"
          ".note{color:#555;font-size:13px}\n",
          p->html);
    if (extra_css) fputs(extra_css, p->html);
    fputs("</style></head><body>\n<h1>", p->html);
    sv__xml_escape(p->html, title);
    fputs("</h1>\n", p->html);
    return 0;
}

FILE *sv__chart_begin(sv__page_t *p, const char *name)
{
    snprintf(p->name, sizeof p->name, "%s", name);
    p->buf = NULL;
    p->len = 0;
    p->chart = open_memstream(&p->buf, &p->len);
    if (!p->chart) {
        if (!p->rc) p->rc = sv_errorf(p->err, SV_ENOMEM, "out of memory drawing chart %s", name);
        p->chart = fopen("/dev/null", "w");
    }
    return p->chart ? p->chart : stderr;
}

void sv__chart_end(sv__page_t *p)
{
    if (p->chart && p->chart != stderr) fclose(p->chart);
    p->chart = NULL;
    if (!p->buf) return; /* the chart was drawn into a sink: the page already failed */
    fputs("<div>", p->html);
    fwrite(p->buf, 1, p->len, p->html);
    fputs("</div>\n", p->html);
    char path[1200];
    snprintf(path, sizeof path, "%s-%s.svg", p->base, p->name);
    FILE *f = fopen(path, "w");
    if (!f) {
        if (!p->rc)
            p->rc = sv_errorf(p->err, SV_EIO, "%s: cannot write: %s", path, strerror(errno));
    } else {
        sv_error_t e;
        int short_write = fwrite(p->buf, 1, p->len, f) != p->len;
        if ((sv__close_out(f, path, &e) || short_write) && !p->rc)
            p->rc = sv_errorf(p->err, SV_EIO, "%s: write error", path);
    }
    free(p->buf);
    p->buf = NULL;
}

int sv__page_close(sv__page_t *p)
{
    fputs("<p class=\"note\">Written by servesim, a discrete-event simulator of LLM serving. "
          "Metrics follow vllm bench serve's definitions.</p>\n</body></html>\n",
          p->html);
    if (sv__close_out(p->html, p->path, p->err)) return SV_EIO;
    return p->rc;
}

void sv__cdf_chart(FILE *f, const char *title, const char *xlabel, const char *series,
                   const double *x, const double *y, int n, double slo, double xmax)
{
    char lab[64];
    sv_svg_chart_t c;
    memset(&c, 0, sizeof c);
    c.title = title;
    c.xlabel = xlabel;
    c.ylabel = "requests (%)";
    c.s[c.ns++] = (sv_svg_series_t){.name = series, .x = x, .y = y, .n = n, .lines = 1};
    c.ymin_zero = 1;
    if (!isnan(slo)) {
        snprintf(lab, sizeof lab, "SLO %g ms", slo);
        c.vline[c.nv] = slo;
        c.vlabel[c.nv++] = lab;
    }
    sv__svg_chart_reach(f, &c, 620, 360, xmax, NAN);
}
