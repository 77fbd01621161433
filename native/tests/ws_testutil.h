/* ws_testutil.h - raw WebSocket peers for the ws:// tests: a blocking TCP
 * socket that speaks the upgrade and frames by hand (written here from the
 * RFC, independent of the library's code), so the tests can send what a
 * well-behaved peer never would. */
#ifndef ZLINK_WS_TESTUTIL_H
#define ZLINK_WS_TESTUTIL_H

#include "tls_testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>

/* A listening TCP socket on 127.0.0.1:*; *port gets its port. */
static inline int tu_raw_listen(uint16_t *port)
{
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
          listen(fd, 16) == 0);
    CHECK(getsockname(fd, (struct sockaddr *)&a, &al) == 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static inline void tu_send_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        CHECK(k > 0);
        b += k;
        n -= (size_t)k;
    }
}

/* Reads an HTTP head (up to the empty line) into buf; returns its length,
 * 0 if the peer closed first. The socket is read a byte at a time, so
 * nothing after the head is consumed. */
static inline size_t tu_read_head(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t k = recv(fd, buf + n, 1, 0);
        if (k <= 0)
            break;
        n++;
        buf[n] = '\0';
        if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
            return n;
    }
    buf[n] = '\0';
    return 0;
}

/* base64(SHA-1(key GUID)), computed the test's own way */
static inline void tu_ws_accept(const char *key, char *out)
{
    char cat[128];
    unsigned char md[20];
    unsigned mdlen = 0;
    snprintf(cat, sizeof cat, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    CHECK(EVP_Digest(cat, strlen(cat), md, &mdlen, EVP_sha1(), NULL) == 1);
    EVP_EncodeBlock((unsigned char *)out, md, 20);
}

/* Steps p (NULL: none) until fd is readable, at most 5 s. */
static inline void tu_wait_readable(int fd, tu_pair_t *p)
{
    long long end = tu_now_ms() + 5000;
    struct pollfd pf = {fd, POLLIN, 0};
    while (poll(&pf, 1, p ? 0 : 5000) == 0) {
        CHECK(tu_now_ms() < end);
        if (p)
            tu_step(p);
    }
}

/* A raw client's upgrade on fd for path, stepping p (the server's side)
 * meanwhile; checks the 101 and its Accept. */
static inline void tu_ws_client_handshake(int fd, const char *path, tu_pair_t *p)
{
    char req[512], head[4096], want[64], line[128];
    const char *key = "dGhlIHNhbXBsZSBub25jZQ==";
    snprintf(req, sizeof req,
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nuPgRaDe: WebSocket\r\n"
             "Connection: keep-alive, Upgrade\r\nX-Extra: 1\r\n"
             "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
             path, key);
    tu_send_all(fd, req, strlen(req));
    tu_wait_readable(fd, p);
    CHECK(tu_read_head(fd, head, sizeof head) > 0);
    CHECK(strncmp(head, "HTTP/1.1 101 ", 13) == 0);
    tu_ws_accept(key, want);
    snprintf(line, sizeof line, "Sec-WebSocket-Accept: %s\r\n", want);
    CHECK(strstr(head, line));
}

/* One frame: fin, opcode (with rsv bits in 0x70), payload; masked when
 * mask is set. Returns its length in out (cap >= n + 14). */
static inline size_t tu_ws_frame(unsigned char *out, int fin, int op, int mask,
                                 const void *p, uint64_t n)
{
    size_t h = 0;
    out[h++] = (unsigned char)((fin ? 0x80 : 0) | op);
    unsigned char m = mask ? 0x80 : 0;
    if (n < 126) {
        out[h++] = (unsigned char)(m | n);
    } else if (n < 65536) {
        out[h++] = m | 126;
        out[h++] = (unsigned char)(n >> 8);
        out[h++] = (unsigned char)n;
    } else {
        out[h++] = m | 127;
        for (int i = 7; i >= 0; i--)
            out[h++] = (unsigned char)(n >> (8 * i));
    }
    unsigned char key[4] = {0, 0, 0, 0};
    if (mask) {
        CHECK(RAND_bytes(key, 4) == 1);
        memcpy(out + h, key, 4);
        h += 4;
    }
    const unsigned char *b = p;
    for (uint64_t i = 0; i < n; i++)
        out[h + i] = b[i] ^ key[i & 3];
    return h + (size_t)n;
}

/* A frame read from fd (blocking): its first byte, payload into buf
 * (*n its length, at most cap). Returns -1 when the peer closed. */
static inline int tu_ws_read_frame(int fd, unsigned char *buf, size_t cap,
                                   size_t *n, int *masked)
{
    unsigned char h[14];
    if (recv(fd, h, 2, MSG_WAITALL) != 2)
        return -1;
    uint64_t len = h[1] & 0x7f;
    if (len == 126) {
        CHECK(recv(fd, h + 2, 2, MSG_WAITALL) == 2);
        len = ((uint64_t)h[2] << 8) | h[3];
    } else if (len == 127) {
        CHECK(recv(fd, h + 2, 8, MSG_WAITALL) == 8);
        len = 0;
        for (int i = 0; i < 8; i++)
            len = (len << 8) | h[2 + i];
    }
    unsigned char key[4] = {0, 0, 0, 0};
    if (masked)
        *masked = (h[1] & 0x80) != 0;
    if (h[1] & 0x80)
        CHECK(recv(fd, key, 4, MSG_WAITALL) == 4);
    CHECK(len <= cap);
    if (len)
        CHECK(recv(fd, buf, (size_t)len, MSG_WAITALL) == (ssize_t)len);
    for (uint64_t i = 0; i < len; i++)
        buf[i] ^= key[i & 3];
    *n = (size_t)len;
    return h[0];
}

/* A STREAM socket (framing tu_tls_framing) bound to
 * scheme://127.0.0.1:*path (wss with the test certificate); ep gets
 * LAST_ENDPOINT. */
static inline void *tu_ws_server(void *ctx, const tu_tls_t *t, int wss,
                                 const char *path, char *ep, size_t cap)
{
    char b[256];
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(s);
    tu_set_framing(s, tu_tls_framing);
    if (wss) {
        tu_set_str(s, ZLINK_TLS_CERT, t->srv_cert);
        tu_set_str(s, ZLINK_TLS_KEY, t->srv_key);
    }
    snprintf(b, sizeof b, "%s://127.0.0.1:*%s", wss ? "wss" : "ws", path);
    CHECK(zlink_bind(s, b) == 0);
    tu_last_endpoint(s, ep, cap);
    CHECK(strncmp(ep, wss ? "wss://127.0.0.1:" : "ws://127.0.0.1:",
                  wss ? 16 : 15) == 0);
    return s;
}

/* A ws:// server's one connection from a raw client: the server (side a of
 * p, which steps it), its monitor (every event), the client's descriptor
 * and the connection's id. */
typedef struct tu_ws_conn {
    void *srv, *mon;
    int fd;
    uint32_t id;
    tu_pair_t p;
} tu_ws_conn_t;

/* c's server (ws://, framing tu_tls_framing) and its monitor; ep gets the
 * endpoint. Options the connection must have go on c->srv before
 * tu_ws_conn_accept. */
static inline void tu_ws_conn_listen(tu_ws_conn_t *c, void *ctx,
                                     const tu_tls_t *t, char *ep, size_t cap)
{
    memset(&c->p, 0, sizeof c->p);
    c->srv = tu_ws_server(ctx, t, 0, "", ep, cap);
    c->mon = zlink_socket_monitor_open(c->srv, ZLINK_EVENT_ALL);
}

/* c's raw client (SO_RCVBUF rcvbuf when > 0) connected to ep and upgraded
 * at "/", and the server's 0x01 for it */
static inline void tu_ws_conn_accept(tu_ws_conn_t *c, const char *ep, int rcvbuf)
{
    c->fd = tu_raw_connect_rcvbuf(tu_ep_port(ep), rcvbuf);
    c->p.a = c->srv;
    tu_ws_client_handshake(c->fd, "/", &c->p);
    CHECK(TU_UNTIL(&c->p, c->p.sa.ups == 1, 5000));
    c->id = c->p.sa.last_id;
}

/* closes the client (unless c->fd is -1), the monitor and the server */
static inline void tu_ws_conn_close(tu_ws_conn_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    zlink_close(c->mon);
    zlink_close(c->srv);
}

#endif
