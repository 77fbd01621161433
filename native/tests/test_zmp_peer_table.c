/* test_zmp_peer_table.c - the peer table of the libzmq socket types (ZMP
 * engine, native/libzmq/zmp_peers.*) and the routing ids of their monitor
 * events:
 *   - random connects, disconnects and closes of DEALERs at a ROUTER bound
 *     on tcp and ipc, the table (count, ids by index, the bulk call, info by
 *     id) checked against a model after each step (seed printed,
 *     ZLINK_TEST_SEED replays it);
 *   - message counters, addresses and connect times in zlink_peer_info_t;
 *   - PAIR and PUB/SUB tables on both sides; a ROUTER's peer under the
 *     CONNECT_ROUTING_ID it connected with;
 *   - CONNECTION_READY and DISCONNECTED with the peer's routing id and both
 *     addresses on a monitor handle, the table already updated when they
 *     arrive, and a zlink_socket_monitor endpoint still publishing libzmq's
 *     two-frame events;
 *   - the peer calls' argument errors. */
#include "testutil.h"

#include <errno.h>
#include <unistd.h>

#define MAXD 12
#define STEPS 40

static void *ctx;

/* ---- the model ----------------------------------------------------------- */

typedef struct {
    void *s;       /* NULL: no dealer in this slot */
    char id[24];   /* its routing id */
    int connected; /* connected to the router (else disconnected) */
    int over_ipc;
} dealer_t;

static dealer_t dealers[MAXD];
static char tcp_ep[256], ipc_ep[256];

static int model_count(void)
{
    int n = 0;
    for (int i = 0; i < MAXD; i++)
        n += dealers[i].s && dealers[i].connected;
    return n;
}

static int model_has(const zlink_routing_id_t *rid)
{
    for (int i = 0; i < MAXD; i++)
        if (dealers[i].s && dealers[i].connected && rid->size == strlen(dealers[i].id) &&
            memcmp(rid->data, dealers[i].id, rid->size) == 0)
            return i;
    return -1;
}

/* 1 when the router's table is the model's, read every way the ABI has */
static int table_matches(void *router)
{
    int n = zlink_socket_peer_count(router);
    if (n != model_count())
        return 0;
    int seen[MAXD] = {0};
    for (int i = 0; i < n; i++) {
        zlink_routing_id_t rid;
        if (zlink_socket_peer_routing_id(router, i, &rid) != 0)
            return 0; /* a peer left meanwhile: look again */
        int d = model_has(&rid);
        if (d < 0 || seen[d]++)
            return 0;
        zlink_peer_info_t info;
        CHECK(zlink_socket_peer_info(router, &rid, &info) == 0);
        CHECK(info.routing_id.size == rid.size &&
              memcmp(info.routing_id.data, rid.data, rid.size) == 0);
        const char *want = dealers[d].over_ipc ? "ipc://" : "tcp://127.0.0.1:";
        CHECK(strncmp(info.remote_addr, want, strlen(want)) == 0);
    }
    zlink_peer_info_t all[MAXD + 1];
    size_t count = MAXD + 1;
    CHECK(zlink_socket_peers(router, all, &count) == 0);
    if (count != (size_t)n)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (model_has(&all[i].routing_id) < 0)
            return 0;
    return 1;
}

/* A disconnect ends its connection once the dealer has taken libzmq's
 * commands, which it does in calls on it: the peer calls are such calls. */
static void poke_dealers(void)
{
    for (int i = 0; i < MAXD; i++)
        if (dealers[i].s)
            CHECK(zlink_socket_peer_count(dealers[i].s) >= 0);
}

static void wait_table(void *router, int step)
{
    long long deadline = tu_now_ms() + 10000;
    while (poke_dealers(), !table_matches(router)) {
        if (tu_now_ms() > deadline) {
            fprintf(stderr, "step %d: the table has %d peers, the model %d\n", step,
                    zlink_socket_peer_count(router), model_count());
            exit(1);
        }
        tu_sleep_ms(2);
    }
}

static void random_table(void)
{
    tu_seed("test_zmp_peer_table");
    void *router = zlink_socket(ctx, ZLINK_ROUTER);
    CHECK(router);
    tu_set_int(router, ZLINK_LINGER, 0);
    CHECK(zlink_bind(router, "tcp://127.0.0.1:*") == 0);
    tu_last_endpoint(router, tcp_ep, sizeof tcp_ep);
    snprintf(ipc_ep, sizeof ipc_ep, "ipc:///tmp/zlink-peer-table-%d", (int)getpid());
    CHECK(zlink_bind(router, ipc_ep) == 0);
    memset(dealers, 0, sizeof dealers);
    int serial = 0;
    for (int step = 0; step < STEPS; step++) {
        int slot = (int)(tu_rnd() % MAXD);
        dealer_t *d = &dealers[slot];
        if (!d->s) {
            /* a new dealer with an id of its own connects */
            d->s = zlink_socket(ctx, ZLINK_DEALER);
            CHECK(d->s);
            tu_set_int(d->s, ZLINK_LINGER, 0);
            snprintf(d->id, sizeof d->id, "dealer-%d", serial++);
            CHECK(zlink_setsockopt(d->s, ZLINK_ROUTING_ID, d->id, strlen(d->id)) == 0);
            d->over_ipc = (int)(tu_rnd() % 2);
            CHECK(zlink_connect(d->s, d->over_ipc ? ipc_ep : tcp_ep) == 0);
            d->connected = 1;
        } else if (d->connected && tu_rnd() % 2) {
            /* it disconnects its endpoint */
            CHECK(zlink_disconnect(d->s, d->over_ipc ? ipc_ep : tcp_ep) == 0);
            d->connected = 0;
        } else if (!d->connected && tu_rnd() % 2) {
            /* and connects again, maybe over the other transport */
            d->over_ipc = (int)(tu_rnd() % 2);
            CHECK(zlink_connect(d->s, d->over_ipc ? ipc_ep : tcp_ep) == 0);
            d->connected = 1;
        } else {
            CHECK(zlink_close(d->s) == 0);
            d->s = NULL;
            d->connected = 0;
        }
        wait_table(router, step);
    }
    for (int i = 0; i < MAXD; i++)
        if (dealers[i].s) {
            CHECK(zlink_close(dealers[i].s) == 0);
            dealers[i].s = NULL;
        }
    wait_table(router, STEPS);
    CHECK(zlink_close(router) == 0);
}

/* ---- counters, addresses, times ------------------------------------------ */

static void wait_count(void *s, int n)
{
    long long deadline = tu_now_ms() + 10000;
    while (zlink_socket_peer_count(s) != n) {
        if (tu_now_ms() > deadline) {
            fprintf(stderr, "%d peers, want %d\n", zlink_socket_peer_count(s), n);
            exit(1);
        }
        tu_sleep_ms(2);
    }
}

/* the peer at index 0 of s once its counters read sent/received */
static void wait_counters(void *s, uint64_t sent, uint64_t received, zlink_peer_info_t *info)
{
    long long deadline = tu_now_ms() + 10000;
    for (;;) {
        size_t n = 1;
        CHECK(zlink_socket_peers(s, info, &n) == 0 && n == 1);
        if (info->msgs_sent == sent && info->msgs_received == received)
            return;
        if (tu_now_ms() > deadline) {
            fprintf(stderr, "counters %llu/%llu, want %llu/%llu\n",
                    (unsigned long long)info->msgs_sent, (unsigned long long)info->msgs_received,
                    (unsigned long long)sent, (unsigned long long)received);
            exit(1);
        }
        tu_sleep_ms(2);
    }
}

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void counters(void)
{
    void *router = zlink_socket(ctx, ZLINK_ROUTER), *dealer = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(router && dealer);
    CHECK(zlink_setsockopt(router, ZLINK_ROUTING_ID, "R", 1) == 0);
    CHECK(zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "D", 1) == 0);
    tu_set_int(router, ZLINK_RCVTIMEO, 5000);
    tu_set_int(dealer, ZLINK_RCVTIMEO, 5000);
    char ep[256];
    tu_bind_tcp(router, ep, sizeof ep);
    long long before = wall_ms() - 1000; /* a margin for clocks of other grain */
    CHECK(zlink_connect(dealer, ep) == 0);
    wait_count(router, 1);
    wait_count(dealer, 1);

    /* three messages, one of them of two parts, one way; two the other */
    CHECK(zlink_send(dealer, "a", 1, 0) == 1);
    CHECK(zlink_send(dealer, "b", 1, ZLINK_SNDMORE) == 1);
    CHECK(zlink_send(dealer, "c", 1, 0) == 1);
    CHECK(zlink_send(dealer, "d", 1, 0) == 1);
    char buf[8];
    for (int i = 0; i < 3; i++) {
        int more = 1;
        while (more) {
            CHECK(zlink_recv(router, buf, sizeof buf, 0) >= 0);
            size_t len = sizeof more;
            CHECK(zlink_getsockopt(router, ZLINK_RCVMORE, &more, &len) == 0);
        }
    }
    for (int i = 0; i < 2; i++) {
        CHECK(zlink_send(router, "D", 1, ZLINK_SNDMORE) == 1);
        CHECK(zlink_send(router, "r", 1, 0) == 1);
        CHECK(zlink_recv(dealer, buf, sizeof buf, 0) == 1);
    }
    zlink_peer_info_t info;
    wait_counters(router, 2, 3, &info);
    CHECK(info.routing_id.size == 1 && info.routing_id.data[0] == 'D');
    CHECK(strncmp(info.remote_addr, "tcp://127.0.0.1:", 16) == 0);
    long long after = wall_ms() + 1000;
    CHECK((long long)info.connected_time_ms >= before && (long long)info.connected_time_ms <= after);
    wait_counters(dealer, 3, 2, &info);
    CHECK(info.routing_id.size == 1 && info.routing_id.data[0] == 'R');
    CHECK(strcmp(info.remote_addr, ep) == 0);

    /* the router's id for the dealer survives a reconnect; counters start
     * again with the new connection */
    CHECK(zlink_disconnect(dealer, ep) == 0);
    wait_count(dealer, 0); /* the dealer's calls end the connection */
    wait_count(router, 0);
    CHECK(zlink_connect(dealer, ep) == 0);
    wait_count(router, 1);
    wait_counters(router, 0, 0, &info);
    CHECK(info.routing_id.size == 1 && info.routing_id.data[0] == 'D');
    tu_set_int(router, ZLINK_LINGER, 0);
    tu_set_int(dealer, ZLINK_LINGER, 0);
    CHECK(zlink_close(dealer) == 0 && zlink_close(router) == 0);
}

static void expect_peer(void *s, int index, const char *id)
{
    zlink_routing_id_t rid;
    CHECK(zlink_socket_peer_routing_id(s, index, &rid) == 0);
    CHECK(rid.size == strlen(id) && memcmp(rid.data, id, rid.size) == 0);
}

/* A ROUTER that connects with CONNECT_ROUTING_ID has that peer under the
 * alias it routes by; its next connect, without one, under the HELLO id. */
static void router_alias(void)
{
    void *a = zlink_socket(ctx, ZLINK_ROUTER), *b = zlink_socket(ctx, ZLINK_ROUTER),
         *c = zlink_socket(ctx, ZLINK_ROUTER);
    CHECK(a && b && c);
    CHECK(zlink_setsockopt(a, ZLINK_ROUTING_ID, "a-own", 5) == 0);
    CHECK(zlink_setsockopt(b, ZLINK_ROUTING_ID, "b-own", 5) == 0);
    CHECK(zlink_setsockopt(c, ZLINK_ROUTING_ID, "c-own", 5) == 0);
    tu_set_int(a, ZLINK_RCVTIMEO, 5000);
    char epa[256], epc[256];
    CHECK(zlink_bind(a, "tcp://127.0.0.1:*") == 0);
    tu_last_endpoint(a, epa, sizeof epa);
    CHECK(zlink_bind(c, "tcp://127.0.0.1:*") == 0);
    tu_last_endpoint(c, epc, sizeof epc);
    /* a CONNECT_ROUTING_ID set before a bind does not name accepted peers */
    CHECK(zlink_setsockopt(b, ZLINK_CONNECT_ROUTING_ID, "to-a", 4) == 0);
    CHECK(zlink_bind(b, "tcp://127.0.0.1:*") == 0);
    char epb[256];
    tu_last_endpoint(b, epb, sizeof epb);
    CHECK(zlink_connect(b, epa) == 0);
    wait_count(b, 1);
    expect_peer(b, 0, "to-a");
    CHECK(zlink_send(b, "to-a", 4, ZLINK_SNDMORE) == 4);
    CHECK(zlink_send(b, "x", 1, 0) == 1);
    char buf[16];
    CHECK(zlink_recv(a, buf, sizeof buf, 0) == 5 && memcmp(buf, "b-own", 5) == 0);
    CHECK(zlink_recv(a, buf, sizeof buf, 0) == 1);
    expect_peer(a, 0, "b-own");
    CHECK(zlink_connect(b, epc) == 0);
    wait_count(b, 2);
    expect_peer(b, 0, "to-a");
    expect_peer(b, 1, "c-own");
    void *d = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(d && zlink_setsockopt(d, ZLINK_ROUTING_ID, "d-own", 5) == 0);
    CHECK(zlink_connect(d, epb) == 0);
    wait_count(b, 3);
    zlink_routing_id_t rid = {5, "d-own"};
    zlink_peer_info_t info;
    CHECK(zlink_socket_peer_info(b, &rid, &info) == 0);
    tu_set_int(d, ZLINK_LINGER, 0);
    CHECK(zlink_close(d) == 0);
    tu_set_int(a, ZLINK_LINGER, 0);
    tu_set_int(b, ZLINK_LINGER, 0);
    tu_set_int(c, ZLINK_LINGER, 0);
    CHECK(zlink_close(a) == 0 && zlink_close(b) == 0 && zlink_close(c) == 0);
}

/* PAIR and PUB/SUB: each side has the other as its peer, by its id */
static void other_types(void)
{
    const int types[][2] = {{ZLINK_PAIR, ZLINK_PAIR}, {ZLINK_PUB, ZLINK_SUB},
                            {ZLINK_XSUB, ZLINK_XPUB}};
    for (int t = 0; t < 3; t++) {
        void *a = zlink_socket(ctx, types[t][0]), *b = zlink_socket(ctx, types[t][1]);
        CHECK(a && b);
        unsigned char ida[16], idb[16];
        size_t la = sizeof ida, lb = sizeof idb;
        CHECK(zlink_getsockopt(a, ZLINK_ROUTING_ID, ida, &la) == 0 && la == 16);
        CHECK(zlink_getsockopt(b, ZLINK_ROUTING_ID, idb, &lb) == 0 && lb == 16);
        char ep[256];
        tu_bind_tcp(a, ep, sizeof ep);
        CHECK(zlink_connect(b, ep) == 0);
        wait_count(a, 1);
        wait_count(b, 1);
        zlink_routing_id_t rid;
        CHECK(zlink_socket_peer_routing_id(a, 0, &rid) == 0 && rid.size == 16 &&
              memcmp(rid.data, idb, 16) == 0);
        CHECK(zlink_socket_peer_routing_id(b, 0, &rid) == 0 && rid.size == 16 &&
              memcmp(rid.data, ida, 16) == 0);
        tu_set_int(a, ZLINK_LINGER, 0);
        tu_set_int(b, ZLINK_LINGER, 0);
        CHECK(zlink_close(b) == 0);
        wait_count(a, 0);
        CHECK(zlink_close(a) == 0);
    }
}

/* ---- monitor events with routing ids ------------------------------------- */

static void expect_event(void *mon, uint64_t event, zlink_monitor_event_t *ev)
{
    long long deadline = tu_now_ms() + 10000;
    for (;;) {
        zlink_pollitem_t it = {mon, 0, ZLINK_POLLIN, 0};
        CHECK(zlink_poll(&it, 1, 100) >= 0);
        if (zlink_monitor_recv(mon, ev, ZLINK_DONTWAIT) == 0 && ev->event == event)
            return;
        if (tu_now_ms() > deadline) {
            fprintf(stderr, "no monitor event 0x%llx\n", (unsigned long long)event);
            exit(1);
        }
    }
}

/* The ROUTER's monitor handle; the DEALER's a monitor handle too (tcp) or a
 * zlink_socket_monitor endpoint (ipc: libzmq's two frames an event, no
 * routing id). A libzmq socket has one monitor at a time. */
static void monitor_ids(const char *tr)
{
    int legacy_run = strcmp(tr, "ipc") == 0;
    void *router = zlink_socket(ctx, ZLINK_ROUTER), *dealer = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(router && dealer);
    CHECK(zlink_setsockopt(router, ZLINK_ROUTING_ID, "router-1", 8) == 0);
    CHECK(zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "dealer-1", 8) == 0);
    tu_set_int(dealer, ZLINK_RCVTIMEO, 5000);
    void *rmon = zlink_socket_monitor_open(
        router, ZLINK_EVENT_CONNECTION_READY | ZLINK_EVENT_DISCONNECTED);
    CHECK(rmon);
    void *dmon = NULL, *legacy = NULL;
    if (legacy_run) {
        CHECK(zlink_socket_monitor(dealer, "inproc://peer-table-legacy",
                                   ZLINK_EVENT_CONNECTION_READY | ZLINK_EVENT_DISCONNECTED) == 0);
        legacy = zlink_socket(ctx, ZLINK_PAIR);
        CHECK(legacy && zlink_connect(legacy, "inproc://peer-table-legacy") == 0);
    } else {
        dmon = zlink_socket_monitor_open(dealer, ZLINK_EVENT_CONNECTION_READY);
        CHECK(dmon);
    }

    char ep[256];
    if (legacy_run) {
        snprintf(ep, sizeof ep, "ipc:///tmp/zlink-peer-table-mon-%d", (int)getpid());
        CHECK(zlink_bind(router, ep) == 0);
    } else {
        CHECK(zlink_bind(router, "tcp://127.0.0.1:*") == 0);
    }
    tu_last_endpoint(router, ep, sizeof ep);
    CHECK(zlink_connect(dealer, ep) == 0);

    zlink_monitor_event_t ev;
    expect_event(rmon, ZLINK_EVENT_CONNECTION_READY, &ev);
    CHECK(ev.routing_id.size == 8 && memcmp(ev.routing_id.data, "dealer-1", 8) == 0);
    CHECK(strcmp(ev.local_addr, ep) == 0);
    CHECK(strncmp(ev.remote_addr, tr, strlen(tr)) == 0);
    /* the peer is in the table when its CONNECTION_READY arrives */
    zlink_peer_info_t info;
    CHECK(zlink_socket_peer_info(router, &ev.routing_id, &info) == 0);
    /* and the router routes to that id at once */
    CHECK(zlink_send(router, "dealer-1", 8, ZLINK_SNDMORE) == 8);
    CHECK(zlink_send(router, "hi", 2, 0) == 2);
    char buf[8];
    CHECK(zlink_recv(dealer, buf, sizeof buf, 0) == 2 && memcmp(buf, "hi", 2) == 0);

    if (dmon) {
        expect_event(dmon, ZLINK_EVENT_CONNECTION_READY, &ev);
        CHECK(ev.routing_id.size == 8 && memcmp(ev.routing_id.data, "router-1", 8) == 0);
        CHECK(strcmp(ev.remote_addr, ep) == 0);
        CHECK(zlink_close(dmon) == 0);
    } else {
        /* CONNECTION_READY in two frames, and nothing after them */
        tu_set_int(legacy, ZLINK_RCVTIMEO, 5000);
        unsigned char hdr[6];
        CHECK(zlink_recv(legacy, hdr, sizeof hdr, 0) == 6);
        uint16_t e;
        memcpy(&e, hdr, 2);
        CHECK(e == ZLINK_EVENT_CONNECTION_READY);
        char addr[256];
        CHECK(zlink_recv(legacy, addr, sizeof addr, 0) >= 0);
        int more = 1;
        size_t len = sizeof more;
        CHECK(zlink_getsockopt(legacy, ZLINK_RCVMORE, &more, &len) == 0 && more == 0);
        CHECK(zlink_monitor_recv(legacy, &ev, ZLINK_DONTWAIT) == -1 && zlink_errno() == EAGAIN);
        CHECK(zlink_socket_monitor(dealer, NULL, 0) == 0);
        tu_set_int(legacy, ZLINK_LINGER, 0);
        CHECK(zlink_close(legacy) == 0);
    }

    /* the dealer goes: DISCONNECTED with its id, and out of the table */
    tu_set_int(dealer, ZLINK_LINGER, 0);
    CHECK(zlink_close(dealer) == 0);
    expect_event(rmon, ZLINK_EVENT_DISCONNECTED, &ev);
    CHECK(ev.routing_id.size == 8 && memcmp(ev.routing_id.data, "dealer-1", 8) == 0);
    CHECK(ev.value == ZLINK_DISCONNECT_TRANSPORT_ERROR);
    CHECK(zlink_socket_peer_count(router) == 0);
    CHECK_ERR(zlink_socket_peer_info(router, &ev.routing_id, &info), ENOENT);
    CHECK(zlink_close(rmon) == 0);
    tu_set_int(router, ZLINK_LINGER, 0);
    CHECK(zlink_close(router) == 0);
}

/* ---- argument errors, as zlink 1.3 gives them ---------------------------- */

static void errors(void)
{
    void *dealer = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(dealer);
    zlink_routing_id_t rid = {3, "abc"};
    zlink_peer_info_t info;
    size_t count = 4;
    CHECK(zlink_socket_peer_count(dealer) == 0);
    CHECK_ERR(zlink_socket_peer_routing_id(dealer, -1, &rid), EINVAL);
    CHECK_ERR(zlink_socket_peer_routing_id(dealer, 0, NULL), EINVAL);
    CHECK_ERR(zlink_socket_peer_routing_id(dealer, 0, &rid), EINVAL);
    CHECK_ERR(zlink_socket_peer_info(dealer, NULL, &info), EINVAL);
    CHECK_ERR(zlink_socket_peer_info(dealer, &rid, NULL), EINVAL);
    CHECK_ERR(zlink_socket_peer_info(dealer, &rid, &info), ENOENT);
    CHECK_ERR(zlink_socket_peers(dealer, &info, NULL), EINVAL);
    CHECK(zlink_socket_peers(dealer, NULL, &count) == 0 && count == 0);
    count = 0;
    CHECK(zlink_socket_peers(dealer, &info, &count) == 0 && count == 0);
    CHECK(zlink_close(dealer) == 0);
    CHECK_ERR(zlink_socket_peer_count(dealer), ENOTSOCK);
}

int main(void)
{
    ctx = zlink_ctx_new();
    CHECK(ctx);
    errors();
    counters();
    other_types();
    router_alias();
    monitor_ids("tcp");
    monitor_ids("ipc");
    random_table();
    CHECK(zlink_ctx_term(ctx) == 0);
    puts("ok");
    return 0;
}
