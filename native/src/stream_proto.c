/*
 * stream_proto.c - the two-frame protocol of a STREAM socket's send and
 * recv ([routing id][payload]), the framing of payloads on the wire
 * (ZLINK_STREAM_FRAMING: LENGTH, RAW, BATCH), the queues recv delivers from
 * (connection events and the ready list of readable connections), and the
 * readiness zlink_poll and ZLINK_EVENTS report.
 *
 * Every call does its I/O itself, in the calling thread. Reads: LENGTH and
 * RAW read a connection before its id frame is handed out (so an id always
 * has something behind it), into the socket's 64 KiB scratch; what is not
 * delivered at once stays there for that connection (s->hold) or, when the
 * scratch is needed or only part of a packet is left, in the connection's
 * own buffer (c->rb). BATCH reads into the caller's buffer while it
 * receives the payload frame and keeps only a trailing partial packet in
 * c->rb. Sends write straight to the kernel when nothing is queued.
 */
#include "stream.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* ---- readiness --------------------------------------------------------- */

static int prime(zl_stream_t *s);

static int has_input(zl_stream_t *s)
{
    return s->rx_state != ZRX_NONE || prime(s);
}

int zl_stream_readiness(zl_stream_t *s, short events)
{
    if (zl_stream_check_live(s))
        return -1;
    if (!has_input(s))
        zl_pump(s, 0);
    else if (s->loop.heap_n)
        zl_timers_run(s); /* due retries/timeouts run even if unread input
                             makes the epoll round trip unnecessary */
    if (zl_stream_check_live(s))
        return -1;
    int r = 0;
    if ((events & ZLINK_POLLIN) && has_input(s))
        r |= ZLINK_POLLIN;
    if (events & ZLINK_POLLOUT)
        r |= ZLINK_POLLOUT; /* sends never block for long: HWM is per peer */
    return r;
}

void zl_stream_poll_item(zl_handle_t *h, short events, zmq_pollitem_t *zi)
{
    zi->socket = NULL;
    zi->fd = h->u.stream->loop.epfd;
    /* only wait on it if input was asked for: the epoll fd stays readable
     * while unread input is pending */
    zi->events = (events & ZLINK_POLLIN) ? ZMQ_POLLIN : 0;
}

int zl_stream_poll_check(zl_handle_t *h, short events)
{
    return zl_stream_readiness(h->u.stream, events);
}

/* ---- framing ------------------------------------------------------------ */

/* rb buffers above this are freed when they drain */
#define ZL_RB_KEEP 2048
#define ZL_RB_MIN 256
/* the longest body: a packet's size must fit the int zlink_recv returns */
#define ZL_MAX_BODY ((uint32_t)INT_MAX - 4)
/* the longest body received while MAXMSGSIZE is -1 or 0, as in zlink 1.3 */
#define ZL_DEFAULT_MAX_BODY (8u * 1024 * 1024)
/* LENGTH: an unfinished packet still missing this much or more is read
 * straight into c->rb (up to its end) rather than through the scratch */
#define ZL_RB_DIRECT (ZL_SCRATCH_SIZE / 4)

static int framing(const zl_stream_t *s)
{
    return s->opts.framing;
}

/* 0 for a body length the receiver takes, else the errno of the drop */
static int len_check(const zl_stream_t *s, uint32_t len)
{
    if (len == 0)
        return EPROTO;
    /* zlink 1.3's rule: MAXMSGSIZE when it is above 0, else 8 MiB */
    uint64_t limit = s->opts.maxmsgsize > 0 ? (uint64_t)s->opts.maxmsgsize
                                            : ZL_DEFAULT_MAX_BODY;
    if (len > ZL_MAX_BODY || (uint64_t)len > limit)
        return EMSGSIZE;
    return 0;
}

static uint32_t rb_used(const zl_conn_t *c)
{
    return c->rb_len - c->rb_off;
}

static void rb_drained(zl_stream_t *s, zl_conn_t *c)
{
    c->rb_off = c->rb_len = 0;
    if (c->rb_cap > ZL_RB_KEEP) {
        s->rx_held -= c->rb_cap;
        free(c->rb);
        c->rb = NULL;
        c->rb_cap = 0;
    }
}

/* Room in c->rb for `total` undelivered bytes (moving them to its start):
 * the buffer grows geometrically from what it holds, but never past
 * `limit` (>= total), the size of the packet being received. Returns 0,
 * or the errno that ends the connection: ENOBUFS when the growth would
 * take the socket's receive buffers (s->rx_held) past
 * ZLINK_STREAM_RCVBUDGET, ENOMEM when there is no memory. */
static int rb_reserve(zl_stream_t *s, zl_conn_t *c, size_t total, size_t limit)
{
    uint32_t used = rb_used(c);
    if (c->rb_off) {
        memmove(c->rb, c->rb + c->rb_off, used);
        c->rb_off = 0;
        c->rb_len = used;
    }
    if (total <= c->rb_cap)
        return 0;
    size_t ncap = (size_t)c->rb_cap * 2;
    if (ncap < ZL_RB_MIN)
        ncap = ZL_RB_MIN;
    if (ncap < total)
        ncap = total;
    if (ncap > limit)
        ncap = limit;
    if (ncap > UINT32_MAX)
        return ENOMEM;
    if (s->opts.rcvbudget >= 0 &&
        s->rx_held + (int64_t)(ncap - c->rb_cap) > s->opts.rcvbudget)
        return ENOBUFS;
    char *n = realloc(c->rb, ncap);
    if (!n)
        return ENOMEM;
    s->rx_held += (int64_t)(ncap - c->rb_cap);
    c->rb = n;
    c->rb_cap = (uint32_t)ncap;
    return 0;
}

static int rb_append(zl_stream_t *s, zl_conn_t *c, const void *p, size_t n,
                     size_t limit)
{
    size_t total = (size_t)rb_used(c) + n;
    int e = rb_reserve(s, c, total, limit < total ? total : limit);
    if (e)
        return e;
    memcpy(c->rb + c->rb_len, p, n);
    c->rb_len += (uint32_t)n;
    return 0;
}

/* The size of the packet whose first `have` bytes are at p (0 while its
 * header is incomplete). */
static size_t pkt_size(const char *p, size_t have)
{
    return have < 4 ? 0 : 4 + (size_t)zl_get_be32(p);
}

static int is_holder(const zl_stream_t *s, const zl_conn_t *c)
{
    return s->hold && s->hold_idx == c->idx && s->hold_serial == c->serial;
}

void zl_rx_reset(zl_stream_t *s, zl_conn_t *c)
{
    if (is_holder(s, c))
        s->hold = 0;
    /* a free slot keeps no buffer */
    s->rx_held -= c->rb_cap;
    free(c->rb);
    c->rb = NULL;
    c->rb_off = c->rb_len = c->rb_cap = 0;
}

/* c's undelivered bytes that come first: its rb, else its part of the
 * scratch. Returns how many (0: none). */
static size_t first_seg(const zl_stream_t *s, const zl_conn_t *c,
                        const char **p)
{
    if (rb_used(c)) {
        *p = c->rb + c->rb_off;
        return rb_used(c);
    }
    if (is_holder(s, c)) {
        *p = s->scratch + s->hold_off;
        return s->hold_len - s->hold_off;
    }
    return 0;
}

/* LENGTH: c's next body, if it is complete. Returns 1 (*body, *n), 0
 * (incomplete or nothing), or -1 with *err: the length says drop. */
static int next_body(const zl_stream_t *s, const zl_conn_t *c,
                     const char **body, uint32_t *n, int *err)
{
    const char *p;
    size_t have = first_seg(s, c, &p);
    if (have < 4)
        return 0;
    uint32_t len = zl_get_be32(p);
    if ((*err = len_check(s, len)) != 0)
        return -1;
    if (have - 4 < len)
        return 0;
    *body = p + 4;
    *n = len;
    return 1;
}

/* Whether c has something to deliver (LENGTH: a whole body, or a length
 * that drops it; RAW: a byte). */
static int has_item(const zl_stream_t *s, const zl_conn_t *c)
{
    if (framing(s) == ZLINK_STREAM_FRAMING_RAW) {
        const char *p;
        return first_seg(s, c, &p) != 0;
    }
    const char *b;
    uint32_t n;
    int err;
    return next_body(s, c, &b, &n, &err) != 0;
}

/* The holder's bytes move from the scratch to its rb (the scratch is
 * needed, or only part of a packet is left there). */
static int spill_hold(zl_stream_t *s)
{
    zl_conn_t *h = zl_conn_at(s, s->hold_idx, s->hold_serial);
    s->hold = 0;
    if (!h)
        return 0;
    const char *p = s->scratch + s->hold_off;
    size_t n = s->hold_len - s->hold_off;
    size_t limit = n + rb_used(h);
    if (framing(s) != ZLINK_STREAM_FRAMING_RAW && !rb_used(h)) {
        size_t ps = pkt_size(p, n);
        if (ps > limit)
            limit = ps; /* room for the rest of the packet to come */
    }
    int e = n ? rb_append(s, h, p, n, limit) : 0;
    if (e) {
        zl_conn_close(s, h, ZLINK_DISCONNECT_TRANSPORT_ERROR, e);
        return -1;
    }
    if (h->state == ZC_ACTIVE && !h->in_ready && has_item(s, h))
        zl_ready_push(s, h);
    return 0;
}

/* After something of the scratch was delivered: the hold ends when it is
 * empty, or moves to the holder's rb when what is left is not deliverable
 * yet (part of a packet). */
static void hold_settle(zl_stream_t *s, zl_conn_t *c)
{
    if (!is_holder(s, c))
        return;
    if (s->hold_off == s->hold_len) {
        s->hold = 0;
        return;
    }
    if (!has_item(s, c))
        spill_hold(s);
}

/* One read of c's transport into dst: > 0 bytes, 0 nothing now, -1 the
 * input ended (*err: 0 for an orderly end, else the errno). Input that
 * TLS or ws hold where epoll cannot see it puts c on the ready list. */
static ssize_t xread(zl_stream_t *s, zl_conn_t *c, void *dst, size_t cap,
                     int *err)
{
    if (cap > INT_MAX)
        cap = INT_MAX;
    ssize_t n = zl_conn_recv(c, dst, cap);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        n = 0;
    else if (n <= 0) {
        *err = n == 0 ? 0 : errno;
        return -1;
    }
    if ((c->ssl || c->ws) && !c->in_ready && zl_conn_pending(c))
        zl_ready_push(s, c);
    return n;
}

/* The connection's input ended (err as xread's) or carried a length that
 * drops it (framing set): it closes, its 0x00 carries err. */
static void input_end(zl_stream_t *s, zl_conn_t *c, int err, int framing_err)
{
    if (c->ws) {
        if (!framing_err && err == 0 && zl_ws_peer_closed(c)) {
            /* a close frame: what was accepted goes out before our reply,
             * and the 0x00 comes when that is done */
            zl_conn_peer_closed(s, c);
            return;
        }
        if (framing_err) { /* a length over MAXMSGSIZE, or zero */
            zl_ws_fail(s, c, err == EMSGSIZE ? 1009 : 1002);
        } else if (c->q.lcount) {
            /* the peer went without a close frame while bytes were
             * queued: they are lost, and that is said (CLOSE_FAILED, and
             * the 0x00's cause) */
            if (err == 0)
                err = ECONNRESET;
            zl_emit(s, ZLINK_EVENT_CLOSE_FAILED, (uint64_t)err, c, NULL, NULL);
        }
    }
    int reason = framing_err ? ZLINK_DISCONNECT_HANDSHAKE_FAILED
                 : (err == 0 || err == ECONNRESET) ? ZLINK_DISCONNECT_REMOTE
                                                   : ZLINK_DISCONNECT_TRANSPORT_ERROR;
    zl_conn_close(s, c, reason, err);
}

static char *scratch(zl_stream_t *s)
{
    if (!s->scratch)
        s->scratch = malloc(ZL_SCRATCH_SIZE);
    return s->scratch;
}

/* LENGTH: the scratch bytes [0, n) just read for c, whose rb holds the
 * start of an unfinished packet: the bytes that finish it go to rb, the
 * rest becomes the hold. 0, or -1 when c was closed. */
static int finish_from_scratch(zl_stream_t *s, zl_conn_t *c, size_t n)
{
    size_t k = 0;
    while (k < n && rb_used(c)) {
        uint32_t used = rb_used(c);
        size_t want, limit;
        if (used < 4) {
            want = 4 - used;
            limit = ZL_RB_MIN;
        } else {
            size_t ps = pkt_size(c->rb + c->rb_off, used);
            if (ps <= used)
                break; /* finished */
            want = ps - used;
            limit = ps;
        }
        if (want > n - k)
            want = n - k;
        int e = rb_append(s, c, s->scratch + k, want, limit);
        if (e) {
            zl_conn_close(s, c, ZLINK_DISCONNECT_TRANSPORT_ERROR, e);
            return -1;
        }
        k += want;
        if (used < 4 && rb_used(c) >= 4) {
            int e = len_check(s, zl_get_be32(c->rb + c->rb_off));
            if (e) {
                input_end(s, c, e, 1);
                return -1;
            }
        } else if (used >= 4) {
            break;
        }
    }
    if (k < n) {
        s->hold = 1;
        s->hold_idx = c->idx;
        s->hold_serial = c->serial;
        s->hold_off = (uint32_t)k;
        s->hold_len = (uint32_t)n;
    }
    return 0;
}

/*
 * LENGTH and RAW, before c's id frame goes out: makes sure c has something
 * to deliver, reading its transport when it has not. Returns 1 (it has), 0
 * (nothing yet), or -1 when c closed (its end or a dropping length; the
 * 0x00 is queued).
 */
static int fill(zl_stream_t *s, zl_conn_t *c)
{
    for (;;) {
        if (framing(s) == ZLINK_STREAM_FRAMING_RAW) {
            const char *p;
            if (first_seg(s, c, &p))
                return 1;
        } else {
            const char *b;
            uint32_t n;
            int err;
            int r = next_body(s, c, &b, &n, &err);
            if (r > 0)
                return 1;
            if (r < 0) {
                input_end(s, c, err, 1);
                return -1;
            }
        }
        /* more bytes are needed; what c has waiting is part of a packet */
        if (s->hold && spill_hold(s) != 0 && c->state == ZC_FREE)
            return -1;
        int err = 0;
        ssize_t n;
        uint32_t used = rb_used(c);
        size_t ps = used ? pkt_size(c->rb + c->rb_off, used) : 0;
        if (ps && ps - used >= ZL_RB_DIRECT) {
            /* a large packet: straight into rb, up to its end, rb growing
             * (doubling when full) with what arrived */
            int e = rb_reserve(s, c, (size_t)used + 1, ps);
            if (e) {
                zl_conn_close(s, c, ZLINK_DISCONNECT_TRANSPORT_ERROR, e);
                return -1;
            }
            size_t room = c->rb_cap - c->rb_len;
            if (room > ps - used)
                room = ps - used;
            n = xread(s, c, c->rb + c->rb_len, room, &err);
            if (n > 0) {
                c->rb_len += (uint32_t)n;
                continue;
            }
        } else {
            char *sc = scratch(s);
            if (!sc) {
                zl_conn_close(s, c, ZLINK_DISCONNECT_TRANSPORT_ERROR, ENOMEM);
                return -1;
            }
            n = xread(s, c, sc, ZL_SCRATCH_SIZE, &err);
            if (n > 0) {
                if (used) {
                    if (finish_from_scratch(s, c, (size_t)n) != 0)
                        return -1;
                } else {
                    s->hold = 1;
                    s->hold_idx = c->idx;
                    s->hold_serial = c->serial;
                    s->hold_off = 0;
                    s->hold_len = (uint32_t)n;
                }
                if (framing(s) != ZLINK_STREAM_FRAMING_RAW && is_holder(s, c) &&
                    !rb_used(c) && !has_item(s, c))
                    spill_hold(s); /* only part of a packet came */
                continue;
            }
        }
        if (n == 0)
            return 0;
        input_end(s, c, err, 0); /* an unfinished packet goes with it */
        return -1;
    }
}

/* After a delivery from c: c goes back on the ready list if it has more to
 * deliver from its rb (its hold is delivered first anyway). */
static void after_take(zl_stream_t *s, zl_conn_t *c)
{
    hold_settle(s, c);
    if (!c->in_ready && !is_holder(s, c) && rb_used(c) && has_item(s, c))
        zl_ready_push(s, c);
}

/* Consumes n bytes of c's first segment. */
static void seg_consume(zl_stream_t *s, zl_conn_t *c, size_t n)
{
    if (rb_used(c)) {
        c->rb_off += (uint32_t)n;
        if (!rb_used(c))
            rb_drained(s, c);
    } else {
        s->hold_off += (uint32_t)n;
    }
}

/* ---- BATCH ------------------------------------------------------------- */

/* What a BATCH payload frame got. */
typedef struct batch_res {
    int n;          /* bytes delivered (whole packets), or the size needed */
    int too_small;  /* n is the size of a first packet over the buffer */
    int end;        /* the connection ends after these bytes */
    int end_err;    /* its errno */
    int end_framing; /* ...because of a length */
} batch_res_t;

/* BATCH: finishes the first packet in c->rb (it does not fit the caller's
 * buffer, or the buffer cannot take its header). Returns 1 when it is
 * whole, 0 when it is not yet, -1 when the input ended (r->end set). */
static int batch_fill_rb(zl_stream_t *s, zl_conn_t *c, batch_res_t *r)
{
    for (;;) {
        uint32_t used = rb_used(c);
        size_t want, limit;
        if (used < 4) {
            want = 4 - used;
            limit = ZL_RB_MIN;
        } else {
            uint32_t len = zl_get_be32(c->rb + c->rb_off);
            int e = len_check(s, len);
            if (e) {
                r->end = 1;
                r->end_err = e;
                r->end_framing = 1;
                return -1;
            }
            size_t ps = 4 + (size_t)len;
            if (used >= ps)
                return 1;
            want = ps - used;
            limit = ps;
        }
        /* rb grows (doubling when full) with what arrives */
        int e = rb_reserve(s, c, (size_t)used + 1, limit);
        if (e) {
            r->end = 1;
            r->end_err = e;
            return -1;
        }
        size_t room = c->rb_cap - c->rb_len;
        if (room > want)
            room = want;
        int err = 0;
        ssize_t n = xread(s, c, c->rb + c->rb_len, room, &err);
        if (n == 0)
            return 0;
        if (n < 0) {
            r->end = 1;
            r->end_err = err;
            return -1;
        }
        c->rb_len += (uint32_t)n;
    }
}

/* BATCH: the payload frame of c into buf (cap bytes): whole packets, as
 * many as fit, read straight into buf behind c's leftover partial packet;
 * a trailing partial packet goes to c->rb. */
static void batch_take(zl_stream_t *s, zl_conn_t *c, char *buf, size_t cap,
                       batch_res_t *r)
{
    memset(r, 0, sizeof *r);
    if (cap > INT_MAX)
        cap = INT_MAX;
    for (;;) {
        uint32_t lo = rb_used(c);
        size_t ps = lo ? pkt_size(c->rb + c->rb_off, lo) : 0;
        if ((lo && !ps && cap < 4) || ps > cap || lo > cap || cap < 5) {
            /* the first packet cannot go into buf: finish it in rb */
            int f = batch_fill_rb(s, c, r);
            if (f <= 0)
                return;
            ps = pkt_size(c->rb + c->rb_off, rb_used(c));
            if (ps > cap) {
                r->n = (int)ps;
                r->too_small = 1;
                return;
            }
            lo = rb_used(c);
        }
        if (lo)
            memcpy(buf, c->rb + c->rb_off, lo);
        rb_drained(s, c);
        size_t total = lo;
        if (lo < cap) {
            int err = 0;
            ssize_t n = xread(s, c, buf + lo, cap - lo, &err);
            if (n > 0) {
                total += (size_t)n;
            } else if (n < 0) {
                r->end = 1;
                r->end_err = err;
            }
        }
        /* whole packets from the start */
        size_t off = 0;
        while (total - off >= 4) {
            uint32_t len = zl_get_be32(buf + off);
            int e = len_check(s, len);
            if (e) {
                r->end = 1;
                r->end_err = e;
                r->end_framing = 1;
                r->n = (int)off;
                return; /* what follows a bad length is dropped */
            }
            if (total - off - 4 < len)
                break;
            off += 4 + (size_t)len;
        }
        if (total > off && !r->end) {
            size_t ps2 = pkt_size(buf + off, total - off);
            int e = rb_append(s, c, buf + off, total - off,
                              ps2 ? ps2 : ZL_RB_MIN);
            if (e) {
                r->end = 1;
                r->end_err = e;
            }
        }
        r->n = (int)off;
        if (off || r->end || total == lo)
            return;
        /* nothing whole yet: a first packet too large for buf is read on
         * into rb at once; otherwise the payload is empty */
        ps = pkt_size(c->rb + c->rb_off, rb_used(c));
        if (ps <= cap)
            return;
    }
}

/* ---- send -------------------------------------------------------------- */

/* One write of a (alen bytes) then b (blen bytes) on c, the rest queued.
 * Returns blen + alen, having closed c if the peer turned out gone. */
static void send_direct(zl_stream_t *s, zl_conn_t *c, const void *a,
                        size_t alen, const void *b, size_t blen)
{
    s->tx_pending = 0;
    ssize_t n;
    if (alen) {
        struct iovec iov[2] = {{(void *)a, alen}, {(void *)b, blen}};
        struct msghdr mh = {0};
        mh.msg_iov = iov;
        mh.msg_iovlen = 2;
        n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
        n = zl_conn_send(c, b, blen);
    }
    if (n < 0) {
        int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR) {
            n = 0;
        } else {
            /* the peer is gone; the payload goes with the connection and
             * the application learns about it from the 0x00 */
            zl_conn_close(s, c,
                          (e == EPIPE || e == ECONNRESET)
                              ? ZLINK_DISCONNECT_REMOTE
                              : ZLINK_DISCONNECT_TRANSPORT_ERROR,
                          e);
            return;
        }
    }
    size_t done = (size_t)n;
    int rc = 0;
    if (done < alen)
        rc = zl_conn_queue2(s, c, (const char *)a + done, alen - done, b, blen);
    else if (done < alen + blen)
        rc = zl_conn_queue(s, c, (const char *)b + (done - alen),
                           alen + blen - done);
    if (rc != 0) {
        zl_conn_close(s, c, ZLINK_DISCONNECT_TRANSPORT_ERROR, ENOMEM);
        return;
    }
    /* the queue was empty: what was queued is the rest of a message whose
     * start went out, so nothing may go in front of it (ws pongs) */
    if (done && done < alen + blen)
        c->q.partial = 1;
    c->msgs_sent++;
}

char *zl_txbuf(zl_stream_t *s, size_t need)
{
    /* a burst of big payloads is not kept for life */
    if (s->txbuf_cap > 256 * 1024 && need <= 256 * 1024) {
        free(s->txbuf);
        s->txbuf = NULL;
        s->txbuf_cap = 0;
    }
    if (need > s->txbuf_cap) {
        size_t cap = need < 4096 ? 4096 : need;
        char *b = realloc(s->txbuf, cap);
        if (!b)
            return NULL;
        s->txbuf = b;
        s->txbuf_cap = cap;
    }
    return s->txbuf;
}

/* Waits (pumping) until the connection's queue is below SNDHWM. Returns
 * the connection, or NULL with the error set. */
static zl_conn_t *wait_for_room(zl_stream_t *s, int flags)
{
    uint64_t deadline = 0;
    int wait = 0;
    for (;;) {
        zl_pump(s, wait);
        if (zl_stream_check_live(s))
            return NULL;
        zl_conn_t *c = zl_conn_at(s, s->tx_idx, s->tx_serial);
        if (!c || c->state != ZC_ACTIVE) {
            s->tx_pending = 0;
            zl_set_errno(EHOSTUNREACH);
            return NULL;
        }
        if (c->q.lcount < (uint32_t)s->opts.sndhwm)
            return c;
        if ((flags & ZLINK_DONTWAIT) || s->opts.sndtimeo == 0) {
            zl_set_errno(EAGAIN);
            return NULL;
        }
        if (s->opts.sndtimeo > 0) {
            uint64_t now = zl_now_ms();
            if (!deadline)
                deadline = now + (uint64_t)s->opts.sndtimeo;
            if (now >= deadline) {
                zl_set_errno(EAGAIN);
                return NULL;
            }
            wait = (int)(deadline - now);
        } else {
            wait = -1;
        }
    }
}

/* BATCH: whether the payload is whole packets, each body 1 byte or more */
static int whole_packets(const unsigned char *p, size_t n)
{
    size_t off = 0;
    while (off < n) {
        if (n - off < 4)
            return 0;
        uint32_t len = zl_get_be32(p + off);
        if (len == 0 || n - off - 4 < len)
            return 0;
        off += 4 + (size_t)len;
    }
    return 1;
}

/* The payload frame: sends, queues or refuses it. The caller has cleared
 * the selection already, so whatever happens here the next frame is an id
 * frame (see zl_stream_send). */
static int send_payload(zl_stream_t *s, const void *buf, size_t len,
                        int flags)
{
    zl_conn_t *c = zl_conn_at(s, s->tx_idx, s->tx_serial);
    if (!c || c->state != ZC_ACTIVE)
        return zl_fail(EHOSTUNREACH);
    int mode = framing(s);
    /* empty closes; LENGTH and BATCH: so does the single byte 0x00 */
    if (len == 0 || (mode != ZLINK_STREAM_FRAMING_RAW && len == 1 && buf &&
                     *(const unsigned char *)buf == 0x00)) {
        zl_conn_request_close(s, c);
        return (int)len;
    }
    if (len > ZL_MAX_BODY || !buf)
        return zl_fail(EMSGSIZE);
    if (mode == ZLINK_STREAM_FRAMING_BATCH && !whole_packets(buf, len))
        return zl_fail(EINVAL);
    if (c->q.lcount && s->opts.sndhwm > 0 &&
        c->q.lcount >= (uint32_t)s->opts.sndhwm) {
        c = wait_for_room(s, flags);
        if (!c)
            return -1;
    }
    unsigned char hdr[4];
    size_t hlen = 0;
    if (mode == ZLINK_STREAM_FRAMING_LENGTH) {
        zl_put_be32(hdr, (uint32_t)len);
        hlen = 4;
    }
    const void *out = buf;
    size_t olen = len;
    if (c->ws) {
        /* one binary frame per payload, the length inside it (encoded
         * after the wait above, whose pump may encode pongs in the same
         * buffer) */
        out = zl_ws_frame(s, c, 0x2, hdr, hlen, buf, len, &olen);
        if (!out)
            return zl_fail(ENOMEM);
        hlen = 0;
    } else if (hlen && c->ssl) {
        /* header and body in the same records */
        char *t = zl_txbuf(s, len + 4);
        if (!t)
            return zl_fail(ENOMEM);
        memcpy(t, hdr, 4);
        memcpy(t + 4, buf, len);
        out = t;
        olen = len + 4;
        hlen = 0;
    }
    if (c->q.lcount == 0) {
        send_direct(s, c, hdr, hlen, out, olen);
        return (int)len;
    }
    /* keep ordering behind what is already queued */
    if (zl_conn_queue2(s, c, hdr, hlen, out, olen) != 0)
        return -1;
    c->msgs_sent++;
    return (int)len;
}

/* The send protocol (docs/zlink-abi.md, "STREAM sends"): a message is an id
 * frame (4 bytes, SNDMORE) that selects a connection, then one payload frame
 * (empty: close the connection). A payload frame always ends the message:
 * sent, queued, or refused, the selection is gone afterwards, so after any
 * failure the caller sends the whole [id][payload] again. Never does a
 * refused payload leave the socket expecting a payload, which would make the
 * caller's next id frame (for another connection, or a close) payload bytes
 * of the stalled connection. */
int zl_stream_send(zl_handle_t *h, const void *buf, size_t len, int flags)
{
    zl_stream_t *s = h->u.stream;
    if (zl_stream_check_live(s))
        return -1;
    if (s->tx_pending) {
        /* payload frame (a MORE flag on it is ignored, as libzmq does) */
        s->tx_pending = 0;
        return send_payload(s, buf, len, flags);
    }
    {
        /* routing id frame */
        if (!(flags & ZLINK_SNDMORE))
            return zl_fail(EINVAL);
        if (len != 4 || !buf)
            return zl_fail(EHOSTUNREACH);
        zl_conn_t *c = zl_conn_by_id(s, zl_get_be32(buf));
        if (!c || c->state != ZC_ACTIVE)
            return zl_fail(EHOSTUNREACH);
        s->tx_pending = 1;
        s->tx_idx = c->idx;
        s->tx_serial = c->serial;
        return 4;
    }
}

/* The message's bytes are sent like zlink_send's; a successful send leaves
 * the message empty, a failed one leaves it intact, as with libzmq. STREAM
 * copies or writes the bytes before returning. */
int zl_stream_msg_send(zl_handle_t *h, zmq_msg_t *msg, int flags)
{
    int rc = zl_stream_send(h, zmq_msg_data(msg), zmq_msg_size(msg), flags);
    if (rc < 0)
        return -1;
    zmq_msg_close(msg);
    zmq_msg_init(msg);
    return rc;
}

/* ---- recv -------------------------------------------------------------- */

/* Grows a power-of-two ring, unwrapping it so head becomes 0. */
static int ring_grow(void **ring, uint32_t *head, uint32_t count, uint32_t *cap,
                     size_t elem)
{
    uint32_t ncap = *cap ? *cap * 2 : 64;
    char *n = malloc((size_t)ncap * elem);
    if (!n)
        return -1;
    char *o = *ring;
    for (uint32_t i = 0; i < count; i++)
        memcpy(n + (size_t)i * elem,
               o + (size_t)((*head + i) & (*cap - 1)) * elem, elem);
    free(o);
    *ring = n;
    *head = 0;
    *cap = ncap;
    return 0;
}

void zl_evq_push(zl_stream_t *s, uint32_t id, uint8_t byte, int err)
{
    if (s->evq_count == s->evq_cap &&
        ring_grow((void **)&s->evq, &s->evq_head, s->evq_count, &s->evq_cap,
                  sizeof *s->evq) != 0)
        abort(); /* losing a connection event would break the contract */
    zl_event_t *e = &s->evq[(s->evq_head + s->evq_count) & (s->evq_cap - 1)];
    e->id = id;
    e->byte = byte;
    e->err = err;
    s->evq_count++;
    /* keeps the epoll fd (ZLINK_FD) readable while events wait */
    zl_loop_wake(&s->loop);
}

void zl_deliver_end(zl_stream_t *s, zl_conn_t *c, int err)
{
    if (s->rx_state == ZRX_DATA && s->rx_idx == c->idx &&
        s->rx_serial == c->serial) {
        /* its id frame is out: the payload that follows is the 0x00 */
        s->rx_state = ZRX_EVENT;
        s->rx_byte = 0x00;
        s->rx_err = err;
        return;
    }
    zl_evq_push(s, c->id, 0x00, err);
}

void zl_ready_push(zl_stream_t *s, zl_conn_t *c)
{
    if (s->rdy_count == s->rdy_cap &&
        ring_grow((void **)&s->rdy, &s->rdy_head, s->rdy_count, &s->rdy_cap,
                  sizeof *s->rdy) != 0)
        return; /* level-triggered: the next batch reports it again */
    zl_ready_t *r = &s->rdy[(s->rdy_head + s->rdy_count) & (s->rdy_cap - 1)];
    r->idx = c->idx;
    r->serial = c->serial;
    s->rdy_count++;
    c->in_ready = 1;
}

/* c back at the head of the ready list (it was just taken from there) */
static void ready_push_front(zl_stream_t *s, zl_conn_t *c)
{
    if (s->rdy_count == s->rdy_cap &&
        ring_grow((void **)&s->rdy, &s->rdy_head, s->rdy_count, &s->rdy_cap,
                  sizeof *s->rdy) != 0)
        abort(); /* it had a place a moment ago; cannot happen */
    s->rdy_head = (s->rdy_head - 1) & (s->rdy_cap - 1);
    s->rdy[s->rdy_head].idx = c->idx;
    s->rdy[s->rdy_head].serial = c->serial;
    s->rdy_count++;
    c->in_ready = 1;
}

/*
 * Whether recv has something to deliver without waiting: a connection
 * event, the holder of the scratch, or a connection at the head of the
 * ready list (BATCH: any live one; LENGTH, RAW: one that has something,
 * read here, so connections with only part of a packet are dropped from
 * the list and those whose input ended queue their 0x00).
 */
static int prime(zl_stream_t *s)
{
    for (;;) {
        if (s->evq_count)
            return 1;
        if (s->hold) {
            zl_conn_t *c = zl_conn_at(s, s->hold_idx, s->hold_serial);
            if (!c || c->state != ZC_ACTIVE) {
                s->hold = 0;
                continue;
            }
            if (fill(s, c) > 0)
                return 1;
            continue; /* closed (its 0x00 queued), or the hold spilled */
        }
        if (!s->rdy_count)
            return 0;
        zl_ready_t r = s->rdy[s->rdy_head];
        zl_conn_t *c = zl_conn_at(s, r.idx, r.serial);
        if (c && c->state == ZC_ACTIVE && framing(s) == ZLINK_STREAM_FRAMING_BATCH)
            return 1;
        s->rdy_head = (s->rdy_head + 1) & (s->rdy_cap - 1);
        s->rdy_count--;
        if (!c)
            continue;
        c->in_ready = 0;
        if (c->state != ZC_ACTIVE)
            continue;
        if (fill(s, c) > 0) {
            ready_push_front(s, c);
            return 1;
        }
    }
}

/* Picks the next thing to deliver: a queued connection event, or a
 * connection with input. Returns 0 with *id set and rx_state prepared,
 * or -1. */
static int next_id(zl_stream_t *s, int flags, uint32_t *id)
{
    uint64_t deadline = 0;
    for (;;) {
        if (prime(s)) {
            if (s->evq_count) {
                zl_event_t e = s->evq[s->evq_head];
                s->evq_head = (s->evq_head + 1) & (s->evq_cap - 1);
                s->evq_count--;
                s->rx_state = ZRX_EVENT;
                s->rx_byte = e.byte;
                s->rx_err = e.err;
                *id = e.id;
                return 0;
            }
            zl_conn_t *c;
            if (s->hold) {
                c = zl_conn_at(s, s->hold_idx, s->hold_serial);
            } else {
                zl_ready_t r = s->rdy[s->rdy_head];
                s->rdy_head = (s->rdy_head + 1) & (s->rdy_cap - 1);
                s->rdy_count--;
                c = zl_conn_at(s, r.idx, r.serial);
                c->in_ready = 0;
            }
            s->rx_state = ZRX_DATA;
            s->rx_idx = c->idx;
            s->rx_serial = c->serial;
            *id = c->id;
            return 0;
        }
        if (zl_stream_check_live(s))
            return -1;
        int wait;
        if ((flags & ZLINK_DONTWAIT) || s->opts.rcvtimeo == 0) {
            wait = 0;
        } else if (s->opts.rcvtimeo < 0) {
            wait = -1;
        } else {
            uint64_t now = zl_now_ms();
            if (!deadline)
                deadline = now + (uint64_t)s->opts.rcvtimeo;
            wait = now >= deadline ? 0 : (int)(deadline - now);
        }
        zl_pump(s, wait);
        if (s->evq_count || s->rdy_count)
            continue;
        if (zl_stream_check_live(s))
            return -1;
        if (wait == 0)
            return zl_fail(EAGAIN);
    }
}

/* A payload frame (the selected connection's) taken whole: *p and *n for
 * the bytes to copy. LENGTH: one body; RAW: what is there, at most cap
 * bytes (cap 0: nothing is taken and *n says how many wait). Returns the
 * payload's size. */
static size_t take(zl_stream_t *s, zl_conn_t *c, size_t cap, const char **p,
                   size_t *n)
{
    if (framing(s) == ZLINK_STREAM_FRAMING_RAW) {
        size_t have = first_seg(s, c, p);
        if (cap == 0 || have == 0) {
            *n = 0;
            return have;
        }
        *n = have < cap ? have : cap;
        return *n;
    }
    const char *b;
    uint32_t len = 0;
    int err;
    if (next_body(s, c, &b, &len, &err) != 1) {
        *n = 0;
        return 0;
    }
    *p = b;
    *n = len;
    return len;
}

/* the bytes take() pointed at are copied: they are consumed */
static void taken(zl_stream_t *s, zl_conn_t *c, size_t n)
{
    if (framing(s) == ZLINK_STREAM_FRAMING_LENGTH)
        n += 4;
    seg_consume(s, c, n);
    c->msgs_received++;
    after_take(s, c);
}

/* the id frame of the next message (recv and msg_recv alike) */
static int recv_id(zl_stream_t *s, int flags, unsigned char out[4])
{
    uint32_t id;
    if (next_id(s, flags, &id) != 0)
        return -1;
    zl_put_be32(out, id);
    return 0;
}

/* an event's payload frame: 1 byte, or nothing in RAW */
static size_t event_out(zl_stream_t *s, uint8_t *byte)
{
    s->rx_state = ZRX_NONE;
    s->last_event = s->rx_byte;
    s->last_errno = s->rx_byte == 0x00 ? s->rx_err : 0;
    *byte = s->rx_byte;
    return framing(s) == ZLINK_STREAM_FRAMING_RAW ? 0 : 1;
}

/* BATCH: what batch_take found, after the payload: the end it met closes
 * the connection (its 0x00 follows the bytes just delivered). */
static void batch_after(zl_stream_t *s, zl_conn_t *c, const batch_res_t *r)
{
    if (r->end) {
        if (r->end_err == ENOMEM || r->end_err == ENOBUFS)
            zl_conn_close(s, c, ZLINK_DISCONNECT_TRANSPORT_ERROR, r->end_err);
        else
            input_end(s, c, r->end_err, r->end_framing);
    }
}

int zl_stream_recv(zl_handle_t *h, void *buf, size_t len, int flags)
{
    zl_stream_t *s = h->u.stream;
    if (zl_stream_check_live(s))
        return -1;
    if (!buf && len)
        return zl_fail(EFAULT);
    if (s->rx_state == ZRX_DATA) {
        zl_conn_t *c = zl_conn_at(s, s->rx_idx, s->rx_serial);
        if (framing(s) == ZLINK_STREAM_FRAMING_BATCH && c) {
            batch_res_t r;
            batch_take(s, c, buf, len, &r);
            if (r.too_small) {
                s->last_event = -1;
                s->last_errno = 0;
                return r.n; /* the payload stays: retry with that size */
            }
            if (r.n > 0 || !r.end) {
                s->rx_state = ZRX_NONE;
                s->last_event = -1;
                s->last_errno = 0;
                if (r.n > 0)
                    c->msgs_received++;
                batch_after(s, c, &r);
                return r.n;
            }
            /* nothing whole and the input ended: this payload is its 0x00 */
            batch_after(s, c, &r);
        } else if (c) {
            const char *p = NULL;
            size_t n;
            size_t size = take(s, c, len, &p, &n);
            s->rx_state = ZRX_NONE;
            s->last_event = -1;
            s->last_errno = 0;
            if (n) {
                if (len)
                    memcpy(buf, p, len < n ? len : n);
                taken(s, c, n);
            } else if (size) {
                after_take(s, c); /* RAW, no room: the bytes stay */
            }
            return (int)size;
        }
    }
    if (s->rx_state == ZRX_EVENT) {
        uint8_t b;
        size_t n = event_out(s, &b);
        if (n && len)
            *(uint8_t *)buf = b;
        return (int)n;
    }
    if (s->rx_state == ZRX_DATA) {
        s->rx_state = ZRX_NONE; /* cannot happen: a closed selection is an event */
        return 0;
    }
    unsigned char tmp[4];
    if (recv_id(s, flags, tmp) != 0)
        return -1;
    if (len)
        memcpy(buf, tmp, len < 4 ? len : 4);
    return 4;
}

static int msg_fill(zmq_msg_t *msg, const void *data, size_t n)
{
    zmq_msg_close(msg);
    if (zmq_msg_init_size(msg, n) != 0)
        return zl_zfail();
    if (n)
        memcpy(zmq_msg_data(msg), data, n);
    return (int)n;
}

int zl_stream_msg_recv(zl_handle_t *h, zmq_msg_t *msg, int flags)
{
    zl_stream_t *s = h->u.stream;
    if (zl_stream_check_live(s))
        return -1;
    if (s->rx_state == ZRX_DATA) {
        zl_conn_t *c = zl_conn_at(s, s->rx_idx, s->rx_serial);
        if (framing(s) == ZLINK_STREAM_FRAMING_BATCH && c) {
            /* into the scratch, or a message the size of a first packet
             * that does not fit it */
            char *sc = scratch(s);
            if (!sc)
                return zl_fail(ENOMEM);
            batch_res_t r;
            batch_take(s, c, sc, ZL_SCRATCH_SIZE, &r);
            if (r.too_small) {
                zmq_msg_close(msg);
                if (zmq_msg_init_size(msg, (size_t)r.n) != 0)
                    return zl_zfail();
                batch_take(s, c, zmq_msg_data(msg), (size_t)r.n, &r);
                /* the packet is whole in rb: it goes in */
                s->rx_state = ZRX_NONE;
                s->last_event = -1;
                s->last_errno = 0;
                c->msgs_received++;
                batch_after(s, c, &r);
                return r.n;
            }
            if (r.n > 0 || !r.end) {
                s->rx_state = ZRX_NONE;
                s->last_event = -1;
                s->last_errno = 0;
                int rc = msg_fill(msg, sc, (size_t)r.n);
                if (r.n > 0)
                    c->msgs_received++;
                batch_after(s, c, &r);
                return rc;
            }
            batch_after(s, c, &r);
        } else if (c) {
            const char *p = NULL;
            size_t n;
            take(s, c, SIZE_MAX, &p, &n);
            s->rx_state = ZRX_NONE;
            s->last_event = -1;
            s->last_errno = 0;
            int rc = msg_fill(msg, p, n);
            if (rc >= 0 && n)
                taken(s, c, n);
            return rc;
        }
    }
    if (s->rx_state == ZRX_EVENT) {
        uint8_t b;
        size_t n = event_out(s, &b);
        return msg_fill(msg, &b, n);
    }
    if (s->rx_state == ZRX_DATA) {
        s->rx_state = ZRX_NONE;
        return msg_fill(msg, NULL, 0);
    }
    unsigned char tmp[4];
    if (recv_id(s, flags, tmp) != 0)
        return -1;
    int rc = msg_fill(msg, tmp, 4);
    if (rc >= 0)
        zl_msg_mark_more(msg);
    return rc;
}
