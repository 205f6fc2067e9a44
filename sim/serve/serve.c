/*
 * `servesim serve` (see include/servesim/serve/serve.h): the OpenAI-compatible routes in
 * front of a live run (sim/cluster/live.c). Three parties share one lock: libmicrohttpd's
 * polling thread (parses and checks requests, submits them, writes the chunks ready, and
 * aborts the request of a client that left), the clock thread (moves the simulated clock
 * with the wall clock from event to event, after each event turns the tokens made into
 * chunks, and resumes the connections that wait once it releases the lock; every 100 ms
 * it looks for clients of suspended connections that left), and the main thread (waits
 * for the signal, then stops both and closes the run).
 *
 * The shapes of the answers follow vLLM's OpenAI server (vllm/entrypoints/openai/protocol.py:
 * CompletionResponse, CompletionStreamResponse, ChatCompletionResponse,
 * ChatCompletionStreamResponse, ErrorResponse); the metric names and buckets its
 * Prometheus logger (vllm/v1/metrics/loggers.py), as `run --prometheus` writes them.
 */
#include "servesim/serve/serve.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/jsonw_int.h"
#include "servesim/cluster/live.h"
#include "servesim/report/report.h"
#include "servesim/serve/httpd.h"

#define SERVE_MAX_REQUESTS 4000000L /* requests one server takes in its life; then 503 */
#define SERVE_MAX_REPLY 1000000L    /* tokens of one reply */
#define CHARS_PER_TOKEN 4           /* prompt tokens = ceil(bytes / 4) of the text */
#define CHAT_TEMPLATE_TOKENS 4      /* per message, for the chat template's markers */
#define STREAM_SNDBUF 65536         /* a stream's socket send buffer (Linux doubles it) */

/* ---- vLLM's histograms ---------------------------------------------------------------------- */

#define NB(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* The histograms served, by vLLM's names; help and buckets are those `run --prometheus`
 * writes (sv_report_prom_histogram), looked up once at start. */
enum { H_TTFT, H_ITL, H_TPOT, H_E2E, H_QUEUE, NHIST };
static const char *const HIST_NAMES[NHIST] = {
    "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
    "vllm:request_time_per_output_token_seconds", "vllm:e2e_request_latency_seconds",
    "vllm:request_queue_time_seconds"};
static struct {
    const char *name, *help;
    const double *b;
    int nb;
} HISTS[NHIST];

/* servesim's own, in wall-clock seconds: when a token's chunk was handed to the socket
 * minus when the simulation made it (emit lateness, one observation per token streamed),
 * and when the clock thread handled an event that made tokens minus when it was due
 * (clock lateness, one per such event). */
static const double b_pace[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0015, 0.002, 0.003,
                                0.005,   0.0075, 0.01,    0.02,   0.05,  0.1,    0.5,   1.0};

typedef struct hist {
    double count[32]; /* per bucket (not cumulative), the last: above every bound */
    double sum, n, max;
} hist_t;

static void hist_put(hist_t *h, const double *b, int nb, double v)
{
    int i = 0;
    while (i < nb && v > b[i])
        i++;
    h->count[i] += 1;
    h->sum += v;
    h->n += 1;
    if (h->n == 1 || v > h->max) h->max = v;
}

static void hist_add(hist_t *h, int k, double v)
{
    hist_put(h, HISTS[k].b, HISTS[k].nb, v);
}

static int hists_init(sv_error_t *err)
{
    for (int k = 0; k < NHIST; k++) {
        HISTS[k].name = HIST_NAMES[k];
        if (sv_report_prom_histogram(HIST_NAMES[k], &HISTS[k].help, &HISTS[k].b, &HISTS[k].nb) ||
            HISTS[k].nb >= 31)
            return sv_errorf(err, SV_EINVAL, "internal error: no histogram %s", HIST_NAMES[k]);
    }
    return 0;
}

/* ---- the server's state ------------------------------------------------------------------- */

typedef struct stream {
    struct stream *prev, *next; /* in the server's list of requests in flight */
    struct MHD_Connection *conn;
    int32_t id;
    int chat, sse, usage; /* which route; streamed; stream_options.include_usage */
    long input, output, sent;
    int stop; /* finish_reason "stop" (a reply shorter than max_tokens), else "length" */
    double last_t; /* simulated time of the last token put in buf */
    /* tokens in buf not yet handed to the socket: where each one's bytes end and when it
     * was made (simulated s); past NPEND, the newest entry stands for the newer ones */
    size_t pend_end[8];
    double pend_t[8];
    int npend;
    char *head;      /* a token chunk's bytes before its text (streamed; malloc'd) */
    size_t headlen;
    char rid[48];
    long created;
    char *buf; /* bytes ready for the client */
    size_t len, off, cap;
    /* written by the server itself (direct, below): the socket, and the rest of a chunk
     * frame the socket did not take (raw), with the times of the tokens it ends */
    int direct, fd, blocked, dead, dirty, ending; /* ending: its request ended, unfinished */
    int hup; /* peek_clients: its socket is to be looked at */
    char *raw;
    size_t rawlen, rawoff, rawcap;
    double raw_t[8], raw_since;
    int nraw;
    double received, entered; /* the request's headers read; it entered the simulation (mono) */
    int ended, in_list, gone, suspended, closing;
    int status; /* not streamed: the answer's status, body in buf */
    int refs;   /* the list and the connection */
    int oom;
} stream_t;

typedef struct server {
    const sv_serve_opts_t *o;
    sv_httpd_t *httpd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sv_live_t *live;
    int stopping, broken;
    double wall0;
    stream_t *streams;
    long submitted, in_flight;
    const char *model;
    long max_len, reply_len;
    /* counters and histograms, per replica */
    int replicas;
    double *prompt_tok, *gen_tok, *ok, *fail;
    long aborted;     /* requests whose client left before their end */
    double last_peek; /* wall clock of the last look for clients that left */
    hist_t (*hist)[NHIST];
    hist_t pace;  /* b_pace: emit lateness */
    hist_t own;   /* b_pace: emit lateness less the time others held the core (below) */
    /* the clock thread's schedstat (and the CPU of the process's other threads), to tell
     * how long since it slept the core was held by other processes (own_mark, observe) */
    int sched_self;
    double rd0, cpu0, own_corr;
    long own_sends;
    hist_t late; /* b_pace: clock lateness */
    char *model_json; /* the model's name as a JSON string, quotes included */
    pthread_t clock;
    int clock_started;
    struct MHD_Connection **wake; /* to resume when the lock is released */
    size_t nwake, capwake;
    double progress; /* sv_live_progress when the streams were last looked at */
    struct pollfd *pfd; /* peek_clients' poll of the suspended streams' sockets */
    stream_t **pst;
    size_t cappoll;
    char *frame; /* a chunk frame being written (direct_write; under the lock) */
    size_t framecap;
} server_t;


/* The simulated time the wall clock says it is. */
static double sim_target(const server_t *s)
{
    return (sv_httpd_mono() - s->wall0) * s->o->speed;
}

static void stream_unref(stream_t *st)
{
    if (--st->refs > 0) return;
    free(st->raw);
    free(st->buf);
    free(st->head);
    free(st);
}

static void put(stream_t *st, const char *data, size_t n)
{
    if (st->oom) return;
    if (st->len + n + 1 > st->cap) {
        size_t cap = st->cap ? st->cap : 1024;
        while (cap < st->len + n + 1)
            cap *= 2;
        char *b = realloc(st->buf, cap);
        if (!b) {
            st->oom = 1;
            return;
        }
        st->buf = b;
        st->cap = cap;
    }
    memcpy(st->buf + st->len, data, n);
    st->len += n;
    st->buf[st->len] = '\0';
}

/* ---- errors ------------------------------------------------------------------------------ */

static const char *err_type(int status)
{
    switch (status) {
    case 400:
        return "BadRequestError";
    case 403:
        return "PermissionDeniedError";
    case 404:
        return "NotFoundError";
    case 405:
        return "MethodNotAllowedError";
    case 408:
        return "TimeoutError";
    case 413:
        return "RequestTooLargeError";
    case 429:
        return "RateLimitError";
    case 503:
        return "ServiceUnavailableError";
    default:
        return "InternalServerError";
    }
}

/* The OpenAI error object, as vLLM's ErrorResponse: {"error": {message, type, param, code}}. */
static cJSON *error_json(int status, const char *msg, const char *param)
{
    cJSON *j = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(j, "error");
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddStringToObject(e, "type", err_type(status));
    if (param)
        cJSON_AddStringToObject(e, "param", param);
    else
        cJSON_AddNullToObject(e, "param");
    cJSON_AddNumberToObject(e, "code", status);
    return j;
}

static char *print_json(cJSON *j, size_t *len)
{
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    *len = s ? strlen(s) : 0;
    return s;
}

static char *error_body(void *cls, int status, const char *msg, size_t *len, const char **ctype)
{
    (void)cls;
    *ctype = "application/json";
    return print_json(error_json(status, msg, NULL), len);
}

static enum MHD_Result answer_error(server_t *s, struct MHD_Connection *c, int status,
                                    const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static enum MHD_Result answer_error(server_t *s, struct MHD_Connection *c, int status,
                                    const char *param, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len;
    char *body = print_json(error_json(status, msg, param), &len);
    if (s->o->log) fprintf(s->o->log, "servesim serve: -> %d %s\n", status, msg);
    return sv_httpd_respond(s->httpd, c, status, body, len, "application/json");
}

/* The HTTP status of a request the simulation failed, and its words. */
static int fail_status(int reason, const char **why)
{
    switch (reason) {
    case SV_FAIL_QUEUE_FULL:
        *why = "the engine's waiting queue is full (engine.max_queue)";
        return 429;
    case SV_FAIL_TOO_LONG:
        *why = "the prompt and reply are longer than a pool's max_model_len";
        return 400;
    case SV_FAIL_KV_CAPACITY:
        *why = "the sequence can never fit the KV cache";
        return 400;
    case SV_FAIL_PROMPT_BUDGET:
        *why = "the prompt is longer than max_num_batched_tokens (whole-prompt scheduler)";
        return 400;
    case SV_FAIL_TIMEOUT:
        *why = "the scenario's workload.timeout_s passed";
        return 408;
    case SV_FAIL_ABORTED: /* nobody reads it: nginx's "client closed request" */
        *why = "its client disconnected";
        return 499;
    default:
        *why = "the simulation did not finish the request";
        return 503;
    }
}

/* ---- answers ------------------------------------------------------------------------------ */

/* Token k's text (k = 0, 1, ...): the same words in the same order for every request. */
static const char *filler(long k)
{
    static const char *const words[] = {" The",  " quick", " brown", " fox",   " jumps", " over",
                                        " the",  " lazy",  " dog",   ".",      " Simulated",
                                        " tokens"," arrive", " on",   " time",  "."};
    return words[k % (long)(sizeof words / sizeof words[0])];
}

static cJSON *usage_json(const stream_t *st)
{
    cJSON *u = cJSON_CreateObject();
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)st->input);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(st->input + st->sent));
    cJSON_AddNumberToObject(u, "completion_tokens", (double)st->sent);
    cJSON_AddNullToObject(u, "prompt_tokens_details");
    return u;
}

static cJSON *chunk_head(const server_t *s, const stream_t *st)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", st->rid);
    cJSON_AddStringToObject(j, "object", st->chat ? "chat.completion.chunk" : "text_completion");
    cJSON_AddNumberToObject(j, "created", (double)st->created);
    cJSON_AddStringToObject(j, "model", s->model);
    return j;
}

static void put_event(stream_t *st, cJSON *j)
{
    size_t n;
    char *t = print_json(j, &n);
    if (!t) {
        st->oom = 1;
        return;
    }
    put(st, "data: ", 6);
    put(st, t, n);
    put(st, "\n\n", 2);
    free(t);
}

/* One streamed chunk: text (a token, or "" for the chat's opening role chunk), and the
 * finish reason on the last. */
static void put_chunk(const server_t *s, stream_t *st, const char *text, const char *finish,
                      int role)
{
    cJSON *j = chunk_head(s, st), *ch = cJSON_AddArrayToObject(j, "choices"),
          *c = cJSON_CreateObject();
    cJSON_AddItemToArray(ch, c);
    cJSON_AddNumberToObject(c, "index", 0);
    if (st->chat) {
        cJSON *d = cJSON_AddObjectToObject(c, "delta");
        if (role) cJSON_AddStringToObject(d, "role", "assistant");
        if (text) cJSON_AddStringToObject(d, "content", text);
    } else {
        cJSON_AddStringToObject(c, "text", text ? text : "");
    }
    cJSON_AddNullToObject(c, "logprobs");
    if (finish)
        cJSON_AddStringToObject(c, "finish_reason", finish);
    else
        cJSON_AddNullToObject(c, "finish_reason");
    cJSON_AddNullToObject(c, "stop_reason");
    put_event(st, j);
}

/* A token's chunk without building JSON: the bytes cJSON prints for put_chunk(s, st, text,
 * NULL, 0), from the stream's head, the text (filler: nothing to escape) and a fixed tail.
 * 1000 streams make 1000 chunks at one simulated instant: each costs a copy, not a tree. */
static const char CHUNK_TAIL_TEXT[] = "\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}]}\n\n";
static const char CHUNK_TAIL_CHAT[] = "\"},\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}]}\n\n";

static int make_head(const server_t *s, stream_t *st)
{
    char *h = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&h, &n);
    if (!f) return -1;
    fprintf(f, "data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%ld,\"model\":%s,"
               "\"choices\":[{\"index\":0,%s",
            st->rid, st->chat ? "chat.completion.chunk" : "text_completion", st->created,
            s->model_json, st->chat ? "\"delta\":{\"content\":\"" : "\"text\":\"");
    if (fclose(f)) {
        free(h);
        return -1;
    }
    st->head = h;
    st->headlen = n;
    return 0;
}

static void put_token(const server_t *s, stream_t *st, const char *text)
{
    if (!st->head) {
        put_chunk(s, st, text, NULL, 0);
        return;
    }
    put(st, st->head, st->headlen);
    put(st, text, strlen(text));
    if (st->chat)
        put(st, CHUNK_TAIL_CHAT, sizeof CHUNK_TAIL_CHAT - 1);
    else
        put(st, CHUNK_TAIL_TEXT, sizeof CHUNK_TAIL_TEXT - 1);
}

/* Token made at simulated time t now ends at buf's len: its lateness is observed when
 * those bytes go to the socket. */
static void pend(stream_t *st, double t)
{
    int k = st->npend < (int)(sizeof st->pend_t / sizeof st->pend_t[0]) ? st->npend++ : st->npend - 1;
    st->pend_end[k] = st->len;
    st->pend_t[k] = t;
}

/* The whole answer of a request not streamed. */
static void put_whole(const server_t *s, stream_t *st)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", st->rid);
    cJSON_AddStringToObject(j, "object", st->chat ? "chat.completion" : "text_completion");
    cJSON_AddNumberToObject(j, "created", (double)st->created);
    cJSON_AddStringToObject(j, "model", s->model);
    cJSON *ch = cJSON_AddArrayToObject(j, "choices"), *c = cJSON_CreateObject();
    cJSON_AddItemToArray(ch, c);
    cJSON_AddNumberToObject(c, "index", 0);
    size_t cap = (size_t)st->sent * 10 + 1, n = 0;
    char *text = malloc(cap);
    if (!text) {
        st->oom = 1;
        cJSON_Delete(j);
        return;
    }
    text[0] = '\0';
    for (long k = 0; k < st->sent; k++) {
        const char *w = filler(k);
        size_t l = strlen(w);
        memcpy(text + n, w, l + 1);
        n += l;
    }
    if (st->chat) {
        cJSON *m = cJSON_AddObjectToObject(c, "message");
        cJSON_AddStringToObject(m, "role", "assistant");
        cJSON_AddStringToObject(m, "content", text);
        cJSON_AddArrayToObject(m, "tool_calls");
    } else {
        cJSON_AddStringToObject(c, "text", text);
    }
    free(text);
    cJSON_AddNullToObject(c, "logprobs");
    cJSON_AddStringToObject(c, "finish_reason", st->stop ? "stop" : "length");
    cJSON_AddNullToObject(c, "stop_reason");
    cJSON_AddItemToObject(j, "usage", usage_json(st));
    size_t len;
    char *t = print_json(j, &len);
    if (!t) {
        st->oom = 1;
        return;
    }
    put(st, t, len);
    free(t);
    st->status = 200;
}

/* ---- the clock thread ------------------------------------------------------------------- */

/* A connection with something to send is resumed once the lock is released (unlock): the
 * polling thread then writes it without waiting for the lock the clock thread holds while
 * it turns an event's tokens into chunks (256 streams: 256 resumes, each a wake-up). */
static void wake_conn(server_t *s, stream_t *st)
{
    if (!st->suspended || st->gone) return;
    st->suspended = 0;
    if (s->nwake == s->capwake) {
        size_t cap = s->capwake ? s->capwake * 2 : 256;
        struct MHD_Connection **w = realloc(s->wake, cap * sizeof *w);
        if (!w) { /* resumed now, under the lock */
            sv_httpd_resume(st->conn);
            return;
        }
        s->wake = w;
        s->capwake = cap;
    }
    s->wake[s->nwake++] = st->conn;
}

/* Release the lock, then resume the connections woken while it was held. */
static void unlock(server_t *s)
{
    struct MHD_Connection **w = s->wake;
    size_t n = s->nwake;
    s->wake = NULL;
    s->nwake = s->capwake = 0;
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < n; i++)
        sv_httpd_resume(w[i]);
    free(w);
}

/* ---- direct writes -------------------------------------------------------------------------
 *
 * A stream waiting for its next token is suspended: libmicrohttpd neither reads nor writes
 * its socket, and has sent all it had (it asks read_stream for more only once its last
 * chunk is out). Resuming it for each token costs a wake-up of the polling thread, two
 * epoll_ctl calls, a lock hand-off and its send, per token; so the thread that made the
 * token (the clock's, holding the lock) writes the chunk itself, framed as libmicrohttpd
 * frames an HTTP/1.1 body of unknown length (hex size, CRLF, bytes, CRLF), in one send
 * that does not wait. A frame the socket takes only in part keeps its rest in raw, sent
 * before anything else, retried after each event and every 100 ms (peek_clients), and the
 * connection stays suspended until it is out: libmicrohttpd resumes only on a frame's
 * boundary, to write the end of the answer (or to close a socket that failed). A socket
 * that takes nothing of raw for idle_s is shut. */

/* ---- the core's time left to the server ----------------------------------------------------
 *
 * On a machine whose other jobs share the server's core, a token is late by the time the
 * clock thread waited on the run queue, which no pacing can make up. Linux counts that
 * wait per thread (/proc/thread-self/schedstat: CPU time, run-queue wait, in ns); the
 * clock thread reads its own when it goes to sleep and again every 32 chunks it writes,
 * and the wait accrued since, less the CPU its own process's other threads used meanwhile
 * (the polling thread: the server's own work), is the time the core was held by others.
 * servesim:emit_lateness_own_seconds observes each token's lateness less that (chunks
 * written by another thread: as they are): what a core of its own would have seen, or
 * more (the wait accrued after the last read is not taken off). */

static _Thread_local int on_clock_thread; /* 1 in the clock thread */

static int sched_read(int fd, double *cpu, double *wait)
{
    char b[128];
    ssize_t n = fd >= 0 ? pread(fd, b, sizeof b - 1, 0) : -1;
    if (n <= 0) return -1;
    b[n] = '\0';
    unsigned long long c, w;
    if (sscanf(b, "%llu %llu", &c, &w) != 2) return -1;
    *cpu = (double)c * 1e-9;
    *wait = (double)w * 1e-9;
    return 0;
}

static void sched_open(server_t *s)
{
    s->sched_self = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

static void sched_close(server_t *s)
{
    if (s->sched_self >= 0) close(s->sched_self);
    s->sched_self = -1;
}

static double cpu_clock(clockid_t c)
{
    struct timespec t;
    return clock_gettime(c, &t) ? -1 : (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The clock thread's run-queue wait and its process's other threads' CPU (s; the process's
 * CPU clock less the thread's: two calls, where reading each thread's schedstat is a file
 * each); -1 unknown. */
static int sched_now(const server_t *s, double *wait, double *others)
{
    double cpu;
    if (sched_read(s->sched_self, &cpu, wait)) return -1;
    double p = cpu_clock(CLOCK_PROCESS_CPUTIME_ID), t = cpu_clock(CLOCK_THREAD_CPUTIME_ID);
    if (p < 0 || t < 0) return -1;
    *others = p - t;
    return 0;
}

static void own_mark(server_t *s) /* the clock thread goes to sleep */
{
    if (sched_now(s, &s->rd0, &s->cpu0)) s->rd0 = -1;
    s->own_corr = 0;
    s->own_sends = 0;
}

static void observe(server_t *s, const double *t, int n)
{
    double wall = sv_httpd_mono();
    int clock = on_clock_thread;
    if (clock && s->rd0 >= 0 && s->own_sends++ % 32 == 0) {
        double w, o;
        if (!sched_now(s, &w, &o)) {
            double c = (w - s->rd0) - (o - s->cpu0);
            s->own_corr = c > 0 ? c : 0;
        }
    }
    for (int k = 0; k < n; k++) {
        double late = wall - (s->wall0 + t[k] / s->o->speed);
        hist_put(&s->pace, b_pace, NB(b_pace), late);
        hist_put(&s->own, b_pace, NB(b_pace), clock ? late - s->own_corr : late);
    }
}

/* Send what st holds: 0 all out, 1 the socket is full (the rest waits), -1 it failed
 * (st->dead). */
static int direct_write(server_t *s, stream_t *st)
{
    const int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
    if (st->rawoff < st->rawlen) {
        ssize_t n = send(st->fd, st->raw + st->rawoff, st->rawlen - st->rawoff, flags);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 1;
        if (n < 0) return st->dead = 1, -1;
        st->raw_since = sv_httpd_mono();
        st->rawoff += (size_t)n;
        if (st->rawoff < st->rawlen) return 1;
        observe(s, st->raw_t, st->nraw);
        st->rawoff = st->rawlen = 0;
        st->nraw = 0;
    }
    if (st->off == st->len) return 0;
    /* the frame, contiguous: one send (a sendmsg of three pieces costs the kernel more) */
    size_t len = st->len - st->off, total = len + 2;
    char hex[2 * sizeof len + 2];
    size_t hl = 0;
    for (int sh = (int)(8 * sizeof len) - 4; sh >= 0; sh -= 4)
        if (hl || (len >> sh) || sh == 0) hex[hl++] = "0123456789abcdef"[(len >> sh) & 15];
    total += hl + 2;
    if (total > s->framecap) {
        size_t cap = s->framecap ? s->framecap : 4096;
        while (cap < total)
            cap *= 2;
        char *b = realloc(s->frame, cap);
        if (!b) return st->dead = 1, -1;
        s->frame = b;
        s->framecap = cap;
    }
    char *f = s->frame;
    memcpy(f, hex, hl);
    memcpy(f + hl, "\r\n", 2);
    memcpy(f + hl + 2, st->buf + st->off, len);
    memcpy(f + total - 2, "\r\n", 2);
    ssize_t n = send(st->fd, f, total, flags);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 1;
    if (n < 0) return st->dead = 1, -1;
    size_t done = (size_t)n;
    if (done == total) {
        observe(s, st->pend_t, st->npend);
    } else { /* the frame's rest: sent before anything else */
        size_t rest = total - done;
        if (rest > st->rawcap) {
            char *b = realloc(st->raw, rest);
            if (!b) return st->dead = 1, -1;
            st->raw = b;
            st->rawcap = rest;
        }
        memcpy(st->raw, f + done, rest);
        st->rawoff = 0;
        st->rawlen = rest;
        memcpy(st->raw_t, st->pend_t, sizeof st->raw_t);
        st->nraw = st->npend;
        st->raw_since = sv_httpd_mono();
    }
    st->off = st->len = 0;
    st->npend = 0;
    return done == total ? 0 : 1;
}

/* st's bytes on their way: written here while suspended (direct), else by libmicrohttpd
 * once resumed; an ended answer's end (written by libmicrohttpd after the round, unless a
 * frame's rest is before it or the server is stopping: then here, at once), or a failed
 * socket, goes back to it. st->blocked: a frame's rest still waits. */
static void flush(server_t *s, stream_t *st)
{
    st->blocked = 0;
    if (st->direct && st->suspended && !st->gone && !st->dead &&
        (!st->ended || st->rawoff < st->rawlen || s->stopping || s->broken)) {
        if (direct_write(s, st) == 1) {
            st->blocked = 1;
            return;
        }
        if (!st->dead && !st->ended) return;
    }
    wake_conn(s, st);
}

static void unlist(server_t *s, stream_t *st)
{
    if (!st->in_list) return;
    if (st->prev)
        st->prev->next = st->next;
    else
        s->streams = st->next;
    if (st->next) st->next->prev = st->prev;
    st->in_list = 0;
    s->in_flight--;
    stream_unref(st);
}

/* The request ended in the simulation: the last chunks (or the whole answer), the metrics. */
static void finish_stream(server_t *s, stream_t *st)
{
    const sv_req_t *r = sv_live_req(s->live, st->id);
    int e = r->replica >= 0 && r->replica < s->replicas ? r->replica : 0;
    st->ended = 1;
    if (r->state == SV_RQ_DONE) {
        s->ok[e] += 1;
        s->prompt_tok[e] += (double)r->input;
        s->gen_tok[e] += (double)r->output;
        hist_add(&s->hist[e][H_TTFT], H_TTFT, sv_req_ttft(r));
        hist_add(&s->hist[e][H_E2E], H_E2E, sv_req_e2el(r));
        if (r->output > 1) hist_add(&s->hist[e][H_TPOT], H_TPOT, sv_req_tpot(r));
        if (r->scheduled >= 0) hist_add(&s->hist[e][H_QUEUE], H_QUEUE, r->scheduled - r->start);
        if (st->sse) {
            put_chunk(s, st, "", st->stop ? "stop" : "length", 0);
            if (st->usage) {
                cJSON *j = chunk_head(s, st);
                cJSON_AddArrayToObject(j, "choices");
                cJSON_AddItemToObject(j, "usage", usage_json(st));
                put_event(st, j);
            }
            put(st, "data: [DONE]\n\n", 14);
        } else {
            put_whole(s, st);
        }
    } else {
        s->fail[e] += 1;
        if (r->fail == SV_FAIL_ABORTED) s->aborted++;
        const char *why;
        int status = fail_status(r->fail, &why);
        char msg[256];
        snprintf(msg, sizeof msg, "request %d failed in the simulation (%s): %s", (int)st->id,
                 sv_fail_name(r->fail), why);
        size_t n;
        char *t = print_json(error_json(status, msg, NULL), &n);
        if (st->sse) {
            put(st, "data: ", 6);
            if (t) put(st, t, n);
            put(st, "\n\ndata: [DONE]\n\n", 16);
        } else {
            if (t) put(st, t, n);
            st->status = status;
        }
        free(t);
    }
    flush(s, st);
    if (!st->blocked) unlist(s, st);
}

/* After the events up to now: tokens made become chunks; ended requests finish. */
static void poll_streams(server_t *s, double now)
{
    stream_t *next;
    int made = 0;
    double handled = sv_httpd_mono(); /* (its chunks are written below) */
    for (stream_t *st = s->streams; st; st = next) {
        next = st->next;
        if (st->ended) { /* its end waits for a frame's rest */
            flush(s, st);
            if (!st->blocked) unlist(s, st);
            continue;
        }
        long k = sv_live_tokens(s->live, st->id);
        if (k > st->output) k = st->output;
        const sv_req_t *r = sv_live_req(s->live, st->id);
        int e = r->replica >= 0 && r->replica < s->replicas ? r->replica : 0;
        int moved = 0;
        while (st->sent < k) {
            if (st->sent > 0) hist_add(&s->hist[e][H_ITL], H_ITL, now - st->last_t);
            if (st->sse) {
                put_token(s, st, filler(st->sent));
                pend(st, now);
            }
            st->sent++;
            st->last_t = now;
            moved = made = 1;
        }
        if (r->state == SV_RQ_DONE || r->state == SV_RQ_FAILED)
            st->ending = 1; /* finished by flush_all, after the other streams' chunks */
        if (moved && st->sse)
            st->dirty = 1; /* written by flush_all, after every event due */
    }
    if (made) hist_put(&s->late, b_pace, NB(b_pace), handled - (s->wall0 + now / s->o->speed));
}

/* After an event: whether any request may have made a token or ended since the streams
 * were last looked at (most events, a request's arrival at the engine, change neither:
 * 1,000 streams need not be looked at for them). */
static int progressed(server_t *s)
{
    double p = sv_live_progress(s->live);
    if (p == s->progress) return 0;
    s->progress = p;
    return 1;
}

/* The chunks of every event handled go out: one write a stream, however many events
 * (when the clock ran behind, the tokens of several steps share it). The answers of the
 * requests that ended are made after every token went out (their end costs more: cJSON,
 * the usage) and written by libmicrohttpd once the lock is released. */
static void flush_all(server_t *s)
{
    stream_t *next;
    int ending = 0;
    for (stream_t *st = s->streams; st; st = next) {
        next = st->next;
        ending |= st->ending;
        if (st->dirty || st->blocked) { /* (an ending stream's last tokens too) */
            st->dirty = 0;
            flush(s, st);
        }
    }
    for (stream_t *st = ending ? s->streams : NULL; st; st = next) {
        next = st->next;
        if (st->ending) {
            st->ending = 0;
            finish_stream(s, st);
        }
    }
}

/* Handle every event up to the wall clock's now, streaming what each makes. 0, or the
 * simulation's error. */
static int catch_up(server_t *s)
{
    double now = sim_target(s), next;
    int rc = 0;
    while (!rc && (next = sv_live_next(s->live)) <= now) {
        rc = sv_live_advance(s->live, next);
        if (!rc && progressed(s)) poll_streams(s, next);
    }
    flush_all(s);
    return rc ? rc : sv_live_advance(s->live, now);
}

/* The client of st left before its request ended: the request is aborted in the
 * simulation at its clock's now (its KV freed), as vLLM's server aborts a request whose
 * client disconnected
 * (vllm/entrypoints/utils.py: with_cancellation cancels the handler on http.disconnect;
 * vllm/v1/engine/async_llm.py: generate() then calls abort(request_id), and the scheduler
 * frees it as FINISHED_ABORTED). */
static void abort_stream(server_t *s, stream_t *st)
{
    if (!st->in_list || st->ended) return;
    if (sv_live_abort(s->live, st->id)) {
        s->broken = 1;
        return;
    }
    if (s->o->log) fprintf(s->o->log, "servesim serve: %s: the client left; aborted\n", st->rid);
    /* in the step in flight, it fails when that step ends (poll_streams finishes it then) */
    if (sv_live_req(s->live, st->id)->state == SV_RQ_FAILED)
        finish_stream(s, st);
    pthread_cond_signal(&s->cv);
}

/* A suspended connection is not watched by libmicrohttpd: look every 100 ms whether the
 * client of each closed it (it cannot be closed under us while suspended). */
static void peek_clients(server_t *s)
{
    double t = sv_httpd_mono();
    if (t - s->last_peek < 0.1) return;
    s->last_peek = t;
    stream_t *next;
    /* which sockets to look at: those one poll of them all finds readable (a client that
     * closed: the end of its stream) or hung up (a peek at each cost a system call a
     * stream every 100 ms); all when it cannot tell */
    size_t n = 0, k = 0;
    for (stream_t *st = s->streams; st; st = st->next)
        n += st->suspended && !st->gone;
    if (n > s->cappoll) {
        struct pollfd *p = realloc(s->pfd, n * sizeof *p);
        if (p) s->pfd = p;
        stream_t **q = realloc(s->pst, n * sizeof *q);
        if (q) s->pst = q;
        if (p && q) s->cappoll = n;
    }
    for (stream_t *st = s->streams; st; st = st->next) {
        st->hup = st->suspended && !st->gone;
        if (st->hup && st->fd >= 0 && k < s->cappoll) {
            s->pfd[k] = (struct pollfd){.fd = st->fd, .events = POLLIN};
            s->pst[k++] = st;
        }
    }
    if (k > 0 && poll(s->pfd, (nfds_t)k, 0) >= 0)
        for (size_t i = 0; i < k; i++)
            s->pst[i]->hup = s->pfd[i].revents != 0;
    for (stream_t *st = s->streams; st; st = next) {
        next = st->next;
        if (st->blocked && t - st->raw_since > (double)s->o->idle_s) {
            shutdown(st->fd, SHUT_RDWR); /* a client that reads nothing: closed */
            st->dead = st->hup = 1;
        }
        if (st->suspended && !st->gone && st->hup && sv_httpd_peer_closed(st->conn))
            abort_stream(s, st);
        st->hup = 0;
        if (st->in_list && (st->blocked || st->dead)) {
            flush(s, st);
            if (st->ended && !st->blocked) unlist(s, st);
        }
    }
}

static void fail_all(server_t *s, const char *why)
{
    stream_t *next;
    for (stream_t *st = s->streams; st; st = next) {
        next = st->next;
        if (st->blocked || st->ended) { /* a frame's rest the client does not take: cut */
            if (st->blocked) shutdown(st->fd, SHUT_RDWR);
            st->dead = 1;
            wake_conn(s, st);
            unlist(s, st);
            continue;
        }
        size_t n;
        char *t = print_json(error_json(503, why, NULL), &n);
        if (st->sse) {
            put(st, "data: ", 6);
            if (t) put(st, t, n);
            put(st, "\n\ndata: [DONE]\n\n", 16);
        } else {
            st->len = st->off = 0;
            if (t) put(st, t, n);
            st->status = 503;
        }
        free(t);
        st->ended = 1;
        flush(s, st);
        if (st->blocked) { /* stopping: no waiting for it */
            shutdown(st->fd, SHUT_RDWR);
            st->dead = 1;
            wake_conn(s, st);
        }
        unlist(s, st);
    }
}

/* From event to event at the wall clock's pace: advance to each event's instant, stream
 * what it made, sleep until the next (or until a request arrives). */
static void *clock_main(void *arg)
{
    server_t *s = arg;
    prctl(PR_SET_TIMERSLACK, 1000UL); /* wake within 1 us of the time asked (Linux: 50 us) */
    on_clock_thread = 1;
    pthread_mutex_lock(&s->mu);
    sched_open(s);
    own_mark(s);
    while (!s->stopping) {
        double target = sim_target(s), next;
        while (!s->broken && (next = sv_live_next(s->live)) <= target) {
            if (sv_live_advance(s->live, next)) {
                s->broken = 1;
                break;
            }
            if (progressed(s)) poll_streams(s, next);
        }
        flush_all(s);
        if (!s->broken && sv_live_advance(s->live, target)) s->broken = 1;
        if (!s->broken) peek_clients(s);
        if (s->broken) {
            if (s->o->log)
                fprintf(s->o->log, "servesim serve: the simulation stopped: %s\n",
                        sv_live_error(s->live));
            fail_all(s, "the simulation stopped; see the server's log");
            break;
        }
        /* the chunks go out; then (what arrived meanwhile seen) sleep until the next
         * event is due, an absolute time, or 100 ms, or a request's arrival */
        unlock(s);
        pthread_mutex_lock(&s->mu);
        if (s->stopping) break;
        next = sv_live_next(s->live);
        double now = sv_httpd_mono(), due = isfinite(next) ? s->wall0 + next / s->o->speed : now + 0.1;
        if (due > now + 0.1) due = now + 0.1; /* and look again */
        if (due > now) {
            struct timespec ts;
            ts.tv_sec = (time_t)due;
            ts.tv_nsec = (long)((due - (double)ts.tv_sec) * 1e9);
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            own_mark(s);
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
            if (sv_httpd_mono() < due) own_mark(s); /* woken sooner (an arrival): from now */
        }
    }
    sched_close(s);
    unlock(s);
    return NULL;
}

/* ---- requests ------------------------------------------------------------------------------ */

/* Fields a request may carry: those that change what is simulated, and sampling settings
 * that are accepted and change nothing (the timing does not depend on them). */
static const char *const common_keys[] = {
    "model",         "max_tokens",        "min_tokens",        "ignore_eos",
    "stream",        "stream_options",    "n",                 "temperature",
    "top_p",         "top_k",             "min_p",             "seed",
    "stop",          "stop_token_ids",    "user",              "presence_penalty",
    "frequency_penalty", "repetition_penalty", "logit_bias",    "skip_special_tokens",
    "spaces_between_special_tokens", "include_stop_str_in_output", "request_id", "priority"};
static const char *const completion_keys[] = {"prompt", "echo", "suffix", "logprobs", "best_of"};
static const char *const chat_keys[] = {"messages", "max_completion_tokens", "logprobs",
                                        "top_logprobs", "response_format", "tools", "tool_choice",
                                        "parallel_tool_calls", "chat_template_kwargs"};

static int known_key(const char *k, int chat)
{
    for (size_t i = 0; i < sizeof common_keys / sizeof common_keys[0]; i++)
        if (strcmp(k, common_keys[i]) == 0) return 1;
    const char *const *l = chat ? chat_keys : completion_keys;
    size_t n = chat ? sizeof chat_keys / sizeof chat_keys[0]
                    : sizeof completion_keys / sizeof completion_keys[0];
    for (size_t i = 0; i < n; i++)
        if (strcmp(k, l[i]) == 0) return 1;
    return 0;
}

static long text_tokens(size_t bytes)
{
    return (long)((bytes + CHARS_PER_TOKEN - 1) / CHARS_PER_TOKEN);
}

/* A JSON number that is a whole number in [lo, hi]: 0, else -1. */
static int whole(const cJSON *v, long lo, long hi, long *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return -1;
    *out = (long)v->valuedouble;
    return 0;
}

typedef struct parsed {
    long input, max_tokens, min_tokens;
    uint64_t *tok; /* the prompt's tokens' identities (malloc'd), ntok of them */
    long ntok, captok;
    int tok_oom;   /* memory ran out: the prompt goes without identity */
    int has_max, ignore_eos, stream, usage;
    char err[400];
    char param_buf[96];
    const char *param; /* the field named (param_buf or a literal), or NULL */
    int status;
} parsed_t;

static int bad(parsed_t *p, int status, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad(parsed_t *p, int status, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
    p->param = NULL;
    if (param) { /* a copy: param may be a key of the document about to be freed */
        snprintf(p->param_buf, sizeof p->param_buf, "%s", param);
        p->param = p->param_buf;
    }
    p->status = status;
    return -1;
}

/* ---- prompt identity ---- */

/* Tags that keep the three kinds of token apart: a token id, 4 bytes of text, a chat
 * template marker. */
#define TOK_TEXT (1ULL << 40)
#define TOK_TEMPLATE (2ULL << 40)

static void push_tok(parsed_t *p, uint64_t t)
{
    if (p->tok_oom) return;
    if (p->ntok == p->captok) {
        long cap = p->captok ? p->captok * 2 : 256;
        uint64_t *b = realloc(p->tok, (size_t)cap * sizeof *b);
        if (!b) {
            p->tok_oom = 1;
            return;
        }
        p->tok = b;
        p->captok = cap;
    }
    p->tok[p->ntok++] = t;
}

/* Text as servesim counts it: a token per 4 bytes (the last one shorter), each known by
 * its bytes. */
static void push_text(parsed_t *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i += CHARS_PER_TOKEN) {
        uint64_t v = 0;
        size_t k = n - i < CHARS_PER_TOKEN ? n - i : CHARS_PER_TOKEN;
        for (size_t j = 0; j < k; j++)
            v = v << 8 | (unsigned char)s[i + j];
        push_tok(p, TOK_TEXT | (uint64_t)k << 32 | v);
    }
}

/* The prompt's segments, one per `block` tokens (the last shorter), each known by a hash
 * of its tokens: the engine chains them block by block as vLLM hashes (parent hash, the
 * block's token ids), so two prompts share cached blocks exactly as far as their tokens
 * agree, in whole blocks. block divides every pool's block size. NULL (*n = 0) when the
 * prompt has no identity (memory ran out, or its count is not its tokens'). */
static sv_segment_t *prompt_segments(const parsed_t *p, int block, int *n)
{
    *n = 0;
    if (p->tok_oom || p->ntok != p->input || p->ntok == 0) return NULL;
    long ns = (p->ntok + block - 1) / block;
    if (ns > INT32_MAX) return NULL;
    sv_segment_t *seg = malloc((size_t)ns * sizeof *seg);
    if (!seg) return NULL;
    for (long k = 0; k < ns; k++) {
        long a = k * block, b = a + block < p->ntok ? a + block : p->ntok;
        uint64_t h = 0x70a3c1d5e9f2b468ULL ^ (uint64_t)(b - a);
        for (long i = a; i < b; i++)
            h = sv_splitmix64(h ^ p->tok[i]);
        seg[k] = (sv_segment_t){h, (int32_t)(b - a)};
    }
    *n = (int)ns;
    return seg;
}

static int prompt_tokens(const cJSON *pr, parsed_t *p)
{
    if (cJSON_IsString(pr)) {
        size_t n = strlen(pr->valuestring);
        p->input = text_tokens(n);
        push_text(p, pr->valuestring, n);
        return 0;
    }
    if (!cJSON_IsArray(pr) || cJSON_GetArraySize(pr) == 0)
        return bad(p, 400, "prompt",
                   "prompt: expected a string or an array of token ids, got %s",
                   cJSON_IsArray(pr) ? "an empty array" : "another type");
    const cJSON *first = cJSON_GetArrayItem(pr, 0);
    if (!cJSON_IsNumber(first))
        return bad(p, 400, "prompt",
                   "prompt: servesim serve takes one prompt per request (a string or one array "
                   "of token ids), not a batch");
    long n = 0, tok;
    const cJSON *t;
    cJSON_ArrayForEach(t, pr)
    {
        if (whole(t, 0, INT32_MAX, &tok))
            return bad(p, 400, "prompt", "prompt[%ld]: expected a token id (a whole number >= 0)",
                       n);
        push_tok(p, (uint64_t)tok);
        n++;
    }
    p->input = n;
    return 0;
}

static int message_tokens(const cJSON *ms, parsed_t *p)
{
    if (!cJSON_IsArray(ms) || cJSON_GetArraySize(ms) == 0)
        return bad(p, 400, "messages", "messages: expected a non-empty array of messages");
    long n = 0, i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, ms)
    {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (!cJSON_IsObject(m) || !cJSON_IsString(role))
            return bad(p, 400, "messages",
                       "messages[%ld]: expected an object with a string \"role\"", i);
        if (content && !cJSON_IsNull(content) && !cJSON_IsString(content) &&
            !cJSON_IsArray(content))
            return bad(p, 400, "messages",
                       "messages[%ld].content: expected a string or an array of parts", i);
        /* the template's markers, known by the role; then the content's text, its parts
         * one after the other */
        uint64_t r = sv_splitmix64(strlen(role->valuestring));
        for (const char *c = role->valuestring; *c; c++)
            r = sv_splitmix64(r ^ (unsigned char)*c);
        for (int k = 0; k < CHAT_TEMPLATE_TOKENS; k++)
            push_tok(p, TOK_TEMPLATE | ((r + (uint64_t)k) & 0xffffffffULL));
        char *text = NULL;
        size_t bytes = 0, len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) p->tok_oom = 1;
        if (cJSON_IsString(content)) {
            bytes = strlen(content->valuestring);
            if (f) fputs(content->valuestring, f);
        } else if (cJSON_IsArray(content)) {
            const cJSON *part;
            cJSON_ArrayForEach(part, content)
            {
                const cJSON *tx = cJSON_GetObjectItemCaseSensitive(part, "text");
                if (!cJSON_IsString(tx)) continue;
                bytes += strlen(tx->valuestring);
                if (f) fputs(tx->valuestring, f);
            }
        }
        if (f && fclose(f)) p->tok_oom = 1;
        if (text && !p->tok_oom) push_text(p, text, len);
        free(text);
        n += text_tokens(bytes) + CHAT_TEMPLATE_TOKENS;
        i++;
    }
    p->input = n;
    return 0;
}

static int parse_request(server_t *s, const char *body, size_t len, int chat, parsed_t *p)
{
    memset(p, 0, sizeof *p);
    if (strlen(body) != len)
        return bad(p, 400, NULL, "the request body holds a NUL byte; expected a JSON object");
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(body, &end, 1);
    if (!j) {
        long at = end ? (long)(end - body) : 0;
        return bad(p, 400, NULL, "malformed JSON in the request body at byte %ld", at);
    }
    int rc = 0;
    if (!cJSON_IsObject(j)) {
        rc = bad(p, 400, NULL, "the request body must be a JSON object");
        goto out;
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, j)
    {
        if (!known_key(f->string, chat)) {
            rc = bad(p, 400, f->string,
                     "unknown field '%.80s' in a %s request (docs/serve.md lists the fields)",
                     f->string, chat ? "chat completion" : "completion");
            goto out;
        }
    }
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(j, "model");
    if (model && (!cJSON_IsString(model) || (strcmp(model->valuestring, s->model) != 0 &&
                                             strcmp(model->valuestring, s->o->sc->model.name) != 0))) {
        rc = bad(p, 404, "model", "The model `%.80s` does not exist (this server serves %s).",
                 cJSON_IsString(model) ? model->valuestring : "?", s->model);
        goto out;
    }
    const cJSON *v;
    long n;
    if ((v = cJSON_GetObjectItemCaseSensitive(j, "n")) && (whole(v, 1, 1, &n))) {
        rc = bad(p, 400, "n", "n: servesim serve makes one choice per request (n = 1)");
        goto out;
    }
    v = cJSON_GetObjectItemCaseSensitive(j, "max_tokens");
    if (chat && (!v || cJSON_IsNull(v))) v = cJSON_GetObjectItemCaseSensitive(j, "max_completion_tokens");
    if (v && !cJSON_IsNull(v)) {
        if (whole(v, 1, SERVE_MAX_REPLY, &p->max_tokens)) {
            rc = bad(p, 400, "max_tokens", "max_tokens: expected a whole number in [1, %ld]",
                     SERVE_MAX_REPLY);
            goto out;
        }
        p->has_max = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(j, "min_tokens")) && !cJSON_IsNull(v) &&
        whole(v, 0, SERVE_MAX_REPLY, &p->min_tokens)) {
        rc = bad(p, 400, "min_tokens", "min_tokens: expected a whole number >= 0");
        goto out;
    }
    if (p->has_max && p->min_tokens > p->max_tokens) {
        rc = bad(p, 400, "min_tokens", "min_tokens (%ld) must be less than or equal to max_tokens (%ld)",
                 p->min_tokens, p->max_tokens);
        goto out;
    }
    static const char *const bools[] = {"ignore_eos", "stream"};
    for (int b = 0; b < 2; b++) {
        v = cJSON_GetObjectItemCaseSensitive(j, bools[b]);
        if (v && !cJSON_IsNull(v) && !cJSON_IsBool(v)) {
            rc = bad(p, 400, bools[b], "%s: expected true or false", bools[b]);
            goto out;
        }
        int val = v && cJSON_IsTrue(v);
        if (b == 0)
            p->ignore_eos = val;
        else
            p->stream = val;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(j, "stream_options")) && !cJSON_IsNull(v)) {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(v, "include_usage");
        if (!cJSON_IsObject(v) || (u && !cJSON_IsBool(u))) {
            rc = bad(p, 400, "stream_options",
                     "stream_options: expected {\"include_usage\": true or false}");
            goto out;
        }
        if (!p->stream) {
            rc = bad(p, 400, "stream_options", "Stream options can only be defined when `stream=True`.");
            goto out;
        }
        p->usage = u && cJSON_IsTrue(u);
    }
    if (chat) {
        rc = message_tokens(cJSON_GetObjectItemCaseSensitive(j, "messages"), p);
    } else {
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(j, "prompt");
        rc = pr ? prompt_tokens(pr, p) : bad(p, 400, "prompt", "prompt: a completion request needs a prompt");
    }
    if (rc == 0 && p->input < 1) p->input = 1;
out:
    cJSON_Delete(j);
    return rc;
}

static enum MHD_Result answer_json(server_t *s, struct MHD_Connection *c, cJSON *j)
{
    size_t len;
    char *body = print_json(j, &len);
    if (!body) return MHD_NO;
    return sv_httpd_respond(s->httpd, c, 200, body, len, "application/json");
}

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max);

/* A completion: checked, sent into the simulation, answered as it goes. */
static enum MHD_Result completion(server_t *s, sv_httpd_req_t *q, int chat)
{
    stream_t *st = q->user;
    if (st) { /* resumed: the whole answer (not streamed) is ready */
        char *body = st->buf;
        size_t len = st->len;
        st->buf = NULL;
        st->len = st->cap = 0;
        return sv_httpd_respond(s->httpd, q->conn, st->status ? st->status : 500, body, len,
                                "application/json");
    }
    parsed_t p;
    if (parse_request(s, q->body, q->len, chat, &p)) {
        free(p.tok);
        return answer_error(s, q->conn, p.status, p.param, "%s", p.err);
    }
    int nseg;
    sv_segment_t *seg = prompt_segments(&p, sv_live_block_tokens(s->live), &nseg);
    free(p.tok);
    long output;
    if (p.has_max && p.ignore_eos)
        output = p.max_tokens;
    else if (p.has_max)
        output = p.max_tokens < s->reply_len ? p.max_tokens : s->reply_len;
    else
        output = s->reply_len;
    if (output < p.min_tokens) output = p.min_tokens;
    if (!p.has_max && p.input + output > s->max_len) output = s->max_len - p.input;
    if (output < 1) output = 1;
    long want = p.input + (p.has_max ? p.max_tokens : output);
    if (want > s->max_len) {
        free(seg);
        return answer_error(s, q->conn, 400, chat ? "messages" : "prompt",
                            "This model's maximum context length is %ld tokens. However, you "
                            "requested %ld tokens (%ld in the %s, %ld in the completion). Please "
                            "reduce the length of the %s or completion.",
                            s->max_len, want, p.input, chat ? "messages" : "prompt",
                            want - p.input, chat ? "messages" : "prompt");
    }
    st = calloc(1, sizeof *st);
    if (!st) {
        free(seg);
        return MHD_NO;
    }
    st->conn = q->conn;
    st->chat = chat;
    st->sse = p.stream;
    st->usage = p.usage;
    st->input = p.input;
    st->output = output;
    st->stop = !(p.has_max && output == p.max_tokens);
    st->created = (long)time(NULL);
    st->received = q->received;
    /* an HTTP/1.1 stream's chunks are written by the server itself (direct writes) */
    st->direct = st->sse && q->http11;
    st->fd = sv_httpd_fd(q->conn);
    if (st->fd < 0) st->direct = 0;
    if (st->direct) { /* the kernel holds at most this much of a stream a client does not read */
        int sndbuf = STREAM_SNDBUF;
        setsockopt(st->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    }
    pthread_mutex_lock(&s->mu);
    if (s->stopping || s->broken || s->submitted >= SERVE_MAX_REQUESTS) {
        unlock(s);
        free(st);
        free(seg);
        return answer_error(s, q->conn, 503, NULL,
                            s->submitted >= SERVE_MAX_REQUESTS
                                ? "the server took its %ld requests; restart it"
                                : "the server is stopping or its simulation stopped (%ld)",
                            SERVE_MAX_REQUESTS);
    }
    /* the request arrives now: the clock first catches up with the wall clock */
    int rc = catch_up(s);
    int32_t id = rc ? -1 : sv_live_submit_prompt(s->live, (int32_t)p.input, (int32_t)output, seg, nseg);
    free(seg);
    if (id < 0) {
        s->broken = 1;
        pthread_cond_signal(&s->cv);
        unlock(s);
        free(st);
        return answer_error(s, q->conn, 503, NULL, "the simulation stopped: %s",
                            sv_live_error(s->live));
    }
    s->submitted++;
    st->entered = sv_httpd_mono();
    st->id = id;
    snprintf(st->rid, sizeof st->rid, "%s-%d", chat ? "chatcmpl" : "cmpl", (int)id);
    if (st->sse) make_head(s, st); /* (without it, token chunks go through cJSON) */
    const sv_req_t *r = sv_live_req(s->live, id);
    if (r->state == SV_RQ_FAILED) { /* refused at once (a full queue, too long): its status */
        const char *why;
        int status = fail_status(r->fail, &why);
        int e = r->replica >= 0 && r->replica < s->replicas ? r->replica : 0;
        s->fail[e] += 1;
        unlock(s);
        free(st);
        return answer_error(s, q->conn, status, NULL, "request %d failed in the simulation (%s): %s",
                            (int)id, sv_fail_name(r->fail), why);
    }
    st->refs = 2;
    st->in_list = 1;
    st->next = s->streams;
    if (s->streams) s->streams->prev = st;
    s->streams = st;
    s->in_flight++;
    q->user = st;
    if (st->sse && chat) put_chunk(s, st, "", NULL, 1); /* the role first, as vLLM */
    pthread_cond_signal(&s->cv);
    if (!st->sse) {
        st->suspended = 1;
        sv_httpd_suspend(q->conn);
        unlock(s);
        return MHD_YES;
    }
    unlock(s);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, st, NULL);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
    /* when the request's headers were read and when it entered the simulation, on this
     * machine's monotonic clock: a client on it measures from there what the simulation
     * timed, without the wait before the server read the request */
    char tv[40];
    snprintf(tv, sizeof tv, "%.6f", st->received);
    MHD_add_response_header(resp, "X-Servesim-Received", tv);
    snprintf(tv, sizeof tv, "%.6f", st->entered);
    MHD_add_response_header(resp, "X-Servesim-Entered", tv);
    sv_httpd_headers(s->httpd, resp);
    enum MHD_Result ok = MHD_queue_response(q->conn, 200, resp);
    MHD_destroy_response(resp);
    return ok;
}

static server_t *g_server; /* the one server of this process: read_stream's lock */

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_t *st = cls;
    server_t *s = g_server;
    pthread_mutex_lock(&s->mu);
    if (st->off < st->len) {
        size_t n = st->len - st->off < max ? st->len - st->off : max;
        memcpy(buf, st->buf + st->off, n);
        st->off += n;
        /* the tokens whose bytes are all out now: their emit lateness */
        int k = 0;
        if (st->npend > 0) {
            double wall = sv_httpd_mono();
            while (k < st->npend && st->pend_end[k] <= st->off) {
                double late = wall - (s->wall0 + st->pend_t[k] / s->o->speed);
                hist_put(&s->pace, b_pace, NB(b_pace), late);
                hist_put(&s->own, b_pace, NB(b_pace), late);
                k++;
            }
        }
        if (st->off == st->len) {
            st->off = st->len = 0;
            st->npend = 0;
        } else if (k > 0) {
            memmove(st->pend_end, st->pend_end + k, (size_t)(st->npend - k) * sizeof st->pend_end[0]);
            memmove(st->pend_t, st->pend_t + k, (size_t)(st->npend - k) * sizeof st->pend_t[0]);
            st->npend -= k;
        }
        unlock(s);
        return (ssize_t)n;
    }
    if (st->ended || st->oom) {
        unlock(s);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    st->suspended = 1; /* nothing yet: the clock thread resumes it with the next token */
    sv_httpd_suspend(st->conn);
    unlock(s);
    return 0;
}

static void request_done(void *cls, void *user)
{
    server_t *s = cls;
    stream_t *st = user;
    if (!st) return;
    pthread_mutex_lock(&s->mu);
    /* still in flight: the client left (closed, or too slow to read); abort it */
    if (st->in_list && !s->stopping && !s->broken) {
        if (catch_up(s)) /* (which may end it first) */
            s->broken = 1;
        else
            abort_stream(s, st);
    }
    st->gone = 1;
    stream_unref(st);
    unlock(s);
}

/* ---- the other routes ----------------------------------------------------------------------- */

/* A histogram of servesim's own (buckets b_pace), unlabelled. */
static void prom_hist(FILE *f, const char *name, const char *help, const hist_t *h)
{
    char b1[40], b2[40];
    fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    double cum = 0;
    for (int i = 0; i < NB(b_pace); i++) {
        cum += h->count[i];
        fprintf(f, "%s_bucket{le=\"%s\"} %s\n", name, sv__fmt_double(b_pace[i], b2),
                sv__fmt_double(cum, b1));
    }
    cum += h->count[NB(b_pace)];
    fprintf(f, "%s_bucket{le=\"+Inf\"} %s\n", name, sv__fmt_double(cum, b1));
    fprintf(f, "%s_count %s\n", name, sv__fmt_double(h->n, b1));
    fprintf(f, "%s_sum %s\n", name, sv__fmt_double(h->sum, b1));
}

static char *metrics_text(server_t *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    char b1[40], lab[300];
    pthread_mutex_lock(&s->mu);
    int n = s->replicas;
    static const struct {
        const char *name, *help, *type;
    } G[] = {{"vllm:num_requests_running", "Number of requests in model execution batches.", "gauge"},
             {"vllm:num_requests_waiting", "Number of requests waiting to be processed.", "gauge"},
             {"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", "gauge"},
             {"vllm:prompt_tokens_total", "Number of prefill tokens processed.", "counter"},
             {"vllm:generation_tokens_total", "Number of generation tokens processed.", "counter"},
             {"vllm:request_success_total", "Count of successfully processed requests.", "counter"},
             {"vllm:num_preemptions_total", "Cumulative number of preemption from the engine.",
              "counter"},
             {"vllm:prefix_cache_queries_total",
              "Prefix cache queries, in terms of number of queried tokens.", "counter"},
             {"vllm:prefix_cache_hits_total",
              "Prefix cache hits, in terms of number of cached tokens.", "counter"}};
    for (size_t g = 0; g < sizeof G / sizeof G[0]; g++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", G[g].name, G[g].help, G[g].name, G[g].type);
        for (int e = 0; e < n; e++) {
            long run, wait;
            double kv, v;
            sv_live_replica(s->live, e, &run, &wait, &kv);
            const sv_replica_stats_t *rs = sv_live_replica_stats(s->live, e);
            double vals[] = {(double)run,      (double)wait,      kv,
                             s->prompt_tok[e], s->gen_tok[e],     s->ok[e],
                             (double)rs->preemptions, rs->prefix_queries, rs->prefix_hits};
            v = vals[g];
            snprintf(lab, sizeof lab, "engine=\"%d\",model_name=\"%s\"%s", e, s->model,
                     g == 5 ? ",finished_reason=\"length\"" : "");
            fprintf(f, "%s{%s} %s\n", G[g].name, lab, sv__fmt_double(v, b1));
        }
    }
    for (int k = 0; k < NHIST; k++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", HISTS[k].name, HISTS[k].help,
                HISTS[k].name);
        for (int e = 0; e < n; e++) {
            const hist_t *h = &s->hist[e][k];
            snprintf(lab, sizeof lab, "engine=\"%d\",model_name=\"%s\"", e, s->model);
            double cum = 0;
            for (int i = 0; i < HISTS[k].nb; i++) {
                cum += h->count[i];
                char b2[40];
                fprintf(f, "%s_bucket{%s,le=\"%s\"} %s\n", HISTS[k].name, lab,
                        sv__fmt_double(HISTS[k].b[i], b2), sv__fmt_double(cum, b1));
            }
            cum += h->count[HISTS[k].nb];
            fprintf(f, "%s_bucket{%s,le=\"+Inf\"} %s\n", HISTS[k].name, lab, sv__fmt_double(cum, b1));
            fprintf(f, "%s_count{%s} %s\n", HISTS[k].name, lab, sv__fmt_double(h->n, b1));
            fprintf(f, "%s_sum{%s} %s\n", HISTS[k].name, lab, sv__fmt_double(h->sum, b1));
        }
    }
    /* servesim's own: pacing, the simulated clock and what the server holds */
    prom_hist(f, "servesim:emit_lateness_seconds",
              "When a streamed token's chunk went to the socket minus when the simulation made "
              "it (wall clock).", &s->pace);
    prom_hist(f, "servesim:clock_lateness_seconds",
              "When the clock thread handled an event that made tokens minus when it was due "
              "(wall clock).", &s->late);
    prom_hist(f, "servesim:emit_lateness_own_seconds",
              "Emit lateness less the time the server's core was held by other processes since "
              "it was due (wall clock).", &s->own);
    fprintf(f, "# HELP servesim:emit_lateness_max_seconds The longest emit lateness so far.\n"
               "# TYPE servesim:emit_lateness_max_seconds gauge\nservesim:emit_lateness_max_seconds %s\n",
            sv__fmt_double(s->pace.max, b1));
    fprintf(f, "# HELP servesim:simulated_seconds The simulated clock.\n"
               "# TYPE servesim:simulated_seconds gauge\nservesim:simulated_seconds %s\n",
            sv__fmt_double(sv_live_now(s->live), b1));
    fprintf(f, "# HELP servesim:requests_in_flight HTTP requests in the simulation now.\n"
               "# TYPE servesim:requests_in_flight gauge\nservesim:requests_in_flight %ld\n",
            s->in_flight);
    fprintf(f, "# HELP servesim:requests_total HTTP requests sent into the simulation.\n"
               "# TYPE servesim:requests_total counter\nservesim:requests_total %ld\n",
            s->submitted);
    fprintf(f, "# HELP servesim:requests_aborted_total Requests aborted in the simulation because "
               "their client disconnected.\n"
               "# TYPE servesim:requests_aborted_total counter\nservesim:requests_aborted_total "
               "%ld\n",
            s->aborted);
    unlock(s);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

static enum MHD_Result on_request(void *cls, sv_httpd_req_t *q)
{
    server_t *s = cls;
    int get = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
    int post = strcmp(q->method, "POST") == 0;
    const char *u = q->url;
    if (s->o->log && q->calls == 1) fprintf(s->o->log, "servesim serve: %s %s\n", q->method, u);
    int chat = strcmp(u, "/v1/chat/completions") == 0;
    if (chat || strcmp(u, "/v1/completions") == 0) {
        if (!post) return answer_error(s, q->conn, 405, NULL, "%s takes POST", u);
        return completion(s, q, chat);
    }
    int health = strcmp(u, "/health") == 0, models = strcmp(u, "/v1/models") == 0,
        metrics = strcmp(u, "/metrics") == 0, version = strcmp(u, "/version") == 0;
    if (!health && !models && !metrics && !version)
        return answer_error(s, q->conn, 404, NULL,
                            "Not Found: servesim serve answers POST /v1/completions, "
                            "/v1/chat/completions and GET /v1/models, /health, /metrics, /version");
    if (!get) return answer_error(s, q->conn, 405, NULL, "%s takes GET", u);
    if (health) {
        pthread_mutex_lock(&s->mu);
        int broken = s->broken;
        unlock(s);
        if (broken) return answer_error(s, q->conn, 503, NULL, "the simulation stopped");
        return sv_httpd_respond(s->httpd, q->conn, 200, NULL, 0, NULL);
    }
    if (version) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "version", "servesim " SERVESIM_VERSION);
        return answer_json(s, q->conn, j);
    }
    if (models) {
        cJSON *j = cJSON_CreateObject(), *d = cJSON_AddArrayToObject(j, "data"),
              *m = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "object", "list");
        cJSON_AddItemToArray(d, m);
        cJSON_AddStringToObject(m, "id", s->model);
        cJSON_AddStringToObject(m, "object", "model");
        cJSON_AddNumberToObject(m, "created", (double)time(NULL));
        cJSON_AddStringToObject(m, "owned_by", "servesim");
        cJSON_AddStringToObject(m, "root", s->model);
        cJSON_AddNullToObject(m, "parent");
        cJSON_AddNumberToObject(m, "max_model_len", (double)s->max_len);
        cJSON_AddArrayToObject(m, "permission");
        return answer_json(s, q->conn, j);
    }
    size_t len = 0;
    char *body = metrics_text(s, &len);
    if (!body) return MHD_NO;
    return sv_httpd_respond(s->httpd, q->conn, 200, body, len, "text/plain; version=0.0.4");
}

/* ---- start and stop -------------------------------------------------------------------------- */

void sv_serve_defaults(sv_serve_opts_t *o)
{
    *o = (sv_serve_opts_t){.host = "127.0.0.1",
                           .port = 8000,
                           .speed = 1.0,
                           .max_conns = 1024,
                           .per_client = 1024,
                           .deadline_s = 10,
                           .idle_s = 30,
                           .max_body = (size_t)1 << 20};
}

/* The reply length of a request that gives no max_tokens (or stops at its "EOS"): the
 * scenario's typical reply, its fixed length or its mean. */
static long typical_reply(const sv_scenario_t *sc)
{
    const sv_lendist_t *d = &sc->workload.output;
    double v = d->kind == SV_LEN_FIXED  ? d->value
               : d->kind == SV_LEN_UNIFORM ? (double)(d->lo + d->hi) / 2
                                          : d->mean;
    if (!(v >= 1)) v = 128;
    if (d->max > 0 && v > (double)d->max) v = (double)d->max;
    if (v < (double)d->min) v = (double)d->min;
    return (long)ceil(v);
}

int sv_serve(const sv_serve_opts_t *o, sv_error_t *err)
{
    if (!(o->speed > 0) || !isfinite(o->speed) || o->speed > 1e6)
        return sv_errorf(err, SV_EINVAL, "--speed: expected a number in (0, 1e6], got %g", o->speed);
    server_t s = {.o = o, .sched_self = -1, .rd0 = -1};
    sv_scenario_t *sc = o->sc;
    if (hists_init(err)) return SV_EINVAL;
    sc->horizon = 0; /* the server runs until it is stopped */
    int rc = sv_live_open(sc, o->background, &s.live, err);
    if (rc) return rc;
    s.model = sc->model.hf_id[0] ? sc->model.hf_id : sc->model.name;
    cJSON *mj = cJSON_CreateString(s.model);
    s.model_json = mj ? cJSON_PrintUnformatted(mj) : NULL;
    cJSON_Delete(mj);
    if (!s.model_json) {
        sv_result_t *res;
        sv_live_close(s.live, &res, NULL);
        sv_result_free(res);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    s.max_len = sv_live_max_model_len(s.live);
    s.reply_len = typical_reply(sc);
    s.replicas = sv_live_replicas(s.live);
    s.prompt_tok = calloc((size_t)s.replicas, sizeof(double));
    s.gen_tok = calloc((size_t)s.replicas, sizeof(double));
    s.ok = calloc((size_t)s.replicas, sizeof(double));
    s.fail = calloc((size_t)s.replicas, sizeof(double));
    s.hist = calloc((size_t)s.replicas, sizeof *s.hist);
    pthread_mutex_init(&s.mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s.cv, &ca);
    pthread_condattr_destroy(&ca);
    g_server = &s;
    sv_httpd_cfg_t cfg = {.bind = o->host,
                          .bind_opt = "--host",
                          .port = o->port,
                          .threaded = 0,
                          .max_conns = o->max_conns,
                          .per_client = o->per_client,
                          .deadline_s = o->deadline_s,
                          .idle_s = o->idle_s,
                          .max_body = o->max_body,
                          .conn_memory = (size_t)64 * 1024,
                          .handler = on_request,
                          .error_body = error_body,
                          .done = request_done,
                          .cls = &s};
    sv_httpd_block_signals();
    int port = 0;
    if (!s.prompt_tok || !s.gen_tok || !s.ok || !s.fail || !s.hist)
        rc = sv_errorf(err, SV_ENOMEM, "out of memory");
    s.wall0 = sv_httpd_mono();
    if (!rc) rc = sv_httpd_start(&cfg, &s.httpd, &port, err);
    if (!rc && pthread_create(&s.clock, NULL, clock_main, &s) == 0) s.clock_started = 1;
    if (!rc) {
        char host[80];
        printf("servesim serve: http://%s:%d/v1 (%s on %s, %d replicas, speed %g; Ctrl-C stops "
               "it)\nport %d\n",
               sv_httpd_url_host(o->host, host, sizeof host), port, s.model, sc->name, s.replicas,
               o->speed, port);
        fflush(stdout);
        int sig = sv_httpd_wait_signal();
        if (o->log) fprintf(o->log, "servesim serve: stopping (signal %d)\n", sig);
    }
    /* Stop: the clock, then every waiting answer ends (503), then the server. */
    pthread_mutex_lock(&s.mu);
    s.stopping = 1;
    pthread_cond_signal(&s.cv);
    unlock(&s);
    if (s.clock_started) pthread_join(s.clock, NULL);
    pthread_mutex_lock(&s.mu);
    fail_all(&s, "the server is stopping");
    unlock(&s);
    sv_httpd_stop(s.httpd);
    sv_result_t *res = NULL;
    sv_error_t cerr;
    int crc = sv_live_close(s.live, &res, &cerr);
    if (!rc && crc) {
        *err = cerr;
        rc = crc;
    }
    if (!rc && res) {
        long n = (long)res->pool.n, ended = res->summary.completed + res->summary.failed;
        fprintf(stderr,
                "servesim serve: %ld requests (%ld completed, %ld failed), %.3f simulated s\n",
                n, res->summary.completed, res->summary.failed, res->summary.duration);
        if (ended != n)
            rc = sv_errorf(err, SV_EINVAL, "internal error: %ld requests, %ld ended", n, ended);
        if (!rc && o->json) rc = sv_report_json(res, 1, o->json, err);
    }
    sv_result_free(res);
    free(s.prompt_tok);
    free(s.gen_tok);
    free(s.ok);
    free(s.fail);
    free(s.hist);
    free(s.model_json);
    free(s.frame);
    free(s.pfd);
    free(s.pst);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);
    g_server = NULL;
    return rc;
}
