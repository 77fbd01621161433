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

#define BUF 65536
#define BATCH 256

/* per-connection pending output (only used when the kernel is full) */
typedef struct conn {
    int fd;
    char *q;
    size_t qlen, qcap;
    uint64_t rx;
    int connected;
} conn_t;

static int ep;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void ctl(int op, int fd, uint32_t events, uint32_t idx)
{
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = idx;
    if (epoll_ctl(ep, op, fd, &ev) != 0 && op != EPOLL_CTL_DEL) {
        perror("epoll_ctl");
        exit(1);
    }
}

/* write what can be written now, queue the rest */
static void conn_write(conn_t *c, uint32_t idx, const void *data, size_t len)
{
    if (!c->qlen) {
        ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN)
                return;
            n = 0;
        }
        if ((size_t)n == len)
            return;
        data = (const char *)data + n;
        len -= (size_t)n;
        ctl(EPOLL_CTL_MOD, c->fd, EPOLLIN | EPOLLOUT, idx);
    }
    if (c->qlen + len > c->qcap) {
        c->qcap = (c->qlen + len) * 2;
        c->q = realloc(c->q, c->qcap);
    }
    memcpy(c->q + c->qlen, data, len);
    c->qlen += len;
}

static void conn_flush(conn_t *c, uint32_t idx)
{
    ssize_t n = send(c->fd, c->q, c->qlen, MSG_NOSIGNAL);
    if (n <= 0)
        return;
    memmove(c->q, c->q + n, c->qlen - (size_t)n);
    c->qlen -= (size_t)n;
    if (!c->qlen)
        ctl(EPOLL_CTL_MOD, c->fd, EPOLLIN, idx);
}

static void tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int server(int port)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 4096) != 0) {
        perror("bind");
        return 1;
    }
    ep = epoll_create1(0);
    size_t cap = 1 << 16;
    conn_t *conns = calloc(cap, sizeof *conns);
    ctl(EPOLL_CTL_ADD, l, EPOLLIN, UINT32_MAX);
    static char buf[BUF];
    struct epoll_event evs[BATCH];
    for (;;) {
        int n = epoll_wait(ep, evs, BATCH, -1);
        for (int i = 0; i < n; i++) {
            uint32_t idx = (uint32_t)evs[i].data.u64;
            if (idx == UINT32_MAX) {
                int fd;
                while ((fd = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if ((size_t)fd >= cap) {
                        close(fd);
                        continue;
                    }
                    tune(fd);
                    conns[fd].fd = fd;
                    conns[fd].qlen = 0;
                    ctl(EPOLL_CTL_ADD, fd, EPOLLIN, (uint32_t)fd);
                }
                continue;
            }
            conn_t *c = &conns[idx];
            if ((evs[i].events & EPOLLOUT) && c->qlen)
                conn_flush(c, idx);
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                ssize_t r = recv(c->fd, buf, sizeof buf, 0);
                if (r == 0 || (r < 0 && errno != EAGAIN)) {
                    close(c->fd);
                    c->qlen = 0;
                    continue;
                }
                if (r > 0)
                    conn_write(c, idx, buf, (size_t)r);
            }
        }
    }
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
    unsigned char *packets = malloc(psize * (size_t)inflight);
    for (int i = 0; i < inflight; i++) {
        unsigned char *p = packets + psize * (size_t)i;
        p[0] = (unsigned char)(size >> 24);
        p[1] = (unsigned char)(size >> 16);
        p[2] = (unsigned char)(size >> 8);
        p[3] = (unsigned char)size;
        memset(p + 4, 'x', (size_t)size);
    }
    conn_t *conns = calloc((size_t)ccu, sizeof *conns);
    for (int i = 0; i < ccu; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        tune(fd);
        if (connect(fd, res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS) {
            perror("connect");
            return 1;
        }
        conns[i].fd = fd;
        ctl(EPOLL_CTL_ADD, fd, EPOLLOUT, (uint32_t)i);
    }
    static char buf[BUF];
    struct epoll_event evs[BATCH];
    int connected = 0;
    double t_start = now_s(), t_measure = 0, t_end = 0;
    uint64_t done = 0, base = 0;
    for (;;) {
        double t = now_s();
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
                ctl(EPOLL_CTL_MOD, c->fd, EPOLLIN, idx);
                if (++connected == ccu)
                    t_start = now_s();
                conn_write(c, idx, packets, psize * (size_t)inflight);
                continue;
            }
            if ((evs[i].events & EPOLLOUT) && c->qlen)
                conn_flush(c, idx);
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
                    conn_write(c, idx, packets, psize * completed);
                }
            }
        }
    }
    uint64_t measured = done - base;
    printf("RESULT impl=plain-epoll ccu=%d inflight=%d size=%d seconds=%d "
           "packets=%llu packets_per_s=%.0f\n",
           ccu, inflight, size, seconds, (unsigned long long)measured,
           (double)measured / seconds);
    return 0;
}

int main(int argc, char **argv)
{
    raise_nofile();
    if (argc == 3 && strcmp(argv[1], "server") == 0)
        return server(atoi(argv[2]));
    if (argc == 8 && strcmp(argv[1], "client") == 0)
        return client(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
                      atoi(argv[6]), atoi(argv[7]));
    fprintf(stderr, "usage: %s server PORT\n"
                    "       %s client HOST PORT CCU INFLIGHT SIZE SECONDS\n",
            argv[0], argv[0]);
    return 2;
}
