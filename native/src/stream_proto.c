/*
 * stream_proto.c - the two-frame protocol of a STREAM socket's send and
 * recv ([routing id][payload]; zlink_msg_send/recv copy between the message
 * and the same calls), the queues recv delivers from (0x01/0x00
 * notifications and the ready list of readable connections), and the
 * readiness zlink_poll and ZLINK_EVENTS report.
 *
 * Every call does its I/O itself: recv reads from the kernel straight into
 * the caller's buffer, send writes straight to the kernel when nothing is
 * queued.
 */
#include "stream.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* ---- readiness --------------------------------------------------------- */

static int has_input(const zl_stream_t *s)
{
    return s->rx_state != ZRX_NONE || s->evq_count || s->rdy_count;
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

/* ---- send -------------------------------------------------------------- */

static int send_direct(zl_stream_t *s, zl_conn_t *c, const void *buf,
                       size_t len)
{
    s->tx_pending = 0;
    ssize_t n = zl_conn_send(c, buf, len);
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
            return (int)len;
        }
    }
    if ((size_t)n < len &&
        zl_conn_queue(s, c, (const char *)buf + n, len - (size_t)n) != 0) {
        zl_conn_close(s, c, ZLINK_DISCONNECT_TRANSPORT_ERROR, ENOMEM);
        return (int)len;
    }
    c->msgs_sent++;
    return (int)len;
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

/* The payload frame: sends, queues or refuses it. The caller has cleared
 * the selection already, so whatever happens here the next frame is an id
 * frame (see zl_stream_send). */
static int send_payload(zl_stream_t *s, const void *buf, size_t len,
                        int flags)
{
    zl_conn_t *c = zl_conn_at(s, s->tx_idx, s->tx_serial);
    if (!c || c->state != ZC_ACTIVE)
        return zl_fail(EHOSTUNREACH);
    if (len == 0) {
        zl_conn_request_close(s, c);
        return 0;
    }
    if (len > INT_MAX || !buf)
        return zl_fail(EMSGSIZE);
    if (c->q.lcount && s->opts.sndhwm > 0 &&
        c->q.lcount >= (uint32_t)s->opts.sndhwm) {
        c = wait_for_room(s, flags);
        if (!c)
            return -1;
    }
    const void *out = buf;
    size_t olen = len;
    if (c->ws) {
        /* one binary frame per payload (encoded after the wait above,
         * whose pump may encode pongs in the same buffer) */
        out = zl_ws_frame(s, c, 0x2, buf, len, &olen);
        if (!out)
            return zl_fail(ENOMEM);
    }
    if (c->q.lcount == 0) {
        send_direct(s, c, out, olen);
        return (int)len;
    }
    /* keep ordering behind what is already queued */
    if (zl_conn_queue(s, c, out, olen) != 0)
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

void zl_evq_push(zl_stream_t *s, uint32_t id, uint8_t byte)
{
    if (s->evq_count == s->evq_cap &&
        ring_grow((void **)&s->evq, &s->evq_head, s->evq_count, &s->evq_cap,
                  sizeof *s->evq) != 0)
        abort(); /* losing a connection event would break the contract */
    zl_event_t *e = &s->evq[(s->evq_head + s->evq_count) & (s->evq_cap - 1)];
    e->id = id;
    e->byte = byte;
    s->evq_count++;
    /* keeps the epoll fd (ZLINK_FD) readable while events wait */
    zl_loop_wake(&s->loop);
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

/* Picks the next thing to deliver: a queued 0x01/0x00, or a readable
 * connection. Returns 0 with *id set and rx_state prepared, or -1. */
static int next_id(zl_stream_t *s, int flags, uint32_t *id)
{
    uint64_t deadline = 0;
    for (;;) {
        if (s->evq_count) {
            zl_event_t e = s->evq[s->evq_head];
            s->evq_head = (s->evq_head + 1) & (s->evq_cap - 1);
            s->evq_count--;
            s->rx_state = ZRX_EVENT;
            s->rx_byte = e.byte;
            *id = e.id;
            return 0;
        }
        while (s->rdy_count) {
            zl_ready_t r = s->rdy[s->rdy_head];
            s->rdy_head = (s->rdy_head + 1) & (s->rdy_cap - 1);
            s->rdy_count--;
            zl_conn_t *c = zl_conn_at(s, r.idx, r.serial);
            if (!c)
                continue;
            c->in_ready = 0;
            if (c->state != ZC_ACTIVE)
                continue;
            s->rx_state = ZRX_DATA;
            s->rx_idx = r.idx;
            s->rx_serial = r.serial;
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

/* Whether exactly one byte of c's stream waits behind a read that filled
 * the caller's buffer, to be read alone next: in the kernel (tcp://), or
 * decrypted inside OpenSSL (tls://; whatever follows it, even the end of the
 * session, the next read would return that byte alone). ws:// and wss://
 * know it from the frame being received, full buffer or not: its last
 * payload byte still to come. */
static int one_byte_left(zl_conn_t *c, size_t total, size_t cap)
{
    if (c->ws)
        return zl_ws_one_left(c);
    if (total != cap)
        return 0;
    if (c->ssl)
        return zl_tls_decrypted(c) == 1;
    int kernel = 0;
    return ioctl(c->fd, FIONREAD, &kernel) == 0 && kernel == 1;
}

/*
 * Reads a payload from c into dst (cap >= 2). Returns the byte count, or
 * -2 when the connection turned out closed (it is closed now and the caller
 * delivers 0x00 in place of the payload).
 *
 * A payload of exactly one byte would be indistinguishable from a 0x00 /
 * 0x01 notification, so a lone byte is held back and delivered in front of
 * the next read from that connection (an empty payload is returned
 * meanwhile).
 */
static int conn_read(zl_stream_t *s, zl_conn_t *c, char *dst, size_t cap)
{
    size_t off = 0;
    if (c->has_carry) {
        dst[0] = (char)c->carry;
        off = 1;
        c->has_carry = 0;
    }
    if (cap > INT_MAX)
        cap = INT_MAX;
    ssize_t n = zl_conn_recv(c, dst + off, cap - off);
    size_t total;
    if (n > 0) {
        total = off + (size_t)n;
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
                          errno != EINTR)) {
        int e = n == 0 ? 0 : errno;
        c->zero_delivered = 1; /* this read delivers it */
        zl_conn_close(s, c,
                      n == 0 ? ZLINK_DISCONNECT_REMOTE
                             : (e == ECONNRESET ? ZLINK_DISCONNECT_REMOTE
                                                : ZLINK_DISCONNECT_TRANSPORT_ERROR),
                      e);
        return -2;
    } else {
        total = off; /* spurious readiness */
    }
    if (total > 2 && one_byte_left(c, total, cap)) {
        /* exactly one byte is left behind this read: the next read would
         * find it alone and have to keep it, and if it ends the peer's
         * stream nothing would ever bring it out. Keep this read's last
         * byte instead, so the next read has two. */
        c->carry = (uint8_t)dst[total - 1];
        c->has_carry = 1;
        total--;
    } else if (total == 1) {
        c->carry = (uint8_t)dst[0];
        c->has_carry = 1;
        total = 0;
    }
    if (total)
        c->msgs_received++;
    /* TLS, ws: what OpenSSL decrypted but the buffer could not take, and
     * the bytes that came with a ws upgrade's head, are invisible to epoll,
     * so the connection goes back on the ready list itself */
    if ((c->ssl || c->ws) && !c->in_ready && zl_conn_pending(c))
        zl_ready_push(s, c);
    return (int)total;
}

static char *scratch(zl_stream_t *s)
{
    if (!s->scratch)
        s->scratch = malloc(ZL_SCRATCH_SIZE);
    return s->scratch;
}

int zl_stream_recv(zl_handle_t *h, void *buf, size_t len, int flags)
{
    zl_stream_t *s = h->u.stream;
    if (zl_stream_check_live(s))
        return -1;
    if (!buf && len)
        return zl_fail(EFAULT);
    if (s->rx_state == ZRX_EVENT) {
        s->rx_state = ZRX_NONE;
        if (len >= 1)
            *(uint8_t *)buf = s->rx_byte;
        return 1;
    }
    if (s->rx_state == ZRX_DATA) {
        s->rx_state = ZRX_NONE;
        zl_conn_t *c = zl_conn_at(s, s->rx_idx, s->rx_serial);
        if (!c || c->state != ZC_ACTIVE)
            return 0; /* closed since the id frame; its 0x00 is queued */
        if (len >= 2) {
            /* zero copy: the kernel writes into the caller's buffer, and
             * what does not fit stays there for the next message */
            int r = conn_read(s, c, buf, len);
            if (r == -2) {
                *(uint8_t *)buf = 0x00;
                return 1;
            }
            return r;
        }
        /* a 0/1-byte buffer: go through scratch, truncating like libzmq */
        char *sc = scratch(s);
        if (!sc)
            return zl_fail(ENOMEM);
        int r = conn_read(s, c, sc, ZL_SCRATCH_SIZE);
        if (r == -2) {
            if (len >= 1)
                *(uint8_t *)buf = 0x00;
            return 1;
        }
        if (len && r)
            memcpy(buf, sc, len < (size_t)r ? len : (size_t)r);
        return r;
    }
    uint32_t id;
    if (next_id(s, flags, &id) != 0)
        return -1;
    unsigned char tmp[4];
    zl_put_be32(tmp, id);
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
    if (s->rx_state == ZRX_EVENT) {
        s->rx_state = ZRX_NONE;
        return msg_fill(msg, &s->rx_byte, 1);
    }
    if (s->rx_state == ZRX_DATA) {
        s->rx_state = ZRX_NONE;
        zl_conn_t *c = zl_conn_at(s, s->rx_idx, s->rx_serial);
        if (!c || c->state != ZC_ACTIVE)
            return msg_fill(msg, NULL, 0);
        char *sc = scratch(s);
        if (!sc)
            return zl_fail(ENOMEM);
        int r = conn_read(s, c, sc, ZL_SCRATCH_SIZE);
        if (r == -2) {
            uint8_t z = 0x00;
            return msg_fill(msg, &z, 1);
        }
        return msg_fill(msg, sc, (size_t)r);
    }
    uint32_t id;
    if (next_id(s, flags, &id) != 0)
        return -1;
    unsigned char tmp[4];
    zl_put_be32(tmp, id);
    int rc = msg_fill(msg, tmp, 4);
    if (rc >= 0)
        zl_msg_mark_more(msg);
    return rc;
}
