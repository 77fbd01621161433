/* The native half of benchmarks/run.sh: an inproc PAIR send-then-receive loop straight on
 * libzlink, the same steps NetZlink.Benchmarks' "overhead" mode times through the binding
 * (NetZlink.Benchmarks/InprocLoop.cs): zlink_send and zlink_recv, both with ZLINK_DONTWAIT,
 * retried while they report EAGAIN, on one thread. Both sockets get LINGER 0 (as every socket the
 * binding creates) and SNDHWM = RCVHWM = 0 (as SocketPair.Open sets them).
 *
 * Before each size it warms up as the managed side does: rounds of 10,000 steps until half a
 * second has passed. The iterations are then timed in BLOCKS equal blocks, and ns_per_op is the
 * fastest block's: on a shared machine noise only ever adds time, so the minimum is the stable
 * figure (a single timing of the whole run varied by +-40% between runs here); the median block
 * is printed beside it.
 *
 * Usage: inproc_loop [iterations]   (default 1000000)
 * Output, after a "#" line with the library's version, one line per size:
 *   native size=64 iterations=1000000 ns_per_op=123.4 median_ns=130.2 send_retries=0
 */
#define _POSIX_C_SOURCE 199309L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zlink.h"

static const size_t sizes[] = {64, 1024, 8192};
#define WARM_UP_ROUND 10000
#define WARM_UP_NS 500e6
#define BLOCKS 20

static void die(const char *what)
{
    int err = zlink_errno();
    fprintf(stderr, "inproc_loop: %s failed: %s (%d)\n", what, zlink_strerror(err), err);
    exit(1);
}

static void set_int(void *socket, int option, int value, const char *what)
{
    if (zlink_setsockopt(socket, option, &value, sizeof value) != 0)
        die(what);
}

static void *open_socket(void *ctx)
{
    void *s = zlink_socket(ctx, ZLINK_PAIR);
    if (!s)
        die("zlink_socket");
    set_int(s, ZLINK_LINGER, 0, "LINGER");
    set_int(s, ZLINK_SNDHWM, 0, "SNDHWM");
    set_int(s, ZLINK_RCVHWM, 0, "RCVHWM");
    return s;
}

/* Runs the loop; returns the number of sends that had to be retried. */
static long loop(void *sender, void *receiver, const unsigned char *payload,
                 unsigned char *buffer, size_t size, long iterations, long *received)
{
    long retries = 0;
    for (long i = 0; i < iterations; i++) {
        while (zlink_send(sender, payload, size, ZLINK_DONTWAIT) < 0) {
            if (zlink_errno() != EAGAIN && zlink_errno() != EINTR)
                die("zlink_send");
            retries++;
        }
        int n;
        while ((n = zlink_recv(receiver, buffer, size, ZLINK_DONTWAIT)) < 0) {
            if (zlink_errno() != EAGAIN && zlink_errno() != EINTR)
                die("zlink_recv");
        }
        *received += n;
    }
    return retries;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long iterations = 1000000;
    if (argc > 2 || (argc == 2 && (iterations = strtol(argv[1], NULL, 10)) <= 0)) {
        fprintf(stderr, "usage: %s [iterations (default 1000000)]\n", argv[0]);
        return 2;
    }

    int major, minor, patch;
    zlink_version(&major, &minor, &patch);
    printf("# libzlink %d.%d.%d\n", major, minor, patch);

    void *ctx = zlink_ctx_new();
    if (!ctx)
        die("zlink_ctx_new");

    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t size = sizes[k];
        char endpoint[64];
        snprintf(endpoint, sizeof endpoint, "inproc://overhead-%zu", size);
        void *receiver = open_socket(ctx);
        void *sender = open_socket(ctx);
        if (zlink_bind(receiver, endpoint) != 0)
            die("zlink_bind");
        if (zlink_connect(sender, endpoint) != 0)
            die("zlink_connect");

        unsigned char *payload = malloc(size);
        unsigned char *buffer = malloc(size);
        if (!payload || !buffer) {
            fprintf(stderr, "inproc_loop: out of memory\n");
            return 1;
        }
        for (size_t i = 0; i < size; i++)
            payload[i] = (unsigned char)(i * 31 + 7);

        long received = 0;
        double warm_up_start = now_ns();
        while (now_ns() - warm_up_start < WARM_UP_NS)
            loop(sender, receiver, payload, buffer, size, WARM_UP_ROUND, &received);

        received = 0;
        long retries = 0;
        long per_block = iterations / BLOCKS > 0 ? iterations / BLOCKS : 1;
        double block_ns[BLOCKS];
        for (int b = 0; b < BLOCKS; b++) {
            double start = now_ns();
            retries += loop(sender, receiver, payload, buffer, size, per_block, &received);
            block_ns[b] = (now_ns() - start) / (double)per_block;
        }
        if (received != (long)size * per_block * BLOCKS) {
            fprintf(stderr, "inproc_loop: received %ld bytes, expected %ld\n", received,
                    (long)size * per_block * BLOCKS);
            return 1;
        }
        qsort(block_ns, BLOCKS, sizeof block_ns[0], by_value);
        printf("native size=%zu iterations=%ld ns_per_op=%.1f median_ns=%.1f send_retries=%ld\n",
               size, per_block * BLOCKS, block_ns[0], block_ns[BLOCKS / 2], retries);

        free(payload);
        free(buffer);
        zlink_close(sender);
        zlink_close(receiver);
    }

    zlink_ctx_term(ctx);
    return 0;
}
