/*
 * stream.h - internal state of the STREAM engine (stream*.c): the options
 * (zl_stream_opts_t), the socket's state (zl_stream_t: connections,
 * listeners, the two-frame send/recv state, monitors) and the entry points
 * of its files. The engine runs entirely in the calling thread on an epoll
 * set (zl_loop_t, stream_loop.h): no background thread, no hand-off,
 * progress happens inside calls made on the socket.
 */
#ifndef ZL_STREAM_H
#define ZL_STREAM_H

#include "zl_internal.h"
#include "stream_loop.h"
#include "../libzmq/zmp_transport.h"

#include <netinet/in.h>
#include <sys/socket.h>

#define ZL_SCRATCH_SIZE 65536
#define ZL_ACCEPT_BATCH 256
#define ZL_ACCEPT_RETRY_MS 100
#define ZL_ID_INDEX_BITS 20
#define ZL_MAX_SLOTS (1u << ZL_ID_INDEX_BITS)

typedef union zl_sockaddr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
} zl_sockaddr_t;

enum zl_conn_state {
    ZC_FREE = 0,
    ZC_CONNECTING, /* non-blocking connect in flight */
    ZC_RETRY_WAIT, /* attempt failed, reconnect timer pending, no fd */
    ZC_ACTIVE,     /* established, 0x01 queued */
    ZC_CLOSING,    /* close requested, flushing the send queue */
    ZC_HANDSHAKE,  /* tls://, ws://, wss://: TCP up, TLS and/or HTTP upgrade
                      handshake in progress */
};

/* transport kinds of an endpoint (zl_parse_endpoint): bits */
enum { ZL_K_TLS = 1, ZL_K_WS = 2 };

#define ZL_TLS_STR 1024 /* longest TLS option string (paths, host name) + 1 */

struct zl_conn;

/* A connect endpoint string, resolved once and shared by every connection
 * made with it; disconnect(endpoint) walks its connection list. */
typedef struct zl_endpoint {
    struct zl_endpoint *next;
    char *str;
    zl_sockaddr_t addr;
    socklen_t addrlen;
    struct zl_conn *conns;
    uint32_t nconns;
    struct ssl_ctx_st *tls; /* tls:// endpoints: the client context */
    char *tls_host;         /* TLS_HOSTNAME at connect time, or NULL */
    int ws;                 /* ws:// or wss:// */
    char *ws_path;          /* ws: the request path ("/" by default) */
    char *ws_host;          /* ws: the Host header (the endpoint's host:port) */
} zl_endpoint_t;

/* Per-connection send queue: contiguous bytes (written with one send()) and
 * a ring of message sizes so SNDHWM can count messages. Buffers are kept
 * across uses of the slot, so the steady state does not allocate. */
typedef struct zl_sendq {
    char *buf;
    size_t head, tail, cap;
    uint32_t *lens;
    uint32_t lhead, lcount, lcap;
    uint8_t partial; /* the head message is partly written */
} zl_sendq_t;

typedef struct zl_ws zl_ws_t;

typedef struct zl_conn {
    int fd;
    uint32_t idx;
    uint32_t serial;
    uint32_t id;
    uint8_t state;
    uint8_t in_ready;
    uint8_t want_out;
    uint8_t announced;     /* 0x01 queued */
    uint8_t outbound;      /* made by zlink_connect */
    uint8_t zero_delivered; /* 0x00 already handed out */
    int peer_pos;          /* index in s->peers, -1 if not a peer */
    uint32_t timer_id;     /* live timer, 0 = none */
    uint32_t listener1;    /* accepted by listener slot + 1, 0 otherwise */
    uint8_t tls_dead;      /* TLS fatal error: no close_notify */
    uint32_t tls_wpend;    /* tls: plaintext bytes at the queue's head a
                              write that wants to be retried may have put
                              in its pending record (zl_tls_send) */
    uint8_t peer_closing;  /* ws: flushing before our close reply
                              (zl_conn_peer_closed) */
    uint64_t progress_ms;  /* peer_closing: when bytes last went out */
    uint8_t dropped;       /* ZLINK_STREAM_DROP: closing, its unsent
                              messages dropped (zl_conn_drop) */
    uint8_t shut;          /* a local close whose output went out:
                              half-closed (SHUT_WR), the peer's bytes
                              discarded until its end (zl_conn_linger) */
    zl_endpoint_t *ep;
    struct zl_conn *ep_prev, *ep_next;
    struct ssl_st *ssl;    /* tls:// connections (stream_tls.c), else NULL */
    struct zl_ws *ws;      /* ws:// and wss:// connections (stream_ws.c) */
    zl_sendq_t q;
    /* received bytes not delivered yet (stream_proto.c): LENGTH and BATCH
     * keep an unfinished packet here (and LENGTH a finished one that
     * completed it), RAW the bytes a spill moved out of the scratch. Grows
     * with what arrives, never past the packet; large ones are freed when
     * drained. */
    char *rb;
    uint32_t rb_off, rb_len, rb_cap;
    zl_sockaddr_t remote;
    uint64_t connected_ms;
    uint64_t msgs_sent;
    uint64_t msgs_received;
} zl_conn_t;

typedef struct zl_listener {
    int fd;        /* -1 = slot unused */
    uint32_t serial;
    int paused;    /* out of the epoll set after EMFILE */
    uint32_t timer_id;
    struct ssl_ctx_st *tls; /* tls:// listeners: the server context */
    int ws;                 /* ws:// or wss:// */
    char *ws_path;          /* ws: the path requests must name */
    char *given;   /* endpoint as passed to bind */
    char real[ZL_ADDR_MAX]; /* with the actual address and port */
} zl_listener_t;

/* owners of timers (zl_timer_t.kind) */
enum { ZTM_CONN = 1, ZTM_LISTENER = 2 };

typedef struct zl_event {
    uint32_t id;
    uint8_t byte;
    int err; /* a disconnect's cause (ZLINK_STREAM_EVENT_ERRNO) */
} zl_event_t;

typedef struct zl_ready {
    uint32_t idx;
    uint32_t serial;
} zl_ready_t;

typedef struct zl_htent {
    uint32_t id;
    uint32_t idx1; /* slot index + 1; 0 = empty */
} zl_htent_t;

enum { ZRX_NONE = 0, ZRX_EVENT, ZRX_DATA };

struct zl_monq;

/* CONNECT_ROUTING_ID: a write-only 4-byte id that one connect consumes */
typedef struct zl_rid_opt {
    uint32_t id;
    int set;
} zl_rid_opt_t;

/* What zlink_setsockopt sets and zlink_getsockopt reads (stream_opts.c
 * describes each field once, with its option id, type and range), apart
 * from the engine's state. */
typedef struct zl_stream_opts {
    int type; /* ZLINK_STREAM, read-only */
    int sndhwm, rcvhwm, sndbuf, rcvbuf, backlog, linger;
    int rcvtimeo, sndtimeo;
    int reconnect_ivl, reconnect_ivl_max, connect_timeout;
    int ka, ka_cnt, ka_idle, ka_intvl;
    int ipv6, tos, tcp_maxrt, router_mandatory, immediate, handshake_ivl;
    int64_t maxmsgsize;
    int64_t rcvbudget; /* ZLINK_STREAM_RCVBUDGET: -1 none */
    int framing; /* ZLINK_STREAM_FRAMING_* */
    int tls_verify, tls_require_client_cert, tls_trust_system;
    char tls_cert[ZL_TLS_STR], tls_key[ZL_TLS_STR], tls_ca[ZL_TLS_STR];
    char tls_hostname[ZL_TLS_STR], tls_password[ZL_TLS_STR];
    zl_rid_opt_t connect_rid; /* for the next connect only */
    /* ROUTING_ID: the socket's own id as zlink 1.3 gives every socket (16
     * random bytes unless set; STREAM puts it on no wire) */
    unsigned char routing_id[255];
    uint8_t routing_id_len;
    char last_endpoint[ZL_ADDR_MAX];
} zl_stream_opts_t;

typedef struct zl_stream {
    zl_handle_t *handle;
    zl_ctx_t *ctx;

    zl_stream_opts_t opts;

    /* connection slots */
    zl_conn_t **conns;
    uint32_t nslots, slots_cap;
    uint32_t *free_idx;
    uint32_t nfree;

    /* routing id -> slot */
    zl_htent_t *ht;
    uint32_t ht_cap, ht_count, ht_shift;

    /* established connections, dense, for peer introspection */
    uint32_t *peers;
    uint32_t npeers, peers_cap;

    /* 0x01/0x00 notifications not yet received by the application */
    zl_event_t *evq;
    uint32_t evq_head, evq_count, evq_cap;

    /* readable connections from the last epoll batches */
    zl_ready_t *rdy;
    uint32_t rdy_head, rdy_count, rdy_cap;

    /* two-frame state of recv and send */
    int rx_state;
    uint32_t rx_id;
    uint8_t rx_byte;
    int rx_err; /* ZRX_EVENT: the event's cause */
    uint32_t rx_idx, rx_serial;
    /* about the payload frame received last: ZLINK_STREAM_EVENT (1, 0, -1
     * for data) and ZLINK_STREAM_EVENT_ERRNO */
    int last_event, last_errno;
    /* LENGTH and RAW: scratch[hold_off, hold_len) are received bytes of
     * the connection hold_idx/hold_serial not delivered yet (starting with
     * something deliverable); they are delivered before anything else is
     * read into the scratch */
    int hold;
    uint32_t hold_idx, hold_serial;
    uint32_t hold_off, hold_len;
    int tx_pending;
    uint32_t tx_idx, tx_serial;

    zl_listener_t *lst;
    uint32_t nlst, lst_cap;
    zl_endpoint_t *eps;
    uint32_t nqueued; /* connections with a non-empty send queue */
    int64_t rx_held;  /* bytes of every connection's rb (its capacity) */
    char *scratch; /* ZL_SCRATCH_SIZE bytes, the reads of LENGTH and RAW */
    /* the bytes of one payload being put together for a single write: ws
     * frames (stream_ws.c), and a length header with its body on tls:// */
    char *txbuf;
    size_t txbuf_len, txbuf_cap;

    /* the last failed TLS handshake (ZLINK_TLS_LAST_ERROR and
     * ZLINK_TLS_LAST_VERIFY_RESULT, set by stream_tls.c) */
    char tls_last_error[256];
    int tls_last_verify;

    /* monitoring */
    int mon_mask; /* union of all the masks below */
    struct zl_monq **monqs;
    int nmonq, monq_cap;
    void *mon_pair;
    int mon_pair_events;

    zl_loop_t loop; /* epoll set, wake-up, timers (stream_loop.c) */
} zl_stream_t;

static inline int zl_stream_check_live(const zl_stream_t *s)
{
    if (zl_ctx_is_shutdown(s->ctx))
        return zl_fail(ETERM);
    return 0;
}

/* The STREAM kind's calls (zl_stream_ops, stream.c), in the files that
 * implement them. */
/* stream_opts.c */
void zl_stream_opts_init(zl_stream_opts_t *o);
int zl_stream_setsockopt(zl_handle_t *h, int opt, const void *v, size_t len);
int zl_stream_getsockopt(zl_handle_t *h, int opt, void *v, size_t *len);

/* stream_proto.c */
int zl_stream_send(zl_handle_t *h, const void *buf, size_t len, int flags);
int zl_stream_recv(zl_handle_t *h, void *buf, size_t len, int flags);
int zl_stream_msg_send(zl_handle_t *h, zmq_msg_t *msg, int flags);
int zl_stream_msg_recv(zl_handle_t *h, zmq_msg_t *msg, int flags);
void zl_stream_poll_item(zl_handle_t *h, short events, zmq_pollitem_t *zi);
int zl_stream_poll_check(zl_handle_t *h, short events);
/* POLLIN/POLLOUT of s after a non-blocking pump (>= 0), or -1 (ETERM) */
int zl_stream_readiness(zl_stream_t *s, short events);

/* stream_monitor.c */
int zl_stream_monitor(zl_handle_t *h, const char *ep, int events);
void *zl_stream_monitor_open(zl_handle_t *h, int events);

/* stream_conn.c */
extern const zl_peer_ops_t zl_stream_peer_ops;

/* stream_addr.c; *kind (may be NULL when only tcp:// is wanted) is set to
 * the ZL_K_* bits of the endpoint (tls 1, ws 2, wss 3). A ws endpoint's
 * path ("/..." after host:port) is not part of the address; see
 * zl_ws_split. */
int zl_parse_endpoint(const char *ep, int for_bind, int ipv6, int *kind,
                      zl_sockaddr_t *out, socklen_t *outlen);
void zl_format_addr(const zl_sockaddr_t *a, char *buf, size_t n);
/* the same as "tls://..." for a TLS connection or listener */
void zl_format_addr_tls(const zl_sockaddr_t *a, int tls, char *buf, size_t n);
/* "ws://" or "wss://" (kind's ZL_K_TLS) address, path appended if given */
void zl_format_addr_ws(const zl_sockaddr_t *a, int kind, const char *path,
                       char *buf, size_t n);
/* A ws endpoint "ws://host:port/path": *hostport_len is the length of
 * host:port, the return value the path ("/" when none is given). */
const char *zl_ws_split(const char *ep, size_t *hostport_len);

/* stream_tls.c: tls:// over OpenSSL, driven by the same pump. Without
 * OpenSSL at build time every function fails or does nothing and tls://
 * endpoints are EPROTONOSUPPORT. */
int zl_tls_available(void);
/* A server (bind) or client (connect) context from the socket's TLS options
 * as they are now, or NULL with EINVAL (unreadable file, key mismatch, a
 * server without a certificate, a verifying client with nothing to verify
 * against). The caller owns the reference. */
struct ssl_ctx_st *zl_tls_ctx_new(zl_stream_t *s, int server);
void zl_tls_ctx_free(struct ssl_ctx_st *ctx);
/* The same from options given as a zl_tls_conf_t (zmp_transport.h); the
 * ZMP socket types' tls:// and wss:// use it too (zmp_transport.c). */
struct ssl_ctx_st *zl_tls_ctx_build(const zl_tls_conf_t *conf, int server);
/* A session on fd, through the library's socket BIO (MSG_NOSIGNAL); a
 * client checks host (SNI when a name). NULL with errno. */
struct ssl_st *zl_tls_ssl_new(struct ssl_ctx_st *ctx, int fd, int server,
                              const char *host);
/* A failed handshake (e: SSL_get_error's): its reason (for
 * ZLINK_TLS_LAST_ERROR) into why, the verification result into *verify;
 * returns the errno: EACCES a certificate, EPROTO the protocol, else the
 * connection's error (ECONNRESET when none). Clears OpenSSL's errors. */
int zl_tls_failure(struct ssl_st *ssl, int e, char *why, size_t why_size,
                   int *verify);
/* A failed SSL_read/SSL_write (e from SSL_get_error, sys the errno of the
 * call): n > 0 never; 0 the end of the stream; -1 with errno (EAGAIN when
 * OpenSSL waits). *dead: the session is unusable. */
ssize_t zl_tls_io_result(int e, int sys, int *dead);
/* Starts the handshake of c on its connected descriptor (accepted through a
 * tls:// listener, or connected to a tls:// endpoint). 0, or -1 with errno. */
int zl_tls_start(zl_stream_t *s, zl_conn_t *c, struct ssl_ctx_st *ctx,
                 int server, const char *host);
/* One step of the handshake. Returns 1 when it completed, 0 while it waits
 * for the descriptor (its interest set to what OpenSSL wants), or -1 when
 * it failed: *err is the errno reported (EACCES a rejected certificate,
 * EPROTO a TLS protocol error, ECONNRESET the peer went away) and *event
 * the monitor event (ZLINK_EVENT_HANDSHAKE_FAILED_*). */
int zl_tls_handshake(zl_stream_t *s, zl_conn_t *c, int *err, uint32_t *event);
/* Data: like recv()/send() with MSG_DONTWAIT (n > 0; 0 = end of stream on
 * recv; -1 with errno, EAGAIN when OpenSSL waits for the descriptor). */
ssize_t zl_tls_recv(zl_conn_t *c, void *buf, size_t len);
ssize_t zl_tls_send(zl_conn_t *c, const void *buf, size_t len);
/* 1 when bytes wait inside OpenSSL, which epoll cannot see: decrypted ones,
 * or records read ahead and not decrypted yet */
int zl_tls_pending(zl_conn_t *c);
/* Sends close_notify when graceful and the session is healthy, then frees
 * the session. */
void zl_tls_end(zl_conn_t *c, int graceful);

/* stream_ws.c: ws:// and wss:// (RFC 6455) over the same connections: the
 * HTTP/1.1 upgrade and the frames, both written there. Without OpenSSL at
 * build time, zl_ws_available() is 0 and ws endpoints are EPROTONOSUPPORT. */
int zl_ws_available(void);
/* The upgrade's texts and checks, shared with the ZMP socket types' ws://
 * (zmp_transport.c). A client's request for path with Host host (its
 * expected Sec-WebSocket-Accept into accept, 29 bytes), 0 or -1 with errno;
 * a server's answer with status (101 with accept, 400, 404, 431). */
int zl_ws_request_text(const char *path, const char *host, char *accept,
                       char *buf, size_t n);
void zl_ws_response_text(int status, const char *accept, char *buf, size_t n);
/* The status a server answers the request head (head to end, the empty
 * line's start) with, for a listener of want_path; on 101 accept is set. */
int zl_ws_judge_request(const char *want_path, const char *head,
                        const char *end, char *accept);
/* Whether a response head accepts the request whose accept is want_accept. */
int zl_ws_judge_response(const char *want_accept, const char *head,
                         const char *end);
/* Gives c its ws state (server: an accepted connection whose request must
 * name path; client: host and path go into the request). 0, or -1 with
 * errno. */
int zl_ws_start(zl_stream_t *s, zl_conn_t *c, int server, const char *path,
                const char *host);
/* One step of the upgrade, after TLS when wss. Returns 1 done, 0 waiting
 * (interest set), -1 failed with *err and *event as zl_tls_handshake. */
int zl_ws_handshake(zl_stream_t *s, zl_conn_t *c, int *err, uint32_t *event);
/* Payload bytes of the frames received, like recv(): 0 at the end (a close
 * frame or the end of the stream), -1 with EPROTO on a protocol error. */
ssize_t zl_ws_recv(zl_conn_t *c, void *buf, size_t len);
/* 1 when received bytes wait inside the ws layer (epoll cannot see them) */
int zl_ws_pending(const zl_conn_t *c);
/* One frame (the client masks it) in s->txbuf whose payload is the plen
 * bytes at pre (may be 0) followed by the len bytes at data; the return
 * value points at it, NULL on ENOMEM. */
const char *zl_ws_frame(zl_stream_t *s, zl_conn_t *c, int opcode,
                        const void *pre, size_t plen, const void *data,
                        size_t len, size_t *out_len);
/* A close frame with this status, queued behind what is queued already */
int zl_ws_queue_close(zl_stream_t *s, zl_conn_t *c, unsigned status);
/* A close frame (1000) sent at once if none went yet and it can go (no
 * frame half out; wss: nothing queued); for a local close without the
 * request path */
void zl_ws_goodbye(zl_stream_t *s, zl_conn_t *c);
/* The same with another status, for a connection being failed (1002 a
 * protocol error, 1007 text that is not UTF-8, 1009 a length over
 * MAXMSGSIZE) */
void zl_ws_fail(zl_stream_t *s, zl_conn_t *c, unsigned status);
/* ZLINK_STREAM_DROP (zl_conn_drop): a close frame with code and the reason
 * "slow consumer", queued behind what the caller kept of the queue. 0, or
 * -1 (no close frame can go: close at once). */
int zl_ws_drop_close(zl_stream_t *s, zl_conn_t *c, unsigned code);
/* 1 when the peer's close frame was read and our reply is still to be
 * queued (the stream layer queues it behind the accepted bytes,
 * zl_conn_peer_closed) */
int zl_ws_peer_closed(const zl_conn_t *c);
/* Queues that reply: the peer's status echoed (an empty close for an empty
 * one). 0, or -1 (ENOMEM). */
int zl_ws_queue_reply(zl_stream_t *s, zl_conn_t *c);
/* frees c's ws state */
void zl_ws_end(zl_conn_t *c);
/* the monitor/peer form of c's address: ws://, wss://, or tcp:// */
void zl_format_conn_addr(const zl_conn_t *c, const zl_sockaddr_t *a, int tls,
                         char *buf, size_t n);

/* The transport under a connection: TCP, or the TLS session on it. */
static inline ssize_t zl_raw_recv(zl_conn_t *c, void *buf, size_t len)
{
    if (c->ssl)
        return zl_tls_recv(c, buf, len);
    return recv(c->fd, buf, len, 0);
}

static inline ssize_t zl_raw_send(zl_conn_t *c, const void *buf, size_t len)
{
    if (c->ssl)
        return zl_tls_send(c, buf, len);
    return send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Payload bytes in: through the ws layer for ws connections. */
static inline ssize_t zl_conn_recv(zl_conn_t *c, void *buf, size_t len)
{
    if (c->ws)
        return zl_ws_recv(c, buf, len);
    return zl_raw_recv(c, buf, len);
}

/* Bytes out: ws connections send frames zl_ws_frame made (the send queue
 * holds frames, so a frame whose start went out is completed first). */
static inline ssize_t zl_conn_send(zl_conn_t *c, const void *buf, size_t len)
{
    return zl_raw_send(c, buf, len);
}

/* 1 when input waits where epoll cannot see it (TLS or ws buffers) */
static inline int zl_conn_pending(const zl_conn_t *c)
{
    return (c->ws && zl_ws_pending(c)) || zl_tls_pending((zl_conn_t *)c);
}
socklen_t zl_addr_len(const zl_sockaddr_t *a);

/* stream_loop.c: the pump */
int zl_pump(zl_stream_t *s, int timeout_ms);
void zl_timers_run(zl_stream_t *s);

/* stream_proto.c: what recv delivers next */
void zl_evq_push(zl_stream_t *s, uint32_t id, uint8_t byte, int err);
void zl_ready_push(zl_stream_t *s, zl_conn_t *c);
/* c's 0x00 (cause err): queued, or, when c's id frame was received and
 * its payload was not yet, that payload */
void zl_deliver_end(zl_stream_t *s, zl_conn_t *c, int err);
/* s->txbuf with room for need bytes, or NULL (ENOMEM) */
char *zl_txbuf(zl_stream_t *s, size_t need);
/* forgets c's undelivered input (c is being released) */
void zl_rx_reset(zl_stream_t *s, zl_conn_t *c);

/* stream_conn.c: the pump's handlers, for the connections and listeners
 * the lookups below found (stale events and cancelled timers are dropped
 * before) */
void zl_conn_on_event(zl_stream_t *s, zl_conn_t *c, uint32_t events);
void zl_conn_on_timer(zl_stream_t *s, zl_conn_t *c);
void zl_listener_on_event(zl_stream_t *s, uint32_t li);
void zl_listener_on_timer(zl_stream_t *s, uint32_t li);

/* stream_conn.c */
zl_conn_t *zl_conn_alloc(zl_stream_t *s, int have_id, uint32_t id);
void zl_conn_release(zl_stream_t *s, zl_conn_t *c);
void zl_endpoint_free(zl_endpoint_t *ep);
int zl_conn_start_connect(zl_stream_t *s, zl_conn_t *c, int first);
void zl_conn_close(zl_stream_t *s, zl_conn_t *c, int reason, int err);
void zl_conn_request_close(zl_stream_t *s, zl_conn_t *c);
int zl_conn_flush(zl_stream_t *s, zl_conn_t *c);
int zl_conn_queue(zl_stream_t *s, zl_conn_t *c, const void *data, size_t len);
/* One message of alen bytes at a followed by blen bytes at b */
int zl_conn_queue2(zl_stream_t *s, zl_conn_t *c, const void *a, size_t alen,
                   const void *b, size_t blen);
/* The same, ahead of every message not started yet (ws pongs); an
 * unstarted message at the front whose first byte is lead (the pong to an
 * earlier ping) is replaced, so at most one such message waits and pongs
 * still go out in the order of their pings */
int zl_conn_queue_front(zl_stream_t *s, zl_conn_t *c, const void *data,
                        size_t len, uint8_t lead);
/* ws: the peer's close frame was read; the bytes accepted before it are
 * flushed, then our close reply, then TCP closes, bounded by LINGER when
 * above 0 (0: ZL_WS_DROP_MS, as a drop; -1: ZL_WS_STALL_MS without
 * progress). The 0x00 comes then, with 0 when all went out, else the errno
 * of why not (ETIMEDOUT, ECONNRESET). */
void zl_conn_peer_closed(zl_stream_t *s, zl_conn_t *c);
#define ZL_WS_STALL_MS 30000
/* ZLINK_STREAM_DROP: the messages not started yet are dropped; ws: a close
 * frame with code goes behind the rest of a frame that started, and the
 * TCP connection closes once it went (bounded by LINGER when > 0, else
 * ZL_WS_DROP_MS); other transports close at once. The 0x00's cause is
 * ENOBUFS; CLOSE_FAILED when the close frame could not go out. */
void zl_conn_drop(zl_stream_t *s, zl_conn_t *c, unsigned code);
#define ZL_WS_DROP_MS 10000
/* A local close that keeps what the connection was given (LINGER not 0;
 * LINGER 0 closes at once): the queue goes out, then TCP is half-closed (wss: close_notify first; ws
 * queues its close frame 1000 behind the data) and what the peer still
 * sends is read and discarded until the peer's end, so the kernel never
 * answers unread input with a reset that would discard our last bytes on
 * their way. Bounded by LINGER when above 0 (a timer when timer is set;
 * zlink_close bounds it itself); with LINGER -1 the half-close also ends
 * once the peer acknowledged every byte and our FIN (SIOCOUTQ 0, checked
 * every ZL_SHUT_POLL_MS). With LINGER -1 a connection with nothing queued,
 * unacknowledged or unread closes at once, and zlink_close passes only
 * such connections at any LINGER. The 0x00's cause is 0 when everything went out,
 * ETIMEDOUT when LINGER ran out first (also CLOSE_FAILED), ECONNRESET when
 * the peer reset meanwhile. 1 while the connection waits, 0 once closed. */
int zl_conn_linger(zl_stream_t *s, zl_conn_t *c, int timer);
#define ZL_SHUT_POLL_MS 10
/* Bytes of ours the kernel still holds for c (not sent, or not yet
 * acknowledged by the peer; a FIN counts one): SIOCOUTQ, 0 without fd */
int zl_conn_unacked(const zl_conn_t *c);
/* Bytes the peer sent that the kernel holds unread (SIOCINQ), 0 without fd */
int zl_conn_unread(const zl_conn_t *c);
/* EPOLLOUT interest of c on or off (EPOLLIN always) */
void zl_conn_set_out(zl_stream_t *s, zl_conn_t *c, int want_out);
void zl_setup_fd(zl_stream_t *s, int fd, int family);
int zl_ht_insert(zl_stream_t *s, uint32_t id, uint32_t idx);
void zl_ht_remove(zl_stream_t *s, uint32_t id);

static inline uint32_t zl_ht_hash(const zl_stream_t *s, uint32_t id)
{
    return (uint32_t)(id * 0x9E3779B1u) >> s->ht_shift;
}

static inline zl_conn_t *zl_conn_by_id(zl_stream_t *s, uint32_t id)
{
    if (!s->ht_count)
        return NULL;
    uint32_t mask = s->ht_cap - 1;
    for (uint32_t i = zl_ht_hash(s, id);; i = (i + 1) & mask) {
        uint32_t idx1 = s->ht[i].idx1;
        if (!idx1)
            return NULL;
        if (s->ht[i].id == id)
            return s->conns[idx1 - 1];
    }
}

static inline zl_conn_t *zl_conn_at(zl_stream_t *s, uint32_t idx,
                                    uint32_t serial)
{
    if (idx >= s->nslots)
        return NULL;
    zl_conn_t *c = s->conns[idx];
    return (c->serial == serial && c->state != ZC_FREE) ? c : NULL;
}

/* The pump's lookups: the connection or listener an epoll tag (slot index,
 * 24-bit serial) or a timer (index, id) still refers to; NULL or 0 for an
 * event of a recycled slot or a timer its owner no longer holds. */
static inline zl_conn_t *zl_conn_of_event(zl_stream_t *s, uint32_t idx,
                                          uint32_t serial)
{
    if (idx >= s->nslots)
        return NULL;
    zl_conn_t *c = s->conns[idx];
    if (c->state == ZC_FREE || (c->serial & 0xffffffu) != serial)
        return NULL;
    return c;
}

static inline zl_conn_t *zl_conn_of_timer(zl_stream_t *s, uint32_t idx,
                                          uint32_t timer_id)
{
    if (idx >= s->nslots)
        return NULL;
    zl_conn_t *c = s->conns[idx];
    return (c->state != ZC_FREE && c->timer_id == timer_id) ? c : NULL;
}

static inline int zl_listener_of_event(const zl_stream_t *s, uint32_t li,
                                       uint32_t serial)
{
    return li < s->nlst && s->lst[li].fd >= 0 &&
           (s->lst[li].serial & 0xffffffu) == serial;
}

static inline int zl_listener_of_timer(const zl_stream_t *s, uint32_t li,
                                       uint32_t timer_id)
{
    return li < s->nlst && s->lst[li].fd >= 0 &&
           s->lst[li].timer_id == timer_id;
}

static inline void zl_put_be32(void *p, uint32_t v)
{
    unsigned char *b = p;
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

static inline uint32_t zl_get_be32(const void *p)
{
    const unsigned char *b = p;
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) |
           ((uint32_t)b[2] << 8) | b[3];
}

/* stream_monitor.c: event sinks of a STREAM socket */
void zl_emit_slow(zl_stream_t *s, uint32_t event, uint64_t value,
                  const zl_conn_t *c, const char *local, const char *remote);
static inline void zl_emit(zl_stream_t *s, uint32_t event, uint64_t value,
                           const zl_conn_t *c, const char *local,
                           const char *remote)
{
    if (s->mon_mask & (int)event)
        zl_emit_slow(s, event, value, c, local, remote);
}
void zl_stream_monitors_stop(zl_stream_t *s);

#endif
