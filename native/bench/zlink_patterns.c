/*
 * zlink_patterns.c - the socket patterns' latency and throughput through the public zlink_* ABI
 * of whichever libzlink.so it is given, so that NetZlink's library and a real zlink build are
 * measured by the same code in the same sitting (docs/benchmarks.md#zmp-socket-types-against-zlink).
 *
 *   zlink_patterns LIB latency  PATTERN TRANSPORT SIZE [ROUND_TRIPS]
 *   zlink_patterns LIB throughput PATTERN TRANSPORT SIZE [MESSAGES]
 *   zlink_patterns LIB window router-router TRANSPORT SIZE [REQUESTS] [WINDOW]
 *
 * LIB is a path to a libzlink.so (loaded with dlopen, nothing linked). PATTERN: pair, dealer-router
 * (latency and throughput), pubsub, router-router (throughput). TRANSPORT: tcp, ipc, inproc.
 *
 * latency: a ping-pong of ROUND_TRIPS (default 20,000) messages after 1,000 not counted; prints the
 * one-way latency (round trip / 2) in microseconds. Blocking calls, one thread per side.
 * throughput: one thread sends MESSAGES (default: 2,000,000 at 64 B, scaled down to move about
 * 1 GiB at larger sizes, at least 20,000), another receives them all; prints messages per second
 * from the first message received to the last. High-water marks are lifted so nothing is dropped
 * (PUB drops at its mark), and the subscriber is known connected before sending starts.
 * window: request/reply between two ROUTERs in one process: a gateway ROUTER keeps WINDOW (default
 * 256) requests of SIZE bytes in flight to a receiver ROUTER, which echoes each one on its own
 * thread through zlink_msg_recv/zlink_send (its routing id frame, then the body), until REQUESTS
 * (default 2,000,000) replies are back; every reply's size and first byte are checked; prints
 * replies per second (docs/benchmarks.md#the-router-path-per-message).
 * One line of output: "RESULT lib=... mode=... pattern=... transport=... size=... value=... unit=...".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* zlink.h's numbers (the same in zlink 1.3 and NetZlink's library) */
enum { PAIR = 0, PUB = 1, SUB = 2, DEALER = 5, ROUTER = 6 };
enum { O_ROUTING_ID = 5, O_SUBSCRIBE = 6, O_SNDHWM = 23, O_RCVHWM = 24, O_LAST_ENDPOINT = 32,
       O_ROUTER_MANDATORY = 33, O_LINGER = 17 };
enum { SNDMORE = 2 };

typedef struct api {
    void *(*ctx_new)(void);
    int (*ctx_term)(void *);
    void *(*socket)(void *, int);
    int (*close)(void *);
    int (*bind)(void *, const char *);
    int (*connect)(void *, const char *);
    int (*send)(void *, const void *, size_t, int);
    int (*recv)(void *, void *, size_t, int);
    int (*setsockopt)(void *, int, const void *, size_t);
    int (*getsockopt)(void *, int, void *, size_t *);
    int (*errno_)(void);
    const char *(*strerror)(int);
    int (*msg_init)(void *);
    int (*msg_recv)(void *, void *, int);
    int (*msg_close)(void *);
    void *(*msg_data)(void *);
    size_t (*msg_size)(void *);
} api_t;

/* zlink_msg_t: 64 opaque bytes, pointer aligned */
typedef struct zmsg {
    void *align[8];
} zmsg_t;

static api_t z;
static const char *g_lib;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
    int e = z.errno_ ? z.errno_() : 0;
    fprintf(stderr, "zlink_patterns: %s: %s\n", what, z.strerror ? z.strerror(e) : "?");
    exit(1);
}

static void load(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "zlink_patterns: cannot load %s: %s\n", path, dlerror());
        exit(2);
    }
#define SYM(field, name)                                                                      \
    do {                                                                                      \
        *(void **)&z.field = dlsym(h, name);                                                  \
        if (!z.field) {                                                                       \
            fprintf(stderr, "zlink_patterns: %s lacks %s\n", path, name);                     \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)
    SYM(ctx_new, "zlink_ctx_new");
    SYM(ctx_term, "zlink_ctx_term");
    SYM(socket, "zlink_socket");
    SYM(close, "zlink_close");
    SYM(bind, "zlink_bind");
    SYM(connect, "zlink_connect");
    SYM(send, "zlink_send");
    SYM(recv, "zlink_recv");
    SYM(setsockopt, "zlink_setsockopt");
    SYM(getsockopt, "zlink_getsockopt");
    SYM(errno_, "zlink_errno");
    SYM(strerror, "zlink_strerror");
    SYM(msg_init, "zlink_msg_init");
    SYM(msg_recv, "zlink_msg_recv");
    SYM(msg_close, "zlink_msg_close");
    SYM(msg_data, "zlink_msg_data");
    SYM(msg_size, "zlink_msg_size");
#undef SYM
}

static void set_int(void *s, int opt, int v)
{
    if (z.setsockopt(s, opt, &v, sizeof v) != 0)
        die("zlink_setsockopt");
}

/* A bound socket and its endpoint (tcp port 0 / a fresh ipc path / a fresh inproc name). */
static void bind_any(void *s, const char *transport, char *endpoint, size_t cap)
{
    static int serial;
    char want[256];
    if (strcmp(transport, "tcp") == 0)
        snprintf(want, sizeof want, "tcp://127.0.0.1:0");
    else if (strcmp(transport, "ipc") == 0)
        snprintf(want, sizeof want, "ipc:///tmp/zlink-patterns-%d-%d", (int)getpid(), serial++);
    else if (strcmp(transport, "inproc") == 0)
        snprintf(want, sizeof want, "inproc://zlink-patterns-%d", serial++);
    else {
        fprintf(stderr, "zlink_patterns: unknown transport %s (tcp, ipc, inproc)\n", transport);
        exit(2);
    }
    if (z.bind(s, want) != 0)
        die(want);
    size_t len = cap;
    if (z.getsockopt(s, O_LAST_ENDPOINT, endpoint, &len) != 0)
        die("LAST_ENDPOINT");
}

/* The receiver rcv bound, the sender snd connected to it; when routed (snd a ROUTER), rcv named
 * rid and snd with ROUTER_MANDATORY, so a send to rid fails until the peer is known. */
static void link_pair(void *rcv, void *snd, const char *transport, const char *rid)
{
    if (rid) {
        if (z.setsockopt(rcv, O_ROUTING_ID, rid, strlen(rid)) != 0)
            die("ROUTING_ID");
        set_int(snd, O_ROUTER_MANDATORY, 1);
    }
    char ep[256];
    bind_any(rcv, transport, ep, sizeof ep);
    if (z.connect(snd, ep) != 0)
        die("zlink_connect");
}

static void recv_exact(void *s, char *buf, size_t size)
{
    int n = z.recv(s, buf, size, 0);
    if (n < 0)
        die("zlink_recv");
    if ((size_t)n != size) {
        fprintf(stderr, "zlink_patterns: received %d bytes, expected %zu\n", n, size);
        exit(1);
    }
}

/* ---- latency ---------------------------------------------------------------------------- */

typedef struct echo_arg {
    void *s;
    size_t size;
    int count;
    int router;
} echo_arg_t;

static void *echo_side(void *p)
{
    echo_arg_t *a = p;
    char *buf = malloc(a->size ? a->size : 1);
    char id[256];
    for (int i = 0; i < a->count; i++) {
        int idlen = 0;
        if (a->router) {
            idlen = z.recv(a->s, id, sizeof id, 0);
            if (idlen < 0)
                die("zlink_recv (id)");
        }
        recv_exact(a->s, buf, a->size);
        if (a->router && z.send(a->s, id, (size_t)idlen, SNDMORE) < 0)
            die("zlink_send (id)");
        if (z.send(a->s, buf, a->size, 0) < 0)
            die("zlink_send");
    }
    free(buf);
    return NULL;
}

static double latency(void *ctx, const char *pattern, const char *transport, size_t size,
                      int count)
{
    int router = strcmp(pattern, "dealer-router") == 0;
    if (!router && strcmp(pattern, "pair") != 0) {
        fprintf(stderr, "zlink_patterns: latency takes pair or dealer-router\n");
        exit(2);
    }
    void *srv = z.socket(ctx, router ? ROUTER : PAIR);
    void *cli = z.socket(ctx, router ? DEALER : PAIR);
    if (!srv || !cli)
        die("zlink_socket");
    char ep[256];
    bind_any(srv, transport, ep, sizeof ep);
    if (z.connect(cli, ep) != 0)
        die("zlink_connect");
    const int warm = 1000;
    echo_arg_t a = {srv, size, warm + count, router};
    pthread_t t;
    pthread_create(&t, NULL, echo_side, &a);
    char *buf = calloc(1, size ? size : 1);
    double start = 0;
    for (int i = 0; i < warm + count; i++) {
        if (i == warm)
            start = now_s();
        if (z.send(cli, buf, size, 0) < 0)
            die("zlink_send");
        recv_exact(cli, buf, size);
    }
    double us = (now_s() - start) * 1e6 / count / 2;
    pthread_join(t, NULL);
    free(buf);
    z.close(cli);
    z.close(srv);
    return us;
}

/* ---- throughput ------------------------------------------------------------------------- */

typedef struct sink_arg {
    void *s;
    size_t size;
    long count;
    int parts; /* 2 for a ROUTER receiving [id][body] */
    double first, last;
} sink_arg_t;

static void *sink_side(void *p)
{
    sink_arg_t *a = p;
    char *buf = malloc(a->size + 256);
    for (long i = 0; i < a->count; i++) {
        for (int part = 0; part < a->parts; part++) {
            int n = z.recv(a->s, buf, a->size + 256, 0);
            if (n < 0)
                die("zlink_recv");
        }
        if (i == 0)
            a->first = now_s();
    }
    a->last = now_s();
    free(buf);
    return NULL;
}

static double throughput(void *ctx, const char *pattern, const char *transport, size_t size,
                         long count)
{
    int stype, rtype;
    int parts = 1;
    if (strcmp(pattern, "pair") == 0)
        stype = PAIR, rtype = PAIR;
    else if (strcmp(pattern, "pubsub") == 0)
        stype = PUB, rtype = SUB;
    else if (strcmp(pattern, "dealer-router") == 0)
        stype = DEALER, rtype = ROUTER, parts = 2;
    else if (strcmp(pattern, "router-router") == 0)
        stype = ROUTER, rtype = ROUTER, parts = 2;
    else {
        fprintf(stderr, "zlink_patterns: unknown pattern %s\n", pattern);
        exit(2);
    }
    void *rcv = z.socket(ctx, rtype);
    void *snd = z.socket(ctx, stype);
    if (!rcv || !snd)
        die("zlink_socket");
    set_int(rcv, O_RCVHWM, 0);
    set_int(snd, O_SNDHWM, 0);
    set_int(snd, O_LINGER, -1);
    if (rtype == SUB && z.setsockopt(rcv, O_SUBSCRIBE, "", 0) != 0)
        die("SUBSCRIBE");
    static const char rid[] = "receiver";
    link_pair(rcv, snd, transport, stype == ROUTER ? rid : NULL);
    char *buf = calloc(1, size ? size : 1);

    /* wait until a message gets through (PUB drops before the subscription arrives; a ROUTER
     * cannot route before the peer's handshake): probes are received and not counted */
    sink_arg_t a = {rcv, size, count, parts, 0, 0};
    char *rb = malloc(size + 256);
    for (int got = 0; !got;) {
        if (stype == ROUTER) {
            if (z.send(snd, rid, sizeof rid - 1, SNDMORE) < 0) {
                usleep(1000);
                continue;
            }
        }
        if (z.send(snd, buf, size, 0) < 0)
            die("zlink_send (probe)");
        usleep(2000);
        for (;;) {
            int n = z.recv(rcv, rb, size + 256, 1 /* DONTWAIT */);
            if (n < 0)
                break;
            got = 1;
        }
    }
    free(rb);

    pthread_t t;
    pthread_create(&t, NULL, sink_side, &a);
    for (long i = 0; i < count; i++) {
        if (stype == ROUTER && z.send(snd, rid, sizeof rid - 1, SNDMORE) < 0)
            die("zlink_send (id)");
        if (z.send(snd, buf, size, 0) < 0)
            die("zlink_send");
    }
    pthread_join(t, NULL);
    free(buf);
    z.close(snd);
    z.close(rcv);
    double span = a.last - a.first;
    return span > 0 ? (double)(count - 1) / span : 0;
}

/* ---- window: ROUTER to ROUTER request/reply, WINDOW in flight ----------------------------- */

typedef struct window_echo_arg {
    void *s;
    long count;
} window_echo_arg_t;

/* the receiver: each request is [gateway id][body]; sends both back as they came */
static void *window_echo(void *p)
{
    window_echo_arg_t *a = p;
    zmsg_t id, body;
    z.msg_init(&id);
    z.msg_init(&body);
    for (long i = 0; i < a->count; i++) {
        if (z.msg_recv(&id, a->s, 0) < 0 || z.msg_recv(&body, a->s, 0) < 0)
            die("zlink_msg_recv (receiver)");
        if (z.send(a->s, z.msg_data(&id), z.msg_size(&id), SNDMORE) < 0 ||
            z.send(a->s, z.msg_data(&body), z.msg_size(&body), 0) < 0)
            die("zlink_send (receiver)");
    }
    z.msg_close(&id);
    z.msg_close(&body);
    return NULL;
}

static double window(void *ctx, const char *pattern, const char *transport, size_t size,
                     long count, int inflight)
{
    if (strcmp(pattern, "router-router") != 0 || size == 0 || inflight < 1) {
        fprintf(stderr, "zlink_patterns: window takes router-router, SIZE > 0, WINDOW > 0\n");
        exit(2);
    }
    static const char rid[] = "receiver";
    void *rcv = z.socket(ctx, ROUTER);
    void *gw = z.socket(ctx, ROUTER);
    if (!rcv || !gw)
        die("zlink_socket");
    link_pair(rcv, gw, transport, rid);
    char *req = malloc(size);
    memset(req, 'r', size);
    zmsg_t id, body;
    z.msg_init(&id);
    z.msg_init(&body);
    /* one request and its reply before the clock starts (routable once the handshake is done) */
    window_echo_arg_t a = {rcv, count + 1};
    pthread_t t;
    pthread_create(&t, NULL, window_echo, &a);
    while (z.send(gw, rid, sizeof rid - 1, SNDMORE) < 0)
        usleep(1000);
    if (z.send(gw, req, size, 0) < 0)
        die("zlink_send (first)");
    if (z.msg_recv(&id, gw, 0) < 0 || z.msg_recv(&body, gw, 0) < 0)
        die("zlink_msg_recv (first)");
    double start = now_s();
    long sent = 0, got = 0;
    while (got < count) {
        for (; sent < count && sent - got < inflight; sent++)
            if (z.send(gw, rid, sizeof rid - 1, SNDMORE) < 0 || z.send(gw, req, size, 0) < 0)
                die("zlink_send (request)");
        if (z.msg_recv(&id, gw, 0) < 0 || z.msg_recv(&body, gw, 0) < 0)
            die("zlink_msg_recv (reply)");
        if (z.msg_size(&body) != size || *(const char *)z.msg_data(&body) != 'r') {
            fprintf(stderr, "zlink_patterns: reply %ld is not the request\n", got);
            exit(1);
        }
        got++;
    }
    double span = now_s() - start;
    pthread_join(t, NULL);
    z.msg_close(&id);
    z.msg_close(&body);
    free(req);
    z.close(gw);
    z.close(rcv);
    return span > 0 ? (double)count / span : 0;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr,
                "usage: zlink_patterns LIB latency|throughput|window PATTERN TRANSPORT SIZE [COUNT] "
                "[WINDOW]\n");
        return 2;
    }
    g_lib = argv[1];
    load(g_lib);
    const char *mode = argv[2], *pattern = argv[3], *transport = argv[4];
    size_t size = (size_t)strtoul(argv[5], NULL, 10);
    void *ctx = z.ctx_new();
    if (!ctx)
        die("zlink_ctx_new");
    double value;
    const char *unit;
    if (strcmp(mode, "latency") == 0) {
        int count = argc > 6 ? atoi(argv[6]) : 20000;
        value = latency(ctx, pattern, transport, size, count);
        unit = "us";
    } else if (strcmp(mode, "throughput") == 0) {
        long count = argc > 6 ? atol(argv[6]) : 0;
        if (count <= 0) {
            count = (long)((1L << 30) / (size ? size : 1));
            if (count > 2000000)
                count = 2000000;
            if (count < 20000)
                count = 20000;
        }
        value = throughput(ctx, pattern, transport, size, count);
        unit = "msg/s";
    } else if (strcmp(mode, "window") == 0) {
        long count = argc > 6 ? atol(argv[6]) : 2000000;
        int inflight = argc > 7 ? atoi(argv[7]) : 256;
        value = window(ctx, pattern, transport, size, count > 0 ? count : 2000000, inflight);
        unit = "msg/s";
    } else {
        fprintf(stderr, "zlink_patterns: mode is latency, throughput or window\n");
        return 2;
    }
    z.ctx_term(ctx);
    printf("RESULT lib=%s mode=%s pattern=%s transport=%s size=%zu value=%.2f unit=%s\n", g_lib,
           mode, pattern, transport, size, value, unit);
    return 0;
}
