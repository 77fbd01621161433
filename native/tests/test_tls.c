/* test_tls.c - tls:// on STREAM sockets: the TLS options (set, get,
 * ranges, the write-only password), bind/connect errors of a bad set-up,
 * a verified handshake with an echo both ways and the 0x01/0x00 contract,
 * and the failures: a wrong CA, a certificate for another host with
 * TLS_HOSTNAME, a required client certificate missing, a plain TCP client
 * on a TLS port (garbage before the handshake), a peer that stalls in the
 * handshake, a TLS client to a plain TCP server. Each failure is reported
 * (monitor event with an errno, 0x00 for a connect that gives up) and none
 * hangs. Certificates are made at run time (tls_testutil.h). */
#include "tls_testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

static tu_tls_t T;

/* Reads n payload bytes of connection sid from to, pumping peer meanwhile
 * (its send queue drains only inside its calls). */
static void read_exact(void *to, void *peer, uint32_t sid, unsigned char *dst,
                       size_t n)
{
    size_t have = 0;
    long long end = tu_now_ms() + 10000;
    while (have < n) {
        CHECK(tu_now_ms() < end);
        uint32_t id;
        int r = tu_stream_recv(to, &id, dst + have, n - have, ZLINK_DONTWAIT);
        if (r < 0) {
            CHECK(zlink_errno() == EAGAIN);
            zlink_pollitem_t it[2] = {{to, 0, ZLINK_POLLIN, 0},
                                      {peer, 0, ZLINK_POLLIN, 0}};
            zlink_poll(it, 2, 5);
            continue;
        }
        CHECK(id == sid && tu_last_event(to) == -1);
        have += (size_t)r;
    }
}

static void test_options(void *ctx)
{
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    char buf[2048];
    size_t len = sizeof buf;
    int v;
    /* defaults */
    CHECK(zlink_getsockopt(s, ZLINK_TLS_CERT, buf, &len) == 0 && len == 1 && !buf[0]);
    len = sizeof v;
    CHECK(zlink_getsockopt(s, ZLINK_TLS_VERIFY, &v, &len) == 0 && v == 1);
    CHECK(zlink_getsockopt(s, ZLINK_TLS_REQUIRE_CLIENT_CERT, &v, &len) == 0 && v == 0);
    CHECK(zlink_getsockopt(s, ZLINK_TLS_TRUST_SYSTEM, &v, &len) == 0 && v == 0);
    /* strings with or without their NUL */
    CHECK(zlink_setsockopt(s, ZLINK_TLS_CA, "/x/ca.pem", 10) == 0);
    len = sizeof buf;
    CHECK(zlink_getsockopt(s, ZLINK_TLS_CA, buf, &len) == 0 && len == 10 &&
          strcmp(buf, "/x/ca.pem") == 0);
    tu_set_str(s, ZLINK_TLS_HOSTNAME, "localhost");
    len = sizeof buf;
    CHECK(zlink_getsockopt(s, ZLINK_TLS_HOSTNAME, buf, &len) == 0 &&
          strcmp(buf, "localhost") == 0);
    len = 4;
    CHECK_ERR(zlink_getsockopt(s, ZLINK_TLS_HOSTNAME, buf, &len), EINVAL);
    /* empty clears */
    CHECK(zlink_setsockopt(s, ZLINK_TLS_HOSTNAME, "", 0) == 0);
    len = sizeof buf;
    CHECK(zlink_getsockopt(s, ZLINK_TLS_HOSTNAME, buf, &len) == 0 && len == 1);
    /* too long, embedded NUL, NULL with a length */
    memset(buf, 'a', sizeof buf);
    CHECK_ERR(zlink_setsockopt(s, ZLINK_TLS_CERT, buf, 1024), EINVAL);
    CHECK(zlink_setsockopt(s, ZLINK_TLS_CERT, buf, 1023) == 0);
    CHECK_ERR(zlink_setsockopt(s, ZLINK_TLS_CERT, "a\0b", 3), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, ZLINK_TLS_CERT, NULL, 3), EINVAL);
    /* ints are 0 or 1 */
    v = 2;
    CHECK_ERR(zlink_setsockopt(s, ZLINK_TLS_VERIFY, &v, sizeof v), EINVAL);
    v = -1;
    CHECK_ERR(zlink_setsockopt(s, ZLINK_TLS_TRUST_SYSTEM, &v, sizeof v), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, ZLINK_TLS_VERIFY, &v, 2), EINVAL);
    /* the password is write-only */
    tu_set_str(s, ZLINK_TLS_PASSWORD, "secret");
    len = sizeof buf;
    CHECK_ERR(zlink_getsockopt(s, ZLINK_TLS_PASSWORD, buf, &len), EINVAL);
    /* libzmq sockets take them with the same rules (tls:// and wss:// on
     * every socket type; test_zmp_transports uses them) */
    void *d = zlink_socket(ctx, ZLINK_DEALER);
    tu_set_str(d, ZLINK_TLS_CERT, "x");
    len = sizeof buf;
    CHECK(zlink_getsockopt(d, ZLINK_TLS_CERT, buf, &len) == 0 && len == 2 &&
          strcmp(buf, "x") == 0);
    v = 2;
    CHECK_ERR(zlink_setsockopt(d, ZLINK_TLS_VERIFY, &v, sizeof v), EINVAL);
    tu_set_str(d, ZLINK_TLS_PASSWORD, "secret");
    len = sizeof buf;
    CHECK_ERR(zlink_getsockopt(d, ZLINK_TLS_PASSWORD, buf, &len), EINVAL);
    zlink_close(d);
    zlink_close(s);
}

static void test_setup_errors(void *ctx)
{
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    /* a server needs a certificate and a key that matches it */
    CHECK_ERR(zlink_bind(s, "tls://127.0.0.1:*"), EINVAL);
    tu_set_str(s, ZLINK_TLS_CERT, "/nonexistent/cert.pem");
    CHECK_ERR(zlink_bind(s, "tls://127.0.0.1:*"), EINVAL);
    tu_set_str(s, ZLINK_TLS_CERT, T.srv_cert);
    tu_set_str(s, ZLINK_TLS_KEY, T.cli_key);
    CHECK_ERR(zlink_bind(s, "tls://127.0.0.1:*"), EINVAL);
    /* an encrypted key: wrong password, then the right one */
    tu_set_str(s, ZLINK_TLS_KEY, T.enc_key);
    tu_set_str(s, ZLINK_TLS_PASSWORD, "wrong");
    CHECK_ERR(zlink_bind(s, "tls://127.0.0.1:*"), EINVAL);
    tu_set_str(s, ZLINK_TLS_PASSWORD, "secret");
    CHECK(zlink_bind(s, "tls://127.0.0.1:*") == 0);
    /* a verifying client needs something to verify against */
    void *c = zlink_socket(ctx, ZLINK_STREAM);
    CHECK_ERR(zlink_connect(c, "tls://127.0.0.1:5555"), EINVAL);
    tu_set_str(c, ZLINK_TLS_CA, "/nonexistent/ca.pem");
    CHECK_ERR(zlink_connect(c, "tls://127.0.0.1:5555"), EINVAL);
    /* tcp:// is not affected by TLS options */
    tu_set_int(c, ZLINK_RECONNECT_IVL, -1);
    CHECK(zlink_connect(c, "tcp://127.0.0.1:1") == 0);
    zlink_close(c);
    zlink_close(s);
}

/* Verified handshake, with the encrypted key, TLS_HOSTNAME and a client
 * certificate required: echo both ways, peer info, events, close. */
static void test_success(void *ctx)
{
    char ep[256];
    void *srv = tu_tls_server(ctx, T.srv_cert, T.srv_key, ep, sizeof ep);
    void *cli = tu_tls_client(ctx, T.ca, -1);
    tu_set_str(cli, ZLINK_TLS_HOSTNAME, "localhost");
    void *smon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    void *cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    CHECK(smon && cmon);
    tu_pair_t p = tu_connect_ready(cli, srv, cmon, smon, ep);
    uint32_t cid = p.sa.last_id, sid = p.sb.last_id;

    zlink_peer_info_t info;
    size_t n = 1;
    CHECK(zlink_socket_peers(srv, &info, &n) == 0 && n == 1);
    CHECK(strncmp(info.remote_addr, "tls://127.0.0.1:", 16) == 0);

    /* payloads both ways, one bigger than a TLS record */
    static unsigned char big[200000], got[200000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (unsigned char)(i * 7 + 3);
    CHECK(tu_stream_send(cli, cid, big, sizeof big, 0) == (int)sizeof big);
    read_exact(srv, cli, sid, got, sizeof big);
    CHECK(memcmp(big, got, sizeof big) == 0);
    CHECK(tu_stream_send(srv, sid, big, sizeof big, 0) == (int)sizeof big);
    read_exact(cli, srv, cid, got, sizeof big);
    CHECK(memcmp(big, got, sizeof big) == 0);
    /* a single byte is a body like any other (LENGTH), delivered at once */
    CHECK(tu_stream_send(cli, cid, "z", 1, 0) == 1);
    read_exact(srv, cli, sid, got, 1);
    CHECK(tu_stream_send(cli, cid, "yx", 2, 0) == 2);
    read_exact(srv, cli, sid, got + 1, 2);
    CHECK(memcmp(got, "zyx", 3) == 0);

    /* the client closes: one 0x00 on each side */
    CHECK(tu_stream_send(cli, cid, "", 0, 0) == 0);
    p.sa.downs = p.sb.downs = 0;
    CHECK(TU_UNTIL(&p, p.sa.downs == 1 && p.sb.downs == 1, 5000));
    CHECK(p.sb.last_id == sid);
    zlink_close(smon);
    zlink_close(cmon);
    zlink_close(cli);
    zlink_close(srv);
}

/* A connect whose handshake must fail with a certificate problem: the
 * client gives up (RECONNECT_IVL -1) with CLOSED(EACCES) and one 0x00, the
 * server never delivers 0x01. */
static void expect_cert_failure(void *ctx, void *srv, void *cli, const char *ep,
                                int client_sees_up)
{
    void *smon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    void *cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    (void)ctx;
    CHECK(zlink_connect(cli, ep) == 0);
    tu_pair_t p = {cli, srv, {0}, {0}};
    long long t0 = tu_now_ms();
    if (client_sees_up) {
        /* TLS 1.3: the client is done before the server checks its
         * certificate, and learns of the refusal as a disconnect */
        CHECK(tu_wait_event(&p, smon, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, 5000) ==
              EACCES);
        CHECK(TU_UNTIL(&p, p.sa.downs == 1, 5000));
        CHECK(p.sa.ups <= 1);
    } else {
        CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, 5000) ==
              EACCES);
        CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_CLOSED, 5000) == EACCES);
        CHECK(TU_UNTIL(&p, p.sa.downs == 1, 5000));
        CHECK(p.sa.ups == 0);
        /* the server sees the client's alert */
        CHECK(tu_wait_event(&p, smon, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, 5000) > 0);
    }
    CHECK(tu_now_ms() - t0 < 5000);
    for (int i = 0; i < 20; i++)
        tu_step(&p);
    CHECK(p.sb.ups == 0 && p.sb.downs == 0);
    CHECK(zlink_socket_peer_count(srv) == 0);
    zlink_close(smon);
    zlink_close(cmon);
}

/* ZLINK_TLS_LAST_ERROR of s is want (a prefix when prefix is set) and
 * ZLINK_TLS_LAST_VERIFY_RESULT is verify */
static void expect_reason(void *s, const char *want, int prefix, int verify)
{
    char why[256];
    size_t wl = sizeof why;
    CHECK(zlink_getsockopt(s, ZLINK_TLS_LAST_ERROR, why, &wl) == 0);
    CHECK(wl == strlen(why) + 1);
    if (prefix ? strncmp(why, want, strlen(want)) != 0 : strcmp(why, want) != 0)
        fprintf(stderr, "TLS_LAST_ERROR: \"%s\", want \"%s\"\n", why, want);
    CHECK(prefix ? strncmp(why, want, strlen(want)) == 0 : strcmp(why, want) == 0);
    CHECK(tu_get_int(s, ZLINK_TLS_LAST_VERIFY_RESULT) == verify);
}

static void test_wrong_ca(void *ctx)
{
    char ep[256];
    void *srv = tu_tls_server(ctx, T.srv_cert, T.srv_key, ep, sizeof ep);
    void *cli = tu_tls_client(ctx, T.ca2, -1);
    /* nothing failed yet: empty, 0; read-only; a short buffer is EINVAL */
    expect_reason(cli, "", 0, 0);
    char small[4];
    size_t sl = 0;
    CHECK_ERR(zlink_getsockopt(cli, ZLINK_TLS_LAST_ERROR, small, &sl), EINVAL);
    CHECK_ERR(zlink_setsockopt(cli, ZLINK_TLS_LAST_ERROR, "x", 1), EINVAL);
    int zero = 0;
    CHECK_ERR(zlink_setsockopt(cli, ZLINK_TLS_LAST_VERIFY_RESULT, &zero, sizeof zero),
              EINVAL);
    expect_cert_failure(ctx, srv, cli, ep, 0);
    /* the reason: the client's verification result, the server's alert */
    expect_reason(cli, "unable to get local issuer certificate", 0,
                  X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
    expect_reason(srv, "tlsv1 alert unknown ca", 0, 0);
    zlink_close(cli);
    zlink_close(srv);
}

static void test_wrong_host(void *ctx)
{
    char ep[256];
    void *srv = tu_tls_server(ctx, T.other_cert, T.other_key, ep, sizeof ep);
    void *cli = tu_tls_client(ctx, T.ca, -1);
    tu_set_str(cli, ZLINK_TLS_HOSTNAME, "localhost");
    expect_cert_failure(ctx, srv, cli, ep, 0);
    expect_reason(cli, "hostname mismatch", 0, X509_V_ERR_HOSTNAME_MISMATCH);
    /* the name the certificate has works (the options of now apply to a
     * later connect to the same endpoint) */
    tu_set_str(cli, ZLINK_TLS_HOSTNAME, "other.example");
    CHECK(zlink_connect(cli, ep) == 0);
    tu_pair_t p = {cli, srv, {0}, {0}};
    CHECK(TU_UNTIL(&p, p.sa.ups == 1 && p.sb.ups == 1, 5000));
    /* an address as host name is checked against the IP names */
    zlink_close(cli);
    zlink_close(srv);
    srv = tu_tls_server(ctx, T.srv_cert, T.srv_key, ep, sizeof ep);
    cli = tu_tls_client(ctx, T.ca, -1);
    tu_set_str(cli, ZLINK_TLS_HOSTNAME, "127.0.0.1");
    CHECK(zlink_connect(cli, ep) == 0);
    tu_pair_t q = {cli, srv, {0}, {0}};
    CHECK(TU_UNTIL(&q, q.sa.ups == 1 && q.sb.ups == 1, 5000));
    zlink_close(cli);
    zlink_close(srv);
}

static void test_client_cert(void *ctx)
{
    char ep[256];
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_str(srv, ZLINK_TLS_CERT, T.srv_cert);
    tu_set_str(srv, ZLINK_TLS_KEY, T.srv_key);
    tu_set_str(srv, ZLINK_TLS_CA, T.ca);
    tu_set_int(srv, ZLINK_TLS_REQUIRE_CLIENT_CERT, 1);
    CHECK(zlink_bind(srv, "tls://127.0.0.1:*") == 0);
    tu_last_endpoint(srv, ep, sizeof ep);
    /* missing */
    void *cli = tu_tls_client(ctx, T.ca, -1);
    expect_cert_failure(ctx, srv, cli, ep, 1);
    zlink_close(cli);
    /* present */
    cli = tu_tls_client(ctx, T.ca, -1);
    tu_set_str(cli, ZLINK_TLS_CERT, T.cli_cert);
    tu_set_str(cli, ZLINK_TLS_KEY, T.cli_key);
    CHECK(zlink_connect(cli, ep) == 0);
    tu_pair_t p = {cli, srv, {0}, {0}};
    CHECK(TU_UNTIL(&p, p.sa.ups == 1 && p.sb.ups == 1, 5000));
    CHECK(tu_stream_send(cli, p.sa.last_id, "hello", 5, 0) == 5);
    CHECK(TU_UNTIL(&p, p.sb.bytes == 5, 5000));
    CHECK(p.sa.downs == 0 && p.sb.downs == 0);
    zlink_close(cli);
    zlink_close(srv);
}

/* A plain tcp:// STREAM client on the TLS port writes bytes that are no
 * TLS: the server reports a protocol failure and drops it (the client sees
 * its 0x00), no 0x01 on the server. */
static void test_plain_client(void *ctx)
{
    char ep[256], tcp[256];
    void *srv = tu_tls_server(ctx, T.srv_cert, T.srv_key, ep, sizeof ep);
    void *smon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    snprintf(tcp, sizeof tcp, "tcp://%s", ep + 6);
    void *cli = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_int(cli, ZLINK_RECONNECT_IVL, -1);
    CHECK(zlink_connect(cli, tcp) == 0);
    tu_pair_t p = {cli, srv, {0}, {0}};
    CHECK(TU_UNTIL(&p, p.sa.ups == 1, 5000));
    const char junk[] = "GET / HTTP/1.0\r\n\r\n";
    CHECK(tu_stream_send(cli, p.sa.last_id, junk, sizeof junk - 1, 0) ==
          (int)sizeof junk - 1);
    CHECK(tu_wait_event(&p, smon, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, 5000) ==
          EPROTO);
    CHECK(TU_UNTIL(&p, p.sa.downs == 1, 5000));
    CHECK(p.sb.ups == 0 && p.sb.downs == 0);
    zlink_close(smon);
    zlink_close(cli);
    zlink_close(srv);
}

/* Peers that stall: a raw socket that sends nothing, and one that sends
 * half a TLS record header; each is dropped after HANDSHAKE_IVL. */
static void test_stalled_peer(void *ctx)
{
    char ep[256];
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    tu_set_int(srv, ZLINK_HANDSHAKE_IVL, 300);
    tu_set_str(srv, ZLINK_TLS_CERT, T.srv_cert);
    tu_set_str(srv, ZLINK_TLS_KEY, T.srv_key);
    CHECK(zlink_bind(srv, "tls://127.0.0.1:*") == 0);
    tu_last_endpoint(srv, ep, sizeof ep);
    void *smon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)atoi(strrchr(ep, ':') + 1));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    for (int k = 0; k < 2; k++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
        if (k == 1)
            CHECK(send(fd, "\x16\x03\x01", 3, 0) == 3);
        tu_pair_t p = {srv, NULL, {0}, {0}};
        long long t0 = tu_now_ms();
        CHECK(tu_wait_event(&p, smon, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                            5000) == ETIMEDOUT);
        long long dt = tu_now_ms() - t0;
        CHECK(dt >= 250 && dt < 3000);
        CHECK(p.sa.ups == 0 && p.sa.downs == 0);
        /* the server closed it */
        char b;
        CHECK(recv(fd, &b, 1, 0) == 0);
        close(fd);
    }
    zlink_close(smon);
    zlink_close(srv);
}

/* A TLS client to a plain TCP STREAM server that never answers: each
 * attempt times out after HANDSHAKE_IVL (CONNECT_RETRIED ETIMEDOUT), and
 * with RECONNECT_IVL -1 it gives up with CLOSED(ETIMEDOUT) and 0x00. */
static void test_plain_server(void *ctx)
{
    char ep[256], tls[256];
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    /* RAW: the server sees the ClientHello's bytes as they come */
    tu_set_framing(srv, ZLINK_STREAM_FRAMING_RAW);
    CHECK(zlink_bind(srv, "tcp://127.0.0.1:*") == 0);
    tu_last_endpoint(srv, ep, sizeof ep);
    snprintf(tls, sizeof tls, "tls://%s", ep + 6);
    void *cli = tu_tls_client(ctx, T.ca, 50);
    tu_set_int(cli, ZLINK_HANDSHAKE_IVL, 200);
    void *cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    CHECK(zlink_connect(cli, tls) == 0);
    tu_pair_t p = {cli, srv, {0}, {0}};
    CHECK(tu_wait_event(&p, cmon, ZLINK_EVENT_CONNECT_RETRIED, 5000) == ETIMEDOUT);
    /* the server saw a TCP connection carrying a ClientHello */
    CHECK(p.sb.ups >= 1 && p.sb.bytes > 0);
    CHECK(p.sa.ups == 0 && p.sa.downs == 0);
    zlink_close(cli);
    cli = tu_tls_client(ctx, T.ca, -1);
    tu_set_int(cli, ZLINK_HANDSHAKE_IVL, 200);
    zlink_close(cmon);
    cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    CHECK(zlink_connect(cli, tls) == 0);
    tu_pair_t q = {cli, srv, {0}, {0}};
    CHECK(tu_wait_event(&q, cmon, ZLINK_EVENT_CLOSED, 5000) == ETIMEDOUT);
    CHECK(TU_UNTIL(&q, q.sa.downs == 1, 5000));
    CHECK(q.sa.ups == 0);
    zlink_close(cmon);
    zlink_close(cli);
    zlink_close(srv);
}

int main(void)
{
    /* the build links OpenSSL whenever it runs this test */
    tu_require("test_tls", "tls", "TLS");
    tu_tls_make(&T);
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    test_options(ctx);
    test_setup_errors(ctx);
    test_success(ctx);
    test_wrong_ca(ctx);
    test_wrong_host(ctx);
    test_client_cert(ctx);
    test_plain_client(ctx);
    test_stalled_peer(ctx);
    test_plain_server(ctx);
    tu_tls_end(ctx, &T, "ok");
    return 0;
}
