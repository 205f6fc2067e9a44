/*
 * A KV-cache transfer link (one per prefill replica: its GPUs' network or NVLink path
 * to the decode pool). A transfer of B bytes spends the link's fixed latency, then moves
 * its bytes at the link's bandwidth, shared among the transfers moving at once:
 *   fair  processor sharing: n concurrent transfers each get bandwidth / n;
 *   fifo  one transfer at a time at full bandwidth, the others wait their turn.
 * So one transfer alone takes exactly latency + B / bandwidth.
 *
 * A transfer may also carry a cap, the most bytes/s it may move on this link (what its
 * receiver's fair share allows, set by the caller with sv_link_set_cap; INFINITY by
 * default). Fair sharing then fills the link as water does: capped transfers take their
 * cap, the others share what is left equally (when no cap binds, bandwidth / n each); a
 * FIFO link's one moving transfer takes min(bandwidth, cap).
 *
 * The caller advances the link to the current time before changing it, and asks when
 * its next change (a transfer finishing, or one leaving its latency) happens.
 *
 * Ownership: caller storage; sv_link_free() releases the transfer array.
 */
#ifndef SERVESIM_LINK_H
#define SERVESIM_LINK_H

#include <stddef.h>
#include <stdint.h>

typedef struct sv_xfer {
    int32_t id;
    double ready;     /* when its bytes start to move (added + latency) */
    double remaining; /* bytes */
    double total;
    double cap;  /* bytes/s at most (INFINITY: none) */
    double rate; /* bytes/s it moves at the link's time t (0 while in its latency) */
} sv_xfer_t;

typedef struct sv_link {
    double bw;      /* bytes/s */
    double latency; /* s */
    int fifo;
    sv_xfer_t *x;
    size_t n, cap;
    double t;      /* time the state below is valid at */
    double busy_s; /* time with bytes moving */
    double bytes;  /* bytes delivered */
    long transfers;
} sv_link_t;

void sv_link_init(sv_link_t *l, double bw, double latency, int fifo);
void sv_link_free(sv_link_t *l);

/* Start a transfer of bytes at now (after sv_link_advance to now). 0 or SV_ENOMEM. */
int sv_link_add(sv_link_t *l, double now, int32_t id, double bytes);

/* Drop a transfer (its client gave up). 1 if it was there. */
int sv_link_cancel(sv_link_t *l, double now, int32_t id);

/* Move bytes up to now; finished transfers' ids go to done (up to max); returns how many. */
size_t sv_link_advance(sv_link_t *l, double now, int32_t *done, size_t max);

/* Set transfer id's cap (bytes/s, INFINITY for none) from now on (after sv_link_advance to
 * now). 1 if it was there. */
int sv_link_set_cap(sv_link_t *l, int32_t id, double cap);

/* Time of the next change, INFINITY when idle. */
double sv_link_next(const sv_link_t *l);

#endif
