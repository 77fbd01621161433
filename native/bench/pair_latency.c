/*
 * pair_latency.c - where the one-way latency of the libzmq socket types goes: a PAIR ping-pong
 * (64-byte messages, 20,000 round trips, three rounds) over tcp or ipc, once through libzmq's own
 * zmq_* calls and once through libzlink's zlink_* calls, which pass those socket types through to
 * the same built-in libzmq. Equal figures mean the time is libzmq's (its I/O thread hand-offs),
 * not the pass-through's.
 *
 *   pair_latency [tcp|ipc] [size]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "zlink.h"

#define ROUND_TRIPS 20000

static int g_size = 64;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *zmq_echo(void *s)
{
    char b[65536];
    for (int i = 0; i < ROUND_TRIPS; i++) {
        int n = zmq_recv(s, b, sizeof b, 0);
        zmq_send(s, b, (size_t)n, 0);
    }
    return NULL;
}

static void *zlink_echo(void *s)
{
    char b[65536];
    for (int i = 0; i < ROUND_TRIPS; i++) {
        int n = zlink_recv(s, b, sizeof b, 0);
        zlink_send(s, b, (size_t)n, 0);
    }
    return NULL;
}

static double run_zmq(const char *transport)
{
    char ep[256], buf[65536];
    memset(buf, 1, sizeof buf);
    void *c = zmq_ctx_new();
    void *a = zmq_socket(c, ZMQ_PAIR), *b = zmq_socket(c, ZMQ_PAIR);
    if (!strcmp(transport, "tcp")) {
        zmq_bind(a, "tcp://127.0.0.1:*");
        size_t l = sizeof ep;
        zmq_getsockopt(a, ZMQ_LAST_ENDPOINT, ep, &l);
    } else {
        snprintf(ep, sizeof ep, "ipc:///tmp/pair-latency-zmq-%d", (int)getpid());
        zmq_bind(a, ep);
    }
    zmq_connect(b, ep);
    pthread_t t;
    pthread_create(&t, NULL, zmq_echo, a);
    double t0 = now_s();
    for (int i = 0; i < ROUND_TRIPS; i++) {
        zmq_send(b, buf, (size_t)g_size, 0);
        zmq_recv(b, buf, sizeof buf, 0);
    }
    double dt = now_s() - t0;
    pthread_join(t, NULL);
    zmq_close(a);
    zmq_close(b);
    zmq_ctx_term(c);
    return dt / ROUND_TRIPS / 2 * 1e6;
}

static double run_zlink(const char *transport)
{
    char ep[256], buf[65536];
    memset(buf, 1, sizeof buf);
    void *c = zlink_ctx_new();
    void *a = zlink_socket(c, ZLINK_PAIR), *b = zlink_socket(c, ZLINK_PAIR);
    if (!strcmp(transport, "tcp")) {
        zlink_bind(a, "tcp://127.0.0.1:*");
        size_t l = sizeof ep;
        zlink_getsockopt(a, ZLINK_LAST_ENDPOINT, ep, &l);
    } else {
        snprintf(ep, sizeof ep, "ipc:///tmp/pair-latency-zlink-%d", (int)getpid());
        zlink_bind(a, ep);
    }
    zlink_connect(b, ep);
    pthread_t t;
    pthread_create(&t, NULL, zlink_echo, a);
    double t0 = now_s();
    for (int i = 0; i < ROUND_TRIPS; i++) {
        zlink_send(b, buf, (size_t)g_size, 0);
        zlink_recv(b, buf, sizeof buf, 0);
    }
    double dt = now_s() - t0;
    pthread_join(t, NULL);
    zlink_close(a);
    zlink_close(b);
    zlink_ctx_term(c);
    return dt / ROUND_TRIPS / 2 * 1e6;
}

int main(int argc, char **argv)
{
    const char *transport = argc > 1 ? argv[1] : "tcp";
    if (strcmp(transport, "tcp") && strcmp(transport, "ipc")) {
        fprintf(stderr, "usage: pair_latency [tcp|ipc] [size 1..65536]\n");
        return 1;
    }
    if (argc > 2) {
        g_size = atoi(argv[2]);
        if (g_size < 1 || g_size > 65536) {
            fprintf(stderr, "usage: pair_latency [tcp|ipc] [size 1..65536]\n");
            return 1;
        }
    }
    for (int round = 1; round <= 3; round++) {
        double z = run_zmq(transport), l = run_zlink(transport);
        printf("round %d %s PAIR %dB one-way: libzmq %.1f us, libzlink %.1f us\n", round, transport, g_size, z, l);
    }
    return 0;
}
