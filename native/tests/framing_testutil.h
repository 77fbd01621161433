/* framing_testutil.h - the framing tests' two halves: a STREAM server that
 * logs every message it receives (fw_srv_t, stepped by the peers while they
 * wait, since the server moves only inside calls made on it), and raw peers
 * for tcp://, tls://, ws:// and wss:// written here: a kernel socket, an
 * OpenSSL client on it, a WebSocket client (frames by hand, ws_testutil.h),
 * all non-blocking so that one thread drives both ends. */
#ifndef ZLINK_FRAMING_TESTUTIL_H
#define ZLINK_FRAMING_TESTUTIL_H

#include "ws_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

enum { FW_TCP, FW_TLS, FW_WS, FW_WSS };
static const char *const fw_names[] = {"tcp", "tls", "ws", "wss"};

/* one message the server received */
typedef struct fw_msg {
    uint32_t id;
    int event; /* ZLINK_STREAM_EVENT: 1, 0, -1 data */
    int err;   /* ZLINK_STREAM_EVENT_ERRNO */
    size_t n;
    unsigned char *data;
} fw_msg_t;

typedef struct fw_srv {
    void *s;
    int framing;
    size_t cap; /* the receive buffer's size (BATCH: grows when too small) */
    unsigned char *buf;
    fw_msg_t *log;
    size_t nlog, logcap;
    long long too_small; /* BATCH payloads retried with a larger buffer */
    char ep[256];
} fw_srv_t;

static tu_tls_t fw_tls;

/* A server of the given framing bound on kind; cap: its receive buffer. */
static inline void fw_srv_open(fw_srv_t *v, void *ctx, int kind, int framing,
                               size_t cap)
{
    memset(v, 0, sizeof *v);
    v->framing = framing;
    v->cap = cap;
    v->buf = malloc(cap);
    CHECK(v->buf);
    tu_tls_framing = framing;
    if (kind == FW_WS || kind == FW_WSS) {
        v->s = tu_ws_server(ctx, &fw_tls, kind == FW_WSS, "/f", v->ep, sizeof v->ep);
    } else if (kind == FW_TLS) {
        v->s = tu_tls_server(ctx, fw_tls.srv_cert, fw_tls.srv_key, v->ep, sizeof v->ep);
    } else {
        v->s = zlink_socket(ctx, ZLINK_STREAM);
        tu_set_framing(v->s, framing);
        CHECK(zlink_bind(v->s, "tcp://127.0.0.1:*") == 0);
        tu_last_endpoint(v->s, v->ep, sizeof v->ep);
    }
    tu_set_int(v->s, ZLINK_LINGER, 0);
}

static inline void fw_srv_close(fw_srv_t *v)
{
    for (size_t i = 0; i < v->nlog; i++)
        free(v->log[i].data);
    free(v->log);
    free(v->buf);
    zlink_close(v->s);
}

/* Receives what the server has (DONTWAIT) into the log; 1 if anything. A
 * BATCH payload whose first packet exceeds the buffer is received again,
 * the same payload frame, with a buffer of the size returned. */
static inline int fw_step(fw_srv_t *v)
{
    int got = 0;
    for (;;) {
        unsigned char idb[4];
        int n = zlink_recv(v->s, idb, sizeof idb, ZLINK_DONTWAIT);
        if (n < 0) {
            CHECK(zlink_errno() == EAGAIN);
            break;
        }
        CHECK(n == 4 && tu_get_int(v->s, ZLINK_RCVMORE) == 1);
        n = zlink_recv(v->s, v->buf, v->cap, 0);
        CHECK(n >= 0);
        while (v->framing == ZLINK_STREAM_FRAMING_BATCH && (size_t)n > v->cap) {
            /* nothing consumed: the same payload again, larger */
            CHECK(tu_get_int(v->s, ZLINK_RCVMORE) == 1);
            v->too_small++;
            v->cap = (size_t)n;
            v->buf = realloc(v->buf, v->cap);
            CHECK(v->buf);
            n = zlink_recv(v->s, v->buf, v->cap, 0);
            CHECK(n >= 0);
        }
        CHECK(tu_get_int(v->s, ZLINK_RCVMORE) == 0);
        if (v->nlog == v->logcap) {
            v->logcap = v->logcap ? v->logcap * 2 : 64;
            v->log = realloc(v->log, v->logcap * sizeof *v->log);
            CHECK(v->log);
        }
        fw_msg_t *m = &v->log[v->nlog++];
        m->id = tu_be32(idb);
        m->event = tu_last_event(v->s);
        m->err = tu_event_errno(v->s);
        size_t keep = (size_t)n < v->cap ? (size_t)n : v->cap;
        m->n = (size_t)n;
        m->data = malloc(keep + 1);
        CHECK(m->data);
        memcpy(m->data, v->buf, keep);
        if (m->event >= 0)
            CHECK(n == (v->framing == ZLINK_STREAM_FRAMING_RAW ? 0 : 1));
        else
            CHECK(m->err == 0);
        got = 1;
    }
    return got;
}

/* the step when nothing moved: the server sleeps on its poll a little */
static inline void fw_idle(fw_srv_t *v)
{
    zlink_pollitem_t it = {v->s, 0, ZLINK_POLLIN, 0};
    zlink_poll(&it, 1, 1);
    fw_step(v);
}

/* ---- raw peers ----------------------------------------------------------- */

typedef struct fw_peer {
    int kind;
    int fd;
    SSL *ssl;
    uint32_t id; /* the server's routing id for it, once known */
    /* ws: the frame being read */
    unsigned char fh[14];
    size_t fh_len;
    uint64_t f_left;
    int f_op;
    /* ws: a control payload being read */
    unsigned char ctl[128];
    size_t ctl_len;
    int eof;
} fw_peer_t;

static SSL_CTX *fw_ssl_ctx;

static inline SSL_CTX *fw_client_ctx(void)
{
    if (!fw_ssl_ctx) {
        fw_ssl_ctx = SSL_CTX_new(TLS_client_method());
        CHECK(fw_ssl_ctx);
        SSL_CTX_set_verify(fw_ssl_ctx, SSL_VERIFY_NONE, NULL);
    }
    return fw_ssl_ctx;
}

/* What an SSL_write or SSL_read that returned k means for a non-blocking
 * peer: bytes, 0 (it would block), -1 (the end or broken). */
static inline ssize_t fw_ssl_result(fw_peer_t *p, int k)
{
    if (k > 0)
        return k;
    int e = SSL_get_error(p->ssl, k);
    return (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) ? 0 : -1;
}

/* One non-blocking write of the transport: bytes taken, 0 (would block),
 * -1 (broken). */
static inline ssize_t fw_raw_write1(fw_peer_t *p, const void *b, size_t n)
{
    if (p->ssl) {
        ERR_clear_error();
        return fw_ssl_result(p, SSL_write(p->ssl, b, (int)n));
    }
    ssize_t k = send(p->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0)
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    return k;
}

/* One non-blocking read of the transport: bytes, 0 would block, -1 EOF or
 * error. */
static inline ssize_t fw_raw_read1(fw_peer_t *p, void *b, size_t n)
{
    if (p->ssl) {
        ERR_clear_error();
        return fw_ssl_result(p, SSL_read(p->ssl, b, (int)n));
    }
    ssize_t k = recv(p->fd, b, n, MSG_DONTWAIT);
    if (k < 0)
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    return k == 0 ? -1 : k;
}

/* The end of a framing test: its context terminates at once (every socket
 * was closed), the TLS client context and the certificates go. */
static inline void fw_end(void *ctx)
{
    CHECK(zlink_ctx_term(ctx) == 0);
    if (fw_ssl_ctx)
        SSL_CTX_free(fw_ssl_ctx);
    tu_tls_cleanup(&fw_tls);
}

/* All n transport bytes out, stepping the server while the kernel is full. */
static inline void fw_raw_write(fw_peer_t *p, fw_srv_t *v, const void *b, size_t n)
{
    const unsigned char *c = b;
    long long end = tu_now_ms() + 10000;
    while (n) {
        ssize_t k = fw_raw_write1(p, c, n);
        CHECK(k >= 0);
        if (k == 0) {
            CHECK(tu_now_ms() < end);
            fw_idle(v);
            continue;
        }
        c += k;
        n -= (size_t)k;
    }
}

/* Exactly n bytes through read1 (which reads what is there without
 * waiting: bytes, 0 none yet, -1 the end), stepping the server while none
 * come, at most 10 s; 0, or -1 at the end. */
static inline int fw_read_exactly(fw_peer_t *p, fw_srv_t *v, void *b, size_t n,
                                  ssize_t (*read1)(fw_peer_t *, void *, size_t))
{
    unsigned char *c = b;
    long long end = tu_now_ms() + 10000;
    while (n) {
        ssize_t k = read1(p, c, n);
        if (k < 0)
            return -1;
        if (k == 0) {
            CHECK(tu_now_ms() < end);
            fw_idle(v);
            continue;
        }
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Exactly n transport bytes in (stepping the server); 0, or -1 at EOF. */
static inline int fw_raw_read(fw_peer_t *p, fw_srv_t *v, void *b, size_t n)
{
    return fw_read_exactly(p, v, b, n, fw_raw_read1);
}

/* Connects a peer of kind to the server (TLS and ws handshakes included,
 * the server stepped meanwhile) and waits for the server's connect event,
 * whose id it keeps. */
static inline void fw_peer_open(fw_peer_t *p, fw_srv_t *v, int kind)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    size_t from = v->nlog; /* the event may come during the handshakes */
    p->fd = tu_raw_connect(tu_ep_port(v->ep));
    CHECK(fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) | O_NONBLOCK) == 0);
    if (kind == FW_TLS || kind == FW_WSS) {
        p->ssl = SSL_new(fw_client_ctx());
        CHECK(p->ssl && SSL_set_fd(p->ssl, p->fd) == 1);
        long long end = tu_now_ms() + 10000;
        for (;;) {
            ERR_clear_error();
            int rc = SSL_connect(p->ssl);
            if (rc == 1)
                break;
            int e = SSL_get_error(p->ssl, rc);
            CHECK(e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE);
            CHECK(tu_now_ms() < end);
            fw_idle(v);
        }
    }
    if (kind == FW_WS || kind == FW_WSS) {
        const char *key = "dGhlIHNhbXBsZSBub25jZQ==";
        char req[512], head[4096], want[64];
        snprintf(req, sizeof req,
                 "GET /f HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                 "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                 "Sec-WebSocket-Version: 13\r\n\r\n", key);
        fw_raw_write(p, v, req, strlen(req));
        size_t hn = 0;
        while (hn < 4 || memcmp(head + hn - 4, "\r\n\r\n", 4) != 0) {
            CHECK(hn + 1 < sizeof head);
            CHECK(fw_raw_read(p, v, head + hn, 1) == 0);
            hn++;
        }
        head[hn] = '\0';
        CHECK(strncmp(head, "HTTP/1.1 101 ", 13) == 0);
        tu_ws_accept(key, want);
        CHECK(strstr(head, want));
    }
    /* the server's connect event names the connection */
    long long end = tu_now_ms() + 10000;
    for (;;) {
        fw_step(v);
        for (size_t i = from; i < v->nlog; i++)
            if (v->log[i].event == 1) {
                p->id = v->log[i].id;
                return;
            }
        CHECK(tu_now_ms() < end);
        fw_idle(v);
    }
}

/* The peer's bytes to the server in one write of the transport (ws: one
 * masked binary frame carrying them). */
static inline void fw_write(fw_peer_t *p, fw_srv_t *v, const void *b, size_t n)
{
    if (p->kind == FW_WS || p->kind == FW_WSS) {
        unsigned char *f = malloc(n + 14);
        CHECK(f);
        size_t fl = tu_ws_frame(f, 1, 0x2, 1, b, n);
        fw_raw_write(p, v, f, fl);
        free(f);
        return;
    }
    fw_raw_write(p, v, b, n);
}

/* Up to n payload bytes from the server, without waiting: bytes, 0 none
 * yet, -1 the end (EOF, or a ws close frame). */
static inline ssize_t fw_read1(fw_peer_t *p, void *b, size_t n)
{
    if (p->eof)
        return -1;
    if (p->kind != FW_WS && p->kind != FW_WSS) {
        ssize_t k = fw_raw_read1(p, b, n);
        if (k < 0)
            p->eof = 1;
        return k;
    }
    for (;;) {
        if (p->f_left == 0 && p->fh_len >= 2) {
            /* a frame whose payload was all read: control ones act now */
            if (p->f_op == 0x8) {
                p->eof = 1;
                return -1;
            }
            p->fh_len = 0;
        }
        size_t need = p->fh_len < 2 ? 2 : 2 + ((p->fh[1] & 0x7f) == 126 ? 2
                                               : (p->fh[1] & 0x7f) == 127 ? 8 : 0);
        if (p->fh_len < need) {
            ssize_t k = fw_raw_read1(p, p->fh + p->fh_len, need - p->fh_len);
            if (k <= 0) {
                if (k < 0)
                    p->eof = 1;
                return k;
            }
            p->fh_len += (size_t)k;
            if (p->fh_len < 2 || p->fh_len < (2 + ((p->fh[1] & 0x7f) == 126 ? 2u
                                                   : (p->fh[1] & 0x7f) == 127 ? 8u : 0u)))
                continue;
            CHECK(!(p->fh[1] & 0x80)); /* a server does not mask */
            uint64_t len = p->fh[1] & 0x7f;
            if (len == 126)
                len = (uint64_t)p->fh[2] << 8 | p->fh[3];
            else if (len == 127) {
                len = 0;
                for (int i = 0; i < 8; i++)
                    len = len << 8 | p->fh[2 + i];
            }
            p->f_left = len;
            p->f_op = p->fh[0] & 0x0f;
            p->ctl_len = 0;
            if (len == 0)
                continue;
        }
        if (p->f_op & 0x8) { /* control: read it whole, drop it */
            CHECK(p->f_left <= 125);
            ssize_t k = fw_raw_read1(p, p->ctl + p->ctl_len, (size_t)p->f_left);
            if (k <= 0) {
                if (k < 0)
                    p->eof = 1;
                return k;
            }
            p->ctl_len += (size_t)k;
            p->f_left -= (uint64_t)k;
            continue;
        }
        size_t want = n < p->f_left ? n : (size_t)p->f_left;
        ssize_t k = fw_raw_read1(p, b, want);
        if (k <= 0) {
            if (k < 0)
                p->eof = 1;
            return k;
        }
        p->f_left -= (uint64_t)k;
        return k;
    }
}

/* Exactly n payload bytes from the server (stepping it); 0, or -1 at the
 * end. */
static inline int fw_read(fw_peer_t *p, fw_srv_t *v, void *b, size_t n)
{
    return fw_read_exactly(p, v, b, n, fw_read1);
}

/* Waits (stepping the server) until the server ended the connection: EOF
 * or a ws close frame, nothing else coming first. */
static inline void fw_expect_end(fw_peer_t *p, fw_srv_t *v)
{
    unsigned char b[64];
    long long end = tu_now_ms() + 10000;
    for (;;) {
        ssize_t k = fw_read1(p, b, sizeof b);
        if (k < 0)
            return;
        CHECK(k == 0);
        CHECK(tu_now_ms() < end);
        fw_idle(v);
    }
}

/* The peer's end of its stream (FIN): ws sends a close frame first, TLS
 * its close_notify; then the TCP write side shuts. */
static inline void fw_fin(fw_peer_t *p, fw_srv_t *v)
{
    if (p->kind == FW_WS || p->kind == FW_WSS) {
        unsigned char f[16], st[2] = {0x03, 0xe8};
        size_t fl = tu_ws_frame(f, 1, 0x8, 1, st, 2);
        fw_raw_write(p, v, f, fl);
    }
    if (p->ssl)
        SSL_shutdown(p->ssl);
    shutdown(p->fd, SHUT_WR);
}

static inline void fw_peer_close(fw_peer_t *p)
{
    if (p->ssl)
        SSL_free(p->ssl);
    p->ssl = NULL;
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1;
}

/* the index in v's log of the first message for id from `from` on */
static inline ssize_t fw_find(const fw_srv_t *v, size_t from, uint32_t id)
{
    for (size_t i = from; i < v->nlog; i++)
        if (v->log[i].id == id)
            return (ssize_t)i;
    return -1;
}

/* Steps v until a message for id arrives after log index from (at most
 * ms); returns its index. */
static inline size_t fw_wait_msg(fw_srv_t *v, size_t from, uint32_t id, int ms)
{
    long long end = tu_now_ms() + ms;
    for (;;) {
        fw_step(v);
        ssize_t i = fw_find(v, from, id);
        if (i >= 0)
            return (size_t)i;
        if (tu_now_ms() >= end) {
            fprintf(stderr, "fw_wait_msg: nothing for %u after %d ms\n", id, ms);
            CHECK(!"no message");
        }
        fw_idle(v);
    }
}

#endif
