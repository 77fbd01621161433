/*
 * zmp_transport.c - tls://, ws:// and wss:// under the ZMP connections of
 * the libzmq socket types (PAIR, PUB, SUB, XPUB, XSUB, DEALER, ROUTER); the
 * contract is in native/libzmq/zmp_transport.h, the engine that drives it is
 * native/libzmq/zmp_engine.cpp.
 *
 * TLS uses the STREAM engine's pieces (stream_tls.c): the same contexts from
 * the same options, the socket BIO, the failure reasons. The WebSocket
 * upgrade uses stream_ws.c's request and response texts and checks. What is
 * here: the handshake's order and I/O on a bare descriptor (no pump, no send
 * queue: libzmq's engine polls), and the frames, through the decoder the
 * STREAM engine's ws uses too (ws_frame.c, the same rules and close codes):
 * each zl_zt_send is one binary message; received binary, text and
 * continuation payloads are one byte stream; a ping is answered (only the
 * latest of those whose pong has not started going out), a close frame
 * ends the stream (answered with a close echoing its code), anything
 * malformed fails the connection with close 1002 (1007 for text that is not
 * UTF-8) and EPROTO.
 */
#include "stream.h"
#include "ws_frame.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef ZLINK_HAVE_TLS

#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <stdio.h>

#define ZT_HEAD_MAX 8192        /* longest upgrade request or response */
#define ZT_FRAME_MAX (256 << 10) /* payload of one message sent */
#define ZT_MASKS 256
#define NO_PONG ((size_t)-1)

enum { PH_TLS = 1, PH_WS_SEND, PH_WS_RECV, PH_DONE, PH_FAILED };

struct zl_zt {
    int fd;
    uint8_t server, ws, phase, want_write;
    /* the TLS session's data path waits the other way (renegotiation, a
     * key update): a read for writability (1), a write for input (2) */
    uint8_t crossed;
    int fail_errno; /* PH_FAILED, or a data-path failure */
    SSL *ssl;
    char tls_why[256];
    int tls_verify;
    /* the upgrade */
    char *path, *host;
    char *head;
    size_t hlen, head_end;
    char hs_out[ZL_ADDR_MAX + 512];
    size_t hs_len, hs_off;
    int status; /* server: what it answers */
    char accept[32];
    /* frames out: whole frames only, written in order */
    uint8_t *ob;
    size_t olen, ooff, ocap;
    uint8_t masks[ZT_MASKS];
    size_t mask_off;
    uint8_t close_sent;
    /* where in ob the pong not started yet is (the last frame there:
     * nothing is appended behind it but a close), or NO_PONG */
    size_t pong_at;
    /* frames in (ws_frame.c) */
    zl_wsd_t d;
    uint8_t in_end; /* 1: the stream ended (close frame), 2: failed */
    int in_errno;
};

void *zl_zt_tls_ctx(const zl_tls_conf_t *conf, int server)
{
    return zl_tls_ctx_build(conf, server);
}

void zl_zt_tls_ctx_free(void *ctx)
{
    zl_tls_ctx_free(ctx);
}

zl_zt_t *zl_zt_new(int fd, int server, void *tls_ctx, const char *tls_host,
                   int ws, const char *ws_path, const char *ws_host)
{
    zl_zt_t *t = calloc(1, sizeof *t);
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    t->fd = fd;
    t->server = (uint8_t)(server != 0);
    t->ws = (uint8_t)(ws != 0);
    t->mask_off = ZT_MASKS;
    t->pong_at = NO_PONG;
    t->d.server = t->server;
    if (tls_ctx) {
        t->ssl = zl_tls_ssl_new(tls_ctx, fd, server,
                                tls_host && *tls_host ? tls_host : NULL);
        if (!t->ssl)
            goto fail;
    }
    if (ws) {
        t->path = strdup(ws_path && *ws_path ? ws_path : "/");
        t->host = strdup(ws_host ? ws_host : "");
        t->head = malloc(ZT_HEAD_MAX + 1);
        if (!t->path || !t->host || !t->head) {
            errno = ENOMEM;
            goto fail;
        }
        if (!server && zl_ws_request_text(t->path, t->host, t->accept,
                                          t->hs_out, sizeof t->hs_out) != 0)
            goto fail;
        t->hs_len = server ? 0 : strlen(t->hs_out);
    }
    t->phase = t->ssl ? PH_TLS : ws ? (server ? PH_WS_RECV : PH_WS_SEND) : PH_DONE;
    return t;
fail:;
    int e = errno;
    zl_zt_free(t, 0);
    errno = e;
    return NULL;
}

/* ---- below the frames: TCP or the TLS session ----------------------------- */

static int again(void)
{
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

static ssize_t tls_io_error(zl_zt_t *t, int e, int sys, int writing)
{
    int dead;
    if (e == SSL_ERROR_WANT_WRITE) {
        t->want_write = 1;
        if (!writing)
            t->crossed |= 1;
    } else if (e == SSL_ERROR_WANT_READ && writing) {
        t->crossed |= 2;
    }
    return zl_tls_io_result(e, sys, &dead);
}

/* > 0, 0 the end, -1 errno */
static ssize_t raw_recv(zl_zt_t *t, void *buf, size_t len)
{
    if (!t->ssl) {
        ssize_t n = recv(t->fd, buf, len, MSG_DONTWAIT);
        if (n < 0 && again())
            errno = EAGAIN;
        return n;
    }
    ERR_clear_error();
    errno = 0;
    t->crossed &= (uint8_t)~1;
    int n = SSL_read(t->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);
    if (n > 0)
        return n;
    int sys = errno;
    return tls_io_error(t, SSL_get_error(t->ssl, n), sys, 0);
}

/* > 0 taken, -1 errno (EAGAIN: retry with the same bytes) */
static ssize_t raw_send(zl_zt_t *t, const void *buf, size_t len)
{
    if (!t->ssl) {
        ssize_t n = send(t->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && again())
            errno = EAGAIN;
        return n;
    }
    ERR_clear_error();
    errno = 0;
    t->crossed &= (uint8_t)~2;
    int n = SSL_write(t->ssl, buf, len > INT_MAX ? INT_MAX : (int)len);
    if (n > 0)
        return n;
    int sys = errno;
    ssize_t r = tls_io_error(t, SSL_get_error(t->ssl, n), sys, 1);
    if (r == 0) {
        errno = EPIPE; /* close_notify received while writing */
        r = -1;
    }
    return r;
}

/* ---- the handshake --------------------------------------------------------- */

static int fail(zl_zt_t *t, int e)
{
    t->phase = PH_FAILED;
    t->fail_errno = e;
    errno = e;
    return -1;
}

static int tls_step(zl_zt_t *t)
{
    ERR_clear_error();
    errno = 0;
    int rc = SSL_do_handshake(t->ssl);
    if (rc == 1) {
        t->phase = !t->ws ? PH_DONE : t->server ? PH_WS_RECV : PH_WS_SEND;
        return 1;
    }
    int sys = errno;
    int e = SSL_get_error(t->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        t->want_write = e == SSL_ERROR_WANT_WRITE;
        return 0;
    }
    errno = sys;
    return fail(t, zl_tls_failure(t->ssl, e, t->tls_why, sizeof t->tls_why,
                                  &t->tls_verify));
}

/* the head read so far could still be the one awaited */
static int head_plausible(const zl_zt_t *t, size_t text)
{
    const char *want = t->server ? "GET " : "HTTP/1.1 ";
    size_t n = strlen(want);
    return strncmp(t->head, want, t->hlen < n ? t->hlen : n) == 0 &&
           !memchr(t->head, '\0', text);
}

/* reads the peer's head: 1 complete (or judged), 0 wait, -1 failed */
static int ws_recv_step(zl_zt_t *t)
{
    for (;;) {
        ssize_t n = raw_recv(t, t->head + t->hlen, ZT_HEAD_MAX - t->hlen);
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            /* a client that had part of an answer got a wrong one */
            int e = n < 0 ? errno : ECONNRESET;
            return fail(t, !t->server && t->hlen ? EPROTO : e);
        }
        if (n < 0)
            return 0;
        size_t from = t->hlen > 3 ? t->hlen - 3 : 0;
        t->hlen += (size_t)n;
        t->head[t->hlen] = '\0';
        const char *end = memmem(t->head + from, t->hlen - from, "\r\n\r\n", 4);
        size_t text = end ? (size_t)(end - t->head) : t->hlen;
        int plausible = head_plausible(t, text);
        if (end)
            t->head_end = (size_t)(end + 4 - t->head);
        if (!t->server) {
            if (!plausible || (end && !zl_ws_judge_response(t->accept, t->head, end + 2)) ||
                (!end && t->hlen == ZT_HEAD_MAX))
                return fail(t, EPROTO);
            if (end) {
                t->phase = PH_DONE;
                return 1;
            }
            continue;
        }
        char accept[32] = "";
        if (!plausible)
            t->status = 400;
        else if (end)
            t->status = zl_ws_judge_request(t->path, t->head, end + 2, accept);
        else if (t->hlen == ZT_HEAD_MAX)
            t->status = 431;
        else
            continue;
        zl_ws_response_text(t->status, accept, t->hs_out, sizeof t->hs_out);
        t->hs_len = strlen(t->hs_out);
        t->hs_off = 0;
        t->phase = PH_WS_SEND;
        return 1;
    }
}

static int ws_send_step(zl_zt_t *t)
{
    while (t->hs_off < t->hs_len) {
        ssize_t n = raw_send(t, t->hs_out + t->hs_off, t->hs_len - t->hs_off);
        if (n < 0 && errno == EAGAIN) {
            t->want_write = 1;
            return 0;
        }
        if (n <= 0)
            return fail(t, n < 0 ? errno : EPIPE);
        t->hs_off += (size_t)n;
    }
    if (!t->server) {
        t->phase = PH_WS_RECV;
        return 1;
    }
    /* the server's answer went: refused requests end here */
    if (t->status != 101)
        return fail(t, EPROTO);
    t->phase = PH_DONE;
    return 1;
}

int zl_zt_handshake(zl_zt_t *t)
{
    t->want_write = 0;
    for (;;) {
        int rc;
        switch (t->phase) {
        case PH_DONE:
            if (t->head && t->head_end >= t->hlen) {
                free(t->head); /* nothing came after the head */
                t->head = NULL;
            }
            return 1;
        case PH_FAILED:
            errno = t->fail_errno;
            return -1;
        case PH_TLS:
            rc = tls_step(t);
            break;
        case PH_WS_SEND:
            rc = ws_send_step(t);
            break;
        default:
            rc = ws_recv_step(t);
            break;
        }
        if (rc <= 0)
            return rc;
    }
}

int zl_zt_want_write(const zl_zt_t *t)
{
    return t->want_write || (t->phase == PH_WS_SEND && t->hs_off < t->hs_len);
}

const char *zl_zt_tls_failure(const zl_zt_t *t, int *verify_result)
{
    *verify_result = t->tls_verify;
    return t->tls_why;
}

int zl_zt_crossed(const zl_zt_t *t)
{
    return t->phase == PH_DONE ? t->crossed : 0;
}

/* ---- frames out ------------------------------------------------------------ */

static int ob_reserve(zl_zt_t *t, size_t more)
{
    if (t->ooff == t->olen) {
        t->ooff = t->olen = 0;
        t->pong_at = NO_PONG;
    }
    if (t->olen + more <= t->ocap)
        return 0;
    size_t cap = t->ocap ? t->ocap : 256;
    while (cap < t->olen + more)
        cap *= 2;
    uint8_t *p = realloc(t->ob, cap);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    t->ob = p;
    t->ocap = cap;
    return 0;
}

/* appends one whole frame (a client masks it) */
static int put_frame(zl_zt_t *t, int opcode, const uint8_t *p, size_t n)
{
    if (ob_reserve(t, n + 14) != 0)
        return -1;
    uint8_t *h = t->ob + t->olen;
    size_t hl;
    if (t->server) {
        hl = zl_ws_put_header(h, opcode, n, NULL);
        memcpy(h + hl, p, n);
    } else {
        if (t->mask_off + 4 > ZT_MASKS) {
            if (RAND_bytes(t->masks, ZT_MASKS) != 1) {
                errno = EIO;
                return -1;
            }
            t->mask_off = 0;
        }
        const uint8_t *k = t->masks + t->mask_off;
        t->mask_off += 4;
        hl = zl_ws_put_header(h, opcode, n, k);
        zl_ws_mask_copy(h + hl, p, n, k, 0);
    }
    t->olen += hl + n;
    return 0;
}

int zl_zt_flush(zl_zt_t *t)
{
    while (t->ooff < t->olen) {
        ssize_t n = raw_send(t, t->ob + t->ooff, t->olen - t->ooff);
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0) {
            t->fail_errno = n < 0 ? errno : EPIPE;
            return -1;
        }
        t->ooff += (size_t)n;
    }
    if (t->ocap > 65536) {
        /* a large message's frame went: do not keep its buffer */
        free(t->ob);
        t->ob = NULL;
        t->ocap = t->olen = t->ooff = 0;
        t->pong_at = NO_PONG;
    }
    return 1;
}

ssize_t zl_zt_send(zl_zt_t *t, const void *buf, size_t len)
{
    if (t->phase != PH_DONE || t->fail_errno) {
        errno = t->fail_errno ? t->fail_errno : ENOTCONN;
        return -1;
    }
    if (!t->ws) {
        ssize_t n = raw_send(t, buf, len);
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n < 0)
            t->fail_errno = errno;
        return n;
    }
    int rc = zl_zt_flush(t);
    if (rc <= 0) {
        if (rc < 0)
            errno = t->fail_errno;
        return rc;
    }
    if (t->close_sent || len == 0)
        return 0;
    size_t n = len < ZT_FRAME_MAX ? len : ZT_FRAME_MAX;
    if (put_frame(t, 0x2, buf, n) != 0)
        return -1;
    if (zl_zt_flush(t) < 0) {
        errno = t->fail_errno;
        return -1;
    }
    return (ssize_t)n;
}

int zl_zt_out_pending(const zl_zt_t *t)
{
    return t->ooff < t->olen;
}

/* ---- frames in ------------------------------------------------------------- */

static void in_fail(zl_zt_t *t, unsigned status)
{
    uint8_t st[2] = {(uint8_t)(status >> 8), (uint8_t)status};
    if (!t->close_sent && put_frame(t, 0x8, st, 2) == 0)
        t->close_sent = 1;
    zl_zt_flush(t);
    t->in_end = 2;
    t->in_errno = EPROTO;
}

/* A ping: a pong with its payload. A pong not started yet is replaced
 * (RFC 6455 5.5.3 lets a pong answer the latest ping only), so a peer that
 * sends pings and never reads holds at most two pongs here: one partly
 * written and one waiting. */
static void ping(zl_zt_t *t)
{
    if (t->close_sent)
        return;
    if (t->pong_at != NO_PONG && t->pong_at >= t->ooff &&
        t->pong_at < t->olen)
        t->olen = t->pong_at; /* it is the last frame in ob */
    size_t at = t->olen;
    if (put_frame(t, ZL_WS_OP_PONG, t->d.ctl, t->d.ctl_len) == 0)
        t->pong_at = at;
    zl_zt_flush(t);
}

/* a valid close: the stream ends; its code echoed */
static void peer_close(zl_zt_t *t)
{
    if (!t->close_sent &&
        put_frame(t, ZL_WS_OP_CLOSE, t->d.ctl, t->d.ctl_len >= 2 ? 2 : 0) == 0)
        t->close_sent = 1;
    zl_zt_flush(t);
    t->in_end = 1;
}

/* Decodes n bytes of frames from in into payload bytes at out (out <= in:
 * the payload of n bytes is never more than n). Returns the payload's
 * length; stops at the end of the stream or a failure (in_end). */
static size_t decode(zl_zt_t *t, const uint8_t *in, size_t n, uint8_t *out)
{
    size_t i = 0, o = 0;
    while (i < n && !t->in_end) {
        size_t m;
        i += zl_wsd_decode(&t->d, in + i, n - i, out + o, n - o, &m);
        o += m;
        uint8_t ev = t->d.event;
        t->d.event = ZL_WSD_NONE;
        if (ev == ZL_WSD_NONE)
            break;
        if (ev == ZL_WSD_FAIL)
            in_fail(t, t->d.fail_code);
        else if (ev == ZL_WSD_PING)
            ping(t);
        else if (ev == ZL_WSD_CLOSE)
            peer_close(t);
    }
    return o;
}

ssize_t zl_zt_recv(zl_zt_t *t, void *buf, size_t len)
{
    if (t->phase != PH_DONE) {
        errno = ENOTCONN;
        return -1;
    }
    if (!t->ws) {
        ssize_t n = raw_recv(t, buf, len);
        if (n < 0 && errno != EAGAIN)
            t->fail_errno = errno;
        return n;
    }
    for (;;) {
        if (t->in_end) {
            if (t->in_end == 1)
                return 0;
            errno = t->in_errno;
            return -1;
        }
        if (t->fail_errno) {
            errno = t->fail_errno;
            return -1;
        }
        if (len == 0) {
            errno = EAGAIN;
            return -1;
        }
        size_t o;
        if (t->head) {
            /* frames that came with the upgrade's head */
            size_t take = t->hlen - t->head_end;
            if (take > len)
                take = len;
            memcpy(buf, t->head + t->head_end, take);
            t->head_end += take;
            if (t->head_end >= t->hlen) {
                free(t->head);
                t->head = NULL;
            }
            o = decode(t, buf, take, buf);
        } else {
            ssize_t n = raw_recv(t, buf, len);
            if (n <= 0) {
                if (n < 0 && errno != EAGAIN)
                    t->fail_errno = errno;
                return n;
            }
            o = decode(t, buf, (size_t)n, buf);
        }
        if (o > 0)
            return (ssize_t)o;
    }
}

int zl_zt_in_pending(const zl_zt_t *t)
{
    if (t->phase != PH_DONE)
        return 0;
    return (t->ssl && SSL_has_pending(t->ssl)) || t->head != NULL ||
           (t->ws && t->in_end);
}

void zl_zt_free(zl_zt_t *t, int graceful)
{
    if (!t)
        return;
    if (graceful && t->phase == PH_DONE && !t->fail_errno) {
        if (t->ws && !t->close_sent && t->ooff == t->olen) {
            static const uint8_t normal[2] = {0x03, 0xe8}; /* 1000 */
            if (put_frame(t, 0x8, normal, 2) == 0)
                zl_zt_flush(t);
        }
        if (t->ssl) {
            ERR_clear_error();
            SSL_shutdown(t->ssl);
        }
    }
    if (t->ssl) {
        SSL_free(t->ssl);
        ERR_clear_error();
    }
    free(t->path);
    free(t->host);
    free(t->head);
    free(t->ob);
    free(t);
}

#else /* no OpenSSL: no tls://, ws:// or wss:// on any socket type */

void *zl_zt_tls_ctx(const zl_tls_conf_t *conf, int server)
{
    (void)conf;
    (void)server;
    errno = EPROTONOSUPPORT;
    return NULL;
}

void zl_zt_tls_ctx_free(void *ctx)
{
    (void)ctx;
}

zl_zt_t *zl_zt_new(int fd, int server, void *tls_ctx, const char *tls_host,
                   int ws, const char *ws_path, const char *ws_host)
{
    (void)fd, (void)server, (void)tls_ctx, (void)tls_host;
    (void)ws, (void)ws_path, (void)ws_host;
    errno = EPROTONOSUPPORT;
    return NULL;
}

void zl_zt_free(zl_zt_t *t, int graceful)
{
    (void)t;
    (void)graceful;
}

int zl_zt_handshake(zl_zt_t *t)
{
    (void)t;
    errno = EPROTONOSUPPORT;
    return -1;
}

int zl_zt_want_write(const zl_zt_t *t)
{
    (void)t;
    return 0;
}

int zl_zt_crossed(const zl_zt_t *t)
{
    (void)t;
    return 0;
}

const char *zl_zt_tls_failure(const zl_zt_t *t, int *verify_result)
{
    (void)t;
    *verify_result = 0;
    return "";
}

ssize_t zl_zt_recv(zl_zt_t *t, void *buf, size_t len)
{
    (void)t, (void)buf, (void)len;
    errno = EPROTONOSUPPORT;
    return -1;
}

ssize_t zl_zt_send(zl_zt_t *t, const void *buf, size_t len)
{
    (void)t, (void)buf, (void)len;
    errno = EPROTONOSUPPORT;
    return -1;
}

int zl_zt_flush(zl_zt_t *t)
{
    (void)t;
    return 1;
}

int zl_zt_out_pending(const zl_zt_t *t)
{
    (void)t;
    return 0;
}

int zl_zt_in_pending(const zl_zt_t *t)
{
    (void)t;
    return 0;
}

#endif
