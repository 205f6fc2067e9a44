/*
 * The shared HTTP server (see include/servesim/serve/httpd.h): libmicrohttpd started with
 * the limits, a record per TCP connection (its client address and when the request it is
 * receiving began), a sweeper thread that closes connections whose request is not in
 * whole by the deadline (libmicrohttpd's own timeout is an idle one: a byte every few
 * seconds would keep a connection forever), and the Host rule's list of names.
 */
#include "servesim/serve/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_NAMES 64

typedef struct conn_rec {
    struct conn_rec *prev, *next;
    int fd;
    char ip[INET6_ADDRSTRLEN];
    double since;  /* opened, or its last answer ended */
    int receiving; /* a request not yet in whole */
    int over;      /* 0, or the status its requests get (429, 503) */
    int killed;
} conn_rec_t;

typedef struct req_state {
    sv_httpd_req_t pub;
    char *buf;
    size_t len, cap;
    int too_big, early;
} req_state_t;

struct sv_httpd {
    sv_httpd_cfg_t cfg;
    struct MHD_Daemon *d;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    conn_rec_t *conns;
    unsigned nconns;
    pthread_t sweeper;
    int sweeping, stop;
    char *names[MAX_NAMES];
    int nnames;
};

double sv_httpd_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- names of this machine ------------------------------------------------------------ */

static void add_name(sv_httpd_t *h, const char *s)
{
    if (!s || !*s || h->nnames >= MAX_NAMES) return;
    for (int i = 0; i < h->nnames; i++)
        if (strcasecmp(h->names[i], s) == 0) return;
    char *c = strdup(s);
    if (c) h->names[h->nnames++] = c;
}

static void add_addr(sv_httpd_t *h, const struct sockaddr *sa)
{
    char a[INET6_ADDRSTRLEN + 2], b[INET6_ADDRSTRLEN];
    if (sa->sa_family == AF_INET &&
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, b, sizeof b)) {
        add_name(h, b);
    } else if (sa->sa_family == AF_INET6 &&
               inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, b, sizeof b)) {
        snprintf(a, sizeof a, "[%s]", b);
        add_name(h, a);
    }
}

/* localhost and the bound address always; bound to a wildcard, every interface address,
 * the host name and its canonical name too. */
static void collect_names(sv_httpd_t *h, const struct sockaddr *bound, int wildcard)
{
    add_name(h, "localhost");
    add_name(h, "127.0.0.1");
    add_name(h, "[::1]");
    if (!wildcard) {
        add_addr(h, bound);
        return;
    }
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr) add_addr(h, i->ifa_addr);
        freeifaddrs(ifs);
    }
    char host[256];
    if (gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = '\0';
        add_name(h, host);
        struct addrinfo hints = {.ai_flags = AI_CANONNAME}, *ai = NULL;
        if (getaddrinfo(host, NULL, &hints, &ai) == 0) {
            if (ai && ai->ai_canonname) add_name(h, ai->ai_canonname);
            for (struct addrinfo *p = ai; p; p = p->ai_next)
                add_addr(h, p->ai_addr);
            freeaddrinfo(ai);
        }
    }
}

int sv_httpd_host_ok(const sv_httpd_t *h, const char *host)
{
    if (!host) return 0;
    size_t l = strlen(host);
    /* drop a :port (after the closing bracket of an IPv6 literal) */
    const char *colon = strrchr(host, ':');
    const char *bracket = strrchr(host, ']');
    if (colon && (!bracket || colon > bracket) && (host[0] == '[' || strchr(host, ':') == colon)) {
        if (!colon[1]) return 0;
        for (const char *p = colon + 1; *p; p++)
            if (*p < '0' || *p > '9') return 0;
        l = (size_t)(colon - host);
    }
    for (int i = 0; i < h->nnames; i++)
        if (strlen(h->names[i]) == l && strncasecmp(h->names[i], host, l) == 0) return 1;
    return 0;
}

/* ---- responses ---------------------------------------------------------------------------- */

void sv_httpd_headers(const sv_httpd_t *h, struct MHD_Response *r)
{
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    for (const char *const *p = h->cfg.headers; p && p[0] && p[1]; p += 2)
        MHD_add_response_header(r, p[0], p[1]);
}

enum MHD_Result sv_httpd_respond(sv_httpd_t *h, struct MHD_Connection *c, int status, char *body,
                                 size_t len, const char *ctype)
{
    struct MHD_Response *r =
        body ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE)
             : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    if (ctype) MHD_add_response_header(r, "Content-Type", ctype);
    sv_httpd_headers(h, r);
    if (status == 413 || status == 429 || status == 503)
        MHD_add_response_header(r, "Connection", "close");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

enum MHD_Result sv_httpd_error(sv_httpd_t *h, struct MHD_Connection *c, int status,
                               const char *msg)
{
    size_t len = 0;
    const char *ctype = "application/json";
    char *body = h->cfg.error_body ? h->cfg.error_body(h->cfg.cls, status, msg, &len, &ctype)
                                   : NULL;
    if (!body) {
        body = strdup(msg);
        len = body ? strlen(body) : 0;
        ctype = "text/plain; charset=utf-8";
    }
    return sv_httpd_respond(h, c, status, body, len, ctype);
}

void sv_httpd_suspend(struct MHD_Connection *c)
{
    MHD_suspend_connection(c);
}

void sv_httpd_resume(struct MHD_Connection *c)
{
    MHD_resume_connection(c);
}

int sv_httpd_fd(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *fi =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return fi ? fi->connect_fd : -1;
}

int sv_httpd_peer_closed(struct MHD_Connection *c)
{
    int fd = sv_httpd_fd(c);
    if (fd < 0) return 0;
    char b;
    ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* ---- connections ------------------------------------------------------------------------ */

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    sv_httpd_t *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_rec_t *rec = calloc(1, sizeof *rec);
        *ctx = rec;
        if (!rec) return;
        const union MHD_ConnectionInfo *fi =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        rec->fd = fi ? fi->connect_fd : -1;
        if (ai && ai->client_addr) {
            const struct sockaddr *sa = ai->client_addr;
            if (sa->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, rec->ip,
                          sizeof rec->ip);
            else if (sa->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, rec->ip,
                          sizeof rec->ip);
        }
        rec->since = sv_httpd_mono();
        rec->receiving = 1;
        pthread_mutex_lock(&h->mu);
        unsigned same = 0;
        for (conn_rec_t *o = h->conns; o; o = o->next)
            same += strcmp(o->ip, rec->ip) == 0;
        if (h->nconns >= h->cfg.max_conns)
            rec->over = 503;
        else if (same >= h->cfg.per_client)
            rec->over = 429;
        rec->next = h->conns;
        if (h->conns) h->conns->prev = rec;
        h->conns = rec;
        h->nconns++;
        pthread_mutex_unlock(&h->mu);
    } else {
        conn_rec_t *rec = *ctx;
        if (!rec) return;
        pthread_mutex_lock(&h->mu);
        if (rec->prev)
            rec->prev->next = rec->next;
        else
            h->conns = rec->next;
        if (rec->next) rec->next->prev = rec->prev;
        h->nconns--;
        pthread_mutex_unlock(&h->mu);
        free(rec);
        *ctx = NULL;
    }
}

static conn_rec_t *rec_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i ? i->socket_context : NULL;
}

/* Close connections whose request is not in whole by the deadline. */
static void *sweep(void *arg)
{
    sv_httpd_t *h = arg;
    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
        double now = sv_httpd_mono();
        for (conn_rec_t *o = h->conns; o; o = o->next)
            if (o->receiving && !o->killed && o->fd >= 0 &&
                now - o->since > (double)h->cfg.deadline_s) {
                shutdown(o->fd, SHUT_RDWR); /* libmicrohttpd sees the end and closes it */
                o->killed = 1;
            }
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* ---- requests ------------------------------------------------------------------------------ */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
    sv_httpd_t *h = cls;
    req_state_t *st = *state;
    if (!st) { /* the headers are in */
        st = calloc(1, sizeof *st);
        if (!st) return MHD_NO;
        *state = st;
        st->pub.conn = c;
        st->pub.method = method;
        st->pub.url = url;
        st->pub.http11 = version && strcmp(version, MHD_HTTP_VERSION_1_1) == 0;
        st->pub.received = sv_httpd_mono();
        conn_rec_t *rec = rec_of(c);
        const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
        const char *cl =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        st->early = 1;
        if (rec && rec->over == 503)
            return sv_httpd_error(h, c, 503, "the server is at its connection limit; retry later");
        if (rec && rec->over == 429)
            return sv_httpd_error(h, c, 429,
                                  "too many connections from this address; retry later");
        if (!sv_httpd_host_ok(h, host))
            return sv_httpd_error(h, c, 403,
                                  "the server answers requests to this machine's addresses and "
                                  "names only (Host header)");
        if (cl && strtod(cl, NULL) > (double)h->cfg.max_body) {
            char m[160];
            snprintf(m, sizeof m, "the request body (%.40s bytes) is larger than %zu bytes", cl,
                     h->cfg.max_body);
            return sv_httpd_error(h, c, 413, m);
        }
        st->early = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (st->early || st->too_big) return MHD_YES;
        if (st->len + n > h->cfg.max_body) {
            st->too_big = 1;
            return MHD_YES;
        }
        if (st->len + n + 1 > st->cap) {
            size_t cap = st->cap ? st->cap : 4096;
            while (cap < st->len + n + 1)
                cap *= 2;
            char *b = realloc(st->buf, cap);
            if (!b) return MHD_NO;
            st->buf = b;
            st->cap = cap;
        }
        memcpy(st->buf + st->len, upload, n);
        st->len += n;
        st->buf[st->len] = '\0';
        return MHD_YES;
    }
    if (st->early) return MHD_YES;
    if (st->too_big) {
        char m[120];
        snprintf(m, sizeof m, "the request body is larger than %zu bytes", h->cfg.max_body);
        st->early = 1;
        return sv_httpd_error(h, c, 413, m);
    }
    if (st->pub.calls == 0) {
        conn_rec_t *rec = rec_of(c);
        pthread_mutex_lock(&h->mu);
        if (rec) rec->receiving = 0;
        pthread_mutex_unlock(&h->mu);
    }
    st->pub.body = st->buf ? st->buf : "";
    st->pub.len = st->len;
    st->pub.calls++;
    return h->cfg.handler(h->cfg.cls, &st->pub);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    sv_httpd_t *h = cls;
    req_state_t *st = *state;
    if (st) {
        if (h->cfg.done) h->cfg.done(h->cfg.cls, st->pub.user);
        free(st->buf);
        free(st);
        *state = NULL;
    }
    conn_rec_t *rec = rec_of(c);
    pthread_mutex_lock(&h->mu);
    if (rec) { /* the deadline runs again for the next request on this connection */
        rec->since = sv_httpd_mono();
        rec->receiving = 1;
    }
    pthread_mutex_unlock(&h->mu);
}

/* ---- start and stop ------------------------------------------------------------------------ */

const char *sv_httpd_url_host(const char *bind, char *buf, size_t n)
{
    snprintf(buf, n, strchr(bind, ':') ? "[%s]" : "%s", bind);
    return buf;
}

int sv_httpd_start(const sv_httpd_cfg_t *cfg, sv_httpd_t **out, int *port, sv_error_t *err)
{
    *out = NULL;
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    struct sockaddr *sa;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    if (cfg->port < 0 || cfg->port > 65535)
        return sv_errorf(err, SV_EINVAL, "--port: expected 0 to 65535, got %d", cfg->port);
    int wildcard = 0;
    if (inet_pton(AF_INET, cfg->bind, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)cfg->port);
        sa = (struct sockaddr *)&a4;
        wildcard = a4.sin_addr.s_addr == htonl(INADDR_ANY);
    } else if (inet_pton(AF_INET6, cfg->bind, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)cfg->port);
        sa = (struct sockaddr *)&a6;
        wildcard = memcmp(&a6.sin6_addr, &in6addr_any, sizeof in6addr_any) == 0;
    } else {
        return sv_errorf(err, SV_EINVAL, "%s: expected an IP address like 127.0.0.1, got '%s'",
                         cfg->bind_opt ? cfg->bind_opt : "--bind", cfg->bind);
    }
    sv_httpd_t *h = calloc(1, sizeof *h);
    if (!h) return sv_errorf(err, SV_ENOMEM, "out of memory");
    h->cfg = *cfg;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    collect_names(h, sa, wildcard);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | (sa->sa_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    flags |= cfg->threaded ? MHD_USE_THREAD_PER_CONNECTION
                           : (unsigned)(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME);
    /* past max_conns connections are still taken, to be told 503; past this they wait */
    unsigned hard = cfg->max_conns + cfg->per_client;
    h->d = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, sa,
        MHD_OPTION_CONNECTION_LIMIT, hard, MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->conn_memory, MHD_OPTION_LISTEN_BACKLOG_SIZE,
        (unsigned)1024, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
    if (!h->d) {
        sv_httpd_stop(h);
        return sv_errorf(err, SV_EIO, "cannot listen on %s port %d (in use, or not this machine's)",
                         cfg->bind, cfg->port);
    }
    if (pthread_create(&h->sweeper, NULL, sweep, h) == 0) h->sweeping = 1;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    *port = info ? (int)info->port : cfg->port;
    *out = h;
    return 0;
}

void sv_httpd_stop(sv_httpd_t *h)
{
    if (!h) return;
    if (h->sweeping) {
        pthread_mutex_lock(&h->mu);
        h->stop = 1;
        pthread_cond_signal(&h->cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->sweeper, NULL);
    }
    if (h->d) MHD_stop_daemon(h->d);
    for (int i = 0; i < h->nnames; i++)
        free(h->names[i]);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}

void sv_httpd_block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int sv_httpd_wait_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig = 0;
    sigwait(&set, &sig);
    return sig;
}
