/*
 * Internal to the report layer: the pieces of the vLLM-style writers (report.c) that the
 * other conventions' writers (convention.c) reuse, so servesim's own block reads the same
 * whichever tool's names the run is reported in.
 */
#ifndef SERVESIM_REPORT_INT_H
#define SERVESIM_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "base/jsonw_int.h"
#include "servesim/cluster/sim.h"
#include "servesim/report/config.h"
#include "servesim/report/recstream.h"

/* servesim's block of the printed summary (the "inside the server" lines and on). */
void sv__report_servesim_summary(const sv_result_t *res, FILE *f);
/* The "servesim" object of the JSON; convention NULL writes vLLM's (no "convention" key),
 * else the key and the convention's definitions. */
void sv__report_servesim_json(sv_jw_t *w, const sv_result_t *res, const char *convention,
                              const char *definitions, const sv_run_config_t *cfg);
/* The finance block (sim/report/finance.c): nothing unless the scenario has `cost`. */
void sv__report_finance_summary(const sv_result_t *res, FILE *f);
void sv__report_finance_json(sv_jw_t *w, const sv_result_t *res);
/* One line of a labelled section: the label (without the terminal's colon) and the value
 * as text. The terminal and the HTML report both print lines built once by the functions
 * below, so their numbers cannot differ. */
typedef struct sv__line {
    char label[64];
    char text[128];
} sv__line_t;
#define SV__MAX_LINES 24
/* The finance block's lines (0 of them without a `cost` map). */
int sv__report_finance_lines(const sv_result_t *res, sv__line_t *out);
/* The sessions block's lines (0 without workload.sessions), and the per-call-index table:
 * its column heads and row i's cells (call label, sent, done, TTFT p50, TTFT p99, E2EL
 * p50, prompt, hit %), as the terminal prints them. */
int sv__report_session_lines(const sv_result_t *res, sv__line_t *out);
#define SV__TURN_COLS 8
extern const char *const sv__turn_heads[SV__TURN_COLS];
void sv__report_turn_cells(const sv_result_t *res, int i, char cells[SV__TURN_COLS][32]);
/* The sessions block's heading words ("chain, with history", "fanout"). */
const char *sv__report_session_kind(const sv_scenario_t *sc);
/* Lines as the terminal prints them: "%-40s %-10s", the label with its colon. */
void sv__report_lines_print(FILE *f, const sv__line_t *l, int n);
/* The network's round trip in words ("40 ms, half each way"). */
void sv__report_network_text(const sv_network_cfg_t *n, char *buf, size_t size);
/* Python's "{s:{c}^{n}}": s centred in width, padded with c. */
void sv__report_centred(FILE *f, const char *s, char c, int width);
/* The JSON "date": SOURCE_DATE_EPOCH when set, else the epoch. */
void sv__report_date(char *buf, size_t n);
/* The per-request lists of vLLM's JSON (report.c), in order: whether list k is written
 * (some only with --detailed), one request's item of it onto w (itl[0..n): its token gaps,
 * read by the "itls" list alone, the one sv__report_list_itls says). */
#define SV__NLISTS 9
typedef void (*sv__list_put_fn)(sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r,
                                const double *itl, size_t n);
int sv__report_list_wanted(int k, int detailed);
int sv__report_list_itls(int k);
void sv__report_list_put(int k, sv_jw_t *w, const sv_scenario_t *sc, const sv_req_t *r,
                         const double *itl, size_t n);
/* What was written of list k as the requests ended, copied onto w inside its array
 * (sim/report/recstream.c). */
void sv__recstream_splice(const sv_recstream_t *rs, int k, sv_jw_t *w);
/* --requests-csv: its header line, and request i's row. */
void sv__report_csv_head(FILE *f, const sv_metrics_cfg_t *mc);
void sv__report_csv_row(FILE *f, const sv_metrics_cfg_t *mc, size_t i, const sv_req_t *r);
/* Open path for writing ("-": stdout); close it, a write error becoming SV_EIO. */
FILE *sv__report_open(const char *path, sv_error_t *err);
int sv__report_close(FILE *f, const char *path, sv_error_t *err);

#endif
