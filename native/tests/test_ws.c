/* test_ws.c - ws:// and wss:// on STREAM sockets: zlink_has, endpoint forms
 * and LAST_ENDPOINT (as zlink: host as given, real port, path), echo both
 * ways over ws and wss (the 0x01/0x00 contract, LENGTH bodies of one byte
 * and of 200,000), and the
 * handshake failures: raw clients sending garbage, a GET without upgrade, a
 * wrong path, an oversize head (the server answers, drops them and serves
 * the next client); fake servers answering 200 or a wrong Accept (the
 * client gives up: HANDSHAKE_FAILED_PROTOCOL, CLOSED, 0x00); peers stalling
 * in the handshake (HANDSHAKE_IVL); ws to a wss port and back; a wrong CA. */
#include "ws_testutil.h"

static tu_tls_t T;

static void read_exact(tu_pair_t *p, int side_b, uint32_t id, unsigned char *dst,
                       size_t n)
{
    void *to = side_b ? p->b : p->a;
    void *peer = side_b ? p->a : p->b;
    size_t have = 0;
    long long end = tu_now_ms() + 10000;
    while (have < n) {
        if (tu_now_ms() >= end)
            fprintf(stderr, "read_exact: %zu of %zu bytes (side %d)\n", have, n, side_b);
        CHECK(tu_now_ms() < end);
        uint32_t rid;
        int r = tu_stream_recv(to, &rid, dst + have, n - have, ZLINK_DONTWAIT);
        if (r < 0) {
            CHECK(zlink_errno() == EAGAIN);
            zlink_pollitem_t it[2] = {{to, 0, ZLINK_POLLIN, 0}, {peer, 0, ZLINK_POLLIN, 0}};
            zlink_poll(it, 2, 5);
            continue;
        }
        CHECK(rid == id && tu_last_event(to) == -1);
        have += (size_t)r;
    }
}

static void test_endpoints(void *ctx)
{
    CHECK(zlink_has("ws") == 1 && zlink_has("wss") == 1);
    char ep[256];
    void *s = tu_ws_server(ctx, &T, 0, "/chat/room", ep, sizeof ep);
    CHECK(strstr(ep, "/chat/room") && strchr(ep + 5, '/') == strstr(ep, "/chat/room"));
    CHECK(zlink_bind(s, "ws://127.0.0.1:*/") == 0);
    tu_last_endpoint(s, ep, sizeof ep);
    CHECK(ep[strlen(ep) - 1] == '/' && strchr(ep + 5, '/') == ep + strlen(ep) - 1);
    char ep2[256];
    CHECK(zlink_bind(s, "ws://127.0.0.1:*") == 0); /* the default path, shown */
    tu_last_endpoint(s, ep2, sizeof ep2);
    CHECK(strncmp(ep2, "ws://127.0.0.1:", 15) == 0 && ep2[strlen(ep2) - 1] == '/');
    CHECK(zlink_unbind(s, ep2) == 0);
    CHECK(zlink_bind(s, "ws://localhost:*/p") == 0); /* the host as given */
    tu_last_endpoint(s, ep2, sizeof ep2);
    CHECK(strncmp(ep2, "ws://localhost:", 15) == 0 && strcmp(strrchr(ep2, '/'), "/p") == 0);
    CHECK(zlink_unbind(s, ep2) == 0);
    CHECK_ERR(zlink_bind(s, "ws://127.0.0.1:*/a b"), EINVAL);
    CHECK_ERR(zlink_bind(s, "ws://:5/"), EINVAL);
    CHECK_ERR(zlink_connect(s, "ws://127.0.0.1:0/x"), EINVAL);
    CHECK_ERR(zlink_connect(s, "wss://*:5555"), EINVAL);
    CHECK_ERR(zlink_bind(s, "wss://127.0.0.1:*"), EINVAL); /* no certificate */
    CHECK(zlink_unbind(s, ep) == 0);
    zlink_close(s);
}

static void echo(void *ctx, int wss, const char *path)
{
    char ep[256];
    void *srv = tu_ws_server(ctx, &T, wss, path, ep, sizeof ep);
    void *cli = wss ? tu_tls_client(ctx, T.ca, -1) : zlink_socket(ctx, ZLINK_STREAM);
    void *smon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    void *cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    tu_pair_t p = tu_connect_ready(cli, srv, cmon, smon, ep);
    uint32_t cid = p.sa.last_id, sid = p.sb.last_id;
    zlink_peer_info_t info;
    size_t n = 1;
    CHECK(zlink_socket_peers(srv, &info, &n) == 0 && n == 1);
    CHECK(strncmp(info.remote_addr, wss ? "wss://127.0.0.1:" : "ws://127.0.0.1:",
                  wss ? 16 : 15) == 0);
    n = 1;
    CHECK(zlink_socket_peers(cli, &info, &n) == 0 && n == 1);
    CHECK(strcmp(info.remote_addr, ep) == 0); /* with the path */

    static unsigned char big[200000], got[200000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (unsigned char)(i * 7 + 3);
    CHECK(tu_stream_send(cli, cid, big, sizeof big, 0) == (int)sizeof big);
    read_exact(&p, 1, sid, got, sizeof big);
    CHECK(memcmp(big, got, sizeof big) == 0);
    CHECK(tu_stream_send(srv, sid, big, sizeof big, 0) == (int)sizeof big);
    read_exact(&p, 0, cid, got, sizeof big);
    CHECK(memcmp(big, got, sizeof big) == 0);
    CHECK(tu_stream_send(cli, cid, "z", 1, 0) == 1);
    read_exact(&p, 1, sid, got, 1); /* a one-byte body, at once */
    CHECK(tu_stream_send(cli, cid, "yx", 2, 0) == 2);
    read_exact(&p, 1, sid, got + 1, 2);
    CHECK(memcmp(got, "zyx", 3) == 0);
    /* unknown ids */
    CHECK_ERR(tu_stream_send(srv, sid + 12345, "ab", 2, 0), EHOSTUNREACH);

    /* the server closes: a close frame, one 0x00 on each side; the
     * client's is REMOTE */
    CHECK(tu_stream_send(srv, sid, "", 0, 0) == 0);
    p.sa.downs = p.sb.downs = 0;
    CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_DISCONNECTED, 5000) ==
          ZLINK_DISCONNECT_REMOTE);
    CHECK(TU_UNTIL(&p, p.sa.downs == 1 && p.sb.downs == 1, 5000));
    for (int i = 0; i < 10; i++)
        tu_step(&p);
    CHECK(p.sa.downs == 1 && p.sb.downs == 1);
    zlink_close(smon);
    zlink_close(cmon);
    zlink_close(cli);
    zlink_close(srv);
}

/* A raw client sends head (then closes its side or not); the server answers
 * with status and drops it, reporting HANDSHAKE_FAILED_PROTOCOL; it then
 * serves a good client. */
static void bad_request(void *ctx, void *srv, void *smon, const char *ep,
                        const char *head, size_t n, const char *status)
{
    int fd = tu_raw_connect(tu_ep_port(ep));
    tu_send_all(fd, head, n);
    tu_pair_t p = {srv, NULL, {0}, {0}};
    CHECK(tu_wait_event(&p, smon, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, 5000) == EPROTO);
    char resp[4096];
    ssize_t k = recv(fd, resp, sizeof resp - 1, MSG_WAITALL);
    resp[k > 0 ? k : 0] = '\0';
    CHECK(strncmp(resp, status, strlen(status)) == 0);
    close(fd);
    CHECK(p.sa.ups == 0 && p.sa.downs == 0);
    /* the next client is served */
    fd = tu_raw_connect(tu_ep_port(ep));
    const char *path = strchr(ep + 6, '/');
    tu_pair_t q = {srv, NULL, {0}, {0}};
    tu_ws_client_handshake(fd, path ? path : "/", &q);
    CHECK(TU_UNTIL(&q, q.sa.ups == 1, 5000));
    close(fd);
    CHECK(TU_UNTIL(&q, q.sa.downs == 1, 5000));
    (void)ctx;
}

static void test_bad_requests(void *ctx)
{
    char ep[256];
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    /* the server's calls run in this thread: the tests below read the raw
     * socket after pumping it */
    CHECK(zlink_bind(srv, "ws://127.0.0.1:*/feed") == 0);
    tu_last_endpoint(srv, ep, sizeof ep);
    void *smon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    const char garbage[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
    bad_request(ctx, srv, smon, ep, garbage, sizeof garbage - 1, "HTTP/1.1 400 ");
    const char plain[] = "GET /feed HTTP/1.1\r\nHost: x\r\n\r\n";
    bad_request(ctx, srv, smon, ep, plain, sizeof plain - 1, "HTTP/1.1 400 ");
    const char wrong[] = "GET /other HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                         "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                         "Sec-WebSocket-Version: 13\r\n\r\n";
    bad_request(ctx, srv, smon, ep, wrong, sizeof wrong - 1, "HTTP/1.1 404 ");
    const char badkey[] = "GET /feed HTTP/1.1\r\nUpgrade: websocket\r\n"
                          "Connection: Upgrade\r\nSec-WebSocket-Key: short\r\n"
                          "Sec-WebSocket-Version: 13\r\n\r\n";
    bad_request(ctx, srv, smon, ep, badkey, sizeof badkey - 1, "HTTP/1.1 400 ");
    /* bare LF line ends (RFC 7230 3.5 allows a recipient to refuse them):
     * 400 at once, not silence until the handshake times out */
    const char bare_lf[] = "GET /feed HTTP/1.1\nHost: x\nUpgrade: websocket\n"
                           "Connection: Upgrade\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\n"
                           "Sec-WebSocket-Version: 13\n\n";
    bad_request(ctx, srv, smon, ep, bare_lf, sizeof bare_lf - 1, "HTTP/1.1 400 ");
    const char one_lf[] = "GET /feed HTTP/1.1\r\nHost: x\nUpgrade: websocket\r\n";
    bad_request(ctx, srv, smon, ep, one_lf, sizeof one_lf - 1, "HTTP/1.1 400 ");
    /* a query does not change the path: another path with one is still 404 */
    const char other_q[] = "GET /other?feed HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n";
    bad_request(ctx, srv, smon, ep, other_q, sizeof other_q - 1, "HTTP/1.1 404 ");
    /* and the right path with a query is served */
    const char *queries[] = {"/feed?token=abc&x=1", "/feed?"};
    for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) {
        int fd = tu_raw_connect(tu_ep_port(ep));
        tu_pair_t q = {srv, NULL, {0}, {0}};
        tu_ws_client_handshake(fd, queries[i], &q);
        CHECK(TU_UNTIL(&q, q.sa.ups == 1, 5000));
        close(fd);
        CHECK(TU_UNTIL(&q, q.sa.downs == 1, 5000));
    }
    static char huge[9000];
    memcpy(huge, "GET /feed HTTP/1.1\r\nX: ", 23);
    memset(huge + 23, 'a', sizeof huge - 23);
    bad_request(ctx, srv, smon, ep, huge, sizeof huge, "HTTP/1.1 431 ");
    zlink_close(smon);
    zlink_close(srv);
}

/* A fake server answers the client's upgrade with resp (%s: the right
 * Accept): the client gives up with PROTOCOL, CLOSED and its 0x00. */
static void fake_server(void *ctx, const char *resp_fmt, int right_accept)
{
    uint16_t port;
    int lfd = tu_raw_listen(&port);
    char ep[64];
    snprintf(ep, sizeof ep, "ws://127.0.0.1:%u/x", port);
    void *cli = zlink_socket(ctx, ZLINK_STREAM);
    void *cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    CHECK(zlink_connect(cli, ep) == 0);
    tu_pair_t p = {cli, NULL, {0}, {0}};
    int fd = accept(lfd, NULL, NULL);
    CHECK(fd >= 0);
    tu_wait_readable(fd, &p);
    char head[4096], resp[1024], acc[64];
    CHECK(tu_read_head(fd, head, sizeof head) > 0);
    CHECK(strncmp(head, "GET /x HTTP/1.1\r\n", 17) == 0);
    CHECK(strstr(head, "\r\nSec-WebSocket-Version: 13\r\n"));
    CHECK(strstr(head, "\r\nUpgrade: websocket\r\n"));
    char host[64];
    snprintf(host, sizeof host, "\r\nHost: 127.0.0.1:%u\r\n", port);
    CHECK(strstr(head, host));
    const char *k = strstr(head, "Sec-WebSocket-Key: ");
    CHECK(k);
    char key[32];
    memcpy(key, k + 19, 24);
    key[24] = '\0';
    tu_ws_accept(key, acc);
    if (!right_accept)
        acc[0] = acc[0] == 'A' ? 'B' : 'A';
    snprintf(resp, sizeof resp, resp_fmt, acc);
    tu_send_all(fd, resp, strlen(resp));
    CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, 5000) == EPROTO);
    CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_CLOSED, 5000) == EPROTO);
    CHECK(TU_UNTIL(&p, p.sa.downs == 1, 5000));
    CHECK(p.sa.ups == 0);
    close(fd);
    close(lfd);
    zlink_close(cmon);
    zlink_close(cli);
}

static void test_fake_servers(void *ctx)
{
    fake_server(ctx, "HTTP/1.1 200 OK\r\nX: %s\r\nContent-Length: 0\r\n\r\n", 1);
    fake_server(ctx, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", 0);
    fake_server(ctx, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: %s\r\n\r\n", 1);
    fake_server(ctx, "SSH-2.0-OpenSSH %s\r\n", 1);
}

/* Stalling peers: a raw client that sends half a request (server drops it
 * after HANDSHAKE_IVL), a raw server that never answers (the client's
 * attempt times out and is retried, as a TCP failure is). */
static void test_stalls(void *ctx)
{
    char ep[256];
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_int(srv, ZLINK_HANDSHAKE_IVL, 300);
    CHECK(zlink_bind(srv, "ws://127.0.0.1:*") == 0);
    tu_last_endpoint(srv, ep, sizeof ep);
    void *smon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    for (int k = 0; k < 2; k++) {
        int fd = tu_raw_connect(tu_ep_port(ep));
        if (k)
            tu_send_all(fd, "GET / HTTP/1.1\r\nHost", 20);
        tu_pair_t p = {srv, NULL, {0}, {0}};
        long long t0 = tu_now_ms();
        CHECK(tu_wait_event(&p, smon, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 5000) ==
              ETIMEDOUT);
        long long dt = tu_now_ms() - t0;
        CHECK(dt >= 250 && dt < 3000);
        char b;
        CHECK(recv(fd, &b, 1, 0) == 0);
        close(fd);
    }
    zlink_close(smon);
    zlink_close(srv);

    uint16_t port;
    int lfd = tu_raw_listen(&port);
    snprintf(ep, sizeof ep, "ws://127.0.0.1:%u", port);
    void *cli = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_int(cli, ZLINK_HANDSHAKE_IVL, 200);
    tu_set_int(cli, ZLINK_RECONNECT_IVL, 50);
    void *cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    CHECK(zlink_connect(cli, ep) == 0);
    tu_pair_t p = {cli, NULL, {0}, {0}};
    CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 5000) == ETIMEDOUT);
    CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_CONNECT_RETRIED, 5000) == ETIMEDOUT);
    CHECK(p.sa.ups == 0 && p.sa.downs == 0);
    zlink_close(cmon);
    zlink_close(cli);
    close(lfd);
}

/* ws to a wss port, wss to a ws port, wss with the wrong CA: each client
 * gives up (CLOSED, 0x00); the server never delivers 0x01. */
static void mismatch(void *ctx, int srv_wss, int cli_wss, const char *ca,
                     uint32_t event, int err)
{
    char ep[256], cep[256];
    void *srv = tu_ws_server(ctx, &T, srv_wss, "", ep, sizeof ep);
    snprintf(cep, sizeof cep, "%s://%s", cli_wss ? "wss" : "ws", strstr(ep, "://") + 3);
    void *cli = cli_wss ? tu_tls_client(ctx, ca, -1) : zlink_socket(ctx, ZLINK_STREAM);
    tu_set_int(cli, ZLINK_RECONNECT_IVL, -1);
    void *cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    CHECK(zlink_connect(cli, cep) == 0);
    tu_pair_t p = {cli, srv, {0}, {0}};
    long long got = tu_wait_event(&p, cmon, event, 5000);
    if (got != err)
        fprintf(stderr, "mismatch %d->%d: event %#x gave %lld\n", cli_wss, srv_wss,
                (unsigned)event, got);
    CHECK(got == err);
    CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_CLOSED, 5000) == err);
    CHECK(TU_UNTIL(&p, p.sa.downs == 1, 5000));
    for (int i = 0; i < 20; i++)
        tu_step(&p);
    CHECK(p.sa.ups == 0 && p.sb.ups == 0 && p.sb.downs == 0);
    zlink_close(cmon);
    zlink_close(cli);
    zlink_close(srv);
}

int main(void)
{
    /* the build has ws:// whenever it runs this test */
    tu_require("test_ws", "ws", "ws");
    tu_tls_make(&T);
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    test_endpoints(ctx);
    echo(ctx, 0, "");
    echo(ctx, 0, "/echo?x=1");
    echo(ctx, 1, "/secure");
    test_bad_requests(ctx);
    test_fake_servers(ctx);
    test_stalls(ctx);
    /* OpenSSL drops an HTTP request without an alert: to the ws client the
     * connection just ended (a transport failure; RECONNECT_IVL -1 here) */
    mismatch(ctx, 1, 0, NULL, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, ECONNRESET);
    mismatch(ctx, 0, 1, T.ca, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, EPROTO);
    mismatch(ctx, 1, 1, T.ca2, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, EACCES);
    tu_tls_end(ctx, &T, "ok");
    return 0;
}
