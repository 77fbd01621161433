/* test_passthrough.c - libzmq socket types through the zlink ABI: PAIR,
 * PUB/SUB, DEALER/ROUTER, XPUB/XSUB over tcp, ipc and inproc; options and
 * the zlink-only options that must fail; the HWM defaults (300000). */
#include "testutil.h"

#include <unistd.h>

static void *ctx;

static void endpoints(const char *tr, const char *name, char *bind_ep,
                      size_t n)
{
    if (strcmp(tr, "tcp") == 0)
        snprintf(bind_ep, n, "tcp://127.0.0.1:*");
    else if (strcmp(tr, "ipc") == 0)
        snprintf(bind_ep, n, "ipc:///tmp/zlink-test-%d-%s", (int)getpid(), name);
    else
        snprintf(bind_ep, n, "inproc://%s", name);
}

static void bind_connect(void *a, void *b, const char *tr, const char *name)
{
    char ep[256], last[256];
    endpoints(tr, name, ep, sizeof ep);
    CHECK(zlink_bind(a, ep) == 0);
    tu_last_endpoint(a, last, sizeof last);
    CHECK(zlink_connect(b, last) == 0);
}

static void test_pair(const char *tr)
{
    void *a = zlink_socket(ctx, ZLINK_PAIR), *b = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(a && b);
    bind_connect(a, b, tr, "pair");
    CHECK(zlink_send(b, "hello", 5, 0) == 5);
    char buf[16];
    CHECK(zlink_recv(a, buf, sizeof buf, 0) == 5 && memcmp(buf, "hello", 5) == 0);
    /* truncation reports the full size */
    CHECK(zlink_send(a, "0123456789", 10, 0) == 10);
    CHECK(zlink_recv(b, buf, 4, 0) == 10 && memcmp(buf, "0123", 4) == 0);
    CHECK(zlink_send_const(a, "const", 5, 0) == 5);
    CHECK(zlink_recv(b, buf, sizeof buf, 0) == 5);
    if (strcmp(tr, "tcp") == 0) {
        zlink_msg_t m;
        zlink_msg_init(&m);
        CHECK(zlink_send(a, "meta", 4, 0) == 4);
        CHECK(zlink_msg_recv(&m, b, 0) == 4);
        /* Socket-Type only when the sender sets ZMP_METADATA, as in zlink */
        CHECK(zlink_msg_gets(&m, "Socket-Type") == NULL && zlink_errno() == EINVAL);
        CHECK(zlink_msg_gets(&m, "Peer-Address") != NULL);
        zlink_msg_close(&m);
    }
    int ev = 0;
    size_t len = sizeof ev;
    CHECK(zlink_getsockopt(a, ZLINK_EVENTS, &ev, &len) == 0 && (ev & ZLINK_POLLOUT));
    CHECK(zlink_close(a) == 0 && zlink_close(b) == 0);
}

static void test_pubsub(const char *tr)
{
    void *pub = zlink_socket(ctx, ZLINK_PUB), *sub = zlink_socket(ctx, ZLINK_SUB);
    CHECK(pub && sub);
    CHECK(zlink_setsockopt(sub, ZLINK_SUBSCRIBE, "A", 1) == 0);
    bind_connect(pub, sub, tr, "pubsub");
    int rcvtimeo = 50;
    CHECK(zlink_setsockopt(sub, ZLINK_RCVTIMEO, &rcvtimeo, sizeof rcvtimeo) == 0);
    char buf[16];
    /* the subscription travels asynchronously: publish until it arrives */
    int got = 0;
    for (int i = 0; i < 100 && !got; i++) {
        CHECK(zlink_send(pub, "Bnope", 5, 0) == 5);
        CHECK(zlink_send(pub, "Ayes", 4, 0) == 4);
        int n = zlink_recv(sub, buf, sizeof buf, 0);
        if (n == 4) {
            CHECK(memcmp(buf, "Ayes", 4) == 0);
            got = 1;
        } else {
            CHECK(n == -1 && zlink_errno() == EAGAIN);
        }
    }
    CHECK(got);
    CHECK(zlink_close(pub) == 0 && zlink_close(sub) == 0);

    void *xpub = zlink_socket(ctx, ZLINK_XPUB), *xsub = zlink_socket(ctx, ZLINK_XSUB);
    CHECK(xpub && xsub);
    bind_connect(xpub, xsub, tr, "xpubsub");
    unsigned char subscribe[2] = {1, 'T'};
    CHECK(zlink_send(xsub, subscribe, 2, 0) == 2);
    CHECK(zlink_recv(xpub, buf, sizeof buf, 0) == 2 && buf[0] == 1 && buf[1] == 'T');
    CHECK(zlink_close(xpub) == 0 && zlink_close(xsub) == 0);
}

static void test_dealer_router(const char *tr)
{
    void *router = zlink_socket(ctx, ZLINK_ROUTER), *dealer = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(router && dealer);
    CHECK(zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "D1", 2) == 0);
    int one = 1;
    CHECK(zlink_setsockopt(router, ZLINK_ROUTER_MANDATORY, &one, sizeof one) == 0);
    bind_connect(router, dealer, tr, "dr");
    CHECK(zlink_send(dealer, "req", 3, 0) == 3);
    char id[16], buf[16];
    CHECK(zlink_recv(router, id, sizeof id, 0) == 2 && memcmp(id, "D1", 2) == 0);
    int more = 0;
    size_t len = sizeof more;
    CHECK(zlink_getsockopt(router, ZLINK_RCVMORE, &more, &len) == 0 && more == 1);
    CHECK(zlink_recv(router, buf, sizeof buf, 0) == 3);
    CHECK(zlink_send(router, "D1", 2, ZLINK_SNDMORE) == 2);
    CHECK(zlink_send(router, "rep", 3, 0) == 3);
    CHECK(zlink_recv(dealer, buf, sizeof buf, 0) == 3 && memcmp(buf, "rep", 3) == 0);
    CHECK_ERR(zlink_send(router, "nobody", 6, ZLINK_SNDMORE), EHOSTUNREACH);
    /* the dealer's connection is the router's peer; inproc has no
     * connections, so no peers */
    zlink_routing_id_t rid;
    if (strcmp(tr, "inproc") == 0) {
        CHECK(zlink_socket_peer_count(router) == 0);
    } else {
        CHECK(zlink_socket_peer_count(router) == 1);
        CHECK(zlink_socket_peer_routing_id(router, 0, &rid) == 0 && rid.size == 2 &&
              memcmp(rid.data, "D1", 2) == 0);
    }
    CHECK(zlink_close(router) == 0 && zlink_close(dealer) == 0);
}

int main(void)
{
    ctx = zlink_ctx_new();
    CHECK(ctx);
    const char *trs[] = {"tcp", "ipc", "inproc"};
    for (int i = 0; i < 3; i++) {
        test_pair(trs[i]);
        test_pubsub(trs[i]);
        test_dealer_router(trs[i]);
    }

    /* every libzmq type starts with zlink 1.3's HWM, 300000 (libzmq: 1000) */
    const int types[] = {ZLINK_PAIR, ZLINK_PUB, ZLINK_SUB, ZLINK_DEALER, ZLINK_ROUTER,
                         ZLINK_XPUB, ZLINK_XSUB};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        void *t = zlink_socket(ctx, types[i]);
        CHECK(t);
        int h = 0;
        size_t hl = sizeof h;
        CHECK(zlink_getsockopt(t, ZLINK_SNDHWM, &h, &hl) == 0 && h == 300000);
        CHECK(zlink_getsockopt(t, ZLINK_RCVHWM, &h, &hl) == 0 && h == 300000);
        CHECK(zlink_close(t) == 0);
    }

    void *s = zlink_socket(ctx, ZLINK_DEALER);
    int v = 7;
    size_t len = sizeof v;
    /* the TLS options, as on STREAM (tls:// and wss:// on every socket
     * type): strings are taken as they are, ints are 0 or 1 */
    CHECK(zlink_setsockopt(s, ZLINK_TLS_CERT, "x", 1) == 0);
    CHECK_ERR(zlink_setsockopt(s, ZLINK_TLS_VERIFY, "x", 1), EINVAL);
    CHECK_ERR(zlink_setsockopt(s, ZLINK_ZMP_METADATA, "x", 1), EINVAL); /* an int, 0 or 1 */
    CHECK(zlink_getsockopt(s, ZLINK_TLS_VERIFY, &v, &len) == 0 && v == 1);
    v = 7;
    CHECK(zlink_setsockopt(s, ZLINK_SNDHWM, &v, sizeof v) == 0);
    v = 0;
    len = sizeof v;
    CHECK(zlink_getsockopt(s, ZLINK_SNDHWM, &v, &len) == 0 && v == 7);
    CHECK(zlink_getsockopt(s, ZLINK_TYPE, &v, &len) == 0 && v == ZLINK_DEALER);
    /* tls:// with a certificate file that is not there */
    CHECK_ERR(zlink_bind(s, "tls://127.0.0.1:5555"), EINVAL);
    CHECK(zlink_close(s) == 0);

    /* proxy refuses STREAM sockets */
    void *st = zlink_socket(ctx, ZLINK_STREAM), *p = zlink_socket(ctx, ZLINK_PAIR);
    CHECK_ERR(zlink_proxy(st, p, NULL), ENOTSUP);
    CHECK(zlink_close(st) == 0 && zlink_close(p) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
