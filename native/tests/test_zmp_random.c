/*
 * test_zmp_random.c - NetZlink's libzmq socket types to one another over
 * ZMP, on tcp:// and ipc:// (or the transports named on the command line:
 * tcp, ipc, tls, ws, wss; ctest runs "tls ws wss" as test_zmp_random_tls),
 * randomized (the seed is printed; ZLINK_TEST_SEED=<seed> replays it):
 *   - PAIR: random multipart messages both ways (1-6 parts of 0 bytes to
 *     100 KB, some past the 8 KB batch), each arriving whole, exact and in
 *     order;
 *   - DEALER/ROUTER: 1-4 DEALERs (default 16-byte ids or their own) send
 *     random multipart requests; the ROUTER sees each DEALER's requests in
 *     order under that DEALER's id and answers each by id; every DEALER gets
 *     exactly its own answers in order;
 *   - PUB/SUB: 1-4 SUBs with random prefix subscriptions get exactly the
 *     published messages their filters match, in order and whole; then each
 *     cancels some prefixes and adds others, and the second phase is
 *     checked against the new filters (the cancels reached the PUB: with
 *     filtering only at the SUB the check would still pass, so a second PUB
 *     check counts what XPUB saw: every SUBSCRIBE and CANCEL, in order).
 */
#include "testutil.h"
#ifdef ZLINK_TEST_TLS
#include "tls_testutil.h"
#endif

#include <sys/stat.h>
#include <unistd.h>

#define MAX_PARTS 6

/* message number n of stream `stream`: its parts, from a generator of its own */
typedef struct {
    int nparts;
    size_t len[MAX_PARTS];
    uint32_t seed;
} spec_t;

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x ? x : 1;
}

static uint32_t base_seed;

static spec_t spec(uint32_t stream, uint32_t n)
{
    spec_t s;
    uint32_t r = mix(base_seed ^ mix(stream * 7919U + n));
    s.seed = r;
    r = mix(r + 1);
    s.nparts = 1 + (int)(r % MAX_PARTS);
    for (int i = 0; i < s.nparts; i++) {
        r = mix(r + 2);
        uint32_t kind = r % 20;
        size_t len = kind == 0 ? 0 : kind < 15 ? r % 300 : kind < 19 ? r % 9000 : r % 100000;
        s.len[i] = len;
    }
    return s;
}

static void fill(uint32_t seed, int part, unsigned char *buf, size_t len)
{
    uint32_t r = mix(seed ^ (uint32_t)(part + 1) * 2654435761U);
    for (size_t i = 0; i < len; i++) {
        if ((i & 3) == 0)
            r = mix(r + (uint32_t)i);
        buf[i] = (unsigned char)(r >> ((i & 3) * 8));
    }
}

static unsigned char sendbuf[100000], recvbuf[100001], expbuf[100000];

/* sends message n of stream, with prefix parts (e.g. a routing id) first */
static void send_spec(void *s, uint32_t stream, uint32_t n, const void *prefix, size_t plen)
{
    spec_t sp = spec(stream, n);
    if (prefix)
        CHECK(zlink_send(s, prefix, plen, ZLINK_SNDMORE) == (int)plen);
    for (int i = 0; i < sp.nparts; i++) {
        fill(sp.seed, i, sendbuf, sp.len[i]);
        CHECK(zlink_send(s, sendbuf, sp.len[i], i + 1 < sp.nparts ? ZLINK_SNDMORE : 0) ==
              (int)sp.len[i]);
    }
}

static int more(void *s)
{
    int m = 0;
    size_t ml = sizeof m;
    CHECK(zlink_getsockopt(s, ZLINK_RCVMORE, &m, &ml) == 0);
    return m;
}

/* receives the rest of a message that must be message n of stream */
static void expect_spec(void *s, uint32_t stream, uint32_t n, const char *where)
{
    spec_t sp = spec(stream, n);
    for (int i = 0; i < sp.nparts; i++) {
        int got = zlink_recv(s, recvbuf, sizeof recvbuf, 0);
        if (got != (int)sp.len[i]) {
            fprintf(stderr, "%s: stream %u message %u part %d: %d bytes, want %zu\n", where,
                    stream, n, i, got, sp.len[i]);
            CHECK(0);
        }
        fill(sp.seed, i, expbuf, sp.len[i]);
        if (memcmp(recvbuf, expbuf, sp.len[i])) {
            fprintf(stderr, "%s: stream %u message %u part %d: other bytes\n", where, stream, n, i);
            CHECK(0);
        }
        if (more(s) != (i + 1 < sp.nparts)) {
            fprintf(stderr, "%s: stream %u message %u part %d: MORE wrong\n", where, stream, n, i);
            CHECK(0);
        }
    }
}

#ifdef ZLINK_TEST_TLS
/* tls:// and wss://: every socket gets the server's certificate (used when
 * it binds) and the CA and name to verify a server by (when it connects) */
static tu_tls_t certs;
static int use_tls;
#endif

static void *sock(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    CHECK(s);
#ifdef ZLINK_TEST_TLS
    if (use_tls) {
        tu_set_str(s, ZLINK_TLS_CERT, certs.srv_cert);
        tu_set_str(s, ZLINK_TLS_KEY, certs.srv_key);
        tu_set_str(s, ZLINK_TLS_CA, certs.ca);
        tu_set_str(s, ZLINK_TLS_HOSTNAME, "localhost");
    }
#endif
    tu_set_int(s, ZLINK_LINGER, 0);
    tu_set_int(s, ZLINK_RCVTIMEO, 10000);
    tu_set_int(s, ZLINK_SNDHWM, 100000);
    tu_set_int(s, ZLINK_RCVHWM, 100000);
    return s;
}

static char ipc_dir[64];

static void bind_any(void *s, const char *transport, char *ep, size_t cap)
{
    static int k;
    if (strcmp(transport, "ipc") != 0) {
        char any[64];
        snprintf(any, sizeof any, "%s://127.0.0.1:*", transport);
        CHECK(zlink_bind(s, any) == 0);
    } else {
        char path[128];
        snprintf(path, sizeof path, "ipc://%s/s%d", ipc_dir, k++);
        CHECK(zlink_bind(s, path) == 0);
    }
    tu_last_endpoint(s, ep, cap);
}

static void pair_test(void *ctx, const char *transport)
{
    void *a = sock(ctx, ZLINK_PAIR), *b = sock(ctx, ZLINK_PAIR);
    char ep[256];
    bind_any(a, transport, ep, sizeof ep);
    CHECK(zlink_connect(b, ep) == 0);
    uint32_t na = 1 + tu_rnd() % 150, nb = 1 + tu_rnd() % 150;
    for (uint32_t i = 0; i < na || i < nb; i++) {
        if (i < na)
            send_spec(a, 1, i, NULL, 0);
        if (i < nb)
            send_spec(b, 2, i, NULL, 0);
    }
    for (uint32_t i = 0; i < nb; i++)
        expect_spec(a, 2, i, "PAIR a");
    for (uint32_t i = 0; i < na; i++)
        expect_spec(b, 1, i, "PAIR b");
    printf("  %s PAIR: %u and %u messages\n", transport, na, nb);
    zlink_close(a);
    zlink_close(b);
}

static void dealer_router_test(void *ctx, const char *transport)
{
    void *r = sock(ctx, ZLINK_ROUTER);
    char ep[256];
    bind_any(r, transport, ep, sizeof ep);
    int nd = 1 + (int)(tu_rnd() % 4);
    void *d[4];
    unsigned char id[4][255];
    size_t idlen[4];
    uint32_t count[4];
    for (int k = 0; k < nd; k++) {
        d[k] = sock(ctx, ZLINK_DEALER);
        if (tu_rnd() % 2) {
            idlen[k] = 1 + tu_rnd() % 20;
            for (size_t j = 0; j < idlen[k]; j++)
                id[k][j] = (unsigned char)('a' + tu_rnd() % 26);
            id[k][0] = (unsigned char)('0' + k); /* distinct */
            CHECK(zlink_setsockopt(d[k], ZLINK_ROUTING_ID, id[k], idlen[k]) == 0);
        } else {
            idlen[k] = 255;
            CHECK(zlink_getsockopt(d[k], ZLINK_ROUTING_ID, id[k], &idlen[k]) == 0);
            CHECK(idlen[k] == 16);
        }
        CHECK(zlink_connect(d[k], ep) == 0);
        count[k] = 1 + tu_rnd() % 80;
    }
    uint32_t total = 0;
    for (uint32_t i = 0; i < 80; i++)
        for (int k = 0; k < nd; k++)
            if (i < count[k]) {
                send_spec(d[k], 10 + (uint32_t)k, i, NULL, 0);
                total++;
            }
    /* the ROUTER: each request under its DEALER's id, in that DEALER's order */
    uint32_t seen[4] = {0};
    for (uint32_t t = 0; t < total; t++) {
        int n = zlink_recv(r, recvbuf, sizeof recvbuf, 0);
        CHECK(n > 0 && more(r));
        int k = -1;
        for (int j = 0; j < nd; j++)
            if ((size_t)n == idlen[j] && !memcmp(recvbuf, id[j], idlen[j]))
                k = j;
        CHECK(k >= 0);
        expect_spec(r, 10 + (uint32_t)k, seen[k]++, "ROUTER");
        /* answer by id */
        send_spec(r, 20 + (uint32_t)k, seen[k] - 1, id[k], idlen[k]);
    }
    for (int k = 0; k < nd; k++) {
        CHECK(seen[k] == count[k]);
        for (uint32_t i = 0; i < count[k]; i++)
            expect_spec(d[k], 20 + (uint32_t)k, i, "DEALER");
        CHECK(zlink_recv(d[k], recvbuf, sizeof recvbuf, ZLINK_DONTWAIT) == -1);
        zlink_close(d[k]);
    }
    printf("  %s DEALER/ROUTER: %d dealers, %u requests\n", transport, nd, total);
    zlink_close(r);
}

/* PUB/SUB: topics are the first part; a message's topic is one of 6 */
static const char *topics[6] = {"alpha", "alp", "beta", "b", "gamma.x", "gamma.y"};

static int matches(unsigned filters, const char *topic)
{
    static const char *prefixes[6] = {"alpha", "alp", "b", "beta", "gamma", "g"};
    for (int f = 0; f < 6; f++)
        if ((filters >> f & 1) && !strncmp(topic, prefixes[f], strlen(prefixes[f])))
            return 1;
    return 0;
}

static void set_filters(void *s, unsigned old, unsigned now)
{
    static const char *prefixes[6] = {"alpha", "alp", "b", "beta", "gamma", "g"};
    for (int f = 0; f < 6; f++) {
        if ((old >> f & 1) && !(now >> f & 1))
            CHECK(zlink_setsockopt(s, ZLINK_UNSUBSCRIBE, prefixes[f], strlen(prefixes[f])) == 0);
        if (!(old >> f & 1) && (now >> f & 1))
            CHECK(zlink_setsockopt(s, ZLINK_SUBSCRIBE, prefixes[f], strlen(prefixes[f])) == 0);
    }
}

/* publishes \xff<mark> until every SUB received it; returns when all have */
static void sync_subs(void *pub, void **subs, int ns, const char *mark)
{
    int done[4] = {0}, left = ns;
    long long end = tu_now_ms() + 10000;
    while (left) {
        CHECK(tu_now_ms() < end);
        CHECK(zlink_send(pub, mark, strlen(mark), 0) == (int)strlen(mark));
        tu_sleep_ms(5);
        for (int k = 0; k < ns; k++) {
            while (!done[k]) {
                int n = zlink_recv(subs[k], recvbuf, sizeof recvbuf, ZLINK_DONTWAIT);
                if (n < 0)
                    break;
                CHECK(!more(subs[k]) && n == (int)strlen(mark) && !memcmp(recvbuf, mark, n));
                done[k] = 1;
                left--;
            }
        }
    }
}

/* the next message's first part, past the sync marks that came after the
 * SUB's own (sync_subs goes on publishing them until every SUB has one) */
static int recv_topic(void *s)
{
    for (;;) {
        int n = zlink_recv(s, recvbuf, sizeof recvbuf, 0);
        if (n >= 5 && !memcmp(recvbuf, "\xffsync", 5) && !more(s))
            continue;
        return n;
    }
}

static void pubsub_phase(void *pub, void **subs, int ns, const unsigned *filters,
                         uint32_t stream, const char *mark)
{
    uint32_t nmsg = 1 + tu_rnd() % 200;
    for (uint32_t i = 0; i < nmsg; i++) {
        const char *t = topics[mix(base_seed ^ stream ^ i) % 6];
        send_spec(pub, stream, i, t, strlen(t));
    }
    CHECK(zlink_send(pub, mark, strlen(mark), 0) == (int)strlen(mark));
    for (int k = 0; k < ns; k++) {
        uint32_t got = 0;
        for (uint32_t i = 0; i < nmsg; i++) {
            const char *t = topics[mix(base_seed ^ stream ^ i) % 6];
            if (!matches(filters[k], t))
                continue;
            int n = recv_topic(subs[k]);
            recvbuf[n > 0 ? n : 0] = 0;
            if (n != (int)strlen(t) || memcmp(recvbuf, t, n) || !more(subs[k])) {
                fprintf(stderr, "SUB %d (filters %x): message %u has topic '%s', want '%s'\n", k,
                        filters[k], i, (char *)recvbuf, t);
                CHECK(0);
            }
            expect_spec(subs[k], stream, i, "SUB");
            got++;
        }
        /* then the phase's end mark, and nothing else */
        int n = recv_topic(subs[k]);
        CHECK(n == (int)strlen(mark) && !memcmp(recvbuf, mark, n) && !more(subs[k]));
    }
}

static void pubsub_test(void *ctx, const char *transport)
{
    void *pub = sock(ctx, ZLINK_PUB);
    char ep[256];
    bind_any(pub, transport, ep, sizeof ep);
    int ns = 1 + (int)(tu_rnd() % 4);
    void *subs[4];
    unsigned filters[4], next[4];
    for (int k = 0; k < ns; k++) {
        subs[k] = sock(ctx, ZLINK_SUB);
        filters[k] = tu_rnd() % 64;
        set_filters(subs[k], 0, filters[k]);
        CHECK(zlink_setsockopt(subs[k], ZLINK_SUBSCRIBE, "\xff", 1) == 0);
        CHECK(zlink_connect(subs[k], ep) == 0);
    }
    sync_subs(pub, subs, ns, "\xffsync1");
    pubsub_phase(pub, subs, ns, filters, 100, "\xff" "end1");
    for (int k = 0; k < ns; k++) {
        next[k] = tu_rnd() % 64;
        set_filters(subs[k], filters[k], next[k]);
    }
    sync_subs(pub, subs, ns, "\xffsync2");
    pubsub_phase(pub, subs, ns, next, 200, "\xff" "end2");
    printf("  %s PUB/SUB: %d subscribers\n", transport, ns);
    for (int k = 0; k < ns; k++)
        zlink_close(subs[k]);
    zlink_close(pub);

    /* XPUB counts what reached it: the SUB's subscribes and cancels, in order */
    void *xpub = sock(ctx, ZLINK_XPUB);
    tu_set_int(xpub, ZLINK_XPUB_VERBOSE, 1);
    bind_any(xpub, transport, ep, sizeof ep);
    void *sub = sock(ctx, ZLINK_SUB);
    CHECK(zlink_connect(sub, ep) == 0);
    unsigned f = 0;
    for (int step = 0; step < 20; step++) {
        unsigned g = tu_rnd() % 64;
        static const char *prefixes[6] = {"alpha", "alp", "b", "beta", "gamma", "g"};
        set_filters(sub, f, g);
        for (int p = 0; p < 6; p++) {
            int was = f >> p & 1, is = g >> p & 1;
            if (was == is)
                continue;
            int n = zlink_recv(xpub, recvbuf, sizeof recvbuf, 0);
            size_t pl = strlen(prefixes[p]);
            if (n != (int)pl + 1 || recvbuf[0] != (is ? 1 : 0) || memcmp(recvbuf + 1, prefixes[p], pl)) {
                fprintf(stderr, "XPUB: step %d prefix %s: %d bytes, first %d\n", step, prefixes[p], n,
                        n > 0 ? recvbuf[0] : -1);
                CHECK(0);
            }
        }
        f = g;
    }
    CHECK(zlink_recv(xpub, recvbuf, sizeof recvbuf, ZLINK_DONTWAIT) == -1);
    zlink_close(sub);
    zlink_close(xpub);
}

int main(int argc, char **argv)
{
    const char *dflt[2] = {"tcp", "ipc"};
    const char **transports = argc > 1 ? (const char **)argv + 1 : dflt;
    int ntransports = argc > 1 ? argc - 1 : 2;
    base_seed = tu_seed("test_zmp_random");
#ifdef ZLINK_TEST_TLS
    for (int t = 0; t < ntransports; t++)
        use_tls |= !strcmp(transports[t], "tls") || !strcmp(transports[t], "wss");
    if (use_tls)
        tu_tls_make(&certs);
#endif
    snprintf(ipc_dir, sizeof ipc_dir, "/tmp/zmp-random-%d", (int)getpid());
    CHECK(mkdir(ipc_dir, 0700) == 0);
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    for (int t = 0; t < ntransports; t++) {
        printf("test_zmp_random: %s\n", transports[t]);
        fflush(stdout);
        pair_test(ctx, transports[t]);
        dealer_router_test(ctx, transports[t]);
        pubsub_test(ctx, transports[t]);
    }
    CHECK(zlink_ctx_term(ctx) == 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", ipc_dir);
    CHECK(system(cmd) == 0);
#ifdef ZLINK_TEST_TLS
    if (use_tls)
        tu_tls_cleanup(&certs);
#endif
    printf("test_zmp_random: ok\n");
    return 0;
}
