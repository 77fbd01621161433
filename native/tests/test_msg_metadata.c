/*
 * test_msg_metadata.c - a received message's properties (Peer-Address) stay
 * readable for as long as the message lives, whatever the connection does,
 * randomized (the seed is printed; ZLINK_TEST_SEED=<seed> replays it).
 *
 * A ZMP connection's engine hands each message it receives a reference to
 * one metadata object, taking those references from the counter in batches
 * of 256 (docs/native.md#the-router-path-per-message). Each round: a DEALER
 * sends a random number of requests (up to 1,200, so batches run out and are
 * taken again) over tcp:// to a ROUTER, which receives them with
 * zlink_msg_recv and holds their bodies; a random share of them is closed
 * while the rest arrive, some connections are dropped and made again
 * mid-round (a new engine, new metadata), and the context is terminated
 * with the rest still held (every engine gone and its unused references
 * given back). Every held body must still be its request, byte for byte,
 * and say Peer-Address 127.0.0.1; they are then closed in random order. A
 * reference counted wrong frees the metadata under a live message or never
 * frees it: the memory checks (scripts/native-memcheck.sh) run this test and
 * fail on either.
 */
#include "testutil.h"

#define MAX_HELD 1200

typedef struct {
    zlink_msg_t msg;
    uint32_t n; /* request number: the body is "req <n>" */
    int live;
} held_t;

static held_t held[MAX_HELD];

static void check_body(held_t *h)
{
    char want[32];
    int len = snprintf(want, sizeof want, "req %u", h->n);
    if (zlink_msg_size(&h->msg) != (size_t)len ||
        memcmp(zlink_msg_data(&h->msg), want, (size_t)len) != 0) {
        fprintf(stderr, "request %u: body differs\n", h->n);
        exit(1);
    }
    const char *addr = zlink_msg_gets(&h->msg, "Peer-Address");
    if (!addr || strcmp(addr, "127.0.0.1") != 0) {
        fprintf(stderr, "request %u: Peer-Address %s\n", h->n, addr ? addr : "(none)");
        exit(1);
    }
}

static void drop(held_t *h)
{
    check_body(h);
    CHECK(zlink_msg_close(&h->msg) == 0);
    h->live = 0;
}

static void *connect_dealer(void *ctx, const char *ep)
{
    void *d = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(d);
    tu_set_int(d, ZLINK_LINGER, 0);
    CHECK(zlink_connect(d, ep) == 0);
    return d;
}

static void round_once(int round)
{
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    void *r = zlink_socket(ctx, ZLINK_ROUTER);
    CHECK(r);
    tu_set_int(r, ZLINK_LINGER, 0);
    tu_set_int(r, ZLINK_RCVTIMEO, 5000);
    CHECK(zlink_bind(r, "tcp://127.0.0.1:0") == 0);
    char ep[128];
    size_t eplen = sizeof ep;
    CHECK(zlink_getsockopt(r, ZLINK_LAST_ENDPOINT, ep, &eplen) == 0);
    void *d = connect_dealer(ctx, ep);

    uint32_t total = 1 + tu_rnd() % MAX_HELD;
    unsigned close_pct = tu_rnd() % 101;   /* share closed while the round runs */
    uint32_t reconnect_every = tu_rnd() % 3 == 0 ? 0 : 100 + tu_rnd() % 400;
    uint32_t reconnects = 0;
    zlink_msg_t id;
    zlink_msg_init(&id);
    uint32_t n = 0;
    while (n < total) {
        /* a window of requests on this connection, then each one received */
        uint32_t batch = 1 + tu_rnd() % 300;
        if (batch > total - n)
            batch = total - n;
        if (reconnect_every && n / reconnect_every != (n + batch) / reconnect_every &&
            n + batch < total) {
            /* a new connection (a new engine) for what follows */
            CHECK(zlink_close(d) == 0);
            d = connect_dealer(ctx, ep);
            reconnects++;
        }
        for (uint32_t i = 0; i < batch; i++) {
            char body[32];
            int len = snprintf(body, sizeof body, "req %u", n + i);
            CHECK(zlink_send(d, body, (size_t)len, 0) == len);
        }
        for (uint32_t i = 0; i < batch; i++, n++) {
            held_t *h = &held[n];
            CHECK(zlink_msg_recv(&id, r, 0) >= 0 && zlink_msg_more(&id));
            zlink_msg_init(&h->msg);
            CHECK(zlink_msg_recv(&h->msg, r, 0) >= 0 && !zlink_msg_more(&h->msg));
            h->n = n;
            h->live = 1;
            check_body(h);
            if (tu_rnd() % 100 < close_pct) {
                /* close an earlier one (or this one) while more arrive */
                held_t *old = &held[tu_rnd() % (n + 1)];
                if (old->live)
                    drop(old);
            }
        }
    }
    zlink_msg_close(&id);
    CHECK(zlink_close(d) == 0);
    CHECK(zlink_close(r) == 0);
    CHECK(zlink_ctx_term(ctx) == 0);

    /* every engine has ended: what is held must still read whole */
    uint32_t live = 0;
    for (uint32_t i = 0; i < total; i++)
        live += held[i].live;
    for (uint32_t left = live; left > 0; left--) {
        uint32_t pick = tu_rnd() % total;
        while (!held[pick].live)
            pick = (pick + 1) % total;
        drop(&held[pick]);
    }
    printf("round %d: %u requests, %u reconnects, %u held past the context\n", round, total,
           reconnects, live);
}

int main(void)
{
    tu_seed("test_msg_metadata");
    for (int round = 0; round < 6; round++)
        round_once(round);
    printf("test_msg_metadata: ok\n");
    return 0;
}
