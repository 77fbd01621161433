/*
 * socket.c - zlink_socket and the per-socket calls: dispatch between sockets
 * passed through to libzmq and STREAM sockets run by our own engine, plus
 * zlink_close for every kind of handle and zlink_proxy.
 */
#include "zl_internal.h"

#include <errno.h>
#include <string.h>

/* Handle of any socket kind, or NULL with ENOTSOCK set. */
static zl_handle_t *get_sock(void *p)
{
    zl_handle_t *h = zl_handle_get(p, 0);
    if (!h || (h->kind != ZL_KIND_ZSOCK && h->kind != ZL_KIND_STREAM)) {
        zl_set_errno(ENOTSOCK);
        return NULL;
    }
    return h;
}

static int is_passthrough_type(int type)
{
    switch (type) {
    case ZLINK_PAIR:
    case ZLINK_PUB:
    case ZLINK_SUB:
    case ZLINK_DEALER:
    case ZLINK_ROUTER:
    case ZLINK_XPUB:
    case ZLINK_XSUB:
        return 1;
    default:
        return 0;
    }
}

ZL_API void *zlink_socket(void *context, int type)
{
    zl_handle_t *ch = zl_handle_get(context, ZL_KIND_CTX);
    if (!ch) {
        zl_set_errno(EFAULT);
        return NULL;
    }
    zl_ctx_t *ctx = ch->u.ctx;
    if (type == ZLINK_STREAM) {
        if (zl_ctx_register(ctx) != 0)
            return NULL;
        zl_handle_t *h = zl_handle_new(ZL_KIND_STREAM);
        if (!h) {
            zl_ctx_unregister(ctx);
            zl_set_errno(ENOMEM);
            return NULL;
        }
        h->ctx = ctx;
        h->type = type;
        h->u.stream = zl_stream_new(ctx, h);
        if (!h->u.stream) {
            int e = zlink_errno();
            zl_handle_release(h);
            zl_ctx_unregister(ctx);
            zl_set_errno(e);
            return NULL;
        }
        return h;
    }
    if (!is_passthrough_type(type)) {
        /* REQ, REP, PUSH, PULL and libzmq's other types are not zlink's */
        zl_set_errno(EINVAL);
        return NULL;
    }
    void *zs = zmq_socket(ctx->zctx, type);
    if (!zs) {
        zl_zfail();
        return NULL;
    }
    zl_handle_t *h = zl_handle_new(ZL_KIND_ZSOCK);
    if (!h) {
        zmq_close(zs);
        zl_set_errno(ENOMEM);
        return NULL;
    }
    h->ctx = ctx;
    h->type = type;
    h->u.zsock = zs;
    return h;
}

ZL_API int zlink_close(void *handle)
{
    zl_handle_t *h = zl_handle_get(handle, 0);
    if (!h)
        return zl_fail(ENOTSOCK);
    switch (h->kind) {
    case ZL_KIND_ZSOCK: {
        void *zs = h->u.zsock;
        zl_relay_detach(h);
        zl_handle_release(h);
        if (zmq_close(zs) != 0)
            return zl_zfail();
        return 0;
    }
    case ZL_KIND_STREAM: {
        struct zl_stream *s = h->u.stream;
        zl_ctx_t *ctx = h->ctx;
        zl_handle_release(h);
        zl_stream_close(s);
        zl_ctx_unregister(ctx);
        return 0;
    }
    case ZL_KIND_MONITOR: {
        struct zl_monitor *m = h->u.mon;
        zl_handle_release(h);
        return zl_monitor_close(m);
    }
    case ZL_KIND_CTX:
        return zlink_ctx_term(handle);
    }
    return zl_fail(ENOTSOCK);
}

static int is_tls_or_zlink_only_option(int option)
{
    return (option >= ZLINK_TLS_CERT && option <= ZLINK_TLS_PASSWORD) ||
           option == ZLINK_ZMP_METADATA;
}

ZL_API int zlink_setsockopt(void *socket, int option, const void *optval,
                            size_t optvallen)
{
    zl_handle_t *h = get_sock(socket);
    if (!h)
        return -1;
    if (is_tls_or_zlink_only_option(option))
        return zl_fail(EINVAL);
    if (h->kind == ZL_KIND_STREAM)
        return zl_stream_setsockopt(h->u.stream, option, optval, optvallen);
    return zmq_setsockopt(h->u.zsock, option, optval, optvallen) == 0
               ? 0
               : zl_zfail();
}

ZL_API int zlink_getsockopt(void *socket, int option, void *optval,
                            size_t *optvallen)
{
    zl_handle_t *h = get_sock(socket);
    if (!h)
        return -1;
    if (is_tls_or_zlink_only_option(option))
        return zl_fail(EINVAL);
    if (h->kind == ZL_KIND_STREAM)
        return zl_stream_getsockopt(h->u.stream, option, optval, optvallen);
    return zmq_getsockopt(h->u.zsock, option, optval, optvallen) == 0
               ? 0
               : zl_zfail();
}

/* The endpoint calls and the byte send/recv calls differ only in the function each kind of
 * socket gets: one dispatcher each, the public entry points name the pair. */
typedef int (*stream_endpoint_fn)(struct zl_stream *, const char *);
typedef int (*zmq_endpoint_fn)(void *, const char *);

static int endpoint_call(void *socket, const char *endpoint, int bind_side,
                         stream_endpoint_fn on_stream, zmq_endpoint_fn on_zmq)
{
    zl_handle_t *h = get_sock(socket);
    if (!h)
        return -1;
    /* one port rule for both kinds: libzmq would wrap an out-of-range port
     * (99999 binds 34463), and unbind/disconnect of such a port is EINVAL
     * rather than "not found" */
    int rc = zl_endpoint_port_check(endpoint, bind_side);
    if (rc)
        return zl_fail(-rc);
    if (h->kind == ZL_KIND_STREAM)
        return on_stream(h->u.stream, endpoint);
    return on_zmq(h->u.zsock, endpoint) == 0 ? 0 : zl_zfail();
}

ZL_API int zlink_bind(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, 1, zl_stream_bind, zmq_bind);
}

ZL_API int zlink_connect(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, 0, zl_stream_connect, zmq_connect);
}

ZL_API int zlink_unbind(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, 1, zl_stream_unbind, zmq_unbind);
}

ZL_API int zlink_disconnect(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, 0, zl_stream_disconnect, zmq_disconnect);
}

typedef int (*zmq_send_fn)(void *, const void *, size_t, int);

static int send_call(void *socket, const void *buf, size_t len, int flags,
                     zmq_send_fn on_zmq)
{
    zl_handle_t *h = get_sock(socket);
    if (!h)
        return -1;
    /* STREAM copies or writes the bytes before returning: const sends need nothing more */
    if (h->kind == ZL_KIND_STREAM)
        return zl_stream_send(h->u.stream, buf, len, flags);
    int rc = on_zmq(h->u.zsock, buf, len, flags);
    return rc < 0 ? zl_zfail() : rc;
}

ZL_API int zlink_send(void *socket, const void *buf, size_t len, int flags)
{
    return send_call(socket, buf, len, flags, zmq_send);
}

ZL_API int zlink_send_const(void *socket, const void *buf, size_t len,
                            int flags)
{
    return send_call(socket, buf, len, flags, zmq_send_const);
}

ZL_API int zlink_recv(void *socket, void *buf, size_t len, int flags)
{
    zl_handle_t *h = get_sock(socket);
    if (!h)
        return -1;
    if (h->kind == ZL_KIND_STREAM)
        return zl_stream_recv(h->u.stream, buf, len, flags);
    int rc = zmq_recv(h->u.zsock, buf, len, flags);
    return rc < 0 ? zl_zfail() : rc;
}

ZL_API int zlink_proxy(void *frontend, void *backend, void *capture)
{
    zl_handle_t *f = get_sock(frontend), *b = get_sock(backend);
    if (!f || !b)
        return -1;
    zl_handle_t *c = NULL;
    if (capture && !(c = get_sock(capture)))
        return -1;
    /* libzmq's proxy drives libzmq sockets only */
    if (f->kind != ZL_KIND_ZSOCK || b->kind != ZL_KIND_ZSOCK ||
        (c && c->kind != ZL_KIND_ZSOCK))
        return zl_fail(ENOTSUP);
    int rc = zmq_proxy(f->u.zsock, b->u.zsock, c ? c->u.zsock : NULL);
    return rc < 0 ? zl_zfail() : rc;
}
