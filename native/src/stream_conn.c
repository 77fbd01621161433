/*
 * stream_conn.c - connections of a STREAM socket: the slot table and the
 * routing-id hash (O(1) id -> connection), per-connection send queues,
 * accepting, non-blocking connecting with retries, and closing (which is
 * where the 0x00 notification and the monitor events are produced, so that
 * each connection yields its 0x00 exactly once); the handlers the pump
 * calls for connection and listener events and timers; and peer
 * introspection over the established connections.
 */
#include "stream.h"

#include <errno.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Queue buffers above this are given back when the queue drains, so a
 * burst on one connection does not pin memory for the socket's lifetime. */
#define ZL_QBUF_KEEP (256 * 1024)

/* ---- routing id hash (linear probing, backward-shift deletion) -------- */

static int ht_resize(zl_stream_t *s, uint32_t ncap)
{
    zl_htent_t *n = calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    uint32_t bits = 0;
    while ((1u << bits) < ncap)
        bits++;
    zl_htent_t *o = s->ht;
    uint32_t ocap = s->ht_cap;
    s->ht = n;
    s->ht_cap = ncap;
    s->ht_shift = 32 - bits;
    for (uint32_t i = 0; i < ocap; i++) {
        if (!o[i].idx1)
            continue;
        uint32_t j = zl_ht_hash(s, o[i].id);
        while (n[j].idx1)
            j = (j + 1) & (ncap - 1);
        n[j] = o[i];
    }
    free(o);
    return 0;
}

int zl_ht_insert(zl_stream_t *s, uint32_t id, uint32_t idx)
{
    if ((s->ht_count + 1) * 2 > s->ht_cap &&
        ht_resize(s, s->ht_cap ? s->ht_cap * 2 : 1024) != 0)
        return -1;
    uint32_t mask = s->ht_cap - 1;
    uint32_t i = zl_ht_hash(s, id);
    while (s->ht[i].idx1)
        i = (i + 1) & mask;
    s->ht[i].id = id;
    s->ht[i].idx1 = idx + 1;
    s->ht_count++;
    return 0;
}

void zl_ht_remove(zl_stream_t *s, uint32_t id)
{
    if (!s->ht_count)
        return;
    uint32_t mask = s->ht_cap - 1;
    uint32_t i = zl_ht_hash(s, id);
    while (s->ht[i].idx1 && s->ht[i].id != id)
        i = (i + 1) & mask;
    if (!s->ht[i].idx1)
        return;
    /* Pull later members of the probe run back so lookups never stop at
     * the hole we leave. */
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!s->ht[j].idx1)
            break;
        uint32_t k = zl_ht_hash(s, s->ht[j].id);
        int stays = (i <= j) ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            s->ht[i] = s->ht[j];
            i = j;
        }
    }
    s->ht[i].idx1 = 0;
    s->ht_count--;
}

/* ---- slots --------------------------------------------------------------- */

static int slots_grow(zl_stream_t *s)
{
    uint32_t ncap = s->slots_cap ? s->slots_cap * 2 : 256;
    if (ncap > ZL_MAX_SLOTS)
        ncap = ZL_MAX_SLOTS;
    if (ncap <= s->slots_cap)
        return -1;
    zl_conn_t **c = realloc(s->conns, (size_t)ncap * sizeof *c);
    if (!c)
        return -1;
    s->conns = c;
    uint32_t *f = realloc(s->free_idx, (size_t)ncap * sizeof *f);
    if (!f)
        return -1;
    s->free_idx = f;
    s->slots_cap = ncap;
    return 0;
}

/* Library-assigned ids are (generation << 20 | slot), so an id that just
 * went away is not handed out again at once even if its slot is. */
static uint32_t lib_id(const zl_conn_t *c)
{
    uint32_t gen = c->serial & 0xfffu;
    if (!gen)
        gen = 1;
    return (gen << ZL_ID_INDEX_BITS) | c->idx;
}

zl_conn_t *zl_conn_alloc(zl_stream_t *s, int have_id, uint32_t id)
{
    if (have_id && zl_conn_by_id(s, id)) {
        zl_set_errno(EINVAL);
        return NULL;
    }
    zl_conn_t *c;
    if (s->nfree) {
        c = s->conns[s->free_idx[--s->nfree]];
    } else {
        if (s->nslots == s->slots_cap && slots_grow(s) != 0) {
            zl_set_errno(ENOBUFS);
            return NULL;
        }
        c = calloc(1, sizeof *c);
        if (!c) {
            zl_set_errno(ENOMEM);
            return NULL;
        }
        c->idx = s->nslots;
        s->conns[s->nslots++] = c;
    }
    c->serial++;
    c->fd = -1;
    c->state = ZC_FREE;
    c->in_ready = c->want_out = 0;
    c->rb_off = c->rb_len = 0;
    c->announced = c->outbound = c->zero_delivered = 0;
    c->tls_dead = 0;
    c->tls_wpend = 0;
    c->peer_closing = 0;
    c->dropped = 0;
    c->shut = 0;
    c->progress_ms = 0;
    c->ssl = NULL;
    c->ws = NULL;
    c->peer_pos = -1;
    c->timer_id = 0;
    c->listener1 = 0;
    c->ep = NULL;
    c->ep_prev = c->ep_next = NULL;
    c->connected_ms = c->msgs_sent = c->msgs_received = 0;
    c->q.head = c->q.tail = 0;
    c->q.partial = 0;
    c->q.lhead = c->q.lcount = 0;
    if (!have_id) {
        for (;;) {
            id = lib_id(c);
            if (!zl_conn_by_id(s, id))
                break;
            c->serial++; /* taken by a CONNECT_ROUTING_ID: next generation */
        }
    }
    c->id = id;
    if (zl_ht_insert(s, id, c->idx) != 0) {
        s->free_idx[s->nfree++] = c->idx;
        zl_set_errno(ENOMEM);
        return NULL;
    }
    return c;
}

void zl_endpoint_free(zl_endpoint_t *ep)
{
    zl_tls_ctx_free(ep->tls);
    free(ep->tls_host);
    free(ep->ws_path);
    free(ep->ws_host);
    free(ep->str);
    free(ep);
}

static void ep_unlink(zl_stream_t *s, zl_conn_t *c)
{
    zl_endpoint_t *ep = c->ep;
    if (!ep)
        return;
    if (c->ep_prev)
        c->ep_prev->ep_next = c->ep_next;
    else
        ep->conns = c->ep_next;
    if (c->ep_next)
        c->ep_next->ep_prev = c->ep_prev;
    c->ep = NULL;
    c->ep_prev = c->ep_next = NULL;
    if (--ep->nconns == 0) {
        zl_endpoint_t **pp = &s->eps;
        while (*pp && *pp != ep)
            pp = &(*pp)->next;
        if (*pp)
            *pp = ep->next;
        zl_endpoint_free(ep);
    }
}

static void q_reset(zl_sendq_t *q)
{
    q->partial = 0;
    q->head = q->tail = 0;
    q->lhead = q->lcount = 0;
    if (q->cap > ZL_QBUF_KEEP) {
        free(q->buf);
        q->buf = NULL;
        q->cap = 0;
    }
}

void zl_conn_release(zl_stream_t *s, zl_conn_t *c)
{
    if (c->ssl)
        zl_tls_end(c, 0);
    if (c->ws)
        zl_ws_end(c);
    zl_ht_remove(s, c->id);
    ep_unlink(s, c);
    q_reset(&c->q);
    zl_rx_reset(s, c);
    c->state = ZC_FREE;
    c->in_ready = 0;
    c->want_out = 0;
    c->timer_id = 0;
    c->serial++;
    s->free_idx[s->nfree++] = c->idx;
}

/* ---- peers (dense list of established connections) -------------------- */

static void peer_add(zl_stream_t *s, zl_conn_t *c)
{
    if (s->npeers == s->peers_cap) {
        uint32_t ncap = s->peers_cap ? s->peers_cap * 2 : 256;
        uint32_t *n = realloc(s->peers, (size_t)ncap * sizeof *n);
        if (!n)
            return; /* introspection only; the connection still works */
        s->peers = n;
        s->peers_cap = ncap;
    }
    c->peer_pos = (int)s->npeers;
    s->peers[s->npeers++] = c->idx;
}

static void peer_remove(zl_stream_t *s, zl_conn_t *c)
{
    if (c->peer_pos < 0)
        return;
    uint32_t last = s->peers[--s->npeers];
    s->peers[c->peer_pos] = last;
    s->conns[last]->peer_pos = c->peer_pos;
    c->peer_pos = -1;
}

/* ---- descriptors ----------------------------------------------------------- */

void zl_setup_fd(zl_stream_t *s, int fd, int family)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (s->opts.sndbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &s->opts.sndbuf, sizeof s->opts.sndbuf);
    if (s->opts.rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &s->opts.rcvbuf, sizeof s->opts.rcvbuf);
    if (s->opts.ka != -1) {
        int on = s->opts.ka ? 1 : 0;
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
        if (on) {
            if (s->opts.ka_cnt > 0)
                setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &s->opts.ka_cnt,
                           sizeof s->opts.ka_cnt);
            if (s->opts.ka_idle > 0)
                setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &s->opts.ka_idle,
                           sizeof s->opts.ka_idle);
            if (s->opts.ka_intvl > 0)
                setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &s->opts.ka_intvl,
                           sizeof s->opts.ka_intvl);
        }
    }
    if (s->opts.tos > 0) {
        if (family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &s->opts.tos, sizeof s->opts.tos);
        else
            setsockopt(fd, IPPROTO_IP, IP_TOS, &s->opts.tos, sizeof s->opts.tos);
    }
    if (s->opts.tcp_maxrt > 0)
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &s->opts.tcp_maxrt,
                   sizeof s->opts.tcp_maxrt);
}

static void close_fd(zl_stream_t *s, int fd)
{
    /* explicit removal: a descriptor inherited by a forked child would
     * otherwise keep reporting events for a connection we dropped */
    zl_loop_del(&s->loop, fd);
    close(fd);
}

/* ---- send queue -------------------------------------------------------- */

static void q_consume(zl_sendq_t *q, size_t n)
{
    q->head += n;
    while (n) {
        uint32_t *f = &q->lens[q->lhead];
        if (n >= *f) {
            n -= *f;
            q->lhead = (q->lhead + 1) & (q->lcap - 1);
            q->lcount--;
            q->partial = 0;
        } else {
            *f -= (uint32_t)n;
            n = 0;
            q->partial = 1;
        }
    }
    if (q->head == q->tail)
        q->head = q->tail = 0;
}

int zl_conn_queue2(zl_stream_t *s, zl_conn_t *c, const void *a, size_t alen,
                   const void *b, size_t blen)
{
    zl_sendq_t *q = &c->q;
    size_t len = alen + blen;
    if (q->tail + len > q->cap) {
        size_t used = q->tail - q->head;
        if (q->head && used + len <= q->cap) {
            memmove(q->buf, q->buf + q->head, used);
        } else {
            size_t ncap = q->cap ? q->cap * 2 : 16384;
            while (ncap < used + len)
                ncap *= 2;
            char *nb = malloc(ncap);
            if (!nb)
                return zl_fail(ENOMEM);
            if (used)
                memcpy(nb, q->buf + q->head, used);
            free(q->buf);
            q->buf = nb;
            q->cap = ncap;
        }
        q->head = 0;
        q->tail = used;
    }
    if (q->lcount == q->lcap) {
        uint32_t ncap = q->lcap ? q->lcap * 2 : 64;
        uint32_t *nl = malloc((size_t)ncap * sizeof *nl);
        if (!nl)
            return zl_fail(ENOMEM);
        for (uint32_t i = 0; i < q->lcount; i++)
            nl[i] = q->lens[(q->lhead + i) & (q->lcap - 1)];
        free(q->lens);
        q->lens = nl;
        q->lhead = 0;
        q->lcap = ncap;
    }
    if (alen)
        memcpy(q->buf + q->tail, a, alen);
    if (blen)
        memcpy(q->buf + q->tail + alen, b, blen);
    q->tail += len;
    q->lens[(q->lhead + q->lcount) & (q->lcap - 1)] = (uint32_t)len;
    if (q->lcount++ == 0) {
        s->nqueued++;
        if (!c->want_out) {
            /* EPOLLOUT only while there is something to write, otherwise
             * level-triggered epoll would report it on every wait */
            zl_loop_ctl(&s->loop, EPOLL_CTL_MOD, c->fd, EPOLLIN | EPOLLOUT,
                        ZL_TAG(ZT_CONN, c->serial, c->idx));
            c->want_out = 1;
        }
    }
    return 0;
}

int zl_conn_queue(zl_stream_t *s, zl_conn_t *c, const void *data, size_t len)
{
    return zl_conn_queue2(s, c, NULL, 0, data, len);
}

/* How many messages at the queue's front have started: a partly sent head
 * and the messages a TLS record waiting to be retried took bytes of
 * (OpenSSL wants the same bytes again). *pos: where the first one that has
 * not starts. Only the first limit messages are looked at. */
static uint32_t q_started(const zl_conn_t *c, uint32_t limit, size_t *pos)
{
    const zl_sendq_t *q = &c->q;
    uint32_t at = 0, mask = q->lcap - 1;
    size_t p = q->head;
    while (at < limit && ((at == 0 && q->partial) || p - q->head < c->tls_wpend)) {
        p += q->lens[(q->lhead + at) & mask];
        at++;
    }
    *pos = p;
    return at;
}

int zl_conn_queue_front(zl_stream_t *s, zl_conn_t *c, const void *data,
                        size_t len, uint8_t lead)
{
    unsigned char tmp[256];
    if (len > sizeof tmp)
        return zl_fail(EINVAL); /* control frames only */
    memcpy(tmp, data, len); /* data may point into a buffer that moves */
    if (zl_conn_queue(s, c, tmp, len) != 0)
        return -1;
    zl_sendq_t *q = &c->q;
    uint32_t mask = q->lcap - 1;
    /* the new message goes to the front, behind the ones that started */
    size_t pos;
    uint32_t at = q_started(c, q->lcount - 1, &pos);
    /* an unstarted message there that begins with lead (the pong to an
     * earlier ping) is replaced: at most one such message is queued, so a
     * peer that sends pings and never reads cannot make the queue grow
     * (RFC 6455 5.5.3: a pong for the latest ping only) */
    if (at < q->lcount - 1 && (uint8_t)q->buf[pos] == lead) {
        size_t old = q->lens[(q->lhead + at) & mask];
        memmove(q->buf + pos, q->buf + pos + old, q->tail - pos - old);
        q->tail -= old;
        for (uint32_t i = at; i + 1 < q->lcount; i++)
            q->lens[(q->lhead + i) & mask] = q->lens[(q->lhead + i + 1) & mask];
        q->lcount--;
    }
    size_t after = q->tail - len - pos;
    memmove(q->buf + pos + len, q->buf + pos, after);
    memcpy(q->buf + pos, tmp, len);
    for (uint32_t i = q->lcount - 1; i > at; i--)
        q->lens[(q->lhead + i) & mask] = q->lens[(q->lhead + i - 1) & mask];
    q->lens[(q->lhead + at) & mask] = (uint32_t)len;
    return 0;
}

void zl_conn_set_out(zl_stream_t *s, zl_conn_t *c, int want_out)
{
    if (c->want_out == want_out)
        return;
    zl_loop_ctl(&s->loop, EPOLL_CTL_MOD, c->fd,
                want_out ? (EPOLLIN | EPOLLOUT) : EPOLLIN,
                ZL_TAG(ZT_CONN, c->serial, c->idx));
    c->want_out = (uint8_t)want_out;
}

static int error_reason(int e)
{
    return (e == ECONNRESET || e == EPIPE) ? ZLINK_DISCONNECT_REMOTE
                                           : ZLINK_DISCONNECT_TRANSPORT_ERROR;
}

/* Reads and discards what the peer sent that nobody will read, so that
 * closing the descriptor sends a FIN after our last bytes, not a reset
 * (which makes the peer lose what it has not read yet); bounded, never
 * blocks. 1 when the peer's side ended (EOF), 2 when the read failed (the
 * peer reset), 0 while it goes on. */
static int discard_input(zl_conn_t *c)
{
    char buf[4096];
    for (int i = 0; i < 256; i++) {
        ssize_t n = zl_raw_recv(c, buf, sizeof buf);
        if (n == 0)
            return 1;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return 2;
        if (n < 0)
            return 0;
    }
    return 0;
}

int zl_conn_unacked(const zl_conn_t *c)
{
    int n = 0;
    if (c->fd < 0 || ioctl(c->fd, SIOCOUTQ, &n) != 0)
        return 0;
    return n;
}

int zl_conn_unread(const zl_conn_t *c)
{
    int n = 0;
    if (c->fd < 0 || ioctl(c->fd, SIOCINQ, &n) != 0)
        return 0;
    return n;
}

/* The cause of a half-closed connection the peer reset: 0 when the peer's
 * TCP had acknowledged every byte of ours (only our FIN may be missing;
 * SIOCOUTQ keeps counting after the reset), else ECONNRESET: bytes may
 * have been lost. A peer that closes with our FIN unread resets, though it
 * has everything. */
static int shut_reset(const zl_conn_t *c)
{
    return zl_conn_unacked(c) > 1 ? ECONNRESET : 0;
}

/* A local close's queue went out (zl_conn_linger): TCP half-closes (wss:
 * close_notify first) and the peer's bytes are discarded until its end.
 * 0 when the connection closed already (the peer's end was there). */
static int half_close(zl_stream_t *s, zl_conn_t *c)
{
    c->shut = 1;
    zl_tls_end(c, 1);
    shutdown(c->fd, SHUT_WR);
    zl_loop_ctl(&s->loop, EPOLL_CTL_MOD, c->fd, EPOLLIN,
                ZL_TAG(ZT_CONN, c->serial, c->idx));
    c->want_out = 0;
    int r = discard_input(c);
    if (r) {
        zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL, r == 2 ? shut_reset(c) : 0);
        return 0;
    }
    if (s->opts.linger < 0 && !c->timer_id)
        c->timer_id = zl_loop_timer_add(
            &s->loop, zl_now_ms() + ZL_SHUT_POLL_MS, ZTM_CONN, c->idx);
    return 1;
}

/* A ZC_CLOSING connection's queue went out: it closes, LOCAL, or REMOTE
 * when it was the peer's close that started it. A dropped ws connection
 * (zl_conn_drop) whose close frame went half-closes instead: a FIN behind
 * the close frame, and what the peer still sends is read and discarded
 * until it closes its side (or the drop's timer ends it), so the peer
 * reads the close frame and a FIN, never a reset. */
static void closing_done(zl_stream_t *s, zl_conn_t *c)
{
    if (c->dropped == 2 || c->shut)
        return; /* half-closed already, waiting for the peer's end */
    if (c->dropped == 1) {
        c->dropped = 2;
        zl_tls_end(c, 1); /* wss: close_notify before the FIN */
        shutdown(c->fd, SHUT_WR);
        zl_loop_ctl(&s->loop, EPOLL_CTL_MOD, c->fd, EPOLLIN,
                    ZL_TAG(ZT_CONN, c->serial, c->idx));
        c->want_out = 0;
        if (discard_input(c))
            zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL, ENOBUFS);
        return;
    }
    if (!c->peer_closing && s->opts.linger != 0) {
        half_close(s, c); /* a local close (zl_conn_linger) */
        return;
    }
    zl_conn_close(s, c,
                  c->peer_closing ? ZLINK_DISCONNECT_REMOTE
                                  : ZLINK_DISCONNECT_LOCAL,
                  0);
}

/* Returns -1 if the connection went away (closed, its 0x00 queued). */
int zl_conn_flush(zl_stream_t *s, zl_conn_t *c)
{
    zl_sendq_t *q = &c->q;
    if (q->lcount == 0) {
        if (c->state == ZC_CLOSING) {
            closing_done(s, c);
            return -1;
        }
        return 0;
    }
    while (q->tail > q->head) {
        size_t want = q->tail - q->head;
        ssize_t n = zl_conn_send(c, q->buf + q->head, want);
        if (n > 0) {
            q_consume(q, (size_t)n);
            if (c->peer_closing)
                c->progress_ms = zl_now_ms();
            if ((size_t)n < want)
                break; /* kernel buffer full; wait for EPOLLOUT */
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        int e = n < 0 ? errno : EPIPE;
        zl_conn_close(s, c, error_reason(e), e);
        return -1;
    }
    if (q->tail == q->head && q->lcount == 0) {
        s->nqueued--;
        if (q->cap > ZL_QBUF_KEEP) {
            free(q->buf);
            q->buf = NULL;
            q->cap = 0;
        }
        if (c->state == ZC_CLOSING) {
            closing_done(s, c);
            return -1;
        }
        if (c->want_out) {
            zl_loop_ctl(&s->loop, EPOLL_CTL_MOD, c->fd, EPOLLIN,
                        ZL_TAG(ZT_CONN, c->serial, c->idx));
            c->want_out = 0;
        }
    }
    return 0;
}

/* ---- closing ---------------------------------------------------------- */

void zl_conn_close(zl_stream_t *s, zl_conn_t *c, int reason, int err)
{
    int established = c->state == ZC_ACTIVE || c->state == ZC_CLOSING;
    if (c->dropped) {
        /* ZLINK_STREAM_DROP: whatever ends it, the cause is the drop; a
         * close frame still queued did not reach the peer */
        if (c->q.lcount)
            zl_emit(s, ZLINK_EVENT_CLOSE_FAILED,
                    (uint64_t)(err && err != ENOBUFS ? err : ETIMEDOUT), c,
                    NULL, NULL);
        reason = ZLINK_DISCONNECT_LOCAL;
        err = ENOBUFS;
        if (c->fd >= 0)
            discard_input(c);
    }
    if (c->peer_closing && c->q.lcount) {
        /* ws: bytes accepted before the peer's close (or our close reply)
         * could not go out: never silently; CLOSE_FAILED and the 0x00
         * carry why */
        if (!err)
            err = ETIMEDOUT;
        zl_emit(s, ZLINK_EVENT_CLOSE_FAILED, (uint64_t)err, c, NULL, NULL);
    }
    else if (established && err == ETIMEDOUT && reason == ZLINK_DISCONNECT_LOCAL)
        /* a local close's LINGER ran out with bytes not out (zl_conn_linger) */
        zl_emit(s, ZLINK_EVENT_CLOSE_FAILED, (uint64_t)err, c, NULL, NULL);
    if (established)
        zl_emit(s, ZLINK_EVENT_DISCONNECTED, (uint64_t)reason, c, NULL, NULL);
    if (c->ws && established && reason == ZLINK_DISCONNECT_LOCAL)
        zl_ws_goodbye(s, c); /* a close frame if none went yet and it fits */
    if (c->ssl)
        zl_tls_end(c, established && ((c->peer_closing && !err) ||
                                      (reason != ZLINK_DISCONNECT_TRANSPORT_ERROR &&
                                       reason != ZLINK_DISCONNECT_REMOTE)));
    if (c->fd >= 0) {
        close_fd(s, c->fd);
        c->fd = -1;
    }
    if (c->q.lcount)
        s->nqueued--;
    peer_remove(s, c);
    if (c->announced && !c->zero_delivered) {
        /* a write that found the peer gone says EPIPE: it reset */
        zl_deliver_end(s, c, err == EPIPE ? ECONNRESET : err);
        c->zero_delivered = 1;
    }
    zl_conn_release(s, c);
}

/* c stops being a peer and waits for its queue to go out (EPOLLOUT) */
static void start_closing(zl_stream_t *s, zl_conn_t *c)
{
    c->state = ZC_CLOSING;
    peer_remove(s, c);
    zl_loop_ctl(&s->loop, EPOLL_CTL_MOD, c->fd, EPOLLOUT,
                ZL_TAG(ZT_CONN, c->serial, c->idx));
    c->want_out = 1;
}

int zl_conn_linger(zl_stream_t *s, zl_conn_t *c, int timer)
{
    /* ws: a close frame (1000) behind what is queued, flushed before the
     * TCP connection closes; with LINGER 0 it gets one try */
    if (c->ws && zl_ws_queue_close(s, c, 1000) == 0 && s->opts.linger == 0 &&
        zl_conn_flush(s, c) < 0)
        return 0;
    /* LINGER above 0 always half-closes: even with nothing left to send, a
     * peer still writing would get a reset from the closed socket, and a
     * peer whose write fails may drop the bytes it received from us and has
     * not read yet. LINGER -1 (zlink 1.3's default, whose close of an idle
     * connection is immediate) only when bytes are queued, not yet
     * acknowledged, or unread from the peer. */
    if (s->opts.linger == 0 ||
        (s->opts.linger < 0 && c->q.lcount == 0 && zl_conn_unacked(c) == 0 &&
         zl_conn_unread(c) == 0)) {
        zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL, 0);
        return 0;
    }
    /* flush what the application already handed us, then half-close */
    start_closing(s, c);
    if (timer && s->opts.linger > 0)
        c->timer_id = zl_loop_timer_add(
            &s->loop, zl_now_ms() + (uint64_t)s->opts.linger, ZTM_CONN, c->idx);
    if (c->q.lcount == 0)
        return half_close(s, c); /* nothing queued: straight to the end */
    return 1;
}

void zl_conn_request_close(zl_stream_t *s, zl_conn_t *c)
{
    zl_conn_linger(s, c, 1);
}

void zl_conn_drop(zl_stream_t *s, zl_conn_t *c, unsigned code)
{
    zl_sendq_t *q = &c->q;
    /* keep the messages that started: the stream is cut at a message (ws:
     * frame) boundary */
    size_t pos;
    uint32_t at = q_started(c, q->lcount, &pos);
    if (at < q->lcount) {
        q->tail = pos;
        q->lcount = at;
        if (at == 0) {
            s->nqueued--;
            q->head = q->tail = 0;
        }
    }
    c->dropped = 1;
    if (!c->ws || zl_ws_drop_close(s, c, code) != 0) {
        zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL, ENOBUFS);
        return;
    }
    start_closing(s, c);
    /* the whole close (the frame out, the peer's side ended) is bounded */
    c->timer_id = zl_loop_timer_add(
        &s->loop,
        zl_now_ms() + (uint64_t)(s->opts.linger > 0 ? s->opts.linger
                                                    : ZL_WS_DROP_MS),
        ZTM_CONN, c->idx);
    zl_conn_flush(s, c);
}

void zl_conn_peer_closed(zl_stream_t *s, zl_conn_t *c)
{
    zl_rx_reset(s, c); /* the input is over: a partial packet goes */
    if (zl_ws_queue_reply(s, c) != 0) {
        zl_conn_close(s, c, ZLINK_DISCONNECT_TRANSPORT_ERROR, ENOMEM);
        return;
    }
    c->peer_closing = 1;
    c->progress_ms = zl_now_ms();
    start_closing(s, c);
    if (zl_conn_flush(s, c) < 0)
        return; /* all went (or the peer is gone): closed */
    /* the rest goes as the peer reads, bounded like a drop: LINGER when
     * above 0, ZL_WS_DROP_MS at LINGER 0 (LINGER 0 is about zlink_close,
     * which still ends this at once), ZL_WS_STALL_MS without progress at
     * -1; the timer's end is ETIMEDOUT (zl_conn_on_timer) */
    uint64_t bound = s->opts.linger > 0    ? (uint64_t)s->opts.linger
                     : s->opts.linger == 0 ? ZL_WS_DROP_MS
                                           : ZL_WS_STALL_MS;
    c->timer_id = zl_loop_timer_add(&s->loop, c->progress_ms + bound,
                                    ZTM_CONN, c->idx);
}

/* ---- establishing ------------------------------------------------------ */

/* The connection is up for the application: 0x01 and CONNECTION_READY
 * (after the TCP event for plain TCP, after the handshake for TLS). */
static void established(zl_stream_t *s, zl_conn_t *c, int accepted,
                        int tcp_event)
{
    c->state = ZC_ACTIVE;
    c->announced = 1;
    c->connected_ms = zl_wall_ms();
    peer_add(s, c);
    zl_evq_push(s, c->id, 0x01, 0);
    if (s->mon_mask) {
        if (tcp_event)
            zl_emit(s, accepted ? ZLINK_EVENT_ACCEPTED : ZLINK_EVENT_CONNECTED,
                    (uint64_t)c->fd, c, NULL, NULL);
        zl_emit(s, ZLINK_EVENT_CONNECTION_READY, 0, c, NULL, NULL);
    }
}

static void attempt_failed(zl_stream_t *s, zl_conn_t *c, int err);
static void hs_step(zl_stream_t *s, zl_conn_t *c);

/* What a connection speaks on top of TCP: a TLS context and/or ws (path,
 * and the Host header of a client). */
typedef struct conn_kind {
    struct ssl_ctx_st *tls;
    const char *tls_host;
    int ws;
    const char *ws_path, *ws_host;
} conn_kind_t;

/* TCP is up on c: plain TCP is established now; TLS and/or ws report the
 * TCP event and start their handshakes, bounded together by HANDSHAKE_IVL. */
static void conn_up(zl_stream_t *s, zl_conn_t *c, int accepted,
                    const conn_kind_t *k)
{
    if (!k->tls && !k->ws) {
        established(s, c, accepted, 1);
        return;
    }
    zl_emit(s, accepted ? ZLINK_EVENT_ACCEPTED : ZLINK_EVENT_CONNECTED,
            (uint64_t)c->fd, c, NULL, NULL);
    c->state = ZC_HANDSHAKE;
    if ((k->tls && zl_tls_start(s, c, k->tls, accepted, k->tls_host) != 0) ||
        (k->ws && zl_ws_start(s, c, accepted, k->ws_path, k->ws_host) != 0)) {
        int e = errno;
        zl_emit(s, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, (uint64_t)e, c,
                NULL, NULL);
        if (c->ssl)
            zl_tls_end(c, 0);
        close_fd(s, c->fd);
        if (accepted) {
            c->fd = -1;
            zl_conn_release(s, c);
        } else {
            attempt_failed(s, c, e);
        }
        return;
    }
    if (s->opts.handshake_ivl > 0)
        c->timer_id = zl_loop_timer_add(
            &s->loop, zl_now_ms() + (uint64_t)s->opts.handshake_ivl, ZTM_CONN,
            c->idx);
    if (!accepted)
        hs_step(s, c); /* the client speaks first */
}

static void conn_up_ep(zl_stream_t *s, zl_conn_t *c)
{
    zl_endpoint_t *ep = c->ep;
    conn_kind_t k = {ep->tls, ep->tls_host, ep->ws, ep->ws_path, ep->ws_host};
    conn_up(s, c, 0, &k);
}

/* A handshake that failed with err: an accepted connection just goes (the
 * application never saw it); a connect is a failed attempt, retried after
 * RECONNECT_IVL unless the peer refused at the TLS or HTTP level (a
 * certificate or protocol failure, which another attempt would repeat):
 * then it gives up with CLOSED(err) and its 0x00. */
static void hs_failed(zl_stream_t *s, zl_conn_t *c, int err, uint32_t event)
{
    zl_emit(s, event, (uint64_t)err, c, NULL, NULL);
    c->timer_id = 0;
    zl_tls_end(c, 0);
    if (c->ws)
        zl_ws_end(c);
    close_fd(s, c->fd);
    c->fd = -1;
    if (!c->outbound) {
        zl_conn_release(s, c);
        return;
    }
    if (event == ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
        attempt_failed(s, c, err);
        return;
    }
    zl_emit(s, ZLINK_EVENT_CLOSED, (uint64_t)err, c, NULL, NULL);
    zl_evq_push(s, c->id, 0x00, err);
    c->zero_delivered = 1;
    zl_conn_release(s, c);
}

/* One step of the handshakes: TLS first (when there is a session; a
 * finished one just returns 1), then the ws upgrade. */
static void hs_step(zl_stream_t *s, zl_conn_t *c)
{
    int err = 0;
    uint32_t event = 0;
    int rc = c->ssl ? zl_tls_handshake(s, c, &err, &event) : 1;
    if (rc == 1 && c->ws)
        rc = zl_ws_handshake(s, c, &err, &event);
    if (rc == 0)
        return;
    if (rc < 0) {
        hs_failed(s, c, err, event);
        return;
    }
    c->timer_id = 0; /* cancels the handshake timeout */
    zl_conn_set_out(s, c, 0);
    established(s, c, !c->outbound, 0);
    if (zl_conn_pending(c))
        zl_ready_push(s, c);
}

/* a readable listener: accept what is pending, up to a batch */
void zl_listener_on_event(zl_stream_t *s, uint32_t li)
{
    for (int k = 0; k < ZL_ACCEPT_BATCH; k++) {
        zl_listener_t *l = &s->lst[li];
        zl_sockaddr_t sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(l->fd, &sa.sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (e == EAGAIN || e == EWOULDBLOCK)
                return;
            if (e == EINTR || e == ECONNABORTED || e == EPROTO)
                continue;
            if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
                /* The pending connection stays in the backlog and the
                 * listener stays readable: with level-triggered epoll we
                 * would spin. Step out of the epoll set and retry later. */
                zl_loop_del(&s->loop, l->fd);
                l->paused = 1;
                l->timer_id = zl_loop_timer_add(
                    &s->loop, zl_now_ms() + ZL_ACCEPT_RETRY_MS, ZTM_LISTENER,
                    li);
            }
            zl_emit(s, ZLINK_EVENT_ACCEPT_FAILED, (uint64_t)e, NULL, l->real,
                    NULL);
            return;
        }
        zl_conn_t *c = zl_conn_alloc(s, 0, 0);
        if (!c) {
            close(fd);
            zl_emit(s, ZLINK_EVENT_ACCEPT_FAILED, (uint64_t)zlink_errno(),
                    NULL, l->real, NULL);
            continue;
        }
        c->fd = fd;
        c->remote = sa;
        c->listener1 = li + 1;
        zl_setup_fd(s, fd, sa.sa.sa_family);
        if (zl_loop_ctl(&s->loop, EPOLL_CTL_ADD, fd, EPOLLIN,
                        ZL_TAG(ZT_CONN, c->serial, c->idx)) != 0) {
            close(fd);
            c->fd = -1;
            zl_conn_release(s, c);
            continue;
        }
        conn_kind_t k = {l->tls, NULL, l->ws, l->ws_path, NULL};
        conn_up(s, c, 1, &k);
    }
}

/* the accept retry after EMFILE & co. */
void zl_listener_on_timer(zl_stream_t *s, uint32_t li)
{
    zl_listener_t *l = &s->lst[li];
    l->timer_id = 0;
    if (!l->paused)
        return;
    if (zl_loop_ctl(&s->loop, EPOLL_CTL_ADD, l->fd, EPOLLIN,
                    ZL_TAG(ZT_LISTENER, l->serial, li)) == 0)
        l->paused = 0;
    else
        l->timer_id = zl_loop_timer_add(
            &s->loop, zl_now_ms() + ZL_ACCEPT_RETRY_MS, ZTM_LISTENER, li);
}

/* A connect attempt failed with err (the descriptor is already closed):
 * retry after RECONNECT_IVL, or give up for good when it is -1. */
static void attempt_failed(zl_stream_t *s, zl_conn_t *c, int err)
{
    c->fd = -1;
    c->timer_id = 0;
    if (s->opts.reconnect_ivl >= 0) {
        c->state = ZC_RETRY_WAIT;
        zl_emit(s, ZLINK_EVENT_CONNECT_RETRIED, (uint64_t)err, c, NULL, NULL);
        c->timer_id = zl_loop_timer_add(
            &s->loop, zl_now_ms() + (uint64_t)s->opts.reconnect_ivl, ZTM_CONN,
            c->idx);
        return;
    }
    zl_emit(s, ZLINK_EVENT_CLOSED, (uint64_t)err, c, NULL, NULL);
    zl_evq_push(s, c->id, 0x00, err);
    c->zero_delivered = 1;
    zl_conn_release(s, c);
}

/* Starts one connect attempt. With first set, failing to create the
 * descriptor is reported to the caller (zlink_connect) as -1; every other
 * failure goes through the retry logic. */
int zl_conn_start_connect(zl_stream_t *s, zl_conn_t *c, int first)
{
    zl_endpoint_t *ep = c->ep;
    int family = ep->addr.sa.sa_family;
    c->remote = ep->addr;
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        if (first)
            return zl_fail(errno);
        attempt_failed(s, c, errno);
        return 0;
    }
    zl_setup_fd(s, fd, family);
    int rc = connect(fd, &ep->addr.sa, ep->addrlen);
    int e = rc == 0 ? 0 : errno;
    if (rc == 0 || e == EINPROGRESS) {
        uint32_t events = rc == 0 ? EPOLLIN : EPOLLOUT;
        if (zl_loop_ctl(&s->loop, EPOLL_CTL_ADD, fd, events,
                        ZL_TAG(ZT_CONN, c->serial, c->idx)) != 0) {
            e = errno;
            close(fd);
            attempt_failed(s, c, e);
            return 0;
        }
        c->fd = fd;
        if (rc == 0) {
            conn_up_ep(s, c);
            return 0;
        }
        c->state = ZC_CONNECTING;
        zl_emit(s, ZLINK_EVENT_CONNECT_DELAYED, (uint64_t)EINPROGRESS, c, NULL,
                NULL);
        if (s->opts.connect_timeout > 0)
            c->timer_id = zl_loop_timer_add(
                &s->loop, zl_now_ms() + (uint64_t)s->opts.connect_timeout,
                ZTM_CONN, c->idx);
        return 0;
    }
    close(fd);
    attempt_failed(s, c, e);
    return 0;
}

static void conn_connect_done(zl_stream_t *s, zl_conn_t *c)
{
    int err = 0;
    socklen_t l = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0)
        err = errno;
    c->timer_id = 0; /* cancels the connect timeout */
    if (err == 0) {
        if (zl_loop_ctl(&s->loop, EPOLL_CTL_MOD, c->fd, EPOLLIN,
                        ZL_TAG(ZT_CONN, c->serial, c->idx)) == 0) {
            conn_up_ep(s, c);
            return;
        }
        err = errno;
    }
    close_fd(s, c->fd);
    attempt_failed(s, c, err);
}

void zl_conn_on_timer(zl_stream_t *s, zl_conn_t *c)
{
    c->timer_id = 0;
    switch (c->state) {
    case ZC_CONNECTING: /* CONNECT_TIMEOUT expired */
        close_fd(s, c->fd);
        attempt_failed(s, c, ETIMEDOUT);
        break;
    case ZC_HANDSHAKE: /* HANDSHAKE_IVL expired: the peer stalled */
        hs_failed(s, c, ETIMEDOUT, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
        break;
    case ZC_RETRY_WAIT:
        zl_conn_start_connect(s, c, 0);
        break;
    case ZC_CLOSING: /* linger of a requested close expired */
        if (!c->peer_closing && c->shut && s->opts.linger < 0) {
            /* LINGER -1, half-closed: done once the peer acknowledged all */
            if (zl_conn_unacked(c) == 0)
                zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL, 0);
            else
                c->timer_id = zl_loop_timer_add(
                    &s->loop, zl_now_ms() + ZL_SHUT_POLL_MS, ZTM_CONN, c->idx);
        } else if (!c->peer_closing) {
            /* LINGER ran out: bytes still queued or unacknowledged may not
             * reach the peer */
            zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL,
                          c->q.lcount || zl_conn_unacked(c) > (c->shut ? 1 : 0)
                              ? ETIMEDOUT : 0);
        } else if (s->opts.linger < 0 &&
                   zl_now_ms() < c->progress_ms + ZL_WS_STALL_MS) {
            /* LINGER -1: bounded by a stall, and bytes went out since */
            c->timer_id = zl_loop_timer_add(
                &s->loop, c->progress_ms + ZL_WS_STALL_MS, ZTM_CONN, c->idx);
        } else {
            zl_conn_close(s, c, ZLINK_DISCONNECT_REMOTE, ETIMEDOUT);
        }
        break;
    default:
        break;
    }
}

/* ---- events ------------------------------------------------------------ */

void zl_conn_on_event(zl_stream_t *s, zl_conn_t *c, uint32_t ev)
{
    switch (c->state) {
    case ZC_ACTIVE:
        if ((ev & EPOLLOUT) && c->want_out) {
            if (zl_conn_flush(s, c) < 0)
                return;
        }
        if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->in_ready)
            zl_ready_push(s, c);
        break;
    case ZC_CONNECTING:
        conn_connect_done(s, c);
        break;
    case ZC_HANDSHAKE:
        hs_step(s, c);
        break;
    case ZC_CLOSING:
        if (c->shut) {
            /* half-closed after a local close: the peer's bytes are
             * discarded until its side ends */
            int r = discard_input(c);
            if (r || (ev & (EPOLLERR | EPOLLHUP)))
                zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL,
                              r == 1 || (!r && !(ev & EPOLLERR)) ? 0 : shut_reset(c));
        } else if (c->dropped == 2) {
            /* half-closed after a drop: the peer's bytes are discarded
             * until its side ends */
            if (discard_input(c) || (ev & EPOLLERR))
                zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL, ENOBUFS);
        } else if ((ev & (EPOLLERR | EPOLLHUP)) && c->peer_closing)
            zl_conn_close(s, c, ZLINK_DISCONNECT_REMOTE, ECONNRESET);
        else if (ev & (EPOLLERR | EPOLLHUP))
            zl_conn_close(s, c, ZLINK_DISCONNECT_LOCAL, 0);
        else if (ev & EPOLLOUT)
            zl_conn_flush(s, c);
        break;
    default:
        break;
    }
}

/* ---- peer introspection (zlink_socket_peer*) ------------------------------ */

/* The STREAM state of h, or NULL with ETERM after a context shutdown. */
static zl_stream_t *peer_stream(zl_handle_t *h)
{
    zl_stream_t *s = h->u.stream;
    return zl_stream_check_live(s) ? NULL : s;
}

static void fill_info(const zl_conn_t *c, zlink_peer_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->routing_id.size = 4;
    zl_put_be32(info->routing_id.data, c->id);
    zl_format_conn_addr(c, &c->remote, c->ssl != NULL, info->remote_addr,
                        sizeof info->remote_addr);
    info->connected_time_ms = c->connected_ms;
    info->msgs_sent = c->msgs_sent;
    info->msgs_received = c->msgs_received;
}

static int peer_count(zl_handle_t *h)
{
    zl_stream_t *s = peer_stream(h);
    if (!s)
        return -1;
    return (int)s->npeers;
}

static int peer_routing_id(zl_handle_t *h, int index, zlink_routing_id_t *out)
{
    zl_stream_t *s = peer_stream(h);
    if (!s)
        return -1;
    if (!out || index < 0 || (uint32_t)index >= s->npeers)
        return zl_fail(EINVAL);
    const zl_conn_t *c = s->conns[s->peers[index]];
    memset(out, 0, sizeof *out);
    out->size = 4;
    zl_put_be32(out->data, c->id);
    return 0;
}

static int peer_info(zl_handle_t *h, const zlink_routing_id_t *routing_id,
                     zlink_peer_info_t *info)
{
    zl_stream_t *s = peer_stream(h);
    if (!s)
        return -1;
    if (!routing_id || !info || routing_id->size != 4)
        return zl_fail(EINVAL);
    const zl_conn_t *c = zl_conn_by_id(s, zl_get_be32(routing_id->data));
    if (!c || c->peer_pos < 0)
        return zl_fail(EINVAL);
    fill_info(c, info);
    return 0;
}

static int peer_list(zl_handle_t *h, zlink_peer_info_t *peers, size_t *count)
{
    zl_stream_t *s = peer_stream(h);
    if (!s)
        return -1;
    if (!count)
        return zl_fail(EINVAL);
    if (!peers) {
        *count = s->npeers;
        return 0;
    }
    size_t n = *count < s->npeers ? *count : s->npeers;
    for (size_t i = 0; i < n; i++)
        fill_info(s->conns[s->peers[i]], &peers[i]);
    *count = n;
    return 0;
}

const zl_peer_ops_t zl_stream_peer_ops = {
    .count = peer_count,
    .routing_id = peer_routing_id,
    .info = peer_info,
    .list = peer_list,
};
