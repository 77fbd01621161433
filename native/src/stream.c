/*
 * stream.c - the STREAM kind of socket: its ops table, its lifecycle (open,
 * close with LINGER) and its endpoints (bind/connect/unbind/disconnect).
 *
 * Why our own engine: libzmq's STREAM moves every message between the
 * application thread and an I/O thread, which costs about 5x on raw TCP.
 * Here every call does its I/O itself, in the calling thread. See
 * stream_proto.c for send/recv, stream_opts.c for the options,
 * stream_conn.c for the per-connection machinery, stream_loop.c for the
 * event loop and stream_monitor.c for monitoring.
 */
#include "stream.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* STREAM sockets count among the objects zlink_ctx_term waits for. */
static int stream_open(zl_handle_t *h)
{
    zl_ctx_t *ctx = h->ctx;
    if (zl_ctx_register(ctx) != 0)
        return -1;
    zl_stream_t *s = calloc(1, sizeof *s);
    if (!s || zl_loop_init(&s->loop, ctx->shutdown_fd,
                            zl_io_backend(ctx->io_backend)) != 0) {
        int e = s ? errno : ENOMEM;
        free(s);
        zl_ctx_unregister(ctx);
        return zl_fail(e);
    }
    s->handle = h;
    s->ctx = ctx;
    zl_stream_opts_init(&s->opts);
    s->last_event = -1;
    h->u.stream = s;
    return 0;
}

/* ---- endpoints --------------------------------------------------------- */

/* The state of an unbind/connect/disconnect call's socket, or NULL with the
 * error set: ETERM after a context shutdown, EINVAL for no endpoint. */
static zl_stream_t *endpoint_stream(zl_handle_t *h, const char *ep)
{
    zl_stream_t *s = h->u.stream;
    if (zl_stream_check_live(s))
        return NULL;
    if (!ep) {
        zl_set_errno(EINVAL);
        return NULL;
    }
    return s;
}

static int stream_bind(zl_handle_t *h, const char *ep)
{
    zl_stream_t *s = h->u.stream;
    if (zl_stream_check_live(s))
        return -1;
    zl_sockaddr_t a;
    socklen_t al;
    int kind = 0;
    int rc = zl_parse_endpoint(ep, 1, s->opts.ipv6, &kind, &a, &al);
    if (rc)
        return zl_fail(-rc);
    int tls = kind & ZL_K_TLS;
    struct ssl_ctx_st *tctx = NULL;
    if (tls && !(tctx = zl_tls_ctx_new(s, 1))) {
        zl_emit(s, ZLINK_EVENT_BIND_FAILED, (uint64_t)EINVAL, NULL, ep, NULL);
        return -1;
    }
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
        zl_tls_ctx_free(tctx);
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
                zl_tls_ctx_free(tctx);
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
    l->tls = tctx;
    l->ws = (kind & ZL_K_WS) != 0;
    l->ws_path = NULL;
    if (l->ws) {
        size_t hl;
        l->ws_path = strdup(zl_ws_split(ep, &hl));
        /* as zlink 1.3 reports it: the host as given, the real port, the
         * path (at least "/") */
        const char *hp = strstr(ep, "://") + 3;
        const char *colon = memrchr(hp, ':', hl);
        unsigned port = ntohs(real.sa.sa_family == AF_INET6 ? real.in6.sin6_port
                                                            : real.in4.sin_port);
        snprintf(l->real, sizeof l->real, "%s://%.*s:%u%s",
                 (kind & ZL_K_TLS) ? "wss" : "ws",
                 colon ? (int)(colon - hp) : 0, hp, port,
                 l->ws_path ? l->ws_path : "/");
    } else {
        zl_format_addr_tls(&real, tls, l->real, sizeof l->real);
    }
    if (!l->given || (l->ws && !l->ws_path) || zl_loop_ctl(&s->loop, EPOLL_CTL_ADD, fd, EPOLLIN,
                                 ZL_TAG(ZT_LISTENER, l->serial, li)) != 0) {
        e = (l->given && (!l->ws || l->ws_path)) ? errno : ENOMEM;
        free(l->given);
        l->given = NULL;
        free(l->ws_path);
        l->ws_path = NULL;
        l->fd = -1;
        zl_tls_ctx_free(l->tls);
        l->tls = NULL;
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
    free(l->ws_path);
    l->ws_path = NULL;
    zl_tls_ctx_free(l->tls); /* its connections hold their own reference */
    l->tls = NULL;
}

static int stream_unbind(zl_handle_t *h, const char *ep)
{
    zl_stream_t *s = endpoint_stream(h, ep);
    if (!s)
        return -1;
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

/* the endpoint's TLS_HOSTNAME (SNI and name check) as set now */
static int ep_set_host(zl_endpoint_t *ep, zl_stream_t *s)
{
    free(ep->tls_host);
    ep->tls_host = NULL;
    if (!s->opts.tls_hostname[0])
        return 0;
    ep->tls_host = strdup(s->opts.tls_hostname);
    return ep->tls_host ? 0 : -1;
}

/* a ws endpoint's path and Host header, from its string */
static int ep_set_ws(zl_endpoint_t *ep)
{
    size_t hl;
    const char *path = zl_ws_split(ep->str, &hl);
    ep->ws = 1;
    ep->ws_path = strdup(path);
    ep->ws_host = strndup(strstr(ep->str, "://") + 3, hl);
    return ep->ws_path && ep->ws_host ? 0 : -1;
}

static int stream_connect(zl_handle_t *h, const char *str)
{
    zl_stream_t *s = endpoint_stream(h, str);
    if (!s)
        return -1;
    int have_id = s->opts.connect_rid.set;
    uint32_t id = s->opts.connect_rid.id;
    s->opts.connect_rid.set = 0; /* applies to this connect only */

    /* thousands of connects to one endpoint resolve it once */
    zl_endpoint_t *ep = find_ep(s, str);
    int fresh = 0;
    if (!ep) {
        zl_sockaddr_t a;
        socklen_t al;
        int kind = 0;
        int rc = zl_parse_endpoint(str, 0, s->opts.ipv6, &kind, &a, &al);
        if (rc)
            return zl_fail(-rc);
        int tls = kind & ZL_K_TLS;
        ep = calloc(1, sizeof *ep);
        if (!ep || !(ep->str = strdup(str))) {
            free(ep);
            return zl_fail(ENOMEM);
        }
        ep->addr = a;
        ep->addrlen = al;
        if ((kind & ZL_K_WS) && ep_set_ws(ep) != 0) {
            zl_endpoint_free(ep);
            return zl_fail(ENOMEM);
        }
        ep->tls = tls ? zl_tls_ctx_new(s, 0) : NULL;
        if (tls && (!ep->tls || ep_set_host(ep, s) != 0)) {
            int e = ep->tls ? ENOMEM : EINVAL;
            zl_endpoint_free(ep);
            return zl_fail(e);
        }
        fresh = 1;
    } else if (ep->tls) {
        /* a later connect to the same string takes the options of now */
        struct ssl_ctx_st *t = zl_tls_ctx_new(s, 0);
        if (!t)
            return -1;
        zl_tls_ctx_free(ep->tls);
        ep->tls = t;
        if (ep_set_host(ep, s) != 0)
            return zl_fail(ENOMEM);
    }
    zl_conn_t *c = zl_conn_alloc(s, have_id, id);
    if (!c) {
        int e = zlink_errno();
        if (fresh)
            zl_endpoint_free(ep);
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

static int stream_disconnect(zl_handle_t *h, const char *str)
{
    zl_stream_t *s = endpoint_stream(h, str);
    if (!s)
        return -1;
    zl_endpoint_t *ep = find_ep(s, str);
    if (!ep)
        return zl_fail(ENOENT);
    /* the endpoint is freed together with its last connection */
    uint32_t n = ep->nconns;
    while (n--)
        zl_conn_close(s, ep->conns, ZLINK_DISCONNECT_LOCAL, 0);
    return 0;
}

/* ---- close ------------------------------------------------------------- */

/* connections still closing (flushing, or half-closed and waiting) */
static uint32_t closing_count(const zl_stream_t *s)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nslots; i++)
        n += s->conns[i]->state == ZC_CLOSING;
    return n;
}

static void stream_destroy(zl_stream_t *s)
{
    int down = zl_ctx_is_shutdown(s->ctx);
    int reason = down ? ZLINK_DISCONNECT_CTX_TERM : ZLINK_DISCONNECT_LOCAL;

    for (uint32_t i = 0; i < s->nlst; i++)
        if (s->lst[i].fd >= 0)
            listener_close(s, &s->lst[i]);

    /* LINGER: connections with queued output, bytes the kernel has not
     * delivered yet or input not read are flushed and half-closed before
     * they are closed (zl_conn_linger: a close with unread input would
     * reset them and lose those bytes); everything else goes now */
    int linger = s->opts.linger;
    int flush = linger != 0 && !(linger < 0 && down);
    uint32_t waiting = 0;
    for (uint32_t i = 0; i < s->nslots; i++) {
        zl_conn_t *c = s->conns[i];
        if (c->state == ZC_FREE)
            continue;
        if (flush && c->state == ZC_CLOSING && (c->q.lcount || c->shut)) {
            waiting++;
            continue;
        }
        /* queued or undelivered bytes of ours, or a peer that is writing
         * (unread input: closing would reset, and the peer may drop what
         * it has not read of ours when its write fails) */
        if (flush && c->state == ZC_ACTIVE &&
            (c->q.lcount || zl_conn_unacked(c) > 0 || zl_conn_unread(c) > 0)) {
            waiting += (uint32_t)zl_conn_linger(s, c, 0);
            continue;
        }
        zl_conn_close(s, c, reason, 0);
    }
    if (waiting) {
        /* a finite linger is honoured even after a context shutdown, so the
         * (permanently readable) shutdown fd must not spin the wait */
        if (linger > 0)
            zl_loop_del(&s->loop, s->ctx->shutdown_fd);
        uint64_t deadline = linger > 0 ? zl_now_ms() + (uint64_t)linger : 0;
        while (closing_count(s)) {
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
        for (uint32_t i = 0; i < s->nslots; i++) {
            zl_conn_t *c = s->conns[i];
            if (c->state == ZC_FREE)
                continue;
            /* what could not go out in time is reported (CLOSE_FAILED) */
            int lost = c->state == ZC_CLOSING &&
                       (c->q.lcount || zl_conn_unacked(c) > (c->shut ? 1 : 0));
            zl_conn_close(s, c, reason, lost && reason == ZLINK_DISCONNECT_LOCAL
                                            ? ETIMEDOUT : 0);
        }
    }

    zl_stream_monitors_stop(s);

    zl_loop_close(&s->loop);
    for (uint32_t i = 0; i < s->nslots; i++) {
        free(s->conns[i]->q.buf);
        free(s->conns[i]->q.lens);
        free(s->conns[i]->rb);
        free(s->conns[i]);
    }
    while (s->eps) { /* normally gone with their connections */
        zl_endpoint_t *ep = s->eps;
        s->eps = ep->next;
        zl_endpoint_free(ep);
    }
    free(s->conns);
    free(s->free_idx);
    free(s->ht);
    free(s->peers);
    free(s->evq);
    free(s->rdy);
    free(s->lst);
    free(s->scratch);
    free(s->txbuf);
    free(s);
}

static int stream_close(zl_handle_t *h)
{
    zl_stream_t *s = h->u.stream;
    zl_ctx_t *ctx = h->ctx;
    zl_handle_release(h);
    stream_destroy(s);
    zl_ctx_unregister(ctx);
    return 0;
}

/* ---- the STREAM kind's calls --------------------------------------------- */

const zl_sock_ops_t zl_stream_ops = {
    .open = stream_open,
    .close = stream_close,
    .setsockopt = zl_stream_setsockopt,
    .getsockopt = zl_stream_getsockopt,
    .bind = stream_bind,
    .connect = stream_connect,
    .unbind = stream_unbind,
    .disconnect = stream_disconnect,
    .send = zl_stream_send,
    /* the bytes are copied or written before the call returns */
    .send_const = zl_stream_send,
    .recv = zl_stream_recv,
    .msg_send = zl_stream_msg_send,
    .msg_recv = zl_stream_msg_recv,
    .monitor = zl_stream_monitor,
    .monitor_open = zl_stream_monitor_open,
    .poll_item = zl_stream_poll_item,
    .poll_check = zl_stream_poll_check,
    .peer = &zl_stream_peer_ops,
};
