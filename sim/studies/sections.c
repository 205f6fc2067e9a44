/*
 * The scenario sections that belong to the studies (see
 * include/servesim/studies/sections.h): `plan:` and `sweep:`, read from the scenario file
 * with the same overrides the loader applied.
 */
#include "servesim/studies/sections.h"

#include <stdio.h>
#include <string.h>

#include "servesim/base/yaml.h"
#include "servesim/cost/perf.h"

static const sv_yenum_t SIZE_FOR[] = {{"target", 0}, {"peak", 1}};
static const sv_yenum_t SERVING[] = {{"colocated", 0}, {"disaggregated", 1}};

static const char *at(const sv_ynode_t *n, char *buf, size_t len)
{
    return sv_ynode_where(n, buf, len);
}

/* A list of 1 to max entries (more would not fit the plan's arrays: an error, not a cut). */
static int plan_list(sv_ynode_t *node, const char *what, size_t max, sv_error_t *err)
{
    char w[512];
    int rc = sv_yexpect_seq(node, what, err);
    if (rc) return rc;
    if (node->n < 1 || node->n > max)
        return sv_errorf(err, SV_ELIMIT, "%s: %s: give 1 to %zu values, got %zu",
                         at(node, w, sizeof w), what, max, node->n);
    return 0;
}

/* A value given twice in one plan list would run the same configurations twice. */
static int plan_dup(const sv_ynode_t *item, int dup, sv_error_t *err)
{
    char w[512];
    if (!dup) return 0;
    return sv_errorf(err, SV_EINVAL, "%s: %s: '%s' is given twice in the list",
                     at(item, w, sizeof w), item->path, item->scalar);
}

/* A list of GPU names from the catalog (canonical names), no repeats. */
static int gpu_list(sv_ynode_t *g, const char *what, const sv_catalog_t *cat,
                    char (*out)[SV_NAME_MAX], int *n, sv_error_t *err)
{
    char w[512];
    int rc;
    if ((rc = plan_list(g, what, SV_PLAN_MAX_GPUS, err))) return rc;
    for (size_t i = 0; i < g->n; i++) {
        const sv_gpu_t *gp;
        if (g->seq[i]->kind != SV_Y_SCALAR || sv_catalog_gpu(cat, g->seq[i]->scalar, &gp, err)) {
            char msg[SV_ERRMSG_MAX];
            snprintf(msg, sizeof msg, "%s",
                     g->seq[i]->kind == SV_Y_SCALAR ? err->msg : "expected a GPU name");
            return sv_errorf(err, SV_EINVAL, "%s: %s: %s", at(g->seq[i], w, sizeof w),
                             g->seq[i]->path, msg);
        }
        for (int j = 0; j < *n; j++)
            if ((rc = plan_dup(g->seq[i], strcmp(out[j], gp->name) == 0, err))) return rc;
        snprintf(out[(*n)++], SV_NAME_MAX, "%s", gp->name);
    }
    return 0;
}

/* A list of TP degrees, no repeats (t NULL: keep *out). */
static int tp_list(sv_ynode_t *t, const char *what, int *out, int *n, sv_error_t *err)
{
    int rc;
    if (!t) return 0;
    if ((rc = plan_list(t, what, SV_PLAN_MAX_CHOICES, err))) return rc;
    *n = 0;
    for (size_t i = 0; i < t->n; i++) {
        long v;
        if ((rc = sv_yscalar_long(t->seq[i], 1, 1024, &v, err))) return rc;
        for (int j = 0; j < *n; j++)
            if ((rc = plan_dup(t->seq[i], out[j] == (int)v, err))) return rc;
        out[(*n)++] = (int)v;
    }
    return 0;
}

/* plan.price_per_hour_usd: a map of catalog GPU name to the price of one GPU-hour (optional). */
static int read_prices(sv_ynode_t *pm, const sv_catalog_t *cat, sv_plan_cfg_t *p, sv_error_t *err)
{
    char w[512];
    int rc;
    sv_ynode_t *pr = sv_ymap_get(pm, "price_per_hour_usd");
    if (pr && !sv_yscalar_is_null(pr)) {
        if ((rc = sv_yexpect_map(pr, "plan.price_per_hour_usd", err))) return rc;
        if (pr->n > SV_PLAN_MAX_GPUS)
            return sv_errorf(err, SV_EINVAL, "%s: plan.price_per_hour_usd: at most %d GPUs",
                             at(pr, w, sizeof w), SV_PLAN_MAX_GPUS);
        for (size_t i = 0; i < pr->n; i++) {
            const sv_gpu_t *gp;
            if ((rc = sv_catalog_gpu(cat, pr->map[i].key, &gp, err)))
                return sv_error_prefix(err, "%s: plan.price_per_hour_usd",
                                       at(pr->map[i].val, w, sizeof w));
            snprintf(p->price_gpu[i], SV_NAME_MAX, "%s", gp->name);
            if ((rc = sv_yget_double(pr, pr->map[i].key, 1, 0, 1e6, &p->price[i], err))) return rc;
        }
        p->nprices = (int)pr->n;
    }
    return 0;
}

/* plan.prefill and plan.decode: per-phase GPU and TP lists (each defaults to plan.gpus and
 * plan.tp); either one given asks for split plans. */
static int read_phases(sv_ynode_t *pm, const sv_catalog_t *cat, sv_plan_cfg_t *p, sv_error_t *err)
{
    int rc;
    static const char *const PHASE[2] = {"prefill", "decode"};
    for (int k = 0; k < 2; k++) {
        memcpy(p->phase_gpus[k], p->gpus, sizeof p->gpus);
        p->nphase_gpus[k] = p->ngpus;
        memcpy(p->phase_tps[k], p->tps, sizeof p->tps);
        p->nphase_tps[k] = p->ntps;
        sv_ynode_t *ph = sv_ymap_get(pm, PHASE[k]);
        if (!ph || sv_yscalar_is_null(ph)) continue;
        char what[32];
        snprintf(what, sizeof what, "plan.%s", PHASE[k]);
        if ((rc = sv_yexpect_map(ph, what, err))) return rc;
        p->split = 1;
        sv_ynode_t *pg = sv_ymap_get(ph, "gpus");
        snprintf(what, sizeof what, "plan.%s.gpus", PHASE[k]);
        if (pg) {
            p->nphase_gpus[k] = 0;
            if ((rc = gpu_list(pg, what, cat, p->phase_gpus[k], &p->nphase_gpus[k], err)))
                return rc;
        }
        snprintf(what, sizeof what, "plan.%s.tp", PHASE[k]);
        if ((rc = tp_list(sv_ymap_get(ph, "tp"), what, p->phase_tps[k], &p->nphase_tps[k], err)))
            return rc;
        if ((rc = sv_ymap_check_unknown(ph, err))) return rc;
    }
    return 0;
}

const char *const sv_plan_layout_keys[] = {
    "ep",          "dp_attention",           "ep_redundant_experts", "ep_kernel",
    "speculative", "num_speculative_tokens", "spec_acceptance",      NULL};

/* The value layout l gives key on phase ph (1 prefill, 2 decode; 0: keys for both
 * phases only), or NULL: a phase's own value over the one for both. */
static const char *layout_value(const sv_plan_layout_t *l, const char *key, int ph)
{
    const char *v = NULL;
    for (int i = 0; i < l->nkeys; i++)
        if (strcmp(l->key[i], key) == 0 && (l->phase[i] == 0 || l->phase[i] == ph)) {
            if (l->phase[i] == ph) return l->value[i];
            v = l->value[i];
        }
    return v;
}

/* A layout's compact label for phase ph from the settings it sets there (s: the defaults
 * with those keys applied), its keys in sv_plan_layout_keys order: "EP8 DPA8", "MTP3", ""
 * for none; written at b (n bytes). */
static void layout_label(const sv_plan_layout_t *l, int ph, const sv_perf_settings_t *s,
                         char *b, size_t n)
{
    static const char *const kernel[] = {"DeepEP-auto", "DeepEP-LL", "DeepEP-HT"};
    static const char *const spec[SV_SPEC_COUNT] = {"no-spec", "MTP", "EAGLE", "DRAFT"};
    size_t k = 0;
    b[0] = 0;
#define ADD(...)                                                                                   \
    (k += (size_t)snprintf(b + k, k < n ? n - k : 0, __VA_ARGS__), k = k < n ? k : n - 1)
    if (layout_value(l, "ep", ph)) ADD("%sEP%d", k ? " " : "", s->ep);
    if (layout_value(l, "ep_redundant_experts", ph)) ADD("%sRE%d", k ? " " : "", s->ep_redundant);
    if (layout_value(l, "dp_attention", ph)) ADD("%sDPA%d", k ? " " : "", s->dp_attention);
    if (layout_value(l, "ep_kernel", ph)) ADD("%s%s", k ? " " : "", kernel[s->ep_kernel]);
    if (layout_value(l, "speculative", ph)) {
        if (s->spec_method == SV_SPEC_NONE)
            ADD("%s%s", k ? " " : "", spec[0]);
        else
            ADD("%s%s%d", k ? " " : "", spec[s->spec_method], sv_spec_k(s));
    } else if (layout_value(l, "num_speculative_tokens", ph))
        ADD("%sk%d", k ? " " : "", s->spec_k);
    if (layout_value(l, "spec_acceptance", ph))
        ADD("%sacc %s", k ? " " : "", layout_value(l, "spec_acceptance", ph));
#undef ADD
}

int sv_plan_layout_apply(const sv_plan_layout_t *l, int ph, sv_perf_settings_t *s,
                         sv_error_t *err)
{
    int n = 0;
    for (int pass = 0; pass < (ph ? 2 : 1); pass++)
        for (int i = 0; i < l->nkeys; i++) {
            if (l->phase[i] != (pass ? ph : 0)) continue;
            int rc = sv_perf_settings_set(s, l->key[i], l->value[i], err);
            if (rc) return rc;
            n++;
        }
    return n;
}

/* The settings a layout gives phase ph: the defaults with its keys applied. */
static sv_perf_settings_t layout_settings(const sv_plan_layout_t *l, int ph)
{
    sv_perf_settings_t s = sv_perf_settings_default();
    sv_error_t err;
    (void)sv_plan_layout_apply(l, ph, &s, &err); /* each key was checked as it was read */
    return s;
}

/* A layout's name: its label, or for a phased one each phase's ("P EP8 / D EP8 DPA8"),
 * written at out (n bytes); returns its length (n - 1 or more: it did not fit). */
static size_t layout_name(const sv_plan_layout_t *l, char *out, size_t n)
{
    if (!l->phased) {
        sv_perf_settings_t s = layout_settings(l, 0);
        layout_label(l, 0, &s, out, n);
        return strlen(out);
    }
    char ph[2][256];
    for (int k = 0; k < 2; k++) {
        sv_perf_settings_t s = layout_settings(l, k + 1);
        layout_label(l, k + 1, &s, ph[k], sizeof ph[k]);
    }
    return (size_t)snprintf(out, n, "P %s / D %s", ph[0][0] ? ph[0] : "TP",
                            ph[1][0] ? ph[1] : "TP");
}

/* One key of a layout entry (map m) for phase ph, checked on the settings s of that phase. */
static int layout_key(sv_plan_layout_t *l, sv_perf_settings_t *s, sv_ynode_t *m, size_t j,
                      int ph, sv_error_t *err)
{
    char w[512], msg[SV_ERRMSG_MAX];
    const char *key = m->map[j].key;
    sv_ynode_t *v = m->map[j].val;
    int known = 0, rc;
    m->map[j].used = 1;
    for (int q = 0; sv_plan_layout_keys[q]; q++)
        known |= strcmp(sv_plan_layout_keys[q], key) == 0;
    if (!known)
        return sv_errorf(err, SV_EINVAL,
                         "%s: %s: not a layout key (ep, dp_attention, ep_redundant_experts, "
                         "ep_kernel, speculative, num_speculative_tokens or spec_acceptance%s)",
                         at(v, w, sizeof w), v->path, ph ? "" : "; prefill or decode for one phase");
    if (v->kind != SV_Y_SCALAR)
        return sv_errorf(err, SV_EINVAL, "%s: %s: expected a single value", at(v, w, sizeof w),
                         v->path);
    if (strlen(v->scalar) >= sizeof l->value[0])
        return sv_errorf(err, SV_EINVAL, "%s: %s: longer than %zu characters", at(v, w, sizeof w),
                         v->path, sizeof l->value[0] - 1);
    if ((rc = sv_perf_settings_set(s, key, v->scalar, err))) {
        snprintf(msg, sizeof msg, "%s", err->msg);
        return sv_errorf(err, rc, "%s: %s.%s", at(v, w, sizeof w), m->path, msg);
    }
    snprintf(l->key[l->nkeys], sizeof l->key[0], "%s", key);
    snprintf(l->value[l->nkeys], sizeof l->value[0], "%s", v->scalar);
    l->phase[l->nkeys++] = (unsigned char)ph;
    return 0;
}

/* plan.layouts: a list of maps of hardware keys, each checked as the hardware map's own
 * (sv_perf_settings_set), with `prefill` and `decode` maps of keys for one phase; none
 * twice; default one empty layout. */
static int read_layouts(sv_ynode_t *pm, sv_plan_cfg_t *p, sv_error_t *err)
{
    static const char *const PH[2] = {"prefill", "decode"};
    char w[512];
    int rc;
    p->nlayouts = 1;
    sv_ynode_t *ls = sv_ymap_get(pm, "layouts");
    if (!ls || sv_yscalar_is_null(ls)) return 0;
    if ((rc = plan_list(ls, "plan.layouts", SV_PLAN_MAX_LAYOUTS, err))) return rc;
    p->layouts_given = 1;
    p->nlayouts = 0;
    for (size_t i = 0; i < ls->n; i++) {
        sv_ynode_t *e = ls->seq[i];
        sv_plan_layout_t *l = &p->layouts[p->nlayouts];
        if (e->kind != SV_Y_MAP && !sv_yscalar_is_null(e))
            return sv_errorf(err, SV_EINVAL, "%s: %s: expected a map of hardware keys like {ep: 8}",
                             at(e, w, sizeof w), e->path);
        /* The keys for both phases first, then each phase's own on top of them. */
        sv_perf_settings_t s = sv_perf_settings_default();
        for (size_t j = 0; e->kind == SV_Y_MAP && j < e->n; j++)
            if (strcmp(e->map[j].key, PH[0]) && strcmp(e->map[j].key, PH[1]) &&
                (rc = layout_key(l, &s, e, j, 0, err)))
                return rc;
        for (int k = 0; k < 2 && e->kind == SV_Y_MAP; k++) {
            sv_ynode_t *ph = sv_ymap_get(e, PH[k]);
            if (!ph) continue;
            char what[48];
            snprintf(what, sizeof what, "%s", ph->path);
            if ((rc = sv_yexpect_map(ph, what, err))) return rc;
            sv_perf_settings_t sp = s;
            for (size_t j = 0; j < ph->n; j++)
                if ((rc = layout_key(l, &sp, ph, j, k + 1, err))) return rc;
            l->phased = 1;
        }
        char name[512];
        if (layout_name(l, name, sizeof name) >= sizeof l->name)
            return sv_errorf(err, SV_EINVAL,
                             "%s: %s: its label '%s' is longer than %zu characters (give fewer "
                             "keys or shorter values)",
                             at(e, w, sizeof w), e->path, name, sizeof l->name - 1);
        memcpy(l->name, name, strlen(name) + 1);
        for (int j = 0; j < p->nlayouts; j++)
            if (strcmp(p->layouts[j].name, l->name) == 0)
                return sv_errorf(err, SV_EINVAL, "%s: %s: the same layout as plan.layouts[%d]",
                                 at(e, w, sizeof w), e->path, j);
        p->nlayouts++;
    }
    return 0;
}

static int read_plan(sv_ynode_t *pm, const sv_catalog_t *cat, sv_plan_cfg_t *p, sv_error_t *err)
{
    char w[512];
    int rc;
    if ((rc = sv_yexpect_map(pm, "plan", err))) return rc;
    p->given = 1;
    p->max_gpus = 64;
    p->probe_requests = 2000;
    p->tolerance = 0.02;
    p->colocated = 1;
    p->peak_factor = 1;
    p->profile_peak = 0;
    if ((rc = sv_yget_enum(pm, "size_for", 0, SIZE_FOR, 2, &p->profile_peak, err)) < 0) return rc;
    if ((rc = sv_yget_double(pm, "target_rate", !p->profile_peak, 1e-6, 1e9, &p->target_rate,
                             err)) < 0 ||
        (rc = sv_yget_long(pm, "probe_requests", 0, 100, 10000000, &p->probe_requests, err)) < 0 ||
        (rc = sv_yget_double(pm, "tolerance", 0, 1e-4, 0.5, &p->tolerance, err)) < 0 ||
        (rc = sv_yget_double(pm, "peak_factor", 0, 1, 1000, &p->peak_factor, err)) < 0)
        return rc;
    if ((rc = read_prices(pm, cat, p, err))) return rc;
    long mg = p->max_gpus;
    if ((rc = sv_yget_long(pm, "max_gpus", 0, 1, 100000, &mg, err)) < 0) return rc;
    p->max_gpus = (int)mg;
    sv_ynode_t *g = sv_ymap_get(pm, "gpus");
    if (!g)
        return sv_errorf(err, SV_EINVAL, "%s: plan: missing required key 'gpus'",
                         at(pm, w, sizeof w));
    if ((rc = gpu_list(g, "plan.gpus", cat, p->gpus, &p->ngpus, err))) return rc;
    p->tps[0] = 1;
    p->ntps = 1;
    if ((rc = tp_list(sv_ymap_get(pm, "tp"), "plan.tp", p->tps, &p->ntps, err))) return rc;
    if ((rc = read_phases(pm, cat, p, err))) return rc;
    if ((rc = read_layouts(pm, p, err))) return rc;
    sv_ynode_t *m = sv_ymap_get(pm, "max_num_seqs");
    if (m) {
        if ((rc = plan_list(m, "plan.max_num_seqs", SV_PLAN_MAX_CHOICES, err))) return rc;
        for (size_t i = 0; i < m->n; i++) {
            if ((rc = sv_yscalar_long(m->seq[i], 1, 1 << 20, &p->max_num_seqs[p->nmns], err)))
                return rc;
            for (int j = 0; j < p->nmns; j++)
                if ((rc = plan_dup(m->seq[i], p->max_num_seqs[j] == p->max_num_seqs[p->nmns], err)))
                    return rc;
            p->nmns++;
        }
    }
    sv_ynode_t *sv = sv_ymap_get(pm, "serving");
    if (sv) {
        if ((rc = plan_list(sv, "plan.serving", 2, err))) return rc;
        p->colocated = 0;
        for (size_t i = 0; i < sv->n; i++) {
            int disagg;
            if ((rc = sv_yscalar_enum(sv->seq[i], SERVING, 2, &disagg, err))) return rc;
            *(disagg ? &p->disaggregated : &p->colocated) = 1;
        }
    }
    sv_ynode_t *r = sv_ymap_get(pm, "prefill_decode");
    if (r) {
        if ((rc = plan_list(r, "plan.prefill_decode", SV_PLAN_MAX_CHOICES, err))) return rc;
        for (size_t i = 0; i < r->n; i++) {
            int a, b;
            char extra;
            if (r->seq[i]->kind != SV_Y_SCALAR ||
                sscanf(r->seq[i]->scalar, "%d:%d%c", &a, &b, &extra) != 2 || a < 1 || b < 1 ||
                a > 64 || b > 64)
                return sv_errorf(err, SV_EINVAL,
                                 "%s: %s: expected a ratio like 1:3 (prefill:decode replicas)",
                                 at(r->seq[i], w, sizeof w), r->seq[i]->path);
            for (int j = 0; j < p->nratios; j++)
                if ((rc = plan_dup(r->seq[i], p->ratios[j][0] == a && p->ratios[j][1] == b, err)))
                    return rc;
            p->ratios[p->nratios][0] = a;
            p->ratios[p->nratios++][1] = b;
        }
    }
    if (p->split && !sv) p->disaggregated = 1; /* per-phase lists ask for split plans */
    if (p->disaggregated && p->nratios == 0) {
        const int def[3][2] = {{1, 1}, {1, 2}, {1, 3}};
        for (int i = 0; i < 3; i++) {
            p->ratios[i][0] = def[i][0];
            p->ratios[i][1] = def[i][1];
        }
        p->nratios = 3;
    }
    return sv_ymap_check_unknown(pm, err);
}

/* The file with its overrides; the caller frees it. */
static int load_doc(const char *path, const char *const *sets, int nsets, sv_ydoc_t **doc,
                    sv_error_t *err)
{
    int rc = sv_ydoc_load(path, doc, err);
    for (int i = 0; i < nsets && !rc; i++)
        rc = sv_ydoc_set(*doc, sets[i], err);
    if (rc) {
        sv_ydoc_free(*doc);
        *doc = NULL;
    }
    return rc;
}

int sv_plan_cfg_read(const char *path, const char *const *sets, int nsets, const sv_scenario_t *sc,
                     const sv_catalog_t *cat, sv_plan_cfg_t *cfg, sv_error_t *err)
{
    memset(cfg, 0, sizeof *cfg);
    sv_ydoc_t *doc;
    int rc = load_doc(path, sets, nsets, &doc, err);
    if (rc) return rc;
    sv_ynode_t *pm = doc->root ? sv_ymap_get(doc->root, "plan") : NULL;
    if (pm && !sv_yscalar_is_null(pm)) rc = read_plan(pm, cat, cfg, err);
    if (!rc && cfg->profile_peak) {
        char w[512];
        if (sc->workload.profile.kind == SV_PROFILE_NONE)
            rc = sv_errorf(err, SV_EINVAL,
                           "%s: plan.size_for: peak needs a workload.rate_profile to take the "
                           "peak of",
                           at(sv_ymap_get(pm, "size_for"), w, sizeof w));
        else
            cfg->target_rate = sv_profile_peak(&sc->workload.profile);
    }
    sv_ydoc_free(doc);
    return rc;
}

int sv_sweep_cfg_read(const char *path, const char *const *sets, int nsets, sv_sweep_cfg_t *cfg,
                      sv_error_t *err)
{
    memset(cfg, 0, sizeof *cfg);
    sv_ydoc_t *doc;
    int rc = load_doc(path, sets, nsets, &doc, err);
    if (rc) return rc;
    char w[512];
    sv_ynode_t *sw = doc->root ? sv_ymap_get(doc->root, "sweep") : NULL;
    if (sw && !sv_yscalar_is_null(sw)) {
        sv_ynode_t *v = NULL;
        if (!(rc = sv_yexpect_map(sw, "sweep", err))) v = sv_ymap_get(sw, "vary");
        if (!rc && v && !(rc = sv_yexpect_seq(v, "sweep.vary", err)) && v->n > SV_SWEEP_MAX_VARY)
            rc = sv_errorf(err, SV_EINVAL, "%s: sweep.vary: at most %d keys", at(v, w, sizeof w),
                           SV_SWEEP_MAX_VARY);
        for (size_t i = 0; !rc && v && i < v->n; i++) {
            sv_ynode_t *e = v->seq[i];
            if (e->kind != SV_Y_SCALAR || !strchr(e->scalar, '=') ||
                strlen(e->scalar) >= SV_SWEEP_SPEC_MAX)
                rc =
                    sv_errorf(err, SV_EINVAL, "%s: %s: expected KEY=SPEC like workload.rate=2:30:2",
                              at(e, w, sizeof w), e->path);
            else
                snprintf(cfg->vary[cfg->nvary++], SV_SWEEP_SPEC_MAX, "%s", e->scalar);
        }
        if (!rc) rc = sv_ymap_check_unknown(sw, err);
    }
    sv_ydoc_free(doc);
    return rc;
}
