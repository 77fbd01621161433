/*
 * zsock_monitor.c - monitor handles of libzmq sockets: libzmq's own monitor
 * (zmq_socket_monitor) publishes on a unique inproc endpoint, an internal
 * PAIR reads its v1 event messages, and zlink_monitor_recv converts each
 * into a zlink_monitor_event_t.
 */
#include "zl_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct zl_zsock_monitor {
    zl_monitor_t base;
    void *pair;
    zl_handle_t *sock;
    void *zsock;
} zl_zsock_monitor_t;

static const zl_monitor_ops_t zsock_monitor_ops;

void *zl_zsock_monitor_open(zl_handle_t *h, int events)
{
    char ep[96];
    snprintf(ep, sizeof ep, "inproc://zlink.monitor.%p.%u", (void *)h,
             atomic_fetch_add(&h->ctx->seq, 1));
    if (zmq_socket_monitor(h->u.zsock, ep, events) != 0) {
        zl_zfail();
        return NULL;
    }
    void *pair = zmq_socket(h->ctx->zctx, ZMQ_PAIR);
    if (!pair) {
        zl_zfail();
        zmq_socket_monitor(h->u.zsock, NULL, 0);
        return NULL;
    }
    int zero = 0;
    zmq_setsockopt(pair, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_connect(pair, ep) != 0) {
        zl_zfail();
        zmq_close(pair);
        zmq_socket_monitor(h->u.zsock, NULL, 0);
        return NULL;
    }
    zl_zsock_monitor_t *m = calloc(1, sizeof *m);
    if (!m) {
        zmq_close(pair);
        zmq_socket_monitor(h->u.zsock, NULL, 0);
        zl_set_errno(ENOMEM);
        return NULL;
    }
    m->base.ops = &zsock_monitor_ops;
    m->base.ctx = h->ctx;
    m->pair = pair;
    m->sock = h;
    m->zsock = h->u.zsock;
    zl_handle_t *mh = zl_monitor_handle_new(&m->base);
    if (!mh) {
        zmq_close(pair);
        zmq_socket_monitor(h->u.zsock, NULL, 0);
        free(m);
        return NULL;
    }
    return mh;
}

/* an address frame into one of the event's strings */
static void copy_addr(char *dst, zmq_msg_t *f)
{
    size_t n = zmq_msg_size(f);
    if (n > ZL_ADDR_MAX - 1)
        n = ZL_ADDR_MAX - 1;
    memcpy(dst, zmq_msg_data(f), n);
    dst[n] = '\0';
}

/* The ZMP engine's CONNECTION_READY and DISCONNECTED go on with three more
 * frames (native/libzmq/peers.patch): the peer's routing id, the local and
 * the remote address. Reads them, and whatever a later version might add. */
static void recv_peer_frames(void *zs, zlink_monitor_event_t *out)
{
    for (int i = 0;; i++) {
        zmq_msg_t f;
        zmq_msg_init(&f);
        if (zmq_msg_recv(&f, zs, 0) < 0) {
            zmq_msg_close(&f);
            return;
        }
        if (i == 0) {
            size_t n = zmq_msg_size(&f);
            if (n > sizeof out->routing_id.data)
                n = sizeof out->routing_id.data;
            out->routing_id.size = (uint8_t)n;
            memcpy(out->routing_id.data, zmq_msg_data(&f), n);
        } else if (i == 1) {
            copy_addr(out->local_addr, &f);
        } else if (i == 2) {
            copy_addr(out->remote_addr, &f);
        }
        int more = zmq_msg_more(&f);
        zmq_msg_close(&f);
        if (!more)
            return;
    }
}

int zl_monitor_recv_frames(void *zs, zlink_monitor_event_t *out, int flags,
                           int libzmq_values)
{
    zmq_msg_t f1, f2;
    zmq_msg_init(&f1);
    int zflags = (flags & ZLINK_DONTWAIT) ? ZMQ_DONTWAIT : 0;
    if (zmq_msg_recv(&f1, zs, zflags) < 0) {
        zmq_msg_close(&f1);
        return zl_zfail();
    }
    int more = zmq_msg_more(&f1);
    memset(out, 0, sizeof *out);
    if (zmq_msg_size(&f1) >= 6) {
        const unsigned char *d = zmq_msg_data(&f1);
        uint16_t e16;
        uint32_t v32;
        memcpy(&e16, d, 2);
        memcpy(&v32, d + 2, 4);
        out->event = e16;
        /* libzmq's value for DISCONNECTED is the descriptor; the ABI's is a
         * reason, and libzmq 4.3 never tells which (what
         * zlink_socket_monitor publishes is translated already) */
        out->value = v32;
    }
    zmq_msg_close(&f1);
    if (more) {
        /* the other frames follow the first at once */
        zmq_msg_init(&f2);
        if (zmq_msg_recv(&f2, zs, 0) >= 0) {
            char *dst = zl_monitor_event_is_local(out->event)
                            ? out->local_addr
                            : out->remote_addr;
            copy_addr(dst, &f2);
            more = zmq_msg_more(&f2);
        } else {
            more = 0;
        }
        zmq_msg_close(&f2);
    }
    /* libzmq's value for DISCONNECTED is the descriptor; the ABI's is a
     * reason. The ZMP engine's DISCONNECTED, the one that goes on with the
     * peer's frames, has its reason there (native/libzmq/reason.patch); for
     * another libzmq 4.3 connection (inproc) nobody says why, so UNKNOWN
     * (what zlink_socket_monitor publishes is translated already) */
    int reason_given = more;
    if (more)
        recv_peer_frames(zs, out);
    if (libzmq_values && out->event == ZLINK_EVENT_DISCONNECTED &&
        (!reason_given || out->value > ZLINK_DISCONNECT_CTX_TERM))
        out->value = ZLINK_DISCONNECT_UNKNOWN;
    return 0;
}

static int zsock_monitor_recv(zl_monitor_t *base, zlink_monitor_event_t *out,
                              int flags)
{
    return zl_monitor_recv_frames(((zl_zsock_monitor_t *)base)->pair, out,
                                  flags, 1);
}

static void zsock_monitor_poll_item(zl_monitor_t *base, zmq_pollitem_t *zi)
{
    zi->socket = ((zl_zsock_monitor_t *)base)->pair;
    zi->fd = 0;
    zi->events = ZMQ_POLLIN;
}

static int zsock_monitor_close(zl_monitor_t *base)
{
    zl_zsock_monitor_t *m = (zl_zsock_monitor_t *)base;
    /* stop libzmq's side if the socket is still open */
    zl_handle_t *sh = zl_handle_get(m->sock, ZL_KIND_SOCKET);
    if (sh && sh->ops == &zl_zsock_ops && sh->u.zsock == m->zsock)
        zmq_socket_monitor(m->zsock, NULL, 0);
    zmq_close(m->pair);
    free(m);
    return 0;
}

static const zl_monitor_ops_t zsock_monitor_ops = {
    .recv = zsock_monitor_recv,
    .close = zsock_monitor_close,
    .poll_item = zsock_monitor_poll_item,
};
