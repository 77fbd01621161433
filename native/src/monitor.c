/*
 * monitor.c - socket monitoring: the ABI entry points, which call the
 * socket's kind (zlink_socket_monitor, zlink_socket_monitor_open) or the
 * monitor handle's kind (zlink_monitor_recv, closing), and what the kinds
 * share. libzmq sockets: monitor_relay.c and zsock_monitor.c; STREAM
 * sockets: stream_monitor.c.
 */
#include "zl_internal.h"

#include <errno.h>

zl_handle_t *zl_monitor_handle_new(zl_monitor_t *m)
{
    zl_handle_t *h = zl_handle_new(ZL_KIND_MONITOR);
    if (!h) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    h->ctx = m->ctx;
    h->u.mon = m;
    return h;
}

int zl_monitor_close(zl_monitor_t *m)
{
    return m->ops->close(m);
}

int zl_monitor_event_is_local(uint64_t event)
{
    switch (event) {
    case ZLINK_EVENT_LISTENING:
    case ZLINK_EVENT_BIND_FAILED:
    case ZLINK_EVENT_ACCEPTED:
    case ZLINK_EVENT_ACCEPT_FAILED:
    case ZLINK_EVENT_CLOSED:
    case ZLINK_EVENT_CLOSE_FAILED:
        return 1;
    default:
        return 0;
    }
}

ZL_API int zlink_socket_monitor(void *socket, const char *endpoint, int events)
{
    zl_handle_t *h = zl_sock_get(socket);
    return h ? h->ops->monitor(h, endpoint, events) : -1;
}

ZL_API void *zlink_socket_monitor_open(void *socket, int events)
{
    zl_handle_t *h = zl_sock_get(socket);
    return h ? h->ops->monitor_open(h, events) : NULL;
}

ZL_API int zlink_monitor_recv(void *monitor, zlink_monitor_event_t *event,
                              int flags)
{
    zl_handle_t *h = zl_handle_get(monitor, ZL_KIND_MONITOR);
    if (!h) {
        /* as zlink: a libzmq socket (a PAIR connected to the endpoint of
         * zlink_socket_monitor) reads the events published there */
        zl_handle_t *s = zl_handle_get(monitor, ZL_KIND_SOCKET);
        if (!s || s->ops != &zl_zsock_ops)
            return zl_fail(ENOTSOCK);
        if (!event)
            return zl_fail(EFAULT);
        return zl_monitor_recv_frames(s->u.zsock, event, flags, 0);
    }
    if (!event)
        return zl_fail(EFAULT);
    return h->u.mon->ops->recv(h->u.mon, event, flags);
}
