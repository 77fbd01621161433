/* test_shutdown.c - context shutdown/term release threads blocked in STREAM
 * calls (recv, poll, monitor recv, a send waiting for HWM room) with ETERM;
 * afterwards STREAM calls fail with ETERM; term waits for the sockets to be
 * closed, as libzmq's does. */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>

static void *ctx;
static char ep[256];

static void *blocked_recv(void *arg)
{
    unsigned char buf[16];
    int rc = zlink_recv(arg, buf, sizeof buf, 0);
    int e = zlink_errno();
    return (void *)(intptr_t)(rc == -1 && e == ETERM);
}

static void *blocked_poll(void *arg)
{
    zlink_pollitem_t it = {arg, 0, ZLINK_POLLIN, 0};
    int rc = zlink_poll(&it, 1, -1);
    int e = zlink_errno();
    return (void *)(intptr_t)(rc == -1 && e == ETERM);
}

static void *blocked_monitor(void *arg)
{
    zlink_monitor_event_t ev;
    int rc;
    /* skip what is already queued */
    while ((rc = zlink_monitor_recv(arg, &ev, 0)) == 0)
        ;
    int e = zlink_errno();
    return (void *)(intptr_t)(rc == -1 && e == ETERM);
}

/* a whole socket life in a thread: blocks in recv, gets ETERM, closes */
static void *owner_thread(void *arg)
{
    (void)arg;
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    CHECK(s);
    unsigned char buf[16];
    int rc = zlink_recv(s, buf, sizeof buf, 0);
    int ok = rc == -1 && zlink_errno() == ETERM;
    tu_sleep_ms(100); /* term must wait for this close */
    CHECK(zlink_close(s) == 0);
    return (void *)(intptr_t)ok;
}

int main(void)
{
    ctx = zlink_ctx_new();
    void *a = zlink_socket(ctx, ZLINK_STREAM), *b = zlink_socket(ctx, ZLINK_STREAM);
    void *c = zlink_socket(ctx, ZLINK_STREAM);
    tu_bind_tcp(c, ep, sizeof ep);
    void *mon = zlink_socket_monitor_open(c, ZLINK_EVENT_ALL);
    CHECK(mon);
    void *d = zlink_socket(ctx, ZLINK_DEALER);

    pthread_t t1, t2, t3;
    pthread_create(&t1, NULL, blocked_recv, a);
    pthread_create(&t2, NULL, blocked_poll, b);
    pthread_create(&t3, NULL, blocked_monitor, mon);
    tu_sleep_ms(100);
    CHECK(zlink_ctx_shutdown(ctx) == 0);
    void *r1, *r2, *r3;
    pthread_join(t1, &r1);
    pthread_join(t2, &r2);
    pthread_join(t3, &r3);
    CHECK(r1 && r2 && r3);

    unsigned char buf[8];
    CHECK_ERR(zlink_recv(c, buf, sizeof buf, ZLINK_DONTWAIT), ETERM);
    CHECK_ERR(zlink_send(c, buf, 4, ZLINK_SNDMORE), ETERM);
    CHECK_ERR(zlink_bind(c, "tcp://127.0.0.1:*"), ETERM);
    CHECK_ERR(zlink_connect(c, ep), ETERM);
    CHECK_ERR(zlink_recv(d, buf, sizeof buf, 0), ETERM);
    CHECK_NULL_ERR(zlink_socket(ctx, ZLINK_STREAM), ETERM);
    CHECK(zlink_close(a) == 0 && zlink_close(b) == 0 && zlink_close(c) == 0);
    CHECK(zlink_close(d) == 0 && zlink_close(mon) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);

    /* term from another thread while a socket owner is blocked */
    ctx = zlink_ctx_new();
    pthread_t t4;
    pthread_create(&t4, NULL, owner_thread, NULL);
    tu_sleep_ms(100);
    long long t0 = tu_now_ms();
    CHECK(zlink_ctx_term(ctx) == 0);
    CHECK(tu_now_ms() - t0 >= 90);
    void *r4;
    pthread_join(t4, &r4);
    CHECK(r4);

    /* a STREAM socket with unflushable data and infinite linger does not
     * hold term up once the context is shut down */
    ctx = zlink_ctx_new();
    void *srv = zlink_socket(ctx, ZLINK_STREAM), *cli = zlink_socket(ctx, ZLINK_STREAM);
    tu_bind_tcp(srv, ep, sizeof ep);
    CHECK(zlink_connect(cli, ep) == 0);
    uint32_t cid, sid;
    CHECK(tu_stream_event(cli, &cid) == 1);
    CHECK(tu_stream_event(srv, &sid) == 1);
    tu_set_int(srv, ZLINK_SNDHWM, 0);
    static char big[65536];
    for (int i = 0; i < 200; i++)
        CHECK(tu_stream_send(srv, sid, big, sizeof big, ZLINK_DONTWAIT) == (int)sizeof big);
    CHECK(zlink_ctx_shutdown(ctx) == 0);
    t0 = tu_now_ms();
    CHECK(zlink_close(srv) == 0);
    CHECK(zlink_close(cli) == 0);
    CHECK(tu_now_ms() - t0 < 1000);
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
