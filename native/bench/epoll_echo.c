/*
 * epoll_echo.c - the baseline for stream_echo.c: the same echo benchmark on
 * plain non-blocking sockets and level-triggered epoll, one thread per
 * side, no library. Same command line and packet format:
 *
 *   epoll_echo server PORT
 *   epoll_echo client HOST PORT CCU INFLIGHT SIZE SECONDS
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "epoll_common.h"

#define BATCH 256

/* per-connection state of the client */
typedef struct conn {
    int fd;
    ec_outq_t out;
    uint64_t rx;
    int connected;
} conn_t;

static int ep;

static int server(int port)
{
    int bound;
    int l = ec_listen("0.0.0.0", port, 4096, &bound);
    if (l < 0)
        return 1;
    return ec_echo_serve(l, -1, 0, 0, NULL);
}

static int client(const char *host, int port, int ccu, int inflight, int size,
                  int seconds)
{
    struct addrinfo hints, *res;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0) {
        fprintf(stderr, "cannot resolve %s\n", host);
        return 1;
    }
    ep = epoll_create1(0);
    size_t psize = (size_t)size + 4;
    unsigned char *packets = ec_packets(size, inflight);
    conn_t *conns = calloc((size_t)ccu, sizeof *conns);
    for (int i = 0; i < ccu; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        ec_tune(fd, 0, 0);
        if (connect(fd, res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS) {
            perror("connect");
            return 1;
        }
        conns[i].fd = fd;
        ec_ctl(ep, EPOLL_CTL_ADD, fd, EPOLLOUT, (uint32_t)i);
    }
    static char buf[EC_RECV_BUF];
    struct epoll_event evs[BATCH];
    int connected = 0;
    double t_start = (double)ec_now_ns() / 1e9, t_measure = 0, t_end = 0;
    uint64_t done = 0, base = 0;
    for (;;) {
        double t = (double)ec_now_ns() / 1e9;
        if (connected == ccu && !t_measure && t - t_start >= 1.0) {
            t_measure = t;
            base = done;
            t_end = t + seconds;
        }
        if (t_measure && t >= t_end)
            break;
        int n = epoll_wait(ep, evs, BATCH, 100);
        for (int i = 0; i < n; i++) {
            uint32_t idx = (uint32_t)evs[i].data.u64;
            conn_t *c = &conns[idx];
            if (!c->connected) {
                int err = 0;
                socklen_t el = sizeof err;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                if (err) {
                    fprintf(stderr, "connect: %s\n", strerror(err));
                    return 1;
                }
                c->connected = 1;
                ec_ctl(ep, EPOLL_CTL_MOD, c->fd, EPOLLIN, idx);
                if (++connected == ccu)
                    t_start = (double)ec_now_ns() / 1e9;
                ec_write(ep, c->fd, idx, &c->out, packets, psize * (size_t)inflight);
                continue;
            }
            if ((evs[i].events & EPOLLOUT) && c->out.len)
                ec_flush(ep, c->fd, idx, &c->out);
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                ssize_t r = recv(c->fd, buf, sizeof buf, 0);
                if (r == 0 || (r < 0 && errno != EAGAIN)) {
                    fprintf(stderr, "connection %u closed\n", idx);
                    return 1;
                }
                if (r <= 0)
                    continue;
                uint64_t before = c->rx / psize;
                c->rx += (uint64_t)r;
                uint64_t completed = c->rx / psize - before;
                if (completed) {
                    done += completed;
                    ec_write(ep, c->fd, idx, &c->out, packets, psize * completed);
                }
            }
        }
    }
    uint64_t measured = done - base;
    ec_print_result("plain-epoll", ccu, inflight, size, seconds, measured);
    return 0;
}

int main(int argc, char **argv)
{
    return ec_echo_main(argc, argv, server, client);
}
