/*
 * Worker processes for sweep and plan (see parallel_int.h): fork per item, results back
 * through pipes, failures of the machinery reported rather than swallowed.
 */
#include "studies/parallel_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slot_of(const sv__pmap_t *m, long item)
{
    return (char *)m->results + (size_t)item * m->size;
}

/* Read exactly len bytes (or up to EOF); the count read. */
static size_t read_all(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

int sv__parallel_map(const sv__pmap_t *m, sv_error_t *err)
{
    long total = 0;
    for (long i = m->first; i < m->n; i += m->stride)
        total++;
    if (m->jobs <= 1) {
        long k = 0;
        for (long i = m->first; i < m->n; i += m->stride) {
            m->work(i, slot_of(m, i), m->ctx);
            if (m->done) m->done(i, slot_of(m, i), m->ctx);
            if (m->progress) m->progress(++k, total, m->ctx);
        }
        return 0;
    }
    if (m->size > SV_PARALLEL_MAX_RESULT)
        return sv_errorf(err, SV_EINVAL, "a worker's result of %zu bytes exceeds %d", m->size,
                         SV_PARALLEL_MAX_RESULT);
    int jobs = m->jobs;
    pid_t *pid = calloc((size_t)jobs, sizeof *pid);
    int *fd = calloc((size_t)jobs, sizeof *fd);
    long *which = calloc((size_t)jobs, sizeof *which);
    char *buf = malloc(m->size ? m->size : 1);
    if (!pid || !fd || !which || !buf) {
        free(pid);
        free(fd);
        free(which);
        free(buf);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    int rc = 0;
    long next = m->first, running = 0, finished = 0;
    fflush(NULL);
    while (!rc && (next < m->n || running > 0)) {
        while (!rc && running < jobs && next < m->n) {
            int s = 0;
            while (pid[s])
                s++;
            int pp[2];
            if (pipe(pp)) {
                rc = sv_errorf(err, SV_EIO, "cannot create a pipe to a worker process: %s",
                               strerror(errno));
                break;
            }
            pid_t c = fork();
            if (c == 0) {
                close(pp[0]);
                char *out = slot_of(m, next);
                m->work(next, out, m->ctx);
                size_t put = 0;
                while (put < m->size) {
                    ssize_t w = write(pp[1], out + put, m->size - put);
                    if (w < 0 && errno == EINTR) continue;
                    if (w <= 0) break;
                    put += (size_t)w;
                }
                _exit(put == m->size ? 0 : 3);
            }
            close(pp[1]);
            if (c < 0) {
                close(pp[0]);
                rc = sv_errorf(err, SV_EIO, "cannot start a worker process: %s", strerror(errno));
                break;
            }
            pid[s] = c;
            fd[s] = pp[0];
            which[s] = next;
            next += m->stride;
            running++;
        }
        if (rc || running == 0) break;
        int status;
        pid_t c = wait(&status);
        if (c < 0) {
            if (errno == EINTR) continue;
            rc = sv_errorf(err, SV_EIO, "waiting for worker processes: %s", strerror(errno));
            break;
        }
        for (int s = 0; s < jobs; s++) {
            if (pid[s] != c) continue;
            long i = which[s];
            size_t got = read_all(fd[s], buf, m->size);
            close(fd[s]);
            pid[s] = 0;
            running--;
            if (got == m->size && WIFEXITED(status) && WEXITSTATUS(status) == 0)
                memcpy(slot_of(m, i), buf, m->size);
            else
                m->died(i, slot_of(m, i), m->ctx);
            if (m->done) m->done(i, slot_of(m, i), m->ctx);
            if (m->progress) m->progress(++finished, total, m->ctx);
        }
    }
    /* after an error: the workers already started are waited for, their pipes closed */
    for (int s = 0; s < jobs; s++)
        if (pid[s]) {
            waitpid(pid[s], NULL, 0);
            close(fd[s]);
        }
    free(pid);
    free(fd);
    free(which);
    free(buf);
    return rc;
}
