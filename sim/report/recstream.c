/*
 * Outputs written as requests end (see include/servesim/report/recstream.h). The pool's
 * hook (on_record) gets each released record in id order and writes its CSV row and its
 * item of every JSON list, each list into a temporary file of its own, laid out as the JSON
 * writer lays out the items of an array (so the JSON splices them in unchanged). The
 * metrics' hook (on_end) gets each request's token gaps as it ends, in the order requests
 * end; they wait in a ring indexed by id until its record is released.
 */
#include "servesim/report/recstream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio_int.h"
#include "report/report_int.h"

typedef struct gaps {
    double *v; /* owned; NULL when none */
    size_t n;
} gaps_t;

struct sv_recstream {
    const sv_scenario_t *sc;
    FILE *csv;
    char *csv_path;
    int finished;
    int detailed;
    FILE *list[SV__NLISTS]; /* temporary files of the lists written; NULL for the others */
    sv_jw_t jw[SV__NLISTS]; /* each inside its array */
    gaps_t *pend;           /* ring (a power of two) of the token gaps of ids next .. */
    size_t pcap;
    int32_t next; /* the next id to be released */
    int oom;
};

int sv_recstream_new(const sv_scenario_t *sc, const char *csv, int json, int detailed,
                     sv_recstream_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_recstream_t *rs = calloc(1, sizeof *rs);
    if (!rs) return sv_errorf(err, SV_ENOMEM, "out of memory");
    rs->sc = sc;
    rs->detailed = detailed;
    for (int k = 0; json && k < SV__NLISTS; k++) {
        if (!sv__report_list_wanted(k, detailed)) continue;
        if (!(rs->list[k] = tmpfile())) {
            sv_recstream_free(rs);
            return sv_errorf(err, SV_EIO, "--json: cannot make a temporary file: %s",
                             strerror(errno));
        }
        sv__jw_init(&rs->jw[k], rs->list[k]);
        rs->jw[k].depth = 1;
        rs->jw[k].first[1] = 1;
        if (sv__report_list_itls(k)) rs->jw[k].cache = sv__fmtcache_new(); /* none: no cache */
    }
    if (json && detailed) {
        rs->pcap = 1024;
        if (!(rs->pend = calloc(rs->pcap, sizeof *rs->pend))) {
            sv_recstream_free(rs);
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        }
    }
    if (csv) {
        if (!(rs->csv_path = strdup(csv))) {
            sv_recstream_free(rs);
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        }
        if (!(rs->csv = fopen(csv, "w"))) {
            int e = errno;
            free(rs->csv_path);
            rs->csv_path = NULL; /* (nothing of ours to remove) */
            sv_recstream_free(rs);
            return sv_errorf(err, SV_EIO, "%s: cannot write: %s", csv, strerror(e));
        }
        sv__report_csv_head(rs->csv, &sc->metrics);
    }
    *out = rs;
    return 0;
}

/* Room in the ring for id: it grows (keeping each entry at id & (cap - 1)) past the span. */
static int pend_fit(sv_recstream_t *rs, int32_t id)
{
    size_t need = (size_t)(id - rs->next) + 1;
    if (need <= rs->pcap) return 0;
    size_t cap = rs->pcap;
    while (cap < need)
        cap *= 2;
    gaps_t *p = calloc(cap, sizeof *p);
    if (!p) return SV_ENOMEM;
    for (size_t i = 0; i < rs->pcap; i++) {
        size_t id_i = (size_t)rs->next + i;
        p[id_i & (cap - 1)] = rs->pend[id_i & (rs->pcap - 1)];
    }
    free(rs->pend);
    rs->pend = p;
    rs->pcap = cap;
    return 0;
}

static void on_end(void *ctx, int32_t id, const sv_req_t *r, const double *itl, size_t n)
{
    (void)r;
    sv_recstream_t *rs = ctx;
    if (n == 0) return;
    if (id < rs->next || pend_fit(rs, id)) {
        rs->oom = 1;
        return;
    }
    gaps_t *g = &rs->pend[(size_t)id & (rs->pcap - 1)];
    if (!(g->v = malloc(n * sizeof *g->v))) {
        rs->oom = 1;
        return;
    }
    memcpy(g->v, itl, n * sizeof *g->v);
    g->n = n;
}

static void on_record(void *ctx, int32_t id, const sv_req_t *r)
{
    sv_recstream_t *rs = ctx;
    gaps_t g = {NULL, 0};
    if (rs->pend) {
        gaps_t *p = &rs->pend[(size_t)id & (rs->pcap - 1)];
        g = *p;
        *p = (gaps_t){NULL, 0};
    }
    rs->oom |= id != rs->next; /* (the pool releases in id order) */
    rs->next = id + 1;
    if (rs->csv) sv__report_csv_row(rs->csv, &rs->sc->metrics, (size_t)id, r);
    for (int k = 0; k < SV__NLISTS; k++)
        if (rs->list[k]) sv__report_list_put(k, &rs->jw[k], rs->sc, r, g.v, g.n);
    free(g.v);
}

void sv_recstream_attach(sv_recstream_t *rs, sv_scenario_t *sc)
{
    sv_metrics_cfg_t *mc = &sc->metrics;
    mc->window = 1;
    mc->on_record = on_record;
    mc->on_end = rs->pend ? on_end : NULL;
    mc->end_itls = rs->pend != NULL;
    mc->out_ctx = rs;
}

int sv_recstream_finish(sv_recstream_t *rs, sv_error_t *err)
{
    for (int k = 0; k < SV__NLISTS; k++)
        if (rs->list[k]) sv__jw_flush(&rs->jw[k]);
    for (int k = 0; k < SV__NLISTS; k++)
        if (rs->list[k] && (fflush(rs->list[k]) || ferror(rs->list[k])))
            return sv_errorf(err, SV_EIO, "--json: a temporary file could not be written");
    if (rs->oom) return sv_errorf(err, SV_ENOMEM, "out of memory writing the requests' outputs");
    rs->finished = 1;
    if (!rs->csv) return 0;
    FILE *f = rs->csv;
    rs->csv = NULL;
    return sv__close_out(f, rs->csv_path, err);
}

void sv__recstream_splice(const sv_recstream_t *rs, int k, sv_jw_t *w)
{
    FILE *t = rs->list[k];
    if (!t || fseek(t, 0, SEEK_SET)) return;
    char buf[1 << 16];
    size_t got, any = 0;
    while ((got = fread(buf, 1, sizeof buf, t)) > 0) {
        fwrite(buf, 1, got, w->f);
        any += got;
    }
    if (any) w->first[w->depth] = 0;
}

void sv_recstream_free(sv_recstream_t *rs)
{
    if (!rs) return;
    if (rs->csv) fclose(rs->csv);
    if (rs->csv_path && !rs->finished) unlink(rs->csv_path);
    free(rs->csv_path);
    for (int k = 0; k < SV__NLISTS; k++)
        if (rs->list[k]) fclose(rs->list[k]);
    for (int k = 0; k < SV__NLISTS; k++)
        sv__fmtcache_free(rs->jw[k].cache);
    for (size_t i = 0; rs->pend && i < rs->pcap; i++)
        free(rs->pend[i].v);
    free(rs->pend);
    free(rs);
}
