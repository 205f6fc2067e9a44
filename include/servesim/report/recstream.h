/*
 * Outputs written as the run's requests end (the streaming summary, servesim/metrics/
 * metrics.h): --requests-csv's rows and the JSON's per-request lists (--detailed's too), so
 * that the run need not keep its request records (a windowed pool, servesim/traffic/
 * request.h). Rows and items come in id order, byte for byte what the writers from the
 * records write: a request's record is written when it and every request before it have
 * ended (the pool releases it), its token gaps taken as it ends and held until then.
 *
 * Ownership: the stream owns its files and buffers (sv_recstream_free); the scenario it was
 * made for must outlive it.
 */
#ifndef SERVESIM_RECSTREAM_H
#define SERVESIM_RECSTREAM_H

#include "servesim/cluster/sim.h"

typedef struct sv_recstream sv_recstream_t;

/* A stream for scenario sc: --requests-csv to csv (NULL: none; a file, opened now with its
 * header), and the JSON's lists when json is set (with --detailed's when detailed), kept in
 * temporary files until sv_report_json_streamed. 0, SV_EIO naming the file, or SV_ENOMEM. */
int sv_recstream_new(const sv_scenario_t *sc, const char *csv, int json, int detailed,
                     sv_recstream_t **out, sv_error_t *err);
/* Make the run of sc write through rs: sets sc->metrics' window and hooks. */
void sv_recstream_attach(sv_recstream_t *rs, sv_scenario_t *sc);
/* After a run that succeeded: closes the CSV; 0, or SV_EIO / SV_ENOMEM for what failed
 * while the requests were written. */
int sv_recstream_finish(sv_recstream_t *rs, sv_error_t *err);
/* The JSON as sv_report_json writes it (servesim/report/report.h), its per-request lists
 * those of rs (made with json set and the same detailed). */
int sv_report_json_streamed(const sv_result_t *res, const sv_recstream_t *rs, int detailed,
                            const char *path, sv_error_t *err);
/* NULL-safe; a CSV not finished (the run failed) is removed, as if never written. */
void sv_recstream_free(sv_recstream_t *rs);

#endif
