/*
 * socket.c - zlink_socket, which chooses a socket's kind once (the ops table
 * its handle carries: libzmq pass-through or the STREAM engine), the
 * per-socket ABI entry points, which check the handle and the rules common
 * to every kind and call through that table, zlink_close for every kind of
 * handle, and zlink_proxy.
 */
#include "zl_internal.h"

#include <errno.h>
#include <string.h>

/* The kind of each zlink socket type; NULL for the types zlink does not
 * have (REQ, REP, PUSH, PULL and libzmq's others). */
static const zl_sock_ops_t *ops_of_type(int type)
{
    switch (type) {
    case ZLINK_PAIR:
    case ZLINK_PUB:
    case ZLINK_SUB:
    case ZLINK_DEALER:
    case ZLINK_ROUTER:
    case ZLINK_XPUB:
    case ZLINK_XSUB:
        return &zl_zsock_ops;
    case ZLINK_STREAM:
        return &zl_stream_ops;
    default:
        return NULL;
    }
}

ZL_API void *zlink_socket(void *context, int type)
{
    zl_handle_t *ch = zl_handle_get(context, ZL_KIND_CTX);
    if (!ch) {
        zl_set_errno(EFAULT);
        return NULL;
    }
    const zl_sock_ops_t *ops = ops_of_type(type);
    if (!ops) {
        zl_set_errno(EINVAL);
        return NULL;
    }
    zl_handle_t *h = zl_handle_new(ZL_KIND_SOCKET);
    if (!h) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    h->ctx = ch->u.ctx;
    h->type = type;
    h->ops = ops;
    if (ops->open(h) != 0) {
        int e = zlink_errno();
        zl_handle_release(h);
        zl_set_errno(e);
        return NULL;
    }
    return h;
}

ZL_API int zlink_close(void *handle)
{
    zl_handle_t *h = zl_handle_get(handle, 0);
    if (!h)
        return zl_fail(ENOTSOCK);
    switch (h->kind) {
    case ZL_KIND_SOCKET:
        return h->ops->close(h);
    case ZL_KIND_MONITOR: {
        zl_monitor_t *m = h->u.mon;
        zl_handle_release(h);
        return zl_monitor_close(m);
    }
    case ZL_KIND_CTX:
        return zlink_ctx_term(handle);
    }
    return zl_fail(ENOTSOCK);
}

/* Options libzmq sockets do not take here: libzmq's security mechanisms
 * (PLAIN 44-46, CURVE 47-50, ZAP_DOMAIN 55), which zlink 1.3 does not have
 * and ZMP, the wire protocol of these sockets, does not carry: EINVAL before
 * libzmq looks at the call. ZMP_METADATA (117) goes to the built-in libzmq,
 * which has it (native/libzmq/zmp.patch); on STREAM it is EINVAL. */
static const int zlink_refused_options[] = {44, 45, 46, 47, 48, 49, 50, 55};

/* zlink's TLS options (95-102) are libzmq's numbers for other options
 * (METADATA, MULTICAST_LOOP, ...), so the built-in libzmq takes them as
 * 1095-1102 (zmp.patch); TLS_LAST_ERROR and TLS_LAST_VERIFY_RESULT keep
 * theirs. In a build without TLS they are EINVAL, as on STREAM. STREAM
 * sockets answer all of them from their own option table (stream_opts.c). */
#define ZL_ZMQ_TLS_OFFSET 1000

/* The socket an option call is for and the option's number for it, or NULL
 * with the error set. zlink 1.3 gives 98 two names: set on an XPUB it is
 * XPUB_MANUAL_LAST_VALUE (libzmq's 98 too), elsewhere, and read on an
 * XPUB, TLS_VERIFY. */
static zl_handle_t *option_target(void *socket, int *option, int set)
{
    zl_handle_t *h = zl_sock_get(socket);
    if (!h)
        return NULL;
    if (h->ops == &zl_stream_ops) {
        if (*option != ZLINK_ZMP_METADATA)
            return h;
        zl_set_errno(EINVAL);
        return NULL;
    }
    for (size_t i = 0; i < sizeof zlink_refused_options / sizeof(int); i++) {
        if (*option == zlink_refused_options[i]) {
            zl_set_errno(EINVAL);
            return NULL;
        }
    }
    if (set && h->type == ZLINK_XPUB && *option == 98)
        return h; /* XPUB_MANUAL_LAST_VALUE */
    int tls_opt = *option >= ZLINK_TLS_CERT && *option <= ZLINK_TLS_PASSWORD;
    if (tls_opt || *option == ZLINK_TLS_LAST_ERROR ||
        *option == ZLINK_TLS_LAST_VERIFY_RESULT) {
        if (!zl_tls_available()) {
            zl_set_errno(EINVAL);
            return NULL;
        }
        if (tls_opt)
            *option += ZL_ZMQ_TLS_OFFSET;
    }
    return h;
}

ZL_API int zlink_setsockopt(void *socket, int option, const void *optval,
                            size_t optvallen)
{
    zl_handle_t *h = option_target(socket, &option, 1);
    if (h && h->ops != &zl_stream_ops &&
        (option == ZLINK_TLS_LAST_ERROR || option == ZLINK_TLS_LAST_VERIFY_RESULT))
        return zl_fail(EINVAL); /* read-only */
    return h ? h->ops->setsockopt(h, option, optval, optvallen) : -1;
}

ZL_API int zlink_getsockopt(void *socket, int option, void *optval,
                            size_t *optvallen)
{
    zl_handle_t *h = option_target(socket, &option, 0);
    return h ? h->ops->getsockopt(h, option, optval, optvallen) : -1;
}

enum { EP_BIND, EP_CONNECT, EP_UNBIND, EP_DISCONNECT };

/* One port rule for every kind: libzmq would wrap an out-of-range port
 * (99999 binds 34463), and unbind/disconnect of such a port is EINVAL
 * rather than "not found". */
static int endpoint_call(void *socket, const char *endpoint, int call)
{
    zl_handle_t *h = zl_sock_get(socket);
    if (!h)
        return -1;
    int bind_side = call == EP_BIND || call == EP_UNBIND;
    int rc = zl_endpoint_port_check(endpoint, bind_side);
    if (rc)
        return zl_fail(-rc);
    switch (call) {
    case EP_BIND:
        return h->ops->bind(h, endpoint);
    case EP_CONNECT:
        return h->ops->connect(h, endpoint);
    case EP_UNBIND:
        return h->ops->unbind(h, endpoint);
    default:
        return h->ops->disconnect(h, endpoint);
    }
}

ZL_API int zlink_bind(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, EP_BIND);
}

ZL_API int zlink_connect(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, EP_CONNECT);
}

ZL_API int zlink_unbind(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, EP_UNBIND);
}

ZL_API int zlink_disconnect(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, EP_DISCONNECT);
}

ZL_API int zlink_send(void *socket, const void *buf, size_t len, int flags)
{
    zl_handle_t *h = zl_sock_get(socket);
    return h ? h->ops->send(h, buf, len, flags) : -1;
}

ZL_API int zlink_send_const(void *socket, const void *buf, size_t len,
                            int flags)
{
    zl_handle_t *h = zl_sock_get(socket);
    return h ? h->ops->send_const(h, buf, len, flags) : -1;
}

ZL_API int zlink_recv(void *socket, void *buf, size_t len, int flags)
{
    zl_handle_t *h = zl_sock_get(socket);
    return h ? h->ops->recv(h, buf, len, flags) : -1;
}

/* libzmq's proxy drives libzmq sockets only: the libzmq socket of h, or
 * NULL for another kind */
static void *zmq_side(const zl_handle_t *h)
{
    return h->ops == &zl_zsock_ops ? h->u.zsock : NULL;
}

ZL_API int zlink_proxy(void *frontend, void *backend, void *capture)
{
    zl_handle_t *f = zl_sock_get(frontend), *b = zl_sock_get(backend);
    if (!f || !b)
        return -1;
    zl_handle_t *c = NULL;
    if (capture && !(c = zl_sock_get(capture)))
        return -1;
    if (!zmq_side(f) || !zmq_side(b) || (c && !zmq_side(c)))
        return zl_fail(ENOTSUP);
    int rc = zmq_proxy(zmq_side(f), zmq_side(b), c ? zmq_side(c) : NULL);
    return rc < 0 ? zl_zfail() : rc;
}
