/* test_endpoints.c - endpoint validation and errors on both kinds of
 * socket: malformed, unsupported transport, port range, port in use, unbind
 * and disconnect by endpoint. */
#include "testutil.h"

/* The port rule both kinds share (native-bugs.md 1: libzmq wrapped 99999
 * to 34463 and bound it): 1..65535, plus `*` and 0 on the bind side. */
static void test_port_range(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    CHECK(s);
    const char *out_of_range[] = {"tcp://127.0.0.1:99999", "tcp://127.0.0.1:65536",
                                  "tcp://127.0.0.1:100000", "tcp://127.0.0.1:4294967297",
                                  "tcp://127.0.0.1:-1", "tcp://127.0.0.1:+80",
                                  "tcp://127.0.0.1: 80", "tcp://127.0.0.1:",
                                  "tcp://[::1]:99999", "tcp://localhost:70000",
                                  "tcp://127.0.0.1:99999;127.0.0.1:5555",
                                  "tcp://127.0.0.1:5555;127.0.0.1:99999"};
    for (size_t i = 0; i < sizeof out_of_range / sizeof out_of_range[0]; i++) {
        CHECK_ERR(zlink_bind(s, out_of_range[i]), EINVAL);
        CHECK_ERR(zlink_connect(s, out_of_range[i]), EINVAL);
        CHECK_ERR(zlink_unbind(s, out_of_range[i]), EINVAL);
        CHECK_ERR(zlink_disconnect(s, out_of_range[i]), EINVAL);
    }
    /* connect side: no ephemeral port */
    CHECK_ERR(zlink_connect(s, "tcp://127.0.0.1:0"), EINVAL);
    CHECK_ERR(zlink_connect(s, "tcp://127.0.0.1:*"), EINVAL);
    CHECK_ERR(zlink_disconnect(s, "tcp://127.0.0.1:0"), EINVAL);
    /* the rejected bind left nothing behind: no endpoint, no listener */
    char ep[256] = "x";
    size_t len = sizeof ep;
    CHECK(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &len) == 0 && ep[0] == '\0');
    /* the bind side's `*` and 0 are ephemeral ports */
    CHECK(zlink_bind(s, "tcp://127.0.0.1:0") == 0);
    tu_last_endpoint(s, ep, sizeof ep);
    int port = atoi(ep + 16);
    CHECK(strncmp(ep, "tcp://127.0.0.1:", 16) == 0 && port > 0 && port <= 65535);
    CHECK(zlink_unbind(s, ep) == 0);
    tu_bind_tcp(s, ep, sizeof ep);
    CHECK(zlink_unbind(s, ep) == 0);
    /* the edges of the range are ports like any other */
    CHECK(zlink_connect(s, "tcp://127.0.0.1:65535") == 0);
    CHECK(zlink_disconnect(s, "tcp://127.0.0.1:65535") == 0);
    CHECK(zlink_connect(s, "tcp://127.0.0.1:1") == 0);
    CHECK(zlink_disconnect(s, "tcp://127.0.0.1:1") == 0);
    /* a valid port that is not bound or connected is "not found" */
    CHECK_ERR(zlink_unbind(s, "tcp://127.0.0.1:65535"), ENOENT);
    CHECK_ERR(zlink_disconnect(s, "tcp://127.0.0.1:65535"), ENOENT);
    CHECK(zlink_close(s) == 0);
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *st = zlink_socket(ctx, ZLINK_STREAM);
    void *d = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(st && d);

    const char *bad[] = {"", "tcp", "tcp://", "tcp://127.0.0.1", "tcp://:5555",
                         "tcp://127.0.0.1:", "tcp://127.0.0.1:abc",
                         "tcp://127.0.0.1:70000", "tcp://[::1:5555",
                         "tcp://no-such-host.invalid:5555", "127.0.0.1:5555"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_ERR(zlink_bind(st, bad[i]), EINVAL);
        CHECK_ERR(zlink_connect(st, bad[i]), EINVAL);
    }
    CHECK_ERR(zlink_connect(st, "tcp://127.0.0.1:0"), EINVAL);
    CHECK_ERR(zlink_connect(st, "tcp://*:5555"), EINVAL);
    CHECK_ERR(zlink_bind(st, NULL), EINVAL);
    /* tls:// without a certificate: EINVAL with TLS, else like the rest */
    CHECK_ERR(zlink_bind(st, "tls://127.0.0.1:*"),
              zlink_has("tls") ? EINVAL : EPROTONOSUPPORT);
    /* wss:// without a certificate likewise; ws:// with a bad path */
    CHECK_ERR(zlink_bind(st, "wss://127.0.0.1:*"),
              zlink_has("wss") ? EINVAL : EPROTONOSUPPORT);
    CHECK_ERR(zlink_connect(st, "ws://127.0.0.1:1/a b"),
              zlink_has("ws") ? EINVAL : EPROTONOSUPPORT);
    const char *other[] = {"ipc:///tmp/x", "inproc://x", "pgm://x;y:1",
                           "udp://127.0.0.1:1", "wsx://127.0.0.1:1"};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        CHECK_ERR(zlink_bind(st, other[i]), EPROTONOSUPPORT);
        CHECK_ERR(zlink_connect(st, other[i]), EPROTONOSUPPORT);
    }
    /* libzmq's own validation for pass-through sockets */
    CHECK_ERR(zlink_bind(d, "bogus://x"), EPROTONOSUPPORT);
    CHECK(zlink_bind(d, "tcp://127.0.0.1:abc") == -1);

    /* ephemeral port, LAST_ENDPOINT, EADDRINUSE on both kinds */
    char ep[256];
    tu_bind_tcp(st, ep, sizeof ep);
    CHECK(strncmp(ep, "tcp://127.0.0.1:", 16) == 0 && atoi(ep + 16) > 0);
    CHECK_ERR(zlink_bind(st, ep), EADDRINUSE);
    CHECK_ERR(zlink_bind(d, ep), EADDRINUSE);
    CHECK(zlink_bind(st, "tcp://*:0") == 0);
    char ep2[256];
    tu_last_endpoint(st, ep2, sizeof ep2);
    CHECK(strncmp(ep2, "tcp://0.0.0.0:", 14) == 0);
    CHECK(zlink_bind(st, "tcp://localhost:*") == 0);
    int v6 = 1;
    CHECK(zlink_setsockopt(st, ZLINK_IPV6, &v6, sizeof v6) == 0);
    if (zlink_bind(st, "tcp://[::1]:*") == 0) {
        char ep3[256];
        tu_last_endpoint(st, ep3, sizeof ep3);
        CHECK(strncmp(ep3, "tcp://[::1]:", 12) == 0);
        CHECK(zlink_unbind(st, ep3) == 0);
    }
    /* unbind by the given string or by the resolved one */
    CHECK(zlink_unbind(st, ep) == 0);
    CHECK_ERR(zlink_unbind(st, ep), ENOENT);
    CHECK(zlink_unbind(st, "tcp://*:0") == 0);
    CHECK(zlink_unbind(st, "tcp://localhost:*") == 0);
    CHECK_ERR(zlink_disconnect(st, "tcp://127.0.0.1:1"), ENOENT);
    /* the port is free again */
    CHECK(zlink_bind(d, ep) == 0);

    CHECK(zlink_close(st) == 0);
    CHECK(zlink_close(d) == 0);
    test_port_range(ctx, ZLINK_PAIR);
    test_port_range(ctx, ZLINK_DEALER);
    test_port_range(ctx, ZLINK_STREAM);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
