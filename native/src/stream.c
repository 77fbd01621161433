/*
 * stream.c - STREAM sockets: lifecycle, options, bind/connect/unbind/
 * disconnect, and the two-frame send/recv protocol ([routing id][payload]).
 *
 * Why our own engine: libzmq's STREAM moves every message between the
 * application thread and an I/O thread, which costs about 5x on raw TCP.
 * Here every call does its I/O itself: recv reads from the kernel straight
 * into the caller's buffer, send writes straight to the kernel when nothing
 * is queued. See stream_io.c for the pump and stream_conn.c for the
 * per-connection machinery.
 */
#include "stream.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

zl_stream_t *zl_stream_new(zl_ctx_t *ctx, zl_handle_t *h)
{
    zl_stream_t *s = calloc(1, sizeof *s);
    if (!s) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    s->handle = h;
    s->ctx = ctx;
    if (zl_loop_init(&s->loop, ctx->shutdown_fd) != 0) {
        int e = errno;
        free(s);
        zl_set_errno(e);
        return NULL;
    }
    zl_stream_opts_init(&s->opts);
    return s;
}

static int has_input(const zl_stream_t *s)
{
    return s->rx_state != ZRX_NONE || s->evq_count || s->rdy_count;
}

int zl_stream_poll_check(zl_stream_t *s, short events)
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

int zl_stream_fd(zl_stream_t *s)
{
    return s->loop.epfd;
}

/* ---- endpoints --------------------------------------------------------- */

int zl_stream_bind(zl_stream_t *s, const char *ep)
{
    if (zl_stream_check_live(s))
        return -1;
    zl_sockaddr_t a;
    socklen_t al;
    int rc = zl_parse_endpoint(ep, 1, s->opts.ipv6, &a, &al);
    if (rc)
        return zl_fail(-rc);
    int fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    0);
    int e = 0;
    if (fd < 0) {
        e = errno;
    } else {
        int one = 1, zero = 0;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (a.sa.sa_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        /* accepted sockets inherit buffer sizes from the listener; setting
         * them here too matters for the window scale of the handshake */
        if (s->opts.sndbuf > 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &s->opts.sndbuf, sizeof s->opts.sndbuf);
        if (s->opts.rcvbuf > 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &s->opts.rcvbuf, sizeof s->opts.rcvbuf);
        if (bind(fd, &a.sa, al) != 0 || listen(fd, s->opts.backlog) != 0)
            e = errno;
    }
    if (e) {
        if (fd >= 0)
            close(fd);
        zl_emit(s, ZLINK_EVENT_BIND_FAILED, (uint64_t)e, NULL, ep, NULL);
        return zl_fail(e);
    }
    zl_sockaddr_t real;
    socklen_t rl = sizeof real;
    getsockname(fd, &real.sa, &rl);

    uint32_t li;
    for (li = 0; li < s->nlst; li++)
        if (s->lst[li].fd < 0)
            break;
    if (li == s->nlst) {
        if (s->nlst == s->lst_cap) {
            uint32_t ncap = s->lst_cap ? s->lst_cap * 2 : 4;
            zl_listener_t *n = realloc(s->lst, (size_t)ncap * sizeof *n);
            if (!n) {
                close(fd);
                return zl_fail(ENOMEM);
            }
            s->lst = n;
            s->lst_cap = ncap;
        }
        memset(&s->lst[li], 0, sizeof s->lst[li]);
        s->nlst++;
    }
    zl_listener_t *l = &s->lst[li];
    l->serial++;
    l->paused = 0;
    l->timer_id = 0;
    l->given = strdup(ep);
    zl_format_addr(&real, l->real, sizeof l->real);
    if (!l->given || zl_loop_ctl(&s->loop, EPOLL_CTL_ADD, fd, EPOLLIN,
                                 ZL_TAG(ZT_LISTENER, l->serial, li)) != 0) {
        e = l->given ? errno : ENOMEM;
        free(l->given);
        l->given = NULL;
        l->fd = -1;
        close(fd);
        return zl_fail(e);
    }
    l->fd = fd;
    strcpy(s->opts.last_endpoint, l->real);
    zl_emit(s, ZLINK_EVENT_LISTENING, (uint64_t)fd, NULL, l->real, NULL);
    return 0;
}

static void listener_close(zl_stream_t *s, zl_listener_t *l)
{
    zl_emit(s, ZLINK_EVENT_CLOSED, (uint64_t)l->fd, NULL, l->real, NULL);
    if (!l->paused)
        zl_loop_del(&s->loop, l->fd);
    close(l->fd);
    l->fd = -1;
    l->timer_id = 0;
    free(l->given);
    l->given = NULL;
}

int zl_stream_unbind(zl_stream_t *s, const char *ep)
{
    if (zl_stream_check_live(s))
        return -1;
    if (!ep)
        return zl_fail(EINVAL);
    for (uint32_t i = 0; i < s->nlst; i++) {
        zl_listener_t *l = &s->lst[i];
        if (l->fd >= 0 && (strcmp(l->given, ep) == 0 || strcmp(l->real, ep) == 0)) {
            /* connections accepted through it stay open */
            listener_close(s, l);
            return 0;
        }
    }
    return zl_fail(ENOENT);
}

static zl_endpoint_t *find_ep(zl_stream_t *s, const char *str)
{
    for (zl_endpoint_t *ep = s->eps; ep; ep = ep->next)
        if (strcmp(ep->str, str) == 0)
            return ep;
    return NULL;
}

int zl_stream_connect(zl_stream_t *s, const char *str)
{
    if (zl_stream_check_live(s))
        return -1;
    if (!str)
        return zl_fail(EINVAL);
    int have_id = s->opts.connect_rid.set;
    uint32_t id = s->opts.connect_rid.id;
    s->opts.connect_rid.set = 0; /* applies to this connect only */

    /* thousands of connects to one endpoint resolve it once */
    zl_endpoint_t *ep = find_ep(s, str);
    int fresh = 0;
    if (!ep) {
        zl_sockaddr_t a;
        socklen_t al;
        int rc = zl_parse_endpoint(str, 0, s->opts.ipv6, &a, &al);
        if (rc)
            return zl_fail(-rc);
        ep = calloc(1, sizeof *ep);
        if (!ep || !(ep->str = strdup(str))) {
            free(ep);
            return zl_fail(ENOMEM);
        }
        ep->addr = a;
        ep->addrlen = al;
        fresh = 1;
    }
    zl_conn_t *c = zl_conn_alloc(s, have_id, id);
    if (!c) {
        int e = zlink_errno();
        if (fresh) {
            free(ep->str);
            free(ep);
        }
        return zl_fail(e);
    }
    if (fresh) {
        ep->next = s->eps;
        s->eps = ep;
    }
    c->state = ZC_CONNECTING;
    c->outbound = 1;
    c->ep = ep;
    c->ep_next = ep->conns;
    if (ep->conns)
        ep->conns->ep_prev = c;
    ep->conns = c;
    ep->nconns++;
    size_t n = strlen(str);
    if (n < sizeof s->opts.last_endpoint)
        memcpy(s->opts.last_endpoint, str, n + 1);
    if (zl_conn_start_connect(s, c, 1) != 0) {
        int e = zlink_errno();
        zl_conn_release(s, c);
        return zl_fail(e);
    }
    return 0;
}

int zl_stream_disconnect(zl_stream_t *s, const char *str)
{
    if (zl_stream_check_live(s))
        return -1;
    if (!str)
        return zl_fail(EINVAL);
    zl_endpoint_t *ep = find_ep(s, str);
    if (!ep)
        return zl_fail(ENOENT);
    /* the endpoint is freed together with its last connection */
    uint32_t n = ep->nconns;
    while (n--)
        zl_conn_close(s, ep->conns, ZLINK_DISCONNECT_LOCAL, 0);
    return 0;
}

/* ---- send -------------------------------------------------------------- */

static int send_direct(zl_stream_t *s, zl_conn_t *c, const void *buf,
                       size_t len)
{
    s->tx_pending = 0;
    ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
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
    if (c->q.lcount == 0)
        return send_direct(s, c, buf, len);
    if (s->opts.sndhwm > 0 && c->q.lcount >= (uint32_t)s->opts.sndhwm) {
        c = wait_for_room(s, flags);
        if (!c)
            return -1;
        if (c->q.lcount == 0)
            return send_direct(s, c, buf, len);
    }
    /* keep ordering behind what is already queued */
    if (zl_conn_queue(s, c, buf, len) != 0)
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
int zl_stream_send(zl_stream_t *s, const void *buf, size_t len, int flags)
{
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
    ssize_t n = recv(c->fd, dst + off, cap - off, 0);
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
    if (total == 1) {
        c->carry = (uint8_t)dst[0];
        c->has_carry = 1;
        total = 0;
    }
    if (total)
        c->msgs_received++;
    return (int)total;
}

static char *scratch(zl_stream_t *s)
{
    if (!s->scratch)
        s->scratch = malloc(ZL_SCRATCH_SIZE);
    return s->scratch;
}

int zl_stream_recv(zl_stream_t *s, void *buf, size_t len, int flags)
{
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

int zl_stream_msg_recv(zl_stream_t *s, zmq_msg_t *msg, int flags)
{
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

/* ---- close ------------------------------------------------------------- */

int zl_stream_close(zl_stream_t *s)
{
    int down = zl_ctx_is_shutdown(s->ctx);
    int reason = down ? ZLINK_DISCONNECT_CTX_TERM : ZLINK_DISCONNECT_LOCAL;

    for (uint32_t i = 0; i < s->nlst; i++)
        if (s->lst[i].fd >= 0)
            listener_close(s, &s->lst[i]);

    /* LINGER: connections with queued output are flushed before they are
     * closed; everything else goes now */
    int linger = s->opts.linger;
    int flush = s->nqueued && linger != 0 && !(linger < 0 && down);
    for (uint32_t i = 0; i < s->nslots; i++) {
        zl_conn_t *c = s->conns[i];
        if (c->state == ZC_FREE)
            continue;
        if (flush && (c->state == ZC_ACTIVE || c->state == ZC_CLOSING) &&
            c->q.lcount) {
            if (c->state == ZC_ACTIVE) {
                c->state = ZC_CLOSING;
                zl_loop_ctl(&s->loop, EPOLL_CTL_MOD, c->fd, EPOLLOUT,
                            ZL_TAG(ZT_CONN, c->serial, c->idx));
                c->want_out = 1;
            }
            continue;
        }
        zl_conn_close(s, c, reason, 0);
    }
    if (flush) {
        /* a finite linger is honoured even after a context shutdown, so the
         * (permanently readable) shutdown fd must not spin the wait */
        if (linger > 0)
            zl_loop_del(&s->loop, s->ctx->shutdown_fd);
        uint64_t deadline = linger > 0 ? zl_now_ms() + (uint64_t)linger : 0;
        while (s->nqueued) {
            int wait = -1;
            if (linger > 0) {
                uint64_t now = zl_now_ms();
                if (now >= deadline)
                    break;
                wait = (int)(deadline - now);
            } else if (zl_ctx_is_shutdown(s->ctx)) {
                break;
            }
            zl_pump(s, wait);
        }
        reason = zl_ctx_is_shutdown(s->ctx) ? ZLINK_DISCONNECT_CTX_TERM
                                            : ZLINK_DISCONNECT_LOCAL;
        for (uint32_t i = 0; i < s->nslots; i++)
            if (s->conns[i]->state != ZC_FREE)
                zl_conn_close(s, s->conns[i], reason, 0);
    }

    zl_stream_monitors_stop(s);

    zl_loop_close(&s->loop);
    for (uint32_t i = 0; i < s->nslots; i++) {
        free(s->conns[i]->q.buf);
        free(s->conns[i]->q.lens);
        free(s->conns[i]);
    }
    while (s->eps) { /* normally gone with their connections */
        zl_endpoint_t *ep = s->eps;
        s->eps = ep->next;
        free(ep->str);
        free(ep);
    }
    free(s->conns);
    free(s->free_idx);
    free(s->ht);
    free(s->peers);
    free(s->evq);
    free(s->rdy);
    free(s->lst);
    free(s->scratch);
    free(s);
    return 0;
}
