/*
 * The HTTP server that `servesim lab` and `servesim serve` share (GNU libmicrohttpd):
 * listening on one address, Host checks, connection limits per client and in all, a
 * deadline for receiving each request whole, bounded bodies, and errors as JSON in the
 * application's own shape. The application answers complete requests; the rules below
 * answer the rest before it sees them:
 *
 *   | rule | answer |
 *   |---|---|
 *   | the Host header names no address or name of this machine (bound to a wildcard: any of its addresses and names; else the bound address, localhost, 127.0.0.1, [::1]) | 403 |
 *   | Content-Length or the body received passes max_body | 413, connection closed |
 *   | the client's address holds more than per_client connections | 429, connection closed |
 *   | more than max_conns connections are open | 503, connection closed |
 *   | a request not received whole (headers and body) deadline_s after its connection opened or its last answer ended | the connection is closed |
 *   | nothing moves on a connection for idle_s while an answer is written | the connection is closed |
 *
 * Connections past max_conns + per_client wait in the listen backlog (libmicrohttpd stops
 * accepting at its limit). threaded: a thread per connection (the lab, whose answers are
 * long computations); else one polling thread (epoll) and answers that wait are suspended
 * (sv_httpd_suspend) and resumed from another thread (serve's token streams).
 *
 * Ownership: sv_httpd_start() returns a server sv_httpd_stop() frees; sv_httpd_req_t is
 * owned by the server (its body valid until the request completes); a response body given
 * to sv_httpd_respond() is taken (freed by the server).
 */
#ifndef SERVESIM_HTTPD_H
#define SERVESIM_HTTPD_H

#include <stddef.h>

#include <microhttpd.h>

#include "servesim/base/error.h"

typedef struct sv_httpd sv_httpd_t;

/* One request, once received whole. user is the application's (NULL at first; kept
 * across calls after a resume, handed to cfg.done when the request completes). */
typedef struct sv_httpd_req {
    struct MHD_Connection *conn;
    const char *method, *url;
    const char *body; /* NUL-terminated (a NUL inside: len says) */
    size_t len;
    int calls; /* 1 at the first call, 2 after the first resume, ... */
    int http11;      /* sent as HTTP/1.1 (a body of unknown length then goes chunked) */
    double received; /* when its headers were read whole (CLOCK_MONOTONIC, s) */
    void *user;
} sv_httpd_req_t;

typedef struct sv_httpd_cfg {
    const char *bind;     /* an IP address: 127.0.0.1, 0.0.0.0, ::1, :: */
    const char *bind_opt; /* the option that gave it, for errors (NULL: "--bind") */
    int port;         /* 0: any free port */
    int threaded;
    unsigned max_conns;  /* open connections answered */
    unsigned per_client; /* connections of one address answered */
    unsigned deadline_s; /* to receive a request whole */
    unsigned idle_s;     /* without progress while answering */
    size_t max_body;     /* bytes */
    size_t conn_memory;  /* libmicrohttpd's pool per connection (request line, headers) */
    /* Answer a complete request: queue a response (sv_httpd_respond, or MHD's own) or
     * suspend; return MHD_YES, or MHD_NO to close the connection. */
    enum MHD_Result (*handler)(void *cls, sv_httpd_req_t *req);
    /* An error body in the application's shape (malloc'd; *ctype set), or NULL. */
    char *(*error_body)(void *cls, int status, const char *msg, size_t *len, const char **ctype);
    void (*done)(void *cls, void *user); /* a request completed (NULL: nothing to free) */
    void *cls;
    const char *const *headers; /* name, value, ..., NULL: added to every response */
} sv_httpd_cfg_t;

/* Listen and serve in the background. The cfg (and what it points to) must outlive the
 * server. 0 (*port the bound one), or an error naming the address. */
int sv_httpd_start(const sv_httpd_cfg_t *cfg, sv_httpd_t **out, int *port, sv_error_t *err);
void sv_httpd_stop(sv_httpd_t *h); /* NULL-safe */

/* Queue body (taken) with status and content type and the configured headers. */
enum MHD_Result sv_httpd_respond(sv_httpd_t *h, struct MHD_Connection *c, int status, char *body,
                                 size_t len, const char *ctype);
/* The application's error body for status and msg, queued. */
enum MHD_Result sv_httpd_error(sv_httpd_t *h, struct MHD_Connection *c, int status,
                               const char *msg);
/* The configured headers on a response the application made itself. */
void sv_httpd_headers(const sv_httpd_t *h, struct MHD_Response *r);

/* Suspend / resume an unthreaded server's connection (libmicrohttpd's own calls). */
void sv_httpd_suspend(struct MHD_Connection *c);
void sv_httpd_resume(struct MHD_Connection *c);
/* Has the client of suspended connection c closed it (or its sending half, or reset it)?
 * A look at its socket that reads nothing; only while c is suspended, when libmicrohttpd
 * neither reads nor closes it. */
int sv_httpd_peer_closed(struct MHD_Connection *c);
/* The socket of connection c, or -1. An application may write to it itself only while c
 * is suspended, libmicrohttpd's own output sent whole (serve's token chunks, framed as
 * HTTP/1.1 chunks), and must leave no frame half-written when it resumes c. */
int sv_httpd_fd(struct MHD_Connection *c);
/* CLOCK_MONOTONIC in seconds: the clock of sv_httpd_req_t.received. */
double sv_httpd_mono(void);

/* Does Host (as sent, with or without :port) name this server? For tests and the rule. */
int sv_httpd_host_ok(const sv_httpd_t *h, const char *host);

/* Block SIGINT and SIGTERM in this thread and those it starts (call before
 * sv_httpd_start); then sv_httpd_wait_signal() returns the one that came. */
void sv_httpd_block_signals(void);
int sv_httpd_wait_signal(void);

/* The address as a URL host: "127.0.0.1", "[::1]". */
const char *sv_httpd_url_host(const char *bind, char *buf, size_t n);

#endif
