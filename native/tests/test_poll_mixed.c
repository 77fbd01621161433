/* test_poll_mixed.c - zlink_poll over a STREAM socket, a libzmq PAIR and a
 * raw pipe together: timeouts, each source waking the poll, and a wake-up
 * from the STREAM side that carries no message not ending the wait. */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

static void *ctx;
static char ep[256];

static void *late_connect(void *arg)
{
    (void)arg;
    tu_sleep_ms(100);
    void *c = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(zlink_connect(c, ep) == 0);
    uint32_t id;
    CHECK(tu_stream_event(c, &id) == 1);
    tu_sleep_ms(200);
    tu_set_int(c, ZLINK_LINGER, 0);
    CHECK(zlink_close(c) == 0);
    return NULL;
}

int main(void)
{
    ctx = zlink_ctx_new();
    void *st = zlink_socket(ctx, ZLINK_STREAM);
    void *a = zlink_socket(ctx, ZLINK_PAIR), *b = zlink_socket(ctx, ZLINK_PAIR);
    tu_bind_tcp(st, ep, sizeof ep);
    CHECK(zlink_bind(a, "inproc://mixed") == 0);
    CHECK(zlink_connect(b, "inproc://mixed") == 0);
    int pfd[2];
    CHECK(pipe(pfd) == 0);

    zlink_pollitem_t items[3] = {{st, 0, ZLINK_POLLIN, 0},
                                 {a, 0, ZLINK_POLLIN, 0},
                                 {NULL, pfd[0], ZLINK_POLLIN, 0}};
    long long t0 = tu_now_ms();
    CHECK(zlink_poll(items, 3, 120) == 0);
    CHECK(tu_now_ms() - t0 >= 110);
    CHECK(zlink_poll(items, 3, 0) == 0);
    CHECK(items[0].revents == 0 && items[1].revents == 0 && items[2].revents == 0);

    /* PAIR only */
    CHECK(zlink_send(b, "m", 1, 0) == 1);
    CHECK(zlink_poll(items, 3, 1000) == 1);
    CHECK(items[1].revents == ZLINK_POLLIN && items[0].revents == 0);
    char buf[16];
    CHECK(zlink_recv(a, buf, sizeof buf, 0) == 1);

    /* raw fd only */
    CHECK(write(pfd[1], "x", 1) == 1);
    CHECK(zlink_poll(items, 3, 1000) == 1);
    CHECK(items[2].revents == ZLINK_POLLIN);
    CHECK(read(pfd[0], buf, 1) == 1);

    /* STREAM wakes a blocking poll (connection from another thread) */
    pthread_t th;
    pthread_create(&th, NULL, late_connect, NULL);
    t0 = tu_now_ms();
    CHECK(zlink_poll(items, 3, -1) == 1);
    CHECK(items[0].revents == ZLINK_POLLIN);
    uint32_t sid, id;
    CHECK(tu_stream_event(st, &sid) == 1);
    /* then its disconnect */
    CHECK(zlink_poll(items, 3, 5000) == 1 && items[0].revents == ZLINK_POLLIN);
    CHECK(tu_stream_event(st, &id) == 0 && id == sid);
    pthread_join(th, NULL);

    /* everything at once, POLLOUT on STREAM is always there */
    CHECK(zlink_send(b, "m", 1, 0) == 1);
    CHECK(write(pfd[1], "x", 1) == 1);
    items[0].events = ZLINK_POLLIN | ZLINK_POLLOUT;
    CHECK(zlink_poll(items, 3, 1000) == 3);
    CHECK(items[0].revents == ZLINK_POLLOUT);

    /* bad handles */
    zlink_pollitem_t bad = {(void *)&bad, 0, ZLINK_POLLIN, 0};
    CHECK_ERR(zlink_poll(&bad, 1, 0), ENOTSOCK);

    CHECK(zlink_close(st) == 0);
    CHECK(zlink_close(a) == 0 && zlink_close(b) == 0);
    close(pfd[0]);
    close(pfd[1]);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
