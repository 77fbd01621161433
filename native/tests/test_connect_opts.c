/* test_connect_opts.c - connect-side options of STREAM: CONNECT_ROUTING_ID,
 * RECONNECT_IVL (-1: a refused connect yields 0x00 and a CLOSED event with
 * ECONNREFUSED; >= 0: CONNECT_RETRIED until the listener appears) and
 * CONNECT_TIMEOUT. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static zlink_monitor_event_t wait_event(void *mon, uint64_t want, void *pump)
{
    zlink_monitor_event_t ev;
    long long deadline = tu_now_ms() + 5000;
    unsigned char buf[64];
    uint32_t id;
    while (tu_now_ms() < deadline) {
        if (zlink_monitor_recv(mon, &ev, ZLINK_DONTWAIT) == 0) {
            if (ev.event == want)
                return ev;
            continue;
        }
        /* progress (retries, timeouts) happens inside calls on the socket */
        zlink_pollitem_t it = {pump, 0, ZLINK_POLLIN, 0};
        zlink_poll(&it, 1, 5);
        (void)buf;
        (void)id;
    }
    fprintf(stderr, "event 0x%llx never came\n", (unsigned long long)want);
    exit(1);
}

/* a port nobody listens on */
static void free_endpoint(void *ctx, char *ep, size_t n)
{
    void *t = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(zlink_bind(t, "tcp://127.0.0.1:*") == 0);
    tu_last_endpoint(t, ep, n);
    CHECK(zlink_close(t) == 0);
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
    uint32_t id, sid;
    unsigned char idb[4];

    /* CONNECT_ROUTING_ID names the next connection only */
    tu_put_be32(idb, 0xAABBCCDDu);
    CHECK(zlink_setsockopt(cli, ZLINK_CONNECT_ROUTING_ID, idb, 4) == 0);
    CHECK(zlink_connect(cli, ep) == 0);
    CHECK(tu_stream_event(cli, &id) == 1 && id == 0xAABBCCDDu);
    CHECK(tu_stream_event(srv, &sid) == 1);
    CHECK(tu_stream_send(cli, 0xAABBCCDDu, "named", 5, 0) == 5);
    unsigned char buf[64];
    CHECK(tu_stream_recv(srv, &id, buf, sizeof buf, 0) == 5 && id == sid);
    /* in use */
    CHECK(zlink_setsockopt(cli, ZLINK_CONNECT_ROUTING_ID, idb, 4) == 0);
    CHECK_ERR(zlink_connect(cli, ep), EINVAL);
    CHECK_ERR(zlink_setsockopt(cli, ZLINK_CONNECT_ROUTING_ID, idb, 5), EINVAL);
    CHECK_ERR(zlink_setsockopt(cli, ZLINK_CONNECT_ROUTING_ID, idb, 0), EINVAL);
    /* the next connect gets a library id again */
    CHECK(zlink_connect(cli, ep) == 0);
    CHECK(tu_stream_event(cli, &id) == 1 && id != 0xAABBCCDDu);
    CHECK(tu_stream_event(srv, &sid) == 1);
    /* an id chosen before the connect is known at once, but sending needs
     * the connection: until 0x01 it is unreachable */
    tu_put_be32(idb, 7);
    CHECK(zlink_setsockopt(cli, ZLINK_CONNECT_ROUTING_ID, idb, 4) == 0);
    CHECK(zlink_connect(cli, ep) == 0);
    CHECK_ERR(tu_stream_send(cli, 7, "x", 1, 0), EHOSTUNREACH);
    CHECK(tu_stream_event(cli, &id) == 1 && id == 7);
    CHECK(tu_stream_send(cli, 7, "ok", 2, 0) == 2);

    /* refused, no retry: [id][0x00] and CLOSED(ECONNREFUSED) */
    void *c2 = zlink_socket(ctx, ZLINK_STREAM);
    void *mon = zlink_socket_monitor_open(c2, ZLINK_EVENT_ALL);
    char dead[256];
    free_endpoint(ctx, dead, sizeof dead);
    tu_set_int(c2, ZLINK_RECONNECT_IVL, -1);
    tu_put_be32(idb, 0x01020304u);
    CHECK(zlink_setsockopt(c2, ZLINK_CONNECT_ROUTING_ID, idb, 4) == 0);
    CHECK(zlink_connect(c2, dead) == 0);
    CHECK(tu_stream_event(c2, &id) == 0 && id == 0x01020304u);
    zlink_monitor_event_t ev = wait_event(mon, ZLINK_EVENT_CLOSED, c2);
    CHECK(ev.value == ECONNREFUSED);
    CHECK(tu_be32(ev.routing_id.data) == 0x01020304u && strcmp(ev.remote_addr, dead) == 0);
    CHECK_ERR(zlink_recv(c2, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);

    /* refused with retries: CONNECT_RETRIED(ECONNREFUSED) until a listener
     * shows up, then 0x01 */
    tu_set_int(c2, ZLINK_RECONNECT_IVL, 20);
    CHECK(zlink_connect(c2, dead) == 0);
    ev = wait_event(mon, ZLINK_EVENT_CONNECT_RETRIED, c2);
    CHECK(ev.value == ECONNREFUSED);
    ev = wait_event(mon, ZLINK_EVENT_CONNECT_RETRIED, c2);
    void *late = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(zlink_bind(late, dead) == 0);
    CHECK(tu_stream_event(c2, &id) == 1);
    uint32_t lid;
    CHECK(tu_stream_event(late, &lid) == 1);

    /* CONNECT_TIMEOUT: a listener that never accepts and has a full
     * backlog drops SYNs, so connects hang until the timeout */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(lfd, 0) == 0);
    socklen_t sl = sizeof sa;
    getsockname(lfd, (struct sockaddr *)&sa, &sl);
    char hang[64];
    snprintf(hang, sizeof hang, "tcp://127.0.0.1:%u", ntohs(sa.sin_port));
    void *c3 = zlink_socket(ctx, ZLINK_STREAM);
    void *mon3 = zlink_socket_monitor_open(c3, ZLINK_EVENT_CLOSED);
    tu_set_int(c3, ZLINK_RECONNECT_IVL, -1);
    tu_set_int(c3, ZLINK_CONNECT_TIMEOUT, 200);
    for (int i = 0; i < 4; i++)
        CHECK(zlink_connect(c3, hang) == 0);
    ev = wait_event(mon3, ZLINK_EVENT_CLOSED, c3);
    CHECK(ev.value == ETIMEDOUT);
    close(lfd);

    tu_set_int(cli, ZLINK_LINGER, 0);
    CHECK(zlink_close(mon) == 0 && zlink_close(mon3) == 0);
    CHECK(zlink_close(cli) == 0 && zlink_close(srv) == 0);
    CHECK(zlink_close(c2) == 0 && zlink_close(c3) == 0 && zlink_close(late) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
