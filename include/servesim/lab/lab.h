/*
 * The classroom lab (`servesim lab`, docs/lab.md): a small HTTP server on the local
 * machine that serves one self-contained page of lessons and a JSON API that runs the
 * lab's scenarios (scenarios/lab/, a fixed allow-list) with the overrides a slider
 * gives, and answers with the run's metrics and charts:
 *
 *   GET /                               the page (HTML, CSS and script in one; no network)
 *   GET /api/run?scenario=NAME&set=K=V  one run: the same result JSON as `servesim run
 *                                       --json`, the run report's charts, the YAML
 *   GET /api/lesson?tab=TAB&PARAM=V...  the runs of one lesson tab, its numbers and charts
 *
 * Every request is bounded (at most SV_LAB_MAX_REQUESTS simulated requests over all its
 * runs, bounded lengths and replicas) and every parameter is checked: a bad one is an
 * HTTP 400 with {"error": "one line"}, the loader's own message where it is the loader
 * that refuses. Requests run in their own threads and share only read-only data (the
 * catalog); each run owns its scenario and result.
 *
 * Ownership: sv_lab_answer() returns a malloc'd body the caller frees.
 */
#ifndef SERVESIM_LAB_H
#define SERVESIM_LAB_H

#include <stddef.h>
#include <stdio.h>

#include "servesim/base/error.h"
#include "servesim/cost/catalog.h"

#define SV_LAB_MAX_REQUESTS 20000L /* simulated requests per HTTP request, all runs */
#define SV_LAB_MAX_ARGS 32         /* query parameters per HTTP request */

typedef struct sv_lab {
    const sv_catalog_t *cat; /* read-only while serving */
    const char *dir;         /* the lab scenarios: scenarios/lab */
    const char *bind;        /* address to listen on; default 127.0.0.1 */
    int port;                /* 0: any free port */
    FILE *log;               /* one line per request, or NULL */
} sv_lab_t;

/* The directory of the lab scenarios in the source tree. */
const char *sv_lab_default_dir(void);

typedef struct sv_lab_arg {
    const char *key, *value;
} sv_lab_arg_t;

/* Answer one GET of path with its (decoded) query arguments: the HTTP status, the body
 * (malloc'd, *len bytes) and its content type. Never fails but for out of memory (500). */
int sv_lab_answer(const sv_lab_t *lab, const char *path, const sv_lab_arg_t *args, int nargs,
                  char **body, size_t *len, const char **ctype);

/* Serve until SIGINT or SIGTERM. Prints "servesim lab: http://ADDR:PORT/" and then
 * "port PORT" on stdout once listening (PORT the bound one when lab->port is 0). */
int sv_lab_serve(const sv_lab_t *lab, sv_error_t *err);

#endif
