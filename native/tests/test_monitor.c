/* test_monitor.c - monitoring: monitor handles on STREAM sockets (events
 * with routing ids and addresses, MONITOR_STOPPED), zlink_socket_monitor on
 * a STREAM socket (libzmq v1 format on a PAIR), and both kinds of monitor
 * on libzmq sockets, whose DISCONNECTED value must be a reason, not
 * libzmq's descriptor (native-bugs.md 2). */
#include <unistd.h>
#include <errno.h>
#include "testutil.h"

#include <errno.h>

/* next event of the wanted type, skipping others */
static zlink_monitor_event_t wait_event(void *mon, uint64_t want)
{
    zlink_monitor_event_t ev;
    long long deadline = tu_now_ms() + 5000;
    while (tu_now_ms() < deadline) {
        int rc = zlink_monitor_recv(mon, &ev, ZLINK_DONTWAIT);
        if (rc == 0) {
            if (ev.event == want)
                return ev;
            continue;
        }
        CHECK(zlink_errno() == EAGAIN);
        tu_sleep_ms(2);
    }
    fprintf(stderr, "event 0x%llx never came\n", (unsigned long long)want);
    exit(1);
}

static void pump_both(void *a, void *b)
{
    unsigned char buf[64];
    uint32_t id;
    for (int i = 0; i < 20; i++) {
        while (tu_stream_recv(a, &id, buf, sizeof buf, ZLINK_DONTWAIT) >= 0)
            ;
        if (b)
            while (tu_stream_recv(b, &id, buf, sizeof buf, ZLINK_DONTWAIT) >= 0)
                ;
        tu_sleep_ms(2);
    }
}

static void test_stream_handle(void *ctx)
{
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    void *smon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    void *cmon = zlink_socket_monitor_open(cli, ZLINK_EVENT_ALL);
    CHECK(smon && cmon);
    zlink_monitor_event_t ev;
    CHECK_ERR(zlink_monitor_recv(smon, &ev, ZLINK_DONTWAIT), EAGAIN);

    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
    ev = wait_event(smon, ZLINK_EVENT_LISTENING);
    CHECK(strcmp(ev.local_addr, ep) == 0 && ev.routing_id.size == 0);
    CHECK_ERR(zlink_bind(srv, ep), EADDRINUSE);
    ev = wait_event(smon, ZLINK_EVENT_BIND_FAILED);
    CHECK(ev.value == EADDRINUSE);

    CHECK(zlink_connect(cli, ep) == 0);
    uint32_t cid, sid;
    CHECK(tu_stream_event(cli, &cid) == 1);
    CHECK(tu_stream_event(srv, &sid) == 1);
    ev = wait_event(smon, ZLINK_EVENT_ACCEPTED);
    CHECK(ev.routing_id.size == 4 && tu_be32(ev.routing_id.data) == sid);
    CHECK(strcmp(ev.local_addr, ep) == 0);
    CHECK(strncmp(ev.remote_addr, "tcp://127.0.0.1:", 16) == 0);
    ev = wait_event(smon, ZLINK_EVENT_CONNECTION_READY);
    CHECK(tu_be32(ev.routing_id.data) == sid);
    ev = wait_event(cmon, ZLINK_EVENT_CONNECT_DELAYED);
    CHECK(tu_be32(ev.routing_id.data) == cid);
    ev = wait_event(cmon, ZLINK_EVENT_CONNECTED);
    CHECK(tu_be32(ev.routing_id.data) == cid && strcmp(ev.remote_addr, ep) == 0);
    CHECK(strncmp(ev.local_addr, "tcp://127.0.0.1:", 16) == 0);

    /* local close on the client, remote on the server */
    CHECK(tu_stream_send(cli, cid, "", 0, 0) == 0);
    ev = wait_event(cmon, ZLINK_EVENT_DISCONNECTED);
    CHECK(ev.value == ZLINK_DISCONNECT_LOCAL && tu_be32(ev.routing_id.data) == cid);
    pump_both(srv, NULL);
    ev = wait_event(smon, ZLINK_EVENT_DISCONNECTED);
    CHECK(ev.value == ZLINK_DISCONNECT_REMOTE && tu_be32(ev.routing_id.data) == sid);

    /* the monitor outlives its socket: MONITOR_STOPPED, then nothing */
    CHECK(zlink_close(srv) == 0);
    ev = wait_event(smon, ZLINK_EVENT_CLOSED); /* the listener */
    CHECK(strcmp(ev.local_addr, ep) == 0);
    ev = wait_event(smon, ZLINK_EVENT_MONITOR_STOPPED);
    CHECK_ERR(zlink_monitor_recv(smon, &ev, ZLINK_DONTWAIT), EAGAIN);
    CHECK(zlink_close(smon) == 0);
    CHECK_ERR(zlink_monitor_recv(smon, &ev, ZLINK_DONTWAIT), ENOTSOCK);

    /* a closed monitor handle no longer receives (socket keeps working) */
    CHECK(zlink_close(cmon) == 0);
    CHECK(zlink_bind(cli, "tcp://127.0.0.1:*") == 0);
    /* a filtered mask */
    void *m2 = zlink_socket_monitor_open(cli, ZLINK_EVENT_CLOSED);
    CHECK(zlink_unbind(cli, "tcp://127.0.0.1:*") == 0);
    ev = wait_event(m2, ZLINK_EVENT_CLOSED);
    CHECK_ERR(zlink_monitor_recv(m2, &ev, ZLINK_DONTWAIT), EAGAIN);
    CHECK(zlink_close(cli) == 0);
    CHECK_ERR(zlink_monitor_recv(m2, &ev, ZLINK_DONTWAIT), EAGAIN); /* STOPPED filtered */
    CHECK(zlink_close(m2) == 0);
}

static void test_stream_pair(void *ctx)
{
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    CHECK_ERR(zlink_socket_monitor(srv, "tcp://127.0.0.1:5", ZLINK_EVENT_ALL), EPROTONOSUPPORT);
    CHECK(zlink_socket_monitor(srv, "inproc://smon", ZLINK_EVENT_ALL) == 0);
    void *pair = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(zlink_connect(pair, "inproc://smon") == 0);
    int t = 5000;
    CHECK(zlink_setsockopt(pair, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
    CHECK(zlink_connect(cli, ep) == 0);
    uint32_t sid;
    CHECK(tu_stream_event(srv, &sid) == 1);

    unsigned char hdr[16];
    char addr[256];
    uint16_t e16;
    uint32_t v32;
    CHECK(zlink_recv(pair, hdr, sizeof hdr, 0) == 6);
    memcpy(&e16, hdr, 2);
    memcpy(&v32, hdr + 2, 4);
    CHECK(e16 == ZLINK_EVENT_LISTENING);
    int n = zlink_recv(pair, addr, sizeof addr - 1, 0);
    CHECK(n > 0);
    addr[n] = 0;
    CHECK(strcmp(addr, ep) == 0);
    CHECK(zlink_recv(pair, hdr, sizeof hdr, 0) == 6);
    memcpy(&e16, hdr, 2);
    CHECK(e16 == ZLINK_EVENT_ACCEPTED);
    n = zlink_recv(pair, addr, sizeof addr - 1, 0);
    addr[n] = 0;
    CHECK(strcmp(addr, ep) == 0);
    CHECK(zlink_socket_monitor(srv, NULL, 0) == 0); /* stop */
    CHECK(zlink_recv(pair, hdr, sizeof hdr, 0) == 6);
    memcpy(&e16, hdr, 2);
    CHECK(e16 == ZLINK_EVENT_CONNECTION_READY);
    CHECK(zlink_recv(pair, addr, sizeof addr, 0) >= 0);
    CHECK(zlink_recv(pair, hdr, sizeof hdr, 0) == 6);
    memcpy(&e16, hdr, 2);
    CHECK(e16 == ZLINK_EVENT_MONITOR_STOPPED);
    CHECK(zlink_close(pair) == 0);
    tu_set_int(cli, ZLINK_LINGER, 0);
    CHECK(zlink_close(cli) == 0 && zlink_close(srv) == 0);
}

static void test_libzmq(void *ctx)
{
    void *router = zlink_socket(ctx, ZLINK_ROUTER), *dealer = zlink_socket(ctx, ZLINK_DEALER);
    void *rmon = zlink_socket_monitor_open(router, ZLINK_EVENT_ALL);
    void *dmon = zlink_socket_monitor_open(dealer, ZLINK_EVENT_CONNECTED | ZLINK_EVENT_DISCONNECTED);
    CHECK(rmon && dmon);
    char ep[256];
    tu_bind_tcp(router, ep, sizeof ep);
    zlink_monitor_event_t ev = wait_event(rmon, ZLINK_EVENT_LISTENING);
    CHECK(strcmp(ev.local_addr, ep) == 0 && ev.routing_id.size == 0);
    CHECK(zlink_connect(dealer, ep) == 0);
    ev = wait_event(rmon, ZLINK_EVENT_ACCEPTED);
    CHECK(strcmp(ev.local_addr, ep) == 0);
    ev = wait_event(dmon, ZLINK_EVENT_CONNECTED);
    CHECK(strcmp(ev.remote_addr, ep) == 0);
    ev = wait_event(rmon, ZLINK_EVENT_CONNECTION_READY);
    CHECK(zlink_close(dealer) == 0);
    ev = wait_event(rmon, ZLINK_EVENT_DISCONNECTED);
    /* the ZMP engine's reason, by zlink 1.3's rule: the peer went after
     * its handshake, TRANSPORT_ERROR (libzmq itself gives the fd and no cause) */
    CHECK(ev.value == ZLINK_DISCONNECT_TRANSPORT_ERROR);
    CHECK(strcmp(ev.remote_addr, ep) == 0 || strncmp(ev.remote_addr, "tcp://127.0.0.1:", 16) == 0);
    CHECK(zlink_close(dmon) == 0);
    CHECK(zlink_close(rmon) == 0);
    CHECK(zlink_close(router) == 0);
}

/* next v1 event from a zlink_socket_monitor reader, its address in addr */
static uint16_t pair_event(void *pair, uint32_t *value, char *addr, size_t cap)
{
    unsigned char hdr[16];
    uint16_t e16;
    int more = 0;
    size_t ml = sizeof more;
    CHECK(zlink_recv(pair, hdr, sizeof hdr, 0) == 6);
    CHECK(zlink_getsockopt(pair, ZLINK_RCVMORE, &more, &ml) == 0 && more == 1);
    memcpy(&e16, hdr, 2);
    memcpy(value, hdr + 2, 4);
    int n = zlink_recv(pair, addr, cap - 1, 0);
    CHECK(n >= 0 && (size_t)n < cap);
    addr[n] = '\0';
    return e16;
}

static uint16_t pair_event_skip_to(void *pair, uint16_t want, uint32_t *value,
                                   char *addr, size_t cap)
{
    for (;;) {
        uint16_t e = pair_event(pair, value, addr, cap);
        if (e == want)
            return e;
    }
}

/* zlink_socket_monitor on libzmq sockets: libzmq's v1 format, relayed with
 * the DISCONNECTED value turned into a reason (the ZMP engine's); stopping, replacing and
 * closing the socket end the relay. */
static void test_libzmq_pair(void *ctx)
{
    void *router = zlink_socket(ctx, ZLINK_ROUTER), *peer = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(router && peer);
    CHECK_ERR(zlink_socket_monitor(router, "tcp://127.0.0.1:5", ZLINK_EVENT_ALL),
              EPROTONOSUPPORT);
    CHECK(zlink_socket_monitor(router, "inproc://zmon", ZLINK_EVENT_ALL) == 0);
    void *pair = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(zlink_connect(pair, "inproc://zmon") == 0);
    int t = 5000;
    CHECK(zlink_setsockopt(pair, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    /* the endpoint is taken while the monitor runs */
    void *other = zlink_socket(ctx, ZLINK_PAIR);
    CHECK_ERR(zlink_bind(other, "inproc://zmon"), EADDRINUSE);

    CHECK(zlink_bind(router, "tcp://127.0.0.1:*") == 0);
    char ep[256], addr[256];
    tu_last_endpoint(router, ep, sizeof ep);
    uint32_t v;
    CHECK(pair_event(pair, &v, addr, sizeof addr) == ZLINK_EVENT_LISTENING);
    CHECK(strcmp(addr, ep) == 0);
    CHECK(zlink_connect(peer, ep) == 0);
    pair_event_skip_to(pair, ZLINK_EVENT_ACCEPTED, &v, addr, sizeof addr);
    /* ACCEPTED keeps libzmq's value (the descriptor) */
    CHECK(v > 2);
    pair_event_skip_to(pair, ZLINK_EVENT_CONNECTION_READY, &v, addr, sizeof addr);
    CHECK(zlink_close(peer) == 0);
    pair_event_skip_to(pair, ZLINK_EVENT_DISCONNECTED, &v, addr, sizeof addr);
    CHECK(v == ZLINK_DISCONNECT_TRANSPORT_ERROR);

    /* replacing the monitor: the old reader gets MONITOR_STOPPED and the
     * endpoint is free for the new one at once */
    CHECK(zlink_socket_monitor(router, "inproc://zmon", ZLINK_EVENT_DISCONNECTED) == 0);
    CHECK(pair_event(pair, &v, addr, sizeof addr) == ZLINK_EVENT_MONITOR_STOPPED);
    CHECK(zlink_close(pair) == 0);
    pair = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(zlink_connect(pair, "inproc://zmon") == 0);
    CHECK(zlink_setsockopt(pair, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    peer = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(zlink_connect(peer, ep) == 0);
    CHECK(zlink_send(peer, "x", 1, 0) == 1);
    char buf[16];
    CHECK(zlink_recv(router, buf, sizeof buf, 0) > 0); /* routing id */
    CHECK(zlink_recv(router, buf, sizeof buf, 0) == 1);
    CHECK(zlink_close(peer) == 0);
    /* the mask holds: only DISCONNECTED, and MONITOR_STOPPED is not sent */
    CHECK(pair_event(pair, &v, addr, sizeof addr) == ZLINK_EVENT_DISCONNECTED);
    CHECK(v == ZLINK_DISCONNECT_TRANSPORT_ERROR);
    CHECK(zlink_socket_monitor(router, NULL, 0) == 0);
    t = 200;
    CHECK(zlink_setsockopt(pair, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    CHECK_ERR(zlink_recv(pair, buf, sizeof buf, 0), EAGAIN);
    /* stopped: the endpoint is free again */
    CHECK(zlink_bind(other, "inproc://zmon") == 0);
    CHECK(zlink_close(other) == 0);

    /* a socket closed while monitored: the relay ends with it */
    CHECK(zlink_socket_monitor(router, "inproc://zmon2", ZLINK_EVENT_ALL) == 0);
    void *pair2 = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(zlink_connect(pair2, "inproc://zmon2") == 0);
    t = 5000;
    CHECK(zlink_setsockopt(pair2, ZLINK_RCVTIMEO, &t, sizeof t) == 0);
    CHECK(zlink_close(router) == 0);
    pair_event_skip_to(pair2, ZLINK_EVENT_MONITOR_STOPPED, &v, addr, sizeof addr);
    CHECK(zlink_close(pair2) == 0);
    CHECK(zlink_close(pair) == 0);
    /* one whose socket closes unobserved is joined by the context's term */
    void *dealer = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(zlink_socket_monitor(dealer, "inproc://zmon3", ZLINK_EVENT_ALL) == 0);
    CHECK(zlink_close(dealer) == 0);

    /* a context shut down under a running relay: it ends with ETERM */
    void *ctx2 = zlink_ctx_new();
    void *s2 = zlink_socket(ctx2, ZLINK_PAIR);
    CHECK(zlink_socket_monitor(s2, "inproc://zmon4", ZLINK_EVENT_ALL) == 0);
    CHECK(zlink_ctx_shutdown(ctx2) == 0);
    CHECK_ERR(zlink_socket_monitor(s2, "inproc://zmon5", ZLINK_EVENT_ALL), ETERM);
    CHECK(zlink_close(s2) == 0);
    CHECK(zlink_ctx_term(ctx2) == 0);
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    test_stream_handle(ctx);
    test_stream_pair(ctx);
    test_libzmq(ctx);
    test_libzmq_pair(ctx);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
