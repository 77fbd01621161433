/*
 * zl_internal.h - definitions shared by the library's translation units:
 * handle layout, the context wrapper, error helpers and the entry points
 * each module offers to the others. Nothing here is exported.
 */
#ifndef ZL_INTERNAL_H
#define ZL_INTERNAL_H

/* zmq.h first: zlink.h only defines ETERM & co. when zmq.h has not. */
#include <zmq.h>
#include "zlink.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>

#define ZL_API ZLINK_EXPORT

/* Every handle handed to the caller is a zl_handle_t. Shells are never
 * returned to malloc (see handle.c) so a stale handle can always be
 * inspected safely and reported as ENOTSOCK. */
#define ZL_MAGIC_LIVE 0x7a6c6e6bu
#define ZL_MAGIC_DEAD 0xdeadbeefu

enum zl_kind {
    ZL_KIND_CTX = 1,
    ZL_KIND_ZSOCK = 2,   /* libzmq socket, passed through */
    ZL_KIND_STREAM = 3,  /* STREAM socket, our own engine */
    ZL_KIND_MONITOR = 4, /* monitor handle from zlink_socket_monitor_open */
};

struct zl_ctx;
struct zl_stream;
struct zl_monitor;
struct zl_relay;

typedef struct zl_handle {
    _Atomic uint32_t magic;
    uint32_t kind;
    struct zl_ctx *ctx;
    union {
        struct zl_ctx *ctx;
        void *zsock;
        struct zl_stream *stream;
        struct zl_monitor *mon;
    } u;
    int type;               /* socket type for socket handles */
    struct zl_handle *qnext; /* quarantine list link */
} zl_handle_t;

zl_handle_t *zl_handle_new(uint32_t kind);
void zl_handle_release(zl_handle_t *h);
/* Returns the handle if it is live and of the given kind (0 = any). */
zl_handle_t *zl_handle_get(void *p, uint32_t kind);

/* Context wrapper. STREAM sockets and STREAM monitor handles register here
 * so that term can wait for them the way libzmq waits for its sockets.
 * Blocking STREAM calls all have shutdown_fd in their wait set, so one
 * write to it wakes every one of them; no per-socket list is needed. */
typedef struct zl_ctx {
    zl_handle_t *handle;
    void *zctx;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int nobjects;
    atomic_int shutdown;
    int shutdown_fd; /* eventfd, readable for ever once shut down */
    atomic_uint seq; /* for unique inproc endpoint names */
    struct zl_relay *relays; /* monitor relays (monitor_relay.c), under lock */
} zl_ctx_t;

/* count an object term must wait for; fails with ETERM after shutdown */
int zl_ctx_register(zl_ctx_t *ctx);
void zl_ctx_unregister(zl_ctx_t *ctx);
static inline int zl_ctx_is_shutdown(const zl_ctx_t *ctx)
{
    return atomic_load_explicit(&ctx->shutdown, memory_order_acquire);
}

/* errors (errno.c) */
void zl_set_errno(int e);
static inline int zl_fail(int e)
{
    zl_set_errno(e);
    return -1;
}
/* copy libzmq's error after a failed pass-through call */
int zl_zfail(void);

/* Port rule of every tcp:// endpoint (stream_addr.c): 1..65535, and for bind (and unbind)
 * also `*` and 0. Returns 0 when the endpoint is not tcp:// or its port is valid, -EINVAL
 * otherwise; the rest of the endpoint is left to the callee. */
int zl_endpoint_port_check(const char *ep, int for_bind);

/* msg.c */
void zl_msg_mark_more(zmq_msg_t *m);

/* STREAM engine (stream*.c) */
struct zl_stream *zl_stream_new(zl_ctx_t *ctx, zl_handle_t *h);
int zl_stream_close(struct zl_stream *s);
int zl_stream_setsockopt(struct zl_stream *s, int opt, const void *v,
                         size_t len);
int zl_stream_getsockopt(struct zl_stream *s, int opt, void *v, size_t *len);
int zl_stream_bind(struct zl_stream *s, const char *ep);
int zl_stream_connect(struct zl_stream *s, const char *ep);
int zl_stream_unbind(struct zl_stream *s, const char *ep);
int zl_stream_disconnect(struct zl_stream *s, const char *ep);
int zl_stream_send(struct zl_stream *s, const void *buf, size_t len,
                   int flags);
int zl_stream_recv(struct zl_stream *s, void *buf, size_t len, int flags);
int zl_stream_msg_recv(struct zl_stream *s, zmq_msg_t *msg, int flags);
/* poll support: returns revents (>= 0) or -1 */
int zl_stream_poll_check(struct zl_stream *s, short events);
int zl_stream_fd(struct zl_stream *s);

/* monitoring of STREAM sockets (monitor.c) */
int zl_stream_monitor_pair(struct zl_stream *s, const char *ep, int events);
void *zl_stream_monitor_open(zl_handle_t *sh, int events);

/* peers (stream side) */
int zl_stream_peer_count(struct zl_stream *s);
int zl_stream_peer_routing_id(struct zl_stream *s, int index,
                              zlink_routing_id_t *out);
int zl_stream_peer_info(struct zl_stream *s, const zlink_routing_id_t *rid,
                        zlink_peer_info_t *info);
int zl_stream_peers(struct zl_stream *s, zlink_peer_info_t *peers,
                    size_t *count);

int zl_monitor_close(struct zl_monitor *m);

/* zlink_socket_monitor of libzmq sockets (monitor_relay.c) */
int zl_relay_monitor(zl_handle_t *h, const char *ep, int events);
/* the socket is closing: its relay ends on libzmq's MONITOR_STOPPED */
void zl_relay_detach(zl_handle_t *h);
/* after zmq_ctx_term: joins every relay thread */
void zl_relay_join_all(zl_ctx_t *c);

#endif
