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

#define ZL_ADDR_MAX 256

/* SNDHWM and RCVHWM of every new socket, STREAM and libzmq types alike:
 * zlink 1.3's default */
#define ZL_DEFAULT_HWM 300000

#define ZL_API ZLINK_EXPORT

/* Every handle handed to the caller is a zl_handle_t. Shells are never
 * returned to malloc (see handle.c) so a stale handle can always be
 * inspected safely and reported as ENOTSOCK. */
#define ZL_MAGIC_LIVE 0x7a6c6e6bu
#define ZL_MAGIC_DEAD 0xdeadbeefu

enum zl_kind {
    ZL_KIND_CTX = 1,
    ZL_KIND_SOCKET = 2,  /* any socket: what kind is in its ops table */
    ZL_KIND_MONITOR = 3, /* monitor handle from zlink_socket_monitor_open */
};

struct zl_ctx;
struct zl_stream;
struct zl_monitor;
struct zl_relay;
struct zl_sock_ops;

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
    int type;                      /* socket type for socket handles */
    const struct zl_sock_ops *ops; /* socket handles: their kind's calls */
    struct zl_handle *qnext;       /* quarantine list link */
} zl_handle_t;

zl_handle_t *zl_handle_new(uint32_t kind);
void zl_handle_release(zl_handle_t *h);
/* Returns the handle if it is live and of the given kind (0 = any). */
zl_handle_t *zl_handle_get(void *p, uint32_t kind);
/* The handle of a live socket (of either kind), or NULL with ENOTSOCK. */
zl_handle_t *zl_sock_get(void *p);

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
    int io_backend; /* ZLINK_IO_BACKEND for new STREAM sockets, 0 = not set */
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

/* Port rule of every tcp://, tls://, ws:// and wss:// endpoint (stream_addr.c): 1..65535, and for bind (and unbind)
 * also `*` and 0. Returns 0 when the endpoint is not tcp:// or its port is valid, -EINVAL
 * otherwise; the rest of the endpoint is left to the callee. */
int zl_endpoint_port_check(const char *ep, int for_bind);

/* whether this build has OpenSSL: tls://, ws://, wss:// (stream_tls.c) */
int zl_tls_available(void);

/* msg.c */
void zl_msg_mark_more(zmq_msg_t *m);

/* monotonic clock in ms (stream_loop.c) */
uint64_t zl_now_ms(void);

/*
 * A socket's operations. The kind of a socket (the library's own STREAM
 * engine, or a libzmq socket passed through) is chosen once, when
 * zlink_socket creates it, by giving its handle one of these tables; every
 * per-socket ABI entry point checks the handle and calls through the table.
 * The calls get the live socket handle and report errors the ABI's way
 * (-1 or NULL with zlink_errno set).
 */
typedef struct zl_peer_ops {
    int (*count)(zl_handle_t *h);
    int (*routing_id)(zl_handle_t *h, int index, zlink_routing_id_t *out);
    int (*info)(zl_handle_t *h, const zlink_routing_id_t *rid,
                zlink_peer_info_t *info);
    int (*list)(zl_handle_t *h, zlink_peer_info_t *peers, size_t *count);
} zl_peer_ops_t;

typedef struct zl_sock_ops {
    /* fills h->u for a new handle (h->ctx and h->type set) */
    int (*open)(zl_handle_t *h);
    /* releases the handle too */
    int (*close)(zl_handle_t *h);
    int (*setsockopt)(zl_handle_t *h, int opt, const void *v, size_t len);
    int (*getsockopt)(zl_handle_t *h, int opt, void *v, size_t *len);
    /* the endpoint calls: the tcp:// port rule has been checked already */
    int (*bind)(zl_handle_t *h, const char *ep);
    int (*connect)(zl_handle_t *h, const char *ep);
    int (*unbind)(zl_handle_t *h, const char *ep);
    int (*disconnect)(zl_handle_t *h, const char *ep);
    int (*send)(zl_handle_t *h, const void *buf, size_t len, int flags);
    int (*send_const)(zl_handle_t *h, const void *buf, size_t len, int flags);
    int (*recv)(zl_handle_t *h, void *buf, size_t len, int flags);
    int (*msg_send)(zl_handle_t *h, zmq_msg_t *msg, int flags);
    int (*msg_recv)(zl_handle_t *h, zmq_msg_t *msg, int flags);
    int (*monitor)(zl_handle_t *h, const char *ep, int events);
    void *(*monitor_open)(zl_handle_t *h, int events);
    /* zlink_poll: poll_item sets up what zmq_poll waits on for the socket;
     * poll_check, when there is one, decides its readiness (revents >= 0,
     * or -1), otherwise zmq_poll's revents are the answer */
    void (*poll_item)(zl_handle_t *h, short events, zmq_pollitem_t *zi);
    int (*poll_check)(zl_handle_t *h, short events);
    /* peer introspection; NULL: the kind has no peer table (ENOTSUP) */
    const zl_peer_ops_t *peer;
} zl_sock_ops_t;

/* PAIR, PUB, SUB, DEALER, ROUTER, XPUB, XSUB: libzmq's (zsock.c) */
extern const zl_sock_ops_t zl_zsock_ops;
#ifdef ZLINK_BUNDLED_LIBZMQ
/* the peer calls of the libzmq types (zsock_peers.c) */
extern const zl_peer_ops_t zl_zsock_peer_ops;
#endif
/* STREAM: the library's own engine (stream.c) */
extern const zl_sock_ops_t zl_stream_ops;

/* Monitor handles: one kind per kind of socket, with these calls. */
typedef struct zl_monitor zl_monitor_t;
typedef struct zl_monitor_ops {
    int (*recv)(zl_monitor_t *m, zlink_monitor_event_t *ev, int flags);
    int (*close)(zl_monitor_t *m); /* frees m */
    /* zlink_poll on a monitor handle: what to wait on for POLLIN, and (if
     * set) whether an event is really there after a wake-up (1/0) */
    void (*poll_item)(zl_monitor_t *m, zmq_pollitem_t *zi);
    int (*poll_check)(zl_monitor_t *m);
} zl_monitor_ops_t;

/* the common head of every kind's monitor struct */
struct zl_monitor {
    const zl_monitor_ops_t *ops;
    zl_ctx_t *ctx;
};

/* monitor.c */
/* a monitor handle for m, or NULL with ENOMEM */
zl_handle_t *zl_monitor_handle_new(zl_monitor_t *m);
int zl_monitor_close(zl_monitor_t *m);
/* events whose address is the local one (libzmq reports the bound endpoint
 * for them); the others carry the peer's address */
int zl_monitor_event_is_local(uint64_t event);
/* zsock_monitor.c: reads one event published on a libzmq socket (the
 * [6-byte event and value][address] frames of zlink_socket_monitor) */
int zl_monitor_recv_frames(void *zs, zlink_monitor_event_t *out, int flags,
                           int libzmq_values);

/* zlink_socket_monitor_open of libzmq sockets (zsock_monitor.c) */
void *zl_zsock_monitor_open(zl_handle_t *h, int events);

/* zlink_socket_monitor of libzmq sockets (monitor_relay.c) */
int zl_relay_monitor(zl_handle_t *h, const char *ep, int events);
/* the socket is closing: its relay ends on libzmq's MONITOR_STOPPED */
void zl_relay_detach(zl_handle_t *h);
/* after zmq_ctx_term: joins every relay thread */
void zl_relay_join_all(zl_ctx_t *c);

#endif
