/*
 * test_zmp_wire.c - ZMP v1 on the wire, byte for byte, against a raw TCP
 * peer written here from the protocol (zlink 1.3's doc/internals/
 * protocol-zmp.md and its engine's behaviour), for PAIR, DEALER, ROUTER,
 * PUB, XPUB and SUB:
 *   - the greeting each socket sends first: HELLO (0x01, socket type,
 *     routing id length, the socket's 16-byte default id or its ROUTING_ID)
 *     and READY (0x04; with ZMP_METADATA, Socket-Type and, for DEALER and
 *     ROUTER, Identity);
 *   - data frames both ways with MORE; SUBSCRIBE (0x08) and CANCEL (0x10)
 *     frames from a SUB, and XPUB seeing a raw peer's as \1 / \0 messages;
 *     a PUB filtering by a raw SUBSCRIBE;
 *   - a ROUTER taking the peer's HELLO id (or making a 5-byte one for an
 *     empty id) and routing by it;
 *   - HEARTBEAT answered by HEARTBEAT_ACK with the context; HEARTBEAT_IVL
 *     sending HEARTBEAT with the socket's ttl;
 *   - every refusal ending with the ERROR frame zlink sends (code, reason)
 *     and the connection closed: a socket type that does not match, a
 *     ZMTP greeting, bad magic, bad version, bad flags, a frame over
 *     MAXMSGSIZE, data before READY, an unknown control type, a
 *     handshake that never comes (code 6);
 *   - after a frame over MAXMSGSIZE, the sender (which got ERROR 4) connects
 *     again and frames flow (NetZlink's choice; zlink 1.3 does not retry).
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

/* ZLINK_TEST_REFERENCE=1: the library under test is a real zlink 1.3 (run
 * with LD_LIBRARY_PATH naming it); the NetZlink-only check (a connect
 * retried after the peer's MAXMSGSIZE ERROR) is skipped, every byte on the
 * wire is checked the same */
static int reference;

enum { T_PAIR = 0, T_PUB = 1, T_SUB = 2, T_DEALER = 5, T_ROUTER = 6, T_XPUB = 9, T_XSUB = 10 };

/* ---- raw peer ------------------------------------------------------------- */

static int ep_port(const char *ep)
{
    const char *c = strrchr(ep, ':');
    CHECK(c);
    return atoi(c + 1);
}

static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* a listening socket on a free loopback port; its port in *port */
static int raw_listen(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(fd, 4) == 0);
    socklen_t len = sizeof a;
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static int raw_accept(int lfd)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    CHECK(poll(&p, 1, 5000) == 1);
    int fd = accept(lfd, NULL, NULL);
    CHECK(fd >= 0);
    return fd;
}

static void raw_write(int fd, const void *buf, size_t len)
{
    CHECK(write(fd, buf, len) == (ssize_t)len);
}

/* exactly len bytes within ms, else the test fails */
static void raw_read(int fd, void *buf, size_t len, int ms)
{
    size_t got = 0;
    long long end = tu_now_ms() + ms;
    while (got < len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(end - tu_now_ms());
        if (left < 0 || poll(&p, 1, left) != 1) {
            fprintf(stderr, "raw_read: %zu of %zu bytes in %d ms\n", got, len, ms);
            CHECK(0);
        }
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0) {
            fprintf(stderr, "raw_read: the connection ended after %zu of %zu bytes\n", got, len);
            CHECK(0);
        }
        got += (size_t)n;
    }
}

/* nothing more from fd but its end, within ms */
static void raw_expect_eof(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    CHECK(poll(&p, 1, ms) == 1);
    char b;
    ssize_t n = read(fd, &b, 1);
    CHECK(n == 0 || (n < 0 && errno == ECONNRESET));
}

/* no byte arrives within ms */
static void raw_expect_quiet(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    CHECK(poll(&p, 1, ms) == 0);
}

static void dump(const char *what, const unsigned char *b, size_t n)
{
    fprintf(stderr, "%s (%zu):", what, n);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %02x", b[i]);
    fprintf(stderr, "\n");
}

/* the next bytes on fd must be exactly want */
static void expect_bytes(int fd, const void *want, size_t len)
{
    unsigned char got[1024];
    CHECK(len <= sizeof got);
    raw_read(fd, got, len, 5000);
    if (memcmp(got, want, len)) {
        dump("want", want, len);
        dump("got ", got, len);
        CHECK(0);
    }
}

/* a frame: header + body into out, returns its size */
static size_t frame(unsigned char *out, unsigned char flags, const void *body, size_t len)
{
    out[0] = 0x5a;
    out[1] = 0x01;
    out[2] = flags;
    out[3] = 0;
    tu_put_be32(out + 4, (uint32_t)len);
    memcpy(out + 8, body, len);
    return 8 + len;
}

static void send_frame(int fd, unsigned char flags, const void *body, size_t len)
{
    unsigned char b[1024];
    raw_write(fd, b, frame(b, flags, body, len));
}

static void expect_frame(int fd, unsigned char flags, const void *body, size_t len)
{
    unsigned char b[1024];
    expect_bytes(fd, b, frame(b, flags, body, len));
}

static void send_hello(int fd, int type, const char *id, size_t idlen)
{
    unsigned char body[300] = {0x01, (unsigned char)type, (unsigned char)idlen};
    memcpy(body + 3, id, idlen);
    send_frame(fd, 0x02, body, 3 + idlen);
}

static void send_ready(int fd)
{
    send_frame(fd, 0x02, "\x04", 1);
}

/* the HELLO and READY a socket of type with routing id (id, idlen) sends */
static void expect_greeting(int fd, int type, const void *id, size_t idlen)
{
    unsigned char body[300] = {0x01, (unsigned char)type, (unsigned char)idlen};
    memcpy(body + 3, id, idlen);
    expect_frame(fd, 0x02, body, 3 + idlen);
    expect_frame(fd, 0x02, "\x04", 1);
}

/* the ERROR frame zlink sends for code with reason, then the end */
static void expect_error_and_close(int fd, int code, const char *reason)
{
    unsigned char body[300] = {0x05, (unsigned char)code, (unsigned char)strlen(reason)};
    memcpy(body + 3, reason, strlen(reason));
    expect_frame(fd, 0x02, body, 3 + strlen(reason));
    raw_expect_eof(fd, 5000);
}

static size_t routing_id(void *s, unsigned char *id)
{
    size_t len = 255;
    CHECK(zlink_getsockopt(s, ZLINK_ROUTING_ID, id, &len) == 0);
    return len;
}

/* a raw TCP peer connected to s, bound at port, past the HELLO and READY that
 * s (of ZMP type, with its own routing id) sends first */
static int raw_peer(void *s, int port, int type)
{
    unsigned char id[255];
    size_t idlen = routing_id(s, id);
    int fd = raw_connect(port);
    expect_greeting(fd, type, id, idlen);
    return fd;
}

/* the raw peer's own HELLO (its type and routing id) and READY */
static void send_handshake(int fd, int type, const char *id, size_t idlen)
{
    send_hello(fd, type, id, idlen);
    send_ready(fd);
}

/* a socket bound to a free port; opts: (option, value) pairs ending with 0,
 * set before the bind (a listener takes the options of that time) */
static void *bound_opts(void *ctx, int type, int *port, const int *opts)
{
    void *s = zlink_socket(ctx, type);
    CHECK(s);
    for (; opts && opts[0]; opts += 2) {
        if (opts[0] == ZLINK_MAXMSGSIZE) {
            int64_t v = opts[1];
            CHECK(zlink_setsockopt(s, ZLINK_MAXMSGSIZE, &v, sizeof v) == 0);
        } else
            tu_set_int(s, opts[0], opts[1]);
    }
    tu_set_int(s, ZLINK_LINGER, 0);
    tu_set_int(s, ZLINK_RCVTIMEO, 5000);
    char ep[256];
    tu_bind_tcp(s, ep, sizeof ep);
    *port = ep_port(ep);
    return s;
}

static void *bound(void *ctx, int type, int *port)
{
    return bound_opts(ctx, type, port, NULL);
}

static void *connected(void *ctx, int type, int port)
{
    void *s = zlink_socket(ctx, type);
    CHECK(s);
    tu_set_int(s, ZLINK_LINGER, 0);
    tu_set_int(s, ZLINK_RCVTIMEO, 5000);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    CHECK(zlink_connect(s, ep) == 0);
    return s;
}

static void recv_part(void *s, const char *want, size_t len, int more)
{
    char b[512];
    int n = zlink_recv(s, b, sizeof b, 0);
    if (n != (int)len || memcmp(b, want, len)) {
        fprintf(stderr, "recv_part: %d bytes, want %zu\n", n, len);
        if (n > 0)
            dump("got", (unsigned char *)b, (size_t)n);
        CHECK(0);
    }
    int m = 0;
    size_t ml = sizeof m;
    CHECK(zlink_getsockopt(s, ZLINK_RCVMORE, &m, &ml) == 0 && m == more);
}

/* ---- the checks ------------------------------------------------------------ */

/* PAIR, bound: default 16-byte UUID id in HELLO; frames both ways with MORE */
static void pair_frames(void *ctx)
{
    int port;
    void *s = bound(ctx, ZLINK_PAIR, &port);
    unsigned char id[255];
    size_t idlen = routing_id(s, id);
    CHECK(idlen == 16);
    CHECK((id[6] & 0xf0) == 0x40 && (id[8] & 0xc0) == 0x80); /* RFC 4122 v4 */
    int fd = raw_peer(s, port, T_PAIR);
    send_handshake(fd, T_PAIR, "raw", 3);
    send_frame(fd, 0x01, "hi", 2);
    send_frame(fd, 0x00, "end", 3);
    recv_part(s, "hi", 2, 1);
    recv_part(s, "end", 3, 0);
    const char *meta = NULL;
    zlink_msg_t m;
    zlink_msg_init(&m);
    send_frame(fd, 0x00, "meta", 4);
    CHECK(zlink_msg_recv(&m, s, 0) == 4);
    meta = zlink_msg_gets(&m, "Socket-Type"); /* only from READY, as in zlink */
    CHECK(meta == NULL);
    zlink_msg_close(&m);
    CHECK(zlink_send(s, "a", 1, ZLINK_SNDMORE) == 1);
    CHECK(zlink_send(s, "bc", 2, 0) == 2);
    CHECK(zlink_send(s, "", 0, 0) == 0);
    expect_frame(fd, 0x01, "a", 1);
    expect_frame(fd, 0x00, "bc", 2);
    expect_frame(fd, 0x00, "", 0);
    /* a frame split at every byte arrives whole */
    unsigned char b[64];
    size_t n = frame(b, 0x00, "split-up", 8);
    for (size_t i = 0; i < n; i++) {
        raw_write(fd, b + i, 1);
        tu_sleep_ms(2);
    }
    recv_part(s, "split-up", 8, 0);
    close(fd);
    zlink_close(s);
}

/* DEALER, connecting: ROUTING_ID and ZMP_METADATA in the greeting; READY
 * properties from the peer reach the messages */
static void dealer_metadata(void *ctx)
{
    int port;
    int lfd = raw_listen(&port);
    void *s = zlink_socket(ctx, ZLINK_DEALER);
    CHECK(s);
    tu_set_int(s, ZLINK_LINGER, 0);
    tu_set_int(s, ZLINK_RCVTIMEO, 5000);
    CHECK(zlink_setsockopt(s, ZLINK_ROUTING_ID, "D1", 2) == 0);
    tu_set_int(s, ZLINK_ZMP_METADATA, 1);
    int v = 0;
    size_t vl = sizeof v;
    CHECK(zlink_getsockopt(s, ZLINK_ZMP_METADATA, &v, &vl) == 0 && v == 1);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    CHECK(zlink_connect(s, ep) == 0);
    int fd = raw_accept(lfd);
    expect_frame(fd, 0x02, "\x01\x05\x02" "D1", 5);
    static const unsigned char ready[] = {
        0x04,
        11, 'S', 'o', 'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e', 0, 0, 0, 6, 'D', 'E', 'A', 'L', 'E', 'R',
        8, 'I', 'd', 'e', 'n', 't', 'i', 't', 'y', 0, 0, 0, 2, 'D', '1'};
    expect_frame(fd, 0x02, ready, sizeof ready);
    send_hello(fd, T_ROUTER, "R", 1);
    static const unsigned char peer_ready[] = {
        0x04, 11, 'S', 'o', 'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e', 0, 0, 0, 6, 'R', 'O', 'U', 'T', 'E', 'R',
        1, 'X', 0, 0, 0, 1, 'y'};
    send_frame(fd, 0x02, peer_ready, sizeof peer_ready);
    CHECK(zlink_send(s, "req", 3, 0) == 3);
    expect_frame(fd, 0x00, "req", 3);
    send_frame(fd, 0x00, "rep", 3);
    zlink_msg_t m;
    zlink_msg_init(&m);
    CHECK(zlink_msg_recv(&m, s, 0) == 3);
    const char *t = zlink_msg_gets(&m, "Socket-Type"), *x = zlink_msg_gets(&m, "X");
    CHECK(t && !strcmp(t, "ROUTER") && x && !strcmp(x, "y"));
    zlink_msg_close(&m);
    close(fd);
    close(lfd);
    zlink_close(s);
}

/* ROUTER, bound: the peer's HELLO id routes both ways; an empty id gets a
 * 5-byte one (0, then a number) */
static void router_ids(void *ctx)
{
    int port;
    void *s = bound(ctx, ZLINK_ROUTER, &port);
    int fd = raw_peer(s, port, T_ROUTER);
    send_handshake(fd, T_DEALER, "peer-1", 6);
    send_frame(fd, 0x01, "x", 1);
    send_frame(fd, 0x00, "y", 1);
    recv_part(s, "peer-1", 6, 1);
    recv_part(s, "x", 1, 1);
    recv_part(s, "y", 1, 0);
    CHECK(zlink_send(s, "peer-1", 6, ZLINK_SNDMORE) == 6);
    CHECK(zlink_send(s, "back", 4, 0) == 4);
    expect_frame(fd, 0x00, "back", 4);

    int fd2 = raw_peer(s, port, T_ROUTER);
    send_handshake(fd2, T_DEALER, "", 0);
    send_frame(fd2, 0x00, "anon", 4);
    unsigned char auto_id[16];
    int n = zlink_recv(s, auto_id, sizeof auto_id, 0);
    CHECK(n == 5 && auto_id[0] == 0);
    recv_part(s, "anon", 4, 0);
    CHECK(zlink_send(s, auto_id, 5, ZLINK_SNDMORE) == 5);
    CHECK(zlink_send(s, "to-anon", 7, 0) == 7);
    expect_frame(fd2, 0x00, "to-anon", 7);
    /* both peers in the ROUTER's table, by the ids it routes by */
    zlink_routing_id_t rid = {6, "peer-1"};
    zlink_peer_info_t info;
    CHECK(zlink_socket_peer_count(s) == 2);
    CHECK(zlink_socket_peer_info(s, &rid, &info) == 0);
    rid.size = 5;
    memcpy(rid.data, auto_id, 5);
    CHECK(zlink_socket_peer_info(s, &rid, &info) == 0);
    raw_expect_quiet(fd, 100);
    close(fd);
    close(fd2);
    zlink_close(s);
}

/* SUB, connecting: SUBSCRIBE and CANCEL frames; only matching data passes */
static void sub_frames(void *ctx)
{
    int port;
    int lfd = raw_listen(&port);
    void *s = connected(ctx, ZLINK_SUB, port);
    unsigned char id[255];
    size_t idlen = routing_id(s, id);
    CHECK(zlink_setsockopt(s, ZLINK_SUBSCRIBE, "ab", 2) == 0);
    int fd = raw_accept(lfd);
    expect_greeting(fd, T_SUB, id, idlen);
    send_handshake(fd, T_PUB, "", 0);
    expect_frame(fd, 0x08, "ab", 2);
    send_frame(fd, 0x00, "xyz", 3);
    send_frame(fd, 0x01, "abc", 3);
    send_frame(fd, 0x00, "tail", 4);
    recv_part(s, "abc", 3, 1);
    recv_part(s, "tail", 4, 0);
    CHECK(zlink_setsockopt(s, ZLINK_UNSUBSCRIBE, "ab", 2) == 0);
    expect_frame(fd, 0x10, "ab", 2);
    CHECK(zlink_setsockopt(s, ZLINK_SUBSCRIBE, "", 0) == 0);
    expect_frame(fd, 0x08, "", 0);
    close(fd);
    close(lfd);
    zlink_close(s);
}

/* PUB filters by a raw SUBSCRIBE; XPUB sees SUBSCRIBE / CANCEL as \1 / \0 */
static void pub_xpub(void *ctx)
{
    int port;
    void *s = bound(ctx, ZLINK_PUB, &port);
    int fd = raw_peer(s, port, T_PUB);
    send_handshake(fd, T_SUB, "", 0);
    send_frame(fd, 0x08, "k", 1);
    tu_sleep_ms(100);
    CHECK(zlink_send(s, "z1", 2, 0) == 2);
    CHECK(zlink_send(s, "k1", 2, ZLINK_SNDMORE) == 2);
    CHECK(zlink_send(s, "body", 4, 0) == 4);
    expect_frame(fd, 0x01, "k1", 2);
    expect_frame(fd, 0x00, "body", 4);
    close(fd);
    zlink_close(s);

    s = bound(ctx, ZLINK_XPUB, &port);
    fd = raw_peer(s, port, T_XPUB);
    send_handshake(fd, T_XSUB, "", 0);
    send_frame(fd, 0x08, "topic", 5);
    recv_part(s, "\1topic", 6, 0);
    send_frame(fd, 0x10, "topic", 5);
    recv_part(s, "\0topic", 6, 0);
    /* an XSUB's own \1... data message is a subscription too */
    send_frame(fd, 0x00, "\1raw", 4);
    recv_part(s, "\1raw", 4, 0);
    close(fd);
    zlink_close(s);
}

/* HEARTBEAT gets HEARTBEAT_ACK with its context; HEARTBEAT_IVL sends
 * HEARTBEAT with the socket's ttl (deciseconds) */
static void heartbeats(void *ctx)
{
    int port;
    static const int opts[] = {ZLINK_HEARTBEAT_IVL, 100, ZLINK_HEARTBEAT_TTL, 3000,
                               ZLINK_HEARTBEAT_TIMEOUT, 5000, 0};
    void *s = bound_opts(ctx, ZLINK_PAIR, &port, opts);
    int fd = raw_peer(s, port, T_PAIR);
    send_handshake(fd, T_PAIR, "", 0);
    expect_frame(fd, 0x02, "\x02\x00\x1e\x00", 4); /* ttl 30 ds */
    send_frame(fd, 0x02, "\x02\x00\x00\x02" "cx", 6);
    /* the answer, perhaps after more HEARTBEATs */
    unsigned char b[16];
    for (;;) {
        raw_read(fd, b, 8, 5000);
        CHECK(b[0] == 0x5a && b[2] == 0x02);
        uint32_t len = tu_be32(b + 4);
        CHECK(len <= sizeof b);
        raw_read(fd, b, len, 5000);
        if (b[0] == 0x02)
            continue;
        CHECK(len == 4 && !memcmp(b, "\x03\x02" "cx", 4));
        break;
    }
    close(fd);
    zlink_close(s);
}

/* one refusal: a fresh PAIR (or type) bound, the raw peer's bytes, then the
 * ERROR zlink sends and the end of the connection */
static void refusal(void *ctx, int type, int peer_type, const void *bytes, size_t len,
                    int code, const char *reason)
{
    int port;
    static const int opts[] = {ZLINK_MAXMSGSIZE, 100, 0};
    void *s = bound_opts(ctx, type, &port, opts);
    int fd = raw_peer(s, port, type);
    if (peer_type >= 0) {
        send_handshake(fd, peer_type, "", 0);
    }
    raw_write(fd, bytes, len);
    expect_error_and_close(fd, code, reason);
    close(fd);
    zlink_close(s);
}

static void refusals(void *ctx)
{
    unsigned char b[256];
    size_t n;
    /* socket types that do not go together */
    unsigned char hello_pub[] = {0x5a, 1, 2, 0, 0, 0, 0, 3, 1, T_PUB, 0};
    refusal(ctx, ZLINK_PAIR, -1, hello_pub, sizeof hello_pub, 5, "socket type mismatch");
    unsigned char hello_dealer[] = {0x5a, 1, 2, 0, 0, 0, 0, 3, 1, T_DEALER, 0};
    refusal(ctx, ZLINK_PUB, -1, hello_dealer, sizeof hello_dealer, 5, "socket type mismatch");
    unsigned char hello_sub[] = {0x5a, 1, 2, 0, 0, 0, 0, 3, 1, T_SUB, 0};
    refusal(ctx, ZLINK_ROUTER, -1, hello_sub, sizeof hello_sub, 5, "socket type mismatch");
    /* a ZMTP 3 greeting: its length field reads 0 */
    unsigned char zmtp[] = {0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f};
    refusal(ctx, ZLINK_PAIR, -1, zmtp, sizeof zmtp, 0x7f, "hello too short");
    /* an HTTP request: its length field is far too big for a HELLO */
    refusal(ctx, ZLINK_DEALER, -1, "GET / HTTP/1.1\r\n", 16, 4, "hello too large");
    /* HELLO with bad magic / version / flags / type byte / id length */
    unsigned char bad_magic[] = {0x5b, 1, 2, 0, 0, 0, 0, 3, 1, T_PAIR, 0};
    refusal(ctx, ZLINK_PAIR, -1, bad_magic, sizeof bad_magic, 1, "invalid magic");
    unsigned char bad_version[] = {0x5a, 2, 2, 0, 0, 0, 0, 3, 1, T_PAIR, 0};
    refusal(ctx, ZLINK_PAIR, -1, bad_version, sizeof bad_version, 2, "version mismatch");
    unsigned char bad_flags[] = {0x5a, 1, 0, 0, 0, 0, 0, 3, 1, T_PAIR, 0};
    refusal(ctx, ZLINK_PAIR, -1, bad_flags, sizeof bad_flags, 3, "flags invalid");
    unsigned char no_hello[] = {0x5a, 1, 2, 0, 0, 0, 0, 3, 4, T_PAIR, 0};
    refusal(ctx, ZLINK_PAIR, -1, no_hello, sizeof no_hello, 0x7f, "missing hello");
    unsigned char id_len[] = {0x5a, 1, 2, 0, 0, 0, 0, 4, 1, T_PAIR, 0, 'x'};
    refusal(ctx, ZLINK_PAIR, -1, id_len, sizeof id_len, 0x7f, "hello identity mismatch");
    /* data before READY */
    unsigned char early[] = {0x5a, 1, 2, 0, 0, 0, 0, 3, 1, T_PAIR, 0, 0x5a, 1, 0, 0, 0, 0, 0, 1, 'd'};
    refusal(ctx, ZLINK_PAIR, -1, early, sizeof early, 0x7f, "data before ready");
    /* after the handshake: bad magic, version, reserved byte, flags */
    n = frame(b, 0, "x", 1);
    b[0] = 0x5b;
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 1, "invalid magic");
    n = frame(b, 0, "x", 1);
    b[1] = 0x02;
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 2, "version mismatch");
    n = frame(b, 0, "x", 1);
    b[3] = 0x01;
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 3, "flags invalid");
    n = frame(b, 0x20, "x", 1);
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 3, "flags invalid");
    n = frame(b, 0x03, "\x02", 1); /* CONTROL with MORE */
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 3, "flags invalid");
    n = frame(b, 0x18, "x", 1); /* SUBSCRIBE with CANCEL */
    refusal(ctx, ZLINK_XPUB, T_SUB, b, n, 3, "flags invalid");
    n = frame(b, 0x09, "x", 1); /* SUBSCRIBE with MORE */
    refusal(ctx, ZLINK_XPUB, T_SUB, b, n, 3, "flags invalid");
    /* a frame over MAXMSGSIZE (100): the header alone is enough */
    unsigned char big[] = {0x5a, 1, 0, 0, 0, 0, 0, 101};
    refusal(ctx, ZLINK_PAIR, T_PAIR, big, sizeof big, 4, "body too large");
    /* control frames: unknown type, a second READY, a short HEARTBEAT, an ERROR from the peer */
    n = frame(b, 0x02, "\x09", 1);
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 0x7f, "unknown control");
    n = frame(b, 0x02, "\x04", 1);
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 0x7f, "duplicate ready");
    n = frame(b, 0x02, "\x02\x00", 2);
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 0x7f, "heartbeat too short");
    n = frame(b, 0x02, "\x05\x03\x02" "no", 5);
    refusal(ctx, ZLINK_PAIR, T_PAIR, b, n, 3, "flags invalid");
}

/* no HELLO within HANDSHAKE_IVL: ERROR 6 */
static void handshake_timeout(void *ctx)
{
    int port;
    static const int opts[] = {ZLINK_HANDSHAKE_IVL, 200, 0};
    void *s = bound_opts(ctx, ZLINK_PAIR, &port, opts);
    int fd = raw_peer(s, port, T_PAIR);
    expect_error_and_close(fd, 6, "handshake timeout");
    close(fd);
    zlink_close(s);
}

/* A frame over the receiver's MAXMSGSIZE: the receiver sends ERROR 4 and
 * drops the connection; the sender answers the ERROR and, in NetZlink's
 * library, connects again (zlink 1.3 does not), and frames within the
 * limit flow again */
static void maxmsgsize_reconnect(void *ctx)
{
    int port;
    static const int opts[] = {ZLINK_MAXMSGSIZE, 1000, 0};
    void *rcv = bound_opts(ctx, ZLINK_PAIR, &port, opts);
    void *snd = zlink_socket(ctx, ZLINK_PAIR);
    CHECK(snd);
    tu_set_int(snd, ZLINK_LINGER, 0);
    tu_set_int(snd, ZLINK_RECONNECT_IVL, 20);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    void *mon = zlink_socket_monitor_open(rcv, ZLINK_EVENT_DISCONNECTED);
    CHECK(mon);
    CHECK(zlink_connect(snd, ep) == 0);
    static char buf[2000];
    memset(buf, 'm', sizeof buf);
    CHECK(zlink_send(snd, buf, 1000, 0) == 1000);
    CHECK(zlink_recv(rcv, buf, sizeof buf, 0) == 1000);
    CHECK(zlink_send(snd, buf, 1001, 0) == 1001);
    zlink_monitor_event_t ev;
    long long end = tu_now_ms() + 5000;
    while (zlink_monitor_recv(mon, &ev, ZLINK_DONTWAIT) != 0) {
        CHECK(tu_now_ms() < end);
        tu_sleep_ms(5);
    }
    tu_set_int(rcv, ZLINK_RCVTIMEO, 100);
    int got = -1;
    for (int i = 0; i < 50 && got != 1000; i++) {
        CHECK(zlink_send(snd, buf, 1000, ZLINK_DONTWAIT) == 1000);
        got = zlink_recv(rcv, buf, sizeof buf, 0);
    }
    CHECK(got == 1000);
    zlink_close(mon);
    zlink_close(snd);
    zlink_close(rcv);
}

int main(void)
{
    reference = getenv("ZLINK_TEST_REFERENCE") != NULL;
    void *ctx = zlink_ctx_new();
    CHECK(ctx);
    printf("test_zmp_wire: pair_frames\n");
    fflush(stdout);
    pair_frames(ctx);
    printf("test_zmp_wire: dealer_metadata\n");
    fflush(stdout);
    dealer_metadata(ctx);
    printf("test_zmp_wire: router_ids\n");
    fflush(stdout);
    router_ids(ctx);
    printf("test_zmp_wire: sub_frames\n");
    fflush(stdout);
    sub_frames(ctx);
    printf("test_zmp_wire: pub_xpub\n");
    fflush(stdout);
    pub_xpub(ctx);
    printf("test_zmp_wire: heartbeats\n");
    fflush(stdout);
    heartbeats(ctx);
    printf("test_zmp_wire: refusals\n");
    fflush(stdout);
    refusals(ctx);
    if (!reference) {
        printf("test_zmp_wire: maxmsgsize_reconnect\n");
        fflush(stdout);
        maxmsgsize_reconnect(ctx);
    }
    printf("test_zmp_wire: handshake_timeout\n");
    fflush(stdout);
    handshake_timeout(ctx);
    CHECK(zlink_ctx_term(ctx) == 0);
    printf("test_zmp_wire: ok\n");
    return 0;
}
