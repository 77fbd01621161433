/* test_monitor.c - monitoring: monitor handles on STREAM sockets (events
 * with routing ids and addresses, MONITOR_STOPPED), zlink_socket_monitor on
 * a STREAM socket (libzmq v1 format on a PAIR), and monitor handles on
 * libzmq sockets. */
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

    CHECK(zlink_bind(srv, "tcp://127.0.0.1:*") == 0);
    char ep[256];
    tu_last_endpoint(srv, ep, sizeof ep);
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
    CHECK(zlink_bind(srv, "tcp://127.0.0.1:*") == 0);
    char ep[256];
    tu_last_endpoint(srv, ep, sizeof ep);
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
    CHECK(zlink_bind(router, "tcp://127.0.0.1:*") == 0);
    char ep[256];
    tu_last_endpoint(router, ep, sizeof ep);
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
    CHECK(zlink_close(dmon) == 0);
    CHECK(zlink_close(rmon) == 0);
    CHECK(zlink_close(router) == 0);
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    test_stream_handle(ctx);
    test_stream_pair(ctx);
    test_libzmq(ctx);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
