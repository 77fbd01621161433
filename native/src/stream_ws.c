/*
 * stream_ws.c - ws:// and wss:// on STREAM sockets (RFC 6455). A ws
 * connection is a TCP connection of the same engine (wss: with the TLS
 * session of stream_tls.c under it) that first runs an HTTP/1.1 upgrade,
 * written here, in the ZC_HANDSHAKE state the pump drives; afterwards every
 * payload the application sends is one binary frame and the payload bytes
 * of the frames received are what recv delivers.
 *
 * The frames are encoded and decoded here too, for speed: sending encodes
 * header and (client: masked) payload into one buffer (s->txbuf) whose bytes
 * then go through the send queue like any payload, so a frame whose start
 * went out is completed before anything else is written on the connection;
 * receiving reads from the transport straight into the caller's buffer and
 * decodes it in place (headers dropped, payload moved down and unmasked
 * eight bytes at a time), one read per batch like tcp://.
 *
 * The build enables ws wherever it found OpenSSL (native/CMakeLists.txt).
 */
#include "stream.h"
#include "ws_frame.h"

#include <errno.h>
#include <string.h>

#ifdef ZLINK_HAVE_WS

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#define WS_HEAD_MAX 8192 /* longest request or response head */
#define WS_MASKS 256     /* random bytes drawn at once for frame masks */
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

/* frame opcodes (RFC 6455, 5.2; ws_frame.h) */
enum { OP_CLOSE = ZL_WS_OP_CLOSE, OP_PONG = ZL_WS_OP_PONG };

enum { HS_SEND = 1, HS_RECV, HS_DONE };
enum { END_NONE = 0, END_EOF, END_ERR };

struct zl_ws {
    zl_stream_t *s;
    zl_conn_t *c;
    uint8_t server, tls, phase, close_sent, more;
    /* the peer's Close frame was read and our reply (reply_len bytes of
     * reply: its status echoed, or nothing) is not queued yet */
    uint8_t peer_close, reply_len;
    uint8_t reply[2];
    uint8_t end;   /* END_*: what recv reports once the bytes before it went */
    int end_errno; /* END_ERR */
    char *path, *host;
    /* handshake */
    char *head; /* received head (and what came after it), NUL-terminated */
    size_t hlen;
    char *out; /* request or response being sent */
    size_t olen, ooff;
    int status;      /* server: the status it answers with */
    size_t head_end; /* where the head ended in head */
    char accept[32]; /* client: the Sec-WebSocket-Accept expected */
    /* bytes read together with the head, decoded before the transport's */
    size_t pre_off, pre_len;
    /* receive: the frame being decoded (ws_frame.c) */
    zl_wsd_t d;
    uint8_t masks[WS_MASKS];
    size_t mask_off;
};

/* Without OpenSSL at build time the build has no ws (see the stub half of
 * this file). */
int zl_ws_available(void)
{
    return 1;
}

/* a fresh mask per frame, from a buffer refilled with RAND_bytes */
static int next_mask(zl_ws_t *w, uint8_t key[4])
{
    if (w->mask_off + 4 > WS_MASKS) {
        if (RAND_bytes(w->masks, WS_MASKS) != 1)
            return -1;
        w->mask_off = 0;
    }
    memcpy(key, w->masks + w->mask_off, 4);
    w->mask_off += 4;
    return 0;
}

const char *zl_ws_frame(zl_stream_t *s, zl_conn_t *c, int opcode,
                        const void *pre, size_t plen, const void *data,
                        size_t len, size_t *out_len)
{
    size_t total = plen + len;
    /* the longest header: 2 + 8 + 4 */
    uint8_t *h = (uint8_t *)zl_txbuf(s, total + 14);
    if (!h)
        return NULL;
    size_t n;
    if (!c->ws->server) {
        uint8_t key[4];
        if (next_mask(c->ws, key) != 0)
            return NULL;
        n = zl_ws_put_header(h, opcode, total, key);
        if (plen)
            zl_ws_mask_copy(h + n, pre, plen, key, 0);
        if (len)
            zl_ws_mask_copy(h + n + plen, data, len, key, plen);
    } else {
        n = zl_ws_put_header(h, opcode, total, NULL);
        if (plen)
            memcpy(h + n, pre, plen);
        if (len)
            memcpy(h + n + plen, data, len);
    }
    s->txbuf_len = n + total;
    *out_len = s->txbuf_len;
    return s->txbuf;
}

/* A control frame sent at once, best effort, used only just before the
 * connection closes (a failure, or a local close that skips the request
 * path): it may go ahead of queued frames that were not started (they are
 * dropped with the connection, which reports why), never into the middle
 * of one, and over TLS only when nothing is queued (OpenSSL wants a write
 * that wanted to be retried retried with the same bytes). */
static void send_ctl_now(zl_ws_t *w, int opcode, const void *p, size_t n)
{
    size_t fl;
    if (w->c->fd < 0 || w->c->q.partial || (w->c->ssl && w->c->q.lcount))
        return;
    const char *f = zl_ws_frame(w->s, w->c, opcode, NULL, 0, p, n, &fl);
    if (f && zl_raw_send(w->c, f, fl) < 0)
        errno = 0;
}

static void put_status(uint8_t *b, unsigned status)
{
    b[0] = (uint8_t)(status >> 8);
    b[1] = (uint8_t)status;
}

void zl_ws_goodbye(zl_stream_t *s, zl_conn_t *c)
{
    zl_ws_fail(s, c, 1000);
}

/* a close frame with the n bytes at p as its payload, queued behind what
 * is queued */
static int queue_close(zl_stream_t *s, zl_conn_t *c, const uint8_t *p,
                       size_t n)
{
    zl_ws_t *w = c->ws;
    size_t fl;
    if (w->close_sent)
        return -1;
    const char *f = zl_ws_frame(s, c, OP_CLOSE, NULL, 0, p, n, &fl);
    if (!f || zl_conn_queue(s, c, f, fl) != 0)
        return -1;
    w->close_sent = 1;
    return 0;
}

int zl_ws_queue_close(zl_stream_t *s, zl_conn_t *c, unsigned status)
{
    uint8_t st[2];
    put_status(st, status);
    return queue_close(s, c, st, 2);
}

int zl_ws_drop_close(zl_stream_t *s, zl_conn_t *c, unsigned code)
{
    /* the reason says why, for the peer's logs */
    static const char why[] = "slow consumer";
    uint8_t p[2 + sizeof why - 1];
    put_status(p, code);
    memcpy(p + 2, why, sizeof why - 1);
    c->ws->peer_close = 0; /* our close answers theirs too */
    return queue_close(s, c, p, sizeof p);
}

int zl_ws_peer_closed(const zl_conn_t *c)
{
    return c->ws && c->ws->peer_close && !c->ws->close_sent;
}

int zl_ws_queue_reply(zl_stream_t *s, zl_conn_t *c)
{
    zl_ws_t *w = c->ws;
    w->peer_close = 0;
    return queue_close(s, c, w->reply, w->reply_len);
}

void zl_ws_fail(zl_stream_t *s, zl_conn_t *c, unsigned status)
{
    (void)s;
    zl_ws_t *w = c->ws;
    if (w->close_sent || w->phase != HS_DONE)
        return;
    uint8_t st[2];
    put_status(st, status);
    w->close_sent = 1;
    send_ctl_now(w, OP_CLOSE, st, 2);
}

/* ---- the upgrade -------------------------------------------------------- */

static int b64(char *out, const unsigned char *in, int n)
{
    return EVP_EncodeBlock((unsigned char *)out, in, n);
}

/* base64(SHA-1(key GUID)) into out (29 bytes) */
static int accept_of(const char *key, size_t klen, char *out)
{
    char buf[128];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (klen + sizeof WS_GUID > sizeof buf)
        return -1;
    memcpy(buf, key, klen);
    memcpy(buf + klen, WS_GUID, sizeof WS_GUID - 1);
    if (EVP_Digest(buf, klen + sizeof WS_GUID - 1, md, &mdlen, EVP_sha1(),
                   NULL) != 1 ||
        mdlen != 20)
        return -1;
    b64(out, md, 20);
    return 0;
}

/* What the header fields of a head say (both directions). */
typedef struct ws_fields {
    int upgrade, connection, version13, extensions, bad;
    const char *key, *accept;
    size_t key_len, accept_len;
} ws_fields_t;

static int is_token_char(char ch)
{
    return ch > 0x20 && ch < 0x7f && !strchr("()<>@,;:\\\"/[]?={}", ch);
}

/* whether the comma-separated list v (n bytes) has tok, any case */
static int has_token(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok);
    const char *end = v + n;
    while (v < end) {
        while (v < end && (*v == ' ' || *v == '\t' || *v == ','))
            v++;
        const char *e = v;
        while (e < end && *e != ',')
            e++;
        const char *t = e;
        while (t > v && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if ((size_t)(t - v) == tl && strncasecmp(v, tok, tl) == 0)
            return 1;
        v = e;
    }
    return 0;
}

static int name_is(const char *n, size_t nl, const char *want)
{
    return strlen(want) == nl && strncasecmp(n, want, nl) == 0;
}

/* Reads the header lines from p (just after the first line) to end (the
 * empty line's start). */
static void parse_fields(const char *p, const char *end, ws_fields_t *f)
{
    memset(f, 0, sizeof *f);
    while (p < end) {
        const char *eol = strstr(p, "\r\n");
        if (!eol || eol > end)
            eol = end;
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        if (!colon || colon == p) {
            f->bad = 1; /* no field name (or a folded line) */
            return;
        }
        for (const char *q = p; q < colon; q++)
            if (!is_token_char(*q)) {
                f->bad = 1;
                return;
            }
        size_t nl = (size_t)(colon - p);
        const char *v = colon + 1, *ve = eol;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        size_t vl = (size_t)(ve - v);
        if (name_is(p, nl, "upgrade"))
            f->upgrade |= has_token(v, vl, "websocket");
        else if (name_is(p, nl, "connection"))
            f->connection |= has_token(v, vl, "upgrade");
        else if (name_is(p, nl, "sec-websocket-version"))
            f->version13 = vl == 2 && memcmp(v, "13", 2) == 0;
        else if (name_is(p, nl, "sec-websocket-key")) {
            f->key = v;
            f->key_len = vl;
        } else if (name_is(p, nl, "sec-websocket-accept")) {
            f->accept = v;
            f->accept_len = vl;
        } else if (name_is(p, nl, "sec-websocket-extensions") ||
                   name_is(p, nl, "sec-websocket-protocol"))
            f->extensions = 1;
        p = eol + 2;
    }
}

/* a Sec-WebSocket-Key: base64 of 16 bytes */
static int key_ok(const char *k, size_t n)
{
    if (n != 24 || k[22] != '=' || k[23] != '=')
        return 0;
    for (size_t i = 0; i < 22; i++)
        if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= 'a' && k[i] <= 'z') ||
              (k[i] >= '0' && k[i] <= '9') || k[i] == '+' || k[i] == '/'))
            return 0;
    return 1;
}

/* The status a server answers the request head (end: its empty line) with;
 * on 101, accept is set. */
int zl_ws_judge_request(const char *want_path, const char *head,
                        const char *end, char *accept)
{
    const char *eol = strstr(head, "\r\n");
    if (!eol || strncmp(head, "GET ", 4) != 0)
        return 400;
    const char *path = head + 4;
    const char *sp = memchr(path, ' ', (size_t)(eol - path));
    if (!sp || sp == path || *path != '/' ||
        (size_t)(eol - sp) != 9 || strncmp(sp, " HTTP/1.1", 9) != 0)
        return 400;
    ws_fields_t f;
    parse_fields(eol + 2, end, &f);
    if (f.bad)
        return 400;
    /* the path is the request-target up to its query (RFC 3986 3.4), and
     * the bound endpoint's path up to its own: a "?..." on either side
     * does not change which resource is asked for */
    const char *query = memchr(path, '?', (size_t)(sp - path));
    size_t plen = (size_t)((query ? query : sp) - path);
    if (plen != strcspn(want_path, "?") || strncmp(path, want_path, plen) != 0)
        return 404;
    if (!f.upgrade || !f.connection || !f.version13 || !f.key ||
        !key_ok(f.key, f.key_len) || accept_of(f.key, f.key_len, accept) != 0)
        return 400;
    return 101;
}

/* whether the response head (end: its empty line) accepts our request */
int zl_ws_judge_response(const char *want_accept, const char *head,
                         const char *end)
{
    const char *eol = strstr(head, "\r\n");
    if (!eol || strncmp(head, "HTTP/1.1 101", 12) != 0 ||
        (eol > head + 12 && head[12] != ' '))
        return 0;
    ws_fields_t f;
    parse_fields(eol + 2, end, &f);
    return !f.bad && f.upgrade && f.connection && !f.extensions && f.accept &&
           f.accept_len == strlen(want_accept) &&
           memcmp(f.accept, want_accept, f.accept_len) == 0;
}

static int set_out(zl_ws_t *w, const char *text)
{
    free(w->out);
    w->out = strdup(text);
    w->olen = w->out ? strlen(w->out) : 0;
    w->ooff = 0;
    return w->out ? 0 : -1;
}

void zl_ws_response_text(int status, const char *accept, char *buf,
                         size_t n)
{
    const char *reason = status == 101   ? "Switching Protocols"
                         : status == 404 ? "Not Found"
                         : status == 431 ? "Request Header Fields Too Large"
                                         : "Bad Request";
    if (status == 101)
        snprintf(buf, n,
                 "HTTP/1.1 101 %s\r\nUpgrade: websocket\r\n"
                 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                 reason, accept);
    else
        snprintf(buf, n,
                 "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n"
                 "Connection: close\r\n\r\n",
                 status, reason);
}

static int respond(zl_ws_t *w, int status, const char *accept)
{
    char buf[256];
    zl_ws_response_text(status, accept, buf, sizeof buf);
    w->status = status;
    w->phase = HS_SEND;
    return set_out(w, buf);
}

int zl_ws_request_text(const char *path, const char *host, char *accept,
                       char *buf, size_t n)
{
    unsigned char nonce[16];
    char key[32];
    if (RAND_bytes(nonce, sizeof nonce) != 1) {
        errno = EIO;
        return -1;
    }
    b64(key, nonce, sizeof nonce);
    accept_of(key, strlen(key), accept);
    int len = snprintf(buf, n,
                       "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                       "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                       "Sec-WebSocket-Version: 13\r\n\r\n",
                       path, host, key);
    if (len < 0 || (size_t)len >= n) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int zl_ws_start(zl_stream_t *s, zl_conn_t *c, int server, const char *path,
                const char *host)
{
    if (!zl_ws_available()) {
        errno = EPROTONOSUPPORT;
        return -1;
    }
    zl_ws_t *w = calloc(1, sizeof *w);
    if (!w) {
        errno = ENOMEM;
        return -1;
    }
    w->s = s;
    w->c = c;
    w->server = (uint8_t)server;
    w->d.server = w->server;
    w->tls = c->ssl != NULL;
    w->mask_off = WS_MASKS;
    w->path = strdup(path ? path : "/");
    w->host = strdup(host ? host : "");
    w->head = malloc(WS_HEAD_MAX + 1);
    c->ws = w;
    if (!w->path || !w->host || !w->head) {
        zl_ws_end(c);
        errno = ENOMEM;
        return -1;
    }
    if (server) {
        w->phase = HS_RECV;
        return 0;
    }
    char req[ZL_ADDR_MAX + 256];
    if (zl_ws_request_text(w->path, w->host, w->accept, req, sizeof req) != 0) {
        int e = errno;
        zl_ws_end(c);
        errno = e;
        return -1;
    }
    w->phase = HS_SEND;
    if (set_out(w, req) != 0) {
        zl_ws_end(c);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static int hs_fail(int *err, uint32_t *event, int e, uint32_t ev)
{
    *err = e;
    *event = ev;
    return -1;
}

static int io_again(void)
{
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* the head is complete: keep what came after it for zl_ws_recv */
static int hs_done(zl_ws_t *w, size_t head_end)
{
    w->phase = HS_DONE;
    free(w->out);
    w->out = NULL;
    if (head_end < w->hlen) {
        w->pre_off = head_end;
        w->pre_len = w->hlen;
    } else {
        free(w->head);
        w->head = NULL;
    }
    return 1;
}

/* Whether p (n bytes) has a line feed without a carriage return before it.
 * RFC 7230 3.5 lets a recipient take a bare LF as a line end; this server
 * does not, and answers such a head 400 at once rather than waiting for the
 * CRLF CRLF that will never come. */
static int has_bare_lf(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
            return 1;
    return 0;
}

/* Whether the head so far could still become what we wait for. */
static int head_plausible(const zl_ws_t *w)
{
    const char *want = w->server ? "GET " : "HTTP/1.1 ";
    size_t n = strlen(want);
    return strncmp(w->head, want, w->hlen < n ? w->hlen : n) == 0;
}

int zl_ws_handshake(zl_stream_t *s, zl_conn_t *c, int *err, uint32_t *event)
{
    zl_ws_t *w = c->ws;
    for (;;) {
        if (w->phase == HS_SEND) {
            while (w->ooff < w->olen) {
                ssize_t n = zl_raw_send(c, w->out + w->ooff, w->olen - w->ooff);
                if (n > 0) {
                    w->ooff += (size_t)n;
                } else if (n < 0 && io_again()) {
                    zl_conn_set_out(s, c, 1);
                    return 0;
                } else {
                    return hs_fail(err, event, n < 0 ? errno : EPIPE,
                                   ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
                }
            }
            if (w->server)
                return w->status == 101
                           ? hs_done(w, w->head_end)
                           : hs_fail(err, event, EPROTO,
                                     ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
            w->phase = HS_RECV;
            zl_conn_set_out(s, c, 0);
        }
        ssize_t n = zl_raw_recv(c, w->head + w->hlen, WS_HEAD_MAX - w->hlen);
        if (n == 0 || (n < 0 && !io_again())) {
            /* the peer went: a client that had part of an answer got a
             * wrong one; otherwise a transport failure (retried) */
            int e = n < 0 ? errno : ECONNRESET;
            if (!w->server && w->hlen)
                return hs_fail(err, event, EPROTO,
                               ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
            return hs_fail(err, event, e, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
        }
        if (n < 0) {
            zl_conn_set_out(s, c, 0);
            return 0;
        }
        size_t from = w->hlen > 3 ? w->hlen - 3 : 0;
        w->hlen += (size_t)n;
        w->head[w->hlen] = '\0';
        const char *end = memmem(w->head + from, w->hlen - from, "\r\n\r\n", 4);
        /* the head is text; what follows it may be frames already */
        size_t text = end ? (size_t)(end - w->head) : w->hlen;
        int plausible = head_plausible(w) && !memchr(w->head, '\0', text);
        if (!w->server) {
            if (!plausible || (end && !zl_ws_judge_response(w->accept, w->head, end + 2)))
                return hs_fail(err, event, EPROTO,
                               ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
            if (end)
                return hs_done(w, (size_t)(end + 4 - w->head));
            if (w->hlen == WS_HEAD_MAX)
                return hs_fail(err, event, EPROTO,
                               ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
            continue;
        }
        char accept[32] = "";
        int status;
        if (!plausible || has_bare_lf(w->head, text))
            status = 400;
        else if (end)
            status = zl_ws_judge_request(w->path, w->head, end + 2, accept);
        else if (w->hlen == WS_HEAD_MAX)
            status = 431;
        else
            continue;
        if (end)
            w->head_end = (size_t)(end + 4 - w->head);
        if (respond(w, status, accept) != 0)
            return hs_fail(err, event, ENOMEM,
                           ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    }
}

/* ---- frames in ------------------------------------------------------------ */

/* Fails the connection (RFC 6455 7.1.7): close with status when it can
 * go at once (send_ctl_now), and the read ends with EPROTO. */
static void fail_ws(zl_ws_t *w, unsigned status)
{
    zl_ws_fail(w->s, w->c, status);
    w->end = END_ERR;
    w->end_errno = EPROTO;
}

/* a ping, a pong or a valid close frame complete in w->d.ctl */
static void control(zl_ws_t *w, uint8_t event)
{
    if (event == ZL_WSD_PING) {
        size_t fl;
        const char *f;
        if (w->close_sent || w->peer_close)
            return;
        /* at the front, in place of a pong not started yet (answer the
         * latest ping only: a peer that pings and never reads cannot grow
         * the queue), behind one whose bytes started */
        f = zl_ws_frame(w->s, w->c, OP_PONG, NULL, 0, w->d.ctl, w->d.ctl_len,
                        &fl);
        if (!f || zl_conn_queue_front(w->s, w->c, f, fl, 0x80 | OP_PONG) != 0) {
            w->end = END_ERR;
            w->end_errno = ENOMEM;
        }
    } else if (event == ZL_WSD_CLOSE) {
        /* answered by the stream layer (zl_ws_peer_closed): behind the
         * bytes accepted before, with its status echoed */
        w->peer_close = 1;
        w->reply_len = w->d.ctl_len >= 2 ? 2 : 0;
        memcpy(w->reply, w->d.ctl, w->reply_len);
        w->end = END_EOF;
    } /* a pong: nothing to do */
}

/* Decodes n input bytes at in (ws_frame.c): the payload of data frames
 * goes to out, which has room for room bytes and may be in itself or below
 * it (the payload moves down over the headers dropped); control frames are
 * acted on as they complete, a broken rule fails the connection. Stops
 * early only when out is full or the connection's end is decided. Returns
 * the input bytes used; *made: the payload bytes out got. */
static size_t decode(zl_ws_t *w, const uint8_t *in, size_t n, uint8_t *out,
                     size_t room, size_t *made)
{
    size_t i = 0, o = 0;
    while (i < n && !w->end) {
        size_t m;
        i += zl_wsd_decode(&w->d, in + i, n - i, out + o, room - o, &m);
        o += m;
        uint8_t ev = w->d.event;
        if (ev == ZL_WSD_NONE)
            break; /* out is full, or the input was all used */
        if (ev == ZL_WSD_FAIL) {
            fail_ws(w, w->d.fail_code);
            break;
        }
        w->d.event = ZL_WSD_NONE;
        control(w, ev);
    }
    *made = o;
    return i;
}

/*
 * The payload bytes of the frames received, up to len. Bytes read with the
 * handshake's head are decoded first (into buf); then one transport read
 * goes straight into buf and is decoded in place, so a batch costs one
 * recv (one SSL_read for wss) like tcp://, and nothing is left over: the
 * payload of n input bytes is at most n bytes. Only the partial header at
 * the end of a read and a control frame's payload (in w->d, ws_frame.h) are
 * kept, and a read that carried no payload at all (headers, control
 * frames) is followed by another one.
 */
ssize_t zl_ws_recv(zl_conn_t *c, void *vbuf, size_t len)
{
    zl_ws_t *w = c->ws;
    uint8_t *buf = vbuf;
    size_t got = 0, made;
    w->more = 0;
    if (w->pre_off < w->pre_len) {
        w->pre_off += decode(w, (const uint8_t *)w->head + w->pre_off,
                             w->pre_len - w->pre_off, buf, len, &made);
        got = made;
        if (w->pre_off == w->pre_len || w->end) {
            free(w->head);
            w->head = NULL;
            w->pre_off = w->pre_len = 0;
        }
    }
    while (got < len && !w->end && w->pre_off == w->pre_len) {
        size_t room = len - got;
        ssize_t n = zl_raw_recv(c, buf + got, room);
        if (n > 0) {
            decode(w, buf + got, (size_t)n, buf + got, room, &made);
            got += made;
            /* a short TCP read emptied the socket: no second read that
             * would only say EAGAIN (TLS reads end at a record) */
            if (got || ((size_t)n < room && !c->ssl))
                break;
            continue;
        }
        if (n == 0) {
            w->end = END_EOF;
        } else if (!io_again()) {
            w->end = END_ERR;
            w->end_errno = errno;
        }
        break;
    }
    if (got) {
        w->more = w->end != END_NONE; /* the end comes with the next read */
        return (ssize_t)got;
    }
    if (w->end == END_EOF)
        return 0;
    errno = w->end == END_ERR ? w->end_errno : EAGAIN;
    return -1;
}

int zl_ws_pending(const zl_conn_t *c)
{
    const zl_ws_t *w = c->ws;
    /* the end decided behind delivered bytes, bytes read with the head (a
     * partial header needs more input, which epoll reports) */
    return w->more || w->pre_off < w->pre_len;
}

void zl_ws_end(zl_conn_t *c)
{
    zl_ws_t *w = c->ws;
    if (!w)
        return;
    free(w->path);
    free(w->host);
    free(w->head);
    free(w->out);
    free(w);
    c->ws = NULL;
}

void zl_format_conn_addr(const zl_conn_t *c, const zl_sockaddr_t *a, int tls,
                         char *buf, size_t n)
{
    if (!c->ws) {
        zl_format_addr_tls(a, tls, buf, n);
        return;
    }
    /* the path belongs to the server's address */
    int server_side = (a == &c->remote) == (c->outbound != 0);
    zl_format_addr_ws(a, ZL_K_WS | (c->ws->tls ? ZL_K_TLS : 0),
                      server_side ? c->ws->path : NULL, buf, n);
}

#else /* !ZLINK_HAVE_WS */

int zl_ws_available(void)
{
    return 0;
}

int zl_ws_start(zl_stream_t *s, zl_conn_t *c, int server, const char *path,
                const char *host)
{
    (void)s;
    (void)c;
    (void)server;
    (void)path;
    (void)host;
    errno = EPROTONOSUPPORT;
    return -1;
}

int zl_ws_handshake(zl_stream_t *s, zl_conn_t *c, int *err, uint32_t *event)
{
    (void)s;
    (void)c;
    *err = EPROTONOSUPPORT;
    *event = ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    return -1;
}

ssize_t zl_ws_recv(zl_conn_t *c, void *buf, size_t len)
{
    (void)c;
    (void)buf;
    (void)len;
    errno = EPROTONOSUPPORT;
    return -1;
}

int zl_ws_pending(const zl_conn_t *c)
{
    (void)c;
    return 0;
}

const char *zl_ws_frame(zl_stream_t *s, zl_conn_t *c, int opcode,
                        const void *pre, size_t plen, const void *data,
                        size_t len, size_t *out_len)
{
    (void)s;
    (void)c;
    (void)opcode;
    (void)pre;
    (void)plen;
    (void)data;
    (void)len;
    (void)out_len;
    return NULL;
}

int zl_ws_queue_close(zl_stream_t *s, zl_conn_t *c, unsigned status)
{
    (void)s;
    (void)c;
    (void)status;
    return -1;
}

void zl_ws_goodbye(zl_stream_t *s, zl_conn_t *c)
{
    (void)s;
    (void)c;
}

int zl_ws_peer_closed(const zl_conn_t *c)
{
    (void)c;
    return 0;
}

int zl_ws_drop_close(zl_stream_t *s, zl_conn_t *c, unsigned code)
{
    (void)s;
    (void)c;
    (void)code;
    return -1;
}

int zl_ws_queue_reply(zl_stream_t *s, zl_conn_t *c)
{
    (void)s;
    (void)c;
    return -1;
}

void zl_ws_fail(zl_stream_t *s, zl_conn_t *c, unsigned status)
{
    (void)s;
    (void)c;
    (void)status;
}

void zl_ws_end(zl_conn_t *c)
{
    (void)c;
}

void zl_format_conn_addr(const zl_conn_t *c, const zl_sockaddr_t *a, int tls,
                         char *buf, size_t n)
{
    (void)c;
    zl_format_addr_tls(a, tls, buf, n);
}

#endif
