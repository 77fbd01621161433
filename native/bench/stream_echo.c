/*
 * stream_echo.c - echo benchmark over zlink STREAM sockets (this library's
 * epoll engine). Same command line and packet format as epoll_echo.c, so
 * the two can be compared:
 *
 *   stream_echo server PORT
 *   stream_echo client HOST PORT CCU INFLIGHT SIZE SECONDS
 *
 * A packet is [u32 big-endian SIZE][SIZE bytes]. Each client connection
 * keeps INFLIGHT packets outstanding; as echoes complete, replacements are
 * sent in one batch per read. After a 1 s warm-up, completed packets are
 * counted for SECONDS and reported as packets/s.
 */
#include "zlink.h"

#include "epoll_common.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF 65536

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, zlink_strerror(zlink_errno()));
    exit(1);
}

static void set_int(void *s, int opt, int v)
{
    if (zlink_setsockopt(s, opt, &v, sizeof v) != 0)
        die("setsockopt");
}

static int server(int port)
{
    void *ctx = zlink_ctx_new();
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    set_int(s, ZLINK_BACKLOG, 4096);
    set_int(s, ZLINK_SNDHWM, 0);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://*:%d", port);
    if (zlink_bind(s, ep) != 0)
        die("bind");
    static unsigned char buf[BUF];
    unsigned char id[4];
    for (;;) {
        if (zlink_recv(s, id, sizeof id, 0) != 4)
            die("recv id");
        int n = zlink_recv(s, buf, sizeof buf, 0);
        if (n < 0)
            die("recv payload");
        if (n <= 1) /* 0x01 / 0x00 notifications (data is never 1 byte) */
            continue;
        if (zlink_send(s, id, 4, ZLINK_SNDMORE) != 4)
            continue; /* gone in the meantime */
        zlink_send(s, buf, (size_t)n, 0);
    }
    return 0;
}

static int client(const char *host, int port, int ccu, int inflight, int size,
                  int seconds)
{
    void *ctx = zlink_ctx_new();
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    set_int(s, ZLINK_SNDHWM, 0);
    set_int(s, ZLINK_RCVTIMEO, 100);
    char ep[256];
    snprintf(ep, sizeof ep, "tcp://%s:%d", host, port);
    size_t psize = (size_t)size + 4;
    unsigned char *packets = ec_packets(size, inflight);
    /* routing ids 1..ccu, chosen by us so they index our table */
    uint64_t *rx = calloc((size_t)ccu + 1, sizeof *rx);
    for (int i = 1; i <= ccu; i++) {
        unsigned char id[4] = {(unsigned char)(i >> 24), (unsigned char)(i >> 16),
                               (unsigned char)(i >> 8), (unsigned char)i};
        if (zlink_setsockopt(s, ZLINK_CONNECT_ROUTING_ID, id, 4) != 0 ||
            zlink_connect(s, ep) != 0)
            die("connect");
    }
    static unsigned char buf[BUF];
    unsigned char id[4];
    int connected = 0;
    double t_start = now_s();
    uint64_t done = 0, base = 0;
    double t_measure = 0, t_end = 0;
    for (;;) {
        double t = now_s();
        if (connected == ccu && !t_measure && t - t_start >= 1.0) {
            t_measure = t; /* warm-up over */
            base = done;
            t_end = t + seconds;
        }
        if (t_measure && t >= t_end)
            break;
        if (!connected && t - t_start > 30) {
            fprintf(stderr, "connect timeout\n");
            return 1;
        }
        int n = zlink_recv(s, id, sizeof id, 0);
        if (n < 0) {
            if (zlink_errno() == EAGAIN)
                continue;
            die("recv id");
        }
        uint32_t k = ((uint32_t)id[0] << 24) | ((uint32_t)id[1] << 16) |
                     ((uint32_t)id[2] << 8) | id[3];
        n = zlink_recv(s, buf, sizeof buf, 0);
        if (n < 0)
            die("recv payload");
        if (n == 1) {
            if (buf[0] == 0) {
                fprintf(stderr, "connection %u closed\n", k);
                return 1;
            }
            connected++;
            if (connected == ccu)
                t_start = now_s();
            zlink_send(s, id, 4, ZLINK_SNDMORE);
            zlink_send(s, packets, psize * (size_t)inflight, 0);
            continue;
        }
        if (k == 0 || k > (uint32_t)ccu)
            continue;
        uint64_t before = rx[k] / psize;
        rx[k] += (uint64_t)n;
        uint64_t completed = rx[k] / psize - before;
        if (!completed)
            continue;
        done += completed;
        zlink_send(s, id, 4, ZLINK_SNDMORE);
        zlink_send(s, packets, psize * completed, 0);
    }
    uint64_t measured = done - base;
    ec_print_result("zlink-stream", ccu, inflight, size, seconds, measured);
    return 0;
}

int main(int argc, char **argv)
{
    return ec_echo_main(argc, argv, server, client);
}
