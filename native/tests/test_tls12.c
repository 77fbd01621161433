/* test_tls12.c - a tls:// STREAM client against a server that speaks TLS
 * 1.2 only, as zlink 1.3's does: an OpenSSL server made here (maximum
 * protocol TLS1_2_VERSION) on a non-blocking socket. The handshake settles
 * on TLS 1.2, and framed bodies go both ways (LENGTH): the server's
 * `00 00 00 05 hello` is the payload `hello`, the client's `xyz` reaches
 * the server as `00 00 00 03 78 79 7a`, a 20,000-byte body (two records)
 * comes whole; the server's close ends with the client's disconnect. */
#include "ws_testutil.h" /* tls_testutil.h, tu_raw_listen */

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

static void *cli;
static uint32_t cid;

/* the client's receive, stepped: 1 if it got a message (*n, *ev) */
static int cli_recv(unsigned char *buf, size_t cap, int *n, int *ev)
{
    uint32_t id;
    int r = tu_stream_recv(cli, &id, buf, cap, ZLINK_DONTWAIT);
    if (r < 0) {
        CHECK(zlink_errno() == EAGAIN);
        zlink_pollitem_t it = {cli, 0, ZLINK_POLLIN, 0};
        zlink_poll(&it, 1, 1);
        return 0;
    }
    *n = r;
    *ev = tu_last_event(cli);
    if (*ev == 1)
        cid = id;
    else
        CHECK(id == cid);
    return 1;
}

/* One step of the server side: SSL_accept, SSL_read or SSL_write until it
 * does not block; the client is stepped between. */
static int ssl_io(SSL *ssl, int (*op)(SSL *, void *, int), void *b, int n)
{
    long long end = tu_now_ms() + 10000;
    for (;;) {
        ERR_clear_error();
        int k = op(ssl, b, n);
        if (k > 0)
            return k;
        int e = SSL_get_error(ssl, k);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            return -1;
        CHECK(tu_now_ms() < end);
        unsigned char tmp[64];
        int m, ev;
        CHECK(!cli_recv(tmp, sizeof tmp, &m, &ev) || ev == 1);
    }
}

static int op_read(SSL *s, void *b, int n)
{
    return SSL_read(s, b, n);
}

static int op_write(SSL *s, void *b, int n)
{
    return SSL_write(s, b, n);
}

static int op_accept(SSL *s, void *b, int n)
{
    (void)b;
    (void)n;
    return SSL_accept(s);
}

int main(void)
{
    tu_require("test_tls12", "tls", "TLS");
    tu_tls_t T;
    tu_tls_make(&T);
    SSL_CTX *sctx = SSL_CTX_new(TLS_server_method());
    CHECK(sctx);
    CHECK(SSL_CTX_set_max_proto_version(sctx, TLS1_2_VERSION) == 1);
    CHECK(SSL_CTX_use_certificate_chain_file(sctx, T.srv_cert) == 1);
    CHECK(SSL_CTX_use_PrivateKey_file(sctx, T.srv_key, SSL_FILETYPE_PEM) == 1);

    uint16_t port;
    int lfd = tu_raw_listen(&port);
    void *ctx = zlink_ctx_new();
    cli = tu_tls_client(ctx, T.ca, -1);
    tu_set_str(cli, ZLINK_TLS_HOSTNAME, "localhost");
    char ep[64];
    snprintf(ep, sizeof ep, "tls://127.0.0.1:%u", port);
    CHECK(zlink_connect(cli, ep) == 0);
    int fd = -1;
    long long end = tu_now_ms() + 5000;
    while ((fd = accept(lfd, NULL, NULL)) < 0) {
        CHECK(tu_now_ms() < end);
        unsigned char tmp[8];
        int m, ev;
        cli_recv(tmp, sizeof tmp, &m, &ev);
    }
    CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
    SSL *ssl = SSL_new(sctx);
    CHECK(ssl && SSL_set_fd(ssl, fd) == 1);
    CHECK(ssl_io(ssl, op_accept, NULL, 0) == 1);
    CHECK(SSL_version(ssl) == TLS1_2_VERSION);

    /* the client's connect event */
    unsigned char buf[32768];
    int n = 0, ev = -1;
    end = tu_now_ms() + 5000;
    while (!cli_recv(buf, sizeof buf, &n, &ev))
        CHECK(tu_now_ms() < end);
    CHECK(ev == 1 && n == 1 && buf[0] == 1);

    /* server to client: 00 00 00 05 hello is hello */
    CHECK(ssl_io(ssl, op_write, "\0\0\0\5hello", 9) == 9);
    end = tu_now_ms() + 5000;
    while (!cli_recv(buf, sizeof buf, &n, &ev))
        CHECK(tu_now_ms() < end);
    CHECK(ev == -1 && n == 5 && memcmp(buf, "hello", 5) == 0);

    /* client to server: xyz is 00 00 00 03 78 79 7a */
    CHECK(tu_stream_send(cli, cid, "xyz", 3, 0) == 3);
    unsigned char in[16];
    int got = 0;
    while (got < 7) {
        int k = ssl_io(ssl, op_read, in + got, 7 - got);
        CHECK(k > 0);
        got += k;
    }
    CHECK(memcmp(in, "\0\0\0\3xyz", 7) == 0);

    /* a body over a record, written in two records */
    static unsigned char big[20004];
    tu_put_be32(big, 20000);
    for (int i = 0; i < 20000; i++)
        big[4 + i] = (unsigned char)(i * 11 + 5);
    CHECK(ssl_io(ssl, op_write, big, 10000) == 10000);
    CHECK(ssl_io(ssl, op_write, big + 10000, 10004) == 10004);
    end = tu_now_ms() + 5000;
    while (!cli_recv(buf, sizeof buf, &n, &ev))
        CHECK(tu_now_ms() < end);
    CHECK(ev == -1 && n == 20000 && memcmp(buf, big + 4, 20000) == 0);

    /* the server closes: the client's disconnect, an orderly end */
    SSL_shutdown(ssl);
    close(fd);
    end = tu_now_ms() + 5000;
    while (!cli_recv(buf, sizeof buf, &n, &ev))
        CHECK(tu_now_ms() < end);
    CHECK(ev == 0 && tu_event_errno(cli) == 0);

    SSL_free(ssl);
    SSL_CTX_free(sctx);
    close(lfd);
    zlink_close(cli);
    tu_tls_end(ctx, &T, "test_tls12: TLS 1.2 server, framed bodies both ways: ok");
    return 0;
}
