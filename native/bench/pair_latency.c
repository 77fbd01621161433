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

/* one library's calls: zmq_* and zlink_* have the same shapes */
typedef struct api {
    const char *name;
    int pair, last_endpoint;
    void *(*ctx_new)(void);
    int (*ctx_term)(void *);
    void *(*socket)(void *, int);
    int (*close)(void *);
    int (*bind)(void *, const char *);
    int (*connect)(void *, const char *);
    int (*getsockopt)(void *, int, void *, size_t *);
    int (*send)(void *, const void *, size_t, int);
    int (*recv)(void *, void *, size_t, int);
} api_t;

static const api_t zmq_api = {"libzmq", ZMQ_PAIR, ZMQ_LAST_ENDPOINT, zmq_ctx_new, zmq_ctx_term, zmq_socket,
                              zmq_close, zmq_bind, zmq_connect, zmq_getsockopt, zmq_send, zmq_recv};
static const api_t zlink_api = {"libzlink", ZLINK_PAIR, ZLINK_LAST_ENDPOINT, zlink_ctx_new, zlink_ctx_term,
                                zlink_socket, zlink_close, zlink_bind, zlink_connect, zlink_getsockopt,
                                zlink_send, zlink_recv};

typedef struct echo {
    const api_t *api;
    void *socket;
} echo_t;

static void *echo_loop(void *arg)
{
    const echo_t *e = arg;
    char b[65536];
    for (int i = 0; i < ROUND_TRIPS; i++) {
        int n = e->api->recv(e->socket, b, sizeof b, 0);
        e->api->send(e->socket, b, (size_t)n, 0);
    }
    return NULL;
}

/* one-way latency in microseconds: half the mean round trip of ROUND_TRIPS ping-pongs */
static double run(const api_t *api, const char *transport)
{
    char ep[256], buf[65536];
    memset(buf, 1, sizeof buf);
    void *c = api->ctx_new();
    void *a = api->socket(c, api->pair), *b = api->socket(c, api->pair);
    if (!strcmp(transport, "tcp")) {
        api->bind(a, "tcp://127.0.0.1:*");
        size_t l = sizeof ep;
        api->getsockopt(a, api->last_endpoint, ep, &l);
    } else {
        snprintf(ep, sizeof ep, "ipc:///tmp/pair-latency-%s-%d", api->name, (int)getpid());
        api->bind(a, ep);
    }
    api->connect(b, ep);
    echo_t echo = {api, a};
    pthread_t t;
    pthread_create(&t, NULL, echo_loop, &echo);
    double t0 = now_s();
    for (int i = 0; i < ROUND_TRIPS; i++) {
        api->send(b, buf, (size_t)g_size, 0);
        api->recv(b, buf, sizeof buf, 0);
    }
    double dt = now_s() - t0;
    pthread_join(t, NULL);
    api->close(a);
    api->close(b);
    api->ctx_term(c);
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
        double z = run(&zmq_api, transport), l = run(&zlink_api, transport);
        printf("round %d %s PAIR %dB one-way: libzmq %.1f us, libzlink %.1f us\n", round, transport, g_size, z, l);
    }
    return 0;
}
