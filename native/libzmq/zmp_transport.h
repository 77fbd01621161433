/*
 * zmp_transport.h - the byte transport under a ZMP connection of the libzmq
 * socket types when its endpoint is tls://, ws:// or wss:// (tcp:// and
 * ipc:// need none). Implemented in C by the library itself
 * (native/src/zmp_transport.c), next to the STREAM engine's TLS and
 * WebSocket code it shares, and called by NetZlink's zmp_engine_t in libzmq
 * (native/libzmq/zmp_engine.cpp); libzmq.a and the library's objects are
 * linked into the same libzlink.so.
 *
 * A transport is non-blocking throughout, on the connection's descriptor,
 * and never closes it (libzmq's engine does): zl_zt_handshake first (the
 * TLS handshake, then the WebSocket upgrade), then zl_zt_recv and
 * zl_zt_send. Over ws and wss every zl_zt_send is one binary WebSocket
 * message, and received binary (and continuation) payloads are handed up as
 * one byte stream, as zlink 1.3 carries ZMP over WebSocket.
 */
#ifndef NETZLINK_ZMP_TRANSPORT_H
#define NETZLINK_ZMP_TRANSPORT_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The TLS options of a socket (ZLINK_TLS_*), as STREAM sockets have them. */
typedef struct zl_tls_conf {
    const char *cert, *key, *ca, *password; /* "" when not set */
    int verify;              /* client: verify the server (default 1) */
    int require_client_cert; /* server */
    int trust_system;        /* the system's CAs as well */
} zl_tls_conf_t;

/* An SSL_CTX for a server (bind) or a client (connect) from the options, or
 * NULL with errno: EINVAL for options that cannot make one (a server without
 * a certificate, a verifying client without a CA, unreadable files),
 * EPROTONOSUPPORT in a build without OpenSSL. */
void *zl_zt_tls_ctx(const zl_tls_conf_t *conf, int server);
void zl_zt_tls_ctx_free(void *ctx);

typedef struct zl_zt zl_zt_t;

/* A transport on fd: TLS when tls_ctx (tls_host: the name checked and sent
 * as SNI, NULL for none), WebSocket when ws (ws_path: the request path, a
 * client's request or what a server answers 101 to; ws_host: the client's
 * Host header). NULL with errno on failure. */
zl_zt_t *zl_zt_new(int fd, int server, void *tls_ctx, const char *tls_host,
                   int ws, const char *ws_path, const char *ws_host);
/* Sends close_notify (TLS) and a close frame (ws) when graceful, without
 * waiting, and frees the transport (not the descriptor). */
void zl_zt_free(zl_zt_t *t, int graceful);

/* 1 done, 0 not yet (zl_zt_want_write says whether it waits for output),
 * -1 failed with errno (EACCES: a certificate, EPROTO: the protocol, or the
 * error of the connection); a failure stays. */
int zl_zt_handshake(zl_zt_t *t);
int zl_zt_want_write(const zl_zt_t *t);
/* Why the TLS handshake failed ("" when it did not) and the X509
 * verification result (0 when verification did not fail). */
const char *zl_zt_tls_failure(const zl_zt_t *t, int *verify_result);

/* Bytes of the stream: > 0, 0 at its end, -1 with errno (EAGAIN: none). */
ssize_t zl_zt_recv(zl_zt_t *t, void *buf, size_t len);
/* Takes up to len bytes (0: none now), -1 with errno when the connection
 * failed. Bytes taken and not yet written stay in the transport; see
 * zl_zt_flush. */
ssize_t zl_zt_send(zl_zt_t *t, const void *buf, size_t len);
/* Writes what the transport holds: 1 nothing left, 0 some left, -1 failed. */
int zl_zt_flush(zl_zt_t *t);
/* After a data-path call, TLS waits the other way round (renegotiation, a
 * key update): 1 the last read waits until the socket takes output, 2 the
 * last write waits for input; 0 otherwise (always for ws:// and tcp). */
int zl_zt_crossed(const zl_zt_t *t);
/* The transport holds output (frames, a pong, a close reply). */
int zl_zt_out_pending(const zl_zt_t *t);
/* Input that poll cannot see is held (decrypted TLS records, bytes read with
 * the upgrade, the end of the stream after the bytes before it). */
int zl_zt_in_pending(const zl_zt_t *t);

#ifdef __cplusplus
}
#endif

#endif
