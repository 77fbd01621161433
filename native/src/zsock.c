/*
 * zsock.c - the pass-through kind of socket: PAIR, PUB, SUB, DEALER,
 * ROUTER, XPUB and XSUB are libzmq 4.3 sockets, and each call goes to
 * libzmq's own function with libzmq's error copied. Monitoring goes through
 * monitor_relay.c (zlink_socket_monitor) and zsock_monitor.c (monitor
 * handles); peer introspection reads the ZMP engine's peer table
 * (zsock_peers.c).
 */
#include "zl_internal.h"

#include <errno.h>
#include <sys/random.h>

/* the ABI's result of a libzmq call that returns a count or -1 */
static int zrc(int rc)
{
    return rc < 0 ? zl_zfail() : rc;
}

/* Every socket starts with a routing id of its own, as in zlink 1.3: 16
 * random bytes laid out as an RFC 4122 version 4 UUID (never all zero). ZMP's
 * HELLO carries it, so a ROUTER sees its peers by these ids unless they set
 * ROUTING_ID themselves, and a peer keeps its id across reconnects. */
static int default_routing_id(void *zs)
{
    unsigned char id[16];
    size_t got = 0;
    while (got < sizeof id) {
        ssize_t n = getrandom(id + got, sizeof id - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)n;
    }
    id[6] = (unsigned char)((id[6] & 0x0f) | 0x40);
    id[8] = (unsigned char)((id[8] & 0x3f) | 0x80);
    return zmq_setsockopt(zs, ZMQ_ROUTING_ID, id, sizeof id);
}

static int zsock_open(zl_handle_t *h)
{
    h->u.zsock = zmq_socket(h->ctx->zctx, h->type);
    if (!h->u.zsock)
        return zl_zfail();
    /* a new socket's SNDHWM and RCVHWM are zlink 1.3's (libzmq's are 1000) */
    int hwm = ZL_DEFAULT_HWM;
    if (zmq_setsockopt(h->u.zsock, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(h->u.zsock, ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 ||
        default_routing_id(h->u.zsock) != 0) {
        int e = errno; /* zmq_setsockopt and getrandom both set it */
        zmq_close(h->u.zsock);
        h->u.zsock = NULL;
        return zl_fail(e);
    }
    return 0;
}

static int zsock_close(zl_handle_t *h)
{
    void *zs = h->u.zsock;
    zl_relay_detach(h);
    zl_handle_release(h);
    return zrc(zmq_close(zs));
}

static int zsock_setsockopt(zl_handle_t *h, int opt, const void *v, size_t len)
{
    return zrc(zmq_setsockopt(h->u.zsock, opt, v, len));
}

static int zsock_getsockopt(zl_handle_t *h, int opt, void *v, size_t *len)
{
    return zrc(zmq_getsockopt(h->u.zsock, opt, v, len));
}

static int zsock_bind(zl_handle_t *h, const char *ep)
{
    return zrc(zmq_bind(h->u.zsock, ep));
}

static int zsock_connect(zl_handle_t *h, const char *ep)
{
    return zrc(zmq_connect(h->u.zsock, ep));
}

static int zsock_unbind(zl_handle_t *h, const char *ep)
{
    return zrc(zmq_unbind(h->u.zsock, ep));
}

static int zsock_disconnect(zl_handle_t *h, const char *ep)
{
    return zrc(zmq_disconnect(h->u.zsock, ep));
}

static int zsock_send(zl_handle_t *h, const void *buf, size_t len, int flags)
{
    return zrc(zmq_send(h->u.zsock, buf, len, flags));
}

static int zsock_send_const(zl_handle_t *h, const void *buf, size_t len,
                            int flags)
{
    return zrc(zmq_send_const(h->u.zsock, buf, len, flags));
}

static int zsock_recv(zl_handle_t *h, void *buf, size_t len, int flags)
{
    return zrc(zmq_recv(h->u.zsock, buf, len, flags));
}

static int zsock_msg_send(zl_handle_t *h, zmq_msg_t *msg, int flags)
{
    return zrc(zmq_msg_send(msg, h->u.zsock, flags));
}

static int zsock_msg_recv(zl_handle_t *h, zmq_msg_t *msg, int flags)
{
    return zrc(zmq_msg_recv(msg, h->u.zsock, flags));
}

static void zsock_poll_item(zl_handle_t *h, short events, zmq_pollitem_t *zi)
{
    zi->socket = h->u.zsock;
    zi->fd = 0;
    zi->events = events;
}

const zl_sock_ops_t zl_zsock_ops = {
    .open = zsock_open,
    .close = zsock_close,
    .setsockopt = zsock_setsockopt,
    .getsockopt = zsock_getsockopt,
    .bind = zsock_bind,
    .connect = zsock_connect,
    .unbind = zsock_unbind,
    .disconnect = zsock_disconnect,
    .send = zsock_send,
    .send_const = zsock_send_const,
    .recv = zsock_recv,
    .msg_send = zsock_msg_send,
    .msg_recv = zsock_msg_recv,
    .monitor = zl_relay_monitor,
    .monitor_open = zl_zsock_monitor_open,
    .poll_item = zsock_poll_item,
    .poll_check = NULL, /* zmq_poll's revents */
#ifdef ZLINK_BUNDLED_LIBZMQ
    .peer = &zl_zsock_peer_ops, /* the ZMP engine's table (zsock_peers.c) */
#else
    .peer = NULL, /* the system's libzmq keeps no table a caller can read */
#endif
};
