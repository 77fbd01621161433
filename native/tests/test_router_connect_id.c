/* test_router_connect_id.c - a ROUTER that connects with a
 * CONNECT_ROUTING_ID naming a peer it still has (libzmq's router.cpp
 * asserted and aborted the process; native/libzmq/router-connect-id.patch):
 *   - without ROUTER_HANDOVER the connect is refused (EEXIST) and the
 *     CONNECT_ROUTING_ID is used up; the peer that has the id keeps it and
 *     keeps working, also after it went away and came back on its port
 *     (the ROUTER reconnects under the same id), and a connect under a new
 *     id still works;
 *   - the same right after zlink_disconnect of the endpoint (the old
 *     connection's pipe is still being torn down): refused, never an
 *     abort, and once the old one is gone the id can be taken again;
 *   - with ROUTER_HANDOVER the new connection takes the id over: messages
 *     to it reach the new peer, none reach the old one.
 * Over tcp:// and ws:// (the ZMP byte transport). */
#include "testutil.h"

#include <errno.h>

static void *ctx;

static void set_id(void *r, const char *id)
{
    CHECK(zlink_setsockopt(r, ZLINK_CONNECT_ROUTING_ID, id, strlen(id)) == 0);
}

/* a DEALER bound at tr://127.0.0.1:port (0: any), its endpoint in ep */
static void *peer(const char *tr, int port, char *ep, size_t cap)
{
    char b[128];
    void *d = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(d);
    tu_set_int(d, ZLINK_LINGER, 0);
    if (port)
        snprintf(b, sizeof b, "%s://127.0.0.1:%d", tr, port);
    else
        snprintf(b, sizeof b, "%s://127.0.0.1:*", tr);
    /* a port just given up is free once the closed socket's listener is
     * (libzmq closes it in its I/O thread) */
    long long end = tu_now_ms() + 5000;
    while (zlink_bind(d, b) != 0) {
        CHECK(zlink_errno() == EADDRINUSE && port && tu_now_ms() < end);
        tu_sleep_ms(5);
    }
    tu_last_endpoint(d, ep, cap);
    return d;
}

static int port_of(const char *ep)
{
    const char *p = strrchr(ep, ':');
    CHECK(p);
    return atoi(p + 1);
}

/* the router sends body to id until the peer gets it (a message sent while
 * the connection under the id is being made again may be lost, as libzmq
 * does; earlier bodies arriving late are skipped), within 10 s */
static void route(void *r, const char *id, void *to, const char *body)
{
    char b[64];
    long long end = tu_now_ms() + 10000;
    for (;;) {
        CHECK(tu_now_ms() < end);
        CHECK(zlink_send(r, id, strlen(id), ZLINK_SNDMORE) == (int)strlen(id));
        CHECK(zlink_send(r, body, strlen(body), 0) == (int)strlen(body));
        long long wait = tu_now_ms() + 500;
        while (tu_now_ms() < wait) {
            int n = zlink_recv(to, b, sizeof b, ZLINK_DONTWAIT);
            if (n < 0) {
                CHECK(zlink_errno() == EAGAIN);
                tu_sleep_ms(2);
                continue;
            }
            if (n == (int)strlen(body) && memcmp(b, body, (size_t)n) == 0)
                return;
        }
    }
}

/* nothing but late copies of earlier bodies arrives at d within ms: not a
 * or b */
static void quiet(void *d, int ms, const char *a, const char *b)
{
    char got[64];
    tu_sleep_ms(ms);
    int n;
    while ((n = zlink_recv(d, got, sizeof got, ZLINK_DONTWAIT)) >= 0)
        CHECK(!(n == (int)strlen(a) && memcmp(got, a, (size_t)n) == 0) &&
              !(n == (int)strlen(b) && memcmp(got, b, (size_t)n) == 0));
    CHECK(zlink_errno() == EAGAIN);
}

static void *router(int handover)
{
    void *r = zlink_socket(ctx, ZLINK_ROUTER);
    CHECK(r);
    tu_set_int(r, ZLINK_LINGER, 0);
    tu_set_int(r, ZLINK_RECONNECT_IVL, 20);
    tu_set_int(r, ZLINK_ROUTER_MANDATORY, 1);
    tu_set_int(r, ZLINK_SNDTIMEO, 5000);
    if (handover)
        tu_set_int(r, ZLINK_ROUTER_HANDOVER, 1);
    return r;
}

static void refused(const char *tr)
{
    char ep[256], ep2[256];
    void *r = router(0);
    void *b = peer(tr, 0, ep, sizeof ep);
    set_id(r, "rcv");
    CHECK(zlink_connect(r, ep) == 0);
    route(r, "rcv", b, "one");
    /* the receiver leaves and comes back on its port at once */
    int port = port_of(ep);
    zlink_close(b);
    b = peer(tr, port, ep, sizeof ep);
    /* connecting again under the id the ROUTER still has: refused */
    set_id(r, "rcv");
    CHECK_ERR(zlink_connect(r, ep), EEXIST);
    /* the id was used up by the refused connect: a plain connect works */
    void *c = peer(tr, 0, ep2, sizeof ep2);
    CHECK(zlink_connect(r, ep2) == 0);
    zlink_close(c);
    CHECK(zlink_disconnect(r, ep2) == 0);
    /* the old connection reconnected to the receiver that came back and
     * still has the id */
    route(r, "rcv", b, "two");
    /* right after a disconnect the old pipe is still there: refused, not
     * an abort; once it is gone the id is free again */
    CHECK(zlink_disconnect(r, ep) == 0);
    set_id(r, "rcv");
    int rc = zlink_connect(r, ep);
    CHECK(rc == 0 || zlink_errno() == EEXIST);
    long long end = tu_now_ms() + 5000;
    while (rc != 0) {
        CHECK(tu_now_ms() < end);
        tu_sleep_ms(10);
        /* let the ROUTER take the old pipe's end (commands run inside
         * calls on it) */
        char tmp[8];
        zlink_recv(r, tmp, sizeof tmp, ZLINK_DONTWAIT);
        set_id(r, "rcv");
        rc = zlink_connect(r, ep);
        CHECK(rc == 0 || zlink_errno() == EEXIST);
    }
    route(r, "rcv", b, "three");
    /* a new id on a new connection */
    c = peer(tr, 0, ep2, sizeof ep2);
    set_id(r, "other");
    CHECK(zlink_connect(r, ep2) == 0);
    route(r, "other", c, "four");
    route(r, "rcv", b, "five");
    zlink_close(c);
    zlink_close(b);
    zlink_close(r);
}

static void handover(const char *tr)
{
    char ep1[256], ep2[256];
    void *r = router(1);
    void *b1 = peer(tr, 0, ep1, sizeof ep1);
    void *b2 = peer(tr, 0, ep2, sizeof ep2);
    set_id(r, "rcv");
    CHECK(zlink_connect(r, ep1) == 0);
    route(r, "rcv", b1, "old");
    /* the same id on another connection: it takes the id over */
    set_id(r, "rcv");
    CHECK(zlink_connect(r, ep2) == 0);
    route(r, "rcv", b2, "new");
    route(r, "rcv", b2, "again");
    quiet(b1, 100, "new", "again");
    zlink_close(b2);
    zlink_close(b1);
    zlink_close(r);
}

int main(void)
{
    ctx = zlink_ctx_new();
    CHECK(ctx);
    const char *trs[] = {"tcp", "ws"};
    for (int i = 0; i < 2; i++) {
        if (i == 1 && !zlink_has("ws"))
            continue;
        refused(trs[i]);
        handover(trs[i]);
        printf("%s: ok\n", trs[i]);
    }
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
