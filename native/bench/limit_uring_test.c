/*
 * limit_uring_test.c - ctest test_limit_uring_random: a randomized check of limit_echo's io_uring
 * layer (limit_uring.c) as a byte stream. A child process runs the layer's echo server; this
 * process connects 1..48 connections through the layer's client and writes each a stream of
 * bytes of its own (a function of the seed, the connection and the offset) in writes of random
 * sizes (1 B to 80 KB, so writes cross the 32 KB receive buffers and the 1 MB send arenas),
 * several per loop pass, and closes a few connections on the way. It checks that every byte
 * comes back once and in order, that nothing is reported for a connection after it was closed,
 * and that everything written comes back before a deadline (no stall). The provided buffer count
 * (LIMIT_URING_BUFS 16, 64 or 2048: a small ring runs dry and the receives are re-armed) and the
 * socket buffer sizes are drawn too.
 *
 *   limit_uring_test            prints "seed=N" first; LIMIT_URING_TEST_SEED=N replays a run
 * Exit 0 pass, 1 fail (with what and where), 77 skipped (io_uring refused here).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "epoll_common.h"
#include "limit_io.h"

#define MAX_CONNS 48
#define MAX_WRITE 80000
#define MAX_OUTSTANDING (512u * 1024u)
#define DEADLINE_NS 30000000000ull

typedef struct tconn {
    uint64_t sent, echoed;
    int up, closed;
} tconn_t;

struct client {
    uint64_t seed;
    int n, failed;
    tconn_t c[MAX_CONNS];
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned rnd_below(unsigned n) { return (unsigned)(rnd() % n); }

/* byte off of connection idx's stream */
static unsigned char stream_byte(uint64_t seed, int idx, uint64_t off)
{
    uint64_t x = (seed ^ ((uint64_t)idx << 48)) + (off >> 3) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (unsigned char)(x >> ((off & 7) * 8));
}

static void fail(struct client *c, const char *what, int idx, uint64_t at)
{
    if (!c->failed)
        printf("FAIL: %s (connection %d, byte %llu; replay: LIMIT_URING_TEST_SEED=%llu)\n", what, idx,
               (unsigned long long)at, (unsigned long long)c->seed);
    c->failed = 1;
}

void lc_connected(struct client *c, int idx, int err, uint64_t now)
{
    (void)now;
    if (c->c[idx].closed)
        fail(c, "a connect was reported after close", idx, 0);
    else if (err)
        fail(c, strerror(err), idx, 0);
    else
        c->c[idx].up = 1;
}

void lc_data(struct client *c, int idx, const unsigned char *buf, size_t n)
{
    tconn_t *k = &c->c[idx];
    if (k->closed) {
        fail(c, "data was reported after close", idx, k->echoed);
        return;
    }
    if (k->echoed + n > k->sent) {
        fail(c, "more came back than was written", idx, k->echoed + n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != stream_byte(c->seed, idx, k->echoed + i)) {
            fail(c, "a byte came back changed or out of order", idx, k->echoed + i);
            return;
        }
    }
    k->echoed += n;
}

void lc_closed(struct client *c, int idx, int err)
{
    (void)err;
    fail(c, c->c[idx].closed ? "a close was reported after close" : "the server closed a connection", idx,
         c->c[idx].echoed);
}

void lc_drained(struct client *c, int idx)
{
    if (c->c[idx].closed)
        fail(c, "a drain was reported after close", idx, 0);
}

static int all_up(const struct client *c)
{
    for (int i = 0; i < c->n; i++)
        if (!c->c[i].up)
            return 0;
    return 1;
}

static int all_echoed(const struct client *c)
{
    for (int i = 0; i < c->n; i++)
        if (!c->c[i].closed && c->c[i].echoed != c->c[i].sent)
            return 0;
    return 1;
}

static void record_nothing(void *ctx, uint64_t ns) { (void)ctx, (void)ns; }

int main(void)
{
    static struct client c;
    const char *replay = getenv("LIMIT_URING_TEST_SEED");
    c.seed = replay && *replay ? strtoull(replay, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    printf("seed=%llu\n", (unsigned long long)c.seed);
    fflush(stdout);
    rng_state = c.seed;
    c.n = 1 + (int)rnd_below(MAX_CONNS);
    static const char *const bufs[] = {"16", "64", "2048"};
    static const int sockbufs[] = {0, 4096, 65536};
    const char *nbufs = bufs[rnd_below(3)];
    int sockbuf = sockbufs[rnd_below(3)];
    setenv("LIMIT_URING_BUFS", nbufs, 1);
    printf("connections=%d LIMIT_URING_BUFS=%s sndbuf=rcvbuf=%d\n", c.n, nbufs, sockbuf);

    const char *why = NULL;
    lio_t *io = lio_uring_client(c.n, sockbuf, sockbuf, &why);
    if (!io) {
        printf("SKIP: io_uring refused here (%s)\n", why);
        return 77;
    }
    int port;
    int l = ec_listen("127.0.0.1", 0, 128, &port);
    int stop[2];
    if (l < 0 || pipe(stop) != 0)
        return 1;
    pid_t server = fork();
    if (server == 0) {
        close(stop[1]);
        static volatile int never;
        const char *swhy = NULL;
        int rc = lio_uring_serve(l, stop[0], sockbuf, sockbuf, 0, &never, record_nothing, NULL, &swhy);
        if (rc == 3)
            printf("FAIL: the server's io_uring was refused (%s)\n", swhy);
        _exit(rc);
    }
    close(stop[0]);
    close(l);
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(0x7f000001);
    for (int i = 0; i < c.n; i++) {
        int err = io->connect(io, i, (const struct sockaddr *)&addr, sizeof addr);
        if (err)
            fail(&c, strerror(err), i, 0);
    }
    uint64_t deadline = ec_now_ns() + DEADLINE_NS;
    while (!c.failed && !all_up(&c) && ec_now_ns() < deadline)
        io->wait(io, &c, 1000000);
    if (!c.failed && !all_up(&c))
        fail(&c, "not every connection came up", -1, 0);

    static unsigned char chunk[MAX_WRITE];
    int rounds = 150 + (int)rnd_below(150), closed = 0;
    uint64_t written = 0;
    for (int r = 0; r < rounds && !c.failed; r++) {
        int writes = 1 + (int)rnd_below((unsigned)c.n * 2);
        for (int w = 0; w < writes && !c.failed; w++) {
            int idx = (int)rnd_below((unsigned)c.n);
            tconn_t *k = &c.c[idx];
            size_t len = 1 + rnd_below(rnd_below(4) ? 4096 : MAX_WRITE);
            if (k->closed || k->sent - k->echoed + len > MAX_OUTSTANDING)
                continue;
            for (size_t i = 0; i < len; i++)
                chunk[i] = stream_byte(c.seed, idx, k->sent + i);
            int err = io->write(io, idx, chunk, len);
            if (err)
                fail(&c, strerror(err), idx, k->sent);
            k->sent += len;
            written += len;
        }
        if (c.n > 1 && closed < c.n / 4 && rnd_below(100) == 0) {
            int idx = (int)rnd_below((unsigned)c.n);
            if (!c.c[idx].closed) {
                io->close(io, idx); /* mid-stream: nothing more may be reported for it */
                c.c[idx].closed = 1;
                closed++;
            }
        }
        io->wait(io, &c, rnd_below(3) ? 0 : 1000000);
    }
    while (!c.failed && !all_echoed(&c) && ec_now_ns() < deadline)
        io->wait(io, &c, 1000000);
    for (int i = 0; i < c.n && !c.failed; i++)
        if (!c.c[i].closed && c.c[i].echoed != c.c[i].sent)
            fail(&c, "stalled: not everything written came back", i, c.c[i].echoed);

    io->destroy(io);
    close(stop[1]); /* the server stops at the end of its stop pipe */
    int status = 0;
    waitpid(server, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail(&c, "the echo server did not exit cleanly", -1, 0);
    if (c.failed)
        return 1;
    printf("limit_uring_test: OK seed=%llu connections=%d closed=%d bytes=%llu\n", (unsigned long long)c.seed, c.n,
           closed, (unsigned long long)written);
    return 0;
}
