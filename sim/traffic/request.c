/*
 * The request pool (see include/servesim/traffic/request.h): public records and, when a
 * higher layer attaches one, its side array of per-request state, grown together so that
 * one id indexes both. A windowed pool holds the ids from base on: compaction releases the
 * leading records of ended requests (a hook reads them first) and moves the rest down,
 * only once the ended prefix is at least a quarter of what is held, so that each record
 * is moved a bounded number of times on average.
 */
#include "servesim/traffic/request.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec_int.h"
#include "servesim/base/error.h"

static void side_fresh(sv_reqpool_t *p, size_t k)
{
    void *el = (char *)p->side + k * p->side_size;
    memset(el, 0, p->side_size);
    if (p->side_init) p->side_init(el);
}

static void record_fresh(sv_req_t *r)
{
    memset(r, 0, sizeof *r);
    r->start = r->scheduled = r->first_token = r->last_token = -1.0;
    r->prefill_end = r->xfer_start = r->xfer_end = r->decode_start = -1.0;
    r->replica = r->prefill_replica = -1;
    r->state = SV_RQ_NEW;
}

int32_t sv_reqpool_add(sv_reqpool_t *p)
{
    if (p->n >= (size_t)INT32_MAX) return -1;
    size_t k = p->n - p->base; /* its slot */
    if (SV_GROW(p->r, p->cap, k + 1)) return -1;
    if (p->side_size && sv__grow(&p->side, &p->cap_side, k + 1, p->side_size)) return -1;
    record_fresh(&p->r[k]);
    if (p->side_size) side_fresh(p, k);
    return (int32_t)p->n++;
}

int sv_reqpool_window(sv_reqpool_t *p, void (*on_release)(void *ctx, int32_t id, const sv_req_t *r),
                      void *ctx)
{
    if (p->n > 0) return SV_EINVAL;
    p->windowed = 1;
    p->scan_at = SV_REQPOOL_WINDOW_MIN;
    p->on_release = on_release;
    p->release_ctx = ctx;
    return 0;
}

/* Release the k leading held records (all ended): the hook reads each, its side element
 * is finished, the rest move down, and the segments no held record uses are dropped. */
static void release_prefix(sv_reqpool_t *p, size_t k)
{
    size_t held = p->n - p->base;
    for (size_t i = 0; i < k; i++) {
        if (p->on_release) p->on_release(p->release_ctx, (int32_t)(p->base + i), &p->r[i]);
        if (p->side_fini) p->side_fini((char *)p->side + i * p->side_size);
    }
    memmove(p->r, p->r + k, (held - k) * sizeof *p->r);
    if (p->side_size)
        memmove(p->side, (char *)p->side + k * p->side_size, (held - k) * p->side_size);
    p->base += k;
    held -= k;
    size_t cut = p->nseg; /* the first segment a held record uses */
    for (size_t i = 0; i < held; i++)
        if (p->r[i].nseg > 0 && (size_t)p->r[i].seg_off < cut) cut = (size_t)p->r[i].seg_off;
    if (cut == 0) return;
    memmove(p->seg, p->seg + cut, (p->nseg - cut) * sizeof *p->seg);
    p->nseg -= cut;
    for (size_t i = 0; i < held; i++)
        if (p->r[i].nseg > 0) p->r[i].seg_off -= (int64_t)cut;
}

void sv__reqpool_compact(sv_reqpool_t *p)
{
    size_t held = p->n - p->base, k = 0;
    while (k < held && p->r[k].ended)
        k++;
    if (k > 0 && k >= held / 4) {
        release_prefix(p, k);
        held -= k;
    }
    p->scan_at = held * 2 > SV_REQPOOL_WINDOW_MIN ? held * 2 : SV_REQPOOL_WINDOW_MIN;
}

void sv_reqpool_release_all(sv_reqpool_t *p)
{
    if (!p->windowed) return;
    size_t held = p->n - p->base, k = 0;
    while (k < held && p->r[k].ended)
        k++;
    if (k > 0) release_prefix(p, k);
}

int sv_reqpool_attach(sv_reqpool_t *p, size_t size, void (*init)(void *), void (*fini)(void *))
{
    if (p->side_size)
        return (p->side_size == size && p->side_init == init && p->side_fini == fini) ? 0
                                                                                      : SV_EINVAL;
    if (!size) return SV_EINVAL;
    size_t held = p->n - p->base;
    p->side_size = size;
    p->side_init = init;
    p->side_fini = fini;
    if (sv__grow(&p->side, &p->cap_side, held > 0 ? held : 1, size)) {
        p->side_size = 0;
        return SV_ENOMEM;
    }
    for (size_t i = 0; i < held; i++)
        side_fresh(p, i);
    return 0;
}

int sv_reqpool_set_segments(sv_reqpool_t *p, int32_t id, const sv_segment_t *seg, int n)
{
    if (SV_GROW(p->seg, p->cap_seg, p->nseg + (size_t)n)) return SV_ENOMEM;
    memcpy(p->seg + p->nseg, seg, (size_t)n * sizeof *seg);
    sv_req_t *r = sv_reqpool_req(p, id);
    r->seg_off = (int64_t)p->nseg;
    r->nseg = n;
    p->nseg += (size_t)n;
    return 0;
}

void sv_reqpool_free(sv_reqpool_t *p)
{
    if (!p) return;
    for (size_t i = 0; p->side && p->side_fini && i < p->n - p->base; i++)
        p->side_fini((char *)p->side + i * p->side_size);
    free(p->r);
    free(p->side);
    free(p->seg);
    memset(p, 0, sizeof *p);
}
