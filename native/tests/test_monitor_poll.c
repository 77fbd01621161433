/*
 * test_monitor_poll.c - what zlink 1.3 lets an application do with monitor
 * events and which NetZlink's library now does too:
 *   - zlink_poll on a monitor handle (zlink_socket_monitor_open) of a libzmq
 *     socket and of a STREAM socket: POLLIN exactly when an event can be
 *     read, and a poll that times out when none can;
 *   - zlink_monitor_recv on a PAIR connected to the endpoint of
 *     zlink_socket_monitor (libzmq and STREAM sockets), DONTWAIT giving
 *     EAGAIN when nothing is there, and ENOTSOCK for a STREAM socket or junk;
 *   - ROUTING_ID on a STREAM socket: 16 bytes of its own, settable;
 *   - the context still terminates after all of it.
 */
#include "testutil.h"

#include <errno.h>

/* A STREAM socket makes progress only inside calls made on it (no
 * background thread), so its monitor sees events while the socket is polled
 * too: `sock`, polled beside the monitor (its own readiness is not asked). */
static void *pumped;

static int poll_in(void *mon, long ms)
{
    zlink_pollitem_t it[2] = {{mon, 0, ZLINK_POLLIN, 0}, {pumped, 0, 0, 0}};
    int rc = zlink_poll(it, pumped ? 2 : 1, ms);
    CHECK(rc >= 0);
    CHECK(rc == 0 || it[0].revents == ZLINK_POLLIN);
    return rc;
}

/* polls until an event of type `want` is read from `mon` (skipping others) */
static void wait_event(void *mon, uint64_t want, zlink_monitor_event_t *out)
{
    long long end = tu_now_ms() + 5000;
    for (;;) {
        if (tu_now_ms() >= end)
            fprintf(stderr, "wait_event: no 0x%llx\n", (unsigned long long)want);
        CHECK(tu_now_ms() < end);
        if (poll_in(mon, 100) == 0)
            continue;
        zlink_monitor_event_t ev;
        int got = 0;
        while (zlink_monitor_recv(mon, &ev, ZLINK_DONTWAIT) == 0) {
            got = 1;
            if (getenv("TEST_VERBOSE"))
                fprintf(stderr, "event 0x%llx\n", (unsigned long long)ev.event);
            if (ev.event == want) {
                if (out)
                    *out = ev;
                return;
            }
        }
        CHECK(got); /* POLLIN meant an event could be read */
        CHECK(zlink_errno() == EAGAIN);
    }
}

static void drain(void *mon)
{
    zlink_monitor_event_t ev;
    while (zlink_monitor_recv(mon, &ev, ZLINK_DONTWAIT) == 0)
        ;
    CHECK(zlink_errno() == EAGAIN);
}

static void monitor_handles(void *ctx, int type, const char *bind_ep)
{
    void *srv = zlink_socket(ctx, type);
    CHECK(srv);
    tu_set_int(srv, ZLINK_LINGER, 0);
    void *mon = zlink_socket_monitor_open(srv, ZLINK_EVENT_ALL);
    CHECK(mon);
    pumped = type == ZLINK_STREAM ? srv : NULL;
    CHECK(poll_in(mon, 50) == 0); /* nothing yet */
    CHECK(zlink_bind(srv, bind_ep) == 0);
    wait_event(mon, ZLINK_EVENT_LISTENING, NULL);
    drain(mon);
    CHECK(poll_in(mon, 50) == 0); /* read: not ready any more */

    char ep[256];
    tu_last_endpoint(srv, ep, sizeof ep);
    void *cli = zlink_socket(ctx, type == ZLINK_STREAM ? ZLINK_STREAM : ZLINK_DEALER);
    CHECK(cli);
    tu_set_int(cli, ZLINK_LINGER, 0);
    CHECK(zlink_connect(cli, ep) == 0);
    if (type == ZLINK_STREAM) {
        uint32_t id;
        CHECK(tu_stream_event(cli, &id) == 1);
    }
    uint32_t sid;
    if (type == ZLINK_STREAM) /* the server reads its connect event */
        CHECK(tu_stream_event(srv, &sid) == 1);
    wait_event(mon, ZLINK_EVENT_ACCEPTED, NULL);
    CHECK(zlink_close(cli) == 0);
    if (type == ZLINK_STREAM) /* and the disconnect */
        CHECK(tu_stream_event(srv, &sid) == 0);
    wait_event(mon, ZLINK_EVENT_DISCONNECTED, NULL);
    pumped = NULL;
    CHECK(zlink_close(mon) == 0);
    CHECK(zlink_close(srv) == 0);
}

static void pair_reader(void *ctx, int type, const char *bind_ep,
                        const char *mon_ep)
{
    void *srv = zlink_socket(ctx, type);
    CHECK(srv);
    tu_set_int(srv, ZLINK_LINGER, 0);
    CHECK(zlink_socket_monitor(srv, mon_ep, ZLINK_EVENT_LISTENING) == 0);
    void *pair = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(pair);
    tu_set_int(pair, ZLINK_LINGER, 0);
    CHECK(zlink_connect(pair, mon_ep) == 0);
    zlink_monitor_event_t ev;
    CHECK_ERR(zlink_monitor_recv(pair, &ev, ZLINK_DONTWAIT), EAGAIN);
    CHECK(zlink_bind(srv, bind_ep) == 0);
    if (type == ZLINK_STREAM) {
        zlink_pollitem_t it = {srv, 0, ZLINK_POLLIN, 0};
        zlink_poll(&it, 1, 10);
    }
    tu_set_int(pair, ZLINK_RCVTIMEO, 5000);
    CHECK(zlink_monitor_recv(pair, &ev, 0) == 0);
    CHECK(ev.event == ZLINK_EVENT_LISTENING);
    CHECK(strncmp(ev.local_addr, "tcp://", 6) == 0 || strncmp(ev.local_addr, "ipc://", 6) == 0);
    CHECK_ERR(zlink_monitor_recv(pair, NULL, 0), EFAULT);
    CHECK(zlink_close(pair) == 0);
    CHECK(zlink_close(srv) == 0);
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    CHECK(ctx);

    monitor_handles(ctx, ZLINK_ROUTER, "tcp://127.0.0.1:*");
    monitor_handles(ctx, ZLINK_STREAM, "tcp://127.0.0.1:*");
    pair_reader(ctx, ZLINK_ROUTER, "tcp://127.0.0.1:*", "inproc://mon-router");
    pair_reader(ctx, ZLINK_STREAM, "tcp://127.0.0.1:*", "inproc://mon-stream");

    /* a STREAM socket or a pointer that is no socket is not a monitor */
    void *st = zlink_socket(ctx, ZLINK_STREAM);
    zlink_monitor_event_t ev;
    CHECK_ERR(zlink_monitor_recv(st, &ev, ZLINK_DONTWAIT), ENOTSOCK);
    int junk = 0;
    CHECK_ERR(zlink_monitor_recv(&junk, &ev, ZLINK_DONTWAIT), ENOTSOCK);

    /* ROUTING_ID: 16 bytes (a version 4 UUID), different per socket, settable */
    unsigned char a[255], b[255];
    size_t al = sizeof a, bl = sizeof b;
    void *st2 = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(zlink_getsockopt(st, ZLINK_ROUTING_ID, a, &al) == 0 && al == 16);
    CHECK(zlink_getsockopt(st2, ZLINK_ROUTING_ID, b, &bl) == 0 && bl == 16);
    CHECK(memcmp(a, b, 16) != 0 && (a[6] >> 4) == 4);
    CHECK(zlink_setsockopt(st, ZLINK_ROUTING_ID, "edge-7", 6) == 0);
    al = sizeof a;
    CHECK(zlink_getsockopt(st, ZLINK_ROUTING_ID, a, &al) == 0 && al == 6 && memcmp(a, "edge-7", 6) == 0);
    al = 3;
    CHECK_ERR(zlink_getsockopt(st, ZLINK_ROUTING_ID, a, &al), EINVAL);
    CHECK_ERR(zlink_setsockopt(st, ZLINK_ROUTING_ID, "", 0), EINVAL);
    CHECK(zlink_close(st) == 0 && zlink_close(st2) == 0);

    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
