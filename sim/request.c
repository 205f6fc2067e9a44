/*
 * The request pool (see include/servesim/request.h): public records and the replica
 * engine's private state per request, grown together so that one id indexes both.
 */
#include "servesim/request.h"

#include <stdlib.h>
#include <string.h>

#include "reqeng_int.h"
#include "vec_int.h"

int32_t sv_reqpool_add(sv_reqpool_t *p)
{
    if (p->n >= (size_t)INT32_MAX) return -1;
    if (SV_GROW(p->r, p->cap, p->n + 1) || SV_GROW(p->e, p->cap_e, p->n + 1)) return -1;
    sv_req_t *r = &p->r[p->n];
    memset(r, 0, sizeof *r);
    r->start = r->scheduled = r->first_token = r->last_token = -1.0;
    r->prefill_end = r->xfer_start = r->xfer_end = r->decode_start = -1.0;
    r->replica = r->prefill_replica = -1;
    r->state = SV_RQ_NEW;
    sv_reqeng_t *e = &p->e[p->n];
    memset(e, 0, sizeof *e);
    e->at = e->heap_pos = e->seg = e->prev = e->next = -1;
    return (int32_t)p->n++;
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
    for (size_t i = 0; p->e && i < p->n; i++)
        free(p->e[i].chain);
    free(p->r);
    free(p->e);
    free(p->seg);
    p->r = NULL;
    p->e = NULL;
    p->seg = NULL;
    p->n = p->cap = p->cap_e = p->nseg = p->cap_seg = 0;
}
