/*
 * zlink.h - public C ABI of NetZlink's native library (libzlink.so).
 *
 * The declarations follow the zlink ABI contract (docs/zlink-abi.md in the repository):
 * libzmq's API with the zmq_ prefix replaced by zlink_, a reduced set of
 * socket types, and the zlink additions (monitor handles, peer
 * introspection). Numeric values match zlink/libzmq so that a real zlink
 * build can be dropped in place of this library.
 */
#ifndef ZLINK_H_INCLUDED
#define ZLINK_H_INCLUDED

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined _WIN32
#  if defined ZLINK_BUILDING
#    define ZLINK_EXPORT __declspec(dllexport)
#  else
#    define ZLINK_EXPORT __declspec(dllimport)
#  endif
#elif defined __GNUC__ && __GNUC__ >= 4
#  define ZLINK_EXPORT __attribute__((visibility("default")))
#else
#  define ZLINK_EXPORT
#endif

/* The zlink release whose ABI, wire (ZMP v1, STREAM framing) and behaviour
 * this library implements: what zlink_version reports. */
#define ZLINK_VERSION_MAJOR 1
#define ZLINK_VERSION_MINOR 3
#define ZLINK_VERSION_PATCH 0
#define ZLINK_MAKE_VERSION(major, minor, patch)                                \
    ((major) * 10000 + (minor) * 100 + (patch))
#define ZLINK_VERSION                                                          \
    ZLINK_MAKE_VERSION(ZLINK_VERSION_MAJOR, ZLINK_VERSION_MINOR,               \
                       ZLINK_VERSION_PATCH)

/* Version of this library itself (NetZlink native); zlink_has("netzlink")
 * answers 1 in it, 0 in a real zlink build. */
#define ZLINK_NATIVE_VERSION_MAJOR 0
#define ZLINK_NATIVE_VERSION_MINOR 2
#define ZLINK_NATIVE_VERSION_PATCH 0

/******************************************************************************/
/* Errors                                                                     */
/******************************************************************************/
#define ZLINK_HAUSNUMERO 156384712

/* The platform values are used where the platform defines them (Linux does
 * for all of these); the fallbacks exist only for exotic platforms. */
#ifndef ENOTSUP
#define ENOTSUP (ZLINK_HAUSNUMERO + 1)
#endif
#ifndef EPROTONOSUPPORT
#define EPROTONOSUPPORT (ZLINK_HAUSNUMERO + 2)
#endif
#ifndef ENOBUFS
#define ENOBUFS (ZLINK_HAUSNUMERO + 3)
#endif
#ifndef ENETDOWN
#define ENETDOWN (ZLINK_HAUSNUMERO + 4)
#endif
#ifndef EADDRINUSE
#define EADDRINUSE (ZLINK_HAUSNUMERO + 5)
#endif
#ifndef EADDRNOTAVAIL
#define EADDRNOTAVAIL (ZLINK_HAUSNUMERO + 6)
#endif
#ifndef ECONNREFUSED
#define ECONNREFUSED (ZLINK_HAUSNUMERO + 7)
#endif
#ifndef EINPROGRESS
#define EINPROGRESS (ZLINK_HAUSNUMERO + 8)
#endif
#ifndef ENOTSOCK
#define ENOTSOCK (ZLINK_HAUSNUMERO + 9)
#endif
#ifndef EMSGSIZE
#define EMSGSIZE (ZLINK_HAUSNUMERO + 10)
#endif
#ifndef EAFNOSUPPORT
#define EAFNOSUPPORT (ZLINK_HAUSNUMERO + 11)
#endif
#ifndef ENETUNREACH
#define ENETUNREACH (ZLINK_HAUSNUMERO + 12)
#endif
#ifndef ECONNABORTED
#define ECONNABORTED (ZLINK_HAUSNUMERO + 13)
#endif
#ifndef ECONNRESET
#define ECONNRESET (ZLINK_HAUSNUMERO + 14)
#endif
#ifndef ENOTCONN
#define ENOTCONN (ZLINK_HAUSNUMERO + 15)
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT (ZLINK_HAUSNUMERO + 16)
#endif
#ifndef EHOSTUNREACH
#define EHOSTUNREACH (ZLINK_HAUSNUMERO + 17)
#endif
#ifndef ENETRESET
#define ENETRESET (ZLINK_HAUSNUMERO + 18)
#endif

/* Library-specific codes; identical to libzmq's numbering. Guarded so this
 * header can coexist with zmq.h when zmq.h is included first. */
#define ZLINK_EFSM (ZLINK_HAUSNUMERO + 51)
#define ZLINK_ENOCOMPATPROTO (ZLINK_HAUSNUMERO + 52)
#define ZLINK_ETERM (ZLINK_HAUSNUMERO + 53)
#define ZLINK_EMTHREAD (ZLINK_HAUSNUMERO + 54)
#ifndef EFSM
#define EFSM ZLINK_EFSM
#endif
#ifndef ENOCOMPATPROTO
#define ENOCOMPATPROTO ZLINK_ENOCOMPATPROTO
#endif
#ifndef ETERM
#define ETERM ZLINK_ETERM
#endif
#ifndef EMTHREAD
#define EMTHREAD ZLINK_EMTHREAD
#endif

ZLINK_EXPORT int zlink_errno(void);
ZLINK_EXPORT const char *zlink_strerror(int errnum);
ZLINK_EXPORT void zlink_version(int *major, int *minor, int *patch);
ZLINK_EXPORT int zlink_has(const char *capability);

/******************************************************************************/
/* Context                                                                    */
/******************************************************************************/
#define ZLINK_IO_THREADS 1
#define ZLINK_MAX_SOCKETS 2
#define ZLINK_SOCKET_LIMIT 3
#define ZLINK_THREAD_PRIORITY 3
#define ZLINK_THREAD_SCHED_POLICY 4
#define ZLINK_MAX_MSGSZ 5
#define ZLINK_MSG_T_SIZE 6
#define ZLINK_THREAD_AFFINITY_CPU_ADD 7
#define ZLINK_THREAD_AFFINITY_CPU_REMOVE 8
#define ZLINK_THREAD_NAME_PREFIX 9
/* NetZlink: the I/O backend of STREAM sockets made after it is set (the
 * environment variable ZLINK_IO_BACKEND=epoll|io_uring applies when it is
 * not); zlink_ctx_get gives the backend a new socket runs on, after the
 * fallback to epoll where io_uring is refused */
#define ZLINK_IO_BACKEND 10
#define ZLINK_IO_BACKEND_DEFAULT 0
#define ZLINK_IO_BACKEND_EPOLL 1
#define ZLINK_IO_BACKEND_IO_URING 2

#define ZLINK_IO_THREADS_DFLT 2
#define ZLINK_MAX_SOCKETS_DFLT 1023
#define ZLINK_THREAD_PRIORITY_DFLT -1
#define ZLINK_THREAD_SCHED_POLICY_DFLT -1

ZLINK_EXPORT void *zlink_ctx_new(void);
ZLINK_EXPORT int zlink_ctx_term(void *context);
ZLINK_EXPORT int zlink_ctx_shutdown(void *context);
ZLINK_EXPORT int zlink_ctx_set(void *context, int option, int optval);
ZLINK_EXPORT int zlink_ctx_get(void *context, int option);

/******************************************************************************/
/* Messages                                                                   */
/******************************************************************************/
typedef struct zlink_msg_t {
#if defined __GNUC__
    unsigned char _[64] __attribute__((aligned(sizeof(void *))));
#elif defined _MSC_VER
    __declspec(align(8)) unsigned char _[64];
#else
    unsigned char _[64];
#endif
} zlink_msg_t;

typedef struct zlink_routing_id_t {
    uint8_t size;
    uint8_t data[255];
} zlink_routing_id_t;

typedef void(zlink_free_fn)(void *data, void *hint);

#define ZLINK_MORE 1
#define ZLINK_SHARED 3

ZLINK_EXPORT int zlink_msg_init(zlink_msg_t *msg);
ZLINK_EXPORT int zlink_msg_init_size(zlink_msg_t *msg, size_t size);
ZLINK_EXPORT int zlink_msg_init_data(zlink_msg_t *msg, void *data, size_t size,
                                     zlink_free_fn *ffn, void *hint);
ZLINK_EXPORT int zlink_msg_send(zlink_msg_t *msg, void *socket, int flags);
ZLINK_EXPORT int zlink_msg_recv(zlink_msg_t *msg, void *socket, int flags);
ZLINK_EXPORT int zlink_msg_close(zlink_msg_t *msg);
ZLINK_EXPORT int zlink_msg_move(zlink_msg_t *dest, zlink_msg_t *src);
ZLINK_EXPORT int zlink_msg_copy(zlink_msg_t *dest, zlink_msg_t *src);
ZLINK_EXPORT void *zlink_msg_data(zlink_msg_t *msg);
ZLINK_EXPORT size_t zlink_msg_size(const zlink_msg_t *msg);
ZLINK_EXPORT int zlink_msg_more(const zlink_msg_t *msg);
ZLINK_EXPORT int zlink_msg_get(const zlink_msg_t *msg, int property);
ZLINK_EXPORT int zlink_msg_set(zlink_msg_t *msg, int property, int optval);
ZLINK_EXPORT const char *zlink_msg_gets(const zlink_msg_t *msg,
                                        const char *property);
ZLINK_EXPORT void zlink_msgv_close(zlink_msg_t *parts, size_t count);

/******************************************************************************/
/* Sockets                                                                    */
/******************************************************************************/
#define ZLINK_PAIR 0
#define ZLINK_PUB 1
#define ZLINK_SUB 2
#define ZLINK_DEALER 5
#define ZLINK_ROUTER 6
#define ZLINK_XPUB 9
#define ZLINK_XSUB 10
#define ZLINK_STREAM 11

#define ZLINK_AFFINITY 4
#define ZLINK_ROUTING_ID 5
#define ZLINK_SUBSCRIBE 6
#define ZLINK_UNSUBSCRIBE 7
#define ZLINK_RATE 8
#define ZLINK_RECOVERY_IVL 9
#define ZLINK_SNDBUF 11
#define ZLINK_RCVBUF 12
#define ZLINK_RCVMORE 13
#define ZLINK_FD 14
#define ZLINK_EVENTS 15
#define ZLINK_TYPE 16
#define ZLINK_LINGER 17
#define ZLINK_RECONNECT_IVL 18
#define ZLINK_BACKLOG 19
#define ZLINK_RECONNECT_IVL_MAX 21
#define ZLINK_MAXMSGSIZE 22
#define ZLINK_SNDHWM 23
#define ZLINK_RCVHWM 24
#define ZLINK_MULTICAST_HOPS 25
#define ZLINK_RCVTIMEO 27
#define ZLINK_SNDTIMEO 28
#define ZLINK_LAST_ENDPOINT 32
#define ZLINK_ROUTER_MANDATORY 33
#define ZLINK_TCP_KEEPALIVE 34
#define ZLINK_TCP_KEEPALIVE_CNT 35
#define ZLINK_TCP_KEEPALIVE_IDLE 36
#define ZLINK_TCP_KEEPALIVE_INTVL 37
#define ZLINK_IMMEDIATE 39
#define ZLINK_XPUB_VERBOSE 40
#define ZLINK_IPV6 42
#define ZLINK_PROBE_ROUTER 51
#define ZLINK_CONFLATE 54
#define ZLINK_ROUTER_HANDOVER 56
#define ZLINK_TOS 57
#define ZLINK_CONNECT_ROUTING_ID 61
#define ZLINK_HANDSHAKE_IVL 66
#define ZLINK_XPUB_NODROP 69
#define ZLINK_BLOCKY 70
#define ZLINK_XPUB_MANUAL 71
#define ZLINK_XPUB_WELCOME_MSG 72
#define ZLINK_INVERT_MATCHING 74
#define ZLINK_HEARTBEAT_IVL 75
#define ZLINK_HEARTBEAT_TTL 76
#define ZLINK_HEARTBEAT_TIMEOUT 77
#define ZLINK_XPUB_VERBOSER 78
#define ZLINK_CONNECT_TIMEOUT 79
#define ZLINK_TCP_MAXRT 80
#define ZLINK_USE_FD 89
#define ZLINK_BINDTODEVICE 92
#define ZLINK_ONLY_FIRST_SUBSCRIBE 108
#define ZLINK_TOPICS_COUNT 116

/* zlink-only options. NetZlink's library accepts the TLS ones on STREAM
 * sockets of a build with TLS (EINVAL elsewhere); ZMP_METADATA is EINVAL. */
#define ZLINK_TLS_CERT 95
#define ZLINK_TLS_KEY 96
#define ZLINK_TLS_CA 97
#define ZLINK_TLS_VERIFY 98
#define ZLINK_TLS_REQUIRE_CLIENT_CERT 99
#define ZLINK_TLS_HOSTNAME 100
#define ZLINK_TLS_TRUST_SYSTEM 101
#define ZLINK_TLS_PASSWORD 102
#define ZLINK_ZMP_METADATA 117

/* NetZlink extensions: STREAM options of NetZlink's library only (a real
 * zlink refuses them with EINVAL); see docs/zlink-abi.md, STREAM sockets.
 *
 * ZLINK_STREAM_FRAMING (int, read/write, settable only while the socket has
 * no listener and no connection): how payloads map to the bytes on the wire.
 *   LENGTH (default, as zlink 1.3): each message is [u32 big-endian body
 *     length][body] on the wire; a payload frame received is one whole body.
 *   RAW: bytes as they arrive, both ways; connection events are zero-length
 *     payloads.
 *   BATCH: the LENGTH wire; a payload frame received carries whole packets,
 *     headers included, as many as fit; a payload sent must be whole packets.
 * ZLINK_STREAM_EVENT (int, read-only): the payload frame received last was a
 *   connect event (1), a disconnect event (0) or data (-1).
 * ZLINK_STREAM_EVENT_ERRNO (int, read-only): the cause of the disconnect
 *   event received last (0: an orderly end or a local close), 0 otherwise. */
#define ZLINK_STREAM_FRAMING 1001
#define ZLINK_STREAM_FRAMING_LENGTH 0
#define ZLINK_STREAM_FRAMING_RAW 1
#define ZLINK_STREAM_FRAMING_BATCH 2
#define ZLINK_STREAM_EVENT 1002
#define ZLINK_STREAM_EVENT_ERRNO 1003
/* ZLINK_TLS_LAST_ERROR (string, read-only, builds with TLS): why the socket's
 *   last failed TLS handshake (tls:// or wss://, either side) failed, as
 *   OpenSSL words it: the certificate verification result ("certificate has
 *   expired", "hostname mismatch", "unable to get local issuer
 *   certificate", ...) when verification failed, else the TLS error's
 *   reason ("tlsv1 alert unknown ca", "unsupported protocol", ...); empty
 *   when no handshake failed yet.
 * ZLINK_TLS_LAST_VERIFY_RESULT (int, read-only, builds with TLS): that
 *   handshake's X509_V_ERR_* verification result (0 when verification was
 *   not what failed, or nothing failed yet). */
#define ZLINK_TLS_LAST_ERROR 1004
#define ZLINK_TLS_LAST_VERIFY_RESULT 1005
/* ZLINK_STREAM_RCVBUDGET (int64, read/write, NetZlink extension): the most
 * bytes the socket's receive buffers (packets not whole yet, LENGTH and
 * BATCH; bytes a RAW receive could not take) may hold for all its
 * connections together; a connection whose buffer would grow past it is
 * dropped, its disconnect's ZLINK_STREAM_EVENT_ERRNO ENOBUFS. -1 (the
 * default): no limit. */
#define ZLINK_STREAM_RCVBUDGET 1006
/* ZLINK_STREAM_DROP (write-only, NetZlink extension): drops a connection
 * that cannot take more output (a slow consumer). The value is its 4-byte
 * routing id (as the id frame), optionally followed by a WebSocket close
 * code, 2 bytes big-endian (default 1008, policy violation; 1000-1003,
 * 1007-1014 or 3000-4999). What the connection's send queue holds and has
 * not started writing is dropped; ws:// and wss:// then send a close frame
 * with that code (reason "slow consumer") behind the rest of a frame that
 * started, then half-close TCP (a FIN, not a reset) and discard what the
 * peer still sends until its side ends (bounded by LINGER when above 0,
 * else 10 s); tcp:// and tls:// close at once. The disconnect's
 * ZLINK_STREAM_EVENT_ERRNO is ENOBUFS, its DISCONNECTED event LOCAL.
 * EHOSTUNREACH when no connected peer has that id (a connection already
 * closing is left to its close). */
#define ZLINK_STREAM_DROP 1007

#define ZLINK_DONTWAIT 1
#define ZLINK_SNDMORE 2

ZLINK_EXPORT void *zlink_socket(void *context, int type);
ZLINK_EXPORT int zlink_close(void *handle);
ZLINK_EXPORT int zlink_setsockopt(void *socket, int option, const void *optval,
                                  size_t optvallen);
ZLINK_EXPORT int zlink_getsockopt(void *socket, int option, void *optval,
                                  size_t *optvallen);
ZLINK_EXPORT int zlink_bind(void *socket, const char *endpoint);
ZLINK_EXPORT int zlink_connect(void *socket, const char *endpoint);
ZLINK_EXPORT int zlink_unbind(void *socket, const char *endpoint);
ZLINK_EXPORT int zlink_disconnect(void *socket, const char *endpoint);
ZLINK_EXPORT int zlink_send(void *socket, const void *buf, size_t len,
                            int flags);
ZLINK_EXPORT int zlink_send_const(void *socket, const void *buf, size_t len,
                                  int flags);
ZLINK_EXPORT int zlink_recv(void *socket, void *buf, size_t len, int flags);

/******************************************************************************/
/* Polling                                                                    */
/******************************************************************************/
#define ZLINK_POLLIN 1
#define ZLINK_POLLOUT 2
#define ZLINK_POLLERR 4
#define ZLINK_POLLPRI 8

typedef struct zlink_pollitem_t {
    void *socket;
#if defined _WIN32
    uintptr_t fd; /* SOCKET */
#else
    int fd;
#endif
    short events;
    short revents;
} zlink_pollitem_t;

#define ZLINK_POLLITEMS_DFLT 16

ZLINK_EXPORT int zlink_poll(zlink_pollitem_t *items, int nitems,
                            long timeout_ms);
ZLINK_EXPORT int zlink_proxy(void *frontend, void *backend, void *capture);

/******************************************************************************/
/* Monitoring                                                                 */
/******************************************************************************/
#define ZLINK_EVENT_CONNECTED 0x0001
#define ZLINK_EVENT_CONNECT_DELAYED 0x0002
#define ZLINK_EVENT_CONNECT_RETRIED 0x0004
#define ZLINK_EVENT_LISTENING 0x0008
#define ZLINK_EVENT_BIND_FAILED 0x0010
#define ZLINK_EVENT_ACCEPTED 0x0020
#define ZLINK_EVENT_ACCEPT_FAILED 0x0040
#define ZLINK_EVENT_CLOSED 0x0080
#define ZLINK_EVENT_CLOSE_FAILED 0x0100
#define ZLINK_EVENT_DISCONNECTED 0x0200
#define ZLINK_EVENT_MONITOR_STOPPED 0x0400
#define ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL 0x0800
#define ZLINK_EVENT_CONNECTION_READY 0x1000
#define ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL 0x2000
#define ZLINK_EVENT_HANDSHAKE_FAILED_AUTH 0x4000
#define ZLINK_EVENT_ALL 0xFFFF

#define ZLINK_DISCONNECT_UNKNOWN 0
#define ZLINK_DISCONNECT_LOCAL 1
#define ZLINK_DISCONNECT_REMOTE 2
#define ZLINK_DISCONNECT_HANDSHAKE_FAILED 3
#define ZLINK_DISCONNECT_TRANSPORT_ERROR 4
#define ZLINK_DISCONNECT_CTX_TERM 5

typedef struct zlink_monitor_event_t {
    uint64_t event;
    uint64_t value;
    zlink_routing_id_t routing_id;
    char local_addr[256];
    char remote_addr[256];
} zlink_monitor_event_t;

ZLINK_EXPORT int zlink_socket_monitor(void *socket, const char *endpoint,
                                      int events);
ZLINK_EXPORT void *zlink_socket_monitor_open(void *socket, int events);
ZLINK_EXPORT int zlink_monitor_recv(void *monitor, zlink_monitor_event_t *event,
                                    int flags);

/******************************************************************************/
/* Peer introspection                                                         */
/******************************************************************************/
typedef struct zlink_peer_info_t {
    zlink_routing_id_t routing_id;
    char remote_addr[256];
    uint64_t connected_time_ms;
    uint64_t msgs_sent;
    uint64_t msgs_received;
} zlink_peer_info_t;

ZLINK_EXPORT int zlink_socket_peer_count(void *socket);
ZLINK_EXPORT int zlink_socket_peer_routing_id(void *socket, int index,
                                              zlink_routing_id_t *out);
ZLINK_EXPORT int zlink_socket_peer_info(void *socket,
                                        const zlink_routing_id_t *routing_id,
                                        zlink_peer_info_t *info);
ZLINK_EXPORT int zlink_socket_peers(void *socket, zlink_peer_info_t *peers,
                                    size_t *count);

/******************************************************************************/
/* Utilities (as zlink 1.3 exports them)                                      */
/******************************************************************************/

/* Atomic counters: inc returns the value before, dec returns 1 while the
 * value after is not 0, else 0. */
ZLINK_EXPORT void *zlink_atomic_counter_new(void);
ZLINK_EXPORT void zlink_atomic_counter_set(void *counter, int value);
ZLINK_EXPORT int zlink_atomic_counter_inc(void *counter);
ZLINK_EXPORT int zlink_atomic_counter_dec(void *counter);
ZLINK_EXPORT int zlink_atomic_counter_value(void *counter);
ZLINK_EXPORT void zlink_atomic_counter_destroy(void **counter_p);

/* Microseconds since start (intermediate); stop also frees the watch. */
ZLINK_EXPORT void *zlink_stopwatch_start(void);
ZLINK_EXPORT unsigned long zlink_stopwatch_intermediate(void *watch);
ZLINK_EXPORT unsigned long zlink_stopwatch_stop(void *watch);

ZLINK_EXPORT void zlink_sleep(int seconds);

/* A thread running func(arg); threadclose waits for it to end, then frees it. */
typedef void(zlink_thread_fn)(void *);
ZLINK_EXPORT void *zlink_threadstart(zlink_thread_fn *func, void *arg);
ZLINK_EXPORT void zlink_threadclose(void *thread);

#ifdef __cplusplus
}
#endif

#endif /* ZLINK_H_INCLUDED */
