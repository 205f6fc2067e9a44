/*
 * The request pool (see include/servesim/traffic/request.h): public records and, when a
 * higher layer attaches one, its side array of per-request state, grown together so that
 * one id indexes both.
 */
#include "servesim/traffic/request.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec_int.h"
#include "servesim/base/error.h"

static void side_fresh(sv_reqpool_t *p, size_t id)
{
    void *el = (char *)p->side + id * p->side_size;
    memset(el, 0, p->side_size);
    if (p->side_init) p->side_init(el);
}

int32_t sv_reqpool_add(sv_reqpool_t *p)
{
    if (p->n >= (size_t)INT32_MAX) return -1;
    if (SV_GROW(p->r, p->cap, p->n + 1)) return -1;
    if (p->side_size && sv__grow(&p->side, &p->cap_side, p->n + 1, p->side_size)) return -1;
    sv_req_t *r = &p->r[p->n];
    memset(r, 0, sizeof *r);
    r->start = r->scheduled = r->first_token = r->last_token = -1.0;
    r->prefill_end = r->xfer_start = r->xfer_end = r->decode_start = -1.0;
    r->replica = r->prefill_replica = -1;
    r->state = SV_RQ_NEW;
    if (p->side_size) side_fresh(p, p->n);
    return (int32_t)p->n++;
}

int sv_reqpool_attach(sv_reqpool_t *p, size_t size, void (*init)(void *), void (*fini)(void *))
{
    if (p->side_size)
        return (p->side_size == size && p->side_init == init && p->side_fini == fini) ? 0
                                                                                      : SV_EINVAL;
    if (!size) return SV_EINVAL;
    p->side_size = size;
    p->side_init = init;
    p->side_fini = fini;
    if (sv__grow(&p->side, &p->cap_side, p->n > 0 ? p->n : 1, size)) {
        p->side_size = 0;
        return SV_ENOMEM;
    }
    for (size_t i = 0; i < p->n; i++)
        side_fresh(p, i);
    return 0;
}

int sv_reqpool_set_segments(sv_reqpool_t *p, int32_t id, const sv_segment_t *seg, int n)
{
    if (SV_GROW(p->seg, p->cap_seg, p->nseg + (size_t)n)) return SV_ENOMEM;
    memcpy(p->seg + p->nseg, seg, (size_t)n * sizeof *seg);
    p->r[id].seg_off = (int64_t)p->nseg;
    p->r[id].nseg = n;
    p->nseg += (size_t)n;
    return 0;
}

void sv_reqpool_free(sv_reqpool_t *p)
{
    if (!p) return;
    for (size_t i = 0; p->side && p->side_fini && i < p->n; i++)
        p->side_fini((char *)p->side + i * p->side_size);
    free(p->r);
    free(p->side);
    free(p->seg);
    memset(p, 0, sizeof *p);
}
