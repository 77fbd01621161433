/*
 * testutil.h - tiny assertion and helper kit shared by the C tests, so each
 * test stays a plain executable that ctest runs (exit 0 = pass).
 */
#ifndef ZLINK_TESTUTIL_H
#define ZLINK_TESTUTIL_H

#include "zlink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s (zlink_errno %d: %s)\n",  \
                    __FILE__, __LINE__, #cond, zlink_errno(),                  \
                    zlink_strerror(zlink_errno()));                            \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* int expression must fail with -1 and the given zlink_errno */
#define CHECK_ERR(expr, err)                                                   \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        int e_ = zlink_errno();                                                \
        if (rc_ != -1 || e_ != (err)) {                                        \
            fprintf(stderr, "%s:%d: %s: rc %d errno %d (%s), want %d\n",       \
                    __FILE__, __LINE__, #expr, rc_, e_, zlink_strerror(e_),    \
                    (err));                                                    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* pointer expression must give NULL and the given zlink_errno */
#define CHECK_NULL_ERR(expr, err)                                              \
    do {                                                                       \
        void *p_ = (expr);                                                     \
        int e_ = zlink_errno();                                                \
        if (p_ != NULL || e_ != (err)) {                                       \
            fprintf(stderr, "%s:%d: %s: %p errno %d (%s), want NULL/%d\n",     \
                    __FILE__, __LINE__, #expr, p_, e_, zlink_strerror(e_),     \
                    (err));                                                    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static inline long long tu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void tu_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline void tu_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static inline long tu_nofile(void)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    return (long)rl.rlim_cur;
}

static inline uint32_t tu_be32(const void *p)
{
    const unsigned char *b = p;
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) |
           ((uint32_t)b[2] << 8) | b[3];
}

static inline void tu_put_be32(void *p, uint32_t v)
{
    unsigned char *b = p;
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

/* Receives one STREAM message: id into *id, payload into buf. Returns the
 * payload size, or -1 (errno from zlink). */
static inline int tu_stream_recv(void *s, uint32_t *id, void *buf, size_t cap,
                                 int flags)
{
    unsigned char idb[4];
    int n = zlink_recv(s, idb, sizeof idb, flags);
    if (n < 0)
        return -1;
    CHECK(n == 4);
    int more = 0;
    size_t ml = sizeof more;
    CHECK(zlink_getsockopt(s, ZLINK_RCVMORE, &more, &ml) == 0 && more == 1);
    *id = tu_be32(idb);
    return zlink_recv(s, buf, cap, 0);
}

static inline int tu_get_int(void *s, int opt)
{
    int v = -7;
    size_t l = sizeof v;
    CHECK(zlink_getsockopt(s, opt, &v, &l) == 0 && l == sizeof v);
    return v;
}

/* ZLINK_STREAM_EVENT of the payload just received: 1, 0, or -1 for data */
static inline int tu_last_event(void *s)
{
    return tu_get_int(s, ZLINK_STREAM_EVENT);
}

/* ZLINK_STREAM_EVENT_ERRNO of the payload just received */
static inline int tu_event_errno(void *s)
{
    return tu_get_int(s, ZLINK_STREAM_EVENT_ERRNO);
}

/* Waits for the next connection event and returns it (1 connect, 0
 * disconnect): a one-byte payload in LENGTH and BATCH, a zero-length one in
 * RAW, told apart from data by ZLINK_STREAM_EVENT. Empty data payloads
 * (BATCH) are skipped; other data met on the way is an error. */
static inline int tu_stream_event(void *s, uint32_t *id)
{
    unsigned char b[16];
    for (;;) {
        int n = tu_stream_recv(s, id, b, sizeof b, 0);
        CHECK(n >= 0);
        int ev = tu_last_event(s);
        if (ev < 0) {
            CHECK(n == 0);
            continue;
        }
        CHECK(n == 0 || (n == 1 && b[0] == ev));
        return ev;
    }
}

static inline void tu_set_framing(void *s, int mode)
{
    CHECK(zlink_setsockopt(s, ZLINK_STREAM_FRAMING, &mode, sizeof mode) == 0);
}

/* [u32 BE len][body] into out (len + 4 bytes); returns len + 4 */
static inline size_t tu_packet(void *out, const void *body, size_t len)
{
    tu_put_be32(out, (uint32_t)len);
    memcpy((char *)out + 4, body, len);
    return len + 4;
}

static inline int tu_stream_send(void *s, uint32_t id, const void *buf,
                                 size_t len, int flags)
{
    unsigned char idb[4];
    tu_put_be32(idb, id);
    if (zlink_send(s, idb, 4, ZLINK_SNDMORE | flags) != 4)
        return -1;
    return zlink_send(s, buf, len, flags);
}

static inline void tu_last_endpoint(void *s, char *buf, size_t cap)
{
    size_t len = cap;
    CHECK(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, buf, &len) == 0);
}

/* Binds s to tcp://127.0.0.1:* and writes the endpoint it got into ep. */
static inline void tu_bind_tcp(void *s, char *ep, size_t cap)
{
    CHECK(zlink_bind(s, "tcp://127.0.0.1:*") == 0);
    tu_last_endpoint(s, ep, cap);
}

/* For a test of a transport (feature, as zlink_has names it; shown as
 * what) that the build runs only where the library has it: without it the
 * test fails at once (exit 1), saying so. */
static inline void tu_require(const char *test, const char *feature, const char *what)
{
    if (!zlink_has(feature)) {
        printf("%s: this build has no %s; nothing to test\n", test, what);
        exit(1);
    }
}

/* The port of an endpoint string "scheme://host:port[/path]". */
static inline uint16_t tu_ep_port(const char *ep)
{
    const char *p = strrchr(ep, ':');
    CHECK(p);
    return (uint16_t)atoi(p + 1);
}

/* A blocking TCP socket connected to 127.0.0.1:port, 5 s receive timeout;
 * rcvbuf > 0: its SO_RCVBUF, set before the connection exists. */
static inline int tu_raw_connect_rcvbuf(uint16_t port, int rcvbuf)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* A blocking TCP socket connected to 127.0.0.1:port, 5 s receive timeout. */
static inline int tu_raw_connect(uint16_t port)
{
    return tu_raw_connect_rcvbuf(port, 0);
}

/* A randomized test's generator (xorshift32): tu_seed prints the seed
 * (ZLINK_TEST_SEED=<seed> replays it, else the time) and seeds tu_rnd. */
static inline uint32_t *tu_rng_state(void)
{
    static uint32_t state;
    return &state;
}

static inline uint32_t tu_rnd(void)
{
    uint32_t *s = tu_rng_state();
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static inline uint32_t tu_seed(const char *test)
{
    const char *env = getenv("ZLINK_TEST_SEED");
    uint32_t seed = env ? (uint32_t)strtoul(env, NULL, 10) : (uint32_t)time(NULL);
    if (!seed)
        seed = 1;
    printf("%s: seed %u (ZLINK_TEST_SEED=%u replays it)\n", test, seed, seed);
    fflush(stdout);
    *tu_rng_state() = seed;
    return seed;
}

static inline void tu_set_int(void *s, int opt, int v)
{
    CHECK(zlink_setsockopt(s, opt, &v, sizeof v) == 0);
}

#endif
