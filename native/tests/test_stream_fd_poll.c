/* test_stream_fd_poll.c - ZLINK_FD of a STREAM socket lets a caller sleep in
 * poll(): it stays quiet while there is nothing to do, and wakes for an
 * accept, for data, for a peer's close and for queued notifications. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

static int fd_readable(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    int rc = poll(&p, 1, ms);
    CHECK(rc >= 0);
    return rc == 1;
}

static int events_of(void *s)
{
    int ev = 0;
    size_t len = sizeof ev;
    CHECK(zlink_getsockopt(s, ZLINK_EVENTS, &ev, &len) == 0);
    return ev;
}

/* drain until EAGAIN, the documented protocol before sleeping on the fd */
static void drain(void *s)
{
    unsigned char buf[256];
    uint32_t id;
    while (tu_stream_recv(s, &id, buf, sizeof buf, ZLINK_DONTWAIT) >= 0)
        ;
    CHECK(zlink_errno() == EAGAIN);
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM);
    char ep[256];
    tu_bind_tcp(srv, ep, sizeof ep);
    int fd = -1;
    size_t len = sizeof fd;
    CHECK(zlink_getsockopt(srv, ZLINK_FD, &fd, &len) == 0 && fd >= 0);

    /* idle: poll sleeps the whole timeout */
    long long t0 = tu_now_ms();
    CHECK(!fd_readable(fd, 150));
    CHECK(tu_now_ms() - t0 >= 140);
    CHECK(events_of(srv) == ZLINK_POLLOUT);

    /* an incoming connection wakes it */
    int raw = tu_raw_connect(tu_ep_port(ep));
    CHECK(fd_readable(fd, 2000));
    CHECK(events_of(srv) & ZLINK_POLLIN);
    /* the accept happened inside EVENTS; the queued 0x01 keeps the fd
     * readable although the listener is quiet now */
    CHECK(fd_readable(fd, 0));
    uint32_t sid, id;
    CHECK(tu_stream_event(srv, &sid) == 1);
    drain(srv);
    CHECK(!fd_readable(fd, 100));

    /* data wakes it (a LENGTH packet: [00 00 00 04]ping) */
    CHECK(write(raw, "\0\0\0\4ping", 8) == 8);
    CHECK(fd_readable(fd, 2000));
    CHECK(events_of(srv) & ZLINK_POLLIN);
    unsigned char buf[64];
    CHECK(tu_stream_recv(srv, &id, buf, sizeof buf, 0) == 4 && id == sid);
    drain(srv);
    CHECK(!fd_readable(fd, 100));

    /* a notification produced inside a send (peer gone) also wakes it */
    close(raw);
    tu_sleep_ms(50);
    for (int i = 0; i < 100; i++) {
        char big[65536];
        memset(big, 1, sizeof big);
        if (tu_stream_send(srv, sid, big, sizeof big, ZLINK_DONTWAIT) < 0)
            break;
    }
    CHECK(fd_readable(fd, 2000));
    CHECK(events_of(srv) & ZLINK_POLLIN);
    CHECK(tu_stream_event(srv, &id) == 0 && id == sid);
    drain(srv);
    CHECK(!fd_readable(fd, 100));

    CHECK(zlink_close(srv) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
