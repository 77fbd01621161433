/*
 * zmp_peer.c - one side of a ZMP interop check, for scripts/interop-zlink.sh.
 * It uses only the zlink C API, so the same program runs on NetZlink's
 * libzlink.so or on a real zlink 1.3 build (chosen by LD_LIBRARY_PATH).
 * Built by CMake, never run by ctest: CI has no real zlink.
 *
 *   zmp_peer ROLE ENDPOINT [ROUNDS]
 *
 * Server roles bind ENDPOINT (tcp://127.0.0.1:PORT, ipc://PATH, or
 * tls://, ws://, wss:// 127.0.0.1:PORT), client roles connect to it. With
 * ZMP_PEER_TLS_DIR set (a directory with ca.pem, and server.pem/server.key
 * for localhost and 127.0.0.1), server sockets get the certificate and key,
 * client sockets verify against the CA with the name localhost (and not
 * the system's CAs). Each prints "OK <role>" and exits 0, or prints
 * "FAIL <role>: why" and exits 1; nothing waits longer than a few seconds.
 *
 *   pair-server / pair-client   3 messages of 5 parts each way (an empty one,
 *                               a last one of 100,000 bytes and more), checked
 *   pub-server  / sub-client    PUB sends [A|B][n] alternately for 5 s; the
 *                               SUB takes A only, then cancels A and takes B
 *                               only (after its first B, an A is a failure)
 *   xpub-server / xsub-watch    XPUB must see \1A, \0A, \1Z from a SUB in
 *                               that order; it answers each so the SUB goes on
 *   router-server / dealer-client
 *                               two DEALERs (the default 16-byte routing id
 *                               and "dealer-two") send 3 messages of 3 parts;
 *                               the ROUTER answers each by its id; each
 *                               DEALER must get exactly its own answers.
 *                               With ROUNDS 2 the client, after round 1,
 *                               sends again every 300 ms until answered: the
 *                               script restarts the server in between
 *                               (reconnect) as router-again, which answers
 *                               the first request that reaches it.
 *   rr-server / rr-client       ROUTER "srv" bound, ROUTER "cli" connected
 *                               (ROUTER_MANDATORY): cli->[srv][ping],
 *                               srv->[cli][pong], each routed by id
 *   hb-server / hb-client       heartbeats: a DEALER with HEARTBEAT_IVL 100,
 *                               HEARTBEAT_TIMEOUT 500 pings the ROUTER, which
 *                               answers; for 1.5 s after that its connection
 *                               must stay up (the ROUTER's library answers
 *                               its HEARTBEATs), then a second ping. The
 *                               server prints "PID <pid>" and the client
 *                               "STALL-ME": the script stops the server
 *                               (SIGSTOP), and the client must see the
 *                               connection DISCONNECTED within 10 s with
 *                               reason TRANSPORT_ERROR (4).
 */
#include "zlink.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *role;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", role);
    vprintf(fmt, ap);
    printf(" (errno %d %s)\n", zlink_errno(), zlink_strerror(zlink_errno()));
    va_end(ap);
    fflush(stdout);
    exit(1);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void set_int(void *s, int opt, int v)
{
    if (zlink_setsockopt(s, opt, &v, sizeof v) != 0)
        fail("setsockopt %d", opt);
}

static void set_str(void *s, int opt, const char *v)
{
    if (zlink_setsockopt(s, opt, v, strlen(v)) != 0)
        fail("setsockopt %d", opt);
}

/* ZMP_PEER_TLS_DIR: the TLS options of a server or a client role */
static void tls_options(void *s)
{
    const char *dir = getenv("ZMP_PEER_TLS_DIR");
    if (!dir || !*dir)
        return;
    char path[512];
    int server = strstr(role, "-server") || !strcmp(role, "router-again");
    if (server) {
        snprintf(path, sizeof path, "%s/server.pem", dir);
        set_str(s, ZLINK_TLS_CERT, path);
        snprintf(path, sizeof path, "%s/server.key", dir);
        set_str(s, ZLINK_TLS_KEY, path);
    } else {
        snprintf(path, sizeof path, "%s/ca.pem", dir);
        set_str(s, ZLINK_TLS_CA, path);
        set_str(s, ZLINK_TLS_HOSTNAME, "localhost");
        set_int(s, ZLINK_TLS_TRUST_SYSTEM, 0);
    }
}

static void *make(void *ctx, int type, int rcvtimeo)
{
    void *s = zlink_socket(ctx, type);
    if (!s)
        fail("zlink_socket %d", type);
    set_int(s, ZLINK_LINGER, 1000);
    set_int(s, ZLINK_RCVTIMEO, rcvtimeo);
    tls_options(s);
    return s;
}

static void bind_to(void *s, const char *ep)
{
    /* a restarted server may find its port still held for a moment */
    for (int i = 0; zlink_bind(s, ep) != 0; i++) {
        if (i == 50)
            fail("bind %s", ep);
        sleep_ms(100);
    }
}

/* one message of up to 8 parts */
typedef struct {
    int n;
    size_t len[8];
    char part[8][300];
} msg_t;

static int recv_msg(void *s, msg_t *m)
{
    m->n = 0;
    for (;;) {
        if (m->n == 8)
            fail("more than 8 parts");
        int rc = zlink_recv(s, m->part[m->n], sizeof m->part[0] - 1, 0);
        if (rc < 0) {
            if (m->n)
                fail("a message cut after %d parts", m->n);
            return -1;
        }
        if ((size_t)rc >= sizeof m->part[0])
            fail("a part of %d bytes", rc);
        m->part[m->n][rc] = 0;
        m->len[m->n++] = (size_t)rc;
        int more = 0;
        size_t sz = sizeof more;
        if (zlink_getsockopt(s, ZLINK_RCVMORE, &more, &sz) != 0)
            fail("RCVMORE");
        if (!more)
            return m->n;
    }
}

static int send_parts(void *s, int n, const char **parts, const size_t *lens)
{
    for (int i = 0; i < n; i++) {
        size_t len = lens ? lens[i] : strlen(parts[i]);
        if (zlink_send(s, parts[i], len, i + 1 < n ? ZLINK_SNDMORE : 0) != (int)len)
            return -1;
    }
    return 0;
}

static void expect_part(const msg_t *m, int i, const char *want)
{
    if (i >= m->n || m->len[i] != strlen(want) || memcmp(m->part[i], want, m->len[i]))
        fail("part %d is '%s', want '%s'", i, i < m->n ? m->part[i] : "(none)", want);
}

/* ---- PAIR ---------------------------------------------------------------- */

/* part 3 of PAIR message i: 100,000 + i bytes past the 8 KB batches */
static unsigned char big_part[100003], big_got[100004];

static void fill_big(int i)
{
    for (size_t k = 0; k < sizeof big_part; k++)
        big_part[k] = (unsigned char)(k * 31 + (size_t)i * 7);
}

static void pair(void *ctx, const char *ep, int server)
{
    void *s = make(ctx, ZLINK_PAIR, 5000);
    server ? bind_to(s, ep) : (void)zlink_connect(s, ep);
    const char *me = server ? "server" : "client", *peer = server ? "client" : "server";
    for (int i = 0; i < 3; i++) {
        char n[16], big[257];
        snprintf(n, sizeof n, "%d", i);
        memset(big, 'a' + i, 256);
        big[256] = 0;
        const char *parts[3] = {me, n, big};
        for (int k = 0; k < 3; k++)
            if (zlink_send(s, parts[k], strlen(parts[k]), ZLINK_SNDMORE) != (int)strlen(parts[k]))
                fail("send %d", i);
        if (zlink_send(s, "", 0, ZLINK_SNDMORE) != 0)
            fail("send %d", i);
        fill_big(i);
        if (zlink_send(s, big_part, 100000 + (size_t)i, 0) != 100000 + i)
            fail("send %d's large part", i);
    }
    for (int i = 0; i < 3; i++) {
        msg_t m;
        m.n = 0;
        for (int k = 0; k < 4; k++) {
            int rc = zlink_recv(s, m.part[k], sizeof m.part[0] - 1, 0);
            if (rc < 0 || rc >= (int)sizeof m.part[0])
                fail("message %d part %d: %d bytes", i, k, rc);
            m.part[k][rc] = 0;
            m.len[k] = (size_t)rc;
            m.n++;
            int more = 0;
            size_t sz = sizeof more;
            if (zlink_getsockopt(s, ZLINK_RCVMORE, &more, &sz) != 0 || !more)
                fail("message %d part %d: no MORE", i, k);
        }
        char n[16], big[257];
        snprintf(n, sizeof n, "%d", i);
        memset(big, 'a' + i, 256);
        big[256] = 0;
        expect_part(&m, 0, peer);
        expect_part(&m, 1, n);
        expect_part(&m, 2, big);
        expect_part(&m, 3, "");
        int rc = zlink_recv(s, big_got, sizeof big_got, 0);
        fill_big(i);
        if (rc != 100000 + i || memcmp(big_got, big_part, (size_t)rc))
            fail("message %d's large part: %d bytes or other bytes", i, rc);
        int more = 1;
        size_t sz = sizeof more;
        if (zlink_getsockopt(s, ZLINK_RCVMORE, &more, &sz) != 0 || more)
            fail("message %d: MORE after the last part", i);
    }
    /* the peer's last receive must finish before this side closes */
    sleep_ms(300);
    zlink_close(s);
}

/* ---- PUB / SUB ------------------------------------------------------------ */

static void pub_server(void *ctx, const char *ep)
{
    void *s = make(ctx, ZLINK_PUB, 5000);
    bind_to(s, ep);
    long long end = now_ms() + 5000;
    for (int n = 0; now_ms() < end; n++) {
        char num[16];
        snprintf(num, sizeof num, "%d", n);
        const char *parts[2] = {n % 2 ? "B" : "A", num};
        if (send_parts(s, 2, parts, NULL) != 0)
            fail("publish");
        sleep_ms(10);
    }
    zlink_close(s);
}

static void sub_client(void *ctx, const char *ep)
{
    void *s = make(ctx, ZLINK_SUB, 4000);
    if (zlink_setsockopt(s, ZLINK_SUBSCRIBE, "A", 1) != 0)
        fail("subscribe A");
    if (zlink_connect(s, ep) != 0)
        fail("connect");
    msg_t m;
    for (int got = 0; got < 5; got++) {
        if (recv_msg(s, &m) != 2)
            fail("A %d: %d parts", got, m.n);
        expect_part(&m, 0, "A");
    }
    if (zlink_setsockopt(s, ZLINK_UNSUBSCRIBE, "A", 1) != 0 ||
        zlink_setsockopt(s, ZLINK_SUBSCRIBE, "B", 1) != 0)
        fail("switch to B");
    int b = 0;
    while (b < 5) {
        if (recv_msg(s, &m) != 2)
            fail("after the switch: %d parts", m.n);
        if (!strcmp(m.part[0], "B"))
            b++;
        else if (b > 0)
            fail("an A after a B: the cancel did not reach the publisher");
    }
    zlink_close(s);
}

/* ---- XPUB sees subscriptions ------------------------------------------------ */

static void xpub_server(void *ctx, const char *ep)
{
    void *s = make(ctx, ZLINK_XPUB, 5000);
    set_int(s, ZLINK_XPUB_VERBOSE, 1);
    bind_to(s, ep);
    const char *want[3] = {"\1A", "\0A", "\1Z"};
    const char *answer[3] = {"A", NULL, "Z"};
    for (int i = 0; i < 3; i++) {
        msg_t m;
        if (recv_msg(s, &m) != 1)
            fail("subscription %d: %d parts", i, m.n);
        if (m.len[0] != 2 || memcmp(m.part[0], want[i], 2))
            fail("subscription %d is %02x '%s' (%zu bytes), want %02x '%s'", i,
                 (unsigned char)m.part[0][0], m.part[0] + 1, m.len[0],
                 (unsigned char)want[i][0], want[i] + 1);
        if (answer[i]) {
            const char *parts[2] = {answer[i], "seen"};
            if (send_parts(s, 2, parts, NULL) != 0)
                fail("answer %d", i);
        }
    }
    sleep_ms(300);
    zlink_close(s);
}

static void xsub_watch(void *ctx, const char *ep)
{
    void *s = make(ctx, ZLINK_SUB, 5000);
    if (zlink_setsockopt(s, ZLINK_SUBSCRIBE, "A", 1) != 0)
        fail("subscribe A");
    if (zlink_connect(s, ep) != 0)
        fail("connect");
    msg_t m;
    if (recv_msg(s, &m) != 2)
        fail("the XPUB's answer to A");
    expect_part(&m, 0, "A");
    if (zlink_setsockopt(s, ZLINK_UNSUBSCRIBE, "A", 1) != 0 ||
        zlink_setsockopt(s, ZLINK_SUBSCRIBE, "Z", 1) != 0)
        fail("cancel A, subscribe Z");
    if (recv_msg(s, &m) != 2)
        fail("the XPUB's answer to Z");
    expect_part(&m, 0, "Z");
    zlink_close(s);
}

/* ---- DEALER / ROUTER ------------------------------------------------------ */

static void router_server(void *ctx, const char *ep, int again)
{
    void *s = make(ctx, ZLINK_ROUTER, 10000);
    bind_to(s, ep);
    /* the first server: 2 dealers x 3 messages; "again" (the restarted
     * one): the first request that reaches it */
    int want = again ? 1 : 6;
    int from_default = 0, from_named = 0;
    for (int i = 0; i < want; i++) {
        msg_t m;
        if (recv_msg(s, &m) < 2)
            fail("request %d: %d parts", i, m.n);
        int named = m.len[0] == 10 && !memcmp(m.part[0], "dealer-two", 10);
        if (!named && m.len[0] != 16)
            fail("a DEALER's default routing id of %zu bytes, want 16", m.len[0]);
        if (!again && m.n != 4)
            fail("request of %d parts, want id + 3", m.n);
        named ? from_named++ : from_default++;
        /* answer [id][who][the request's parts] */
        const char *parts[6];
        size_t lens[6];
        parts[0] = m.part[0];
        lens[0] = m.len[0];
        parts[1] = named ? "to-two" : "to-default";
        lens[1] = strlen(parts[1]);
        int n = 2;
        for (int k = 1; k < m.n && n < 6; k++, n++) {
            parts[n] = m.part[k];
            lens[n] = m.len[k];
        }
        if (send_parts(s, n, parts, lens) != 0)
            fail("answer");
    }
    if (!again && (from_default != 3 || from_named != 3))
        fail("%d requests from the default id and %d from dealer-two", from_default, from_named);
    sleep_ms(300);
    zlink_close(s);
}

static void dealer_client(void *ctx, const char *ep, int rounds)
{
    void *d[2];
    for (int k = 0; k < 2; k++) {
        d[k] = make(ctx, ZLINK_DEALER, 5000);
        if (k == 1 && zlink_setsockopt(d[k], ZLINK_ROUTING_ID, "dealer-two", 10) != 0)
            fail("ROUTING_ID");
        if (k == 0) {
            unsigned char id[255];
            size_t sz = sizeof id;
            if (zlink_getsockopt(d[k], ZLINK_ROUTING_ID, id, &sz) != 0 || sz != 16)
                fail("the default routing id is %zu bytes, want 16", sz);
        }
        set_int(d[k], ZLINK_RECONNECT_IVL, 100);
        if (zlink_connect(d[k], ep) != 0)
            fail("connect");
    }
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
            char n[16];
            snprintf(n, sizeof n, "%d", i);
            const char *parts[3] = {k ? "two" : "default", n, "payload"};
            if (send_parts(d[k], 3, parts, NULL) != 0)
                fail("send");
        }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++) {
            msg_t m;
            if (recv_msg(d[k], &m) != 4)
                fail("dealer %d answer %d: %d parts", k, i, m.n);
            char n[16];
            snprintf(n, sizeof n, "%d", i);
            expect_part(&m, 0, k ? "to-two" : "to-default");
            expect_part(&m, 1, k ? "two" : "default");
            expect_part(&m, 2, n);
            expect_part(&m, 3, "payload");
        }
    if (rounds > 1) {
        /* the server goes away and another one binds the endpoint: resend
         * until it answers (a request sent into the dying connection is
         * lost, as on any libzmq-style socket) */
        printf("ROUND1 %s\n", role);
        fflush(stdout);
        set_int(d[0], ZLINK_RCVTIMEO, 300);
        long long end = now_ms() + 15000;
        int answered = 0;
        for (int k = 0; !answered && now_ms() < end; k++) {
            char n[32];
            snprintf(n, sizeof n, "again-%d", k);
            const char *parts[1] = {n};
            if (send_parts(d[0], 1, parts, NULL) != 0)
                fail("send again");
            msg_t m;
            while (recv_msg(d[0], &m) > 0) {
                if (m.n == 2 && !strcmp(m.part[0], "to-default") && !strncmp(m.part[1], "again-", 6)) {
                    answered = 1;
                    break;
                }
            }
        }
        if (!answered)
            fail("no answer after the server restarted");
    }
    for (int k = 0; k < 2; k++)
        zlink_close(d[k]);
}

/* ---- ROUTER to ROUTER ----------------------------------------------------- */

static void rr(void *ctx, const char *ep, int server)
{
    void *s = make(ctx, ZLINK_ROUTER, 5000);
    const char *me = server ? "srv" : "cli", *peer = server ? "cli" : "srv";
    if (zlink_setsockopt(s, ZLINK_ROUTING_ID, me, 3) != 0)
        fail("ROUTING_ID");
    set_int(s, ZLINK_ROUTER_MANDATORY, 1);
    msg_t m;
    if (server) {
        bind_to(s, ep);
        if (recv_msg(s, &m) != 2)
            fail("ping: %d parts", m.n);
        expect_part(&m, 0, peer);
        expect_part(&m, 1, "ping");
        const char *parts[2] = {peer, "pong"};
        if (send_parts(s, 2, parts, NULL) != 0)
            fail("pong");
        sleep_ms(300);
    } else {
        if (zlink_connect(s, ep) != 0)
            fail("connect");
        const char *parts[2] = {peer, "ping"};
        long long end = now_ms() + 5000;
        /* EHOSTUNREACH until the handshake told this side the peer's id */
        while (send_parts(s, 2, parts, NULL) != 0) {
            if (zlink_errno() != EHOSTUNREACH || now_ms() > end)
                fail("ping");
            sleep_ms(20);
        }
        if (recv_msg(s, &m) != 2)
            fail("pong: %d parts", m.n);
        expect_part(&m, 0, peer);
        expect_part(&m, 1, "pong");
    }
    zlink_close(s);
}

static void hb_server(void *ctx, const char *ep)
{
    void *s = make(ctx, ZLINK_ROUTER, 10000);
    bind_to(s, ep);
    printf("PID %d\n", (int)getpid());
    fflush(stdout);
    for (int i = 0; i < 2; i++) {
        msg_t m;
        if (recv_msg(s, &m) != 2 || strcmp(m.part[1], "ping") != 0)
            fail("request %d", i);
        const char *parts[2] = {m.part[0], "pong"};
        size_t lens[2] = {m.len[0], 4};
        if (send_parts(s, 2, parts, lens) != 0)
            fail("answer %d", i);
    }
    /* stopped and resumed by the script meanwhile; nothing more comes */
    msg_t m;
    recv_msg(s, &m);
    zlink_close(s);
}

/* the next event of mon within ms: its bit, or 0 */
static int next_event(void *mon, int ms, zlink_monitor_event_t *ev)
{
    long long end = now_ms() + ms;
    do {
        if (zlink_monitor_recv(mon, ev, ZLINK_DONTWAIT) == 0)
            return (int)ev->event;
        sleep_ms(10);
    } while (now_ms() < end);
    return 0;
}

static void hb_client(void *ctx, const char *ep)
{
    void *s = make(ctx, ZLINK_DEALER, 5000);
    set_int(s, ZLINK_HEARTBEAT_IVL, 100);
    set_int(s, ZLINK_HEARTBEAT_TIMEOUT, 500);
    void *mon = zlink_socket_monitor_open(s, ZLINK_EVENT_DISCONNECTED);
    if (!mon)
        fail("monitor");
    if (zlink_connect(s, ep) != 0)
        fail("connect %s", ep);
    for (int i = 0; i < 2; i++) {
        if (send_parts(s, 1, (const char *[]){"ping"}, NULL) != 0)
            fail("ping %d", i);
        msg_t m;
        if (recv_msg(s, &m) != 1 || strcmp(m.part[0], "pong") != 0)
            fail("pong %d", i);
        zlink_monitor_event_t ev;
        if (i == 0 && next_event(mon, 1500, &ev))
            fail("DISCONNECTED (reason %llu) while the peer was there",
                 (unsigned long long)ev.value);
    }
    printf("STALL-ME\n");
    fflush(stdout);
    zlink_monitor_event_t ev;
    if (next_event(mon, 10000, &ev) != ZLINK_EVENT_DISCONNECTED)
        fail("no DISCONNECTED after the peer stalled");
    printf("DISCONNECTED reason %llu\n", (unsigned long long)ev.value);
    if (ev.value != ZLINK_DISCONNECT_TRANSPORT_ERROR)
        fail("DISCONNECTED with reason %llu, want TRANSPORT_ERROR (4)",
             (unsigned long long)ev.value);
    zlink_close(mon);
    set_int(s, ZLINK_LINGER, 0);
    zlink_close(s);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: zmp_peer ROLE ENDPOINT [ROUNDS]\n");
        return 2;
    }
    role = argv[1];
    const char *ep = argv[2];
    int rounds = argc > 3 ? atoi(argv[3]) : 1;
    void *ctx = zlink_ctx_new();
    if (!ctx)
        fail("zlink_ctx_new");
    if (!strcmp(role, "pair-server") || !strcmp(role, "pair-client"))
        pair(ctx, ep, !strcmp(role, "pair-server"));
    else if (!strcmp(role, "pub-server"))
        pub_server(ctx, ep);
    else if (!strcmp(role, "sub-client"))
        sub_client(ctx, ep);
    else if (!strcmp(role, "xpub-server"))
        xpub_server(ctx, ep);
    else if (!strcmp(role, "xsub-watch"))
        xsub_watch(ctx, ep);
    else if (!strcmp(role, "router-server") || !strcmp(role, "router-again"))
        router_server(ctx, ep, !strcmp(role, "router-again"));
    else if (!strcmp(role, "dealer-client"))
        dealer_client(ctx, ep, rounds);
    else if (!strcmp(role, "rr-server") || !strcmp(role, "rr-client"))
        rr(ctx, ep, !strcmp(role, "rr-server"));
    else if (!strcmp(role, "hb-server"))
        hb_server(ctx, ep);
    else if (!strcmp(role, "hb-client"))
        hb_client(ctx, ep);
    else {
        fprintf(stderr, "zmp_peer: unknown role %s\n", role);
        return 2;
    }
    zlink_ctx_term(ctx);
    printf("OK %s\n", role);
    return 0;
}
